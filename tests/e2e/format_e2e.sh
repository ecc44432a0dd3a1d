#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The model files jsmf writes are those it wrote before (tests/data/model_format, see its
# README): the same commands on the same synthetic corpus give the same datasets and
# attributes, with the same names, dtypes and shapes, and values that mean the same
# (compare_h5.py --meaning: each value at the tolerance its meaning justifies, so that the
# files hold on any CPU's BLAS kernels and at any rank count; the README's table says which
# rule applies to which dataset), and today's jsmf reads the old files, those of jsmf
# 44793b1 (before the pipeline moved into the library) too.
# Usage: format_e2e.sh JSMF MPIEXEC
set -uo pipefail
jsmf=$1 mpiexec=$2
here=$(cd "$(dirname "$0")" && pwd)
reference=$here/../data/model_format
python=/usr/bin/python3; [[ -x $python ]] || python=python3
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }
cd "$work"
"$jsmf" -q synth --dir . --name g --docs 600 --words 120 --topics 4 --doc-length 60 --seed 7 --anchor-mass 0.05 \
  >/dev/null
if ! md5sum -c --quiet "$reference/corpus.md5"; then
  fail "the synthetic corpus differs from the one the reference files were made from (another standard library?)"
  echo "$passed passed, $failed failed"; exit 1
fi
corpus=(--corpus docword.g.txt --vocab vocab.g.txt --top-words 5)   # relative: the paths are recorded
run() { "$mpiexec" -np 2 --oversubscribe "$jsmf" -q fit "${corpus[@]}" "$@" >/dev/null 2>>"$work/err"; }
run --topics 3,4 --stop iterations --iterations 15 --out model.multi.h5
run --hierarchy 5,2 --stop iterations --iterations 10 --no-metrics --out model.hierarchy.h5
run --topics 4 --method anchorfree-lp --rectify none --no-metrics --out model.anchorfree.h5
run --topics 4 --alpha --rectify dc --permutations 5 --no-metrics --out model.alpha.h5
for name in multi hierarchy anchorfree alpha; do
  if [[ ! -f model.$name.h5 ]]; then fail "fit for model.$name.h5: $(tail -2 "$work/err")"; continue; fi
  "$python" "$here/compare_h5.py" --meaning "$reference/model.$name.h5" "model.$name.h5" >"$work/diff" \
    && ok "model.$name.h5 holds what jsmf wrote before" || { fail "model.$name.h5 differs:"; head -5 "$work/diff"; }
  for old in "$reference/model.$name.h5" "$reference/44793b1/model.$name.h5"; do
    "$jsmf" show "$old" >/dev/null 2>&1 && ok "show reads the old $old" || fail "show cannot read the old $old"
  done
done
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
