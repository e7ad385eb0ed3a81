#!/bin/bash
# usage: prof.sh KF GRAPHS...
kf=$1; shift
for g in "$@"; do bin/misgrid bench -device gpu -json -graphs $g -distance 2 -keyfilter $kf -profile -verify=false ${PFLAGS:-} 2>&1 | python3 -c "
import json,sys
t=sys.stdin.read()
try:
  r=json.loads(t)['results'][0]
except Exception:
  print(t[:500]); sys.exit()
print(r['graph'], r.get('key_filter'), 'mis', round(r['mis_s']*1e3,3), 'floor', round(r['floor_s']*1e3,3))
print(' ms  ', [round(x,3) for x in r.get('sweep_ms',[])][:24])
print(' live', r.get('sweep_live')[:24])
"; done
