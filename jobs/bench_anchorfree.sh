#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# AnchorFree against the anchor finders.
#  1. The paper's Tables 2 and 3 (Fu et al. 2019, §5): V = 1,000 words, F = 5..30, TRIALS
#     trials per F (default 20): percent of trials in which both ||C*-C||_F^2 and
#     ||E*-E||_F^2 < 1e-8 after Hungarian matching, for FastAnchor, SPA (= jsmf's qr),
#     SNPA, XRAY (each with RecoverL2's simplex least squares) and AnchorFree-LP and -PDS;
#     seconds per trial (1 rank: the trials are small).
#  2. A UCI corpus (default KOS), K in TOPICS (default "10 25"), 2 ranks, AP-rectified C:
#     rectified anchor words vs AnchorFree-LP vs AnchorFree-PDS: seconds of the whole fit
#     and of the factorization step, coherence and SimCount (the definitions in jsmf eval --help).
# Usage: jobs/bench_anchorfree.sh [CORPUS_DIR] [NAME]; env TRIALS (20), TOPICS ("10 25"), TABLES (1)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=${1:-${JSMF_CORPUS_DIR:?give the folder of the UCI corpus (docword.NAME.txt, vocab.NAME.txt) as the first argument or JSMF_CORPUS_DIR}}
name=${2:-kos}
source "$root/jobs/bench_common.sh"
trials=${TRIALS:-20}
topics=${TOPICS:-10 25}

if [[ ${TABLES:-1} == 1 ]]; then
  for test in 1 2; do
    echo "== Table $((test + 1)) of the paper (synthetic test $test)"
    mpirun -np 1 "$build/anchorfree_tables" --test $test --trials "$trials" 2>/dev/null
  done
fi

echo "== $name: rectified anchors vs AnchorFree (2 ranks, --rectify ap, seconds of the whole fit)"
printf "%-4s %-16s %9s %12s %12s %10s %9s %s\n" K method total_s rectify_s factor_s coherence simcount "converged / note"
for K in $topics; do
  for method in anchors anchorfree-lp anchorfree-pds; do
    # --pipeline dense: the same AP-rectified C for all three (auto would fit the anchors
    # of a corpus this size by the compressed pipeline).
    line=$(mpirun -np 2 "$jsmf" fit --corpus "$docword" --vocab "$vocab" --topics "$K" --method "$method" \
           --pipeline dense --out "$work/$method.$K.h5" 2>"$work/log" | grep '^jsmf-fit')
    if [[ $method == anchors ]]; then
      factor=$(calc "$(field anchors_seconds "$line") + $(field recover_B_seconds "$line") + $(field recover_A_seconds "$line")")
      note="anchors $(grep -o 'anchors (qr): .*' "$work/log" | cut -c1-60)"
    else
      factor=$(calc "$(field square_root_seconds "$line") + $(field anchorfree_seconds "$line") + $(field finish_seconds "$line")")
      note=$(grep -o "$method: .*" "$work/log" | head -1 | cut -c1-110)
    fi
    printf "%-4s %-16s %9.2f %12.2f %12.2f %10.2f %9.1f %s\n" "$K" "$method" "$(field total_seconds "$line")" \
      "$(field rectify_seconds "$line")" "$factor" "$(field coherence "$line")" "$(field simcount "$line")" "$note"
  done
done
echo "coherence: mean over topics of sum over top-word pairs log((D2(v1,v2) + eps)/D1(v2)) (higher is better);"
echo "simcount: the top-20 words topic pairs share, summed over the pairs (AnchorFree's tables; lower is better); both from fit's metrics stage."
