#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ENN over-relaxed (fit --enn-relaxation) against the authors' plain ENN, one UCI corpus:
# at each K, plain ENN for PLAIN iterations (the papers' 150, exact projections), relaxed
# ENN (ω = OMEGA) for RELAXED iterations, and the default stop; each run's ENN and total
# seconds, the negative mass and entries ENN leaves among checked pairs, coherence,
# specificity and dissimilarity as the fit measured them, and the anchors and B (L1 per
# topic, topics matched) against the plain run's.
# Usage: jobs/bench_enn_relaxation.sh CORPUS_DIR NAME; env TOPICS ("10 50 100"), OMEGA (1.9),
# PLAIN (150), RELAXED (75), RANKS (2).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=${1:?give the folder of the UCI corpus (docword.NAME.txt[.gz], vocab.NAME.txt)}
name=${2:?give the corpus name}
topics=${TOPICS:-10 50 100} omega=${OMEGA:-1.9} plain=${PLAIN:-150} relaxed=${RELAXED:-75} np=${RANKS:-2}
source "$root/jobs/bench_common.sh"

printf '\n%-8s %-4s %-22s %7s %7s %10s %9s %9s %7s %6s %9s %13s\n' corpus K run enn_s total_s mass_left entries \
  coherence spec dissim anchors "B L1 med/max"
for K in $topics; do
  for run in plain relaxed default; do
    case $run in
      plain) args=(--enn-iterations "$plain") label="plain, $plain" ;;
      relaxed) args=(--enn-iterations "$relaxed" --enn-relaxation "$omega") label="ω = $omega, $relaxed" ;;
      default) args=() label="default stop" ;;
    esac
    if ! line=$(mpirun -np "$np" "$jsmf" -q fit --corpus "$docword" --vocab "$vocab" --topics "$K" --pipeline compressed \
      "${args[@]}" --out "$work/$run.h5" 2>"$work/err" | grep '^jsmf-fit'); then
      echo "$name K = $K, $label: the fit failed: $(tail -3 "$work/err")" >&2
      exit 1
    fi
    left=$(/usr/bin/python3 -c "
import h5py, sys; f = h5py.File(sys.argv[1], 'r'); g = f[f'K{sys.argv[2]}/compressed']
print(f\"{g.attrs['final_negative_mass']:.3e} {g.attrs['final_negative_entries']} {len(g['enn/seconds'])}\")" "$work/$run.h5" "$K")
    read -r mass entries done <<<"$left"
    [[ $run == default ]] && label="default stop, $done"
    versus=$([[ $run == plain ]] && echo "- -" || compare_models "$work/plain.h5" "$work/$run.h5" "$K")
    printf '%-8s %-4s %-22s %7.1f %7.1f %10s %9s %9.2f %7.4f %6.2f %9s %13s\n' "$name" "$K" "$label" \
      "$(field enn_seconds "$line")" "$(field total_seconds "$line")" "$mass" "$entries" "$(field coherence "$line")" \
      "$(field specificity "$line")" "$(field dissimilarity "$line")" $versus
  done
done
