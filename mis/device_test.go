package mis

import (
	"errors"
	"testing"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/mesh"
)

func TestParseDevice(t *testing.T) {
	for _, c := range []struct {
		s     string
		want  Device
		kind  Device
		index int
	}{
		{"auto", Auto, Auto, 0}, {"cpu", CPU, CPU, 0}, {"gpu", GPU, GPU, 0},
		{"GPU", GPU, GPU, 0}, {"gpu:0", GPU, GPU, 0}, {"gpu:3", GPU.On(3), GPU, 3}, {"auto:1", Auto.On(1), Auto, 1},
	} {
		d, err := ParseDevice(c.s)
		if err != nil || d != c.want || d.Kind() != c.kind || d.Index() != c.index {
			t.Errorf("ParseDevice(%q) = %v (kind %v, index %d), %v; want %v", c.s, d, d.Kind(), d.Index(), err, c.want)
		}
		if back, err := ParseDevice(d.String()); err != nil || back != d {
			t.Errorf("%q -> %v -> %v, %v", c.s, d, back, err)
		}
	}
	for _, s := range []string{"", "tpu", "cpu:1", "gpu:", "gpu:-1", "gpu:x", "gpu:1:2", "auto:99999999"} {
		if d, err := ParseDevice(s); err == nil {
			t.Errorf("ParseDevice(%q) = %v, want an error", s, d)
		}
	}
	if Device(0) != Auto {
		t.Error("the zero Device is not Auto")
	}
}

// An invalid Device is an error before any work; Auto below
// AutoMinVertices and CPU never touch the GPU.
func TestComputeDeviceChecks(t *testing.T) {
	g := mesh.Hex27Graph(4, 4, 4)
	for _, d := range []Device{3, -1, CPU.On(2)} {
		if _, err := Compute(g, Options{Device: d}); err == nil || errors.Is(err, cuda.ErrUnavailable) {
			t.Errorf("Device %v: err %v, want an invalid-device error", d, err)
		}
	}
	for _, d := range []Device{Auto, Auto.On(5), CPU} {
		res, err := Compute(g, Options{Device: d})
		if err != nil || res.Backend == "gpu" {
			t.Errorf("Device %v on %d vertices: %v, backend %v", d, g.N(), err, res)
		}
	}
	if !GPU.WantsGPU(1) || Auto.WantsGPU(AutoMinVertices-1) || !Auto.WantsGPU(AutoMinVertices) || CPU.WantsGPU(1<<30) {
		t.Error("WantsGPU")
	}
}
