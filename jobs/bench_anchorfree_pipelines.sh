#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# AnchorFree (LP and PDS) on both pipelines, side by side (issue 46): the dense pipeline's
# C rectified by AP against the compressed pipeline's ENN factor, on KOS and on the labelled
# Brown and SpamAssassin corpora (from the npm registry, as bench_anchorfree_labelled.sh
# prepares them; K = the number of labels), with the same measures for every row:
# ClustAcc (labelled corpora), coherence, specificity, the representative words in common
# and B's distance (L1 per topic, topics matched) between the pipelines.
# Usage: jobs/bench_anchorfree_pipelines.sh CORPUS_DIR NAME   (the UCI corpus, e.g. KOS)
#        CORPORA="brown spam" KOS_TOPICS="10 25" SETTINGS="rectified paper" RANKS=2
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=${1:?usage: bench_anchorfree_pipelines.sh CORPUS_DIR NAME} name=${2:?NAME}
source "$root/jobs/bench_common.sh"
data=${JSMF_DATA_DIR:-$build/data}
ranks=${RANKS:-2}
mkdir -p "$data"
# The two settings: "rectified" (Eq. 5's C, AP on the dense pipeline, ENN's default stop on
# the compressed one) and "paper" (AnchorFree's: the tf-idf C, no rectification: --rectify
# none, --enn-iterations 0).
setting_flags() {  # setting_flags SETTING PIPELINE
  case $1/$2 in
    paper/dense) echo --estimator tfidf --rectify none ;;
    paper/compressed) echo --estimator tfidf --enn-iterations 0 ;;
    *) echo ;;
  esac
}
row() {  # row LABEL K ARGS...: one fit per pipeline, and the comparison
  local label=$1 K=$2; shift 2
  for pipeline in dense compressed; do
    # shellcheck disable=SC2046  # the flags are words
    line=$(mpirun -np "$ranks" "$jsmf" fit "$@" --topics "$K" --pipeline "$pipeline" $(setting_flags "$setting" "$pipeline") \
           --out "$work/$pipeline.h5" 2>"$work/log" | grep '^jsmf-fit') || { echo "$label $pipeline: FAILED"; tail -3 "$work/log"; return; }
    printf "%-22s %-10s %4s %8s %9.1f %8.4f %9.2f %8s\n" "$label" "$pipeline" "$K" "$(field clustacc "$line" || true)" \
      "$(field coherence "$line")" "$(field specificity "$line")" "$(field total_seconds "$line")" \
      "$(grep -o 'converged\|NOT converged' "$work/log" | head -1)"
  done
  echo "    between the pipelines: representative words in common, B L1 per topic median/max: $(compare_models "$work/dense.h5" "$work/compressed.h5" "$K")"
}
printf "%-22s %-10s %4s %8s %9s %8s %9s %8s\n" corpus/method pipeline K clustacc coherence specific total_s solver
for setting in ${SETTINGS:-rectified paper}; do
echo "== setting: $setting"
for method in anchorfree-lp anchorfree-pds; do
  for K in ${KOS_TOPICS:-10 25}; do
    row "$name/$method" "$K" --corpus "$docword" --vocab "$vocab" --method "$method"
  done
  for corpus in ${CORPORA:-brown spam}; do
    prepare_labelled "$corpus"
    K=$(sort -u "$data/$corpus/labels.$corpus.txt" | wc -l)
    row "$corpus/$method" "$K" --prepared "$data/$corpus" --name "$corpus" --labels "$data/$corpus/labels.$corpus.txt" \
      --method "$method"
  done
done
done
