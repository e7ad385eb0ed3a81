#!/usr/bin/env bash
# Builds the kernel image that package kernels embeds: a fatbinary with
# machine code for sm_80 (A100) and sm_90 (H100) and PTX for compute_80,
# which newer GPUs compile at load time. Run through `go generate ./cuda`.
#
# The PTX must stay at ISA version 8.2 or lower so that drivers from 535
# load it; CUDA 11.8's nvcc (Debian's nvidia-cuda-toolkit) emits 7.8.
# A newer nvcc emits a newer ISA: the script refuses it unless
# ALLOW_NEW_PTX=1 (used on the GPU machine only to check that the sources
# still compile there).
#
# Usage: build.sh [output-dir]   (default: this directory)
# NVCC_FLAGS adds flags for experiments (e.g. -DBUCKET_MINB=6); the
# buildinfo records them, and the committed image is built without.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
NVCC=${NVCC:-nvcc}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Every *.cu here goes into one image (a unity build), so that a new
# kernel file needs no change to this script or to the Go side; the
# sources are hashed in the same sorted order the Go test uses.
srcs=$(cd "$here" && ls *.cu | LC_ALL=C sort)
for f in $srcs; do echo "#include \"$here/$f\""; done > "$tmp/all.cu"
flags=(-std=c++17 -O3 -I"$here" ${NVCC_FLAGS:-})
"$NVCC" "${flags[@]}" -ptx -arch=compute_80 -o "$tmp/kernels.ptx" "$tmp/all.cu"
ver=$(awk '$1 == ".version" { print $2; exit }' "$tmp/kernels.ptx")
major=${ver%%.*}
minor=${ver#*.}
if (( major > 8 || (major == 8 && minor > 2) )) && [[ ${ALLOW_NEW_PTX:-0} != 1 ]]; then
	echo "build.sh: $NVCC emits PTX ISA $ver; drivers older than its CUDA version cannot load it." >&2
	echo "build.sh: use CUDA 11.8-12.2's nvcc (apt-get install nvidia-cuda-toolkit), or set ALLOW_NEW_PTX=1." >&2
	exit 1
fi
"$NVCC" "${flags[@]}" -fatbin -Xfatbin -compress-all \
	-gencode arch=compute_80,code=sm_80 \
	-gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_80,code=compute_80 \
	-o "$tmp/kernels.fatbin" "$tmp/all.cu"
cp "$tmp/kernels.fatbin" "$out/kernels.fatbin"
{
	echo "source-sha256 $(cd "$here" && cat $(ls *.cu *.cuh | LC_ALL=C sort) | sha256sum | cut -d' ' -f1)"
	echo "nvcc $("$NVCC" --version | awk '/release/ { print $5 $6 }')"
	echo "ptx-isa $ver"
	echo "targets sm_80 sm_90 compute_80"
	[[ -n ${NVCC_FLAGS:-} ]] && echo "flags ${NVCC_FLAGS}"
} > "$out/kernels.buildinfo"
echo "build.sh: wrote $out/kernels.fatbin ($(wc -c < "$out/kernels.fatbin") bytes, PTX ISA $ver)"
