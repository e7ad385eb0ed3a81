#!/bin/sh
# vgleak.sh VALGRIND SUPP PROGRAM [ARGS...]: runs PROGRAM under memcheck
# and fails only on definite or indirect leaks, printing the leak records.
# For the default (uninstrumented) library, whose Go stacks memcheck
# cannot follow: access errors there are the runtime's, not leaks.
vg=$1 supp=$2
shift 2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$vg" --leak-check=full --show-leak-kinds=definite,indirect --undef-value-errors=no \
	--suppressions="$supp" --num-callers=30 --log-file="$log" "$@"
rc=$?
if grep -Eq "(definitely|indirectly) lost: [1-9]" "$log"; then
	sed -n '/ are definitely lost\| are indirectly lost/,/^==[0-9]*== $/p' "$log" >&2
	grep -E "(definitely|indirectly) lost:" "$log" >&2
	exit 98
fi
exit $rc
