// Package kernels holds the project's CUDA kernels as one embedded
// fatbinary: machine code for sm_80 and sm_90 and PTX (ISA 7.8) for
// compute_80, so it loads on Ampere and newer GPUs with driver 520 or
// later. The sources are the *.cu files beside this file, compiled as one
// unit; `go generate ./cuda` rebuilds kernels.fatbin with build.sh, and
// kernels.buildinfo records the source hash, nvcc version and PTX ISA of
// the committed image.
package kernels

import _ "embed"

// Image is the fatbinary, for cuda.Context.LoadModule.
//
//go:embed kernels.fatbin
var Image []byte

// BuildInfo describes how Image was built (source hash, nvcc, PTX ISA).
//
//go:embed kernels.buildinfo
var BuildInfo string
