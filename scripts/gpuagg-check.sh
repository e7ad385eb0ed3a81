#!/usr/bin/env bash
# gpuagg-check.sh runs the device side of internal/gpuagg and of the
# cuda Stager on a machine with an NVIDIA GPU and no Go toolchain. The
# test binaries are built beforehand where Go is and copied along:
#
#   go test -c -o BIN/gpuagg.test ./internal/gpuagg
#   go test -c -o BIN/cuda.test ./cuda
#   scripts/gpuagg-check.sh BIN [stage...]
#
# Stages (default: info tests sanitize bench): info (GPU, driver), tests
# (GPU tests, verbose), sanitize (compute-sanitizer memcheck and racecheck
# on the aggregation tests), bench (BenchmarkCoarsen, BenchmarkHierarchy,
# BenchmarkUpload on hex27 HEX³, default 160). Logs go to $OUT.
set -uo pipefail
RUN_TAIL=25
source "$(dirname "$0")/lib.sh"
check_args gpuagg-check "info tests sanitize bench" "$@"

for stage in "${stages[@]}"; do
	case $stage in
	info)
		run info 60 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
		run info 30 bash -c 'compute-sanitizer --version | head -2; nproc'
		;;
	tests)
		run tests 240 "$bin/gpuagg.test" -test.v -test.count=1 -test.run 'Coarsen|Hierarchy|Check'
		run tests 60 "$bin/cuda.test" -test.v -test.count=1 -test.run 'Stage|ParallelCopy'
		;;
	sanitize)
		for tool in memcheck racecheck; do
			run sanitize 200 compute-sanitizer --tool "$tool" --error-exitcode 3 \
				"$bin/gpuagg.test" -test.short -test.count=1 -test.run 'TestCoarsenMatchesHost|TestCoarsenErrorsMatchHost|TestCheckNamesBadRow'
		done
		;;
	bench)
		run bench 400 env HEX="${HEX:-160}" "$bin/gpuagg.test" -test.run '^$' -test.bench . -test.benchtime 3x -test.v
		;;
	*)
		echo "gpuagg-check.sh: unknown stage $stage" >&2
		exit 2
		;;
	esac
done
exit $status
