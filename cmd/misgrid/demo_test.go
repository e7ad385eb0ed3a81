package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

func TestDemo(t *testing.T) {
	dir := t.TempDir()
	out, _, err := runCmd(t, "demo", "-n", "9", "-out", dir)
	if err != nil {
		t.Fatal(err)
	}
	// A 9³ cube has 8 corners; boundary priority keeps all of them in the
	// distance-1 MIS. The bracket has the six corners of its L, and its
	// hierarchy keeps them all on the first two levels.
	for _, want := range []string{"729 vertices", "corner 8/8", "corners kept", "level",
		"L-bracket (for demo.png): 7 holes", "corner 6, boundary", "6/6"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	vtu, err := os.ReadFile(filepath.Join(dir, "demo.vtu"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<VTKFile", `Name="class"`, `Name="in_set"`, `Name="aggregate"`, `Name="coarse_level"`} {
		if !bytes.Contains(vtu, []byte(want)) {
			t.Errorf("demo.vtu lacks %s", want)
		}
	}
	png, err := os.ReadFile(filepath.Join(dir, "demo.png"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 1000 {
		t.Errorf("demo.png is not a PNG image (%d bytes)", len(png))
	}
	// Three panels side by side: the bracket's levels 0 to 2.
	if b, _ := readPNG(t, filepath.Join(dir, "demo.png")); b.Dx() < 3*b.Dy()/2 {
		t.Errorf("demo.png is %v pixels: not three panels in a row", b)
	}
}

func TestMidSlice(t *testing.T) {
	g := mesh.Hex27Graph(5, 4, 5)
	verts, z, err := midSlice(g)
	if err != nil {
		t.Fatal(err)
	}
	if len(verts) != 20 || z != 0.5 {
		t.Fatalf("midSlice: %d vertices at z=%v, want 20 at 0.5", len(verts), z)
	}
	for _, v := range verts {
		if g.Coords[3*v+2] != 0.5 {
			t.Fatalf("vertex %d at z=%v is in the slice", v, g.Coords[3*v+2])
		}
	}
	if _, _, err := midSlice(mesh.RandomGraph(10, 3, 1)); err == nil {
		t.Error("midSlice of a graph without coordinates: no error")
	}
}

// TestCoarseLevel checks the per-vertex depth against the hierarchy: the
// fine vertices of depth > k are exactly as many as the set of level k,
// since each coarse vertex has one root.
func TestCoarseLevel(t *testing.T) {
	for _, g := range []*mesh.Graph{mesh.Hex27Graph(12, 12, 12), mesh.Grid7Graph(10, 9, 8)} {
		levels, err := mis.Hierarchy(g, mis.HierarchyOptions{Distance: 2, Priority: mis.Priority{Kind: mis.Boundary}, MinVertices: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(levels) < 3 {
			t.Fatalf("only %d levels: the test needs a deeper hierarchy", len(levels))
		}
		depth := coarseLevel(levels)
		for k, l := range levels {
			n := 0
			for _, d := range depth {
				if int(d) > k {
					n++
				}
			}
			if n != l.Set.Size {
				t.Errorf("%d fine vertices reach depth > %d, but level %d's set has %d", n, k, k, l.Set.Size)
			}
		}
		for v, d := range depth {
			if (d > 0) != levels[0].Set.In[v] {
				t.Fatalf("vertex %d: depth %d but in level-0 set = %v", v, d, levels[0].Set.In[v])
			}
		}
	}
}

// TestMidSliceEvenPlanes: with an even number of z planes, two are equally
// near the middle, and the slice takes the lower one only.
func TestMidSliceEvenPlanes(t *testing.T) {
	g := mesh.Hex27Graph(3, 3, 4)
	verts, z, err := midSlice(g)
	if err != nil {
		t.Fatal(err)
	}
	if len(verts) != 9 || math.Abs(z-1.0/3) > 1e-12 {
		t.Fatalf("midSlice: %d vertices at z=%v, want 9 at 1/3", len(verts), z)
	}
}
