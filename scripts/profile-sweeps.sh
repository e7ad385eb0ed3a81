#!/usr/bin/env bash
# profile-sweeps.sh times every sweep of one MIS run on its own (bench
# -profile) and prints the milliseconds and the vertices still in play
# after each, per graph. Run on the GPU machine with bin/misgrid built
# beforehand (see gpu-check.sh):
#
#   scripts/profile-sweeps.sh DIST KEYFILTER GRAPH...
#   e.g. scripts/profile-sweeps.sh 2 -1 hex27:160 random:4000000:16
#
# KEYFILTER is bench's -keyfilter (-1: the default); PFLAGS adds more
# bench flags.
set -uo pipefail
cd "$(dirname "$0")/.."
dist=$1 kf=$2
shift 2
for g in "$@"; do
	bin/misgrid bench -device gpu -json -graphs "$g" -distance "$dist" -keyfilter "$kf" -profile -verify=false ${PFLAGS:-} 2>&1 |
		python3 -c '
import json, sys
t = sys.stdin.read()
try:
    r = json.loads(t)["results"][0]
except Exception:
    print(t[:500]); sys.exit()
print(r["graph"], "kf", r.get("key_filter"), "MIS ms", round(r["mis_s"] * 1e3, 3), "floor ms", round(r["floor_s"] * 1e3, 3))
print("  sweep ms", [round(x, 3) for x in r.get("sweep_ms", [])][:30])
print("  in play ", r.get("sweep_live", [])[:30])
'
done
