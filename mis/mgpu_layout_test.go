package mis

import (
	"fmt"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/mesh"
)

// mgpuGraphs are the graphs of the multi-GPU tests: FE meshes, where
// contiguous ranges cut thin slabs, and random graphs, where every part
// meets every other.
func mgpuGraphs() []struct {
	name string
	g    *mesh.Graph
} {
	return []struct {
		name string
		g    *mesh.Graph
	}{
		{"hex27-7x6x5", mesh.Hex27Graph(7, 6, 5)},
		{"grid7-9x8x3", mesh.Grid7Graph(9, 8, 3)},
		{"random-600-d6", mesh.RandomGraph(600, 6, 3)},
		{"random-50-d2", mesh.RandomGraph(50, 2, 9)},
	}
}

func mgpuPartition(n, k int, hashed bool) []int32 {
	if !hashed {
		return nil
	}
	p := make([]int32, n)
	for v := range p {
		p[v] = int32(Hash32(int32(v), 5) % uint32(k))
	}
	return p
}

// TestLayoutParts checks that every local row names the same neighbours
// as the graph and that each send list is, position for position, the
// receiver's ghost segment.
func TestLayoutParts(t *testing.T) {
	for _, c := range mgpuGraphs() {
		for _, k := range []int{1, 2, 3, 5} {
			for _, hashed := range []bool{false, true} {
				keys, _ := Keys(c.g, Priority{})
				ps, err := layoutParts(c.g, k, mgpuPartition(c.g.N(), k, hashed), keys)
				if err != nil {
					t.Fatal(err)
				}
				owned := 0
				for q, p := range ps {
					owned += p.own
					gid := func(l int32) int32 {
						if int(l) < p.own {
							return p.global[l]
						}
						return p.ghostIDs[int(l)-p.own]
					}
					for i, v := range p.global {
						row := p.adj[p.offsets[i]:p.offsets[i+1]]
						want := c.g.Neighbors(v)
						if len(row) != len(want) {
							t.Fatalf("%s k=%d part %d row %d: %d entries, want %d", c.name, k, q, i, len(row), len(want))
						}
						for j, l := range row {
							if gid(l) != want[j] {
								t.Fatalf("%s k=%d part %d row %d entry %d: global %d, want %d", c.name, k, q, i, j, gid(l), want[j])
							}
						}
					}
					for l := range p.local() {
						if p.keys[l] != keys[gid(int32(l))] {
							t.Fatalf("%s part %d: key of local %d is not that of its global id", c.name, q, l)
						}
					}
					for to, list := range p.send {
						seg := ps[to].ghostIDs[ps[to].ghostOff[q]:ps[to].ghostOff[q+1]]
						if len(list) != len(seg) {
							t.Fatalf("%s k=%d: part %d sends %d states to part %d, which keeps %d ghosts of it", c.name, k, q, len(list), to, len(seg))
						}
						for i, l := range list {
							if p.global[l] != seg[i] {
								t.Fatalf("%s k=%d: send list %d→%d position %d is %d, ghost is %d", c.name, k, q, to, i, p.global[l], seg[i])
							}
						}
					}
				}
				if owned != c.g.N() {
					t.Fatalf("%s k=%d: parts own %d of %d vertices", c.name, k, owned, c.g.N())
				}
			}
		}
	}
}

// emulate runs the rounds of Run on the host: the same rules as the
// kernels of part.cu and the same ghost copies between phases. It checks
// the layout and schedule without a GPU.
func emulate(ps []*gpuPart, dist int) (in map[int32]bool, rounds int) {
	st := make([][]uint8, len(ps))
	m1 := make([][]uint64, len(ps))
	near := make([][]uint8, len(ps))
	for q, p := range ps {
		st[q] = make([]uint8, p.local())
		m1[q] = make([]uint64, p.local())
		near[q] = make([]uint8, p.local())
		for i := range m1[q] {
			m1[q][i] = ^uint64(0)
		}
	}
	push := func(arrs ...func(q int) any) {
		for q, p := range ps {
			for to, list := range p.send {
				off := ps[to].own + int(ps[to].ghostOff[q])
				for i, l := range list {
					for _, a := range arrs {
						switch x := a(q).(type) {
						case []uint8:
							a(to).([]uint8)[off+i] = x[l]
						case []uint64:
							a(to).([]uint64)[off+i] = x[l]
						}
					}
				}
			}
		}
	}
	stOf := func(q int) any { return st[q] }
	for {
		rounds++
		left := 0
		if dist == 1 {
			for q, p := range ps {
				for v := range p.own {
					if st[q][v] != 0 {
						continue
					}
					blocked, out := false, false
					for _, u := range p.adj[p.offsets[v]:p.offsets[v+1]] {
						if st[q][u] == pIn {
							out = true
							break
						}
						if st[q][u] == 0 && p.keys[u] > p.keys[v] {
							blocked = true
						}
					}
					switch {
					case out:
						st[q][v] = pOut
					case !blocked:
						st[q][v] = pIn
					default:
						left++
					}
				}
			}
			push(stOf)
		} else {
			for q, p := range ps {
				for w := range p.own {
					if near[q][w] != 0 {
						continue
					}
					m, nr := uint64(0), st[q][w] == pIn
					if st[q][w] != pOut {
						m = p.keys[w]
					}
					for _, u := range p.adj[p.offsets[w]:p.offsets[w+1]] {
						if st[q][u] == pIn {
							nr = true
						} else if st[q][u] == 0 {
							m = max(m, p.keys[u])
						}
					}
					m1[q][w] = m
					if nr {
						near[q][w] = 1
					}
				}
			}
			push(func(q int) any { return near[q] }, func(q int) any { return m1[q] })
			for q, p := range ps {
				for v := range p.own {
					if st[q][v] != 0 {
						continue
					}
					out, champ := near[q][v] != 0, m1[q][v] == p.keys[v]
					for _, w := range p.adj[p.offsets[v]:p.offsets[v+1]] {
						out = out || near[q][w] != 0
						champ = champ && m1[q][w] == p.keys[v]
					}
					switch {
					case out:
						st[q][v] = pOut
					case champ:
						st[q][v] = pIn
					default:
						left++
					}
				}
			}
			push(stOf)
		}
		if left == 0 {
			break
		}
	}
	in = map[int32]bool{}
	for q, p := range ps {
		for i, v := range p.global {
			if st[q][i] == pIn {
				in[v] = true
			}
		}
	}
	return in, rounds
}

func TestEmulatedMultiGPUIsGreedy(t *testing.T) {
	for _, c := range mgpuGraphs() {
		for _, dist := range []int{1, 2} {
			for _, pr := range []Priority{{}, {Seed: 77}, {Kind: Degree}} {
				keys, err := Keys(c.g, pr)
				if err != nil {
					t.Fatal(err)
				}
				want := greedy(c.g, keys, dist)
				for _, k := range []int{1, 2, 3, 5} {
					for _, hashed := range []bool{false, true} {
						name := fmt.Sprintf("%s/d%d/%v/k%d/hashed=%v", c.name, dist, pr.Kind, k, hashed)
						ps, err := layoutParts(c.g, k, mgpuPartition(c.g.N(), k, hashed), keys)
						if err != nil {
							t.Fatal(err)
						}
						in, _ := emulate(ps, dist)
						for v, w := range want.In {
							if in[int32(v)] != w {
								t.Fatalf("%s: vertex %d in=%v, greedy says %v", name, v, in[int32(v)], w)
							}
						}
					}
				}
			}
		}
	}
}

func TestLayoutPartsRejects(t *testing.T) {
	g := mesh.Hex27Graph(3, 3, 3)
	if _, err := layoutParts(g, 0, nil, make([]uint64, g.N())); err == nil {
		t.Error("0 parts accepted")
	}
	bad := slices.Repeat([]int32{0}, g.N())
	bad[5] = 4
	if _, err := layoutParts(g, 2, bad, make([]uint64, g.N())); err == nil {
		t.Error("partition entry out of range accepted")
	}
}

// TestKeyParts checks that the device's on-the-fly keys (primary rank and
// the hash of the global id) rebuild every local key of every part.
func TestKeyParts(t *testing.T) {
	g := mesh.Hex27Graph(9, 7, 5)
	for _, pr := range []Priority{{Seed: 7}, {Kind: Degree, Seed: 1<<40 | 9}} {
		keys, err := Keys(g, pr)
		if err != nil {
			t.Fatal(err)
		}
		for _, partition := range [][]int32{nil, mgpuPartition(g.N(), 3, true)} {
			parts, err := layoutParts(g, 3, partition, keys)
			if err != nil {
				t.Fatal(err)
			}
			for q, p := range parts {
				gown, base, prim := p.keyParts()
				if (prim == nil) != (pr.Kind == Hash) {
					t.Fatalf("%v part %d: prim nil=%v", pr.Kind, q, prim == nil)
				}
				if (gown == nil) != (partition == nil) {
					t.Fatalf("%v part %d: gown nil=%v for partition nil=%v", pr.Kind, q, gown == nil, partition == nil)
				}
				for u, want := range p.keys {
					var gid uint32
					switch {
					case u >= p.own:
						gid = uint32(p.ghostIDs[u-p.own])
					case gown != nil:
						gid = gown[u]
					default:
						gid = base + uint32(u)
					}
					var pu uint32
					if prim != nil {
						pu = prim[u]
					}
					if got := Key(pu, int32(gid), pr.Seed); got != want {
						t.Fatalf("%v part %d local %d: key %#x, want %#x", pr.Kind, q, u, got, want)
					}
				}
			}
		}
	}
}
