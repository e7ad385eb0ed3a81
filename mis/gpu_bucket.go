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

// useBuckets turns r into a run of MIS-2 by key buckets (mis2b.cuh):
// one launch per bucket, then launches over every key until none is
// left undecided. It needs 16-byte row loads and keys whose primary
// lives in the state byte (or none).
func (r *sweepRun) useBuckets(t gpuTuning) error {
	dg, e := r.dg, r.dg.eng
	r.buckets, r.bshape = t.buckets, t.bucketShape
	if r.bshape <= 0 {
		r.bshape = 2
	}
	r.name = fmt.Sprintf("mis2b_p%d", r.pk)
	if e.fn[r.name] == nil {
		return fmt.Errorf("mis: no kernel %s", r.name)
	}
	r.grid = e.grid(r.name, (int64(dg.n)+tile-1)/tile, blockSize/32)
	r.tail, r.firstName, r.ball = 0, "", nil
	// The buckets, the first launch of the last range, and one more
	// that finds nothing left most of the time.
	r.first, r.batch = r.buckets+2, 2
	r.kf &= kfWords
	if r.pk == pkClass {
		var err error
		if r.classes, err = dg.classCounts(r.cls); err != nil {
			return err
		}
	}
	return nil
}

// bucketKey returns the key threshold of launch pass as its upper and
// lower words: the key of the vertex at rank f·n in decreasing key
// order, f = ((pass+1)/buckets)^shape, and 0 from the last bucket on.
// Hashes are uniform over the vertices, so within a class the rank is
// a fraction of the hash range.
func (r *sweepRun) bucketKey(pass int) (hi, lo uint32) {
	if pass >= r.buckets-1 {
		return 0, 0
	}
	f := math.Pow(float64(pass+1)/float64(r.buckets), r.bshape)
	hashAt := func(g float64) uint32 { return uint32(min((1-g)*(1<<32), 1<<32-1)) }
	if r.classes == nil {
		return 0, hashAt(f)
	}
	var total int64
	for _, c := range r.classes {
		total += c
	}
	want := f * float64(total)
	var above int64
	for i := len(r.classes) - 1; i >= 0; i-- {
		c := r.classes[i]
		if c > 0 && float64(above+c) > want {
			return uint32(i), hashAt((want - float64(above)) / float64(c))
		}
		above += c
	}
	return 0, 0
}

// classCounts counts the vertices of each class byte in cls (class_hist
// in helpers.cuh), in the scratch words.
func (dg *DeviceGraph) classCounts(cls *cuda.Buffer) ([]int64, error) {
	e := dg.eng
	hist, err := dg.scratch()
	if err != nil {
		return nil, err
	}
	if err := hist.MemsetAsync32(0, e.stream); err != nil {
		return nil, err
	}
	if err := e.launch("class_hist", e.grid("class_hist", int64(dg.n), blockSize), cls, int32(dg.n), hist); err != nil {
		return nil, err
	}
	if err := e.stream.Synchronize(); err != nil {
		return nil, err
	}
	var h [maxSmallRanks]uint32
	if err := cuda.CopyToHost(h[:], hist, 0); err != nil {
		return nil, err
	}
	out := make([]int64, maxSmallRanks)
	for i, c := range h {
		out[i] = int64(c)
	}
	return out, nil
}
