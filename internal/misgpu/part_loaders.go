package misgpu

import (
	"sync"
	"sync/atomic"

	"github.com/misgrid/misgrid/cuda"
	"github.com/misgrid/misgrid/internal/gpu"
	"github.com/misgrid/misgrid/internal/kernels"
)

// A part runs in its device's primary context as the device layer shares
// it (gpu.Primary), never one it retains and releases itself: the driver
// destroys a primary context at its last release, and the next run would
// create it again (about 150 ms a device, more than a run on a test graph
// takes). Each part needs a loader of its own (its stream and its lock);
// the loaders of closed parts wait here for the next Parts, so that a run
// does not load the image again either.
var partLoaders struct {
	sync.Mutex
	idle map[loaderKey][]*gpu.Loader
}

// loaderKey names a context and the image its loaders hold (windows:
// imageWindows).
type loaderKey struct {
	ctx     *cuda.Context
	windows int
}

// maxIdleLoaders bounds the loaders kept per context: as many parts as
// the tests put on one device, each with its image and a stream.
const maxIdleLoaders = 8

var loadersMade atomic.Int64

// LoadersMade returns the part loaders the process has created, each a
// load of the image: a run on devices that ran parts before makes none.
func LoadersMade() int64 { return loadersMade.Load() }

// partLoader returns an idle loader of device's shared primary context
// with the image of windows (imageWindows), or a new one.
func partLoader(device, windows int) (*gpu.Loader, error) {
	ctx, err := gpu.Primary(device)
	if err != nil {
		return nil, err
	}
	key := loaderKey{ctx, windows}
	partLoaders.Lock()
	for list := partLoaders.idle[key]; len(list) > 0; list = partLoaders.idle[key] {
		l := list[len(list)-1]
		partLoaders.idle[key] = list[:len(list)-1]
		if l.Usable() == nil {
			partLoaders.Unlock()
			return l, nil
		}
		l.Close()
	}
	partLoaders.Unlock()
	_, img := partImage(windows)
	l, err := gpu.New(ctx, false, img, partKernels())
	if err == nil {
		loadersMade.Add(1)
	}
	return l, err
}

// partImage is the image of imageWindows' windows, and its source's
// name for reports.
func partImage(windows int) (string, []byte) {
	switch windows {
	case 1:
		return "part1w.cu", kernels.PartOneWindow
	case 2:
		return "part2w.cu", kernels.PartTwoWindows
	case 3:
		return "part3w.cu", kernels.PartThreeWindows
	}
	return "part.cu", kernels.Part
}

// putLoader keeps a closed part's loader for the next Parts, once its
// stream is done; an unusable one, or one past the bound, is closed.
func putLoader(l *gpu.Loader, windows int) error {
	if err := l.Stream.Synchronize(); err != nil || l.Usable() != nil {
		return l.Close()
	}
	partLoaders.Lock()
	defer partLoaders.Unlock()
	if partLoaders.idle == nil {
		partLoaders.idle = map[loaderKey][]*gpu.Loader{}
	}
	key := loaderKey{l.Ctx, windows}
	if len(partLoaders.idle[key]) >= maxIdleLoaders {
		return l.Close()
	}
	partLoaders.idle[key] = append(partLoaders.idle[key], l)
	return nil
}
