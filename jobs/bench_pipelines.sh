#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where the compressed pipeline overtakes the dense one: a UCI corpus (default KOS) pruned
# to its WORDS most frequent words, fit by each pipeline at each K on the same ranks in one
# session: seconds, peak memory per rank and the topics' metrics side by side. These are the
# figures `--pipeline auto`'s boundary (fit::dense_words_at_most) was fitted to.
# Usage: jobs/bench_pipelines.sh [CORPUS_DIR] [NAME]; env WORDS ("1000 2000 4000"),
#        TOPICS ("10 100"), RANKS (2)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=${1:-${JSMF_CORPUS_DIR:?give the folder of the UCI corpus (docword.NAME.txt, vocab.NAME.txt) as the first argument or JSMF_CORPUS_DIR}}
name=${2:-kos}
sizes=${WORDS:-1000 2000 4000}
topics=${TOPICS:-10 100}
np=${RANKS:-2}
source "$root/jobs/bench_common.sh"

# prune N: docword.N.txt and vocab.N.txt in $work, the N most frequent words kept (ids renumbered).
prune() {
  /usr/bin/python3 - "$docword" "$vocab" "$1" "$work" <<'PY'
import gzip, sys, collections
docword, vocab, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
f = gzip.open(docword, "rt") if docword.endswith(".gz") else open(docword)
D, W, _ = int(f.readline()), int(f.readline()), int(f.readline())
rows = [tuple(map(int, line.split())) for line in f if line.strip()]
count = collections.Counter()
for d, w, c in rows:
    count[w] += c
keep = sorted(w for w, _ in count.most_common(n))
index = {w: i + 1 for i, w in enumerate(keep)}
words = open(vocab).read().split("\n")
kept = [(d, index[w], c) for d, w, c in rows if w in index]
with open(f"{out}/docword.{n}.txt", "w") as g:
    g.write(f"{D}\n{len(keep)}\n{len(kept)}\n")
    g.writelines("%d %d %d\n" % r for r in kept)
with open(f"{out}/vocab.{n}.txt", "w") as g:
    g.writelines(words[w - 1] + "\n" for w in keep)
PY
}

echo
echo "== $name pruned to its most frequent words, $np ranks: jsmf fit --pipeline dense (its default) vs compressed"
printf '%6s %4s %-10s %9s %9s %11s %11s %13s\n' words K pipeline seconds peak-MiB coherence specificity dissimilarity
for n in $sizes; do
  prune "$n"
  for K in $topics; do
    (( K < n )) || continue
    for pipeline in dense compressed; do
      line=$(mpirun -np "$np" "$jsmf" -q fit --corpus "$work/docword.$n.txt" --vocab "$work/vocab.$n.txt" --topics "$K" \
               --pipeline "$pipeline" --out "$work/m.h5" | grep '^jsmf-fit')
      printf '%6s %4s %-10s %9.2f %9.1f %11.2f %11.4f %13s\n' "$n" "$K" "$pipeline" "$(field total_seconds "$line")" \
        "$(calc "$(field peak_rss_bytes "$line") / 1048576")" "$(field coherence "$line")" "$(field specificity "$line")" \
        "$(field dissimilarity "$line")"
      rm -f "$work/m.h5"
    done
  done
done
