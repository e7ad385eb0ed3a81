#!/usr/bin/env bash
# gpu-build.sh builds, on a machine with Go, everything scripts/gpu-check.sh
# runs on the GPU machine (which has no Go): the test binaries of the
# packages with GPU tests, the command, the harness, the C library with
# the C sources its device test compiles, and gpusparse's cuSPARSE
# comparison. Binaries are stripped so that bin/ travels in one call.
#
#   scripts/gpu-build.sh [OLD_REV]
#
# With OLD_REV, bin/misgrid-old and bin/amg-old.test are built at that
# revision, for gpu-check.sh's ab and setupab stages (a change must keep
# sets and times).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
mkdir -p bin
ld=(-ldflags='-s -w')
for p in cuda internal/gpu internal/misgpu internal/gpuagg internal/gpusparse mis amg; do
	go test -c "${ld[@]}" -o "bin/$(basename "$p").test" "./$p"
done
go build "${ld[@]}" -o bin/misgrid ./cmd/misgrid
go build "${ld[@]}" -o bin/gpubench ./tools/gpubench
make -s -C cabi lib >/dev/null
cp cabi/build/libmisgrid.so.0 bin/
rm -rf bin/include && cp -r cabi/include bin/include
cp cabi/tests/check.h cabi/tests/test_device*.c bench/gpu/spgemm_cusparse.cu bin/
if [[ $# -gt 0 ]]; then
	tmp=$(mktemp -d)
	trap 'git worktree remove --force "$tmp" >/dev/null 2>&1 || true' EXIT
	git worktree add -q --detach "$tmp" "$1"
	(cd "$tmp" && go build "${ld[@]}" -o "$OLDPWD/bin/misgrid-old" ./cmd/misgrid &&
		go test -c "${ld[@]}" -o "$OLDPWD/bin/amg-old.test" ./amg)
fi
# Compressed, bin/ travels with the working tree in one call (64 MiB);
# gpu-check.sh unpacks it.
gzip -f -6 bin/*.test bin/misgrid bin/misgrid-old bin/gpubench bin/libmisgrid.so.0 2>/dev/null || true
du -sh bin
