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

# check_args NAME DEFAULTS BIN [stage...] reads the arguments of a script
# run as `NAME.sh BIN [stage...]`: bin is BIN made absolute, OUT the log
# folder (default $TMPDIR/NAME-out, created), stages the stages named or
# else DEFAULTS (one string, stages separated by spaces).
check_args() {
	local name=$1 defaults=$2
	shift 2
	bin=$(cd "$1" && pwd)
	shift
	OUT=${OUT:-${TMPDIR:-/tmp}/$name-out}
	mkdir -p "$OUT"
	stages=("$@")
	if [[ ${#stages[@]} -eq 0 ]]; then
		read -ra stages <<<"$defaults"
	fi
}
