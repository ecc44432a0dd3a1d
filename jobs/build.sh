#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configures and builds jsmf (Release) in ./build. Usage: jobs/build.sh [extra cmake args]
# JSMF_TARGETS: what to build (default: everything, tests and benchmarks included; the
# quick start builds only the binary and its man pages: "jsmf jsmf_man").
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${JSMF_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
targets=()
for target in ${JSMF_TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$build" -j "$(getconf _NPROCESSORS_ONLN)" "${targets[@]}"
