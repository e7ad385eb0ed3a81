// part2w.cu is part.cu for parts of at most two ghost windows each and no
// ghost in the tables: the inner ranges of three or more contiguous
// ranges, a window on each side. Its vhash takes two selects and no table
// check (see part1w.cu).
#define PART_GW 2
#include "part.cu"
