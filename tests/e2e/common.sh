# SPDX-License-Identifier: MIT
# Shared by the e2e scripts (sourced): environment, a scratch folder, counted checks.
# Expects $mpiexec and $jsmf to be set by the caller.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok()   { passed=$((passed + 1)); echo "ok: $*"; }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
# run NP ARGS...: jsmf under mpirun, bounded in time (run_timeout seconds, 120 unless set)
# so that a hang is a failure.
run()  { local np=$1; shift; timeout "${run_timeout:-120}" "$mpiexec" -np "$np" --oversubscribe "$jsmf" "$@"; }
# uci_docs IN OUT FIRST LAST: the documents FIRST..LAST of the UCI bag-of-words file IN (ids,
# D and W kept; the nonzero count the part's), in two linear passes (appending each row to
# one string per part was quadratic: 71 s for 135,000 rows).
uci_docs() {
  awk -v lo="$3" -v hi="$4" 'NR == FNR { if (FNR > 3 && $1 >= lo && $1 <= hi) n++; next }
    FNR <= 2 { print; next } FNR == 3 { print n + 0; next } $1 >= lo && $1 <= hi' "$1" "$1" >"$2"
}
# expect_error NP FRAGMENT ARGS...: `jsmf fit ARGS` (2 iterations) at NP ranks fails with exit code
# $want (2 unless set), one message holding FRAGMENT, and writes nothing.
expect_error() {
  local np=$1 fragment=$2; shift 2
  rm -f "$work/bad.h5"
  run "$np" -q fit "$@" --iterations 2 --out "$work/bad.h5" >/dev/null 2>"$work/err"
  local rc=$? messages
  messages=$(grep -c '^jsmf: error:' "$work/err")
  if [[ $rc -eq ${want:-2} && $messages -eq 1 && ! -e $work/bad.h5 && ! -e $work/bad.h5.partial ]] &&
     grep -qF -- "$fragment" "$work/err"; then
    ok "np=$np '$fragment'"
  else
    fail "np=$np expected '$fragment': rc=$rc messages=$messages"; head -3 "$work/err"
  fi
}
# separable_corpus: fit_e2e's and update_e2e's planted corpus in $work (name f: 300 words, K = 5,
# 8,000 documents; anchors identifiable, see anchors_test); sets corpus=(--corpus … --vocab …)
# and truth (its planted model).
separable_corpus() {
  "$jsmf" -q synth --dir "$work" --name f --docs 8000 --words 300 --topics 5 --word-concentration 1.0 \
    --anchor-mass 0.03 --doc-length 60 --seed 3 || fail synth
  corpus=(--corpus "$work/docword.f.txt" --vocab "$work/vocab.f.txt")
  truth=$work/truth.f.h5
}
# finish: the closing line CTest and CI read, and the exit code.
finish() { echo "$passed passed, $failed failed"; [[ $failed -eq 0 ]]; }
