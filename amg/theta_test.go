package amg

import (
	"slices"
	"testing"
)

// theta's text forms: auto is the zero Theta, 0 keeps every coupling (a
// negative Theta), and the options in force resolve auto by the
// near-nullspace.
func TestThetaAuto(t *testing.T) {
	for _, tc := range []struct {
		kv    []string
		field float64 // Options.Theta after parsing
		text  string  // its text form
		rbm   float64 // in force with rigid-body modes
		plain float64 // in force with constants
	}{
		{nil, 0, "auto", DefaultSystemTheta, 0},
		{[]string{"theta=auto"}, 0, "auto", DefaultSystemTheta, 0},
		{[]string{"theta=0"}, -1, "0", 0, 0},
		{[]string{"theta=0.08"}, 0.08, "0.08", 0.08, 0.08},
	} {
		o, err := ParseOptions(tc.kv)
		if err != nil {
			t.Fatal(err)
		}
		if o.Theta != tc.field {
			t.Errorf("%v: Theta %g, want %g", tc.kv, o.Theta, tc.field)
		}
		if kv := o.KeyValues(); !slices.Contains(kv, "theta="+tc.text) {
			t.Errorf("%v: KeyValues %v lack theta=%s", tc.kv, kv, tc.text)
		}
		if back, err := ParseOptions(o.KeyValues()); err != nil || back.Theta != o.Theta {
			t.Errorf("%v: KeyValues read back as Theta %g (%v)", tc.kv, back.Theta, err)
		}
		plain, err := o.withDefaults()
		if err != nil || plain.Theta != tc.plain {
			t.Errorf("%v: in force with constants %g (%v), want %g", tc.kv, plain.Theta, err, tc.plain)
		}
		o.Nullspace, o.BlockSize, o.Dim = RigidBody, 3, 3
		rbm, err := o.withDefaults()
		if err != nil || rbm.Theta != tc.rbm {
			t.Errorf("%v: in force with rigid-body modes %g (%v), want %g", tc.kv, rbm.Theta, err, tc.rbm)
		}
	}
	for _, bad := range []string{"theta=-0.1", "theta=1", "theta=x"} {
		if _, err := ParseOptions([]string{bad}); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
