package mis

import (
	"slices"
	"testing"
)

// The bucket thresholds of MIS-2 by buckets only order the work, but a
// bad set makes launches that take nothing or everything at once:
// they must decrease strictly, and dominant classes get their own.
func TestBucketThresholds(t *testing.T) {
	for _, c := range []struct {
		name       string
		b          int
		counts     []int64
		want       int // thresholds, -1 for any
		inDominant int // at least this many inside the largest class
	}{
		{"hash", 12, nil, 11, 0},
		{"hash-1", 1, nil, 0, 0},
		{"mesh", 12, []int64{3944312, 0, 0, 0, 0, 0, 0, 0, 0, 149784, 0, 0, 0, 0, 0, 1896, 0, 0, 0, 8}, -1, 11},
		{"mixed", 12, []int64{1000, 5000, 20000, 40000, 60000, 50000, 30000, 10000, 2000}, 11, 0},
		{"one-class", 8, []int64{0, 0, 500000}, -1, 7},
	} {
		ks := bucketThresholds(c.b, 2, c.counts, true)
		if c.want >= 0 && len(ks) != c.want {
			t.Errorf("%s: %d thresholds, want %d: %x", c.name, len(ks), c.want, ks)
		}
		for i := 1; i < len(ks); i++ {
			if ks[i] >= ks[i-1] {
				t.Errorf("%s: thresholds do not decrease at %d: %x", c.name, i, ks)
			}
		}
		if g := bucketThresholds(c.b, 2, c.counts, false); len(g) != max(c.b-1, 0) {
			t.Errorf("%s: %d thresholds over all keys, want %d", c.name, len(g), c.b-1)
		}
		if slices.Contains(ks, 0) {
			t.Errorf("%s: a threshold of 0 (every key) before the last launch: %x", c.name, ks)
		}
		if c.inDominant > 0 {
			dom := 0
			for i, k := range c.counts {
				if k > c.counts[dom] {
					dom = i
				}
			}
			in := 0
			for _, k := range ks {
				if k>>32 == uint64(dom) && uint32(k) != 0 {
					in++
				}
			}
			if in < c.inDominant {
				t.Errorf("%s: %d thresholds inside the dominant class, want at least %d: %x", c.name, in, c.inDominant, ks)
			}
		}
	}
}

// MIS-2 goes by buckets unless a vertex's degree would make the scans
// of its row cost more than the ball sweeps (defaultTuning).
func TestDefaultBuckets(t *testing.T) {
	for _, c := range []struct {
		name      string
		n         int
		m, maxDeg int64
		buckets   int
		flush     int
		perClass  bool
		far       int  // buckets for hash keys on scattered rows
		balanced  bool // the balanced kernels: all keys, hash keys
		balHash   bool
	}{
		{"hex27", 4_096_000, 105_119_352, 26, 12, 1, true, 8, true, false},
		{"grid7", 8_000_000, 47_760_000, 6, 8, 8, false, 0, false, true},
		{"random", 4_000_000, 64_000_000, 41, 12, 8, true, 0, false, false},
		{"star", 20_000, 80_000, 19_999, 0, 8, false, 0, false, true},
		{"dense row", 4_000_000, 40_000_000, 3_999_999, 0, 8, true, 0, false, false},
	} {
		tu := defaultTuning(&DeviceGraph{n: c.n, m: c.m, maxDeg: c.maxDeg}, 2)
		if tu.buckets != c.buckets {
			t.Errorf("%s: %d buckets, want %d", c.name, tu.buckets, c.buckets)
		}
		if tu.flush != c.flush || tu.classBuckets != c.perClass {
			t.Errorf("%s: flush %d, per-class %v; want %d, %v", c.name, tu.flush, tu.classBuckets, c.flush, c.perClass)
		}
		if tu.split != 2 {
			t.Errorf("%s: split %d, want 2 (two stages, the first from a list)", c.name, tu.split)
		}
		if tu.farBuckets != c.far {
			t.Errorf("%s: %d buckets on scattered rows, want %d", c.name, tu.farBuckets, c.far)
		}
		if tu.balanced != c.balanced || tu.balancedHash != c.balHash {
			t.Errorf("%s: balanced kernels %v (hash keys %v), want %v (%v)", c.name, tu.balanced, tu.balancedHash, c.balanced, c.balHash)
		}
		if tu.flush < 1 || tu.flush > flushMax {
			t.Errorf("%s: flush %d outside 1..%d (FLUSHB)", c.name, tu.flush, flushMax)
		}
		if d1 := defaultTuning(&DeviceGraph{n: c.n, m: c.m, maxDeg: c.maxDeg}, 1); d1.buckets != 0 {
			t.Errorf("%s: MIS-1 with %d buckets", c.name, d1.buckets)
		}
	}
}
