package gpusparse

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpusparse/sparsetest"
)

// TestGPUBench times the products on the problems of issue 20 beside a
// floor (the bytes each must move at the device's copy bandwidth, both
// measured here) and writes the matrices as binary CSR for
// bench/gpu/spgemm_cusparse.cu, which times cuSPARSE on them. It runs
// when SPGEMM_BENCH names a directory for the matrices (see
// bench/gpu/spgemm.sh); SPGEMM_N sets the Poisson grid (default 101
// nodes a side), SPGEMM_EN the elasticity grid (default 70; 0: none) and
// SPGEMM_LEVELS the levels of each hierarchy (default 3; with
// SPGEMM_REUSE set, the matrices an earlier run wrote are read instead
// of built, so that two binaries time the same ones): level l+1
// takes level l's Pᵀ·A·P on the grid of its aggregates, so that the
// coarse products, few long rows that leave most of the GPU idle, are
// timed too.
func TestGPUBench(t *testing.T) {
	dir := os.Getenv("SPGEMM_BENCH")
	if dir == "" {
		t.Skip("SPGEMM_BENCH is not set")
	}
	d := device(t)
	bw := copyBandwidth(t, d)
	t.Logf("device copy bandwidth: %.0f GB/s (read + write)", bw/1e9)
	n, en, levels := envInt("SPGEMM_N", 101), envInt("SPGEMM_EN", 70), envInt("SPGEMM_LEVELS", 3)
	// SPGEMM_REUSE reads the matrices that an earlier run wrote to dir
	// (the same grids and levels) instead of building them.
	reuse := os.Getenv("SPGEMM_REUSE") != ""
	var a *hcsr
	if !reuse {
		t0 := time.Now()
		a = sparsetest.Poisson(n)
		t.Logf("poisson %d³ built in %v", n, time.Since(t0))
	}
	benchLevels(t, d, bw, filepath.Join(dir, "poisson"), a, n, 1, levels, true)
	if en > 0 {
		if !reuse {
			a = sparsetest.Elasticity(en)
		}
		benchLevels(t, d, bw, filepath.Join(dir, "elasticity"), a, en, 3, levels, false)
	}
}

// benchLevels times the products of levels levels of a hierarchy from a
// on an n³ grid of bs dofs a node, aggregates of 3³ nodes (level l > 0
// in files base-l*). check compares the finest level's products with
// the host's; the coarse ones always are.
func benchLevels(t *testing.T, d *Device, bw float64, base string, a *hcsr, n, bs, levels int, check bool) {
	for l := 0; l < levels && n > 1; l++ {
		name := base
		if l > 0 {
			name = fmt.Sprintf("%s-l%d", base, l)
		}
		var p *hcsr
		if os.Getenv("SPGEMM_REUSE") != "" {
			var err error
			if a, err = readCSR(name + ".A.bin"); err == nil {
				p, err = readCSR(name + ".P.bin")
			}
			if err != nil {
				t.Fatal(err)
			}
		} else {
			p = sparsetest.SmoothedAggregation(a, n, 3, bs)
		}
		t.Logf("%s: %d³ nodes × %d: A %d rows %d nnz, P %d×%d %d nnz", filepath.Base(name), n, bs, a.Rows, a.NNZ(), p.Rows, p.Cols, p.NNZ())
		a = benchProblem(t, d, bw, name, a, p, check || l > 0)
		n = (n + 2) / 3
	}
}

func envInt(name string, def int) int {
	var v int
	if _, err := fmt.Sscan(os.Getenv(name), &v); err != nil {
		return def
	}
	return v
}

// copyBandwidth measures device-to-device copies of 512 MiB (bytes read
// plus bytes written per second, best of 5).
func copyBandwidth(t *testing.T, d *Device) float64 {
	const size = 512 << 20
	q := &queue{d: d}
	src, err := q.scratch("bandwidth", size)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := q.scratch("bandwidth", size)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = src.Free(); _ = dst.Free() }()
	s := d.l.Stream
	e0, _ := d.l.Ctx.NewEvent()
	e1, _ := d.l.Ctx.NewEvent()
	best := time.Duration(1 << 62)
	for r := 0; r < 6; r++ {
		_ = e0.Record(s)
		if err := cuda.CopyDeviceAsync(dst, 0, src, 0, size, s); err != nil {
			t.Fatal(err)
		}
		_ = e1.Record(s)
		_ = e1.Synchronize()
		if el, err := cuda.Elapsed(e0, e1); err == nil && r > 0 {
			best = min(best, el)
		}
	}
	return 2 * size / best.Seconds()
}

// timeIt returns the median and the best wall time of reps runs of fn
// (each waits for its work), after one warm-up run.
func timeIt(t *testing.T, reps int, fn func() error) (med, best time.Duration) {
	if err := fn(); err != nil {
		t.Fatal(err)
	}
	ts := make([]time.Duration, reps)
	for r := range ts {
		t0 := time.Now()
		if err := fn(); err != nil {
			t.Fatal(err)
		}
		ts[r] = time.Since(t0)
	}
	slices.Sort(ts)
	return ts[reps/2], ts[0]
}

// csrBytes is what reading (or writing) all of m moves.
func csrBytes(rows, nnz int) float64 { return float64(4*(rows+1) + 12*nnz) }

// benchProblem times the products of the Galerkin product of a and p and
// returns the coarse operator.
func benchProblem(t *testing.T, d *Device, bw float64, base string, a, p *hcsr, check bool) *hcsr {
	if os.Getenv("SPGEMM_REUSE") == "" {
		if err := errors.Join(writeCSR(base+".A.bin", a), writeCSR(base+".P.bin", p)); err != nil {
			t.Fatal(err)
		}
	}
	da, dp := upload(t, d, a), upload(t, d, p)
	defer func() { _ = errors.Join(da.Free(), dp.Free()) }()
	g, err := d.Galerkin(da, dp)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Free()
	ap, r, ac := download(t, g.AP()), download(t, g.R()), download(t, g.Coarse())
	t.Logf("%s: A·P %d nnz, Pᵀ·A·P %d×%d %d nnz", filepath.Base(base), ap.NNZ(), ac.Rows, ac.Cols, ac.NNZ())
	for _, pr := range []*Product{g.ap, g.ac} {
		t.Logf("%s: plan of %d×%d·%d×%d: %d warp chunks (%d lanes; %d rows a warp of sp_numeric_h*), %d block chunks × %d parts",
			filepath.Base(base), pr.a.rows, pr.a.cols, pr.b.rows, pr.b.cols, pr.nw, pr.lanes, pr.rows, pr.nb, pr.parts)
	}
	if check {
		wantAP := sparsetest.Mul(a, p, false)
		if err := sparsetest.SameBits(ap, wantAP); err != nil {
			t.Errorf("A·P differs from the host's: %v", err)
		}
		if err := sparsetest.SameBits(ac, sparsetest.Mul(sparsetest.Transpose(p), wantAP, true)); err != nil {
			t.Errorf("Pᵀ·A·P differs from the host's: %v", err)
		}
	}
	if err := g.Numeric(); err != nil {
		t.Fatal(err)
	}
	if err := sparsetest.SameBits(download(t, g.Coarse()), ac); err != nil {
		t.Errorf("a second numeric pass changed Pᵀ·A·P: %v", err)
	}
	// Floors: every input read once, every output written once.
	in := csrBytes(a.Rows, a.NNZ()) + csrBytes(p.Rows, p.NNZ())
	floorAP := in + csrBytes(ap.Rows, ap.NNZ())
	floorAPn := in + float64(4*ap.NNZ()+8*ap.NNZ()+4*ap.Rows) // pattern read, values written
	floorT := 2 * csrBytes(p.Rows, p.NNZ())
	floorTn := float64(4+8+8) * float64(p.NNZ())
	rap := csrBytes(r.Rows, r.NNZ()) + csrBytes(ap.Rows, ap.NNZ())
	floorRAP := rap + csrBytes(ac.Rows, ac.NNZ())
	floorRAPn := rap + float64(12*ac.NNZ()+4*ac.Rows)
	prod := func(x, y *Matrix) func() error {
		return func() error { return freed(d.Mul(x, y)) }
	}
	sym := func() error { // A·P's pattern alone
		pr := &Product{a: da, b: dp, c: &Matrix{rows: da.rows, cols: dp.cols, owned: true, d: d}}
		return errors.Join(d.run(pr.symbolic), pr.Free())
	}
	rapFull := func() error { return freed(d.mul(g.R(), g.AP(), 0)) }
	tr := func() error { return freed(d.Transpose(dp)) }
	gal := func() error { return freed(d.Galerkin(da, dp)) }
	name := filepath.Base(base)
	for _, row := range []struct {
		what  string
		fn    func() error
		floor float64
	}{
		{"A·P symbolic+numeric", prod(da, dp), floorAP},
		{"A·P symbolic", sym, in + float64(4*ap.Rows+4*ap.NNZ())},
		{"A·P numeric", g.ap.Numeric, floorAPn},
		{"Pᵀ transpose", tr, floorT},
		{"Pᵀ numeric (gather)", g.r.Numeric, floorTn},
		{"Pᵀ·(AP) symbolic+numeric", rapFull, floorRAP},
		{"Pᵀ·(AP) numeric", g.ac.Numeric, floorRAPn},
		{"Galerkin all (AP, Pᵀ, RAP)", gal, floorAP + floorT + floorRAP},
		{"Galerkin numeric re-setup", g.Numeric, floorAPn + floorTn + floorRAPn},
	} {
		med, best := timeIt(t, 7, row.fn)
		fl := time.Duration(row.floor / bw * 1e9)
		t.Logf("RESULT %s | %-28s | median %8.3f ms | best %8.3f ms | floor %7.3f ms (%.0f MB) | %.1f× floor",
			name, row.what, ms(med), ms(best), ms(fl), row.floor/1e6, float64(med)/float64(fl))
	}
	if os.Getenv("SPGEMM_VARIANTS") != "" {
		benchPlans(t, d, name, da, dp, g)
	}
	return ac
}

// benchPlans times the numeric passes of A·P and Pᵀ·(AP) with one and
// two rows a warp of sp_numeric_h* (where it takes them), and planned
// with every product taken as one of few runs (a block for long rows of
// A and rows over blockFrom columns) and with none so.
func benchPlans(t *testing.T, d *Device, name string, da, dp *Matrix, g *Galerkin) {
	defer func(few, rows int) { d.fewRuns, d.hashRows = few, rows }(d.fewRuns, d.hashRows)
	// each plans both products anew and hands them to fn.
	each := func(fn func(what string, p *Product)) {
		for _, pr := range []struct {
			what string
			a, b *Matrix
			init float64
		}{{"A·P numeric", da, dp, math.Copysign(0, -1)}, {"Pᵀ·(AP) numeric", g.R(), g.AP(), 0}} {
			p, err := d.mul(pr.a, pr.b, pr.init)
			if err != nil {
				t.Fatal(err)
			}
			fn(pr.what, p)
			_ = p.Free()
		}
	}
	for _, rows := range []int{1, 2} {
		d.hashRows = rows
		each(func(what string, p *Product) {
			if p.hashed {
				med, best := timeIt(t, 7, p.Numeric)
				t.Logf("RESULT %s | %-18s rows %d | median %8.3f ms | best %8.3f ms | %d warp rows, %d block chunks × %d parts",
					name, what, rows, ms(med), ms(best), p.nw, p.nb, p.parts)
			}
		})
	}
	d.hashRows = 0
	for _, few := range []int{0, maxInt32} {
		d.fewRuns = few
		each(func(what string, p *Product) {
			med, best := timeIt(t, 7, p.Numeric)
			t.Logf("RESULT %s | %-18s few %10d | median %8.3f ms | best %8.3f ms | %d warp chunks (%d lanes), %d block chunks × %d parts",
				name, what, few, ms(med), ms(best), p.nw, p.lanes, p.nb, p.parts)
		})
	}
}

// freed frees what a timed call made, so that the time includes the
// allocations and the device does not fill up over the repetitions.
func freed[T interface{ Free() error }](x T, err error) error {
	if err != nil {
		return err
	}
	return x.Free()
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// writeCSR writes a as int64 rows, cols, nnz, then int32 offsets, int32
// columns and float64 values, little-endian: the input of
// spgemm_cusparse.
func writeCSR(path string, a *hcsr) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	p32 := make([]int32, len(a.Ptr))
	for i, x := range a.Ptr {
		p32[i] = int32(x)
	}
	for _, v := range []any{[]int64{int64(a.Rows), int64(a.Cols), int64(a.NNZ())}, p32, a.Col[:a.NNZ()], a.Val[:a.NNZ()]} {
		if err = binary.Write(w, binary.LittleEndian, v); err != nil {
			break
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if err2 := f.Close(); err == nil {
		err = err2
	}
	return err
}

// readCSR reads what writeCSR wrote.
func readCSR(path string) (*hcsr, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	h := make([]int64, 3)
	if err = binary.Read(r, binary.LittleEndian, h); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if h[0] < 0 || h[1] < 0 || h[2] < 0 || h[0] > maxInt32 || h[2] > maxInt32 {
		return nil, fmt.Errorf("%s: bad header %v", path, h)
	}
	p32 := make([]int32, h[0]+1)
	a := &hcsr{Rows: int(h[0]), Cols: int(h[1]), Ptr: make([]int, h[0]+1), Col: make([]int32, h[2]), Val: make([]float64, h[2])}
	for _, v := range []any{p32, a.Col, a.Val} {
		if err = binary.Read(r, binary.LittleEndian, v); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	for i, x := range p32 {
		a.Ptr[i] = int(x)
	}
	return a, nil
}

// The bench's files give back the matrices written.
func TestCSRFile(t *testing.T) {
	for _, c := range sparsetest.Corpus(true)[:6] {
		path := filepath.Join(t.TempDir(), "m.bin")
		if err := writeCSR(path, c.B); err != nil {
			t.Fatal(err)
		}
		got, err := readCSR(path)
		if err == nil {
			err = sparsetest.SameBits(got, c.B)
		}
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
}
