package mesh

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// Field is per-vertex (per-node) data to write beside a graph or mesh,
// such as an MIS membership or an aggregate id.
type Field struct {
	Name string
	Data []float64 // one value per vertex
}

// BoolField converts flags to a field of zeros and ones.
func BoolField(name string, b []bool) Field {
	f := Field{Name: name, Data: make([]float64, len(b))}
	for i, x := range b {
		if x {
			f.Data[i] = 1
		}
	}
	return f
}

// Int32Field converts integer data, such as aggregate ids, to a field.
func Int32Field(name string, v []int32) Field {
	f := Field{Name: name, Data: make([]float64, len(v))}
	for i, x := range v {
		f.Data[i] = float64(x)
	}
	return f
}

// ClassField converts boundary classes to a field of their numeric values
// (0 interior, 1 face, 2 edge, 3 corner).
func ClassField(name string, c []Class) Field {
	f := Field{Name: name, Data: make([]float64, len(c))}
	for i, x := range c {
		f.Data[i] = float64(x)
	}
	return f
}

// VTK cell type numbers.
const (
	vtkVertex         = 1
	vtkLine           = 3
	vtkTriangle       = 5
	vtkQuad           = 9
	vtkTetra          = 10
	vtkHexahedron     = 12
	vtkWedge          = 13
	vtkPyramid        = 14
	vtkQuadraticEdge  = 21
	vtkQuadraticTri   = 22
	vtkQuadraticTetra = 24
	vtkBiquadQuad     = 28
	vtkTriquadHex     = 29
)

// vtkCells gives each element type's VTK cell type and, where VTK orders
// the nodes differently from Gmsh, the Gmsh index of each VTK node.
// Corner nodes agree everywhere, and so do the mid-edge nodes of line3,
// tri6 and quad9. Tet10 swaps the nodes on edges 2–3 and 1–3. Hex27
// differs most: Gmsh lists edges by corner pairs (0–1, 0–3, 0–4, 1–2, ...)
// and faces as z−, y−, x−, x+, y+, z+, where VTK lists the bottom edges,
// the top ones, then the verticals, and faces x−, x+, y−, y+, z−, z+.
var vtkCells = map[ElementType]struct {
	typ  uint8
	perm []int
}{
	Point1:   {vtkVertex, nil},
	Line2:    {vtkLine, nil},
	Line3:    {vtkQuadraticEdge, nil},
	Tri3:     {vtkTriangle, nil},
	Quad4:    {vtkQuad, nil},
	Tet4:     {vtkTetra, nil},
	Hex8:     {vtkHexahedron, nil},
	Prism6:   {vtkWedge, nil},
	Pyramid5: {vtkPyramid, nil},
	Tri6:     {vtkQuadraticTri, nil},
	Quad9:    {vtkBiquadQuad, nil},
	Tet10:    {vtkQuadraticTetra, []int{0, 1, 2, 3, 4, 5, 6, 7, 9, 8}},
	Hex27: {vtkTriquadHex, []int{0, 1, 2, 3, 4, 5, 6, 7,
		8, 11, 13, 9, 16, 18, 19, 17, 10, 12, 14, 15,
		22, 23, 21, 24, 20, 25, 26}},
}

// WriteVTU writes g as a VTK unstructured grid (.vtu), which ParaView and
// VisIt read: the vertices are points at g's coordinates (padded with
// zeros to 3D), every vertex is a VTK_VERTEX cell (cell id = vertex id,
// so isolated vertices show and a threshold on a field keeps its points),
// and every undirected edge is a VTK_LINE cell after them. Fields are
// written as point data. Arrays are base64-encoded binary, which is
// exact and about half the size of text.
//
// A graph without coordinates (one built from a bare matrix) cannot be
// drawn, and WriteVTU refuses it rather than invent positions.
func WriteVTU(w io.Writer, g *Graph, fields ...Field) error {
	if w == nil {
		return errNilIO("WriteVTU", "writer")
	}
	if err := g.ValidateStructure(); err != nil {
		return fmt.Errorf("mesh: WriteVTU: %w", err)
	}
	if g.Coords == nil {
		return errors.New("mesh: WriteVTU: graph has no coordinates to place its vertices")
	}
	n := g.N()
	if err := checkFields(fields, n); err != nil {
		return fmt.Errorf("mesh: WriteVTU: %w", err)
	}
	lines := int64(0)
	for v := 0; v < n; v++ {
		for _, u := range g.Neighbors(int32(v)) {
			if int(u) > v {
				lines++
			}
		}
	}
	p := vtuPiece{
		points: n, cells: int64(n) + lines, fields: fields,
		dim: g.Dim, coords: g.Coords,
		conn: func(c *leWriter) {
			for v := 0; v < n; v++ {
				c.i32(int32(v))
			}
			for v := 0; v < n; v++ {
				for _, u := range g.Neighbors(int32(v)) {
					if int(u) > v {
						c.i32(int32(v))
						c.i32(u)
					}
				}
			}
		},
		offsets: func(c *leWriter) {
			for k := int64(1); k <= int64(n); k++ {
				c.i64(k)
			}
			for k := int64(1); k <= lines; k++ {
				c.i64(int64(n) + 2*k)
			}
		},
		types: func(c *leWriter) {
			for v := 0; v < n; v++ {
				c.u8(vtkVertex)
			}
			for k := int64(0); k < lines; k++ {
				c.u8(vtkLine)
			}
		},
	}
	p.nconn = int64(n) + 2*lines
	return p.write(w)
}

// WriteMeshVTU writes the elements of m as a VTK unstructured grid, one
// cell per element of every block, with the nodes reordered from Gmsh's
// convention (which Mesh uses) to VTK's. Fields are point data, one value
// per node; the physical group of each element is written as the cell
// data array "group".
func WriteMeshVTU(w io.Writer, m *Mesh, fields ...Field) error {
	if w == nil {
		return errNilIO("WriteMeshVTU", "writer")
	}
	if err := checkMesh(m); err != nil {
		return fmt.Errorf("mesh: WriteMeshVTU: %w", err)
	}
	n := m.NumNodes()
	if err := checkFields(fields, n); err != nil {
		return fmt.Errorf("mesh: WriteMeshVTU: %w", err)
	}
	var cells, nconn int64
	for _, b := range m.Blocks {
		cells += int64(b.Len())
		nconn += int64(len(b.Conn))
	}
	p := vtuPiece{
		points: n, cells: cells, nconn: nconn, fields: fields,
		dim: m.Dim, coords: m.Coords,
		conn: func(c *leWriter) {
			for _, b := range m.Blocks {
				k, perm := b.Type.Nodes(), vtkCells[b.Type].perm
				for e := 0; e < b.Len(); e++ {
					el := b.Conn[e*k : e*k+k]
					for i := range el {
						if perm != nil {
							c.i32(el[perm[i]])
						} else {
							c.i32(el[i])
						}
					}
				}
			}
		},
		offsets: func(c *leWriter) {
			off := int64(0)
			for _, b := range m.Blocks {
				for e := 0; e < b.Len(); e++ {
					off += int64(b.Type.Nodes())
					c.i64(off)
				}
			}
		},
		types: func(c *leWriter) {
			for _, b := range m.Blocks {
				t := vtkCells[b.Type].typ
				for e := 0; e < b.Len(); e++ {
					c.u8(t)
				}
			}
		},
		group: func(c *leWriter) {
			for _, b := range m.Blocks {
				for e := 0; e < b.Len(); e++ {
					c.i32(int32(b.Group))
				}
			}
		},
	}
	return p.write(w)
}

// checkMesh checks what indexing a Mesh needs: a dimension, coordinates
// that fill whole nodes, known element types, whole elements and node ids
// in range.
func checkMesh(m *Mesh) error {
	if m == nil {
		return errors.New("nil mesh")
	}
	if m.Dim < 1 || m.Dim > 3 {
		return fmt.Errorf("Dim = %d, want 1, 2 or 3", m.Dim)
	}
	if len(m.Coords)%m.Dim != 0 {
		return fmt.Errorf("len(Coords) = %d is not a multiple of Dim = %d", len(m.Coords), m.Dim)
	}
	n := m.NumNodes()
	if n > math.MaxInt32 {
		return fmt.Errorf("%d nodes exceed the int32 id range", n)
	}
	for i, b := range m.Blocks {
		k := b.Type.Nodes()
		if k == 0 {
			return fmt.Errorf("block %d: unknown element type %v", i, b.Type)
		}
		if len(b.Conn)%k != 0 {
			return fmt.Errorf("block %d: len(Conn) = %d is not a multiple of %d nodes per %v", i, len(b.Conn), k, b.Type)
		}
		for j, v := range b.Conn {
			if v < 0 || int(v) >= n {
				return fmt.Errorf("block %d: element %d node %d is %d, out of range [0,%d)", i, j/k, j%k, v, n)
			}
		}
	}
	return nil
}

func checkFields(fields []Field, n int) error {
	seen := map[string]bool{}
	for i, f := range fields {
		switch {
		case f.Name == "":
			return fmt.Errorf("field %d has no name", i)
		case seen[f.Name]:
			return fmt.Errorf("field name %q used twice", f.Name)
		case len(f.Data) != n:
			return fmt.Errorf("field %q has %d values, want one per vertex (%d)", f.Name, len(f.Data), n)
		}
		seen[f.Name] = true
	}
	return nil
}

// vtuPiece is one unstructured grid, its arrays produced on the fly so
// that writing needs no copy of the graph.
type vtuPiece struct {
	points       int
	cells, nconn int64
	dim          int
	coords       []float64
	fields       []Field
	conn         func(*leWriter) // nconn Int32
	offsets      func(*leWriter) // cells Int64
	types        func(*leWriter) // cells UInt8
	group        func(*leWriter) // cells Int32, or nil
}

func (p *vtuPiece) write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	fmt.Fprintf(bw, `<?xml version="1.0"?>
<VTKFile type="UnstructuredGrid" version="1.0" byte_order="LittleEndian" header_type="UInt64">
<UnstructuredGrid>
<Piece NumberOfPoints="%d" NumberOfCells="%d">
`, p.points, p.cells)
	if len(p.fields) > 0 {
		bw.WriteString("<PointData>\n")
		for _, f := range p.fields {
			data := f.Data
			dataArray(bw, "Float64", attr("Name", f.Name), 8*int64(len(data)), func(c *leWriter) {
				for _, x := range data {
					c.f64(x)
				}
			})
		}
		bw.WriteString("</PointData>\n")
	}
	if p.group != nil {
		bw.WriteString("<CellData>\n")
		dataArray(bw, "Int32", attr("Name", "group"), 4*p.cells, p.group)
		bw.WriteString("</CellData>\n")
	}
	bw.WriteString("<Points>\n")
	dataArray(bw, "Float64", `NumberOfComponents="3"`, 24*int64(p.points), func(c *leWriter) {
		for v := 0; v < p.points; v++ {
			x := p.coords[v*p.dim : v*p.dim+p.dim]
			for d := 0; d < 3; d++ {
				if d < p.dim {
					c.f64(x[d])
				} else {
					c.f64(0)
				}
			}
		}
	})
	bw.WriteString("</Points>\n<Cells>\n")
	dataArray(bw, "Int32", `Name="connectivity"`, 4*p.nconn, p.conn)
	dataArray(bw, "Int64", `Name="offsets"`, 8*p.cells, p.offsets)
	dataArray(bw, "UInt8", `Name="types"`, p.cells, p.types)
	bw.WriteString("</Cells>\n</Piece>\n</UnstructuredGrid>\n</VTKFile>\n")
	return bw.Flush()
}

func attr(name, value string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(value))
	return name + `="` + b.String() + `"`
}

// dataArray writes one inline binary DataArray: base64 of a UInt64 byte
// count followed by the little-endian values, in one base64 stream.
// Errors stay in bw (bufio.Writer keeps the first) for the final Flush.
func dataArray(bw *bufio.Writer, typ, attrs string, nbytes int64, gen func(*leWriter)) {
	fmt.Fprintf(bw, `<DataArray type="%s" %s format="binary">`, typ, attrs)
	enc := base64.NewEncoder(base64.StdEncoding, bw)
	c := &leWriter{w: enc, buf: make([]byte, 0, 64<<10)}
	c.buf = binary.LittleEndian.AppendUint64(c.buf, uint64(nbytes))
	gen(c)
	c.flush()
	enc.Close()
	bw.WriteString("</DataArray>\n")
}

// leWriter buffers little-endian values for a writer.
type leWriter struct {
	w   io.Writer
	buf []byte
}

func (c *leWriter) flush() {
	c.w.Write(c.buf)
	c.buf = c.buf[:0]
}

func (c *leWriter) room(n int) {
	if len(c.buf)+n > cap(c.buf) {
		c.flush()
	}
}

func (c *leWriter) f64(x float64) {
	c.room(8)
	c.buf = binary.LittleEndian.AppendUint64(c.buf, math.Float64bits(x))
}

func (c *leWriter) i64(x int64) {
	c.room(8)
	c.buf = binary.LittleEndian.AppendUint64(c.buf, uint64(x))
}

func (c *leWriter) i32(x int32) {
	c.room(4)
	c.buf = binary.LittleEndian.AppendUint32(c.buf, uint32(x))
}

func (c *leWriter) u8(x uint8) {
	c.room(1)
	c.buf = append(c.buf, x)
}
