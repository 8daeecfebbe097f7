#!/usr/bin/env bash
# Installs the Debian 12 packages rlvr needs to build, test and run.
# Idempotent: does nothing when everything is present; otherwise runs
# `apt-get update` once and installs only what is missing. Run as root.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git ca-certificates
  libopenblas-dev libopenblas-openmp-dev libinih-dev libjansson-dev librandom123-dev
  libopenmpi-dev openmpi-bin libpmix-dev
  libhdf5-openmpi-dev hdf5-tools libdeflate-dev libisal-dev
  libgit2-dev libseccomp-dev libexpat1-dev tcc libpcre2-dev libutf8proc-dev
  util-linux iproute2 unzip xxd squashfs-tools squashfuse
  slurm-wlm munge
  chromium
  python3-torch python3-h5py python3-numpy python3-venv python3-pytest
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "deps: missing packages: ${missing[*]}" >&2
  echo "deps: run this script as root (it uses apt-get install)" >&2
  exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
