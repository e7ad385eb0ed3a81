package main

/*
#include "misgrid.h"
#include "cgo_types.h"
*/
import "C"

import (
	"unsafe"
)

// resultLevel resolves a result handle and a level index.
func resultLevel(c *context, h C.misgrid_result, lvl C.int64_t) (*resultObj, *level, error) {
	r, err := lookupResult(h)
	if err != nil {
		return nil, nil, err
	}
	if lvl < 0 || int64(lvl) >= int64(len(r.levels)) {
		return nil, nil, levelError("result", int64(lvl), len(r.levels), c.indexBase())
	}
	return r, &r.levels[lvl], nil
}

// levelError reports a level out of range, numbered in the caller's
// base (the Fortran module's wrappers number levels from 1).
func levelError(what string, lvl int64, n int, base int) error {
	return errorf(statusRange, "level = %d, but the %s has %d level(s), numbered from %d", lvl+int64(base), what, n, base)
}

func (l *level) needSet() error {
	if l.set == nil {
		return errorf(statusArg, "this result is a coloring and holds no set (use misgrid_result_colors)")
	}
	return nil
}

func (l *level) needAgg() error {
	if l.agg == nil {
		return errorf(statusArg, "no aggregates at this level: %s", l.aggWhy)
	}
	return nil
}

// levelIDs resolves the level a getter reads and checks, before anything
// is written, that the level holds what the getter hands out (need) and
// that the caller's index type is one ids can be written in.
func levelIDs(c *context, result C.misgrid_result, lvl C.int64_t, need func(*level) error, itype, base C.int32_t) (*level, error) {
	_, l, err := resultLevel(c, result, lvl)
	if err != nil {
		return nil, err
	}
	if err := need(l); err != nil {
		return nil, err
	}
	if err := checkIndexType(itype, base); err != nil {
		return nil, err
	}
	return l, nil
}

// writeList hands out a list whose length the caller cannot know in
// advance: the count goes out first, so that a capacity too small still
// tells the caller how much to allocate.
func writeList(name string, dst unsafe.Pointer, capacity C.int64_t, count *C.int64_t, itype, base C.int32_t, ids []int32) error {
	if err := store("count", count, C.int64_t(len(ids))); err != nil {
		return err
	}
	if err := outArray(name, dst, int64(capacity), int64(len(ids))); err != nil {
		return err
	}
	return writeIDs(name, dst, itype, base, ids)
}

//export misgrid_result_destroy
func misgrid_result_destroy(ctx C.misgrid_context, result C.misgrid_result) C.misgrid_status {
	return guard(ctx, "misgrid_result_destroy", func(*context) error {
		_, err := handles.remove(uintptr(result), kindResult, "result")
		return err
	})
}

//export misgrid_result_num_levels
func misgrid_result_num_levels(ctx C.misgrid_context, result C.misgrid_result, n *C.int64_t) C.misgrid_status {
	return guard(ctx, "misgrid_result_num_levels", func(*context) error {
		r, err := lookupResult(result)
		if err != nil {
			return err
		}
		if n == nil {
			return errorf(statusNull, "nlevels is NULL")
		}
		return store("nlevels", n, C.int64_t(len(r.levels)))
	})
}

//export misgrid_result_level_info
func misgrid_result_level_info(ctx C.misgrid_context, result C.misgrid_result, lvl C.int64_t,
	nv, setSize, nagg, ncolors, rounds *C.int64_t) C.misgrid_status {
	return guard(ctx, "misgrid_result_level_info", func(c *context) error {
		_, l, err := resultLevel(c, result, lvl)
		if err != nil {
			return err
		}
		var v [5]int64
		v[0] = int64(l.g.N())
		if l.set != nil {
			v[1], v[4] = int64(l.set.Size), int64(l.set.Rounds)
		}
		if l.agg != nil {
			v[2] = int64(l.agg.N)
		}
		if l.colors != nil {
			v[3] = int64(l.colors.NumColors)
		}
		for i, p := range []*C.int64_t{nv, setSize, nagg, ncolors, rounds} {
			if err := store([]string{"nvertices", "set_size", "naggregates", "ncolors", "rounds"}[i], p, C.int64_t(v[i])); err != nil {
				return err
			}
		}
		return nil
	})
}

//export misgrid_result_set_flags
func misgrid_result_set_flags(ctx C.misgrid_context, result C.misgrid_result, lvl C.int64_t, n C.int64_t, flags *C.int32_t) C.misgrid_status {
	return guard(ctx, "misgrid_result_set_flags", func(c *context) error {
		_, l, err := resultLevel(c, result, lvl)
		if err != nil {
			return err
		}
		if err := l.needSet(); err != nil {
			return err
		}
		if err := outArray("flags", unsafe.Pointer(flags), int64(n), int64(len(l.set.In))); err != nil {
			return err
		}
		out := make([]int32, len(l.set.In))
		for v, in := range l.set.In {
			if in {
				out[v] = 1
			}
		}
		return writeInt32s("flags", flags, out)
	})
}

//export misgrid_result_set_vertices
func misgrid_result_set_vertices(ctx C.misgrid_context, result C.misgrid_result, lvl C.int64_t, itype, base C.int32_t,
	capacity C.int64_t, verts unsafe.Pointer, count *C.int64_t) C.misgrid_status {
	return guard(ctx, "misgrid_result_set_vertices", func(c *context) error {
		l, err := levelIDs(c, result, lvl, (*level).needSet, itype, base)
		if err != nil {
			return err
		}
		return writeList("vertices", verts, capacity, count, itype, base, l.set.Vertices())
	})
}

//export misgrid_result_aggregates
func misgrid_result_aggregates(ctx C.misgrid_context, result C.misgrid_result, lvl C.int64_t, itype, base C.int32_t,
	n C.int64_t, agg unsafe.Pointer) C.misgrid_status {
	return guard(ctx, "misgrid_result_aggregates", func(c *context) error {
		l, err := levelIDs(c, result, lvl, (*level).needAgg, itype, base)
		if err != nil {
			return err
		}
		if err := outArray("aggregate", agg, int64(n), int64(len(l.agg.Of))); err != nil {
			return err
		}
		return writeIDs("aggregate", agg, itype, base, l.agg.Of)
	})
}

//export misgrid_result_aggregate_roots
func misgrid_result_aggregate_roots(ctx C.misgrid_context, result C.misgrid_result, lvl C.int64_t, itype, base C.int32_t,
	capacity C.int64_t, roots unsafe.Pointer, count *C.int64_t) C.misgrid_status {
	return guard(ctx, "misgrid_result_aggregate_roots", func(c *context) error {
		l, err := levelIDs(c, result, lvl, (*level).needAgg, itype, base)
		if err != nil {
			return err
		}
		return writeList("roots", roots, capacity, count, itype, base, l.agg.Roots)
	})
}

//export misgrid_result_colors
func misgrid_result_colors(ctx C.misgrid_context, result C.misgrid_result, lvl C.int64_t, base C.int32_t, n C.int64_t, colors *C.int32_t) C.misgrid_status {
	return guard(ctx, "misgrid_result_colors", func(c *context) error {
		_, l, err := resultLevel(c, result, lvl)
		if err != nil {
			return err
		}
		if l.colors == nil {
			return errorf(statusArg, "this result holds no coloring (use misgrid_color)")
		}
		if err := checkIndexType(C.MISGRID_INT32, base); err != nil {
			return err
		}
		if err := outArray("colors", unsafe.Pointer(colors), int64(n), int64(len(l.colors.Color))); err != nil {
			return err
		}
		return writeIDs("colors", unsafe.Pointer(colors), C.MISGRID_INT32, base, l.colors.Color)
	})
}

//export misgrid_result_level_graph
func misgrid_result_level_graph(ctx C.misgrid_context, result C.misgrid_result, lvl C.int64_t, out *C.misgrid_graph) C.misgrid_status {
	return guard(ctx, "misgrid_result_level_graph", func(c *context) error {
		if out == nil {
			return errorf(statusNull, "graph (output) is NULL")
		}
		_, l, err := resultLevel(c, result, lvl)
		if err != nil {
			return err
		}
		return publish(out, l.g, nil)
	})
}
