#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job on the built-in default corpus: install what is missing, build, draw a
# synthetic corpus with known topics, learn its topics with `jsmf fit` (co-occurrence,
# AP rectification, anchors, B, A, alpha) on 2 ranks, and print them with `jsmf show`.
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

# The default corpus: 10 correlated topics (logistic-normal, rho^|k-l| with rho = 0.6, so
# neighbouring topics k, k+1 co-occur) over 2,000 words, each with one planted anchor word
# ("anchorK_0"); 5,000 documents of ~150 tokens. jsmf show should list the planted anchors
# and, among the most correlated pairs, neighbouring topics.
"$jsmf" synth --dir "$out" --name demo --docs 5000 --words 2000 --topics 10 --doc-length 150 \
  --word-concentration 1.0 --anchor-mass 0.03 --prior logistic-normal --correlation 0.6 --seed 1
oversubscribe=$([[ $np -gt $(getconf _NPROCESSORS_ONLN) ]] && echo --oversubscribe || true)
mpirun -np "$np" $oversubscribe "$jsmf" fit \
  --corpus "$out/docword.demo.txt" --vocab "$out/vocab.demo.txt" --topics 10 --iterations 50 --alpha \
  --out "$out/model.demo.h5"
"$jsmf" show "$out/model.demo.h5" --top-words 10 --pairs 5
echo
echo "Against the planted topics (jsmf eval --truth: topics matched by the Hungarian method):"
"$jsmf" -q eval "$out/model.demo.h5" --truth "$out/truth.demo.h5" | grep "planted truth"
echo
echo "Done. The model (B, A, anchors, alpha, the AP trace, top words) is in $out/model.demo.h5:"
echo "  h5ls -r $out/model.demo.h5                           # what is inside"
echo "  python3 -c \"import h5py; f = h5py.File('$out/model.demo.h5'); print(f['model/B'].shape, f['topics/top_words'][0, :5])\""
echo "The planted topics (B, A, anchors) are in $out/truth.demo.h5; the metrics in /K10/metrics."
