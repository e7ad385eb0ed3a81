package cuda

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
)

// Module is loaded device code: a fatbinary, cubin or PTX image.
type Module struct {
	ctx     *Context
	h       modHandle
	cleanup runtime.Cleanup

	mu     sync.Mutex
	closed bool
}

// LoadModule loads an image (fatbinary, cubin or NUL-terminated PTX) into
// the context. When the driver cannot use it (PTX newer than the driver,
// no code for this GPU), the error says so and carries the JIT log.
func (c *Context) LoadModule(image []byte) (*Module, error) {
	h, err := c.handle("cuModuleLoadData")
	if err != nil {
		return nil, err
	}
	if len(image) == 0 {
		return nil, &Error{Op: "cuModuleLoadData", Code: ErrorInvalidImage, Detail: "empty image"}
	}
	m, log, r := drvModuleLoad(h, image)
	if r != Success {
		detail := fmt.Sprintf("%d-byte image", len(image))
		if log = strings.TrimSpace(log); log != "" {
			detail += "; JIT log: " + log
		}
		if r == ErrorUnsupportedPTX || r == ErrorNoBinaryForGPU {
			if v, r2 := drvDriverVersion(); r2 == Success {
				detail += fmt.Sprintf("; driver supports CUDA %d.%d", v/1000, v%1000/10)
			}
		}
		return nil, &Error{Op: "cuModuleLoadData", Code: r, Detail: detail}
	}
	mod := &Module{ctx: c, h: m}
	mod.cleanup = runtime.AddCleanup(mod, func(a moduleRef) {
		if h, err := a.ctx.handle(""); err == nil {
			drvModuleUnload(h, a.h)
		}
	}, moduleRef{c, m})
	return mod, nil
}

type moduleRef struct {
	ctx *Context
	h   modHandle
}

// Function looks up a kernel by its (extern "C") name.
func (m *Module) Function(name string) (*Function, error) {
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return nil, &Error{Op: "cuModuleGetFunction", Code: resultClosed, Detail: "module was unloaded"}
	}
	h, err := m.ctx.handle("cuModuleGetFunction")
	if err != nil {
		return nil, err
	}
	f, r := drvModuleFunction(h, m.h, name)
	if r != Success {
		return nil, checkf("cuModuleGetFunction", r, "kernel %q", name)
	}
	return &Function{mod: m, h: f, name: name}, nil
}

// Close unloads the module; it is idempotent.
func (m *Module) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	m.cleanup.Stop()
	if m.ctx.Closed() {
		return nil
	}
	return check("cuModuleUnload", drvModuleUnload(m.ctx.h, m.h))
}

// Function is a kernel in a loaded module.
type Function struct {
	mod  *Module
	h    fnHandle
	name string
}

// Name returns the kernel's name.
func (f *Function) Name() string { return f.name }

// FuncAttribute selects a kernel property (CUfunction_attribute).
type FuncAttribute int

// Kernel attributes.
const (
	FuncMaxThreadsPerBlock FuncAttribute = 0
	FuncSharedSizeBytes    FuncAttribute = 1
	FuncLocalSizeBytes     FuncAttribute = 3
	FuncNumRegs            FuncAttribute = 4
	FuncPTXVersion         FuncAttribute = 5
	FuncBinaryVersion      FuncAttribute = 6
)

// Attribute returns a kernel property.
func (f *Function) Attribute(a FuncAttribute) (int, error) {
	h, err := f.mod.ctx.handle("cuFuncGetAttribute")
	if err != nil {
		return 0, err
	}
	v, r := drvFuncAttribute(h, a, f.h)
	return v, checkf("cuFuncGetAttribute", r, "attribute %d of %s", int(a), f.name)
}

// MaxActiveBlocksPerSM returns how many blocks of the given size can be
// resident on one multiprocessor at once.
func (f *Function) MaxActiveBlocksPerSM(block, sharedMem int) (int, error) {
	h, err := f.mod.ctx.handle("cuOccupancyMaxActiveBlocksPerMultiprocessor")
	if err != nil {
		return 0, err
	}
	n, r := drvOccupancy(h, f.h, block, sharedMem)
	return n, checkf("cuOccupancyMaxActiveBlocksPerMultiprocessor", r, "%s with %d threads", f.name, block)
}

// Dim3 is a grid or block shape. Zero components count as 1.
type Dim3 struct{ X, Y, Z uint32 }

func (d Dim3) norm() Dim3 {
	if d.X == 0 {
		d.X = 1
	}
	if d.Y == 0 {
		d.Y = 1
	}
	if d.Z == 0 {
		d.Z = 1
	}
	return d
}

// Launch describes how to start a kernel.
type Launch struct {
	Grid, Block Dim3
	SharedMem   int     // dynamic shared memory in bytes
	Stream      *Stream // nil: the default stream
	// Cooperative guarantees that all blocks are resident at once (or
	// fails), for kernels whose blocks wait on each other.
	Cooperative bool
	// Overlap lets the kernel start before the one queued before it on
	// the stream has finished: once every block of that one has started
	// and executed griddepcontrol.launch_dependents, or exited
	// (programmatic stream serialization, compute capability 9.0 and
	// later). The kernel then must not depend on what the one before it
	// writes. Work queued after the kernel still waits for both. With a
	// driver older than CUDA 12.0 the launch is a plain one.
	Overlap bool
}

// Launch queues the kernel with the given arguments. Each argument must
// have the exact type of the kernel parameter: int32, uint32, int64,
// uint64, float32, float64, uintptr, or *Buffer (its device address). A
// Go int is refused because its width is ambiguous.
func (f *Function) Launch(cfg Launch, args ...any) error {
	h, err := f.mod.ctx.handle("cuLaunchKernel")
	if err != nil {
		return err
	}
	vals := make([]uint64, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case int32:
			vals[i] = uint64(uint32(v))
		case uint32:
			vals[i] = uint64(v)
		case int64:
			vals[i] = uint64(v)
		case uint64:
			vals[i] = v
		case float32:
			vals[i] = uint64(math.Float32bits(v))
		case float64:
			vals[i] = math.Float64bits(v)
		case uintptr:
			vals[i] = uint64(v)
		case *Buffer:
			if v == nil {
				vals[i] = 0
				continue
			}
			if _, err := v.live("cuLaunchKernel"); err != nil {
				return fmt.Errorf("cuda: launching %s: argument %d: %w", f.name, i, err)
			}
			vals[i] = v.ptr
		default:
			return &Error{Op: "cuLaunchKernel", Code: ErrorInvalidValue,
				Detail: fmt.Sprintf("kernel %s argument %d has unsupported type %T (use int32, uint32, int64, uint64, float32, float64, uintptr or *cuda.Buffer)", f.name, i, a)}
		}
	}
	g, b := cfg.Grid.norm(), cfg.Block.norm()
	op := "cuLaunchKernel"
	if cfg.Cooperative {
		op = "cuLaunchCooperativeKernel"
	}
	if cfg.Overlap && !cfg.Cooperative {
		op = "cuLaunchKernelEx"
	}
	r := drvLaunch(h, f.h, g, b, cfg.SharedMem, cfg.Stream.handle(), vals, cfg.Cooperative, cfg.Overlap)
	return checkf(op, r, "kernel %s, grid %dx%dx%d, block %dx%dx%d, %d B shared", f.name, g.X, g.Y, g.Z, b.X, b.Y, b.Z, cfg.SharedMem)
}
