#!/usr/bin/env bash
# mpi-test.sh builds the MPI backend of the partitioned MIS (package
# mis/mpi, build tag mpi) and runs its tests under mpirun with 1, 2 and 4
# ranks. On every rank the tests check that the rank's rows of the set
# are those of the serial greedy set (generated hex meshes and random
# graphs, distance 1 and 2, contiguous and scattered partitions), that
# ADMMA's set verifies, and that injected faults (bad input on one rank,
# an error mid-run, a hung rank) give an error on every rank in bounded
# time with nothing left allocated.
#
# Run from anywhere; installs Open MPI from Debian when it is missing.
# Takes well under a minute on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"

if ! command -v mpirun >/dev/null || ! pkg-config --exists mpi 2>/dev/null; then
	sudo=""
	[ "$(id -u)" -ne 0 ] && sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libopenmpi-dev openmpi-bin pkg-config >/dev/null
fi

# Root needs Open MPI's consent; containers often forbid the cross-memory
# attach of the shared-memory transport, so copy through a buffer instead.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export CGO_ENABLED=1

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "=== go vet -tags mpi ./mis/mpi/"
go vet -tags mpi ./mis/mpi/
echo "=== go test -c -tags mpi ./mis/mpi"
go test -c -tags mpi -o "$tmp/mpi.test" ./mis/mpi

passed=0
failed=0
for n in 1 2 4; do
	echo "=== mpirun -n $n mis/mpi tests"
	log="$tmp/run-$n.log"
	start=$SECONDS
	if timeout 150 mpirun -n "$n" --oversubscribe "$tmp/mpi.test" -test.count=1 -test.timeout=120s >"$log" 2>&1 &&
		[ "$(grep -c '^PASS$' "$log")" -eq "$n" ]; then
		passed=$((passed + 1))
		echo "ok: $n ranks, $((SECONDS - start))s"
	else
		failed=$((failed + 1))
		echo "FAILED: $n ranks" >&2
		cat "$log" >&2
	fi
done
# The C ABI's misgrid_mis_distributed and the Fortran module's wrapper,
# built into cabi/build/mpi (the default MPI-free build is untouched).
echo "=== make -C cabi mpi-test"
start=$SECONDS
if make --no-print-directory -C cabi mpi-test; then
	passed=$((passed + 1))
	echo "ok: cabi mpi-test, $((SECONDS - start))s"
else
	failed=$((failed + 1))
	echo "FAILED: cabi mpi-test" >&2
fi
echo "mpi-test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
