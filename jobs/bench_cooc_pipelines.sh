#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A co-occurrence file (jsmf cooc's C) on both pipelines (issue 46): the dense pipeline's AP
# on the read C against the compressed pipeline's ENN on C's rows (lowrank::MatrixOperator),
# and the compressed fit from the documents beside them, with the same measures for every
# row (coherence over the corpus, specificity, approximation_original), the anchors each
# shares with the compressed fit from the documents, and B's distance to it (L1 per topic,
# topics matched).
# Usage: jobs/bench_cooc_pipelines.sh CORPUS_DIR NAME   (the UCI corpus, e.g. KOS)
#        TOPICS="10 100" RANKS=2
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=${1:?usage: bench_cooc_pipelines.sh CORPUS_DIR NAME} name=${2:?NAME}
source "$root/jobs/bench_common.sh"
ranks=${RANKS:-2}
start=$(date +%s.%N)
mpirun -np "$ranks" "$jsmf" -q cooc --corpus "$docword" --vocab "$vocab" --out "$work/C.h5" >/dev/null
echo "jsmf cooc: $(calc "$(date +%s.%N) - $start") s, the file $(du -m "$work/C.h5" | cut -f1) MB"
printf "%-26s %4s %9s %9s %11s %9s %11s %12s\n" source/pipeline K total_s peak_MiB coherence specific approx_orig "anchors/B_L1"
for K in ${TOPICS:-10 100}; do
  for run in documents/compressed cooc/compressed cooc/dense; do
    src=${run%/*} pipeline=${run#*/}
    args=(--corpus "$docword")
    [[ $src == documents ]] && args+=(--vocab "$vocab") || args+=(--cooc "$work/C.h5")
    line=$(mpirun -np "$ranks" "$jsmf" fit "${args[@]}" --topics "$K" --pipeline "$pipeline" \
           --out "$work/${src}_$pipeline.h5" 2>"$work/log" | grep '^jsmf-fit') || { echo "$run: FAILED"; tail -3 "$work/log"; continue; }
    versus=-
    [[ $run != documents/compressed ]] && versus=$(compare_models "$work/documents_compressed.h5" "$work/${src}_$pipeline.h5" "$K")
    printf "%-26s %4s %9.1f %9.0f %11.2f %9.4f %11.3e %12s\n" "$run" "$K" "$(field total_seconds "$line")" \
      "$(calc "$(field peak_rss_bytes "$line") / 1048576")" "$(field coherence "$line")" "$(field specificity "$line")" \
      "$(field approximation_original "$line")" "$versus"
  done
done
