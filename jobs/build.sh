#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configures and builds jsmf (Release) in ./build. Usage: jobs/build.sh [extra cmake args]
# JSMF_TARGETS: what to build (default: everything, tests and benchmarks included; the
# quick start builds only the binary and its man pages: "jsmf jsmf_man").
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${JSMF_BUILD_DIR:-$root/build}
# JSMF_SANITIZE=1: the sanitized build in ./build-san instead (clang, -O1, line tables, ASan + UBSan,
# libFuzzer's instrumentation and the harnesses; no benchmarks): by default only what its
# tests need (target jsmf_sanitized: the binary, unit and MPI tests, fuzz harnesses).
if [[ ${JSMF_SANITIZE:-0} == 1 ]]; then
  build=${JSMF_BUILD_DIR:-$root/build-san}
  set -- -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DJSMF_FUZZ=ON -DJSMF_BUILD_BENCHMARKS=OFF \
         -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
         "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" "$@"
  JSMF_TARGETS=${JSMF_TARGETS:-jsmf_sanitized}
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
targets=()
for target in ${JSMF_TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$build" -j "$(getconf _NPROCESSORS_ONLN)" "${targets[@]}"
