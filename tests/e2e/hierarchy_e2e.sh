#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end: fit --hierarchy. A planted two-level model (6 topics whose proportions
# co-occur within 2 groups of 3 and not across: logistic-normal with a block covariance)
# is recovered: each learned supertopic's subtopics are exactly one planted group; a third
# level has consistent shapes; jsmf show prints the tree; bad levels fail once.
# Usage: hierarchy_e2e.sh JSMF MPIEXEC
set -u
jsmf=$1 mpiexec=$2
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
python=/usr/bin/python3; [[ -x $python ]] || python=python3

for seed in 4 5; do
  "$jsmf" -q synth --dir "$work" --name h$seed --docs 6000 --words 400 --topics 6 --prior logistic-normal --groups 2 \
    --correlation 0.9 --sigma 2 --word-concentration 1.0 --anchor-mass 0.03 --doc-length 100 --seed $seed \
    >/dev/null || fail synth
  run 2 -q fit --corpus "$work/docword.h$seed.txt" --vocab "$work/vocab.h$seed.txt" --hierarchy 6,2 \
    --out "$work/m$seed.h5" >/dev/null 2>"$work/err" || fail "fit --hierarchy: $(cat "$work/err")"
  "$python" - "$work/m$seed.h5" "$work/truth.h$seed.h5" <<'PY' && ok "seed $seed: both supertopics are one planted group each (2 of 2)" || fail "seed $seed: planted groups not recovered"
import sys, h5py, numpy as np
from scipy.optimize import linear_sum_assignment
f, t = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
B, Bt = f["K6/model/B"][:], t["model/B"][:]
_, planted = linear_sum_assignment(np.abs(B[:, :, None] - Bt[:, None, :]).sum(0))  # learned k -> planted topic
level = f["hierarchy/level2"]
B2, A2 = level["B"][:], level["A"][:]
assert B2.shape == (6, 2) and A2.shape == (2, 2) and level["B_words"].shape == (400, 2)
assert np.allclose(level["B_words"][:], B @ B2)
parent = (B2 * A2.sum(1)[None, :]).argmax(1)           # each learned topic's supertopic
groups = sorted(sorted(int(planted[k]) // 3 for k in np.where(parent == s)[0]) for s in range(2))
print("supertopics' planted groups:", groups)
assert groups == [[0, 0, 0], [1, 1, 1]], groups
PY
done
"$jsmf" show "$work/m4.h5" --top-words 4 >"$work/show.txt" 2>&1
grep -q "== hierarchy 6 -> 2" "$work/show.txt" && [[ $(grep -c "^super " "$work/show.txt") == 2 && $(grep -c "^  topic " "$work/show.txt") == 6 ]] \
  && ok "show prints the tree: 2 supertopics over 6 topics" || fail "show: $(cat "$work/show.txt" | tail -12)"

"$jsmf" -q synth --dir "$work" --name t --docs 6000 --words 400 --topics 8 --prior logistic-normal --groups 4 \
  --correlation 0.9 --sigma 2 --word-concentration 1.0 --anchor-mass 0.03 --doc-length 100 --seed 6 >/dev/null
if run 2 -q fit --corpus "$work/docword.t.txt" --vocab "$work/vocab.t.txt" --hierarchy 8,4,2 --out "$work/t.h5" \
   >/dev/null 2>"$work/err"; then
  "$python" - "$work/t.h5" <<'PY' && ok "three levels: shapes and B_words = B1 B2 B3" || fail "three levels"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r"); h = f["hierarchy"]
assert h["level2/B"].shape == (8, 4) and h["level3/B"].shape == (4, 2) and h["level3/A"].shape == (2, 2)
assert np.allclose(h["level3/B_words"][:], f["K8/model/B"][:] @ h["level2/B"][:] @ h["level3/B"][:])
PY
else
  fail "three levels: $(cat "$work/err")"
fi
# The compressed pipeline at 3 ranks: the levels' words by rows (no rank holds N x K),
# written collectively in deflated chunks: B_words = B1 B2 B3 as read back, and show's tree.
if run 3 -q fit --corpus "$work/docword.t.txt" --vocab "$work/vocab.t.txt" --pipeline compressed --hierarchy 8,4,2 \
   --no-metrics --out "$work/tc.h5" >/dev/null 2>"$work/err"; then
  "$python" - "$work/tc.h5" <<'PY' && ok "compressed, 3 ranks: B_words = B1 B2 (B3) by rows, deflated" || fail "compressed three levels"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r"); h = f["hierarchy"]
B1 = f["K8/model/B"][:]
assert np.allclose(h["level2/B_words"][:], B1 @ h["level2/B"][:], rtol=0, atol=1e-14)
assert np.allclose(h["level3/B_words"][:], B1 @ h["level2/B"][:] @ h["level3/B"][:], rtol=0, atol=1e-14)
# (arrays under 1,024 entries are stored plain: level 3's 400 x 2)
assert h["level2/B_words"].compression == "gzip" and h["level3/B_words"].shape == (400, 2)
PY
  "$jsmf" show "$work/tc.h5" --top-words 4 >"$work/show.txt" 2>&1
  grep -q "== hierarchy 8 -> 4 -> 2" "$work/show.txt" && ok "show prints the compressed fit's tree" \
    || fail "show compressed: $(tail -12 "$work/show.txt")"
else
  fail "compressed three levels: $(cat "$work/err")"
fi
"$jsmf" -q synth --dir "$work" --name neg --topics 6 --prior logistic-normal --groups 2 --correlation -0.6 \
  >/dev/null 2>"$work/err"
rc=$?
[[ $rc == 1 ]] && grep -q "is no covariance" "$work/err" && ok "synth --groups: a correlation that is no covariance is refused (exit 1)" \
  || fail "synth --groups -0.6: rc $rc $(cat "$work/err")"
run 2 -q fit --corpus "$work/docword.h4.txt" --vocab "$work/vocab.h4.txt" --hierarchy 6,2 --alpha --out "$work/al.h5" \
  >/dev/null 2>"$work/err" && ok "--hierarchy with --alpha (alpha on the first level)" || fail "--hierarchy --alpha: $(cat "$work/err")"
run 2 -q fit --corpus "$work/docword.t.txt" --vocab "$work/vocab.t.txt" --hierarchy 4,6 --out "$work/bad.h5" \
  >/dev/null 2>"$work/err"
rc=$?
[[ $rc == 1 && $(grep -c "fewer topics than the one below" "$work/err") == 1 && ! -e $work/bad.h5 ]] \
  && ok "increasing levels refused once (exit 1), nothing written" || fail "bad --hierarchy: rc $rc $(cat "$work/err")"
finish
