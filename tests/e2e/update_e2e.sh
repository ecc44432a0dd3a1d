#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end: models that grow with the corpus (jsmf fit --update). The exact update on both
# pipelines keeps the base's topic ids (and finds one new topic at K + 1); the sketch update
# (--update-mode sketch) with the whole spectrum is the fresh fit at 1, 3 and 4 ranks, with a
# rank-2K sketch as near the planted truth as the fresh fit after two updates; --decay and a
# resumed sketch update; every refusal with one message, its exit code, nothing written.
# (fit_e2e.sh holds the fit itself; these runs compare runs of the same machine, so they are
# not run again under another BLAS kernel.)
# Usage: update_e2e.sh JSMF MPIEXEC
set -u
jsmf=$1 mpiexec=$2
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
run_quiet() { local np=$1; shift; run "$np" -q "$@"; }

# fit_e2e's planted corpus (300 words, K = 5), its dense base model and its C.
separable_corpus
run_quiet 1 fit "${corpus[@]}" --topics 5 --stop iterations --iterations 30 --out "$work/m1.h5" >/dev/null 2>&1 || fail "base fit"
run_quiet 2 cooc "${corpus[@]}" --out "$work/C.h5" >/dev/null 2>&1 || fail "cooc"


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
# (c2) Coherence of a sketch update counts the documents read, not the old ones (kept only as
# the sketch): the second third with the base's two leading top words taken out of every
# document, so a topic that keeps one of them among its top 20 has a word in none of the
# documents counted. Exactly those topics are not measured (NaN: their NPMI divides by zero,
# and their coherence too but where the word is the last), the mean and std are over the
# others, and the note says so.
/usr/bin/python3 - "$work/s1.h5" "$work/third2.txt" "$work/third2_cut.txt" <<'PY' || fail "cut the base's top words"
import sys, h5py, numpy as np
B = h5py.File(sys.argv[1], "r")["K5/model/B"][:]
cut = {int(np.argmax(B[:, 0])) + 1, int(np.argmax(B[:, 1])) + 1}  # UCI ids, 1-based
lines = open(sys.argv[2]).read().split("\n")
body = [l for l in lines[3:] if l and int(l.split()[1]) not in cut]
open(sys.argv[3], "w").write("\n".join(lines[:2] + [str(len(body))] + body) + "\n")
PY
if run_quiet 2 fit --corpus "$work/third2_cut.txt" --vocab "$work/vocab.f.txt" --update "$work/s1.h5" --update-mode sketch \
     --out "$work/s2cut.h5" >/dev/null 2>"$work/err"; then
  /usr/bin/python3 - "$work/s2cut.h5" "$work/third2_cut.txt" <<'PY' && ok "a sketch update's coherence: over the new documents, a topic with an unseen top word not measured" || fail "sketch update coherence"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
N, d1 = f["K5/model/B"].shape[0], None
docs = {}  # the documents the fit counts: at least min_tokens = 2 tokens (the default filter)
for l in open(sys.argv[2]).read().split("\n")[3:]:
    if l:
        d, w, c = (int(v) for v in l.split())
        docs.setdefault(d, []).append((w, c))
d1 = np.zeros(N, dtype=np.int64)
for words in docs.values():
    if sum(c for _, c in words) >= 2:
        for w, _ in words: d1[w - 1] += 1
B = f["K5/model/B"][:]
top = np.argsort(-B, axis=0, kind="stable")[:20]
unseen = sorted(k for k in range(5) if (d1[top[:, k]] == 0).any())
for name in ("coherence", "npmi"):
    values, (mean, std) = f["K5/metrics/" + name][:], f["K5/metrics"].attrs[name]
    assert sorted(np.flatnonzero(np.isnan(values)).tolist()) == unseen, (name, values, unseen)
    assert 1 <= len(unseen) < 5, unseen  # the cut words are still top words of some topic, not of all
    measured = values[~np.isnan(values)]
    assert np.isfinite(measured).all() and abs(mean - measured.mean()) <= 1e-9 * abs(mean), (values, mean)
    assert len(measured) < 2 or abs(std - measured.std(ddof=1)) <= 1e-9 * abs(std), (values, std)
note = f["K5/metrics"].attrs["note"]
note = note.decode() if isinstance(note, bytes) else note
assert "not the 2667 kept as the old model's sketch" in note and f"{len(unseen)} of 5 topics not measured there" in note, note
PY
else
  fail "sketch update of a cut third: $(tail -2 "$work/err")"
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
