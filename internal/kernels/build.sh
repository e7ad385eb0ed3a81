#!/usr/bin/env bash
# Builds one kernel image per *.cu file of a directory (default: this
# one): a fatbinary <name>.fatbin with machine code for sm_80 (Ampere) and
# sm_90 (Hopper) and PTX for compute_80, which newer GPUs compile at load
# time. Headers (*.cuh) are shared. Every package that embeds kernels
# runs this script, so that all images come from the same flags and
# targets: `go generate ./internal/kernels`, `go generate
# ./internal/gpuagg` (there: `build.sh . agg.buildinfo`) and `go generate
# ./cuda` (the binding's test kernels; there: `build.sh testdata`).
#
# The PTX must stay at ISA version 8.2 or lower so that drivers from 535
# load it; CUDA 11.8's nvcc (Debian's nvidia-cuda-toolkit) emits 7.8.
# A newer nvcc emits a newer ISA: the script refuses it unless
# ALLOW_NEW_PTX=1 (to check on a GPU machine that the sources still
# compile there). NVCC_FLAGS adds flags (the buildinfo records them; the
# committed images are built without).
#
# The build info (default kernels.buildinfo) records the hash of the
# sources, nvcc's version and the PTX ISA, and lists the images unless it
# is named after its directory's one image (agg.buildinfo for agg.fatbin).
#
# Usage: build.sh [dir [buildinfo]]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$(cd "${1:-$here}" && pwd)
info=${2:-kernels.buildinfo}
NVCC=${NVCC:-nvcc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

flags=(-std=c++17 -O3 -I"$dir" ${NVCC_FLAGS:-})
images=()
ver=
for src in $(cd "$dir" && ls *.cu | LC_ALL=C sort); do
	name=${src%.cu}
	"$NVCC" "${flags[@]}" -ptx -arch=compute_80 -o "$tmp/$name.ptx" "$dir/$src"
	ver=$(awk '$1 == ".version" { print $2; exit }' "$tmp/$name.ptx")
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
		-o "$tmp/$name.fatbin" "$dir/$src"
	cp "$tmp/$name.fatbin" "$dir/$name.fatbin"
	images+=("$name.fatbin")
	echo "build.sh: wrote $dir/$name.fatbin ($(wc -c < "$dir/$name.fatbin") bytes, PTX ISA $ver)"
done
{
	echo "source-sha256 $(cd "$dir" && cat $(ls *.cu *.cuh 2>/dev/null | LC_ALL=C sort) | sha256sum | cut -d' ' -f1)"
	echo "nvcc $("$NVCC" --version | awk '/release/ { print $5 $6 }')"
	echo "ptx-isa $ver"
	echo "targets sm_80 sm_90 compute_80"
	if [[ ${#images[@]} -ne 1 || $info != "${images[0]%.fatbin}.buildinfo" ]]; then
		echo "images ${images[*]}"
	fi
	if [[ -n ${NVCC_FLAGS:-} ]]; then
		echo "flags ${NVCC_FLAGS}"
	fi
} > "$dir/$info"
