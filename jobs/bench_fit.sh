#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark of `jsmf fit` on a UCI corpus (default KOS): seconds per stage and in total,
# peak memory per rank, at each rank count and K; then B recovery alone per solver
# (words/s per rank, words converged) on the C rectified once per K; then the topics of
# the first K.
# Usage: jobs/bench_fit.sh [CORPUS_DIR] [NAME]; env ITERATIONS (150), TOPICS ("10 100"), RANKS ("1 2")
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=${1:-${JSMF_CORPUS_DIR:?give the folder of the UCI corpus (docword.NAME.txt, vocab.NAME.txt) as the first argument or JSMF_CORPUS_DIR}}
name=${2:-kos}
iterations=${ITERATIONS:-150}
topics=${TOPICS:-10 100}
ranks=${RANKS:-1 2}
source "$root/jobs/bench_common.sh"
echo
echo "== jsmf fit --corpus $name, AP $iterations iterations, anchors qr, solver active-set (seconds)"
printf '%-5s %4s %7s %9s %8s %9s %9s %7s %9s %9s\n' ranks K cooc rectify anchors recover_B recover_A write total peak-MiB
first_model=
for np in $ranks; do
  for K in $topics; do
    out=$work/model.$np.$K.h5
    line=$(mpirun -np "$np" "$jsmf" -q fit --corpus "$docword" --vocab "$vocab" --topics "$K" \
             --iterations "$iterations" --out "$out")
    [[ -n $first_model ]] || first_model=$out
    printf '%-5s %4s %7.2f %9.1f %8.2f %9.3f %9.4f %7.3f %9.1f %9.0f\n' "$np" "$K" \
      "$(calc "$(field inspect_seconds "$line") + $(field cooc_seconds "$line")")" "$(field rectify_seconds "$line")" \
      "$(field anchors_seconds "$line")" "$(field recover_B_seconds "$line")" "$(field recover_A_seconds "$line")" \
      "$(field write_seconds "$line")" "$(field total_seconds "$line")" "$(calc "$(field peak_rss_bytes "$line") / 1048576")"
  done
done

echo
echo "== B recovery per solver on the rectified C (fit --cooc R.h5 --rectify none), 1 rank"
printf '%4s %-11s %9s %12s %10s %9s\n' K solver solve-s words/s converged solved
mpirun -np 2 "$jsmf" -q cooc --corpus "$docword" --vocab "$vocab" --out "$work/C.h5" --compression 0 >/dev/null
for K in $topics; do
  mpirun -np 2 "$jsmf" -q rectify --in "$work/C.h5" --out "$work/R.$K.h5" --topics "$K" --iterations "$iterations" \
    --compression 0 >/dev/null
  for solver in active-set expgrad admm; do
    line=$(mpirun -np 1 "$jsmf" -q fit --cooc "$work/R.$K.h5" --rectify none --topics "$K" --solver "$solver" \
             --out "$work/S.h5" 2>/dev/null)
    solve=$(field solve_seconds "$line")
    printf '%4s %-11s %9.3f %12.0f %10s %9s\n' "$K" "$solver" "$solve" \
      "$(calc "$(field words_solved "$line") / $solve")" "$(field words_converged "$line")" "$(field words_solved "$line")"
  done
done

echo
echo "== topics of the first model"
"$jsmf" show "$first_model" --top-words 10 --pairs 5
