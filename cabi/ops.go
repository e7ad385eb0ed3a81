package main

/*
#include "misgrid.h"
#include "cgo_types.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"io"

	"github.com/misgrid/misgrid/internal/atomicfile"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// level is one level of a result: the graph it belongs to and what was
// computed on it. A result is immutable once published, so any number of
// threads may read it at once.
type level struct {
	g      *mesh.Graph
	set    *mis.Result     // nil for a coloring
	agg    *mis.Aggregates // nil when there are none
	aggWhy string          // why agg is nil
	colors *mis.Coloring
}

type resultObj struct {
	levels []level
}

func lookupResult(h C.misgrid_result) (*resultObj, error) {
	obj, err := handles.lookup(uintptr(h), kindResult, "result")
	if err != nil {
		return nil, err
	}
	return obj.(*resultObj), nil
}

// priority builds the mis priority for the settings and the graph's user
// values.
func priority(s settings, prio []float64) (mis.Priority, error) {
	p := s.mis.Priority
	if p.Kind == mis.User {
		if prio == nil {
			return p, errorf(statusArg, "priority=user, but the graph has no priority values (call misgrid_graph_set_priority)")
		}
		p.Values = prio
	}
	return p, nil
}

func misOptions(s settings, p mis.Priority) mis.Options {
	o := s.mis
	o.Priority = p
	return o
}

// computeStart resolves the graph and settings shared by the operations.
func computeStart(c *context, graph C.misgrid_graph, o op, options *C.misgrid_cchar, out *C.misgrid_result) (*mesh.Graph, settings, mis.Priority, error) {
	if out == nil {
		return nil, settings{}, mis.Priority{}, errorf(statusNull, "result (output) is NULL")
	}
	gobj, err := lookupGraph(graph)
	if err != nil {
		return nil, settings{}, mis.Priority{}, err
	}
	s, err := resolveC(c, o, options)
	if err != nil {
		return nil, s, mis.Priority{}, err
	}
	g, prio := gobj.snapshot()
	p, err := priority(s, prio)
	return g, s, p, err
}

func publishResult(out *C.misgrid_result, r *resultObj) error {
	return publishHandle("result", out, kindResult, r)
}

//export misgrid_mis
func misgrid_mis(ctx C.misgrid_context, graph C.misgrid_graph, options *C.misgrid_cchar, out *C.misgrid_result) C.misgrid_status {
	return guard(ctx, "misgrid_mis", func(c *context) error {
		g, s, p, err := computeStart(c, graph, opMIS, options, out)
		if err != nil {
			return err
		}
		res, err := mis.Compute(g, misOptions(s, p))
		if err != nil {
			return err
		}
		l := level{g: g, set: res}
		if s.mis.Distance == 2 {
			if l.agg, err = mis.Aggregate(g, res.In); err != nil {
				return err
			}
		} else {
			l.aggWhy = "aggregates need a distance-2 set (option distance=2)"
		}
		return publishResult(out, &resultObj{levels: []level{l}})
	})
}

//export misgrid_color
func misgrid_color(ctx C.misgrid_context, graph C.misgrid_graph, options *C.misgrid_cchar, out *C.misgrid_result) C.misgrid_status {
	return guard(ctx, "misgrid_color", func(c *context) error {
		g, s, p, err := computeStart(c, graph, opColor, options, out)
		if err != nil {
			return err
		}
		col, err := mis.Color(g, misOptions(s, p))
		if err != nil {
			return err
		}
		return publishResult(out, &resultObj{levels: []level{{g: g, colors: col, aggWhy: "a coloring has no aggregates"}}})
	})
}

//export misgrid_hierarchy
func misgrid_hierarchy(ctx C.misgrid_context, graph C.misgrid_graph, options *C.misgrid_cchar, out *C.misgrid_result) C.misgrid_status {
	return guard(ctx, "misgrid_hierarchy", func(c *context) error {
		g, s, p, err := computeStart(c, graph, opHierarchy, options, out)
		if err != nil {
			return err
		}
		lv, err := mis.Hierarchy(g, mis.HierarchyOptions{
			Distance: s.hier.Distance, Priority: p, MinVertices: s.hier.MinVertices, MaxLevels: s.hier.MaxLevels,
			Workers: s.hier.Workers, Device: s.hier.Device,
		})
		if err != nil {
			return err
		}
		return publishResult(out, hierarchyResult(lv))
	})
}

// readFlags copies a caller's set flags (nonzero = member).
func readFlags(g *mesh.Graph, n C.int64_t, flags *C.misgrid_cint32) ([]bool, error) {
	if err := vertexCount("flags", int64(n), g); err != nil {
		return nil, err
	}
	raw, err := readInt32s("flags", flags, int64(n))
	if err != nil {
		return nil, err
	}
	in := make([]bool, len(raw))
	for i, x := range raw {
		in[i] = x != 0
	}
	return in, nil
}

//export misgrid_aggregate
func misgrid_aggregate(ctx C.misgrid_context, graph C.misgrid_graph, n C.int64_t, flags *C.misgrid_cint32, out *C.misgrid_result) C.misgrid_status {
	return guard(ctx, "misgrid_aggregate", func(c *context) error {
		if out == nil {
			return errorf(statusNull, "result (output) is NULL")
		}
		gobj, err := lookupGraph(graph)
		if err != nil {
			return err
		}
		g, _ := gobj.snapshot()
		in, err := readFlags(g, n, flags)
		if err != nil {
			return err
		}
		agg, err := mis.Aggregate(g, in)
		if err != nil {
			return err
		}
		size := 0
		for _, b := range in {
			if b {
				size++
			}
		}
		set := &mis.Result{In: in, Size: size, Backend: "caller"}
		return publishResult(out, &resultObj{levels: []level{{g: g, set: set, agg: agg}}})
	})
}

//export misgrid_verify
func misgrid_verify(ctx C.misgrid_context, graph C.misgrid_graph, n C.int64_t, flags *C.misgrid_cint32, distance C.int32_t,
	valid *C.int32_t, reason *C.char, size C.int64_t) C.misgrid_status {
	return guard(ctx, "misgrid_verify", func(c *context) error {
		if valid == nil {
			return errorf(statusNull, "valid (output) is NULL")
		}
		gobj, err := lookupGraph(graph)
		if err != nil {
			return err
		}
		g, _ := gobj.snapshot()
		if distance != 1 && distance != 2 {
			return errorf(statusArg, "distance = %d, want 1 or 2", int32(distance))
		}
		in, err := readFlags(g, n, flags)
		if err != nil {
			return err
		}
		why, ok := "", C.int32_t(1)
		if verr := mis.Verify(g, in, int(distance)); verr != nil {
			why, ok = verifyReason(verr, c.indexBase()), 0
		}
		if err := copyCString("reason", reason, size, why, nil); err != nil {
			return err
		}
		return store("valid", valid, ok)
	})
}

// verifyReason words a verification failure with vertex numbers in the
// caller's base.
func verifyReason(err error, base int) string {
	var ve *mis.VerifyError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	b := int64(base)
	if ve.Other >= 0 {
		return fmt.Sprintf("vertex %d: %s (vertex %d; vertices numbered from %d)", int64(ve.Vertex)+b, ve.Msg, int64(ve.Other)+b, b)
	}
	return fmt.Sprintf("vertex %d: %s (vertices numbered from %d)", int64(ve.Vertex)+b, ve.Msg, b)
}

//export misgrid_write_vtu
func misgrid_write_vtu(ctx C.misgrid_context, graph C.misgrid_graph, result C.misgrid_result, path *C.misgrid_cchar, options *C.misgrid_cchar) C.misgrid_status {
	return guard(ctx, "misgrid_write_vtu", func(c *context) error {
		gobj, err := lookupGraph(graph)
		if err != nil {
			return err
		}
		g, _ := gobj.snapshot()
		name, err := goString("path", path)
		if err != nil {
			return err
		}
		if name == "" {
			return errorf(statusArg, "path is empty")
		}
		if _, err := resolveC(c, opVTU, options); err != nil {
			return err
		}
		fields := []mesh.Field{mesh.ClassField("class", classesOf(g))}
		if result != 0 {
			r, err := lookupResult(result)
			if err != nil {
				return err
			}
			l := r.levels[0]
			if l.g.N() != g.N() {
				return errorf(statusArg, "result level 0 has %d vertices, the graph %d: they do not belong together", l.g.N(), g.N())
			}
			if l.set != nil {
				fields = append(fields, mesh.BoolField("in_set", l.set.In))
			}
			if l.agg != nil {
				fields = append(fields, mesh.Int32Field("aggregate", l.agg.Of))
			}
			if l.colors != nil {
				fields = append(fields, mesh.Int32Field("color", l.colors.Color))
			}
		}
		if g.Coords == nil {
			return errorf(statusArg, "the graph has no coordinates to place its vertices (misgrid_graph_set_coordinates)")
		}
		return writeFile(name, func(w io.Writer) error { return mesh.WriteVTU(w, g, fields...) })
	})
}

// writeFile writes path through f, atomically: on any failure the file
// that was there is left as it was. Every failure, the close included, is
// an I/O error naming the path.
func writeFile(path string, f func(w io.Writer) error) error {
	err := atomicfile.Write(path, f)
	if err == nil {
		return nil
	}
	var ae *apiError
	if errors.As(err, &ae) {
		return err
	}
	return errorf(statusIO, "writing %v", err)
}
