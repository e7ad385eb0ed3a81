package mis

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/misgrid/misgrid/mesh"
)

// PartMode selects the algorithm of the partitioned driver.
type PartMode int

const (
	// Exact runs the round-synchronous phases of Parallel on every part,
	// with the states of boundary vertices exchanged between phases. Its
	// set is the greedy set, identical for any number of parts and any
	// partition.
	Exact PartMode = iota
	// ADMMA is Adams's partition-based algorithm: each part takes its own
	// vertices serially, boundary vertices first, and a boundary vertex
	// waits only for neighbours on higher-numbered parts. It needs few
	// outer iterations on well-partitioned meshes, but its set depends on
	// the partition: it is the greedy set of the order (part, boundary
	// first, key), not of the key alone. Distance 1 only.
	ADMMA
)

func (m PartMode) String() string {
	switch m {
	case Exact:
		return "exact"
	case ADMMA:
		return "admma"
	}
	return fmt.Sprintf("PartMode(%d)", int(m))
}

// ParsePartMode converts "exact" or "admma".
func ParsePartMode(s string) (PartMode, error) {
	for m := Exact; m <= ADMMA; m++ {
		if m.String() == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("mis: unknown partitioned mode %q (want exact or admma)", s)
}

// PartOptions controls the partitioned drivers. The zero value asks for
// an exact distance-1 MIS with boundary priorities (Priority's zero value)
// over runtime.GOMAXPROCS(0)
// contiguous parts.
type PartOptions struct {
	Distance int // 1 or 2; 0 means 1
	Priority Priority
	Mode     PartMode

	// Parts is the number of contiguous vertex ranges that
	// ComputePartitioned splits the graph into; 0 means GOMAXPROCS.
	// Ignored when Partition is set, and by RunPart.
	Parts int
	// Partition gives the part of each vertex (a domain decomposition);
	// parts are numbered from 0 and may be empty. The number of parts is
	// then the larger of Parts and the largest entry plus one. Ignored by
	// RunPart.
	Partition []int32
	// Timeout bounds each wait of the in-process exchanger of
	// ComputePartitioned (DefaultTimeout when zero).
	Timeout time.Duration
}

// PartStats describes the communication of a partitioned run.
type PartStats struct {
	Parts int
	// OuterIterations is the number of ADMMA outer iterations (the
	// largest over parts); 0 in Exact mode.
	OuterIterations int
	// BytesPerRound[r] is the number of message bytes all parts sent in
	// round r (Exact) or outer iteration r (ADMMA).
	BytesPerRound []int64
	// Messages is the number of messages all parts sent during the rounds.
	Messages int64
	// SetupBytes is what the halo setup sent (lists of boundary vertices
	// and, for non-hash priorities, their primary ranks).
	SetupBytes int64
	// FinishVertices is the number of vertices the serial finish decided
	// after the rounds stalled (Exact mode; 0 when the rounds decided
	// all), and FinishBytes what it sent: their rows to part 0 and the
	// decisions back. Bytes does not count them.
	FinishVertices, FinishBytes int64
}

// Bytes returns the message bytes of all rounds.
func (s *PartStats) Bytes() int64 {
	var t int64
	for _, b := range s.BytesPerRound {
		t += b
	}
	return t
}

// PartResult is the set a partitioned run found, over the whole graph.
type PartResult struct {
	Result
	PartStats
}

// LocalResult is what RunPart returns to one part: the flags of its own
// rows and the figures of the whole run, which every part agrees on.
type LocalResult struct {
	In     []bool // In[i] reports whether the vertex of row i is in the set
	Size   int    // size of the whole set
	Rounds int    // exchange rounds of the whole run (Exact mode)
	PartStats
}

// Local is one part's share of a graph that is distributed by rows: the
// rows of the vertices this part owns, with global column ids, and how
// the other vertices are owned. It is what an MPI rank holds; SplitGraph
// makes one per part from a whole graph.
//
// The whole graph must be symmetric: when part p's row of v lists u, the
// row of u on its owner lists v. Setup checks this for every cut vertex
// by edge counts, and reports the vertex where the two sides differ.
type Local struct {
	N int // vertices of the whole graph

	// Rows are the global ids of the vertices this part owns, increasing.
	// With Ranges set, Rows may be nil: it is then the part's range.
	Rows    []int32
	Offsets []int64 // len(Rows)+1, Offsets[0] == 0
	Adj     []int32 // global ids; row i is Adj[Offsets[i]:Offsets[i+1]]

	Class []mesh.Class // per row, or nil (for Boundary priorities)
	// Primary holds a primary rank per row that overrides the one the
	// Priority would give. The User priority needs it, because ranking
	// values is a global operation: compute the ranks of the whole graph
	// with Primaries and hand each part its rows.
	Primary []uint32

	// Ownership of other vertices: either Ranges, where part q owns the
	// ids in [Ranges[q], Ranges[q+1]) (len Parts()+1), or Ghosts and
	// GhostParts, which list every off-part id that appears in Adj in
	// increasing order, with the part that owns it.
	Ranges     []int32
	Ghosts     []int32
	GhostParts []int32
}

// ContiguousRanges splits n vertices into parts ranges of sizes that
// differ by at most one: the MG-MIS distribution.
func ContiguousRanges(n, parts int) []int32 {
	r := make([]int32, parts+1)
	for q := 0; q <= parts; q++ {
		r[q] = int32(int64(n) * int64(q) / int64(parts))
	}
	return r
}

// SplitGraph cuts g into the Locals of parts parts: contiguous ranges
// when partition is nil, else partition[v] is the part of v (parts must
// exceed every entry). Class data goes with the rows. Used by tests, by
// ComputePartitioned and by programs that read a whole graph on every
// rank.
func SplitGraph(g *mesh.Graph, parts int, partition []int32) ([]Local, error) {
	if err := checkSplit(g, parts, partition); err != nil {
		return nil, err
	}
	n := g.N()
	locs := make([]Local, parts)
	if partition == nil {
		for q := range locs {
			locs[q] = rangePart(g, ContiguousRanges(n, parts), q)
		}
		return locs, nil
	}
	for q := range locs {
		locs[q] = Local{N: n, Offsets: []int64{0}}
	}
	for v := int32(0); int(v) < n; v++ {
		addRow(g, &locs[partition[v]], v)
	}
	for q := range locs {
		setGhosts(&locs[q], partition, q)
	}
	return locs, nil
}

// SplitPart is SplitGraph for part q alone: what a rank that has read the
// whole graph keeps of it.
func SplitPart(g *mesh.Graph, parts, q int, partition []int32) (Local, error) {
	if err := checkSplit(g, parts, partition); err != nil {
		return Local{}, err
	}
	if q < 0 || q >= parts {
		return Local{}, fmt.Errorf("mis: part %d out of range [0,%d)", q, parts)
	}
	if partition == nil {
		return rangePart(g, ContiguousRanges(g.N(), parts), q), nil
	}
	l := Local{N: g.N(), Offsets: []int64{0}}
	for v, p := range partition {
		if int(p) == q {
			addRow(g, &l, int32(v))
		}
	}
	setGhosts(&l, partition, q)
	return l, nil
}

func checkSplit(g *mesh.Graph, parts int, partition []int32) error {
	if g == nil {
		return errors.New("mis: split of a nil graph")
	}
	if parts < 1 {
		return fmt.Errorf("mis: split into %d parts, want at least 1", parts)
	}
	if partition == nil {
		return nil
	}
	if len(partition) != g.N() {
		return fmt.Errorf("mis: partition has %d entries for %d vertices", len(partition), g.N())
	}
	for v, q := range partition {
		if q < 0 || int(q) >= parts {
			return fmt.Errorf("mis: partition[%d] = %d out of range [0,%d)", v, q, parts)
		}
	}
	return nil
}

// rangePart is part q of a contiguous split; its rows alias g.
func rangePart(g *mesh.Graph, r []int32, q int) Local {
	lo, hi := r[q], r[q+1]
	l := Local{N: g.N(), Ranges: r, Offsets: make([]int64, hi-lo+1)}
	base := g.Offsets[lo]
	for v := lo; v <= hi; v++ {
		l.Offsets[v-lo] = g.Offsets[v] - base
	}
	l.Adj = g.Adj[base:g.Offsets[hi]]
	if g.Class != nil {
		l.Class = g.Class[lo:hi]
	}
	return l
}

func addRow(g *mesh.Graph, l *Local, v int32) {
	l.Rows = append(l.Rows, v)
	l.Adj = append(l.Adj, g.Neighbors(v)...)
	l.Offsets = append(l.Offsets, int64(len(l.Adj)))
	if g.Class != nil {
		l.Class = append(l.Class, g.Class[v])
	}
}

func setGhosts(l *Local, partition []int32, q int) {
	for _, u := range l.Adj {
		if int(partition[u]) != q {
			l.Ghosts = append(l.Ghosts, u)
		}
	}
	slices.Sort(l.Ghosts)
	l.Ghosts = slices.Compact(l.Ghosts)
	l.GhostParts = make([]int32, len(l.Ghosts))
	for i, u := range l.Ghosts {
		l.GhostParts[i] = partition[u]
	}
}

// ComputeReplicated is for groups whose members have all read the whole
// graph, as a command started by mpirun does: each member keeps its part
// (contiguous ranges over ex.Parts(), or opts.Partition), runs RunPart,
// and then every member gets the whole set.
func ComputeReplicated(ctx context.Context, ex Exchanger, g *mesh.Graph, opts PartOptions) (*PartResult, error) {
	if ex == nil {
		return nil, errors.New("mis: ComputeReplicated: nil exchanger")
	}
	start := time.Now()
	parts, me := ex.Parts(), ex.Part()
	// The gather below needs the same graph size everywhere.
	size := []int64{int64(g.N()), -int64(g.N())}
	if err := ex.Allreduce(ctx, Max, size); err != nil {
		return nil, err
	}
	if size[0] != -size[1] {
		return nil, fmt.Errorf("mis: part %d: the members hold graphs of %d to %d vertices, not one graph", me, -size[1], size[0])
	}
	l, err := SplitPart(g, parts, me, opts.Partition)
	if err == nil && opts.Priority.Kind == User {
		var prim []uint32
		prim, err = Primaries(g, opts.Priority)
		if err == nil {
			l.Primary = gatherRows(prim, &l, me)
		}
	}
	if err != nil {
		// Every member fails alike on a bad split, but RunPart's
		// agreement keeps a member with a different graph from hanging.
		l = Local{N: -1}
	}
	r, rerr := RunPart(ctx, ex, &l, opts)
	if err != nil {
		return nil, err
	}
	if rerr != nil {
		return nil, rerr
	}
	// Gather by summing bit words: the parts' rows are disjoint.
	n := g.N()
	words := make([]int64, (n+63)/64)
	for i, in := range r.In {
		if in {
			v := i
			if l.Ranges == nil {
				v = int(l.Rows[i])
			} else {
				v += int(l.Ranges[me])
			}
			words[v/64] |= 1 << (v % 64)
		}
	}
	if err := ex.Allreduce(ctx, Sum, words); err != nil {
		return nil, err
	}
	out := &PartResult{PartStats: r.PartStats}
	out.In = make([]bool, n)
	for v := range out.In {
		out.In[v] = words[v/64]>>(v%64)&1 != 0
	}
	out.Size, out.Rounds = r.Size, r.Rounds
	out.Backend = "partitioned-" + opts.Mode.String()
	out.Elapsed = time.Since(start)
	return out, nil
}

// ComputePartitioned splits g into parts and runs RunPart on every part in
// its own goroutine, with the in-process exchanger. In Exact mode the set
// is the one Compute returns, whatever the parts; the statistics show
// what a distributed run on the same partition would send.
func ComputePartitioned(ctx context.Context, g *mesh.Graph, opts PartOptions) (*PartResult, error) {
	if g == nil {
		return nil, errors.New("mis: nil graph")
	}
	start := time.Now()
	parts := opts.Parts
	if opts.Partition != nil {
		parts = max(parts, 0)
		for _, q := range opts.Partition {
			parts = max(parts, int(q)+1)
		}
		parts = max(parts, 1)
	} else if parts <= 0 {
		parts = runtime.GOMAXPROCS(0)
	}
	locs, err := SplitGraph(g, parts, opts.Partition)
	if err != nil {
		return nil, err
	}
	if opts.Priority.Kind == User {
		// Ranking values is global: do it once here, as a distributed
		// caller would before handing each rank its rows.
		prim, err := Primaries(g, opts.Priority)
		if err != nil {
			return nil, err
		}
		for q := range locs {
			locs[q].Primary = gatherRows(prim, &locs[q], q)
		}
	}
	grp, err := NewLocalGroup(parts, opts.Timeout)
	if err != nil {
		return nil, err
	}
	defer grp.Close()
	res := make([]*LocalResult, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for q := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[q], errs[q] = RunPart(ctx, grp.Member(q), &locs[q], opts)
		}()
	}
	wg.Wait()
	if err := firstPartError(errs); err != nil {
		return nil, err
	}
	out := &PartResult{PartStats: res[0].PartStats}
	out.In = make([]bool, g.N())
	for q, r := range res {
		rows := locs[q].Rows
		if locs[q].Ranges != nil {
			lo := locs[q].Ranges[q]
			for i, b := range r.In {
				out.In[int(lo)+i] = b
			}
			continue
		}
		for i, b := range r.In {
			out.In[rows[i]] = b
		}
	}
	out.Size = res[0].Size
	out.Rounds = res[0].Rounds
	if opts.Mode == ADMMA {
		out.Rounds = res[0].OuterIterations
	}
	out.Backend = "partitioned-" + opts.Mode.String()
	out.Elapsed = time.Since(start)
	return out, nil
}

// firstPartError prefers the error of a part that failed on its own over
// the errors of parts that only report another's failure.
func firstPartError(errs []error) error {
	var first error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if !errors.Is(err, ErrAborted) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// gatherRows picks the entries of part q's rows out of a whole-graph
// array.
func gatherRows[T any](all []T, l *Local, q int) []T {
	if l.Ranges != nil {
		return slices.Clone(all[l.Ranges[q]:l.Ranges[q+1]])
	}
	out := make([]T, len(l.Rows))
	for i, v := range l.Rows {
		out[i] = all[v]
	}
	return out
}
