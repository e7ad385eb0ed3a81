package amg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/amg/internal/fem"
	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
)

// Host models of setup.cu: each kernel's thread body in Go, run over
// every thread (in a shuffled order where the kernel's threads race), and
// the level they build together compared with the host setup. They run
// in CI without a GPU; the GPU tests compare the kernels with the same
// host functions.

// su_norm2 is mesh.Norm2, operation for operation (the rounding
// intrinsics keep nvcc from fusing them).
type mNorm = mesh.Norm2

func mStrong(x, theta, ds, do float64) bool {
	return theta == 0 || x > float64(theta*math.Sqrt(ds))*math.Sqrt(do)
}

func mLower(col []int32, lo, hi int, c int32) int {
	for lo < hi {
		m := lo + (hi-lo)/2
		if col[m] < c {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// modelScan is su_scan_up, su_scan_top and su_scan_down over blocks.
func modelScan(x []int64) {
	n := int64(len(x))
	blocks := min(scanBlocks, max(1, (n+gpuThreads-1)/gpuThreads))
	ch := (n + blocks - 1) / blocks
	part := make([]int64, blocks)
	for b := int64(0); b < blocks; b++ {
		for i := b * ch; i < min(n, (b+1)*ch); i++ {
			part[b] += x[i]
		}
	}
	s := int64(0)
	for b := range part {
		part[b], s = s, s+part[b]
	}
	for b := int64(0); b < blocks; b++ {
		carry := part[b]
		for t := b * ch; t < min(n, (b+1)*ch); t += gpuThreads {
			// The tile's inclusive scan, then the carry.
			tile := x[t:min(min(n, (b+1)*ch), t+gpuThreads)]
			acc := int64(0)
			for i := range tile {
				acc += tile[i]
				tile[i] = carry + acc
			}
			carry += acc
		}
	}
}

func modelClasses(g *mesh.Graph) []mesh.Class {
	mind, maxd := math.MaxInt, 0
	for v := 0; v < g.N(); v++ {
		mind, maxd = min(mind, g.Degree(int32(v))), max(maxd, g.Degree(int32(v)))
	}
	table := classTable(mind, maxd)
	cls := make([]mesh.Class, g.N())
	for v := range cls {
		cls[v] = mesh.Class(table[g.Degree(int32(v))])
	}
	return cls
}

// modelFix is su_fix_sizes, su_fix_flags, the scan and su_renumber; small
// counts the aggregates too small for k vectors.
func modelFix(of []int32, nagg int, dir []uint8, bs, k int) (nout, small int) {
	size := make([]int, nagg)
	for v := range of {
		if dir[v] != 0 {
			of[v] = -1
		}
		if of[v] >= 0 {
			size[of[v]]++
		}
	}
	flag := make([]int64, nagg+1)
	need := (k + bs - 1) / bs
	for a, s := range size {
		if s > 0 {
			flag[a+1] = 1
		}
		if s > 0 && s < need {
			small++
		}
	}
	modelScan(flag)
	if small > 0 {
		return 0, small
	}
	for v, a := range of {
		if a >= 0 {
			of[v] = int32(flag[a])
		}
	}
	return int(flag[nagg]), 0
}

// modelTentative is su_count, su_place (in a random order, as the
// atomics may place), su_sort_members, su_tent_ptr and su_tent_qr.
func modelTentative(of []int32, nagg, bs, k int, b []float64, rng *rand.Rand) (*csr, []float64) {
	nodes := len(of)
	cnt, pre := make([]int64, nagg+1), make([]int64, nodes+1)
	for v, a := range of {
		if a >= 0 {
			cnt[a+1]++
			pre[v+1] = 1
		}
	}
	modelScan(cnt)
	modelScan(pre)
	pos, mem := make([]int32, nagg), make([]int32, nodes)
	for _, v := range rng.Perm(nodes) {
		if a := of[v]; a >= 0 {
			mem[cnt[a]+int64(pos[a])] = int32(v)
			pos[a]++
		}
	}
	for a := 0; a < nagg; a++ {
		slices.Sort(mem[cnt[a]:cnt[a+1]])
	}
	n := nodes * bs
	t := &csr{rows: n, cols: nagg * k, ptr: make([]int, n+1)}
	for i := 0; i <= n; i++ {
		if i == n {
			t.ptr[i] = int(pre[nodes]) * bs * k
			continue
		}
		v, d := i/bs, i%bs
		t.ptr[i] = int(pre[v])*bs*k + map[bool]int{true: d * k, false: 0}[of[v] >= 0]
	}
	t.col, t.val = make([]int32, t.ptr[n]), make([]float64, t.ptr[n])
	bc := make([]float64, nagg*k*k)
	w, vv := make([]float64, n*k), make([]float64, n*k)
	for ag := 0; ag < nagg; ag++ {
		m0, nm := int(cnt[ag]), int(cnt[ag+1]-cnt[ag])
		m := nm * bs
		a := w[m0*bs*k : (m0+nm)*bs*k]
		for i := 0; i < nm; i++ {
			node := int(mem[m0+i])
			for d := 0; d < bs; d++ {
				copy(a[(i*bs+d)*k:(i*bs+d+1)*k], b[(node*bs+d)*k:(node*bs+d+1)*k])
			}
		}
		r := make([]float64, k*k)
		modelTentQR(a[:m*k], m, k, r, vv[m0*bs*k:(m0+nm)*bs*k])
		copy(bc[ag*k*k:], r)
		for i := 0; i < nm; i++ {
			node := int(mem[m0+i])
			for d := 0; d < bs; d++ {
				s := t.ptr[node*bs+d]
				for j := 0; j < k; j++ {
					t.col[s+j] = int32(ag*k + j)
					t.val[s+j] = a[(i*bs+d)*k+j]
				}
			}
		}
	}
	return t, bc
}

// modelReflect is su_reflect: every column's dot product (lane c+1's)
// before any update.
func modelReflect(a, v []float64, m, k, j int, bt float64) {
	sc := make([]float64, k)
	for c := j; c < k; c++ {
		s := 0.0
		for i := j; i < m; i++ {
			s += v[i*k+j] * a[i*k+c]
		}
		sc[c] = s * bt
	}
	for i := j; i < m; i++ {
		for c := j; c < k; c++ {
			a[i*k+c] -= sc[c] * v[i*k+j]
		}
	}
}

// modelTentQR is su_tent_qr's warp on one aggregate (a m×k, r k×k, v the
// reflectors): vᵀv on lane 0, the reflectors through modelReflect, the
// signs of R's rows and Q's columns applied as they are written. The
// expressions are the host's (s += x*y), so that a compiler fuses them
// alike.
func modelTentQR(a []float64, m, k int, r, v []float64) {
	steps := min(m, k)
	beta := make([]float64, steps)
	for j := 0; j < steps; j++ {
		nrm := 0.0
		for i := j; i < m; i++ {
			nrm += a[i*k+j] * a[i*k+j]
		}
		nrm = math.Sqrt(nrm)
		x0 := a[j*k+j]
		alpha := -nrm
		if x0 < 0 {
			alpha = nrm
		}
		for i := j; i < m; i++ {
			v[i*k+j] = a[i*k+j]
			if i == j {
				v[i*k+j] = x0 - alpha
			}
		}
		s2 := 0.0
		for i := j; i < m; i++ {
			s2 += v[i*k+j] * v[i*k+j]
		}
		if s2 > 0 {
			beta[j] = 2 / s2
		}
		modelReflect(a, v, m, k, j, beta[j])
	}
	flip := make([]bool, k)
	for j := range steps {
		flip[j] = a[j*k+j] < 0
	}
	for q := range k * k {
		i, c := q/k, q%k
		r[q] = 0
		if i < steps && c >= i {
			r[q] = a[q]
			if flip[i] {
				r[q] = -r[q]
			}
		}
	}
	for q := range m * k {
		a[q] = 0
		if q/k == q%k {
			a[q] = 1
		}
	}
	for j := steps - 1; j >= 0; j-- {
		modelReflect(a, v, m, k, j, beta[j])
	}
	for q := range m * k {
		if flip[q%k] {
			a[q] = -a[q]
		}
	}
}

// su_tent_qr's order of work gives householderQR's factors bit for bit:
// aggregates of fewer rows than vectors, zero and repeated columns,
// negative diagonals.
func TestTentQRModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 400 {
		k := 1 + trial%8
		m := 1 + rng.IntN(40)
		a := make([]float64, m*k)
		for q := range a {
			a[q] = rng.NormFloat64()
		}
		switch trial % 5 {
		case 1: // a zero column
			for i := range m {
				a[i*k+rng.IntN(k)] = 0
			}
		case 2: // a repeated column
			c := rng.IntN(k)
			for i := range m {
				a[i*k+c] = a[i*k]
			}
		case 3: // all zero
			clear(a)
		}
		wa, ga := slices.Clone(a), slices.Clone(a)
		wr, gr := make([]float64, k*k), make([]float64, k*k)
		householderQR(wa, m, k, wr, make([]float64, m*k))
		modelTentQR(ga, m, k, gr, make([]float64, m*k))
		for q := range wa {
			if math.Float64bits(ga[q]) != math.Float64bits(wa[q]) {
				t.Fatalf("m=%d k=%d: Q[%d] = %v, host %v", m, k, q, ga[q], wa[q])
			}
		}
		for q := range wr {
			if math.Float64bits(gr[q]) != math.Float64bits(wr[q]) {
				t.Fatalf("m=%d k=%d: R[%d] = %v, host %v", m, k, q, gr[q], wr[q])
			}
		}
	}
}

func modelCases(t *testing.T) []modelCase {
	var cs []modelCase
	for _, tp := range []testProblem{{"poisson2d-30", fem.Poisson(2, 30)}, {"poisson3d-12", fem.Poisson(3, 12)}, {"elasticity3d-6", fem.Elasticity(6)}} {
		for _, theta := range []float64{0, 0.08} {
			o, err := problemOptions(tp.pr, Options{Theta: theta}).withDefaults()
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, modelCase{name: tp.name, a: mustCSR(t, tp.pr.A), o: o, theta: theta})
		}
	}
	// P1 on tetrahedra: rows of varying length.
	tm := mesh.StructuredTet(9, 8, 7)
	for _, build := range []func(*mesh.Mesh) (*fem.Problem, error){fem.TetPoisson, fem.TetElasticity} {
		pr, err := build(tm)
		if err != nil {
			t.Fatal(err)
		}
		o, err := problemOptions(pr, Options{Theta: 0.08}).withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, modelCase{name: fmt.Sprintf("tet-bs%d", pr.Block), a: mustCSR(t, pr.A), o: o, theta: 0.08})
	}
	for _, c := range longRowCases() {
		o, err := c.o.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		// The hubs' coarse operator is dense: its first level is the case.
		levels := 2
		if strings.HasPrefix(c.name, "hubs") {
			levels = 1
		}
		cs = append(cs, modelCase{name: c.name, a: mustCSR(t, c.a), o: o, theta: o.Theta, levels: levels})
	}
	return cs
}

// The device's strength graph, classes, aggregates, tentative
// prolongator and smoothed prolongator (the models of setup.cu) are the
// host's: graphs and aggregates exactly, prolongators to rounding.
func TestSetupModelsMatchHost(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range modelCases(t) {
		o := c.o
		a := c.a
		bs := o.BlockSize
		b, k, err := nearNullspace(&o, a.rows, bs)
		if err != nil {
			t.Fatal(err)
		}
		nl := c.levels
		if nl == 0 {
			nl = 2
		}
		for lvl := 0; lvl < nl && a.rows > 50; lvl++ {
			name := c.name + "/" + string(rune('0'+lvl))
			if c.theta > 0 {
				name += "/theta"
			}
			want, err := strengthGraph(newPool(1), a, c.theta, bs)
			if err != nil {
				t.Fatal(err)
			}
			g, dir, bad := modelGraph(t, a, bs, c.theta)
			if bad >= 0 {
				t.Fatalf("%s: node %d reported asymmetric", name, bad)
			}
			if !slices.Equal(g.Offsets, want.Offsets) || !slices.Equal(g.Adj, want.Adj) {
				t.Fatalf("%s: strength graphs differ", name)
			}
			for v, d := range dir {
				if (d != 0) != (want.Dirichlet != nil && want.Dirichlet[v]) {
					t.Fatalf("%s: Dirichlet flag of node %d differs", name, v)
				}
			}
			if cls := modelClasses(g); !slices.Equal(cls, mesh.ClassifyByDegree(want)) {
				t.Fatalf("%s: classes differ", name)
			}
			wof, wn, err := aggregateMIS2(want, 1, mis.CPU)
			if err != nil {
				t.Fatal(err)
			}
			of, n0 := slices.Clone(wof), wn
			wof, wn = fixAggregates(want, wof, wn, bs, k)
			nagg, small := modelFix(of, n0, dir, bs, k)
			if small > 0 {
				t.Logf("%s: %d small aggregates, fixed on the host", name, small)
				of, nagg = fixAggregates(want, of, n0, bs, k)
			}
			if nagg != wn || !slices.Equal(of, wof) {
				t.Fatalf("%s: aggregates differ (%d, want %d)", name, nagg, wn)
			}
			tm, bcm := modelTentative(of, nagg, bs, k, b, rng)
			th, bch := tentative(wof, wn, bs, b, k)
			if !slices.Equal(tm.ptr, th.ptr) || !slices.Equal(tm.col, th.col) || relDiff(tm.val, th.val) > 1e-14 || relDiff(bcm, bch) > 1e-14 {
				t.Fatalf("%s: tentative prolongators differ", name)
			}
			dinv := make([]float64, a.rows)
			for i, d := range a.diag() {
				dinv[i] = 1 / d
			}
			lmax := newPool(1).maxEigDinvA(a, dinv, 12)
			pm := modelAT(a, tm, of, bs, k, dinv, 4.0/3/lmax, rng, true)
			if ps := modelAT(a, tm, of, bs, k, dinv, 4.0/3/lmax, rng, false); !slices.Equal(pm.col, ps.col) ||
				!slices.EqualFunc(pm.val, ps.val, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }) {
				t.Fatalf("%s: su_at_short's prolongator differs from the sorted rows'", name)
			}
			ph := newPool(1).mulMat(a, th, groupOf(a, bs))
			smoothProlongator(newPool(1), th, ph, dinv, 4.0/3/lmax, ph)
			if !slices.Equal(pm.ptr, ph.ptr) || !slices.Equal(pm.col, ph.col) || relDiff(pm.val, ph.val) > 1e-13 {
				t.Fatalf("%s: smoothed prolongators differ", name)
			}
			if lvl+1 < nl {
				ac, _ := newPool(1).galerkinStreamed(a, ph, groupOf(a, bs), 1)
				a, b, bs = ac, bch, k
			}
		}
	}
}

// classTable gives ClassifyByDegree's classes on graphs with every
// spread of degrees.
func TestClassTable(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		g := mesh.RandomGraph(300, float64(2+seed), seed)
		if !slices.Equal(modelClasses(g), mesh.ClassifyByDegree(g)) {
			t.Fatalf("seed %d: classes differ", seed)
		}
	}
	g := &mesh.Graph{Offsets: []int64{0, 0, 0}}
	if !slices.Equal(modelClasses(g), mesh.ClassifyByDegree(g)) {
		t.Fatal("isolated vertices: classes differ")
	}
}

// The chunked scan is the sequential prefix sum at every length.
func TestScanModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 255, 256, 257, 1023, 70000, 262145, 300001} {
		x := make([]int64, n)
		for i := range x {
			x[i] = rng.Int64N(100)
		}
		want := slices.Clone(x)
		for i := 1; i < n; i++ {
			want[i] += want[i-1]
		}
		modelScan(x)
		if !slices.Equal(x, want) {
			t.Fatalf("n=%d: scan differs", n)
		}
	}
}
