#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The papers' experiment on a UCI corpus (default KOS, the authors' document filter):
# C built once, then jsmf sweep over K x rectifier x solver with every metric; prints the
# metric table, the seconds per stage and the metrics' share, and draws the pictures.
# Usage: jobs/bench_sweep.sh [CORPUS_DIR] [NAME]; env TOPICS (5,10,25,50,100), RECTIFY
# (none,dc,ap), SOLVERS (admm,active-set), RANKS (2), ITERATIONS (150), OUT (./sweep-NAME:
# kept: runs/*.h5, sweep.csv, *.png).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=${1:-${JSMF_CORPUS_DIR:?give the folder of the UCI corpus (docword.NAME.txt, vocab.NAME.txt) as the first argument or JSMF_CORPUS_DIR}}
name=${2:-kos}
source "$root/jobs/bench_common.sh"
out=${OUT:-$PWD/sweep-$name}
np=${RANKS:-2}
mkdir -p "$out"
echo
echo "== jsmf cooc --min-tokens 5 --min-distinct 3 ($np ranks)"
mpirun -np "$np" "$jsmf" -q cooc --corpus "$docword" --vocab "$vocab" --min-tokens 5 --min-distinct 3 --out "$out/C.h5"
echo
echo "== jsmf sweep --topics ${TOPICS:-5,10,25,50,100} --rectify ${RECTIFY:-none,dc,ap} --solver ${SOLVERS:-admm,active-set} ($np ranks)"
start=$(date +%s.%N)
mpirun -np "$np" "$jsmf" -q sweep --cooc "$out/C.h5" --corpus "$docword" --topics "${TOPICS:-5,10,25,50,100}" \
  --rectify "${RECTIFY:-none,dc,ap}" --solver "${SOLVERS:-admm,active-set}" --iterations "${ITERATIONS:-150}" \
  --out-dir "$out"
echo "wall: $(calc "$(date +%s.%N) - $start") s"
echo
/usr/bin/python3 "$root/jobs/sweep_table.py" "$out/sweep.csv"
# The pictures of one model: the second K's AP run if there is one, else any run's.
first=$(ls "$out"/runs/K*_ap_active-set.h5 2>/dev/null | sort -V | sed -n 2p || true)
[[ -n $first ]] || first=$(ls "$out"/runs/*.h5 | sort -V | tail -n 1)
/usr/bin/python3 "$root/jobs/plot.py" metrics "$out/sweep.csv" --out "$out/metrics.png" --title "jsmf on $name"
/usr/bin/python3 "$root/jobs/plot.py" anchors "$first" --out "$out/anchors.png"
/usr/bin/python3 "$root/jobs/plot.py" heatmap "$first" --out "$out/heatmap.png"
echo "pictures: $out/*.png"
