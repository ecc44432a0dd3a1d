#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end: jsmf infer. θ is the same at 1, 2, 3 and 4 ranks and with 3 threads, and
# fit --infer writes the same; θ is near the planted proportions; a corpus mapped by word
# (permuted vocabulary, unknown words, empty and absent documents) gives the same θ for
# the same documents and the documented markers for the others; a corpus with another
# vocabulary and no --vocab is refused, with nothing written.
# Usage: infer_e2e.sh JSMF MPIEXEC
set -u
jsmf=$1 mpiexec=$2
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
python=/usr/bin/python3; [[ -x $python ]] || python=python3

"$jsmf" -q synth --dir "$work" --name s --docs 3000 --words 300 --topics 4 --word-concentration 1.0 \
  --anchor-mass 0.03 --doc-length 120 --alpha 0.3 --seed 3 >/dev/null || fail synth
corpus=(--corpus "$work/docword.s.txt" --vocab "$work/vocab.s.txt")
run 2 -q fit "${corpus[@]}" --topics 4 --out "$work/m.h5" --infer "$work/fit_theta.h5" --no-metrics \
  >/dev/null 2>"$work/err" || fail "fit --infer: $(cat "$work/err")"
for np in 1 2 3 4; do
  run "$np" -q infer --model "$work/m.h5" --corpus "$work/docword.s.txt" --out "$work/t$np.h5" >"$work/t$np.line" \
    2>"$work/err" || fail "infer at $np ranks: $(cat "$work/err")"
done
OMP_NUM_THREADS=3 run 2 -q infer --model "$work/m.h5" --corpus "$work/docword.s.txt" --out "$work/threads.h5" \
  >/dev/null 2>&1 || fail "infer with 3 threads"
"$python" - "$work" <<'PY' && ok "theta equal at 1-4 ranks, with 3 threads and from fit --infer" || fail "theta differs"
import sys, h5py, numpy as np
w = sys.argv[1]
ref = h5py.File(f"{w}/t1.h5", "r")
for other in ["t2", "t3", "t4", "threads", "fit_theta"]:
    f = h5py.File(f"{w}/{other}.h5", "r")
    for name in ["theta", "dominant_topic", "log_likelihood", "tokens", "oov_tokens", "iterations"]:
        assert np.array_equal(ref[name][:], f[name][:]), (other, name)
    for name in ["per_word_log_likelihood", "perplexity", "tokens", "empty"]:
        assert ref.attrs[name] == f.attrs[name], (other, name)  # summed in corpus order
PY
"$python" - "$work" <<'PY' && ok "theta near the planted proportions" || fail "theta far from the planted proportions"
import sys, h5py, numpy as np
from scipy.optimize import linear_sum_assignment
w = sys.argv[1]
t = h5py.File(f"{w}/t2.h5", "r"); truth = h5py.File(f"{w}/truth.s.h5", "r"); m = h5py.File(f"{w}/m.h5", "r")
B, Bt = m["K4/model/B"][:], truth["model/B"][:]
cost = np.abs(B[:, :, None] - Bt[:, None, :]).sum(0)
rows, cols = linear_sum_assignment(cost)
theta, planted = t["theta"][:], truth["theta"][:][:, cols]   # planted topic of each learned one
present = t["tokens"][:] > 0
err = np.abs(theta[present] - planted[present]).sum(1).mean()
print(f"infer: mean L1 error of theta against the planted proportions {err:.4f} over {present.sum()} documents; "
      f"per-word log-likelihood {t.attrs['per_word_log_likelihood']:.4f}")
assert err < 0.2 and np.isfinite(t.attrs["per_word_log_likelihood"])
PY

# A corpus mapped by word: the vocabulary permuted and two new words; document 1 as it
# was, document 2 only new words, document 3 absent (declared, no lines), document 4 = the
# original document 2 with one new word added.
"$python" - "$work" <<'PY' || fail "writing the mapped corpus"
import sys
w = sys.argv[1]
vocab = open(f"{w}/vocab.s.txt").read().split("\n")[:-1]
lines = open(f"{w}/docword.s.txt").read().split("\n")[3:]
docs = {}
for l in lines:
    if l: d, i, c = map(int, l.split()); docs.setdefault(d, []).append((i, c))
perm = list(reversed(range(len(vocab)))) + [len(vocab), len(vocab) + 1]
new_vocab = [None] * (len(vocab) + 2)
for old, new in enumerate(perm[:len(vocab)]): new_vocab[new] = vocab[old]
new_vocab[len(vocab)], new_vocab[len(vocab) + 1] = "brand_new_a", "brand_new_b"
out = []
for d, entries in [(1, [(perm[i - 1] + 1, c) for i, c in docs[1]]),
                   (2, [(len(vocab) + 1, 3), (len(vocab) + 2, 2)]),
                   (4, [(perm[i - 1] + 1, c) for i, c in docs[2]] + [(len(vocab) + 2, 4)])]:
    out += [f"{d} {i} {c}" for i, c in entries]
open(f"{w}/docword.p.txt", "w").write(f"4\n{len(new_vocab)}\n{len(out)}\n" + "\n".join(out) + "\n")
open(f"{w}/vocab.p.txt", "w").write("\n".join(new_vocab) + "\n")
PY
run 3 -q infer --model "$work/m.h5" --corpus "$work/docword.p.txt" --vocab "$work/vocab.p.txt" --out "$work/p.h5" \
  >/dev/null 2>"$work/err" || fail "infer mapped by word: $(cat "$work/err")"
"$python" - "$work" <<'PY' && ok "mapped by word: same theta; new words counted; empty and absent documents marked" || fail "mapped by word"
import sys, h5py, numpy as np
w = sys.argv[1]
p, t = h5py.File(f"{w}/p.h5", "r"), h5py.File(f"{w}/t1.h5", "r")
th, tt = p["theta"][:], t["theta"][:]
assert np.allclose(th[0], tt[0], rtol=0, atol=1e-12), "doc 1"
assert np.allclose(th[3], tt[1], rtol=0, atol=1e-12), "doc 4 = original doc 2 plus new words"
for d in (1, 2):  # only new words; absent
    assert not th[d].any() and p["dominant_topic"][d] == -1 and p["tokens"][d] == 0, d
assert list(p["oov_tokens"][:]) == [0, 5, 0, 4], list(p["oov_tokens"][:])
assert p.attrs["empty"] == 2 and p.attrs["inferred"] == 2 and p.attrs["oov_tokens"] == 9
PY
run 2 -q infer --model "$work/m.h5" --corpus "$work/docword.p.txt" --out "$work/bad.h5" >/dev/null 2>"$work/err"
rc=$?
[[ $rc == 2 && $(grep -c "give the corpus's --vocab" "$work/err") == 1 && ! -e $work/bad.h5 ]] \
  && ok "another vocabulary without --vocab: exit 2, one message, no file" || fail "vocabulary mismatch: rc $rc $(cat "$work/err")"
# The prior: a model with alpha; the file records the alpha used.
run 2 -q fit "${corpus[@]}" --topics 4 --alpha --out "$work/ma.h5" --no-metrics >/dev/null 2>&1 || fail "fit --alpha"
if run 2 -q infer --model "$work/ma.h5" --corpus "$work/docword.s.txt" --prior alpha --out "$work/pa.h5" >/dev/null 2>"$work/err"; then
  "$python" - "$work" <<'PY' && ok "--prior alpha: the file records the prior and its alpha" || fail "--prior alpha"
import sys, h5py, numpy as np
w = sys.argv[1]
f, m = h5py.File(f"{w}/pa.h5", "r"), h5py.File(f"{w}/ma.h5", "r")
assert f.attrs["prior"] in (b"alpha", "alpha")
assert np.allclose(f.attrs["alpha"], m["K4/model/alpha"][:])
assert f.attrs["prior_alpha_below_one"] == (m["K4/model/alpha"][:] < 1).sum()
PY
else
  fail "--prior alpha: $(cat "$work/err")"
fi
run 2 -q fit "${corpus[@]}" --topics 4 --alpha --out "$work/ma2.h5" --no-metrics --infer "$work/fa.h5" --prior alpha \
  >/dev/null 2>"$work/err" || fail "fit --alpha --infer --prior alpha: $(cat "$work/err")"
"$python" - "$work" <<'PY' && ok "fit --infer --prior alpha equals infer --prior alpha" || fail "fit --infer --prior alpha differs"
import sys, h5py, numpy as np
w = sys.argv[1]
a, b = h5py.File(f"{w}/fa.h5", "r"), h5py.File(f"{w}/pa.h5", "r")
assert np.array_equal(h5py.File(f"{w}/ma2.h5", "r")["K4/model/B"][:], h5py.File(f"{w}/ma.h5", "r")["K4/model/B"][:])
assert np.array_equal(a["theta"][:], b["theta"][:]) and np.allclose(a.attrs["alpha"], b.attrs["alpha"])
PY
run 1 -q infer --model "$work/m.h5" --corpus "$work/docword.s.txt" --out "$work/m.h5" >/dev/null 2>"$work/err"
rc=$?
[[ $rc == 2 ]] && grep -q "is the model file" "$work/err" && "$python" -c "import h5py; h5py.File('$work/m.h5')['K4/model/B']" \
  && ok "--out equal to the model is refused; the model is intact" || fail "--out = --model: rc $rc $(cat "$work/err")"
finish
