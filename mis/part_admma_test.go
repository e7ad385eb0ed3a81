package mis_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
	"github.com/misgrid/misgrid/mis/mistest"
	"pgregory.net/rapid"
)

// admmaKeys are the keys of the order ADMMA follows: part, then boundary
// vertices before interior ones, then the priority key (whose primary
// rank must fit in two bits here).
func partADMMAKeys(g *mesh.Graph, part []int32, p mis.Priority) []uint64 {
	keys, err := mis.Keys(g, p)
	if err != nil {
		panic(err)
	}
	out := make([]uint64, g.N())
	for v := range out {
		b := uint64(0)
		for _, u := range g.Neighbors(int32(v)) {
			if part[u] != part[v] {
				b = 1
			}
		}
		prim := keys[v] >> 32
		if prim > 3 {
			panic("primary rank too large for this test")
		}
		out[v] = uint64(part[v])<<35 | b<<34 | keys[v]
	}
	return out
}

func partContiguous(n, k int) []int32 {
	r := mis.ContiguousRanges(n, k)
	p := make([]int32, n)
	for q := range k {
		for v := r[q]; v < r[q+1]; v++ {
			p[v] = int32(q)
		}
	}
	return p
}

// checkADMMA runs ADMMA on g and compares its set with the greedy set of
// the (part, boundary, key) order, which the two rules must produce.
func partCheckADMMA(g *mesh.Graph, part []int32, k int, p mis.Priority) (*mis.PartResult, error) {
	r, err := mis.ComputePartitioned(context.Background(), g, mis.PartOptions{Priority: p, Parts: k, Partition: part, Mode: mis.ADMMA})
	if err != nil {
		return nil, err
	}
	if part == nil {
		part = partContiguous(g.N(), k)
	}
	want, err := mis.Greedy(g, partADMMAKeys(g, part, p), 1)
	if err != nil {
		return nil, err
	}
	for v := range want.In {
		if r.In[v] != want.In[v] {
			return nil, fmt.Errorf("vertex %d (part %d): ADMMA in=%v, greedy of the ADMMA order in=%v", v, part[v], r.In[v], want.In[v])
		}
	}
	if r.Size != want.Size {
		return nil, fmt.Errorf("size %d, set has %d", r.Size, want.Size)
	}
	if err := mis.Verify(g, r.In, 1); err != nil {
		return nil, err
	}
	if r.OuterIterations < 1 && g.N() > 0 {
		return nil, fmt.Errorf("%d outer iterations", r.OuterIterations)
	}
	return r, nil
}

func TestADMMAIsGreedyOfItsOrder(t *testing.T) {
	ks := []int{1, 2, 3, 7}
	if testing.Short() {
		ks = []int{2, 7}
	}
	for _, c := range mistest.Cases() {
		for _, k := range ks {
			for _, p := range []mis.Priority{{Kind: mis.Hash, Seed: 9}, {Kind: mis.Boundary, Seed: 1}} {
				if _, err := partCheckADMMA(c.Graph, nil, k, p); err != nil {
					t.Errorf("%s k=%d %v: %v", c.Name, k, p.Kind, err)
				}
				if _, err := partCheckADMMA(c.Graph, partHashed(c.Graph.N(), k, 2), k, p); err != nil {
					t.Errorf("%s hashed k=%d %v: %v", c.Name, k, p.Kind, err)
				}
			}
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		g := mistest.DrawGraph(rt)
		k := rapid.IntRange(1, 6).Draw(rt, "k")
		part := make([]int32, g.N())
		for v := range part {
			part[v] = int32(rapid.IntRange(0, k-1).Draw(rt, "part"))
		}
		if _, err := partCheckADMMA(g, part, k, mis.Priority{Kind: mis.Boundary, Seed: rapid.Uint64().Draw(rt, "seed")}); err != nil {
			rt.Fatal(err)
		}
	})
}

// boxPartition cuts an nx×ny×nz grid into bx×by×bz boxes, the domain
// decomposition a FEM code would hand over.
func partBoxes(nx, ny, nz, bx, by, bz int) []int32 {
	p := make([]int32, 0, nx*ny*nz)
	for k := range nz {
		for j := range ny {
			for i := range nx {
				p = append(p, int32(i*bx/nx+bx*(j*by/ny+by*(k*bz/nz))))
			}
		}
	}
	return p
}

// On well-partitioned meshes a boundary vertex waits only for the few
// parts that meet it, so the outer iterations stay few however many parts
// there are (Adams reports at most 4 on FE meshes).
func TestADMMAOuterIterationsFew(t *testing.T) {
	n := 24
	g := partGrid7(n, n, n)
	g.Class = partClasses(n, n, n)
	p := mis.Priority{Kind: mis.Boundary, Seed: 5}
	for _, b := range [][3]int{{2, 1, 1}, {2, 2, 1}, {2, 2, 2}, {3, 3, 3}} {
		k := b[0] * b[1] * b[2]
		r, err := partCheckADMMA(g, partBoxes(n, n, n, b[0], b[1], b[2]), k, p)
		if err != nil {
			t.Fatalf("%v boxes: %v", b, err)
		}
		t.Logf("%v boxes: %d outer iterations, %d bytes", b, r.OuterIterations, r.Bytes())
		if r.OuterIterations > 4 {
			t.Errorf("%v boxes: %d outer iterations, want at most 4", b, r.OuterIterations)
		}
	}
}

func TestADMMARejectsDistance2(t *testing.T) {
	_, err := mis.ComputePartitioned(context.Background(), partGrid7(3, 3, 3), mis.PartOptions{Distance: 2, Mode: mis.ADMMA, Parts: 2})
	if err == nil {
		t.Fatal("ADMMA at distance 2 gave no error")
	}
}
