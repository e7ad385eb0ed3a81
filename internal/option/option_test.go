package option

import (
	"strings"
	"testing"
)

type opts struct {
	N    int
	X    float64
	B    bool
	S    uint64
	Kind int
}

var reg = &Registry[opts]{
	Pkg: "test",
	Keys: []Key[opts]{
		Int("n", "a count", 1, 10, func(o *opts) *int { return &o.N }),
		Float("x", "a fraction", "number in [0,1)", func(x float64) bool { return x >= 0 && x < 1 }, func(o *opts) *float64 { return &o.X }),
		Bool("b", "a switch", func(o *opts) *bool { return &o.B }),
		Uint64("s", "a seed", func(o *opts) *uint64 { return &o.S }),
		Enum("kind", "a kind", []string{"red", "green"}, func(o *opts) *int { return &o.Kind }),
	},
	Renamed: map[string]string{"count": "n"},
	Check: func(o *opts) error {
		if o.N == 7 {
			return errNoSeven
		}
		return nil
	},
}

var errNoSeven = &checkError{"test: n = 7 is unlucky"}

type checkError struct{ s string }

func (e *checkError) Error() string { return e.s }

func TestRegistry(t *testing.T) {
	reg.SetDefaults(opts{N: 3})
	var o opts
	if err := reg.Parse(&o, []string{" N = 4", "x=0.5", "b=true", "s=0xff", "kind=GREEN"}); err != nil {
		t.Fatal(err)
	}
	if o != (opts{4, 0.5, true, 255, 1}) {
		t.Errorf("got %+v", o)
	}
	if got := strings.Join(reg.Strings(&o), " "); got != "n=4 x=0.5 b=true s=255 kind=green" {
		t.Errorf("Strings: %s", got)
	}
	if d := reg.Infos()[0].Default; d != "3" {
		t.Errorf("default of n: %q", d)
	}
	for _, c := range []struct{ kv, want string }{
		{"n=0", `test: option n="0": want an integer in [1, 10]`},
		{"n=7", "unlucky"},
		{"x=1", `option x="1": want a number in [0,1)`},
		{"x=NaN", `option x="NaN"`},
		{"b=maybe", "want true or false"},
		{"s=-1", "want an unsigned 64-bit integer"},
		{"kind=blue", "want red, green"},
		{"count=2", `test: unknown option "count": the key is "n"`},
		{"m=2", `test: unknown option "m" (known: n, x, b, s, kind)`},
		{"n", `test: option 0 "n": want key=value`},
	} {
		before := o
		err := reg.Parse(&o, []string{c.kv})
		if err == nil || !strings.Contains(err.Error(), c.want) || o != before {
			t.Errorf("%s: error %v, want %q; options %+v", c.kv, err, c.want, o)
		}
	}
}

func TestSplit(t *testing.T) {
	kv, err := Split(" A=1, b=2;c=3\td=\n")
	if err != nil || len(kv) != 4 || kv[0] != (KeyValue{"a", "1"}) || kv[3] != (KeyValue{"d", ""}) {
		t.Errorf("Split: %v, %v", kv, err)
	}
	for _, s := range []string{"a", "=1", "a=1 b"} {
		if _, err := Split(s); err == nil {
			t.Errorf("Split(%q) accepted", s)
		}
	}
	if kv, err := Split(""); err != nil || len(kv) != 0 {
		t.Errorf("Split of nothing: %v, %v", kv, err)
	}
}
