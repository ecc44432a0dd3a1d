#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Makes the fuzzers' seed inputs: small valid files of every kind each harness reads,
# made by jsmf itself (a planted corpus, its C, model, checkpoints, a prepared corpus) or
# written here, each prefixed with the byte that picks the harness's reader.
# Usage: make_seeds.sh <jsmf> <mpiexec> <out dir>   (writes <out>/<harness>/… and <out>/h5files)
set -euo pipefail
jsmf=$1 mpiexec=$2 out=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"/{uci,lists,prepare,h5}
run() { "$mpiexec" --oversubscribe -np 1 "$jsmf" -q "$@" >/dev/null; }

# seed <harness> <name> <selector byte 0-8> <file>: the file with its selector in front.
seed() { { printf "\\x0$3"; cat "$4"; } > "$out/$1/$2"; }

# The planted corpus the HDF5 seeds come from: N = 60 words, K = 3 topics (fuzz_h5.cpp).
run synth --dir "$work" --name s --docs 200 --words 60 --topics 3 --doc-length 40 --seed 7
run cooc --corpus "$work/docword.s.txt" --vocab "$work/vocab.s.txt" --out "$work/C.h5"
run fit --cooc "$work/C.h5" --topics 3 --out "$work/model.h5" \
    --checkpoint "$work/dense.h5" --checkpoint-seconds 0
run fit --corpus "$work/docword.s.txt" --vocab "$work/vocab.s.txt" --topics 3 --pipeline compressed \
    --out "$work/model_c.h5" --checkpoint "$work/compressed.h5" --checkpoint-seconds 0
# fuzz_h5 edits these files (through HDF5's API) as its inputs say; its seeds are the
# inputs that edit nothing, one per file kind.
mkdir -p "$out/h5files"
cp "$work/model.h5" "$out/h5files/model.h5"
cp "$work/C.h5" "$out/h5files/cooc.h5"
cp "$work/dense.h5" "$out/h5files/dense_checkpoint.h5"
cp "$work/compressed.h5" "$out/h5files/compressed_checkpoint.h5"
cp "$work/truth.s.h5" "$out/h5files/truth.h5"
for selector in 0 1 2 3 4; do printf "\\x0$selector" > "$out/h5/unchanged$selector"; done

# UCI docword: the planted corpus's first documents, and the UCI page's example; plain
# (0) and gzipped by the harness (1).
printf '2\n3\n3\n1 1 2\n1 2 1\n2 3 1\n' > "$work/tiny.txt"
{ head -n 3 "$work/docword.s.txt"; sed -n '4,80p' "$work/docword.s.txt"; } > "$work/head.txt"
# (its NNZ header no longer matches: a rank's reader does not check it, check_uci_totals does)
for selector in 0 1; do
  seed uci "tiny$selector" $selector "$work/tiny.txt"
  seed uci "head$selector" $selector "$work/head.txt"
done
seed uci crlf 0 <(printf '1\r\n2\r\n2\r\n\r\n1 1 3\r\n1 2 1\r\n')

# The line-oriented lists: vocabulary, anchor words (against the harness's vocabulary),
# "id label" file, stop words, and a prepared corpus's manifest.
head -n 20 "$work/vocab.s.txt" > "$work/vocab20.txt"
seed lists vocab 0 "$work/vocab20.txt"
seed lists anchors 1 <(printf '# anchors\nalpha\n  beta \n\ngamma\nünï\n')
seed lists labels 2 <(printf '# id label\ndoc1 news\ndoc2\tsports\n')
seed lists stopwords 3 <(printf 'the # article\nÉtÉ\n\nand\n')
mkdir -p "$work/raw"
printf 'The cat sat on the mat.\nDogs bark at cats; cats ignore dogs.\nA mat for the cat.\n' > "$work/raw/a.txt"
printf 'Cats and dogs, dogs and cats.\nThe mat is red.\n' > "$work/raw/b.txt"
run prepare --format lines --out "$work/prep" --name p --min-df 1 --min-doc-tokens 1 "$work/raw/a.txt" "$work/raw/b.txt"
seed lists manifest 4 "$work/prep/prepare.p.json"
seed lists eval_labels 5 <(printf '1\n2\n1\n\n')
seed lists items 6 <(printf '# id::name\n1::Toy Story (1995)\n2\tJumanji\n3,Caf\xc3\xa9\n')
seed lists doc_ids 7 <(printf 'a.txt:1\na.txt:2\nb.txt:1\n')
seed lists prepared_documents 8 <(printf 'd1\nd2\nd3\n\x00news\nsports\n\x001\n2\n1\n')

# prepare's raw formats: lines (0), JSON Lines (1), Brown (2), ratings (3), playlists (4).
seed prepare lines 0 "$work/raw/a.txt"
seed prepare jsonl 1 <(printf '{"id": "d1", "text": "Caf\\u00e9 au lait, s\xe2\x80\x99il vous pla\xc3\xaet.", "label": "fr"}\n{"text": "Stra\xc3\x9fe \xef\xac\x81le mp3 1964", "id": 7}\n\n{"id": "d3", "text": "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe6\x96\x87"}\n')
seed prepare brown 2 <(printf '\n\n\tThe/at Fulton/np-tl County/nn-tl Grand/jj-tl Jury/nn-tl said/vbd Friday/nr an/at investigation/nn ./.\n\n\tIt/pps recommended/vbd that/cs county\x27s/nn$ officials/nns be/be paid/vbn ./.\n')
seed prepare ratings_ml 3 <(printf '1::1193::5::978300760\n1::661::3::978302109\n2::1357::5::978298709\n1::914::3::978301968\n')
seed prepare ratings_tab 3 <(printf '196\t242\t3\t881250949\n186\t302\t3\t891717742\n196\t377\t1\t878887116\n')
seed prepare ratings_csv 3 <(printf 'u1,i1,4.5\nu1,i2,0.5\nu2,i1,2\n')
seed prepare playlists 4 <(printf 'song1 song2 song3\nsong2 song2 song9\n\nsong4\n')
