package main

/*
#include "misgrid.h"
#include "cgo_types.h"
*/
import "C"

import (
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"github.com/misgrid/misgrid/mesh"
)

// graphObj is what a misgrid_graph handle names. The *mesh.Graph it holds
// is never modified once published: setters publish a modified copy, so
// a graph can be shared read-only by any number of threads while one of
// them attaches data, and calls in flight keep the snapshot they started
// with.
type graphObj struct {
	mu   sync.Mutex
	g    *mesh.Graph
	prio []float64 // priority=user values, or nil
}

func (o *graphObj) snapshot() (*mesh.Graph, []float64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.g, o.prio
}

// update publishes a copy of the graph changed by f.
func (o *graphObj) update(f func(g *mesh.Graph)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	h := *o.g
	f(&h)
	o.g = &h
}

func lookupGraph(h C.misgrid_graph) (*graphObj, error) {
	obj, err := handles.lookup(uintptr(h), kindGraph, "graph")
	if err != nil {
		return nil, err
	}
	return obj.(*graphObj), nil
}

// publish stores a new graph handle in *out.
func publish(out *C.misgrid_graph, g *mesh.Graph, prio []float64) error {
	return publishHandle("graph", out, kindGraph, &graphObj{g: g, prio: prio})
}

// checkSquare checks the matrix dimensions of a graph source.
func checkSquare(nrows, ncols int64) error {
	if nrows < 0 || ncols < 0 {
		return errorf(statusRange, "matrix size %d×%d is negative", nrows, ncols)
	}
	if nrows != ncols {
		return errorf(statusArg, "matrix is %d×%d, but a graph needs a square matrix", nrows, ncols)
	}
	if nrows > maxVertices {
		return errorf(statusRange, "nrows = %d exceeds the %d rows misgrid supports", nrows, maxVertices)
	}
	return nil
}

func checkValueType(vtype C.int32_t, values unsafe.Pointer) error {
	switch vtype {
	case C.MISGRID_PATTERN:
		if values != nil {
			return errorf(statusArg, "value_type is MISGRID_PATTERN but values is not NULL (pass MISGRID_FLOAT64 or MISGRID_FLOAT32)")
		}
	case C.MISGRID_FLOAT64, C.MISGRID_FLOAT32:
	default:
		return errorf(statusArg, "value_type = %d, want MISGRID_PATTERN (%d), MISGRID_FLOAT64 (%d) or MISGRID_FLOAT32 (%d)",
			int32(vtype), C.MISGRID_PATTERN, C.MISGRID_FLOAT64, C.MISGRID_FLOAT32)
	}
	return nil
}

// matrixInput checks what misgrid_graph_from_csr and _from_coo share: the
// output slot, the options, the sizes, the index types (typeErr, the
// verdict of the caller's check) and the value type, and the memory.
func matrixInput(c *context, out *C.misgrid_graph, options *C.misgrid_cchar, nrows, ncols, nnz C.int64_t,
	vtype C.int32_t, values *C.misgrid_cvoid, typeErr error) (s settings, n, nz int64, err error) {
	if out == nil {
		return s, 0, 0, errorf(statusNull, "graph (output) is NULL")
	}
	if s, err = resolveC(c, opMatrix, options); err != nil {
		return s, 0, 0, err
	}
	n, nz = int64(nrows), int64(nnz)
	if err := checkSquare(n, int64(ncols)); err != nil {
		return s, 0, 0, err
	}
	if typeErr != nil {
		return s, 0, 0, typeErr
	}
	if err := checkLen("nnz", nz, 8); err != nil {
		return s, 0, 0, err
	}
	if err := checkValueType(vtype, unsafe.Pointer(values)); err != nil {
		return s, 0, 0, err
	}
	return s, n, nz, graphMemory(n, nz, vtype)
}

// graphMemory checks the memory a graph from an n-row matrix with nz
// entries needs: the copies of the caller's arrays, then the graph's
// offsets and its symmetrised adjacency.
func graphMemory(n, nz int64, vtype C.int32_t) error {
	vsize := map[C.int32_t]float64{C.MISGRID_FLOAT64: 8, C.MISGRID_FLOAT32: 4}[vtype]
	return needMemory(fmt.Sprintf("a graph of %d rows and %d entries", n, nz), float64(n+1)*16+float64(nz)*(16+vsize))
}

// withValues reads the caller's values in their C type (none for a
// pattern) and builds the graph with the builder for that type.
func withValues(vtype C.int32_t, values *C.misgrid_cvoid, nz int64,
	f32 func([]float32) (*mesh.Graph, error), f64 func([]float64) (*mesh.Graph, error)) (*mesh.Graph, error) {
	switch vtype {
	case C.MISGRID_FLOAT32:
		val, err := readValues[float32]("values", unsafe.Pointer(values), nz)
		if err != nil {
			return nil, err
		}
		return f32(val)
	case C.MISGRID_FLOAT64:
		val, err := readValues[float64]("values", unsafe.Pointer(values), nz)
		if err != nil {
			return nil, err
		}
		return f64(val)
	}
	return f64(nil)
}

//export misgrid_graph_from_csr
func misgrid_graph_from_csr(ctx C.misgrid_context, nrows, ncols, nnz C.int64_t, itype, base C.int32_t,
	rowptr, colind *C.misgrid_cvoid, vtype C.int32_t, values *C.misgrid_cvoid, options *C.misgrid_cchar, out *C.misgrid_graph) C.misgrid_status {
	return guard(ctx, "misgrid_graph_from_csr", func(c *context) error {
		rowT, colT, terr := csrIndexTypes(itype, base)
		s, n, nz, err := matrixInput(c, out, options, nrows, ncols, nnz, vtype, values, terr)
		if err != nil {
			return err
		}
		off, err := readOffsets("rowptr", unsafe.Pointer(rowptr), rowT, base, n, nz)
		if err != nil {
			return err
		}
		if off[n] != nz {
			return errorf(statusArg, "rowptr[%d] - base = %d, but nnz = %d", n, off[n], nz)
		}
		col, err := readIDs("colind", unsafe.Pointer(colind), colT, base, nz, n)
		if err != nil {
			return err
		}
		g, err := withValues(vtype, values, nz,
			func(val []float32) (*mesh.Graph, error) {
				return graphFromCSR(&mesh.CSR[float32]{Rows: int(n), Cols: int(n), RowPtr: off, Col: col, Val: val}, s)
			},
			func(val []float64) (*mesh.Graph, error) {
				return graphFromCSR(&mesh.CSR[float64]{Rows: int(n), Cols: int(n), RowPtr: off, Col: col, Val: val}, s)
			})
		if err != nil {
			return err
		}
		return publish(out, g, nil)
	})
}

//export misgrid_graph_from_coo
func misgrid_graph_from_coo(ctx C.misgrid_context, nrows, ncols, nnz C.int64_t, itype, base C.int32_t,
	rows, cols *C.misgrid_cvoid, vtype C.int32_t, values *C.misgrid_cvoid, options *C.misgrid_cchar, out *C.misgrid_graph) C.misgrid_status {
	return guard(ctx, "misgrid_graph_from_coo", func(c *context) error {
		s, n, nz, err := matrixInput(c, out, options, nrows, ncols, nnz, vtype, values, checkIndexType(itype, base))
		if err != nil {
			return err
		}
		ri, err := readIDs("rows", unsafe.Pointer(rows), itype, base, nz, n)
		if err != nil {
			return err
		}
		ci, err := readIDs("cols", unsafe.Pointer(cols), itype, base, nz, n)
		if err != nil {
			return err
		}
		g, err := withValues(vtype, values, nz,
			func(val []float32) (*mesh.Graph, error) {
				return graphFromCOO(&mesh.COO[float32]{Rows: int(n), Cols: int(n), Row: ri, Col: ci, Val: val}, s)
			},
			func(val []float64) (*mesh.Graph, error) {
				return graphFromCOO(&mesh.COO[float64]{Rows: int(n), Cols: int(n), Row: ri, Col: ci, Val: val}, s)
			})
		if err != nil {
			return err
		}
		return publish(out, g, nil)
	})
}

// elementTypes maps the C constants to mesh element types.
var elementTypes = map[C.int32_t]mesh.ElementType{
	C.MISGRID_LINE2: mesh.Line2, C.MISGRID_TRI3: mesh.Tri3, C.MISGRID_QUAD4: mesh.Quad4,
	C.MISGRID_TET4: mesh.Tet4, C.MISGRID_HEX8: mesh.Hex8, C.MISGRID_TRI6: mesh.Tri6,
	C.MISGRID_QUAD9: mesh.Quad9, C.MISGRID_TET10: mesh.Tet10, C.MISGRID_HEX27: mesh.Hex27,
	C.MISGRID_POINT1: mesh.Point1, C.MISGRID_LINE3: mesh.Line3, C.MISGRID_PRISM6: mesh.Prism6,
	C.MISGRID_PYRAMID5: mesh.Pyramid5,
}

//export misgrid_graph_from_elements
func misgrid_graph_from_elements(ctx C.misgrid_context, nnodes C.int64_t, etype, npe C.int32_t, nelem C.int64_t,
	itype, base C.int32_t, conn *C.misgrid_cvoid, dim C.int32_t, coords *C.misgrid_cdouble, options *C.misgrid_cchar, out *C.misgrid_graph) C.misgrid_status {
	return guard(ctx, "misgrid_graph_from_elements", func(c *context) error {
		if out == nil {
			return errorf(statusNull, "graph (output) is NULL")
		}
		s, err := resolveC(c, opElements, options)
		if err != nil {
			return err
		}
		t, err := checkElements(int64(nnodes), etype, npe, int64(nelem), itype, base, dim, coords)
		if err != nil {
			return err
		}
		n, k := int64(nnodes), int64(nelem)*int64(npe)
		ids, err := readIDs("conn", unsafe.Pointer(conn), itype, base, k, n)
		if err != nil {
			return err
		}
		var g *mesh.Graph
		if dim == 0 {
			g, err = elementGraphNoCoords(n, t, ids, s)
		} else {
			g, err = elementGraph(n, t, ids, int(dim), coords, s)
		}
		if err != nil {
			return err
		}
		return publish(out, g, nil)
	})
}

// checkElements checks the sizes and types of misgrid_graph_from_elements
// and the memory they imply.
func checkElements(n int64, etype, npe C.int32_t, ne int64, itype, base, dim C.int32_t, coords *C.misgrid_cdouble) (mesh.ElementType, error) {
	if n < 0 || n > maxVertices {
		return 0, errorf(statusRange, "nnodes = %d is out of range [0, %d]", n, maxVertices)
	}
	t, ok := elementTypes[etype]
	if !ok {
		return 0, errorf(statusArg, "element_type = %d is not a MISGRID_ element type constant", int32(etype))
	}
	if int(npe) != t.Nodes() {
		return 0, errorf(statusArg, "nodes_per_element = %d, but %v elements have %d nodes", int32(npe), t, t.Nodes())
	}
	if err := checkIndexType(itype, base); err != nil {
		return 0, err
	}
	if err := checkLen("nelements", ne, int64(npe)*8); err != nil {
		return 0, err
	}
	if dim < 0 || dim > 3 {
		return 0, errorf(statusArg, "dim = %d, want 0 (no coordinates), 1, 2 or 3", int32(dim))
	}
	if (dim == 0) != (coords == nil) {
		return 0, errorf(statusArg, "dim = %d with coords %s: pass both or neither", int32(dim), map[bool]string{true: "NULL", false: "given"}[coords == nil])
	}
	if dim > 0 && int(dim) < t.Dim() {
		return 0, errorf(statusArg, "%v elements are %d-dimensional but the coordinates have dim = %d", t, t.Dim(), int32(dim))
	}
	// The connectivity twice (the copy and the node-to-element lists),
	// the offsets twice (those lists' and the graph's), the coordinates
	// twice (the copy and the graph's); the adjacency comes on top.
	k := float64(ne) * float64(npe)
	return t, needMemory(fmt.Sprintf("a graph of %d nodes and %d %v elements", n, ne, t),
		8*k+16*float64(n+1)+16*float64(dim)*float64(n))
}

// elementGraph builds the node graph of elements with coordinates, and
// the boundary classes from the geometry.
func elementGraph(n int64, t mesh.ElementType, ids []int32, dim int, coords *C.misgrid_cdouble, s settings) (*mesh.Graph, error) {
	x, err := readFloat64s("coords", coords, int64(dim)*n, false)
	if err != nil {
		return nil, err
	}
	m := &mesh.Mesh{Dim: dim, Coords: x, Blocks: []mesh.ElementBlock{{Type: t, Conn: ids}}}
	g, err := mesh.FromElements(m, s.elements)
	if err != nil {
		return nil, err
	}
	if g.Class, err = mesh.Classify(m, s.classify); err != nil {
		return nil, err
	}
	return g, nil
}

// elementGraphNoCoords builds the node graph of elements without
// coordinates. The mesh package counts nodes by their coordinates, so the
// graph is built on the nodes the elements use, numbered in increasing
// order with zero coordinates, and then spread over all n nodes (the
// others isolated): nothing is allocated in proportion to dim*n.
func elementGraphNoCoords(n int64, t mesh.ElementType, ids []int32, s settings) (*mesh.Graph, error) {
	used := slices.Clone(ids)
	slices.Sort(used)
	used = slices.Compact(used)
	local := make([]int32, len(ids))
	for i, v := range ids {
		j, _ := slices.BinarySearch(used, v)
		local[i] = int32(j)
	}
	d := max(t.Dim(), 1)
	m := &mesh.Mesh{Dim: d, Coords: make([]float64, d*len(used)), Blocks: []mesh.ElementBlock{{Type: t, Conn: local}}}
	h, err := mesh.FromElements(m, s.elements)
	if err != nil {
		return nil, err
	}
	g := &mesh.Graph{Offsets: make([]int64, n+1), Adj: h.Adj}
	for i, v := range used {
		g.Offsets[v+1] = h.Offsets[i+1] - h.Offsets[i]
	}
	for v := range n {
		g.Offsets[v+1] += g.Offsets[v]
	}
	for i, u := range g.Adj {
		g.Adj[i] = used[u]
	}
	return g, nil
}

//export misgrid_graph_destroy
func misgrid_graph_destroy(ctx C.misgrid_context, graph C.misgrid_graph) C.misgrid_status {
	return guard(ctx, "misgrid_graph_destroy", func(*context) error {
		_, err := handles.remove(uintptr(graph), kindGraph, "graph")
		return err
	})
}

//export misgrid_graph_size
func misgrid_graph_size(ctx C.misgrid_context, graph C.misgrid_graph, nv, ne *C.int64_t) C.misgrid_status {
	return guard(ctx, "misgrid_graph_size", func(*context) error {
		o, err := lookupGraph(graph)
		if err != nil {
			return err
		}
		g, _ := o.snapshot()
		if err := store("nvertices", nv, C.int64_t(g.N())); err != nil {
			return err
		}
		return store("nedges", ne, C.int64_t(g.NumEdges()/2))
	})
}

//export misgrid_graph_adjacency
func misgrid_graph_adjacency(ctx C.misgrid_context, graph C.misgrid_graph, itype, base C.int32_t,
	offsets unsafe.Pointer, noff C.int64_t, adj unsafe.Pointer, nadj C.int64_t) C.misgrid_status {
	return guard(ctx, "misgrid_graph_adjacency", func(*context) error {
		o, err := lookupGraph(graph)
		if err != nil {
			return err
		}
		g, _ := o.snapshot()
		rowT, colT, err := csrIndexTypes(itype, base)
		if err != nil {
			return err
		}
		if err := outArray("offsets", offsets, int64(noff), int64(g.N()+1)); err != nil {
			return err
		}
		if err := outArray("adj", adj, int64(nadj), g.NumEdges()); err != nil {
			return err
		}
		if rowT == C.MISGRID_INT32 && g.NumEdges()+int64(base) > maxVertices {
			return errorf(statusRange, "the graph has %d adjacency entries: offsets do not fit int32 (use MISGRID_INT64 or MISGRID_INT64_INT32)", g.NumEdges())
		}
		if err := writeOffsets("offsets", offsets, rowT, base, g.Offsets); err != nil {
			return err
		}
		return writeIDs("adj", adj, colT, base, g.Adj)
	})
}

func writeOffsets(name string, p unsafe.Pointer, itype, base C.int32_t, off []int64) error {
	n := int64(len(off))
	return withWriteFaults(name, p, n, indexSize(itype), func() {
		b := int64(base)
		if itype == C.MISGRID_INT64 {
			dst := unsafe.Slice((*int64)(p), n)
			for i, x := range off {
				dst[i] = x + b
			}
			return
		}
		dst := unsafe.Slice((*int32)(p), n)
		for i, x := range off {
			dst[i] = int32(x + b)
		}
	})
}

// vertexCount checks that an input array has one entry per vertex.
func vertexCount(name string, n int64, g *mesh.Graph) error {
	if n != int64(g.N()) {
		return errorf(statusRange, "%s has %d entries, but the graph has %d vertices", name, n, g.N())
	}
	return nil
}

//export misgrid_graph_set_coordinates
func misgrid_graph_set_coordinates(ctx C.misgrid_context, graph C.misgrid_graph, dim C.int32_t, n C.int64_t, coords *C.misgrid_cdouble) C.misgrid_status {
	return guard(ctx, "misgrid_graph_set_coordinates", func(*context) error {
		o, err := lookupGraph(graph)
		if err != nil {
			return err
		}
		g, _ := o.snapshot()
		if dim < 1 || dim > 3 {
			return errorf(statusArg, "dim = %d, want 1, 2 or 3", int32(dim))
		}
		if err := vertexCount("coords (n)", int64(n), g); err != nil {
			return err
		}
		x, err := readFloat64s("coords", coords, int64(dim)*int64(n), false)
		if err != nil {
			return err
		}
		o.update(func(h *mesh.Graph) { h.Dim, h.Coords = int(dim), x })
		return nil
	})
}

//export misgrid_graph_set_classes
func misgrid_graph_set_classes(ctx C.misgrid_context, graph C.misgrid_graph, n C.int64_t, classes *C.misgrid_cint32) C.misgrid_status {
	return guard(ctx, "misgrid_graph_set_classes", func(*context) error {
		o, err := lookupGraph(graph)
		if err != nil {
			return err
		}
		g, _ := o.snapshot()
		if err := vertexCount("classes", int64(n), g); err != nil {
			return err
		}
		raw, err := readInt32s("classes", classes, int64(n))
		if err != nil {
			return err
		}
		cls := make([]mesh.Class, len(raw))
		for v, x := range raw {
			if x < C.MISGRID_INTERIOR || x > C.MISGRID_CORNER {
				return errorf(statusRange, "classes[%d] = %d, want MISGRID_INTERIOR (0) .. MISGRID_CORNER (3)", v, x)
			}
			cls[v] = mesh.Class(x)
		}
		o.update(func(h *mesh.Graph) { h.Class = cls })
		return nil
	})
}

// classesOf returns the classes priority=boundary uses for g.
func classesOf(g *mesh.Graph) []mesh.Class {
	if g.Class != nil {
		return g.Class
	}
	return mesh.ClassifyByDegree(g)
}

//export misgrid_graph_get_classes
func misgrid_graph_get_classes(ctx C.misgrid_context, graph C.misgrid_graph, n C.int64_t, classes *C.int32_t) C.misgrid_status {
	return guard(ctx, "misgrid_graph_get_classes", func(*context) error {
		o, err := lookupGraph(graph)
		if err != nil {
			return err
		}
		g, _ := o.snapshot()
		if err := outArray("classes", unsafe.Pointer(classes), int64(n), int64(g.N())); err != nil {
			return err
		}
		cls := classesOf(g)
		out := make([]int32, len(cls))
		for i, c := range cls {
			out[i] = int32(c)
		}
		return writeInt32s("classes", classes, out)
	})
}

//export misgrid_graph_set_priority
func misgrid_graph_set_priority(ctx C.misgrid_context, graph C.misgrid_graph, n C.int64_t, values *C.misgrid_cdouble) C.misgrid_status {
	return guard(ctx, "misgrid_graph_set_priority", func(*context) error {
		o, err := lookupGraph(graph)
		if err != nil {
			return err
		}
		g, _ := o.snapshot()
		if err := vertexCount("values", int64(n), g); err != nil {
			return err
		}
		x, err := readFloat64s("values", values, int64(n), true)
		if err != nil {
			return err
		}
		o.mu.Lock()
		o.prio = x
		o.mu.Unlock()
		return nil
	})
}

//export misgrid_graph_get_dirichlet
func misgrid_graph_get_dirichlet(ctx C.misgrid_context, graph C.misgrid_graph, n C.int64_t, flags *C.int32_t) C.misgrid_status {
	return guard(ctx, "misgrid_graph_get_dirichlet", func(*context) error {
		o, err := lookupGraph(graph)
		if err != nil {
			return err
		}
		g, _ := o.snapshot()
		if err := outArray("flags", unsafe.Pointer(flags), int64(n), int64(g.N())); err != nil {
			return err
		}
		out := make([]int32, g.N())
		for v, d := range g.Dirichlet {
			if d {
				out[v] = 1
			}
		}
		return writeInt32s("flags", flags, out)
	})
}
