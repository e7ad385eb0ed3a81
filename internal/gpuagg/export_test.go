package gpuagg

// ModelLevel exposes the kernels' host models to the external tests,
// which compare them with package mis (an internal test cannot import
// mis once mis imports this package).
var ModelLevel = modelLevel

// CSRBounds exposes the model of csr_bounds.
var CSRBounds = csrBounds
