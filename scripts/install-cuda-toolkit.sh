#!/usr/bin/env bash
# Installs the CUDA 11.8 toolkit (nvcc, cuda.h, libcuda.so stubs) from Debian bookworm's non-free
# nvidia-cuda-toolkit package. kernelwatch needs it to compile the `cuda` build tag (gorgonia.org/cu v0.9.6
# builds against CUDA 11.8/12.x headers, not CUDA 13) and to regenerate the embedded PTX. No GPU is needed.
# Idempotent: does nothing when nvcc and cuda.h are already there.
set -euo pipefail
if command -v nvcc >/dev/null 2>&1 && [ -f /usr/include/cuda.h ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "install-cuda-toolkit: must run as root (apt-get)" >&2
  exit 2
fi
src=/etc/apt/sources.list.d/debian.sources
if [ -f "$src" ] && ! grep -q 'non-free' "$src"; then
  sed -i 's/Components: main$/Components: main contrib non-free non-free-firmware/' "$src"
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends nvidia-cuda-toolkit >/dev/null
nvcc --version | tail -n 2
