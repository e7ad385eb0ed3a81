package misgpu

import "testing"

// TestShare (gridShare): the persistent tails of the parts on one device fit
// there together (each part1_tail waits, through the others' ghosts, on
// the others' tails), no tail is larger than its vertices ask for, and
// each has a block.
func TestShare(t *testing.T) {
	for _, fits := range []uint32{1, 7, 132, 264, 1056} {
		for sharers := 1; sharers <= 9; sharers++ {
			for _, want := range []uint32{1, 3, 100, 1 << 20} {
				g := share(want, fits, sharers)
				if g < 1 || g > want {
					t.Fatalf("share(%d, %d, %d) = %d, want 1..%d", want, fits, sharers, g, want)
				}
				if fits >= uint32(sharers) && uint64(g)*uint64(sharers) > uint64(fits) {
					t.Fatalf("share(%d, %d, %d) = %d: %d tails of it do not fit %d blocks", want, fits, sharers, g, sharers, fits)
				}
			}
		}
	}
	if g := share(1<<20, 1056, 1); g != 1056 {
		t.Errorf("one part's tail takes %d of the %d blocks that fit", g, 1056)
	}
}
