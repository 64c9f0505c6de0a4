#!/usr/bin/env bash
# Issue 10's GPU runs: what a whole-suite check costs and what it detects, on one GPU, with prebuilt binaries
# (the GPU host has no Go and no git).
#
# Build here (scripts/install-cuda-toolkit.sh for the headers), then pack, since the device tool carries at most
# 64 MiB with the working tree:
#   go test -c -tags cuda -ldflags='-s -w' -o .gpu/kernels.test ./kernels/
#   go test -c -tags cuda -ldflags='-s -w' -o .gpu/harness.test ./harness/      (the backends' own tests)
#   go test -c -tags cuda,kwslowdown -ldflags='-s -w' -o .gpu/kernels-slow.test ./kernels/
#   CGO_ENABLED=0 go build -ldflags='-s -w' -o .gpu/regress ./cmd/regress
#   (optional) the suite before the change as .gpu/kernels-old.test, for the 'old' phase
#   tar czf .gpu.tgz -C .gpu . && rm -rf .gpu/* && mv .gpu.tgz .gpu/bins.tgz
# On the GPU host:
#   OUT=/some/dir bash scripts/gpu-speed.sh PHASE...
#
# tests     every correctness test of the suite (fill generator included; TESTS narrows them) and the slowed
#           variant's own.
# probe     one process of the whole suite at -benchtime 1x (adaptive): its wall time and costs line.
# bench     the same for the benchmarks BENCH selects (a -test.bench pattern): first figures of new families.
# old       the same selection (OLD_BENCH) in one process of the old binary at its default (200x) and of the new
#           one (1x): the per-process cost before and after, to scale to a whole check.
# aa        AA_RUNS whole-suite checks of the binary against itself at the default count.
# calibrate what each pass of SLOWDOWN_CAL costs its case (TestSlowdownCalibrate; cold and hot figures).
# detect    DETECT_RUNS whole-suite checks of the binary against the slowed variant with KW_SLOWDOWN=$SLOWDOWN
#           (NAME@auto:RATIO picks the calibrated pass closest to RATIO).
# baseline  regress run --count 10 of the whole suite into $OUT/<class>.bench.
# stored    regress check --mode stored against baselines/<class>.bench (or $STORED), judged with the
#           <class>.floors.json beside it.
# placement what buffer placement does (harness/placement.go): whole-suite processes of the plain suite and of
#           the unrelated-change variants (kernels-spin.test, kernels-grow.test from scripts/unrelated-change.sh)
#           with the driver's placement (-kernels.arena=false) and the arena, interleaved; FFN t=512 alone and
#           after Softmax; the same FFN with the arena shifted by PLACEMENT_SKEWS bytes. Raw outputs in
#           $OUT/placement/, compared offline.
# unrelated UNRELATED_RUNS whole-suite checks of the plain suite against each variant in VARIANTS (spin grow):
#           the summary counts fail-gated verdicts outside the changed family (RMSNorm) and lists the family's.
# Every check writes $OUT/<name>.json and <name>.log; $OUT/summary.tsv has one line per check (exit, wall
# seconds, regressions, the costs line). Bring $OUT back as one archive.
set -uo pipefail
cd "$(dirname "$0")/.."
G=${G:-.gpu}
OUT=${OUT:-$PWD/gpu-out}
AA_RUNS=${AA_RUNS:-1}
DETECT_RUNS=${DETECT_RUNS:-1}
SLOWDOWN=${SLOWDOWN:-}
SLOWDOWN_CAL=${SLOWDOWN_CAL:-}
OLD_BENCH=${OLD_BENCH:-'/dtype=fp32/rows=32768/cols=4096/'}
CHECK_FLAGS=${CHECK_FLAGS:---device cuda}
REGRESS=$G/regress
BASE_BIN=$G/kernels.test
mkdir -p "$OUT"
[ -f "$G/bins.tgz" ] && { tar xzf "$G/bins.tgz" -C "$G" && rm -f "$G/bins.tgz"; }
log() { echo "$(date -u +%H:%M:%S) $*" | tee -a "$OUT/progress.txt" >&2; }
[ -f "$OUT/summary.tsv" ] || printf 'name\texit\twall_s\tregressions\ttime\n' > "$OUT/summary.tsv"
{
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
  nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,temperature.gpu --format=csv 2>&1 || true
} >> "$OUT/environment.txt"

tests() {
  local rc=0
  $G/kernels.test -test.run "${TESTS:-Test}" > "$OUT/tests.txt" 2>&1 || rc=1
  $G/kernels-slow.test -test.run 'TestSlowdown(Spec|Output)' > "$OUT/tests-slow.txt" 2>&1 || rc=1
  if [ -x $G/harness.test ]; then
    $G/harness.test -test.run Test >> "$OUT/tests.txt" 2>&1 || rc=1
  fi
  log "tests: $(tail -1 "$OUT/tests.txt") / $(tail -1 "$OUT/tests-slow.txt")"
  [ $rc = 0 ] || grep -B2 -A8 -- '--- FAIL' "$OUT/tests.txt" | head -60 >&2
  return $rc
}

# one NAME BIN BENCH BENCHTIME: one process, its wall time and costs line.
one() {
  local t0 rc
  t0=$(date +%s%N)
  $2 -test.run '^$' -test.bench "$3" -test.benchtime "$4" > "$OUT/$1.txt" 2> "$OUT/$1.err"
  rc=$?
  log "$1: exit $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms, $(grep -c '^Benchmark' "$OUT/$1.txt") results; $(grep '^kernelwatch-costs' "$OUT/$1.txt")"
}

probe() { one probe $G/kernels.test . 1x; }

bench() { one bench $G/kernels.test "${BENCH:?bench: set BENCH to a -test.bench pattern}" 1x; }

old() {
  [ -x $G/kernels-old.test ] || { log "old: no $G/kernels-old.test"; return 1; }
  one old-200x $G/kernels-old.test "$OLD_BENCH" 200x
  one new-1x $G/kernels.test "$OLD_BENCH" 1x
}

# check NAME CURRENT [extra regress flags]: one interleaved whole-suite comparison of the binary with CURRENT.
check() {
  local name=$1 cur=$2 t0 rc wall regs
  shift 2
  t0=$(date +%s%N)
  "$REGRESS" check ${BASE_BIN:+--baseline-bin "$BASE_BIN"} --current-bin "$cur" --config benchmarks.yaml $CHECK_FLAGS "$@" \
    --format json --out "$OUT/$name.json" --results "$OUT/$name" 2> "$OUT/$name.log"
  rc=$?
  wall=$(( ($(date +%s%N) - t0) / 1000 ))
  regs=$(python3 - "$OUT/$name.json" 2>/dev/null <<'PY' || echo "no report"
import json, sys
r = json.load(open(sys.argv[1]))
bad = [f'{c["name"]} {c["unit"]} {100 * c["delta"]:+.2f}% {c["verdict"]}' for c in r["comparisons"]
       if c["verdict"] in ("regression", "improvement", "failed", "inconclusive") and c.get("gate") == "fail"]
print("; ".join(bad) or "-")
PY
)
  printf '%s\t%d\t%d.%06d\t%s\t%s\n' "$name" "$rc" $((wall / 1000000)) $((wall % 1000000)) "$regs" \
    "$(grep -o 'time: .*' "$OUT/$name.log" | tail -1)" >> "$OUT/summary.tsv"
  log "$name: exit $rc in $((wall / 1000000))s: $regs | $(grep -o 'time: .*' "$OUT/$name.log" | tail -1)"
}

aa() {
  local i
  for ((i = 1; i <= AA_RUNS; i++)); do check "$(printf 'aa-%02d' "$i")" $G/kernels.test; done
}

calibrate() {
  [ -n "$SLOWDOWN_CAL" ] || { log "calibrate: SLOWDOWN_CAL not set"; return 1; }
  KW_CALIBRATE="$SLOWDOWN_CAL" $G/kernels-slow.test -test.run TestSlowdownCalibrate -test.v > "$OUT/calibrate.txt" 2>&1
  log "calibrate: $(grep -c '^calibrate' "$OUT/calibrate.txt") lines"
  grep '^calibrate' "$OUT/calibrate.txt" >&2
}

# pick: SLOWDOWN with each NAME@auto:RATIO replaced by the pass of NAME whose measured cold ratio in
# calibrate.txt is closest to RATIO.
pick() {
  python3 - "$OUT/calibrate.txt" "$SLOWDOWN" <<'PY'
import re, sys
cal = {}
for l in open(sys.argv[1]) if __import__("os").path.exists(sys.argv[1]) else []:
    m = re.match(r"calibrate (\S+) extra=(\S+) median=\S+ ratio=(\S+)", l)
    if m and m.group(2) != "0":
        cal.setdefault(m.group(1), []).append((m.group(2), float(m.group(3))))
out = []
for e in filter(None, (x.strip() for x in sys.argv[2].split(";"))):
    name, _, p = e.partition("@")
    if p.startswith("auto:"):
        target = float(p[5:])
        if name not in cal:
            sys.exit(f"no calibration of {name}")
        p = min(cal[name], key=lambda c: abs(c[1] - target))[0]
    out.append(f"{name}@{p}")
print(";".join(out))
PY
}

detect() {
  [ -n "$SLOWDOWN" ] || { log "detect: SLOWDOWN not set"; return 1; }
  SLOWDOWN=$(pick) || return 1
  log "detect: KW_SLOWDOWN=$SLOWDOWN"
  printf '#!/bin/sh\nKW_SLOWDOWN=%s exec "$(dirname "$0")/kernels-slow.test" "$@"\n' "'$SLOWDOWN'" > $G/kernels-slowed.test
  chmod +x $G/kernels-slowed.test
  local i
  for ((i = 1; i <= DETECT_RUNS; i++)); do check "$(printf 'detect-%02d' "$i")" $G/kernels-slowed.test; done
}

baseline() {
  local t0 class
  t0=$(date +%s%N)
  "$REGRESS" run --bin $G/kernels.test --config benchmarks.yaml $CHECK_FLAGS --count 10 --out "$OUT/baseline.bench" \
    2> "$OUT/baseline.log"
  log "baseline: exit $?, $(( ($(date +%s%N) - t0) / 1000000000 ))s, $(grep -c '^Benchmark' "$OUT/baseline.bench") results; $(grep -o 'time: .*' "$OUT/baseline.log")"
  class=$(grep -m1 '^class: ' "$OUT/baseline.bench" | cut -d' ' -f2)
  [ -n "$class" ] && cp "$OUT/baseline.bench" "$OUT/$class.bench"
}

stored() {
  local f=${STORED:-}
  if [ -z "$f" ]; then
    local class
    class=$(grep -m1 '^class: ' "$OUT/baseline.bench" 2>/dev/null | cut -d' ' -f2)
    f=baselines/$class.bench
  fi
  BASE_BIN= check stored $G/kernels.test --mode stored --baseline-file "$f"
}

placement() {
  local d=$OUT/placement i v a
  mkdir -p "$d"
  for i in 1 2; do
    for a in false true; do
      for v in kernels kernels-spin kernels-grow; do
        [ $i = 2 ] && [ $v = kernels-grow ] && continue
        one "placement/suite-$v-arena$a-$i" "$G/$v.test -kernels.arena=$a" . 1x
      done
      one "placement/ffn-arena$a-$i" "$G/kernels.test -kernels.arena=$a" 'FFN/dtype=bf16/tokens=512/' 1x
      one "placement/softmax-ffn-arena$a-$i" "$G/kernels.test -kernels.arena=$a" 'Softmax|FFN/dtype=bf16/tokens=512/' 1x
    done
  done
  for a in ${PLACEMENT_SKEWS:-0 256 4096 65536 1048576 2097152 3145728 8388608 33554432}; do
    one "placement/ffn-skew$a" "$G/kernels.test -kernels.arena-skew=$a" 'FFN/dtype=bf16/tokens=512/' 1x
  done
}

unrelated() {
  local v i
  for v in ${VARIANTS:-spin grow}; do
    [ -x "$G/kernels-$v.test" ] || { log "unrelated: no $G/kernels-$v.test (scripts/unrelated-change.sh $v)"; return 1; }
    for ((i = 1; i <= ${UNRELATED_RUNS:-1}; i++)); do
      check "$(printf 'unrelated-%s-%02d' "$v" "$i")" "$G/kernels-$v.test"
      python3 - "$OUT/$(printf 'unrelated-%s-%02d' "$v" "$i").json" "${FAMILY:-RMSNorm}" <<'PY' | tee -a "$OUT/unrelated.txt" >&2
import json, sys
r = json.load(open(sys.argv[1]))
fam = sys.argv[2] + "/"
out = [c for c in r["comparisons"] if not c["name"].startswith(fam)]
inn = [c for c in r["comparisons"] if c["name"].startswith(fam)]
flag = lambda c: c["verdict"] in ("regression", "improvement")
print(sys.argv[1].rsplit("/", 1)[-1], "outside", sys.argv[2] + ":",
      sum(flag(c) and c.get("gate") == "fail" for c in out), "fail-gated,",
      sum(flag(c) and c.get("gate") != "fail" for c in out), "warn-gated verdicts of", len(out))
for c in out:
    if flag(c):
        print("  outside", c["name"], c["unit"], f'{100 * c["delta"]:+.2f}%', c["verdict"], c.get("gate"))
for c in inn:
    if c["unit"] == "sec/op" and c.get("gate") == "fail":
        moved = abs(c["delta"]) > c["threshold"]
        print("  " + sys.argv[2], c["name"], f'{100 * c["delta"]:+.2f}% (threshold {100 * c["threshold"]:.1f}%)',
              c["verdict"], "MOVED" if moved else "")
PY
    done
  done
}

for p in "$@"; do
  case $p in
    tests | probe | bench | old | aa | calibrate | detect | baseline | stored | placement | unrelated) "$p" || log "$p: failed" ;;
    *) echo "unknown phase $p" >&2; exit 2 ;;
  esac
done
log "done"
