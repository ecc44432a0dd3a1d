#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end: stop signals. A compressed fit sent SIGUSR1 (through mpirun, as SLURM's
# --signal=B:USR1@T with a forwarding trap does, or to one rank alone) mid-ENN writes its
# checkpoint, prints one message and exits with code 5 on every rank, leaving no model;
# run again with --resume it writes the uninterrupted fit's model, bit for bit. Without
# --checkpoint it stops the same way, says nothing was saved and exits with code 6. jsmf
# rectify (AP) and the dense fit (mid-AP) stop and resume the same way; SIGTERM to one
# rank of a dense fit stops every rank (exit code 6 without --checkpoint). A rank SIGKILLed ends the job
# within 30 s, non-zero, with no output. SIGINT (Ctrl-C) and SIGHUP are stop requests too:
# SIGINT to every rank mid-ENN checkpoints (exit code 5), SIGHUP to one rank mid-AP stops
# every rank (exit code 6); in jsmf cooc, which does not checkpoint, SIGINT to every rank
# ends the job with one jsmf line and exit code 6 (not mpirun's 130), no output, both when
# the ranks agree and when the grace (JSMF_STOP_GRACE_SECONDS) runs out first.
# Usage: signals_e2e.sh JSMF MPIEXEC
set -u
jsmf=$1 mpiexec=$2
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
here=$(cd "$(dirname "$0")" && pwd)
python=/usr/bin/python3; [[ -x $python ]] || python=python3

"$jsmf" -q synth --dir "$work" --name p --docs 3000 --words 1200 --topics 5 --word-concentration 1.0 \
  --anchor-mass 0.03 --doc-length 80 --seed 3 || fail synth
corpus=(--corpus "$work/docword.p.txt" --vocab "$work/vocab.p.txt")
# ENN long enough that a signal 0.2 s after it starts lands mid-way (3 s on a quiet machine),
# short enough to run twice (straight and resumed): each iteration is collectives, which
# under CI's load (oversubscribed, beside the sanitized build) took 23 ms where quiet 1 ms.
iterations=3000
enn=(--topics 5 --pipeline compressed --enn-iterations $iterations --no-metrics)
endless=(--topics 5 --pipeline compressed --enn-iterations 1000000 --no-metrics)  # stopped, never resumed

# start NAME ARGS...: a 2-rank fit in the background (its own session, so that signals
# and kills reach only it), stderr to $work/NAME.err; its mpirun's pid in $started.
start() {
  local name=$1; shift
  ( exec setsid timeout 300 "$mpiexec" -np 2 --oversubscribe "$jsmf" fit "$@" --out "$work/$name.h5" \
      >"$work/$name.out" 2>"$work/$name.err" ) &
  started=$!
}
# wait_for PATTERN FILE: until FILE has PATTERN (60 s at most).
wait_for() {
  for _ in $(seq 600); do grep -Eq "$1" "$2" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}
# rank_pids NAME: the pids of the fit's ranks (not mpirun's).
rank_pids() { pgrep -f -- "jsmf fit .*--out $work/$1.h5" | while read -r p; do
  [[ $(ps -o comm= -p "$p") == jsmf ]] && echo "$p"; done; }
# mpirun_pid NAME: the pid of the mpirun (not the timeout) that writes $work/NAME.h5.
mpirun_pid() { pgrep -f -- "$mpiexec -np 2 .*--out $work/$1.h5" | while read -r p; do
  [[ $(ps -o comm= -p "$p") != timeout ]] && echo "$p"; done | head -1; }
# finished NAME: waits for the background fit; its exit code in $code.
finished() { wait "$started"; code=$?; }

run_timeout=600 run 2 fit "${corpus[@]}" "${enn[@]}" --out "$work/straight.h5" >/dev/null 2>"$work/err" \
  || fail "uninterrupted fit: $(cat "$work/err")"

# 0. A checkpoint that could not be written is refused at the start, not at the first signal.
run 2 fit "${corpus[@]}" "${enn[@]}" --checkpoint "$work/missing/ck.h5" --out "$work/never.h5" >/dev/null 2>"$work/err"
[[ $? -eq 2 && ! -e $work/never.h5 && $(grep -c "error: $work/missing/ck.h5: cannot write" "$work/err") -eq 1 ]] \
  && ! grep -q "compress: K = 5: top eigenpairs" "$work/err" \
  && ok "fit: an unwritable --checkpoint is refused before any work, once" || fail "unwritable checkpoint: $(cat "$work/err")"

# 1. SIGUSR1 to mpirun, which forwards it to every rank: checkpoint, one message, exit 5.
start usr1 "${corpus[@]}" "${enn[@]}" --checkpoint "$work/ck.h5" --checkpoint-seconds 100000
if wait_for "checkpoint: the range finder's factor written" "$work/usr1.err"; then
  sleep 0.2
  kill -USR1 "$(mpirun_pid usr1)"
  finished
  if [[ $code -eq 5 && ! -e $work/usr1.h5 && -s $work/ck.h5 ]]; then ok "SIGUSR1 mid-ENN: exit code 5, a checkpoint, no model"
  else fail "SIGUSR1: exit code $code (want 5), model $(ls "$work"/usr1.h5 2>&1), $(cat "$work/usr1.err")"; fi
  n=$(grep -c "stopped by SIGUSR1 in ENN after [0-9]* of $iterations iterations; the state is in $work/ck.h5" "$work/usr1.err")
  [[ $n -eq 1 ]] && ok "one message: where it stopped, and how to resume" || fail "$n stop messages: $(cat "$work/usr1.err")"
  if run_timeout=600 run 2 fit "${corpus[@]}" "${enn[@]}" --resume "$work/ck.h5" --out "$work/resumed.h5" >/dev/null 2>"$work/err"; then
    grep -q "resume: from $work/ck.h5: ENN after [0-9]* of $iterations iterations" "$work/err" && ok "resumed from ENN's checkpoint" \
      || fail "resume not said: $(cat "$work/err")"
    "$python" "$here/compare_h5.py" "$work/straight.h5" "$work/resumed.h5" >"$work/diff" \
      && ok "stopped and resumed: the uninterrupted model, bit for bit" || { fail "resumed model differs"; head -5 "$work/diff"; }
  else
    fail "fit --resume after SIGUSR1: $(cat "$work/err")"
  fi
else
  fail "the fit never reached ENN: $(cat "$work/usr1.err")"; kill -KILL "$started" 2>/dev/null
fi

# 2. SIGUSR1 to one rank only: the ranks agree, and all stop at the same iteration.
start one "${corpus[@]}" "${endless[@]}" --checkpoint "$work/ck1.h5" --checkpoint-seconds 100000
if wait_for "checkpoint: the range finder's factor written" "$work/one.err"; then
  sleep 0.2
  pids=($(rank_pids one))
  [[ ${#pids[@]} -eq 2 ]] || fail "found ${#pids[@]} ranks, not 2"
  kill -USR1 "${pids[-1]}"
  finished
  [[ $code -eq 5 && ! -e $work/one.h5 && -s $work/ck1.h5 && $(grep -c "stopped by SIGUSR1 in ENN" "$work/one.err") -eq 1 ]] \
    && ok "SIGUSR1 to one rank: every rank stops, exit code 5, one message" \
    || fail "SIGUSR1 to one rank: exit code $code, $(cat "$work/one.err")"
else
  fail "the fit never reached ENN: $(cat "$work/one.err")"; kill -KILL "$started" 2>/dev/null
fi

# 2b. SIGTERM to every rank at once, as scancel and SLURM's time limit send it.
start term "${corpus[@]}" "${endless[@]}" --checkpoint "$work/ck2.h5" --checkpoint-seconds 100000
if wait_for "checkpoint: the range finder's factor written" "$work/term.err"; then
  sleep 0.2
  kill -TERM $(rank_pids term)
  finished
  [[ $code -eq 5 && ! -e $work/term.h5 && -s $work/ck2.h5 && $(grep -c "stopped by SIGTERM in ENN" "$work/term.err") -eq 1 ]] \
    && ok "SIGTERM to every rank: a checkpoint, exit code 5, one message" \
    || fail "SIGTERM to every rank: exit code $code, $(cat "$work/term.err")"
else
  fail "the fit never reached ENN: $(cat "$work/term.err")"; kill -KILL "$started" 2>/dev/null
fi

# 3. No --checkpoint: the same stop, and it says nothing was saved.
start plain "${corpus[@]}" "${endless[@]}"
if wait_for "compress: K = 5: top eigenpairs" "$work/plain.err"; then
  sleep 0.2
  kill -USR1 "$(mpirun_pid plain)"
  finished
  [[ $code -eq 6 && ! -e $work/plain.h5 ]] && grep -q "no --checkpoint was given, so nothing was saved" "$work/plain.err" \
    && ok "SIGUSR1 without --checkpoint: exit code 6, says nothing was saved" || fail "no checkpoint: exit $code, $(cat "$work/plain.err")"
else
  fail "the fit never reached ENN: $(cat "$work/plain.err")"; kill -KILL "$started" 2>/dev/null
fi

# 4. jsmf rectify (AP) sent SIGUSR1: a checkpoint at the iteration it was in, exit code 5;
#    resumed, the uninterrupted C bit for bit.
run 2 -q cooc "${corpus[@]}" --out "$work/C.h5" >/dev/null || fail cooc
ap=(--in "$work/C.h5" --topics 5 --stop iterations --iterations 1000)  # 4.5 s quiet; the signal 0.3 s in
run 2 -q rectify "${ap[@]}" --out "$work/C_straight.h5" >/dev/null 2>"$work/err" || fail "rectify: $(cat "$work/err")"
( exec setsid timeout 300 "$mpiexec" -np 2 --oversubscribe "$jsmf" rectify "${ap[@]}" --checkpoint "$work/ck_ap.h5" \
    --checkpoint-every 100000 --out "$work/C_stopped.h5" >/dev/null 2>"$work/ap.err" ) &
started=$!
if wait_for "rectify: C is" "$work/ap.err"; then
  sleep 0.3
  kill -USR1 "$(mpirun_pid C_stopped)"
  finished
  [[ $code -eq 5 && ! -e $work/C_stopped.h5 && -s $work/ck_ap.h5 ]] \
    && [[ $(grep -c "stopped by SIGUSR1 after rectification iteration [0-9]*; the state is in $work/ck_ap.h5" "$work/ap.err") -eq 1 ]] \
    && ok "rectify: SIGUSR1 mid-AP: a checkpoint, one message, exit code 5" || fail "rectify SIGUSR1: exit code $code, $(cat "$work/ap.err")"
  if run 2 -q rectify "${ap[@]}" --resume "$work/ck_ap.h5" --out "$work/C_resumed.h5" >/dev/null 2>"$work/err"; then
    h5diff "$work/C_straight.h5" "$work/C_resumed.h5" /cooc/C /cooc/C >/dev/null \
      && ok "rectify stopped and resumed: the uninterrupted C, bit for bit" || fail "the resumed C differs"
  else
    fail "rectify --resume after SIGUSR1: $(cat "$work/err")"
  fi
else
  fail "rectify never started: $(cat "$work/ap.err")"; kill -KILL "$started" 2>/dev/null
fi

# 5. One rank SIGKILLed (the OOM killer, a failed node): mpirun ends the job, non-zero,
#    within a bound (the others may be waiting in a collective), and no model is left.
start killed "${corpus[@]}" "${endless[@]}"
if wait_for "compress: K = 5: top eigenpairs" "$work/killed.err"; then
  sleep 0.2
  t0=$(date +%s.%N)
  kill -KILL "$(rank_pids killed | tail -1)"
  finished
  seconds=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  [[ $code -ne 0 && $code -ne 124 && ! -e $work/killed.h5 ]] && awk -v s="$seconds" 'BEGIN { exit !(s < 30) }' \
    && ok "a rank SIGKILLed: the job ended $seconds s later, exit code $code, no model" \
    || fail "a rank SIGKILLed: exit code $code after $seconds s"
else
  fail "the fit never reached ENN: $(cat "$work/killed.err")"; kill -KILL "$started" 2>/dev/null
fi

# 6. The dense pipeline: SIGUSR1 through mpirun mid-AP → a checkpoint of the iterate, one
#    message, exit code 5; resumed, the uninterrupted fit's model bit for bit. SIGTERM to
#    one rank without --checkpoint: every rank stops, exit code 6, no model.
dense=(--topics 5 --pipeline dense --stop iterations --iterations 300 --progress-seconds 1)
run 2 fit "${corpus[@]}" "${dense[@]}" --out "$work/dense_straight.h5" >/dev/null 2>"$work/err" \
  || fail "uninterrupted dense fit: $(cat "$work/err")"
start dense "${corpus[@]}" "${dense[@]}" --checkpoint "$work/ck_dense.h5" --checkpoint-seconds 100000
if wait_for "rectif.*iteration" "$work/dense.err"; then
  kill -USR1 "$(mpirun_pid dense)"
  finished
  n=$(grep -c "stopped by SIGUSR1 in the rectification after [0-9]* of at most 300 iterations; the state is in $work/ck_dense.h5" "$work/dense.err")
  [[ $code -eq 5 && ! -e $work/dense.h5 && -s $work/ck_dense.h5 && $n -eq 1 ]] \
    && ok "dense fit: SIGUSR1 mid-AP: a checkpoint, one message, exit code 5, no model" \
    || fail "dense SIGUSR1: exit code $code, $n messages, $(cat "$work/dense.err")"
  if run 2 fit "${corpus[@]}" "${dense[@]}" --resume "$work/ck_dense.h5" --out "$work/dense_resumed.h5" >/dev/null 2>"$work/err"; then
    grep -q "resume: from $work/ck_dense.h5: the rectification after [0-9]* iterations" "$work/err" \
      && "$python" "$here/compare_h5.py" "$work/dense_straight.h5" "$work/dense_resumed.h5" >"$work/diff" \
      && ok "dense fit stopped and resumed: the uninterrupted model, bit for bit" \
      || { fail "the resumed dense model differs or resume not said: $(cat "$work/err")"; head -5 "$work/diff"; }
  else
    fail "dense fit --resume after SIGUSR1: $(cat "$work/err")"
  fi
else
  fail "the dense fit never started AP: $(cat "$work/dense.err")"; kill -KILL "$started" 2>/dev/null
fi
# signal_dense_fit NAME SIGNAL WHICH: SIGNAL to one rank (WHICH: head or tail of the list)
# of a dense fit mid-AP without --checkpoint: every rank stops, one message, exit code 6.
signal_dense_fit() {
  local name=$1 signal=$2 which=$3 victim
  start "$name" "${corpus[@]}" --topics 5 --pipeline dense --stop iterations --iterations 100000 --no-metrics --progress-seconds 1
  if ! wait_for "rectif.*iteration" "$work/$name.err"; then
    fail "the dense fit never started AP: $(cat "$work/$name.err")"; kill -KILL "$started" 2>/dev/null; return
  fi
  victim=$(rank_pids "$name" | "$which" -1)
  if [[ -z $victim ]] || ! kill "-$signal" "$victim"; then
    fail "no rank of the dense fit to signal"; kill -KILL "$started" 2>/dev/null; return
  fi
  finished
  [[ $code -eq 6 && ! -e $work/$name.h5 ]] \
    && [[ $(grep -c "stopped by SIG$signal in the rectification after .*nothing was saved" "$work/$name.err") -eq 1 ]] \
    && ok "SIG$signal to one rank of a dense fit: all stop, one message, exit code 6, no model" \
    || fail "SIG$signal in the dense fit: exit code $code, $(cat "$work/$name.err")"
}
signal_dense_fit dense_term TERM tail

# 7. SIGINT (Ctrl-C) to every rank mid-ENN: a stop request like SIGTERM, a checkpoint, exit 5.
start int "${corpus[@]}" "${endless[@]}" --checkpoint "$work/ck_int.h5" --checkpoint-seconds 100000
if wait_for "checkpoint: the range finder's factor written" "$work/int.err"; then
  sleep 0.2
  kill -INT $(rank_pids int)
  finished
  [[ $code -eq 5 && ! -e $work/int.h5 && -s $work/ck_int.h5 && $(grep -c "stopped by SIGINT in ENN" "$work/int.err") -eq 1 ]] \
    && ok "SIGINT to every rank mid-ENN: a checkpoint, exit code 5, one message" \
    || fail "SIGINT to every rank: exit code $code, $(cat "$work/int.err")"
else
  fail "the fit never reached ENN: $(cat "$work/int.err")"; kill -KILL "$started" 2>/dev/null
fi

# 8. SIGHUP (a closed terminal) to one rank of a dense fit mid-AP, no --checkpoint: all stop, exit 6.
signal_dense_fit dense_hup HUP head

# 9. Where nothing checkpoints (jsmf cooc counting C): SIGINT to every rank, as Ctrl-C
#    sends it, ends the job with one jsmf line, exit code 6 and no file, whether the ranks
#    agree at the end of the count or the grace runs out first (1 s here: every rank is
#    still counting, and each node's first rank to end says it once).
"$jsmf" -q synth --dir "$work/big" --name b --docs 60000 --words 3000 --topics 5 --doc-length 150 --seed 3 || fail "synth big"
for grace in 30 1; do
  out=$work/big/C$grace.h5
  ( export JSMF_STOP_GRACE_SECONDS=$grace
    exec setsid timeout 300 "$mpiexec" -np 2 --oversubscribe "$jsmf" cooc --corpus "$work/big/docword.b.txt" \
      --vocab "$work/big/vocab.b.txt" --out "$out" >/dev/null 2>"$work/cooc$grace.err" ) &
  started=$!
  if wait_for "cooc: 1 file\(s\)" "$work/cooc$grace.err"; then
    sleep 0.3
    kill -INT $(pgrep -f -- "jsmf cooc .*--out $out" | while read -r p; do [[ $(ps -o comm= -p "$p") == jsmf ]] && echo "$p"; done)
    finished
    lines=$(grep -c "^jsmf: " "$work/cooc$grace.err")
    [[ $grace -eq 30 ]] && said="stopped by SIGINT in stage 'cooc', which does not checkpoint: nothing was saved" \
      || said="stopped by SIGINT on rank [01] of 2 outside a stage that checkpoints, before the ranks could agree"
    [[ $code -eq 6 && $lines -eq 1 && ! -e $out && -z $(ls "$work/big" | grep partial) ]] && grep -Eq "$said" "$work/cooc$grace.err" \
      && ok "SIGINT to every rank of jsmf cooc (grace $grace s): one line, exit code 6, no file: $(grep '^jsmf: ' "$work/cooc$grace.err")" \
      || fail "SIGINT in jsmf cooc (grace $grace s): exit code $code, $lines jsmf lines, $(ls "$work/big"), $(cat "$work/cooc$grace.err")"
  else
    fail "jsmf cooc never started: $(cat "$work/cooc$grace.err")"; kill -KILL "$started" 2>/dev/null
  fi
done
finish
