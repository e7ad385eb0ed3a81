#!/bin/sh
# Compare misgrid's AMG with PETSc GAMG and hypre BoomerAMG on hex and
# unstructured (Gmsh) Poisson, coefficient-jump and elasticity problems,
# one thread each, time and memory. A manual benchmark, not part of CI; it
# writes only to a temporary directory. Arguments go to run.py, for example:
#
#   bench/amg/run.sh                 # every problem class, ~10k to ~400k dofs
#   bench/amg/run.sh --smoke         # tiny sizes, a quick check
#   bench/amg/run.sh --problems tet-poisson:0.05 --solvers gamg,misgrid --repeat 3
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

# Debian's petsc4py and scipy, for the system python3.
if ! PETSC_DIR=${PETSC_DIR:-} /usr/bin/python3 -c 'import scipy' 2>/dev/null ||
	! ls -d /usr/lib/petscdir/*/*-real >/dev/null 2>&1 || ! command -v gmsh >/dev/null; then
	if [ "$(id -u)" = 0 ]; then
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-petsc4py-real python3-scipy gmsh >/dev/null
	else
		echo "run.sh: install python3-petsc4py-real, python3-scipy and gmsh (apt-get) first" >&2
		exit 1
	fi
fi
# petsc4py is found through PETSC_DIR; Debian sets /usr/lib/petsc only when
# the development package is installed, so point at the real build.
if ! /usr/bin/python3 -c 'import petsc4py' 2>/dev/null; then
	for d in /usr/lib/petscdir/*/*-real; do
		PETSC_DIR=$d
	done
	export PETSC_DIR
fi

bin=$(mktemp -d)/misgrid-driver
(cd "$root" && go build -o "$bin" ./bench/amg/driver)
export OMP_NUM_THREADS=1 GOMAXPROCS=1
exec /usr/bin/python3 "$here/run.py" --misgrid "$bin" "$@"
