package main

import (
	"github.com/misgrid/misgrid/internal/genspec"
	"github.com/misgrid/misgrid/mesh"
)

// The generator specs live in internal/genspec, which the developers'
// GPU benchmark shares.
const (
	genSeed = genspec.Seed
	genHelp = genspec.Help
)

func generate(spec string) (*mesh.Graph, *mesh.Mesh, error) { return genspec.Generate(spec) }

func generateWith(spec string, eo mesh.ElementOptions, co mesh.ClassifyOptions) (*mesh.Graph, *mesh.Mesh, error) {
	return genspec.GenerateWith(spec, eo, co)
}

func meshGraph(m *mesh.Mesh, featureAngle float64) (*mesh.Graph, error) {
	return genspec.MeshGraph(m, featureAngle)
}

func meshGraphWith(m *mesh.Mesh, eo mesh.ElementOptions, co mesh.ClassifyOptions) (*mesh.Graph, error) {
	return genspec.MeshGraphWith(m, eo, co)
}
