//go:build cgo

package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/mis"
)

func TestParseOptions(t *testing.T) {
	tests := []struct {
		in   string
		ops  op
		want []keyValue
		err  string
	}{
		{"", opMIS, nil, ""},
		{"  distance=2,priority=boundary ; seed=7\n", opMIS, []keyValue{{"distance", "2"}, {"priority", "boundary"}, {"seed", "7"}}, ""},
		{"seed=0x10", opMIS, []keyValue{{"seed", "0x10"}}, ""},
		{"device=gpu:1", opMIS, []keyValue{{"device", "gpu:1"}}, ""},
		{"distance", opMIS, nil, "is not key=value"},
		{"=3", opMIS, nil, "is not key=value"},
		{"distanse=2", opMIS, nil, `unknown option "distanse"`},
		{"distance=3", opMIS, nil, "want an integer in [0, 2]"},
		{"block=2", opMatrix, nil, `unknown option "block": the key is "block_size"`},
		{"workers=2", opMIS, nil, `unknown option "workers": the key is "threads"`},
		{"threads=-1", opMIS, nil, "threads"},
		{"mode=exact", opMIS, nil, "does not apply here"},
		{"device=cpu", opDistributed, nil, "does not apply here"},
		{"tol=3", opSolver, nil, "tol = 3"},
		{"theta=0.1", opMIS, nil, "does not apply here"},
		{"theta=-1", opMatrix, nil, "want a number"},
		{"theta=NaN", opMatrix, nil, "want a number"},
		{"threads=1e3", opMIS, nil, "want an integer"},
		{"device=gpu:-1", opMIS, nil, `device="gpu:-1"`},
		{"vertex_only=maybe", opElements, nil, "want true or false"},
		{"priority=user", 0, []keyValue{{"priority", "user"}}, ""},
	}
	for _, tc := range tests {
		got, err := parseOptions(tc.in, tc.ops)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || statusOfErr(err) != statusOption {
				t.Errorf("parseOptions(%q): err %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("parseOptions(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("parseOptions(%q)[%d] = %v, want %v", tc.in, i, got[i], tc.want[i])
			}
		}
	}
}

// Context options apply where their key applies and are skipped
// elsewhere; a call's own options override them.
func TestResolveLayering(t *testing.T) {
	c := &context{opts: []keyValue{{"threads", "3"}, {"priority", "degree"}, {"theta", "0.2"}, {"min_vertices", "9"}, {"max_levels", "4"}}}
	s, err := resolve(c, opMIS, "priority=boundary")
	if err != nil {
		t.Fatal(err)
	}
	if s.mis.Workers != 3 || s.mis.Priority.Kind != mis.Boundary || s.matrix.Theta != 0 || s.hier.MinVertices != 0 {
		t.Errorf("opMIS settings %+v", s)
	}
	s, err = resolve(c, opMatrix, "")
	if err != nil || s.matrix.Theta != 0.2 || s.mis.Workers != 0 {
		t.Errorf("opMatrix settings %+v, %v", s, err)
	}
	s, err = resolve(c, opHierarchy, "")
	if err != nil || s.hier.MinVertices != 9 || s.hier.Priority.Kind != mis.Degree || s.hier.Workers != 3 || s.hier.MaxLevels != 4 {
		t.Errorf("opHierarchy settings %+v, %v", s, err)
	}
	// max_levels is a key of mis and of amg: the solver gets it too, typed.
	s, err = resolve(c, opSolver, "block_size=2")
	if err != nil || s.amg.MaxLevels != 4 || s.amg.Workers != 3 || s.amg.BlockSize != 2 {
		t.Errorf("opSolver settings %+v, %v", s.amg, err)
	}
}

// Setting a key again replaces its value: a context holds one value per
// key however often it is set.
func TestContextOptionsBounded(t *testing.T) {
	c := &context{}
	for i := range 10000 {
		kv, err := parseOptions(fmt.Sprintf("threads=%d priority=hash", i%7), 0)
		if err != nil {
			t.Fatal(err)
		}
		c.opts = mergeOptions(c.opts, kv)
	}
	if len(c.opts) != 2 || c.opts[0] != (keyValue{"threads", "3"}) || c.opts[1] != (keyValue{"priority", "hash"}) {
		t.Errorf("after 10000 sets: %v", c.opts)
	}
	c.opts = mergeOptions(c.opts, []keyValue{{"priority", "degree"}, {"seed", "3"}})
	if len(c.opts) != 3 || c.opts[1].value != "degree" {
		t.Errorf("after a replace and an add: %v", c.opts)
	}
}

// With no options, misgrid_mis and misgrid_hierarchy resolve to the zero
// Go options, so C, Go and the command line give one set.
func TestNoOptionsAreGoZero(t *testing.T) {
	c := &context{}
	for _, o := range []op{opMIS, opHierarchy, opSolver, opMatrix, opElements} {
		s, err := resolve(c, o, "")
		if err != nil || !reflect.DeepEqual(s, settings{}) {
			t.Errorf("%s with no options: %+v, %v", o, s, err)
		}
	}
}

// FuzzParseOptions feeds option strings to the parser of the C ABI (the
// one behind every options argument and misgrid_context_set_option): it
// never panics, accepts only registered keys, reports every error as
// MISGRID_ERR_OPTION, and what it accepts a context takes and resolves
// for every operation the keys apply to.
func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{"", "distance=2,priority=boundary", "threads=3; seed=0x10\n", "theta=0.1 block_size=2",
		"device=gpu:1", "tol=1e-9 smoother=gs", "feature_angle=45", "block=2", "a=b=c", "=", ",,;;", "seed=18446744073709551615",
		"max_levels=3 min_vertices=8", "timeout=30s mode=admma", "priority=USER", "damping=1.999", "device=gpu:-1"} {
		f.Add(s, uint16(0))
		f.Add(s, uint16(opMIS))
	}
	f.Fuzz(func(t *testing.T, s string, o uint16) {
		ops := op(o) & (opCompute | opMatrix | opElements | opVTU | opSolver | opDistributed)
		kv, err := parseOptions(s, ops)
		if err != nil {
			if statusOfErr(err) != statusOption {
				t.Fatalf("parseOptions(%q): status %v, want statusOption: %v", s, statusOfErr(err), err)
			}
			return
		}
		c := &context{}
		c.opts = mergeOptions(c.opts, kv)
		for _, x := range kv {
			if lookupOpt(x.key) == nil {
				t.Fatalf("parseOptions(%q) accepted unknown key %q", s, x.key)
			}
		}
		if len(c.opts) > len(registry) {
			t.Fatalf("context holds %d options, registry has %d keys", len(c.opts), len(registry))
		}
		for _, o := range []op{opMatrix, opElements, opMIS, opColor, opHierarchy, opVTU, opSolver} {
			if ops != 0 && o&ops == 0 {
				continue
			}
			if _, err := resolve(c, o, ""); err != nil {
				t.Fatalf("options %q accepted, but resolve for %s fails: %v", s, o, err)
			}
		}
	})
}

// Every registry entry documents itself and applies somewhere.
func TestRegistryComplete(t *testing.T) {
	help := optionHelp()
	seen := map[string]bool{}
	for _, d := range registry {
		if seen[d.key] {
			t.Errorf("key %q registered twice", d.key)
		}
		seen[d.key] = true
		if d.ops == 0 || d.help == "" || d.def == "" {
			t.Errorf("key %q lacks scope, help or default", d.key)
		}
		if !strings.Contains(help, d.key+" (default ") {
			t.Errorf("help does not describe %q", d.key)
		}
	}
}
