// Package option is the machinery behind the key=value option registries
// of mesh, mis and amg. Each package declares its keys once, as a table of
// Key values over its own options struct, and exports Set methods and an
// OptionKeys listing built on a Registry; the C ABI and the command line
// compose those registries instead of keeping tables of their own.
package option

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Info documents one key.
type Info struct {
	Key     string // the name in "key=value"
	Values  string // what a value may be
	Default string // what a zero field means, in the value syntax
	Doc     string // one line
}

// Key is one key of a registry over options of type O: how to set a
// field from text and how to print it back.
type Key[O any] struct {
	Info
	Set func(o *O, value string) error
	Get func(o *O) string
}

// Registry is the table of keys of one options type.
type Registry[O any] struct {
	Pkg  string   // "amg": the prefix of errors
	Keys []Key[O] // in the order help lists them
	// Renamed maps names that are not keys, but that a user may try (the
	// name of another interface, an old name), to the key to use.
	Renamed map[string]string
	// Check, when set, validates o after a value was set; a value that
	// fails it is refused and o keeps its previous value.
	Check func(o *O) error
}

// Normalize is the form in which keys are compared.
func Normalize(key string) string { return strings.ToLower(strings.TrimSpace(key)) }

// Lookup returns the key named key, or nil.
func (r *Registry[O]) Lookup(key string) *Key[O] {
	k := Normalize(key)
	for i := range r.Keys {
		if r.Keys[i].Key == k {
			return &r.Keys[i]
		}
	}
	return nil
}

// Infos lists the documentation of every key.
func (r *Registry[O]) Infos() []Info {
	out := make([]Info, len(r.Keys))
	for i, k := range r.Keys {
		out[i] = k.Info
	}
	return out
}

// Set sets one key from its text form. The error names the package, the
// key and the value; an unknown key that is a known other name of a key
// gets a hint naming the key.
func (r *Registry[O]) Set(o *O, key, value string) error {
	k := r.Lookup(key)
	if k == nil {
		return r.unknown(key)
	}
	t := *o
	v := strings.TrimSpace(value)
	if err := k.Set(&t, v); err != nil {
		return fmt.Errorf("%s: option %s=%q: %w", r.Pkg, k.Key, v, err)
	}
	if r.Check != nil {
		if err := r.Check(&t); err != nil {
			return err
		}
	}
	*o = t
	return nil
}

// Parse sets "key=value" settings in order; the first error stops it.
func (r *Registry[O]) Parse(o *O, kv []string) error {
	return Parse(r.Pkg, kv, func(k, v string) error { return r.Set(o, k, v) })
}

// Parse cuts each "key=value" of kv and passes it to set, in order; the
// first error stops it.
func Parse(pkg string, kv []string, set func(key, value string) error) error {
	for i, s := range kv {
		key, value, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("%s: option %d %q: want key=value", pkg, i, s)
		}
		if err := set(key, value); err != nil {
			return err
		}
	}
	return nil
}

// Values returns every key with the value o holds, in key order.
func (r *Registry[O]) Values(o *O) []KeyValue {
	out := make([]KeyValue, len(r.Keys))
	for i, k := range r.Keys {
		out[i] = KeyValue{k.Key, k.Get(o)}
	}
	return out
}

// Strings returns every key with the value o holds as "key=value", in key
// order: a text form of o that Parse reads back.
func (r *Registry[O]) Strings(o *O) []string {
	out := make([]string, len(r.Keys))
	for i, k := range r.Keys {
		out[i] = k.Key + "=" + k.Get(o)
	}
	return out
}

// SetDefaults fills Info.Default of every key from def, the options whose
// fields hold what zero fields mean, so that the defaults are written once:
// in the code that fills zero fields.
func (r *Registry[O]) SetDefaults(def O) {
	for i := range r.Keys {
		if r.Keys[i].Default == "" {
			r.Keys[i].Default = r.Keys[i].Get(&def)
		}
	}
}

func (r *Registry[O]) unknown(key string) error {
	names := make([]string, len(r.Keys))
	for i, k := range r.Keys {
		names[i] = k.Key
	}
	return Unknown(r.Pkg, key, r.Renamed, names)
}

// Unknown is the error for key, which is none of known: a hint naming the
// key when renamed knows the name, the list of keys otherwise.
func Unknown(pkg, key string, renamed map[string]string, known []string) error {
	if to, ok := renamed[Normalize(key)]; ok {
		return RenamedError(pkg, key, to)
	}
	return fmt.Errorf("%s: unknown option %q (known: %s)", pkg, key, strings.Join(known, ", "))
}

// RenamedError is the error for a name that is not a key but means one.
func RenamedError(pkg, key, to string) error {
	return fmt.Errorf("%s: unknown option %q: the key is %q", pkg, key, to)
}

// KeyValue is one setting in text form.
type KeyValue struct{ Key, Value string }

// Split cuts a C-style option string, "a=1, b=2;c=3 d=4", into settings.
// Commas, semicolons and white space separate them; every field must be
// key=value with a non-empty key. It checks no key: registries do.
func Split(s string) ([]KeyValue, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool {
		return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
	})
	out := make([]KeyValue, 0, len(fields))
	for _, f := range fields {
		key, value, ok := strings.Cut(f, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("option %q is not key=value", f)
		}
		out = append(out, KeyValue{Normalize(key), value})
	}
	return out, nil
}

// Int is a key for an int field with values in [lo, hi].
func Int[O any](key, doc string, lo, hi int, field func(*O) *int) Key[O] {
	values := fmt.Sprintf("integer in [%d, %d]", lo, hi)
	if hi == math.MaxInt32 {
		values = fmt.Sprintf("integer ≥ %d", lo)
	}
	return Key[O]{Info{Key: key, Values: values, Doc: doc},
		func(o *O, v string) error {
			x, err := strconv.ParseInt(v, 10, 64)
			if err != nil || x < int64(lo) || x > int64(hi) {
				return fmt.Errorf("want an %s", values)
			}
			*field(o) = int(x)
			return nil
		},
		func(o *O) string { return strconv.Itoa(*field(o)) }}
}

// Float is a key for a float64 field; values describes the range that
// ok accepts (the parse refuses NaN and infinities itself).
func Float[O any](key, doc, values string, ok func(float64) bool, field func(*O) *float64) Key[O] {
	return Key[O]{Info{Key: key, Values: values, Doc: doc},
		func(o *O, v string) error {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || (ok != nil && !ok(x)) {
				return fmt.Errorf("want a %s", values)
			}
			*field(o) = x
			return nil
		},
		func(o *O) string { return strconv.FormatFloat(*field(o), 'g', -1, 64) }}
}

// Bool is a key for a bool field: true or false (and what
// strconv.ParseBool takes).
func Bool[O any](key, doc string, field func(*O) *bool) Key[O] {
	return Key[O]{Info{Key: key, Values: "true|false", Doc: doc},
		func(o *O, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("want true or false")
			}
			*field(o) = b
			return nil
		},
		func(o *O) string { return strconv.FormatBool(*field(o)) }}
}

// Uint64 is a key for a uint64 field, in decimal or 0x hexadecimal.
func Uint64[O any](key, doc string, field func(*O) *uint64) Key[O] {
	return Key[O]{Info{Key: key, Values: "integer in [0, 2⁶⁴) (0x.. accepted)", Doc: doc},
		func(o *O, v string) error {
			x, err := strconv.ParseUint(v, 0, 64)
			if err != nil {
				return fmt.Errorf("want an unsigned 64-bit integer")
			}
			*field(o) = x
			return nil
		},
		func(o *O) string { return strconv.FormatUint(*field(o), 10) }}
}

// Enum is a key for an enumeration whose values are 0..len(names)-1,
// named by names (matched without regard to case).
func Enum[O any, E ~int](key, doc string, names []string, field func(*O) *E) Key[O] {
	return Key[O]{Info{Key: key, Values: strings.Join(names, "|"), Doc: doc},
		func(o *O, v string) error {
			i := slices.Index(names, strings.ToLower(v))
			if i < 0 {
				return fmt.Errorf("want %s", strings.Join(names, ", "))
			}
			*field(o) = E(i)
			return nil
		},
		func(o *O) string {
			if i := int(*field(o)); i >= 0 && i < len(names) {
				return names[i]
			}
			return strconv.Itoa(int(*field(o)))
		}}
}
