package misgpu_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/internal/misgpu"
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
		ks := misgpu.BucketThresholds(c.b, 2, c.counts, true)
		if c.want >= 0 && len(ks) != c.want {
			t.Errorf("%s: %d thresholds, want %d: %x", c.name, len(ks), c.want, ks)
		}
		for i := 1; i < len(ks); i++ {
			if ks[i] >= ks[i-1] {
				t.Errorf("%s: thresholds do not decrease at %d: %x", c.name, i, ks)
			}
		}
		if g := misgpu.BucketThresholds(c.b, 2, c.counts, false); len(g) != max(c.b-1, 0) {
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
// of its row cost more than the ball sweeps (Defaults).
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
		scattered bool
		mixed     int  // buckets of class keys mixed over all keys (0: buckets)
		pipe      bool // the bucket kernels load their next pair's row ahead
	}{
		{"hex27", 4_096_000, 105_119_352, 26, 12, 1, true, 8, true, false, false, 0, false},
		{"grid7", 8_000_000, 47_760_000, 6, 8, 8, false, 0, false, true, false, 0, false},
		{"random", 4_000_000, 64_000_000, 41, 12, 8, true, 0, false, false, true, 0, false},
		{"tet", 3_117_454, 42_395_968, 24, 8, 8, true, 0, false, false, false, 12, true},
		{"tet relabelled", 3_117_454, 42_395_968, 24, 12, 8, true, 0, false, false, true, 0, false},
		{"star", 20_000, 80_000, 19_999, 0, 8, false, 0, false, true, false, 0, false},
		{"dense row", 4_000_000, 40_000_000, 3_999_999, 0, 8, true, 0, false, false, false, 0, true},
	} {
		s := misgpu.Shape{N: c.n, M: c.m, MaxDeg: c.maxDeg, Vec: true, Scattered: c.scattered}
		tu := misgpu.Defaults(s, 2)
		if tu.Buckets != c.buckets {
			t.Errorf("%s: %d buckets, want %d", c.name, tu.Buckets, c.buckets)
		}
		if tu.Flush != c.flush || tu.ClassBuckets != c.perClass {
			t.Errorf("%s: flush %d, per-class %v; want %d, %v", c.name, tu.Flush, tu.ClassBuckets, c.flush, c.perClass)
		}
		if tu.Split != 2 {
			t.Errorf("%s: split %d, want 2 (two stages, the first from a list)", c.name, tu.Split)
		}
		if tu.FarBuckets != c.far {
			t.Errorf("%s: %d buckets on scattered rows, want %d", c.name, tu.FarBuckets, c.far)
		}
		if tu.Balanced != c.balanced || tu.BalancedHash != c.balHash {
			t.Errorf("%s: balanced kernels %v (hash keys %v), want %v (%v)", c.name, tu.Balanced, tu.BalancedHash, c.balanced, c.balHash)
		}
		if tu.MixedBuckets != c.mixed || tu.Pipe != c.pipe {
			t.Errorf("%s: %d buckets for mixed class keys, pipe %v; want %d, %v", c.name, tu.MixedBuckets, tu.Pipe, c.mixed, c.pipe)
		}
		if tu.Flush < 1 || tu.Flush > misgpu.FlushMax {
			t.Errorf("%s: flush %d outside 1..%d (FLUSHB)", c.name, tu.Flush, misgpu.FlushMax)
		}
		if d1 := misgpu.Defaults(s, 1); d1.Buckets != 0 {
			t.Errorf("%s: MIS-1 with %d buckets", c.name, d1.Buckets)
		}
	}
}

// The benchmark graphs' shapes (hex27 160³, grid7 200³, random 4M
// degree 16, the relabelled mesh scattered) and the plan of their
// default runs: kernels, read modes, stages.
var planShapes = map[string]misgpu.Shape{
	"hex27":     {N: 4_096_000, M: 105_119_352, MaxDeg: 26, Vec: true, Runs: true},
	"tet":       {N: 3_117_454, M: 42_395_968, MaxDeg: 24, Vec: true},
	"hex27-rel": {N: 4_096_000, M: 105_119_352, MaxDeg: 26, Vec: true, Scattered: true},
	"grid7":     {N: 8_000_000, M: 47_760_000, MaxDeg: 6, Vec: true},
	"random":    {N: 4_000_000, M: 64_000_000, MaxDeg: 41, Vec: true, Scattered: true},
}

// meshClasses are the class counts of a 160³ hex27 mesh under Degree:
// the interior (class 0) holds most vertices.
var meshClasses = []int64{3944312, 0, 0, 0, 0, 0, 0, 0, 0, 149784, 0, 0, 0, 0, 0, 1896, 0, 0, 0, 8}

// tetClasses are the class counts of the Gmsh part refined twice
// (bench/meshes, 3.1M vertices) under Degree: twenty degrees, none
// holding half the vertices.
var tetClasses = []int64{5, 8, 133, 142, 2217, 2411, 20398, 31812, 166814, 555426, 1367552, 400584, 191058, 73401, 207030, 86096, 6972, 4490, 903, 2}

func TestPlanDefaults(t *testing.T) {
	for _, c := range []struct {
		shape string
		dist  int
		key   misgpu.Key
		want  []string // stage kernels
		kf    []uint32 // their read modes (low byte)
		tail  string
	}{
		{"hex27", 1, misgpu.KeyHash, []string{"mis1_g1v_p0"}, []uint32{6}, "mis1_tail_p0"},
		{"hex27-rel", 1, misgpu.KeyHash, []string{"mis1_g1v_p0"}, []uint32{3}, "mis1_tail_p0"},
		{"hex27-rel", 1, misgpu.KeyClass, []string{"mis1_g1v_p1"}, []uint32{6}, "mis1_tail_p1"},
		{"random", 1, misgpu.KeyPrim, []string{"mis1_g1v_p2"}, []uint32{6}, "mis1_tail_p2"},
		{"hex27", 2, misgpu.KeyHash, []string{"mis2bd_p0"}, []uint32{32}, ""},
		{"hex27-rel", 2, misgpu.KeyHash, []string{"mis2bds_p0"}, []uint32{1}, ""},
		{"hex27", 2, misgpu.KeyClass, []string{"mis2bdl_p1", "mis2bd_p0"}, []uint32{32, 32}, ""},
		{"grid7", 2, misgpu.KeyHash, []string{"mis2bd_p0"}, []uint32{0}, ""},
		{"grid7", 2, misgpu.KeyClass, []string{"mis2b_p1"}, []uint32{0}, ""},
		{"random", 2, misgpu.KeyHash, []string{"mis2bs_p0"}, []uint32{1}, ""},
		{"random", 2, misgpu.KeyPrim, []string{"mis2_g1r_p2"}, []uint32{16}, "mis2_tailr_p2"},
		// A tet mesh's rows hold few runs in one state word: no KF_WORDS.
		{"tet", 2, misgpu.KeyHash, []string{"mis2b_p0"}, []uint32{0}, ""},
		{"tet", 2, misgpu.KeyClass, []string{"mis2b_p1"}, []uint32{0}, ""},
	} {
		s := planShapes[c.shape]
		if c.key == misgpu.KeyClass {
			s.Classes = meshClasses
			if c.shape == "tet" {
				s.Classes = tetClasses
			}
		}
		p, err := misgpu.NewPlan(s, c.dist, c.key, misgpu.Defaults(s, c.dist))
		if err != nil {
			t.Fatalf("%s dist %d key %d: %v", c.shape, c.dist, c.key, err)
		}
		var got []string
		var kf []uint32
		for _, st := range p.Stages {
			got, kf = append(got, st.Kernel), append(kf, st.KF&0xff)
		}
		name := fmt.Sprintf("%s dist %d key %d", c.shape, c.dist, c.key)
		if !slices.Equal(got, c.want) || !slices.Equal(kf, c.kf) {
			t.Errorf("%s: stages %v read modes %v, want %v %v", name, got, kf, c.want, c.kf)
		}
		if p.Stages[0].Tail != c.tail {
			t.Errorf("%s: tail %q, want %q", name, p.Stages[0].Tail, c.tail)
		}
		if p.Buckets != (c.tail == "" && c.dist == 2) {
			t.Errorf("%s: buckets %v", name, p.Buckets)
		}
		checkPlan(t, name, s, p)
	}
}

// checkPlan checks what every plan must hold: kernels the engine loads,
// bucket thresholds that decrease, band thresholds that grow (later
// bands take more vertices), a tail after the bands.
func checkPlan(t *testing.T, name string, s misgpu.Shape, p *misgpu.Plan) {
	t.Helper()
	loaded := misgpu.Kernels()
	for _, st := range p.Stages {
		for _, k := range []string{st.Kernel, st.First, st.Tail} {
			if k != "" && !slices.Contains(loaded, k) {
				t.Errorf("%s: kernel %s is not loaded", name, k)
			}
		}
		for i := 1; i < len(st.Keys); i++ {
			if st.Keys[i] >= st.Keys[i-1] {
				t.Errorf("%s: bucket thresholds do not decrease: %x", name, st.Keys)
			}
		}
		for i := 1; i < len(st.Bands); i++ {
			if st.Bands[i] != 0 && st.Bands[i-1] != 0 && st.Bands[i] > st.Bands[i-1] {
				t.Errorf("%s: band thresholds grow: %x", name, st.Bands)
			}
		}
		if st.Tail != "" && st.TailAt <= len(st.Bands) {
			t.Errorf("%s: tail at sweep %d, inside the %d band sweeps", name, st.TailAt, len(st.Bands))
		}
		if st.Items != (int64(s.N)+127)/128 {
			t.Errorf("%s: %d work items for %d vertices", name, st.Items, s.N)
		}
	}
	if p.First < 1 || p.Batch < 1 {
		t.Errorf("%s: checks after %d then every %d launches", name, p.First, p.Batch)
	}
}

// On a tet mesh (local rows of average degree 10 to 20) hash keys and
// the stages of a split run take 8 buckets of γ 2 and load a pair ahead
// (KF_PIPE); class keys that mix over all keys (Degree: no class holds
// half the vertices) take 12, γ 2, without KF_PIPE.
func TestMidRowBuckets(t *testing.T) {
	s := planShapes["tet"]
	tu := misgpu.Defaults(s, 2)
	for _, c := range []struct {
		name    string
		key     misgpu.Key
		classes []int64
		keys    []int // thresholds per stage
	}{
		{"hash", misgpu.KeyHash, nil, []int{7}},
		{"degree", misgpu.KeyClass, tetClasses, []int{11}},
		{"boundary", misgpu.KeyClass, []int64{2_467_000, 600_000, 50_000, 454}, []int{-1, 7}},
	} {
		s.Classes = c.classes
		p, err := misgpu.NewPlan(s, 2, c.key, tu)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(p.Stages) != len(c.keys) {
			t.Fatalf("%s: %d stages, want %d", c.name, len(p.Stages), len(c.keys))
		}
		for i, st := range p.Stages {
			if c.keys[i] >= 0 && len(st.Keys) != c.keys[i] {
				t.Errorf("%s stage %d: %d thresholds, want %d", c.name, i, len(st.Keys), c.keys[i])
			}
			if pipe := c.key == misgpu.KeyHash || len(c.keys) > 1; (st.KF&misgpu.KFPipe != 0) != pipe {
				t.Errorf("%s stage %d: read mode %#x, want KF_PIPE %v", c.name, i, st.KF, pipe)
			}
		}
		// γ 2: the first of b buckets takes 1/b² of the keys, the
		// hash of its threshold (1-1/b²) of the range.
		st := p.Stages[len(p.Stages)-1]
		b := float64(len(st.Keys) + 1)
		want := uint64((1 - 1/(b*b)) * (1 << 32))
		if c.key == misgpu.KeyHash && (st.Keys[0] < want-1 || st.Keys[0] > want+1) {
			t.Errorf("%s: first threshold %#x, want %#x (γ 2)", c.name, st.Keys[0], want)
		}
	}
}

// Every tuning the developers' benchmark can set, on every shape,
// distance and key, plans only kernels the engine loads.
func TestPlanVariants(t *testing.T) {
	for name, s := range planShapes {
		s.Classes = meshClasses
		for _, vec := range []bool{true, false} {
			s.Vec = vec
			for dist := 1; dist <= 2; dist++ {
				for key := misgpu.KeyHash; key <= misgpu.KeyPrim; key++ {
					for _, g := range misgpu.GroupSizes {
						for _, b := range []int{0, 1, 8} {
							for split := 0; split <= 2; split++ {
								tu := misgpu.Defaults(s, dist)
								tu.Group, tu.Buckets, tu.Split, tu.Balanced = g, b, split, split == 1
								tu.Bands, tu.Tail = b/2, split
								p, err := misgpu.NewPlan(s, dist, key, tu)
								if err != nil {
									t.Fatalf("%s vec %v dist %d key %d %+v: %v", name, vec, dist, key, tu, err)
								}
								checkPlan(t, fmt.Sprintf("%s vec %v dist %d key %d %+v", name, vec, dist, key, tu), s, p)
							}
						}
					}
				}
			}
		}
	}
	if _, err := misgpu.NewPlan(planShapes["hex27"], 3, misgpu.KeyHash, misgpu.Tuning{}); err == nil {
		t.Error("distance 3 planned")
	}
	if _, err := misgpu.NewPlan(planShapes["hex27"], 1, misgpu.KeyHash, misgpu.Tuning{Group: 3}); err == nil {
		t.Error("3 lanes per vertex planned")
	}
}

// TestPartPlansKeepTheirKeys: a part's plan runs only kernels of its own
// kind of key. The part images read a state's class bits as the hash's
// prefix in the hash kernels, so a class-keyed part that ran them (the
// second stage of a split run) would compare by wrong keys; the engine's
// own tuning does split such a run, which the test checks first.
func TestPartPlansKeepTheirKeys(t *testing.T) {
	s := misgpu.Shape{N: 4_096_000, M: 105_119_352, MaxDeg: 26, Vec: true, Classes: []int64{3_900_000, 150_000, 40_000, 6_000}}
	ofKey := func(p *misgpu.Plan, key misgpu.Key) bool {
		suffix := fmt.Sprintf("_p%d", key)
		for _, st := range p.Stages {
			for _, k := range []string{st.Kernel, st.First, st.Tail} {
				if k != "" && !strings.HasSuffix(k, suffix) {
					return false
				}
			}
		}
		return true
	}
	engine, err := misgpu.NewPlan(s, 2, misgpu.KeyClass, misgpu.Defaults(s, 2))
	if err != nil {
		t.Fatal(err)
	}
	if ofKey(engine, misgpu.KeyClass) {
		t.Fatalf("the engine's plan of class keys runs no other kernels (%s): the test checks nothing", engine.Stages[len(engine.Stages)-1].Kernel)
	}
	for _, dist := range []int{1, 2} {
		for _, key := range []misgpu.Key{misgpu.KeyHash, misgpu.KeyClass, misgpu.KeyPrim} {
			for _, ghosts := range []bool{false, true} {
				tu := misgpu.Defaults(s, dist)
				misgpu.PartTuning(&tu, dist, true, ghosts)
				p, err := misgpu.NewPlan(s, dist, key, tu)
				if err != nil {
					t.Fatalf("d%d key %d ghosts=%v: %v", dist, key, ghosts, err)
				}
				if !ofKey(p, key) {
					t.Errorf("d%d key %d ghosts=%v: the part's plan runs %+v", dist, key, ghosts, p.Stages)
				}
			}
		}
	}
}

// TestPartBuckets: a part of several at distance 2 with hash keys
// (partHashBuckets) runs partBuckets buckets where the engine runs 12
// (rows of average degree 10 and more, but a tet mesh's) or, on
// scattered rows of degree 20 and more, 8 (a random graph's part, whose
// ghosts' rows double its average degree), and the engine's number
// elsewhere; alone, a part runs the engine's plan.
func TestPartBuckets(t *testing.T) {
	randomPart := planShapes["random"]
	randomPart.M *= 2
	for _, c := range []struct {
		name          string
		s             misgpu.Shape
		engine, parts int
	}{
		{"hex27", planShapes["hex27"], 12, misgpu.PartBuckets},
		{"hex27-rel", planShapes["hex27-rel"], 8, misgpu.PartBuckets},
		{"random-part", randomPart, 8, misgpu.PartBuckets},
		{"random", planShapes["random"], 12, misgpu.PartBuckets},
		{"tet", planShapes["tet"], 8, 8},
		{"grid7", planShapes["grid7"], 8, 8},
	} {
		for _, ghosts := range []bool{false, true} {
			tu := misgpu.Defaults(c.s, 2)
			misgpu.PartTuning(&tu, 2, true, ghosts)
			if ghosts {
				misgpu.PartHashBuckets(&tu)
			}
			p, err := misgpu.NewPlan(c.s, 2, misgpu.KeyHash, tu)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			want := c.engine
			if ghosts {
				want = c.parts
			}
			if got := p.Stages[0].Launches(); !p.Buckets || got != want {
				t.Errorf("%s, ghosts %v: %d buckets (by buckets: %v), want %d", c.name, ghosts, got, p.Buckets, want)
			}
		}
	}
}
