// part3w.cu is part.cu for parts of at most three ghost windows each and
// no ghost in the tables: four ranges of a random graph, each with a
// window on every other. Its vhash takes three selects and no table
// check (see part1w.cu), and its MIS-1 keeps the keyed reads (KF_SCAN)
// that part.cu's image compiles out.
#define PART_GW 3
#include "part.cu"
