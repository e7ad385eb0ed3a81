// Command misgrid picks coarse grids for algebraic multigrid from
// finite-element meshes and matrices, and measures how fast it does so.
//
// Usage:
//
//	misgrid demo [flags]
//	misgrid coarsen [flags] INPUT
//	misgrid solve [flags] A.mtx
//	misgrid bench [flags]
//	misgrid version
//	misgrid help [command]
//
// See docs/cli.md for every flag.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/misgrid/misgrid/internal/progress"
	"github.com/misgrid/misgrid/mesh"
)

// version is the release of this command; the build's module version and
// VCS revision are shown beside it when the toolchain recorded them.
const version = "0.1.0-dev"

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "misgrid: %v\n", err)
		os.Exit(1)
	}
}

// command is one subcommand: its one-line summary, its usage (a flag set
// whose Usage prints it, or plain text for commands without flags), and
// the function that runs it on the arguments after its name.
type command struct {
	name, summary string
	flags         func() *flag.FlagSet
	usage         string
	run           func(args []string, stdout, stderr io.Writer) error
}

// flagsOf adapts a command's flag constructor for the table below.
func flagsOf[C any](f func() (*flag.FlagSet, C)) func() *flag.FlagSet {
	return func() *flag.FlagSet { fs, _ := f(); return fs }
}

func commands() []command {
	return []command{
		{"demo", "draw the coarse grids of a 2D bracket (demo.png) and coarsen an N³ cube (demo.vtu)", flagsOf(demoFlags), "", runDemo},
		{"coarsen", "compute an MIS or a coarse-grid hierarchy of a mesh, matrix or generated graph", flagsOf(coarsenFlags), "", runCoarsen},
		{"solve", "solve A·x = b by CG with MIS-aggregation AMG (a Matrix Market A)", flagsOf(solveFlags), "", runSolve},
		{"bench", "measure MIS throughput against a one-pass memory floor", flagsOf(benchFlags), "", runBench},
		{"version", "print the version", nil, "usage: misgrid version\n", runVersion},
		{"help", "show help for a command", nil, "usage: misgrid help [command]\n", runHelp},
	}
}

// run is the whole program: it never exits, so tests drive it in-process.
func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return errors.New("no command given")
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		usage(stdout)
		return nil
	case "-version", "--version":
		name = "version"
	}
	for _, c := range commands() {
		if c.name == name {
			err := c.run(args[1:], stdout, stderr)
			if errors.Is(err, errHelpShown) {
				return nil
			}
			return err
		}
	}
	return fmt.Errorf("unknown command %q (run 'misgrid help')", name)
}

func usage(w io.Writer) {
	fmt.Fprint(w, "misgrid picks coarse grids for algebraic multigrid: maximal independent sets\n"+
		"of finite-element mesh graphs, with boundary-aware priorities.\n\nusage: misgrid COMMAND [flags]\n\ncommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'misgrid help COMMAND' for its flags.\n")
}

func runHelp(args []string, stdout, _ io.Writer) error {
	if len(args) == 0 {
		usage(stdout)
		return nil
	}
	for _, c := range commands() {
		if c.name == args[0] {
			if c.flags != nil {
				fs := c.flags()
				fs.SetOutput(stdout)
				fs.Usage()
			} else {
				fmt.Fprint(stdout, c.usage)
			}
			return nil
		}
	}
	return fmt.Errorf("help: unknown command %q", args[0])
}

func runVersion(args []string, stdout, _ io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("version: unexpected argument %q", args[0])
	}
	fmt.Fprintf(stdout, "misgrid %s%s %s %s/%s\n", version, buildInfo(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// buildInfo returns " (revision)" when the build recorded a VCS revision.
func buildInfo() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return ""
	}
	return " (" + rev + dirty + ")"
}

// newFlagSet returns a flag set that reports errors instead of exiting or
// printing: run prints them once, as "misgrid: ...", and -h prints the
// usage (see parseFlags). Every command's help has one form: its usage
// text, then its flags (printFlags).
func newFlagSet(name, usageText string) *flag.FlagSet {
	// printFlags writes the heading itself.
	usageText = strings.TrimRight(strings.TrimSuffix(usageText, "flags:\n"), "\n")
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageText)
		printFlags(fs.Output(), fs, nil)
	}
	return fs
}

// optionGroup is a package registry whose keys a command takes as flags,
// one flag per key and named by it, as the C ABI names them.
type optionGroup struct {
	title string
	keys  []mesh.OptionInfo
	set   func(key, value string) error
}

// addOptions registers the keys of groups as flags of fs, and makes the
// usage list them apart from the command's own flags. renamed maps flag
// names that are not keys (old flags, Go field names) to the key: such a
// flag is refused with a hint.
func addOptions(fs *flag.FlagSet, usageText string, renamed map[string]string, groups ...optionGroup) {
	usageText = strings.TrimRight(usageText, "\n")
	for _, g := range groups {
		for _, k := range g.keys {
			if fs.Lookup(k.Key) != nil {
				continue // a key two groups share: the first group's flag sets both
			}
			define := fs.Func
			if k.Values == "true|false" {
				define = fs.BoolFunc // -vertex_only alone means true, as for any bool flag
			}
			define(k.Key, k.Doc, func(v string) error {
				for _, g := range groups {
					if !slices.ContainsFunc(g.keys, func(x mesh.OptionInfo) bool { return x.Key == k.Key }) {
						continue
					}
					if err := g.set(k.Key, v); err != nil {
						if inner := errors.Unwrap(err); inner != nil {
							err = inner // the flag package names the flag and the value
						}
						return err
					}
				}
				return nil
			})
		}
	}
	refuseRenamed(fs, renamed)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageText)
		printFlags(fs.Output(), fs, groups)
	}
}

// refuseRenamed defines the flags of renamed, old name → flag, as flags
// that fail with the name to use; help does not list them.
func refuseRenamed(fs *flag.FlagSet, renamed map[string]string) {
	for old, key := range renamed {
		fs.Func(old, "", func(string) error { return fmt.Errorf("the flag is -%s", key) })
	}
}

// printFlags lists the command's own flags, then each option group under
// its title, every flag as "-name value" over its description and default;
// refused old names are not listed.
func printFlags(w io.Writer, fs *flag.FlagSet, groups []optionGroup) {
	isKey := map[string]bool{}
	for _, g := range groups {
		for _, k := range g.keys {
			isKey[k.Key] = true
		}
	}
	fmt.Fprint(w, "\n\nflags:\n")
	fs.VisitAll(func(f *flag.Flag) {
		if isKey[f.Name] || f.Usage == "" {
			return
		}
		name, usage := flag.UnquoteUsage(f)
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
			usage += " (default " + f.DefValue + ")"
		}
		printFlag(w, f.Name, name, usage)
	})
	shown := map[string]bool{}
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		for _, k := range g.keys {
			if !shown[k.Key] {
				shown[k.Key] = true
				arg, _, _ := strings.Cut(k.Values, " ") // "integer", "number", or the names of an enumeration
				if arg == "true|false" {
					arg = ""
				}
				printFlag(w, k.Key, arg, fmt.Sprintf("%s (%s; default %s)", k.Doc, k.Values, k.Default))
			}
		}
	}
}

func printFlag(w io.Writer, name, arg, usage string) {
	if arg != "" {
		name += " " + arg
	}
	fmt.Fprintf(w, "  -%s\n    \t%s\n", name, usage)
}

// errHelpShown reports that -h printed the usage: the command ends there,
// successfully.
var errHelpShown = errors.New("help shown")

// parseFlags parses args; on -h it prints the usage to stdout.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		return errHelpShown
	}
	if err != nil {
		return fmt.Errorf("%s: %w (run 'misgrid help %s')", fs.Name(), err, fs.Name())
	}
	return nil
}

// parseArgs parses the flags, which go before the arguments as in the go
// command, and returns the arguments, of which there must be n; a flag
// after them is refused rather than taken for an argument.
func parseArgs(fs *flag.FlagSet, args []string, stdout io.Writer, n int, what string) ([]string, error) {
	if err := parseFlags(fs, args, stdout); err != nil {
		return nil, err
	}
	rest := fs.Args()
	for _, a := range rest {
		if len(a) > 1 && a[0] == '-' {
			return nil, fmt.Errorf("%s: flag %s after %s: flags go before it (run 'misgrid help %s')", fs.Name(), a, what, fs.Name())
		}
	}
	switch {
	case len(rest) < n:
		return nil, fmt.Errorf("%s: no %s given (run 'misgrid help %s')", fs.Name(), what, fs.Name())
	case len(rest) > n:
		return nil, fmt.Errorf("%s: unexpected argument %q after %s (run 'misgrid help %s')", fs.Name(), rest[n], what, fs.Name())
	}
	return rest, nil
}

// checkWritable reports whether a file can be created at path (none to
// check when path is ""), before any work that would be lost otherwise.
func checkWritable(path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("-o %s: is a directory", path)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".misgrid-check-*")
	if err != nil {
		return fmt.Errorf("-o %s: cannot create a file in %s: %w", path, dir, errors.Unwrap(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// oneOf checks a string flag against its allowed values.
func oneOf(flagName, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return fmt.Errorf("-%s %q: want one of %s", flagName, v, strings.Join(allowed, ", "))
}

// newProgress returns a progress reporter on w when w is a terminal, and
// nil (which reports nothing) otherwise.
func newProgress(w io.Writer, label string) *progress.Reporter {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	return progress.New(f, label)
}
