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

general=(alpha anchor-words checkpoint cooc corpus dry-run help hierarchy infer labels memory-per-rank min-distinct
         min-tokens name no-metrics out pipeline prepared progress-seconds recover-a relaxation precision resume
         seed text top-words topics vocab)
# option|value (empty: a flag)|context where it is not read|context where it is (both after --pipeline dense)
scoped=(
  "permutations|5||--rectify dc"
  "acceleration|anderson|--rectify dr|"
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
)
dense=(rectify method estimator exchange buffer-mb block-size grid)
compressed=(enn-iterations checked-rows)

# Every option of the help is classified.
listed=" ${general[*]} ${dense[*]} ${compressed[*]} "
for s in "${scoped[@]}"; do listed+="${s%%|*} "; done
missing=()
while read -r option; do
  [[ $listed == *" $option "* ]] || missing+=("$option")
done < <("$jsmf" fit --help | grep -oE '^  (-[a-zA-Z],)?--[a-z0-9-]+' | sed -E 's/^  (-[a-zA-Z],)?--//' | sort -u)
[[ ${#missing[@]} -eq 0 ]] && ok "every option of jsmf fit --help is classified" \
  || fail "options of jsmf fit that this test does not know: ${missing[*]} (classify each)"

# dry_run EXPECTED_RC WHAT ARGS...: the dry run's exit code, and on refusal the option named.
dry_run() {
  local want=$1 option=$2; shift 2
  "$jsmf" fit "${base[@]}" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  if [[ $want == 0 ]]; then
    [[ $rc == 0 ]] && return 0
  else
    [[ $rc == "$want" ]] && grep -q -- "--$option" "$work/err" && return 0
  fi
  echo "  jsmf fit ${*}: exit $rc, $(head -c 300 "$work/err")"
  return 1
}
for s in "${scoped[@]}"; do
  IFS='|' read -r option value unused used <<<"$s"
  given=(--"$option")
  [[ -n $value ]] && given+=("$value")
  # shellcheck disable=SC2086  # the contexts are words
  dry_run 1 "$option" --pipeline dense $unused "${given[@]}" && ok "--$option refused without what reads it" \
    || fail "--$option not refused without what reads it"
  [[ $option == text-format ]] && continue
  # shellcheck disable=SC2086
  dry_run 0 "$option" --pipeline dense $used "${given[@]}" && ok "--$option accepted with ${used:-the defaults}" \
    || fail "--$option refused with ${used:-the defaults}"
done
values=(rectify=dc method=anchorfree-lp estimator=tfidf exchange=pairs buffer-mb=8 block-size=32 grid=1x1)
for pair in "${values[@]}"; do
  option=${pair%%=*}
  dry_run 1 "$option" --pipeline compressed --"$option" "${pair#*=}" && ok "--$option refused on the compressed pipeline" \
    || fail "--$option not refused on the compressed pipeline"
done
for pair in enn-iterations=5 checked-rows=100; do
  option=${pair%%=*}
  dry_run 1 "$option" --pipeline dense --"$option" "${pair#*=}" && ok "--$option refused on the dense pipeline" \
    || fail "--$option not refused on the dense pipeline"
done
finish
