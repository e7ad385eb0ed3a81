// Package mis computes maximal independent sets (MIS) of graphs at distance
// one and two, the coarse-grid selection step of aggregation AMG.
//
// The package keeps policy apart from algorithm. A Priority assigns every
// vertex a distinct 64-bit key: a 32-bit primary rank from the policy
// (boundary class, degree, or user values) above a seeded 32-bit hash of
// the vertex id (Hash32, a bijection, so keys never tie). The algorithm is
// fixed: the result is always the greedy MIS in decreasing key order,
// that is, the set a serial loop builds by taking each vertex, highest key
// first, unless a taken vertex lies within the distance.
//
// That contract lets every backend be checked against one reference:
// Greedy (serial), Parallel (goroutine rounds), the GPU kernels and the
// partitioned drivers all return the identical set for the same graph and
// priority, whatever the thread, device or part count.
//
// Ties are never broken by vertex id alone: on naturally ordered meshes an
// id tie-break makes every vertex wait for its predecessor, and parallel
// rounds degrade into a long chain (the pathology ECL-MIS shows on such
// meshes). The hash spreads equal-rank vertices randomly, so the number of
// rounds stays logarithmic.
//
// Options.Device says where Compute runs: Auto (the zero value) takes a
// GPU for graphs of AutoMinVertices vertices and more when one is usable
// and the CPU otherwise, CPU never touches the GPU, GPU fails with an
// error wrapping ErrNoGPU when it cannot run there. GPU.On(1), or "gpu:1"
// through ParseDevice, names the CUDA device; HierarchyOptions.Device
// does the same for Hierarchy, which then builds every level on the
// device. A graph kept in GPU memory (UploadGraph from a host graph,
// NewDeviceGraph on the caller's device memory) runs there through
// ComputeDevice, ComputeDeviceTo (the set left on the device) and
// HierarchyDevice; several GPUs of one host through ComputeMultiGPU;
// ranks of an MPI job or parts
// in one process through the partitioned drivers (ComputePartitioned,
// RunPart). docs/gpu.md describes the GPU engine.
package mis
