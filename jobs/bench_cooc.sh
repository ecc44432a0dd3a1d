#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Benchmark of `jsmf cooc` against a one-process baseline (Eigen sparse H·Hᵀ), on a UCI
# corpus and on the corpus concatenated with itself 2, 4 and 8 times (per-rank memory
# must stay flat). Prints the machine's context and one table.
# Usage: jobs/bench_cooc.sh CORPUS_DIR [NAME (default: kos)]  (CORPUS_DIR or JSMF_CORPUS_DIR: docword.NAME.txt, vocab.NAME.txt)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=${1:-${JSMF_CORPUS_DIR:?give the folder of the UCI corpus (docword.NAME.txt, vocab.NAME.txt) as the first argument or JSMF_CORPUS_DIR}}
name=${2:-kos}
source "$root/jobs/bench_common.sh"
bandwidth=$("$build/cooc_kernel_bench" --benchmark_filter=Triad 2>/dev/null |
            sed -n 's/.*bytes_per_second=\([0-9.]*\)G.*/\1/p')
echo "memory bandwidth (triad, 1 core): ${bandwidth} GB/s"

[[ $docword == *.gz ]] && zcat "$docword" > "$work/x1.txt" || cp "$docword" "$work/x1.txt"
# kos x k: k copies with document ids shifted, so D grows and N stays.
for k in 2 4 8; do
  awk -v k="$k" 'NR == 1 {D = $1; print D * k; next} NR == 2 {print; next} NR == 3 {print $1 * k; next}
                 {lines[++n] = $0} END {for (c = 0; c < k; ++c) for (i = 1; i <= n; ++i) {
                   split(lines[i], f, " "); print f[1] + c * D, f[2], f[3] }}' "$work/x1.txt" > "$work/x$k.txt"
done

buffer_mb=${JSMF_BENCH_BUFFER_MB:-8}  # below one copy's traffic, so every size is buffer-bound
calc() { awk "BEGIN { print $1 }"; }  # arithmetic without bc
field() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" <<<"$2"; }
printf '\n== %s: co-occurrence build (read + accumulate + checks), C kept in memory; --buffer-mb %s\n' "$name" "$buffer_mb"
printf '%-7s %-22s %5s %9s %12s %16s %14s %9s\n' corpus tool ranks seconds docs/s/rank pair-upd/s/rank peak-MiB/rank speedup
for k in 1 2 4 8; do
  line=$("$build/cooc_baseline" "$work/x$k.txt")
  base=$(field build_seconds "$line")
  docs=$(field docs "$line")
  updates=$(field pair_updates "$line")
  printf '%-7s %-22s %5d %9.3f %12.0f %16.3g %14.0f %9s\n' "x$k" "baseline Eigen H*H^T" 1 "$base" \
    "$(calc "$docs / $base")" "$(calc "$updates / $base")" "$(calc "$(field peak_rss_bytes "$line") / 1048576")" "1.00"
  for np in 1 2; do
    line=$(mpirun -np "$np" "$build/jsmf" -q cooc --corpus "$work/x$k.txt" --vocab "$vocab" --out "$work/C.h5" \
             --compression 0 --buffer-mb "$buffer_mb")
    secs=$(field build_seconds "$line")
    printf '%-7s %-22s %5d %9.3f %12.0f %16.3g %14.0f %9.2f\n' "x$k" "jsmf cooc" "$np" "$secs" \
      "$(calc "$docs / ($secs * $np)")" "$(calc "$updates / ($secs * $np)")" \
      "$(calc "$(field peak_rss_bytes "$line") / 1048576")" "$(calc "$base / $secs")"
  done
done
printf '\n== writing C to HDF5 (x1, 2 ranks): seconds by deflate level\n'
for level in 0 1 4; do
  line=$(mpirun -np 2 "$build/jsmf" -q cooc --corpus "$work/x1.txt" --vocab "$vocab" --out "$work/C$level.h5" --compression "$level")
  printf 'level %d: total %.2f s, build %.2f s, file %s MiB\n' "$level" "$(field total_seconds "$line")" \
    "$(field build_seconds "$line")" "$(( $(stat -c %s "$work/C$level.h5") / 1048576 ))"
done
