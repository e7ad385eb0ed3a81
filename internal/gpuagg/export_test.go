package gpuagg

import "time"

// ModelLevel exposes the kernels' host models to the external tests,
// which compare them with package mis (an internal test cannot import
// mis once mis imports this package).
var ModelLevel = modelLevel

// CSRBounds exposes the model of csr_bounds.
var CSRBounds = csrBounds

// StepTimes makes c sum each kernel's device time into the map it returns.
func StepTimes(c *Coarsener) map[string]time.Duration {
	c.times = map[string]time.Duration{}
	return c.times
}
