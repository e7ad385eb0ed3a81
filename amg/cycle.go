package amg

import "fmt"

// Apply sets z = M⁻¹r, one multigrid cycle from a zero initial guess:
// the preconditioner for a Krylov method of the caller's. M is symmetric
// positive definite, so it suits conjugate gradients. r and z must not
// overlap.
func (pc *Preconditioner) Apply(r, z []float64) error {
	n := pc.op.rows
	if len(r) != n || len(z) != n {
		return fmt.Errorf("amg: Apply: len(r) = %d, len(z) = %d, want %d", len(r), len(z), n)
	}
	if err := pc.reopen(); err != nil {
		return err
	}
	q := pc.perm
	z0 := z
	if q != nil {
		if pc.hr == nil {
			pc.hr, pc.hz = make([]float64, n), make([]float64, n)
		}
		q.gather(pc.pool, r, pc.hr)
		r, z = pc.hr, pc.hz
	}
	if ok, err := pc.applyDevice(r, z); !ok {
		pc.cycle(0, z, r, true)
	} else if err != nil {
		return err
	}
	if q != nil {
		q.scatter(pc.pool, z, z0)
	}
	return nil
}

// cycle approximately solves A_l·x = b by one V- or W-cycle. With zero,
// x is treated as zero on entry.
func (pc *Preconditioner) cycle(lv int, x, b []float64, zero bool) {
	if lv == 0 {
		pc.workVectors()
	}
	p := pc.pool
	l := pc.levels[lv]
	if lv == len(pc.levels)-1 {
		pc.coarse.solve(b, x)
		return
	}
	next := pc.levels[lv+1]
	// Pre-smoothing leaves the residual in l.res for restriction.
	p.smooth(l.a, &l.sm, x, b, l.res, l.tmp, l.tmp2, zero, true, false)
	p.restrict(l, l.res, next.b)
	pc.cycle(lv+1, next.x, next.b, true)
	if pc.opts.Cycle == WCycle && lv+1 < len(pc.levels)-1 {
		pc.cycle(lv+1, next.x, next.b, false)
	}
	p.prolong(l, next.x, x)
	p.smooth(l.a, &l.sm, x, b, l.res, l.tmp, l.tmp2, false, false, true)
}

// workVectors allocates the host cycle's vectors of every level on its
// first run: a hierarchy solved on the device never runs it, and at 1M
// rows its vectors are 40 MB whose pages the setup would fault in.
func (pc *Preconditioner) workVectors() {
	last := len(pc.levels) - 1
	for i, l := range pc.levels {
		n := l.a.rows
		if i > 0 && l.x == nil {
			l.x, l.b = make([]float64, n), make([]float64, n)
		}
		if i < last && l.res == nil {
			l.res, l.tmp, l.tmp2 = make([]float64, n), make([]float64, n), make([]float64, n)
		}
	}
}
