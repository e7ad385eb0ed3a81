package mesh

import "math"

// ClassifyByDegree is the fallback boundary classification for a graph with
// no geometry (a bare matrix). A boundary vertex of a structured mesh has
// fewer neighbours than an interior one, and each boundary direction cuts
// its closed neighbourhood by about the same factor (hex 27-point: 27, 18,
// 12, 8 for interior, face, edge, corner). So the class is the log of
// (maxdeg+1)/(deg+1), scaled so that the most deficient vertices are
// corners, and rounded to one of the four classes. On unstructured meshes
// interior degrees vary, and this over-reports boundary: pass geometry or
// your own classes there.
func ClassifyByDegree(g *Graph) []Class {
	n := g.N()
	cls := make([]Class, n)
	if n == 0 {
		return cls
	}
	maxd := float64(g.MaxDegree())
	lmax := 0.0
	for v := 0; v < n; v++ {
		if l := math.Log((maxd + 1) / float64(g.Degree(int32(v))+1)); l > lmax {
			lmax = l
		}
	}
	if lmax == 0 {
		return cls
	}
	for v := 0; v < n; v++ {
		l := math.Log((maxd + 1) / float64(g.Degree(int32(v))+1))
		c := math.Round(3 * l / lmax)
		cls[v] = Class(min(max(c, 0), 3))
	}
	return cls
}
