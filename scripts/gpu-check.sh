#!/usr/bin/env bash
# gpu-check.sh runs everything the GPU side needs on a machine with an
# NVIDIA GPU and no Go toolchain: scripts/gpu-build.sh builds the test
# binaries, the command, the harness and the C library into bin/
# beforehand, on a machine with Go; carry bin/ along and run
#
#   scripts/gpu-check.sh [stage...]
#
# Stages (default: info tests sanitize bench):
#   info      GPU, driver, toolkit, and any clock slowdown
#   nvcc      compile internal/kernels with the local nvcc (ALLOW_NEW_PTX=1:
#             only a check that the sources build there; the embedded
#             images stay the committed ones)
#   tests     GPU tests of cuda, internal/gpu, the MIS engine, mis, amg, gpuagg and
#             gpusparse, verbose
#   sanitize  compute-sanitizer memcheck and racecheck on the engine's
#             TestGPUMidSize, memcheck, racecheck (a process per test) and
#             initcheck on the AMG setup's tests, memcheck and racecheck
#             on gpusparse's short corpus
#   bench     misgrid bench -device gpu on the reference graphs (table + JSON)
#   orders    the hex27 160³ mesh in natural, rcm, locality, random order
#   ab        bin/misgrid-old against bin/misgrid, alternating graph by
#             graph in one run (a refactoring must keep sets and times)
#   setupab   bin/amg-old.test against bin/amg.test: the device setups of
#             $SETUP_BENCH, alternating, $SETUP_ROUNDS rounds (default 2),
#             then setup_ms and each phase side by side
#   tune      bin/gpubench $TUNE_FLAGS (a tuning against the default)
#   ncu       Nsight Compute counters of a few sweeps (NCU_GRAPH)
#   agg       aggregation and coarse graph on the device (gpuagg-check.sh,
#             its logs in $OUT/agg)
#   upload    staged uploads, device hierarchy and the C device-pointer
#             test (upload-check.sh, its logs in $OUT/upload)
#   setup     the AMG setup on the device: BenchmarkGPUSetup ($SETUP_BENCH,
#             default the issue's set: Q1 Poisson 101³ and elasticity 69³,
#             tetpart2 and tetelast1, P1 on the Gmsh part) and the solve
#             benchmarks,
#             each phase beside its floor
#   prof      each setup kernel's time summed by name over the device setups
#             of BenchmarkGPUSetup on $PROF_BENCH (five setups and an
#             Update; ncu with one metric, caches left as the run leaves
#             them); scripts/kernel-sum.py sums the CSV
#   sparse    gpusparse against cuSPARSE (bench/gpu/spgemm.sh)
#   gpus      the multi-GPU driver: its tests and misgrid bench -gpus 1,2
#             ($GPUS_FLAGS)
#   mesh      MIS and the hierarchy on the refined Gmsh part
#             (bench/meshes/part.msh.gz:refine=2, 3.1M vertices)
#
# Results go to $OUT (default /tmp/gpu-check-out).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-${TMPDIR:-/tmp}/gpu-check-out}
mkdir -p "$OUT"
# gpu-build.sh gzips the binaries so that bin/ fits one call's transfer.
for f in bin/*.gz; do
	[[ -e $f ]] && gunzip -f "$f" && chmod +x "${f%.gz}"
done
stages=("$@")
[[ ${#stages[@]} -eq 0 ]] && stages=(info tests sanitize bench)
source scripts/lib.sh
GRAPHS=${BENCH_GRAPHS:-hex27:160 hex27:160:relabel hex27:256 grid7:200 random:4000000:16}

# table FILE: the JSON reports of bench runs in FILE as a Markdown table.
table() {
	python3 - "$1" <<'EOF' || true
import json, re, sys
text = open(sys.argv[1]).read()
dec, reps = json.JSONDecoder(), []
# Each run prints one indented JSON object that starts a line.
for m in re.finditer(r'^\{', text, re.M):
    try:
        reps.append(dec.raw_decode(text[m.start():])[0])
    except ValueError:
        pass
reps = [r for r in reps if 'results' in r]
if not reps:
    sys.exit(0)
rep = reps[0]
print(f"GPU: {rep['device']}, driver CUDA {rep['driver_cuda_version']}, median of {rep['reps']} runs")
print("| graph | order | dist | kernels | copy ms | floor ms | MIS ms | MIS/floor | set size | sweeps | = CPU |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for r in [r for rep in reps for r in rep['results']]:
    print(f"| {r['graph']} | {r['order']} | {r['distance']} | {' '.join(r.get('kernels') or [])} | {1e3*r['upload_s']:.1f} | "
          f"{1e3*r['floor_s']:.3f} | {1e3*r['mis_s']:.3f} | {r['mis_over_floor']:.2f} | {r['set_size']} | "
          f"{r['sweeps']} | {'yes' if r['identical_to_cpu'] and r['verified'] else 'NO'} |")
EOF
}

for stage in "${stages[@]}"; do
	case $stage in
	info)
		run info 60 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
		run info 30 bash -c 'nvcc --version | tail -2; compute-sanitizer --version | head -2'
		# A GPU held down by power braking or thermal slowdown times
		# latency-bound kernels several times slower; say so before any
		# bench.
		run info 30 bash -c 'nvidia-smi -q -d PERFORMANCE | grep -E "Slowdown|Power Cap|Performance State" | grep -v "Not Active"'
		;;
	nvcc)
		run nvcc 300 env ALLOW_NEW_PTX=1 bash -c 'mkdir -p /tmp/kernels-check && cp internal/kernels/*.cu internal/kernels/*.cuh /tmp/kernels-check && bash internal/kernels/build.sh /tmp/kernels-check'
		;;
	tests)
		# Test binaries run in their package directory, as go test does.
		run tests 120 bash -c 'cd cuda && ../bin/cuda.test -test.v -test.count=1'
		run tests 60 bash -c 'cd internal/gpu && ../../bin/gpu.test -test.v -test.count=1'
		run tests 300 bash -c 'cd internal/misgpu && ../../bin/misgpu.test -test.v -test.count=1'
		run tests 200 bash -c 'cd mis && ../bin/mis.test -test.v -test.count=1 -test.run "GPU|Device|MultiGPU"'
		run tests 300 bash -c 'cd amg && ../bin/amg.test -test.v -test.count=1 -test.run "GPU|Device"'
		run tests 240 bash -c 'cd internal/gpuagg && ../../bin/gpuagg.test -test.v -test.count=1 -test.run "Coarsen|Hierarchy|Check"'
		run tests 200 bash -c 'cd internal/gpusparse && ../../bin/gpusparse.test -test.v -test.count=1 -test.run "TestGPU(Corpus|Errors)"'
		# Sticky errors break the process's GPU state: one process each.
		run tests 60 bash -c 'cd cuda && MISGRID_TEST_STICKY=1 ../bin/cuda.test -test.v -test.run Sticky'
		run tests 120 bash -c 'cd mis && MISGRID_TEST_STICKY=1 ../bin/mis.test -test.v -test.run Sticky'
		;;
	sanitize)
		for tool in memcheck racecheck; do
			run sanitize 240 bash -c "cd internal/misgpu && compute-sanitizer --tool $tool --error-exitcode 7 --print-limit 20 \
				../../bin/misgpu.test -test.run 'TestGPUMidSize\$' -test.count=1"
		done
		# The AMG setup's kernels (input, setup, gpuagg, gpusparse, the
		# engine), initcheck included: freed device memory is reused.
		# racecheck is slow enough to take one process per test.
		amgsan() {
			run sanitize "$2" bash -c "cd amg && compute-sanitizer --tool $1 --error-exitcode 7 --print-limit 20 \
				../bin/amg.test -test.short -test.run '$3' -test.count=1"
		}
		amgsan memcheck 300 'TestGPUSetup(MatchesHost|Update|UpdatePinned|UpdateOtherPattern|UpdateBadValues|LongRows|Renumber|BadInput)$'
		amgsan initcheck 200 'TestGPUSetup(LongRows|Renumber|BadInput)$'
		for t in LongRows Renumber Update; do
			amgsan racecheck 150 "TestGPUSetup$t\$"
		done
		amgsan racecheck 300 'TestGPUSetupMatchesHost$' # 140-150 s
		# gpusparse's products on its corpus (the short one: racecheck
		# does not finish the whole in 200 s).
		for tool in memcheck racecheck; do
			run sanitize 400 bash -c "cd internal/gpusparse && compute-sanitizer --tool $tool --error-exitcode 7 --print-limit 20 \
				../../bin/gpusparse.test -test.short -test.run 'TestGPUCorpus' -test.count=1"
		done
		;;
	bench)
		# One graph per run, so that a time-out keeps the graphs done.
		for spec in $GRAPHS; do
			run bench 300 bin/misgrid bench -device gpu -json -graphs "$spec" ${BENCH_FLAGS:-}
		done
		table "$OUT/bench.txt" | tee "$OUT/bench-table.txt"
		;;
	orders)
		run orders 500 bin/misgrid bench -device gpu -graphs hex27:160 -order natural,rcm,locality,random
		;;
	ab)
		for spec in $GRAPHS; do
			for bin in bin/misgrid-old bin/misgrid; do
				run ab 300 "$bin" bench -device gpu -json -graphs "$spec" ${BENCH_FLAGS:-}
			done
		done
		;;
	setupab)
		for ((r = 1; r <= ${SETUP_ROUNDS:-2}; r++)); do
			for t in amg-old amg; do
				run setupab 200 bash -c "echo '### $t'; cd amg && MISGRID_SETUP_BENCH=${SETUP_BENCH:-poisson101,elasticity69} \
					../bin/$t.test -test.run '^\$' -test.bench 'GPUSetup\$' -test.benchtime 1x"
			done
		done
		python3 scripts/setup-ab.py "$OUT/setupab.txt" | tee "$OUT/setupab-table.txt"
		;;
	tune)
		run tune 500 bin/gpubench ${TUNE_FLAGS:-} -graphs "${GRAPHS// /,}"
		;;
	ncu)
		# Hardware counters of the first sweeps of one timed run.
		for d in 1 2; do
			run ncu 200 ncu --clock-control none --kernel-name regex:'mis[12]' --launch-skip 30 --launch-count 5 \
				--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
				--section WarpStateStats --section SchedulerStats \
				bin/misgrid bench -device gpu -graphs "${NCU_GRAPH:-hex27:160}" -distance $d -reps 10
		done
		;;
	agg)
		run agg 400 env OUT="$OUT/agg" scripts/gpuagg-check.sh bin tests bench
		;;
	upload)
		run upload 400 env OUT="$OUT/upload" scripts/upload-check.sh bin ${UPLOAD_STAGES:-cabi tests bench}
		;;
	setup)
		run setup 400 bash -c "cd amg && MISGRID_SETUP_BENCH=${SETUP_BENCH:-poisson101,elasticity69,tetpart2,tetelast1} \
			../bin/amg.test -test.run '^\$' -test.bench 'GPUSetup|GPUSolve|GPUMulVec' -test.benchtime 1x"
		;;
	prof)
		for p in ${PROF_BENCH:-poisson101 elasticity69}; do
			run prof 300 bash -c "cd amg && MISGRID_SETUP_BENCH=$p ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv \
				--kernel-name regex:'^(sp_|su_|in_|agg|coarse|members|claim|assign|rank|scan|compact|level|csr)' \
				../bin/amg.test -test.run '^\$' -test.bench 'GPUSetup\$' -test.benchtime 1x > $OUT/prof-$p.csv 2>&1; \
				grep -v '^\"' $OUT/prof-$p.csv | tail -40; python3 ../scripts/kernel-sum.py $OUT/prof-$p.csv"
		done
		;;
	sparse)
		run sparse 400 bench/gpu/spgemm.sh bin
		;;
	gpus)
		run gpus 60 bash -c 'nvidia-smi -L; nvidia-smi topo -m | head -8'
		run gpus 300 bash -c 'cd mis && ../bin/mis.test -test.v -test.count=1 -test.run "MultiGPU|LayoutParts"'
		run gpus 400 bin/misgrid bench ${GPUS_FLAGS:--gpus 1,2 -graphs hex27:256,random:16777216:16 -distance 1,2}
		;;
	mesh)
		for pri in ${MESH_PRIORITIES:-degree boundary hash}; do
			run mesh 300 bin/misgrid bench -device gpu -priority $pri -graphs bench/meshes/part.msh.gz:refine=2
		done
		[[ ${MESH_COARSEN:-1} == 1 ]] && run mesh 300 bin/misgrid coarsen -device gpu bench/meshes/part.msh.gz:refine=2
		;;
	*)
		echo "unknown stage $stage" >&2
		status=1
		;;
	esac
done
exit $status
