package amg

import (
	"testing"
	"time"

	"github.com/misgrid/misgrid/amg/internal/fem"
)

func TestZZGroup(t *testing.T) {
	pr := fem.Elasticity(24)
	pc, err := New(pr.A, problemOptions(pr, Options{Workers: 1}))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range pc.levels {
		t.Log(l.ga, l.gr, l.bs, l.nagg)
	}
	l := pc.levels[0]
	p := newPool(1)
	for _, g := range []int{1, 3} {
		t0 := time.Now()
		p.mulMat(l.a, l.p, g)
		t1 := time.Now()
		t.Log("AP g", g, t1.Sub(t0))
	}
	for _, g := range []int{1, 6} {
		t0 := time.Now()
		p.mulMat(l.r, l.ap, g)
		t1 := time.Now()
		t.Log("RAP g", g, t1.Sub(t0))
	}
	t.Log(l.p.nnz(), l.ap.nnz(), l.a.nnz())
}
