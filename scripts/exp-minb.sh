#!/usr/bin/env bash
# exp-minb.sh repeats the ninth round's register-cap experiment
# (docs/gpu.md): bucket kernels capped for 4, 5, 6 and 8 blocks per SM,
# hash and Degree priority, on the GPU machine. Build the binaries here:
#
#   for mb in 4 5 6 8; do
#     NVCC_FLAGS=-DBUCKET_MINB=$mb bash cuda/kernels/build.sh /tmp/k$mb
#     cp /tmp/k$mb/kernels.fatbin cuda/kernels/kernels.fatbin
#     go build -ldflags=-s -o bin/misgrid-k$mb ./cmd/misgrid
#   done
#   git checkout cuda/kernels/kernels.fatbin
set -uo pipefail
cd "$(dirname "$0")/.."
G="hex27:160 grid7:200 random:4000000:16 hex27:160:relabel"
for pr in hash degree; do
	for k in 4 5 6 8; do
		echo "== k$k $pr"
		# shellcheck disable=SC2086
		MISGRID=bin/misgrid-k$k timeout 100 scripts/ab-mis2.sh "-priority $pr" $G
	done
done
