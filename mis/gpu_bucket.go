package mis

import (
	"fmt"
	"math"
	"strings"

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
// (BUCKET2K): by priority kind, mis2bs for hash keys, and the same
// balanced (mis2bd: a block's tiles go to its warps as they ask, and
// pushes skip repeated targets).
func bucketKernels() []string {
	return []string{"mis2b_p0", "mis2b_p1", "mis2b_p2", "mis2bs_p0",
		"mis2bd_p0", "mis2bd_p1", "mis2bd_p2", "mis2bds_p0"}
}

// bucketStage is a run of bucket launches with one kernel: one launch
// per threshold, then launches with threshold last until one leaves
// nothing waiting.
type bucketStage struct {
	name     string
	grid     uint32
	kf       uint32
	keys     []uint64
	last     uint64
	launches int // len(keys) + 1: the launches that run whatever came before
	// list, when not nil, holds the nlist vertices the stage's
	// candidates come from (mis2bl); else every tile is visited.
	list  *cuda.Buffer
	nlist int
	// balanced: the balanced kernels (mis2bd; gpuTuning.balanced).
	balanced bool
}

// key returns the key threshold of the stage's launch i as its upper
// and lower words.
func (s *bucketStage) key(i int) (hi, lo uint32) {
	k := s.last
	if i < len(s.keys) {
		k = s.keys[i]
	}
	return uint32(k >> 32), uint32(k)
}

// useBuckets turns r into a run of MIS-2 by key buckets (mis2b.cuh):
// one launch per bucket, then launches over every key until none is
// left undecided. It needs 16-byte row loads and keys whose primary
// lives in the state byte (or none).
//
// With class keys whose class 0 holds most vertices (a mesh's interior
// under Boundary or Degree) and t.split, the run has two stages: the
// classes above 0, by per-class buckets until none of them is left
// undecided (with t.split 2 from a list of their vertices, so that
// their launches do not visit every tile), then class 0 by the hash
// kernels. Once every vertex of a larger class is decided, the
// undecided ones all lie in class 0 and compare by hash alone, and no
// member of a larger class lies within distance 2 of one (its push made
// that vertex OUT), so the scans and pushes of hash keys, of larger and
// smaller hashes only where rows are scattered (mis2bs), give the same
// set.
func (r *sweepRun) useBuckets(t gpuTuning) error {
	dg := r.dg
	// Measured best (docs/gpu.md, eighth and ninth rounds): γ 3, or 1.5
	// below average degree 10; class keys with buckets over all keys γ
	// 2, as a steeper shape there leaves the first buckets of a large
	// class that follows small ones (a mesh's interior after its
	// boundary) too full. Per-class buckets shape each class on its own
	// and take γ 3 again (5 % on hex27 under Degree), as does class 0
	// alone, by hash, in a split run.
	hashShape := 3.0
	if dg.m < 10*int64(dg.n) {
		hashShape = 1.5
	}
	buckets, shape := t.buckets, t.bucketShape
	if shape <= 0 {
		shape = hashShape
		if r.pk == pkClass && !t.classBuckets {
			shape = 2
		}
	}
	var counts []int64
	if r.pk == pkClass {
		var err error
		if counts, err = dg.classCounts(r.cls); err != nil {
			return err
		}
	}
	split := r.pk == pkClass && t.split > 0 && t.classBuckets && 2*counts[0] >= int64(dg.n) && counts[0] < int64(dg.n)
	// The kernel reads KF_WORDS and the flush threshold; the other bits
	// name its variant and stay for the report.
	kf := r.kf&kfWords | uint32(min(max(t.flush, 0), flushMax))<<8
	hashStage := func() (*bucketStage, error) {
		s := &bucketStage{name: "mis2b", kf: kf}
		b, scan := buckets, r.kf&kfScanLarger != 0
		if (t.kfAuto || t.farBuckets > 0) && dg.m >= 10*int64(dg.n) {
			// Scans of larger keys only pay where rows are scattered
			// (11 % on the random graph, 2 % on relabelled hex27) and
			// a scan reads enough states for the hashes to save loads;
			// on local rows the word-wise pushes (KF_WORDS) win
			// (docs/gpu.md).
			far, err := dg.scattered()
			if err != nil {
				return nil, err
			}
			scan = scan || far && t.kfAuto
			if far && t.farBuckets > 0 {
				b = t.farBuckets
			}
		}
		if scan {
			s.name, s.kf = "mis2bs", s.kf|kfScanLarger
		}
		hs := shape
		if t.bucketShape <= 0 {
			hs = hashShape
		}
		s.keys = bucketThresholds(b, hs, nil, false)
		return s, nil
	}
	var stages []*bucketStage
	switch {
	case r.pk == pkHash:
		s, err := hashStage()
		if err != nil {
			return err
		}
		stages = append(stages, s)
	case split:
		keys := aboveClass0(bucketThresholds(buckets, shape, counts, true))
		s2, err := hashStage()
		if err != nil {
			return err
		}
		s2.name += "_p0"
		s1 := &bucketStage{name: "mis2b", kf: kf, keys: keys, last: 1 << 32}
		if t.split > 1 {
			s1.name = "mis2bl"
			if err := r.listClasses(s1); err != nil {
				return err
			}
		}
		stages = append(stages, s1, s2)
	default:
		stages = append(stages, &bucketStage{name: "mis2b", kf: kf, keys: bucketThresholds(buckets, shape, counts, t.classBuckets)})
	}
	r.stages = r.stages[:0]
	r.buckets, r.kf = 0, 0
	for i, s := range stages {
		if i == 0 {
			s.name = fmt.Sprintf("%s_p%d", s.name, r.pk)
		}
		if t.balanced || t.balancedHash && r.pk == pkHash {
			// The balanced kernels: mis2b_p0 -> mis2bd_p0, mis2bs_p0
			// -> mis2bds_p0, mis2bl_p1 -> mis2bdl_p1.
			s.name = "mis2bd" + strings.TrimPrefix(s.name, "mis2b")
			s.balanced = true
		}
		if i == 0 {
			r.name = s.name
		}
		// A warp takes a tile of 128 vertices, or 32 of a list.
		items := (int64(dg.n) + tile - 1) / tile
		if s.list != nil {
			items = (int64(s.nlist) + 31) / 32
		}
		if r.dg.eng.fn[s.name] == nil {
			return fmt.Errorf("mis: no kernel %s", s.name)
		}
		s.grid = r.dg.eng.grid(s.name, items, blockSize/32)
		r.kf |= s.kf // for the report
		// The buckets and the first launch of the last range.
		s.launches = len(s.keys) + 1
		r.buckets += s.launches
		r.stages = append(r.stages, *s)
	}
	r.grid = r.stages[0].grid
	r.tail, r.firstName, r.ball = 0, "", nil
	// Checks after the first of a stage (sweeps) come every 2 launches.
	r.batch = 2
	return nil
}

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

// listClasses lists the vertices of the classes above 0 for stage s, in
// the ball buffer, which bucket runs do not use otherwise.
func (r *sweepRun) listClasses(s *bucketStage) error {
	dg := r.dg
	small, err := dg.scratch()
	if err != nil {
		return err
	}
	var c [1]uint32
	if err := dg.eng.countWords(small, c[:], "class_list", int64(dg.n), r.cls, int32(dg.n), dg.ws.ball); err != nil {
		return err
	}
	s.list, s.nlist = dg.ws.ball, int(c[0])
	return nil
}

// stage returns the bucket stage of launch pass and the launch's index
// within it.
func (r *sweepRun) stage(pass int) (*bucketStage, int) {
	for i := len(r.stageAt) - 1; i > 0; i-- {
		if r.stageAt[i] <= pass {
			return &r.stages[i], pass - r.stageAt[i]
		}
	}
	return &r.stages[0], pass
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
