#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How fast AP, Douglas-Rachford and Dykstra approach their fixed points on a UCI corpus
# (default KOS, the authors' document filter): the relative change ‖C_t − C_{t−1}‖/‖C_t‖ at
# selected iterations, seconds per iteration, eigensolver work per iteration, and the cost
# of the eigensolver's missed-eigenvalue check (AP checking every iteration, and not at all).
# Usage: jobs/bench_projections.sh [CORPUS_DIR] [NAME]; env ITERATIONS (300), TOPICS ("10 50"),
#        METHODS ("ap dr dp"), RANKS (2), CHECK_VARIANTS (1: also AP checking every iteration and never)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=${1:-${JSMF_CORPUS_DIR:?give the folder of the UCI corpus (docword.NAME.txt, vocab.NAME.txt) as the first argument or JSMF_CORPUS_DIR}}
name=${2:-kos}
iterations=${ITERATIONS:-300}
topics=${TOPICS:-10 50}
methods=${METHODS:-ap dr dp}
np=${RANKS:-2}
source "$root/jobs/bench_common.sh"

mpirun -np "$np" "$jsmf" -q cooc --corpus "$docword" --vocab "$vocab" --out "$work/C.h5" --compression 0 \
  --min-tokens 5 --min-distinct 3 >/dev/null
checkpoints="1 10 50 100 150 200 300 500 1000"
# column NAME FILE: /rectification/NAME, one value per line.
column() { h5dump -d "/rectification/$1" -y -w 1 -o "$work/$1.txt" "$2" >/dev/null && tr -d ' ,' <"$work/$1.txt" | grep -v '^$'; }
echo
echo "ranks=$np iterations=$iterations; change = ||C_t - C_(t-1)||_F / ||C_t||_F of the iterate"
printf '%-4s %-14s' K method
for t in $checkpoints; do ((t <= iterations)) && printf ' %9s' "t=$t"; done
printf ' %8s %9s %9s %8s %8s\n' s/iter rounds/it prod/it unconv missed
run_one() {  # K label args...
  local K=$1 label=$2; shift 2
  line=$(mpirun -np "$np" "$jsmf" -q rectify --in "$work/C.h5" --out "$work/R.h5" --topics "$K" \
           --iterations "$iterations" --compression 0 --progress-seconds 1e9 "$@")
  mapfile -t change < <(column change "$work/R.h5")
  mapfile -t converged < <(column eig_converged "$work/R.h5")
  mapfile -t missed < <(column eig_missed "$work/R.h5")
  local unconverged=0 found=0
  for c in "${converged[@]}"; do ((c == 0)) && unconverged=$((unconverged + 1)); done
  for m in "${missed[@]}"; do found=$((found + m)); done
  printf '%-4s %-14s' "$K" "$label"
  for t in $checkpoints; do ((t <= iterations)) && printf ' %9.2e' "${change[$((t - 1))]}"; done
  printf ' %8.3f %9s %9s %8s %8s\n' "$(field seconds_per_iteration "$line")" "$(field eig_rounds_per_iteration "$line")" \
    "$(field eig_products_per_iteration "$line")" "$unconverged" "$found"
}
for K in $topics; do
  for method in $methods; do run_one "$K" "$method" --method "$method"; done
  if [[ ${CHECK_VARIANTS:-1} == 1 ]]; then
    run_one "$K" "ap-check-all" --method ap --eig-check-every 1
    run_one "$K" "ap-no-check" --method ap --eig-check-steps 0
  fi
done
