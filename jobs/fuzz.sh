#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fuzzes jsmf's readers of untrusted input with libFuzzer (ASan + UBSan): UCI docword (plain,
# gzip), the line lists (vocabulary, anchor words, labels, stop words, a prepared corpus's
# manifest, ids and labels, --labels, --items, --doc-ids), prepare's raw formats with the tokenizer, and jsmf's HDF5 files (model, C, both
# checkpoints, truth). Each harness first replays its regression inputs
# (tests/fuzz/regressions/<harness>: every crash ever found), then runs from seeds that jsmf
# makes, and prints what it did. A finding stops with the input saved and exit code 1.
#
#   bash jobs/fuzz.sh                     # every harness, 600 s each
#   bash jobs/fuzz.sh --seconds 30 --only uci --only h5
# Options: --seconds S (per harness), --only H (repeatable), --build DIR (a JSMF_SANITIZE=1
# build; default ./build-san, built if missing), --out DIR (corpora, findings; default
# <build>/fuzz), --seeds-only (make the seeds and stop). One process per harness: run
# several with --only on a machine with more cores.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=600 build=$root/build-san out="" only=() seeds_only=0
while (($#)); do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --only) only+=("$2"); shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --seeds-only) seeds_only=1; shift ;;
    *) echo "jobs/fuzz.sh: unknown option $1 (see the comment at its top)" >&2; exit 1 ;;
  esac
done
harnesses=(uci lists prepare h5)
((${#only[@]})) && harnesses=("${only[@]}")
out=${out:-$build/fuzz}
source "$root/jobs/env.sh"
# The sanitizers' settings of the test suite (cmake/JsmfTesting.cmake), unless given.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/tests/sanitize/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

if [[ ! -x $build/tests/fuzz_${harnesses[0]} ]]; then
  echo "jobs/fuzz.sh: building the fuzzers in $build"
  JSMF_SANITIZE=1 JSMF_BUILD_DIR=$build bash "$root/jobs/build.sh"
fi
mpiexec=$(command -v mpiexec)
if [[ ! -e $out/seeds/.complete ]]; then  # made whole in a scratch folder, then moved in place
  rm -rf "$out/seeds" "$out/seeds.partial"
  mkdir -p "$out"
  bash "$root/tests/fuzz/make_seeds.sh" "$build/jsmf" "$mpiexec" "$out/seeds.partial"
  touch "$out/seeds.partial/.complete"
  mv "$out/seeds.partial" "$out/seeds"
fi
((seeds_only)) && exit 0

export JSMF_FUZZ_H5_SEEDS=$out/seeds/h5files  # the files fuzz_h5 edits
# Open MPI's own handlers of SIGABRT and SIGSEGV (set in MPI_Init, after libFuzzer's) would
# print a trace and end the process before libFuzzer saves the input that crashed it.
export OMPI_MCA_opal_signal=""
echo "jsmf fuzz: $(uname -n), $(getconf _NPROCESSORS_ONLN) cores, $(clang --version | head -n 1), ${seconds} s per harness"
status=0
for harness in "${harnesses[@]}"; do
  binary=$build/tests/fuzz_$harness
  [[ -x $binary ]] || { echo "jobs/fuzz.sh: no harness $binary" >&2; exit 1; }
  regressions=$root/tests/fuzz/regressions/$harness
  if [[ -d $regressions && -n $(ls -A "$regressions") ]]; then
    if ! "$binary" "$regressions"/* > "$out/$harness.replay.log" 2>&1; then
      echo "fuzz_$harness: a regression input fails again:"; tail -n 40 "$out/$harness.replay.log"; status=1; continue
    fi
    echo "fuzz_$harness: $(ls "$regressions" | wc -l) regression input(s) replayed, none fails"
  fi
  corpus=$out/$harness.corpus findings=$out/$harness.findings
  mkdir -p "$corpus" "$findings"
  log=$out/$harness.log
  # -seed=1: the same mutations on every run (of a given build); -timeout: an input that
  # takes 10 s is a finding (a hang); -rss_limit_mb: so is one that needs 2 GB.
  args=(-max_total_time="$seconds" -seed=1 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$findings/" "$corpus" "$out/seeds/$harness")
  # fuzz_h5's inputs are edit scripts from 1-byte seeds: let them grow to a few edits at once
  # (libFuzzer otherwise starts near the seeds' length and lengthens slowly).
  [[ $harness == h5 ]] && args=(-max_len=256 -len_control=0 "${args[@]}")
  started=$SECONDS
  if "$binary" "${args[@]}" > "$log" 2>&1; then verdict="no finding"; else verdict="FINDING"; status=1; fi
  elapsed=$((SECONDS - started))  # a finding ends the run early
  runs=$(grep -h 'stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s + 0}' || true)
  last=$(grep -hE '^#[0-9]+' "$log" | tail -n 1 || true)
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
  printf 'fuzz_%s: %s s, %s runs (%s/s), coverage %s edges, %s features, corpus %s inputs: %s\n' \
    "$harness" "$elapsed" "$runs" "$((runs / (elapsed > 0 ? elapsed : 1)))" "${cov:-?}" "${ft:-?}" \
    "$(ls "$corpus" | wc -l)" "$verdict"
  if [[ $verdict != "no finding" ]]; then
    grep -hE 'ERROR|runtime error|SUMMARY|terminate|what\(\)|Test unit written' "$log" | head -n 20 || true
    echo "  the input: $(ls "$findings" | head -n 3); the log: $log"
    echo "  once fixed, copy it to tests/fuzz/regressions/$harness/ so it is replayed from then on"
  fi
done
exit $status
