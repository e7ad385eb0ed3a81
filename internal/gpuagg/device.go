package gpuagg

import (
	_ "embed"
	"errors"
	"fmt"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
)

//go:generate bash ../kernels/build.sh . agg.buildinfo

// image holds the kernels of agg.cu: machine code for sm_80 and sm_90 and
// PTX for compute_80 (internal/kernels/build.sh, which builds every image;
// agg.buildinfo records how).
//
//go:embed agg.fatbin
var image []byte

// BuildInfo describes how the embedded kernel image was built.
//
//go:embed agg.buildinfo
var BuildInfo string

var kernelNames = []string{
	"level_init", "scan_top", "rank_reduce", "rank_down", "claim", "conflicts", "assign",
	"agg_reduce32", "agg_down32to32", "agg_down32to64", "agg_reduce64", "agg_down64",
	"members", "coarse_rows", "coarse_block", "coarse_overflow", "compact", "csr_bounds",
}

const (
	threads   = gpu.BlockSize // threads per block of every kernel
	maxBlocks = 1024          // scan grid, and the size of its partial sums
)

// Device is the aggregation kernels loaded into one context, with the
// stream all their work runs on. A Device is used by one goroutine at a
// time.
type Device struct {
	ctx    *cuda.Context
	l      *gpu.Loader // the kernel image, shared by every Device of ctx
	stream *cuda.Stream
	sms    int
	host   *cuda.HostBuffer // meta words read back per level
	own    bool             // the stream was made here
	// checkWords are csr_bounds' two words.
	checkWords *cuda.Buffer
}

// Open loads the kernels into ctx; their work runs on s, or on a stream
// of the Device's own when s is nil. Sharing the stream of the code that
// computes the sets (the MIS engine) orders the two without the host.
func Open(ctx *cuda.Context, s *cuda.Stream) (*Device, error) {
	sms, err := ctx.Device().Attribute(cuda.AttrMultiprocessorCount)
	if err != nil {
		return nil, err
	}
	l, err := gpu.For(ctx, image, kernelNames)
	if err != nil {
		return nil, fmt.Errorf("gpuagg: loading kernels: %w", err)
	}
	d := &Device{ctx: ctx, l: l, sms: sms}
	d.stream, d.own = s, s == nil
	if d.own {
		if d.stream, err = ctx.NewStream(); err != nil {
			d.Close()
			return nil, err
		}
	}
	if d.host, err = ctx.AllocHost(8 * metaWords); err != nil {
		d.Close()
		return nil, err
	}
	if d.checkWords, err = ctx.Alloc(16); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Context returns the device's context.
func (d *Device) Context() *cuda.Context { return d.ctx }

// Stream returns the stream the kernels run on. Results are complete in
// this stream's order: other streams wait for it (an event), the host
// synchronises it.
func (d *Device) Stream() *cuda.Stream { return d.stream }

// Close frees the Device's buffers (and its stream, when it made one);
// the kernel image stays loaded with the context's other users. It is
// idempotent.
func (d *Device) Close() error {
	if d == nil {
		return nil
	}
	var err error
	if d.stream != nil {
		err = d.stream.Synchronize()
	}
	err = errors.Join(err, d.host.Free(), d.checkWords.Free())
	if d.own {
		err = errors.Join(err, d.stream.Close())
	}
	return err
}

// launch queues kernel name on the stream with grid blocks of threads.
func (d *Device) launch(name string, grid int, args ...any) error {
	return d.l.Launch(d.stream, name, uint32(max(grid, 1)), args...)
}

// grid returns the blocks for items work items (threads, or warps times
// 32), capped at a few resident waves; kernels loop over the rest.
func (d *Device) grid(items int64) int {
	return int(min((items+threads-1)/threads, int64(d.sms)*16))
}

// scanBlocks is the scan grid for lengths up to n: a block per 256
// elements, at most maxBlocks.
func scanBlocks(n int64) int { return int(min(maxBlocks, max(1, (n+threads)/threads))) }
