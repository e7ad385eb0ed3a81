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
