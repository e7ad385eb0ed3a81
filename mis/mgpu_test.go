package mis

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/cuda"
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
	lists := [][]int{{0}, {0, 0, 0}}
	if n >= 2 {
		lists = append(lists, []int{0, 1}, []int{1, 0, 1, 0, 0})
	}
	return lists
}

func TestMultiGPUIsGreedy(t *testing.T) {
	for _, devs := range mgpuDevices(t) {
		for _, c := range mgpuGraphs() {
			for _, dist := range []int{1, 2} {
				for _, staged := range []bool{false, true} {
					for _, hashed := range []bool{false, true} {
						pr := Priority{Seed: 3}
						if hashed {
							// Primaries and a seed with high bits: the
							// on-the-fly keys must match Keys exactly.
							pr = Priority{Kind: Degree, Seed: 1<<33 | 5}
						}
						name := fmt.Sprintf("%v/%s/d%d/staged=%v/hashed=%v", devs, c.name, dist, staged, hashed)
						keys, _ := Keys(c.g, pr)
						want := greedy(c.g, keys, dist)
						res, err := ComputeMultiGPU(context.Background(), c.g, MultiGPUOptions{
							Distance: dist, Priority: pr, Devices: devs, staged: staged,
							Partition: mgpuPartition(c.g.N(), len(devs), hashed), batch: 3, sweeps: 1 + 2*btoi(staged)})
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						for v, w := range want.In {
							if res.In[v] != w {
								t.Fatalf("%s: vertex %d in=%v, greedy says %v", name, v, res.In[v], w)
							}
						}
						if res.Size != want.Size {
							t.Fatalf("%s: size %d, greedy %d", name, res.Size, want.Size)
						}
					}
				}
			}
		}
	}
	if n := mgpuLive.Load(); n != 0 {
		t.Errorf("%d allocations left after the runs", n)
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
			inject: func(part, round int) bool { return part == bad && round == 2 }})
		if err == nil {
			t.Fatal("injected launch failure not reported")
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("part %d on device %d", bad, devs[bad])) {
			t.Errorf("error does not name the part: %v", err)
		}
		if n := mgpuLive.Load(); n != 0 {
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

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
