#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The cost model's seconds against measurement (issue 45): compressed fits on a real corpus
# (UCI docword and vocab) at K = 10 and 100, and on a 10⁵-word Zipf corpus drawn here, at 1
# and 2 ranks (ranks × threads ≤ cores); for each stage the seconds measured beside the
# model's at the run's own counts (fit/cost.hpp's RankRates, fitted to this script's runs on
# KOS and on the Zipf corpus of DOCS=10000), their ratio, and the dry run's total from the
# headers alone.
#   bash jobs/bench_rates.sh CORPUS_DIR NAME        # e.g. a folder with docword.kos.txt(.gz), vocab.kos.txt
#   RANKS="1 2" DOCS=10000 bash jobs/bench_rates.sh CORPUS_DIR NAME
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=${1:?usage: bench_rates.sh CORPUS_DIR NAME} name=${2:?usage: bench_rates.sh CORPUS_DIR NAME}
RANKS=${RANKS:-"1 2"} DOCS=${DOCS:-10000} WORDS=${WORDS:-100000}
source "$root/jobs/bench_common.sh"
if [[ $docword == *.gz ]]; then gunzip -c "$docword" >"$work/docword.$name.txt"; docword=$work/docword.$name.txt; fi
mpirun -np 2 "$jsmf" synth --stream --dir "$work" --name z --docs "$DOCS" --words "$WORDS" --topics 100 \
  --doc-length 330 --zipf 1 --seed 1 >/dev/null 2>&1
echo "synthetic: jsmf synth --stream --docs $DOCS --words $WORDS --topics 100 --doc-length 330 --zipf 1"

echo "| corpus | K | ranks | stage | measured s | model s | model / measured |"
echo "|---|---|---|---|---|---|---|"
# run LABEL K NP ARGS...: one fit, its stage table's measured and modelled seconds.
run() {
  local label=$1 K=$2 np=$3; shift 3
  # the dry run's prediction from the headers alone (typical counts, ENN's most iterations)
  local plan predicted
  plan=$(mpirun -np "$np" "$jsmf" fit "$@" --pipeline compressed --topics "$K" --out "$work/m.h5" --dry-run 2>/dev/null | grep '^jsmf-plan' || true)
  predicted=$(tr ' ' '\n' <<<"$plan" | awk -F= '$1 ~ /[a-z]_seconds$/ && $1 !~ /compute_seconds$/ { s += $2 } END { printf "%.2f", s }')
  mpirun -np "$np" "$jsmf" fit "$@" --pipeline compressed --topics "$K" --out "$work/m.h5" >"$work/out" 2>"$work/log" ||
    { echo "fit $label K=$K at $np ranks failed: $(tail -3 "$work/log")" >&2; exit 1; }
  # the stage table: name, seconds, "s", peak, "MiB", sent, "MiB", "sent", "model", peak,
  # "MiB", sent, "MiB", "sent", seconds, "s"; the write's measured seconds come after the
  # table (its row is the model's alone: "-")
  local line
  line=$(grep '^jsmf-fit' "$work/out" | head -1)
  awk -v label="$label" -v K="$K" -v np="$np" -v write="$(field write_seconds "$line")" -v predicted="$predicted" '$9 == "model" && $16 == "s" {
      measured = ($2 == "-" && $1 == "write") ? write : $2
      all += measured; modelled += $15
      printf "| %s | %s | %s | %s | %.2f | %.2f | %.2f |\n", label, K, np, $1, measured, $15, (measured > 0 ? $15 / measured : 0) }
    END { if (all <= 0) { print "no stage table in the log" > "/dev/stderr"; exit 1 }
          printf "| %s | %s | %s | **the modelled stages** | **%.2f** | **%.2f** | **%.2f** |\n", label, K, np, all, modelled, modelled / all
          printf "| %s | %s | %s | the dry run (headers, typical counts) | %.2f | %.2f | %.2f |\n", label, K, np, all, predicted, predicted / all }' "$work/log"
  grep -o 'cost model: N = .*' "$work/log" | sed 's/^/    counts: /' >>"$work/counts"
}
for np in $RANKS; do
  run "$name" 10 "$np" --corpus "$docword" --vocab "$vocab"
  run "$name" 100 "$np" --corpus "$docword" --vocab "$vocab"
  run "zipf 10^5" 100 "$np" --corpus "$work"/docword.z.part*.txt --vocab "$work/vocab.z.txt" --enn-iterations 5
done
echo
echo "The runs' counts (the fit's log):"
cat "$work/counts"
