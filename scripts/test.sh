#!/usr/bin/env bash
# test.sh runs misgrid's whole test suite, the README's test command:
#
#   1. libmisgrid, the C ABI, built once (make -C cabi lib: the c-shared
#      and c-archive libraries);
#   2. go test ./...: every Go package, and cabi's TestCABI, which runs the
#      C tests, the Go/ABI comparison, the Fortran test and the C and
#      Fortran examples (built against an installed copy) on that library;
#   3. MPI: the partitioned MIS under mpirun -n 1, 2, 4 and the C and
#      Fortran distributed entry point (scripts/mpi-test.sh; the MPI
#      library shares the compiled packages of step 1 and relinks).
#
# Each step says what it runs and how long it took. A part whose tools are
# missing (gcc, gfortran, mpirun) is skipped with a line saying what to
# install; with MISGRID_TEST_STRICT=1 (CI) a skip is a failure. Extra
# arguments go to go test (e.g. scripts/test.sh -count=1). Valgrind's
# memcheck of the library (make -C cabi check-memory, minutes more) and
# the race detector are CI steps of their own (.ci/run).
#
# Cold (empty Go build cache) on 2 cores it takes about the time README.md
# states; `go test -short ./...`, the Go packages alone without the C ABI
# build, is the quick loop while iterating.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"

strict=${MISGRID_TEST_STRICT:-0}
start=$SECONDS
skipped=()

step() { printf '\n=== [%s] %s\n' "$1" "$2"; t0=$SECONDS; }
done_step() { printf '=== ok (%ds)\n' $((SECONDS - t0)); }
# skip records a part that cannot run here, or fails under strict mode.
skip() {
	if [ "$strict" = 1 ]; then
		echo "FAIL: $1 (MISGRID_TEST_STRICT=1 requires every part)" >&2
		exit 1
	fi
	echo "SKIP: $1"
	skipped+=("$1")
}
have() { command -v "$1" >/dev/null 2>&1; }

cabi=1
for tool in gcc make pkg-config; do
	have "$tool" || { cabi=0; skip "the C ABI: $tool not found (apt-get install gcc make pkg-config)"; break; }
done
if [ "$cabi" = 1 ] && ! have gfortran; then
	skip "the Fortran test and example: gfortran not found (apt-get install gfortran)"
fi

if [ "$cabi" = 1 ]; then
	step 1/3 "building libmisgrid once: make -C cabi lib (c-shared and c-archive)"
	make --no-print-directory -C cabi lib
	done_step
fi

step 2/3 "go test ./... $* (Go packages; TestCABI: C, Go/ABI, Fortran tests and examples on that library)"
go test "$@" ./...
done_step

if [ "$cabi" = 1 ] && have mpirun && pkg-config --exists mpi 2>/dev/null; then
	step 3/3 "MPI: mis/mpi and the C ABI's distributed MIS under mpirun -n 1, 2, 4 (scripts/mpi-test.sh)"
	bash scripts/mpi-test.sh
	done_step
else
	skip "MPI: mpirun or pkg-config's mpi not found (apt-get install libopenmpi-dev openmpi-bin)"
fi

printf '\n=== all tests passed in %ds' $((SECONDS - start))
if [ ${#skipped[@]} -gt 0 ]; then
	printf ', %d part(s) skipped:\n' ${#skipped[@]}
	printf '  %s\n' "${skipped[@]}"
else
	printf '\n'
fi
