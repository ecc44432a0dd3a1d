#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end: which pipeline jsmf fit takes, and the compressed one through the commands
# downstream. auto (the default) takes the compressed pipeline on 1,500 words at K = 5
# and says why, the dense one when a dense setting is given or on 300 words; the
# compressed fit recovers the planted topics, refuses settings it would drop, fits α and
# infers θ (--infer); sweep --pipeline compressed writes a model and a row per K, and one
# array task's model equals the whole sweep's; ENN's settings ask for the compressed pipeline;
# synth --stream writes one corpus in parts at any rank count, and fit reads the parts; a
# compressed fit killed mid-ENN resumes from its checkpoint to the uninterrupted model.
# Usage: pipeline_e2e.sh JSMF CHECK_MODEL_FILE MPIEXEC
set -u
jsmf=$1 checker=$2 mpiexec=$3
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
here=$(cd "$(dirname "$0")" && pwd)
python=/usr/bin/python3; [[ -x $python ]] || python=python3

"$jsmf" -q synth --dir "$work" --name p --docs 4000 --words 1500 --topics 5 --word-concentration 1.0 \
  --anchor-mass 0.03 --doc-length 80 --seed 3 || fail synth
"$jsmf" -q synth --dir "$work" --name s --docs 1000 --words 300 --topics 5 --seed 3 || fail "synth small"
corpus=(--corpus "$work/docword.p.txt" --vocab "$work/vocab.p.txt")

# 1. auto on 1,500 words: compressed, with its reason in the log.
if run 2 fit "${corpus[@]}" --topics 5 --out "$work/auto.h5" >"$work/auto.out" 2>"$work/auto.err"; then
  grep -q "the compressed pipeline: N = 1500 words" "$work/auto.err" && ok "auto takes compressed on 1,500 words, says why" \
    || fail "auto's choice not said: $(grep pipeline "$work/auto.err")"
  grep -q "pipeline=compressed" "$work/auto.out" && ok "the jsmf-fit line names the pipeline" || fail "jsmf-fit line"
  # Stated bounds at this size (1,500 words, 4,000 documents of 80 tokens): a topic within
  # 0.25 in L1 after matching, A within 0.15 in total.
  "$checker" "$work/auto.h5" 5 "$work/truth.p.h5" 0.25 0.15 && ok "auto's compressed fit finds the planted topics" \
    || fail "the compressed fit's topics"
else
  fail "fit (auto): $(cat "$work/auto.err")"
fi
# 1b. A product's exchange held to 1 MiB runs in column panels (the range finder's block of
# 15 columns in two panels, the metrics' 128 probes in 16): the same model, bit for bit.
if run 2 fit "${corpus[@]}" --topics 5 --product-buffer-mb 1 --out "$work/panels.h5" >/dev/null 2>"$work/panels.err"; then
  read -r block width < <(sed -nE 's/.*a block of ([0-9]+) columns runs in panels of ([0-9]+).*/\1 \2/p' "$work/panels.err")
  [[ -n ${width:-} && $width -lt $block ]] && ok "--product-buffer-mb 1: the range finder's $block columns in panels of $width" \
    || fail "no panels said: $(grep 'a block of' "$work/panels.err")"
  "$python" "$here/compare_h5.py" "$work/auto.h5" "$work/panels.h5" >"$work/diff" \
    && ok "--product-buffer-mb 1: column panels, the same model bit for bit" || { fail "panels' model differs"; head -5 "$work/diff"; }
else
  fail "fit --product-buffer-mb 1: $(cat "$work/panels.err")"
fi
# 2. A dense setting keeps auto dense; so does a small vocabulary.
run 2 fit "${corpus[@]}" --topics 5 --stop iterations --iterations 20 --no-metrics --out "$work/dense.h5" \
  >"$work/dense.out" 2>"$work/dense.err" || fail "fit --stop iterations: $(cat "$work/dense.err")"
grep -q "the dense pipeline: --stop, --iterations are settings of the dense pipeline" "$work/dense.err" \
  && grep -q "pipeline=dense" "$work/dense.out" && ok "a dense setting keeps auto dense" || fail "dense setting: $(cat "$work/dense.err")"
run 2 fit --corpus "$work/docword.s.txt" --vocab "$work/vocab.s.txt" --topics 5 --no-metrics --out "$work/small.h5" \
  >/dev/null 2>"$work/small.err" || fail "fit small"
grep -q "the dense pipeline: N = 300 words" "$work/small.err" && ok "auto takes dense on 300 words" || fail "small: $(grep pipeline "$work/small.err")"
# 3. Asked for compressed, a dense setting is an error, not dropped silently.
for bad in "--rectify dc" "--solver kl" "--iterations 5" "--anchors fastanchor --projection-dim 500"; do
  # shellcheck disable=SC2086
  if run 2 fit "${corpus[@]}" --topics 5 --pipeline compressed $bad --out "$work/bad.h5" >/dev/null 2>"$work/err"; then
    fail "--pipeline compressed $bad was accepted"
  else
    [[ $(grep -c "error:" "$work/err") -eq 1 && ! -e $work/bad.h5 ]] && ok "--pipeline compressed $bad refused once: $(grep error: "$work/err")" \
      || fail "--pipeline compressed $bad: $(cat "$work/err")"
  fi
done
# 4. α and θ from a compressed fit.
if run 2 fit "${corpus[@]}" --topics 5 --pipeline compressed --alpha --infer "$work/theta.h5" --no-metrics \
     --out "$work/alpha.h5" >/dev/null 2>"$work/err"; then
  "$python" - "$work/alpha.h5" "$work/theta.h5" <<'PY' && ok "compressed fit: alpha and --infer's theta" || fail "alpha/theta"
import sys, h5py, numpy as np
m, t = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
alpha = m["K5/model/alpha"][()]
assert alpha.shape == (5,) and np.all(alpha > 0), alpha
theta = t["theta"][()]
assert theta.shape[1] == 5 and theta.shape[0] > 3000, theta.shape
assert np.allclose(theta.sum(axis=1), 1, atol=1e-9)
PY
else
  fail "fit --pipeline compressed --alpha --infer: $(cat "$work/err")"
fi
# 4b. B kept by rows (no rank holds N x K): at 1 and 3 ranks the same model (rounding apart:
# --meaning), ClustAcc and --infer (each rank the rows of B its documents use, from the ranks that hold them)
# included; the 3-rank θ equals jsmf infer's from the written model, bit for bit.
for P in 1 3; do
  run $P fit "${corpus[@]}" --topics 5 --pipeline compressed --enn-iterations 20 --labels "$work/labels.p.txt"     --infer "$work/rows_theta$P.h5" --out "$work/rows$P.h5" >"$work/rows$P.out" 2>"$work/err"     || fail "fit at $P ranks with --labels and --infer: $(cat "$work/err")"
done
grep -q "clustacc=" "$work/rows3.out" && ok "B by rows: ClustAcc measured at 3 ranks" || fail "no clustacc at 3 ranks"
"$python" - "$work/rows1.h5" "$work/rows3.h5" <<'PY' && ok "B by rows: the 3-rank model is the 1-rank one (anchors, top words, metrics; B, B̆, A within 1e-7)" || fail "rows1 vs rows3"
import sys, h5py, numpy as np
one, three = (h5py.File(f, "r")["K5"] for f in sys.argv[1:3])
for name in ("model/anchors", "topics/top_word_ids"):
    assert np.array_equal(one[name][()], three[name][()]), name
for name in ("model/B", "model/B_breve", "model/A", "model/unigram"):
    a, b = one[name][()], three[name][()]
    assert a.shape == b.shape and np.max(np.abs(a - b)) <= 1e-7 * np.max(np.abs(a)), (name, np.max(np.abs(a - b)))
assert three["model/B"].chunks is not None and three["model/B"].compression == "gzip", "B written by rows, deflated"
for name in one["metrics"]:  # each metric's values: the same measures on B, reduced over the ranks
    a, b = np.asarray(one["metrics"][name][()]), np.asarray(three["metrics"][name][()])
    assert np.allclose(a, b, rtol=1e-6, atol=1e-9, equal_nan=True), name
for name, a in one["metrics"].attrs.items():  # means and deviations (ClustAcc's k-means aside)
    if name != "note" and not name.startswith("clustacc"):
        assert np.allclose(a, three["metrics"].attrs[name], rtol=1e-6, atol=1e-9, equal_nan=True), name
PY
run 1 infer --model "$work/rows3.h5" --corpus "$work/docword.p.txt" --out "$work/rows_theta_file.h5" >/dev/null 2>"$work/err" \
  || fail "infer from rows3.h5: $(cat "$work/err")"
"$python" "$here/compare_h5.py" "$work/rows_theta3.h5" "$work/rows_theta_file.h5" >"$work/diff" \
  && ok "B by rows: fit --infer at 3 ranks gives jsmf infer's θ from the file, bit for bit" \
  || { fail "--infer from rows vs infer from the file"; head -5 "$work/diff"; }
# 5. sweep --pipeline compressed: a model and a row per K; an array task gives the same model.
if run 2 sweep "${corpus[@]}" --pipeline compressed --topics 4,5 --enn-iterations 30 --out-dir "$work/sw" \
     >/dev/null 2>"$work/err"; then
  "$python" - "$work/sw" <<'PY' && ok "sweep --pipeline compressed: 2 rows, enn, their files" || fail "sweep CSV"
import sys, csv, os
rows = list(csv.DictReader(open(os.path.join(sys.argv[1], "sweep.csv"))))
assert [(r["topics"], r["rectify"], r["solver"]) for r in rows] == [("4", "enn", "active-set"), ("5", "enn", "active-set")], rows
for r in rows:
    assert os.path.getsize(os.path.join(sys.argv[1], r["file"])) > 0
    assert r["coherence"] != "" and float(r["enn_seconds"]) > 0 and r["pipeline"] == "compressed"
PY
  run 2 sweep "${corpus[@]}" --pipeline compressed --topics 4,5 --enn-iterations 30 --task 1 --out-dir "$work/task" \
    >/dev/null 2>"$work/err" || fail "sweep --task 1: $(cat "$work/err")"
  "$python" "$here/compare_h5.py" "$work/sw/runs/K5_enn_active-set.h5" "$work/task/runs/K5_enn_active-set.h5" >"$work/diff" \
    && ok "sweep --task 1 gives the whole sweep's K = 5 model" || { fail "task model differs"; head -5 "$work/diff"; }
else
  fail "sweep --pipeline compressed: $(cat "$work/err")"
fi
run 2 sweep "${corpus[@]}" --pipeline compressed --topics 5 --rectify ap --out-dir "$work/bad" >/dev/null 2>"$work/err"
grep -q "does not use --rectify" "$work/err" && ok "sweep --pipeline compressed --rectify refused" \
  || fail "sweep --pipeline compressed --rectify: $(cat "$work/err")"
run 2 sweep "${corpus[@]}" --pipeline compressed --topics 5 --solver active-set --anchors qr --enn-iterations 5 \
  --no-metrics --out-dir "$work/said" >/dev/null 2>"$work/err" && ok "sweep --pipeline compressed takes --solver active-set" \
  || fail "sweep --pipeline compressed --solver active-set: $(cat "$work/err")"
run 2 sweep "${corpus[@]}" --pipeline compressed --topics 4,5 --method anchorfree-lp --no-metrics --out-dir "$work/af" \
  >/dev/null 2>"$work/err" && "$python" - "$work/af" <<'PY' && ok "sweep --pipeline compressed --method anchorfree-lp: 2 rows, AnchorFree's models" \
  || fail "sweep --pipeline compressed --method anchorfree-lp: $(cat "$work/err")"
import csv, sys, h5py
d = sys.argv[1]
rows = list(csv.DictReader(open(f"{d}/sweep.csv")))
assert [r["topics"] for r in rows] == ["4", "5"], rows
for r in rows:
    assert float(r["anchorfree_seconds"]) > 0 and r["model_method"] == "anchorfree-lp", r
    f = h5py.File(f"{d}/{r['file']}", "r")
    m = f[f"K{r['topics']}/model"].attrs["method"]
    assert (m.decode() if isinstance(m, bytes) else m) == "anchorfree-lp", m
PY
# 6. ENN's settings: under auto they ask for the compressed pipeline (even on 300 words);
#    with a dense setting, or with --pipeline dense, they are an error.
run 2 fit --corpus "$work/docword.s.txt" --vocab "$work/vocab.s.txt" --topics 5 --enn-iterations 10 --no-metrics \
  --out "$work/enn.h5" >/dev/null 2>"$work/err"
grep -q "the compressed pipeline: --enn-iterations is a setting of the compressed pipeline" "$work/err" \
  && ok "--enn-iterations makes auto compressed" || fail "--enn-iterations under auto: $(cat "$work/err")"
# ENN's stop: given, --enn-iterations runs exactly that many, plain (ω = 1); unset (auto.h5,
# step 1), at most 75, over-relaxed (ω = 1.9), without looks at the topics (those are a warm
# update's), stopping sooner only at a fixed point, each said in the file and the log.
"$python" - "$work/enn.h5" "$work/auto.h5" <<'PY' && ok "ENN: --enn-iterations exact, the default stops by its rule, said in the file" \
  || fail "ENN's stop in the files"
import sys, h5py, math
with h5py.File(sys.argv[1], "r") as f:
    r = f["/K5/rectification"].attrs
    assert r["stop_reason"].decode() == "iterations" and r["iterations"] == 10, dict(r)
    setting = lambda name: f.attrs[name].decode() if isinstance(f.attrs[name], bytes) else str(f.attrs[name])
    assert setting("enn_relaxation") == "1" and setting("enn_iterations") == "10", "the fixed count's settings"
    assert len(f["/K5/compressed/enn/change"]) == 10
    assert all(math.isnan(v) for v in f["/K5/compressed/enn/look_specificity"][()]), "looks without the rule"
with h5py.File(sys.argv[2], "r") as f:
    r = f["/K5/rectification"].attrs
    setting = lambda name: f.attrs[name].decode() if isinstance(f.attrs[name], bytes) else str(f.attrs[name])
    assert setting("enn_relaxation") == "1.9" and setting("enn_iterations") == "75", "the settled mode's settings"
    reason, n = r["stop_reason"].decode(), int(r["iterations"])
    looks = [(t + 1, v) for t, v in enumerate(f["/K5/compressed/enn/look_specificity"][()]) if not math.isnan(v)]
    assert n == len(f["/K5/compressed/enn/change"]) and n <= 75, n
    assert not looks, f"looks at the topics from Y₀: {looks}"
    if reason == "fixed-point":
        assert f["/K5/compressed/enn/corrections"][-1] == 0 and f["/K5/compressed/enn/change"][-1] <= 1e-10, \
            "a fixed point with corrections or a move"
    else:
        assert reason == "iterations" and n == 75, (reason, n)
PY
grep -q "enn: stopped after\|enn: 75 iterations" "$work/auto.err" && ok "the log says why ENN stopped" \
  || fail "ENN's stop not said: $(grep enn: "$work/auto.err" | tail -3)"
reason=$("$python" -c 'import sys, h5py; print(h5py.File(sys.argv[1], "r")["/K5/rectification"].attrs["stop_reason"].decode())' "$work/auto.h5")
run 1 show "$work/auto.h5" >"$work/show.txt" 2>&1 && grep -q "rectification: enn, [0-9]* iterations (stopped: $reason)" "$work/show.txt" \
  && ok "show says why ENN stopped ($reason)" || fail "show: $(grep rectification "$work/show.txt")"
for bad in "--iterations 5" "--pipeline dense"; do
  # shellcheck disable=SC2086
  run 2 fit "${corpus[@]}" --topics 5 --enn-iterations 10 $bad --out "$work/bad.h5" >/dev/null 2>"$work/err"
  [[ $? -ne 0 && $(grep -c "error:.*--enn-iterations" "$work/err") -eq 1 && ! -e $work/bad.h5 ]] \
    && ok "--enn-iterations with $bad refused once" || fail "--enn-iterations with $bad: $(cat "$work/err")"
done
# 7. synth --stream: each rank its share of the documents, written as it goes; the same
#    corpus at 1 and 3 ranks; jsmf fit takes the parts together and finds the planted topics.
mkdir -p "$work/st1" "$work/st3"
for np in 1 3; do
  run $np -q synth --stream --dir "$work/st$np" --name z --docs 4000 --words 1500 --topics 5 --doc-length 80 \
    --word-concentration 1.0 --anchor-mass 0.03 --seed 3 || fail "synth --stream at $np ranks"
done
ls "$work/st3"/docword.z.part000{0,1,2}.txt >/dev/null 2>&1 && ! ls -a "$work/st3" | grep -q partial \
  && ok "synth --stream at 3 ranks: three parts, no partial files" || fail "synth --stream parts: $(ls -a "$work/st3")"
"$python" - "$work/st1" "$work/st3" <<'PY' && ok "synth --stream: the same corpus at 1 and 3 ranks" || fail "streamed corpora differ"
import sys, glob
def corpus(folder):
    rows, offset, header_docs = [], 0, 0
    for part in sorted(glob.glob(folder + "/docword.z.part*.txt")):
        lines = open(part).read().split("\n")
        docs, words, nnz = int(lines[0]), int(lines[1]), int(lines[2])
        body = [tuple(map(int, l.split())) for l in lines[3:] if l]
        assert len(body) == nnz and words == 1500, (part, len(body), nnz)
        rows += [(d + offset, w, c) for d, w, c in body]
        offset += docs
    return offset, rows
a, b = corpus(sys.argv[1]), corpus(sys.argv[2])
assert a[0] == b[0] == 4000 and a == b, (a[0], b[0], len(a[1]), len(b[1]))
PY
if run 2 fit --corpus "$work/st3"/docword.z.part000{0,1,2}.txt --vocab "$work/st3/vocab.z.txt" --topics 5 \
     --out "$work/stream.h5" >/dev/null 2>"$work/err"; then
  "$checker" "$work/stream.h5" 5 "$work/st3/truth.z.h5" 0.25 0.15 >/dev/null && ok "fit of the three parts finds the planted topics" \
    || fail "fit of the streamed corpus: $("$checker" "$work/stream.h5" 5 "$work/st3/truth.z.h5" 0.25 0.15 | grep FAIL)"
else
  fail "fit of the streamed parts: $(cat "$work/err")"
fi
run 2 -q synth --stream --gzip --dir "$work/st1" --name bad >/dev/null 2>"$work/err" \
  && fail "synth --stream --gzip accepted" || { grep -q "no --gzip" "$work/err" && ok "synth --stream --gzip refused" || fail "--gzip: $(cat "$work/err")"; }
# 8. A compressed fit killed (SIGKILL, mid-ENN) and resumed from its checkpoint writes the
#    uninterrupted fit's model (ENN continues exactly; at another rank count the rank
#    count moves the last digits, hence rtol 1e-9); a fit that was killed leaves no model.
enn=(--topics 5 --pipeline compressed --enn-iterations 1500 --no-metrics)
( exec setsid timeout 120 "$mpiexec" -np 2 --oversubscribe "$jsmf" fit "${corpus[@]}" "${enn[@]}" \
    --checkpoint "$work/ck.h5" --checkpoint-seconds 0 --out "$work/killed.h5" >/dev/null 2>"$work/killed.err" ) &
killed=$!
for _ in $(seq 600); do
  grep -Eq "checkpoint: ENN after [0-9]{2,} iterations written" "$work/killed.err" 2>/dev/null && break
  sleep 0.1
done
# mpirun and its ranks (which leave mpirun's process group): every process of this fit.
pkill -KILL -f -- "--out $work/killed.h5" 2>/dev/null; wait "$killed" 2>/dev/null
for _ in $(seq 50); do pgrep -f -- "--out $work/killed.h5" >/dev/null || break; sleep 0.1; done
pgrep -f -- "--out $work/killed.h5" >/dev/null && fail "the killed fit's processes are still running"
if [[ -e $work/killed.h5 ]]; then
  fail "the fit was not killed before it finished (make ENN longer)"
else
  done_before=$(grep -Eo "ENN after [0-9]+ iterations written" "$work/killed.err" | tail -1 | grep -Eo "[0-9]+")
  run 2 fit "${corpus[@]}" "${enn[@]}" --out "$work/straight.h5" >/dev/null 2>"$work/err" || fail "uninterrupted fit: $(cat "$work/err")"
  if run 2 fit "${corpus[@]}" "${enn[@]}" --resume "$work/ck.h5" --out "$work/resumed.h5" >/dev/null 2>"$work/resumed.err"; then
    grep -q "resume: from $work/ck.h5: ENN after [0-9]* of 1500 iterations" "$work/resumed.err" \
      && ok "killed after $done_before ENN iterations, resumed from the checkpoint" || fail "resume not said: $(cat "$work/resumed.err")"
    "$python" "$here/compare_h5.py" "$work/straight.h5" "$work/resumed.h5" >"$work/diff" \
      && ok "the resumed fit's model is the uninterrupted one's, bit for bit" || { fail "resumed model differs"; head -5 "$work/diff"; }
  else
    fail "fit --resume: $(cat "$work/resumed.err")"
  fi
  # At 3 ranks: as any two rank counts agree (the largest entry's 1e-9).
  run 3 fit "${corpus[@]}" "${enn[@]}" --resume "$work/ck.h5" --out "$work/resumed3.h5" >/dev/null 2>"$work/err" \
    || fail "fit --resume at 3 ranks: $(cat "$work/err")"
  "$python" - "$work/straight.h5" "$work/resumed3.h5" <<'PY' && ok "resumed at 3 ranks: the same model to 1e-9" || fail "resumed at 3 ranks differs"
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
assert np.array_equal(a["K5/model/anchors"][()], b["K5/model/anchors"][()])
for name in ["K5/model/B", "K5/model/A", "K5/compressed/Y"]:
    x, y = a[name][()], b[name][()]
    assert np.abs(x - y).max() <= 1e-9 * np.abs(x).max(), (name, np.abs(x - y).max())
PY
  run 2 fit "${corpus[@]}" --topics 5 --pipeline compressed --enn-iterations 1400 --no-metrics --resume "$work/ck.h5" \
    --out "$work/bad.h5" >/dev/null 2>"$work/err"
  [[ $? -ne 0 && $(grep -c "error:.*made with enn_iterations = 1500, this run has 1400" "$work/err") -eq 1 && ! -e $work/bad.h5 ]] \
    && ok "a checkpoint of other settings is refused once" || fail "resume with other settings: $(cat "$work/err")"
fi
finish
