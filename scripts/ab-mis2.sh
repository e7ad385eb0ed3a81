#!/usr/bin/env bash
# ab-mis2.sh compares MIS-2 variants on the GPU machine (bin/misgrid built
# beforehand): one line per graph and variant with the MIS time, the
# floor, their ratio, the set size and whether it matched the CPU set.
#
#   scripts/ab-mis2.sh "BENCH FLAGS" GRAPH...
#   e.g. scripts/ab-mis2.sh "-buckets -1,16 -priority degree" hex27:160 grid7:200
#
# MISGRID names another binary (builds of other kernel images).
set -uo pipefail
cd "$(dirname "$0")/.."
flags=$1
shift
for g in "$@"; do
	# shellcheck disable=SC2086
	${MISGRID:-bin/misgrid} bench -device gpu -json -distance 2 -graphs "$g" $flags 2>&1 |
		python3 -c '
import json, sys
t = sys.stdin.read()
try:
    rep = json.loads(t[t.index("{"):])
except Exception:
    print(t[-800:]); sys.exit()
for r in rep["results"]:
    print("%-22s bk %3s sh %3s fl %3s cls %d st %d bal %d kf %3s  MIS %7.3f ms  floor %.3f  x%5.2f  set %8d sweeps %3d same %s" % (
        r["graph"], r.get("buckets", 0), r.get("bucket_shape", 0), r.get("flush", 0), r.get("bucket_per_class", False),
        r.get("bucket_stages", 0), r.get("bucket_balanced", False), r.get("key_filter", 0) & 255, r["mis_s"] * 1e3,
        r["floor_s"] * 1e3, r["mis_over_floor"], r["set_size"], r["sweeps"], r["identical_to_cpu"]))
'
done
