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
		{[]string{"coarsen", "-distance", "3", "gen:hex:4"}, "-distance 3"},
		{[]string{"coarsen", "-priority", "user", "gen:hex:4"}, "-priority"},
		{[]string{"coarsen", "-device", "tpu", "gen:hex:4"}, "unknown device"},
		{[]string{"coarsen", "-block", "0", "gen:hex:4"}, "-block 0: want 1 or more"},
		{[]string{"coarsen", "-theta", "NaN", "gen:hex:4"}, "-theta NaN"},
		{[]string{"coarsen", "-feature-angle", "190", "gen:hex:4"}, "-feature-angle 190"},
		{[]string{"coarsen", "-levels", "-1", "gen:hex:4"}, "-levels -1"},
		{[]string{"coarsen", "-o", "x.gif", "gen:hex:4"}, `-o "x.gif"`},
		{[]string{"coarsen", "gen:cube:4"}, `unknown generator "cube"`},
		{[]string{"coarsen", "gen:hex:1"}, "not an integer ≥ 2"},
		{[]string{"coarsen", "gen:hex:x"}, "not an integer"},
		{[]string{"coarsen", "gen:hex:100000"}, "more than 2³¹−1 vertices"},
		{[]string{"coarsen", "gen:random:100"}, "want 3 fields"},
		{[]string{"coarsen", "gen:random:100:0"}, "degree"},
		{[]string{"coarsen", "-o", filepath.Join(dir, "r.vtu"), "gen:random:100:4"}, "no coordinates"},
		{[]string{"coarsen", filepath.Join(dir, "missing.mtx")}, "no such file"},
		{[]string{"coarsen", "graph.xyz"}, "unknown input type"},
		{[]string{"coarsen", "-theta", "0.5", "testdata/square.msh"}, "matrices (.mtx) only"},
		{[]string{"coarsen", "testdata/bad_index.mtx"}, "line 4"},
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
