#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configures and builds jsmf (Release) in ./build. Usage: jobs/build.sh [extra cmake args]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${JSMF_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build" -j "$(getconf _NPROCESSORS_ONLN)"
