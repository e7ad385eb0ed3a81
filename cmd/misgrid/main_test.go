package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCmd runs the command in-process and returns its outputs.
func runCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var o, e bytes.Buffer
	err = run(args, &o, &e)
	return o.String(), e.String(), err
}

func TestHelpAndVersion(t *testing.T) {
	out, _, err := runCmd(t, "help")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"demo", "coarsen", "bench", "version"} {
		if !strings.Contains(out, "\n  "+c) {
			t.Errorf("help does not list %q:\n%s", c, out)
		}
	}
	out, _, err = runCmd(t, "help", "coarsen")
	if err != nil || !strings.Contains(out, "-theta") || !strings.Contains(out, "gen:hex:64") {
		t.Errorf("help coarsen: err %v, output lacks flags or specs:\n%s", err, out)
	}
	out, _, err = runCmd(t, "version")
	if err != nil || !strings.HasPrefix(out, "misgrid "+version) {
		t.Errorf("version: err %v, output %q", err, out)
	}
	// -h is help, not an error.
	if o, _, err := runCmd(t, "demo", "-h"); err != nil || !strings.Contains(o, "-out") {
		t.Errorf("demo -h: err %v, usage %q", err, o)
	}
}

// TestErrors checks that bad commands, flags and inputs fail with a
// message that says what is wrong, and never panic.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.egr")
	if err := os.WriteFile(bad, []byte{1, 0, 0, 0, 200, 0, 0, 0, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no command"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"help", "frobnicate"}, "unknown command"},
		{[]string{"version", "x"}, "unexpected argument"},
		{[]string{"demo", "-n", "2"}, "-n 2"},
		{[]string{"demo", "-bogus"}, "flag provided but not defined"},
		{[]string{"demo", "extra"}, "unexpected argument"},
		{[]string{"coarsen"}, "no INPUT"},
		{[]string{"coarsen", "gen:hex:4", "more"}, "unexpected argument"},
		{[]string{"coarsen", "gen:hex:4", "-o", "x.txt"}, "flag -o after INPUT: flags go before it"},
		{[]string{"solve", "A.mtx", "-json"}, "flag -json after A.mtx: flags go before it"},
		{[]string{"coarsen", "-distance", "3", "gen:hex:4"}, `invalid value "3" for flag -distance: want an integer in [0, 2]`},
		{[]string{"coarsen", "-priority", "user", "gen:hex:4"}, "-priority user needs values"},
		{[]string{"coarsen", "-device", "tpu", "gen:hex:4"}, `invalid value "tpu" for flag -device: want auto, cpu or gpu`},
		{[]string{"coarsen", "-block", "2", "gen:hex:4"}, "flag -block: the flag is -block_size"},
		{[]string{"coarsen", "-workers", "2", "gen:hex:4"}, "flag -workers: the flag is -threads"},
		{[]string{"coarsen", "-block_size", "0", "testdata/lap3x3.mtx"}, `invalid value "0" for flag -block_size: want an integer ≥ 1`},
		{[]string{"coarsen", "-theta", "NaN", "gen:hex:4"}, `invalid value "NaN" for flag -theta`},
		{[]string{"coarsen", "-feature_angle", "190", "gen:hex:4"}, `invalid value "190" for flag -feature_angle`},
		{[]string{"coarsen", "-feature_angle", "20", "testdata/lap3x3.mtx"}, "apply to meshes"},
		{[]string{"coarsen", "-max_levels", "0", "gen:hex:4"}, `invalid value "0" for flag -max_levels`},
		{[]string{"coarsen", "-o", "x.egr", "-max_levels", "1", "gen:hex:4"}, "needs a second level"},
		{[]string{"coarsen", "-o", filepath.Join(dir, "none", "x.txt"), "gen:hex:4"}, "cannot create a file in"},
		{[]string{"coarsen", "-o", "x.gif", "gen:hex:4"}, `-o "x.gif"`},
		{[]string{"coarsen", "-o", "x.png", "gen:hex:4"}, "a picture needs a 2D mesh"},
		{[]string{"coarsen", "-o", "x.png", "testdata/lap3x3.mtx"}, "a picture needs a 2D mesh"},
		{[]string{"coarsen", "gen:cube:4"}, `unknown generator "cube"`},
		{[]string{"coarsen", "gen:hex:1"}, "not an integer ≥ 2"},
		{[]string{"coarsen", "gen:hex:x"}, "not an integer"},
		{[]string{"coarsen", "gen:hex:100000"}, "more than 2³¹−1 vertices"},
		{[]string{"coarsen", "gen:random:100"}, "want 3 fields"},
		{[]string{"coarsen", "gen:random:100:0"}, "degree"},
		{[]string{"coarsen", "-o", filepath.Join(dir, "r.vtu"), "gen:random:100:4"}, "no coordinates"},
		{[]string{"coarsen", "-o", filepath.Join(dir, "m.vtu"), "testdata/missing.mtx"}, "no coordinates"},
		{[]string{"coarsen", filepath.Join(dir, "missing.mtx")}, "no such file"},
		{[]string{"coarsen", "graph.xyz"}, "unknown input type"},
		{[]string{"coarsen", "-theta", "0.5", "testdata/square.msh"}, "matrices (.mtx) only"},
		{[]string{"solve", "-o", "theta=0.1", "testdata/lap3x3.mtx"}, "want a .mtx file"},
		{[]string{"solve", "-x", "x.mtx", "testdata/lap3x3.mtx"}, "flag -x: the flag is -o"},
		{[]string{"solve", "-plot", "conv.gif", "testdata/lap3x3.mtx"}, "want a .png, .svg or .pdf file"},
		{[]string{"solve", "-o", filepath.Join(dir, "none", "x.mtx"), "testdata/lap3x3.mtx"}, "cannot create a file in"},
		{[]string{"solve", "-smoother", "sor", "testdata/lap3x3.mtx"}, `invalid value "sor" for flag -smoother: want chebyshev, jacobi, gs`},
		{[]string{"coarsen", "testdata/bad_index.mtx"}, "line 4"},
		{[]string{"coarsen", "-block_size", "2", "testdata/lap3x3.mtx"}, "9 rows are not a multiple of -block_size 2"},
		{[]string{"coarsen", bad}, "bad.egr"},
		{[]string{"bench", "-reps", "0"}, "-reps 0"},
		{[]string{"bench", "-distance", "3"}, "-distance"},
		{[]string{"bench", "-graphs", "cube:3"}, "unknown generator"},
		{[]string{"bench", "-device", "tpu"}, "-device"},
	} {
		_, _, err := runCmd(t, c.args...)
		if err == nil {
			t.Errorf("misgrid %s: no error, want one containing %q", strings.Join(c.args, " "), c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("misgrid %s: error %q does not contain %q", strings.Join(c.args, " "), err, c.want)
		}
	}
}

// Every command's help has one layout: "usage: misgrid NAME [flags] ...",
// the text, one "flags:" list of -name lines; the option keys in groups;
// refused old names nowhere.
func TestHelpConventions(t *testing.T) {
	for _, c := range commands() {
		if c.flags == nil {
			continue
		}
		out, _, err := runCmd(t, "help", c.name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out, "usage: misgrid "+c.name+" [flags]") {
			t.Errorf("help %s: usage line %q", c.name, strings.SplitN(out, "\n", 2)[0])
		}
		if strings.Count(out, "\n\nflags:\n") != 1 {
			t.Errorf("help %s: want one flags: heading after a blank line:\n%s", c.name, out)
		}
		for _, old := range []string{"-block ", "-workers ", "-levels ", "-min ", "-feature-angle", "-x "} {
			if (c.name == "coarsen" || c.name == "solve") && strings.Contains(out, "  "+old) {
				t.Errorf("help %s lists the refused flag %s", c.name, old)
			}
		}
		if o, _, err := runCmd(t, c.name, "-h"); err != nil || o != out {
			t.Errorf("%s -h differs from help %s (%v)", c.name, c.name, err)
		}
	}
}
