#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The compressed pipeline on a small job, the shape of the one the authors' own compressed
# code was timed on (N = 5,000 words, 1,500 documents, K = 50 and 100): jsmf draws a
# stand-in corpus (`jsmf synth --stream`, Zipfian words; the authors' held-out corpus is not
# public), fits it with several range-finder seeds and prints seconds per stage, the
# anchors every seed agrees on, and the metrics. The authors' figures on the held-out
# corpus, their MATLAB code under Octave on this kind of machine (from the issue that asked
# for the comparison; Octave and their code are not part of this project): K = 50 138 s
# (compress 7.5, ENN 35.4, LAW 72.3), K = 100 357 s.
# Usage: jobs/bench_stand_in.sh; env TOPICS ("50 100"), SEEDS ("1 2 3"), RANKS (2)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
topics=${TOPICS:-50 100}
seeds=${SEEDS:-1 2 3}
[[ -n $seeds ]] || { echo "SEEDS is empty" >&2; exit 2; }
np=${RANKS:-2}
name=s5k
corpus_dir=$(mktemp -d)
trap 'rm -rf "$corpus_dir"' EXIT
source "$root/jobs/bench_common.sh"
trap 'rm -rf "$work" "$corpus_dir"' EXIT

"$jsmf" -q synth --stream --docs 1500 --words 5000 --topics 50 --doc-length 330 --zipf 1 --word-concentration 1 \
  --anchor-mass 0.005 --seed 1 --dir "$corpus_dir" --name "$name" >/dev/null
parts=("$corpus_dir"/docword.$name.part*.txt)

# common_anchors K FILES...: how many anchors every file has.
common_anchors() {
  /usr/bin/python3 - "$@" <<'EOF'
import sys, h5py
K, files = sys.argv[1], sys.argv[2:]
sets = []
for f in files:
    with h5py.File(f, "r") as h:
        sets.append(set(h[f"/K{K}/model/anchors"][()].tolist()))
print(len(set.intersection(*sets)))
EOF
}

echo
echo "== stand-in corpus (N = 5,000, D = 1,500, ~330 tokens a document), $np ranks, 150 ENN iterations"
printf '%4s %5s %8s %8s %8s %8s %8s %8s %9s %11s %11s\n' K seed total compress ENN LAW metrics write peak-MiB coherence specificity
for K in $topics; do
  files=()
  for seed in $seeds; do
    out=$work/fit.$K.$seed.h5
    l=$(mpirun -np "$np" "$jsmf" -q fit --corpus "${parts[@]}" --vocab "$corpus_dir/vocab.$name.txt" --topics "$K" \
          --pipeline compressed --enn-iterations 150 --seed "$seed" --out "$out" | grep '^jsmf-fit')
    files+=("$out")
    printf '%4s %5s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %9.0f %11.2f %11.4f\n' "$K" "$seed" \
      "$(field total_seconds "$l")" "$(field compress_seconds "$l")" "$(field enn_seconds "$l")" \
      "$(field anchors_seconds "$l")" "$(field metrics_seconds "$l")" "$(field write_seconds "$l")" \
      "$(calc "$(field peak_rss_bytes "$l") / 1048576")" "$(field coherence "$l")" "$(field specificity "$l")"
  done
  echo "K = $K: anchors common to every seed: $(common_anchors "$K" "${files[@]}")/$K"
done
