package misgpu

import "math"

// kfAlways (KF_ALWAYS in mis2b.cuh) runs a bucket launch even when the
// one before left nothing undecided: a bucket's launch must run whatever
// the earlier buckets left.
const kfAlways = 64

// flushMax is FLUSHB in mis2b.cuh: the most candidates a warp lists
// before it decides them (its list holds a tile more).
const flushMax = 32

// kfScanLarger (the bit of MIS-1's KF_SCAN), hash keys: selects the
// kernel whose scans read the states of larger keys only and whose
// pushes OR OUT into smaller ones only (mis2bs: hashes traded for loads
// and reductions, as MIS-1 does on scattered rows).
const kfScanLarger = 1

// bucketKernels lists the bucket kernels that mis.cu instantiates
// (BUCKET2K): hash and class keys (rank keys never go by buckets),
// mis2bs for hash keys, and the same balanced (mis2bd: a block's tiles
// go to its warps as they ask, and pushes skip repeated targets).
func bucketKernels() []string {
	return []string{"mis2b_p0", "mis2b_p1", "mis2bs_p0", "mis2bd_p0", "mis2bd_p1", "mis2bds_p0"}
}

// listKernels are the bucket kernels whose candidates come from a list
// of vertex ids (BUCKET2L: the first stage of a split run).
var listKernels = []string{"mis2bl_p1", "mis2bdl_p1"}

// aboveClass0 keeps the thresholds of the classes above 0 for the first
// stage of a split run; its draining launches take 1<<32 (all of class
// 1 and up), so that threshold goes too.
func aboveClass0(keys []uint64) []uint64 {
	var out []uint64
	for _, k := range keys {
		if k > 1<<32 {
			out = append(out, k)
		}
	}
	return out
}

// dominant says whether one class holds at least half the vertices of
// counts (a mesh's interior under Boundary).
func dominant(counts []int64) bool {
	var n, big int64
	for _, c := range counts {
		n += c
		big = max(big, c)
	}
	return n > 0 && 2*big >= n
}

// hashAt is the hash above which a fraction g of uniform hashes lies.
func hashAt(g float64) uint64 { return uint64(min((1-g)*(1<<32), 1<<32-1)) }

// bucketThresholds returns the key thresholds of the bucket launches
// but the last (which takes every key), in decreasing order. With hash
// keys, launch i takes the top ((i+1)/b)^shape of the vertices: few in
// the first launches, where nothing is decided yet and candidates
// would wait on each other, more later, when most vertices are OUT.
// counts, when not nil, holds the vertices per class (class keys).
//
// By default the shape runs over all vertices in key order, classes
// and all, which suits classes mixed through the graph (degrees in a
// random graph). With perClass, where one class holds most vertices
// and smaller ones come before it (the boundary of a mesh before its
// interior, under Boundary or Degree priorities), each class gets
// buckets of its own, the same shape over its vertices: at least 4 for
// a class of more than n/b², b for the largest, buckets of fewer than
// n/(4b²) vertices merged into the next. The small classes lie apart
// and are dense where they lie, and the large one starts with nearly
// all its vertices undecided, so without buckets of their own their
// candidates wait on each other (docs/gpu.md).
func bucketThresholds(b int, shape float64, counts []int64, perClass bool) []uint64 {
	var n, big int64
	for _, c := range counts {
		n += c
		big = max(big, c)
	}
	var out []uint64
	if counts == nil || !dominant(counts) || !perClass {
		if counts == nil {
			for i := 1; i < b; i++ {
				out = append(out, hashAt(math.Pow(float64(i)/float64(b), shape)))
			}
			return out
		}
		for i := 1; i < b; i++ {
			want := math.Pow(float64(i)/float64(b), shape) * float64(n)
			var above int64
			for c := len(counts) - 1; c >= 0; c-- {
				if k := counts[c]; k > 0 && float64(above+k) > want {
					out = append(out, uint64(c)<<32|hashAt((want-float64(above))/float64(k)))
					break
				}
				above += counts[c]
			}
		}
		return out
	}
	minBucket := float64(n) / float64(4*b*b)
	last := 0.0 // the rank of the last threshold kept
	at := 0.0
	for c := len(counts) - 1; c >= 0; c-- {
		k := float64(counts[c])
		if k == 0 {
			continue
		}
		bc := max(1, int(math.Round(float64(b)*math.Sqrt(k/float64(n)))))
		if counts[c] == big {
			bc = b
		} else if k > float64(n)/float64(b*b) {
			bc = max(bc, 4)
		}
		for j := 1; j <= bc; j++ {
			g := math.Pow(float64(j)/float64(bc), shape)
			if at+g*k-last < minBucket {
				continue
			}
			last = at + g*k
			if j == bc {
				// The whole class: every key of it, down to hash 0.
				out = append(out, uint64(c)<<32)
			} else {
				out = append(out, uint64(c)<<32|hashAt(g))
			}
		}
		at += k
	}
	// The last threshold would take every key: the final launches do.
	for len(out) > 0 && out[len(out)-1] == 0 {
		out = out[:len(out)-1]
	}
	return out
}
