#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# jsmf infer: throughput (documents/s and tokens/s per rank) at each rank count in RANKS
# with K = 25 and K = 100 models of a UCI corpus (default KOS), and the held-out per-word
# log-likelihood on a 10% split (every 10th document held out) for jsmf (fit on the other
# 90%, the dense pipeline at its defaults: the figures in BENCHMARKS.md predate --pipeline auto) against gensim's LdaMulticore (10 passes) fit on the same 90%.
# Both models are scored the same way: each held-out document's θ maximizes its
# likelihood with the topics fixed (jsmf infer's EM; for gensim's topics, the same EM in
# NumPy), so the figure compares the topics, not the inference; gensim's own variational
# bound (log_perplexity) is printed beside it.
# Usage: jobs/bench_infer.sh [CORPUS_DIR] [NAME]; env RANKS ("1 2"), TOPICS ("25 100"), HELDOUT_K (25)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=${1:-${JSMF_CORPUS_DIR:?give the folder of the UCI corpus (docword.NAME.txt, vocab.NAME.txt) as the first argument or JSMF_CORPUS_DIR}}
name=${2:-kos}
source "$root/jobs/bench_common.sh"
py=/usr/bin/python3
ranks=${RANKS:-1 2}
topics=${TOPICS:-25 100}
heldout_k=${HELDOUT_K:-25}

split_heldout
echo "== jsmf fit (2 ranks, --pipeline dense, default options) and jsmf infer"
printf "%-10s %4s %6s %9s %9s %10s %13s %15s %10s\n" corpus K ranks documents tokens seconds "docs/s/rank" "tokens/s/rank" "per-word LL"
for K in $topics; do
  mpirun -np 2 "$jsmf" -q fit --corpus "$docword" --vocab "$vocab" --topics "$K" --pipeline dense --no-metrics --out "$work/full$K.h5" >/dev/null
  for np in $ranks; do
    line=$(mpirun -np "$np" "$jsmf" -q infer --model "$work/full$K.h5" --corpus "$docword" --out "$work/t.h5" | grep '^jsmf-infer')
    printf "%-10s %4s %6s %9s %9s %10.2f %13.0f %15.0f %10.4f\n" "$name" "$K" "$np" "$(field inferred "$line")" \
      "$(field tokens "$line")" "$(field seconds "$line")" "$(field documents_per_second_per_rank "$line")" \
      "$(field tokens_per_second_per_rank "$line")" "$(field per_word_log_likelihood "$line")"
  done
done
echo
echo "== held-out per-word log-likelihood, K = $heldout_k: every 10th document held out"
fit_line=$(mpirun -np 2 "$jsmf" -q fit --corpus "$work/docword.train.txt" --vocab "$vocab" --topics "$heldout_k" \
  --pipeline dense --no-metrics --out "$work/train.h5" | grep '^jsmf-fit')
line=$(mpirun -np 2 "$jsmf" -q infer --model "$work/train.h5" --corpus "$work/docword.test.txt" --out "$work/held.h5" | grep '^jsmf-infer')
echo "jsmf (rectified anchor words, --pipeline dense, default options, fit $(field total_seconds "$fit_line") s at 2 ranks): per-word" \
  "log-likelihood $(field per_word_log_likelihood "$line") over $(field tokens "$line") tokens of $(field inferred "$line") documents"
"$py" - "$work" "$heldout_k" <<'PY'
import sys, time
import numpy as np, gensim
w, K = sys.argv[1], int(sys.argv[2])
def read(part):
    docs = {}
    with open(f"{w}/docword.{part}.txt") as f:
        D, W, NNZ = (int(f.readline()) for _ in range(3))
        for l in f:
            d, i, c = map(int, l.split()); docs.setdefault(d, []).append((i - 1, c))
    return W, [docs[d] for d in sorted(docs)]
W, train = read("train"); _, test = read("test")
import h5py
usable = h5py.File(f"{w}/train.h5", "r")[f"K{K}/model/B"][:].max(1) > 0  # jsmf scores only these words
start = time.time()
lda = gensim.models.LdaMulticore(train, num_topics=K, id2word=None, passes=10, workers=1, random_state=1)
seconds = time.time() - start
B = lda.get_topics().T  # W x K, columns p(word | topic)
B = B / B.sum(0, keepdims=True)
def score(test, keep):
  total, tokens = 0.0, 0
  for doc in test:
    doc = [(i, c) for i, c in doc if keep[i]]
    if not doc: continue
    ids = np.array([i for i, _ in doc]); h = np.array([c for _, c in doc], float)
    Bd = B[ids]; theta = np.full(K, 1.0 / K)
    for _ in range(1000):  # jsmf infer's EM, the same start and stop
        new = theta * (Bd.T @ (h / (Bd @ theta))) / h.sum()
        new /= new.sum()
        done = np.abs(new - theta).max() <= 1e-6
        theta = new
        if done: break
    total += (h * np.log(Bd @ theta)).sum(); tokens += int(h.sum())
  return total / tokens, tokens
same, same_tokens = score(test, usable)
every, all_tokens = score(test, np.ones(W, bool))
print(f"gensim LdaMulticore {gensim.__version__} (10 passes, fit {seconds:.1f} s), the same EM: per-word "
      f"log-likelihood {same:.6f} over jsmf's {same_tokens} tokens (words jsmf's B has), {every:.6f} over all "
      f"{all_tokens}; its own variational bound {lda.log_perplexity(test):.6f}")
PY
