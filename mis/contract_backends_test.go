package mis_test

import (
	"context"
	"testing"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
	"github.com/misgrid/misgrid/mis/mistest"
)

// The contract suite for the device backends: the single-GPU kernels and
// the multi-GPU driver (three parts on device 0, so one GPU checks the
// exchange logic; the two-GPU machine runs the same test with more
// devices in mgpu_test.go). Both skip, saying why, where there is no GPU.

func TestGPUContract(t *testing.T) {
	if err := cuda.Available(); err != nil {
		t.Skip(err.Error())
	}
	mistest.Run(t, func(g *mesh.Graph, p mis.Priority, dist int) (*mis.Result, error) {
		return mis.Compute(g, mis.Options{Distance: dist, Priority: p, Device: mis.GPU})
	})
}

func TestMultiGPUContract(t *testing.T) {
	if err := cuda.Available(); err != nil {
		t.Skip(err.Error())
	}
	mistest.Run(t, func(g *mesh.Graph, p mis.Priority, dist int) (*mis.Result, error) {
		r, err := mis.ComputeMultiGPU(context.Background(), g, mis.MultiGPUOptions{
			Distance: dist, Priority: p, Devices: []int{0, 0, 0}})
		if err != nil {
			return nil, err
		}
		return &r.Result, nil
	})
}
