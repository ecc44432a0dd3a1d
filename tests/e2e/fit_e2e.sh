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
separable_corpus
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
# --enn-relaxation, on few short documents (C's rank-K part has negative pairs; the planted
# corpus above has none): the setting in the file, and after 20 iterations a third of the
# negative mass plain ENN's 20 leave (measured 4.7e-5 against 1.4e-4), the first projection
# plain (the second iteration's E the same).
"$jsmf" -q synth --dir "$work/noisy" --name n --docs 400 --words 300 --topics 6 --doc-length 15 --seed 5 || fail "synth noisy"
for omega in 1 1.9; do
  run_quiet 3 fit --corpus "$work/noisy/docword.n.txt" --vocab "$work/noisy/vocab.n.txt" --pipeline compressed --topics 4 \
    --enn-iterations 20 --enn-relaxation $omega --out "$work/relaxed$omega.h5" >/dev/null 2>"$work/err" ||
    fail "fit --enn-relaxation $omega: $(tail -2 "$work/err")"
done
/usr/bin/python3 - "$work/relaxed1.h5" "$work/relaxed1.9.h5" <<'PY' \
  && ok "fit --enn-relaxation 1.9: recorded, less negative mass left than plain ENN" || fail "fit --enn-relaxation 1.9"
import sys, h5py
plain, relaxed = (h5py.File(p, "r") for p in sys.argv[1:])
value = lambda f: float(f.attrs["enn_relaxation"].decode() if isinstance(f.attrs["enn_relaxation"], bytes) else f.attrs["enn_relaxation"])
assert value(plain) == 1 and value(relaxed) == 1.9, "the setting"
first = [f["K4/compressed/enn/negative_mass"][1] for f in (plain, relaxed)]  # E after the first projection
assert first[0] == first[1] > 0, f"the first projection is not the plain one: {first}"
left = [f["K4/compressed"].attrs["final_negative_mass"] for f in (plain, relaxed)]
assert 0 < left[1] < 0.5 * left[0], f"negative mass left: relaxed {left[1]}, plain {left[0]}"
PY
# The default (settled) ENN on the same noisy corpus: 75 relaxed iterations (no fixed point
# there), no looks at the topics, and the model of --enn-relaxation 1.9 given, bit for bit;
# --enn-relaxation 1 in the same mode gives another.
for run in default given plain; do
  case $run in default) extra=() ;; given) extra=(--enn-relaxation 1.9) ;; plain) extra=(--enn-relaxation 1) ;; esac
  run_quiet 2 fit --corpus "$work/noisy/docword.n.txt" --vocab "$work/noisy/vocab.n.txt" --pipeline compressed --topics 4 \
    "${extra[@]}" --no-metrics --out "$work/settled_$run.h5" >/dev/null 2>"$work/err" || fail "fit (settled, $run): $(tail -2 "$work/err")"
done
/usr/bin/python3 - "$work/settled_default.h5" "$work/settled_given.h5" "$work/settled_plain.h5" <<'PY' \
  && ok "the default ENN: 75 relaxed iterations, no looks, the same model as --enn-relaxation 1.9" || fail "the default ENN"
import sys, math, h5py, numpy as np
default, given, plain = (h5py.File(p, "r") for p in sys.argv[1:])
r = default["K4/rectification"].attrs
assert r["stop_reason"].decode() == "iterations" and int(r["iterations"]) == 75, dict(r)
assert len(default["K4/compressed/enn/change"]) == 75
assert all(math.isnan(v) for v in default["K4/compressed/enn/look_specificity"][()]), "looks from Y₀"
B = lambda f: f["K4/model/B"][()]
assert np.array_equal(B(default), B(given)), "the default is not --enn-relaxation 1.9"
assert not np.array_equal(B(default), B(plain)), "--enn-relaxation 1 changed nothing"
masses = [f["K4/compressed/enn/negative_mass"][()] for f in (default, plain)]
assert masses[0][1] == masses[1][1] and masses[0][2] != masses[1][2], "the first projection plain, the second relaxed"
PY
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

want=1 expect_error 2 "--precision single applies to AP only" "${corpus[@]}" --topics 5 --rectify dr --precision single

finish
