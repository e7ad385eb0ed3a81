#!/usr/bin/env bash
# ci-clients.sh - libmisgrid's clients in CI: the PETSc plugin (PCMISGRID)
# and its tests, the C PETSc program that runs GAMG, hypre and misgrid in
# one run (small sizes), the DOLFINx elasticity example on a small Gmsh
# mesh, and the Python module's tests. Run from anywhere; installs what it
# needs with apt-get (Debian 12: PETSc 3.18, DOLFINx 0.5).
#
# Everything runs against an installed copy of libmisgrid (make -C cabi
# install into a scratch prefix, found through pkg-config), as a user's
# build would. Each step prints its time; the whole takes under 2 minutes
# after the packages are installed on 2 cores (docs/petsc.md).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
export PATH="/usr/local/go/bin:$PATH"
export GOMAXPROCS="${GOMAXPROCS:-$(nproc)}"
# Debian's python3 has the packages (numpy, scipy, petsc4py, dolfinx);
# a python3 earlier on PATH (pyenv) does not.
PY=/usr/bin/python3

step() { printf '\n=== %s\n' "$*"; SECONDS_AT=$SECONDS; }
done_step() { printf '=== %s: %d s\n' "$1" $((SECONDS - SECONDS_AT)); }

apt_install() {
	local missing=() p
	for p in "$@"; do
		dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	local sudo=""
	[ "$(id -u)" -ne 0 ] && sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
}

step "install packages"
apt_install gcc make pkg-config petsc-dev python3-petsc4py-real python3-dolfinx gmsh python3-scipy python3-pytest
done_step "install packages"

START=$SECONDS
PREFIX=$(mktemp -d)
# The plugin built here points at the scratch prefix: it goes with it.
trap 'rm -rf "$PREFIX"; make -s -C petsc clean' EXIT

step "libmisgrid, installed into a scratch prefix"
make -s -C cabi lib
make -s -C cabi install PREFIX="$PREFIX" >/dev/null
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
pkg-config --modversion misgrid
done_step "libmisgrid"

step "PETSc plugin: build and tests"
make -s -C petsc clean
make -s -C petsc all build/test_pcmisgrid build/solvers
make -s -C petsc test
done_step "PETSc plugin"

step "DOLFINx: elasticity of the bracket (small mesh)"
# petsc4py initialises MPI; under a root CI user Open MPI wants these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
$PY examples/dolfinx/elasticity.py --size 0.25 --plugin "$ROOT/petsc/build/libmisgrid-petsc.so" 2> >(grep -v '^INFO:root:' >&2)
done_step "DOLFINx"

step "Python module tests"
(cd python && $PY -m pytest -q -p no:cacheprovider tests)
done_step "Python"

printf '\n=== clients: %d s after the package install\n' $((SECONDS - START))
