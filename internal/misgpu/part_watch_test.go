package misgpu

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// watchTrace drives a partsWatch as the parts' sweeps do, one check at a
// time from the host's side. Its parts never wait (TestPartsWatchWaits
// has the waits): each says it settled some since its last check.
type watchTrace struct {
	w      *partsWatch
	checks []int
}

func newWatchTrace(own []int) *watchTrace {
	return &watchTrace{w: newPartsWatch(own), checks: make([]int, len(own))}
}

// check is part q's check of live after pass sweeps; it fails the test
// when the check blocks for more than a second.
func (tr *watchTrace) check(t *testing.T, q, pass int, live uint32) (bool, error) {
	t.Helper()
	tr.checks[q]++
	type out struct {
		stop bool
		err  error
	}
	c := make(chan out, 1)
	n := tr.checks[q]
	go func() {
		s, err := tr.w.check(context.Background(), q, pass, live, live+1, n)
		c <- out{s, err}
	}()
	select {
	case o := <-c:
		return o.stop, o.err
	case <-time.After(time.Second):
		t.Fatalf("part %d's check at sweep %d blocked", q, pass)
		return false, nil
	}
}

// TestPartsWatchStopsTogether: parts that settle vertices run on; once
// the rounds settle less than a 64th of the undecided vertices (after 64
// sweeps) every part stops, and keeps stopping.
func TestPartsWatchStopsTogether(t *testing.T) {
	tr := newWatchTrace([]int{1 << 20, 1 << 20})
	live := []uint32{1 << 20, 1 << 20}
	pass := 0
	for ; pass < 256; pass += 2 {
		for q := range live {
			live[q] -= live[q] / 16
			if stop, err := tr.check(t, q, pass, live[q]); stop || err != nil {
				t.Fatalf("part %d stopped at sweep %d (err %v) though every round settles a 16th", q, pass, err)
			}
		}
	}
	// Part 0 settles a 256th per check, part 1 nothing: slow rounds.
	stops := 0
	for r := 0; r < 3; r++ {
		pass += 2
		live[0] -= live[0] / 256
		for q := range live {
			s, err := tr.check(t, q, pass, live[q])
			if err != nil {
				t.Fatal(err)
			}
			if s {
				stops++
			}
		}
	}
	if stops == 0 {
		t.Fatal("no part stopped after three slow rounds")
	}
	for q := range live {
		if s, _ := tr.check(t, q, pass+2, live[q]/2); !s {
			t.Errorf("part %d: a stop did not stay", q)
		}
	}
	if !tr.w.stopped {
		t.Error("the watch does not say it stopped")
	}
}

// TestPartsWatchFewLive: the engine's rule has a part with fewer than
// 64 undecided vertices never slow (a 64th of them is 0); a part waiting
// on a neighbour that stopped would then spin for ever. Rounds that
// settle nothing are slow at any count.
func TestPartsWatchFewLive(t *testing.T) {
	tr := newWatchTrace([]int{40, 40})
	for pass := 2; pass < 400; pass += 2 {
		stopped := false
		for q := range 2 {
			s, err := tr.check(t, q, pass, 7)
			if err != nil {
				t.Fatal(err)
			}
			stopped = stopped || s
		}
		if stopped {
			if pass < stallFrom {
				t.Fatalf("stopped at sweep %d, before %d", pass, stallFrom)
			}
			return
		}
	}
	t.Fatal("parts that settle nothing with 7 vertices left did not stop")
}

// TestPartsWatchWaits: a part that settled nothing since its last check
// waits until every other running part has checked; a part that settled
// some does not; a part alone does not.
func TestPartsWatchWaits(t *testing.T) {
	w := newPartsWatch([]int{100, 100, 0})
	ctx := context.Background()
	if _, err := w.check(ctx, 0, 6, 50, 100, 1); err != nil {
		t.Fatal(err)
	}
	done, done2 := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		w.check(ctx, 0, 8, 50, 50, 2)
	}()
	select {
	case <-done:
		t.Fatal("a part that settled nothing did not wait for its neighbour")
	case <-time.After(50 * time.Millisecond):
	}
	// Part 1's first check ends the round (part 2 has no vertices).
	if _, err := w.check(ctx, 1, 6, 60, 100, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("the end of the round did not wake the waiting part")
	}
	// Both settle nothing: the one that checks while the other waits
	// goes on, and its next check frees the other.
	go func() {
		defer close(done2)
		w.check(ctx, 0, 10, 50, 50, 3)
	}()
	time.Sleep(20 * time.Millisecond)
	if stop, err := w.check(ctx, 1, 8, 60, 60, 2); stop || err != nil {
		t.Fatal(stop, err)
	}
	select {
	case <-done2:
	case <-time.After(time.Second):
		t.Fatal("a part's check did not free the other")
	}
	w.done(1, nil)
	start := time.Now()
	if _, err := w.check(ctx, 0, 12, 50, 50, 4); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > partsWatchWait/2 {
		t.Fatalf("a part alone waited %v", d)
	}
}

// TestPartsWatchFailure: a part's failure wakes a waiting part and stops
// the others with errAborted; a cancelled context ends a wait.
func TestPartsWatchFailure(t *testing.T) {
	w := newPartsWatch([]int{10, 10})
	ctx := context.Background()
	w.check(ctx, 0, 2, 5, 10, 1)
	errc := make(chan error, 1)
	go func() {
		_, err := w.check(ctx, 0, 4, 5, 5, 2)
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	w.done(1, errors.New("injected"))
	select {
	case err := <-errc:
		if !errors.Is(err, errAborted) {
			t.Fatalf("the waiting part got %v, want errAborted", err)
		}
	case <-time.After(time.Second):
		t.Fatal("a failure did not wake the waiting part")
	}
	if _, err := w.check(ctx, 0, 6, 4, 5, 3); !errors.Is(err, errAborted) {
		t.Fatalf("after a failure: %v, want errAborted", err)
	}

	w = newPartsWatch([]int{10, 10})
	w.check(ctx, 0, 2, 5, 10, 1)
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	if _, err := w.check(cctx, 0, 4, 5, 5, 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
}

// TestPartsWatchBound: a part that checks more often than any run can is
// an error, not a hang.
func TestPartsWatchBound(t *testing.T) {
	w := newPartsWatch([]int{5})
	if w.Limit() < stallFrom || w.Limit() > stallFrom+3*6 {
		t.Fatalf("bound %d for 5 vertices", w.Limit())
	}
	var err error
	checks := 0
	for live := uint32(5); err == nil && checks < 10*w.Limit(); checks++ {
		// A part that always settles a vertex but never ends: its live
		// count wraps, as a broken counter's would.
		live--
		_, err = w.check(context.Background(), 0, 2*checks, live, live+1, checks+1)
	}
	if err == nil || !strings.Contains(err.Error(), "a bug") {
		t.Fatalf("after %d checks: %v", checks, err)
	}
}

// TestSendClasses: the class bits a boundary vertex carries are its
// class, or its primary when that fits the state byte, whatever the
// sender keeps in its own states.
func TestSendClasses(t *testing.T) {
	s := &PartSpec{Send: []int32{0, 2, 3}, Prim: []uint32{5, 900, 63, 64}}
	if got, want := sendClasses(s), []uint8{5, 63, 0}; !slices.Equal(got, want) {
		t.Errorf("primaries: %v, want %v", got, want)
	}
	s = &PartSpec{Send: []int32{1}, Class: []uint8{0, 9}}
	if got := sendClasses(s); !slices.Equal(got, []uint8{9}) {
		t.Errorf("classes: %v", got)
	}
	if got := sendClasses(&PartSpec{Send: []int32{1}}); got != nil {
		t.Errorf("hash keys: %v, want nil", got)
	}
}
