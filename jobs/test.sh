#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what is missing, builds, and runs every test (unit, MPI at 1-4 ranks, e2e).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/jobs/setup.sh"
bash "$root/jobs/build.sh"
source "$root/jobs/env.sh"
cd "$root/build"
ctest --output-on-failure -j "$(getconf _NPROCESSORS_ONLN)" "$@"
