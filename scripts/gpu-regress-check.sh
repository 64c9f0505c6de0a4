#!/usr/bin/env bash
# GPU acceptance runs of `regress check` on prebuilt binaries (issue 4): no Go toolchain and no git needed.
#
# Put in .gpu/ (built elsewhere):
#   regress                     CGO_ENABLED=0 go build -o .gpu/regress ./cmd/regress
#   kernels-base.test           go test -c -tags cuda -o .gpu/kernels-base.test ./kernels/
#   kernels-slow*.test          the same suite with a known slowdown, e.g. kernels-slow3.test (3%), kernels-slow1.test (1%)
#
# Then: OUT=/some/dir bash scripts/gpu-regress-check.sh
#
# It runs COMPARISONS interleaved comparisons of the base binary against the slow ones (taking the slow binaries in
# turn), then AA_RUNS A/A runs (base against itself), and with GPUS set (e.g. GPUS=0,1) times one A/A run on one GPU
# against the same run spread over GPUS. Each run writes $OUT/<name>.json (the report), $OUT/<name>/ (both sides'
# result files) and $OUT/<name>.log (progress and messages). $OUT/summary.tsv has one line per run (name, binaries,
# exit code, wall seconds, verdict, counts, regressions) and $OUT/summary.txt says what was expected and what happened.
#
# Environment: OUT (default ./gpu-out), COMPARISONS (10), AA_RUNS (5), GPUS (unset: no multi-GPU timing),
# REGRESS_FLAGS (default "--device cuda"; e.g. "--device cuda --bench RMSNorm --count 10 --benchtime 200ms"),
# CONFIG (default benchmarks.yaml when present, else none: the gpu-* rules of benchmarks.yaml set the 1.5% threshold).
set -uo pipefail
cd "$(dirname "$0")/.."

G=.gpu
OUT=${OUT:-$PWD/gpu-out}
COMPARISONS=${COMPARISONS:-10}
AA_RUNS=${AA_RUNS:-5}
read -r -a FLAGS <<< "${REGRESS_FLAGS:---device cuda}"
CONFIG=${CONFIG:-}
if [ -z "$CONFIG" ]; then
  if [ -f benchmarks.yaml ]; then CONFIG=benchmarks.yaml; else CONFIG=none; fi
fi
REGRESS=$G/regress
BASE=$G/kernels-base.test
mkdir -p "$OUT"

for f in "$REGRESS" "$BASE"; do
  [ -x "$f" ] || { echo "missing executable $f (see the top of $0)" >&2; exit 2; }
done
mapfile -t SLOW < <(ls "$G"/kernels-slow*.test 2>/dev/null)
if [ "$COMPARISONS" -gt 0 ] && [ "${#SLOW[@]}" -eq 0 ]; then
  echo "no $G/kernels-slow*.test to compare with" >&2; exit 2
fi

{
  echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,temperature.gpu --format=csv 2>&1 || true
  echo "# flags: ${FLAGS[*]} --config $CONFIG"
} > "$OUT/environment.txt"

printf 'name\tbaseline\tcurrent\texit\twall_s\tverdict\tregressions\tunchanged\tother\tregressed\n' > "$OUT/summary.tsv"

# summarize NAME: verdict, counts and the regressed benchmarks of $OUT/NAME.json, tab-separated.
summarize() {
  local json="$OUT/$1.json"
  if [ ! -s "$json" ]; then printf 'none\t-\t-\t-\t-'; return; fi
  if command -v python3 >/dev/null; then
    python3 - "$json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["counts"]
other = sum(v for k, v in c.items() if k not in ("regression", "unchanged"))
reg = [f'{x["name"]} {x["unit"]} {x["delta"]*100:+.2f}%' for x in r["comparisons"] if x["verdict"] == "regression"]
print(f'{r["verdict"]}\t{c["regression"]}\t{c["unchanged"]}\t{other}\t{"; ".join(reg) or "-"}', end="")
PY
  else
    local v n u
    v=$(grep -m1 '"verdict"' "$json" | sed 's/.*: "\(.*\)".*/\1/')
    n=$(grep -m1 '"regression":' "$json" | tr -dc 0-9)
    u=$(grep -m1 '"unchanged":' "$json" | tr -dc 0-9)
    printf '%s\t%s\t%s\t-\t-' "$v" "$n" "$u"
  fi
}

# check NAME CURRENT [extra regress flags...]: one interleaved comparison of BASE with CURRENT.
check() {
  local name=$1 cur=$2; shift 2
  local start end rc
  start=$(date +%s%N)
  "$REGRESS" check --baseline-bin "$BASE" --current-bin "$cur" --config "$CONFIG" \
    --format json --out "$OUT/$name.json" --results "$OUT/$name" "${FLAGS[@]}" "$@" 2> "$OUT/$name.log"
  rc=$?
  end=$(date +%s%N)
  local wall=$(( (end - start) / 1000000 ))
  printf '%s\t%s\t%s\t%d\t%d.%03d\t%s\n' "$name" "$(basename "$BASE")" "$(basename "$cur")" "$rc" \
    $((wall / 1000)) $((wall % 1000)) "$(summarize "$name")" >> "$OUT/summary.tsv"
  echo "$name: exit $rc in $((wall / 1000))s" >&2
}

for ((i = 1; i <= COMPARISONS; i++)); do
  slow=${SLOW[$(( (i - 1) % ${#SLOW[@]} ))]}
  check "$(printf 'cmp-%02d' "$i")-$(basename "$slow" .test)" "$slow"
done
for ((i = 1; i <= AA_RUNS; i++)); do
  check "$(printf 'aa-%02d' "$i")" "$BASE"
done
if [ -n "${GPUS:-}" ]; then
  first=${GPUS%%,*}
  CUDA_VISIBLE_DEVICES=$first check "timing-1gpu" "$BASE"
  check "timing-gpus-${GPUS//,/-}" "$BASE" --gpus "$GPUS"
fi

{
  echo "Expected: every cmp-* run exits 1 and names the slowed benchmarks as regressions (a 1% slowdown is below the"
  echo "1.5% GPU threshold and may rightly pass); every aa-* run exits 0 with 0 regressions; timing-gpus-* takes"
  echo "less wall time than timing-1gpu."
  echo
  column -t -s $'\t' "$OUT/summary.tsv" 2>/dev/null || cat "$OUT/summary.tsv"
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
