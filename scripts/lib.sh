# lib.sh is sourced by the GPU check scripts; it needs $OUT (the log
# folder) and sets status=1 when a command fails, so that a script runs
# every stage and still exits non-zero.
#
# run NAME TIMEOUT CMD... appends CMD's output to $OUT/NAME.txt between
# === lines. It shows the output as it comes, or, with RUN_TAIL=N, only
# the last N lines of the log once CMD ends: a script that gpu-check.sh
# runs as one stage keeps the outer log readable that way.
status=0

run() {
	local name=$1 limit=$2 log="$OUT/$1.txt" rc
	shift 2
	if [[ -n ${RUN_TAIL:-} ]]; then
		echo "=== $name: $*" >>"$log"
		timeout "$limit" "$@" >>"$log" 2>&1
		rc=$?
		echo "=== $name: exit $rc" >>"$log"
		tail -n "$RUN_TAIL" "$log"
	else
		echo "=== $name: $*" | tee -a "$log"
		timeout "$limit" "$@" 2>&1 | tee -a "$log"
		rc=${PIPESTATUS[0]}
		echo "=== $name: exit $rc" | tee -a "$log"
	fi
	[[ $rc -ne 0 ]] && status=1
	return 0
}
