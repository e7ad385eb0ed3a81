package cuda

// The kernels in kernels/mis.cu are compiled ahead of time, so that
// building this module needs no CUDA toolkit. Regenerate after editing
// them (needs nvcc from CUDA 11.8 to 12.2; see kernels/build.sh):
//
//go:generate bash kernels/build.sh
