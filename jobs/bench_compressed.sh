#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The compressed pipeline against the dense one and against gensim's LDA, side by side in
# one session on a UCI corpus (default KOS): seconds, peak memory per rank, anchors in
# common with the dense exact mode, and the topics' metrics (coherence, specificity,
# dissimilarity). gensim: LdaMulticore, 10 passes, the same K, one worker per rank's core
# (python3-gensim; skipped with a note when missing).
# Usage: jobs/bench_compressed.sh [CORPUS_DIR] [NAME]; env TOPICS ("10 100"), RANKS (2)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=${1:-${JSMF_CORPUS_DIR:?give the folder of the UCI corpus (docword.NAME.txt, vocab.NAME.txt) as the first argument or JSMF_CORPUS_DIR}}
name=${2:-kos}
topics=${TOPICS:-10 100}
np=${RANKS:-2}
source "$root/jobs/bench_common.sh"

# anchors_common A.h5 B.h5 K: how many of B's anchors are among A's.
anchors_common() {
  /usr/bin/python3 - "$1" "$2" "$3" <<'EOF'
import sys, h5py
a, b, K = sys.argv[1], sys.argv[2], sys.argv[3]
with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
    sa = set(fa[f"/K{K}/model/anchors"][()].tolist()); sb = set(fb[f"/K{K}/model/anchors"][()].tolist())
print(len(sa & sb))
EOF
}

echo
echo "== $name, $np ranks: jsmf fit per pipeline, and gensim LdaMulticore (10 passes)"
printf '%-26s %4s %9s %9s %8s %11s %11s %13s\n' run K seconds peak-MiB anchors coherence specificity dissimilarity
for K in $topics; do
  declare -A line=()
  run() {  # run LABEL ARGS...: one fit, its machine-readable line kept
    local label=$1; shift
    line[$label]=$(mpirun -np "$np" "$jsmf" -q fit --corpus "$docword" --vocab "$vocab" --topics "$K" \
                     --out "$work/$label.$K.h5" "$@" | grep '^jsmf-fit')
  }
  run compressed --pipeline compressed
  run dense-exact --stop iterations
  run dense-default
  for label in compressed dense-exact dense-default; do
    l=${line[$label]}
    printf '%-26s %4s %9.2f %9.0f %8s %11.2f %11.4f %13.2f\n' "$label" "$K" "$(field total_seconds "$l")" \
      "$(calc "$(field peak_rss_bytes "$l") / 1048576")" \
      "$(anchors_common "$work/dense-exact.$K.h5" "$work/$label.$K.h5" "$K")/$K" \
      "$(field coherence "$l")" "$(field specificity "$l")" "$(field dissimilarity "$l")"
  done
  if /usr/bin/python3 -c 'import gensim' 2>/dev/null; then
    /usr/bin/python3 - "$docword" "$K" "$np" <<'EOF'
import gzip, sys, time, resource
from gensim.models import LdaMulticore
path, K, workers = sys.argv[1], int(sys.argv[2]), max(1, int(sys.argv[3]) - 1)
opener = gzip.open if path.endswith(".gz") else open
with opener(path, "rt") as f:
    D, W, _ = (int(f.readline()) for _ in range(3))
    docs = [[] for _ in range(D)]
    for line in f:
        d, w, c = map(int, line.split())
        docs[d - 1].append((w - 1, c))
start = time.time()
LdaMulticore(docs, num_topics=K, passes=10, workers=workers, random_state=1)
seconds = time.time() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 + resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"{'gensim LdaMulticore':<26s} {K:4d} {seconds:9.2f} {peak:9.0f} {'-':>8s} {'-':>11s} {'-':>11s} {'-':>13s}"
      f"   (workers={workers} + main; training only, reading excluded)")
EOF
  else
    echo "gensim: not installed (apt-get install python3-gensim); skipped"
  fi
done
