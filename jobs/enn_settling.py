#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Compares compressed fits of one corpus and K with a reference fit (the longest ENN run):
# anchors in common, B's L1 distance per topic (topics matched one to one, Hungarian on
# L1), and the measures each file holds. Used by jobs/bench_enn_settling.sh.
# Usage: enn_settling.py K REFERENCE.h5 RUN.h5 [RUN.h5 ...]
import sys

import h5py
import numpy as np
from scipy.optimize import linear_sum_assignment


def load(path, K):
    with h5py.File(path, "r") as f:
        g = f[f"/K{K}"]
        B = g["model/B"][()]
        if B.shape[0] == K:  # stored K x N or N x K: topics as columns
            B = B.T
        anchors = set(g["model/anchors"][()].tolist())
        metrics = {name: g["metrics"][name][()] for name in ("coherence", "specificity", "dissimilarity")}
        metrics = {k: float(np.mean(v)) for k, v in metrics.items()}
        enn = g["compressed/enn"]
        it = len(enn["change"][()])
        last = {"change": float(enn["change"][-1]) if it else float("nan"),
                "mass": float(enn["negative_mass"][-1]) if it else float("nan"),
                "seconds": float(np.sum(enn["seconds"][()]))}
        stop = g["rectification"].attrs.get("stop_reason", b"")
        stop = stop.decode() if isinstance(stop, bytes) else str(stop)
    return B, anchors, metrics, it, last, stop


def main():
    K = int(sys.argv[1])
    B_ref, anchors_ref, m_ref, _, _, _ = load(sys.argv[2], K)
    print(f"{'iterations':>10s} {'stop':>10s} {'ENN s':>8s} {'anchors':>8s} {'B L1 med':>9s} {'B L1 max':>9s} "
          f"{'coherence':>10s} {'specif.':>8s} {'dissim.':>8s} {'change':>9s} {'E mass':>9s}")
    for path in sys.argv[3:]:
        B, anchors, m, it, last, stop = load(path, K)
        cost = np.abs(B[:, :, None] - B_ref[:, None, :]).sum(axis=0)  # K x K L1 distances
        rows, cols = linear_sum_assignment(cost)
        moved = cost[rows, cols]
        print(f"{it:10d} {stop:>10s} {last['seconds']:8.2f} {len(anchors & anchors_ref):>4d}/{K:<3d} "
              f"{np.median(moved):9.2e} {moved.max():9.2e} {m['coherence']:10.2f} {m['specificity']:8.4f} "
              f"{m['dissimilarity']:8.2f} {last['change']:9.2e} {last['mass']:9.2e}")


if __name__ == "__main__":
    main()
