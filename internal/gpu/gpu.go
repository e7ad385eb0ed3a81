// Package gpu is the device layer every GPU user of this module goes
// through: it opens a device's primary context (or takes a caller's
// context), loads one kernel image into it, keeps the table of the
// kernels its user names with their occupancy, sizes grids to what fits
// on the device at once and remembers a context that failed for good.
//
// Every error that means "no usable GPU" wraps cuda.ErrUnavailable, so
// callers that may fall back to the CPU test for it with errors.Is.
// Nothing here runs at package initialisation: the driver is opened on
// the first Open.
package gpu

import (
	"errors"
	"fmt"
	"sync"

	"github.com/misgrid/misgrid/cuda"
)

// BlockSize is the threads per block of every kernel of this module.
const BlockSize = 256

// Loader is one kernel image loaded into one context, with a stream of
// its own. Mu serialises the work that its user queues on Stream.
type Loader struct {
	Ctx    *cuda.Context
	Stream *cuda.Stream
	Mu     sync.Mutex

	mod     *cuda.Module
	ownsCtx bool
	sms     int
	fn      map[string]*cuda.Function
	occ     map[string]int // resident blocks of BlockSize threads per SM

	bmu    sync.Mutex
	broken error // a sticky error: the context is unusable
}

// Unavailable wraps err as a reason no GPU can be used, unless it says
// so already.
func Unavailable(err error) error {
	if err == nil || errors.Is(err, cuda.ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %w", cuda.ErrUnavailable, err)
}

type key struct {
	ctx   uintptr // the context, or 0 for a device's primary one
	dev   int
	image *byte
}

var (
	mu      sync.Mutex
	loaders = map[key]*Loader{}
	// primaries are the devices' primary contexts that the loaders of
	// Open share, so that a device has one cache of freed memory.
	primaries = map[int]*cuda.Context{}
)

// KeepFraction is the share of a device's memory that its primary
// context keeps when buffers are freed, for the next allocations of the
// same sizes (cuda.Context.KeepFreed): repeated setups and MIS calls then
// allocate nothing from the driver. An allocation that finds the device
// full gives it all back first.
const KeepFraction = 8

// primary returns the Context of device ordinal's primary context shared
// by Open's loaders, a fresh one when fresh (its last loader failed).
func primary(ordinal int, fresh bool) (*cuda.Context, error) {
	if c := primaries[ordinal]; c != nil && !fresh {
		return c, nil
	}
	dev, err := cuda.GetDevice(ordinal)
	if err != nil {
		return nil, err
	}
	ctx, err := dev.PrimaryContext()
	if err != nil {
		return nil, err
	}
	if _, total, err := ctx.MemInfo(); err == nil {
		// KeepFreed fails only in giving memory back (a limit of 0).
		_ = ctx.KeepFreed(total / KeepFraction)
	}
	primaries[ordinal] = ctx
	return ctx, nil
}

// Open returns the loader of image in the primary context of device
// ordinal, creating it on first use (and again after its context
// failed). names are the kernels its user launches.
func Open(ordinal int, image []byte, names []string) (*Loader, error) {
	if err := cuda.Available(); err != nil {
		return nil, err
	}
	if ordinal < 0 {
		return nil, Unavailable(fmt.Errorf("GPU index %d is negative", ordinal))
	}
	k := key{dev: ordinal, image: &image[0]}
	mu.Lock()
	defer mu.Unlock()
	old := loaders[k]
	if old != nil && old.Usable() == nil && old.holds(names) {
		return old, nil
	}
	ctx, err := primary(ordinal, old != nil && old.Usable() != nil)
	if err != nil {
		return nil, Unavailable(fmt.Errorf("GPU %d: %w", ordinal, err))
	}
	l, err := New(ctx, false, image, names)
	if err != nil {
		return nil, Unavailable(fmt.Errorf("GPU %d: %w", ordinal, err))
	}
	loaders[k] = l
	return l, nil
}

// For returns the loader of image in a caller's context, creating it on
// first use; the context stays the caller's.
func For(ctx *cuda.Context, image []byte, names []string) (*Loader, error) {
	k := key{ctx: ctx.Raw(), dev: -1, image: &image[0]}
	mu.Lock()
	defer mu.Unlock()
	if l := loaders[k]; l != nil && l.Ctx == ctx && l.Usable() == nil && l.holds(names) {
		return l, nil
	}
	l, err := New(ctx, false, image, names)
	if err != nil {
		return nil, Unavailable(err)
	}
	loaders[k] = l
	return l, nil
}

// New loads image into ctx with a stream of its own, uncached: for users
// that hold several loaders in one context (the parts of a multi-GPU
// run). With owns, Close also releases ctx.
func New(ctx *cuda.Context, owns bool, image []byte, names []string) (*Loader, error) {
	sms, err := ctx.Device().Attribute(cuda.AttrMultiprocessorCount)
	if err != nil {
		return nil, err
	}
	mod, err := ctx.LoadModule(image)
	if err != nil {
		return nil, err
	}
	stream, err := ctx.NewStream()
	if err != nil {
		mod.Close()
		return nil, err
	}
	l := &Loader{Ctx: ctx, Stream: stream, mod: mod, sms: sms,
		fn: make(map[string]*cuda.Function, len(names)), occ: make(map[string]int, len(names))}
	for _, name := range names {
		f, err := mod.Function(name)
		if err == nil {
			var occ int
			occ, err = f.MaxActiveBlocksPerSM(BlockSize, 0)
			l.fn[name], l.occ[name] = f, max(occ, 1)
		}
		if err != nil {
			l.release(false)
			return nil, fmt.Errorf("kernel %s: %w", name, err)
		}
	}
	return l, nil
}

// holds says whether the loader has every kernel of names.
func (l *Loader) holds(names []string) bool {
	for _, n := range names {
		if l.fn[n] == nil {
			return false
		}
	}
	return true
}

// Function returns kernel name, or nil when its user did not name it,
// for launches that Launch does not cover.
func (l *Loader) Function(name string) *cuda.Function { return l.fn[name] }

// Grid returns the number of blocks for kernel name over n items handled
// perBlock to a block, capped at the blocks that fit on the device at
// once (which persistent kernels rely on).
func (l *Loader) Grid(name string, n, perBlock int64) uint32 {
	b := (n + perBlock - 1) / perBlock
	if lim := int64(l.sms * l.occ[name]); b > lim {
		b = lim
	}
	return uint32(max(b, 1))
}

// Launch queues kernel name on s (nil: the loader's stream) with grid
// blocks of BlockSize threads.
func (l *Loader) Launch(s *cuda.Stream, name string, grid uint32, args ...any) error {
	return l.launch(s, name, grid, false, args)
}

func (l *Loader) launch(s *cuda.Stream, name string, grid uint32, overlap bool, args []any) error {
	f := l.fn[name]
	if f == nil {
		return fmt.Errorf("gpu: kernel %s was not loaded", name)
	}
	if s == nil {
		s = l.Stream
	}
	return f.Launch(cuda.Launch{Grid: cuda.Dim3{X: grid}, Block: cuda.Dim3{X: BlockSize}, Stream: s, Overlap: overlap}, args...)
}

// LaunchOverlap is Launch with cuda.Launch.Overlap: the kernel may
// start while the one queued before it on s still runs, so it must not
// depend on what that one writes.
func (l *Loader) LaunchOverlap(s *cuda.Stream, name string, grid uint32, args ...any) error {
	return l.launch(s, name, grid, true, args)
}

// Usable returns the sticky error that made the context unusable, or nil.
func (l *Loader) Usable() error {
	l.bmu.Lock()
	defer l.bmu.Unlock()
	return l.broken
}

// Fail records err when it leaves the context unusable, so that the next
// Open or For starts afresh, and returns err.
func (l *Loader) Fail(err error) error {
	var ce *cuda.Error
	if errors.As(err, &ce) && ce.Code.Sticky() {
		l.bmu.Lock()
		l.broken = err
		l.bmu.Unlock()
	}
	return err
}

// Close frees the stream and the module (and the context, when the
// loader owns it). Loaders from Open and For are shared and are not
// closed by their users.
func (l *Loader) Close() error { return l.release(l.ownsCtx) }

func (l *Loader) release(ctx bool) error {
	err := errors.Join(l.Stream.Close(), l.mod.Close())
	if ctx {
		err = errors.Join(err, l.Ctx.Close())
	}
	return err
}

// Count returns the number of CUDA devices; errors wrap
// cuda.ErrUnavailable.
func Count() (int, error) {
	n, err := cuda.DeviceCount()
	return n, Unavailable(err)
}
