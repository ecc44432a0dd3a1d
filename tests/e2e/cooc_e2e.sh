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
run 2 cooc --corpus "$corpus" --out "$work/x.h5" >/dev/null 2>"$work/err"
rc=$?
[[ $rc -ne 0 && $(grep -c -- 'give --corpus and --vocab' "$work/err") -eq 1 ]] && ok "missing flag" || fail "missing flag: rc=$rc"

# 3. cooc --add: the files of two halves of the documents (and of three thirds, at another
# grid and block size) sum to the file of the whole: C to 1e-12 of its largest entry, the
# counts and document frequencies exactly; fit reads the sum as any cooc file.
python=/usr/bin/python3; [[ -x $python ]] || python=python3
zcat "$corpus" >"$work/docword.txt"
for part in "a 1 750" "b 751 1e18" "x 1 500" "y 501 1000" "z 1001 1e18"; do
  read -r name first last <<<"$part"
  uci_docs "$work/docword.txt" "$work/docword.$name.txt" "$first" "$last"
done
for part in a b x y z; do
  run 2 cooc --corpus "$work/docword.$part.txt" --vocab "$vocab" --out "$work/C.$part.h5" >/dev/null 2>"$work/err" ||
    fail "cooc of part $part: $(tail -1 "$work/err")"
done
if run 2 cooc --add "$work/C.a.h5" "$work/C.b.h5" --out "$work/C.ab.h5" >"$work/out" 2>"$work/err" &&
   run 3 cooc --add "$work/C.x.h5" "$work/C.y.h5" "$work/C.z.h5" --block-size 5 --out "$work/C.xyz.h5" >/dev/null 2>>"$work/err"; then
  grep -q '^jsmf-cooc ranks=2 added=2 ' "$work/out" && ok "cooc --add: summary line" || fail "cooc --add: no summary line"
  "$python" - "$work/C.h5" "$work/C.ab.h5" "$work/C.xyz.h5" <<'PY' && ok "cooc --add of halves and thirds equals cooc of the whole" || fail "cooc --add differs from the whole"
import sys, h5py, numpy as np
whole = h5py.File(sys.argv[1], "r")
C = whole["cooc/C"][:]
for path in sys.argv[2:]:
    f = h5py.File(path, "r")
    d = np.abs(f["cooc/C"][:] - C).max() / np.abs(C).max()
    assert d < 1e-12, f"{path}: C differs by {d:.2e} of its largest entry"
    assert (f["stats/doc_freq"][:] == whole["stats/doc_freq"][:]).all(), f"{path}: doc_freq"
    for a in ("num_docs", "num_docs_read", "num_tokens"):
        assert f["stats"].attrs[a] == whole["stats"].attrs[a], f"{path}: {a}"
    assert abs(f["stats/unigram"][:] - whole["stats/unigram"][:]).max() < 1e-15, f"{path}: unigram"
    assert [v.decode() if isinstance(v, bytes) else v for v in f["vocab"][:]] == \
           [v.decode() if isinstance(v, bytes) else v for v in whole["vocab"][:]], f"{path}: vocab"
    added = f.attrs["added"]
    added = (added.decode() if isinstance(added, bytes) else added).split(";")
    assert len(added) == (2 if path == sys.argv[2] else 3), f"{path}: added {added}"
PY
  run 2 -q fit --cooc "$work/C.ab.h5" --topics 4 --no-metrics --out "$work/fit_ab.h5" >/dev/null 2>"$work/err" &&
    ok "fit --cooc of the sum" || fail "fit --cooc of the sum: $(tail -1 "$work/err")"
else
  fail "cooc --add: $(tail -3 "$work/err")"
fi
# What is no term of a sum, or another sum's: one message, exit code 2, nothing written.
run 2 cooc --corpus "$work/docword.a.txt" --vocab "$vocab" --min-tokens 6 --out "$work/C.a6.h5" >/dev/null 2>&1
run 2 cooc --corpus "$work/docword.b.txt" --vocab "$vocab" --estimator tfidf --out "$work/C.bt.h5" >/dev/null 2>&1
run 2 rectify --in "$work/C.b.h5" --topics 4 --method ap --iterations 2 --out "$work/C.br.h5" >/dev/null 2>&1
head -n 199 "$vocab" > "$work/vocab.short.txt"; echo other_word >> "$work/vocab.short.txt"
run 2 cooc --corpus "$work/docword.b.txt" --vocab "$work/vocab.short.txt" --out "$work/C.bv.h5" >/dev/null 2>&1
for np in 1 3; do
  expect_error "$np" "with min_tokens = 6" cooc --add "$work/C.a.h5" "$work/C.a6.h5"
  expect_error "$np" "no sum over documents" cooc --add "$work/C.a.h5" "$work/C.bt.h5"
  expect_error "$np" "holds a rectified C" cooc --add "$work/C.a.h5" "$work/C.br.h5"
  expect_error "$np" "word 200 is 'other_word'" cooc --add "$work/C.a.h5" "$work/C.bv.h5"
done
want=1 expect_error 2 "--add sums files counted already: --min-tokens" cooc --add "$work/C.a.h5" "$work/C.b.h5" --min-tokens 4
run 2 cooc --add "$work/C.a.h5" --out "$work/x.h5" >/dev/null 2>"$work/err"
rc=$?
[[ $rc -eq 1 && $(grep -c -- '--add: At least 2 required' "$work/err") -eq 1 && ! -e $work/x.h5 ]] && ok "--add of one file" ||
  fail "--add of one file: rc=$rc $(head -2 "$work/err")"

finish
