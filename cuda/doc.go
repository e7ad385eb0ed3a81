// Package cuda is a small binding to the NVIDIA CUDA driver API: devices,
// the primary context, streams, events, device and pinned host memory,
// modules and kernel launches, with the driver's error name and text in
// every error.
//
// # No toolkit needed
//
// The package declares the few driver types and entry points it uses
// itself (driver.h) and opens libcuda.so.1 with dlopen on first use, never
// at package initialisation. A program that imports it builds anywhere
// cgo does, and runs on machines without a GPU: Available reports why no
// device can be used, and every other call returns that reason as an
// error wrapping ErrUnavailable. Built without cgo, Available says so.
//
// # Threads
//
// The driver keeps a current context per OS thread, and goroutines move
// between threads, so a context made current in one call may be gone in
// the next (CUDA_ERROR_INVALID_CONTEXT at random). Here every driver call
// is one cgo call that makes the context current on its own thread, does
// the work, and restores whatever was current before. A Context can thus
// be used from any goroutine, and code on the same thread that keeps its
// own current context (the CUDA runtime, other bindings) is not disturbed.
//
// # Memory from elsewhere
//
// WrapContext adopts a context created by other code, and
// Context.WrapDevicePtr adopts device memory it allocated: the pointer is
// checked with the driver (it must lie in an allocation of that context,
// with the requested length inside it) and is never freed here.
//
// # Lifetimes and errors
//
// Free and Close release resources explicitly and may be called more than
// once; a cleanup attached with runtime.AddCleanup frees what a program
// forgets, as a safety net only. Errors are *Error values carrying the
// driver's CUresult (matchable with errors.Is against Result constants
// such as ErrorOutOfMemory) and what the call was doing, e.g. how much
// memory an allocation asked for and how much was free. A kernel fault
// (illegal address, trap) is sticky: every later call in that context
// fails, and with current drivers the whole process cannot use the GPU
// again (Result.Sticky tells which codes do that). Callers such as package
// mis then fall back to the CPU.
//
// # Kernels and drivers
//
// This package holds no kernels of its own: the project's live with the
// code that launches them (internal/kernels, loaded through the device
// layer internal/gpu), as embedded fatbinaries with machine code for
// sm_80 and sm_90 and PTX ISA 7.8 for compute_80, built with CUDA 11.8.
// They load with NVIDIA drivers 520 and newer (CUDA 11.8).
package cuda
