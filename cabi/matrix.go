//go:build cgo

package main

import "github.com/misgrid/misgrid/mesh"

// graphFromCSR and graphFromCOO apply the graph-creation options to the
// mesh builders. Row and column indices have been checked and made
// 0-based by the caller, in the caller's terms (array name, index, base).
func graphFromCSR[T mesh.Float](a *mesh.CSR[T], s settings) (*mesh.Graph, error) {
	return mesh.FromCSR(a, s.matrix)
}

func graphFromCOO[T mesh.Float](a *mesh.COO[T], s settings) (*mesh.Graph, error) {
	return mesh.FromCOO(a, s.matrix)
}
