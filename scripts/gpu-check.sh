#!/usr/bin/env bash
# gpu-check.sh runs everything the GPU side needs on a machine with an
# NVIDIA GPU and no Go toolchain: the test binaries and the CLI are built
# beforehand on a machine with Go and copied along in bin/:
#
#   go test -c -o bin/cuda.test ./cuda
#   go test -c -o bin/mis.test ./mis
#   go test -c -o bin/amg.test ./amg
#   go build -o bin/misgrid ./cmd/misgrid
#   scripts/gpu-check.sh [stage...]
#
# Stages (default: info tests sanitize bench):
#   info      GPU, driver, toolkit
#   nvcc      compile cuda/kernels with the local nvcc (ALLOW_NEW_PTX=1:
#             only a check that the sources build there; the embedded
#             image stays the committed one)
#   tests     cuda and GPU mis tests, verbose
#   sanitize  compute-sanitizer memcheck and racecheck on TestGPUMidSize
#   bench     misgrid bench -device gpu on the issue's graphs (table + JSON)
#   orders    the hex27 160³ mesh in natural, rcm, locality, random order
#   groups    lanes per vertex 1, 4, 8, 32 on every graph
#   buckets   MIS-2 by key buckets: the options against the defaults
#   ncu       Nsight Compute counters of a few sweeps (NCU_GRAPH)
#
# Results go to $OUT (default /tmp/gpu-check-out): at most 8 files.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-${TMPDIR:-/tmp}/gpu-check-out}
mkdir -p "$OUT"
stages=("$@")
[[ ${#stages[@]} -eq 0 ]] && stages=(info tests sanitize bench)
status=0

run() { # run NAME TIMEOUT CMD...: log to $OUT/NAME.txt, remember failures
	local name=$1 limit=$2
	shift 2
	echo "=== $name: $*" | tee -a "$OUT/$name.txt"
	timeout "$limit" "$@" 2>&1 | tee -a "$OUT/$name.txt"
	local rc=${PIPESTATUS[0]}
	echo "=== $name: exit $rc" | tee -a "$OUT/$name.txt"
	[[ $rc -ne 0 ]] && status=1
	return 0
}

for stage in "${stages[@]}"; do
	case $stage in
	info)
		run info 60 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
		run info 30 bash -c 'nvcc --version | tail -2; compute-sanitizer --version | head -2'
		# A GPU held down by power braking or thermal slowdown times
		# latency-bound kernels several times slower (seen: 345 MHz with
		# "HW Power Brake Slowdown: Active"); say so before any bench.
		run info 30 bash -c 'nvidia-smi -q -d PERFORMANCE | grep -E "Slowdown|Power Cap|Performance State" | grep -v "Not Active"'
		;;
	nvcc)
		run nvcc 300 env ALLOW_NEW_PTX=1 bash cuda/kernels/build.sh /tmp/kernels13
		[[ -f /tmp/kernels13/kernels.buildinfo ]] && cat /tmp/kernels13/kernels.buildinfo >>"$OUT/nvcc.txt"
		;;
	tests)
		# Test binaries run in their package directory, as go test does.
		run tests 120 bash -c 'cd cuda && ../bin/cuda.test -test.v -test.count=1'
		run tests 200 bash -c 'cd mis && ../bin/mis.test -test.v -test.count=1 -test.run "GPU|Device"'
		[[ -x bin/amg.test ]] && run tests 200 bash -c 'cd amg && ../bin/amg.test -test.v -test.count=1 -test.run "GPU|Device"'
		# Sticky errors break the process's GPU state: one process each.
		run tests 60 bash -c 'cd cuda && MISGRID_TEST_STICKY=1 ../bin/cuda.test -test.v -test.run Sticky'
		run tests 120 bash -c 'cd mis && MISGRID_TEST_STICKY=1 ../bin/mis.test -test.v -test.run Sticky'
		;;
	sanitize)
		for tool in memcheck racecheck; do
			run sanitize 200 compute-sanitizer --tool "$tool" --error-exitcode 7 --print-limit 20 \
				bin/mis.test -test.run 'TestGPUMidSize$' -test.count=1
		done
		;;
	bench)
		# One graph per run, so that a time-out keeps the graphs done.
		for spec in ${BENCH_GRAPHS:-hex27:160 hex27:160:relabel hex27:256 grid7:200 random:4000000:16}; do
			run bench 300 bin/misgrid bench -device gpu -json -graphs "$spec" ${BENCH_FLAGS:-}
		done
		python3 - "$OUT/bench.txt" >"$OUT/bench-table.txt" <<'EOF' || true
import json, sys
text = open(sys.argv[1]).read()
dec, reps, i = json.JSONDecoder(), [], 0
while (i := text.find('{', i)) >= 0:
    rep, end = dec.raw_decode(text[i:])
    reps.append(rep)
    i += end
rep = reps[0]
print(f"GPU: {rep['device']}, driver CUDA {rep['driver_cuda_version']}, median of {rep['reps']} runs, engine start {1e3*rep.get('engine_start_s', 0):.0f} ms (first graph's process)")
print("| graph | order | dist | lanes | tail | bands | copy ms (GB/s) | floor ms | MIS ms | MIS/floor | set size | sweeps | = CPU |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in [r for rep in reps for r in rep['results']]:
    print(f"| {r['graph']} | {r['order']} | {r['distance']} | {r['lanes_per_vertex']} | {r.get('tail', 0)} | {r.get('bands', 1)}x{r.get('sweeps_per_band', 1)}{'^%d' % r['band_shape'] if r.get('band_shape') else ''}{' nofirst' if r.get('no_first_kernel') else ''}{' kf%d' % r['key_filter'] if r.get('key_filter') else ''}{' buckets%d' % r['buckets'] if r.get('buckets') else ''} | {1e3*r['upload_s']:.1f} ({r.get('upload_gbps', 0):.1f}) | "
          f"{1e3*r['floor_s']:.3f} | {1e3*r['mis_s']:.3f} | {r['mis_over_floor']:.2f} | {r['set_size']} | "
          f"{r['sweeps']} | {'yes' if r['identical_to_cpu'] and r['verified'] else 'NO'} |")
EOF
		cat "$OUT/bench-table.txt"
		;;
	buckets)
		# MIS-2 by key buckets: the options against the defaults
		# (flush threshold, per-class thresholds, scans of larger keys
		# only, word-wise pushes), hash and Degree priority; the ball
		# sweeps (-buckets -1) as the reference.
		G=${BUCKET_GRAPHS:-hex27:160 grid7:200 random:4000000:16 hex27:160:relabel}
		run buckets 500 scripts/ab-mis2.sh "-buckets -1,0 -flush 1,8,32" $G
		run buckets 500 scripts/ab-mis2.sh "-priority degree -buckets -1,0 -bucketclass -1,1 -flush 1,8" $G
		run buckets 300 scripts/ab-mis2.sh "-keyfilter -1,0,1,32" $G
		;;
	orders)
		run orders 500 bin/misgrid bench -device gpu -graphs hex27:160 -order natural,rcm,locality,random
		;;
	groups)
		for spec in ${GROUP_GRAPHS:-hex27:160 hex27:160:relabel grid7:200 random:4000000:16}; do
			run groups 300 bin/misgrid bench -device gpu -group 1,4,8,32 -verify=false -graphs "$spec"
		done
		;;
	ncu)
		# Hardware counters of the first sweeps of one timed run.
		for d in 1 2; do
			run ncu 200 ncu --clock-control none --kernel-name regex:'mis[12]_g' --launch-skip 30 --launch-count 5 \
				--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
				--section WarpStateStats --section SchedulerStats \
				bin/misgrid bench -device gpu -graphs "${NCU_GRAPH:-hex27:160}" -distance $d -reps 10 -verify=false
		done
		;;
	*)
		echo "unknown stage $stage" >&2
		status=1
		;;
	esac
done
exit $status
