package amg

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/mesh"
)

// Host models of input_order.cuh, kernel by kernel, driven as
// gpu_input_order.go drives the kernels; the vertices of a level are
// visited in a shuffled order where the kernels' threads race (the
// claims). They run in CI without a GPU.

// inOrderCap is IN_ORDER_CAP.
const inOrderCap = 256

// orderModel is the device's renumbering state.
type orderModel struct {
	a                   *csr
	own, probe          []int32
	order, queue        []int32
	cnt                 []int64
	rng                 *rand.Rand
	sortedCap, unsorted int // vertices placed by staging, and by lane 0
}

func newOrderModel(a *csr, seed uint64) *orderModel {
	n := a.rows
	m := &orderModel{a: a, own: make([]int32, n), probe: make([]int32, n), order: make([]int32, n),
		queue: make([]int32, n), cnt: make([]int64, n+1), rng: rand.New(rand.NewPCG(seed, 3))}
	for i := range n {
		m.own[i], m.probe[i] = unowned, unowned
	}
	return m
}

// firstEdge is in_first_edge: -1 for none.
func (m *orderModel) firstEdge(from int) int {
	for v := from; v < m.a.rows; v++ {
		if m.own[v] != unowned {
			continue
		}
		for _, u := range m.a.col[m.a.ptr[v]:m.a.ptr[v+1]] {
			if int(u) != v {
				return v
			}
		}
	}
	return -1
}

// alone is in_alone_count, the scan and in_alone_place.
func (m *orderModel) alone(from, to, at int) int {
	for v := from; v < to; v++ {
		if m.own[v] == unowned {
			m.order[at] = int32(v)
			m.own[v] = -1
			at++
		}
	}
	return at
}

// levels is ds.levels over the models of in_claim, in_won_count, the scan
// and in_won_place.
func (m *orderModel) levels(own, placed, q []int32, lo, hi int, sorted bool) int {
	a := m.a
	for l := 0; lo < hi; l++ {
		if l == maxLevels {
			return -1
		}
		for _, i := range m.rng.Perm(hi - lo) {
			p := int32(lo + i)
			for _, u := range a.col[a.ptr[q[p]]:a.ptr[q[p]+1]] {
				if placed == nil || placed[u] == unowned {
					own[u] = min(own[u], p)
				}
			}
		}
		m.cnt[0] = 0
		for i := range hi - lo {
			p, w := int32(lo+i), int64(0)
			for _, u := range a.col[a.ptr[q[p]]:a.ptr[q[p]+1]] {
				if own[u] == p {
					w++
				}
			}
			m.cnt[i+1] = m.cnt[i] + w
		}
		for i := range hi - lo {
			m.wonPlace(own, q, int32(lo+i), hi+int(m.cnt[i]), int(m.cnt[i+1]-m.cnt[i]), sorted)
		}
		lo, hi = hi, hi+int(m.cnt[hi-lo])
	}
	return hi
}

// wonPlace is one warp of in_won_place.
func (m *orderModel) wonPlace(own, q []int32, p int32, base, c int, sorted bool) {
	a := m.a
	key := func(u int32) uint64 { return uint64(a.ptr[u+1]-a.ptr[u])<<32 | uint64(uint32(u)) }
	var won []int32
	for _, u := range a.col[a.ptr[q[p]]:a.ptr[q[p]+1]] {
		if own[u] == p {
			won = append(won, u)
		}
	}
	switch {
	case !sorted:
		copy(q[base:], won)
	case c <= inOrderCap:
		m.sortedCap += c
		for _, u := range won {
			r := 0
			for _, x := range won {
				if key(x) < key(u) {
					r++
				}
			}
			q[base+r] = u
		}
	default:
		m.unsorted += c
		out := q[base : base+c]
		copy(out, won)
		for i := 1; i < c; i++ {
			u, j := out[i], i-1
			for ; j >= 0 && key(out[j]) > key(u); j-- {
				out[j+1] = out[j]
			}
			out[j+1] = u
		}
	}
}

// searchAll is ds.searchAll; false where it gives up (errRenumber).
func (m *orderModel) searchAll() bool {
	n := m.a.rows
	placed, from := 0, 0
	for searches := 0; ; searches++ {
		w := m.firstEdge(from)
		to := n
		if w >= 0 {
			to = w
		}
		if to > from {
			placed = m.alone(from, to, placed)
		}
		if w < 0 {
			break
		}
		if searches == maxSearches {
			return false
		}
		m.queue[0], m.probe[to] = int32(to), -1
		end := m.levels(m.probe, m.own, m.queue, 0, 1, false)
		if end < 0 {
			return false
		}
		for _, v := range m.queue[:end] {
			m.probe[v] = unowned
		}
		start := m.queue[end-1]
		m.order[placed], m.own[start] = start, -1
		if placed = m.levels(m.own, nil, m.order, placed, placed+1, true); placed < 0 {
			return false
		}
		from = to + 1
	}
	return placed == n
}

// permute is in_reverse, in_perm_len, the scan and in_permute: P·a·Pᵀ,
// each entry's position in a, and the inverse permutation.
func (m *orderModel) permute() (*csr, []int32, []int32) {
	a, n := m.a, m.a.rows
	inv, perm := make([]int32, n), make([]int32, n)
	for p, v := range m.order {
		inv[n-1-p], perm[v] = v, int32(n-1-p)
	}
	c := &csr{rows: n, cols: n, ptr: make([]int, n+1), col: make([]int32, a.nnz()), val: make([]float64, a.nnz())}
	src := make([]int32, a.nnz())
	for i, o := range inv {
		c.ptr[i+1] = c.ptr[i] + a.ptr[o+1] - a.ptr[o]
	}
	for i, o := range inv {
		cols, vals := a.col[a.ptr[o]:a.ptr[o+1]], a.val[a.ptr[o]:a.ptr[o+1]]
		for k, j := range cols {
			r := 0 // the rank the lane finds, or where lane 0's sort puts it
			for _, x := range cols {
				if perm[x] < perm[j] {
					r++
				}
			}
			c.col[c.ptr[i]+r], c.val[c.ptr[i]+r] = perm[j], vals[k]
			src[c.ptr[i]+r] = int32(a.ptr[o] + k)
		}
	}
	return c, src, inv
}

// The device's renumbering is the host's: the same order (cuthillMcKee)
// and the same renumbered matrix (permutation.matrix), with rows of
// vertices that win more than a warp stages, components, vertices alone
// and one-way edges.
func TestModelInputOrder(t *testing.T) {
	grid := fem.Poisson(3, 24).A
	cases := map[string]*csr{
		"poisson3d-shuffled": mustCSR(t, relabel(grid, shuffled(grid.Rows, 4), 1)),
		"hubs":               withDiagonal(hubGraph()),
		"chains":             withDiagonal(chains()),
		"into-placed":        withDiagonal(intoPlaced()),
	}
	pr, err := benchProblem("tetpart0")
	if err != nil {
		t.Fatal(err)
	}
	cases["tetpart0"] = mustCSR(t, pr.A)
	capped := 0
	for name, a := range cases {
		g := &mesh.Graph{Offsets: offsets64(a.ptr), Adj: a.col}
		want := cuthillMcKee(newPool(2), g)
		m := newOrderModel(a, 7)
		if !m.searchAll() {
			t.Errorf("%s: the model gave up", name)
			continue
		}
		c, src, inv := m.permute()
		if !slices.Equal(inv, want) {
			t.Errorf("%s: the order differs from cuthillMcKee's", name)
			continue
		}
		q := &permutation{inv: want}
		if w := q.matrix(newPool(2), a, true); !slices.Equal(c.ptr, w.ptr) || !slices.Equal(c.col, w.col) ||
			!slices.Equal(c.val, w.val) || !slices.Equal(src, q.src) {
			t.Errorf("%s: the renumbered matrix or its entries' sources differ from the host's", name)
		}
		capped += m.unsorted
	}
	if capped == 0 {
		t.Error("no vertex won more than a warp stages: lane 0's sort is untested")
	}
	if newOrderModel(withDiagonal(pieces()), 1).searchAll() {
		t.Errorf("a pattern of more than %d components was searched, not handed to the host", maxSearches)
	}
	chain := make([][]int32, maxLevels+10)
	for v := range int32(len(chain) - 1) {
		chain[v], chain[v+1] = append(chain[v], v+1), append(chain[v+1], v)
	}
	if newOrderModel(withDiagonal(graphOf(chain)), 1).searchAll() {
		t.Errorf("a chain of more than %d levels was searched, not handed to the host", maxLevels)
	}
	if l := longestRow(newPool(3), cases["hubs"]); l <= inOrderCap || l > maxOrderRow {
		t.Errorf("the hubs' longest row has %d entries, want past IN_ORDER_CAP (%d) and within maxOrderRow (%d)", l, inOrderCap, maxOrderRow)
	}
}

// chains is three chains of vertices interleaved by id, vertices alone
// between them, and one-way edges from one chain into the next.
func chains() *mesh.Graph {
	const n = 3000
	adj := make([][]int32, n)
	last := [3]int32{-1, -1, -1}
	for v := int32(0); v < n; v++ {
		if v%7 == 3 {
			continue // alone
		}
		if c := v % 3; last[c] >= 0 {
			adj[v], adj[last[c]] = append(adj[v], last[c]), append(adj[last[c]], v)
		}
		last[v%3] = v
		if v%11 == 0 && v+4 < n && (v+4)%7 != 3 {
			adj[v] = append(adj[v], v+4) // one way
		}
	}
	return graphOf(adj)
}

// hubGraph is a path whose every 1000th vertex also joins 600 others:
// vertices that win more than IN_ORDER_CAP.
func hubGraph() *mesh.Graph {
	const n = 5000
	adj := make([][]int32, n)
	link := func(u, v int32) { adj[u], adj[v] = append(adj[u], v), append(adj[v], u) }
	for v := int32(0); v+1 < n; v++ {
		link(v, v+1)
	}
	for h := int32(500); h < n; h += 1000 {
		for j := int32(0); j < 600; j++ {
			if u := (h*7 + j*13 + 2) % n; u != h && u != h+1 && u != h-1 {
				link(h, u)
			}
		}
	}
	return graphOf(adj)
}

// graphOf is a graph of adjacency lists, each sorted without repeats.
func graphOf(adj [][]int32) *mesh.Graph {
	g := &mesh.Graph{Offsets: make([]int64, len(adj)+1)}
	for v, nb := range adj {
		slices.Sort(nb)
		nb = slices.Compact(nb)
		g.Adj = append(g.Adj, nb...)
		g.Offsets[v+1] = int64(len(g.Adj))
	}
	return g
}

// withDiagonal is the pattern of g with the diagonal added, as a matrix
// (values: the column ids).
func withDiagonal(g *mesh.Graph) *csr {
	n := g.N()
	a := &csr{rows: n, cols: n, ptr: make([]int, n+1)}
	for v := range n {
		nb := append(slices.Clone(g.Neighbors(int32(v))), int32(v))
		slices.Sort(nb)
		for _, u := range slices.Compact(nb) {
			a.col = append(a.col, u)
			a.val = append(a.val, float64(u))
		}
		a.ptr[v+1] = len(a.col)
	}
	return a
}
