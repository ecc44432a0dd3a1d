#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end: every option of `jsmf fit` works or is refused on the fit that runs (issue 46).
# Each option `jsmf fit --help` lists must be in one of the lists below, so a new option
# fails this test until it is classified:
# - general: read by every fit (or refused by its own check where it cannot be);
# - scoped: read only with a method, rectifier, solver or request: given without it, the
#   dry run refuses it naming it (exit 1), and with it the dry run accepts it;
# - dense / compressed: settings of one pipeline, refused on the other.
# Usage: options_e2e.sh JSMF
set -u
jsmf=$1
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

"$jsmf" -q synth --dir "$work" --name o --docs 300 --words 200 --topics 5 --seed 3 || fail synth
base=(--corpus "$work/docword.o.txt" --vocab "$work/vocab.o.txt" --topics 5 --out "$work/m.h5" --dry-run)
# A model for --update to start from (its dry run reads the base's vocabulary and filter).
# (A singleton's MPI start can fail under load, as below: once more.)
for attempt in 1 2; do
  "$jsmf" -q fit --corpus "$work/docword.o.txt" --vocab "$work/vocab.o.txt" --topics 5 --no-metrics \
    --out "$work/base.h5" >/dev/null 2>&1 && break
  sleep 1
done
[[ -f $work/base.h5 ]] || fail "the base model for --update"
# And one that keeps a sketch of its C, for --update-mode sketch.
for attempt in 1 2; do
  "$jsmf" -q fit --corpus "$work/docword.o.txt" --vocab "$work/vocab.o.txt" --topics 5 --no-metrics \
    --pipeline compressed --sketch-rank 10 --out "$work/base_sketch.h5" >/dev/null 2>&1 && break
  sleep 1
done
[[ -f $work/base_sketch.h5 ]] || fail "the base model with a sketch"

general=(alpha anchor-words checkpoint cooc corpus dry-run estimator help hierarchy infer labels memory-per-rank method plan-ranks min-distinct
         min-tokens name no-metrics out pipeline prepared progress-seconds recover-a relaxation precision resume
         seed text top-words topics update vocab)
# option|value (empty: a flag)|context where it is not read|context where it is (both after --pipeline dense)
scoped=(
  "permutations|5||--rectify dc"
  "acceleration|none|--rectify dr|"
  "anderson-depth|3||--acceleration anderson"
  "anderson-below|1e-5||--acceleration anderson"
  "stop|quality|--rectify none|"
  "converge||--rectify dc|"
  "iterations|5|--rectify none|--rectify dr"
  "max-iterations|50|--rectify dc|"
  "tolerance|1e-3|--rectify none|"
  "check-every|5|--rectify dc|"
  "eig-tolerance-factor|0.2|--rectify none|"
  "eig-check-every|5|--rectify dc|"
  "eigensolver|direct|--rectify none|--rectify dc"
  "eig-check-steps|5|--rectify none|"
  "lp-max-sweeps|3||--method anchorfree-lp"
  "lp-tolerance|1e-9||--method anchorfree-lp"
  "lp-no-screening|||--method anchorfree-lp"
  "pds-rho0|2||--method anchorfree-pds"
  "pds-c|0.4||--method anchorfree-pds"
  "pds-eta0|0.01||--method anchorfree-pds"
  "pds-mu|0.001||--method anchorfree-pds"
  "pds-max-outer|5||--method anchorfree-pds"
  "pds-tolerance|1e-6||--method anchorfree-pds"
  "anchors|xray|--method anchorfree-lp|"
  "anchor-min-df|5|--method anchorfree-pds|"
  "solver|admm|--method anchorfree-lp|"
  "projection-dim|50||--anchors fastanchor"
  "solver-iterations|10||--solver admm"
  "solver-tolerance|0.001||--solver expgrad"
  "admm-stop|gap|--solver expgrad|--solver admm"
  "infer-iterations|5||--infer $work/theta.h5"
  "infer-tolerance|0.001||--infer $work/theta.h5"
  "prior|none||--infer $work/theta.h5"
  "checkpoint-seconds|5||--checkpoint $work/ck.h5"
  "text-format|lines||"  # read with --text, which a dry run does not take
  "match-distance|0.3||--update $work/base.h5"
  "update-mode|exact||--update $work/base.h5"
)
dense=(rectify exchange buffer-mb block-size grid)
compressed=(enn-iterations checked-rows enn-relaxation product-buffer-mb sketch-rank sketch decay warm-enn metric-probes)

# Every option of the help is classified.
listed=" ${general[*]} ${dense[*]} ${compressed[*]} "
for s in "${scoped[@]}"; do listed+="${s%%|*} "; done
missing=()
while read -r option; do
  [[ $listed == *" $option "* ]] || missing+=("$option")
done < <("$jsmf" fit --help | grep -oE '^  (-[a-zA-Z],)?--[a-z0-9-]+' | sed -E 's/^  (-[a-zA-Z],)?--//' | sort -u)
[[ ${#missing[@]} -eq 0 ]] && ok "every option of jsmf fit --help is classified" \
  || fail "options of jsmf fit that this test does not know: ${missing[*]} (classify each)"

# check NAME EXPECTED_RC OPTION ARGS...: one dry run, its exit code and, on refusal, the option
# named. The dry runs mostly wait on MPI's start, so four run at once, each writing its
# verdict to a file of its own; the verdicts are counted in order at the end.
checks=0
check() {
  local name=$1 want=$2 option=$3; shift 3
  checks=$((checks + 1))
  while (($(jobs -rp | wc -l) >= 4)); do wait -n; done
  (
    id=$checks
    "$jsmf" fit "${base[@]}" "$@" >"$work/out.$id" 2>"$work/err.$id"
    rc=$?
    # A singleton's MPI start can fail under load (PMIx "Unreachable", seen once in a
    # ctest -j3 run): that is the launcher, not the option under test; once more.
    if [[ $rc != 0 ]] && grep -q "MPI_Init" "$work/err.$id"; then
      sleep 1
      "$jsmf" fit "${base[@]}" "$@" >"$work/out.$id" 2>"$work/err.$id"
      rc=$?
    fi
    good=0
    if [[ $want == 0 ]]; then
      [[ $rc == 0 ]] && good=1
    else
      [[ $rc == "$want" ]] && grep -q -- "--$option" "$work/err.$id" && good=1
    fi
    if [[ $good == 1 ]]; then
      echo "ok: $name" >"$work/verdict.$id"
    else
      printf 'FAIL: %s\n  jsmf fit %s: exit %s, %s\n' "$name" "$*" "$rc" "$(head -c 300 "$work/err.$id")" >"$work/verdict.$id"
    fi
  ) &
}
for s in "${scoped[@]}"; do
  IFS='|' read -r option value unused used <<<"$s"
  given=(--"$option")
  [[ -n $value ]] && given+=("$value")
  # shellcheck disable=SC2086  # the contexts are words
  check "--$option refused without what reads it" 1 "$option" --pipeline dense $unused "${given[@]}"
  [[ $option == text-format ]] && continue
  # shellcheck disable=SC2086
  check "--$option accepted with ${used:-the defaults}" 0 "$option" --pipeline dense $used "${given[@]}"
done
values=(rectify=dc exchange=pairs buffer-mb=8 block-size=32 grid=1x1)
for pair in "${values[@]}"; do
  option=${pair%%=*}
  check "--$option refused on the compressed pipeline" 1 "$option" --pipeline compressed --"$option" "${pair#*=}"
done
# AnchorFree runs on both pipelines, its LP's and PDS's settings with it.
check "--method anchorfree-lp accepted on the compressed pipeline" 0 method --pipeline compressed --method anchorfree-lp \
  --lp-max-sweeps 3
check "--estimator tfidf accepted on the compressed pipeline" 0 estimator --pipeline compressed --estimator tfidf
check "--method anchorfree-pds accepted on the compressed pipeline" 0 method --pipeline compressed --method anchorfree-pds \
  --pds-mu 0.001
check "--lp-max-sweeps refused on the compressed pipeline without --method anchorfree-lp" 1 lp-max-sweeps \
  --pipeline compressed --lp-max-sweeps 3
check "--decay refused without --update-mode sketch" 1 decay --pipeline compressed --update "$work/base_sketch.h5" --decay 0.5
check "--decay accepted with --update-mode sketch" 0 decay --pipeline compressed --update "$work/base_sketch.h5" \
  --update-mode sketch --decay 0.5
check "--warm-enn refused without --update-mode sketch" 1 warm-enn --pipeline compressed --update "$work/base_sketch.h5" --warm-enn
check "--warm-enn accepted with --update-mode sketch" 0 warm-enn --update "$work/base_sketch.h5" --update-mode sketch --warm-enn
check "--warm-enn refused with --enn-iterations" 1 warm-enn --update "$work/base_sketch.h5" --update-mode sketch --warm-enn \
  --enn-iterations 5
check "--update-mode sketch accepted from a base with a sketch" 0 update-mode --update "$work/base_sketch.h5" --update-mode sketch
check "--sketch-rank accepted on the compressed pipeline" 0 sketch-rank --pipeline compressed --sketch-rank 20
check "--enn-relaxation accepted on the compressed pipeline" 0 enn-relaxation --pipeline compressed --enn-relaxation 1.9
check "--enn-relaxation outside (0, 2) refused" 1 enn-relaxation --pipeline compressed --enn-relaxation 2
check "--sketch accepted on the compressed pipeline" 0 sketch --pipeline compressed --sketch
check "--metric-probes accepted on the compressed pipeline" 0 metric-probes --pipeline compressed --metric-probes 64
check "--metric-probes refused with --no-metrics" 1 metric-probes --pipeline compressed --metric-probes 64 --no-metrics
check "--metric-probes 0 refused" 1 metric-probes --pipeline compressed --metric-probes 0
check "--sketch refused on the dense pipeline" 1 sketch --pipeline dense --sketch
check "--decay refused on the dense pipeline" 1 decay --pipeline dense --update "$work/base_sketch.h5" \
  --update-mode sketch --decay 0.5
for pair in enn-iterations=5 checked-rows=100 enn-relaxation=1.5 product-buffer-mb=64 sketch-rank=10 metric-probes=64; do
  option=${pair%%=*}
  check "--$option refused on the dense pipeline" 1 "$option" --pipeline dense --"$option" "${pair#*=}"
done
wait
for ((id = 1; id <= checks; ++id)); do
  if [[ ! -f $work/verdict.$id ]]; then
    fail "check $id left no verdict"
  elif grep -q '^ok: ' "$work/verdict.$id"; then
    ok "$(sed 's/^ok: //' "$work/verdict.$id")"
  else
    failed=$((failed + 1)); cat "$work/verdict.$id"
  fi
done
finish
