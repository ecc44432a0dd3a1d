#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end: jsmf synth, then mpirun jsmf cooc, then read the file back; and bad inputs
# give one clear message, exit code 2 and no output file, at 1, 2 and 4 ranks.
# Usage: cooc_e2e.sh JSMF CHECK_COOC_FILE MPIEXEC
set -u
jsmf=$1 checker=$2 mpiexec=$3
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# 1. A synthetic corpus, its C at 2 ranks, checked against a one-process reference.
if "$jsmf" synth --dir "$work" --name e2e --docs 1500 --words 200 --topics 4 --gzip --seed 3 2>"$work/synth.err"; then
  ok "synth"
else
  fail "synth: $(cat "$work/synth.err")"
fi
for f in docword.e2e.txt.gz vocab.e2e.txt truth.e2e.h5; do
  [[ -s $work/$f ]] && ok "synth wrote $f" || fail "synth did not write $f"
done
corpus=$work/docword.e2e.txt.gz vocab=$work/vocab.e2e.txt
if run 2 cooc --corpus "$corpus" --vocab "$vocab" --out "$work/C.h5" --block-size 17 >"$work/out" 2>"$work/err"; then
  ok "cooc at 2 ranks"
else
  fail "cooc at 2 ranks: $(cat "$work/err")"
fi
grep -q '^jsmf-cooc ranks=2 docs=' "$work/out" && ok "summary line" || fail "no summary line: $(cat "$work/out")"
grep -q 'cooc: wrote' "$work/err" && ok "progress log names the file" || fail "no 'wrote' log line"
if "$checker" "$work/C.h5" "$corpus" "$vocab" 2; then ok "file contents"; else fail "file contents"; fi

# 2. Bad input: one message naming file, line and rank; exit code 2; no file left behind.
zcat "$corpus" > "$work/docword.bad.txt"
sed -i '$ s/ [0-9]*$/ 0/' "$work/docword.bad.txt"
bad_line=$(wc -l < "$work/docword.bad.txt")
size=$(stat -c %s "$corpus")
head -c $((size * 2 / 3)) "$corpus" > "$work/truncated.gz"
zcat "$corpus" | awk 'NR==3 {print $1+5; next} {print}' > "$work/docword.nnz.txt"
head -n 10 "$vocab" > "$work/vocab.short.txt"

expect_error() {  # np (want: the exit code, 2 unless given) expected_message_fragment args...
  local np=$1 fragment=$2; shift 2
  local out=$work/bad.h5
  rm -f "$out" "$out.partial"
  local start=$SECONDS
  run "$np" "$@" --out "$out" >"$work/out" 2>"$work/err"
  local rc=$?
  local messages
  messages=$(grep -c '^jsmf: error:' "$work/err")
  if [[ $rc -eq ${want:-2} && $messages -eq 1 ]] && grep -qF -- "$fragment" "$work/err" && [[ ! -e $out && ! -e $out.partial ]]; then
    ok "np=$np '$fragment' (rc=2, one message, $((SECONDS - start)) s)"
  else
    fail "np=$np expected '$fragment': rc=$rc messages=$messages files=$(ls "$work" | grep -c bad.h5)"
    sed 's/^/    /' "$work/err" | head -5
  fi
}
for np in 1 2 4; do
  last=$((np - 1))
  expect_error "$np" "docword.bad.txt:$bad_line: count must be positive, found 0 [rank $last of $np" \
    cooc --corpus "$work/docword.bad.txt" --vocab "$vocab"
  expect_error "$np" "header says NNZ" cooc --corpus "$work/docword.nnz.txt" --vocab "$vocab"
  expect_error "$np" "vocabulary has 10 words but the corpus header declares W = 200" \
    cooc --corpus "$corpus" --vocab "$work/vocab.short.txt"
done
expect_error 2 "cannot open" cooc --corpus "$work/missing.txt" --vocab "$vocab"
for np in 1 2; do
  expect_error "$np" "corrupt or truncated gzip" cooc --corpus "$work/truncated.gz" --vocab "$vocab"
done
want=1 expect_error 2 "--min-tokens must be at least 2" cooc --corpus "$corpus" --vocab "$vocab" --min-tokens 1
want=1 expect_error 2 "--grid 3x1 needs 3 ranks" cooc --corpus "$corpus" --vocab "$vocab" --grid 3x1
# The output directory is checked before any work.
rm -f "$work/err"
run 2 cooc --corpus "$corpus" --vocab "$vocab" --out "$work/no/such/dir/C.h5" >/dev/null 2>"$work/err"
rc=$?
[[ $rc -eq 2 ]] && grep -q "does not exist" "$work/err" && ok "missing output directory" || fail "missing output directory: rc=$rc"
# A command-line mistake is reported once, by rank 0.
run 2 cooc --corpus "$corpus" >/dev/null 2>"$work/err"
rc=$?
[[ $rc -ne 0 && $(grep -c -- '--vocab is required' "$work/err") -eq 1 ]] && ok "missing flag" || fail "missing flag: rc=$rc"

finish
