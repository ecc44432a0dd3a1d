#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end: jsmf synth -> cooc -> rectify (ap, dr, dp, dc, none); AP, DR and DP runs
# resumed from their checkpoints equal uninterrupted ones bit for bit; bad inputs fail once, cleanly.
# Usage: rectify_e2e.sh JSMF CHECK_RECTIFIED_FILE MPIEXEC
set -u
jsmf=$1 checker=$2 mpiexec=$3
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
run_quiet() { local np=$1; shift; run "$np" -q "$@"; }

"$jsmf" -q synth --dir "$work" --name r --docs 1200 --words 150 --topics 5 --seed 4 || fail synth
run_quiet 2 cooc --corpus "$work/docword.r.txt" --vocab "$work/vocab.r.txt" --out "$work/C.h5" >/dev/null || fail cooc

# Each rectifier with the settings it reads (one it does not read is refused: below).
for method in ap dr dp dc none; do
  case $method in ap|dr|dp) iterations=8 settings=(--stop iterations --iterations 8) ;;
                  dc) iterations=4 settings=(--permutations 4) ;; *) iterations=0 settings=() ;; esac
  if run_quiet 2 rectify --in "$work/C.h5" --out "$work/$method.h5" --topics 5 --method "$method" \
       "${settings[@]}" >/dev/null 2>"$work/err"; then
    ok "rectify --method $method"
    "$checker" "$work/$method.h5" "$method" 5 "$iterations" && ok "$method file" || fail "$method file"
  else
    fail "rectify --method $method: $(cat "$work/err")"
  fi
done

# Checkpoint after iteration 4 of 8, then resume: the same C, bit for bit, at 1 and 3 ranks,
# for every AP variant: the papers' plain AP, the default (inexact solves, over-relaxation,
# checks of the topics), and Anderson with checks every 3 iterations (its history, the
# pending product and the last check's B travel in the checkpoint).
variants=("--iterations 8" "--max-iterations 8" "--converge --acceleration anderson --anderson-below 0 --check-every 3 --max-iterations 8")
for np in 1 3; do
  for v in "${variants[@]}"; do
    read -r -a opts <<<"$v"
    run_quiet "$np" rectify --in "$work/C.h5" --out "$work/straight.h5" --topics 5 "${opts[@]}" \
        >/dev/null 2>&1
    run_quiet "$np" rectify --in "$work/C.h5" --out "$work/first.h5" --topics 5 "${opts[@]}" \
        --checkpoint "$work/ck.h5" --checkpoint-every 4 >/dev/null 2>&1
    [[ -s $work/ck.h5 && ! -e $work/ck.h5.partial ]] && ok "np=$np [$v] checkpoint written" ||
      fail "np=$np [$v] no checkpoint"
    run_quiet "$np" rectify --in "$work/C.h5" --out "$work/resumed.h5" --topics 5 "${opts[@]}" \
        --resume "$work/ck.h5" >/dev/null 2>&1 || fail "np=$np [$v] resume failed"
    if h5diff "$work/straight.h5" "$work/resumed.h5" /cooc/C /cooc/C >/dev/null &&
       h5diff "$work/straight.h5" "$work/resumed.h5" /rectification/change /rectification/change >/dev/null &&
       h5diff "$work/straight.h5" "$work/resumed.h5" /rectification/accelerated /rectification/accelerated >/dev/null; then
      ok "np=$np [$v] resumed run equals the uninterrupted one (C and trace, exactly)"
    else
      fail "np=$np [$v] resumed run differs"
    fi
  done
done

# DR and DP (two eigensolves' warm starts; Dykstra's N x N increments) resume exactly too.
for method in dr dp; do
  run_quiet 2 rectify --in "$work/C.h5" --out "$work/straight.h5" --topics 5 --iterations 6 --method $method >/dev/null 2>&1
  run_quiet 2 rectify --in "$work/C.h5" --out "$work/first.h5" --topics 5 --iterations 6 --method $method \
      --checkpoint "$work/ck_$method.h5" --checkpoint-every 3 >/dev/null 2>&1
  run_quiet 2 rectify --in "$work/C.h5" --out "$work/resumed.h5" --topics 5 --iterations 6 --method $method \
      --resume "$work/ck_$method.h5" >/dev/null 2>&1 || fail "$method resume failed"
  if h5diff "$work/straight.h5" "$work/resumed.h5" /cooc/C /cooc/C >/dev/null &&
     h5diff "$work/straight.h5" "$work/resumed.h5" /rectification/change /rectification/change >/dev/null; then
    ok "$method: resumed run equals the uninterrupted one (C and trace, exactly)"
  else
    fail "$method: resumed run differs"
  fi
done

# A resume with options that change the arithmetic runs, but says it will differ.
run_quiet 2 rectify --in "$work/C.h5" --out "$work/resumed.h5" --topics 5 --iterations 6 --method dp \
    --resume "$work/ck_dp.h5" --eig-check-every 5 >/dev/null 2>"$work/err" || fail "resume with other options failed"
grep -q "checkpoint was written with eig_check_every = 10, this run has 5" "$work/err" &&
  ok "a resume with a different --eig-check-every warns" || fail "no warning for a changed option on resume"

expect_error() {  # np (want: the exit code, 2 unless given) fragment args...
  local np=$1 fragment=$2; shift 2
  rm -f "$work/bad.h5"
  run_quiet "$np" rectify "$@" --out "$work/bad.h5" >/dev/null 2>"$work/err"
  local rc=$? messages
  messages=$(grep -c '^jsmf: error:' "$work/err")
  if [[ $rc -eq ${want:-2} && $messages -eq 1 && ! -e $work/bad.h5 ]] && grep -qF -- "$fragment" "$work/err"; then
    ok "np=$np '$fragment'"
  else
    fail "np=$np expected '$fragment': rc=$rc messages=$messages"; head -3 "$work/err"
  fi
}
for np in 1 2 4; do
  want=1 expect_error "$np" "2 <= K < N = 150" --in "$work/C.h5" --topics 150
  expect_error "$np" "cannot open HDF5 file" --in "$work/missing.h5" --topics 5
  expect_error "$np" "the checkpoint has K = 5, not --topics 6" --in "$work/C.h5" --topics 6 --resume "$work/ck.h5"
done
expect_error 2 "2K < N" --in "$work/C.h5" --topics 80 --method dc
# A setting the chosen rectifier does not read: a usage error naming it and what reads it.
want=1 expect_error 2 "--iterations is read only with --method ap, dr or dp" --in "$work/C.h5" --topics 5 --method dc --iterations 8
want=1 expect_error 2 "--permutations is read only with --method dc" --in "$work/C.h5" --topics 5 --method ap --permutations 4
want=1 expect_error 2 "--checkpoint is read only with --method ap, dr or dp" --in "$work/C.h5" --topics 5 --method none \
  --checkpoint "$work/ck_none.h5"
expect_error 2 "not a jsmf checkpoint" --in "$work/C.h5" --topics 5 --resume "$work/C.h5"
expect_error 2 "the checkpoint is of --method dr, not dp" --in "$work/C.h5" --topics 5 --method dp --resume "$work/ck_dr.h5"

finish
