#!/usr/bin/env bash
# Regenerates the sm_90a PTX modules (harness/cuda/ptx/*_sm90a.ptx: the wgmma probe; kernels/cuda/ptx/*_sm90a.ptx)
# with the Hopper toolchain (CUDA 12.4 in the chroot of install-hopper-toolchain.sh; root) and records their
# sources' and PTX's hashes in each package's cuda/ptx/sm90a.sum, which TestSM90aPTXRecorded (a CPU test, part of
# go test ./...) checks: CI does not install the 5 GB toolchain, so the record is how it sees a .cu changed
# without its PTX. Commit the .ptx and sm90a.sum with the sources.
set -euo pipefail
cd "$(dirname "$0")/.."
go generate -tags hopperptx ./harness/ ./kernels/
KERNELWATCH_RECORD_SM90A=1 go test ./harness/ ./kernels/ -run '^TestSM90aPTXRecorded$' -count=1 >/dev/null
cat harness/cuda/ptx/sm90a.sum kernels/cuda/ptx/sm90a.sum
