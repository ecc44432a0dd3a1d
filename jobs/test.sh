#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what is missing, builds, and runs every test: unit, MPI at 1-4 ranks, end to
# end, SLURM (build/); then the sanitized build's tests (build-san/: ASan + UBSan, clang)
# and a short run of each fuzz harness. Arguments go to both ctest runs (e.g. -R fit).
# JSMF_SANITIZE_TESTS=0 skips the sanitized part.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cores=$(getconf _NPROCESSORS_ONLN)
bash "$root/jobs/setup.sh" tests
JSMF_BUILD_DIR=$root/build JSMF_TARGETS= bash "$root/jobs/build.sh"
source "$root/jobs/env.sh"

# The sanitized build goes on in the background at the lowest priority while the tests
# run: it takes the cores only when the tests leave them idle (the SLURM test mostly waits).
sanitize=${JSMF_SANITIZE_TESTS:-1}
san_log=$root/build-san.log
# It runs as a process group of its own (job control on for the launch), so that this
# script ending early stops all of it; but in this session: with the kernel's autogroups,
# nice only ranks processes within one session, and a new session (setsid) would get an
# equal share of the cores.
if [[ $sanitize == 1 ]]; then
  set -m
  JSMF_SANITIZE=1 JSMF_BUILD_DIR=$root/build-san JSMF_TARGETS= nice -n 19 bash "$root/jobs/build.sh" \
    > "$san_log" 2>&1 &
  san_build=$!
  set +m
  trap 'kill -- -$san_build 2>/dev/null || true' EXIT
fi

status=0
(cd "$root/build" && ctest --output-on-failure -j "$cores" "$@") || status=$?

if [[ $sanitize == 1 ]]; then
  if ! wait "$san_build"; then
    echo "jsmf test: the sanitized build failed:" >&2
    tail -n 60 "$san_log" >&2
    exit 1
  fi
  trap - EXIT
  echo "jsmf test: the sanitized build (build-san: ASan + UBSan, libFuzzer harnesses)"
  (cd "$root/build-san" && ctest --output-on-failure -j "$cores" -L sanitize "$@") || status=$?
fi
exit $status
