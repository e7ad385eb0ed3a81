package mis

import (
	"fmt"
	"math"

	"github.com/misgrid/misgrid/cuda"
)

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
// (BUCKET2K): by priority kind, and mis2bs for hash keys.
func bucketKernels() []string {
	return []string{"mis2b_p0", "mis2b_p1", "mis2b_p2", "mis2bs_p0"}
}

// useBuckets turns r into a run of MIS-2 by key buckets (mis2b.cuh):
// one launch per bucket, then launches over every key until none is
// left undecided. It needs 16-byte row loads and keys whose primary
// lives in the state byte (or none).
func (r *sweepRun) useBuckets(t gpuTuning) error {
	dg, e := r.dg, r.dg.eng
	r.buckets, r.bshape = t.buckets, t.bucketShape
	if r.bshape <= 0 {
		// Measured best (docs/gpu.md, eighth and ninth rounds): γ 3, or
		// 1.5 below average degree 10; class keys with buckets over all
		// keys γ 2, as a steeper shape there leaves the first buckets of
		// a large class that follows small ones (a mesh's interior after
		// its boundary) too full. Per-class buckets shape each class on
		// its own and take γ 3 again (5 % on hex27 under Degree).
		r.bshape = 3
		if dg.m < 10*int64(dg.n) {
			r.bshape = 1.5
		}
		if r.pk == pkClass && !t.classBuckets {
			r.bshape = 2
		}
	}
	if (t.kfAuto || t.farBuckets > 0) && r.pk == pkHash && dg.m >= 10*int64(dg.n) {
		// Scans of larger keys only pay where rows are scattered
		// (11 % on the random graph, 2 % on relabelled hex27) and a scan
		// reads enough states for the hashes to save loads; on local
		// rows the word-wise pushes (KF_WORDS) win (docs/gpu.md).
		far, err := dg.scattered()
		if err != nil {
			return err
		}
		if far && t.kfAuto {
			r.kf |= kfScanLarger
		}
		if far && t.farBuckets > 0 {
			r.buckets = t.farBuckets
		}
	}
	r.name = "mis2b"
	if r.kf&kfScanLarger != 0 && r.pk == pkHash {
		r.name = "mis2bs"
	}
	r.name = fmt.Sprintf("%s_p%d", r.name, r.pk)
	if e.fn[r.name] == nil {
		return fmt.Errorf("mis: no kernel %s", r.name)
	}
	r.grid = e.grid(r.name, (int64(dg.n)+tile-1)/tile, blockSize/32)
	r.tail, r.firstName, r.ball = 0, "", nil
	var counts []int64
	if r.pk == pkClass {
		var err error
		if counts, err = dg.classCounts(r.cls); err != nil {
			return err
		}
	}
	r.bucketKeys = bucketThresholds(r.buckets, r.bshape, counts, t.classBuckets)
	// The buckets, the first launch of the last range, and one more
	// that finds nothing left most of the time.
	r.buckets = len(r.bucketKeys) + 1
	r.first, r.batch = r.buckets+1, 2
	// The kernel reads KF_WORDS and the flush threshold; the other bits
	// named its variant above and stay for the report.
	r.kf = r.kf&(kfWords|kfScanLarger) | uint32(min(max(t.flush, 0), flushMax))<<8
	return nil
}

// bucketKey returns the key threshold of launch pass as its upper and
// lower words (0 from the last bucket on).
func (r *sweepRun) bucketKey(pass int) (hi, lo uint32) {
	if pass >= len(r.bucketKeys) {
		return 0, 0
	}
	k := r.bucketKeys[pass]
	return uint32(k >> 32), uint32(k)
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
// candidates wait on each other (docs/gpu.md, eighth round).
func bucketThresholds(b int, shape float64, counts []int64, perClass bool) []uint64 {
	var n, big int64
	for _, c := range counts {
		n += c
		big = max(big, c)
	}
	var out []uint64
	if counts == nil || 2*big < n || !perClass {
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

// classCounts counts the vertices of each class byte in cls (class_hist
// in helpers.cuh), in the scratch words.
func (dg *DeviceGraph) classCounts(cls *cuda.Buffer) ([]int64, error) {
	hist, err := dg.scratch()
	if err != nil {
		return nil, err
	}
	var h [maxSmallRanks]uint32
	if err := dg.eng.countWords(hist, h[:], "class_hist", int64(dg.n), cls, int32(dg.n)); err != nil {
		return nil, err
	}
	out := make([]int64, maxSmallRanks)
	for i, c := range h {
		out[i] = int64(c)
	}
	return out, nil
}
