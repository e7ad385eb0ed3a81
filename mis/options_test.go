package mis

import (
	"reflect"
	"strings"
	"testing"
)

func TestOptionsSet(t *testing.T) {
	var o Options
	if err := o.Parse("distance=2", "priority=degree", "seed=0x10", "device=cpu", "threads=3", "serial=true"); err != nil {
		t.Fatal(err)
	}
	want := Options{Distance: 2, Priority: Priority{Kind: Degree, Seed: 16}, Device: CPU, Workers: 3, Serial: true}
	if o.Distance != want.Distance || o.Priority.Kind != want.Priority.Kind || o.Priority.Seed != want.Priority.Seed ||
		o.Device != want.Device || o.Workers != want.Workers || o.Serial != want.Serial {
		t.Errorf("got %+v, want %+v", o, want)
	}
	for _, c := range []struct{ key, value, want string }{
		{"distance", "3", `option distance="3": want an integer in [0, 2]`},
		{"priority", "random", `option priority="random": want boundary, hash, degree, user`},
		{"threads", "-1", "threads"},
		{"workers", "2", `unknown option "workers": the key is "threads"`},
		{"min_vertices", "4", "applies to Hierarchy only"},
		{"device", "tpu", `device="tpu"`},
	} {
		before := o
		err := o.Set(c.key, c.value)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%s: error %v, want %q", c.key, c.value, err, c.want)
		}
		if !reflect.DeepEqual(o, before) {
			t.Errorf("%s=%s changed the options on error", c.key, c.value)
		}
	}
}

// The keys of HierarchyOptions: those of Options but serial, and two of
// its own; each accepts its documented default, which is what the zero
// field means.
func TestHierarchyOptionsSet(t *testing.T) {
	var h HierarchyOptions
	if err := h.Parse("min_vertices=9", "max_levels=3", "distance=1", "priority=hash", "threads=2"); err != nil {
		t.Fatal(err)
	}
	if h.MinVertices != 9 || h.MaxLevels != 3 || h.Distance != 1 || h.Priority.Kind != Hash || h.Workers != 2 {
		t.Errorf("got %+v", h)
	}
	if err := h.Set("serial", "true"); err == nil {
		t.Error("serial accepted by HierarchyOptions")
	}
	if err := h.Set("levels", "3"); err == nil || !strings.Contains(err.Error(), `the key is "max_levels"`) {
		t.Errorf("levels: %v", err)
	}
	defaults := map[string]string{"distance": "2", "priority": "boundary", "min_vertices": "64", "max_levels": "20", "threads": "0", "device": "auto", "seed": "0"}
	keys := HierarchyOptionKeys()
	if len(keys) != len(defaults) {
		t.Errorf("%d hierarchy keys, want %d", len(keys), len(defaults))
	}
	for _, k := range keys {
		if defaults[k.Key] != k.Default {
			t.Errorf("key %s: default %q, want %q", k.Key, k.Default, defaults[k.Key])
		}
		var h HierarchyOptions
		if err := h.Set(k.Key, k.Default); err != nil {
			t.Errorf("key %s rejects its default: %v", k.Key, err)
		}
	}
	for _, k := range OptionKeys() {
		if k.Key == "distance" && k.Default != "1" {
			t.Errorf("Options distance default %q, want 1", k.Default)
		}
	}
}
