#!/usr/bin/env bash
# The plugin tests: run by `make -C petsc test` with the build directory.
set -euo pipefail
B=${1:-build}
MPIEXEC=${MPIEXEC:-mpiexec}
here=$(cd "$(dirname "$0")" && pwd)
plugin=$(cd "$B" && pwd)/libmisgrid-petsc.so
mpirun_flags=()
[ "$(id -u)" -eq 0 ] && mpirun_flags+=(--allow-run-as-root)
"$MPIEXEC" --version 2>/dev/null | grep -q "Open MPI" && mpirun_flags+=(--oversubscribe)

"$B/test_pcmisgrid"

# -help lists every -pc_misgrid_ key of the registry.
help=$("$B/test_pcmisgrid" -mpi -pc_type misgrid -help 2>&1 || true)
for k in smoother sweeps aggregation theta device nullspace cycle max_coarse; do
	grep -q -- "-pc_misgrid_$k" <<<"$help" || { echo "FAIL: -help does not list -pc_misgrid_$k" >&2; exit 1; }
done
echo "ok - -help lists $(grep -c -- '-pc_misgrid_' <<<"$help") -pc_misgrid_ options"

# An option from the database reaches misgrid, a bad one is an error.
view=$("$B/test_pcmisgrid" -mpi -pc_misgrid_smoother jacobi -pc_misgrid_sweeps 3 -ksp_view)
grep -q "smoother=jacobi.*sweeps=3" <<<"$view" ||
	{ echo "FAIL: -pc_misgrid_smoother jacobi not in force" >&2; exit 1; }
if out=$("$B/test_pcmisgrid" -mpi -pc_misgrid_smoother bogus 2>&1); then
	echo "FAIL: -pc_misgrid_smoother bogus accepted" >&2; exit 1
fi
grep -q "smoother" <<<"$out" || { echo "FAIL: no misgrid message: $out" >&2; exit 1; }
echo "ok - -pc_misgrid_smoother jacobi in force; bogus is a PETSc error: $(grep -m1 'misgrid:' <<<"$out" | sed 's/^\[0\]PETSC ERROR: //')"

# One rank: MPIAIJ works. Two: a clear error, and misgrid per rank under bjacobi.
"$MPIEXEC" "${mpirun_flags[@]}" -n 1 "$B/test_pcmisgrid" -mpi
if out=$("$MPIEXEC" "${mpirun_flags[@]}" -n 2 "$B/test_pcmisgrid" -mpi 2>&1); then
	echo "FAIL: PCMISGRID accepted a matrix on 2 ranks" >&2; exit 1
fi
grep -q "runs on one MPI rank" <<<"$out" || { echo "FAIL: 2 ranks: $out" >&2; exit 1; }
echo "ok - 2 ranks: $(grep -m1 'runs on one MPI rank' <<<"$out" | sed 's/^\[.\]PETSC ERROR: //' | cut -c1-110)..."
"$MPIEXEC" "${mpirun_flags[@]}" -n 2 "$B/test_pcmisgrid" -mpi -pc_type bjacobi -sub_pc_type misgrid

# device=gpu passes through: it runs on a GPU, or fails with misgrid's NOGPU message.
if out=$("$B/test_pcmisgrid" -mpi -pc_misgrid_device gpu 2>&1); then
	echo "ok - device=gpu: $(grep '^ok' <<<"$out")"
else
	grep -q "MISGRID_ERR_NOGPU" <<<"$out" || { echo "FAIL: device=gpu: $out" >&2; exit 1; }
	echo "ok - device=gpu without a usable GPU: $(grep -m1 'misgrid:' <<<"$out" | sed 's/^\[0\]PETSC ERROR: //')"
fi

# An unmodified PETSc program loads the plugin with -dll_append.
"$B/solvers" -dll_append "$plugin" -n 14 -ne 5 -pcs gamg,hypre,misgrid
if "$B/solvers" -n 4 -ne 2 -pcs misgrid >/dev/null 2>&1; then
	echo "FAIL: misgrid known without -dll_append" >&2; exit 1
fi
echo "ok - -dll_append $plugin registers -pc_type misgrid"
