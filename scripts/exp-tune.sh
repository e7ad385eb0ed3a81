#!/usr/bin/env bash
# Bucket tuning sweeps of the ninth round (docs/gpu.md).
cd "$(dirname "$0")/.."
s=scripts/ab-mis2.sh
$s "-priority degree -buckets 6,8,10,12 -bucketshape 100,150,200 -flush 4,8,16" grid7:200
$s "-priority degree -buckets 12,16,20 -bucketshape 200,250,300 -flush 1,2,4" hex27:160:relabel hex27:160
$s "-buckets 12,16 -bucketshape 250,300,400 -flush 1,2,4" hex27:160:relabel
$s "-buckets 6,8,10 -bucketshape 100,150,200 -flush 4,8,16" grid7:200
