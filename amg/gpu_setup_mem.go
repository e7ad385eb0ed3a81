package amg

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/misgrid/misgrid/cuda"
)

// The device setup's memory and the words it reads back: transients of
// the level being built (freed, after the level's work, by freeLevel),
// what the solver keeps, and small reads of device words.

// devAllocs counts the device allocations and frees of setups and the
// time they take, for BenchmarkGPUSetup.
var devAllocs struct{ n, ns atomic.Int64 }

func countAlloc(t0 time.Time) {
	devAllocs.n.Add(1)
	devAllocs.ns.Add(int64(time.Since(t0)))
}

// alloc allocates a transient of the level, zeroed.
func (ds *devSetup) alloc(bytes int64) (*cuda.Buffer, error) {
	defer countAlloc(time.Now())
	b, err := ds.g.e.Ctx.Alloc(max((bytes+15)/16*16, 16))
	if err != nil {
		return nil, err
	}
	ds.tmp = append(ds.tmp, b)
	return b, b.MemsetAsync32(0, ds.g.stream)
}

// own gives b to the level's transients, or with Options.Reuse to the
// solver (a numeric Update reads it again).
func (ds *devSetup) own(b *cuda.Buffer) {
	if ds.pc.opts.Reuse {
		ds.g.bufs = append(ds.g.bufs, b)
	} else {
		ds.tmp = append(ds.tmp, b)
	}
}

// keep allocates memory that the solver keeps.
func (ds *devSetup) keep(bytes int64) (*cuda.Buffer, error) {
	defer countAlloc(time.Now())
	b, err := ds.g.e.Ctx.Alloc(max((bytes+15)/16*16, 16))
	if err != nil {
		return nil, err
	}
	ds.g.bufs = append(ds.g.bufs, b)
	return b, nil
}

// release hands kept buffers back to the level's transients: freed with
// them, after the work queued before.
func (ds *devSetup) release(bufs ...*cuda.Buffer) {
	ds.g.bufs = slices.DeleteFunc(ds.g.bufs, func(b *cuda.Buffer) bool { return slices.Contains(bufs, b) })
	ds.tmp = append(ds.tmp, bufs...)
}

func (ds *devSetup) freeLevel() error {
	var err error
	if ds.g != nil && ds.g.stream != nil && len(ds.tmp) > 0 {
		err = ds.g.stream.Synchronize()
	}
	t0 := time.Now()
	for _, b := range ds.tmp {
		err = errors.Join(err, b.Free())
	}
	devAllocs.n.Add(int64(len(ds.tmp)))
	devAllocs.ns.Add(int64(time.Since(t0)))
	ds.tmp = nil
	return err
}

// word returns a view of word i of ds.words.
func (ds *devSetup) word(i int) *cuda.Buffer { return wordOf(ds.words, i) }

// wordOf returns a view of 8-byte word i of b, which its caller
// allocated with more than i words.
func wordOf(b *cuda.Buffer, i int) *cuda.Buffer {
	w, err := b.View(8*int64(i), 8)
	if err != nil {
		panic(err)
	}
	return w
}

// read waits for the queued work and returns the listed 8-byte words of
// device memory, each given as (buffer, element index).
func (ds *devSetup) read(at ...any) ([]uint64, error) {
	return ds.readRun(nil, 0, 0, at...)
}

// hostWords is the size of ds.hw in words: a Lanczos estimate's scalars
// (2·steps+2, steps ≤ 100) and a few more.
const hostWords = 256

// readRun is read with, first, the n words of b from word first: one
// wait for a run of results and the error words beside them.
func (ds *devSetup) readRun(b *cuda.Buffer, first, n int64, at ...any) ([]uint64, error) {
	if ds.err != nil {
		return nil, ds.err
	}
	if total := n + int64(len(at)/2); total > hostWords {
		return nil, fmt.Errorf("amg: %d words to read at once, more than the %d the setup holds", total, hostWords)
	}
	s := ds.g.stream
	if n > 0 {
		if err := b.CopyToHostAsync(ds.hw, 0, 8*first, 8*n, s); err != nil {
			return nil, err
		}
	}
	for i := 0; i < len(at); i += 2 {
		b, idx := at[i].(*cuda.Buffer), at[i+1].(int64)
		if err := b.CopyToHostAsync(ds.hw, 8*(n+int64(i/2)), 8*idx, 8, s); err != nil {
			return nil, err
		}
	}
	if err := s.Synchronize(); err != nil {
		return nil, ds.g.e.Fail(err)
	}
	return append([]uint64(nil), cuda.HostSlice[uint64](ds.hw)[:n+int64(len(at)/2)]...), nil
}

// setWord sets word i of ds.words to v.
func (ds *devSetup) setWord(i int, v uint64) {
	if ds.err == nil {
		ds.launch("su_fill64", 1, int64(1), ds.word(i), int64(v))
	}
}

// get copies a device array into dst once the queued work is done,
// through the Stager (the aggregates of a level are megabytes); with dst
// empty it only waits.
func get[T cuda.Word](ds *devSetup, dst []T, src *cuda.Buffer) error {
	if ds.err != nil {
		return ds.err
	}
	if len(dst) == 0 {
		if err := ds.g.stream.Synchronize(); err != nil {
			return ds.g.e.Fail(err)
		}
		return nil
	}
	return stageFrom(ds.g, dst, src)
}
