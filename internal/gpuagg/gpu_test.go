package gpuagg_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpuagg"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// device opens the kernels on device 0, or skips the test without a GPU.
func device(t testing.TB) (*gpuagg.Device, *cuda.Stager) {
	t.Helper()
	if err := cuda.Available(); err != nil {
		t.Skip(err.Error())
	}
	dev, err := cuda.GetDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := dev.PrimaryContext()
	if err != nil {
		t.Fatal(err)
	}
	d, err := gpuagg.Open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := ctx.NewStager(d.Stream(), cuda.StagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := errors.Join(st.Close(), d.Close(), ctx.Close()); err != nil {
			t.Error(err)
		}
	})
	return d, st
}

// flags uploads set as bytes, members as arbitrary non-zero values.
func flags(t testing.TB, d *gpuagg.Device, set []bool, rng *rand.Rand) *cuda.Buffer {
	t.Helper()
	b := make([]uint8, len(set))
	for v, in := range set {
		if in {
			b[v] = uint8(1 + rng.IntN(255))
		}
	}
	buf, err := d.Context().Alloc(int64(max(len(b), 1)))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 {
		// A pageable copy may return before it lands; the Device's
		// stream does not wait for the default stream.
		if err := errors.Join(cuda.CopyToDevice(buf, 0, b), d.Context().Synchronize()); err != nil {
			t.Fatal(err)
		}
	}
	return buf
}

func TestCoarsenMatchesHost(t *testing.T) {
	d, st := device(t)
	c := d.NewCoarsener()
	defer c.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	for i, cg := range append(corpus(t, false), dense()) {
		stager := st
		if i%2 == 1 {
			stager = nil // pageable copies
		}
		dg, err := d.Upload(cg.g, stager)
		if err != nil {
			t.Fatal(err)
		}
		back, err := d.Download(dg)
		if err != nil || !sameGraph(back, cg.g) {
			t.Fatalf("%s: upload and download differ: %v", cg.name, err)
		}
		for _, dist := range []int{1, 2} {
			for pname, set := range sets(t, cg.g, dist) {
				for range 2 {
					checkCoarsen(t, d, c, dg, cg, set, dist, rng, pname)
				}
			}
		}
		dg.Free()
	}
}

// checkCoarsen runs Coarsen on set and compares everything with the host.
func checkCoarsen(t *testing.T, d *gpuagg.Device, c *gpuagg.Coarsener, dg *gpuagg.Graph, cg namedGraph, set []bool, dist int, rng *rand.Rand, pname string) {
	t.Helper()
	wof, wroots, wcoarse, werr := reference(t, cg.g, set, dist)
	if werr != nil {
		t.Fatal(werr)
	}
	in := flags(t, d, set, rng)
	defer in.Free()
	agg, coarse, err := c.Coarsen(dg, in, dist)
	if err != nil {
		t.Fatalf("%s d%d %s: %v", cg.name, dist, pname, err)
	}
	defer agg.Free()
	defer coarse.Free()
	of, roots, err := d.DownloadAggregates(agg)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := d.Download(coarse)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(of, wof) || !slices.Equal(roots, wroots) || agg.N != len(wroots) {
		t.Fatalf("%s d%d %s: aggregates differ from the host's", cg.name, dist, pname)
	}
	if !sameGraph(hc, wcoarse) || coarse.MaxDegree != wcoarse.MaxDegree() {
		t.Fatalf("%s d%d %s: coarse graph differs from the host's (max degree %d, want %d)", cg.name, dist, pname, coarse.MaxDegree, wcoarse.MaxDegree())
	}
}

// Sets the host rejects get the host's error, and the device stays
// usable: the next level on the same Coarsener is exact.
func TestCoarsenErrorsMatchHost(t *testing.T) {
	d, st := device(t)
	c := d.NewCoarsener()
	defer c.Close()
	rng := rand.New(rand.NewPCG(7, 8))
	for _, cg := range corpus(t, true) {
		dg, err := d.Upload(cg.g, st)
		if err != nil {
			t.Fatal(err)
		}
		for i, set := range badSets(cg.g, rng) {
			for _, dist := range []int{1, 2} {
				_, _, _, werr := reference(t, cg.g, set, dist)
				in := flags(t, d, set, rng)
				agg, coarse, err := c.Coarsen(dg, in, dist)
				if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
					t.Fatalf("%s set %d d%d: device says %v, host %v", cg.name, i, dist, err, werr)
				}
				agg.Free()
				coarse.Free()
				in.Free()
			}
		}
		for dist, set := range map[int][]bool{1: sets(t, cg.g, 1)["hash"], 2: sets(t, cg.g, 2)["hash"]} {
			checkCoarsen(t, d, c, dg, cg, set, dist, rng, "after errors")
		}
		dg.Free()
	}
}

// deviceMIS runs the GPU MIS engine of package mis on the level's graph
// in place (mis.NewDeviceGraph) and uploads its flags; Boundary
// priorities take the level's classes.
func deviceMIS(t testing.TB, d *gpuagg.Device, p mis.Priority, dist int) gpuagg.MIS {
	return func(level int, g *gpuagg.Graph, s *cuda.Stream) (*cuda.Buffer, int, error) {
		if err := s.Synchronize(); err != nil {
			return nil, 0, err
		}
		mg, err := mis.NewDeviceGraph(g.N, g.Offsets, g.Adj)
		if err != nil {
			return nil, 0, err
		}
		defer mg.Close()
		if p.Kind == mis.Boundary {
			cls := make([]mesh.Class, g.N)
			if g.N > 0 {
				if err := cuda.CopyToHost(cls, g.Class, 0); err != nil {
					return nil, 0, err
				}
			}
			if err := mg.SetClasses(cls); err != nil {
				return nil, 0, err
			}
		}
		r, err := mis.ComputeDevice(mg, mis.Options{Distance: dist, Priority: p})
		if err != nil {
			return nil, 0, err
		}
		return flags(t, d, r.In, rand.New(rand.NewPCG(uint64(level), 1))), r.Size, nil
	}
}

func TestHierarchyMatchesHost(t *testing.T) {
	d, st := device(t)
	for _, cg := range corpus(t, false) {
		for _, dist := range []int{1, 2} {
			p := mis.Priority{Kind: mis.Hash, Seed: 11}
			if cg.g.Class != nil {
				p = mis.Priority{Kind: mis.Boundary}
			}
			want, err := mis.Hierarchy(cg.g, mis.HierarchyOptions{Distance: dist, Priority: p, MinVertices: 8, Device: mis.CPU})
			if err != nil {
				t.Fatal(err)
			}
			dg, err := d.Upload(cg.g, st)
			if err != nil {
				t.Fatal(err)
			}
			levels, err := d.Hierarchy(dg, deviceMIS(t, d, p, dist), gpuagg.HierarchyOptions{Distance: dist, MinVertices: 8})
			if err != nil {
				t.Fatalf("%s d%d: %v", cg.name, dist, err)
			}
			if len(levels) != len(want) {
				t.Fatalf("%s d%d: %d levels, host %d", cg.name, dist, len(levels), len(want))
			}
			for i, l := range levels {
				hg, err := d.Download(l.Graph)
				if err != nil {
					t.Fatal(err)
				}
				if !sameGraph(hg, want[i].Graph) || l.Size != want[i].Set.Size || (l.Agg == nil) != (want[i].Agg == nil) {
					t.Fatalf("%s d%d level %d: graph or set differs from the host's", cg.name, dist, i)
				}
				if l.Agg != nil {
					of, roots, err := d.DownloadAggregates(l.Agg)
					if err != nil || !slices.Equal(of, want[i].Agg.Of) || !slices.Equal(roots, want[i].Agg.Roots) {
						t.Fatalf("%s d%d level %d: aggregates differ from the host's (%v)", cg.name, dist, i, err)
					}
				}
			}
			if err := errors.Join(gpuagg.FreeLevels(levels), dg.Free()); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Check names the first row whose offsets or neighbours would lead the
// kernels outside their buffers, and no kernel runs on such a graph.
func TestCheckNamesBadRow(t *testing.T) {
	d, st := device(t)
	g := mesh.Hex27Graph(6, 6, 6)
	for _, bad := range []struct {
		row   int32
		entry int32 // written at the row's second neighbour
	}{{7, int32(g.N())}, {100, -1}, {33, 33}} {
		dg, err := d.Upload(g, st)
		if err != nil {
			t.Fatal(err)
		}
		w, err := d.Wrap(dg.N, dg.Offsets, dg.Adj)
		if err != nil || dg.MaxDegree != g.MaxDegree() || w.M != g.NumEdges() || w.MaxDegree != g.MaxDegree() {
			t.Fatalf("max degree %d, wrapped %+v, want %d edges of degree up to %d (%v)", dg.MaxDegree, w, g.NumEdges(), g.MaxDegree(), err)
		}
		if err := w.Free(); err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(d.Stream().Synchronize(), cuda.CopyToDevice(dg.Adj, 4*(g.Offsets[bad.row]+1), []int32{bad.entry})); err != nil {
			t.Fatal(err)
		}
		var ve *mesh.ValidationError
		if err := d.Check(dg); !errors.As(err, &ve) || ve.Row != int(bad.row) {
			t.Fatalf("neighbour %d in row %d: got %v", bad.entry, bad.row, err)
		}
		if _, err := d.Wrap(dg.N, dg.Offsets, dg.Adj); !errors.As(err, &ve) || ve.Row != int(bad.row) {
			t.Fatalf("Wrap, neighbour %d in row %d: got %v", bad.entry, bad.row, err)
		}
		dg.Free()
	}
}
