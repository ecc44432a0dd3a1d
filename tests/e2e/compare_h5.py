#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compares two jsmf HDF5 files object by object: every group, dataset and attribute must be
present in both with equal values (NaN equals NaN), except what records when and how fast
the run was: wall-clock seconds, the creation time and the command line.
Usage: compare_h5.py A.h5 B.h5 [--rtol R]   (exit 0: equal; 1: differences, listed)."""
import sys

import h5py
import numpy as np

SKIPPED_NAMES = {"created", "command_line", "timings", "seconds", "solve_seconds",
                 "peak_rss_bytes", "estimated_peak_bytes"}  # measured, not computed


def skipped(path):
    return any(part in SKIPPED_NAMES or part.endswith("_seconds") for part in path.split("/"))


def equal(a, b, rtol):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        return bool(np.allclose(a, b, rtol=rtol, atol=0, equal_nan=True))
    return bool(np.array_equal(a, b))


def walk(f):
    objects = {"/": f["/"]}
    f.visititems(lambda name, obj: objects.__setitem__("/" + name, obj))
    return objects


def main():
    args = sys.argv[1:]
    rtol = 0.0
    if "--rtol" in args:
        k = args.index("--rtol")
        rtol = float(args[k + 1])
        del args[k:k + 2]
    first, second = args
    problems = []
    with h5py.File(first, "r") as a, h5py.File(second, "r") as b:
        oa, ob = walk(a), walk(b)
        for path in sorted(set(oa) | set(ob)):
            if skipped(path):
                continue
            if path not in oa or path not in ob:
                problems.append(f"{path}: only in {first if path in oa else second}")
                continue
            x, y = oa[path], ob[path]
            if isinstance(x, h5py.Dataset) != isinstance(y, h5py.Dataset):
                problems.append(f"{path}: a dataset in one file only")
                continue
            if isinstance(x, h5py.Dataset) and not equal(x[()], y[()], rtol):
                problems.append(f"{path}: values differ")
            for name in sorted(set(x.attrs) | set(y.attrs)):
                if skipped(name):
                    continue
                if name not in x.attrs or name not in y.attrs:
                    problems.append(f"{path}@{name}: only in one file")
                elif not equal(x.attrs[name], y.attrs[name], rtol):
                    problems.append(f"{path}@{name}: {x.attrs[name]!r} != {y.attrs[name]!r}")
    for p in problems:
        print(p)
    print(f"compare_h5: {len(problems)} difference(s) between {first} and {second}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
