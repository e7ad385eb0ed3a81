package mis_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
	"github.com/misgrid/misgrid/mis/mistest"
)

// runGroup runs RunPart on every Local of locs with an in-process group,
// member q wrapped by wrap, and returns each part's error and how long
// it took to return.
func partRunGroup(t *testing.T, locs []mis.Local, opts mis.PartOptions, timeout time.Duration, wrap func(q int, ex mis.Exchanger) mis.Exchanger) ([]error, []time.Duration) {
	t.Helper()
	grp, err := mis.NewLocalGroup(len(locs), timeout)
	if err != nil {
		t.Fatal(err)
	}
	defer grp.Close()
	errs := make([]error, len(locs))
	took := make([]time.Duration, len(locs))
	start := time.Now()
	var wg sync.WaitGroup
	for q := range locs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ex := grp.Member(q)
			if wrap != nil {
				ex = wrap(q, ex)
			}
			_, errs[q] = mis.RunPart(context.Background(), ex, &locs[q], opts)
			took[q] = time.Since(start)
		}()
	}
	wg.Wait()
	return errs, took
}

// noLeak waits for the goroutines of a run to end: a part that failed
// must not leave anything running.
func partNoLeak(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Errorf("%d goroutines left running, %d before", runtime.NumGoroutine(), before)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func partSplit(t *testing.T, g *mesh.Graph, k int) []mis.Local {
	t.Helper()
	locs, err := mis.SplitGraph(g, k, nil)
	if err != nil {
		t.Fatal(err)
	}
	return locs
}

func TestPartFaultMidRun(t *testing.T) {
	before := runtime.NumGoroutine()
	g := partGrid7(12, 12, 12)
	for _, dist := range []int{1, 2} {
		for _, mode := range []mis.PartMode{mis.Exact, mis.ADMMA} {
			if mode == mis.ADMMA && dist == 2 {
				continue
			}
			opts := mis.PartOptions{Distance: dist, Mode: mode}
			errs, took := partRunGroup(t, partSplit(t, g, 4), opts, 10*time.Second, func(q int, ex mis.Exchanger) mis.Exchanger {
				if q == 2 {
					return &mistest.FaultyExchanger{Exchanger: ex, FailAt: 4}
				}
				return ex
			})
			for q, err := range errs {
				if err == nil {
					t.Errorf("d%d %v: part %d returned no error", dist, mode, q)
					continue
				}
				if q == 2 && !strings.Contains(err.Error(), "injected fault") {
					t.Errorf("failing part's error: %v", err)
				}
				if q != 2 && !errors.Is(err, mis.ErrAborted) {
					t.Errorf("part %d: %v, want ErrAborted", q, err)
				}
				// Abort reaches everyone at once: nobody waits for a timeout.
				if took[q] > 5*time.Second {
					t.Errorf("part %d took %v to fail", q, took[q])
				}
			}
		}
	}
	partNoLeak(t, before)
}

// A hung part: the others give up after the timeout, all with errors.
func TestPartFaultStall(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a timeout")
	}
	before := runtime.NumGoroutine()
	timeout := 200 * time.Millisecond
	errs, took := partRunGroup(t, partSplit(t, partGrid7(10, 10, 10), 3), mis.PartOptions{}, timeout, func(q int, ex mis.Exchanger) mis.Exchanger {
		if q == 1 {
			return &mistest.FaultyExchanger{Exchanger: ex, FailAt: 2, Stall: 1500 * time.Millisecond}
		}
		return ex
	})
	for q, err := range errs {
		if err == nil {
			t.Errorf("part %d returned no error", q)
			continue
		}
		if q != 1 && took[q] > 1200*time.Millisecond {
			t.Errorf("part %d took %v with a %v timeout", q, took[q], timeout)
		}
	}
	if !errors.Is(errs[0], mis.ErrTimeout) && !errors.Is(errs[2], mis.ErrTimeout) {
		t.Errorf("no part reports a timeout: %v / %v", errs[0], errs[2])
	}
	partNoLeak(t, before)
}

// One part with bad input: every part fails at once, the bad one saying
// where, the others that it was another part.
func TestPartFaultInvalidInput(t *testing.T) {
	g := partGrid7(6, 6, 6)
	locs := partSplit(t, g, 3)
	locs[1].Adj = slices.Clone(locs[1].Adj)
	locs[1].Adj[7] = int32(g.N() + 5)
	errs, _ := partRunGroup(t, locs, mis.PartOptions{}, 10*time.Second, nil)
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "out of range") {
		t.Errorf("bad part: %v", errs[1])
	}
	for _, q := range []int{0, 2} {
		if !errors.Is(errs[q], mis.ErrAborted) || !strings.Contains(errs[q].Error(), "part 1") {
			t.Errorf("part %d: %v, want a report of part 1's failure", q, errs[q])
		}
	}
}

// A cut edge listed on one side only.
func TestPartFaultAsymmetric(t *testing.T) {
	g := partRing(12)
	locs := partSplit(t, g, 2) // part 0 owns 0..5, part 1 owns 6..11
	l := &locs[0]
	// Row 5 is [4 6]: drop 6, so part 1 lists an edge 6-5 that part 0 lacks.
	l.Adj = append(slices.Clone(l.Adj[:l.Offsets[5]]), 4)
	l.Offsets = slices.Clone(l.Offsets)
	l.Offsets[6] = int64(len(l.Adj))
	errs, _ := partRunGroup(t, locs, mis.PartOptions{}, 10*time.Second, nil)
	for q, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "symmetric") && !errors.Is(err, mis.ErrAborted) {
			t.Errorf("part %d: %v, want an asymmetry error", q, err)
		}
	}
	if !strings.Contains(errs[0].Error()+errs[1].Error(), "symmetric") {
		t.Errorf("no part names the asymmetry: %v / %v", errs[0], errs[1])
	}
}

func TestPartCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := mis.ComputePartitioned(ctx, partGrid7(8, 8, 8), mis.PartOptions{Parts: 3})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v", err)
	}
}

// Each case breaks one rule of Local; RunPart must say which.
func TestRunPartValidation(t *testing.T) {
	g := partRing(8)
	good := func() mis.Local {
		l, _ := mis.SplitGraph(g, 1, nil)
		return l[0]
	}
	cases := []struct {
		name string
		edit func(l *mis.Local, o *mis.PartOptions)
		want string
	}{
		{"negative N", func(l *mis.Local, _ *mis.PartOptions) { l.N = -1 }, "N = -1"},
		{"ranges length", func(l *mis.Local, _ *mis.PartOptions) { l.Ranges = []int32{0, 4, 8} }, "len(Ranges)"},
		{"offsets length", func(l *mis.Local, _ *mis.PartOptions) { l.Offsets = l.Offsets[:3] }, "len(Offsets)"},
		{"offsets decrease", func(l *mis.Local, _ *mis.PartOptions) {
			l.Offsets = slices.Clone(l.Offsets)
			l.Offsets[2] = 0
		}, "Offsets[2] = 0 < Offsets[1]"},
		{"self loop", func(l *mis.Local, _ *mis.PartOptions) {
			l.Adj = slices.Clone(l.Adj)
			l.Adj[0] = 0
		}, "self loop"},
		{"class length", func(l *mis.Local, _ *mis.PartOptions) { l.Class = make([]mesh.Class, 3) }, "len(Class)"},
		{"class value", func(l *mis.Local, _ *mis.PartOptions) { l.Class = make([]mesh.Class, 8); l.Class[4] = 9 }, "Class[4]"},
		{"user without ranks", func(_ *mis.Local, o *mis.PartOptions) { o.Priority.Kind = mis.User }, "Local.Primary"},
		{"distance 3", func(_ *mis.Local, o *mis.PartOptions) { o.Distance = 3 }, "distance 3"},
		{"rows with ranges", func(l *mis.Local, _ *mis.PartOptions) { l.Rows = []int32{0, 1} }, "rows"},
		{"rows unsorted", func(l *mis.Local, _ *mis.PartOptions) {
			l.Ranges = nil
			l.Rows = []int32{0, 2, 1, 3, 4, 5, 6, 7}
		}, "Rows[2]"},
		{"ghost owned here", func(l *mis.Local, _ *mis.PartOptions) {
			l.Ranges = nil
			l.Rows = []int32{0, 1, 2, 3, 4, 5, 6, 7}
			l.Ghosts, l.GhostParts = []int32{3}, []int32{0}
		}, "not another part"},
		{"missing ghost", func(l *mis.Local, _ *mis.PartOptions) {
			l.Ranges = nil
			l.Rows = []int32{0, 1, 2, 3, 4, 5, 6}
			l.Offsets = l.Offsets[:8]
			l.Adj = l.Adj[:l.Offsets[7]]
		}, "neither a row nor listed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := good()
			var o mis.PartOptions
			c.edit(&l, &o)
			grp, _ := mis.NewLocalGroup(1, time.Second)
			defer grp.Close()
			_, err := mis.RunPart(context.Background(), grp.Member(0), &l, o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}
