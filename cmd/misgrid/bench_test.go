package main

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/genspec"
	"github.com/misgrid/misgrid/mesh"
)

func TestBenchJSON(t *testing.T) {
	out, _, err := runCmd(t, "bench", "-json", "-reps", "2", "-threads", "3",
		"-graphs", "hex27:6,grid7:5:relabel,random:500:4")
	if err != nil {
		t.Fatal(err)
	}
	var rep benchReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("bench -json output is not JSON: %v\n%s", err, out)
	}
	if rep.Workers != 3 || rep.Reps != 2 || len(rep.Results) != 6 {
		t.Fatalf("report: %d workers, %d reps, %d results; want 3, 2, 6", rep.Workers, rep.Reps, len(rep.Results))
	}
	// The JSON names are what scripts read: check them, not just the struct.
	for _, key := range []string{`"parallel_over_floor"`, `"serial_over_floor"`, `"floor_edges_per_s"`, `"identical": true`} {
		if !strings.Contains(out, key) {
			t.Errorf("JSON lacks %s", key)
		}
	}
	wantGraphs := []string{"hex27:6", "hex27:6", "grid7:5:relabel", "grid7:5:relabel", "random:500:4", "random:500:4"}
	for i, r := range rep.Results {
		g, _, err := generate(r.Graph)
		if err != nil {
			t.Fatal(err)
		}
		if r.Graph != wantGraphs[i] || r.Distance != 1+i%2 || r.Vertices != g.N() || r.Edges != g.NumEdges() {
			t.Errorf("result %d: %s distance %d, %d vertices %d edges; want %s distance %d, %d, %d",
				i, r.Graph, r.Distance, r.Vertices, r.Edges, wantGraphs[i], 1+i%2, g.N(), g.NumEdges())
		}
		if !r.Identical || r.SetSize < 1 || r.Rounds < 1 {
			t.Errorf("result %d: identical %v, set %d, rounds %d", i, r.Identical, r.SetSize, r.Rounds)
		}
		for name, pair := range map[string][2]float64{
			"parallel_over_floor":  {r.ParallelOverFloor, r.ParallelSeconds / r.FloorSeconds},
			"serial_over_floor":    {r.SerialOverFloor, r.SerialSeconds / r.FloorSeconds},
			"parallel_edges_per_s": {r.ParallelEdgesPerSecond, float64(r.Edges) / r.ParallelSeconds},
		} {
			if !(pair[0] > 0) || math.Abs(pair[0]-pair[1]) > 1e-9*pair[1] {
				t.Errorf("result %d: %s = %v, want %v", i, name, pair[0], pair[1])
			}
		}
	}
}

func TestBenchTable(t *testing.T) {
	out, _, err := runCmd(t, "bench", "-reps", "1", "-distance", "2", "-graphs", "gen:hex27:5")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "parallel x floor") || !strings.Contains(out, "hex27:5") {
		t.Errorf("table lacks its header or graph:\n%s", out)
	}
}

// TestFloorSum checks that the floor reads every entry exactly once,
// whatever the number of workers.
func TestFloorSum(t *testing.T) {
	g := mesh.RandomGraph(1000, 7, 3)
	var want uint64
	for v := 0; v < g.N(); v++ {
		want += uint64(g.Offsets[v+1])
		for _, u := range g.Neighbors(int32(v)) {
			want += uint64(u)
		}
	}
	for w := 1; w <= 9; w++ {
		if got := Floor(g, w); got != want {
			t.Errorf("Floor with %d workers = %d, want %d", w, got, want)
		}
	}
	if Floor(&mesh.Graph{}, 4) != 0 {
		t.Error("Floor of an empty graph is not 0")
	}
}

func TestSplitDevice(t *testing.T) {
	for _, c := range []struct {
		args, rest []string
		gpu        bool
	}{
		{[]string{"-device", "gpu", "-reps", "3"}, []string{"-reps", "3"}, true},
		{[]string{"-json", "--device=gpu"}, []string{"-json"}, true},
		{[]string{"-device=gpu:1", "-json"}, []string{"-json"}, true},
		{[]string{"-device", "auto"}, []string{"-device", "auto"}, false},
		{[]string{"-device", "cpu"}, []string{"-device", "cpu"}, false},
		{[]string{"-json"}, []string{"-json"}, false},
		{[]string{"-device"}, []string{"-device"}, false},
		{[]string{"--", "-device", "gpu"}, []string{"--", "-device", "gpu"}, false},
	} {
		rest, _, gpu := splitDevice(c.args)
		if gpu != c.gpu || !slices.Equal(rest, c.rest) {
			t.Errorf("splitDevice(%q) = %q, %v; want %q, %v", c.args, rest, gpu, c.rest, c.gpu)
		}
	}
}

// Without a GPU, bench -device gpu says why; its flags are the user's
// only (the tuning experiments live in tools/gpubench).
func TestBenchGPUWithoutGPU(t *testing.T) {
	if _, _, err := runCmd(t, "bench", "-device", "gpu", "-tail", "1"); err == nil || !strings.Contains(err.Error(), "tail") {
		t.Errorf("bench -device gpu -tail 1: error %v, want an unknown flag", err)
	}
	if cuda.Available() == nil {
		t.Skip("a GPU is present")
	}
	if _, _, err := runCmd(t, "bench", "-device", "gpu", "-graphs", "hex27:4"); !errors.Is(err, cuda.ErrUnavailable) {
		t.Errorf("bench -device gpu without a GPU: error %v, want cuda.ErrUnavailable", err)
	}
}

// bench -device gpu -graphs takes generator specs and graph files.
func TestLoadBenchGraph(t *testing.T) {
	g, err := genspec.Load("testdata/lap3x3.mtx")
	if err != nil || g.N() != 9 {
		t.Fatalf("lap3x3.mtx: %v, %v", g, err)
	}
	if g, err := genspec.Load("hex27:4"); err != nil || g.N() != 64 {
		t.Fatalf("hex27:4: %v, %v", g, err)
	}
	if _, err := genspec.Load("testdata"); err == nil || !strings.Contains(err.Error(), "unknown graph file type") {
		t.Errorf("a directory: %v", err)
	}
	if _, err := genspec.Load("missing.egr.gz"); err == nil {
		t.Error("a missing file loaded")
	}
}
