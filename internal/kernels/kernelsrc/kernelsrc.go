// Package kernelsrc reads the kernel sources (internal/kernels/*.cu and
// *.cuh) for the tests that hold the constants a host package shares
// with the kernels to their #defines: a mismatch passes every CPU test
// and goes wrong only on a GPU.
package kernelsrc

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
)

// Sources returns the text of every *.cu and *.cuh file in dir.
func Sources(dir string) ([][]byte, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.cu*"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("kernel sources in %s: %v (%d files)", dir, err, len(files))
	}
	srcs := make([][]byte, len(files))
	for i, f := range files {
		if srcs[i], err = os.ReadFile(f); err != nil {
			return nil, err
		}
	}
	return srcs, nil
}

var define = regexp.MustCompile(`(?m)^#define ([A-Z0-9_]+) \(?([0-9]+)u?\)?\b`)

// Defines returns every "#define NAME number" (the number maybe in
// parentheses or with a u suffix) of the sources in dir.
func Defines(dir string) (map[string]int64, error) {
	srcs, err := Sources(dir)
	if err != nil {
		return nil, err
	}
	def := map[string]int64{}
	for _, src := range srcs {
		for _, m := range define.FindAllSubmatch(src, -1) {
			v, _ := strconv.ParseInt(string(m[2]), 10, 64)
			def[string(m[1])] = v
		}
	}
	return def, nil
}

// Mismatches lists, one message each in the order of the names, the
// constants of host (the name of each #define and the host's value)
// whose #define is missing from def or holds another value.
func Mismatches(def, host map[string]int64) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(host)) {
		got, ok := def[name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("no #define %s in the kernel sources", name))
		case got != host[name]:
			out = append(out, fmt.Sprintf("%s is %d in the kernels, %d on the host", name, got, host[name]))
		}
	}
	return out
}
