package amg

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/mesh"
)

// Host models of setup_strength.cuh: the strength graph (su_nb_count,
// su_nb_fill, su_strength, su_node_diag1, su_strength1 and their
// helpers), as gpu_setup_model_test.go does for the rest of setup.cu.

// nodeBlocks is su_nb_fill's output: node v's blocks are
// ncol[noff[v]:noff[v+1]] (ascending) with their norms.
type nodeBlocks struct {
	noff  []int64
	ncol  []int32
	bnorm []float64
	dn    []float64
	dir   []uint8
}

// modelNodeDiag is su_node_diag1.
func modelNodeDiag(a *csr) (dn []float64, dir []uint8) {
	dn, dir = make([]float64, a.rows), make([]uint8, a.rows)
	for v := 0; v < a.rows; v++ {
		off := false
		var s mNorm
		for k := a.ptr[v]; k < a.ptr[v+1]; k++ {
			if int(a.col[k]) == v {
				s.Add(a.val[k])
			}
			off = off || (int(a.col[k]) != v && a.val[k] != 0)
		}
		dn[v] = s.Value()
		if !off {
			dir[v] = 1
		}
	}
	return dn, dir
}

// modelRuns is su_stage_runs: the node and the first entry of every run
// of node v's rows, and the end of its entries.
func modelRuns(a *csr, v, bs int) (g []int32, qs []int) {
	for i := v * bs; i < (v+1)*bs; i++ {
		for q := a.ptr[i]; q < a.ptr[i+1]; q++ {
			if q == a.ptr[i] || int(a.col[q])/bs != int(a.col[q-1])/bs {
				g = append(g, a.col[q]/int32(bs))
				qs = append(qs, q)
			}
		}
	}
	return g, append(qs, a.ptr[(v+1)*bs])
}

// modelAlike is su_stage_runs' runs per row with su_rows_alike: the
// first row's run count where every row names the same nodes, else -1.
func modelAlike(a *csr, v, bs int, g []int32) int {
	per := -1
	for i := v * bs; i < (v+1)*bs; i++ {
		runs := 0
		for q := a.ptr[i]; q < a.ptr[i+1]; q++ {
			if q == a.ptr[i] || int(a.col[q])/bs != int(a.col[q-1])/bs {
				runs++
			}
		}
		if i == v*bs {
			per = runs
		} else if runs != per {
			return -1
		}
	}
	for p := per; p < len(g); p++ {
		if g[p] != g[p-per] {
			return -1
		}
	}
	return per
}

// modelWindow is su_window_distinct: node v's distinct nodes by a bitmap
// of their span, or nil past capacity (words and nodes).
func modelWindow(a *csr, v, bs, capacity int) []int32 {
	lo, hi := math.MaxInt32, -1
	for i := v * bs; i < (v+1)*bs; i++ {
		if a.ptr[i] < a.ptr[i+1] {
			lo, hi = min(lo, int(a.col[a.ptr[i]])/bs), max(hi, int(a.col[a.ptr[i+1]-1])/bs)
		}
	}
	if hi < 0 {
		return []int32{}
	}
	if (hi-lo)>>5+1 > capacity {
		return nil
	}
	bits := make([]bool, hi-lo+1)
	for q := a.ptr[v*bs]; q < a.ptr[(v+1)*bs]; q++ {
		bits[int(a.col[q])/bs-lo] = true
	}
	d := []int32{}
	for x, set := range bits {
		if set {
			d = append(d, int32(lo+x))
		}
	}
	if len(d) > capacity {
		return nil
	}
	return d
}

// modelMerge is su_node_merge: node v's blocks by a merge of its rows,
// each summed in row order.
func modelMerge(a *csr, v, bs int) (ncol []int32, bnorm []float64) {
	p, e := make([]int, bs), make([]int, bs)
	for r := 0; r < bs; r++ {
		p[r], e[r] = a.ptr[v*bs+r], a.ptr[v*bs+r+1]
	}
	for {
		u := math.MaxInt32
		for r := 0; r < bs; r++ {
			if p[r] < e[r] {
				u = min(u, int(a.col[p[r]])/bs)
			}
		}
		if u == math.MaxInt32 {
			return ncol, bnorm
		}
		var s mNorm
		for r := 0; r < bs; r++ {
			for ; p[r] < e[r] && int(a.col[p[r]])/bs == u; p[r]++ {
				s.Add(a.val[p[r]])
			}
		}
		ncol, bnorm = append(ncol, int32(u)), append(bnorm, s.Value())
	}
}

// modelNbCount is su_nb_count's node v: the runs counted by their first
// entries, or past suNbCap runs the span's bitmap, or the merge.
func modelNbCount(a *csr, v, bs int) int64 {
	if g, _ := modelRuns(a, v, bs); len(g) <= suNbCap {
		if per := modelAlike(a, v, bs, g); per >= 0 {
			return int64(per)
		}
		u := 0
		for q, x := range g {
			if !slices.Contains(g[:q], x) {
				u++
			}
		}
		return int64(u)
	}
	if d := modelWindow(a, v, bs, suNbCap); d != nil {
		return int64(len(d))
	}
	ncol, _ := modelMerge(a, v, bs)
	return int64(len(ncol))
}

// modelNodeBlocks is su_nb_count, the scan and su_nb_fill (bs > 1),
// which sums each block over its runs (up to suNfCap runs: each row's at
// one place where the rows name the same nodes, else listed), or over its
// entries found in every row (the span's bitmap), or merges.
// It fails the test where the count and the fill disagree.
func modelNodeBlocks(t *testing.T, a *csr, bs int) *nodeBlocks {
	nodes := a.rows / bs
	nb := &nodeBlocks{noff: make([]int64, nodes+1), dn: make([]float64, nodes), dir: make([]uint8, nodes)}
	for v := 0; v < nodes; v++ {
		nb.noff[v+1] = modelNbCount(a, v, bs)
	}
	modelScan(nb.noff)
	nb.ncol, nb.bnorm = make([]int32, nb.noff[nodes]), make([]float64, nb.noff[nodes])
	for v := 0; v < nodes; v++ {
		off := false
		for i := v * bs; i < (v+1)*bs; i++ {
			for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
				off = off || (int(a.col[k]) != i && a.val[k] != 0)
			}
		}
		if !off {
			nb.dir[v] = 1
		}
		var ncol []int32
		var bnorm []float64
		g, qs := modelRuns(a, v, bs)
		if per := modelAlike(a, v, bs, g); len(g) <= suNfCap && per >= 0 {
			ncol = g[:per]
			for t := range per {
				var s mNorm
				for p := t; p < len(g); p += per {
					for q := qs[p]; q < qs[p+1]; q++ {
						s.Add(a.val[q])
					}
				}
				bnorm = append(bnorm, s.Value())
			}
		} else if len(g) <= suNfCap {
			d, f, nx := modelDistinct(g)
			ncol = d
			for r := range d {
				var s mNorm
				for p := f[r]; p >= 0; p = nx[p] {
					for q := qs[p]; q < qs[p+1]; q++ {
						s.Add(a.val[q])
					}
				}
				bnorm = append(bnorm, s.Value())
			}
		} else if d := modelWindow(a, v, bs, suNfCap); d != nil {
			ncol = d
			for _, u := range d {
				s, _ := modelBlock(a, bs, v, int(u))
				bnorm = append(bnorm, s.Value())
			}
		} else {
			ncol, bnorm = modelMerge(a, v, bs)
		}
		if int64(len(ncol)) != nb.noff[v+1]-nb.noff[v] {
			t.Fatalf("node %d: su_nb_fill lists %d blocks, su_nb_count counted %d", v, len(ncol), nb.noff[v+1]-nb.noff[v])
		}
		copy(nb.ncol[nb.noff[v]:], ncol)
		copy(nb.bnorm[nb.noff[v]:], bnorm)
		if r := slices.Index(ncol, int32(v)); r >= 0 {
			nb.dn[v] = bnorm[r]
		}
	}
	return nb
}

// modelStrength is su_strength over every node on su_nb_fill's lists:
// with adj nil, the count pass (flags and counts); otherwise the fill
// pass, placing the flagged ones at off. It returns the asymmetric node
// (or -1).
func modelStrength(nb *nodeBlocks, theta float64, flag []bool, cnt, off []int64, adj []int32) int {
	bad := -1
	for v := 0; v+1 < len(nb.noff); v++ {
		if nb.dir[v] != 0 {
			if adj == nil {
				cnt[v+1] = 0
			}
			continue
		}
		var w int64
		for k := nb.noff[v]; k < nb.noff[v+1]; k++ {
			u := int(nb.ncol[k])
			if adj != nil {
				if flag[k] {
					adj[off[v]+w] = int32(u)
					w++
				}
				continue
			}
			flag[k] = false
			if u == v || nb.dir[u] != 0 {
				continue
			}
			m := int64(mLower(nb.ncol, int(nb.noff[u]), int(nb.noff[u+1]), int32(v)))
			if m == nb.noff[u+1] || int(nb.ncol[m]) != v {
				if bad < 0 || v < bad {
					bad = v
				}
				continue
			}
			flag[k] = mStrong(nb.bnorm[k], theta, nb.dn[v], nb.dn[u]) || mStrong(nb.bnorm[m], theta, nb.dn[u], nb.dn[v])
			if flag[k] {
				w++
			}
		}
		if adj == nil {
			cnt[v+1] = w
		}
	}
	return bad
}

// suNbCap, suNfCap and suAtCap are SU_NB_CAP, SU_NF_CAP and SU_AT_CAP.
const (
	suNbCap = 512
	suNfCap = 256
	suAtCap = 384
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

// modelStrength1All is su_strength1 over every row: counts when adj is
// nil, otherwise writes at off. It returns the asymmetric row (or -1).
func modelStrength1All(a *csr, theta float64, cnt, off []int64, adj []int32) (dir []uint8, bad int) {
	dn, dir := modelNodeDiag(a)
	bad = -1
	fail := func(v int) {
		if bad < 0 || v < bad {
			bad = v
		}
	}
	for v := 0; v < a.rows; v++ {
		var out []int32
		if adj != nil {
			out = adj[off[v]:]
		}
		var w int64
		if dir[v] == 0 {
			w = modelStrength1(a, v, theta, dn, dir, out, fail)
		}
		if adj == nil {
			cnt[v+1] = w
		}
	}
	return dir, bad
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

// modelGraph builds the strength graph as the device does.
func modelGraph(t *testing.T, a *csr, bs int, theta float64) (*mesh.Graph, []uint8, int) {
	nodes := a.rows / bs
	var dir []uint8
	pass := func(cnt, off []int64, adj []int32) (bad int) {
		dir, bad = modelStrength1All(a, theta, cnt, off, adj)
		return bad
	}
	if bs > 1 {
		nb := modelNodeBlocks(t, a, bs)
		dir = nb.dir
		flag := make([]bool, len(nb.ncol))
		pass = func(cnt, off []int64, adj []int32) int { return modelStrength(nb, theta, flag, cnt, off, adj) }
	}
	off := make([]int64, nodes+1)
	if bad := pass(off, nil, nil); bad >= 0 {
		return nil, nil, bad
	}
	modelScan(off)
	adj := make([]int32, off[nodes])
	pass(nil, off, adj)
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
	if _, _, bad := modelGraph(t, a, 1, 0); bad != 0 {
		t.Fatalf("asymmetric pattern reported at node %d, want 0", bad)
	}
}

// hubBlocks is a matrix of bs dofs a node on a path of nodes (dense
// blocks, but for the first row of every third node, which holds its
// diagonal block only), with node 0 coupled to spread nodes stride
// apart: its rows hold bs·spread runs or so, over a span of
// spread·stride nodes.
func hubBlocks(nodes, bs, spread, stride int, rng *rand.Rand) *csr {
	nbr := make([][]int, nodes)
	for v := range nodes {
		for u := max(v-1, 0); u <= min(v+1, nodes-1); u++ {
			nbr[v] = append(nbr[v], u)
		}
	}
	for k := 1; k <= spread && k*stride < nodes; k++ {
		u := k * stride
		if u > 1 {
			nbr[0], nbr[u] = append(nbr[0], u), append(nbr[u], 0)
		}
	}
	a := &csr{rows: nodes * bs, cols: nodes * bs, ptr: make([]int, 1, nodes*bs+1)}
	for v := range nodes {
		slices.Sort(nbr[v])
		for d := range bs {
			for _, u := range nbr[v] {
				if v%3 == 0 && d == 0 && u != v {
					continue // the block has its other rows: the rows differ
				}
				for e := range bs {
					x := -rng.Float64()
					if u == v && d == e {
						x = 10
					} else if rng.IntN(5) == 0 {
						x = 0 // in the pattern, not in the norm
					}
					a.col, a.val = append(a.col, int32(u*bs+e)), append(a.val, x)
				}
			}
			a.ptr = append(a.ptr, len(a.col))
		}
	}
	return a
}

// su_nb_fill's four ways (rows alike, the runs' lists, the span's
// bitmap, the merge) each list a node's blocks ascending with the norms
// that su_block sums, bit for bit; su_nb_count's three (staged, bitmap,
// merge) count them; and su_strength on them gives the host's graph.
func TestNodeBlocksModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ways := map[string]bool{}
	for _, c := range []struct{ nodes, bs, spread, stride int }{
		{40, 2, 0, 1},      // rows alike, or the lists
		{400, 3, 60, 5},    // node 0: 2·63 runs and its diagonal, the lists
		{900, 3, 150, 5},   // 2·153+1 runs: the bitmap (fill), the lists (count)
		{9000, 3, 300, 29}, // 2·303+1 runs over 8,700 nodes: the merge (fill), the bitmap (count)
		{9000, 2, 600, 14}, // 604 runs over 8,400 nodes: the merge (both)
	} {
		a := hubBlocks(c.nodes, c.bs, c.spread, c.stride, rng)
		nb := modelNodeBlocks(t, a, c.bs)
		for v := range c.nodes {
			g, _ := modelRuns(a, v, c.bs)
			way := func(capacity int) string {
				switch {
				case len(g) <= capacity:
					return "staged"
				case modelWindow(a, v, c.bs, capacity) != nil:
					return "bitmap"
				}
				return "merge"
			}
			ways["count: "+way(suNbCap)] = true
			if w := way(suNfCap); w == "staged" && modelAlike(a, v, c.bs, g) >= 0 {
				ways["alike"] = true
			} else {
				ways[w] = true
			}
			var want []int32
			for q := a.ptr[v*c.bs]; q < a.ptr[(v+1)*c.bs]; q++ {
				want = append(want, a.col[q]/int32(c.bs))
			}
			want = slices.Compact(slices.Sorted(slices.Values(want)))
			got := nb.ncol[nb.noff[v]:nb.noff[v+1]]
			if !slices.Equal(got, want) {
				t.Fatalf("%v: node %d lists %v, want %v", c, v, got, want)
			}
			for r, u := range got {
				s, _ := modelBlock(a, c.bs, v, int(u))
				if x := nb.bnorm[nb.noff[v]+int64(r)]; math.Float64bits(x) != math.Float64bits(s.Value()) {
					t.Fatalf("%v: block (%d, %d) norm %v, su_block %v", c, v, u, x, s.Value())
				}
			}
		}
		var all int64
		for _, theta := range []float64{0, 0.06} {
			want, err := strengthGraph(newPool(1), a, theta, c.bs)
			if err != nil {
				t.Fatal(err)
			}
			if e := want.Offsets[c.nodes]; theta == 0 {
				all = e
			} else if e == 0 || e == all {
				t.Fatalf("%v: θ %v keeps %d of %d couplings: a test of nothing", c, theta, e, all)
			}
			g, _, bad := modelGraph(t, a, c.bs, theta)
			if bad >= 0 || !slices.Equal(g.Offsets, want.Offsets) || !slices.Equal(g.Adj, want.Adj) {
				t.Fatalf("%v, θ %v: strength graph differs from the host's (asymmetric node %d)", c, theta, bad)
			}
		}
	}
	if len(ways) != 7 {
		t.Fatalf("ways taken: %v, want all seven", ways)
	}
}
