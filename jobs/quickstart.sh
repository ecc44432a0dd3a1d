#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job on the built-in default corpus: install what is missing, build, draw a
# synthetic corpus with known topics, build its co-occurrence matrix and rectify it (AP),
# on 2 ranks.
# Environment: JSMF_NP (ranks, default 2), JSMF_OUT (output folder, default build/demo).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/jobs/setup.sh"
bash "$root/jobs/build.sh"
source "$root/jobs/env.sh"
jsmf=$root/build/jsmf
np=${JSMF_NP:-2}
out=${JSMF_OUT:-$root/build/demo}
mkdir -p "$out"

# The default corpus: 10 topics over 2,000 words, 5,000 documents of ~150 tokens.
"$jsmf" synth --dir "$out" --name demo --docs 5000 --words 2000 --topics 10 --doc-length 150 --seed 1
oversubscribe=$([[ $np -gt $(getconf _NPROCESSORS_ONLN) ]] && echo --oversubscribe || true)
mpirun -np "$np" $oversubscribe "$jsmf" cooc \
  --corpus "$out/docword.demo.txt" --vocab "$out/vocab.demo.txt" --out "$out/C.demo.h5"
mpirun -np "$np" $oversubscribe "$jsmf" rectify \
  --in "$out/C.demo.h5" --topics 10 --method ap --iterations 50 --out "$out/C.rectified.demo.h5"
echo
echo "Done. The co-occurrence matrix and its statistics are in $out/C.demo.h5,"
echo "the rectified one (rank 10, PSD, nonnegative, sums to 1) with its AP trace in $out/C.rectified.demo.h5"
echo "  h5ls -r $out/C.demo.h5                               # what is inside"
echo "  python3 -c \"import h5py; f = h5py.File('$out/C.demo.h5'); print(f['cooc/C'].shape)\""
echo "The planted topics (B, A, anchors) are in $out/truth.demo.h5"
