#!/usr/bin/env bash
# Builds a variant of the CUDA suite that differs from the working tree in ONE family's module only, for the
# unrelated-change test: a whole-suite check of the plain suite against the variant must flag nothing outside
# that family (scripts/gpu-speed.sh, phase unrelated, runs it on a GPU host and counts).
#
#   scripts/unrelated-change.sh VARIANT OUT
#
# VARIANT:
#   grow   64 dead kernels appended to cuda/rmsnorm.cu (an early family): its module grows from ~0.5 to several
#          MB, nothing it runs changes. What a change that adds code to one family does to the others' placement.
#   spin   cuda/rmsnorm.cu compiled with -DKW_SLOWDOWN -DKW_SPIN_CYCLES=$SPIN (default 380): thread 0 of every
#          block of every RMSNorm kernel of the compute_75 module spins that many cycles before the block ends.
#          On an H100 (1.98 GHz) 380 cycles are ~190 ns: +3% of the 6.3 µs fused fp32 32×4096 decode kernel. A
#          changed kernel in one family.
# OUT: the variant's test binary (go test -c -tags cuda), e.g. .gpu/kernels-spin.test.
#
# Needs nvcc from CUDA 11.8 (scripts/install-cuda-toolkit.sh). The build happens in a temporary copy of the
# working tree; the script checks that exactly one embedded PTX file differs from the working tree's.
set -euo pipefail
variant=${1:?usage: unrelated-change.sh grow|spin OUT}
out=${2:?usage: unrelated-change.sh grow|spin OUT}
SPIN=${SPIN:-380}
root=$(cd "$(dirname "$0")/.." && pwd)
case $out in /*) ;; *) out=$PWD/$out ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The working tree as it is (tracked and untracked-not-ignored files), without .git and build outputs.
(cd "$root" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$tmp")
cd "$tmp/kernels"
case $variant in
grow)
  {
    echo
    echo "// unrelated-change variant 'grow': dead kernels that only make this module larger."
    for i in $(seq 0 63); do
      cat <<CU
extern "C" __global__ void kw_dead_$i(float* p, long long n, double s) {
    float a = (float)s + $i.0f;
#pragma unroll 160
    for (int k = 0; k < 160; k++) {
        long long j = (threadIdx.x + (long long)blockIdx.x * blockDim.x) * 160 + k;
        if (j < n) {
            a = fmaf(a, 1.0001f + $i.0f * 1e-6f, p[j] * (float)(k + $i));
            p[j] = a * (float)s - (float)k;
        }
    }
}
CU
    done
  } >> cuda/rmsnorm.cu
  nvcc -ptx -arch=compute_75 -o cuda/ptx/rmsnorm.ptx cuda/rmsnorm.cu
  ;;
spin)
  nvcc -ptx -arch=compute_75 -DKW_SLOWDOWN -DKW_SPIN_CYCLES="$SPIN" -o cuda/ptx/rmsnorm.ptx cuda/rmsnorm.cu
  ;;
*)
  echo "unrelated-change.sh: unknown variant $variant (grow or spin)" >&2
  exit 2
  ;;
esac
changed=$( (diff -rq "$root/kernels/cuda/ptx" cuda/ptx || true) | wc -l)
if [ "$changed" != 1 ]; then
  diff -rq "$root/kernels/cuda/ptx" cuda/ptx >&2 || true
  echo "unrelated-change.sh: $changed embedded modules differ, want exactly 1" >&2
  exit 1
fi
mkdir -p "$(dirname "$out")"
go test -c -tags cuda -ldflags='-s -w' -o "$out" .
echo "$variant: $( (diff -rq "$root/kernels/cuda/ptx" cuda/ptx || true) | awk '{print $4}') $(wc -c < "$root/kernels/cuda/ptx/rmsnorm.ptx") -> $(wc -c < cuda/ptx/rmsnorm.ptx) bytes; $out"
