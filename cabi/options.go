//go:build cgo

package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/misgrid/misgrid/amg"
	"github.com/misgrid/misgrid/internal/option"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// Options reach the library as "key=value" strings. The keys are those of
// the registries of mesh, mis and amg, composed here: each registry's
// options type is a target, set for the operations it serves, so that a
// value goes from its string to the typed options of the call in one step.
// A context stores defaults (one value per key, the last set), and each
// call's string overrides them. A call rejects a key that does not apply
// to it, so a misspelt or misplaced option is an error rather than
// silently ignored; context defaults apply wherever their key applies and
// are skipped elsewhere.

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

// settings are the typed options in force for one call.
type settings struct {
	matrix   mesh.MatrixOptions
	elements mesh.ElementOptions
	classify mesh.ClassifyOptions
	mis      mis.Options          // misgrid_mis, _color, _mis_distributed; priority for all
	hier     mis.HierarchyOptions // misgrid_hierarchy
	amg      amg.Options          // misgrid_solver_create
}

// target is one options type of a package registry: the operations it
// serves, its keys, and how a key is set on the settings.
type target struct {
	ops  op
	keys []option.Info
	set  func(s *settings, key, value string) error
}

// misKeys are the keys of mis.Options that C callers have: serial is for
// Go callers that time the reference.
func misKeys(keys []option.Info) []option.Info {
	return slices.DeleteFunc(keys, func(k option.Info) bool { return k.Key == "serial" })
}

var targets = []target{
	{opMatrix, mesh.MatrixOptionKeys(), func(s *settings, k, v string) error { return s.matrix.Set(k, v) }},
	{opElements, mesh.ElementOptionKeys(), func(s *settings, k, v string) error { return s.elements.Set(k, v) }},
	{opElements, mesh.ClassifyOptionKeys(), func(s *settings, k, v string) error { return s.classify.Set(k, v) }},
	{opCompute | opDistributed, misKeys(mis.OptionKeys()), func(s *settings, k, v string) error {
		return s.mis.Set(k, v)
	}},
	{opHierarchy, mis.HierarchyOptionKeys(), func(s *settings, k, v string) error {
		return s.hier.Set(k, v)
	}},
	{opSolver, amg.OptionKeys(), func(s *settings, k, v string) error { return s.amg.Set(k, v) }},
}

// optDef is one key as C sees it: the operations it applies to, its
// default and help, composed from the targets that know it. Keys of the
// C ABI's own (misgrid_mis_distributed's mode and timeout) have apply.
type optDef struct {
	key   string
	ops   op
	def   string
	help  string
	apply func(s *settings, v string) error
}

// registry is every key, in the order of the targets.
var registry = composeRegistry()

func composeRegistry() []optDef {
	var defs []optDef
	defaults := map[string][]string{} // key → "default (scope)" when scopes differ
	for _, t := range targets {
		for _, k := range t.keys {
			i := slices.IndexFunc(defs, func(d optDef) bool { return d.key == k.Key })
			if i < 0 {
				defs = append(defs, optDef{key: k.Key, def: k.Default, help: k.Doc + " (" + k.Values + ")"})
				i = len(defs) - 1
			}
			d := &defs[i]
			d.ops |= t.ops &^ opDistributed // misgrid_mis_distributed takes three (mpi.go)
			if k.Default != d.def || len(defaults[k.Key]) > 0 {
				defaults[k.Key] = append(defaults[k.Key], k.Default+" for "+(t.ops&^opDistributed).String())
			}
		}
	}
	for i := range defs {
		if alt := defaults[defs[i].key]; len(alt) > 0 {
			defs[i].def += " (" + strings.Join(alt, "; ") + ")"
		}
		if defs[i].key == "device" {
			defs[i].help += "; gpu:N names a GPU: misgrid_mis, _color and _hierarchy drive GPU 0, solvers any"
		}
	}
	return defs
}

// renamed maps names that are not keys (those of Go fields and of the
// command line's old flags) to the key, for the hint of the error.
var renamed = map[string]string{"block": "block_size", "workers": "threads", "feature-angle": "feature_angle"}

// applyOpt sets one option in s for operation o (o may be zero: a context
// default, checked against every scope).
func applyOpt(d *optDef, s *settings, o op, value string) error {
	if d.apply != nil {
		return d.apply(s, value)
	}
	for _, t := range targets {
		if (o != 0 && t.ops&o == 0) || !slices.ContainsFunc(t.keys, func(k option.Info) bool { return k.Key == d.key }) {
			continue
		}
		if err := t.set(s, d.key, value); err != nil {
			return err
		}
	}
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

func knownKeys() []string {
	keys := make([]string, len(registry))
	for i, d := range registry {
		keys[i] = d.key
	}
	return keys
}

func unknownOpt(key string) error {
	return errorf(statusOption, "%v", option.Unknown("misgrid", key, renamed, knownKeys()))
}

type keyValue struct{ key, value string }

// parseOptions splits "a=1, b=2 c=3" into pairs and checks each against
// the registry (and, when ops is not zero, that it applies to ops), with
// a scratch settings so that bad values are reported at once.
func parseOptions(s string, ops op) ([]keyValue, error) {
	kvs, err := option.Split(s)
	if err != nil {
		return nil, errorf(statusOption, "%v", err)
	}
	out := make([]keyValue, 0, len(kvs))
	var scratch settings
	for _, kv := range kvs {
		d := lookupOpt(kv.Key)
		if d == nil {
			return nil, unknownOpt(kv.Key)
		}
		if ops != 0 && d.ops&ops == 0 {
			return nil, errorf(statusOption, "option %q does not apply here (it applies to %s)", kv.Key, d.ops)
		}
		if err := applyOpt(d, &scratch, ops, kv.Value); err != nil {
			return nil, errorf(statusOption, "%v", err)
		}
		out = append(out, keyValue{kv.Key, kv.Value})
	}
	return out, nil
}

// mergeOptions returns the context's options with kv set: a key set again
// replaces its value, so a context holds at most one value per key.
func mergeOptions(old, kv []keyValue) []keyValue {
	out := slices.Clone(old)
	for _, x := range kv {
		if i := slices.IndexFunc(out, func(y keyValue) bool { return y.key == x.key }); i >= 0 {
			out[i].value = x.value
		} else {
			out = append(out, x)
		}
	}
	return out
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
			return s, errorf(statusOption, "%v", err)
		}
	}
	return s, nil
}

// optionHelp describes every key, one per line.
func optionHelp() string {
	var b strings.Builder
	for _, d := range registry {
		fmt.Fprintf(&b, "%s (default %s; %s)\n    %s\n", d.key, d.def, d.ops, d.help)
	}
	return b.String()
}
