package genspec

import (
	"errors"
	"testing"

	"github.com/misgrid/misgrid/mesh"
)

// A size a user types is checked against memory before anything is
// built: a generator that outgrows memory is killed, not failed.
func TestGenerateRefusesWhatDoesNotFit(t *testing.T) {
	limit := mesh.ElementOptions{MaxBytes: 1 << 20}
	for _, spec := range []string{"hex:64", "tet:40", "quad:600", "tri:600", "hex27:64", "grid7:100", "random:1000000:16"} {
		_, _, err := GenerateWith(spec, limit, mesh.ClassifyOptions{})
		var me *mesh.MemoryError
		if !errors.As(err, &me) || me.Need <= limit.MaxBytes {
			t.Errorf("%s under a 1 MiB limit: %v, want a *mesh.MemoryError that says what it needs", spec, err)
		}
	}
	if g, _, err := GenerateWith("hex:6", limit, mesh.ClassifyOptions{}); err != nil || g.N() != 216 {
		t.Errorf("hex:6 under a 1 MiB limit: %v", err)
	}
}

// :refine=L refines the tet and tri meshes (and .msh files) before their
// graph is built; other kinds and bad levels are refused.
func TestRefineSpecs(t *testing.T) {
	base, _, err := Generate("tet:4")
	if err != nil {
		t.Fatal(err)
	}
	m, err := mesh.Refine(mesh.StructuredTet(4, 4, 4), mesh.RefineOptions{Levels: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"tet:4:refine=2", "tet:4:refine=2:relabel", "tet:4:relabel:refine=2"} {
		g, gm, err := Generate(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if g.N() != m.NumNodes() || gm.NumNodes() != m.NumNodes() || g.N() <= base.N() {
			t.Errorf("%s: %d vertices, want %d", spec, g.N(), m.NumNodes())
		}
		if g.Class == nil {
			t.Errorf("%s: no boundary classes", spec)
		}
	}
	for _, spec := range []string{"hex:4:refine=1", "hex27:4:refine=1", "tet:4:refine=0", "tet:4:refine=x", "tet:4:refine=9", "tet:4:refine=1:refine=1"} {
		if _, _, err := Generate(spec); err == nil {
			t.Errorf("%s: no error", spec)
		}
	}
	for _, c := range []struct {
		in, name string
		levels   int
		bad      bool
	}{
		{"part.msh.gz", "part.msh.gz", 0, false},
		{"part.msh.gz:refine=2", "part.msh.gz", 2, false},
		{"c:/meshes/part.msh:refine=1", "c:/meshes/part.msh", 1, false},
		{"part.msh:refine=", "", 0, true},
		{"part.msh:refine=-1", "", 0, true},
	} {
		name, levels, err := CutRefine(c.in)
		if (err != nil) != c.bad || (!c.bad && (name != c.name || levels != c.levels)) {
			t.Errorf("CutRefine(%q) = %q, %d, %v", c.in, name, levels, err)
		}
	}
}
