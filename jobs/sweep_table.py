#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Prints a jsmf sweep CSV as Markdown tables: the papers' metrics per run (mean), the
seconds per stage, and the share of the time the metrics took.
Usage: jobs/sweep_table.py SWEEP.csv [--metrics a,b,...]"""
import argparse
import csv
import sys

METRICS = ["recovery", "recovery_original", "approximation", "approximation_offdiag_original", "legality", "validity",
           "validity_original", "specificity_original",
           "dominancy", "entropy", "sparsity", "specificity", "dissimilarity", "dissimilarity_soft", "coherence",
           "basis_rank", "basis_quality", "simcount"]
NAMES = {"none": "Baseline", "dc": "DC", "ap": "AP", "dr": "DR", "dp": "DP"}


def fmt(value):
    if value == "":
        return "–"
    x = float(value)
    return f"{x:.4g}" if abs(x) < 1e4 else f"{x:.0f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("csv")
    parser.add_argument("--metrics")
    args = parser.parse_args()
    try:
        rows = list(csv.DictReader(open(args.csv, newline="")))
    except OSError as e:
        sys.exit(f"sweep_table.py: {args.csv}: {e.strerror}")
    metrics = args.metrics.split(",") if args.metrics else [m for m in METRICS if rows and m in rows[0]]
    rows.sort(key=lambda r: (r["solver"], int(r["topics"]), ["none", "dc", "ap", "dr", "dp"].index(r["rectify"])))
    print("| K | method | solver | " + " | ".join(metrics) + " |")
    print("|---|---|---|" + "---|" * len(metrics))
    for r in rows:
        print(f"| {r['topics']} | {NAMES.get(r['rectify'], r['rectify'])} | {r['solver']} | " +
              " | ".join(fmt(r[m]) for m in metrics) + " |")
    print()
    stages = ["rectify", "anchors", "recover_B", "recover_A", "metrics", "codoc", "write"]
    print("| K | method | solver | " + " | ".join(stages) + " | run | metrics share |")
    print("|---|---|---|" + "---|" * (len(stages) + 2))
    total = metric_total = codoc_total = 0.0
    seen_group = set()
    for r in rows:
        seconds = {s: float(r.get(s + "_seconds") or 0) for s in stages}
        run = float(r["run_seconds"])
        # rectify and codoc are shared by the solvers of a (K, rectifier) group: count them once.
        key = (r["topics"], r["rectify"])
        first = key not in seen_group
        seen_group.add(key)
        codoc = seconds["codoc"] if first else 0.0
        total += run + codoc - (0.0 if first else seconds["rectify"])
        metric_total += seconds["metrics"]
        codoc_total += codoc
        share = (seconds["metrics"] + seconds["codoc"]) / max(run + seconds["codoc"], 1e-12)
        print(f"| {r['topics']} | {NAMES.get(r['rectify'], r['rectify'])} | {r['solver']} | " +
              " | ".join(f"{seconds[s]:.2f}" for s in stages) + f" | {run:.1f} | {100 * share:.0f}% |")
    shared = sum(float(rows[0].get(k) or 0) for k in ("read_seconds", "inspect_seconds", "cooc_seconds"))
    print()
    print(f"{len(rows)} runs: {total + shared:.1f} s in all (each rectification counted once; C read or built once: {shared:.2f} s); "
          f"metrics {metric_total:.1f} s ({100 * metric_total / max(total, 1e-12):.1f}%), of which the "
          f"coherence pass over the corpus {codoc_total:.2f} s ({100 * codoc_total / max(total, 1e-12):.2f}%)")


if __name__ == "__main__":
    main()
