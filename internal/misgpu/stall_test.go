package misgpu

import "testing"

// TestStallWatch checks the rule drivers share: no stop before 64
// rounds, a stop after two checks in a row that settle less than a 64th
// of the live vertices, none while checks settle more, and a stop that
// stays.
func TestStallWatch(t *testing.T) {
	var w StallWatch
	live := uint32(1 << 20)
	for pass := 8; pass < 64; pass += 8 {
		if w.Stalled(pass, live) {
			t.Fatalf("stopped at round %d, before 64", pass)
		}
	}
	// Settling a 32nd per check pays.
	for pass := 64; pass < 256; pass += 8 {
		live -= live / 32
		if w.Stalled(pass, live) {
			t.Fatalf("stopped at round %d though each check settled a 32nd", pass)
		}
	}
	// A 128th per check does not: the second such check stops.
	live -= live / 128
	if w.Stalled(256, live) {
		t.Fatal("stopped after one slow check")
	}
	live -= live / 128
	if !w.Stalled(264, live) {
		t.Fatal("not stopped after two slow checks")
	}
	if !w.Stalled(272, live/2) {
		t.Fatal("a stop did not stay")
	}
}
