#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Pictures of jsmf results (PNG), kept out of the core binary.

  plot.py metrics SWEEP.csv --out FILE.png [--metrics a,b,...]
      metric vs K, one line per rectifier x solver (NIPS'15 Figure 4, practical-jsmf Figure 1)
  plot.py anchors MODEL.h5 --out FILE.png [--topics K]
      the rows of C-bar on their two principal axes, original and rectified, anchors marked
      and their convex hull drawn (NIPS'15 Figure 1); the projection is jsmf's
      (/K<K>/projection, computed with distributed products by fit/eval)
  plot.py heatmap MODEL.h5 --out FILE.png [--topics K] [--raw]
      topic correlations from A (NIPS'15 Figure 3): Pearson correlation of the topic
      proportions implied by A = E[w w^T], or A itself with --raw

Needs python3-matplotlib, python3-h5py, python3-numpy ("jobs/setup.sh tests" installs them for
Debian's /usr/bin/python3, the interpreter this script names; with another Python, install
matplotlib and h5py there and run it as "python3 jobs/plot.py ...").
"""
import argparse
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import h5py  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

DEFAULT_METRICS = ["recovery", "approximation_offdiag_original", "dominancy", "specificity", "dissimilarity",
                   "coherence", "entropy", "sparsity", "validity"]
LABELS = {"none": "Baseline", "dc": "DC", "ap": "AP", "dr": "DR", "dp": "DP"}
COLORS = {"none": "#7f7f7f", "dc": "#d62728", "ap": "#1f77b4", "dr": "#2ca02c", "dp": "#9467bd"}
STYLES = {"active-set": "-", "admm": "--", "expgrad": ":"}


def fail(message):
    print(f"plot.py: {message}", file=sys.stderr)
    sys.exit(2)


def plot_metrics(args):
    try:
        with open(args.csv, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail(f"{args.csv}: {e.strerror}")
    if not rows:
        fail(f"{args.csv}: no runs")
    wanted = args.metrics.split(",") if args.metrics else [m for m in DEFAULT_METRICS if m in rows[0]]
    missing = [m for m in wanted if m not in rows[0]]
    if missing:
        fail(f"{args.csv}: no column(s) {', '.join(missing)}")
    series = {}
    for row in rows:
        series.setdefault((row["rectify"], row["solver"]), []).append(row)
    cols = min(3, len(wanted))
    nrows = math.ceil(len(wanted) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.2 * nrows), squeeze=False)
    for ax, metric in zip(axes.flat, wanted):
        for (rectify, solver), runs in sorted(series.items()):
            runs = sorted(runs, key=lambda r: int(r["topics"]))
            points = [(int(r["topics"]), float(r[metric])) for r in runs if r[metric] != ""]
            if not points:
                continue
            x, y = zip(*points)
            std = [float(r.get(metric + "_std") or "nan") for r in runs if r[metric] != ""]
            line, = ax.plot(x, y, marker="o", markersize=4, color=COLORS.get(rectify), linestyle=STYLES.get(solver, "-"),
                            label=f"{LABELS.get(rectify, rectify)} / {solver}")
            if args.std and not all(math.isnan(s) for s in std):
                ax.fill_between(x, np.array(y) - np.array(std), np.array(y) + np.array(std), alpha=0.15,
                                color=line.get_color())
        values = [float(r[metric]) for r in rows if r[metric] != ""]
        if values and min(values) > 0 and max(values) / min(values) > 100:
            ax.set_yscale("log")  # e.g. legality, validity: the Baseline is orders of magnitude off
        ax.set_title(metric)
        ax.set_xlabel("K")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(wanted):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), frameon=False)
    fig.suptitle(args.title or f"jsmf sweep: {args.csv}")
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
    fig.savefig(args.out, dpi=110)


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def open_model(path, topics):
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        fail(f"{path}: cannot open ({e})")
    if text(f.attrs.get("kind", "")) != "model":
        fail(f"{path}: not a jsmf model file")
    available = [int(k) for k in text(f.attrs["topics"]).split(",")]
    K = topics or available[0]
    if K not in available:
        fail(f"{path}: no K = {K} (has {available})")
    return f, f[f"K{K}"], K


def convex_hull(points):
    """Andrew's monotone chain; returns hull vertices in order."""
    pts = sorted(set(map(tuple, points)))
    if len(pts) <= 2:
        return pts

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower, upper = [], []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]


def plot_anchors(args):
    f, group, K = open_model(args.model, args.topics)
    if "projection" not in group:
        fail(f"{args.model}: /K{K}/projection is missing (fit without --no-metrics, or jsmf eval --cooc)")
    vocab = [v.decode() if isinstance(v, bytes) else v for v in f["vocab"][:]]
    anchors = group["model/anchors"][:]
    unigram = f["stats/unigram"][:]
    panels = [(name, group[f"projection/{name}"][:]) for name in ("original", "rectified") if name in group["projection"]]
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 5.5), squeeze=False)
    for ax, (name, xy) in zip(axes.flat, panels):
        used = unigram > 0
        sizes = 4 + 400 * np.sqrt(unigram / unigram.max())
        ax.scatter(xy[used, 0], xy[used, 1], s=sizes[used], c="#4c72b0", alpha=0.35, linewidths=0)
        hull = convex_hull(xy[anchors])
        if len(hull) >= 3:
            ax.fill(*zip(*hull), facecolor="#dd8452", alpha=0.12, edgecolor="#dd8452", linewidth=1.2)
        ax.scatter(xy[anchors, 0], xy[anchors, 1], s=40, c="#c44e52", marker="*", zorder=3)
        if K <= 30:
            for s in anchors:
                ax.annotate(vocab[s], xy[s], fontsize=7, xytext=(3, 3), textcoords="offset points")
        ax.set_title(f"{name} C-bar rows (K = {K}, anchors = red stars)")
        ax.set_xlabel("principal axis 1")
        ax.set_ylabel("principal axis 2")
    fig.suptitle(args.title or f"{args.model}: words and anchors")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)


def plot_heatmap(args):
    f, group, K = open_model(args.model, args.topics)
    A = group["model/A"][:]
    vocab = [v.decode() if isinstance(v, bytes) else v for v in f["vocab"][:]]
    names = [vocab[s] for s in group["model/anchors"][:]]
    if args.raw:
        M, title, cmap, lim = A, "A = p(topic1, topic2)", "viridis", None
    else:
        p = A.sum(axis=1)
        cov = A - np.outer(p, p)
        sd = np.sqrt(np.clip(np.diag(cov), 1e-300, None))
        M = cov / np.outer(sd, sd)
        title, cmap, lim = "Pearson correlation of topic proportions (from A)", "RdBu_r", 1.0
    fig, ax = plt.subplots(figsize=(max(5, 0.28 * K + 3), max(4.5, 0.28 * K + 2)))
    image = ax.imshow(M, cmap=cmap, vmin=-lim if lim else None, vmax=lim)
    fig.colorbar(image, ax=ax, shrink=0.8)
    if K <= 60:
        ax.set_xticks(range(K))
        ax.set_yticks(range(K))
        ax.set_xticklabels(names, rotation=90, fontsize=6)
        ax.set_yticklabels(names, fontsize=6)
    ax.set_title(args.title or f"{title}, K = {K}")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("metrics", help="metric vs K per method, from a sweep CSV")
    m.add_argument("csv")
    m.add_argument("--out", required=True)
    m.add_argument("--metrics", help="comma-separated columns (default: the papers' main ones)")
    m.add_argument("--std", action="store_true", help="shade mean +- std")
    m.add_argument("--title")
    m.set_defaults(run=plot_metrics)
    for name, run, text in (("anchors", plot_anchors, "anchors over C-bar's 2-D projection"),
                            ("heatmap", plot_heatmap, "topic correlation heat map from A")):
        p = sub.add_parser(name, help=text)
        p.add_argument("model")
        p.add_argument("--out", required=True)
        p.add_argument("--topics", type=int, default=0, help="which K of the file (default: its first)")
        p.add_argument("--title")
        if name == "heatmap":
            p.add_argument("--raw", action="store_true", help="plot A itself")
        p.set_defaults(run=run)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
