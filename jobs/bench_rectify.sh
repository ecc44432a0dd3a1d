#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark of AP rectification on a UCI corpus (default KOS): seconds per iteration and
# for all iterations, eigensolver work per iteration, GFLOP/s per rank against this
# machine's DGEMM peak, peak memory per rank; and AP with the direct eigensolver
# (PDSYEVR) for a few iterations, scaled to the same count.
# Usage: jobs/bench_rectify.sh [CORPUS_DIR] [NAME]; env ITERATIONS (150), TOPICS ("10 50 100"),
#        RANKS ("1 2"), DIRECT_ITERATIONS (2)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=${1:-${JSMF_CORPUS_DIR:?give the folder of the UCI corpus (docword.NAME.txt, vocab.NAME.txt) as the first argument or JSMF_CORPUS_DIR}}
name=${2:-kos}
iterations=${ITERATIONS:-150}
topics=${TOPICS:-10 50 100}
ranks=${RANKS:-1 2}
direct_iterations=${DIRECT_ITERATIONS:-2}
source "$root/jobs/bench_common.sh"
peak=$("$build/dgemm_bench" --benchmark_filter='Square/4000' 2>/dev/null | sed -n 's/.*GFLOP\/s=\([0-9.]*\).*/\1/p')
echo "DGEMM peak, one core (N=4000): ${peak} GFLOP/s"

mpirun -np 2 "$build/jsmf" -q cooc --corpus "$docword" --vocab "$corpus_dir/vocab.$name.txt" --out "$work/C.h5" \
  --compression 0 >/dev/null
echo
printf '%-6s %4s %-9s %5s %9s %11s %9s %10s %11s %9s %10s\n' ranks K solver iters s/iter s/150-iters \
  rounds/it products/it GFLOP/s/rk "%peak" peak-MiB
for np in $ranks; do
  for K in $topics; do
    line=$(mpirun -np "$np" "$build/jsmf" -q rectify --in "$work/C.h5" --out "$work/R.h5" --topics "$K" \
             --iterations "$iterations" --compression 0)
    per=$(field seconds_per_iteration "$line")
    gf=$(field gflops_per_rank "$line")
    printf '%-6s %4s %-9s %5s %9.3f %11.1f %9s %10s %11.1f %8.0f%% %10.0f\n' "$np" "$K" subspace "$iterations" "$per" \
      "$(calc "$per * 150")" "$(field eig_rounds_per_iteration "$line")" "$(field eig_products_per_iteration "$line")" \
      "$gf" "$(calc "100 * $gf / $peak")" "$(calc "$(field peak_rss_bytes "$line") / 1048576")"
  done
  line=$(mpirun -np "$np" "$build/jsmf" -q rectify --in "$work/C.h5" --out "$work/R.h5" --topics 100 \
           --iterations "$direct_iterations" --eigensolver direct --compression 0)
  per=$(field seconds_per_iteration "$line")
  printf '%-6s %4s %-9s %5s %9.3f %11.1f %9s %10s %11s %9s %10.0f\n' "$np" 100 direct "$direct_iterations" "$per" \
    "$(calc "$per * 150")" - - - - "$(calc "$(field peak_rss_bytes "$line") / 1048576")"
done
