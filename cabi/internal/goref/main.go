// Command goref writes test cases for the C ABI: inputs (matrices and
// meshes in the forms C passes them) together with what the Go API
// returns for them. cabi/tests/test_goref.c reads the file, makes the
// same calls through libmisgrid and requires identical sets, aggregates,
// colorings and hierarchies: the ABI adds no behaviour of its own.
//
// The inputs are stored in the file, not regenerated in C, so both sides
// see the same bytes. The Go side calls mesh and mis directly with option
// structs, never the ABI's option parser, so the option mapping is under
// test too.
//
// Format: whitespace-separated tokens. Every option string is one token
// with commas, "-" when empty.
//
//	case NAME
//	csr N NNZ ITYPE BASE VTYPE GRAPHOPTS   then rowptr, colind, values
//	elements NNODES ETYPE NPE NELEM ITYPE BASE DIM GRAPHOPTS   then conn, coords
//	priority N v...                        (optional: user priority values)
//	mis OPTS N flags... NAGG agg...        (NAGG 0: no aggregates)
//	color OPTS N NCOLORS colors...
//	hierarchy OPTS L  (nvertices setsize naggregates) × L
//	solver OPTS N b... ITS residuals...   (AMG-PCG from x = 0 on the matrix)
//	end
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/misgrid/misgrid/amg"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// Constants of include/misgrid.h.
const (
	int32Index = 1
	int64Index = 2
	pattern    = 0
	float64Val = 1
	float32Val = 2
	elemTri3   = 2
	elemQuad4  = 3
	elemTet4   = 4
)

type writer struct {
	w   *bufio.Writer
	err error
}

func (w *writer) printf(format string, args ...any) {
	if w.err == nil {
		_, w.err = fmt.Fprintf(w.w, format, args...)
	}
}

func (w *writer) ints(xs []int64) {
	for i, x := range xs {
		if i%20 == 0 {
			w.printf("\n")
		}
		w.printf(" %d", x)
	}
	w.printf("\n")
}

func (w *writer) floats(xs []float64, format string) {
	for i, x := range xs {
		if i%8 == 0 {
			w.printf("\n")
		}
		w.printf(" "+format, x)
	}
	w.printf("\n")
}

func opts(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// op is one operation to run through both the Go API and the ABI.
type op struct {
	kind string // "mis", "color", "hierarchy"
	abi  string // the ABI option string
	dist int
	prio mis.Priority
	// hierarchy only
	minV, maxL int
	// solver only: the matrix, and the amg options as key=value
	a   *mesh.CSR[float64]
	amg []string
}

func (w *writer) ops(g *mesh.Graph, prio []float64, list []op) {
	if prio != nil {
		w.printf("priority %d", len(prio))
		w.floats(prio, "%.17g")
	}
	for _, o := range list {
		p := o.prio
		if p.Kind == mis.User {
			p.Values = prio
		}
		switch o.kind {
		case "mis":
			res, err := mis.Compute(g, mis.Options{Distance: o.dist, Priority: p})
			check(err)
			w.printf("mis %s %d", opts(o.abi), g.N())
			w.ints(flags(res.In))
			if o.dist == 2 {
				agg, err := mis.Aggregate(g, res.In)
				check(err)
				w.printf("%d", agg.N)
				w.ints(widen(agg.Of))
			} else {
				w.printf("0\n")
			}
		case "color":
			col, err := mis.Color(g, mis.Options{Distance: o.dist, Priority: p})
			check(err)
			w.printf("color %s %d %d", opts(o.abi), g.N(), col.NumColors)
			w.ints(widen(col.Color))
		case "hierarchy":
			lv, err := mis.Hierarchy(g, mis.HierarchyOptions{Distance: o.dist, Priority: p, MinVertices: o.minV, MaxLevels: o.maxL})
			check(err)
			w.printf("hierarchy %s %d\n", opts(o.abi), len(lv))
			for _, l := range lv {
				na := 0
				if l.Agg != nil {
					na = l.Agg.N
				}
				w.printf(" %d %d %d\n", l.Graph.N(), l.Set.Size, na)
			}
		case "solver":
			aopts, err := amg.ParseOptions(o.amg)
			check(err)
			pc, err := amg.New(o.a, aopts)
			check(err)
			n := o.a.Rows
			b, x := make([]float64, n), make([]float64, n)
			for i := range b {
				b[i] = math.Sin(0.3*float64(i)) + 0.5
			}
			res, err := pc.Solve(b, x)
			check(err)
			if !res.Converged {
				log.Fatalf("goref: solver case did not converge in %d iterations", res.Iterations)
			}
			w.printf("solver %s %d", opts(o.abi), n)
			w.floats(b, "%.17g")
			w.printf("%d", res.Iterations)
			w.floats(res.Residuals, "%.17g")
		}
	}
	w.printf("end\n")
}

func flags(in []bool) []int64 {
	out := make([]int64, len(in))
	for i, b := range in {
		if b {
			out[i] = 1
		}
	}
	return out
}

func widen(xs []int32) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return out
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// q1Laplacian assembles the Q1 stiffness matrix of the Laplacian on a
// structured quad mesh, with the rows of the nodes on x = 0 replaced by
// identity rows (their columns kept, as many FE codes do).
func q1Laplacian(m *mesh.Mesh) *mesh.CSR[float64] {
	n := m.NumNodes()
	ke := [4][4]float64{{4, -1, -2, -1}, {-1, 4, -1, -2}, {-2, -1, 4, -1}, {-1, -2, -1, 4}}
	rows := make([]map[int32]float64, n)
	for i := range rows {
		rows[i] = map[int32]float64{}
	}
	conn := m.Blocks[0].Conn
	for e := 0; e < len(conn)/4; e++ {
		for a := 0; a < 4; a++ {
			for b := 0; b < 4; b++ {
				rows[conn[4*e+a]][conn[4*e+b]] += ke[a][b] / 6
			}
		}
	}
	a := &mesh.CSR[float64]{Rows: n, Cols: n, RowPtr: make([]int64, n+1)}
	for i := 0; i < n; i++ {
		dirichlet := m.Coords[2*i] == 0
		for j := int32(0); int(j) < n; j++ {
			v, ok := rows[i][j]
			if !ok {
				continue
			}
			if dirichlet {
				v = 0
				if int(j) == i {
					v = 1
				}
			}
			a.Col = append(a.Col, j)
			a.Val = append(a.Val, v)
		}
		a.RowPtr[i+1] = int64(len(a.Col))
	}
	return a
}

// writeCSR writes a CSR matrix in the given index type and base, with its
// values as float64, float32 or none.
func (w *writer) writeCSR(a *mesh.CSR[float64], itype, base, vtype int, gopts string) {
	w.printf("csr %d %d %d %d %d %s\n", a.Rows, len(a.Col), itype, base, vtype, opts(gopts))
	rp := make([]int64, len(a.RowPtr))
	for i, x := range a.RowPtr {
		rp[i] = x + int64(base)
	}
	w.printf("rowptr")
	w.ints(rp)
	ci := widen(a.Col)
	for i := range ci {
		ci[i] += int64(base)
	}
	w.printf("colind")
	w.ints(ci)
	switch vtype {
	case float64Val:
		w.printf("values")
		w.floats(a.Val, "%.17g")
	case float32Val:
		// Nine digits round-trip a float32 exactly.
		v := make([]float64, len(a.Val))
		for i, x := range a.Val {
			v[i] = float64(float32(x))
		}
		w.printf("values")
		w.floats(v, "%.9g")
	}
}

func f32(a *mesh.CSR[float64]) *mesh.CSR[float32] {
	v := make([]float32, len(a.Val))
	for i, x := range a.Val {
		v[i] = float32(x)
	}
	return &mesh.CSR[float32]{Rows: a.Rows, Cols: a.Cols, RowPtr: a.RowPtr, Col: a.Col, Val: v}
}

// anisotropic is the 5-point operator -u_xx - eps u_yy on an nx×ny grid.
func anisotropic(nx, ny int, eps float64) *mesh.CSR[float64] {
	n := nx * ny
	a := &mesh.CSR[float64]{Rows: n, Cols: n, RowPtr: make([]int64, n+1)}
	for j := 0; j < ny; j++ {
		for i := 0; i < nx; i++ {
			v := i + nx*j
			add := func(c int, x float64) {
				a.Col = append(a.Col, int32(c))
				a.Val = append(a.Val, x)
			}
			if j > 0 {
				add(v-nx, -eps)
			}
			if i > 0 {
				add(v-1, -1)
			}
			add(v, 2+2*eps)
			if i < nx-1 {
				add(v+1, -1)
			}
			if j < ny-1 {
				add(v+nx, -eps)
			}
			a.RowPtr[v+1] = int64(len(a.Col))
		}
	}
	return a
}

// messy returns a with each row's entries shuffled and some repeated
// (the repeats carry zero, so the summed matrix is unchanged).
func messy(a *mesh.CSR[float64], seed uint64) *mesh.CSR[float64] {
	r := rand.New(rand.NewPCG(seed, 1))
	b := &mesh.CSR[float64]{Rows: a.Rows, Cols: a.Cols, RowPtr: make([]int64, a.Rows+1)}
	for i := 0; i < a.Rows; i++ {
		lo, hi := a.RowPtr[i], a.RowPtr[i+1]
		idx := r.Perm(int(hi - lo))
		for _, k := range idx {
			b.Col = append(b.Col, a.Col[lo+int64(k)])
			if a.Val != nil {
				b.Val = append(b.Val, a.Val[lo+int64(k)])
			}
		}
		if hi > lo && r.IntN(3) == 0 {
			b.Col = append(b.Col, a.Col[lo])
			if a.Val != nil {
				b.Val = append(b.Val, 0)
			}
		}
		b.RowPtr[i+1] = int64(len(b.Col))
	}
	return b
}

// blockExpand turns a scalar matrix into one with b×b blocks: block (I,J)
// is a_IJ times a fixed dense b×b pattern.
func blockExpand(a *mesh.CSR[float64], b int) *mesh.CSR[float64] {
	n := a.Rows * b
	out := &mesh.CSR[float64]{Rows: n, Cols: n, RowPtr: make([]int64, n+1)}
	for I := 0; I < a.Rows; I++ {
		for r := 0; r < b; r++ {
			for k := a.RowPtr[I]; k < a.RowPtr[I+1]; k++ {
				J := int(a.Col[k])
				for c := 0; c < b; c++ {
					x := a.Val[k] * 0.5
					if r == c {
						x = a.Val[k]
					}
					out.Col = append(out.Col, int32(J*b+c))
					out.Val = append(out.Val, x)
				}
			}
			out.RowPtr[I*b+r+1] = int64(len(out.Col))
		}
	}
	return out
}

func graphToCSR(g *mesh.Graph) *mesh.CSR[float64] {
	return &mesh.CSR[float64]{Rows: g.N(), Cols: g.N(), RowPtr: g.Offsets, Col: g.Adj}
}

func boundary(seed uint64) mis.Priority { return mis.Priority{Kind: mis.Boundary, Seed: seed} }

func main() {
	out := flag.String("o", "goref.txt", "output file")
	flag.Parse()
	f, err := os.Create(*out)
	check(err)
	w := &writer{w: bufio.NewWriter(f)}

	for _, c := range []func(*writer){
		q1PoissonDirichlet, anisoFloat32Theta, randomMessyPattern,
		blockSize2, elementsTet, elementsTri,
	} {
		c(w)
	}
	check(w.err)
	check(w.w.Flush())
	check(f.Close())
}

// q1PoissonDirichlet: Q1 Poisson with Dirichlet rows, float64, int32,
// 0-based.
func q1PoissonDirichlet(w *writer) {
	m := mesh.StructuredQuad(24, 20)
	a := q1Laplacian(m)
	g, err := mesh.FromCSR(a, mesh.MatrixOptions{})
	check(err)
	w.printf("case q1_poisson_dirichlet\n")
	w.writeCSR(a, int32Index, 0, float64Val, "")
	w.ops(g, nil, []op{
		{kind: "mis", abi: "distance=2,priority=boundary", dist: 2, prio: boundary(0)},
		{kind: "mis", abi: "distance=1,priority=degree,seed=11", dist: 1, prio: mis.Priority{Kind: mis.Degree, Seed: 11}},
		{kind: "color", abi: "", dist: 1},
		{kind: "hierarchy", abi: "priority=boundary,min_vertices=8", dist: 2, prio: boundary(0), minV: 8},
		// No options: the zero Go options, the set misgrid coarsen gives.
		{kind: "mis", abi: ""},
		{kind: "hierarchy", abi: ""},
	})
}

// anisoFloat32Theta: an anisotropic operator in float32 with a strength
// threshold, int64, 1-based.
func anisoFloat32Theta(w *writer) {
	a := anisotropic(30, 25, 0.01)
	g, err := mesh.FromCSR(f32(a), mesh.MatrixOptions{Theta: 0.08})
	check(err)
	w.printf("case aniso_float32_theta\n")
	w.writeCSR(a, int64Index, 1, float32Val, "theta=0.08")
	// The solver sees the float32 values widened to float64.
	a64 := &mesh.CSR[float64]{Rows: a.Rows, Cols: a.Cols, RowPtr: a.RowPtr, Col: a.Col, Val: make([]float64, len(a.Val))}
	for i, x := range a.Val {
		a64.Val[i] = float64(float32(x))
	}
	w.ops(g, nil, []op{
		{kind: "mis", abi: "distance=2,priority=boundary,seed=4", dist: 2, prio: boundary(4)},
		{kind: "hierarchy", abi: "priority=hash,max_levels=3", dist: 2, prio: mis.Priority{Kind: mis.Hash}, maxL: 3},
		{kind: "solver", abi: "theta=0.08,smoother=jacobi,max_coarse=40,tol=1e-10", a: a64,
			amg: []string{"theta=0.08", "smoother=jacobi", "max_coarse=40", "tol=1e-10"}},
		{kind: "solver", abi: "aggregation=pairwise,cycle=w,max_coarse=40", a: a64,
			amg: []string{"aggregation=pairwise", "cycle=w", "max_coarse=40"}},
	})
}

// randomMessyPattern: a random pattern, rows shuffled with repeats,
// 1-based int32, and user priorities.
func randomMessyPattern(w *writer) {
	rg := mesh.RandomGraph(3000, 7, 42)
	a := messy(graphToCSR(rg), 5)
	g, err := mesh.FromCSR(a, mesh.MatrixOptions{})
	check(err)
	prio := make([]float64, g.N())
	r := rand.New(rand.NewPCG(9, 9))
	for i := range prio {
		prio[i] = float64(r.IntN(50)) / 7
	}
	w.printf("case random_messy_pattern\n")
	w.writeCSR(a, int32Index, 1, pattern, "")
	w.ops(g, prio, []op{
		{kind: "mis", abi: "distance=2,seed=99", dist: 2, prio: mis.Priority{Seed: 99}},
		{kind: "mis", abi: "priority=user", dist: 1, prio: mis.Priority{Kind: mis.User}},
		{kind: "color", abi: "distance=2,priority=degree", dist: 2, prio: mis.Priority{Kind: mis.Degree}},
		{kind: "hierarchy", abi: "distance=1,priority=degree", dist: 1, prio: mis.Priority{Kind: mis.Degree}},
	})
}

// blockSize2: a 2-dof-per-node matrix collapsed with block_size=2.
func blockSize2(w *writer) {
	a := blockExpand(anisotropic(16, 14, 1), 2)
	g, err := mesh.FromCSR(a, mesh.MatrixOptions{BlockSize: 2, Theta: 0.02})
	check(err)
	w.printf("case block_size_2\n")
	w.writeCSR(messy(a, 8), int64Index, 0, float64Val, "block_size=2,theta=0.02")
	w.ops(g, nil, []op{
		{kind: "mis", abi: "distance=2,priority=boundary", dist: 2, prio: boundary(0)},
	})
}

// elementsTet: tetrahedra with coordinates, geometric boundary classes.
func elementsTet(w *writer) {
	m := mesh.StructuredTet(7, 6, 5)
	g, err := mesh.FromElements(m, mesh.ElementOptions{})
	check(err)
	g.Class, err = mesh.Classify(m, mesh.ClassifyOptions{})
	check(err)
	writeElements(w, m, elemTet4, 4, int32Index, 0, "")
	w.ops(g, nil, []op{
		{kind: "mis", abi: "distance=2,priority=boundary", dist: 2, prio: boundary(0)},
		{kind: "hierarchy", abi: "priority=boundary", dist: 2, prio: boundary(0)},
	})
}

// elementsTri: triangles, int64 1-based connectivity, a sharp feature angle.
func elementsTri(w *writer) {
	m := mesh.StructuredTri(19, 13)
	g, err := mesh.FromElements(m, mesh.ElementOptions{})
	check(err)
	g.Class, err = mesh.Classify(m, mesh.ClassifyOptions{FeatureAngle: 10})
	check(err)
	writeElements(w, m, elemTri3, 3, int64Index, 1, "feature_angle=10")
	w.ops(g, nil, []op{
		{kind: "mis", abi: "distance=2,priority=boundary,seed=2", dist: 2, prio: boundary(2)},
		{kind: "color", abi: "priority=boundary", dist: 1, prio: boundary(0)},
	})
}

func writeElements(w *writer, m *mesh.Mesh, etype, npe, itype, base int, gopts string) {
	b := m.Blocks[0]
	name := strings.ToLower(b.Type.String())
	w.printf("case elements_%s\n", name)
	w.printf("elements %d %d %d %d %d %d %d %s\n", m.NumNodes(), etype, npe, b.Len(), itype, base, m.Dim, opts(gopts))
	c := widen(b.Conn)
	for i := range c {
		c[i] += int64(base)
	}
	w.printf("conn")
	w.ints(c)
	w.printf("coords")
	w.floats(m.Coords, "%.17g")
}
