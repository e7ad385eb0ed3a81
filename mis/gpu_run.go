package mis

import (
	"fmt"
	"slices"

	"github.com/misgrid/misgrid/cuda"
)

// Priority kinds of the kernels (PK_* in mis.cu).
const (
	pkHash  = 0
	pkClass = 1
	pkPrim  = 2
)

// gpuTuning holds the launch choices that do not change the result.
type gpuTuning struct {
	group int // lanes per vertex: one of groupSizes
	first int // sweeps queued before the first check of the live count
	batch int // sweeps queued between later checks
	// tail is the number of full sweeps after which the vertices still
	// in play are compacted into a list and settled by one persistent
	// launch (mis1_tail, mis2_tail); 0 runs sweeps to the end.
	tail int
	// scalar keeps MIS-1 with one lane per vertex on 4-byte row loads
	// even where the 16-byte ones (mis1_g1v) are possible.
	scalar bool
	// single runs MIS-2 with one lane per vertex without runner-ups
	// (mis2_g1 instead of mis2_g1r): every ball whose champion leaves is
	// rescanned.
	single bool
	// bands and perBand order the first sweeps by key: the first
	// perBand sweeps visit only the vertices whose hash lies in the top
	// 1/bands of its range, the next perBand the top 2/bands, and so on
	// (in_band in mis.cu). 0 or 1 band visits every vertex from the start.
	bands, perBand int
	// bandShape γ (0 means 1): band i of k takes the vertices whose hash
	// lies in the top ((i+1)/k)^γ of its range; γ < 1 makes early bands
	// larger, γ > 1 smaller.
	bandShape float64
	// kf is the MIS-1 read mode for one lane per vertex, a sum of the
	// KF_* bits of mis.cu: 1 filters scans by key (hash keys), 2 pushes
	// OUT without reading (into smaller neighbours; with 4 into all);
	// for MIS-2, 16 has the warps push their members' two-hop OUT and 32
	// does so once per state word of a run of ids. kfAuto picks by the
	// graph's locality instead (MIS-2: adds 32 to 16 on long local rows).
	kf     int
	kfAuto bool
	// noCap runs MIS-2 with runner-ups on the kernel without a register
	// cap even where rows are local.
	noCap bool
	// noFirst runs MIS-2's first sweep with the general sweep kernel
	// instead of mis2_first.
	noFirst bool
	// buckets > 0 runs MIS-2 by key buckets (mis2b.cuh) instead of the
	// ball sweeps: launch i takes the undecided vertices among the top
	// ((i+1)/buckets)^bucketShape of the keys (bucketShape 0: by the
	// keys and the degree, see useBuckets).
	buckets     int
	bucketShape float64
	// flush is the number of listed candidates at which a warp of a
	// bucket launch decides them (0: a tile's worth, also the most).
	flush int
	// classBuckets gives each class of a dominant-class priority buckets
	// of its own (bucketThresholds).
	classBuckets bool
	// farBuckets, when not 0, replaces buckets for hash keys on graphs
	// whose rows are scattered (DeviceGraph.scattered).
	farBuckets int
	// split > 0 runs class keys whose class 0 holds most vertices in
	// two stages, the classes above 0 and then class 0 by the hash
	// kernels (useBuckets); 2 takes the first stage's candidates from a
	// list of its vertices.
	split int
	// balanced picks the balanced bucket kernels (mis2bd): a block's
	// tiles go to its warps as they ask instead of in fixed shares (DYN
	// in mis2b.cuh), and pushes along scattered rows skip repeated
	// targets (DEDUP). balancedHash picks them for hash keys only.
	balanced, balancedHash bool
}

// defaultTuning picks lanes per vertex from the average degree. The
// sweeps are bound by memory latency and by the number of scattered load
// requests, so more vertices in flight per warp (fewer lanes each) win
// until rows get long; measured on an H100 (docs/gpu.md): MIS-1 is
// fastest with 1 lane and 16-byte row loads up to 27-point meshes (with
// 4-byte loads 4 lanes won there), MIS-2 with 1 lane.
func defaultTuning(dg *DeviceGraph, dist int) gpuTuning {
	avg := 0.0
	if dg.n > 0 {
		avg = float64(dg.m) / float64(dg.n)
	}
	// MIS-1 takes 6 to 8 sweeps on meshes and random graphs, MIS-2 18 to
	// 23: queue about that many at once, then a few at a time.
	t := gpuTuning{group: 1, first: 6, batch: 2, tail: defaultTail, perBand: 1, kfAuto: true}
	// Banding pays more the more larger neighbours a vertex waits on; on
	// low-degree graphs each band sweep costs nearly a full pass over the
	// offsets and rows (a visited row shares its sectors with unvisited
	// ones), so there it stays short.
	t.bands, t.bandShape = 4, 2
	if avg < 10 {
		t.bands, t.bandShape = 3, 1
	}
	if dist == 2 {
		// A warp pushes its new members' two-hop OUT itself (KF_JOIN2):
		// 5-18 % faster on every benchmark graph (docs/gpu.md).
		t.first, t.batch, t.tail, t.bands, t.kf = 14, 3, defaultTail2, 0, kfJoin2
		// With one lane per vertex MIS-2 goes by key buckets (mis2b.cuh)
		// instead of the ball sweeps: 1.3-2.8 times as fast on every
		// benchmark graph, hash and Degree priorities. Measured
		// (docs/gpu.md, eighth round): 12 buckets, or 8 below average
		// degree 10, where a launch costs more than the waits that more
		// buckets would spare; the shape by the keys (useBuckets).
		t.buckets = 12
		if avg < 10 {
			t.buckets = 8
		}
		// Measured (docs/gpu.md, ninth round): a warp deciding its
		// candidates as soon as it lists one is 4-5 % faster on the
		// 27-point meshes; on sparser graphs 8 keep the batch's lanes
		// busier (12 % on grid7). Per-class buckets cut the waits of a
		// mesh's interior under Degree (18 % on relabelled hex27) and
		// cost 3 % on grid7; classes that do not dominate are unaffected.
		t.flush, t.classBuckets = 1, true
		if avg < 20 {
			t.flush = 8
		}
		if avg < 10 {
			t.classBuckets = false
		}
		// Measured (docs/gpu.md, tenth round): hash keys on scattered
		// 27-point rows (where the scans read larger keys only) take 8
		// buckets: relabelled hex27 1.70 -> 1.60 ms.
		//
		// Measured (docs/gpu.md, eleventh round): the balanced kernels
		// (mis2bd), whose warps take their block's tiles as they go and
		// whose pushes along scattered rows skip repeated targets, on
		// 27-point rows: hash hex27 1.17 -> 1.02 ms, relabelled 1.60 ->
		// 1.24; Degree 1.38 -> 1.28 and 1.78 -> 1.48. Below average
		// degree 10 (grid7) for hash keys only: 0.93 -> 0.89, while
		// Degree loses 7 %; on the random graph both lose (3-7 %).
		if avg >= 20 {
			t.farBuckets, t.balanced = 8, true
		}
		t.balancedHash = avg < 10
		// Measured (docs/gpu.md, tenth round): class keys of a mesh
		// (Degree, Boundary) in two stages, the boundary from a list
		// and then the interior by the hash kernels: hex27 256³ 4.35 ->
		// 3.62 ms, 160³ 1.44 -> 1.40, relabelled even (1.77).
		t.split = 2
		// A vertex of degree D next to many candidates has its row
		// scanned by each: about D²/b^γ entries in the first buckets
		// (a dense row joins every vertex to every other within
		// distance 2), which the ball sweeps never spend. Past D² >
		// 2048·m that would be more than a pass over the adjacency.
		if d := float64(dg.maxDeg); d*d > 2048*float64(dg.m) {
			t.buckets, t.farBuckets = 0, 0
		}
	}
	lim := [3]float64{20, 48, 160} // MIS-1: up to avg degree 20 one lane, 48 four, ...
	if dg.vec {
		lim[0] = 32 // measured up to 26 (hex27); the 16-byte loads favour one lane
	}
	if dist == 2 {
		lim = [3]float64{48, 96, 256}
	}
	switch {
	case avg > lim[2]:
		t.group = 32
	case avg > lim[1]:
		t.group = 8
	case avg > lim[0]:
		t.group = 4
	}
	return t
}

// The tuning measured best on the H100 (docs/gpu.md). MIS-1: 3 or 4
// bands of one sweep each by degree (defaultTuning), then 1 full sweep
// before the tail (of 2 to 16 bands, shapes 0.5 to 3, 1 to 3 full
// sweeps); the read mode by locality: key-filtered scans and pushes
// without reads into smaller neighbours where rows are scattered (hash
// keys), plain scans and pushes without reads into all neighbours
// otherwise. MIS-2: no bands (they cut sweeps, not time), the warps'
// two-hop pushes, 8 full sweeps before the tail (of 6 to 12; 1 to 12
// before KF_JOIN2).
const (
	defaultTail  = 1
	defaultTail2 = 8
	kfJoin2      = 16 // KF_JOIN2
	kfWords      = 32 // KF_WORDS
	scatteredKF  = 3  // KF_SCAN | KF_RED
	localKF      = 6  // KF_RED | KF_ALL
)

// compute runs the whole MIS on the device and copies the set back.
func (dg *DeviceGraph) compute(dist int, pri devicePriority, t gpuTuning) (*Result, error) {
	e := dg.eng
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.usable(); err != nil {
		return nil, fmt.Errorf("%w: the GPU context failed earlier: %w", ErrNoGPU, err)
	}
	dg.mu.Lock()
	defer dg.mu.Unlock()
	if dg.done {
		return nil, fmt.Errorf("mis: device graph is closed")
	}
	if dg.n == 0 {
		return &Result{In: []bool{}, Backend: "gpu"}, nil
	}
	run, err := dg.prepare(dist, pri, t)
	if err != nil {
		return nil, e.fail(err)
	}
	rounds, err := run.sweeps(nil, nil)
	if err != nil {
		return nil, e.fail(err)
	}
	res, err := dg.members()
	if err != nil {
		return nil, e.fail(err)
	}
	res.Rounds = rounds
	return res, nil
}

// sweepRun is one prepared MIS configuration on a graph.
type sweepRun struct {
	dg       *DeviceGraph
	dist, pk int
	name     string
	grid     uint32
	prim     *cuda.Buffer
	cls      *cuda.Buffer
	ball     *cuda.Buffer
	seed     uint64
	first    int
	batch    int
	tail     int // the sweep that launches the tail, 0 for none
	bands    int // see gpuTuning
	perBand  int
	shape    float64
	band0    int // the first band sweep (MIS-2: after the sweep that finds the champions)
	kf       uint32
	list     *cuda.Buffer // the tail's vertex list (the ball buffer of MIS-2)
	tailName string
	tailGrid uint32
	// MIS-2: the kernel of sweep 0 when not r.name (mis2_first).
	firstName string
	firstGrid uint32
	// MIS-2 by key buckets: the number of launches that run whatever
	// came before (all stages), the stages, and the pass at which each
	// stage started in the current run.
	buckets int
	stages  []bucketStage
	stageAt []int
}

// prepare allocates the working memory and uploads the priority.
func (dg *DeviceGraph) prepare(dist int, pri devicePriority, t gpuTuning) (*sweepRun, error) {
	e, ctx, ws := dg.eng, dg.eng.ctx, &dg.ws
	np := padded(dg.n)
	var err error
	if ws.st == nil {
		if ws.st, err = ctx.Alloc(np); err != nil {
			return nil, err
		}
	}
	if (dist == 2 || t.tail > 0) && ws.ball == nil {
		if ws.ball, err = ctx.Alloc(8 * np); err != nil {
			return nil, err
		}
	}
	if dist == 2 && t.tail > 0 && ws.list == nil {
		if ws.list, err = ctx.Alloc(4 * np); err != nil {
			return nil, err
		}
	}
	if ws.count == nil {
		// The ring of live counts, then the tail's most passes and its
		// list length.
		if ws.count, err = ctx.Alloc(4 * (nCount + 2)); err != nil {
			return nil, err
		}
	}
	if ws.host == nil {
		if ws.host, err = ctx.AllocHost(64); err != nil {
			return nil, err
		}
	}
	if _, err = dg.scratch(); err != nil {
		return nil, err
	}
	for i := range ws.evs {
		if ws.evs[i] == nil {
			if ws.evs[i], err = ctx.NewEvent(); err != nil {
				return nil, err
			}
		}
	}
	r := &sweepRun{dg: dg, dist: dist, pk: pkHash, seed: pri.seed, first: max(t.first, 1), batch: max(t.batch, 1)}
	if t.bands > 1 {
		r.bands, r.perBand, r.shape = t.bands, max(t.perBand, 1), t.bandShape
	}
	r.kf = uint32(t.kf)
	if !dg.vec {
		r.kf &^= kfJoin2 // it reads rows with 16-byte loads
	}
	if dist == 2 {
		r.ball = ws.ball
		r.band0 = 1
	}
	needPrim := pri.prim != nil || pri.devDegree
	if needPrim && ws.prim == nil {
		if ws.prim, err = ctx.Alloc(4 * int64(dg.n)); err != nil {
			return nil, err
		}
	}
	class := pri.class
	if class == nil && pri.prim != nil {
		// Ranks that fit the state byte go there (smallRanks).
		class = smallRanks(pri.prim)
	}
	switch {
	case class != nil:
		if err = dg.allocClasses(); err != nil {
			return nil, err
		}
		if err = cuda.CopyToDevice(ws.cls, 0, class); err != nil {
			return nil, err
		}
		r.pk, r.cls = pkClass, ws.cls
	case pri.useClass:
		r.pk, r.cls = pkClass, dg.class
	case pri.prim != nil:
		if err = cuda.CopyToDevice(ws.prim, 0, pri.prim); err != nil {
			return nil, err
		}
		r.pk, r.prim = pkPrim, ws.prim
	case pri.devDegree:
		if err = ws.small.MemsetAsync32(0, e.stream); err != nil {
			return nil, err
		}
		g := e.grid("degree_prim", int64(dg.n), blockSize)
		for phase := int32(0); phase < 2; phase++ {
			if err = e.launch("degree_prim", g, dg.off, int32(dg.n), ws.prim, ws.small, phase); err != nil {
				return nil, err
			}
		}
		r.pk, r.prim = pkPrim, ws.prim
		small, err := dg.rankPrimaries()
		if err != nil {
			return nil, err
		}
		if small {
			r.pk, r.prim, r.cls = pkClass, nil, ws.cls
		}
	}
	if t.kfAuto && dist == 1 {
		// The filter trades a hash per neighbour for a state read: it
		// pays where those reads miss L1 (rows far apart), not on meshes
		// in natural order (docs/gpu.md). r.pk is settled by now.
		far, err := dg.scattered()
		if err != nil {
			return nil, err
		}
		r.kf = localKF
		if far && r.pk == pkHash {
			r.kf = scatteredKF
		}
	}
	group := t.group
	if group == 0 {
		group = defaultTuning(dg, dist).group
	}
	r.name = sweepName(dist, group, r.pk)
	if dist == 1 && group == 1 && dg.vec && !t.scalar {
		r.name = vecSweepName(r.pk)
	}
	runnerUp := dist == 2 && group == 1 && !t.single
	if runnerUp {
		r.name = runnerUpName(r.pk, false)
		far, err := dg.scattered()
		if err != nil {
			return nil, err
		}
		if !far && !t.noCap {
			// Local rows: fewer registers and more blocks pay (mis.cu).
			r.name = fmt.Sprintf("mis2_g1r4_p%d", r.pk)
		}
		if !far && t.kfAuto && r.kf&kfJoin2 != 0 && dg.m >= 10*int64(dg.n) {
			// Long local rows hold runs of consecutive ids: one OR per
			// state word of a run (KF_WORDS) pays there, and costs
			// more than it saves on short or scattered rows.
			r.kf |= kfWords
		}
	}
	if dist == 2 && group == 1 && dg.vec && !t.noFirst {
		r.firstName = firstName(r.pk, runnerUp)
		r.firstGrid = e.grid(r.firstName, int64(dg.n), blockSize)
	}
	if dist == 2 && t.buckets > 0 && group == 1 && dg.vec && r.pk != pkPrim {
		if err := r.useBuckets(t); err != nil {
			return nil, err
		}
		return r, nil
	}
	if e.fn[r.name] == nil {
		return nil, fmt.Errorf("mis: no kernel %s (lanes per vertex must be one of %v)", r.name, groupSizes)
	}
	ntiles := (int64(dg.n) + tile - 1) / tile
	r.grid = e.grid(r.name, ntiles, blockSize/32)
	if t.tail > 0 {
		// The tail's threads wait on each other: its grid must fit on
		// the device at once, which e.grid's cap at the resident blocks
		// ensures. MIS-1 lists in the ball buffer, which it does not use.
		r.tail, r.list, r.tailName = r.bandSweeps()+t.tail, ws.ball, tailName(dist, r.pk)
		if runnerUp {
			r.tailName = runnerUpName(r.pk, true)
		}
		if dist == 2 {
			r.list = ws.list
		}
		r.tailGrid = e.grid(r.tailName, int64(dg.n), blockSize)
	}
	return r, nil
}

// maxSmallRanks is the most primary values the state byte holds (bits
// 2-7; CLASS in mis.cu). A primary with no more values goes there as
// its rank, and the kernels read it with the state instead of loading a
// 32-bit rank per neighbour: the greedy order, and so the set, is the
// same, since ranks order as the values do.
const (
	maxSmallRanks = 64
	primWords     = 64 // PRIM_WORDS of helpers.cuh: primaries below 2048 are ranked on the device
)

// smallRanks returns dense ranks (User) as class bytes when they fit the
// state byte, else nil.
func smallRanks(prim []uint32) []uint8 {
	if len(prim) == 0 || slices.Max(prim) >= maxSmallRanks {
		return nil
	}
	cls := make([]uint8, len(prim))
	for v, p := range prim {
		cls[v] = uint8(p)
	}
	return cls
}

// allocClasses makes sure the class bytes of host-given primaries exist.
func (dg *DeviceGraph) allocClasses() error {
	if dg.ws.cls != nil {
		return nil
	}
	b, err := dg.eng.ctx.Alloc(int64(dg.n))
	if err != nil {
		return err
	}
	dg.ws.cls = b
	return nil
}

// rankPrimaries turns the primaries that degree_prim left in ws.prim
// (and their maximum in ws.small) into class bytes in ws.cls when they
// take at most maxSmallRanks values below 32*primWords, and says whether
// it did.
func (dg *DeviceGraph) rankPrimaries() (bool, error) {
	e, ws := dg.eng, &dg.ws
	if dg.n == 0 {
		return false, nil
	}
	var mx [1]uint32
	if err := e.stream.Synchronize(); err != nil {
		return false, err
	}
	if err := cuda.CopyToHost(mx[:], ws.small, 0); err != nil {
		return false, err
	}
	if mx[0] >= 32*primWords {
		return false, nil
	}
	if ws.rank == nil {
		b, err := e.ctx.Alloc(4*primWords + 32*primWords)
		if err != nil {
			return false, err
		}
		ws.rank = b
	}
	words, err := ws.rank.View(0, 4*primWords)
	if err != nil {
		return false, err
	}
	var bits [primWords]uint32
	if err := e.countWords(words, bits[:], "prim_bitmap", int64(dg.n), ws.prim, int32(dg.n)); err != nil {
		return false, err
	}
	rank := make([]uint8, mx[0]+1)
	k := 0
	for p := range rank {
		rank[p] = uint8(min(k, 255))
		if bits[p/32]&(1<<(p%32)) != 0 {
			k++
		}
	}
	if k > maxSmallRanks {
		return false, nil
	}
	if err := cuda.CopyToDevice(ws.rank, 4*primWords, rank); err != nil {
		return false, err
	}
	if err := dg.allocClasses(); err != nil {
		return false, err
	}
	table, err := ws.rank.View(4*primWords, int64(len(rank)))
	if err != nil {
		return false, err
	}
	return true, e.launch("prim_classes", e.grid("prim_classes", int64(dg.n), blockSize), ws.prim, int32(dg.n), table, ws.cls)
}
