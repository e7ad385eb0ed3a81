#!/usr/bin/env bash
# ncu-launches.sh times each MIS-2 bucket launch of one run with Nsight
# Compute (no event or copy between launches, caches kept), to see where
# a run's time goes without the -profile overhead. On the GPU machine,
# bin/misgrid built beforehand:
#
#   scripts/ncu-launches.sh "BENCH FLAGS" GRAPH...
#
# DIST (default 2) is the MIS distance; KERNELS (default the bucket
# kernels) a regular expression of the kernels to time, which must
# match mis_init, where each run starts.
# It profiles the first 80 launches of the bucket kernels (the warm-up
# runs, split at each run's mis_init) and prints, for each of the first
# three runs, every launch as kernel:grid:µs and their sum. Nsight
# Compute serialises the launches, so the sum leaves out the gaps
# between them that CUDA events see.
set -uo pipefail
cd "$(dirname "$0")/.."
flags=$1
shift
for g in "$@"; do
	echo "## $g $flags"
	# shellcheck disable=SC2086
	ncu --clock-control none --cache-control none --csv --page raw \
		--metrics gpu__time_duration.sum,launch__grid_size \
		--kernel-name regex:"${KERNELS:-mis2b|class_list|mis_init}" --launch-count 80 \
		${MISGRID:-bin/misgrid} bench -device gpu -distance "${DIST:-2}" -graphs "$g" -verify=false $flags 2>/dev/null |
		python3 -c '
import csv, sys
lines = sys.stdin.read().splitlines()
rows = list(csv.reader(l for l in lines if l.startswith("\"")))
for l in lines:
    if not l.startswith("\"") and not l.startswith("=="): print("   |", l)
hdr = rows[0]; unit = rows[1]; rows = rows[2:]
ki, gi, ti = hdr.index("Kernel Name"), hdr.index("launch__grid_size"), hdr.index("gpu__time_duration.sum")
scale = {"nsecond": 1, "usecond": 1e3, "msecond": 1e6}.get(unit[ti], 1)
print("   time unit", unit[ti])
runs, cur = [], []
for r in rows:
    if r[ki].startswith("mis_init"):
        if cur: runs.append(cur)
        cur = []
    else:
        cur.append((r[ki].split("(")[0], r[gi], float(r[ti].replace(",", "")) * scale))
if cur: runs.append(cur)
for i, run in enumerate(runs[:3]):
    tot = sum(t for _, _, t in run)
    print("run %d: %d launches, %.1f us of kernels" % (i, len(run), tot / 1e3))
    print("   " + " ".join("%s:%s:%.1f" % (k.replace("void ", "")[:14], g, t / 1e3) for k, g, t in run))
'
done
