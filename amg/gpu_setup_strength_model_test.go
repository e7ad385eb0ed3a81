package amg

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/mesh"
)

// Host models of setup_strength.cuh: the strength graph (su_node_diag,
// su_strength and its helpers), as gpu_setup_model_test.go does for the
// rest of setup.cu.

// modelNodeDiag is su_node_diag.
func modelNodeDiag(a *csr, bs int) (dn []float64, dir []uint8) {
	nodes := a.rows / bs
	dn, dir = make([]float64, nodes), make([]uint8, nodes)
	for v := 0; v < nodes; v++ {
		off := false
		for i := v * bs; i < (v+1)*bs; i++ {
			for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
				off = off || (int(a.col[k]) != i && a.val[k] != 0)
			}
		}
		s, _ := modelBlock(a, bs, v, v)
		dn[v] = s.Value()
		if !off {
			dir[v] = 1
		}
	}
	return dn, dir
}

// modelStrength is su_strength over every node: counts when adj is nil,
// otherwise writes at off. It returns the asymmetric node (or -1).
func modelStrength(a *csr, bs int, theta float64, dn []float64, dir []uint8, cnt, off []int64, adj []int32) int {
	nodes := a.rows / bs
	bad := -1
	fail := func(v int) {
		if bad < 0 || v < bad {
			bad = v
		}
	}
	for v := 0; v < nodes; v++ {
		if dir[v] != 0 {
			if adj == nil {
				cnt[v+1] = 0
			}
			continue
		}
		var out []int32
		if adj != nil {
			out = adj[off[v]:]
		}
		var w int64
		if bs == 1 {
			w = modelStrength1(a, v, theta, dn, dir, out, fail)
		} else if nb := modelNeighbours(a, v, bs); nb == nil {
			w = modelNodeBlocks(a, v, bs, theta, dn, dir, out, fail)
		} else {
			for _, u := range nb {
				if modelStrongTo(a, v, int(u), bs, theta, dn, dir, fail) {
					if out != nil {
						out[w] = u
					}
					w++
				}
			}
		}
		if adj == nil {
			cnt[v+1] = w
		}
	}
	return bad
}

// modelNeighbours is su_strength's gathering of node v's neighbour
// nodes (bs > 1): each row's runs of one node staged (su_stage_nodes) and
// made distinct (su_distinct), or past suNbCap staged, a bitmap of their
// span (su_window_distinct). Nil when neither fits: lane 0 merges the
// rows (su_node_blocks).
func modelNeighbours(a *csr, v, bs int) []int32 {
	var g []int32
	lo, hi := math.MaxInt32, -1
	for i := v * bs; i < (v+1)*bs; i++ {
		for q := a.ptr[i]; q < a.ptr[i+1]; q++ {
			if q == a.ptr[i] || int(a.col[q])/bs != int(a.col[q-1])/bs {
				g = append(g, a.col[q]/int32(bs))
			}
		}
		if a.ptr[i] < a.ptr[i+1] {
			lo, hi = min(lo, int(a.col[a.ptr[i]])/bs), max(hi, int(a.col[a.ptr[i+1]-1])/bs)
		}
	}
	if len(g) <= suNbCap {
		d, _, _ := modelDistinct(g)
		return d
	}
	if (hi-lo)>>5+1 > suNbCap {
		return nil
	}
	bits := make([]bool, hi-lo+1)
	for _, x := range g {
		bits[int(x)-lo] = true
	}
	var d []int32
	for x, set := range bits {
		if set {
			d = append(d, int32(lo+x))
		}
	}
	if len(d) > suNbCap {
		return nil
	}
	return d
}

// suNbCap, suAtCap and suMaxBS are SU_NB_CAP, SU_AT_CAP and SU_MAX_BS.
const (
	suNbCap = 512
	suAtCap = 384
	suMaxBS = 8
)

// modelDistinct is su_distinct: the distinct values of g other than
// SU_NONE (MaxInt32), each placed by the rank of its first entry among
// the first entries; f[r] is the first entry of d[r], nx[q] the next
// entry of g[q]'s value (-1 after the last).
func modelDistinct(g []int32) (d []int32, f, nx []int) {
	d, f, nx = make([]int32, len(g)), make([]int, len(g)), make([]int, len(g))
	var firsts []int
	for q, x := range g {
		nx[q] = -1
		p := q - 1
		for ; x != math.MaxInt32 && p >= 0 && g[p] != x; p-- {
		}
		d[q] = math.MaxInt32
		switch {
		case x == math.MaxInt32:
		case p < 0:
			d[q] = x
			firsts = append(firsts, q)
		default:
			nx[p] = q
		}
	}
	rank := make([]int, len(firsts))
	for i, q := range firsts {
		for p := range g {
			if d[p] < g[q] {
				rank[i]++
			}
		}
	}
	for i, q := range firsts {
		d[rank[i]], f[rank[i]] = g[q], q
	}
	return d[:len(firsts)], f[:len(firsts)], nx
}

// modelStrength1 is su_strength1's row v: each entry's mirror looked up.
func modelStrength1(a *csr, v int, theta float64, dn []float64, dir []uint8, out []int32, fail func(int)) int64 {
	var w int64
	for k := a.ptr[v]; k < a.ptr[v+1]; k++ {
		u := int(a.col[k])
		if u == v || dir[u] != 0 {
			continue
		}
		q := mLower(a.col, a.ptr[u], a.ptr[u+1], int32(v))
		if q == a.ptr[u+1] || int(a.col[q]) != v {
			fail(v)
			continue
		}
		if mStrong(math.Abs(a.val[k]), theta, dn[v], dn[u]) || mStrong(math.Abs(a.val[q]), theta, dn[u], dn[v]) {
			if out != nil {
				out[w] = int32(u)
			}
			w++
		}
	}
	return w
}

// modelBlock is su_block: the norm of block (u, v) and whether the
// pattern has it.
func modelBlock(a *csr, bs, u, v int) (mNorm, bool) {
	var s mNorm
	found := false
	for i := u * bs; i < (u+1)*bs; i++ {
		for k := mLower(a.col, a.ptr[i], a.ptr[i+1], int32(v*bs)); k < a.ptr[i+1] && int(a.col[k]) < (v+1)*bs; k++ {
			found = true
			s.Add(a.val[k])
		}
	}
	return s, found
}

// modelStrongTo is su_strong_to.
func modelStrongTo(a *csr, v, u, bs int, theta float64, dn []float64, dir []uint8, fail func(int)) bool {
	if u == v || dir[u] != 0 {
		return false
	}
	s, _ := modelBlock(a, bs, v, u)
	t, found := modelBlock(a, bs, u, v)
	if !found {
		fail(v)
		return false
	}
	return mStrong(s.Value(), theta, dn[v], dn[u]) || mStrong(t.Value(), theta, dn[u], dn[v])
}

// modelNodeBlocks is su_node_blocks: lane 0's merge of node v's rows.
func modelNodeBlocks(a *csr, v, bs int, theta float64, dn []float64, dir []uint8, out []int32, fail func(int)) int64 {
	p, e := make([]int, bs), make([]int, bs)
	for r := 0; r < bs; r++ {
		p[r], e[r] = a.ptr[v*bs+r], a.ptr[v*bs+r+1]
	}
	var w int64
	for {
		u := math.MaxInt32
		for r := 0; r < bs; r++ {
			if p[r] < e[r] {
				u = min(u, int(a.col[p[r]])/bs)
			}
		}
		if u == math.MaxInt32 {
			return w
		}
		var s mNorm
		for r := 0; r < bs; r++ {
			for ; p[r] < e[r] && int(a.col[p[r]])/bs == u; p[r]++ {
				s.Add(a.val[p[r]])
			}
		}
		if u == v || dir[u] != 0 {
			continue
		}
		t, found := modelBlock(a, bs, u, v)
		if !found {
			fail(v)
			continue
		}
		if mStrong(s.Value(), theta, dn[v], dn[u]) || mStrong(t.Value(), theta, dn[u], dn[v]) {
			if out != nil {
				out[w] = int32(u)
			}
			w++
		}
	}
}

// modelGraph builds the strength graph as the device does.
func modelGraph(a *csr, bs int, theta float64) (*mesh.Graph, []uint8, int) {
	dn, dir := modelNodeDiag(a, bs)
	nodes := a.rows / bs
	off := make([]int64, nodes+1)
	if bad := modelStrength(a, bs, theta, dn, dir, off, nil, nil); bad >= 0 {
		return nil, nil, bad
	}
	modelScan(off)
	adj := make([]int32, off[nodes])
	modelStrength(a, bs, theta, dn, dir, nil, off, adj)
	return &mesh.Graph{Offsets: off, Adj: adj}, dir, -1
}

// modelDistinct is sorting and compacting.
func TestDistinctModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		g := make([]int32, rng.IntN(suNbCap+1))
		for q := range g {
			switch {
			case q > 0 && rng.IntN(3) == 0:
				g[q] = g[q-1] // a run, as a node's dofs make
			case rng.IntN(8) == 0:
				g[q] = math.MaxInt32
			default:
				g[q] = rng.Int32N(40)
			}
		}
		want := slices.Compact(slices.Sorted(slices.Values(slices.DeleteFunc(slices.Clone(g), func(x int32) bool { return x == math.MaxInt32 }))))
		got, f, nx := modelDistinct(g)
		if !slices.Equal(got, want) {
			t.Fatalf("%v: got %v, want %v", g, got, want)
		}
		// Each value's list holds its entries, in order.
		for r, x := range got {
			var list []int
			for q := f[r]; q >= 0; q = nx[q] {
				list = append(list, q)
			}
			var want []int
			for q, y := range g {
				if y == x {
					want = append(want, q)
				}
			}
			if !slices.Equal(list, want) {
				t.Fatalf("%v: entries of %d listed %v, want %v", g, x, list, want)
			}
		}
	}
}

// An unsymmetric pattern is reported, and the host builds that level.
func TestStrengthModelAsymmetric(t *testing.T) {
	// (0,1) has no mirror (1,0).
	a := &csr{rows: 3, cols: 3, ptr: []int{0, 2, 4, 6}, col: []int32{0, 1, 1, 2, 1, 2}, val: []float64{2, -1, 2, -1, -1, 2}}
	if _, _, bad := modelGraph(a, 1, 0); bad != 0 {
		t.Fatalf("asymmetric pattern reported at node %d, want 0", bad)
	}
}
