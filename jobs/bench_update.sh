#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Models that grow with the corpus (issue 47). The corpus split in BATCHES batches in
# document order; a fresh fit of the first batch keeps a sketch (--sketch-rank), then each
# later batch i is added three ways, side by side in one session:
#   sketch  fit --update PREV --update-mode sketch with batch i alone (a chain of sketch models)
#   warm    the same with --warm-enn (ENN from the previous model's factor), when WARM=1
#   exact   fit --update PREV with batches 1..i (a chain of exact updates: the fresh fit's model)
#   fresh   fit of batches 1..i from scratch
# Per batch: the seconds of each, and the topic ids each update kept from its predecessor.
# After the last batch: every model measured the same way (jsmf eval over the whole corpus:
# mean coherence; specificity from B and the model's unigram), its anchors shared with the
# fresh fit and B's L1 distance per topic to it (topics matched), and the sketch's size.
# Usage: jobs/bench_update.sh CORPUS_DIR NAME   TOPICS=100 BATCHES=10 SKETCH_RANK=2K RANKS=2
#        EXACT=1 (0: no exact chain) WARM=0 (1: a warm-ENN sketch chain too)
#        FRESH_EVERY=1 (the fresh fit at every k-th batch, and the last)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=${1:?usage: bench_update.sh CORPUS_DIR NAME} name=${2:?NAME}
source "$root/jobs/bench_common.sh"
ranks=${RANKS:-2} K=${TOPICS:-100} batches=${BATCHES:-10}
rank=${SKETCH_RANK:-$((2 * K))} exact=${EXACT:-1} warm=${WARM:-0} fresh_every=${FRESH_EVERY:-1}
echo "corpus: $docword; K = $K; $batches batches in document order; sketch rank $rank; $ranks ranks"

# The batches: documents dealt in order, the header's D and W kept (ids need not be dense).
/usr/bin/python3 - "$docword" "$work" "$batches" <<'PY'
import gzip, sys
path, w, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
opener = gzip.open if path.endswith(".gz") else open
with opener(path, "rt") as f:
    D, W, NNZ = (int(f.readline()) for _ in range(3))
    rows = [[] for _ in range(n)]
    for line in f:
        if line.strip():
            doc = int(line.split()[0])
            rows[min(n - 1, (doc - 1) * n // D)].append(line)
for b, part in enumerate(rows, 1):
    with open(f"{w}/batch{b}.txt", "w") as out:
        out.write(f"{D}\n{W}\n{len(part)}\n"); out.writelines(part)
PY
batch_files() { local i; for ((i = 1; i <= $1; i++)); do printf '%s ' "$work/batch$i.txt"; done; }
# run NAME ARGS…: one fit, its jsmf-fit line kept in $work/NAME.line; prints the seconds.
run() {
  local tag=$1; shift
  mpirun -np "$ranks" "$jsmf" fit --vocab "$vocab" --topics "$K" "$@" --out "$work/$tag.h5" 2>"$work/$tag.log" |
    grep '^jsmf-fit' >"$work/$tag.line" || { echo "$tag FAILED: $(tail -2 "$work/$tag.log")" >&2; return 1; }
  field total_seconds "$(cat "$work/$tag.line")"
}
kept() {  # the ids an update kept, of K
  /usr/bin/python3 -c "import h5py,sys; v=h5py.File(sys.argv[1],'r').attrs['update_old_topics']; v=v.decode() if isinstance(v,bytes) else v; print(sum(int(x)>=0 for x in v.split(',')))" "$1"
}

t=$(run sketch1 --corpus "$work/batch1.txt" --sketch-rank "$rank")
cp "$work/sketch1.h5" "$work/exact1.h5"
cp "$work/sketch1.h5" "$work/warm1.h5"
echo "batch 1: fresh fit with a rank-$rank sketch $t s; sketch in the file: $(/usr/bin/python3 -c "
import h5py, sys; g = h5py.File(sys.argv[1], 'r')['sketch']; print(f\"{sum(g[d].nbytes for d in g) / 2**20:.1f} MiB\")" "$work/sketch1.h5")"
printf "%5s %9s %9s %9s %9s %9s %11s %11s %11s %9s\n" batch docs fresh_s exact_s sketch_s warm_s exact/fresh \
  sketch/fresh warm/fresh ids_kept
for ((i = 2; i <= batches; i++)); do
  ts=$(run "sketch$i" --corpus "$work/batch$i.txt" --update "$work/sketch$((i - 1)).h5" --update-mode sketch)
  te=- tf=- tw=-
  [[ $warm == 1 ]] && tw=$(run "warm$i" --corpus "$work/batch$i.txt" --update "$work/warm$((i - 1)).h5" --update-mode sketch --warm-enn)
  # (the exact chain keeps no sketch: it would pay for its solve; every fit on the compressed pipeline)
  [[ $exact == 1 ]] && te=$(run "exact$i" --corpus $(batch_files "$i") --update "$work/exact$((i - 1)).h5" --sketch-rank 0 --pipeline compressed)
  if (( i == batches || (i - 1) % fresh_every == 0 )); then tf=$(run "fresh$i" --corpus $(batch_files "$i") --pipeline compressed); fi
  ratio() { [[ $1 == - || $2 == - ]] && echo - || calc "$1 / $2"; }
  docs=$(/usr/bin/python3 -c "import h5py,sys; print(h5py.File(sys.argv[1],'r')['sketch'].attrs['num_docs'])" "$work/sketch$i.h5")
  printf "%5s %9s %9s %9s %9s %9s %11s %11s %11s %9s\n" "$i" "$docs" "$tf" "$te" "$ts" "$tw" "$(ratio "$te" "$tf")" \
    "$(ratio "$ts" "$tf")" "$(ratio "$tw" "$tf")" \
    "$(kept "$work/sketch$i.h5")/$K$([[ $exact == 1 ]] && echo " ($(kept "$work/exact$i.h5") exact)")$([[ $warm == 1 ]] && echo " ($(kept "$work/warm$i.h5") warm)")"
done

# The models after the last batch, measured the same way over the whole corpus.
all=$(batch_files "$batches")
printf "%-8s %11s %11s %14s\n" model coherence specificity "anchors/B_L1"
for m in fresh exact sketch warm; do
  [[ $m == exact && $exact != 1 ]] && continue
  [[ $m == warm && $warm != 1 ]] && continue
  mpirun -np "$ranks" "$jsmf" -q eval "$work/$m$batches.h5" --corpus $all --out "$work/$m.eval.h5" >/dev/null 2>"$work/eval.log" ||
    { echo "eval $m FAILED: $(tail -2 "$work/eval.log")"; continue; }
  read -r coherence specificity < <(/usr/bin/python3 -c "
import h5py, sys, numpy as np; a = h5py.File(sys.argv[1], 'r')[f'K{sys.argv[2]}/metrics'].attrs
print(float(np.ravel(a['coherence'])[0]), float(np.ravel(a['specificity'])[0]))" "$work/$m.eval.h5" "$K")
  versus=-
  [[ $m != fresh ]] && versus=$(compare_models "$work/fresh$batches.h5" "$work/$m$batches.h5" "$K")
  printf "%-8s %11.3f %11.4f %14s\n" "$m" "$coherence" "$specificity" "$versus"
done
