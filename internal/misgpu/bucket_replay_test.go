package misgpu_test

import (
	"slices"
	"testing"

	"github.com/misgrid/misgrid/mesh"

	"github.com/misgrid/misgrid/internal/genspec"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/mis"
	"github.com/misgrid/misgrid/mis/mistest"
)

// bucketWork is what a synchronous replay of the bucket launches does:
// candidates scanned, members, and the row entries that the scans and
// the pushes touch.
type bucketWork struct {
	candidates, members, waits int
	scanned, pushed            int64
}

// replayBuckets decides the vertices bucket by bucket as the launches
// do, each bucket's candidates in decreasing key order (so that nothing
// waits on a later launch: a wait is counted when a larger candidate of
// the same bucket lies within distance 2).
func replayBuckets(g *mesh.Graph, keys []uint64, ths []uint64) bucketWork {
	n := g.N()
	st := make([]uint8, n)
	order := mis.Order(keys)
	var w bucketWork
	cand := make([]bool, n)
	rows := func(v int32, f func(x int32)) int64 {
		var k int64
		for _, u := range append([]int32{v}, g.Neighbors(v)...) {
			for _, x := range g.Neighbors(u) {
				k++
				if x != v {
					f(x)
				}
			}
		}
		return k
	}
	lo := 0
	for b := 0; b <= len(ths); b++ {
		hi := n
		if b < len(ths) {
			hi = lo
			for hi < n && keys[order[hi]] >= ths[b] {
				hi++
			}
		}
		var cs []int32
		for _, v := range order[lo:hi] {
			if st[v] == mUnd {
				cs = append(cs, v)
				cand[v] = true
			}
		}
		for _, v := range cs {
			waits := false
			w.scanned += rows(v, func(x int32) { waits = waits || cand[x] && keys[x] > keys[v] && st[x] != mOut })
			if waits {
				w.waits++
			}
			if st[v] != mUnd {
				continue
			}
			st[v] = mIn
			w.members++
			w.pushed += rows(v, func(x int32) { st[x] = mOut })
		}
		for _, v := range cs {
			cand[v] = false
		}
		w.candidates += len(cs)
		lo = hi
	}
	return w
}

// The default bucket shapes keep the work near that of the greedy loop
// itself: few candidates that are not members, and scans that read less
// than the adjacency. Uniform buckets (shape 1 over 12 buckets on the
// 27-point mesh) would not: this test fails for them.
func TestBucketReplayWork(t *testing.T) {
	for _, c := range []struct {
		name string
		g    *mesh.Graph
	}{
		{"hex27", mesh.Hex27Graph(40, 40, 40)},
		{"grid7", mesh.Grid7Graph(60, 60, 60)},
		{"random", mesh.RandomGraph(200_000, 16, 3)},
	} {
		keys, err := mis.Keys(c.g, mis.Priority{Kind: mis.Hash})
		if err != nil {
			t.Fatal(err)
		}
		b, shape := 12, 3.0
		if 10*c.g.N() > len(c.g.Adj) {
			b, shape = 8, 1.5
		}
		w := replayBuckets(c.g, keys, misgpu.BucketThresholds(b, shape, nil, false))
		if want := mistest.Greedy(t, c.g, keys, 2).Size; w.members != want {
			t.Fatalf("%s: replay found %d members, greedy %d", c.name, w.members, want)
		}
		nnz := int64(len(c.g.Adj))
		t.Logf("%s: %d candidates for %d members (%d waits); scans %.2f, pushes %.2f of the adjacency",
			c.name, w.candidates, w.members, w.waits, float64(w.scanned)/float64(nnz), float64(w.pushed)/float64(nnz))
		if float64(w.candidates) > 1.5*float64(w.members) {
			t.Errorf("%s: %d candidates for %d members", c.name, w.candidates, w.members)
		}
		if w.scanned > nnz {
			t.Errorf("%s: scans read %.2f of the adjacency", c.name, float64(w.scanned)/float64(nnz))
		}
	}
}

// Under the Degree priority a mesh's boundary classes come before its
// interior; buckets per class (bucketThresholds with perClass) keep the
// interior's first buckets small, and the replay must show it: far
// fewer candidates than buckets shaped over all keys, and scans below a
// pass over the adjacency.
func TestBucketReplayPerClass(t *testing.T) {
	g := mesh.Hex27Graph(40, 40, 40)
	ranked, counts := rankedKeys(t, g, mis.Degree)
	all := replayBuckets(g, ranked, misgpu.BucketThresholds(12, 3, counts, false))
	per := replayBuckets(g, ranked, misgpu.BucketThresholds(12, 3, counts, true))
	nnz := float64(len(g.Adj))
	t.Logf("over all keys: %d candidates, scans %.2f; per class: %d candidates, scans %.2f (%d members)",
		all.candidates, float64(all.scanned)/nnz, per.candidates, float64(per.scanned)/nnz, per.members)
	if per.members != all.members {
		t.Fatalf("%d members per class, %d over all keys", per.members, all.members)
	}
	if 4*per.candidates > 3*all.candidates || float64(per.scanned) > nnz {
		t.Errorf("per class: %d candidates (over all keys %d), scans %.2f of the adjacency",
			per.candidates, all.candidates, float64(per.scanned)/nnz)
	}
}

// On a tet mesh refined by splitting edges, Degree ranks twenty degrees
// that lie unevenly (low ones on and near the boundary): over all keys,
// its buckets hold candidates that wait on each other far more than
// hash keys' buckets do. The defaults give such class keys more buckets
// (MixedBuckets) than hash keys on the same rows, and the replay must
// show why: with the hash keys' count Degree scans more than the
// adjacency, with its own about a fifth less (at least 15 %).
func TestBucketReplayMixed(t *testing.T) {
	g, _, err := genspec.Generate("tet:8:refine=2")
	if err != nil {
		t.Fatal(err)
	}
	tu := misgpu.Defaults(misgpu.Shape{N: g.N(), M: g.NumEdges(), MaxDeg: int64(g.MaxDegree()), Vec: true}, 2)
	if tu.MixedBuckets <= tu.Buckets {
		t.Fatalf("defaults: %d buckets for mixed class keys, %d for hash keys", tu.MixedBuckets, tu.Buckets)
	}
	nnz := float64(len(g.Adj))
	hkeys, err := mis.Keys(g, mis.Priority{Kind: mis.Hash})
	if err != nil {
		t.Fatal(err)
	}
	hash := replayBuckets(g, hkeys, misgpu.BucketThresholds(tu.Buckets, 2, nil, false))
	keys, counts := rankedKeys(t, g, mis.Degree)
	few := replayBuckets(g, keys, misgpu.BucketThresholds(tu.Buckets, 2, counts, true))
	own := replayBuckets(g, keys, misgpu.BucketThresholds(tu.MixedBuckets, 2, counts, true))
	t.Logf("hash, %d buckets: %d candidates for %d members, scans %.2f; Degree, %d: %d for %d, scans %.2f; %d: %d, scans %.2f",
		tu.Buckets, hash.candidates, hash.members, float64(hash.scanned)/nnz, tu.Buckets, few.candidates, few.members,
		float64(few.scanned)/nnz, tu.MixedBuckets, own.candidates, float64(own.scanned)/nnz)
	if float64(hash.candidates) > 1.8*float64(hash.members) || float64(hash.scanned) > nnz {
		t.Errorf("hash keys: %d candidates for %d members, scans %.2f of the adjacency", hash.candidates, hash.members, float64(hash.scanned)/nnz)
	}
	if float64(few.candidates) < 2*float64(few.members) || float64(few.scanned) < nnz {
		t.Errorf("Degree with %d buckets: only %d candidates for %d members, scans %.2f", tu.Buckets, few.candidates, few.members, float64(few.scanned)/nnz)
	}
	if 20*own.scanned > 17*few.scanned {
		t.Errorf("Degree with %d buckets scans %.2f, with %d %.2f", tu.MixedBuckets, float64(own.scanned)/nnz, tu.Buckets, float64(few.scanned)/nnz)
	}
}

// rankedKeys returns the keys of kind on g with the primaries replaced
// by their dense ranks, as the device's class bytes hold them, and the
// vertices of each rank.
func rankedKeys(t *testing.T, g *mesh.Graph, kind mis.PriorityKind) ([]uint64, []int64) {
	t.Helper()
	keys, err := mis.Keys(g, mis.Priority{Kind: kind})
	if err != nil {
		t.Fatal(err)
	}
	var prims []uint64
	for _, k := range keys {
		prims = append(prims, k>>32)
	}
	slices.Sort(prims)
	prims = slices.Compact(prims)
	counts := make([]int64, misgpu.MaxSmallRanks)
	ranked := make([]uint64, len(keys))
	for v, k := range keys {
		r, _ := slices.BinarySearch(prims, k>>32)
		counts[r]++
		ranked[v] = uint64(r)<<32 | k&0xffffffff
	}
	return ranked, counts
}
