#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end: the evaluation. fit stores every metric; jsmf eval measures the same again
# (from C and the corpus, at another rank count), against a planted truth, and refuses a
# corpus that did not build C; AP beats the Baseline on a small planted corpus; jsmf
# synth --from draws from a learned model; jsmf sweep writes its runs and its CSV, also
# as array tasks (jobs/sweep.sbatch); jobs/plot.py draws the three pictures; bad options
# fail once, cleanly.
# Usage: eval_e2e.sh JSMF MPIEXEC SOURCE_DIR
set -u
jsmf=$1 mpiexec=$2 source_dir=$3
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
run_quiet() { local np=$1; shift; run "$np" -q "$@"; }
# Debian's interpreter, where jobs/setup.sh installs python3-h5py (a pyenv python3 may come first in PATH).
python=/usr/bin/python3; [[ -x $python ]] || python=python3
py() { "$python" - "$@"; }

# Word concentration 1: no ordinary word is nearly exclusive to one topic, so the planted
# anchors are the identifiable ones (at 0.5 a near-anchor word can win).
"$jsmf" -q synth --dir "$work" --name e --docs 3000 --words 200 --topics 4 --word-concentration 1.0 \
  --anchor-mass 0.03 --doc-length 50 --seed 5 || fail synth
corpus=(--corpus "$work/docword.e.txt" --vocab "$work/vocab.e.txt")
metric_names="recovery recovery_original approximation approximation_offdiag approximation_original
  approximation_offdiag_original legality validity validity_original dominancy entropy sparsity specificity
  specificity_original dissimilarity
  dissimilarity_soft coherence basis_rank basis_rank_soft basis_quality basis_quality_soft simcount_topic"

# 1. fit stores every metric: [mean, std] attributes, per-topic / per-word datasets.
run_quiet 2 cooc "${corpus[@]}" --out "$work/C.h5" >/dev/null 2>&1 || fail cooc
if run_quiet 2 fit "${corpus[@]}" --topics 4 --iterations 20 --out "$work/m.h5" >"$work/fit.txt" 2>"$work/err"; then
  ok "fit with metrics"
else
  fail "fit with metrics: $(cat "$work/err")"
fi
py "$work/m.h5" $metric_names <<'PY' && ok "fit: /K4/metrics complete" || fail "fit: /K4/metrics"
import sys, math, h5py
f = h5py.File(sys.argv[1], "r"); g = f["K4/metrics"]; N = len(f["vocab"])
single = {"approximation", "approximation_offdiag", "approximation_original", "approximation_offdiag_original",
          "legality", "validity", "validity_original"}
for name in sys.argv[2:]:
    mean, std = g.attrs[name]
    assert math.isfinite(mean), name
    if name in single:
        assert math.isnan(std) and name not in g, name
    else:
        per = g[name].attrs["per"]
        per = per.decode() if isinstance(per, bytes) else str(per)
        assert g[name].shape == ((N,) if per == "word" else (4,)), (name, g[name].shape)
        assert abs(g[name][:].mean() - mean) < 1e-12 * max(1, abs(mean)), name
assert abs(g.attrs["legality"][0] - 1) < 0.05
assert g.attrs["approximation_offdiag"][0] <= g.attrs["approximation"][0]
assert f["K4/projection/rectified"].shape == (N, 2) and f["K4/projection/original"].shape == (N, 2)
note = g.attrs["note"]
assert "coherence over" in (note.decode() if isinstance(note, bytes) else str(note))
PY

# 2. jsmf eval from C and the corpus (3 ranks; the rectification run again) agrees with fit's.
cp "$work/m.h5" "$work/m_eval.h5"
if run_quiet 3 eval "$work/m_eval.h5" --cooc "$work/C.h5" --corpus "$work/docword.e.txt" \
     --truth "$work/truth.e.h5" --labels "$work/labels.e.txt" >"$work/eval.txt" 2>"$work/err"; then
  ok "eval --cooc --corpus --truth --labels"
else
  fail "eval: $(cat "$work/err")"
fi
# same_metrics A B TOLERANCE: every metric of /K4 in B equals A's to TOLERANCE (relative).
same_metrics() {
  py "$1" "$2" "$3" $metric_names <<'PY'
import sys, h5py
a = h5py.File(sys.argv[1], "r")["K4/metrics"]; b = h5py.File(sys.argv[2], "r")["K4/metrics"]
tolerance = float(sys.argv[3])
for name in sys.argv[4:]:
    x, y = a.attrs[name][0], b.attrs[name][0]
    assert abs(x - y) <= tolerance * max(1e-3, abs(x)), (name, x, y)
PY
}
same_metrics "$work/m.h5" "$work/m_eval.h5" 1e-7 && ok "eval equals fit's metrics" || fail "eval differs from fit"
# 2b. A model rectified in single precision: eval at the fit's rank count replays it
#     exactly (every metric equal); at another it warns that the replay differs.
run_quiet 2 fit --cooc "$work/C.h5" --corpus "$work/docword.e.txt" --topics 4 --precision single \
  --out "$work/single.h5" >/dev/null 2>&1 || fail "fit --precision single"
cp "$work/single.h5" "$work/single_eval.h5"
run_quiet 2 eval "$work/single_eval.h5" --cooc "$work/C.h5" --corpus "$work/docword.e.txt" >/dev/null 2>"$work/err" ||
  fail "eval single: $(cat "$work/err")"
same_metrics "$work/single.h5" "$work/single_eval.h5" 1e-9 && ok "eval replays a single-precision fit" ||
  fail "eval single differs"
cp "$work/single.h5" "$work/single_eval3.h5"
run_quiet 3 eval "$work/single_eval3.h5" --cooc "$work/C.h5" --corpus "$work/docword.e.txt" >/dev/null 2>"$work/err"
grep -q "rectified in single precision" "$work/err" && ok "eval of a single-precision fit at another rank count warns" ||
  fail "no warning for a single-precision replay: $(cat "$work/err")"

py "$work/m_eval.h5" <<'PY' && ok "eval --truth: B within 0.12 L1, every anchor found; clustacc (NNLS and θ) > 0.8" || fail "eval --truth"
import sys, h5py
f = h5py.File(sys.argv[1], "r")
t = f["K4/truth"]
# Documents labelled by their dominant planted topic; NNLS weights on the learned B and
# k-means find them (0.94 observed with seeds 5, 6 and 7).
assert f["K4/metrics"].attrs["clustacc"][0] > 0.8, f["K4/metrics"].attrs["clustacc"]
assert f["K4/metrics"].attrs["clustacc_theta"][0] > 0.8, f["K4/metrics"].attrs["clustacc_theta"]  # jsmf infer's θ
assert t.attrs["anchor_hits"] == 4, t.attrs["anchor_hits"]
assert t.attrs["b_l1"] < 0.12, t.attrs["b_l1"]  # 0.064-0.069 observed at seeds 5, 6, 7
assert sorted(t["permutation"][:]) == [0, 1, 2, 3]
PY
grep -q "planted truth" "$work/eval.txt" && grep -q "coherence" "$work/eval.txt" && ok "eval prints the metrics" ||
  fail "eval output: $(head -5 "$work/eval.txt")"
run 1 show "$work/m_eval.h5" >"$work/show.txt" 2>&1 && grep -q "specificity" "$work/show.txt" &&
  ok "show prints the metrics" || fail "show: $(head -5 "$work/show.txt")"

# 3. A corpus that did not build C is refused, once, and the model is left as it was.
"$jsmf" -q synth --dir "$work" --name other --docs 500 --words 200 --topics 4 --seed 9 || fail "synth other"
cp "$work/m_eval.h5" "$work/before.h5"
run_quiet 2 eval "$work/m_eval.h5" --corpus "$work/docword.other.txt" >/dev/null 2>"$work/err"
rc=$?
if [[ $rc -ne 0 && $(grep -c '^jsmf: error:' "$work/err") -eq 1 ]] && grep -q "is not the corpus that built C" "$work/err" &&
   cmp -s "$work/m_eval.h5" "$work/before.h5" && [[ ! -e $work/m_eval.h5.partial ]]; then
  ok "eval refuses another corpus"
else
  fail "eval with another corpus: rc=$rc $(head -3 "$work/err")"
fi

# 3b. A file with several K: --truth measures the model with the planted K, leaves the other.
run_quiet 2 fit "${corpus[@]}" --topics 3,4 --iterations 10 --out "$work/multi.h5" >/dev/null 2>&1 || fail "fit 3,4"
run_quiet 2 eval "$work/multi.h5" --truth "$work/truth.e.h5" >/dev/null 2>"$work/err" || fail "eval multi: $(cat "$work/err")"
py "$work/multi.h5" <<'PY' && ok "eval --truth on K = 3,4: K = 4 measured, K = 3 left" || fail "eval --truth on several K"
import sys, h5py
f = h5py.File(sys.argv[1], "r")
assert "truth" in f["K4"] and "truth" not in f["K3"]
PY

# 3c. C built with a document filter, rectified by jsmf rectify, then fit --cooc with the
#     corpus: coherence counts with the filter that built C (recorded through rectify).
run_quiet 2 cooc "${corpus[@]}" --min-tokens 45 --min-distinct 3 --out "$work/C45.h5" >/dev/null 2>&1 || fail "cooc 45"
run_quiet 2 rectify --in "$work/C45.h5" --topics 4 --iterations 10 --out "$work/R45.h5" >/dev/null 2>&1 || fail "rectify 45"
run_quiet 2 fit --cooc "$work/R45.h5" --corpus "$work/docword.e.txt" --rectify none --topics 4 --out "$work/r45.h5" \
  >/dev/null 2>"$work/err" || fail "fit --cooc rectified --corpus: $(cat "$work/err")"
py "$work/r45.h5" <<'PY' && ok "fit --cooc (rectified, filtered C) --corpus: coherence with C's filter" || fail "filter through rectify"
import sys, h5py
f = h5py.File(sys.argv[1], "r")
note = f["K4/metrics"].attrs["note"]
note = note.decode() if isinstance(note, bytes) else str(note)
assert "coherence over" in note, note
assert f.attrs["min_tokens"] in (b"45", "45"), f.attrs["min_tokens"]
PY

# 4. The papers' central claim on a planted corpus with few documents: AP's B is closer
#    to the truth than the Baseline's (same anchors finder, same solver), in the papers'
#    setting: every word a candidate anchor (--anchor-min-df 0; jsmf's default threshold of
#    10 documents alone takes the Baseline's error from 0.37 to 0.22 here).
"$jsmf" -q synth --dir "$work" --name few --docs 400 --words 150 --topics 5 --word-concentration 0.3 \
  --anchor-mass 0.03 --doc-length 30 --seed 11 || fail "synth few"
for method in none ap; do
  iterations=()  # AP's plain 150; the Baseline does not iterate (and refuses the setting)
  [[ $method == ap ]] && iterations=(--iterations 150)
  run_quiet 2 fit --corpus "$work/docword.few.txt" --vocab "$work/vocab.few.txt" --topics 5 --rectify $method \
    "${iterations[@]}" --anchor-min-df 0 --out "$work/few_$method.h5" >/dev/null 2>&1 || fail "fit few $method"
  run_quiet 2 eval "$work/few_$method.h5" --truth "$work/truth.few.h5" >/dev/null 2>&1 || fail "eval few $method"
done
py "$work/few_none.h5" "$work/few_ap.h5" <<'PY' && ok "AP's B error < Baseline's (few documents)" || fail "AP vs Baseline"
import sys, h5py
none = h5py.File(sys.argv[1], "r")["K5/truth"].attrs["b_l1"]
ap = h5py.File(sys.argv[2], "r")["K5/truth"].attrs["b_l1"]
print(f"  planted D = 400, N = 150, K = 5: B L1 error per topic: Baseline {none:.4f}, AP {ap:.4f}")
# Without rectification the two Cs are one: validity and specificity agree with their
# _original twins; AP's rectified row sums differ from the original's, so its twins differ.
m = h5py.File(sys.argv[1], "r")["K5/metrics"].attrs
assert abs(m["specificity"][0] - m["specificity_original"][0]) <= 1e-12 * abs(m["specificity"][0])
assert abs(m["validity"][0] - m["validity_original"][0]) <= 1e-12 * max(1e-300, abs(m["validity"][0]))
a = h5py.File(sys.argv[2], "r")["K5/metrics"].attrs
assert a["specificity"][0] != a["specificity_original"][0]
assert ap < 0.9 * none, (ap, none)
PY

# 5. synth --from: a semi-synthetic corpus from the learned model; fitting it recovers it.
if "$jsmf" -q synth --from "$work/m.h5" --dir "$work" --name semi --docs 4000 --seed 2 2>"$work/err"; then
  ok "synth --from"
  run_quiet 2 fit --corpus "$work/docword.semi.txt" --vocab "$work/vocab.semi.txt" --topics 4 --iterations 20 \
    --out "$work/semi.h5" >/dev/null 2>&1 && run_quiet 2 eval "$work/semi.h5" --truth "$work/truth.semi.h5" >/dev/null 2>&1 ||
    fail "fit/eval semi"
  py "$work/semi.h5" <<'PY' && ok "semi-synthetic truth recovered (B within 0.12 L1)" || fail "semi-synthetic recovery"
import sys, h5py
t = h5py.File(sys.argv[1], "r")["K4/truth"]
print(f"  semi-synthetic (4000 documents from the learned model): B L1 error per topic {t.attrs['b_l1']:.4f}")
assert t.attrs["b_l1"] < 0.12, t.attrs["b_l1"]  # 0.059 observed
PY
  "$jsmf" -q synth --from "$work/m.h5" --prior logistic-normal --dir "$work" --name semiln --docs 500 --seed 2 \
    2>"$work/err" && [[ -s $work/truth.semiln.h5 && -s $work/docword.semiln.txt && -s $work/labels.semiln.txt ]] &&
    ok "synth --from --prior logistic-normal" || fail "synth --from logistic-normal: $(cat "$work/err")"
else
  fail "synth --from: $(cat "$work/err")"
fi

# 6. sweep: one C, a grid of runs, one CSV row each.
if run_quiet 2 sweep --cooc "$work/C.h5" --corpus "$work/docword.e.txt" --topics 3,4 --rectify none,ap --solver admm,active-set \
     --iterations 10 --out-dir "$work/sweep" >/dev/null 2>"$work/err"; then
  ok "sweep"
else
  fail "sweep: $(cat "$work/err")"
fi
py "$work/sweep" $metric_names <<'PY' && ok "sweep: 8 rows, every option, metric and stage time" || fail "sweep CSV"
import sys, csv, os
rows = list(csv.DictReader(open(os.path.join(sys.argv[1], "sweep.csv"))))
assert len(rows) == 8, len(rows)
need = ["run", "file", "topics", "rectify", "solver", "iterations", "eigensolver", "solver_iterations", "admm_stop",
        "recover_a", "cooc", "rectify_seconds", "recover_B_seconds", "metrics_seconds", "codoc_seconds", "read_seconds",
        "run_seconds"] + sys.argv[2:] + [n + "_std" for n in ("recovery", "coherence", "dominancy")]
missing = [c for c in need if c not in rows[0]]
assert not missing, missing
assert {(r["topics"], r["rectify"], r["solver"]) for r in rows} == {(k, m, s) for k in "34" for m in ("none", "ap")
                                                                    for s in ("admm", "active-set")}
for r in rows:
    assert os.path.getsize(os.path.join(sys.argv[1], r["file"])) > 0
    assert r["coherence"] != "" and float(r["run_seconds"]) > 0
PY
# The same grid as array tasks (jobs/sweep.sbatch, ranks started by mpirun instead of srun).
n=$(TOPICS=3,4 RECTIFY=none,ap SOLVERS=admm,active-set JSMF=$jsmf bash "$source_dir/jobs/sweep.sbatch" --count)
[[ $n -eq 8 ]] && ok "sweep.sbatch --count" || fail "sweep.sbatch --count: $n"
for ((task = 0; task < n; task++)); do
  SLURM_ARRAY_TASK_ID=$task TOPICS=3,4 RECTIFY=none,ap SOLVERS=admm,active-set JSMF=$jsmf CORPUS=$work/docword.e.txt \
    EXTRA="--iterations 10" LAUNCH="timeout 120 $mpiexec -np 2 --oversubscribe" \
    bash "$source_dir/jobs/sweep.sbatch" "$work/C.h5" "$work/array" >/dev/null 2>"$work/err" ||
    fail "array task $task: $(tail -3 "$work/err")"
done
bash "$source_dir/jobs/sweep.sbatch" --merge "$work/array" >/dev/null || fail "sweep.sbatch --merge"
py "$work/sweep/sweep.csv" "$work/array/sweep.csv" <<'PY' && ok "array tasks = one sweep" || fail "array tasks differ"
import sys, csv
a = list(csv.DictReader(open(sys.argv[1]))); b = list(csv.DictReader(open(sys.argv[2])))
assert len(a) == len(b) == 8
for x, y in zip(a, b):
    for key in ("run", "topics", "rectify", "solver", "coherence", "dissimilarity"):
        assert x[key] == y[key], (key, x[key], y[key])
    # Not bit for bit: OpenBLAS may round differently for differently aligned buffers.
    for key in ("recovery", "specificity", "dominancy", "approximation_original"):
        assert abs(float(x[key]) - float(y[key])) <= 1e-9 * abs(float(x[key])), (key, x[key], y[key])
PY

expect_sweep_error() {  # fragment args... (command-line errors: exit code 1)
  local fragment=$1; shift
  run_quiet 2 sweep "$@" --out-dir "$work/bad" >/dev/null 2>"$work/err"
  local rc=$? messages
  messages=$(grep -c '^jsmf: error:' "$work/err")
  if [[ $rc -eq 1 && $messages -eq 1 && ! -e $work/bad ]] && grep -qF -- "$fragment" "$work/err"; then
    ok "sweep refuses: '$fragment'"
  else
    fail "sweep expected '$fragment': rc=$rc messages=$messages"; head -3 "$work/err"
  fi
}
expect_sweep_error "--rectify: 'foo' is not one of" --cooc "$work/C.h5" --rectify none,foo
expect_sweep_error "--solver: 'admm' is given twice" --cooc "$work/C.h5" --solver admm,admm
expect_sweep_error "--topics must look like" --cooc "$work/C.h5" --topics 5,x
expect_sweep_error "--task 8 is outside the grid of 8 points" --cooc "$work/C.h5" --topics 3,4 --rectify none,ap --solver admm,active-set --task 8
# A setting that no swept rectifier or solver reads, as fit refuses one its run does not read.
expect_sweep_error "--permutations is read only with --rectify dc" --cooc "$work/C.h5" --topics 3 --rectify none,ap --permutations 4
expect_sweep_error "--solver-iterations is read only with --solver expgrad, admm or kl" --cooc "$work/C.h5" --topics 3 \
  --rectify none --solver active-set --solver-iterations 5

# ClustAcc per run, and a labels file with a blank line inside refused before any work.
run_quiet 2 sweep --cooc "$work/C.h5" --corpus "$work/docword.e.txt" --labels "$work/labels.e.txt" --topics 4 \
  --rectify ap --solver active-set --iterations 10 --out-dir "$work/sweepl" >/dev/null 2>"$work/err" ||
  fail "sweep --labels: $(cat "$work/err")"
py "$work/sweepl/sweep.csv" <<'PY' && ok "sweep --labels: clustacc in the row" || fail "sweep --labels"
import sys, csv
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 1 and float(rows[0]["clustacc"]) > 0.8, rows[0]["clustacc"]
PY
# The compressed pipeline from the same file: C's rows on each rank, ClustAcc on the
# documents as the file's filter kept them.
run_quiet 2 sweep --cooc "$work/C.h5" --corpus "$work/docword.e.txt" --labels "$work/labels.e.txt" --topics 4 \
  --pipeline compressed --out-dir "$work/sweepc" >/dev/null 2>"$work/err" ||
  fail "sweep --cooc --pipeline compressed --labels: $(cat "$work/err")"
py "$work/sweepc/sweep.csv" <<'PY' && ok "sweep --cooc --pipeline compressed --labels: clustacc in the row" || fail "sweep --cooc --pipeline compressed --labels"
import sys, csv
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 1 and float(rows[0]["clustacc"]) > 0.8, rows[0]["clustacc"]
PY
{ head -n 10 "$work/labels.e.txt"; echo; tail -n +11 "$work/labels.e.txt"; } >"$work/blank.txt"
run_quiet 2 sweep --cooc "$work/C.h5" --corpus "$work/docword.e.txt" --labels "$work/blank.txt" --topics 4 \
  --rectify ap --solver active-set --out-dir "$work/sweepb" >/dev/null 2>"$work/err"
rc=$?
[[ $rc -eq 2 && $(grep -c '^jsmf: error:' "$work/err") -eq 1 ]] && grep -q "blank.txt:11: a blank line among the labels" "$work/err" &&
  [[ ! -e $work/sweepb/sweep.csv ]] && ok "sweep refuses a labels file with a blank line, before any run" ||
  fail "labels with a blank line: rc=$rc $(head -2 "$work/err")"

# fit --labels: ClustAcc among the fit's metrics, its NNLS on the documents as C saw them
# (tf-idf vectors for --estimator tfidf, from the corpus and from a --cooc file alike);
# --labels with --no-metrics refused.
run_quiet 2 fit "${corpus[@]}" --topics 4 --estimator tfidf --rectify none --labels "$work/labels.e.txt" \
  --out "$work/tl.h5" >"$work/tl.txt" 2>"$work/err" || fail "fit --labels: $(tail -2 "$work/err")"
run_quiet 2 cooc "${corpus[@]}" --estimator tfidf --out "$work/Ct.h5" >/dev/null 2>&1 || fail "cooc tfidf"
run_quiet 2 fit --cooc "$work/Ct.h5" --corpus "$work/docword.e.txt" --topics 4 --rectify none --labels "$work/labels.e.txt" \
  --out "$work/tlc.h5" >/dev/null 2>"$work/err" || fail "fit --cooc --labels: $(tail -2 "$work/err")"
py "$work/tl.h5" "$work/tlc.h5" <<'PY' && ok "fit --labels: clustacc with NNLS on tf-idf vectors (corpus and --cooc)" || fail "fit --labels"
import sys, h5py
for path in sys.argv[1:]:
    f = h5py.File(path, "r")
    m = f["K4/metrics"].attrs
    assert 0 < m["clustacc"][0] <= 1, (path, m["clustacc"])
    note = f["K4/metrics"].attrs["note"]
    note = note.decode() if isinstance(note, bytes) else note
    assert "tf-idf vector" in note, (path, note)
PY
grep -q "clustacc=" "$work/tl.txt" && ok "fit's line has clustacc" || fail "no clustacc in fit's line"
run_quiet 2 fit "${corpus[@]}" --topics 4 --labels "$work/labels.e.txt" --no-metrics --out "$work/tn.h5" \
  >/dev/null 2>"$work/err"
[[ $? -eq 1 && ! -e $work/tn.h5 ]] && grep -q "labels gives ClustAcc" "$work/err" && ok "--labels with --no-metrics refused" ||
  fail "--labels --no-metrics: $(head -2 "$work/err")"

# 7. Pictures: non-empty PNGs.
plot=$source_dir/jobs/plot.py
"$python" "$plot" metrics "$work/sweep/sweep.csv" --out "$work/metrics.png" &&
  "$python" "$plot" anchors "$work/m.h5" --out "$work/anchors.png" &&
  "$python" "$plot" heatmap "$work/m.h5" --out "$work/heatmap.png" || fail "plot.py"
for png in metrics anchors heatmap; do
  [[ -s $work/$png.png && $(head -c 4 "$work/$png.png" | tail -c 3) == PNG ]] && ok "plot $png" || fail "plot $png"
done
"$python" "$plot" anchors "$work/C.h5" --out "$work/x.png" 2>"$work/err"
[[ $? -eq 2 ]] && grep -q "not a jsmf model file" "$work/err" && ok "plot refuses a cooc file" || fail "plot on a cooc file"
finish
