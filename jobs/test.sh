#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what is missing, builds, and runs every test: unit, MPI at 1-4 ranks, end to
# end, SLURM (build/), and the numerical tests (label "kernels") again with OpenBLAS forced
# to another CPU's kernels, in the same ctest run; then the sanitized build's tests (build-san/: ASan + UBSan,
# clang) and a short run of each fuzz harness. Arguments go to every ctest run (e.g. -R
# fit). JSMF_SANITIZE_TESTS=0 skips the sanitized part; JSMF_KERNEL_TESTS=0 the second
# kernel. Prints how long each part took (tests/README.md has the figures).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cores=$(getconf _NPROCESSORS_ONLN)
started=$(date +%s) last=$started
# The machine's busy CPU time (all processes, in clock ticks) beside each part's wall time:
# a part that used much less than cores x seconds waited (on MPI's starts, SLURM, signals).
# (printf: mawk prints sums past 2^31 in exponent form, which bash's arithmetic refuses)
busy_ticks() { awk '/^cpu / { printf "%.0f\n", $2 + $3 + $4 + $7 + $8 }' /proc/stat 2>/dev/null || echo 0; }
ticks=$(getconf CLK_TCK) started_busy=$(busy_ticks) last_busy=$started_busy
timings=()
took() {
  local now busy; now=$(date +%s) busy=$(busy_ticks)
  timings+=("$(printf '%-52s %5d s %6d core-s' "$1" $((now - last)) $(((busy - last_busy) / ticks)))")
  last=$now last_busy=$busy
}

bash "$root/jobs/setup.sh" tests
took "setup (jobs/setup.sh tests)"
source "$root/jobs/env.sh"

# Another CPU's BLAS kernels: the tests that compare with stored files or across rank
# counts must hold there too (a file written under SkylakeX's kernels once failed under
# Haswell's). Sandybridge's (AVX) unless those are this run's, then Prescott's (SSE3);
# both run on any x86-64 CPU that has the instructions. Elsewhere, said and skipped. The
# build registers each test of label "kernels" again as TEST.KERNEL with that kernel forced
# (tests/CMakeLists.txt), so they run in the one ctest run below, beside the rest.
other_kernel() {
  [[ $(uname -m) == x86_64 ]] || return 1
  if grep -qw avx /proc/cpuinfo && [[ ${OPENBLAS_CORETYPE:-} != Sandybridge ]]; then echo Sandybridge; else echo Prescott; fi
}
kernel=
if [[ ${JSMF_KERNEL_TESTS:-1} == 1 ]]; then
  if kernel=$(other_kernel); then
    echo "jsmf test: the numerical tests (label kernels) also run as TEST.$kernel, under OpenBLAS's $kernel kernels"
  else
    kernel=
    echo "jsmf test: no second BLAS kernel to force on $(uname -m); the kernels' copies are skipped"
  fi
fi
JSMF_BUILD_DIR=$root/build JSMF_TARGETS= bash "$root/jobs/build.sh" -DJSMF_BUILD_TESTS=ON -DJSMF_BUILD_BENCHMARKS=ON \
  "-DJSMF_KERNEL_CORETYPE=$kernel"
took "build (build/: library, binary, tests)"

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

# As many ctest slots as cores. (One more, while every refused input's mpirun waited 2 s for
# nothing, kept the cores busy: 563 s where slots = cores took 1,023 s. Since the tests'
# environment sets that wait to 0, cmake/JsmfTesting.cmake, the tests alone use the same
# 840 core-s at 2 or 3 slots, 587 s and 509 s of wall time, and the third slot only takes
# the idle time the sanitized build beside them needs: in CI, at 3 slots, the tests and that
# build took 1,100 s together, 122 s of it waiting for the build, and 2,187 core-s.)
status=0
(cd "$root/build" && ctest --output-on-failure -j "$cores" "$@") || status=$?
took "tests (ctest, OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}; the copies ${kernel:-none})"


if [[ $sanitize == 1 ]]; then
  if ! wait "$san_build"; then
    echo "jsmf test: the sanitized build failed:" >&2
    tail -n 60 "$san_log" >&2
    exit 1
  fi
  trap - EXIT
  took "waiting for the sanitized build (beside the tests)"
  echo "jsmf test: the sanitized build (build-san: ASan + UBSan, libFuzzer harnesses)"
  (cd "$root/build-san" && ctest --output-on-failure -j "$((cores + 1))" -L sanitize "$@") || status=$?
  took "sanitized tests and fuzzing (-L sanitize)"
fi
echo "jsmf test: where the time went"
printf '  %s\n' "${timings[@]}"
printf '  %-52s %5d s %6d core-s (%d cores)\n' "total" $(($(date +%s) - started)) $((($(busy_ticks) - started_busy) / ticks)) "$cores"
exit $status
