#!/usr/bin/env bash
# amg-gpu-check.sh runs the GPU side of package amg on a machine with an
# NVIDIA GPU and no Go toolchain. Build beforehand, where Go is:
#
#   go test -c -o bin/amg/amg.test ./amg
#   go build -o bin/amg/misgrid ./cmd/misgrid
#   scripts/amg-gpu-check.sh
#
# It runs the GPU tests (GPU against CPU solves, determinism, symmetry,
# Update), then BenchmarkGPUSolve (setup, upload, solve time and PCG
# iterations on the CPU and the GPU for Q1 Poisson 63³ unknowns,
# elasticity 32³ elements and, unless SHORT=1, Poisson 100³) and
# BenchmarkGPUMulVec (the fine-level product against its bandwidth
# floor), and `misgrid solve -device gpu` on a small matrix to check
# the command-line path. Logs go to $OUT (default /tmp/amg-gpu-check-out).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-${TMPDIR:-/tmp}/amg-gpu-check-out}
mkdir -p "$OUT"
status=0
short=()
[[ ${SHORT:-0} == 1 ]] && short=(-test.short)

step() { # step NAME TIMEOUT CMD...
	local name=$1 limit=$2
	shift 2
	echo "=== $name: $*" | tee -a "$OUT/$name.txt"
	timeout "$limit" "$@" 2>&1 | tee -a "$OUT/$name.txt"
	local rc=${PIPESTATUS[0]}
	echo "=== $name: exit $rc" | tee -a "$OUT/$name.txt"
	[[ $rc -ne 0 ]] && status=1
	return 0
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$OUT/info.txt"
echo "CPUs: $(nproc)" | tee -a "$OUT/info.txt"
step tests 60 bin/amg/amg.test -test.run 'GPU|ExampleOptions_device' -test.v -test.count=1
step bench 200 bin/amg/amg.test -test.run '^$' -test.bench GPU -test.benchtime 3x "${short[@]}"
if [[ -x bin/amg/misgrid ]]; then
	for dev in cpu gpu; do
		step cli 30 bin/amg/misgrid solve -device $dev -max_coarse 2 cmd/misgrid/testdata/lap3x3.mtx
	done
fi
exit $status
