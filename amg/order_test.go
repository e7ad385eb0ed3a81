package amg

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// relabel returns a with its nodes (blocks of bs rows) renumbered by
// perm[old] = new, rows sorted: the same operator in another numbering.
func relabel(a *mesh.CSR[float64], perm []int32, bs int) *mesh.CSR[float64] {
	q := &permutation{inv: make([]int32, a.Rows)}
	for v, nv := range perm {
		for r := range bs {
			q.inv[int(nv)*bs+r] = int32(v*bs + r)
		}
	}
	m, err := fromMesh(newPool(2), a)
	if err != nil {
		panic(err)
	}
	c := q.matrix(newPool(1), m, false)
	return c.toMesh()
}

// shuffled returns a random permutation of n (perm[old] = new).
func shuffled(n int, seed uint64) []int32 {
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	for i := n - 1; i > 0; i-- {
		j := int(mis.Hash32(int32(i), seed)) % (i + 1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	return perm
}

// A randomly numbered mesh matrix scatters; a grid's natural numbering
// does not, nor do small matrices or blocks of 3 (their entries share
// cache lines).
func TestScattered(t *testing.T) {
	p := newPool(2)
	pr := fem.Poisson(3, 40) // 59,319 rows
	if scattered(p, mustCSR(t, pr.A), 1) {
		t.Error("natural grid numbering judged scattered")
	}
	if !scattered(p, mustCSR(t, relabel(pr.A, shuffled(pr.A.Rows, 1), 1)), 1) {
		t.Error("random numbering not judged scattered")
	}
	small := fem.Poisson(3, 12)
	if scattered(p, mustCSR(t, relabel(small.A, shuffled(small.A.Rows, 1), 1)), 1) {
		t.Error("a matrix within the cache window judged scattered")
	}
	el := fem.Elasticity(20) // 26,460 rows
	if scattered(p, mustCSR(t, relabel(el.A, shuffled(el.A.Rows/3, 1), 3)), 3) {
		t.Error("blocks of 3 judged scattered")
	}
}

// Renumbering is exactly the solver of the renumbered matrix: New with
// ordering=rcm on A gives, bitwise, the hierarchy, Apply and Solve of New
// on P·A·Pᵀ with the caller's vectors permuted; and Update with reuse
// matches a fresh setup.
func TestOrderingIsRenumbering(t *testing.T) {
	pr := fem.Poisson(3, 14)
	a := relabel(pr.A, shuffled(pr.A.Rows, 7), 1) // a scattered numbering
	o := Options{MaxCoarse: 40, Ordering: RCMOrdering}
	pc, err := New(a, o)
	if err != nil {
		t.Fatal(err)
	}
	if pc.perm == nil {
		t.Fatal("ordering=rcm left the numbering as given")
	}
	q := pc.perm
	perm := make([]int32, len(q.inv)) // old → new
	for i, old := range q.inv {
		perm[old] = int32(i)
	}
	if bw, bw0 := bandwidth(pc.fine), bandwidth(mustCSR(t, a)); bw*4 > bw0 {
		t.Errorf("bandwidth %d after RCM, %d before: want 4× narrower", bw, bw0)
	}
	o2 := o
	o2.Ordering = NaturalOrdering
	ref, err := New(relabel(a, perm, 1), o2)
	if err != nil {
		t.Fatal(err)
	}
	n := pc.Rows()
	b := randVec(n, 3)
	pb := make([]float64, n)
	q.gather(pc.pool, b, pb)
	z, zr := make([]float64, n), make([]float64, n)
	if err := pc.Apply(b, z); err != nil {
		t.Fatal(err)
	}
	if err := ref.Apply(pb, zr); err != nil {
		t.Fatal(err)
	}
	for i := range zr {
		if z[q.inv[i]] != zr[i] {
			t.Fatalf("Apply differs at %d: %g vs %g", i, z[q.inv[i]], zr[i])
		}
	}
	x, xr := make([]float64, n), make([]float64, n)
	res, err := pc.Solve(b, x)
	if err != nil {
		t.Fatal(err)
	}
	resr, err := ref.Solve(pb, xr)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Converged || res.Iterations != resr.Iterations {
		t.Fatalf("%d iterations (converged %v), renumbered matrix %d", res.Iterations, res.Converged, resr.Iterations)
	}
	for i := range xr {
		if x[q.inv[i]] != xr[i] {
			t.Fatalf("Solve differs at %d: %g vs %g", i, x[q.inv[i]], xr[i])
		}
	}
	// The caller's residual, in the caller's numbering.
	r := mulDense(mustCSR(t, a), x)
	for i := range r {
		r[i] = b[i] - r[i]
	}
	if rel := norm(r) / norm(b); rel > 1e-8 {
		t.Errorf("true relative residual %g", rel)
	}
}

// A singular matrix renumbered: the null space is found, and returned in
// the caller's numbering; a given one is checked in it; Solve converges
// to the solution orthogonal to it.
func TestOrderingSingular(t *testing.T) {
	pr := fem.Neumann(3, 12)
	a := relabel(pr.A, shuffled(pr.A.Rows, 5), 1)
	m := mustCSR(t, a)
	ones := make([]float64, m.rows)
	for i := range ones {
		ones[i] = 1
	}
	for _, kernel := range [][][]float64{nil, {ones}} {
		pc, err := New(a, Options{Ordering: RCMOrdering, Kernel: kernel})
		if err != nil {
			t.Fatal(err)
		}
		if len(pc.Kernel()) != 1 {
			t.Fatalf("null space of %d vectors, want 1", len(pc.Kernel()))
		}
		v := pc.Kernel()[0]
		if r := norm(mulDense(m, v)); r > 1e-10 {
			t.Errorf("kernel vector: ‖A·v‖ = %g", r)
		}
		b := mulDense(m, randVec(m.rows, 5))
		x := make([]float64, m.rows)
		res, err := pc.Solve(b, x)
		if err != nil || res.Status != Converged {
			t.Fatalf("%v, %v", res, err)
		}
		if c := dotv(v, x) / norm(x); math.Abs(c) > 1e-10 {
			t.Errorf("x has a component %g along the kernel", c)
		}
	}
	shift := append([]float64(nil), ones...)
	shift[3] = 2
	if _, err := New(a, Options{Ordering: RCMOrdering, Kernel: [][]float64{shift}}); err == nil {
		t.Error("a kernel vector outside the null space was accepted")
	}
}

// Setup and solve with renumbering give bitwise the same results for any
// worker count.
func TestOrderingDeterministic(t *testing.T) {
	pr := fem.Poisson(3, 16)
	a := relabel(pr.A, shuffled(pr.A.Rows, 2), 1)
	sameSolveAcrossWorkers(t, a, Options{MaxCoarse: 50, Ordering: RCMOrdering}, 1, 2, 3, 8)
}

// sameHierarchy checks that an updated hierarchy is, bitwise, the one a
// fresh setup built: its operators, and Apply.
func sameHierarchy(t *testing.T, pc, fresh *Preconditioner) {
	t.Helper()
	if len(fresh.levels) != len(pc.levels) {
		t.Fatalf("fresh setup has %d levels, updated %d", len(fresh.levels), len(pc.levels))
	}
	for lv := range pc.levels {
		u, f := pc.levels[lv].a, fresh.levels[lv].a
		if !samePattern(u, f) {
			t.Fatalf("level %d: patterns differ", lv)
		}
		for k := range u.val {
			if u.val[k] != f.val[k] {
				t.Fatalf("level %d entry %d: updated %g, fresh %g", lv, k, u.val[k], f.val[k])
			}
		}
	}
	r := randVec(pc.Rows(), 9)
	z1, z2 := make([]float64, len(r)), make([]float64, len(r))
	if err := pc.Apply(r, z1); err != nil {
		t.Fatal(err)
	}
	if err := fresh.Apply(r, z2); err != nil {
		t.Fatal(err)
	}
	for i := range z1 {
		if z1[i] != z2[i] {
			t.Fatalf("Apply differs at %d: %g vs %g", i, z1[i], z2[i])
		}
	}
}

// bandwidth returns the largest |j − i| of a.
func bandwidth(a *csr) int {
	bw := 0
	for i := 0; i < a.rows; i++ {
		for _, j := range a.col[a.ptr[i]:a.ptr[i+1]] {
			bw = max(bw, int(j)-i, i-int(j))
		}
	}
	return bw
}

// NewDevice builds in the caller's numbering and says so when asked to
// renumber, before it touches the buffers.
func TestNewDeviceRefusesRCM(t *testing.T) {
	_, err := NewDevice(DeviceMatrix{Rows: 4}, Options{Ordering: RCMOrdering})
	if err == nil || !strings.Contains(err.Error(), "rcm") {
		t.Fatalf("NewDevice with rcm: %v", err)
	}
}

// serialCuthillMcKee is the reference of cuthillMcKee: the search as its
// definition reads, one vertex at a time. It returns the vertices of g in reverse Cuthill–McKee order:
// each connected component, in order of its lowest vertex, searched
// breadth-first from the last vertex that a search from that lowest vertex
// reaches (one step of the George–Liu iteration that mesh.RCM runs to its
// end: on a scattered numbering every search waits on a cache miss per
// vertex, and the band it gives is as good for the cache), neighbours in
// order of increasing degree, then id.
func serialCuthillMcKee(g *mesh.Graph) []int32 {
	n := g.N()
	order := make([]int32, 0, n)
	seen := make([]bool, n)
	mark := make([]bool, n) // the probing search's visits, cleared after it
	var queue, cand []int32
	deg := func(v int32) int64 { return g.Offsets[v+1] - g.Offsets[v] }
	for s := range int32(n) {
		if seen[s] {
			continue
		}
		// Probe: the last vertex a search from s reaches.
		queue = append(queue[:0], s)
		mark[s] = true
		for h := 0; h < len(queue); h++ {
			for _, u := range g.Neighbors(queue[h]) {
				if !mark[u] && !seen[u] {
					mark[u] = true
					queue = append(queue, u)
				}
			}
		}
		start := queue[len(queue)-1]
		for _, v := range queue {
			mark[v] = false
		}
		head := len(order)
		order = append(order, start)
		seen[start] = true
		for ; head < len(order); head++ {
			cand = cand[:0]
			for _, u := range g.Neighbors(order[head]) {
				if !seen[u] {
					seen[u] = true
					cand = append(cand, u)
				}
			}
			slices.SortFunc(cand, func(x, y int32) int {
				if dx, dy := deg(x), deg(y); dx != dy {
					return int(dx - dy)
				}
				return int(x - y)
			})
			order = append(order, cand...)
		}
	}
	slices.Reverse(order)
	return order
}

// The level-at-a-time search gives the one-vertex-at-a-time order on
// scattered meshes (levels wide enough to run in parallel), on patterns
// with isolated vertices, several components and one-way edges, serial or
// not.
func TestCuthillMcKeeIsSerial(t *testing.T) {
	graphs := map[string]*mesh.Graph{}
	for _, c := range []struct {
		name string
		a    *mesh.CSR[float64]
	}{
		{"poisson3d-shuffled", relabel(fem.Poisson(3, 40).A, shuffled(59319, 2), 1)},
		{"poisson2d", fem.Poisson(2, 30).A},
	} {
		graphs[c.name] = &mesh.Graph{Offsets: c.a.RowPtr, Adj: c.a.Col}
	}
	graphs["pieces"] = pieces()
	graphs["into-placed"] = intoPlaced()
	for name, g := range graphs {
		want := serialCuthillMcKee(g)
		for _, w := range []int{1, 3, 8} {
			if got := cuthillMcKee(newPool(w), g); !slices.Equal(got, want) {
				t.Errorf("%s, %d workers: the order differs from the serial search's", name, w)
			}
		}
	}
}

// pieces is a graph of several components, isolated vertices and edges
// that go one way only (a search from their head reaches their tail, not
// back), numbered so that components interleave.
func pieces() *mesh.Graph {
	const n = 4000
	adj := make([][]int32, n)
	add := func(u, v int32) { adj[u] = append(adj[u], v) }
	for v := int32(0); v+3 < n; v++ {
		switch {
		case v%7 == 3: // isolated
		case v%11 == 0:
			add(v, v+3) // one way
		default:
			add(v, v+2)
			add(v+2, v)
		}
		if h := int32(mis.Hash32(v, 5) % n); v%5 == 0 && h%7 != 3 {
			add(v, h)
			add(h, v)
		}
	}
	return graphOf(adj)
}

// intoPlaced is a graph whose second component's probe would end on a
// vertex the first component's search placed, through an edge that goes
// one way only, if it passed placed vertices: 0–1, 2→0, 2–3, 3–4.
func intoPlaced() *mesh.Graph {
	return graphOf([][]int32{{1}, {0}, {0, 3}, {2, 4}, {3}})
}
