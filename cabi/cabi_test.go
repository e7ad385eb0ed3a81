package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCABI runs the C and Fortran tests and the examples (make test): the
// ABI against the Go API, bad input, threads, and programs built against
// an installed copy. It builds libmisgrid unless it is up to date, as
// scripts/test.sh leaves it (that script builds it once, runs this, then
// valgrind and MPI). It needs gcc and make; gfortran is optional (the
// Makefile skips the Fortran parts without it).
func TestCABI(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: builds the c-shared and c-archive libraries (make -C cabi test)")
	}
	for _, tool := range []string{"gcc", "make", "pkg-config"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipped: %s not found on PATH (needed to build and test the C ABI)", tool)
		}
	}
	trackInputs(t)
	cmd := exec.Command("make", "--no-print-directory", "test")
	cmd.Env = append(os.Environ(), "CC=gcc")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make test: %v\n%s", err, out)
	}
	// Every test binary the Makefile runs reported, with no failures
	// (test_gpu says SKIP and why on a machine without a GPU).
	names := append(makefileCTests(t), "test_goref")
	wants := []string{"examples/c: output as expected"}
	if _, err := exec.LookPath("gfortran"); err == nil {
		names = append(names, "test_fortran")
		wants = append(wants, "examples/fortran: output as expected")
	}
	for _, name := range names {
		re := regexp.MustCompile(`(?m)^` + name + `: (\d+ checks, 0 failed|SKIP \(.+\))$`)
		if !re.Match(out) {
			t.Errorf("no clean report from %s in:\n%s", name, out)
		}
	}
	for _, want := range wants {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

// cabiInputs are what make test reads besides the Go sources of the
// library, which are in this test binary already.
var cabiInputs = []string{
	"Makefile", "*.map", "*.pc.in", "*.h", "include/*", "fortran/*", "tests/*", "internal/goref/*",
	"../examples/c/*", "../examples/fortran/*",
}

// trackInputs opens every file make test reads: go test caches a passing
// result until a file the test opened changes, so a change to a C test,
// the header or an example runs TestCABI again instead of reporting
// (cached).
func trackInputs(t *testing.T) {
	for _, pat := range cabiInputs {
		files, err := filepath.Glob(pat)
		if err != nil || len(files) == 0 {
			t.Fatalf("no files match %s (err %v)", pat, err)
		}
		for _, name := range files {
			f, err := os.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
}

// makefileCTests lists the C tests of the Makefile's ctests target, so
// that a test added there is expected here too.
func makefileCTests(t *testing.T) []string {
	b, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ctests: \$\(addprefix \$\(BUILD\)/tests/,([^)]*)\)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("Makefile: no ctests target of the form ctests: $(addprefix $(BUILD)/tests/,NAMES)")
	}
	names := strings.Fields(string(m[1]))
	if len(names) < 4 {
		t.Fatalf("Makefile: ctests lists only %v", names)
	}
	return names
}

// exportedNames lists the //export directives of the package.
func exportedNames(t *testing.T) []string {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^//export (misgrid_\w+)$`)
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllSubmatch(b, -1) {
			names = append(names, string(m[1]))
		}
	}
	slices.Sort(names)
	return names
}

// TestHeaderMatchesExports: every function the header declares is
// exported, and nothing else is. (The build itself checks each exported
// prototype against the header: _cgo_export.c includes both.)
func TestHeaderMatchesExports(t *testing.T) {
	b, err := os.ReadFile("include/misgrid.h")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^(?:const char \*|misgrid_status )(misgrid_\w+)\(`)
	var declared []string
	for _, m := range re.FindAllSubmatch(b, -1) {
		declared = append(declared, string(m[1]))
	}
	slices.Sort(declared)
	exported := exportedNames(t)
	if len(declared) < 30 {
		t.Fatalf("found only %d declarations in misgrid.h", len(declared))
	}
	if !slices.Equal(declared, exported) {
		t.Errorf("header and exports differ:\nheader only: %v\nexports only: %v",
			missing(declared, exported), missing(exported, declared))
	}
}

// TestFortranBindsEveryFunction: the Fortran module binds every exported
// function except those that only make sense in C.
func TestFortranBindsEveryFunction(t *testing.T) {
	b, err := os.ReadFile("fortran/misgrid.f90")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`bind\(c, name='(misgrid_\w+)'\)`)
	var bound []string
	for _, m := range re.FindAllSubmatch(b, -1) {
		bound = append(bound, string(m[1]))
	}
	slices.Sort(bound)
	cOnly := []string{
		"misgrid_context_get_option", // Fortran reads options as it set them
		"misgrid_error_message",      // a char* into library memory; Fortran copies instead
		"misgrid_option_help",
		"misgrid_status_string",
	}
	for _, name := range exportedNames(t) {
		if !slices.Contains(bound, name) && !slices.Contains(cOnly, name) {
			t.Errorf("fortran/misgrid.f90 has no interface for %s", name)
		}
	}
}

func missing(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}
