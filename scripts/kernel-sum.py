#!/usr/bin/env python3
"""kernel-sum.py FILE: sums ncu's gpu__time_duration.sum (CSV) by kernel name, largest first."""
import csv, collections, sys

tot, cnt = collections.Counter(), collections.Counter()
with open(sys.argv[1]) as f:
    rows = [l for l in f if l.startswith('"')]
for r in csv.DictReader(rows):
    if r.get('Metric Name') != 'gpu__time_duration.sum':
        continue
    v = float(r['Metric Value'].replace(',', ''))
    scale = {'nsecond': 1e-6, 'usecond': 1e-3, 'msecond': 1.0, 'second': 1e3}.get(r.get('Metric Unit', 'nsecond'), 1e-6)
    name = r['Kernel Name'].split('(')[0]
    tot[name] += v * scale
    cnt[name] += 1
print(f"{'kernel':40s} {'launches':>8s} {'ms':>10s}")
for k, v in tot.most_common():
    print(f"{k:40s} {cnt[k]:8d} {v:10.3f}")
print(f"{'total':40s} {sum(cnt.values()):8d} {sum(tot.values()):10.3f}")
