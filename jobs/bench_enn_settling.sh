#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where ENN's model settles: compressed fits of one UCI corpus at each K with ENN run for
# a fixed number of iterations (--enn-iterations) and with the default stop, each compared
# with the longest run (anchors in common, B's L1 per topic with topics matched, and
# coherence, specificity, dissimilarity as the fit measured them).
# Usage: jobs/bench_enn_settling.sh CORPUS_DIR NAME; env TOPICS ("10 50 100 200"),
# ITERATIONS ("5 10 15 20 30 50 75 100 150"; the largest is the reference), RANKS (2).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=${1:?give the folder of the UCI corpus (docword.NAME.txt[.gz], vocab.NAME.txt)}
name=${2:?give the corpus name}
topics=${TOPICS:-10 50 100 200}
iterations=${ITERATIONS:-5 10 15 20 30 50 75 100 150}
np=${RANKS:-2}
source "$root/jobs/bench_common.sh"
reference=$(tr ' ' '\n' <<<"$iterations" | sort -n | tail -1)

for K in $topics; do
  echo
  echo "== $name, K = $K, $np ranks: ENN iterations against $reference"
  runs=()
  for t in $iterations default; do
    args=(--enn-iterations "$t")
    [[ $t == default ]] && args=()
    start=$(date +%s.%N)
    mpirun -np "$np" "$jsmf" -q fit --corpus "$docword" --vocab "$vocab" --topics "$K" --pipeline compressed \
      --out "$work/$t.h5" "${args[@]}" >/dev/null
    echo "$t: $(calc "$(date +%s.%N) - $start") s wall"
    [[ $t == default ]] || runs+=("$work/$t.h5")
  done
  /usr/bin/python3 "$root/jobs/enn_settling.py" "$K" "$work/$reference.h5" "${runs[@]}" "$work/default.h5"
done
