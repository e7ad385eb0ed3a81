package misgpu_test

import (
	"testing"

	"github.com/misgrid/misgrid/internal/genspec"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/mesh"
)

// sampleRows is the host model of near_sample (helpers.cuh): over every
// SampleStep-th row, at most 64 entries of each, the entries, those
// within 1024 ids of their row, and those in the 4-byte state word of
// the entry before them.
func sampleRows(g *mesh.Graph) [3]uint32 {
	var c [3]uint32
	step := misgpu.SampleStep(g.N())
	for v := 0; v < g.N(); v += step {
		row := g.Neighbors(int32(v))
		row = row[:min(len(row), 64)]
		for k, u := range row {
			c[0]++
			if d := int(u) - v; d > -1024 && d < 1024 {
				c[1]++
			}
			if k > 0 && u>>2 == row[k-1]>>2 {
				c[2]++
			}
		}
	}
	return c
}

// rowGraphs are graphs on either side of rowRuns: a 27-point mesh and a
// structured tet mesh in natural order hold runs of ids in one state
// word (about half and a third of their entries); the same mesh
// relabelled and a tet mesh refined twice (new vertices numbered by
// edge, as the refined Gmsh part of bench/meshes) hold few.
func rowGraphs(t *testing.T) map[string]struct {
	g    *mesh.Graph
	runs bool
} {
	rel, _ := mesh.Relabel(mesh.Hex27Graph(24, 24, 24), 2)
	out := map[string]struct {
		g    *mesh.Graph
		runs bool
	}{
		"hex27":           {mesh.Hex27Graph(24, 24, 24), true},
		"hex27 relabeled": {rel, false},
	}
	for spec, runs := range map[string]bool{"tet:24": true, "tet:6:refine=2": false} {
		g, _, err := genspec.Generate(spec)
		if err != nil {
			t.Fatal(err)
		}
		out[spec] = struct {
			g    *mesh.Graph
			runs bool
		}{g, runs}
	}
	return out
}

// KF_WORDS follows the rows' runs (rowRuns), as the model of
// near_sample counts them.
func TestRowRuns(t *testing.T) {
	for name, c := range rowGraphs(t) {
		s := sampleRows(c.g)
		if got := misgpu.RowRuns(s[0], s[2]); got != c.runs {
			t.Errorf("%s: runs %v (%d of %d entries share the word before), want %v", name, got, s[2], s[0], c.runs)
		}
	}
	if misgpu.RowRuns(0, 0) {
		t.Error("runs on no entries")
	}
}

// near_sample counts what its model counts.
func TestGPUSampleRows(t *testing.T) {
	needGPU(t)
	for name, c := range rowGraphs(t) {
		dg := upload(t, c.g)
		got, err := misgpu.SampleRows(dg)
		if err != nil {
			t.Fatal(err)
		}
		if want := sampleRows(c.g); got != want {
			t.Errorf("%s: near_sample counts %v, the model %v", name, got, want)
		}
	}
}
