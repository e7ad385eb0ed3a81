package mesh

import (
	"cmp"
	"math"
	"slices"
)

// Reorderings return a permutation perm[old] = new for Graph.Permute.
// They are deterministic: ties are broken by vertex id.

// Bandwidth returns the largest |u−v| over the edges of g.
func Bandwidth(g *Graph) int {
	bw := 0
	for v := range g.N() {
		row := g.Neighbors(int32(v))
		if len(row) == 0 {
			continue
		}
		// Rows are sorted, so the extremes are at the ends.
		bw = max(bw, v-int(row[0]), int(row[len(row)-1])-v)
	}
	return bw
}

// RCM returns the reverse Cuthill–McKee ordering of g. Each connected
// component, taken in order of its lowest vertex id, is numbered by a
// breadth-first search from a pseudo-peripheral vertex (found by the
// George–Liu iteration), visiting the unnumbered neighbours of each vertex
// in order of increasing degree, then id; the whole sequence is reversed.
// It narrows the bandwidth, which keeps neighbours close in memory.
func RCM(g *Graph) []int32 {
	n := g.N()
	order := make([]int32, 0, n)
	b := newBFS(n)
	done := make([]bool, n)
	var cand []int32
	for s := range n {
		if done[s] {
			continue
		}
		if g.Degree(int32(s)) == 0 {
			done[s] = true
			order = append(order, int32(s))
			continue
		}
		start := b.peripheral(g, int32(s))
		head := len(order)
		order = append(order, start)
		done[start] = true
		for head < len(order) {
			v := order[head]
			head++
			cand = cand[:0]
			for _, u := range g.Neighbors(v) {
				if !done[u] {
					done[u] = true
					cand = append(cand, u)
				}
			}
			slices.SortFunc(cand, func(a, c int32) int {
				if r := cmp.Compare(g.Degree(a), g.Degree(c)); r != 0 {
					return r
				}
				return cmp.Compare(a, c)
			})
			order = append(order, cand...)
		}
	}
	perm := make([]int32, n)
	for i, v := range order {
		perm[v] = int32(n - 1 - i)
	}
	return perm
}

// bfs holds the scratch of repeated breadth-first searches. level is −1
// outside the last search, and each search resets the vertices of the one
// before, so a search costs the size of what it visits, never n. Searches
// that run at once in disjoint vertex sets may share level.
type bfs struct {
	level []int32
	queue []int32
}

func newBFS(n int) *bfs {
	return &bfs{level: slices.Repeat([]int32{-1}, n)}
}

// reset forgets the last search.
func (b *bfs) reset() {
	for _, u := range b.queue {
		b.level[u] = -1
	}
	b.queue = b.queue[:0]
}

// run searches from s within the vertices where in(v) holds (all when in
// is nil), leaving the visit order in b.queue and depths in b.level. It
// reads and writes the levels of those vertices only.
func (b *bfs) run(g *Graph, s int32, in func(int32) bool) {
	b.reset()
	b.queue = append(b.queue, s)
	b.level[s] = 0
	for head := 0; head < len(b.queue); head++ {
		v := b.queue[head]
		for _, u := range g.Neighbors(v) {
			if (in == nil || in(u)) && b.level[u] < 0 {
				b.level[u] = b.level[v] + 1
				b.queue = append(b.queue, u)
			}
		}
	}
}

// peripheral returns a pseudo-peripheral vertex of the component of s
// (George–Liu): search from a vertex, move to a lowest-degree vertex of
// the last level, and repeat while the eccentricity grows.
func (b *bfs) peripheral(g *Graph, s int32) int32 {
	return b.peripheralIn(g, s, nil)
}

func (b *bfs) peripheralIn(g *Graph, s int32, in func(int32) bool) int32 {
	b.run(g, s, in)
	ecc := b.level[b.queue[len(b.queue)-1]]
	for {
		last := b.level[b.queue[len(b.queue)-1]]
		best := int32(-1)
		for i := len(b.queue) - 1; i >= 0 && b.level[b.queue[i]] == last; i-- {
			u := b.queue[i]
			if best < 0 || g.Degree(u) < g.Degree(best) || (g.Degree(u) == g.Degree(best) && u < best) {
				best = u
			}
		}
		b.run(g, best, in)
		e := b.level[b.queue[len(b.queue)-1]]
		if e <= ecc {
			return best
		}
		ecc, s = e, best
	}
}

// LocalityOrder returns an ordering that keeps neighbours close in memory
// at every scale, for graphs whose numbering has lost locality (a randomly
// relabelled or badly partitioned mesh).
//
// With coordinates it sorts vertices along a Hilbert curve through the
// bounding box (21 bits per axis in 3D, 31 in 2D): each octant, and each
// octant of it, is a contiguous id range, so a vertex's neighbours mostly
// share its cache lines and pages. Ties go to the lower old id.
//
// Without coordinates it bisects the graph recursively by breadth-first
// search: a part is searched from a pseudo-peripheral vertex and split
// into its first and second halves in search order, down to parts of 64
// vertices, which end up as contiguous id ranges. This is a coarse,
// geometry-free stand-in for the space-filling curve.
func LocalityOrder(g *Graph) []int32 {
	if g == nil {
		return []int32{}
	}
	if g.Dim >= 1 && g.Dim <= 3 && len(g.Coords) == g.Dim*g.N() && g.N() > 0 {
		return hilbertOrder(g.Coords, g.Dim)
	}
	return bisectionOrder(g)
}

// hilbertOrder sorts points along a Hilbert curve.
func hilbertOrder(coords []float64, dim int) []int32 {
	n := len(coords) / dim
	lo := slices.Repeat([]float64{math.Inf(1)}, dim)
	hi := slices.Repeat([]float64{math.Inf(-1)}, dim)
	for v := range n {
		for a := range dim {
			x := coords[v*dim+a]
			lo[a], hi[a] = min(lo[a], x), max(hi[a], x)
		}
	}
	bitsPer := 63 / dim
	if dim == 1 {
		bitsPer = 62
	}
	top := float64(uint64(1)<<bitsPer - 1)
	keys := make([]uint64, n)
	runSpans(splitRange(n, 1<<12), func(_ int, s workSpan) {
		var x [3]uint64
		for v := s.lo; v < s.hi; v++ {
			for a := range dim {
				t := 0.0
				if w := hi[a] - lo[a]; w > 0 {
					t = (coords[v*dim+a] - lo[a]) / w
				}
				x[a] = uint64(math.Round(t * top))
			}
			keys[v] = hilbertKey(x[:dim], bitsPer)
		}
	})
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(i)
	}
	radixSortByKey(keys, ids)
	perm := make([]int32, n)
	for newID, old := range ids {
		perm[old] = int32(newID)
	}
	return perm
}

// hilbertKey returns the distance along a Hilbert curve of the point x
// (each coordinate below 2^b), by Skilling's method: transform the
// coordinates in place into the "transposed" Hilbert index, then
// interleave their bits, most significant first.
func hilbertKey(x []uint64, b int) uint64 {
	d := len(x)
	if d == 1 {
		return x[0]
	}
	// Undo the excess work of the curve's rotations and reflections.
	for q := uint64(1) << (b - 1); q > 1; q >>= 1 {
		p := q - 1
		for i := range d {
			if x[i]&q != 0 {
				x[0] ^= p
			} else {
				t := (x[0] ^ x[i]) & p
				x[0] ^= t
				x[i] ^= t
			}
		}
	}
	// Gray encode.
	for i := 1; i < d; i++ {
		x[i] ^= x[i-1]
	}
	var t uint64
	for q := uint64(1) << (b - 1); q > 1; q >>= 1 {
		if x[d-1]&q != 0 {
			t ^= q - 1
		}
	}
	for i := range d {
		x[i] ^= t
	}
	var key uint64
	for bit := b - 1; bit >= 0; bit-- {
		for i := range d {
			key = key<<1 | (x[i]>>bit)&1
		}
	}
	return key
}

// radixSortByKey sorts ids by keys (both permuted together), stably, by
// least-significant-digit radix sort on 16-bit digits, skipping digits
// that are the same for every key.
func radixSortByKey(keys []uint64, ids []int32) {
	n := len(keys)
	if n < 2 {
		return
	}
	var or, and uint64 = 0, ^uint64(0)
	for _, k := range keys {
		or |= k
		and &= k
	}
	varying := or ^ and
	k2 := make([]uint64, n)
	i2 := make([]int32, n)
	var count [1 << 16]int
	for shift := 0; shift < 64; shift += 16 {
		if (varying>>shift)&0xffff == 0 {
			continue
		}
		clear(count[:])
		for _, k := range keys {
			count[(k>>shift)&0xffff]++
		}
		sum := 0
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for i, k := range keys {
			d := (k >> shift) & 0xffff
			k2[count[d]] = k
			i2[count[d]] = ids[i]
			count[d]++
		}
		copy(keys, k2)
		copy(ids, i2)
	}
}

// bisectionOrder numbers the vertices by recursive breadth-first
// bisection; see LocalityOrder. It works a level of the recursion at a
// time, the parts of a level in parallel: each search reads and writes
// only its own part's vertices, and parts are split after all searches of
// the level are done.
func bisectionOrder(g *Graph) []int32 {
	const leaf = 64
	n := g.N()
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	part := make([]int32, n) // each vertex's part, named by its first position
	placed := make([]bool, n)
	shared := newBFS(n)
	type rng struct{ lo, hi int }
	parts := []rng{{0, n}}
	for len(parts) > 0 {
		runSpans(splitRange(len(parts), 1), func(_ int, s workSpan) {
			b := &bfs{level: shared.level}
			var laid []int32
			for _, r := range parts[s.lo:s.hi] {
				id := int32(r.lo)
				in := func(u int32) bool { return part[u] == id }
				// Lay the part out in search order, one component
				// after another, each from a pseudo-peripheral vertex,
				// starting at the lowest id.
				members := slices.Clone(order[r.lo:r.hi])
				slices.Sort(members)
				laid = laid[:0]
				for _, v := range members {
					if placed[v] {
						continue
					}
					if g.Degree(v) == 0 {
						laid = append(laid, v)
						placed[v] = true
						continue
					}
					b.run(g, b.peripheralIn(g, v, in), in)
					for _, u := range b.queue {
						placed[u] = true
					}
					laid = append(laid, b.queue...)
				}
				b.reset()
				copy(order[r.lo:r.hi], laid)
				for _, u := range laid {
					placed[u] = false
				}
			}
		})
		var next []rng
		for _, r := range parts {
			if mid := r.lo + (r.hi-r.lo)/2; r.hi-r.lo > leaf {
				next = append(next, rng{r.lo, mid}, rng{mid, r.hi})
			}
		}
		runSpans(splitRange(len(next), 1), func(_ int, s workSpan) {
			for _, r := range next[s.lo:s.hi] {
				for _, u := range order[r.lo:r.hi] {
					part[u] = int32(r.lo)
				}
			}
		})
		parts = next
	}
	perm := make([]int32, n)
	for newID, old := range order {
		perm[old] = int32(newID)
	}
	return perm
}
