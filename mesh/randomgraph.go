package mesh

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// The random graphs of the benchmarks: RandomGraph and its parallel,
// counter-based construction.

// hashMix64 is the SplitMix64 finaliser: a bijective hash whose output bits
// all depend on every input bit.
func hashMix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// randOut returns the r-th random draw of vertex u: a counter-based
// generator, so any vertex's draws can be recomputed in any order.
func randOut(seed uint64, u int32, r int) uint64 {
	return hashMix64(hashMix64(seed^0x9e3779b97f4a7c15) + uint64(u)<<20 + uint64(r))
}

// RandomGraph returns a uniform random graph on n vertices with about
// avgDegree neighbours per vertex: every vertex draws avgDegree/2 partners
// uniformly (the fraction by a coin flip), and the edges are symmetrized,
// with repeats and self loops dropped. The draws come from a counter-based
// hash of (seed, vertex, draw), so the graph depends only on n, avgDegree
// and seed, never on the number of threads. Rows are built in parallel;
// the transient memory beyond the result is 8 bytes per draw (n = 16M
// with degree 16 peaks near 2.3 GB). avgDegree is capped at n−1; NaN or
// ≤ 0 gives no edges. n ≤ 0 or n > 2³¹−1 gives an empty graph.
func RandomGraph(n int, avgDegree float64, seed uint64) *Graph {
	if n <= 0 || n > math.MaxInt32 {
		return &Graph{Offsets: []int64{0}}
	}
	if !(avgDegree > 0) {
		avgDegree = 0
	}
	avgDegree = min(avgDegree, float64(n-1))
	half := avgDegree / 2
	d := randomDraws{n: n, seed: seed, whole: int(half)}
	d.frac = uint64((half - float64(d.whole)) * (1 << 53))
	// Row u holds u's own draws, then the vertices that drew u. The
	// reverse entries are routed through buckets of consecutive
	// destination vertices, each filled by one goroutine, so that no
	// atomic random-access scatter is needed: workers first count their
	// draws per bucket, then write them to exclusive slots of a pair
	// array, then each bucket's rows are filled in cache.
	spans := splitRange(n, 1<<12)
	own, pairs, bucketStart := d.reverse(spans)
	off := d.offsets(own, pairs, bucketStart)
	own = nil
	adj := d.fill(off, pairs, bucketStart)
	pairs = nil
	off, adj = sortDedupRows(off, adj, spans)
	return &Graph{Offsets: off, Adj: adj}
}

// randomBucketBits sets RandomGraph's buckets of destination vertices:
// 2¹⁴ rows, whose offsets and cursors stay in cache while one goroutine
// fills them.
const randomBucketBits = 14

// randomDraws are RandomGraph's draws: whole partners per vertex, one more
// with probability frac/2⁵³, each recomputed from (seed, vertex, draw)
// whenever a pass needs it rather than stored.
type randomDraws struct {
	n     int
	seed  uint64
	whole int
	frac  uint64
}

// drawPair is a reverse entry: u drew v, so row v holds u.
type drawPair struct{ v, u int32 }

func (d randomDraws) outs(u int32) int {
	k := d.whole
	if d.frac != 0 && randOut(d.seed, u, -1)>>11 < d.frac {
		k++
	}
	return k
}

func (d randomDraws) target(u int32, r int) int32 {
	hi, _ := bits.Mul64(randOut(d.seed, u, r), uint64(d.n))
	return int32(hi)
}

func (d randomDraws) buckets() int { return d.n>>randomBucketBits + 1 }

func (d randomDraws) bucketRange(b int) (int32, int32) {
	return int32(b << randomBucketBits), int32(min((b+1)<<randomBucketBits, d.n))
}

// reverse counts every vertex's own draws (self draws dropped) and
// returns the reverse entries grouped by bucket, with the buckets'
// starts: each span counts per bucket first, so that it then writes to
// slots no other span touches.
func (d randomDraws) reverse(spans []workSpan) (own []int32, pairs []drawPair, bucketStart []int64) {
	nb := d.buckets()
	own = make([]int32, d.n)
	slot := make([][]int64, len(spans)) // per span, per bucket: count, then write position
	runSpans(spans, func(si int, s workSpan) {
		c := make([]int64, nb)
		for u := int32(s.lo); u < int32(s.hi); u++ {
			k := d.outs(u)
			for r := 0; r < k; r++ {
				if v := d.target(u, r); v != u {
					own[u]++
					c[v>>randomBucketBits]++
				}
			}
		}
		slot[si] = c
	})
	bucketStart = make([]int64, nb+1)
	for b := range nb {
		sum := bucketStart[b]
		for si := range spans {
			c := slot[si][b]
			slot[si][b] = sum
			sum += c
		}
		bucketStart[b+1] = sum
	}
	pairs = make([]drawPair, bucketStart[nb])
	runSpans(spans, func(si int, s workSpan) {
		pos := slot[si]
		for u := int32(s.lo); u < int32(s.hi); u++ {
			k := d.outs(u)
			for r := 0; r < k; r++ {
				if v := d.target(u, r); v != u {
					b := v >> randomBucketBits
					pairs[pos[b]] = drawPair{v, u}
					pos[b]++
				}
			}
		}
	})
	return own, pairs, bucketStart
}

// offsets returns the row offsets: each row's own draws plus the
// vertices that drew it, counted bucket by bucket.
func (d randomDraws) offsets(own []int32, pairs []drawPair, bucketStart []int64) []int64 {
	off := make([]int64, d.n+1)
	runSpans(splitRange(d.buckets(), 1), func(_ int, s workSpan) {
		for b := s.lo; b < s.hi; b++ {
			lo, hi := d.bucketRange(b)
			for v := lo; v < hi; v++ {
				off[v+1] = int64(own[v])
			}
			for _, p := range pairs[bucketStart[b]:bucketStart[b+1]] {
				off[p.v+1]++
			}
		}
	})
	for v := range d.n {
		off[v+1] += off[v]
	}
	return off
}

// fill writes every row: the vertex's own draws, drawn again, then the
// reverse entries of its bucket.
func (d randomDraws) fill(off []int64, pairs []drawPair, bucketStart []int64) []int32 {
	adj := make([]int32, off[d.n])
	runSpans(splitRange(d.buckets(), 1), func(_ int, s workSpan) {
		var cur []int64
		for b := s.lo; b < s.hi; b++ {
			lo, hi := d.bucketRange(b)
			cur = cur[:0]
			for u := lo; u < hi; u++ {
				k, w := d.outs(u), off[u]
				for r := 0; r < k; r++ {
					if v := d.target(u, r); v != u {
						adj[w] = v
						w++
					}
				}
				cur = append(cur, w)
			}
			for _, p := range pairs[bucketStart[b]:bucketStart[b+1]] {
				adj[cur[p.v-lo]] = p.u
				cur[p.v-lo]++
			}
		}
	})
	return adj
}

// sortDedupRows sorts every row and removes repeats, then packs the rows.
func sortDedupRows(off []int64, adj []int32, spans []workSpan) ([]int64, []int32) {
	n := len(off) - 1
	length := make([]int64, n)
	runSpans(spans, func(_ int, s workSpan) {
		for v := s.lo; v < s.hi; v++ {
			row := adj[off[v]:off[v+1]]
			slices.Sort(row)
			length[v] = int64(len(slices.Compact(row)))
		}
	})
	return packRows(off, length, adj, spans)
}

// packRows moves row v, which holds length[v] ≤ off[v+1]−off[v] entries at
// off[v], to close the gaps between rows, and returns the new offsets (in
// off) and the shortened adjacency. It packs within each span in parallel,
// then slides the spans left in order: a span's new start never passes its
// old one, so nothing unread is overwritten.
func packRows(off, length []int64, adj []int32, spans []workSpan) ([]int64, []int32) {
	n := len(off) - 1
	spanLen := make([]int64, len(spans))
	runSpans(spans, func(si int, s workSpan) {
		w := off[s.lo]
		for v := s.lo; v < s.hi; v++ {
			w += int64(copy(adj[w:], adj[off[v]:off[v]+length[v]]))
		}
		spanLen[si] = w - off[s.lo]
	})
	w := int64(0)
	for si, s := range spans {
		w += int64(copy(adj[w:], adj[off[s.lo]:off[s.lo]+spanLen[si]]))
	}
	for v := range n {
		off[v+1] = off[v] + length[v]
	}
	return off, slices.Clip(adj[:w])
}

// Relabel returns g with its vertices in a random order that depends only
// on seed and N, and the permutation perm[old] = new that it applied.
// Coordinates, classes and Dirichlet flags move with their vertices.
// A nil g is the empty graph.
func Relabel(g *Graph, seed uint64) (*Graph, []int32) {
	n := g.N()
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	r := rand.New(rand.NewPCG(seed, 0x6d697367726964)) // "misgrid"
	for i := n - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	return g.permute(perm), perm // a permutation by construction
}
