package gpu

import (
	"fmt"

	"github.com/misgrid/misgrid/cuda"
)

// Primary returns device ordinal's primary context as Open's loaders
// share it: retained for the life of the process, with its cache of
// freed memory. It is for users that load images into it themselves
// (New), such as the parts of a multi-GPU run: a context retained and
// released around each run would be destroyed by the driver at its last
// release and created again by the next run, which costs about 150 ms a
// device.
func Primary(ordinal int) (*cuda.Context, error) {
	if err := cuda.Available(); err != nil {
		return nil, err
	}
	if ordinal < 0 {
		return nil, Unavailable(fmt.Errorf("GPU index %d is negative", ordinal))
	}
	mu.Lock()
	defer mu.Unlock()
	ctx, err := primary(ordinal, false)
	if err != nil {
		return nil, Unavailable(fmt.Errorf("GPU %d: %w", ordinal, err))
	}
	return ctx, nil
}
