#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Per-rank peak memory of the compressed fit against the rank count (issue 45): each rank's
# largest resident size, their sum, the largest, and what `fit --dry-run` predicts for the
# largest rank, on a synthetic corpus drawn here; then each stage's peak and bytes sent
# beside the cost model's at the run's own counts.
#   bash jobs/bench_memory.sh            # defaults below
#   RANKS="1 2 4 8" DOCS=20000 WORDS=100000 TOPICS=100 ENN=5 bash jobs/bench_memory.sh
# Ranks above the cores are oversubscribed: memory is exact there, time is not (the script
# prints no time). ENN iterations are fixed (ENN=…) so that every rank count runs the same work.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RANKS=${RANKS:-"1 2 4 8"}
DOCS=${DOCS:-20000} WORDS=${WORDS:-100000} TOPICS=${TOPICS:-100} ENN=${ENN:-5} LENGTH=${LENGTH:-330}
bash "$root/jobs/setup.sh" >/dev/null
JSMF_TARGETS=jsmf bash "$root/jobs/build.sh" >/dev/null
source "$root/jobs/env.sh"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
jsmf=${JSMF:-$root/build/jsmf}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== machine"
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'), $(getconf _NPROCESSORS_ONLN) cores; memory: $(free -g | awk '/Mem:/ {print $2}') GiB"
echo "jsmf: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown); $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "corpus: jsmf synth --stream --docs $DOCS --words $WORDS --topics $TOPICS --doc-length $LENGTH --zipf 1; fit K = $TOPICS, --enn-iterations $ENN"
mpirun -np 2 "$jsmf" synth --stream --dir "$work" --name m --docs "$DOCS" --words "$WORDS" --topics "$TOPICS" \
  --doc-length "$LENGTH" --zipf 1 --seed 1 >/dev/null 2>&1
corpus=(--corpus "$work"/docword.m.part*.txt --vocab "$work/vocab.m.txt")  # --stream writes a part per rank

echo "| ranks | peak MiB per rank: rank 0; the others min–max | sum over ranks MiB | dry run, largest rank MiB | largest rank's peak by stage MiB |"
echo "|---|---|---|---|---|"
stage_tables=()
for P in $RANKS; do
  plan=$(mpirun -np "$P" --oversubscribe "$jsmf" fit "${corpus[@]}" --pipeline compressed --topics "$TOPICS" \
           --enn-iterations "$ENN" --out "$work/m.h5" --dry-run 2>"$work/err" | grep '^jsmf-plan') ||
    { echo "the dry run at $P ranks failed: $(cat "$work/err")" >&2; exit 1; }
  estimated=$(sed -n 's/.*estimated_bytes_per_rank=\([0-9]*\).*/\1/p' <<<"$plan")
  # each rank's peak: jsmf's own (VmHWM across its stage marks; /usr/bin/time would show
  # only the last stage's, as jsmf resets the kernel's mark at every stage); the log's
  # stage table has the cost model's figures at the run's own counts beside the measured
  line=$(mpirun -np "$P" --oversubscribe "$jsmf" fit "${corpus[@]}" --pipeline compressed --topics "$TOPICS" \
           --enn-iterations "$ENN" --out "$work/m.h5" 2>"$work/log" | grep '^jsmf-fit')
  by_rank=$(sed -n 's/.*peak_rss_bytes_by_rank=\([0-9,]*\).*/\1/p' <<<"$line")
  /usr/bin/python3 - "$work" "$by_rank" "$estimated" "$TOPICS" <<'PY'
import sys, h5py
work, by_rank, estimated, K = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
mib = [int(b) / 2**20 for b in by_rank.split(",")] if by_rank else []
P = len(mib)
others = f"; {min(mib[1:]):.0f}–{max(mib[1:]):.0f}" if P > 1 else ""
stages = []
with h5py.File(f"{work}/m.h5", "r") as f:  # each stage's largest rank (the file's timings)
    for group in ("timings", f"K{K}/timings"):
        for stage, peak in f[group + "/peak_rss_bytes"].attrs.items():
            stages.append(f"{stage} {int(peak) / 2**20:.0f}")
print(f"| {P} | {mib[0]:.0f}{others} | {sum(mib):.0f} | {estimated / 2**20:.0f} | {', '.join(stages)} |")
PY
  stage_tables+=("$(awk -v P="$P" '$9 == "model" && $5 == "MiB" && $2 != "-" {
      printf "| %d | %s | %.0f | %.0f | %.2f | %.1f | %.1f | %s |\n", P, $1, $4, $10, $4 / $10, $6, $12, ($12 > 0 ? sprintf("%.2f", $6 / $12) : "–") }' "$work/log")")
done
echo
echo "Each stage against the cost model (fit/cost.hpp) at the run's own counts (the largest rank's):"
echo "| ranks | stage | peak MiB | model MiB | ratio | sent MiB | model sent MiB | ratio |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${stage_tables[@]}"
