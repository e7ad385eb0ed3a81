package cuda

// The binding's own tests launch two small kernels (testdata/test.cu),
// compiled ahead of time so that testing needs no CUDA toolkit. The
// project's kernels live with the code that launches them
// (internal/kernels). Regenerate after editing (nvcc from CUDA 11.8 to
// 12.2):
//
//go:generate bash ../internal/kernels/build.sh testdata
