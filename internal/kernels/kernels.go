// Package kernels holds the project's CUDA kernels as embedded
// fatbinaries, one per source file: machine code for sm_80 and sm_90
// and PTX (ISA 7.8) for compute_80, so they load on Ampere and newer
// GPUs with driver 520 or later. The sources are the *.cu and *.cuh files
// beside this file; `go generate ./internal/kernels` rebuilds the images
// with build.sh, and kernels.buildinfo records the source hash, nvcc
// version and PTX ISA of the committed ones.
//
// The images hold code only: each package that launches kernels names
// the ones it uses (the single-GPU MIS engine, the multi-GPU driver of
// package mis, the AMG setup and solve phases) and loads its image through the
// device layer.
package kernels

import _ "embed"

//go:generate bash build.sh

// MIS is the single-GPU MIS engine's image (mis.cu and its headers).
//
//go:embed mis.fatbin
var MIS []byte

// Part is the image of the partitioned multi-GPU MIS (part.cu).
//
//go:embed part.fatbin
var Part []byte

// PartOneWindow, PartTwoWindows and PartThreeWindows are part.cu built
// for parts of at most one (part1w.cu), two (part2w.cu) or three
// (part3w.cu) ghost windows and no ghost in the tables.
//
//go:embed part1w.fatbin
var PartOneWindow []byte

//go:embed part2w.fatbin
var PartTwoWindows []byte

//go:embed part3w.fatbin
var PartThreeWindows []byte

// AMG is the image of the AMG solve phase (amg.cu).
//
//go:embed amg.fatbin
var AMG []byte

// Setup is the image of the AMG setup on the device (setup.cu).
//
//go:embed setup.fatbin
var Setup []byte

// Input is the image of the AMG setup's input checks on the device
// (input.cu).
//
//go:embed input.fatbin
var Input []byte

// Sparse is the image of the sparse products of internal/gpusparse
// (sparse.cu).
//
//go:embed sparse.fatbin
var Sparse []byte

// BuildInfo describes how the images were built (source hash, nvcc, PTX
// ISA).
//
//go:embed kernels.buildinfo
var BuildInfo string
