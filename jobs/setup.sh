#!/bin/sh
# Install the Debian 12 dependencies (as root), configure and build pairbound.
set -e
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
  build-essential autoconf automake libtool pkg-config autoconf-archive \
  libopenmpi-dev openmpi-bin libhdf5-openmpi-dev hdf5-tools \
  libgsl-dev check libinih-dev libcsv-dev nettle-dev libxxhash-dev xxhash librandom123-dev libglpk-dev time procps gnuplot-nox gdb \
  clang libclang-rt-dev libomp-dev slurmctld slurmd slurm-client munge \
  dataset-fashion-mnist python3-sklearn python3-h5py python3-numpy python3-xxhash > /dev/null
autoreconf -fi
./configure -q
make -j"$(nproc)"
