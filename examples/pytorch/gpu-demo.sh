#!/usr/bin/env bash
# gpu-demo.sh REGRESS [OUT]: the PyTorch / Triton example through regress
# check on a GPU host, twice: an A/A (two commits with the same kernel:
# regress must pass, exit 0) and a 15% slowdown of the Triton kernel
# (regress must flag it, exit 1).
#
# REGRESS is a regress binary (built elsewhere with go build ./cmd/regress:
# the GPU host needs no Go). The host needs git, python3 with torch and
# triton, and a CUDA GPU. The script copies the example into a new git
# repository in a temporary directory with three branches —
#
#   main:  the example as it is
#   same:  an identical change (a comment)
#   slow:  SLOWDOWN = 1.15 in bench_rmsnorm.py: the Triton kernel launches
#          15% more programs, so it reads and writes 15% more
#
# — and runs regress check --current same, then --current slow, each in
# worktrees of the two commits, interleaved. Reports and result files go to
# OUT (default ./kernelwatch-pytorch-demo): aa.txt, aa/ (baseline.bench,
# current.bench, report.json), slow.txt, slow/. COUNT (default 10) sets the
# rounds, SEED the seed. Exit 0 when both verdicts are as expected.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 REGRESS [OUT]" >&2
  exit 2
fi
for tool in git python3 sed; do
  command -v "$tool" >/dev/null || { echo "$0: needs $tool (regress check compares two git commits)" >&2; exit 2; }
done
regress=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -x "$regress" ] || { echo "$0: $1 is not an executable regress binary" >&2; exit 2; }
out=${2:-$PWD/kernelwatch-pytorch-demo}
mkdir -p "$out"
out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
count=${COUNT:-10}
seed=${SEED:-$(date +%s)}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repo=$work/rmsnorm
mkdir "$repo"
cp "$here/bench_rmsnorm.py" "$here/kwbench.py" "$here/benchmarks.yaml" "$repo/"
cd "$repo"
git init -q -b main
git config user.name "kernelwatch demo"
git config user.email "demo@localhost"
git add -A
git commit -qm "RMSNorm: Triton kernel and its eager form"

git checkout -qb same
sed -i '2i # An identical change: the kernel is the same.' bench_rmsnorm.py
git commit -qam "an identical change"

git checkout -qb slow main
sed -i 's/^SLOWDOWN = 1\.0 /SLOWDOWN = 1.15 /' bench_rmsnorm.py
grep -q '^SLOWDOWN = 1.15 ' bench_rmsnorm.py || { echo "$0: could not set SLOWDOWN in bench_rmsnorm.py" >&2; exit 2; }
git commit -qam "RMSNorm: 15% more work"
git checkout -q main

echo "== GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || echo 'nvidia-smi did not answer')"
echo "== python3: $(python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' 2>&1 | tail -1)"

check() { # name ref
  local rc=0
  echo "== regress check --current $2 (count $count, seed $seed)"
  "$regress" check --current "$2" --count "$count" --seed "$seed" --results "$out/$1" > "$out/$1.txt" || rc=$?
  cat "$out/$1.txt"
  echo "== exit $rc"
  return "$rc"
}

aa=0; check aa same || aa=$?
slow=0; check slow slow || slow=$?

echo
echo "A/A (identical kernel):    exit $aa (want 0)"
echo "15% slower Triton kernel:  exit $slow (want 1)"
echo "reports and result files:  $out"
[ "$aa" = 0 ] && [ "$slow" = 1 ]
