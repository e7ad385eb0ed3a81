// part1w.cu is part.cu for parts of at most one ghost window each and no
// ghost in the tables (two parts of contiguous ranges, a slab of a mesh
// or a random graph): its vhash finds a global id with one select, where
// part.cu's takes one per window and a table check on every neighbour a
// sweep keys, which made a part's launches a tenth slower at distance 2
// (misgpu.NewParts picks the image, BenchmarkPartsVsAlone measures).
#define PART_GW 1
#include "part.cu"
