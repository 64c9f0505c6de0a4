#!/usr/bin/env bash
# Installs the Hopper PTX toolchain: CUDA 12.4's nvcc and ptxas (PTX ISA 8.4: wgmma, cp.async.bulk.tensor,
# setmaxnreg, the sm_90a target) from Debian trixie's non-free nvidia-cuda-toolkit, in a trixie chroot at
# $KERNELWATCH_HOPPER_ROOT (default /opt/kernelwatch-trixie). The host keeps bookworm's CUDA 11.8
# (install-cuda-toolkit.sh), whose headers the cgo build uses; the chroot only compiles kernels/cuda/*_sm90a.cu
# to PTX, through scripts/nvcc-hopper. A chroot rather than trixie packages on the host: a mixed
# bookworm/trixie system would upgrade libc and the compilers under everything else.
#
# Pinned: the toolkit version is HOPPER_TOOLKIT_VERSION below; a chroot that has another one is an error, not
# an upgrade. Idempotent: does nothing when the chroot's nvcc is already that version. Needs root (debootstrap,
# chroot) and the Debian mirror; no GPU.
set -euo pipefail

root=${KERNELWATCH_HOPPER_ROOT:-/opt/kernelwatch-trixie}
mirror=${KERNELWATCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}
HOPPER_TOOLKIT_VERSION=12.4.131~12.4.1-2

installed() {
  [ -x "$root/usr/bin/nvcc" ] && chroot "$root" dpkg-query -W -f '${Version}' nvidia-cuda-toolkit 2>/dev/null
}

if v=$(installed); then
  if [ "$v" = "$HOPPER_TOOLKIT_VERSION" ]; then
    exit 0
  fi
  echo "install-hopper-toolchain: $root has nvidia-cuda-toolkit $v, want $HOPPER_TOOLKIT_VERSION;" \
    "remove $root (or set KERNELWATCH_HOPPER_ROOT) and run again" >&2
  exit 2
fi
if [ "$(id -u)" != 0 ]; then
  echo "install-hopper-toolchain: must run as root (debootstrap, chroot)" >&2
  exit 2
fi
export DEBIAN_FRONTEND=noninteractive
if ! command -v debootstrap >/dev/null 2>&1; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi
if [ ! -x "$root/usr/bin/apt-get" ]; then
  mkdir -p "$root"
  debootstrap --variant=minbase --components=main,contrib,non-free trixie "$root" "$mirror" >/dev/null
fi
# Installs need /proc in the chroot (some maintainer scripts read it); unmounted on the way out.
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc"
trap 'umount "$root/proc" 2>/dev/null || true' EXIT
chroot "$root" apt-get update -qq
chroot "$root" apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends "nvidia-cuda-toolkit=$HOPPER_TOOLKIT_VERSION" >/dev/null
chroot "$root" apt-get clean
chroot "$root" nvcc --version | tail -n 2
