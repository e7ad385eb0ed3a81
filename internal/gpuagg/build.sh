#!/usr/bin/env bash
# Builds agg.fatbin, the kernel image package gpuagg embeds: machine code
# for sm_80 (A100) and sm_90 (H100) and PTX for compute_80, which newer
# GPUs compile at load time. Run through `go generate ./internal/gpuagg`.
#
# The PTX must stay at ISA version 8.2 or lower so that drivers from 535
# load it; CUDA 11.8's nvcc emits 7.8. A newer nvcc is refused unless
# ALLOW_NEW_PTX=1 (to check on the GPU machine that the source compiles).
#
# Usage: build.sh [output-dir]   (default: this directory)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
NVCC=${NVCC:-nvcc}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

flags=(-std=c++17 -O3 -I"$here")
"$NVCC" "${flags[@]}" -ptx -arch=compute_80 -o "$tmp/agg.ptx" "$here/agg.cu"
ver=$(awk '$1 == ".version" { print $2; exit }' "$tmp/agg.ptx")
major=${ver%%.*}
minor=${ver#*.}
if (( major > 8 || (major == 8 && minor > 2) )) && [[ ${ALLOW_NEW_PTX:-0} != 1 ]]; then
	echo "build.sh: $NVCC emits PTX ISA $ver; drivers older than its CUDA version cannot load it." >&2
	echo "build.sh: use CUDA 11.8-12.2's nvcc, or set ALLOW_NEW_PTX=1." >&2
	exit 1
fi
"$NVCC" "${flags[@]}" -fatbin -Xfatbin -compress-all \
	-gencode arch=compute_80,code=sm_80 \
	-gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_80,code=compute_80 \
	-o "$tmp/agg.fatbin" "$here/agg.cu"
cp "$tmp/agg.fatbin" "$out/agg.fatbin"
{
	echo "source-sha256 $(sha256sum < "$here/agg.cu" | cut -d' ' -f1)"
	echo "nvcc $("$NVCC" --version | awk '/release/ { print $5 $6 }')"
	echo "ptx-isa $ver"
	echo "targets sm_80 sm_90 compute_80"
} > "$out/agg.buildinfo"
echo "build.sh: wrote $out/agg.fatbin ($(wc -c < "$out/agg.fatbin") bytes, PTX ISA $ver)"
