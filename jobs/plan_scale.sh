#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Projections of the compressed fit past this machine (issue 45): the cost model
# (src/fit/cost.cpp) for corpora of published sizes at 16 to 1,024 ranks, from one process:
# `jsmf fit --dry-run --plan-ranks P` on header-only UCI files (a dry run reads the three
# header lines only; the vocabulary, N lines, is counted). Prints, per corpus, K and P: the largest rank's peak memory, the
# stage that peaks, and the bytes each stage hands to MPI per rank (range finder, ENN,
# metrics). Iteration counts are the model's typical ones (the range finder 30 p
# column-products, ENN 150 iterations of 3 (K + 5) columns, the metrics' 2K exact columns and 256 probes) and the
# local vocabulary Zipf's estimate: said as such. Seconds: each stage's compute at the
# per-rank rates measured on this project's machine (fit/cost.hpp's RankRates: a rank is
# one core of it), plus its bytes and messages over a cluster's network, NET_GBS GB/s and
# LATENCY_US µs per rank (defaults: 100 Gb/s InfiniBand, one rank per port), not measured.
#   bash jobs/plan_scale.sh              # NYTimes, PubMed, Wikipedia-sized; K = 100, 500
#   RANKS="16 64" TOPICS=100 NET_GBS=3 bash jobs/plan_scale.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RANKS=${RANKS:-"16 64 256 1024"} TOPICS=${TOPICS:-"100 500"} NET_GBS=${NET_GBS:-12.5} LATENCY_US=${LATENCY_US:-2}
bash "$root/jobs/setup.sh" >/dev/null
JSMF_TARGETS=jsmf bash "$root/jobs/build.sh" >/dev/null
source "$root/jobs/env.sh"
jsmf=${JSMF:-$root/build/jsmf}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name D N nnz (the UCI bag-of-words NYTimes and PubMed headers; a Wikipedia-sized corpus:
# 2·10⁹ tokens, N = 10⁶, about 0.6 nonzeros a token as in PubMed)
corpora=("nytimes 299752 102660 69679427" "pubmed 8200000 141043 483450157" "wikipedia 6000000 1000000 1200000000")
echo "== machine"
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'), $(getconf _NPROCESSORS_ONLN) cores; memory: $(free -g | awk '/Mem:/ {print $2}') GiB"
echo "jsmf: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown); $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "network (assumed): $NET_GBS GB/s and $LATENCY_US µs per rank"
echo
echo "| corpus | K | ranks | peak GiB per rank | peaks at | read+operator GiB | range finder sent GiB | ENN sent GiB | metrics sent GiB | all ranks' memory GiB | seconds: read+operator, range finder, ENN, LAW, metrics, write | total min | of it the network |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for spec in "${corpora[@]}"; do
  read -r name D N nnz <<<"$spec"
  printf '%s\n%s\n%s\n' "$D" "$N" "$nnz" >"$work/docword.$name.txt"
  seq -f 'w%.0f' 1 "$N" >"$work/vocab.$name.txt"  # the words' count is checked against N
  for K in $TOPICS; do
    for P in $RANKS; do
      line=$("$jsmf" fit --corpus "$work/docword.$name.txt" --vocab "$work/vocab.$name.txt" --pipeline compressed --topics "$K" --dry-run \
               --plan-ranks "$P" --out "$work/m.h5" 2>"$work/err" | grep '^jsmf-plan') || true
      [[ -n $line ]] || { echo "the plan of $name, K = $K, $P ranks failed: $(tail -3 "$work/err")" >&2; exit 1; }
      /usr/bin/python3 - "$name" "$K" "$P" "$line" "$NET_GBS" "$LATENCY_US" <<'PY'
import sys
name, K, P, line = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
byte_s, message_s = 1 / (float(sys.argv[5]) * 1e9), float(sys.argv[6]) * 1e-6
v = {k: float(x) for k, x in (f.split("=", 1) for f in line.split()[1:]) if x.replace(".", "").isdigit()}
gib = 2.0 ** 30
peaks = {k[: -len("_peak_bytes")]: x for k, x in v.items() if k.endswith("_peak_bytes")}
stage = max(peaks, key=peaks.get)
peak = v["estimated_bytes_per_rank"]
network = {s: v[s + "_sent_bytes"] * byte_s + v[s + "_messages"] * message_s for s in peaks}
seconds = {s: v[s + "_compute_seconds"] + network[s] for s in peaks}
shown = [seconds["read"] + seconds["operator"]] + [seconds.get(s, 0) for s in ("compress", "enn", "anchors", "metrics", "write")]
total = sum(seconds.values())
print(f"| {name} | {K} | {P} | {peak / gib:.2f} | {stage} | {peaks['operator'] / gib:.2f} | "
      f"{v['compress_sent_bytes'] / gib:.2f} | {v['enn_sent_bytes'] / gib:.2f} | {v.get('metrics_sent_bytes', 0) / gib:.2f} | "
      f"{P * peak / gib:.0f} | {', '.join(f'{x:.0f}' for x in shown)} | {total / 60:.1f} | {100 * sum(network.values()) / total:.0f} % |")
PY
    done
  done
done
