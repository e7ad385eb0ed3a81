#!/usr/bin/env python3
"""setup-ab.py LOG: the setupab stage's BenchmarkGPUSetup lines of
bin/amg-old.test and bin/amg.test (sections "### amg-old", "### amg") as a
Markdown table: each GPU job's setup_ms over the rounds, then the median
of every phase, old against new, and ~other: setup_ms less the phases'
sum."""
import collections, re, statistics, sys

# Not phases of setup_ms: the whole, the untimed first setup, the solve,
# and alloc_ms, the time in device allocations inside the phases.
NOT_PHASES = {"setup_ms", "first_setup_ms", "first_update_ms", "solve_ms", "alloc_ms"}
runs = collections.defaultdict(lambda: collections.defaultdict(list))
binary = None
for line in open(sys.argv[1]):
    m = re.match(r'### (\S+)', line)
    if m:
        binary = m.group(1)
        continue
    m = re.match(r'Benchmark\S*/(\w+)/([\w-]+)/gpu\S*\s', line)
    if not m or binary is None:
        continue
    job = f"{m.group(1)} {m.group(2)}"
    ms = {k: float(v) for v, k in re.findall(r'([0-9.]+) (\w+_ms)\b', line)}
    for k, v in ms.items():
        runs[(job, k)][binary].append(v)
    # What no phase accounts for: setup_ms less the phases' sum.
    phases = sum(v for k, v in ms.items() if k not in NOT_PHASES and not k.endswith("floor_ms"))
    runs[(job, "~other_ms")][binary].append(ms.get("setup_ms", 0) - phases)

def fmt(xs):
    return ", ".join(f"{x:.2f}" for x in xs) if xs else "–"

jobs = sorted({j for j, _ in runs})
print("| job | old setup_ms | new setup_ms |")
print("|---|---|---|")
for j in jobs:
    r = runs[(j, "setup_ms")]
    print(f"| {j} | {fmt(r['amg-old'])} | {fmt(r['amg'])} |")
print()
print("| job | phase | old (median) | new (median) |")
print("|---|---|---|---|")
for j in jobs:
    for (jj, k), r in sorted(runs.items()):
        if jj != j or k == "setup_ms" or k.endswith("floor_ms") or not (r["amg-old"] or r["amg"]):
            continue
        med = lambda xs: f"{statistics.median(xs):.3f}" if xs else "–"
        print(f"| {j} | {k[:-3]} | {med(r['amg-old'])} | {med(r['amg'])} |")
