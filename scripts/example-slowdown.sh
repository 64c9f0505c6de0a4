#!/usr/bin/env bash
# Regenerates testdata/example/slowdown/{main,head}.bench, the README's
# "deliberate slowdown" example: one interleaved regress check of the CPU
# suite's fp32 RMSNorm and GELU at 256x4096 (fused and naive), where the head
# side's fused RMSNorm computes each row's sum of squares twice (about a third
# more work). main.bench is the baseline side, head.bench the current side.
#
#   bash scripts/example-slowdown.sh            # writes testdata/example/slowdown/
#
# It takes about a minute on 2 cores. The figures depend on the machine and
# its load; commit the files together, and update README.md's report
# excerpt if it changes (the doc test says so when it does).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The head side: this tree with the slowdown applied to a copy.
mkdir -p "$work/head"
git ls-files -z | xargs -0 -I{} cp --parents {} "$work/head/"
perl -0pi -e 's/(\t\t\tinv := float32\(1 \/ math\.Sqrt)/\t\t\tvar again float32 \/\/ the deliberate slowdown: a second pass over the row\n\t\t\tfor c0 := 0; c0 < cols; c0 += tile {\n\t\t\t\tagain += sumSq32(x.load(base+c0, min(tile, cols-c0), &tx))\n\t\t\t}\n\t\t\tss = (ss + again) \/ 2\n$1/' \
  "$work/head/kernels/rmsnorm.go"
grep -q 'the deliberate slowdown' "$work/head/kernels/rmsnorm.go" || { echo "example-slowdown: the patch no longer applies to kernels/rmsnorm.go" >&2; exit 2; }

go test -c -o "$work/main.test" ./kernels/
(cd "$work/head" && go test -c -o "$work/head.test" ./kernels/)

code=0
go run ./cmd/regress check --baseline-bin "$work/main.test" --current-bin "$work/head.test" \
  --bench '(RMSNorm|GELU)/dtype=fp32/rows=256/cols=4096/' --benchtime 20ms --count 10 --seed 1 \
  --results "$work/results" --out "$work/report.txt" || code=$?
cat "$work/report.txt"
if [ "$code" -ne 1 ]; then
  echo "example-slowdown: the check exited $code, not 1: the slowdown was not caught; files left unchanged" >&2
  exit 1
fi
mkdir -p "$root/testdata/example/slowdown"
cp "$work/results/baseline.bench" "$root/testdata/example/slowdown/main.bench"
cp "$work/results/current.bench" "$root/testdata/example/slowdown/head.bench"
echo "wrote testdata/example/slowdown/main.bench and head.bench"
