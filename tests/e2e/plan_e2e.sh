#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end: jsmf fit --dry-run. Its per-rank memory estimate against the peak the fit
# then measures (the largest rank's VmHWM), dense and compressed, at 1, 2 and 4 ranks:
# within 25 %. Given less memory per rank than the estimate, the dry run says the fit will
# not fit and on how many ranks it would (exit code 2), and the real run is refused before
# any work with one message. The model records the peak and the estimate.
# Usage: plan_e2e.sh JSMF MPIEXEC
set -u
jsmf=$1 mpiexec=$2
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

"$jsmf" -q synth --dir "$work" --name p --docs 6000 --words 3000 --topics 10 --seed 2 || fail synth
corpus=(--corpus "$work/docword.p.txt" --vocab "$work/vocab.p.txt" --topics 10)
value() { grep -o "$1=[0-9]*" | head -1 | cut -d= -f2; }

# compare NP NAME ARGS...: the dry run's estimate against the fit's measured peak.
compare() {
  local np=$1 name=$2; shift 2
  estimate=$(run "$np" fit "${corpus[@]}" "$@" --dry-run --out "$work/m.h5" 2>"$work/err" | value estimated_bytes_per_rank)
  [[ -n $estimate && ! -e $work/m.h5 ]] || { fail "$name dry run at $np ranks: $(cat "$work/err")"; return; }
  peak=$(run "$np" fit "${corpus[@]}" "$@" --out "$work/m.h5" 2>"$work/err" | value peak_rss_bytes)
  [[ -n $peak ]] || { fail "$name fit at $np ranks: $(cat "$work/err")"; return; }
  ratio=$(awk -v e="$estimate" -v p="$peak" 'BEGIN { printf "%.2f", e / p }')
  awk -v r="$ratio" 'BEGIN { exit !(r >= 0.75 && r <= 1.25) }' \
    && ok "$name, $np ranks: estimate $((estimate >> 20)) MiB, peak $((peak >> 20)) MiB (ratio $ratio)" \
    || fail "$name, $np ranks: estimate $estimate, peak $peak (ratio $ratio, want 0.75..1.25)"
  rm -f "$work/m.h5"
  [[ $name == compressed* ]] && check_cost_model "$np"
}
# check_cost_model NP: the compressed fit's stage table (in $work/err) beside the cost model
# at the run's own counts: each stage's peak within 25 % of the model's, and the bytes sent
# by the stages that move more than 1 MiB (at 2 ranks and more: at one, some collectives
# count what they copy to themselves and others return early).
check_cost_model() {
  local np=$1 verdict
  verdict=$(awk -v np="$np" '
    $9 == "model" && $5 == "MiB" && $11 == "MiB" && $2 != "-" {
      stages++
      if ($4 < 0.75 * $10 || $4 > 1.25 * $10) bad = bad sprintf(" %s peak %s MiB, model %s;", $1, $4, $10)
      if (np > 1 && ($6 > 1 || $12 > 1)) {
        moved++
        if ($6 < 0.75 * $12 || $6 > 1.25 * $12) bad = bad sprintf(" %s sent %s MiB, model %s;", $1, $6, $12)
      }
    }
    END { if (stages < 5 || (np > 1 && moved < 2)) print "too few stages: " stages " (" moved " moving bytes)"; else print bad }' "$work/err")
  [[ -z $verdict ]] && ok "compressed, $np ranks: each stage's peak (and bytes sent) within 25 % of the cost model's" \
    || fail "compressed, $np ranks, against the cost model:$verdict"
}
for np in 1 2 4; do
  compare "$np" dense --pipeline dense --stop iterations --iterations 5
  compare "$np" compressed --pipeline compressed --enn-iterations 5
done
# A sketch kept for a later update (issue 47): its solve's blocks (r = 400: p_r = 480 columns,
# 10 × N/P × p_r); an update from the first half's sketch with the second half, holding the
# base's sketch and keeping one (its solve from the old sketch's vectors, which the new
# documents move); and at r near N, C's exact decomposition on the root (C gathered and every eigenvector, 2 × 8 N²).
compare 2 "compressed, a sketch of rank 400" --pipeline compressed --enn-iterations 5 --sketch-rank 400
half() {  # half 1|2 > file: the documents of the first or second half, the header's D and N kept
  awk -v h="$1" 'NR <= 2 { print; next } NR == 3 { next } (h == 1) == ($1 <= 3000) { n++; rows[n] = $0 }
    END { print n; for (i = 1; i <= n; i++) print rows[i] }' "$work/docword.p.txt"
}
half 1 >"$work/h1.txt" && half 2 >"$work/h2.txt"
whole=("${corpus[@]}")
corpus=(--corpus "$work/h1.txt" --vocab "$work/vocab.p.txt" --topics 10)
run 2 fit "${corpus[@]}" --pipeline compressed --enn-iterations 5 --sketch-rank 400 --out "$work/base.h5" >/dev/null 2>&1 ||
  fail "the sketch's base fit"
corpus=(--corpus "$work/h2.txt" --vocab "$work/vocab.p.txt" --topics 10)
compare 2 "compressed, an update from a sketch of rank 400" --enn-iterations 5 --update "$work/base.h5" --update-mode sketch
corpus=("${whole[@]}")
for np in 1 2; do
  compare "$np" "compressed, a sketch by C's exact decomposition" --pipeline compressed --enn-iterations 5 --sketch-rank 2600
done
# The rectifiers that hold more N × N matrices (DP: two increments; DR: a work matrix).
compare 2 "dense, DP" --pipeline dense --rectify dp --stop iterations --iterations 3
compare 2 "dense, DR, no metrics" --pipeline dense --rectify dr --stop iterations --iterations 3 --no-metrics

# One process plans for 4 ranks as 4 ranks plan for themselves: the same estimate and the
# same cost model by stage, a line each (memory per rank minus the process's own base,
# which each run measures for itself).
plan_line() { grep '^jsmf-plan' | sed -E 's/ (estimated_bytes_per_rank|available_bytes_per_rank|ranks_needed|fits)=[^ ]*//g; s/_peak_bytes=[0-9]+//g'; }
four=$(run 4 fit "${corpus[@]}" --pipeline compressed --dry-run --out "$work/m.h5" 2>/dev/null | plan_line)
planned=$(run 1 fit "${corpus[@]}" --pipeline compressed --dry-run --plan-ranks 4 --out "$work/m.h5" 2>"$work/err" | plan_line)
[[ -n $four && $four == "$planned" ]] && grep -q "ranks=4 " <<<"$planned" && grep -q "planned for 4 (running on 1)" "$work/err" \
  && grep -q "compress_sent_bytes=" <<<"$planned" && grep -Eq "enn_seconds=[0-9.]*[1-9]" <<<"$planned" \
  && grep -Eq "total +[0-9.]+ s predicted" "$work/err" \
  && ok "--plan-ranks 4 on one process: the 4-rank plan's stages and bytes" || fail "--plan-ranks: '$planned' against '$four'"
run 1 fit "${corpus[@]}" --pipeline compressed --plan-ranks 4 --out "$work/m.h5" >/dev/null 2>"$work/err" \
  && fail "--plan-ranks without --dry-run was accepted" \
  || { grep -q -- "--plan-ranks plans a dry run" "$work/err" && ok "--plan-ranks without --dry-run: refused" \
         || fail "--plan-ranks without --dry-run: $(cat "$work/err")"; }
# Too little memory per rank: the dry run says so and how many ranks would do.
small=(--pipeline dense --memory-per-rank 100M)
run 2 fit "${corpus[@]}" "${small[@]}" --dry-run --out "$work/m.h5" >"$work/out" 2>"$work/err"
code=$?
needed=$(value ranks_needed <"$work/out")
[[ $code -eq 2 && -n $needed && $needed -gt 2 ]] && grep -q "fits=no" "$work/out" \
  && [[ $(grep -c "it fits on $needed ranks with as much memory each" "$work/err") -eq 1 ]] \
  && ok "dry run with 100 MiB per rank: will not fit, exit code 2, fits on $needed ranks" \
  || fail "dry run, too little memory: exit code $code, $(cat "$work/out" "$work/err")"
# … and at that rank count it fits.
run "$needed" fit "${corpus[@]}" "${small[@]}" --dry-run --out "$work/m.h5" >"$work/out" 2>"$work/err" \
  && grep -q "fits=yes" "$work/out" && ok "at $needed ranks the dry run says it fits" \
  || fail "at $needed ranks: $(cat "$work/out" "$work/err")"
# The real run is refused before any work.
run 2 fit "${corpus[@]}" "${small[@]}" --out "$work/m.h5" >/dev/null 2>"$work/err"
code=$?
[[ $code -eq 2 && ! -e $work/m.h5 ]] && ! grep -q "cooc:" "$work/err" \
  && [[ $(grep -c "error: the fit needs about" "$work/err") -eq 1 ]] \
  && ok "a fit that would not fit is refused before any work, once" || fail "refusal: exit code $code, $(cat "$work/err")"
# The model records its peak and the estimate, and each stage's seconds and peak (the
# largest rank's), printed as a table too: the rectification holds C (3000² doubles, over 2
# ranks, twice with the metrics' copy) on top of what counting needed.
if run 2 fit "${corpus[@]}" --pipeline dense --stop iterations --iterations 2 --out "$work/m.h5" >/dev/null 2>"$work/err"; then
  h5dump -a /peak_rss_bytes "$work/m.h5" >/dev/null 2>&1 && h5dump -a /estimated_peak_bytes "$work/m.h5" >/dev/null 2>&1 \
    && ok "the model records peak_rss_bytes and estimated_peak_bytes" || fail "no resource attributes in the model"
  if stages=$(/usr/bin/python3 - "$work/m.h5" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r")
shared, own = f["timings/peak_rss_bytes"].attrs, f["K10/timings/peak_rss_bytes"].attrs
peak, c_share = int(f.attrs["peak_rss_bytes"]), 3000 * 3000 * 8 // 2
assert set(f["timings"].attrs) == set(shared) and set(f["K10/timings"].attrs) == set(own), "a stage without its peak"
assert own["rectify"] >= shared["inspect"] + 2 * c_share, ("rectify", own["rectify"], shared["inspect"])
assert max(list(shared.values()) + list(own.values())) <= peak, "a stage above the process's peak"
print(f"rectify {own['rectify'] >> 20} MiB, inspect {shared['inspect'] >> 20} MiB, process {peak >> 20} MiB")
PY
  ) && grep -q "stages, their seconds, peak memory and bytes handed to MPI to send, per rank" "$work/err" \
    && grep -Eq "^  rectify +[0-9.]+ s +[0-9.]+ MiB +[0-9.]+ MiB sent" "$work/err" \
    && awk '/^  cooc / && $(NF - 2) > 0 { found = 1 } END { exit !found }' "$work/err"; then
    # (the cooc stage's exchange of 2 ranks' counts: some bytes sent)
    ok "each stage's seconds, peak memory and bytes sent, in the model and printed: $stages"
  else
    fail "the stage table: $stages $(grep -A12 "stages," "$work/err")"
  fi
else
  fail "fit: $(cat "$work/err")"
fi
finish
