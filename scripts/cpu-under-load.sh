#!/bin/sh
# cpu-under-load.sh: does the README's main job hold on a busy 2-core runner?
#
# Runs `go run ./cmd/regress --wide` (the merge base of main against HEAD,
# the CPU class's suite of benchmarks.yaml; --wide only keeps the names
# whole) in a temporary clone of this repository's HEAD, N times on an A/A
# branch (a comment changed in kernels/rmsnorm.go) and N times on a branch
# whose CPU RMSNorm fused kernel reads half of each row once more (about
# +20-30% of its time), each run with BUSY processes spinning beside it
# (sh -c 'while :; do :; done'), and prints per run the exit code, the wall
# time, the load average, the RMSNorm fused verdicts and any other gated
# regression, then the counts: the slowdown caught (exit 1 with an RMSNorm
# fused regression) and the A/A passed (exit 0). With --idle K it first
# times K A/A runs with nothing spinning beside them.
#
# Usage: scripts/cpu-under-load.sh [-n N] [--idle K] [--busy B] [--keep]
#   -n N      runs of each kind under load (default 10)
#   --idle K  A/A runs on the idle machine first, timed (default 0)
#   --busy B  busy processes beside each loaded run (default 2)
#   --keep    keep the temporary clone and every run's output
#
# The acceptance targets: the slowdown caught in at least 9 of 10 runs, the
# A/A passed in at least 9 of 10, and an idle run under 3 minutes. It needs
# git and Go, no GPU and no network (once the module cache is filled). The
# busy processes are killed on exit, however the script ends.
set -eu

n=10 idle=0 busy=2 keep=0
while [ $# -gt 0 ]; do
	case $1 in
	-n) n=${2:?-n needs a count}; shift 2 ;;
	--idle) idle=${2:?--idle needs a count}; shift 2 ;;
	--busy) busy=${2:?--busy needs a count}; shift 2 ;;
	--keep) keep=1; shift ;;
	-h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "cpu-under-load.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
for v in "$n" "$idle" "$busy"; do
	case $v in '' | *[!0-9]*) echo "cpu-under-load.sh: counts must be non-negative integers" >&2; exit 2 ;; esac
done

src=$(git rev-parse --show-toplevel)
work=$(mktemp -d "${TMPDIR:-/tmp}/cpu-under-load.XXXXXX")
spinners=""

stop_busy() {
	for p in $spinners; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	spinners=""
}
start_busy() {
	b=0
	while [ "$b" -lt "$busy" ]; do
		sh -c 'while :; do :; done' &
		spinners="$spinners $!"
		b=$((b + 1))
	done
}
cleanup() {
	stop_busy
	if [ "$keep" = 1 ]; then
		echo "kept $work"
	else
		# check's worktrees live in its own temporary directory; the clone's
		# are gone with it.
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc)
[ "$cores" = 2 ] || echo "note: this machine has $cores cores; the targets are for a 2-core runner" >&2

# The clone: main is this repository's HEAD (committed work only).
repo=$work/repo
git clone -q --no-hardlinks "$src" "$repo"
cd "$repo"
git checkout -q -B main "$(git -C "$src" rev-parse HEAD)"
git config user.name cpu-under-load
git config user.email cpu-under-load@localhost
rms=kernels/rmsnorm.go
inv='			inv := float32(1 / math.Sqrt(float64(ss/float32(cols))+rmsNormEps))'
if [ "$(grep -cxF "$inv" "$rms")" != 1 ]; then
	echo "cpu-under-load.sh: $rms no longer has the line the slowdown goes before:" >&2
	echo "$inv" >&2
	exit 2
fi

# aa: identical code.
git checkout -q -b aa main
sed -i 's|^// rmsNormFused reads each row twice from cache|// rmsNormFused (an identical change) reads each row twice from cache|' "$rms"
git diff --quiet && { echo "cpu-under-load.sh: the A/A edit changed nothing in $rms" >&2; exit 2; }
git commit -qam "A/A: a comment"

# slow: RMSNorm fused reads the first half of each row once more; the sum
# of squares is never negative, so the branch never runs but the pass stays.
git checkout -q -b slow main
tab=$(printf '\t')
sed -i "s|^$inv\$|$tab$tab${tab}var extra float32 // the slowdown: half of the row read once more\\
$tab$tab${tab}for c0 := 0; c0 < cols/2; c0 += tile {\\
$tab$tab$tab${tab}extra += sumSq32(x.load(base+c0, min(tile, cols/2-c0), \\&tx))\\
$tab$tab$tab}\\
$tab$tab${tab}if extra < 0 {\\
$tab$tab$tab${tab}ss = 0\\
$tab$tab$tab}\\
&|" "$rms"
git diff --quiet && { echo "cpu-under-load.sh: the slowdown edit changed nothing in $rms" >&2; exit 2; }
gofmt -l "$rms" | grep -q . && { echo "cpu-under-load.sh: the slowdown edit is not gofmt-clean" >&2; exit 2; }
git commit -qam "slow: CPU RMSNorm fused reads half of each row once more"
go vet ./kernels/ >/dev/null
git checkout -q main

echo "cpu-under-load: $(git -C "$src" log -1 --format='%h %s') on $cores cores ($(uname -m)); $n runs of each kind with $busy busy processes"

# rms_rows prints the sec/op rows of RMSNorm's fused kernels from a text
# report on standard input.
rms_rows() {
	awk '$2 == "baseline" { unit = $1 } unit == "sec/op" && $1 ~ /^RMSNorm\/dtype=[a-z0-9]+\/rows=256\/cols=4096\/impl=fused$/'
}

# run KIND I BRANCH LOADED: one main job on BRANCH; prints a line and sets code.
run() {
	kind=$1 i=$2 branch=$3 loaded=$4
	git checkout -q "$branch"
	out=$work/$kind-$i
	[ "$loaded" = 1 ] && start_busy
	load0=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
	t0=$(date +%s)
	set +e
	go run ./cmd/regress --quiet --wide >"$out.txt" 2>"$out.err"
	code=$?
	set -e
	t1=$(date +%s)
	load1=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
	stop_busy
	rmsv=$(rms_rows <"$out.txt" |
		awk '{ d = "?"; for (i = 2; i <= NF; i++) if ($i ~ /^[+-][0-9.]+%$/) { d = $i; break } }
			{ v = "unchanged"; if (/regression/) v = "regression"; else if (/improvement/) v = "improvement"; else if (/inconclusive/) v = "inconclusive" }
			{ sub(/^RMSNorm\//, "", $1); sub(/\/rows=256\/cols=4096\/impl=fused$/, "", $1); printf "%s %s %s  ", $1, d, v }')
	last=$(tail -n 1 "$out.txt")
	others=$(awk '$2 == "baseline" { unit = $1 } / ✗ / && $1 !~ /^RMSNorm\// { printf "%s (%s) ", $1, unit }' "$out.txt")
	[ -n "$others" ] && rmsv="$rmsv  other gated regressions: $others"
	printf '%-5s %2d  exit %d  %4ds  load %s→%s  RMSNorm fused sec/op: %s\n        %s\n' "$kind" "$i" "$code" $((t1 - t0)) "$load0" "$load1" "$rmsv" "$last"
	[ "$code" -le 1 ] || sed 's/^/        /' "$out.err" | tail -n 5
}

i=1
while [ "$i" -le "$idle" ]; do
	run idle "$i" aa 0
	i=$((i + 1))
done
caught=0 passed=0
i=1
while [ "$i" -le "$n" ]; do
	run aa "$i" aa 1
	[ "$code" = 0 ] && passed=$((passed + 1))
	run slow "$i" slow 1
	if [ "$code" = 1 ] && rms_rows <"$work/slow-$i.txt" | grep -q regression; then
		caught=$((caught + 1))
	fi
	i=$((i + 1))
done
git checkout -q main
echo "caught $caught/$n slowdowns, A/A passed $passed/$n (under $busy busy processes)"
