//go:build cgo

package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/misgrid/misgrid/amg"
	"github.com/misgrid/misgrid/mis"
)

// Options reach the library as "key=value" strings, from one registry: a
// context stores defaults, and each call's string overrides them. A call
// rejects a key that does not apply to it, so a misspelt or misplaced
// option is an error rather than silently ignored; context defaults apply
// wherever their key applies and are skipped elsewhere.

// op is a set of operations an option applies to.
type op uint16

const (
	opMatrix    op = 1 << iota // misgrid_graph_from_csr, _from_coo
	opElements                 // misgrid_graph_from_elements
	opMIS                      // misgrid_mis
	opColor                    // misgrid_color
	opHierarchy                // misgrid_hierarchy
	opVTU                      // misgrid_write_vtu
	opSolver                   // misgrid_solver_create

	opCompute = opMIS | opColor | opHierarchy
)

func (o op) String() string {
	var names []string
	for _, x := range []struct {
		o    op
		name string
	}{
		{opMatrix, "misgrid_graph_from_csr/_coo"}, {opElements, "misgrid_graph_from_elements"},
		{opMIS, "misgrid_mis"}, {opColor, "misgrid_color"}, {opHierarchy, "misgrid_hierarchy"},
		{opVTU, "misgrid_write_vtu"}, {opSolver, "misgrid_solver_create"},
		{opDistributed, "misgrid_mis_distributed"},
	} {
		if o&x.o != 0 {
			names = append(names, x.name)
		}
	}
	return strings.Join(names, ", ")
}

// settings are the values in force for one call.
type settings struct {
	device       mis.Device
	gpuIndex     int
	threads      int
	distance     int // 0: the operation's default
	priority     mis.PriorityKind
	seed         uint64
	minVertices  int
	maxLevels    int
	theta        float64
	blockSize    int
	vertexOnly   bool
	featureAngle float64
	amg          []string // "key=value" for amg.Options.Set, in order
}

type optDef struct {
	key   string
	ops   op
	def   string
	help  string
	apply func(s *settings, v string) error // nil for solver-only keys
	// amgKey is the amg option this key also sets for misgrid_solver_create
	// ("" when it does not apply to solvers).
	amgKey string
}

var registry = []optDef{
	{"device", opCompute, "auto", "where to compute: auto (GPU when present and worth it), cpu, gpu or gpu:N; solvers created in a context that sets it run their solve phase there too (unset: CPU)", func(s *settings, v string) error {
		if n, ok := strings.CutPrefix(v, "gpu:"); ok {
			i, err := strconv.Atoi(n)
			if err != nil || i < 0 {
				return fmt.Errorf("GPU index %q is not a non-negative integer", n)
			}
			s.device, s.gpuIndex = mis.GPU, i
			return nil
		}
		d, err := mis.ParseDevice(v)
		if err != nil {
			return fmt.Errorf("want auto, cpu, gpu or gpu:N")
		}
		s.device, s.gpuIndex = d, 0
		return nil
	}, ""},
	{"threads", opCompute, "0", "CPU threads (goroutines) per call; 0 uses every CPU", func(s *settings, v string) error {
		return parseInt(v, 0, math.MaxInt32, &s.threads)
	}, ""},
	{"distance", opCompute, "1 (misgrid_hierarchy: 2)", "MIS distance: 1 or 2", func(s *settings, v string) error {
		return parseInt(v, 1, 2, &s.distance)
	}, ""},
	{"priority", opCompute, "hash", "vertex order: hash, boundary (corners, edges, faces first), degree (low first) or user (misgrid_graph_set_priority)", func(s *settings, v string) error {
		k, err := mis.ParsePriorityKind(v)
		if err != nil {
			return fmt.Errorf("want hash, boundary, degree or user")
		}
		s.priority = k
		return nil
	}, ""},
	{"seed", opCompute, "0", "seed of the tie-breaking hash (unsigned 64-bit; 0x.. accepted)", func(s *settings, v string) error {
		x, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			return fmt.Errorf("not an unsigned 64-bit integer")
		}
		s.seed = x
		return nil
	}, ""},
	{"min_vertices", opHierarchy, "64", "stop coarsening at a level with at most this many vertices", func(s *settings, v string) error {
		return parseInt(v, 1, math.MaxInt32, &s.minVertices)
	}, ""},
	{"max_levels", opHierarchy, "20", "most levels in a hierarchy, the fine level included", func(s *settings, v string) error {
		return parseInt(v, 1, 1000, &s.maxLevels)
	}, ""},
	{"theta", opMatrix, "0", "strength threshold: keep a_ij when |a_ij| > theta*sqrt(|a_ii a_jj|) (needs values)", func(s *settings, v string) error {
		return parseFloat(v, 0, 1, &s.theta)
	}, ""},
	{"block_size", opMatrix, "1", "dofs per vertex: rows i*b..i*b+b-1 collapse into vertex i", func(s *settings, v string) error {
		return parseInt(v, 1, 64, &s.blockSize)
	}, ""},
	{"vertex_only", opElements, "false", "connect only the corner nodes of second-order elements", func(s *settings, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false")
		}
		s.vertexOnly = b
		return nil
	}, ""},
	{"feature_angle", opElements, "30", "degrees under which two boundary normals count as one direction (geometric classes)", func(s *settings, v string) error {
		return parseFloat(v, math.SmallestNonzeroFloat64, 180, &s.featureAngle)
	}, ""},
}

// The solver takes the amg package's option registry as it is: its keys
// join this registry with the scope opSolver. Keys both registries know
// (theta, max_levels) mean the same thing in both and apply to both;
// threads and block_size are also the solver's workers and block.
func init() {
	alias := map[string]string{"threads": "workers", "block_size": "block"}
	for i := range registry {
		d := &registry[i]
		if k, ok := alias[d.key]; ok {
			d.amgKey = k
			d.ops |= opSolver
		}
	}
	for _, info := range amg.OptionKeys() {
		if d := lookupOpt(info.Key); d != nil {
			d.amgKey = info.Key
			d.ops |= opSolver
			continue
		}
		registry = append(registry, optDef{key: info.Key, ops: opSolver, def: info.Default,
			help: info.Doc + " (" + info.Values + ")", amgKey: info.Key})
	}
}

// applyOpt sets one option in s for operation o (o may be zero: a context
// default, checked against every scope).
func applyOpt(d *optDef, s *settings, o op, value string) error {
	if d.apply != nil && (o == 0 || d.ops&o&^opSolver != 0) {
		if err := d.apply(s, value); err != nil {
			return err
		}
	}
	if d.amgKey != "" && (o == 0 || o&opSolver != 0) {
		var scratch amg.Options
		if err := scratch.Set(d.amgKey, value); err != nil {
			return err
		}
		s.amg = append(s.amg, d.amgKey+"="+value)
	}
	return nil
}

func parseInt(v string, lo, hi int, dst *int) error {
	x, err := strconv.ParseInt(v, 10, 64)
	if err != nil || x < int64(lo) || x > int64(hi) {
		return fmt.Errorf("want an integer in [%d, %d]", lo, hi)
	}
	*dst = int(x)
	return nil
}

func parseFloat(v string, lo, hi float64, dst *float64) error {
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || !(x >= lo && x <= hi) {
		return fmt.Errorf("want a number in [%g, %g]", lo, hi)
	}
	*dst = x
	return nil
}

func lookupOpt(key string) *optDef {
	for i := range registry {
		if registry[i].key == key {
			return &registry[i]
		}
	}
	return nil
}

func knownKeys() string {
	keys := make([]string, len(registry))
	for i, d := range registry {
		keys[i] = d.key
	}
	return strings.Join(keys, ", ")
}

type keyValue struct{ key, value string }

// parseOptions splits "a=1, b=2 c=3" into pairs and checks each against
// the registry (and, when ops is not zero, that it applies to ops), with
// a scratch settings so that bad values are reported at once.
func parseOptions(s string, ops op) ([]keyValue, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
	var out []keyValue
	var scratch settings
	for _, f := range fields {
		key, value, ok := strings.Cut(f, "=")
		if !ok || key == "" {
			return nil, errorf(statusOption, "option %q is not key=value", f)
		}
		d := lookupOpt(key)
		if d == nil {
			return nil, errorf(statusOption, "unknown option %q (known: %s)", key, knownKeys())
		}
		if ops != 0 && d.ops&ops == 0 {
			return nil, errorf(statusOption, "option %q does not apply here (it applies to %s)", key, d.ops)
		}
		if err := applyOpt(d, &scratch, ops, value); err != nil {
			return nil, errorf(statusOption, "option %s=%q: %v", key, value, err)
		}
		out = append(out, keyValue{key, value})
	}
	return out, nil
}

// resolve returns the settings for one call of operation o: defaults, then
// the context's options that apply to o, then the call's string.
func resolve(c *context, o op, call string) (settings, error) {
	s := settings{}
	callKV, err := parseOptions(call, o)
	if err != nil {
		return s, err
	}
	for _, kv := range append(c.options(), callKV...) {
		d := lookupOpt(kv.key)
		if d.ops&o == 0 {
			continue
		}
		if err := applyOpt(d, &s, o, kv.value); err != nil {
			return s, errorf(statusOption, "option %s=%q: %v", kv.key, kv.value, err)
		}
	}
	return s, nil
}

// optionHelp describes every key, one per line.
func optionHelp() string {
	var b strings.Builder
	defs := slices.Clone(registry)
	for _, d := range defs {
		fmt.Fprintf(&b, "%s (default %s; %s)\n    %s\n", d.key, d.def, d.ops, d.help)
	}
	return b.String()
}
