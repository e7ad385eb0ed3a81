package gpu_test

import (
	"errors"
	"testing"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
	"github.com/misgrid/misgrid/internal/kernels"
)

func TestUnavailable(t *testing.T) {
	if gpu.Unavailable(nil) != nil {
		t.Error("Unavailable(nil) is not nil")
	}
	base := errors.New("no device 7")
	err := gpu.Unavailable(base)
	if !errors.Is(err, cuda.ErrUnavailable) || !errors.Is(err, base) {
		t.Errorf("Unavailable(%v) = %v: want both wrapped", base, err)
	}
	if gpu.Unavailable(err) != err {
		t.Error("Unavailable wraps twice")
	}
}

// Every way to a GPU says why there is none with cuda.ErrUnavailable;
// with one, a loader sizes grids to what fits at once and refuses
// kernels its user did not name.
func TestOpen(t *testing.T) {
	names := []string{"mis_init", "mis_members"}
	if _, err := gpu.Open(-1, kernels.MIS, names); !errors.Is(err, cuda.ErrUnavailable) {
		t.Errorf("Open(-1): %v", err)
	}
	n, err := gpu.Count()
	if err != nil {
		if !errors.Is(err, cuda.ErrUnavailable) {
			t.Errorf("Count: %v", err)
		}
		if _, err := gpu.Open(0, kernels.MIS, names); !errors.Is(err, cuda.ErrUnavailable) {
			t.Errorf("Open without a GPU: %v", err)
		}
		t.Skip(err)
	}
	if _, err := gpu.Open(n, kernels.MIS, names); !errors.Is(err, cuda.ErrUnavailable) {
		t.Errorf("Open(%d) of %d devices: %v", n, n, err)
	}
	l, err := gpu.Open(0, kernels.MIS, names)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := gpu.Open(0, kernels.MIS, names); again != l {
		t.Error("Open does not reuse the loader")
	}
	if g := l.Grid("mis_init", 1, 256); g != 1 {
		t.Errorf("grid of 1 item: %d", g)
	}
	if big, huge := l.Grid("mis_init", 1<<40, 256), l.Grid("mis_init", 1<<41, 256); big != huge || big < 1 {
		t.Errorf("grids not capped at the resident blocks: %d, %d", big, huge)
	}
	if err := l.Launch(nil, "mis_compact", 1); err == nil {
		t.Error("launched a kernel that was not named")
	}
	if _, err := gpu.Open(0, kernels.MIS, []string{"no_such_kernel"}); err == nil {
		t.Error("loaded a kernel that does not exist")
	}
}

// A Context closed after staging leaves no ring behind for a later
// Context of the same handle (a primary context released by its last
// user goes with the ring's pinned memory): Stage hands f a Stager of
// the loader's own Context, and the copies both ways land intact.
func TestStageAfterClose(t *testing.T) {
	if err := cuda.Available(); err != nil {
		t.Skip(err)
	}
	dev, err := cuda.GetDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	src := make([]uint32, 3<<20+5)
	for i := range src {
		src[i] = uint32(i)*2654435761 + 1
	}
	for round := range 3 {
		ctx, err := dev.PrimaryContext()
		if err != nil {
			t.Fatal(err)
		}
		l, err := gpu.For(ctx, kernels.MIS, []string{"mis_init"})
		if err != nil {
			t.Fatal(err)
		}
		buf, err := ctx.Alloc(4 * int64(len(src)))
		if err != nil {
			t.Fatal(err)
		}
		got := make([]uint32, len(src))
		err = l.Stage(nil, func(st *cuda.Stager) error {
			if st.Context() != ctx {
				t.Errorf("round %d: the Stager belongs to another Context", round)
			}
			return errors.Join(cuda.StageToDevice(st, buf, 0, src), cuda.StageToHost(st, got, buf, 0))
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range src {
			if got[i] != src[i] {
				t.Fatalf("round %d: word %d came back as %d, want %d", round, i, got[i], src[i])
			}
		}
		if err := errors.Join(buf.Free(), l.Close(), ctx.Close()); err != nil {
			t.Fatal(err)
		}
	}
}
