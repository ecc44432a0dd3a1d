#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end: hostile inputs, as a user hands them back. Co-occurrence files made wrong in
# every way a jsmf C promises (all zero, a negative entry, C x 5, integers, asymmetric, a
# NaN, missing or misshapen datasets, truncated, another program's HDF5), models with NaN,
# negative, integer or unnormalized B or a word twice, vocabularies with a word twice,
# outputs that name an input or are devices, FIFOs, directories, /proc files, every numeric
# option given NaN, infinities or a negative value, values that parse but are out of range,
# a docword bad in every rank's part, a directory or an incomplete model given to show,
# failed synth and sweep runs. Each must end with exit code 2 (1 for the command line),
# exactly one error line naming the file, no output left (nor a folder the command made),
# no hang, at 1, 2 and 4 ranks.
# Usage: hostile_e2e.sh JSMF MPIEXEC
set -u
jsmf=$1 mpiexec=$2
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
python=/usr/bin/python3; [[ -x $python ]] || python=python3
cd "$work" || exit 1
# mpirun, once a rank exits non-zero, signals the others and waits (odls_base_sigkill_timeout)
# before SIGKILL: 2 s of every one of this test's ~300 failing runs. The tests' environment
# sets that wait to 0 (cmake/JsmfTesting.cmake); so does this script, run by hand. Without
# the wait the checks are as strict or stricter (a rank still cleaning up is killed at once,
# and "nothing left" must still hold): 415 s -> 139 s alone.
export OMPI_MCA_odls_base_sigkill_timeout=0

"$jsmf" -q synth --dir . --name p --docs 1500 --words 400 --topics 4 --seed 5 || fail synth
"$jsmf" -q cooc --corpus docword.p.txt --vocab vocab.p.txt --out C.h5 >/dev/null || fail cooc
"$jsmf" -q fit --cooc C.h5 --topics 4 --out model.h5 >/dev/null 2>&1 || fail fit

"$python" - <<'PY' || fail "making the hostile files"
import h5py, numpy as np, shutil

def variant(source, name, change):
    shutil.copy(source, name)
    with h5py.File(name, "r+") as f:
        change(f)

def replace(f, path, values):
    del f[path]
    f.create_dataset(path, data=values)

C = h5py.File("C.h5", "r")["cooc/C"][...]
def with_C(change):
    def apply(f):
        D = C.copy()
        replace(f, "cooc/C", change(D))
    return apply
def negative(D):  # the sum kept: only the sign is wrong
    x = D.max(); D[0, 0] += 2 * (D[3, 5] + x); D[3, 5] = D[5, 3] = -x; return D
def asymmetric(D):  # the sum and the signs kept
    d = D[2, 1] / 2; D[1, 2] += d; D[2, 1] -= d; return D
def nan(D):
    D[7, 7] = np.nan; return D
cooc = {
    "zero": with_C(lambda D: np.zeros_like(D)),
    "negative": with_C(negative),
    "times5": with_C(lambda D: 5 * D),
    "integer": with_C(lambda D: (D * 1e9).astype(np.int64)),
    "asymmetric": with_C(asymmetric),
    "nan": with_C(nan),
    "no_C": lambda f: f.__delitem__("cooc/C"),
    "not_square": with_C(lambda D: D[:, :-1]),
    "no_unigram": lambda f: f.__delitem__("stats/unigram"),
    "newer": lambda f: f.attrs.__setitem__("format_version", np.int64(2)),
    "version0": lambda f: f.attrs.__setitem__("format_version", np.int64(0)),
    "no_version": lambda f: f.attrs.__delitem__("format_version"),
}
for name, change in cooc.items():
    variant("C.h5", "C_" + name + ".h5", change)
open("C_truncated.h5", "wb").write(open("C.h5", "rb").read()[:50000])
with h5py.File("other.h5", "w") as f:
    f.create_dataset("data", data=np.ones(3))

B = h5py.File("model.h5", "r")["K4/model/B"][...]
def with_B(change):
    return lambda f: replace(f, "K4/model/B", change(B.copy()))
def nan_B(M):
    M[0, 0] = np.nan; return M
def negative_B(M):
    M[0, 0] = -0.01; M[1, 0] += 0.01; return M
def dup_word(f):
    words = [w.decode() if isinstance(w, bytes) else w for w in f["vocab"][...]]
    words[3] = words[1]
    del f["vocab"]
    f.create_dataset("vocab", data=np.array(words, dtype=h5py.string_dtype()))
models = {
    "nan_B": with_B(nan_B),
    "negative_B": with_B(negative_B),
    "integer_B": with_B(lambda M: (M * 1e6).astype(np.int64)),
    "unnormalized_B": with_B(lambda M: 2 * M),
    "dup_word": dup_word,
    "newer": lambda f: f.attrs.__setitem__("format_version", np.int64(2)),
    "kind_cooc": lambda f: f.attrs.__setitem__("kind", "cooc"),
}
for name, change in models.items():
    variant("model.h5", "model_" + name + ".h5", change)
PY
awk 'NR == 7 { print prev; next } { print } { prev = $0 }' vocab.p.txt >vocab_dup.txt

# refused EXPECTED_CODE WHAT FILE_NAMED OUTPUT -- ARGS...: at 1, 2 and 4 ranks the command
# exits with EXPECTED_CODE, prints one error line naming FILE_NAMED (and none of HDF5's raw
# text) and leaves no OUTPUT. Each check runs in the background, at most three at once (the
# runs mostly wait on MPI's start and end: 141 s in turn, most of it idle), in a folder of
# its own (r.N: links to every file here, its outputs and r.err its own); its verdict goes to
# r.N/verdict and refused_verdicts counts them in order. A check after a refused one that
# looks at what they left calls refused_verdicts first.
refused_count=0 refused_counted=0
refused_here() {
  local code=$1 what=$2 named=$3 output=$4; shift 5
  local np got lines
  for np in 1 2 4; do
    rm -f "$output"
    run "$np" "$@" </dev/null >/dev/null 2>r.err
    got=$?
    # MPI's start failing under load (PMIx "Unreachable" in MPI_Init, seen once in CI beside
    # the sanitized build) is the launcher, not the check: once more (as options_e2e).
    if [[ $got -ne $code ]] && grep -q "MPI_Init\|OPAL ERROR: Unreachable" r.err; then
      sleep 1
      rm -f "$output"
      run "$np" "$@" </dev/null >/dev/null 2>r.err
      got=$?
    fi
    lines=$(grep -c "error" r.err)
    if [[ $got -ne $code || $lines -ne 1 || -e $output ]] || ! grep "error" r.err | grep -q -- "$named"; then
      echo "FAIL: $what at $np ranks: exit code $got (want $code), $lines error lines, output $([[ -e $output ]] && echo left || echo absent): $(head -3 r.err)"
      return
    fi
    if grep -q "bytes actually read\|traversal operator" r.err; then
      echo "FAIL: $what at $np ranks: HDF5's raw text in a message: $(cat r.err)"
      return
    fi
  done
  echo "ok: $what: exit code $code, one message naming $named, no output, at 1, 2 and 4 ranks: $(grep error r.err | head -1 | cut -c1-150)"
}
refused() {
  refused_count=$((refused_count + 1))
  local dir=r.$refused_count file
  while (($(jobs -rp | wc -l) >= 3)); do wait -n; done
  mkdir "$dir" || { fail "cannot make $dir"; return; }
  for file in * .[!.]*; do
    [[ -e $file && $file != r.* ]] && ln -s "../$file" "$dir/$file"
  done
  (cd "$dir" && refused_here "$@" >verdict) &
}
# refused_now ARGS...: the same check in the foreground, here, on the files themselves (for
# outputs that name an input: a link in r.N would hide an input removed or replaced).
refused_now() {
  local line
  line=$(refused_here "$@")
  case $line in
    ok:*) passed=$((passed + 1)) ;;
    *) failed=$((failed + 1)) ;;
  esac
  echo "$line"
}
refused_verdicts() {
  wait
  local id line
  for ((id = refused_counted + 1; id <= refused_count; ++id)); do
    line=$(cat "r.$id/verdict" 2>/dev/null)
    case $line in
      ok:*) passed=$((passed + 1)); echo "$line" ;;
      *) failed=$((failed + 1)); echo "${line:-FAIL: check r.$id left no verdict}" ;;
    esac
  done
  refused_counted=$refused_count
}

# Each named by the file and what is wrong with it.
while read -r name why; do
  refused 2 "fit --cooc C_$name.h5" "C_$name.h5: .*$why" out.h5 -- -q fit --cooc "C_$name.h5" --topics 4 --out out.h5
done <<'CASES'
zero is all zeros
negative has a negative entry
times5 sums to 5, not 1
integer /cooc/C is integer
asymmetric is not symmetric
nan non-finite entry
no_C no /cooc/C
not_square not a square matrix
no_unigram /stats/unigram is missing
truncated cannot open HDF5 file
newer format version 2, written by a newer jsmf; this one reads version 1
version0 format version 0 is not one jsmf ever wrote
CASES
# A file from before the format_version attribute is read as version 1.
run 2 -q fit --cooc C_no_version.h5 --topics 4 --out nv.h5 </dev/null >/dev/null 2>err && [[ -s nv.h5 ]] \
  && ok "a C without format_version: read as format version 1, fitted" || fail "a C without format_version: $(head -3 err)"
# A C rectified by a short DR run holds small negative entries: warned about, fitted.
if run 2 -q rectify --in C.h5 --topics 4 --method dr --stop iterations --iterations 2 --out Cdr.h5 </dev/null >/dev/null 2>err &&
   run 2 -q fit --cooc Cdr.h5 --rectify none --topics 4 --out dr_model.h5 </dev/null >/dev/null 2>err; then
  grep -q "rectified by dr short of non-negative" err && ok "a short DR run's C: its negative entries warned about, the fit done" \
    || ok "a short DR run's C: fitted (no negative entries this time)"
else
  fail "a short DR run's C was refused: $(head -3 err)"
fi
refused 2 "fit --cooc other.h5 (another program's file)" other.h5 out.h5 -- -q fit --cooc other.h5 --topics 4 --out out.h5
refused 2 "rectify --in C_nan.h5" C_nan.h5 out.h5 -- -q rectify --in C_nan.h5 --topics 4 --out out.h5
refused 2 "show model_newer.h5 (format version 2)" "model_newer.h5: format version 2, written by a newer jsmf" none -- -q show model_newer.h5
refused 2 "show model_kind_cooc.h5 (kind cooc)" "model_kind_cooc.h5: not a jsmf model file" none -- -q show model_kind_cooc.h5
for name in nan_B negative_B integer_B unnormalized_B dup_word; do
  refused 2 "show model_$name.h5" "model_$name.h5" none -- -q show "model_$name.h5"
  refused 2 "infer with model_$name.h5" "model_$name.h5" theta.h5 -- -q infer --model "model_$name.h5" \
    --corpus docword.p.txt --vocab vocab.p.txt --out theta.h5
done
refused 2 "a vocabulary with a word twice" vocab_dup.txt out.h5 -- -q cooc --corpus docword.p.txt --vocab vocab_dup.txt --out out.h5
# N = 100,000 words: C's block on one rank of a 1-4 rank grid passes 2^31 elements, what
# 32-bit ScaLAPACK indexes; refused before anything is allocated (80 GB at one rank).
awk 'NR == 2 { print 100000; next } { print }' docword.p.txt >docword_wide.txt
awk 'BEGIN { for (i = 1; i <= 100000; ++i) print "w" i }' >vocab_wide.txt
refused 2 "cooc of a 100,000-word corpus (32-bit ScaLAPACK)" "32-bit ScaLAPACK and BLAS can index: use at least 5 ranks" out.h5 \
  -- -q cooc --corpus docword_wide.txt --vocab vocab_wide.txt --out out.h5

# Outputs that name an input: refused before anything is written; the input survives.
before=$(md5sum C.h5 docword.p.txt vocab.p.txt)
refused_now 2 "cooc --out naming its corpus" docword.p.txt none -- -q cooc --corpus docword.p.txt --vocab vocab.p.txt --out docword.p.txt
ln -sf vocab.p.txt vocab_link.txt
refused_now 2 "fit --out naming its vocabulary (by a link)" vocab.p.txt none -- -q fit --corpus docword.p.txt --vocab vocab_link.txt --topics 4 --out vocab.p.txt
refused_now 2 "fit --cooc C.h5 --out C.h5" C.h5 none -- -q fit --cooc C.h5 --topics 4 --out ./C.h5
refused_now 2 "rectify --in C.h5 --out C.h5" C.h5 none -- -q rectify --in C.h5 --topics 4 --out C.h5
refused_verdicts
[[ -s C.h5 && -s docword.p.txt && $(md5sum C.h5 docword.p.txt vocab.p.txt) == "$before" ]] && ok "the inputs are untouched" || fail "an input was changed"

# The disk fills during a collective write (a 2 MiB tmpfs, 1.7 MB taken; C needs 1.3 MB, so the writes
# or HDF5's close fail): every rank ends with one message, exit code 2, nothing left, in
# bounded time (JSMF_IO_CLOSE_SECONDS: a close stuck after a failed flush is aborted).
mkdir -p tiny
if mount -t tmpfs -o size=2M tmpfs tiny 2>/dev/null; then
  for np in 1 2 3 4; do
    for compression in 0 1; do
      rm -f tiny/*
      "$python" -c "open('tiny/filler', 'wb').write(b'x' * 1700000)"
      start=$SECONDS
      JSMF_IO_CLOSE_SECONDS=10 run "$np" -q cooc --corpus docword.p.txt --vocab vocab.p.txt --compression "$compression" \
        --out tiny/C.h5 </dev/null >/dev/null 2>err
      code=$?
      left=$(ls tiny | grep -v '^filler$')
      [[ $code -eq 2 && -z $left && $(grep -c "jsmf: error" err) -eq 1 ]] && grep "jsmf: error" err | grep -q "tiny/C.h5" \
        && ok "disk full, $np ranks, compression $compression: exit code 2 in $((SECONDS - start)) s, one message, nothing left" \
        || fail "disk full, $np ranks, compression $compression: exit code $code, left '$left', $(grep -v mca_fbtl err | head -3)"
    done
  done
  umount tiny
else
  echo "skip: the disk-full checks need to mount a small tmpfs (root): $(id -un)"
fi

# A prepare that fails leaves no folder it created (and keeps one that was there).
printf '{"text": "a b c"}\n{bad json\n' >bad.jsonl
mkdir -p kept
for np in 1 2; do
  rm -rf made
  run "$np" -q prepare --format jsonl bad.jsonl --out made </dev/null >/dev/null 2>err
  code=$?
  run "$np" -q prepare --format jsonl bad.jsonl --out kept </dev/null >/dev/null 2>/dev/null
  [[ $code -eq 2 && ! -e made && -d kept && -z $(ls -A kept) && $(grep -c "error" err) -eq 1 ]] && grep -q "bad.jsonl:2" err \
    && ok "prepare of a bad JSON line at $np ranks: exit code 2, one message, no folder left (an existing one kept)" \
    || fail "prepare of a bad JSON line at $np ranks: exit code $code, $(ls -d made kept 2>&1), $(head -2 err)"
done

# A bad option value: jsmf's usage code (1), not CLI11's 105..109, and one message.
for np in 1 4; do
  run "$np" -q fit --cooc C.h5 --topics 4 --block-size abc --out out.h5 >/dev/null 2>err
  code=$?
  [[ $code -eq 1 && $(grep -c "Could not convert: --block-size = abc" err) -eq 1 && ! -e out.h5 ]] \
    && ok "--block-size abc at $np ranks: exit code 1 (usage), one message" \
    || fail "--block-size abc at $np ranks: exit code $code, $(head -3 err)"
done

# Outputs that are not regular files: refused before any work (no C counted, no corpus
# drawn), exit code 2, one message, the target untouched.
mkfifo fifo.h5 fifo.csv
mkdir -p adir
untouched() {  # untouched TARGET: still what it was (a FIFO, a device, a directory)
  case $1 in
    fifo.h5|fifo.csv) [[ -p $1 ]] ;;
    /dev/*) [[ -c $1 ]] ;;
    adir) [[ -d $1 && -z $(ls -A adir) ]] ;;
    *) [[ -e $1 ]] ;;
  esac
}
# special TARGET WHAT ARGS...: at each of $ranks (rank 0 checks, the others wait for its
# verdict), exit code 2, one message naming TARGET and saying WHAT, nothing computed first
# (no counts, no machine-readable line), TARGET untouched.
ranks="1 2 4"
special() {
  local target=$1 what=$2; shift 2
  local np code lines all=1
  for np in $ranks; do
    run "$np" "$@" </dev/null >out.txt 2>err
    code=$?
    lines=$(grep -c "error" err)
    if [[ $code -ne 2 || $lines -ne 1 ]] || ! grep "error" err | grep -q -- "$target: $what" ||
       grep -Eq "^jsmf-|cooc: [0-9]|counted|documents \\(" out.txt err || ! untouched "$target"; then
      fail "$* at $np ranks: exit code $code (want 2), $lines error lines, $(untouched "$target" && echo untouched || echo CHANGED): $(head -3 err)"
      all=0
      break
    fi
  done
  ((all)) && ok "$* (ranks $ranks): refused before any work, exit code 2, one message, $target untouched: $(grep error err | cut -c1-140)"
}
corpus=(--corpus docword.p.txt --vocab vocab.p.txt)
special /dev/full "is a character device" fit "${corpus[@]}" --topics 4 --out /dev/full
special /dev/full "is a character device" fit "${corpus[@]}" --topics 4 --pipeline compressed --out /dev/full
ranks=2  # the rest at 2 ranks: the same check on rank 0
special fifo.h5 "is a FIFO" fit "${corpus[@]}" --topics 4 --out fifo.h5
special fifo.h5 "is a FIFO" fit "${corpus[@]}" --topics 4 --infer fifo.h5 --out fit_ok.h5
special /dev/null "is a character device" fit "${corpus[@]}" --topics 4 --checkpoint /dev/null --out fit_ok.h5
special adir "is a directory" fit --cooc C.h5 --topics 4 --out adir
special /dev/full "is a character device" fit --text vocab.p.txt --text-format lines --topics 4 --out /dev/full
special /dev/full "is a character device" cooc "${corpus[@]}" --out /dev/full
special fifo.h5 "is a FIFO" cooc "${corpus[@]}" --out fifo.h5
special adir "is a directory" cooc "${corpus[@]}" --out adir
special /proc/version "cannot write the output: directory '/proc' refuses new files" cooc "${corpus[@]}" --out /proc/version
special /dev/full "is a character device" rectify --in C.h5 --topics 4 --out /dev/full
special fifo.h5 "is a FIFO" infer --model model.h5 "${corpus[@]}" --out fifo.h5
special fifo.h5 "is a FIFO" eval model.h5 --out fifo.h5
special docword.p.txt "is a regular file, not a directory" sweep --cooc C.h5 --topics 4 --rectify none --solver admm --out-dir docword.p.txt
mkdir -p sweep_fifo && mkfifo sweep_fifo/sweep.csv
special sweep_fifo/sweep.csv "is a FIFO" sweep --cooc C.h5 --topics 4 --rectify none --solver admm --out-dir sweep_fifo
mkdir -p synth_fifo && mkfifo synth_fifo/vocab.s.txt
special synth_fifo/vocab.s.txt "is a FIFO" synth --dir synth_fifo --name s --docs 50 --words 40 --topics 3
special synth_fifo/vocab.s.txt "is a FIFO" synth --dir synth_fifo --name s --docs 50 --words 40 --topics 3 --stream
special docword.p.txt "is a regular file, not a directory" synth --dir docword.p.txt --name s --docs 50 --words 40 --topics 3
printf 'one two three\nfour five six\n' >lines.txt
mkdir -p prep_fifo && mkfifo prep_fifo/vocab.q.txt
special prep_fifo/vocab.q.txt "is a FIFO" prepare --format lines lines.txt --out prep_fifo --name q
special docword.p.txt "is a regular file, not a directory" prepare --format lines lines.txt --out docword.p.txt --name q
ranks="1 2 4"

# Every numeric option of every subcommand (as --help lists them: INT, UINT, FLOAT) given
# NaN, an infinity or a negative number (in turn: each value on a quarter of the options,
# one process each): exit code 1 and one message naming the option, before anything runs
# (synth's --correlation alone may be negative).
# (Four at once, each to files of its own; ~120 runs. jsmf parses its command line before
# MPI starts: a refused one takes 0.04 s, where it took 0.34 s, most of it a singleton's
# MPI start.)
numbers_ok=1 numbers_tried=0
bad_values=(nan -1 inf -inf)
mkdir -p numbers
for cmd in synth cooc prepare rectify fit eval sweep infer show; do
  options=$("$jsmf" "$cmd" --help | grep -oE '^ +(-[a-z], )?--[a-z0-9-]+ (INT|UINT|FLOAT)' | grep -oE -- '--[a-z0-9-]+')
  [[ -n $options ]] || { fail "$cmd --help lists no numeric option"; numbers_ok=0; continue; }
  for option in $options; do
    value=${bad_values[numbers_tried % 4]}
    [[ $cmd == synth && $option == --correlation ]] && value=nan
    numbers_tried=$((numbers_tried + 1))
    while (($(jobs -rp | wc -l) >= 4)); do wait -n; done
    (
      cd numbers && "$jsmf" "$cmd" "$option" "$value" </dev/null >/dev/null 2>"err.$numbers_tried"
      code=$?
      if [[ $code -ne 1 || $(grep -c -- "$option" "err.$numbers_tried") -ne 1 ]]; then
        echo "$cmd $option $value: exit code $code (want 1): $(head -2 "err.$numbers_tried")" >"failed.$numbers_tried"
      fi
    ) &
  done
done
wait
for verdict in numbers/failed.*; do
  [[ -e $verdict ]] || continue
  fail "$(cat "$verdict")"
  numbers_ok=0
done
((numbers_ok)) && ok "every numeric option of every subcommand ($numbers_tried) given NaN, ±inf or -1: exit code 1, one message each"
# … at several ranks, one message (rank 0's), and the file never records a wrapped value.
for args in "fit --cooc C.h5 --topics 4 --relaxation nan --out out.h5" "fit --cooc C.h5 --topics 4 --seed -1 --out out.h5" \
            "fit ${corpus[*]} --topics 4 --buffer-mb nan --out out.h5" "cooc ${corpus[*]} --min-tokens -3 --out out.h5" \
            "fit ${corpus[*]} --topics 4 --pipeline compressed --enn-iterations -1 --out out.h5"; do
  for np in 2 4; do
    rm -f out.h5
    run "$np" $args </dev/null >/dev/null 2>err
    code=$?
    [[ $code -eq 1 && $(grep -ci "error\|must\|NaN" err) -eq 1 && ! -e out.h5 ]] \
      || { fail "$args at $np ranks: exit code $code, $(grep -ci "error\|must\|NaN" err) lines: $(head -3 err)"; continue 2; }
  done
  ok "$args: exit code 1, one message at 2 and 4 ranks: $(head -1 err | cut -c1-120)"
done

# Values that parse but are invalid are command-line errors too: exit code 1, one message.
while IFS='|' read -r what args; do
  refused 1 "$what" "${what%% *}" out.h5 -- -q $args
done <<CASES
--topics 0|fit --cooc C.h5 --topics 0 --out out.h5
--topics 4,|fit --cooc C.h5 --topics 4, --out out.h5
--hierarchy|fit --cooc C.h5 --hierarchy 4,5 --out out.h5
--memory-per-rank|fit --cooc C.h5 --topics 4 --memory-per-rank 0 --out out.h5
--relaxation|fit --cooc C.h5 --topics 4 --relaxation 5 --out out.h5
--solver kl|fit --cooc C.h5 --topics 4 --pipeline compressed --solver kl --out out.h5
--block-size|fit --cooc C.h5 --topics 4 --block-size 0 --out out.h5
--buffer-mb|fit ${corpus[*]} --topics 4 --buffer-mb 0 --out out.h5
--top-words|show model.h5 --top-words 0
--max-df|prepare --format lines lines.txt --out made_q --max-df 2
--checkpoint-every|rectify --in C.h5 --topics 4 --checkpoint-every 0 --out out.h5
--topics must satisfy|rectify --in C.h5 --topics 4000 --out out.h5
CASES
refused_verdicts
left_q=$(ls -d made_q r.*/made_q 2>/dev/null)
[[ -z $left_q ]] && ok "prepare refused by its options leaves no folder" || fail "prepare --max-df 2 left $left_q"

# A docword bad in every rank's part (a count of 0 in its first and last lines): one
# message for the job, the first failing rank's, naming the others; a header with D = 0:
# one message at any rank count.
awk -v last="$(wc -l <docword.p.txt)" 'NR == 4 || NR == last { $3 = 0 } { print }' docword.p.txt >docword_bad.txt
awk 'NR == 1 { print 0; next } { print }' docword.p.txt >docword_d0.txt
for file in docword_bad.txt docword_d0.txt; do
  refused 2 "cooc of $file" "$file" out.h5 -- -q cooc --corpus "$file" --vocab vocab.p.txt --out out.h5
done

# HDF5's own words replaced by jsmf's: a directory given as a model, a model without
# /vocab, a FIFO given as C.
mkdir -p model_dir
"$python" - <<'PY' || fail "making model_no_vocab.h5"
import h5py, shutil
shutil.copy("model.h5", "model_no_vocab.h5")
with h5py.File("model_no_vocab.h5", "r+") as f:
    del f["vocab"]
PY
refused 2 "show a directory" "model_dir: is a directory, not an HDF5 file" none -- -q show model_dir
refused 2 "show a model without /vocab" "model_no_vocab.h5: /vocab is missing" none -- -q show model_no_vocab.h5
refused 2 "fit --cooc a FIFO" "fifo.h5: is not a regular file" out.h5 -- -q fit --cooc fifo.h5 --topics 4 --out out.h5
refused_verdicts

# A failed synth or sweep leaves no folder it created, and keeps one that was there.
mkdir -p kept_dir
for np in 1 2; do
  for args in "synth --topics 0 --docs 20 --words 30" "synth --from model_nan_B.h5" "synth --from missing.h5"; do
    rm -rf made_dir made_dir2
    run "$np" -q $args --dir made_dir/sub </dev/null >/dev/null 2>err
    code=$?
    run "$np" -q $args --dir kept_dir </dev/null >/dev/null 2>/dev/null
    [[ $code -eq 1 || $code -eq 2 ]] && [[ ! -e made_dir && -d kept_dir && -z $(ls -A kept_dir) && $(grep -c error err) -eq 1 ]] \
      && ok "$args at $np ranks: exit code $code, one message, no folder left (an existing one kept)" \
      || fail "$args at $np ranks: exit code $code, $(ls -d made_dir kept_dir 2>&1), $(ls -A kept_dir), $(head -2 err)"
  done
  rm -rf sw
  run "$np" -q sweep --cooc C_nan.h5 --topics 4 --rectify none --solver admm --out-dir sw </dev/null >/dev/null 2>err
  code=$?
  run "$np" -q sweep --cooc C_nan.h5 --topics 4 --rectify none --solver admm --out-dir kept_dir </dev/null >/dev/null 2>/dev/null
  [[ $code -eq 2 && ! -e sw && -d kept_dir && -z $(ls -A kept_dir) && $(grep -c error err) -eq 1 ]] \
    && ok "a failed sweep at $np ranks: exit code 2, one message, no folder left (an existing one kept)" \
    || fail "a failed sweep at $np ranks: exit code $code, $(ls -d sw kept_dir 2>&1), $(head -2 err)"
done
refused_verdicts
finish
