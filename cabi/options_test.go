//go:build cgo

package main

import (
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
		{"distance=3", opMIS, nil, "want an integer in [1, 2]"},
		{"theta=0.1", opMIS, nil, "does not apply here"},
		{"theta=-1", opMatrix, nil, "want a number"},
		{"theta=NaN", opMatrix, nil, "want a number"},
		{"threads=1e3", opMIS, nil, "want an integer"},
		{"device=gpu:-1", opMIS, nil, "GPU index"},
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
	c := &context{opts: []keyValue{{"threads", "3"}, {"priority", "degree"}, {"theta", "0.2"}, {"min_vertices", "9"}}}
	s, err := resolve(c, opMIS, "priority=boundary")
	if err != nil {
		t.Fatal(err)
	}
	if s.threads != 3 || s.priority != mis.Boundary || s.theta != 0 || s.minVertices != 0 {
		t.Errorf("opMIS settings %+v", s)
	}
	s, err = resolve(c, opMatrix, "")
	if err != nil || s.theta != 0.2 || s.threads != 0 {
		t.Errorf("opMatrix settings %+v, %v", s, err)
	}
	s, err = resolve(c, opHierarchy, "")
	if err != nil || s.minVertices != 9 || s.priority != mis.Degree {
		t.Errorf("opHierarchy settings %+v, %v", s, err)
	}
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
