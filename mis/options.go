package mis

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"

	"github.com/misgrid/misgrid/internal/option"
)

// Options controls Compute. The zero value asks for a distance-1 MIS with
// boundary priorities (Priority's zero value), on the GPU when that pays,
// using all CPUs otherwise. OptionKeys lists the fields that have a text
// form, with their defaults.
type Options struct {
	Distance int // 1 or 2; 0 means DefaultDistance
	Priority Priority
	Device   Device
	Workers  int // CPU goroutines; 0 means runtime.GOMAXPROCS(0)
	// Serial runs the greedy reference (Greedy) on one goroutine instead
	// of the parallel rounds, and never the GPU: the same set, for
	// callers that already run one Compute per core or that time the
	// reference. Workers and Device are then ignored.
	Serial bool
}

func (o *Options) distance() (int, error) {
	switch o.Distance {
	case 0:
		return DefaultDistance, nil
	case 1, 2:
		return o.Distance, nil
	}
	return 0, fmt.Errorf("mis: distance %d not supported (want 1 or 2)", o.Distance)
}

func (o *Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// The values that zero fields of Options and HierarchyOptions take.
const (
	DefaultDistance          = 1
	DefaultHierarchyDistance = 2
	DefaultMinVertices       = 64
	DefaultMaxLevels         = 20
)

// OptionInfo documents one key of the option registries.
type OptionInfo = option.Info

// registry holds the keys of Options. HierarchyOptions has these keys too,
// and two of its own (hierarchyKeys).
var priorityNames = []string{Boundary.String(), Hash.String(), Degree.String(), User.String()}

var registry = &option.Registry[Options]{
	Pkg: "mis",
	Keys: []option.Key[Options]{
		option.Int("distance", "MIS distance, 1 or 2 (0: the default)", 0, 2,
			func(o *Options) *int { return &o.Distance }),
		option.Enum("priority", "vertex order: boundary (corners, edges, faces, interior), hash, degree (low first) or user (values set by the caller)",
			priorityNames, func(o *Options) *PriorityKind { return &o.Priority.Kind }),
		option.Uint64("seed", "seed of the hash that breaks every tie",
			func(o *Options) *uint64 { return &o.Priority.Seed }),
		{Info: option.Info{Key: "device", Values: "auto|cpu|gpu", Doc: "where to compute: auto (the GPU when present and worth it), cpu or gpu"},
			Set: func(o *Options, v string) (err error) {
				o.Device, err = ParseDevice(strings.ToLower(v))
				if err != nil {
					return fmt.Errorf("want auto, cpu or gpu")
				}
				return nil
			},
			Get: func(o *Options) string { return o.Device.String() }},
		option.Int("threads", "CPU goroutines (0: GOMAXPROCS)", 0, math.MaxInt32,
			func(o *Options) *int { return &o.Workers }),
		option.Bool("serial", "run the serial greedy reference", func(o *Options) *bool { return &o.Serial }),
	},
	Renamed: map[string]string{"workers": "threads", "min": "min_vertices", "levels": "max_levels"},
}

// hierarchyKeys are the keys of HierarchyOptions that Options lacks.
var hierarchyKeys = &option.Registry[HierarchyOptions]{
	Pkg: "mis",
	Keys: []option.Key[HierarchyOptions]{
		option.Int("min_vertices", "stop coarsening at a level of at most this many vertices", 1, math.MaxInt32,
			func(o *HierarchyOptions) *int { return &o.MinVertices }),
		option.Int("max_levels", "most levels, the fine level included", 1, math.MaxInt32,
			func(o *HierarchyOptions) *int { return &o.MaxLevels }),
	},
}

func init() {
	registry.SetDefaults(Options{Distance: DefaultDistance})
	hierarchyKeys.SetDefaults(HierarchyOptions{MinVertices: DefaultMinVertices, MaxLevels: DefaultMaxLevels})
}

// OptionKeys lists the keys that Options.Set accepts, with their defaults.
func OptionKeys() []OptionInfo { return registry.Infos() }

// HierarchyOptionKeys lists the keys that HierarchyOptions.Set accepts:
// those of OptionKeys (but serial) and min_vertices and max_levels.
func HierarchyOptionKeys() []OptionInfo {
	var out []OptionInfo
	for _, k := range registry.Infos() {
		switch k.Key {
		case "serial":
			continue
		case "distance":
			k.Default = strconv.Itoa(DefaultHierarchyDistance) // Hierarchy's own default
		}
		out = append(out, k)
	}
	return append(out, hierarchyKeys.Infos()...)
}

// Set changes the option named key from its text form, as the command
// line and the C ABI pass it. A bad value is refused with an error that
// names the key, and o is left as it was.
func (o *Options) Set(key, value string) error {
	if hierarchyKeys.Lookup(key) != nil {
		return fmt.Errorf("mis: option %q applies to Hierarchy only", option.Normalize(key))
	}
	return registry.Set(o, key, value)
}

// Parse applies "key=value" settings to o in order, stopping at the first
// error.
func (o *Options) Parse(kv ...string) error { return registry.Parse(o, kv) }

// Set changes the option named key of a hierarchy from its text form.
func (o *HierarchyOptions) Set(key, value string) error {
	if hierarchyKeys.Lookup(key) != nil {
		return hierarchyKeys.Set(o, key, value)
	}
	if k := registry.Lookup(key); k == nil || k.Key == "serial" {
		var known []string
		for _, k := range HierarchyOptionKeys() {
			known = append(known, k.Key)
		}
		return option.Unknown("mis", key, registry.Renamed, known)
	}
	m := Options{Distance: o.Distance, Priority: o.Priority, Device: o.Device, Workers: o.Workers}
	if err := registry.Set(&m, key, value); err != nil {
		return err
	}
	o.Distance, o.Priority, o.Device, o.Workers = m.Distance, m.Priority, m.Device, m.Workers
	return nil
}

// Parse applies "key=value" settings to o in order, stopping at the first
// error.
func (o *HierarchyOptions) Parse(kv ...string) error {
	return option.Parse("mis", kv, o.Set)
}
