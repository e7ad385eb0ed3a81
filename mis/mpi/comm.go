//go:build mpi

package mpi

/*
#cgo pkg-config: mpi
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

static int mg_init(int *provided) {
	int flag = 0;
	MPI_Initialized(&flag);
	if (flag) return MPI_Query_thread(provided);
	return MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided);
}
static int mg_initialized(void) {
	int a = 0, b = 0;
	MPI_Initialized(&a);
	MPI_Finalized(&b);
	return a && !b;
}
static uintptr_t mg_world_handle(void) { return (uintptr_t)MPI_COMM_WORLD; }
static int mg_world_fortran(void) { return (int)MPI_Comm_c2f(MPI_COMM_WORLD); }
static MPI_Comm mg_from_handle(uintptr_t h) { return (MPI_Comm)h; }
static MPI_Comm mg_from_fortran(int f) { return MPI_Comm_f2c((MPI_Fint)f); }
static int mg_is_null(MPI_Comm c) { return c == MPI_COMM_NULL; }

// mg_idup starts duplicating c into *out (C memory: MPI writes it when
// the request completes), so that a rank that never joins cannot block
// the others past their timeout as MPI_Comm_dup would.
static int mg_idup(MPI_Comm c, MPI_Comm *out, MPI_Request *req) {
	return MPI_Comm_idup(c, out, req);
}
// mg_setup makes errors on the duplicate return codes.
static int mg_setup(MPI_Comm c, int *rank, int *size) {
	int e = MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
	if (e != MPI_SUCCESS) return e;
	e = MPI_Comm_rank(c, rank);
	if (e != MPI_SUCCESS) return e;
	return MPI_Comm_size(c, size);
}
static int mg_free(MPI_Comm *c) { return MPI_Comm_free(c); }
static int mg_test(MPI_Request *r, int *flag) { return MPI_Test(r, flag, MPI_STATUS_IGNORE); }
static int mg_cancel(MPI_Request *r) { return MPI_Cancel(r); }
static int mg_ialltoall(MPI_Comm c, void *s, void *r, MPI_Request *req) {
	return MPI_Ialltoall(s, 1, MPI_INT64_T, r, 1, MPI_INT64_T, c, req);
}
static int mg_iallreduce(MPI_Comm c, void *s, void *r, int n, int sum, MPI_Request *req) {
	return MPI_Iallreduce(s, r, n, MPI_INT64_T, sum ? MPI_SUM : MPI_MAX, c, req);
}
static void mg_errstr(int code, char *buf, int *len) {
	if (MPI_Error_string(code, buf, len) != MPI_SUCCESS) *len = 0;
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/misgrid/misgrid/mis"
)

// mu serialises MPI calls, as MPI_THREAD_SERIALIZED requires.
var mu sync.Mutex

// liveBufs counts C buffers allocated and not yet freed, so tests can
// check that nothing stays allocated.
var liveBufs atomic.Int64

func cmalloc(n int) unsafe.Pointer {
	liveBufs.Add(1)
	return C.malloc(C.size_t(max(n, 1)))
}

func cfree(p unsafe.Pointer) {
	if p != nil {
		C.free(p)
		liveBufs.Add(-1)
	}
}

func errString(code C.int) string {
	var buf [C.MPI_MAX_ERROR_STRING + 1]C.char
	var n C.int
	C.mg_errstr(code, &buf[0], &n)
	if n <= 0 {
		return fmt.Sprintf("MPI error %d", int(code))
	}
	return C.GoStringN(&buf[0], n)
}

// Init initialises MPI with MPI_THREAD_SERIALIZED, unless the program
// already did; it may be called more than once.
func Init() error {
	mu.Lock()
	defer mu.Unlock()
	var provided C.int
	if e := C.mg_init(&provided); e != C.MPI_SUCCESS {
		return fmt.Errorf("mis/mpi: MPI_Init_thread: %s", errString(e))
	}
	return nil
}

// Finalize ends MPI. Close every Comm first.
func Finalize() error {
	mu.Lock()
	defer mu.Unlock()
	if C.mg_initialized() == 0 {
		return nil
	}
	if e := C.MPI_Finalize(); e != C.MPI_SUCCESS {
		return fmt.Errorf("mis/mpi: MPI_Finalize: %s", errString(e))
	}
	return nil
}

// Comm is a mis.Exchanger over a duplicate of an MPI communicator, one
// rank per part. Its methods must not be called concurrently.
type Comm struct {
	comm       C.MPI_Comm
	rank, size int
	timeout    time.Duration

	sbufs   []unsafe.Pointer // C send buffer per message index
	scap    []int
	sreq    []C.MPI_Request
	sdone   []bool
	rbufs   [][]byte
	have    []bool
	orphans []orphan
	closed  bool

	// phase counts the collectives this rank has started. Every message
	// carries it in its first 8 bytes: the driver's protocol keeps each
	// exchange between the same two collectives on both sides, so a
	// message from an earlier phase is left over from a run that failed
	// (its abort, or data its receiver never read) and is dropped instead
	// of poisoning the next run on this communicator.
	phase uint64
}

// phaseBytes is the length of the phase header of every message.
const phaseBytes = 8

// orphan is a request that could not be completed or cancelled in time,
// with the buffers MPI may still touch.
type orphan struct {
	req  C.MPI_Request
	bufs []unsafe.Pointer
	what string
}

// World returns a Comm over MPI_COMM_WORLD.
func World(o Options) (*Comm, error) {
	return FromHandle(uintptr(C.mg_world_handle()), o)
}

// WorldHandle is MPI_COMM_WORLD as a C handle value, as FromHandle takes.
func WorldHandle() uintptr { return uintptr(C.mg_world_handle()) }

// WorldFortran is MPI_COMM_WORLD as a Fortran integer handle.
func WorldFortran() int32 { return int32(C.mg_world_fortran()) }

// FromHandle returns a Comm over the C communicator whose MPI_Comm value
// is h (a pointer in Open MPI, an int in MPICH): what a C caller passes.
func FromHandle(h uintptr, o Options) (*Comm, error) {
	return newComm(C.mg_from_handle(C.uintptr_t(h)), o)
}

// FromFortran returns a Comm over the communicator with Fortran integer
// handle f.
func FromFortran(f int32, o Options) (*Comm, error) {
	mu.Lock()
	ok := C.mg_initialized() != 0
	mu.Unlock()
	if !ok {
		return nil, errors.New("mis/mpi: MPI is not initialised (call Init)")
	}
	return newComm(C.mg_from_fortran(C.int(f)), o)
}

func newComm(base C.MPI_Comm, o Options) (*Comm, error) {
	mu.Lock()
	defer mu.Unlock()
	if C.mg_initialized() == 0 {
		return nil, errors.New("mis/mpi: MPI is not initialised (call Init)")
	}
	if C.mg_is_null(base) != 0 {
		return nil, errors.New("mis/mpi: MPI_COMM_NULL given")
	}
	c := &Comm{timeout: o.Timeout}
	if c.timeout <= 0 {
		c.timeout = mis.DefaultTimeout
	}
	// Not counted in liveBufs: after a timeout it stays allocated for good.
	dup := (*C.MPI_Comm)(C.malloc(C.sizeof_MPI_Comm))
	var req C.MPI_Request
	if e := C.mg_idup(base, dup, &req); e != C.MPI_SUCCESS {
		C.free(unsafe.Pointer(dup))
		return nil, fmt.Errorf("mis/mpi: duplicating the communicator: %s", errString(e))
	}
	// Poll without holding mu between tests: other Comms may use MPI.
	mu.Unlock()
	err := c.waitDup(&req)
	mu.Lock()
	if err != nil {
		// The request cannot be cancelled (a collective): it and dup stay
		// allocated, since MPI may complete it later.
		return nil, fmt.Errorf("mis/mpi: duplicating the communicator (every rank must call): %w", err)
	}
	c.comm = *dup
	C.free(unsafe.Pointer(dup))
	var rank, size C.int
	if e := C.mg_setup(c.comm, &rank, &size); e != C.MPI_SUCCESS {
		C.mg_free(&c.comm)
		return nil, fmt.Errorf("mis/mpi: the duplicate communicator: %s", errString(e))
	}
	c.rank, c.size = int(rank), int(size)
	return c, nil
}

// waitDup polls the duplication request until it completes or the
// timeout passes.
func (c *Comm) waitDup(req *C.MPI_Request) error {
	deadline := time.Now().Add(c.timeout)
	idle := 0
	for {
		flag, e := test(req)
		if e != C.MPI_SUCCESS {
			return fmt.Errorf("MPI_Test: %s", errString(e))
		}
		if flag {
			return nil
		}
		if err := c.idle(context.Background(), &idle, false, deadline); err != nil {
			return err
		}
	}
}

// Part is this rank in the communicator.
func (c *Comm) Part() int { return c.rank }

// Parts is the size of the communicator.
func (c *Comm) Parts() int { return c.size }

func (c *Comm) errorf(format string, a ...any) error {
	return fmt.Errorf("mis/mpi: rank %d: "+format, append([]any{c.rank}, a...)...)
}

func (c *Comm) grow(n int) {
	for len(c.sbufs) < n {
		c.sbufs = append(c.sbufs, nil)
		c.scap = append(c.scap, 0)
		c.sreq = append(c.sreq, C.MPI_Request(C.MPI_REQUEST_NULL))
		c.sdone = append(c.sdone, true)
		c.rbufs = append(c.rbufs, nil)
		c.have = append(c.have, false)
	}
}

// sendBuf returns C buffer i with room for n bytes.
func (c *Comm) sendBuf(i, n int) unsafe.Pointer {
	if c.sbufs[i] == nil || c.scap[i] < n {
		cfree(c.sbufs[i])
		c.sbufs[i] = cmalloc(n)
		c.scap[i] = max(n, 1)
	}
	return c.sbufs[i]
}

// test is MPI_Test of req under mu: whether it completed, and MPI's code.
// MPI gets a copy: req may lie in a struct that holds Go pointers, which
// cgo's check refuses to pass whole.
func test(req *C.MPI_Request) (bool, C.int) {
	var flag C.int
	r := *req
	mu.Lock()
	e := C.mg_test(&r, &flag)
	mu.Unlock()
	*req = r
	return flag != 0, e
}

// cancel asks MPI to cancel req and reports whether it completed.
func (c *Comm) cancel(req *C.MPI_Request) bool {
	mu.Lock()
	defer mu.Unlock()
	C.mg_cancel(req)
	var flag C.int
	for range 100 {
		if C.mg_test(req, &flag) != C.MPI_SUCCESS || flag != 0 {
			return flag != 0
		}
	}
	return false
}

// wait polls req until it completes; on a timeout or a cancelled context
// req and bufs become an orphan.
func (c *Comm) wait(ctx context.Context, req C.MPI_Request, what string, bufs ...unsafe.Pointer) error {
	deadline := time.Now().Add(c.timeout)
	idle := 0
	for {
		flag, e := test(&req)
		if e != C.MPI_SUCCESS {
			c.orphans = append(c.orphans, orphan{req: req, bufs: bufs, what: what})
			return c.errorf("%s: %s", what, errString(e))
		}
		if flag {
			return nil
		}
		if err := c.idle(ctx, &idle, false, deadline); err != nil {
			c.orphans = append(c.orphans, orphan{req: req, bufs: bufs, what: what})
			return c.errorf("%s: %w", what, err)
		}
	}
}

// Alltoall exchanges one int64 with every rank (MPI_Ialltoall, polled).
func (c *Comm) Alltoall(ctx context.Context, send []int64) ([]int64, error) {
	if c.closed {
		return nil, c.errorf("alltoall on a closed communicator")
	}
	if len(send) != c.size {
		return nil, c.errorf("alltoall of %d values on %d ranks", len(send), c.size)
	}
	sb, rb := cmalloc(8*c.size), cmalloc(8*c.size)
	copy(unsafe.Slice((*int64)(sb), c.size), send)
	var req C.MPI_Request
	c.phase++
	mu.Lock()
	e := C.mg_ialltoall(c.comm, sb, rb, &req)
	mu.Unlock()
	if e != C.MPI_SUCCESS {
		cfree(sb)
		cfree(rb)
		return nil, c.errorf("MPI_Ialltoall: %s", errString(e))
	}
	if err := c.wait(ctx, req, "alltoall", sb, rb); err != nil {
		return nil, err
	}
	out := make([]int64, c.size)
	copy(out, unsafe.Slice((*int64)(rb), c.size))
	cfree(sb)
	cfree(rb)
	return out, nil
}

// Allreduce combines vals over all ranks (MPI_Iallreduce, polled).
func (c *Comm) Allreduce(ctx context.Context, op mis.ReduceOp, vals []int64) error {
	if c.closed {
		return c.errorf("allreduce on a closed communicator")
	}
	n := len(vals)
	sb, rb := cmalloc(8*n), cmalloc(8*n)
	copy(unsafe.Slice((*int64)(sb), n), vals)
	sum := C.int(0)
	if op == mis.Sum {
		sum = 1
	}
	var req C.MPI_Request
	c.phase++
	mu.Lock()
	e := C.mg_iallreduce(c.comm, sb, rb, C.int(n), sum, &req)
	mu.Unlock()
	if e != C.MPI_SUCCESS {
		cfree(sb)
		cfree(rb)
		return c.errorf("MPI_Iallreduce: %s", errString(e))
	}
	if err := c.wait(ctx, req, "allreduce", sb, rb); err != nil {
		return err
	}
	copy(vals, unsafe.Slice((*int64)(rb), n))
	cfree(sb)
	cfree(rb)
	return nil
}

// Close waits (up to the timeout) for requests left behind by failures,
// frees every buffer and the duplicate communicator. It is collective.
// It reports what it had to leave allocated because MPI never finished
// with it.
func (c *Comm) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	deadline := time.Now().Add(c.timeout)
	idle := 0
	for len(c.orphans) > 0 {
		keep := c.orphans[:0]
		for _, o := range c.orphans {
			flag, e := test(&o.req)
			if e == C.MPI_SUCCESS && !flag {
				keep = append(keep, o)
				continue
			}
			for _, b := range o.bufs {
				cfree(b)
			}
		}
		c.orphans = keep
		if len(keep) > 0 && c.idle(context.Background(), &idle, false, deadline) != nil {
			break
		}
	}
	for i, b := range c.sbufs {
		cfree(b)
		c.sbufs[i] = nil
	}
	mu.Lock()
	e := C.mg_free(&c.comm)
	mu.Unlock()
	if len(c.orphans) > 0 {
		return c.errorf("close: %d requests (first: %s) still pending after %v; their buffers stay allocated", len(c.orphans), c.orphans[0].what, c.timeout)
	}
	if e != C.MPI_SUCCESS {
		return c.errorf("MPI_Comm_free: %s", errString(e))
	}
	return nil
}
