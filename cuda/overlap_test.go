package cuda_test

import (
	"encoding/binary"
	"testing"

	"github.com/misgrid/misgrid/cuda"
)

// An overlapping launch starts while the launch before it runs, on
// devices of compute capability 9.0 and later with a CUDA 12 driver, and
// what is queued after it still waits for both.
func TestLaunchOverlap(t *testing.T) {
	ctx := gpu(t)
	mod := module(t, ctx)
	hold, peek := function(t, mod, "test_hold"), function(t, mod, "test_peek")
	major, _, err := ctx.Device().ComputeCapability()
	if err != nil {
		t.Fatal(err)
	}
	drv, err := cuda.DriverVersion()
	if err != nil {
		t.Fatal(err)
	}
	buf, err := ctx.Alloc(8)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	flag, err := buf.View(0, 4)
	if err != nil {
		t.Fatal(err)
	}
	seen, err := buf.View(4, 4)
	if err != nil {
		t.Fatal(err)
	}
	host, err := ctx.AllocHost(8)
	if err != nil {
		t.Fatal(err)
	}
	defer host.Free()
	s, err := ctx.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, overlap := range []bool{false, true} {
		if err := buf.MemsetAsync32(0, s); err != nil {
			t.Fatal(err)
		}
		// About 30 ms at the clocks of current GPUs: far longer than
		// the start of a launch.
		one := cuda.Launch{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}, Stream: s}
		if err := hold.Launch(one, flag, int64(50_000_000)); err != nil {
			t.Fatal(err)
		}
		one.Overlap = overlap
		if err := peek.Launch(one, flag, seen); err != nil {
			t.Fatal(err)
		}
		if err := buf.CopyToHostAsync(host, 0, 0, 8, s); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(); err != nil {
			t.Fatal(err)
		}
		b := host.Bytes()
		got := []int32{int32(binary.LittleEndian.Uint32(b)), int32(binary.LittleEndian.Uint32(b[4:]))}
		if got[0] != 1 {
			t.Errorf("overlap %v: a copy queued after both launches read the flag as %d, before the first one set it", overlap, got[0])
		}
		// Only an overlapping launch on Hopper or later with a CUDA 12
		// driver starts before the flag is set.
		early := overlap && major >= 9 && drv >= 12000
		want := int32(1)
		if early {
			want = 0
		}
		if got[1] != want {
			t.Errorf("overlap %v on compute capability %d, driver %d: the second launch saw the flag %d, want %d", overlap, major, drv, got[1], want)
		}
	}
}
