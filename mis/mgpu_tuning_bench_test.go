package mis

import (
	"fmt"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/misgpu"
	"github.com/misgrid/misgrid/mesh"
)

// partTunings are the variations of a part's tuning BenchmarkPartTuning
// runs beside the default, by distance: the knobs a part's launches and
// their number depend on.
var partTunings = map[int][]struct {
	name string
	tune func(*misgpu.Tuning)
}{
	1: {
		{"bands=3", func(t *misgpu.Tuning) { t.Bands = 3 }},
		{"bands=5", func(t *misgpu.Tuning) { t.Bands = 5 }},
		{"bandshape=1.5", func(t *misgpu.Tuning) { t.BandShape = 1.5 }},
		{"tail=2", func(t *misgpu.Tuning) { t.Tail = 2 }},
	},
	2: {
		{"buckets=8", func(t *misgpu.Tuning) { t.Buckets, t.FarBuckets = 8, 8 }},
		{"buckets=10", func(t *misgpu.Tuning) { t.Buckets, t.FarBuckets = 10, 10 }},
		{"buckets=14", func(t *misgpu.Tuning) { t.Buckets, t.FarBuckets = 14, 14 }},
		{"bucketshape=2.5", func(t *misgpu.Tuning) { t.BucketShape = 2.5 }},
		{"flush=4", func(t *misgpu.Tuning) { t.Flush = 4 }},
	},
}

// BenchmarkPartTuning runs two parts (ranges, one per GPU) of hex27 256³
// and of the random graph with the tuning the engine picks for each
// part's shape ("default", first and last, so that drift shows) and
// with each of partTunings: whether the engine's defaults suit a part,
// whose every launch comes with an exchange. It fails when a variant's
// set differs from the default's.
func BenchmarkPartTuning(b *testing.B) {
	if n, err := cuda.DeviceCount(); err != nil || n < 2 {
		b.Skip("needs two GPUs")
	}
	for _, c := range []struct {
		name string
		g    func() *mesh.Graph
	}{
		{"hex27-256", func() *mesh.Graph { return mesh.Hex27Graph(256, 256, 256) }},
		{"random-16M-16", func() *mesh.Graph { return mesh.RandomGraph(1<<24, 16, 1) }},
	} {
		b.Run(c.name, func(b *testing.B) { benchPartTuning(b, c.g()) })
	}
}

func benchPartTuning(b *testing.B, g *mesh.Graph) {
	keys, err := Keys(g, Priority{Kind: Hash})
	if err != nil {
		b.Fatal(err)
	}
	for _, dist := range []int{1, 2} {
		specs := ranges(b, g, keys, dist, 2, true)
		var want [][]bool
		run := func(name string, tune func(*misgpu.Tuning)) {
			b.Run(fmt.Sprintf("d%d/%s", dist, name), func(b *testing.B) {
				got := benchParts(b, specs, misgpu.PartsOptions{Dist: dist, Tune: tune})
				if want == nil {
					want = got
				} else if !slices.EqualFunc(want, got, slices.Equal) {
					b.Fatalf("the set differs from the default tuning's")
				}
			})
		}
		run("default", nil)
		for _, v := range partTunings[dist] {
			run(v.name, v.tune)
		}
		run("default-again", nil)
	}
}
