#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# B by least squares (--solver active-set, the default) against Arora et al.'s RecoverKL
# (--solver kl), on the same rectified C: every 10th document of a UCI corpus (default KOS)
# is held out, both fit on the other 90 % (dense pipeline, default AP), and each model is
# measured by its solve time, its words converged, the fit's topic measures, and the
# held-out per-word log-likelihood (jsmf infer: each held-out document's θ by EM, B fixed).
# Usage: jobs/bench_kl.sh [CORPUS_DIR] [NAME]; env TOPICS ("10 50 100"), RANKS (2)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=${1:-${JSMF_CORPUS_DIR:?give the folder of the UCI corpus (docword.NAME.txt, vocab.NAME.txt) as the first argument or JSMF_CORPUS_DIR}}
name=${2:-kos}
source "$root/jobs/bench_common.sh"
topics=${TOPICS:-10 50 100}
ranks=${RANKS:-2}

split_heldout
echo "== $name: B by least squares and by KL, the same C ($ranks ranks, dense pipeline, default AP; 90 % to fit, 10 % held out)"
printf "%4s %-10s %9s %8s %10s %10s %12s %10s %10s %14s\n" K solver "B s" "fit s" converged coherence specificity dissim npmi "held-out LL"
for K in $topics; do
  for solver in active-set kl; do
    line=$(mpirun -np "$ranks" "$jsmf" -q fit --corpus "$work/docword.train.txt" --vocab "$vocab" --topics "$K" \
      --pipeline dense --solver "$solver" --out "$work/m.h5" | grep '^jsmf-fit')
    held=$(mpirun -np "$ranks" "$jsmf" -q infer --model "$work/m.h5" --corpus "$work/docword.test.txt" --out "$work/t.h5" |
      grep '^jsmf-infer')
    printf "%4s %-10s %9.2f %8.1f %10s %10.2f %12.4f %10s %10.4f %14.6f\n" "$K" "$solver" "$(field solve_seconds "$line")" \
      "$(field total_seconds "$line")" "$(field words_converged "$line")/$(field words_solved "$line")" \
      "$(field coherence "$line")" "$(field specificity "$line")" "$(field dissimilarity "$line")" \
      "$(field npmi "$line")" "$(field per_word_log_likelihood "$held")"
  done
done
