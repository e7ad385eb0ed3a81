package mis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/internal/testgraphs"
	"github.com/misgrid/misgrid/mesh"
)

// mgpuDevices returns the device lists to test: several parts on device
// 0 always, and parts spread over all devices when there are several.
func mgpuDevices(t *testing.T) [][]int {
	if err := cuda.Available(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	n, err := cuda.DeviceCount()
	if err != nil || n == 0 {
		t.Skipf("no GPU: %v", err)
	}
	lists := [][]int{{0}, {0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0, 0}}
	if n >= 2 {
		lists = append(lists, []int{0, 1}, []int{1, 0, 1, 0, 0})
	}
	return lists
}

func TestMultiGPUIsGreedy(t *testing.T) {
	lists := mgpuDevices(t)
	images := map[string]bool{}
	for _, devs := range lists {
		t.Run(strings.Trim(strings.ReplaceAll(fmt.Sprint(devs), " ", ","), "[]"), func(t *testing.T) { multiGPUIsGreedy(t, devs, images) })
	}
	if n := misgpu.LiveAllocations(); n != 0 {
		t.Errorf("%d allocations left after the runs", n)
	}
	// Every image of the parts' kernels gave the greedy set: part.cu's
	// (ghosts in the tables, one part in another order), part3w.cu's
	// (four ranges of a random graph), part2w.cu's (the inner ranges of
	// three or five) and part1w.cu's (one part in id order; on two GPUs
	// two ranges).
	want := []string{"part.cu", "part1w.cu", "part2w.cu", "part3w.cu"}
	for _, im := range want {
		if !images[im] && !t.Failed() {
			t.Errorf("no run ran %s's image (ran %v)", im, images)
		}
	}
}

// multiGPUIsGreedy checks the driver on one device list against the
// greedy set: every test graph, distance and priority, with stores,
// pairs and mailboxes, contiguous, hashed and locality partitions, and
// ranges with every ghost in the tables (no windows).
func multiGPUIsGreedy(t *testing.T, devs []int, images map[string]bool) {
	pulls := 0
	defer func() {
		if len(devs) > 1 && pulls == 0 && !t.Failed() {
			t.Errorf("no run on %v pulled", devs)
		}
	}()
	for _, c := range mgpuGraphs() {
		lp, order, err := LocalityPartition(c.g, len(devs))
		if err != nil {
			t.Fatal(err)
		}
		for _, dist := range []int{1, 2} {
			for _, pr := range []Priority{{Kind: Hash, Seed: 3}, {Kind: Degree, Seed: 1<<33 | 5}, {Kind: Boundary}} {
				// Primaries and a seed with high bits: the keys the
				// parts rebuild must match Keys exactly.
				keys, _ := Keys(c.g, pr)
				want := greedy(c.g, keys, dist)
				opts := []MultiGPUOptions{{}, {pairs: true}, {Partition: mgpuPartition(c.g.N(), len(devs), true), mailboxes: true}}
				if pr.Kind == Hash {
					// Locality and tables: the parts key their ghosts
					// through the id tables, comparing hash prefixes.
					// sendForward: part_send beside the tails after
					// every launch, and pulls of what goes back.
					opts = append(opts, MultiGPUOptions{sendForward: true}, MultiGPUOptions{push: true}, MultiGPUOptions{push: true, split: true},
						MultiGPUOptions{Partition: lp, Order: order}, MultiGPUOptions{tables: true})
				}
				if pr.Kind == Degree {
					opts = append(opts, MultiGPUOptions{mailboxes: true}, MultiGPUOptions{Partition: lp, Order: order},
						MultiGPUOptions{tables: true}, MultiGPUOptions{split: true, noTailSends: true})
				}
				for _, o := range opts {
					name := fmt.Sprintf("%v/%s/d%d/%v/mailboxes=%v/partition=%v/order=%v/tables=%v/split=%v/push=%v/sendForward=%v", devs, c.name, dist, pr.Kind,
						o.mailboxes, o.Partition != nil, o.Order != nil, o.tables, o.split, o.push, o.sendForward)
					o.Distance, o.Priority, o.Devices = dist, pr, devs
					res, err := ComputeMultiGPU(context.Background(), c.g, o)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if i := testgraphs.FirstDiff(res.In, want.In); i >= 0 || res.Size != want.Size {
						t.Fatalf("%s: differs from the greedy set at vertex %d (%d members, want %d)", name, i, res.Size, want.Size)
					}
					// Parts that store into each other's states (over
					// peer access, or on one device, whose tails split
					// it) run MIS-1's tail that sends by itself.
					stores := len(devs) > 1 && !slices.ContainsFunc(res.Links, func(l string) bool { return strings.HasSuffix(l, "mailbox") })
					pull := slices.ContainsFunc(res.Links, func(l string) bool { return strings.HasSuffix(l, " pull") })
					if pull && (pr.Kind != Hash || o.push || o.pairs || o.mailboxes || !stores) {
						t.Fatalf("%s: parts pull over %v", name, res.Links)
					}
					if pull {
						pulls++
					}
					for _, p := range res.Plans {
						im, _, _ := strings.Cut(p, ":")
						images[im] = true
					}
					if tail := slices.ContainsFunc(res.Plans, func(p string) bool { return strings.Contains(p, "part1_tail") }); stores &&
						dist == 1 && !o.mailboxes && !o.pairs && !o.noTailSends && !tail {
						t.Fatalf("%s: plans %v over %v without the sending tail", name, res.Plans, res.Links)
					}
				}
			}
		}
	}
}

// TestMultiGPUGhostPrefixes: with hash keys every ghost state a run
// leaves on a part still carries the top six bits of its vertex's hash
// (PART_PREFIX in mis.cu), whatever brought the ghost's decision (stores,
// pairs, mailboxes, pulls, the sending tail): the kernels compare keys by
// those bits, so a store that dropped them would decide by a wrong key.
func TestMultiGPUGhostPrefixes(t *testing.T) {
	for _, devs := range mgpuDevices(t) {
		for _, c := range mgpuGraphs() {
			lp, order, err := LocalityPartition(c.g, len(devs))
			if err != nil {
				t.Fatal(err)
			}
			for _, dist := range []int{1, 2} {
				for _, o := range []MultiGPUOptions{{}, {mailboxes: true}, {pairs: true}, {Partition: lp, Order: order}} {
					pr := Priority{Kind: Hash, Seed: 1<<33 | 7}
					name := fmt.Sprintf("%v/%s/d%d/mailboxes=%v/pairs=%v/locality=%v", devs, c.name, dist, o.mailboxes, o.pairs, o.Order != nil)
					o.Distance, o.Priority, o.Devices = dist, pr, devs
					ghostPrefixes(t, name, c.g, o)
				}
			}
		}
	}
}

func ghostPrefixes(t *testing.T, name string, g *mesh.Graph, o MultiGPUOptions) {
	m, err := NewMultiGPU(g, o)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer m.Close()
	if _, err := m.Run(context.Background()); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for q, p := range m.parts {
		st, err := m.pp.GhostStates(q)
		if err != nil {
			t.Fatalf("%s: part %d: %v", name, q, err)
		}
		for i, s := range st {
			v := p.global[p.gf()+i]
			if v < 0 {
				continue // a window's hole
			}
			if want := uint8(Hash32(v, o.Priority.Seed) >> 26); s>>2 != want {
				t.Fatalf("%s: part %d: ghost %d (vertex %d) in state %#x carries prefix %d, want %d", name, q, i, v, s, s>>2, want)
			}
		}
	}
}

// TestMultiGPUFault makes one part's launch fail mid-run: the run returns
// an error naming that part and frees everything on every device.
func TestMultiGPUFault(t *testing.T) {
	lists := mgpuDevices(t)
	devs := lists[len(lists)-1]
	// Large enough that a leaked buffer would show in the free memory
	// (the adjacency alone is about 7 MB per part).
	g := mesh.Hex27Graph(40, 40, 40)
	for _, dist := range []int{1, 2} {
		ctxs := map[int]*cuda.Context{}
		free := map[int]int64{}
		// A clean run first, so that lazily loaded driver state is there
		// before the memory is measured.
		if _, err := ComputeMultiGPU(context.Background(), g, MultiGPUOptions{Distance: dist, Devices: devs}); err != nil {
			t.Fatal(err)
		}
		for _, d := range devs {
			dev, _ := cuda.GetDevice(d)
			c, err := dev.PrimaryContext()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctxs[d] = c
			free[d], _, _ = c.MemInfo()
		}
		bad := len(devs) - 1
		_, err := ComputeMultiGPU(context.Background(), g, MultiGPUOptions{Distance: dist, Devices: devs,
			inject: func(part, launch int) bool { return part == bad && launch == 2 }})
		if err == nil {
			t.Fatal("injected launch failure not reported")
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("part %d on device %d", bad, devs[bad])) {
			t.Errorf("error does not name the part: %v", err)
		}
		if n := misgpu.LiveAllocations(); n != 0 {
			t.Errorf("%d allocations left after the failure", n)
		}
		for d, c := range ctxs {
			f, _, _ := c.MemInfo()
			// The driver keeps up to 2 MiB of its own after a refused
			// launch (as measured); our buffers are far larger.
			if f < free[d]-(2<<20) {
				t.Errorf("device %d: %d bytes less free after the failed run", d, free[d]-f)
			}
		}
		// The devices are still usable.
		if _, err := ComputeMultiGPU(context.Background(), g, MultiGPUOptions{Distance: dist, Devices: devs}); err != nil {
			t.Fatalf("run after the failure: %v", err)
		}
	}
}

// TestMultiGPUReusesDevices: runs on devices that ran parts before load
// nothing and keep the devices' contexts. A part that retained its
// device's primary context and released it at Close would have the
// driver destroy the context at its last release wherever no other user
// held it, and every run create it again (about 150 ms a device, ten
// times what a run on a test graph takes) and load the image into each
// part.
func TestMultiGPUReusesDevices(t *testing.T) {
	lists := mgpuDevices(t)
	devs := lists[len(lists)-1]
	g := mesh.Hex27Graph(7, 6, 5)
	for _, dist := range []int{1, 2} {
		o := MultiGPUOptions{Distance: dist, Devices: devs}
		if _, err := ComputeMultiGPU(context.Background(), g, o); err != nil {
			t.Fatal(err)
		}
		made := misgpu.LoadersMade()
		for range 3 {
			if _, err := ComputeMultiGPU(context.Background(), g, o); err != nil {
				t.Fatal(err)
			}
		}
		if n := misgpu.LoadersMade() - made; n != 0 {
			t.Errorf("d%d: 3 more runs on %v made %d part loaders, want 0", dist, devs, n)
		}
	}
	if n := misgpu.LiveAllocations(); n != 0 {
		t.Errorf("%d allocations left after the runs", n)
	}
}

// TestMultiGPUChainPriorities: a priority that chains the greedy order
// along the graph takes one round per link; the driver stops when the
// rounds stop paying and the serial greedy finishes, with the greedy set.
func TestMultiGPUChainPriorities(t *testing.T) {
	lists := mgpuDevices(t)
	path := testgraphs.Path(20_000)
	rising := make([]float64, path.N())
	for v := range rising {
		rising[v] = float64(v)
	}
	for _, devs := range lists {
		for _, dist := range []int{1, 2} {
			for _, staged := range []bool{false, true} {
				p := Priority{Kind: User, Values: rising}
				keys, err := Keys(path, p)
				if err != nil {
					t.Fatal(err)
				}
				want := greedy(path, keys, dist)
				name := fmt.Sprintf("%v d%d staged=%v", devs, dist, staged)
				got, err := ComputeMultiGPU(context.Background(), path, MultiGPUOptions{Distance: dist, Priority: p, Devices: devs, mailboxes: staged})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if i := testgraphs.FirstDiff(got.In, want.In); i >= 0 || got.Size != want.Size {
					t.Errorf("%s: differs from the greedy set at vertex %d (%d members, want %d)", name, i, got.Size, want.Size)
				}
				// Without the stall: one round per link, 10,000 on the
				// path. A persistent tail's passes count as rounds, and
				// a tail takes a link per pass up to its bound
				// (TAIL_PASSES, 4,096): with it, 2,814 on five parts of
				// one GPU.
				if !got.Stalled || got.Rounds > 5000 {
					t.Errorf("%s: stalled=%v after %d rounds: the stall did not stop the rounds", name, got.Stalled, got.Rounds)
				}
			}
		}
	}
}

// mixedKeysCase is a graph and a user priority whose ranks fit the state
// byte in the halos of parts 1 and 2 of three contiguous ranges but not
// in part 0's: z-slabs of a 7-point grid, ranks of 40 hashed values
// everywhere but on the two bottom layers, which hold 200 larger values
// (more than two hops from parts 1 and 2). Part 0 then keys by 32-bit
// ranks and keeps no class bits in its states, and parts 1 and 2 key
// their ghosts of part 0 by the bits part 0 sends.
func mixedKeysCase() (*mesh.Graph, Priority) {
	g := mesh.Grid7Graph(10, 10, 12)
	vals := make([]float64, g.N())
	for v := range vals {
		vals[v] = float64(Hash32(int32(v), 1) % 40)
		if v < 200 {
			vals[v] = float64(1000 + v)
		}
	}
	return g, Priority{Kind: User, Seed: 5, Values: vals}
}

// TestMixedKeysLayout checks the premise of TestMultiGPUMixedKeys on the
// host: part 0's primaries do not fit the state byte, the others' do.
func TestMixedKeysLayout(t *testing.T) {
	g, p := mixedKeysCase()
	keys, err := Keys(g, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, dist := range []int{1, 2} {
		ps, err := layoutParts(g, 3, nil, keys, dist, nil, misgpu.MaxWindows)
		if err != nil {
			t.Fatal(err)
		}
		for q, part := range ps {
			small := part.spec.Prim == nil || slices.Max(part.spec.Prim) < 64
			if small != (q > 0) {
				t.Fatalf("d%d part %d: primaries fit the state byte: %v", dist, q, small)
			}
		}
	}
}

// TestMultiGPUMixedKeys: parts that key by class bytes and by 32-bit
// ranks side by side find the greedy set (a part of ranks used to send
// its boundary states without class bits, which its neighbours read as
// class 0).
func TestMultiGPUMixedKeys(t *testing.T) {
	lists := [][]int{{0, 0, 0}}
	if slices.ContainsFunc(mgpuDevices(t), func(devs []int) bool { return slices.Contains(devs, 1) }) {
		lists = append(lists, []int{0, 1, 1})
	}
	g, p := mixedKeysCase()
	keys, err := Keys(g, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, devs := range lists {
		for _, dist := range []int{1, 2} {
			want := greedy(g, keys, dist)
			for _, staged := range []bool{false, true} {
				res, err := ComputeMultiGPU(context.Background(), g, MultiGPUOptions{Distance: dist, Priority: p, Devices: devs, mailboxes: staged})
				if err != nil {
					t.Fatal(err)
				}
				if i := testgraphs.FirstDiff(res.In, want.In); i >= 0 || res.Size != want.Size {
					t.Errorf("%v d%d mailboxes=%v: differs from the greedy set at vertex %d (%d members, want %d; stalled %v)",
						devs, dist, staged, i, res.Size, want.Size, res.Stalled)
				}
			}
		}
	}
}

// TestMultiGPUMailboxes runs three parts on GPU 0 through pinned host
// mailboxes over and over, every vertex near a cut (hashed partition):
// each run's mailboxes reuse memory that the runs before filled with
// their pairs, and a count can run ahead of the pairs it covers. A pair
// of another run applied used to write a slot out of range (an illegal
// address, a sticky fault of the context) or a wrong state.
func TestMultiGPUMailboxes(t *testing.T) {
	mgpuDevices(t)
	devs := []int{0, 0, 0}
	for rep := range 3 {
		for _, c := range mgpuGraphs()[1:3] {
			part := mgpuPartition(c.g.N(), len(devs), true)
			for _, dist := range []int{1, 2} {
				for _, pr := range []Priority{{Kind: Hash, Seed: uint64(rep)}, {Kind: Boundary}} {
					keys, _ := Keys(c.g, pr)
					want := greedy(c.g, keys, dist)
					for _, pairs := range []bool{false, true} {
						res, err := ComputeMultiGPU(context.Background(), c.g, MultiGPUOptions{Distance: dist, Priority: pr,
							Devices: devs, Partition: part, mailboxes: !pairs, pairs: pairs})
						name := fmt.Sprintf("rep %d %s d%d %v pairs=%v", rep, c.name, dist, pr.Kind, pairs)
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						if i := testgraphs.FirstDiff(res.In, want.In); i >= 0 || res.Size != want.Size {
							t.Fatalf("%s: differs from the greedy set at vertex %d", name, i)
						}
					}
				}
			}
		}
	}
}

// TestGatherPlacesFlags checks that the parts' flags land at their
// global ids, counted once, over a graph large enough that gather splits
// every part's rows between goroutines.
func TestGatherPlacesFlags(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	g, _ := mesh.Relabel(mesh.Hex27Graph(64, 64, 112), 3)
	keys, err := Keys(g, Priority{Kind: Hash})
	if err != nil {
		t.Fatal(err)
	}
	partition, order, err := LocalityPartition(g, 3)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := layoutParts(g, 3, partition, keys, 1, order, misgpu.MaxWindows)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	want := make([]bool, g.N())
	members := 0
	in := make([][]bool, len(parts))
	for q, p := range parts {
		in[q] = make([]bool, p.own)
		for i := range in[q] {
			in[q][i] = rng.IntN(3) == 0
			want[p.global[i]] = in[q][i]
			if in[q][i] {
				members++
			}
		}
	}
	m := &MultiGPU{g: g, parts: parts}
	got, size := m.gather(in)
	if !slices.Equal(got, want) {
		t.Fatal("the flags are not at their global ids")
	}
	if size != members {
		t.Fatalf("size %d, want %d", size, members)
	}
}
