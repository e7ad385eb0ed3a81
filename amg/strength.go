package amg

import (
	"fmt"
	"math"
	"slices"

	"github.com/misgrid/misgrid/mesh"
)

// strengthGraph returns the graph of strong couplings between the nodes of
// a (bs interleaved dofs per node), the graph mesh.FromCSR builds with
// MatrixOptions{Theta: theta, BlockSize: bs}: u–v is strong when
// ‖A_uv‖ > θ·sqrt(‖A_uu‖‖A_vv‖) (Frobenius norms; absolute values for
// scalars), and at θ = 0 wherever the pattern has an entry. An edge strong
// in either direction is kept, so the graph is symmetric even where
// rounding left a Galerkin product slightly unsymmetric. Nodes whose rows
// hold no nonzero off-diagonal entry are flagged in Dirichlet and get no
// edges. This version works on the package's sorted csr directly, without
// the conversion and validation that FromCSR needs for arbitrary input;
// a test checks that the two agree.
func strengthGraph(p pool, a *csr, theta float64, bs int) (*mesh.Graph, error) {
	if a.rows%bs != 0 {
		return nil, fmt.Errorf("amg: %d rows are not a multiple of the block size %d", a.rows, bs)
	}
	nodes := a.rows / bs
	dn, dir, anyDir := nodeNorms(p, a, theta, bs)
	// Directed strong edges, range by range into buffers of their own,
	// then joined.
	cnt := make([]int, nodes+1)
	w := p.workers
	if w > nodes {
		w = nodes
	}
	if w < 1 || a.nnz() < minParallel {
		w = 1
	}
	parts := make([]strongPart, w)
	for t := range parts {
		parts[t].lo, parts[t].hi = nodes*t/w, nodes*(t+1)/w
	}
	p.forRange(w, a.nnz(), func(tlo, thi int) {
		for t := tlo; t < thi; t++ {
			parts[t].edges(a, theta, bs, dn, dir, cnt)
		}
	})
	for v := 0; v < nodes; v++ {
		cnt[v+1] += cnt[v]
	}
	s := parts[0].adj
	if w > 1 {
		s = make([]int32, cnt[nodes])
		for t := range parts {
			copy(s[cnt[parts[t].lo]:], parts[t].adj)
		}
	}
	off, adj := unionTranspose(s, cnt)
	g := &mesh.Graph{Offsets: off, Adj: adj}
	if anyDir {
		g.Dirichlet = dir
	}
	return g, nil
}

// nodeNorms returns each node's ‖A_vv‖ (scaled so that no square
// overflows; not computed at θ = 0, where every coupling is strong) and
// whether the node's rows couple to nothing (dir), and whether any does.
func nodeNorms(p pool, a *csr, theta float64, bs int) (dn []float64, dir []bool, anyDir bool) {
	nodes := a.rows / bs
	dn = make([]float64, nodes)
	dir = make([]bool, nodes)
	p.forRange(nodes, a.nnz(), func(lo, hi int) {
		for v := lo; v < hi; v++ {
			var s mesh.Norm2
			off := false
			v0, v1 := int32(v*bs), int32(v*bs+bs) // the node's columns
			for i := v * bs; i < (v+1)*bs; i++ {
				for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
					c := a.col[k]
					if theta != 0 && c >= v0 && c < v1 {
						s.Add(a.val[k])
					}
					off = off || (int(c) != i && a.val[k] != 0)
				}
			}
			if theta != 0 {
				dn[v] = s.Value()
			}
			dir[v] = !off
		}
	})
	for _, d := range dir {
		anyDir = anyDir || d
	}
	return dn, dir, anyDir
}

// strongPart is a range of nodes and their directed strong edges.
type strongPart struct {
	lo, hi int
	adj    []int32
}

// edges lists the strong edges of the part's nodes, row by row, and
// each node's count in cnt[v+1].
func (pt *strongPart) edges(a *csr, theta float64, bs int, dn []float64, dir []bool, cnt []int) {
	nodes := a.rows / bs
	var mark []int32
	var sum []mesh.Norm2
	var list []int32
	// Room for every entry of the range (an exact bound for scalars, for
	// systems where a node's rows share their pattern): grown by append,
	// the list would leave several times its size in garbage and copies.
	pt.adj = make([]int32, 0, (a.ptr[pt.hi*bs]-a.ptr[pt.lo*bs])/bs)
	if bs > 1 {
		mark = make([]int32, nodes)
		for i := range mark {
			mark[i] = -1
		}
		sum = make([]mesh.Norm2, nodes)
	}
	for v := pt.lo; v < pt.hi; v++ {
		start := len(pt.adj)
		if dir[v] {
			// No edges.
		} else if bs == 1 {
			for k := a.ptr[v]; k < a.ptr[v+1]; k++ {
				u := a.col[k]
				x := a.val[k]
				if int(u) != v && !dir[u] && (theta == 0 || math.Abs(x) > theta*math.Sqrt(dn[v])*math.Sqrt(dn[u])) {
					pt.adj = append(pt.adj, u)
				}
			}
		} else {
			list = list[:0]
			for i := v * bs; i < (v+1)*bs; i++ {
				for k := a.ptr[i]; k < a.ptr[i+1]; k++ {
					u := a.col[k] / int32(bs)
					if int(u) == v {
						continue
					}
					if mark[u] != int32(v) {
						mark[u] = int32(v)
						sum[u] = mesh.Norm2{}
						list = append(list, u)
					}
					sum[u].Add(a.val[k])
				}
			}
			slices.Sort(list)
			for _, u := range list {
				if x := sum[u].Value(); !dir[u] && (theta == 0 || x > theta*math.Sqrt(dn[v])*math.Sqrt(dn[u])) {
					pt.adj = append(pt.adj, u)
				}
			}
		}
		cnt[v+1] = len(pt.adj) - start
	}
}

// unionTranspose returns the graph of the directed edges s (rows ending
// at cnt, sorted) and of their reverses, rows sorted. When s holds every
// reverse edge already (a symmetric pattern, as assembly leaves it), s is
// the graph and nothing is merged.
func unionTranspose(s []int32, cnt []int) ([]int64, []int32) {
	nodes := len(cnt) - 1
	tp := make([]int, nodes+1)
	for _, u := range s {
		tp[u+1]++
	}
	for v := 0; v < nodes; v++ {
		tp[v+1] += tp[v]
	}
	ts := make([]int32, len(s))
	pos := slices.Clone(tp[:nodes])
	for v := 0; v < nodes; v++ {
		for _, u := range s[cnt[v]:cnt[v+1]] {
			ts[pos[u]] = int32(v)
			pos[u]++
		}
	}
	off := make([]int64, nodes+1)
	if slices.Equal(cnt, tp) && slices.Equal(s, ts) {
		for v := range off {
			off[v] = int64(cnt[v])
		}
		return off, s
	}
	adj := make([]int32, 0, len(s)+len(s)/8)
	for v := 0; v < nodes; v++ {
		x, y := s[cnt[v]:cnt[v+1]], ts[tp[v]:tp[v+1]]
		i, j := 0, 0
		for i < len(x) || j < len(y) {
			switch {
			case j == len(y) || (i < len(x) && x[i] < y[j]):
				adj = append(adj, x[i])
				i++
			case i == len(x) || y[j] < x[i]:
				adj = append(adj, y[j])
				j++
			default:
				adj = append(adj, x[i])
				i++
				j++
			}
		}
		off[v+1] = int64(len(adj))
	}
	return off, adj
}
