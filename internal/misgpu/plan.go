package misgpu

import (
	"fmt"
	"math"
	"strings"
)

// Key is the kind of key the kernels compare (PK_* in mis.cu).
type Key int

const (
	KeyHash  Key = 0 // the hash of the vertex id alone
	KeyClass Key = 1 // a class byte in the state (boundary classes, small ranks), then the hash
	KeyPrim  Key = 2 // a 32-bit rank per vertex, then the hash
)

// Shape is what a plan depends on: the graph's size and degrees, how its
// rows read, and for class keys the vertices of each class.
type Shape struct {
	N         int
	M         int64 // directed edges
	MaxDeg    int64
	Vec       bool    // rows can be read with 16-byte loads
	Scattered bool    // rows name vertices far from themselves (Graph.rowLocality)
	Runs      bool    // rows hold runs of neighbours in one state word (rowRuns)
	Classes   []int64 // vertices per class byte (class keys with buckets; see NeedClasses)
}

// midRows says whether s has local rows of average degree 10 to 20 (a
// tet mesh), read with 16-byte loads as bucket runs read them: their
// two-hop neighbourhoods hold about half the vertices of a 27-point
// mesh's, and fewer buckets pay there (Defaults, bucketPlan).
func midRows(s Shape) bool { return s.Vec && !s.Scattered && s.avg() >= 10 && s.avg() < 20 }

func (s Shape) avg() float64 {
	if s.N == 0 {
		return 0
	}
	return float64(s.M) / float64(s.N)
}

// Tuning holds the launch choices that do not change the result.
// Defaults gives the ones a run takes; the developers' benchmark
// (tools/gpubench) overrides them.
type Tuning struct {
	Group int // lanes per vertex: one of GroupSizes
	First int // sweeps queued before the first check of the live count
	Batch int // sweeps queued between later checks
	// Tail is the number of full sweeps after which the vertices still
	// in play are compacted into a list and settled by one persistent
	// launch (mis1_tail, mis2_tail); 0 runs sweeps to the end.
	Tail int
	// Bands and PerBand order the first sweeps by key: the first PerBand
	// sweeps visit only the vertices whose hash lies in the top
	// (1/Bands)^BandShape of its range, the next PerBand the top
	// (2/Bands)^BandShape, and so on (in_band in mis.cu). 0 or 1 band
	// visits every vertex from the start.
	Bands, PerBand int
	BandShape      float64
	// KF is the read mode, a sum of the KF_* bits of mis.cu; with KFAuto
	// MIS-1 picks it by the rows' locality and MIS-2 adds KF_WORDS on
	// long local rows.
	KF     uint32
	KFAuto bool
	// Buckets > 0 runs MIS-2 by key buckets (mis2b.cuh) instead of the
	// ball sweeps; BucketShape (0: by the keys and degree) shapes them
	// (bucketThresholds); FarBuckets, when not 0, replaces Buckets for
	// hash keys on scattered rows.
	Buckets, FarBuckets int
	BucketShape         float64
	// Flush is the number of listed candidates at which a warp of a
	// bucket launch decides them (0: a tile's worth, also the most).
	Flush int
	// ClassBuckets gives each class of a dominant-class key buckets of
	// its own (bucketThresholds).
	ClassBuckets bool
	// Split > 0 runs class keys whose class 0 holds most vertices in two
	// stages, the classes above 0 by buckets and then class 0 by the
	// hash kernels; 2 takes the first stage's candidates from a list.
	Split int
	// Balanced picks the balanced bucket kernels (mis2bd: a block's
	// tiles go to its warps as they ask, pushes along scattered rows
	// skip repeated targets); BalancedHash picks them for hash keys only.
	Balanced, BalancedHash bool
	// MixedBuckets, when not 0, replaces Buckets for class keys whose
	// buckets run over all keys (no class holds most vertices: Degree
	// on a tet mesh). Their buckets mix classes that lie unevenly, so a
	// bucket is denser where its classes lie than hash keys would be.
	MixedBuckets int
	// Pipe: the bucket kernels' lanes load the neighbour and the row
	// offsets of their next pair before they work on the current one
	// (KF_PIPE in mis2b.cuh), but for class keys mixed over all keys
	// (MixedBuckets).
	Pipe bool
}

// The default choices. Every figure behind them is in docs/gpu.md; the
// sweeps are bound by memory latency and by scattered load requests, so
// most rules trade vertices in flight against the length of the rows.
const (
	laneAvg1    = 20   // MIS-1: one lane per vertex up to this average degree, more vertices in flight per warp win
	laneAvg1Vec = 32   // ... 16-byte row loads keep one lane ahead up to 27-point meshes
	first1      = 6    // MIS-1 takes 6 to 8 sweeps: queue that many before the first check of the live count
	first2      = 14   // MIS-2 ball sweeps take 18 to 23
	tail1       = 1    // MIS-1: one full sweep after the bands, then the persistent tail settles the few per cent left
	tail2       = 8    // MIS-2 ball sweeps: 8 full sweeps before the tail
	bandsDense  = 4    // MIS-1 bands pay with the number of larger neighbours a vertex waits on ...
	bandsSparse = 3    // ... while below average degree 10 a band sweep costs nearly a full pass
	buckets2    = 12   // MIS-2 by key buckets: 1.3-2.8 times the ball sweeps on every benchmark graph
	buckets2Low = 8    // below average degree 10 a launch costs more than the waits more buckets spare ...
	buckets2Mid = 8    // ... and up to 20 on local rows (a tet mesh), with γ 2; 12 for class keys mixed over all keys
	farBuckets  = 8    // hash keys on scattered 27-point rows, where scans read larger keys only
	flushDense  = 1    // 27-point rows: a warp decides each candidate as soon as it lists it
	flushSparse = 8    // sparser rows: a batch of 8 keeps the warp's lanes busy
	denseRowSq  = 2048 // no buckets once MaxDeg² > 2048·M: the scans of a dense row would cost more than the adjacency
)

// Defaults returns the tuning of a run on a graph of shape s.
func Defaults(s Shape, dist int) Tuning {
	avg := s.avg()
	t := Tuning{Group: 1, First: first1, Batch: 2, Tail: tail1, PerBand: 1, KFAuto: true,
		Bands: bandsDense, BandShape: 2}
	if avg < 10 {
		t.Bands, t.BandShape = bandsSparse, 1
	}
	if dist == 2 {
		t.First, t.Batch, t.Tail, t.Bands, t.KF = first2, 3, tail2, 0, kfJoin2 // warps push their members' two-hop OUT
		t.Buckets, t.Flush, t.ClassBuckets = buckets2, flushDense, true        // per-class buckets spare a mesh interior's waits
		if avg < 20 {
			t.Flush = flushSparse
		}
		if avg < 10 {
			t.Buckets, t.ClassBuckets = buckets2Low, false // per-class buckets cost a little on sparse meshes
		} else if midRows(s) {
			t.Buckets, t.MixedBuckets = buckets2Mid, buckets2
		}
		if avg >= 20 {
			t.FarBuckets, t.Balanced = farBuckets, true // balanced kernels: 8-23 % on 27-point rows
		}
		t.BalancedHash = avg < 10 // below degree 10 they pay for hash keys only
		t.Pipe = midRows(s)       // short local rows: their offsets are much of a pair's chain of loads
		t.Split = 2               // class keys: the boundary from a list, then the interior by the hash kernels
		if d := float64(s.MaxDeg); d*d > denseRowSq*float64(s.M) {
			t.Buckets, t.FarBuckets, t.MixedBuckets = 0, 0, 0
		}
	}
	lim := [3]float64{laneAvg1, 48, 160}
	if s.Vec {
		lim[0] = laneAvg1Vec
	}
	if dist == 2 {
		lim = [3]float64{48, 96, 256}
	}
	switch {
	case avg > lim[2]:
		t.Group = 32
	case avg > lim[1]:
		t.Group = 8
	case avg > lim[0]:
		t.Group = 4
	}
	return t
}

// Read modes (KF_* in mis.cu).
const (
	kfJoin2     = 16      // KF_JOIN2
	kfWords     = 32      // KF_WORDS
	kfPipe      = 1 << 16 // KF_PIPE (mis2b.cuh)
	scatteredKF = 3       // KF_SCAN | KF_RED: filter scans by key, push OUT into smaller neighbours
	localKF     = 6       // KF_RED | KF_ALL: plain scans, push OUT into every neighbour
)

// Plan is a run: its stages, one after the other, and how often the host
// checks the live count.
type Plan struct {
	Dist   int
	Key    Key
	Stages []Stage
	First  int  // launches queued before the first check (sweeps; a bucket stage queues its own)
	Batch  int  // launches queued between later checks
	Ball   bool // the states come with a ball per vertex (MIS-2 ball sweeps)
	// Buckets: the stages are bucket stages, else Stages holds one sweep
	// stage.
	Buckets bool
}

// Stage is a run of launches of one kernel. A sweep stage (Keys nil)
// launches until a sweep finds every vertex settled, optionally after
// band sweeps and with a persistent tail; a bucket stage launches once
// per key threshold, then with threshold Last until none is left
// waiting.
type Stage struct {
	Kernel   string
	Items    int64    // warps' work items per launch: tiles of 128 vertices or of 32 listed ones
	KF       uint32   // read mode (bucket stages: KF_WORDS, flush threshold <<8, the scan bit)
	First    string   // sweeps: the kernel of sweep 0 when not Kernel
	Bands    []uint32 // sweeps: the band threshold of sweep i (vertices whose hash is below wait)
	Tail     string   // sweeps: the persistent tail kernel, or ""
	TailAt   int      // sweeps: the sweep that launches the tail
	Keys     []uint64 // buckets: the thresholds of the launches, in decreasing order
	Last     uint64   // buckets: the threshold of the launches after them
	List     bool     // buckets: candidates come from the list of the classes above 0
	Balanced bool     // buckets: the balanced kernels (mis2bd)
}

// Launches is the number of launches of a bucket stage that run whatever
// came before: its buckets and the first launch of its last range.
func (s *Stage) Launches() int { return len(s.Keys) + 1 }

// NeedClasses says whether NewPlan needs Shape.Classes: class keys that
// go by buckets.
func NeedClasses(s Shape, dist int, key Key, t Tuning) bool {
	return usesBuckets(s, dist, key, t) && key == KeyClass
}

func usesBuckets(s Shape, dist int, key Key, t Tuning) bool {
	return dist == 2 && t.Buckets > 0 && t.group(s, dist) == 1 && s.Vec && key != KeyPrim
}

// group is the lanes per vertex of t, the default's when 0.
func (t Tuning) group(s Shape, dist int) int {
	if t.Group == 0 {
		return Defaults(s, dist).Group
	}
	return t.Group
}

// bandThresholds returns the band threshold of each band sweep: sweep
// band0+i, for i below (bands-1)·perBand, visits the vertices whose hash
// lies in the top ((i/perBand+1)/bands)^shape of its range; the sweeps
// before band0 visit every vertex.
func bandThresholds(band0, bands, perBand int, shape float64) []uint32 {
	out := make([]uint32, band0, band0+(bands-1)*perBand)
	for i := 0; i < (bands-1)*perBand; i++ {
		f := float64(i/perBand+1) / float64(bands)
		if shape > 0 && shape != 1 {
			f = math.Pow(f, shape)
		}
		out = append(out, uint32(min((1-f)*(1<<32), 1<<32-1)))
	}
	return out
}

// NewPlan turns a shape, a distance, a kind of key and a tuning into the
// stages of a run. It reads no device.
func NewPlan(s Shape, dist int, key Key, t Tuning) (*Plan, error) {
	if dist != 1 && dist != 2 {
		return nil, fmt.Errorf("distance %d (want 1 or 2)", dist)
	}
	p := &Plan{Dist: dist, Key: key, First: max(t.First, 1), Batch: max(t.Batch, 1), Ball: dist == 2}
	kf := t.KF
	if !s.Vec {
		kf &^= kfJoin2 // it reads rows with 16-byte loads
	}
	if t.KFAuto && dist == 1 {
		// The filter trades a hash per neighbour for a state read: it
		// pays where those reads miss L1 (rows far apart).
		kf = localKF
		if s.Scattered && key == KeyHash {
			kf = scatteredKF
		}
	}
	group := t.group(s, dist)
	st := Stage{Kernel: sweepName(dist, group, key), Items: (int64(s.N) + tile - 1) / tile}
	if dist == 1 && group == 1 && s.Vec {
		st.Kernel = vecSweepName(key)
	}
	runnerUp := dist == 2 && group == 1
	if runnerUp {
		st.Kernel = runnerUpName(key, false)
		if !s.Scattered {
			// Local rows: fewer registers and more blocks pay (mis.cu).
			st.Kernel = localRunnerUpName(key)
		}
		if s.Runs && t.KFAuto && kf&kfJoin2 != 0 && s.M >= 10*int64(s.N) {
			// Long rows with runs of consecutive ids: one OR per state
			// word of a run (KF_WORDS) pays there.
			kf |= kfWords
		}
		if s.Vec {
			st.First = firstName(key)
		}
	}
	if usesBuckets(s, dist, key, t) {
		return bucketPlan(p, s, t, kf)
	}
	if !containsInt(GroupSizes, group) {
		return nil, fmt.Errorf("no kernel %s (lanes per vertex must be one of %v)", st.Kernel, GroupSizes)
	}
	st.KF = kf
	band0 := 0
	if dist == 2 {
		band0 = 1 // after the sweep that finds the champions
	}
	if t.Bands > 1 {
		st.Bands = bandThresholds(band0, t.Bands, max(t.PerBand, 1), t.BandShape)
	}
	if t.Tail > 0 {
		st.TailAt, st.Tail = len(st.Bands)+t.Tail, tailName(dist, key)
		if runnerUp {
			st.Tail = runnerUpName(key, true)
		}
	}
	p.Stages = []Stage{st}
	return p, nil
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// bucketPlan makes p a run of MIS-2 by key buckets (mis2b.cuh): one
// launch per bucket, then launches over every key until none is left
// undecided.
//
// With class keys whose class 0 holds most vertices (a mesh's interior
// under Boundary or Degree) and t.Split, the run has two stages: the
// classes above 0, by per-class buckets until none of them is left
// undecided (with Split 2 from a list of their vertices, so that their
// launches do not visit every tile), then class 0 by the hash kernels.
// Once every vertex of a larger class is decided, the undecided ones all
// lie in class 0 and compare by hash alone, and no member of a larger
// class lies within distance 2 of one (its push made that vertex OUT),
// so the scans and pushes of hash keys give the same set.
func bucketPlan(p *Plan, s Shape, t Tuning, kf0 uint32) (*Plan, error) {
	// γ 3, or 1.5 below average degree 10 and 2 on local rows up to 20
	// (midRows); class keys with buckets over all keys γ 2, as a steeper
	// shape leaves the first buckets of a large class that follows small
	// ones too full. Per-class buckets shape each class on its own and
	// take the hash keys' γ again, as does class 0 alone in a split run.
	hashShape := 3.0
	if s.M < 10*int64(s.N) {
		hashShape = 1.5
	} else if midRows(s) {
		hashShape = 2
	}
	shape := t.BucketShape
	if shape <= 0 {
		shape = hashShape
		if p.Key == KeyClass && !t.ClassBuckets {
			shape = 2
		}
	}
	counts := s.Classes
	if p.Key == KeyClass && len(counts) == 0 {
		return nil, fmt.Errorf("class keys with buckets need the class counts")
	}
	var c0 int64
	if len(counts) > 0 {
		c0 = counts[0]
	}
	split := p.Key == KeyClass && t.Split > 0 && t.ClassBuckets && 2*c0 >= int64(s.N) && c0 < int64(s.N)
	// The kernel reads KF_WORDS and the flush threshold.
	kf := kf0&kfWords | uint32(min(max(t.Flush, 0), flushMax))<<8
	if t.Pipe {
		kf |= kfPipe
	}
	var stages []Stage
	switch {
	case p.Key == KeyHash:
		stages = []Stage{hashStage(s, t, kf0, kf, hashShape)}
	case split:
		s1 := Stage{Kernel: "mis2b", KF: kf, Keys: aboveClass0(bucketThresholds(t.Buckets, shape, counts, true)), Last: 1 << 32}
		if t.Split > 1 {
			s1.Kernel, s1.List = "mis2bl", true
		}
		s2 := hashStage(s, t, kf0, kf, hashShape)
		s2.Kernel += "_p0"
		stages = []Stage{s1, s2}
	default:
		b, mkf := t.Buckets, kf
		if t.MixedBuckets > 0 && !dominant(counts) {
			// Without KF_PIPE, which measured 7 % slower there on the
			// refined Gmsh part (docs/gpu.md).
			b, shape, mkf = t.MixedBuckets, mixedShape(t), kf&^kfPipe
		}
		stages = []Stage{{Kernel: "mis2b", KF: mkf, Keys: bucketThresholds(b, shape, counts, t.ClassBuckets)}}
	}
	for i := range stages {
		st := &stages[i]
		if i == 0 {
			st.Kernel = fmt.Sprintf("%s_p%d", st.Kernel, p.Key)
		}
		if t.Balanced || t.BalancedHash && p.Key == KeyHash {
			// mis2b_p0 -> mis2bd_p0, mis2bs_p0 -> mis2bds_p0, mis2bl_p1 -> mis2bdl_p1.
			st.Kernel = "mis2bd" + strings.TrimPrefix(st.Kernel, "mis2b")
			st.Balanced = true
		}
		if !containsString(bucketKernels(), st.Kernel) && !containsString(listKernels, st.Kernel) {
			return nil, fmt.Errorf("no kernel %s", st.Kernel)
		}
		// A warp takes a tile of 128 vertices, or 32 of a list (sized
		// by the executor, which knows the list's length).
		st.Items = (int64(s.N) + tile - 1) / tile
	}
	p.Stages, p.Ball, p.Batch, p.Buckets = stages, false, 2, true
	return p, nil
}

// mixedShape is the bucket shape of class keys whose buckets run over
// all keys: γ 2 unless the tuning says otherwise.
func mixedShape(t Tuning) float64 {
	if t.BucketShape > 0 {
		return t.BucketShape
	}
	return 2
}

// hashStage is the bucket stage of hash keys (all of a hash-key run, or
// class 0 in the second stage of a split one): kf is the kernel's read
// mode, kf0 the mode it comes from.
func hashStage(s Shape, t Tuning, kf0, kf uint32, hashShape float64) Stage {
	st := Stage{Kernel: "mis2b", KF: kf}
	b, scan := t.Buckets, kf0&kfScanLarger != 0
	if (t.KFAuto || t.FarBuckets > 0) && s.M >= 10*int64(s.N) {
		// Scans of larger keys only pay where rows are scattered and a
		// scan reads enough states for the hashes to save loads; on
		// local rows the word-wise pushes (KF_WORDS) win.
		scan = scan || s.Scattered && t.KFAuto
		if s.Scattered && t.FarBuckets > 0 {
			b = t.FarBuckets
		}
	}
	if scan {
		st.Kernel, st.KF = "mis2bs", st.KF|kfScanLarger
	}
	shape := t.BucketShape
	if shape <= 0 {
		shape = hashShape
	}
	st.Keys = bucketThresholds(b, shape, nil, false)
	return st
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
