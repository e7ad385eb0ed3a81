// Command misgrid picks coarse grids for algebraic multigrid from
// finite-element meshes and matrices, and measures how fast it does so.
//
// Usage:
//
//	misgrid demo [-n 48] [-out dir]
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
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/misgrid/misgrid/internal/progress"
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
// usage (see parseFlags).
func newFlagSet(name, usageText string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageText)
		fs.PrintDefaults()
	}
	return fs
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
