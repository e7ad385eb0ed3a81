//go:build mpi

// These tests run on every rank of an MPI job (scripts/mpi-test.sh starts
// them with mpirun -n 1, 2 and 4). Every rank runs the same tests in the
// same order, so their collectives match; a check that fails reports with
// t.Errorf and lets the protocol finish, so one rank's failure does not
// leave the others waiting.
package mpi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/misgrid/misgrid/mesh"
	"github.com/misgrid/misgrid/mis"
	"github.com/misgrid/misgrid/mis/mistest"
)

func TestMain(m *testing.M) {
	if err := Init(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	if err := Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 2
	}
	os.Exit(code)
}

// open returns a Comm over MPI_COMM_WORLD and registers its Close, which
// must leave no C buffer behind.
func open(t *testing.T, timeout time.Duration) *Comm {
	t.Helper()
	c, err := World(Options{Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
		if n := liveBufs.Load(); n != 0 {
			t.Errorf("%d C buffers still allocated after Close", n)
		}
	})
	return c
}

func random(n, deg int, seed uint64) *mesh.Graph {
	b := mesh.NewBuilder(n)
	s := seed
	next := func() uint64 {
		s += 0x9e3779b97f4a7c15
		z := s
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		return z ^ z>>31
	}
	for range n * deg / 2 {
		b.Add(int32(next()%uint64(n)), int32(next()%uint64(n)))
	}
	return b.Graph()
}

func hashed(n, k int) []int32 {
	p := make([]int32, n)
	for v := range p {
		p[v] = int32(mis.Hash32(int32(v), 77) % uint32(k))
	}
	return p
}

func userValues(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i % 5)
	}
	return v
}

// local is this rank's share of g, with the user ranks when p needs them.
func local(t *testing.T, g *mesh.Graph, c *Comm, part []int32, p mis.Priority) mis.Local {
	t.Helper()
	l, err := mis.SplitPart(g, c.Parts(), c.Part(), part)
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind == mis.User {
		prim, err := mis.Primaries(g, p)
		if err != nil {
			t.Fatal(err)
		}
		l.Primary = rowsOf(prim, &l, c.Part())
	}
	return l
}

func rowsOf[T any](all []T, l *mis.Local, q int) []T {
	if l.Ranges != nil {
		return all[l.Ranges[q]:l.Ranges[q+1]]
	}
	out := make([]T, len(l.Rows))
	for i, v := range l.Rows {
		out[i] = all[v]
	}
	return out
}

// Each rank holds only its rows and checks them against the serial
// greedy set of the whole graph; the rounds must be those of Parallel.
func TestIdenticalSets(t *testing.T) {
	c := open(t, 20*time.Second)
	graphs := []struct {
		name string
		g    *mesh.Graph
	}{
		{"hex27-12", mistest.Grid27(12)},
		{"random-3000", random(3000, 8, 1)},
	}
	for _, gc := range graphs {
		g := gc.g
		for _, part := range [][]int32{nil, hashed(g.N(), c.Parts())} {
			for _, dist := range []int{1, 2} {
				for _, p := range []mis.Priority{
					{Kind: mis.Hash, Seed: 3},
					{Kind: mis.Boundary, Seed: 4},
					{Kind: mis.Degree, Seed: 5},
					{Kind: mis.User, Seed: 6, Values: userValues(g.N())},
				} {
					name := fmt.Sprintf("%s/hashed=%v/d%d/%v", gc.name, part != nil, dist, p.Kind)
					l := local(t, g, c, part, p)
					res, err := mis.RunPart(context.Background(), c, &l, mis.PartOptions{Distance: dist, Priority: p})
					if err != nil {
						t.Errorf("%s: %v", name, err)
						continue
					}
					keys, _ := mis.Keys(g, p)
					want := mistest.Greedy(t, g, keys, dist)
					rows := rowsOfRows(&l, c.Part())
					for i, v := range rows {
						if res.In[i] != want.In[v] {
							t.Errorf("%s: vertex %d: rank %d says in=%v, greedy says %v", name, v, c.Part(), res.In[i], want.In[v])
							break
						}
					}
					if res.Size != want.Size {
						t.Errorf("%s: size %d, greedy %d", name, res.Size, want.Size)
					}
					if par := mistest.Parallel(t, g, keys, dist, 1); res.Rounds != par.Rounds {
						t.Errorf("%s: %d rounds, Parallel takes %d", name, res.Rounds, par.Rounds)
					}
					if c.Part() == 0 && p.Kind == mis.Hash && part == nil {
						t.Logf("%s on %d ranks: %d rounds, bytes per round %v", name, c.Parts(), res.Rounds, res.BytesPerRound)
					}
				}
			}
		}
	}
}

func rowsOfRows(l *mis.Local, q int) []int32 {
	if l.Ranges == nil {
		return l.Rows
	}
	r := make([]int32, l.Ranges[q+1]-l.Ranges[q])
	for i := range r {
		r[i] = l.Ranges[q] + int32(i)
	}
	return r
}

// Chain priorities (values rising along a path, x + 10⁻³·y on a quad
// grid) take one round per link until the ranks agree that the rounds
// stall and rank 0 finishes serially: the greedy set, the rounds of
// Parallel, for any number of ranks (issue 21, item 6).
func TestChainPriorities(t *testing.T) {
	c := open(t, 20*time.Second)
	for _, gc := range mistest.Chains(t, 150, 20_000) {
		for _, part := range [][]int32{nil, hashed(gc.Graph.N(), c.Parts())} {
			for _, dist := range []int{1, 2} {
				name := fmt.Sprintf("%s/hashed=%v/d%d", gc.Name, part != nil, dist)
				p := mis.Priority{Kind: mis.User, Values: gc.Values}
				l := local(t, gc.Graph, c, part, p)
				res, err := mis.RunPart(context.Background(), c, &l, mis.PartOptions{Distance: dist, Priority: p})
				if err != nil {
					t.Errorf("%s: %v", name, err)
					continue
				}
				keys, _ := mis.Keys(gc.Graph, p)
				want := mistest.Greedy(t, gc.Graph, keys, dist)
				for i, v := range rowsOfRows(&l, c.Part()) {
					if res.In[i] != want.In[v] {
						t.Errorf("%s: vertex %d: rank %d says in=%v, greedy says %v", name, v, c.Part(), res.In[i], want.In[v])
						break
					}
				}
				par := mistest.Parallel(t, gc.Graph, keys, dist, 1)
				if res.Size != want.Size || res.Rounds != par.Rounds || res.Rounds > 4 || res.FinishVertices == 0 {
					t.Errorf("%s: size %d (greedy %d), %d rounds (Parallel %d), %d vertices finished serially",
						name, res.Size, want.Size, res.Rounds, par.Rounds, res.FinishVertices)
				}
			}
		}
	}
}

// Job.Compute gathers the whole set on every rank; ADMMA's set must be a
// valid MIS, and the exact one the greedy set.
func TestJobCompute(t *testing.T) {
	c := open(t, 20*time.Second)
	j := &Job{c: c}
	if j.Rank() != c.Part() || j.Size() != c.Parts() {
		t.Fatalf("job rank %d of %d, communicator %d of %d", j.Rank(), j.Size(), c.Part(), c.Parts())
	}
	g := mistest.Grid27(10)
	for _, mode := range []mis.PartMode{mis.Exact, mis.ADMMA} {
		p := mis.Priority{Kind: mis.Boundary, Seed: 8}
		res, err := j.Compute(context.Background(), g, mis.PartOptions{Priority: p, Mode: mode})
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		if err := mis.Verify(g, res.In, 1); err != nil {
			t.Errorf("%v: %v", mode, err)
		}
		keys, _ := mis.Keys(g, p)
		same := true
		for v, in := range mistest.Greedy(t, g, keys, 1).In {
			same = same && res.In[v] == in
		}
		if mode == mis.Exact && !same {
			t.Errorf("exact: set differs from the greedy one")
		}
		if mode == mis.ADMMA && res.OuterIterations < 1 {
			t.Errorf("ADMMA: %d outer iterations", res.OuterIterations)
		}
		t.Logf("%v: %d rounds, %d bytes", mode, res.Rounds, res.Bytes())
	}
}

// The communicator constructors that the C ABI and Fortran use.
func TestConstructors(t *testing.T) {
	g := random(500, 6, 2)
	for _, mk := range []func() (*Comm, error){
		func() (*Comm, error) { return FromHandle(WorldHandle(), Options{Timeout: 10 * time.Second}) },
		func() (*Comm, error) { return FromFortran(WorldFortran(), Options{Timeout: 10 * time.Second}) },
	} {
		c, err := mk()
		if err != nil {
			t.Fatal(err)
		}
		l := local(t, g, c, nil, mis.Priority{})
		if _, err := mis.RunPart(context.Background(), c, &l, mis.PartOptions{Distance: 2}); err != nil {
			t.Error(err)
		}
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}
}

func TestFaultInvalidInput(t *testing.T) {
	c := open(t, 10*time.Second)
	g := mistest.Grid27(6)
	l := local(t, g, c, nil, mis.Priority{})
	bad := c.Parts() - 1
	if c.Part() == bad {
		l.Adj = append([]int32(nil), l.Adj...)
		l.Adj[3] = -7
	}
	start := time.Now()
	_, err := mis.RunPart(context.Background(), c, &l, mis.PartOptions{})
	switch {
	case err == nil:
		t.Fatal("no error")
	case c.Part() == bad && !strings.Contains(err.Error(), "out of range"):
		t.Errorf("bad rank: %v", err)
	case c.Part() != bad && !errors.Is(err, mis.ErrAborted):
		t.Errorf("rank %d: %v, want ErrAborted", c.Part(), err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v to fail", d)
	}
}

func TestFaultMidRun(t *testing.T) {
	c := open(t, 10*time.Second)
	g := mistest.Grid27(10)
	for _, dist := range []int{1, 2} {
		l := local(t, g, c, nil, mis.Priority{})
		var ex mis.Exchanger = c
		if c.Part() == c.Parts()-1 {
			ex = &mistest.FaultyExchanger{Exchanger: c, FailAt: 3}
		}
		start := time.Now()
		_, err := mis.RunPart(context.Background(), ex, &l, mis.PartOptions{Distance: dist})
		if err == nil {
			t.Errorf("d%d: rank %d: no error", dist, c.Part())
		}
		// Abort messages carry the failure: nobody waits for a timeout.
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("d%d: rank %d took %v to fail: %v", dist, c.Part(), d, err)
		}
	}
}

// A rank that hangs: the others give up after the timeout, all with an
// error, within three timeouts; Close then finds every request finished
// once the hung rank has caught up.
func TestFaultStall(t *testing.T) {
	timeout := time.Second
	c := open(t, timeout)
	if c.Parts() == 1 {
		t.Skip("needs two ranks")
	}
	g := mistest.Grid27(10)
	l := local(t, g, c, nil, mis.Priority{})
	var ex mis.Exchanger = c
	if c.Part() == 0 {
		ex = &mistest.FaultyExchanger{Exchanger: c, FailAt: 3, Stall: 5 * timeout / 2}
	}
	start := time.Now()
	_, err := mis.RunPart(context.Background(), ex, &l, mis.PartOptions{})
	d := time.Since(start)
	if err == nil {
		t.Errorf("rank %d: no error", c.Part())
	}
	if c.Part() != 0 && d > 3*timeout+time.Second {
		t.Errorf("rank %d took %v with a %v timeout: %v", c.Part(), d, timeout, err)
	}
	t.Logf("rank %d failed after %v: %v", c.Part(), d.Round(time.Millisecond), err)
	// A rank that gave up in a collective (the count that ends each
	// round) leaves it to complete when the hung rank joins: Close must
	// find it done once rank 0 has caught up.
	time.Sleep(time.Until(start.Add(3 * timeout)))
}
