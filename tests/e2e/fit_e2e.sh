#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end: jsmf synth -> jsmf fit (corpus or --cooc; one K or several; each anchor
# finder, solver and A method) -> the model file read back with the HDF5 C API and held
# against the planted truth; the same model at 1, 2 and 4 ranks; jsmf show; bad options
# fail once, cleanly, at every rank count.
# Usage: fit_e2e.sh JSMF CHECK_MODEL_FILE MPIEXEC
set -u
jsmf=$1 checker=$2 mpiexec=$3
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
run_quiet() { local np=$1; shift; run "$np" -q "$@"; }

# A separable corpus whose anchors are identifiable (see anchors_test): 300 words, K = 5.
"$jsmf" -q synth --dir "$work" --name f --docs 8000 --words 300 --topics 5 --word-concentration 1.0 \
  --anchor-mass 0.03 --doc-length 60 --seed 3 || fail synth
corpus=(--corpus "$work/docword.f.txt" --vocab "$work/vocab.f.txt")
truth=$work/truth.f.h5
# Stated bounds for this corpus size: a topic column within 0.2 in L1 (of [0, 2]) after
# matching, A within 0.15 in L1 in total (A sums to 1).
b_bound=0.2 a_bound=0.15

for np in 1 2 4; do
  if run_quiet "$np" fit "${corpus[@]}" --topics 5 --stop iterations --iterations 30 --out "$work/m$np.h5" >/dev/null 2>"$work/err"; then
    ok "np=$np fit"
    "$checker" "$work/m$np.h5" 5 "$truth" $b_bound $a_bound && ok "np=$np model file" || fail "np=$np model file"
  else
    fail "np=$np fit: $(cat "$work/err")"
  fi
done
for np in 2 4; do
  "$checker" --compare "$work/m1.h5" "$work/m$np.h5" 5 && ok "np=$np model equals np=1" || fail "np=$np differs from np=1"
done

# The default (fast AP: inexact solves tied to the change, over-relaxation, the quality
# stop) and --converge: each stops by its rule (the trace says so), on the anchors of a
# long plain run, with B within 1e-4 L1 per topic of it (measured 5e-6); the default is
# the same at 1, 2 and 3 ranks to 1e-7 of B's scale (measured 6e-9: the inexact solves
# stop on thresholds that rounding moves). The default in single precision: the same
# anchors, B within 1e-3 (float32 iterate), and the file says it ran in single.
py=/usr/bin/python3
run_quiet 2 fit "${corpus[@]}" --topics 5 --stop iterations --iterations 3000 --no-metrics --out "$work/long.h5" \
  >/dev/null 2>&1 || fail "long plain fit"
for mode in default converge single; do
  for np in 1 2 3; do
    [[ $mode != default && $np != 2 ]] && continue
    extra=(); [[ $mode == converge ]] && extra=(--converge)
    [[ $mode == single ]] && extra=(--precision single)
    run_quiet "$np" fit "${corpus[@]}" --topics 5 "${extra[@]}" --no-metrics --out "$work/$mode$np.h5" >/dev/null 2>&1 ||
      fail "$mode np=$np fit"
  done
done
if "$py" - "$work" <<'PY'
import sys, h5py, numpy as np
from scipy.optimize import linear_sum_assignment
w = sys.argv[1]
def load(name):
    f = h5py.File(f"{w}/{name}.h5", "r")
    return f["K5/model/B"][:], list(f["K5/model/anchors"][:]), f["K5/rectification"]
B_long, anchors_long, _ = load("long")
bad = []
for name, reason in [("default1", b"quality"), ("default2", b"quality"), ("default3", b"quality"),
                     ("converge2", b"fixed-point"), ("single2", b"quality")]:
    B, anchors, trace = load(name)
    if trace.attrs["stop_reason"] != reason: bad.append(f"{name} stopped by {trace.attrs['stop_reason']}")
    if "checks" not in trace or len(trace["checks/iteration"]) < 3: bad.append(f"{name}: no checks in the trace")
    if (trace["passes"][:] < 1).any(): bad.append(f"{name}: an iteration without a pass over C")
    if sorted(anchors) != sorted(anchors_long): bad.append(f"{name}: anchors {anchors} vs {anchors_long}")
    cost = np.abs(B[:, :, None] - B_long[:, None, :]).sum(0)
    r, c = linear_sum_assignment(cost)
    bound = 1e-3 if name == "single2" else 1e-4
    if cost[r, c].max() > bound: bad.append(f"{name}: B {cost[r, c].max():.2e} from the long run")
    precision = h5py.File(f"{w}/{name}.h5", "r").attrs.get("precision", b"?")
    if precision != (b"single" if name == "single2" else b"double"): bad.append(f"{name}: precision {precision}")
B1 = load("default1")[0]
for name in ("default2", "default3"):
    d = np.abs(load(name)[0] - B1).max() / np.abs(B1).max()
    if d > 1e-7: bad.append(f"{name} differs from np=1 by {d:.1e}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
then ok "default, --converge and --precision single stop by their rules, on the long run's topics, the same at 1-3 ranks"
else fail "default / --converge"
fi

# From a precomputed C: the same model.
run_quiet 2 cooc "${corpus[@]}" --out "$work/C.h5" >/dev/null 2>&1 || fail "cooc"
run_quiet 2 fit --cooc "$work/C.h5" --topics 5 --stop iterations --iterations 30 --out "$work/from_c.h5" >/dev/null 2>&1 || fail "fit --cooc"
"$checker" --compare "$work/m1.h5" "$work/from_c.h5" 5 && ok "fit --cooc equals fit --corpus" ||
  fail "fit --cooc differs from fit --corpus"
# The compressed pipeline from the same file: C's rows on each rank, the planted topics, the
# dry run's plan of it, and the given anchor words checked against the file's vocabulary.
if run_quiet 3 fit --cooc "$work/C.h5" --pipeline compressed --topics 5 --out "$work/from_c_compressed.h5"      >"$work/out" 2>"$work/err"; then
  "$checker" "$work/from_c_compressed.h5" 5 "$truth" $b_bound $a_bound && ok "fit --cooc --pipeline compressed: the planted topics" ||
    fail "fit --cooc --pipeline compressed: the planted topics"
else
  fail "fit --cooc --pipeline compressed: $(tail -2 "$work/err")"
fi
plan=$(run 2 fit --cooc "$work/C.h5" --pipeline compressed --topics 5 --dry-run --out "$work/plan.h5" 2>&1)
grep -q "read C's rows, compress" <<<"$plan" && grep -q "C's rows, this rank's" <<<"$plan" &&
  ok "the dry run plans C's rows from the file" || fail "dry run of --cooc --pipeline compressed: $plan"

# Several K, and the alternatives: FastAnchorWords, ADMM-DR, least-squares A, alpha.
if run_quiet 2 fit "${corpus[@]}" --topics 5,7 --iterations 30 --anchors fastanchor --projection-dim 100 \
     --solver admm --solver-iterations 2000 --recover-a ls --alpha --out "$work/multi.h5" >/dev/null 2>"$work/err"; then
  ok "fit --topics 5,7 with fastanchor, admm, ls, alpha"
  "$checker" "$work/multi.h5" 5 "$truth" $b_bound $a_bound && ok "K=5 of the multi-K file" || fail "K=5 of the multi-K file"
  "$checker" "$work/multi.h5" 7 - 0 0 && ok "K=7 of the multi-K file" || fail "K=7 of the multi-K file"
  [[ $(h5dump -a /K5/model/A/method "$work/multi.h5" | grep -c least_squares) -eq 1 ]] && ok "A method recorded" ||
    fail "A method not recorded"
  h5ls "$work/multi.h5/K7/model/alpha" >/dev/null 2>&1 && ok "alpha written" || fail "no alpha"
else
  fail "multi-K fit: $(cat "$work/err")"
fi

# User anchors: the planted anchor words, in reverse order, are used as given.
for k in 4 3 2 1 0; do echo "anchor${k}_0"; done >"$work/anchors.txt"
printf '# planted\n\n' >>"$work/anchors.txt"
if run_quiet 2 fit "${corpus[@]}" --anchor-words "$work/anchors.txt" --iterations 30 --out "$work/given.h5" \
     >/dev/null 2>"$work/err"; then
  words=$(h5dump -d /K5/model/anchor_words "$work/given.h5" | grep -o 'anchor[0-9]_0' | tr '\n' ' ')
  [[ $words == "anchor4_0 anchor3_0 anchor2_0 anchor1_0 anchor0_0 " ]] && ok "given anchors kept in order" ||
    fail "given anchors: '$words'"
  "$checker" "$work/given.h5" 5 "$truth" $b_bound $a_bound && ok "model from given anchors" || fail "model from given anchors"
else
  fail "fit --anchor-words: $(cat "$work/err")"
fi
# K is their number before the pipeline is chosen and the memory planned.
plan=$(run_quiet 2 fit "${corpus[@]}" --anchor-words "$work/anchors.txt" --dry-run --out "$work/plan.h5" 2>/dev/null |
  grep -o 'topics=[0-9]*')
[[ $plan == "topics=5" ]] && ok "the dry run plans K = the anchor words' number" || fail "dry run with anchor words: '$plan'"
# The compressed pipeline takes them too (LAW's pivots), in their order.
if run_quiet 2 fit "${corpus[@]}" --pipeline compressed --anchor-words "$work/anchors.txt" --out "$work/given_c.h5" \
     >/dev/null 2>"$work/err"; then
  words=$(h5dump -d /K5/model/anchor_words "$work/given_c.h5" | grep -o 'anchor[0-9]_0' | tr '\n' ' ')
  [[ $words == "anchor4_0 anchor3_0 anchor2_0 anchor1_0 anchor0_0 " ]] && ok "compressed: given anchors kept in order" ||
    fail "compressed given anchors: '$words'"
  "$checker" "$work/given_c.h5" 5 "$truth" $b_bound $a_bound && ok "compressed model from given anchors" ||
    fail "compressed model from given anchors"
else
  fail "fit --pipeline compressed --anchor-words: $(cat "$work/err")"
fi

# jsmf show: the anchors and topics, readable; a non-model file is refused.
if run 2 show "$work/m1.h5" --top-words 5 >"$work/show.txt" 2>&1 && grep -q '== K = 5 ==' "$work/show.txt" &&
   [[ $(grep -c 'anchor[0-9]_0 ' "$work/show.txt") -ge 5 ]] && grep -q 'most correlated topic pairs' "$work/show.txt"; then
  ok "jsmf show"
else
  fail "jsmf show: $(head -5 "$work/show.txt")"
fi
run 1 show "$work/C.h5" >/dev/null 2>"$work/err"
[[ $? -eq 2 ]] && grep -q 'not a jsmf model file' "$work/err" && ok "show refuses a cooc file" || fail "show on a cooc file"
# show --compare: the dense fit and the compressed fit from C (both near the planted topics)
# keep every topic's id; a K one file lacks is refused; a file against itself keeps all.
cmp=$(run 1 show --compare "$work/m1.h5" "$work/from_c_compressed.h5" 2>&1)
grep -q "(K = 5) -> .* (K = 5): 5 topics kept, 0 new, 0 gone" <<<"$cmp" && ok "show --compare: every planted topic kept" ||
  fail "show --compare: $(head -3 <<<"$cmp")"
cmp=$(run 1 show --compare "$work/m1.h5" "$work/multi.h5" --topics 7 2>&1)
[[ $? -ne 0 ]] && grep -q "holds no model with K = 7" <<<"$cmp" && ok "show --compare --topics: a K one file lacks refused" ||
  fail "show --compare --topics 7: $(head -2 <<<"$cmp")"
cmp=$(run 1 show --compare "$work/multi.h5" "$work/multi.h5" --topics 7 2>&1)
grep -q "7 topics kept, 0 new, 0 gone" <<<"$cmp" && ok "show --compare of a file with itself" || fail "show --compare itself: $(head -2 <<<"$cmp")"

expect_error() {  # np (want: the exit code, 2 unless given) fragment args...
  local np=$1 fragment=$2; shift 2
  rm -f "$work/bad.h5"
  run_quiet "$np" fit "$@" --iterations 2 --out "$work/bad.h5" >/dev/null 2>"$work/err"
  local rc=$? messages
  messages=$(grep -c '^jsmf: error:' "$work/err")
  if [[ $rc -eq ${want:-2} && $messages -eq 1 && ! -e $work/bad.h5 && ! -e $work/bad.h5.partial ]] &&
     grep -qF -- "$fragment" "$work/err"; then
    ok "np=$np '$fragment'"
  else
    fail "np=$np expected '$fragment': rc=$rc messages=$messages"; head -3 "$work/err"
  fi
}
printf 'anchor0_0\nnosuchword\n' >"$work/unknown.txt"
for np in 1 2 4; do
  want=1 expect_error "$np" "2 <= K < N = 300" "${corpus[@]}" --topics 300
  want=1 expect_error "$np" "K must be at least 2" "${corpus[@]}" --topics 1
  expect_error "$np" "unknown.txt:2: 'nosuchword' is not in the vocabulary" "${corpus[@]}" --anchor-words "$work/unknown.txt"
  expect_error "$np" "cannot open HDF5 file" --cooc "$work/missing.h5" --topics 5
  want=1 expect_error "$np" "give either --corpus and --vocab, or --cooc" "${corpus[@]}" --cooc "$work/C.h5"
done
want=1 expect_error 2 "--projection-dim must be at least K = 5" "${corpus[@]}" --topics 5 --anchors fastanchor --projection-dim 3
expect_error 2 "lists 5 anchor words, but --topics is 6" "${corpus[@]}" --topics 6 --anchor-words "$work/anchors.txt"

# fit --update: the compressed pipeline's refit of the same corpus finds the planted topics
# in its own order; updating the dense model m1.h5 renumbers them to m1's ids (each topic
# nearest its namesake), records the matching and the history, at 3 ranks; updating that
# again appends to the history. A base of another vocabulary or filter is refused.
if run_quiet 3 fit "${corpus[@]}" --update "$work/m1.h5" --pipeline compressed --out "$work/upd.h5" >/dev/null 2>"$work/err" &&
   run_quiet 2 fit "${corpus[@]}" --update "$work/upd.h5" --pipeline compressed --out "$work/upd2.h5" >/dev/null 2>>"$work/err"; then
  /usr/bin/python3 - "$work/m1.h5" "$work/upd.h5" "$work/upd2.h5" <<'PY' && ok "fit --update keeps the base's topic ids and records them" || fail "fit --update ids"
import sys, h5py, numpy as np
base, upd, upd2 = (h5py.File(p, "r") for p in sys.argv[1:])
B0, B1 = base["K5/model/B"][:], upd["K5/model/B"][:]
tv = 0.5 * np.abs(B1[:, :, None] - B0[:, None, :]).sum(0)   # new k x old l
assert (tv.argmin(1) == np.arange(5)).all(), tv.round(3)
text = lambda f, a: f.attrs[a].decode() if isinstance(f.attrs[a], bytes) else f.attrs[a]
assert text(upd, "update_old_topics") == "0,1,2,3,4", text(upd, "update_old_topics")
assert text(upd, "update_gone") == "", text(upd, "update_gone")
assert text(upd2, "updates").count(";") == 1 and "exact" in text(upd2, "updates"), text(upd2, "updates")
PY
else
  fail "fit --update: $(tail -2 "$work/err")"
fi
# One topic more than the base (K = 6 on the 5 planted topics): the five keep their ids, the
# sixth is the one new topic, none gone.
if run_quiet 2 fit "${corpus[@]}" --update "$work/m1.h5" --topics 6 --pipeline compressed --out "$work/upd6.h5" \
     >/dev/null 2>"$work/err"; then
  /usr/bin/python3 - "$work/upd6.h5" <<'PY' && ok "fit --update with K + 1: five ids kept, one new topic" || fail "update K + 1"
import sys, h5py
f = h5py.File(sys.argv[1], "r")
text = lambda a: f.attrs[a].decode() if isinstance(f.attrs[a], bytes) else f.attrs[a]
old = [int(v) for v in text("update_old_topics").split(",")]
assert sorted(v for v in old if v >= 0) == [0, 1, 2, 3, 4] and old.count(-1) == 1 and old[5] == -1, old
assert text("update_gone") == "", text("update_gone")
PY
else
  fail "fit --update --topics 6: $(tail -2 "$work/err")"
fi
# The dense pipeline's update (B on rank 0) at 2 ranks; a base fit from a cooc file records
# the file's filter, and an update with another is refused.
run_quiet 2 fit --cooc "$work/C.h5" --topics 5 --iterations 30 --out "$work/from_c5.h5" >/dev/null 2>&1 || fail "fit --cooc base"
if run_quiet 2 fit "${corpus[@]}" --update "$work/upd.h5" --iterations 30 --out "$work/upd_dense.h5" >/dev/null 2>"$work/err"; then
  /usr/bin/python3 - "$work/upd.h5" "$work/upd_dense.h5" <<'PY' && ok "fit --update on the dense pipeline at 2 ranks" || fail "dense update ids"
import sys, h5py, numpy as np
base, upd = (h5py.File(p, "r") for p in sys.argv[1:])
B0, B1 = base["K5/model/B"][:], upd["K5/model/B"][:]
tv = 0.5 * np.abs(B1[:, :, None] - B0[:, None, :]).sum(0)
assert (tv.argmin(1) == np.arange(5)).all(), tv.round(3)
PY
else
  fail "dense fit --update: $(tail -2 "$work/err")"
fi
expect_error 2 "was fit with min_tokens = 2, the update with 6" "${corpus[@]}" --min-tokens 6 --update "$work/from_c5.h5"
sed 's/^anchor0_0$/renamed_word/' "$work/vocab.f.txt" >"$work/vocab.renamed.txt"
expect_error 2 "'anchor0_0' where the corpus to update it with has 'renamed_word'" \
  --corpus "$work/docword.f.txt" --vocab "$work/vocab.renamed.txt" --update "$work/m1.h5"
expect_error 2 "was fit with min_tokens = 2, the update with 6" "${corpus[@]}" --min-tokens 6 --update "$work/m1.h5"
want=1 expect_error 2 "--update works with one --topics value" "${corpus[@]}" --topics 5,6 --update "$work/m1.h5"
want=1 expect_error 2 "--match-distance is read only" "${corpus[@]}" --match-distance 0.3
want=1 expect_error 2 "--precision single applies to AP only" "${corpus[@]}" --topics 5 --rectify dr --precision single


# fit --update-mode sketch: the corpus in thirds, in document order. The base fit of the first
# third keeps a sketch of its C; each update reads one new third alone.
uci_docs "$work/docword.f.txt" "$work/third1.txt" 1 2667
uci_docs "$work/docword.f.txt" "$work/third2.txt" 2668 5334
uci_docs "$work/docword.f.txt" "$work/third3.txt" 5335 8000
third() { echo --corpus "$work/third$1.txt" --vocab "$work/vocab.f.txt"; }
expect_refusal() {  # np fragment args...: one message, exit $want (2: bad input; 1: a usage error), nothing written
  local np=$1 fragment=$2; shift 2
  rm -f "$work/bad.h5"
  run_quiet "$np" fit "$@" --out "$work/bad.h5" >/dev/null 2>"$work/err"
  local rc=$? messages
  messages=$(grep -c '^jsmf: error:' "$work/err")
  if [[ $rc -eq ${want:-2} && $messages -eq 1 && ! -e $work/bad.h5 && ! -e $work/bad.h5.partial ]] && grep -qF -- "$fragment" "$work/err"; then
    ok "np=$np '$fragment'"
  else
    fail "np=$np expected '$fragment': rc=$rc messages=$messages"; head -3 "$work/err"
  fi
}
# (a) With the whole spectrum (--sketch-rank 300 = N: C's exact decomposition) and exact
# solves (--enn-iterations 20), the update is the fresh fit of the first two thirds: the
# same anchors, B and A within 1e-7 of their largest entry (measured 1e-11), at 1, 3 and 4
# ranks; the file says so and keeps a sketch of all the documents for the next update.
run_quiet 2 fit $(third 1) --topics 5 --enn-iterations 20 --sketch-rank 300 --out "$work/s1_full.h5" >/dev/null 2>"$work/err" ||
  fail "sketch base: $(tail -2 "$work/err")"
run_quiet 2 fit --corpus "$work/third1.txt" "$work/third2.txt" --vocab "$work/vocab.f.txt" --topics 5 --enn-iterations 20 \
  --pipeline compressed --out "$work/fresh12.h5" >/dev/null 2>"$work/err" || fail "fresh fit of two thirds: $(tail -2 "$work/err")"
for np in 1 3 4; do
  if run_quiet "$np" fit $(third 2) --update "$work/s1_full.h5" --update-mode sketch --enn-iterations 20 \
       --out "$work/s12_full_$np.h5" >/dev/null 2>"$work/err"; then
    /usr/bin/python3 - "$work/fresh12.h5" "$work/s12_full_$np.h5" <<'PY' && ok "np=$np: a sketch update with r = N is the fresh fit" || fail "np=$np: sketch update r = N"
import sys, h5py, numpy as np
fresh, upd = (h5py.File(p, "r") for p in sys.argv[1:])
text = lambda f, a: f.attrs[a].decode() if isinstance(f.attrs[a], bytes) else f.attrs[a]
# the update renumbers the topics to the base's ids: compare after undoing that by anchors
fa, ua = fresh["K5/model/anchors"][:], upd["K5/model/anchors"][:]
assert sorted(fa) == sorted(ua), (fa, ua)
order = [list(ua).index(a) for a in fa]
for name in ("B", "A"):
    F, U = fresh[f"K5/model/{name}"][:], upd[f"K5/model/{name}"][:]
    U = U[:, order] if name == "B" else U[np.ix_(order, order)]
    err = np.abs(F - U).max() / np.abs(F).max()
    assert err < 1e-7, (name, err)
assert text(upd, "update_mode") == "sketch" and "sketch (the" in text(upd, "updates"), text(upd, "updates")
s = upd["sketch"]
assert s.attrs["rank"] == 300 and s.attrs["num_docs"] == fresh["stats"].attrs["num_docs"], dict(s.attrs)
assert upd["stats"].attrs["num_docs"] == fresh["stats"].attrs["num_docs"]
assert s["vectors"].shape == (300, 300) and s["values"].shape == (300,)
assert (upd["stats/doc_freq"][:] == fresh["stats/doc_freq"][:]).all() and (s["doc_freq"][:] == fresh["stats/doc_freq"][:]).all()
assert np.abs(upd["stats/unigram"][:] - fresh["stats/unigram"][:]).max() < 1e-15
PY
  else
    fail "np=$np sketch update: $(tail -2 "$work/err")"
  fi
done
# (b) A sketch of rank 2K = 10 of 300 (--sketch's default rank), in the default (settled) fit, through two updates: every
# topic keeps its id, the history lists both, the sketch counts all the documents, and the
# model is as near the planted truth as the fresh fit of all of them (B's L1 per topic,
# matched: within 10 % of the fresh fit's error), nearer than the first third's. With
# --warm-enn (ENN from the old factor) too: run (its log says so; the default's does not), recorded,
# and nearer the truth than the first third.
if run_quiet 2 fit $(third 1) --topics 5 --sketch --out "$work/s1.h5" >/dev/null 2>"$work/err" &&
   run 3 fit $(third 2) --update "$work/s1.h5" --update-mode sketch --out "$work/s2.h5" >/dev/null 2>"$work/s2.log" &&
   ! grep -q "starts from the base's rectified factor" "$work/s2.log" &&
   run_quiet 2 fit $(third 3) --update "$work/s2.h5" --update-mode sketch --out "$work/s3.h5" >/dev/null 2>>"$work/err" &&
   run_quiet 2 fit "${corpus[@]}" --topics 5 --pipeline compressed --out "$work/fresh123.h5" >/dev/null 2>>"$work/err" &&
   run 2 fit $(third 2) --update "$work/s1.h5" --update-mode sketch --warm-enn --out "$work/s2w.h5" >/dev/null 2>"$work/s2w.log" &&
   grep -q "starts from the base's rectified factor" "$work/s2w.log" &&
   run_quiet 3 fit $(third 3) --update "$work/s2w.h5" --update-mode sketch --warm-enn --out "$work/s3w.h5" >/dev/null 2>>"$work/err"; then
  /usr/bin/python3 - "$truth" "$work/s1.h5" "$work/s3.h5" "$work/fresh123.h5" "$work/s3w.h5" <<'PY' && ok "two sketch updates of rank 2K: the fresh fit's quality, ids kept; warm ENN recorded" || fail "sketch updates of rank 2K"
import sys, h5py, numpy as np
from scipy.optimize import linear_sum_assignment
truth = h5py.File(sys.argv[1], "r")["model/B"][:]
def error(path):
    B = h5py.File(path, "r")["K5/model/B"][:]
    cost = np.abs(B[:, :, None] - truth[:, None, :]).sum(0)
    r, c = linear_sum_assignment(cost)
    return cost[r, c].mean()
first, sketch, fresh, warm = (error(p) for p in sys.argv[2:])
print(f"B's L1 to the truth: first third {first:.4f}, two sketch updates {sketch:.4f} (warm ENN {warm:.4f}), "
      f"fresh fit {fresh:.4f}")
assert sketch <= 1.1 * fresh and sketch < 0.9 * first, (first, sketch, fresh)
assert warm < 0.9 * first, (first, warm)
s3w = h5py.File(sys.argv[5], "r")
attr = lambda f, a: f.attrs[a].decode() if isinstance(f.attrs[a], bytes) else f.attrs[a]
assert attr(s3w, "update_enn_start") == "warm" and attr(s3w, "updates").count("ENN warm") == 2, attr(s3w, "updates")
s3 = h5py.File(sys.argv[3], "r")
text = lambda a: attr(s3, a)
assert text("update_enn_start") == "cold" and "ENN warm" not in text("updates"), text("updates")
assert text("update_old_topics") == "0,1,2,3,4", text("update_old_topics")
assert text("updates").count("sketch (the") == 2, text("updates")
assert s3["sketch"].attrs["rank"] == 10 and s3["sketch"].attrs["num_docs"] == 8000, dict(s3["sketch"].attrs)
assert abs(s3["sketch"].attrs["weight"] - 8000) < 1e-9
PY
else
  fail "sketch updates: $(tail -2 "$work/err")"
fi
# (c) --decay 0.5: the old documents weigh half before the sum (the new sketch's weight), the
# file records the decay; a checkpointed sketch update resumed from its last checkpoint (ENN's
# state, the sketch's eigenpairs kept in it: the resume solves no sketch) writes the same
# model and sketch.
if run_quiet 2 fit $(third 2) --update "$work/s1.h5" --update-mode sketch --decay 0.5 --enn-iterations 15 \
     --checkpoint "$work/ck.h5" --checkpoint-seconds 0 --out "$work/s2d.h5" >/dev/null 2>"$work/err" &&
   run 3 fit $(third 2) --update "$work/s1.h5" --update-mode sketch --decay 0.5 --enn-iterations 15 \
     --resume "$work/ck.h5" --out "$work/s2d_resumed.h5" >/dev/null 2>"$work/resume.log" &&
   grep -q "resume: from .*: ENN after" "$work/resume.log" && ! grep -q "the sketch's top" "$work/resume.log"; then
  /usr/bin/python3 - "$work/s1.h5" "$work/s2d.h5" "$work/s2d_resumed.h5" <<'PY' && ok "--decay 0.5 weighs the old documents by half; a resumed sketch update is the same" || fail "decay / resume"
import sys, h5py, numpy as np
base, upd, resumed = (h5py.File(p, "r") for p in sys.argv[1:])
M_new = upd["sketch"].attrs["num_docs"] - base["sketch"].attrs["num_docs"]
assert abs(upd["sketch"].attrs["weight"] - (0.5 * base["sketch"].attrs["weight"] + M_new)) < 1e-9, dict(upd["sketch"].attrs)
text = lambda f, a: f.attrs[a].decode() if isinstance(f.attrs[a], bytes) else f.attrs[a]
assert text(upd, "update_decay") == "0.5" and "decay 0.5" in text(upd, "updates"), text(upd, "updates")
for name in ("K5/model/B", "K5/model/A", "sketch/values", "sketch/vectors", "sketch/unigram"):
    a, b = upd[name][:], resumed[name][:]
    assert np.abs(a - b).max() <= 1e-9 * np.abs(a).max(), (name, np.abs(a - b).max())
PY
else
  fail "sketch update with --decay and a checkpoint: $(tail -2 "$work/err") $(grep -E "resume|sketch's top|error" "$work/resume.log" | head -3)"
fi
# (d) Refused, each with one message, exit 2, nothing written.
expect_refusal 2 "holds no sketch of its C" $(third 2) --update "$work/m1.h5" --update-mode sketch
expect_refusal 2 "keeps a sketch of rank 10, below K = 12" $(third 2) --update "$work/s1.h5" --update-mode sketch --topics 12
expect_refusal 2 "'anchor0_0' where the corpus to update it with has 'renamed_word'" \
  --corpus "$work/third2.txt" --vocab "$work/vocab.renamed.txt" --update "$work/s1.h5" --update-mode sketch
expect_refusal 2 "was fit with min_tokens = 2, the update with 6" $(third 2) --min-tokens 6 --update "$work/s1.h5" --update-mode sketch
# (an exact update of fewer documents than the base counted: the thirds' headers keep D =
# 8,000, so the count after reading says it, on both pipelines)
expect_refusal 2 "fewer than the 5334 of the model updated" $(third 3) --update "$work/s2.h5" --pipeline compressed
expect_refusal 3 "fewer than the 5334 of the model updated" $(third 3) --update "$work/s2.h5" --pipeline dense
want=1 expect_refusal 2 "--decay is read only with --update-mode sketch" $(third 2) --update "$work/s1.h5" --decay 0.5
expect_refusal 2 "has no model of K = 6 to start ENN from" $(third 2) --update "$work/s1.h5" --update-mode sketch --warm-enn --topics 6
want=1 expect_refusal 2 "--warm-enn is read only with --update-mode sketch" $(third 2) --update "$work/s1.h5" --warm-enn
want=1 expect_refusal 2 "--warm-enn starts ENN in the settled mode" $(third 2) --update "$work/s1.h5" --update-mode sketch --warm-enn --enn-iterations 10
want=1 expect_refusal 2 "--decay must lie in (0, 1]" $(third 2) --update "$work/s1.h5" --update-mode sketch --decay 1.5
want=1 expect_refusal 2 "runs on --pipeline compressed" $(third 2) --update "$work/s1.h5" --update-mode sketch --pipeline dense
want=1 expect_refusal 2 "--sketch-rank must be at least K = 5" $(third 1) --topics 5 --sketch-rank 3
want=1 expect_refusal 2 "--sketch-rank must be at most N = 300" $(third 1) --topics 5 --sketch-rank 301 --pipeline compressed
want=1 expect_refusal 2 "tf-idf's C is not such a sum" $(third 2) --update "$work/s1.h5" --update-mode sketch --estimator tfidf
want=1 expect_refusal 2 "tf-idf's C is not such a sum" $(third 1) --topics 5 --sketch-rank 10 --estimator tfidf
want=1 expect_refusal 2 "--sketch keeps C for --update-mode sketch" $(third 1) --topics 5 --sketch --estimator tfidf
want=1 expect_refusal 2 "a model with a --hierarchy is not updated" $(third 1) --hierarchy 5,2 --sketch
want=1 expect_refusal 2 "--sketch-rank keeps C for a later --update" $(third 1) --hierarchy 5,2 --sketch-rank 10 --pipeline compressed

finish
