package mis

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/misgrid/misgrid/mesh"
)

// gpuPart is one part of the multi-GPU MIS in the layout its device
// holds: owned vertices get local ids 0..own-1 (increasing global id),
// then come the ghosts, grouped by owning part and increasing global id
// within a group, so that the states a neighbour sends land in one
// contiguous segment. Rows use local ids; keys are those of the global ids.
type gpuPart struct {
	own     int
	global  []int32 // global id of each owned vertex
	offsets []int64 // own+1
	adj     []int32 // local ids
	keys    []uint64
	// ghostOff[q]..ghostOff[q+1] are the local ids of the ghosts owned by
	// part q (offsets counted from own).
	ghostOff []int32
	// send[q] lists the owned local ids that part q keeps as ghosts, in
	// q's ghost order; nil when q keeps none.
	send [][]int32
	// ghostIDs are the global ids of the ghosts, in local order.
	ghostIDs []int32
}

func (p *gpuPart) local() int { return p.own + int(p.ghostOff[len(p.ghostOff)-1]) }

// layoutParts cuts g into the device layout of parts parts (contiguous
// ranges when partition is nil). keys are the whole graph's keys.
func layoutParts(g *mesh.Graph, parts int, partition []int32, keys []uint64) ([]*gpuPart, error) {
	if err := checkSplit(g, parts, partition); err != nil {
		return nil, err
	}
	n := g.N()
	owner := make([]int32, n)
	ownLocal := make([]int32, n)
	counts := make([]int32, parts)
	if partition == nil {
		r := ContiguousRanges(n, parts)
		for q := range parts {
			for v := r[q]; v < r[q+1]; v++ {
				owner[v], ownLocal[v] = int32(q), v-r[q]
			}
			counts[q] = r[q+1] - r[q]
		}
	} else {
		for v, q := range partition {
			owner[v], ownLocal[v] = q, counts[q]
			counts[q]++
		}
	}
	ps := make([]*gpuPart, parts)
	for q := range ps {
		ps[q] = &gpuPart{own: int(counts[q]), global: make([]int32, 0, counts[q]), send: make([][]int32, parts)}
	}
	for v := range n {
		p := ps[owner[v]]
		p.global = append(p.global, int32(v))
	}
	// ghostLocal[u] is u's local id on the part being built; mark is the
	// part that wrote it, so the array is reused without clearing.
	ghostLocal := make([]int32, n)
	mark := make([]int32, n)
	for v := range mark {
		mark[v] = -1
	}
	for q, p := range ps {
		if err := p.build(g, int32(q), owner, ownLocal, ghostLocal, mark, keys); err != nil {
			return nil, err
		}
	}
	// The send list of q to p is p's ghost segment of q, in q's ids.
	for pi, p := range ps {
		for q := range parts {
			lo, hi := p.ghostOff[q], p.ghostOff[q+1]
			if lo == hi {
				continue
			}
			list := make([]int32, hi-lo)
			for i := range list {
				list[i] = ownLocal[p.ghostGlobal(int32(p.own)+lo+int32(i))]
			}
			ps[q].send[pi] = list
		}
	}
	return ps, nil
}

// build fills the rows, ghosts and keys of part q.
func (p *gpuPart) build(g *mesh.Graph, q int32, owner, ownLocal, ghostLocal, mark []int32, keys []uint64) error {
	parts := len(p.send)
	// Ghosts in increasing global id, then grouped by owner (stable).
	var found []int32
	for _, v := range p.global {
		for _, u := range g.Neighbors(v) {
			if u < 0 || int(u) >= g.N() {
				return fmt.Errorf("mis: vertex %d has neighbour %d out of range [0,%d)", v, u, g.N())
			}
			if owner[u] != q && mark[u] != q {
				mark[u] = q
				found = append(found, u)
			}
		}
	}
	slices.Sort(found)
	p.ghostOff = make([]int32, parts+1)
	for _, u := range found {
		p.ghostOff[owner[u]+1]++
	}
	for i := range parts {
		p.ghostOff[i+1] += p.ghostOff[i]
	}
	fill := append([]int32(nil), p.ghostOff[:parts]...)
	p.ghostIDs = make([]int32, len(found))
	for _, u := range found {
		o := owner[u]
		p.ghostIDs[fill[o]] = u
		ghostLocal[u] = int32(p.own) + fill[o]
		fill[o]++
	}
	p.keys = make([]uint64, p.local())
	for i, v := range p.global {
		p.keys[i] = keys[v]
	}
	for i, u := range p.ghostIDs {
		p.keys[p.own+i] = keys[u]
	}
	p.offsets = make([]int64, p.own+1)
	for i, v := range p.global {
		p.offsets[i+1] = p.offsets[i] + int64(g.Degree(v))
	}
	p.adj = make([]int32, p.offsets[p.own])
	parallelRows(p.own, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := p.adj[p.offsets[i]:p.offsets[i+1]]
			for j, u := range g.Neighbors(p.global[i]) {
				if owner[u] == q {
					row[j] = ownLocal[u]
				} else {
					row[j] = ghostLocal[u]
				}
			}
		}
	})
	return nil
}

func (p *gpuPart) ghostGlobal(local int32) int32 { return p.ghostIDs[local-int32(p.own)] }

// parallelRows runs f over [0,n) in chunks on all CPUs.
func parallelRows(n int, f func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), max(1, n/65536))
	var wg sync.WaitGroup
	for k := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(n*k/w, n*(k+1)/w)
		}()
	}
	wg.Wait()
}

// keyParts gives what the distance-1 sweep needs to compute keys on the
// device: the owned vertices' global ids (nil when they are the range
// base, base+1, ...) and the primary rank of every local vertex (nil
// when every key is a bare hash).
func (p *gpuPart) keyParts() (gown []uint32, base uint32, prim []uint32) {
	if p.own > 0 {
		base = uint32(p.global[0])
		if int(p.global[p.own-1])-int(p.global[0]) != p.own-1 {
			gown = make([]uint32, p.own)
			for i, v := range p.global {
				gown[i] = uint32(v)
			}
		}
	}
	for _, k := range p.keys {
		if k>>32 != 0 {
			prim = make([]uint32, len(p.keys))
			for i, k := range p.keys {
				prim[i] = uint32(k >> 32)
			}
			break
		}
	}
	return gown, base, prim
}
