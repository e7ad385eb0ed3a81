#!/bin/sh
# Compare misgrid's AMG with PETSc GAMG, hypre BoomerAMG and Jacobi-PCG on
# Q1 hex Poisson and elasticity, one thread each. A manual benchmark, not
# part of CI. Arguments go to run.py, for example:
#
#   bench/amg/run.sh                 # Poisson 64³, elasticity 32³
#   bench/amg/run.sh --smoke         # tiny sizes, a quick check
#   bench/amg/run.sh --poisson 32 --elasticity 0 --solvers gamg,misgrid
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

# Debian's petsc4py and scipy, for the system python3.
if ! PETSC_DIR=${PETSC_DIR:-} /usr/bin/python3 -c 'import scipy' 2>/dev/null ||
	! ls -d /usr/lib/petscdir/*/*-real >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ]; then
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-petsc4py-real python3-scipy >/dev/null
	else
		echo "run.sh: install python3-petsc4py-real and python3-scipy (apt-get) first" >&2
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

bin=$(mktemp -d)/misgrid
(cd "$root" && go build -o "$bin" ./cmd/misgrid)
export OMP_NUM_THREADS=1 GOMAXPROCS=1
exec /usr/bin/python3 "$here/run.py" --misgrid "$bin" "$@"
