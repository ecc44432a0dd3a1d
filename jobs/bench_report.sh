#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# jsmf report's size and time: for each model file given, the page at 1 and 2 ranks (wall
# seconds, peak memory of the largest rank, the page's size and its JSON's parts), then the
# per-rank work at N = 10^6, K = 200 (build/report_bench: a rank's 500,000 rows of a B drawn
# as LAW's) and, where chromium is installed, a screenshot of the first model's page.
# LARGE=1: also a model of N = 10^6 words and K = 200 (tests/e2e/write_large_model.py, from the
# first model given: 1.6 GB in bench-report/), end to end.
# Usage: jobs/bench_report.sh MODEL.h5 [MODEL.h5 ...]   (output: bench-report/ here)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/jobs/env.sh"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
jsmf=${JSMF:-$root/build/jsmf}
out=${OUT:-bench-report}
mkdir -p "$out"
echo "jsmf $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%F), $(getconf _NPROCESSORS_ONLN) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
models=("$@")
if [[ ${LARGE:-0} == 1 && $# -gt 0 ]]; then
  /usr/bin/python3 "$root/tests/e2e/write_large_model.py" "$1" "$out/large_1e6_k200.h5" 1000000 200
  models+=("$out/large_1e6_k200.h5")
fi
printf '%-28s %5s %8s %10s %10s %10s %10s %10s\n' model ranks seconds "peak MiB" "page KiB" "terms KiB" "A corr KiB" "words KiB"
for model in "${models[@]}"; do
  name=$(basename "$model" .h5)
  for np in 1 2; do
    page=$out/$name.$np.html
    /usr/bin/time -f "%e %M" -o "$out/time" mpirun -np "$np" "$jsmf" -q report "$model" --out "$page"
    read -r seconds kib <"$out/time"
    /usr/bin/python3 - "$page" "$name" "$np" "$seconds" "$kib" <<'PY'
import sys, re, json, os
page, name, np_, seconds, kib = sys.argv[1:]
text = open(page).read()
data = json.loads(re.search(r'id="jsmf-data">(.*?)</script>', text, re.S).group(1))
size = lambda x: len(json.dumps(x)) / 1024
terms = sum(size(m["terms"]) for m in data["models"])
square = sum(size(m["correlation"]) for m in data["models"])
print(f"{name:<28} {np_:>5} {float(seconds):8.2f} {int(kib) / 1024:10.1f} {os.path.getsize(page) / 1024:10.1f} "
      f"{terms:10.1f} {square:10.1f} {size(data['words']):10.1f}")
PY
  done
done
echo
echo "The per-rank work at N = 10^6 on 2 ranks (500,000 rows), K = 200:"
"$root/build/report_bench" 2>&1 | grep -E "^BM_|^Benchmark"
# In the browser (headless Chromium, where installed): how long each page takes to draw, a
# click on a topic and a move of the slider (each page driven by a script added at its end).
if command -v chromium >/dev/null 2>&1; then
  echo
  echo "In headless Chromium: page drawn (ms from its first script), a click on a topic, a slider move (mean of 20 and 21):"
  for model in "${models[@]}"; do
    name=$(basename "$model" .h5)
    /usr/bin/python3 - "$out/$name.1.html" "$out/$name.timed.html" <<'PY'
import sys
page = open(sys.argv[1]).read()
first = "<script>window.__t0 = performance.now();</script>"
last = """<script>(() => {
  const t1 = performance.now(), circles = Array.from(document.querySelectorAll("#map circle"));
  const t2 = performance.now();
  for (let i = 0; i < 20; ++i) circles[i * 7 % circles.length].dispatchEvent(new MouseEvent("click", { bubbles: true }));
  const t3 = performance.now(), s = document.getElementById("lambda");
  for (let i = 0; i <= 100; i += 5) { s.value = String(i); s.dispatchEvent(new Event("input")); }
  const t4 = performance.now(), pre = document.createElement("pre");
  pre.id = "timing";
  pre.textContent = `drawn ${(t1 - window.__t0).toFixed(0)} ms, click ${((t3 - t2) / 20).toFixed(1)} ms, slider ${((t4 - t3) / 21).toFixed(1)} ms`;
  document.body.appendChild(pre);
})();</script>"""
open(sys.argv[2], "w").write(page.replace("<head>", "<head>" + first, 1).replace("</body>", last + "</body>", 1))
PY
    printf '  %-28s %s\n' "$name" "$(chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=10000 \
      --dump-dom "file://$(cd "$out" && pwd)/$name.timed.html" 2>/dev/null | grep -o '<pre id="timing">[^<]*' | cut -d'>' -f2)"
  done
fi
if command -v chromium >/dev/null 2>&1 && (($# > 0)); then
  first=$(basename "$1" .h5)
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,1500 --virtual-time-budget=5000 \
    --screenshot="$out/$first.png" "file://$(cd "$out" && pwd)/$first.1.html" >/dev/null 2>&1 &&
    echo "screenshot: $out/$first.png"
fi
