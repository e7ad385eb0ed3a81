#!/usr/bin/env bash
# Multi-GPU partitioned MIS on a host of several GPUs (or any
# GPU host: with one GPU the tests run several parts on it).
# Build here first (the test binary and the command, carried in bin/part):
#   go test -c -o bin/part/mis.test ./mis && go build -o bin/part/misgrid ./cmd/misgrid
# Usage: scripts/gpu2-check.sh [test|bench|all] [bench args...]
set -uo pipefail
what=${1:-all}
shift || true
out=${OUT:-/tmp}
rc=0
nvidia-smi -L
nvidia-smi topo -m 2>/dev/null | head -8
if [[ $what == test || $what == all ]]; then
	bin/part/mis.test -test.count=1 -test.v -test.run 'MultiGPU|LayoutParts|EmulatedMultiGPU' 2>&1 |
		grep -v '^=== RUN' | tee "$out/gpu2-test.log" | tail -30
	[[ ${PIPESTATUS[0]} == 0 ]] || rc=1
fi
if [[ $what == bench || $what == all ]]; then
	args=("$@")
	[[ ${#args[@]} -gt 0 ]] || args=(-gpus 1,2)
	bin/part/misgrid bench "${args[@]}" -json >"$out/gpu2-bench.json" || rc=1
	python3 - "$out/gpu2-bench.json" <<'PY'
import json, sys
rs = json.load(open(sys.argv[1]))
print("| graph | dist | GPUs | ms | 1-GPU floor ms | 1-GPU MIS ms | speedup | rounds | bytes/round | bytes/run | identical | links |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rs:
    print(f"| {r['graph']} | {r['distance']} | {r['gpus']} | {r['ms']:.3f} | {r['floor_ms']:.3f} | {r['single_gpu_mis_ms']:.3f} | {r['speedup']:.2f} | {r['rounds']} | {r['bytes_per_round']:,} | {r.get('bytes_per_run', 0):,} | {r['identical_to_greedy']} | {'; '.join(r['links'] or [])} |")
PY
fi
exit $rc
