#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end: fit --method anchorfree-lp | anchorfree-pds. On a separable planted corpus
# AnchorFree and the rectified anchor words find the same topics (and the planted ones);
# the model file holds the raw E*, M and A = E* normalized; show, eval and infer read it;
# --estimator tfidf and every anchor finder run through fit; bad combinations fail once.
# Usage: anchorfree_e2e.sh JSMF MPIEXEC
set -u
jsmf=$1 mpiexec=$2
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
python=/usr/bin/python3; [[ -x $python ]] || python=python3

"$jsmf" -q synth --dir "$work" --name s --docs 6000 --words 300 --topics 5 --word-concentration 1.0 \
  --anchor-mass 0.04 --doc-length 80 --seed 3 >/dev/null || fail synth
common=(--corpus "$work/docword.s.txt" --vocab "$work/vocab.s.txt" --topics 5)
for method in anchors anchorfree-lp anchorfree-pds; do
  for np in 1 3; do
    run $np -q fit "${common[@]}" --method $method --out "$work/$method.$np.h5" >"$work/out.$method" 2>"$work/err" \
      || fail "fit --method $method at $np ranks: $(cat "$work/err")"
  done
  grep -q "method=$method" "$work/out.$method" && ok "fit --method $method (1 and 3 ranks)" || fail "no jsmf-fit line for $method"
done
"$python" - "$work" <<'PY' && ok "AnchorFree-LP, -PDS and rectified anchors find the same 5 topics, near the planted ones; schema; ranks agree" || fail "topics differ"
import sys, h5py, numpy as np
from scipy.optimize import linear_sum_assignment
w = sys.argv[1]
truth = h5py.File(f"{w}/truth.s.h5", "r")["model/B"][:]
def B(name, np_):
    f = h5py.File(f"{w}/{name}.{np_}.h5", "r")
    return f, f["K5/model/B"][:]
def l1(X, Y):
    cost = np.abs(X[:, :, None] - Y[:, None, :]).sum(0)
    r, c = linear_sum_assignment(cost)
    return cost[r, c].max()
fa, Ba = B("anchors", 1)
for m in ("anchorfree-lp", "anchorfree-pds"):
    f, Bm = B(m, 1)
    _, B3 = B(m, 3)
    g = f["K5/model"]
    method = g.attrs["method"]
    method = method.decode() if isinstance(method, bytes) else method
    assert method == m, method
    af = f["K5/anchorfree"]
    E, M = af["E"][:], af["M"][:]
    assert E.shape == (5, 5) and M.shape == (5, 5) and af["eigenvalues"].shape == (5,)
    assert int(af.attrs["converged"]) == 1, f"{m} did not converge"
    A = g["A"][:]
    assert int(af.attrs["a_is_distribution"]) == 1 and abs(A.sum() - 1) < 1e-9 and np.allclose(A, E / E.sum(), atol=1e-12)
    assert np.allclose(Bm.sum(0), 1) and Bm.min() >= 0
    d_anchor, d_truth, d_ranks = l1(Bm, Ba), l1(Bm, truth), l1(Bm, B3)
    print(m, "max L1 to anchors %.4f, to truth %.4f, 1 vs 3 ranks %.2e" % (d_anchor, d_truth, d_ranks))
    assert d_anchor < 0.05 and d_truth < 0.2 and d_ranks < 1e-6, (m, d_anchor, d_truth, d_ranks)
print("anchors: max L1 to truth %.4f" % l1(Ba, truth))
PY

# The compressed pipeline: the LP and PDS on ENN's factor by rows; the same topics as the
# dense pipeline's (measured 1e-4 in L1: ENN's rectification against AP's), 1 and 3 ranks
# alike; show and infer read the file.
for method in anchorfree-lp anchorfree-pds; do
  for np in 1 3; do
    run $np -q fit "${common[@]}" --method $method --pipeline compressed --out "$work/c.$method.$np.h5" >"$work/out.c.$method" \
      2>"$work/err" || fail "fit --method $method --pipeline compressed at $np ranks: $(cat "$work/err")"
  done
  grep -q "method=$method pipeline=compressed rectify=enn" "$work/out.c.$method" \
    && ok "fit --method $method --pipeline compressed (1 and 3 ranks)" || fail "no compressed jsmf-fit line for $method"
done
"$python" - "$work" <<'PY' && ok "compressed AnchorFree: the dense pipeline's topics, the planted ones, ranks agree" || fail "compressed AnchorFree topics differ"
import sys, h5py, numpy as np
from scipy.optimize import linear_sum_assignment
w = sys.argv[1]
truth = h5py.File(f"{w}/truth.s.h5", "r")["model/B"][:]
def l1(X, Y):
    cost = np.abs(X[:, :, None] - Y[:, None, :]).sum(0)
    r, c = linear_sum_assignment(cost)
    return cost[r, c].max()
for m in ("anchorfree-lp", "anchorfree-pds"):
    f = h5py.File(f"{w}/c.{m}.1.h5", "r")
    assert f.attrs["pipeline"] in (b"compressed", "compressed")
    B1, B3 = f["K5/model/B"][:], h5py.File(f"{w}/c.{m}.3.h5", "r")["K5/model/B"][:]
    Bd = h5py.File(f"{w}/{m}.1.h5", "r")["K5/model/B"][:]
    af = f["K5/anchorfree"]
    assert int(af.attrs["converged"]) == 1 and int(af.attrs["a_is_distribution"]) == 1
    assert f["K5/compressed/Y"].shape == (300, 5)
    d_dense, d_truth, d_ranks = l1(B1, Bd), l1(B1, truth), l1(B1, B3)
    print(m, "compressed: max L1 to dense %.4f, to truth %.4f (dense %.4f), 1 vs 3 ranks %.2e" % (d_dense, d_truth, l1(Bd, truth), d_ranks))
    assert d_dense < 0.01 and d_truth < l1(Bd, truth) + 0.01 and d_ranks < 1e-6, (m, d_dense, d_truth, d_ranks)
PY
"$jsmf" show "$work/c.anchorfree-lp.3.h5" --top-words 5 >"$work/show.txt" 2>&1 && grep -q "rectification: enn, .*anchorfree-lp: .* sweeps, converged" "$work/show.txt" \
  && run 2 -q infer --model "$work/c.anchorfree-lp.3.h5" --corpus "$work/docword.s.txt" --out "$work/c.theta.h5" >/dev/null 2>"$work/err" \
  && ok "show and infer read a compressed AnchorFree model" || fail "show/infer on compressed AnchorFree: $(cat "$work/show.txt" "$work/err")"

run 2 -q fit "${common[@]}" --method anchorfree-lp --lp-no-screening --out "$work/full.h5" >/dev/null 2>"$work/err" \
  && "$python" - "$work/full.h5" "$work/anchorfree-lp.1.h5" <<'PY' && ok "--lp-no-screening: Clp gets every row, and the same topics as the screened LP" || fail "--lp-no-screening: $(cat "$work/err")"
import sys, h5py, numpy as np
full, screened = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
rows_full, rows_screened = full["K5/anchorfree"].attrs["working_rows"], screened["K5/anchorfree"].attrs["working_rows"]
d = np.abs(full["K5/model/B"][:] - screened["K5/model/B"][:]).max()
print("working rows: all %d, screened %d; max |B difference| %.2e" % (rows_full, rows_screened, d))
assert rows_full == 300 and rows_screened < rows_full and d < 1e-8
PY
"$jsmf" show "$work/anchorfree-lp.1.h5" --top-words 5 >"$work/show.txt" 2>&1 && grep -q "anchorfree-lp: .* sweeps, converged" "$work/show.txt" && grep -q "representative" "$work/show.txt" \
  && ok "show prints an AnchorFree model" || fail "show: $(tail -5 "$work/show.txt")"
run 2 -q eval "$work/anchorfree-lp.1.h5" --corpus "$work/docword.s.txt" --truth "$work/truth.s.h5" \
  --out "$work/eval.h5" >"$work/eval.txt" 2>"$work/err" && "$python" - "$work/eval.h5" <<'PY' \
  && ok "eval --truth reads an AnchorFree model: B within 0.1 (L1) of the planted topics" || fail "eval: $(cat "$work/err")"
import sys, h5py
t = h5py.File(sys.argv[1], "r")["K5/truth"]
print("eval --truth: b_l1 %.4f" % t.attrs["b_l1"])
assert t.attrs["b_l1"] < 0.1
PY
run 2 -q infer --model "$work/anchorfree-pds.1.h5" --corpus "$work/docword.s.txt" --out "$work/theta.h5" \
  >/dev/null 2>"$work/err" && ok "infer with an AnchorFree model" || fail "infer: $(cat "$work/err")"

run 2 -q fit "${common[@]}" --estimator tfidf --method anchorfree-lp --out "$work/tfidf.h5" >/dev/null 2>"$work/err" \
  && run 2 -q eval "$work/tfidf.h5" --corpus "$work/docword.s.txt" --vocab "$work/vocab.s.txt" --out "$work/tfidf.eval.h5" \
     >/dev/null 2>>"$work/err" \
  && "$python" - "$work/tfidf.h5" "$work/tfidf.eval.h5" <<'PY' && ok "--estimator tfidf with anchorfree-lp: recorded, and eval rebuilds the same C (approximation error equal)" || fail "tfidf: $(cat "$work/err")"
import sys, h5py
f, e = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
est = f.attrs["estimator"]; est = est.decode() if isinstance(est, bytes) else est
assert est == "tfidf", est
a, b = f["K5/metrics"].attrs["approximation_original"][0], e["K5/metrics"].attrs["approximation_original"][0]
print("approximation_original: fit %.9g, eval %.9g" % (a, b))
assert abs(a - b) <= 1e-9 * abs(a), (a, b)
PY
run 2 -q fit --corpus "$work/docword.s.txt" --vocab "$work/vocab.s.txt" --estimator tfidf --method anchorfree-lp --topics 4,6 --out "$work/multi.h5" >/dev/null 2>"$work/err" \
  && "$python" -c "
import h5py; f = h5py.File('$work/multi.h5', 'r'); assert f['K4/anchorfree/E'].shape == (4, 4) and f['K6/anchorfree/E'].shape == (6, 6)" \
  && ok "--topics 4,6 with AnchorFree: one group each" || fail "--topics 4,6: $(cat "$work/err")"
run 2 -q sweep --corpus "$work/docword.s.txt" --vocab "$work/vocab.s.txt" --topics 5 --rectify ap --method anchorfree-lp \
  --out-dir "$work/sweep" >/dev/null 2>"$work/err" && head -1 "$work/sweep/"*.csv | grep -q anchorfree_seconds \
  && ok "sweep --method anchorfree-lp (its seconds in the CSV)" || fail "sweep: $(cat "$work/err") $(ls "$work/sweep")"
run 2 -q fit --corpus "$work/docword.s.txt" --vocab "$work/vocab.s.txt" --method anchorfree-pds --hierarchy 5,2 \
  --out "$work/bad3.h5" >/dev/null 2>"$work/err"
[[ $? == 1 ]] && grep -q "hierarchy works with --method anchors" "$work/err" && ok "--hierarchy with AnchorFree refused (exit 1)" || fail "--hierarchy: $(cat "$work/err")"
for finder in spa snpa xray fastanchor; do
  run 2 -q fit "${common[@]}" --anchors $finder --out "$work/$finder.h5" >/dev/null 2>"$work/err" \
    && ok "fit --anchors $finder" || fail "fit --anchors $finder: $(cat "$work/err")"
  run 2 -q fit "${common[@]}" --anchors $finder --pipeline compressed --out "$work/c.$finder.h5" >/dev/null 2>"$work/err" \
    && "$python" -c "
import h5py
d, c = h5py.File('$work/$finder.h5', 'r'), h5py.File('$work/c.$finder.h5', 'r')
assert sorted(d['K5/model/anchors'][:]) == sorted(c['K5/model/anchors'][:]), 'anchors differ'
m = c['K5/model'].attrs['anchor_method']
assert (m.decode() if isinstance(m, bytes) else m) == '$finder', m" \
    && ok "fit --anchors $finder --pipeline compressed: the dense pipeline's anchors" \
    || fail "fit --anchors $finder --pipeline compressed: $(cat "$work/err")"
done

run 2 -q fit "${common[@]}" --method anchorfree-lp --recover-a ls --out "$work/bad.h5" >/dev/null 2>"$work/err"
rc=$?
[[ $rc == 1 && $(grep -c "recover-a" "$work/err") == 1 && ! -e "$work/bad.h5" ]] \
  && ok "--recover-a with AnchorFree: exit 1, one message, no file" || fail "bad combination: rc $rc $(cat "$work/err")"
# Ten words of which only three ever occur: C has rank 3, so no 10 x 5 square root.
{ echo 40; echo 10; echo 120; for d in $(seq 1 40); do for w in 1 2 3; do echo "$d $w $(( (d + w) % 3 + 1 ))"; done; done; } \
  >"$work/docword.r3.txt"
for w in a b c d e f g h i j; do echo "word$w"; done >"$work/vocab.r3.txt"
run 2 -q fit --corpus "$work/docword.r3.txt" --vocab "$work/vocab.r3.txt" --method anchorfree-lp --rectify none \
  --topics 5 --out "$work/bad2.h5" >/dev/null 2>"$work/err"
rc=$?
[[ $rc == 2 && $(grep -c "positive eigenvalues" "$work/err") == 1 && ! -e "$work/bad2.h5" ]] \
  && ok "a C of rank 3 asked for 5 AnchorFree topics: exit 2, one message, no file" || fail "no root: rc $rc $(tail -3 "$work/err")"
run 2 -q fit --corpus "$work/docword.r3.txt" --vocab "$work/vocab.r3.txt" --method anchorfree-lp --pipeline compressed \
  --enn-iterations 0 --topics 5 --out "$work/bad2.h5" >/dev/null 2>"$work/err"
rc=$?
[[ $rc == 2 && $(grep -c "positive eigenvalues" "$work/err") == 1 && ! -e "$work/bad2.h5" ]] \
  && ok "the same, compressed and unrectified: exit 2, one message, no file" || fail "no root, compressed: rc $rc $(tail -3 "$work/err")"
finish
