#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ENN against the authors' other factor rectifiers, PALM and iPALM (issue 43): the same
# corpus and K, the quality measures of each (jsmf's metrics, computed the same way for every
# row). PALM/iPALM run in numpy on the dense C (jobs/factor_palm.py), their rectified C
# factorized by jsmf fit --cooc --rectify none; ENN is jsmf's compressed default fit.
# Usage: jobs/bench_palm.sh CORPUS_DIR [NAME]; env TOPICS (100), RUNS ("palm:100 ipalm:100 palm:500 ipalm:500")
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=${1:?give the folder of the UCI corpus (docword.NAME.txt, vocab.NAME.txt)}
name=${2:-kos}
K=${TOPICS:-100}
runs=${RUNS:-palm:100 ipalm:100 palm:500 ipalm:500}
source "$root/jobs/bench_common.sh"
measures() { tr ' ' '\n' <<<"$1" | grep -E '^(coherence|specificity|dissimilarity)=' | tr '\n' ' '; }

mpirun -np 2 "$jsmf" -q cooc --corpus "$docword" --vocab "$vocab" --out "$work/C.h5" >/dev/null
echo "== $name, K = $K: the factor's rectifier, then anchors, B, A (dense pipeline on the rectified C; ENN: the compressed fit's LAW) and the same measures"
line=$(mpirun -np 2 "$jsmf" -q fit --corpus "$docword" --vocab "$vocab" --topics "$K" --pipeline compressed --out "$work/enn.h5" | grep '^jsmf-fit')
echo "enn (compressed default, $(field enn_seconds "$line") s): $(measures "$line")"
line=$(mpirun -np 2 "$jsmf" -q fit --cooc "$work/C.h5" --rectify none --corpus "$docword" --topics "$K" --out "$work/raw.h5" | grep '^jsmf-fit')
echo "none (C unrectified): $(measures "$line")"
for run in $runs; do
  method=${run%%:*} iterations=${run##*:}
  OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 /usr/bin/python3 "$root/jobs/factor_palm.py" "$work/C.h5" "$K" "$iterations" "$method" "$work/$run.h5" | tail -n 2 | head -n 1
  line=$(mpirun -np 2 "$jsmf" -q fit --cooc "$work/$run.h5" --rectify none --corpus "$docword" --topics "$K" --out "$work/fit.$run.h5" | grep '^jsmf-fit')
  echo "$method, $iterations iterations: $(measures "$line")"
done
