#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End to end: jsmf report. A planted model (K = 5 and 7 in one file; and one with a
# hierarchy) -> the page at 1 and 3 ranks -> its embedded JSON held against the model file
# (read with h5py) and against scipy's Jensen–Shannon divergences and a numpy MDS; then the page in headless Chromium from a
# file:// URL with the network off: no console error, no resource fetched, the K topics and
# the planted anchor words in the DOM, the λ slider re-ranking the bars as the formula says,
# a click on the map moving the bars, the heat map's highlight and the table's row; and a
# screenshot kept in SHOT_DIR. Bad input: one message, the exit code, nothing written.
# Usage: report_e2e.sh JSMF MPIEXEC SHOT_DIR
set -u
jsmf=$1 mpiexec=$2 shots=${3:-.}
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
py=/usr/bin/python3

"$jsmf" -q synth --dir "$work" --name r --docs 6000 --words 400 --topics 5 --word-concentration 1.0 \
  --anchor-mass 0.03 --doc-length 60 --seed 5 || fail synth
corpus=(--corpus "$work/docword.r.txt" --vocab "$work/vocab.r.txt")
run 2 -q fit "${corpus[@]}" --topics 5,7 --out "$work/m.h5" >/dev/null 2>"$work/err" || fail "fit: $(tail -2 "$work/err")"
run 2 -q fit "${corpus[@]}" --hierarchy 5,3,2 --out "$work/h.h5" >/dev/null 2>"$work/err" || fail "fit --hierarchy: $(tail -2 "$work/err")"

for np in 1 3; do
  if run "$np" report "$work/m.h5" --out "$work/r$np.html" >/dev/null 2>"$work/err"; then
    ok "np=$np report written ($(stat -c %s "$work/r$np.html") bytes)"
  else
    fail "np=$np report: $(tail -2 "$work/err")"
  fi
done
run 2 report "$work/h.h5" --terms 12 --out "$work/h.html" >/dev/null 2>"$work/err" || fail "report of a hierarchy: $(tail -2 "$work/err")"

# The page's numbers: the model file's, and the definitions'.
if "$py" - "$work" <<'PY'
import sys, re, json, h5py, numpy as np
from scipy.spatial.distance import jensenshannon
w = sys.argv[1]
def page(name):
    text = open(f"{w}/{name}").read()
    # nothing to fetch: no src/href/url() to a network address, no fetch or XHR (the only
    # "http" in it is the SVG namespace's name)
    loads = re.findall(r'(?:src|href)\s*=\s*["\']?\s*(?:https?:)?//|url\(\s*["\']?(?:https?:)?//|fetch\(|XMLHttpRequest|import\(', text)
    assert not loads, f"{name} loads from the network: {loads}"
    m = re.search(r'<script type="application/json" id="jsmf-data">(.*?)</script>', text, re.S)
    return json.loads(m.group(1))
d1, d3 = page("r1.html"), page("r3.html")
f = h5py.File(f"{w}/m.h5", "r")
vocab = [v.decode() if isinstance(v, bytes) else v for v in f["vocab"][:]]
unigram = f["stats/unigram"][:]
assert [m["K"] for m in d1["models"]] == [5, 7]
for M, M3 in zip(d1["models"], d3["models"]):
    K = M["K"]
    g = f[f"K{K}/model"]
    B, A, anchors = g["B"][:], g["A"][:], list(g["anchors"][:])
    assert M["anchors"] == anchors, (M["anchors"], anchors)
    p = A.sum(1) / A.sum()
    assert np.allclose(M["prevalence"], p, rtol=0, atol=1e-15)
    P = A.sum(1)
    cov = A - np.outer(P, P)
    rho = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    assert np.allclose(np.array(M["correlation"], float), rho, atol=1e-12)
    assert sorted(M["order"]) == list(range(K))
    # every term's p(w|k) and p(w) exactly as in the file (a JSON round trip of doubles)
    for k, t in enumerate(M["terms"]):
        assert t["w"] == sorted(t["w"]) and (len(t["w"]) >= d1["terms_shown"] or len(t["w"]) == (B[:, k] > 0).sum())
        for wid, pk in zip(t["w"], t["p"]):
            assert pk == B[wid, k], (k, wid)
            word, pw = d1["words"][str(wid)]
            assert word == vocab[wid] and pw == unigram[wid]
    # the same page at 3 ranks: the words equal, the numbers to rounding
    assert [t["w"] for t in M["terms"]] == [t["w"] for t in M3["terms"]]
    assert M["anchors"] == M3["anchors"] and M["order"] == M3["order"]
    dist = lambda Y: np.linalg.norm(Y[:, None, :] - Y[None, :, :], axis=2)
    assert np.abs(dist(np.array(M["map"])) - dist(np.array(M3["map"]))).max() < 1e-9
    # the map places scipy's divergences (natural log; scipy gives their square root)
    D = np.array([[jensenshannon(B[:, k], B[:, l]) ** 2 for l in range(K)] for k in range(K)])
    # the map: classical MDS of sqrt(D), distances as numpy's embedding gives them
    S = np.sqrt(np.maximum(D, 0)) ** 2
    J = np.eye(K) - 1 / K
    vals, vecs = np.linalg.eigh(-0.5 * J @ S @ J)
    X = vecs[:, -2:] * np.sqrt(np.maximum(vals[-2:], 0))
    assert np.abs(dist(X) - dist(np.array(M["map"]))).max() < 1e-9
    pairs = sorted(((rho[k, l], k, l) for k in range(K) for l in range(k + 1, K)), reverse=True)
    want = pairs if len(pairs) <= 20 else pairs[:15] + pairs[-5:]
    assert [(k, l) for _, k, l in want] == [(k, l) for k, l, _ in M["pairs"]], (want[:3], M["pairs"][:3])
    assert np.allclose([r for r, _, _ in want], [r for _, _, r in M["pairs"]], atol=1e-12)
    names = {x["name"] for x in M["metrics"]}
    assert {"coherence", "specificity", "dissimilarity"} <= names, names
h = page("h.html")
assert h["terms_shown"] == 12 and [l["topics"] for l in h["hierarchy"]] == [3, 2]
assert h["models"][0]["order_method"] == "hierarchy"
for level, below in zip(h["hierarchy"], (5, 3)):   # every topic of the level below under one topic of this level
    children = sorted(j for c in level["children"] for j, _ in c)
    assert children == list(range(below)), children
print("the page's numbers are the model file's and the definitions'")
PY
then ok "the embedded JSON: the file's B, A, anchors, p(w); scipy's JS divergences; MDS; the same at 3 ranks"
else fail "the embedded JSON"
fi

# With θ: the planted corpus as JSON Lines labelled by each document's planted dominant topic
# (synth's labels file), prepared, fit, inferred: each topic's representative documents are
# θ's largest in its column, with their 8 most frequent words from the prepared corpus; each
# label's prevalence is the mean θ of its documents, and the planted labels fall on distinct
# topics.
"$py" - "$work" <<'PY' || fail "JSON Lines of the planted corpus"
import sys, json
w = sys.argv[1]
vocab = [l.strip() for l in open(f"{w}/vocab.r.txt")]
name = lambda i: "w" + "".join("abcdefghijklmnopqrstuvwxyz"[int(c)] for c in str(i))  # letters only: prepare's words
labels = [int(l) for l in open(f"{w}/labels.r.txt")]
docs = {}
lines = open(f"{w}/docword.r.txt").read().split("\n")[3:]
for line in lines:
    if not line.strip(): continue
    d, i, c = map(int, line.split())
    docs.setdefault(d, []).extend([name(i)] * c)
with open(f"{w}/docs.jsonl", "w") as f:
    for d in sorted(docs):
        f.write(json.dumps({"id": f"doc{d}", "text": " ".join(docs[d]), "label": f"planted{labels[d - 1]}"}) + "\n")
PY
if run 2 -q prepare "$work/docs.jsonl" --format jsonl --out "$work/prep" --name r >/dev/null 2>"$work/err" &&
   run 2 -q fit --prepared "$work/prep" --name r --topics 5 --out "$work/p.h5" >/dev/null 2>>"$work/err" &&
   run 2 -q infer --model "$work/p.h5" --prepared "$work/prep" --name r --out "$work/theta.h5" >/dev/null 2>>"$work/err" &&
   run 3 report "$work/p.h5" --theta "$work/theta.h5" --prepared "$work/prep" --documents 7 --out "$work/t.html" >/dev/null 2>>"$work/err"; then
  "$py" - "$work" <<'PY' && ok "--theta: representative documents and prevalence by label, as θ and the labels give them" || fail "--theta"
import sys, re, json, h5py, numpy as np
w = sys.argv[1]
d = json.loads(re.search(r'id="jsmf-data">(.*?)</script>', open(f"{w}/t.html").read(), re.S).group(1))
M = d["models"][0]
t = h5py.File(f"{w}/theta.h5", "r")
theta = t["theta"][:]
ids = [x.decode() if isinstance(x, bytes) else x for x in t["doc_ids"][:]]
f = h5py.File(f"{w}/p.h5", "r")
names = [x.decode() if isinstance(x, bytes) else x for x in f["corpus/label_names"][:]]
labels = f["corpus/labels"][:]
pvocab = [l.rstrip("\n") for l in open(f"{w}/prep/vocab.r.txt")]
counts = {}
for line in open(f"{w}/prep/docword.r.txt").read().split("\n")[3:]:
    if line.strip():
        d, i, c = map(int, line.split())
        counts.setdefault(d, {})[i] = c
for k in range(5):
    rows = [r for r, _, _, _ in M["documents"][k]]
    order = sorted(range(len(theta)), key=lambda r: (-theta[r, k], r))[:7]
    assert rows == order, (k, rows, order)
    assert [n for _, n, _, _ in M["documents"][k]] == [ids[r] for r in rows]
    assert [v for _, _, v, _ in M["documents"][k]] == [theta[r, k] for r in rows]
    for r, _, _, words in M["documents"][k]:   # its 8 most frequent words, ties by word id
        doc = sorted(((-c, i) for i, c in counts[r + 1].items()))[:8]
        assert words == " ".join(pvocab[i - 1] for _, i in doc), (r, words)
assert M["labels"]["names"] == names
P = np.array(M["labels"]["prevalence"], float)
used = theta.sum(1) > 0
for l in range(len(names)):
    mine = (labels == l + 1) & used
    assert np.allclose(P[l], theta[mine].mean(0), rtol=0, atol=1e-12), l
assert len(set(P.argmax(1))) == len(names) == 5, P.round(2)   # each planted label on its own topic
PY
else
  fail "prepare, fit, infer, report --theta: $(tail -2 "$work/err")"
fi

# A sweep's CSV: each metric against K, a line per setting that tells runs apart, as the CSV says.
if run 2 -q sweep "${corpus[@]}" --topics 4,5,6 --rectify ap,none --solver active-set --out-dir "$work/sweep" >/dev/null 2>"$work/err" &&
   run 1 report --sweep "$work/sweep/sweep.csv" --out "$work/s.html" >/dev/null 2>>"$work/err" &&
   run 2 report "$work/m.h5" --sweep "$work/sweep/sweep.csv" --out "$work/ms.html" >/dev/null 2>>"$work/err"; then
  "$py" - "$work" <<'PY' && ok "--sweep: each metric against K, one line per rectifier, the CSV's numbers" || fail "--sweep"
import sys, re, json, csv, math
w = sys.argv[1]
page = lambda name: json.loads(re.search(r'id="jsmf-data">(.*?)</script>', open(f"{w}/{name}").read(), re.S).group(1))
s, ms = page("s.html"), page("ms.html")
assert s["models"] == [] and [m["K"] for m in ms["models"]] == [5, 7] and ms["sweep"] == s["sweep"]
rows = list(csv.DictReader(open(f"{w}/sweep/sweep.csv")))
S = s["sweep"]
assert [x["label"] for x in S["series"]] == ["rectify=ap", "rectify=none"], [x["label"] for x in S["series"]]
assert "coherence" in S["quantities"] and S["quantities"][-1] == "run_seconds"
for series in S["series"]:
    mine = sorted((r for r in rows if "rectify=" + r["rectify"] == series["label"]), key=lambda r: int(r["topics"]))
    assert series["K"] == [int(r["topics"]) for r in mine] == [4, 5, 6]
    for q, name in enumerate(S["quantities"]):
        for i, r in enumerate(mine):
            want = float(r[name]) if r[name] else None
            got = series["mean"][q][i]
            assert (got is None and want is None) or math.isclose(got, want, rel_tol=1e-15), (name, got, want)
PY
else
  fail "sweep and report --sweep: $(tail -2 "$work/err")"
fi

# A large model's page holds what it draws, not B: K = 200 over N = 200,000 words (drawn as
# LAW's B is: tests/e2e/write_large_model.py; N = 10^6 is jobs/bench_report.sh's) gives a
# page under 2 MiB whose topics keep at most 5 × --terms words each.
if "$py" "$(dirname "${BASH_SOURCE[0]}")/write_large_model.py" "$work/m.h5" "$work/large.h5" 200000 200 &&
   run 2 report "$work/large.h5" --out "$work/large.html" >/dev/null 2>"$work/err"; then
  "$py" - "$work/large.html" <<'PY' && ok "K = 200, N = 200,000: the page under 2 MiB, at most 5 x --terms words a topic" || fail "large page"
import sys, os, re, json
size = os.path.getsize(sys.argv[1])
d = json.loads(re.search(r'id="jsmf-data">(.*?)</script>', open(sys.argv[1]).read(), re.S).group(1))
M = d["models"][0]
most = max(len(t["w"]) for t in M["terms"])
print(f"page {size / 2**20:.2f} MiB, at most {most} words a topic, {len(d['words'])} words in all")
assert M["K"] == 200 and size < 2 * 2**20 and most <= 5 * d["terms_shown"], (size, most)
PY
else
  fail "report of a large model: $(tail -2 "$work/err")"
fi
rm -f "$work/large.h5"

# Bad input: a file that is not a model, a missing output folder, a bad --terms; one message,
# exit code 2 (1 for the option), nothing written.
"$jsmf" -q cooc "${corpus[@]}" --out "$work/C.h5" >/dev/null 2>&1 || fail "cooc"
expect() {  # want fragment args...
  local want=$1 fragment=$2; shift 2
  rm -f "$work/bad.html"
  run 2 report "$@" >/dev/null 2>"$work/err"
  local rc=$?
  if [[ $rc -eq $want && $(grep -c '^jsmf: error:' "$work/err") -eq 1 && ! -e $work/bad.html && ! -e $work/bad.html.partial ]] &&
     grep -qF -- "$fragment" "$work/err"; then
    ok "'$fragment' (exit $rc)"
  else
    fail "expected '$fragment', exit $want: rc=$rc $(head -2 "$work/err")"
  fi
}
expect 2 "not a jsmf model file" "$work/C.h5" --out "$work/bad.html"
expect 2 "does not exist" "$work/m.h5" --out "$work/no/such/dir/bad.html"
expect 1 "--terms must be at least 1" "$work/m.h5" --terms 0 --out "$work/bad.html"
expect 2 "cannot open" "$work/missing.h5" --out "$work/bad.html"
run 2 -q fit "${corpus[@]}" --topics 4 --out "$work/k4.h5" >/dev/null 2>&1 || fail "fit K = 4"
expect 2 "θ of K = 5, but $work/k4.h5 holds no model of that K" "$work/k4.h5" --theta "$work/theta.h5" --out "$work/bad.html"
expect 2 "not a jsmf θ file" "$work/m.h5" --theta "$work/m.h5" --out "$work/bad.html"
expect 2 "no topics column: not a jsmf sweep CSV" --sweep "$work/docs.jsonl" --out "$work/bad.html"
expect 1 "give a model file, or --sweep CSV, or both" --out "$work/bad.html"
expect 1 "--corpus and --prepared name θ's corpus: give --theta" "$work/m.h5" --prepared "$work/prep" --out "$work/bad.html"

# In a real browser.
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser && $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
  echo "report_e2e: installing Debian's chromium for the browser checks"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 || true
  browser=$(command -v chromium || true)
fi
if [[ -z $browser ]]; then
  echo "report_e2e: SKIPPED the browser checks: no chromium, and it cannot be installed here (not root, or no apt)"
else
  # The page as the user gets it, with two scripts added: one first in <head> that records
  # errors, one last in <body> that drives the page as a user would and writes what it saw.
  "$py" - "$work/r1.html" "$work/driven.html" "$work/t.html" "$work/driven_t.html" "$work/ms.html" "$work/driven_s.html" \
    "$work/h.html" "$work/driven_h.html" <<'PY'
import sys
first = """<script>window.__errors = [];
window.addEventListener("error", (e) => window.__errors.push(String(e.message)));
const __consoleError = console.error;
console.error = (...a) => { window.__errors.push(a.join(" ")); __consoleError(...a); };</script>"""
last = """<script>
(() => {
  const out = {};
  try {
    const q = (s) => Array.from(document.querySelectorAll(s));
    out.circles = q("#map circle").length;
    out.text = document.body.innerText;
    const heat = document.getElementById("heatmap");
    out.heatmap = [heat.width, heat.height, heat.getAttribute("data-selected")];
    const slider = document.getElementById("lambda");
    const order = () => document.getElementById("terms").getAttribute("data-order").split(" ");
    const topic = Number(heat.getAttribute("data-selected"));
    slider.value = slider.max; slider.dispatchEvent(new Event("input"));
    out.at1 = { topic, words: order() };
    slider.value = "0"; slider.dispatchEvent(new Event("input"));
    out.at0 = { topic, words: order() };
    const other = (topic + 2) % out.circles;
    document.querySelector(`#map circle[data-topic="${other}"]`).dispatchEvent(new MouseEvent("click", { bubbles: true }));
    out.clicked = { topic: other, heat: heat.getAttribute("data-selected"), title: document.getElementById("terms-topic").textContent,
      words: order(), row: q("#metrics tr.selected").map((r) => r.getAttribute("data-topic")),
      circle: q("#map circle.selected").map((c) => c.getAttribute("data-topic")) };
    out.resources = performance.getEntriesByType("resource").map((r) => r.name);
    out.documents = q("#documents li").length;
    out.labels = document.getElementById("labels-panel").hidden ? 0 : q("#labels rect").length;
    out.sweepLines = q("#sweep polyline").length;
    out.tree = q("#tree li[data-topic]").length;
    const pick = document.getElementById("k-select");
    out.kChoices = pick.options.length;
    if (pick.options.length > 1) {
      pick.value = "1"; pick.dispatchEvent(new Event("change"));
      out.circlesAfterK = q("#map circle").length;
      out.rowsAfterK = q("#metrics tbody tr").length;
    }
  } catch (e) { window.__errors.push("driver: " + e); }
  out.errors = window.__errors;
  const pre = document.createElement("pre");
  pre.id = "jsmf-test";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""
for source, target in zip(sys.argv[1::2], sys.argv[2::2]):
    page = open(source).read()
    page = page.replace("<head>", "<head>" + first, 1)
    page = page.replace("</body>", last + "</body>", 1)
    open(target, "w").write(page)
PY
  chrome=("$browser" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions --disable-dev-shm-usage
          "--host-resolver-rules=MAP * ~NOTFOUND" --user-data-dir="$work/chrome")
  timeout 120 "${chrome[@]}" --enable-logging=stderr --v=0 --virtual-time-budget=5000 --dump-dom "file://$work/driven.html" \
    >"$work/dom.html" 2>"$work/chrome.log"
  timeout 120 "${chrome[@]}" --enable-logging=stderr --v=0 --virtual-time-budget=5000 --dump-dom "file://$work/driven_t.html" \
    >"$work/dom_t.html" 2>>"$work/chrome.log"
  timeout 120 "${chrome[@]}" --enable-logging=stderr --v=0 --virtual-time-budget=5000 --dump-dom "file://$work/driven_s.html" \
    >"$work/dom_s.html" 2>>"$work/chrome.log"
  timeout 120 "${chrome[@]}" --enable-logging=stderr --v=0 --virtual-time-budget=5000 --dump-dom "file://$work/driven_h.html" \
    >"$work/dom_h.html" 2>>"$work/chrome.log"
  if "$py" - "$work/dom.html" "$work/r1.html" "$work/chrome.log" "$work/dom_t.html" "$work/dom_s.html" "$work/dom_h.html" <<'PY'
import sys, re, json, html, math
def driven(path):
    m = re.search(r'<pre id="jsmf-test">(.*?)</pre>', open(path).read(), re.S)
    assert m, f"the driver wrote nothing in {path}: " + open(sys.argv[3]).read()[-2000:]
    return json.loads(html.unescape(m.group(1)))
seen, with_theta, with_sweep = driven(sys.argv[1]), driven(sys.argv[4]), driven(sys.argv[5])
assert with_sweep["errors"] == [] and with_sweep["sweepLines"] == 2 and seen["sweepLines"] == 0, (with_sweep["errors"], with_sweep["sweepLines"])
with_tree = driven(sys.argv[6])
assert with_tree["errors"] == [] and with_tree["tree"] == 5 and seen["tree"] == 0, (with_tree["errors"], with_tree["tree"])
assert seen["kChoices"] == 2 and seen["circlesAfterK"] == 7 and seen["rowsAfterK"] == 7, seen.get("circlesAfterK")
assert with_sweep["errors"] == [] and with_sweep["kChoices"] == 2
assert with_theta["errors"] == [] and with_theta["resources"] == [], with_theta["errors"]
assert seen["documents"] == 0 and seen["labels"] == 0, (seen["documents"], seen["labels"])
assert with_theta["documents"] == 7 and with_theta["labels"] == 5, (with_theta["documents"], with_theta["labels"])
data = json.loads(re.search(r'id="jsmf-data">(.*?)</script>', open(sys.argv[2]).read(), re.S).group(1))
M = data["models"][0]
assert seen["errors"] == [], seen["errors"]
assert seen["resources"] == [], seen["resources"]
log = open(sys.argv[3]).read()
assert "Uncaught" not in log, [l for l in log.splitlines() if "Uncaught" in l]
assert seen["circles"] == M["K"] == 5, seen["circles"]
for a in M["anchors"]:
    assert data["words"][str(a)][0] in seen["text"], data["words"][str(a)][0]
assert any(data["words"][str(a)][0].startswith("anchor") for a in M["anchors"])
assert seen["heatmap"][0] > 0 and seen["heatmap"][1] > 0
def expected(k, lam):
    t = M["terms"][k]
    rows = []
    for wid, pk in zip(t["w"], t["p"]):
        pw = data["words"][str(wid)][1]
        if pk > 0 and pw > 0:
            rows.append((-(lam * math.log(pk) + (1 - lam) * math.log(pk / pw)), wid))
    rows.sort()
    return [data["words"][str(w)][0] for _, w in rows[: data["terms_shown"]]]
for key, lam in (("at1", 1.0), ("at0", 0.0)):
    assert seen[key]["words"] == expected(seen[key]["topic"], lam), (key, seen[key]["words"][:5], expected(seen[key]["topic"], lam)[:5])
assert seen["at1"]["words"] != seen["at0"]["words"], "the slider changed nothing"
c = seen["clicked"]   # (before the K selector moved to K = 7)
assert c["heat"] == str(c["topic"]) and c["title"].startswith(f"{c['topic'] + 1} ") and c["row"] == [str(c["topic"])] \
    and c["circle"] == [str(c["topic"])], c
assert c["words"] == expected(c["topic"], 0.0), "the bars did not follow the click"
print("browser: no errors, no resources, 5 topics, anchors shown, slider and click as expected; with θ its documents and labels")
PY
  then
    ok "in headless Chromium: no console error or fetch; the topics, anchors and heat map; the slider's order; a click selects everywhere"
  else
    fail "in headless Chromium"
  fi
  mkdir -p "$shots"
  if timeout 120 "${chrome[@]}" --hide-scrollbars --window-size=1400,1700 --virtual-time-budget=5000 \
       --screenshot="$shots/report_e2e.png" "file://$work/h.html" >/dev/null 2>&1 && [[ -s $shots/report_e2e.png ]]; then
    ok "screenshot kept: $shots/report_e2e.png"
  else
    fail "no screenshot"
  fi
fi

finish
