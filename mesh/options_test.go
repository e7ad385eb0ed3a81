package mesh

import (
	"strings"
	"testing"
)

func TestOptionsSet(t *testing.T) {
	var m MatrixOptions
	if err := m.Set("theta", "0.25"); err != nil || m.Theta != 0.25 {
		t.Errorf("theta: %v, %+v", err, m)
	}
	if err := m.Set("block_size", "3"); err != nil || m.BlockSize != 3 {
		t.Errorf("block_size: %v, %+v", err, m)
	}
	for _, c := range []struct{ key, value, want string }{
		{"theta", "-1", `option theta="-1": want a number in [0,1)`},
		{"theta", "2", `option theta="2"`},
		{"theta", "Inf", `option theta="Inf"`},
		{"block_size", "0", "want an integer ≥ 1"},
		{"block", "2", `unknown option "block": the key is "block_size"`},
		{"vertex_only", "1", `unknown option "vertex_only"`},
	} {
		before := m
		if err := m.Set(c.key, c.value); err == nil || !strings.Contains(err.Error(), c.want) || m != before {
			t.Errorf("%s=%s: error %v (want %q), options %+v", c.key, c.value, err, c.want, m)
		}
	}
	var e ElementOptions
	if err := e.Set("vertex_only", "true"); err != nil || !e.VertexOnly {
		t.Errorf("vertex_only: %v", err)
	}
	var c ClassifyOptions
	if err := c.Set("feature_angle", "181"); err == nil {
		t.Error("feature_angle=181 accepted")
	}
	if err := c.Set("feature-angle", "45"); err == nil || !strings.Contains(err.Error(), `the key is "feature_angle"`) {
		t.Errorf("feature-angle: %v", err)
	}
	// Each key's documented default is what the zero field means.
	for _, k := range append(append(MatrixOptionKeys(), ElementOptionKeys()...), ClassifyOptionKeys()...) {
		switch k.Key {
		case "theta", "vertex_only":
			if k.Default != "0" && k.Default != "false" {
				t.Errorf("%s default %q", k.Key, k.Default)
			}
		case "block_size":
			if k.Default != "1" {
				t.Errorf("block_size default %q", k.Default)
			}
		case "feature_angle":
			if k.Default != "30" {
				t.Errorf("feature_angle default %q", k.Default)
			}
		default:
			t.Errorf("unexpected key %q", k.Key)
		}
	}
}
