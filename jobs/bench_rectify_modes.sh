#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark of the rectification modes of `jsmf fit` on a UCI corpus (default KOS with the
# authors' document filter), end to end, against gensim's LdaMulticore on the same corpus:
#   default   (fast AP: inexact eigensolves, over-relaxation, stop when quality settled)
#   converge  (the same arithmetic, stop when the topics stopped moving)
#   exact150  (the papers' 150 plain iterations with exact eigensolves)
#   long      (plain AP for $LONG iterations: the reference the others are measured against)
#   single, exact150-single (default and exact150 with --precision single: float32 iterate)
# Per run: seconds per stage, iterations, passes over C per iteration, the stop reason,
# the anchors shared with the long run and the distance of the topics from it (matched,
# L1 per topic, median / max), and the papers' metrics.
# Usage: jobs/bench_rectify_modes.sh [CORPUS_DIR] [NAME]
#   env TOPICS ("10 100"), RANKS ("1 2"; RxT: R ranks of T OpenMP threads, e.g. "2 1x2"),
#       LONG (2000), MODES ("long exact150 default converge"; also single, exact150-single),
#       GENSIM (1: also run gensim), OLD_JSMF (a jsmf binary to time the exact150 mode with too),
#       REFS (a folder that keeps the long runs as long.<K>.h5 and reuses them when present)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=${1:-${JSMF_CORPUS_DIR:?give the folder of the UCI corpus (docword.NAME.txt, vocab.NAME.txt) as the first argument or JSMF_CORPUS_DIR}}
name=${2:-kos}
topics=${TOPICS:-10 100}
ranks=${RANKS:-1 2}
long=${LONG:-2000}
modes=${MODES:-long exact150 default converge}
source "$root/jobs/bench_common.sh"
py=/usr/bin/python3
filter=(--min-tokens 5 --min-distinct 3)   # the authors' KOS/NIPS filter 

mode_options() {
  case $1 in
    default) echo "" ;;
    converge) echo "--converge" ;;
    exact150) echo "--stop iterations --iterations 150" ;;
    single) echo "--precision single" ;;
    exact150-single) echo "--stop iterations --iterations 150 --precision single" ;;
    long) echo "--stop iterations --iterations $long --no-metrics" ;;
  esac
}

# trace FILE K: iterations, mean passes per iteration, stop reason
trace() {
  "$py" - "$1" "$2" <<'PY'
import sys, h5py, numpy as np
r = h5py.File(sys.argv[1], "r")[f"K{sys.argv[2]}/rectification"]
passes = r["passes"][:] if "passes" in r else np.array([0])
reason = r.attrs.get("stop_reason", b"-")
reason = reason.decode() if isinstance(reason, bytes) else reason
print(len(r["change"]), f"{passes.mean():.2f}", reason)
PY
}
# distance FILE REFERENCE K: anchors in common, L1 per topic median and max after matching
distance() {
  "$py" - "$1" "$2" "$3" <<'PY'
import sys, h5py, numpy as np
from scipy.optimize import linear_sum_assignment
K = sys.argv[3]
def load(p):
    g = h5py.File(p, "r")[f"K{K}/model"]
    return g["B"][:], set(g["anchors"][:].tolist())
B, a = load(sys.argv[1]); R, b = load(sys.argv[2])
cost = np.abs(B[:, :, None] - R[:, None, :]).sum(0)
r, c = linear_sum_assignment(cost)
d = cost[r, c]
print(f"{len(a & b)}/{K} {np.median(d):.4f} {d.max():.4f}")
PY
}
metric() { "$py" -c "import h5py,sys; print('%.4g' % h5py.File(sys.argv[1],'r')['K$2/metrics'].attrs['$3'][0])" "$1"; }

echo
echo "== jsmf fit --corpus $name ${filter[*]}: seconds per stage; iterations; passes over C per iteration;"
echo "   topics vs the $long-iteration plain run (anchors shared, L1 per topic median / max)"
printf '%-5s %4s %-15s %6s %8s %7s %7s %7s %6s %-12s %6s %7s %7s %8s %7s %7s %9s\n' ranks K mode cooc rectify anchors \
  recover metrics total stop its passes anchors L1-med L1-max coherence specif dissim approx-orig
for config in $ranks; do
  np=${config%x*} threads=1
  [[ $config == *x* ]] && threads=${config#*x}
  # Threads need a rank free to use more than one core: Open MPI binds each rank to one.
  launch=(env OMP_NUM_THREADS="$threads" mpirun -np "$np")
  [[ $threads -gt 1 ]] && launch=(env OMP_NUM_THREADS="$threads" mpirun --bind-to none -np "$np")
  for K in $topics; do
    for mode in $modes; do
      out=$work/$mode.$config.$K.h5
      # One long run per K serves every rank count (their topics agree to 1e-9).
      if [[ $mode == long && ( -f $work/long.$K.h5 || ( -n ${REFS:-} && -f ${REFS:-}/long.$K.h5 ) ) ]]; then
        echo "(long run for K $K already done)"; continue
      fi
      read -r -a opts <<<"$(mode_options "$mode")"
      line=$("${launch[@]}" "$jsmf" -q fit --corpus "$docword" --vocab "$vocab" "${filter[@]}" --topics "$K" \
               "${opts[@]}" --out "$out")
      read -r its passes reason <<<"$(trace "$out" "$K")"
      [[ $mode == long ]] && cp "$out" "$work/long.$K.h5"
      ref=$work/long.$K.h5
      if [[ -n ${REFS:-} ]]; then
        mkdir -p "$REFS"
        [[ $mode == long ]] && cp "$out" "$REFS/long.$K.h5"
        [[ -f $REFS/long.$K.h5 ]] && ref=$REFS/long.$K.h5
      fi
      dist="-/- - -"
      [[ -f $ref && $mode != long ]] && dist=$(distance "$out" "$ref" "$K")
      read -r shared med max <<<"$dist"
      metrics="- - - -"
      if [[ $mode != long ]]; then
        metrics="$(metric "$out" "$K" coherence) $(metric "$out" "$K" specificity) $(metric "$out" "$K" dissimilarity) $(metric "$out" "$K" approximation_original)"
      fi
      printf '%-5s %4s %-15s %6.2f %8.1f %7.2f %7.2f %7.2f %6.1f %-12s %6s %7s %7s %8s %7s %7s %9s %7s %9s\n' "$config" "$K" "$mode" \
        "$(calc "$(field inspect_seconds "$line") + $(field cooc_seconds "$line")")" "$(field rectify_seconds "$line")" \
        "$(field anchors_seconds "$line")" "$(calc "$(field recover_B_seconds "$line") + $(field recover_A_seconds "$line")")" \
        "$(field metrics_seconds "$line" || echo 0)" "$(field total_seconds "$line")" "$reason" "$its" "$passes" \
        "$shared" "$med" "$max" $metrics
    done
  done
done

if [[ -n ${OLD_JSMF:-} ]]; then
  echo
  echo "== the papers' 150 plain iterations with $OLD_JSMF (before the fast AP), same corpus"
  for np in $ranks; do
    for K in $topics; do
      line=$(mpirun -np "$np" "$OLD_JSMF" -q fit --corpus "$docword" --vocab "$vocab" "${filter[@]}" --topics "$K" \
               --iterations 150 --out "$work/old.$np.$K.h5")
      echo "ranks $np K $K: rectify $(field rectify_seconds "$line") s, total $(field total_seconds "$line") s"
    done
  done
fi

if [[ ${GENSIM:-1} == 1 ]]; then
  echo
  echo "== gensim LdaMulticore (10 passes, workers = cores - 1), same corpus and filter"
  for K in $topics; do
    "$py" - "$docword" "$K" <<'PY'
import gzip, sys, time
import gensim
path, K = sys.argv[1], int(sys.argv[2])
opener = gzip.open if path.endswith(".gz") else open
docs = {}
with opener(path, "rt") as f:
    D, W, NNZ = (int(f.readline()) for _ in range(3))
    for line in f:
        d, w, c = map(int, line.split())
        docs.setdefault(d, []).append((w - 1, c))
corpus = [bow for bow in docs.values() if sum(c for _, c in bow) >= 5 and len(bow) >= 3]
start = time.time()
lda = gensim.models.LdaMulticore(corpus, num_topics=K, id2word=None, passes=10, workers=1, random_state=1)
seconds = time.time() - start
print(f"K = {K}: {len(corpus)} documents, {seconds:.1f} s (gensim {gensim.__version__})")
PY
  done
fi
