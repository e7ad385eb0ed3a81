#!/usr/bin/env bash
# upload-check.sh runs, on a machine with an NVIDIA GPU, nvcc and libcudart
# but no Go toolchain, the device side of the host-graph upload, of the
# GPU hierarchy and of the C ABI's device-pointer entries. Everything Go
# is built beforehand where Go is and copied along in BIN:
#
#   go test -c -o BIN/mis.test ./mis
#   go test -c -o BIN/misgpu.test ./internal/misgpu
#   make -C cabi lib && cp cabi/build/libmisgrid.so.0 BIN/
#   cp -r cabi/include cabi/tests/check.h cabi/tests/test_device.c cabi/tests/test_device_solver.c BIN/
#   scripts/upload-check.sh BIN [stage...]
#
# Stages (default: cabi tests bench sanitize): cabi (compile
# test_device.c and test_device_solver.c with nvcc against the library
# and the CUDA runtime, run them), tests (the GPU tests of the staged upload, the classes by degree,
# Compute, the device hierarchy and ComputeDeviceTo), bench
# (BenchmarkGPUComputeFromHost and BenchmarkGPUHierarchy on hex27 HEX³,
# default 160), sanitize (compute-sanitizer memcheck and racecheck on the
# staged upload's check and the classes by degree). Logs go to $OUT.
set -uo pipefail
RUN_TAIL=30
source "$(dirname "$0")/lib.sh"
check_args upload-check "cabi tests bench sanitize" "$@"

for stage in "${stages[@]}"; do
	case $stage in
	cabi)
		ln -sf libmisgrid.so.0 "$bin/libmisgrid.so"
		run cabi 120 nvcc -O2 -x c -I"$bin/include" -I"$bin" -o "$bin/test_device" "$bin/test_device.c" \
			-L"$bin" -lmisgrid -Xlinker -rpath,"$bin"
		run cabi 120 "$bin/test_device"
		run cabi 120 nvcc -O2 -x c -I"$bin/include" -I"$bin" -o "$bin/test_device_solver" "$bin/test_device_solver.c" \
			-L"$bin" -lmisgrid -lm -Xlinker -rpath,"$bin"
		run cabi 120 "$bin/test_device_solver"
		;;
	tests)
		run tests 60 "$bin/misgpu.test" -test.run 'Upload|DegreeClass|ClassifyByDegree' -test.v
		run tests 150 "$bin/mis.test" -test.v -test.run \
			'^(TestGPUMatchesGreedy|TestComputeDeviceWrapped|TestNewDeviceGraphRejectsBadGraphs|TestGPUTooLarge|TestGPUDeviceIndex|TestGPUContract|TestGPUHierarchyMatchesCPU|TestGPUHierarchyDevice|TestGPUComputeDeviceTo)$'
		;;
	sanitize)
		for tool in memcheck racecheck; do
			run sanitize 60 compute-sanitizer --tool $tool --error-exitcode 1 "$bin/misgpu.test" -test.run 'TestGPUClassifyByDegree$'
		done
		;;
	bench)
		run bench 150 "$bin/mis.test" -test.run '^$' -test.bench 'GPUComputeFromHost|GPUHierarchy' -test.benchtime 5x -test.v
		;;
	*)
		echo "upload-check.sh: unknown stage $stage" >&2
		exit 2
		;;
	esac
done
exit $status
