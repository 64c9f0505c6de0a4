#!/usr/bin/env bash
# The whole correctness suite of a prebuilt test binary in SHARDS concurrent processes (the GPU host has no Go),
# so that the float64 references of one process's tests run while another's kernels do.
#
#   OUT=/some/dir [SHARDS=4] [DURATIONS=file] bash scripts/gpu-tests.sh path/to/kernels.test
#
# Run from anywhere; the binary runs in the directory of its package (kernels/ by default, PKG=harness for
# harness.test), where its testdata is. The top-level tests (-test.list) are dealt to the shards longest first
# when DURATIONS names a file of "name seconds" lines (a previous run's $OUT/durations.txt), else round-robin;
# each shard runs with -test.v and, on CUDA builds, -kernels.arena=false (EXTRA): a process's arena would otherwise
# reserve all the device memory that is free when it opens, leaving none to the others. Writes $OUT/shard-<i>.txt,
# $OUT/durations.txt (every top-level test's seconds, slowest first) and one summary line per shard and in all
# on stdout; exits 1 if any shard failed, 2 on bad usage. A CPU build has no arena flag: EXTRA= there (how this
# script was checked on the CPU). On GPU hosts (2026-11-26), the kernels' 74 top-level tests round-robin in 4 shards
# passed in 108–109 s on an H100 and 107–122 s on an H200, against 325 s for one process on the H100.
set -uo pipefail
T=${1:?usage: OUT=dir [SHARDS=n] [DURATIONS=file] bash scripts/gpu-tests.sh path/to/pkg.test}
: "${OUT:?set OUT to the directory for the results}"
SHARDS=${SHARDS:-4}
EXTRA=${EXTRA--kernels.arena=false}
case $SHARDS in '' | *[!0-9]* | 0) echo "gpu-tests: SHARDS=$SHARDS is not a positive integer" >&2; exit 2 ;; esac
if ! [ -f "$T" ] || ! [ -x "$T" ]; then echo "gpu-tests: $T is not an executable test binary" >&2; exit 2; fi
T=$(cd "$(dirname "$T")" && pwd)/$(basename "$T")
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
[ -z "${DURATIONS:-}" ] || [ -r "$DURATIONS" ] || { echo "gpu-tests: DURATIONS=$DURATIONS is not readable" >&2; exit 2; }
cd "$(dirname "$0")/../${PKG:-kernels}" || exit 2

mapfile -t tests < <("$T" -test.list '.*' | grep '^Test')
[ ${#tests[@]} -gt 0 ] || { echo "gpu-tests: $T lists no tests" >&2; exit 2; }
# Deal: longest first, each to the shard with the least so far. Without DURATIONS every test costs 1 (round-robin);
# with it, a test it does not name costs as much as the longest it does.
mapfile -t names < <(printf '%s\n' "${tests[@]}" | awk -v shards="$SHARDS" -v dfile="${DURATIONS:-}" '
  BEGIN { if (dfile != "") while ((getline l < dfile) > 0) { split(l, f, " "); d[f[1]] = f[2] + 0; if (f[2] + 0 > top) top = f[2] + 0 } }
  { n[NR] = $1; c[NR] = dfile == "" ? 1 : ($1 in d ? d[$1] : top) }
  END {
    for (k = 1; k <= NR; k++) for (m = k + 1; m <= NR; m++) if (c[m] > c[k]) { t = c[k]; c[k] = c[m]; c[m] = t; t = n[k]; n[k] = n[m]; n[m] = t }
    for (k = 1; k <= NR; k++) { b = 0; for (i = 1; i < shards; i++) if (load[i] < load[b]) b = i; load[b] += c[k]; out[b] = out[b] (out[b] == "" ? "" : "|") n[k] }
    for (i = 0; i < shards; i++) print out[i]
  }')

t0=$(date +%s)
pids=()
for ((i = 0; i < SHARDS; i++)); do
  [ -n "${names[i]}" ] || continue
  # shellcheck disable=SC2086 # EXTRA is a list of flags
  "$T" -test.run "^(${names[i]})\$" -test.v $EXTRA > "$OUT/shard-$i.txt" 2>&1 &
  pids[i]=$!
done
rc=0
for i in "${!pids[@]}"; do
  wait "${pids[i]}"
  code=$?
  [ $code -eq 0 ] || rc=1
  f=$OUT/shard-$i.txt
  echo "shard $i: exit $code, $(grep -c '^--- PASS' "$f") passed, $(grep -c '^--- FAIL' "$f") failed, $(grep -c '^--- SKIP' "$f") skipped: ${names[i]//|/ }"
  # A shard that failed without a failing test (a panic, a bad flag, a timeout) shows how it ended.
  if [ $code -ne 0 ] && ! grep -q -- '--- FAIL' "$f"; then { head -n 2 "$f"; echo ...; tail -n 4 "$f"; } | sed 's/^/    /'; fi
done
sed -n 's/^--- \(PASS\|FAIL\|SKIP\): \([^ ]*\) (\([0-9.]*\)s)$/\2 \3/p' "$OUT"/shard-*.txt | sort -g -r -k2,2 > "$OUT/durations.txt"
echo "all: exit $rc in $(( $(date +%s) - t0 ))s, $(cat "$OUT"/shard-*.txt | grep -c '^--- PASS') passed, $(cat "$OUT"/shard-*.txt | grep -c '^--- FAIL') failed; slowest: $(head -3 "$OUT/durations.txt" | tr '\n' ' ')"
grep -h -B2 -A12 -- '--- FAIL' "$OUT"/shard-*.txt | head -80
exit $rc
