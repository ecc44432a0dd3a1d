#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The job scripts in jobs/ on a real SLURM (tests/slurm/cluster.sh: slurmctld, slurmd and
# munged on this machine, stopped again at the end): jobs/fit.sbatch on a planted corpus
# (exit code 0, the model's topics in the job log, its checkpoint removed); the same job
# signalled as the wall time nears (scancel --batch --signal=USR1: what --signal=B:USR1@T
# sends), which checkpoints, exits with code 5 and resubmits itself, the next job resuming
# to the uninterrupted fit's model, bit for bit; scancel, which stops without resubmitting;
# a rank SIGKILLed, which fails the job within a bound; a dense fit killed by its real time
# limit (--time=1), which checkpoints on the limit's SIGTERM and resubmits itself until the
# chain of jobs ends with the uninterrupted model; jobs/sweep.sbatch as a job array.
# Exit code 77 (CTest: skipped) where SLURM cannot run here; the message says why.
# Usage: slurm_test.sh JSMF MPIEXEC SOURCE_DIR
set -u
jsmf=$1 mpiexec=$2 source_dir=$3
source "$source_dir/tests/e2e/common.sh"
# The runs compared bit for bit with the jobs' use the jobs' BLAS kernel: fit.sbatch names
# the core from the CPU's flags as jobs/env.sh does (run by plain ctest, OpenBLAS might
# otherwise pick another kernel here than in the jobs, and the bits would differ).
source "$source_dir/jobs/env.sh"
python=/usr/bin/python3; [[ -x $python ]] || python=python3
cluster=$work/slurm
# Stopped on any exit, CTest's timeout included, before the folder with its pid files goes.
trap 'bash "$source_dir/tests/slurm/cluster.sh" stop "$cluster"; rm -rf "$work"' EXIT
trap 'exit 1' TERM INT
bash "$source_dir/tests/slurm/cluster.sh" start "$cluster"
status=$?
((status == 77)) && exit 77
((status == 0)) || { echo "FAIL: the test cluster did not start"; exit 1; }
export SLURM_CONF=$cluster/slurm.conf JSMF=$jsmf
fit_job=$source_dir/jobs/fit.sbatch

# job_state ID: the job's state and exit code ("COMPLETED 0:0"), from scontrol.
job_state() { scontrol show job -o "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).* ExitCode=\([0-9:]*\).*/\1 \2/p'; }
# wait_job ID SECONDS: until the job has ended (a terminal state; any other, or none read,
# is waited on), at most SECONDS of wall time (a loaded machine slows scontrol itself).
wait_job() {
  local until=$(($(date +%s) + $2))
  while (($(date +%s) < until)); do
    case $(job_state "$1") in
      COMPLETED*|FAILED*|TIMEOUT*|CANCELLED*|NODE_FAIL*|OUT_OF_MEMORY*|BOOT_FAIL*|DEADLINE*|PREEMPTED*) return 0 ;;
      *) sleep 0.2 ;;
    esac
  done
  return 1
}
wait_for() {
  for _ in $(seq 600); do grep -Eq "$1" "$2" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

"$jsmf" -q synth --dir "$work" --name p --docs 3000 --words 1200 --topics 5 --word-concentration 1.0 \
  --anchor-mass 0.03 --doc-length 80 --seed 3 || fail synth
input=(--corpus "$work/docword.p.txt" --vocab "$work/vocab.p.txt")

# 1. A fit job: exit code 0, a model, its topics in the log, no checkpoint left.
if timeout 300 sbatch --wait --ntasks=2 --output="$work/fit-%j.log" "$fit_job" 5 "$work/model.h5" "${input[@]}" \
     >"$work/sbatch.out" 2>&1; then
  log=$(ls "$work"/fit-*.log)
  h5ls "$work/model.h5/K5/model/B" >/dev/null 2>&1 && grep -q "topic *p(z) *anchor" "$log" && [[ ! -e $work/model.h5.ckpt.h5 ]] \
    && ok "fit.sbatch: exit code 0, a model, its topics in the job log, no checkpoint left" \
    || fail "fit.sbatch's results: $(tail -5 "$log")"
  grep -q "srun --mpi=pmix .*jsmf fit" "$log" && ok "fit.sbatch prints what it runs" || fail "fit.sbatch does not say what it runs"
else
  fail "sbatch --wait fit.sbatch: $(cat "$work/sbatch.out") $(cat "$work"/fit-*.log 2>/dev/null | tail -5)"
fi

# 2. Signalled as its wall time nears: checkpoint, exit code 5, resubmitted, resumed, and
#    the model is the uninterrupted one's (the same 2 ranks: bit for bit). The signal comes
#    seconds into the job here: JSMF_SIGNAL_GRACE=0 passes it on all the same.
#    The jobs' fits wait 0.05 s at each step (JSMF_TEST_STEP_DELAY_SECONDS, a test hook that
#    changes no number): 400 ENN iterations last 20 s or more of wall time, whatever the
#    machine's load, while the cores stay free for the tests beside this one.
long=(5 "$work/long.h5" "${input[@]}")
export JSMF_SIGNAL_GRACE=0 JSMF_FIT_OPTIONS="--enn-iterations 400 --no-metrics" JSMF_JOB_CHAIN=$work/chain \
  JSMF_SBATCH_OPTIONS="--output=$work/long-%j.log"
timeout 300 "$mpiexec" -np 2 --oversubscribe "$jsmf" -q fit "${input[@]}" --topics 5 $JSMF_FIT_OPTIONS \
  --out "$work/straight.h5" >/dev/null 2>"$work/err" || fail "the uninterrupted fit: $(cat "$work/err")"
export JSMF_TEST_STEP_DELAY_SECONDS=0.05
id=$(sbatch --parsable --ntasks=2 --output="$work/long-%j.log" "$fit_job" "${long[@]}")
if wait_for "checkpoint: the range finder's factor written" "$work/long-$id.log"; then
  sleep 0.5
  scancel --batch --signal=USR1 "$id"
  wait_job "$id" 120 || fail "job $id did not end after SIGUSR1"
  [[ $(job_state "$id") == "FAILED 5:0" ]] && grep -q "stopped by SIGUSR1 in ENN" "$work/long-$id.log" \
    && ok "SIGUSR1 to the job: jsmf checkpointed and exited with code 5" || fail "signalled job: $(job_state "$id"), $(tail -5 "$work/long-$id.log")"
  next=$(cat "$work/chain" 2>/dev/null | head -1)
  if [[ -n $next ]]; then
    ok "the job resubmitted itself (job $next)"
    wait_job "$next" 240 || fail "the resubmitted job $next did not end"
    [[ $(job_state "$next") == "COMPLETED 0:0" ]] && grep -q "resume: from $work/long.h5.ckpt.h5: ENN after" "$work/long-$next.log" \
      && ok "the resubmitted job resumed from the checkpoint and finished" || fail "resubmitted job: $(job_state "$next"), $(tail -5 "$work/long-$next.log")"
    "$python" "$source_dir/tests/e2e/compare_h5.py" "$work/straight.h5" "$work/long.h5" >"$work/diff" \
      && ok "signalled, resubmitted and resumed: the uninterrupted model, bit for bit" || { fail "the resumed model differs"; head -5 "$work/diff"; }
    [[ ! -e $work/long.h5.ckpt.h5 ]] && ok "the last job removed the checkpoint" || fail "the checkpoint is still there"
  else
    fail "the job did not resubmit itself: $(tail -5 "$work/long-$id.log")"
  fi
else
  fail "the job never reached ENN: $(cat "$work/long-$id.log")"; scancel "$id"
fi

# 3. scancel: SIGTERM to every rank and the script; jsmf stops with its checkpoint, and the
#    script does not resubmit (the user cancelled).
rm -f "$work/chain"
export JSMF_FIT_OPTIONS="--enn-iterations 1000000 --no-metrics"  # never ends by itself
id=$(sbatch --parsable --ntasks=2 --output="$work/cancel-%j.log" "$fit_job" 5 "$work/cancel.h5" "${input[@]}")
if wait_for "checkpoint: the range finder's factor written" "$work/cancel-$id.log"; then
  sleep 0.5
  scancel "$id"
  wait_job "$id" 120 || fail "job $id did not end after scancel"
  [[ $(job_state "$id") == CANCELLED* && ! -e $work/cancel.h5 && -s $work/cancel.h5.ckpt.h5 && ! -s $work/chain ]] \
    && grep -q "stopped by SIGTERM in ENN" "$work/cancel-$id.log" \
    && ok "scancel: jsmf stops with its checkpoint, the job ends CANCELLED, no model, no resubmission" || fail "scancel: $(job_state "$id"), $(tail -5 "$work/cancel-$id.log")"
else
  fail "the job never reached ENN: $(cat "$work/cancel-$id.log")"; scancel "$id"
fi

# 4. One rank killed (SIGKILL, as the OOM killer or a failed node does): the job ends,
#    failed, within a bounded time, and leaves no model.
id=$(sbatch --parsable --ntasks=2 --output="$work/killed-%j.log" "$fit_job" 5 "$work/killed.h5" "${input[@]}")
if wait_for "checkpoint: the range finder's factor written" "$work/killed-$id.log"; then
  sleep 0.5
  victim=$(pgrep -f -- "jsmf fit .*--out $work/killed.h5" | while read -r p; do
    [[ $(ps -o comm= -p "$p") == jsmf ]] && echo "$p"; done | tail -1)
  start=$(date +%s.%N)
  kill -KILL "$victim"
  if wait_job "$id" 60; then
    seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    [[ $(job_state "$id") == FAILED* && ! -e $work/killed.h5 ]] \
      && ok "a rank SIGKILLed: the job failed $seconds s later (as seen by scontrol), no model" \
      || fail "SIGKILL of a rank: $(job_state "$id"), $(tail -5 "$work/killed-$id.log")"
  else
    fail "a rank SIGKILLed: the job still runs 60 s later"; scancel "$id"
  fi
else
  fail "the job never reached ENN: $(cat "$work/killed-$id.log")"; scancel "$id"
fi
unset JSMF_FIT_OPTIONS JSMF_JOB_CHAIN JSMF_SBATCH_OPTIONS JSMF_SIGNAL_GRACE

# 5. Killed by its time limit (--time=1, no scancel): the script's own --signal=B:USR1@300
#    comes at once and is not passed on (the job would get nothing done); SLURM's SIGTERM at
#    the limit makes the dense fit checkpoint mid-rectification; the script resubmits itself,
#    and the chain of jobs ends with the uninterrupted model, bit for bit. The limit's
#    SIGTERM comes 60 to 90 s into a job (slurmctld looks every 30 s), so the fit must last
#    longer than that, whatever the load: its 100 AP iterations wait a second each
#    (JSMF_TEST_STEP_DELAY_SECONDS=1), 115 s or more of wall time and little CPU. The job
#    after the first resumes with at most 48 iterations left: two jobs (up to 4 waited for).
dense=(--pipeline dense --stop iterations --no-metrics)
iterations=100
unset JSMF_TEST_STEP_DELAY_SECONDS
start=$(date +%s)
timeout 600 "$mpiexec" -np 2 --oversubscribe "$jsmf" -q fit "${input[@]}" --topics 5 "${dense[@]}" --iterations "$iterations" \
  --out "$work/dense_straight.h5" >/dev/null 2>"$work/err" || fail "the uninterrupted dense fit: $(cat "$work/err")"
straight_seconds=$(($(date +%s) - start))
rm -f "$work/chain"
export JSMF_FIT_OPTIONS="${dense[*]} --iterations $iterations" JSMF_JOB_CHAIN=$work/chain \
  JSMF_SBATCH_OPTIONS="--output=$work/limit-%j.log" JSMF_TEST_STEP_DELAY_SECONDS=1
id=$(sbatch --parsable --ntasks=2 --time=1 --output="$work/limit-%j.log" "$fit_job" 5 "$work/limit.h5" "${input[@]}")
if wait_job "$id" 200; then
  log=$work/limit-$id.log
  [[ $(job_state "$id") == TIMEOUT* ]] && grep -q "not passed on" "$log" && grep -q "SIGTERM at the time limit" "$log" \
    && grep -q "stopped by SIGTERM in the rectification after" "$log" && grep -q "resubmitted as job" "$log" \
    && ok "killed by its time limit: the early SIGUSR1 not passed on, the limit's SIGTERM checkpointed mid-rectification, resubmitted" \
    || fail "the time-limited job: $(job_state "$id"), $(tail -8 "$log")"
  jobs=1 last=$id
  while next=$(sed -n "${jobs}p" "$work/chain" 2>/dev/null) && [[ -n $next ]] && ((jobs < 4)); do
    wait_job "$next" 200 || { fail "job $next of the chain did not end"; scancel "$next"; break; }
    jobs=$((jobs + 1)) last=$next
  done
  # The last job finished the fit ("done"); its state is COMPLETED, or TIMEOUT when the
  # limit came after the model was written (while the script printed the topics).
  if grep -q "fit.sbatch: .* done: $work/limit.h5" "$work/limit-$last.log" &&
     grep -q "resume: from $work/limit.h5.ckpt.h5" "$work/limit-$last.log" && [[ ! -e $work/limit.h5.ckpt.h5 ]]; then
    "$python" "$source_dir/tests/e2e/compare_h5.py" "$work/dense_straight.h5" "$work/limit.h5" >"$work/diff" \
      && ok "$jobs jobs of one minute each: the uninterrupted model (a $iterations-iteration dense fit of $straight_seconds s), bit for bit" \
      || { fail "the model of the time-limited chain differs"; head -5 "$work/diff"; }
  else
    fail "the chain of time-limited jobs: $jobs jobs, the last $(job_state "$last"), $(tail -5 "$work/limit-$last.log")"
  fi
else
  fail "the time-limited job $id did not end"; scancel "$id"
fi
unset JSMF_FIT_OPTIONS JSMF_JOB_CHAIN JSMF_SBATCH_OPTIONS JSMF_SIGNAL_GRACE JSMF_TEST_STEP_DELAY_SECONDS

# 6. A sweep as a job array over one precomputed C (jobs/sweep.sbatch), merged into one CSV.
"$mpiexec" -np 2 --oversubscribe "$jsmf" -q cooc "${input[@]}" --out "$work/C.h5" >/dev/null || fail cooc
export TOPICS=4,5 RECTIFY=none,ap SOLVERS=active-set EXTRA="--iterations 10"
n=$(bash "$source_dir/jobs/sweep.sbatch" --count)
if timeout 300 sbatch --wait --array=0-$((n - 1)) --ntasks=1 --output="$work/sweep-%A_%a.log" \
     "$source_dir/jobs/sweep.sbatch" "$work/C.h5" "$work/sweep" >"$work/sbatch.out" 2>&1 &&
   bash "$source_dir/jobs/sweep.sbatch" --merge "$work/sweep" >/dev/null; then
  rows=$(($(wc -l <"$work/sweep/sweep.csv") - 1))
  [[ $n -eq 4 && $rows -eq 4 ]] && ok "sweep.sbatch as a job array: $n tasks, one CSV of $rows rows" \
    || fail "sweep array: $n tasks, $rows rows"
else
  fail "sweep array: $(cat "$work/sbatch.out") $(tail -3 "$work"/sweep-*.log 2>/dev/null)"
fi
unset TOPICS RECTIFY SOLVERS EXTRA
finish
