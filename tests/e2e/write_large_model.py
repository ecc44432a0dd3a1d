#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Usage: write_large_model.py TEMPLATE.h5 OUT.h5 N K
# A jsmf model file of N words and K topics for jsmf report at sizes no fit here reaches
# (N = 10^6, K = 200 needs 17 GB a rank to fit on 2 ranks): TEMPLATE's attributes and groups
# (any small model file), its first K's group renamed K<K> with a drawn B (each word positive
# in 15 % of the topics, as KOS's K = 100 model is in 14.7 %; p(w) Zipf-like; one anchor per
# topic), a drawn symmetric A, words "w<i>". B̆ is left a stub: jsmf report does not read it.
import sys, shutil
import h5py, numpy as np

template, out, N, K = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
shutil.copy(template, out)
f = h5py.File(out, "r+")
rng = np.random.default_rng(1)
groups = sorted(k for k in f.keys() if k.startswith("K"))
for k in groups[1:]:
    del f[k]
f.move(groups[0], f"K{K}")
g = f[f"K{K}"]
g.attrs["topics"] = K
for name in ("metrics", "projection", "topics"):  # sized by the template's K or N
    if name in g:
        del g[name]


def replace(group, name, data, dtype=None):
    attrs = dict(group[name].attrs) if name in group else {}
    if name in group:
        del group[name]
    group.create_dataset(name, data=data, dtype=dtype)
    for a, v in attrs.items():
        group[name].attrs[a] = v


zipf = 1.0 / (np.arange(N) + 10.0)
B = np.zeros((N, K))
for start in range(0, N, 100000):
    n = min(100000, N - start)
    B[start:start + n] = rng.random((n, K)) * (rng.random((n, K)) < 0.15) * zipf[start:start + n, None]
anchors = rng.choice(N // 10, K, replace=False)
B[anchors, np.arange(K)] += zipf[anchors]
B /= B.sum(0)
A = rng.random((K, K))
A = (A + A.T) / (A + A.T).sum()
m = g["model"]
replace(m, "B", B)
del B
replace(m, "B_breve", np.zeros((K, 1)))
replace(m, "A", A)
replace(m, "anchors", anchors.astype(np.int64))
words = np.array([f"w{i}".encode() for i in range(N)], dtype=object)
replace(m, "anchor_words", words[anchors], h5py.string_dtype())
replace(m, "diag_r", np.ones(K))
replace(m, "unigram", zipf / zipf.sum())
replace(f, "vocab", words, h5py.string_dtype())
replace(f["stats"], "unigram", zipf / zipf.sum())
replace(f["stats"], "doc_freq", np.ones(N, dtype=np.int64))
f.attrs["topics"] = str(K)
f.close()
