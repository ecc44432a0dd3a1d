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
# finish: the closing line CTest and CI read, and the exit code.
finish() { echo "$passed passed, $failed failed"; [[ $failed -eq 0 ]]; }
