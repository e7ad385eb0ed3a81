#!/usr/bin/env bash
# table.sh - the comparison table of docs/petsc.md in one run: the C PETSc
# program (3D Poisson, 3D elasticity) and the DOLFINx bracket, each with
# GAMG, hypre BoomerAMG and misgrid. Builds what it needs first.
#   examples/petsc/table.sh [poisson n] [elasticity ne] [dolfinx element size]
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-48} ne=${2:-20} size=${3:-0.05}
make -s -C cabi lib
make -s -C petsc all build/solvers
plugin=$(pwd)/petsc/build/libmisgrid-petsc.so
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), load average $(cut -d' ' -f1-3 /proc/loadavg)"
petsc/build/solvers -dll_append "$plugin" -n "$n" -ne "$ne" -repeat 3
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
/usr/bin/python3 examples/dolfinx/elasticity.py --size "$size" --plugin "$plugin" --markdown --repeat 3 2> >(grep -v '^INFO:root:' >&2)
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
