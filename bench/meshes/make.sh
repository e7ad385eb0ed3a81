#!/bin/sh
# make.sh remakes part.msh.gz, the tet mesh of bench/amg/part.geo that
# two uniform refinements (misgrid's part.msh.gz:refine=2) take to about
# 3.1M nodes: about 55,000 nodes with Gmsh 4.8.4 (Debian). Gmsh's HXT
# mesher is not bit-reproducible, even on one thread: a rerun gives a
# mesh of about the same size, not the same file.
set -eu
cd "$(dirname "$0")"
gmsh -3 -setnumber h 0.042 -nt 1 part41.geo -o part.msh
gzip -9 -n -f part.msh
