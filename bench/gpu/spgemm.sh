#!/usr/bin/env bash
# Times internal/gpusparse's SpGEMM, transpose and Galerkin product
# against cuSPARSE on one GPU, in one run, each beside a floor (bytes
# moved at the device copy bandwidth measured in the same run): Q1
# Poisson on a 101³ node grid (1M rows) with its smoothed-aggregation
# prolongator (3×3×3 aggregates), and a 3-dof elasticity-like block
# version on 70³ nodes, and the coarse levels of both. Also runs
# gpusparse's GPU tests first.
#
# Usage: spgemm.sh [DIR]
#   DIR holds gpusparse.test (go test -c -o DIR/gpusparse.test
#   ./internal/gpusparse) and spgemm_cusparse.cu (default: this script's
#   directory). Needs nvcc and cuSPARSE. Results go to stdout and, when
#   OUT names a directory, to $OUT/spgemm.txt. SPGEMM_N and SPGEMM_EN set
#   the grids, SPGEMM_LEVELS the levels of each hierarchy (see
#   TestGPUBench).
set -euo pipefail
dir=$(cd "${1:-$(dirname "$0")}" && pwd)
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
log=${OUT:+$OUT/spgemm.txt}
log=${log:-/dev/null}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$log"
nvcc --version | tail -1 | tee -a "$log"
nvcc -O3 -o "$data/spgemm_cusparse" "$dir/spgemm_cusparse.cu" -lcusparse > "$data/nvcc.log" 2>&1 &
cc=$!
"$dir/gpusparse.test" -test.run 'TestGPU(Corpus|Errors)' -test.v 2>&1 | grep -E '^(---|ok|FAIL|PASS)|gpu_test' | tee -a "$log" || true
SPGEMM_BENCH=$data "$dir/gpusparse.test" -test.run 'TestGPUBench' -test.v -test.timeout 10m 2>&1 | sed 's/^ *bench_gpu_test.go:[0-9]*: //' | tee -a "$log" || true
if ! wait "$cc"; then
	cat "$data/nvcc.log" | tee -a "$log"
	exit 1
fi
for f in "$data"/*.A.bin; do
	[[ -f $f ]] && "$data/spgemm_cusparse" "${f%.A.bin}" 2>&1 | tee -a "$log" || true
done
