#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compares two jsmf HDF5 files object by object.

Usage: compare_h5.py [--meaning] REFERENCE.h5 OTHER.h5   (exit 0: equal; 1: differences, listed)

Always, in both modes: the same groups, datasets and attributes (names), the same dtype kinds
and shapes. Not compared: what records when and how fast a run was (seconds, creation time,
command line, measured memory).

Default mode, bit for bit: every value equal (NaN equals NaN). For runs that must give the
same bits: a resumed fit against the uninterrupted one, on one machine.

--meaning: what the model file promises on any CPU, each value at the tolerance its meaning
justifies (the table RULES below; tests/data/model_format/README.md says which rule applies
to which dataset, and why). A file written on one CPU's BLAS kernels and read on another's
differs by rounding, and an inexact quantity (a residual, a minimum that is 0 up to rounding)
differs in every digit: such values are checked against a bound, not digit by digit.
"""
import sys

import h5py
import numpy as np

SKIPPED_NAMES = {"created", "command_line", "timings", "seconds", "solve_seconds",
                 "peak_rss_bytes", "estimated_peak_bytes"}  # measured, not computed

# Values of the model (B, A, metrics, ...): within this fraction of the dataset's largest
# magnitude. The fits solve their eigenproblems to a relative residual of 1e-9 (--stop
# iterations: exact solves), and what depends on eigenvectors moves by about that residual
# over the eigengap; other kernels' rounding moves B by 1e-14 (measured, README). 1e-6 of
# the scale leaves room for a gap of 1e-3 and still catches any change of the algorithm
# (a changed anchor, solver or iteration moves B by 1e-4 or more).
VALUE_TOLERANCE = 1e-6
# Below this fraction of the scale a value is rounding (a B row of 1e-17 of a word no topic
# uses): its digits mean nothing, only its size does.
ROUNDING = 1e-12

# name (the last part of the path; "name@attribute" for an attribute) -> (rule, argument, why)
RULES = {
    # Residuals of eigensolves: rounding-sized, below the solves' tolerance (1e-9 relative
    # to θ₁ with --stop iterations); their digits differ with every kernel.
    "eig_residual": ("bound", 1e-9, "eigensolve residuals, below the solves' tolerance 1e-9"),
    # The smallest entry of AnchorFree's C* = B E Bᵀ: 0 up to rounding when no entry is
    # negative (-1e-16 on one CPU, -1.1e-16 with other digits on another).
    "anchorfree@min_C": ("rounding_or_value", ROUNDING, "a minimum that is zero up to rounding"),
    # AnchorFree's ‖BM − Z‖/‖Z‖ (0 for the LP, whose B is exact): rounding where it is 0.
    "anchorfree@violation": ("rounding_or_value", ROUNDING, "a violation that is zero up to rounding"),
    # The input C's asymmetry ‖C − Cᵀ‖: rounding of the symmetric sum.
    "stats@asymmetry": ("bound", 1e-12, "the asymmetry of a symmetric sum, rounding"),
    # The work an eigensolve did: one more or fewer iteration where a residual lands near
    # the tolerance on another kernel's rounding.
    "eig_products": ("count", 0.25, "eigensolver work: matrix products"),
    "eig_iterations": ("count", 0.25, "eigensolver work: iterations"),
    "passes": ("count", 0.25, "eigensolver work: passes over C"),
    "eig_bound_corrections": ("count", 0.25, "eigensolver work: λ_min bound corrections"),
    "eig_missed": ("count", 0.25, "eigensolver work: eigenvalues brought back"),
    # The most iterations a word's active-set solve took: a constraint that nearly ties
    # enters the active set at another step on another kernel (B itself agrees).
    "model@solver_max_iterations": ("count", 0.25, "NNLS solver work: the longest solve"),
    # AnchorFree's M (K × K) is built from eigenvectors of C's square root: each row's sign
    # is arbitrary (it flips with rounding), its magnitudes are not.
    "M": ("rows_up_to_sign", VALUE_TOLERANCE, "rows of eigenvectors: sign free"),
    # The 2-D projection of C's rows onto its two leading principal directions: each
    # direction's sign is free.
    "original": ("columns_up_to_sign", VALUE_TOLERANCE, "principal directions: sign free"),
    "rectified": ("columns_up_to_sign", VALUE_TOLERANCE, "principal directions: sign free"),
    # B̆ = p(topic | word): a word whose row of B is rounding (no topic uses it) has a column
    # of rounding divided by rounding: only its being a distribution means anything.
    "B_breve": ("b_breve", VALUE_TOLERANCE, "p(topic|word), meaningless for words no topic uses"),
}


def skipped(path):
    return any(part in SKIPPED_NAMES or part.endswith("_seconds") for part in path.split("/"))


def finite_scale(x):
    finite = np.abs(x[np.isfinite(x)]) if x.size else np.zeros(0)
    return float(finite.max()) if finite.size else 0.0


def close(ref, other, tolerance, scale=None):
    """|ref − other| <= tolerance × scale (the reference's largest magnitude), NaN == NaN."""
    scale = finite_scale(ref) if scale is None else scale
    nan_ref, nan_other = np.isnan(ref), np.isnan(other)
    if not np.array_equal(nan_ref, nan_other):
        return False, "NaN at other places"
    diff = np.abs(np.where(nan_ref, 0.0, ref - np.where(nan_other, 0.0, other)))
    worst = float(diff.max()) if diff.size else 0.0
    limit = tolerance * scale + ROUNDING * max(scale, 1e-300)
    return worst <= limit, f"largest difference {worst:.3g} > {limit:.3g} ({tolerance:g} of the scale {scale:.3g})"


def compare_values(name, ref, other, siblings, meaning):
    """None when equal under the rule for `name`, else what differs."""
    ref, other = np.asarray(ref), np.asarray(other)
    if ref.shape != other.shape:
        return f"shape {ref.shape} != {other.shape}"
    if ref.dtype.kind != other.dtype.kind and not (ref.dtype.kind in "iu" and other.dtype.kind in "iu"):
        return f"dtype {ref.dtype} != {other.dtype}"
    numeric = ref.dtype.kind in "fciu"
    if not meaning or not numeric:
        equal = np.array_equal(ref, other, equal_nan=ref.dtype.kind in "fc") if numeric else np.array_equal(ref, other)
        return None if equal else ("values differ" if ref.size > 1 else f"{ref!r} != {other!r}")
    rule, argument, _ = RULES.get(name, ("value" if ref.dtype.kind in "fc" else "exact", VALUE_TOLERANCE, ""))
    if rule == "exact":
        return None if np.array_equal(ref, other) else "values differ (exact)"
    ref, other = ref.astype(float), other.astype(float)
    if rule == "bound":
        if not (np.all(np.isfinite(ref)) and np.all(np.isfinite(other))):
            return "a value that is not finite"
        worst = max(finite_scale(ref), finite_scale(other))
        return None if worst <= argument else f"{worst:.3g} exceeds the bound {argument:g}"
    if rule == "count":
        limit = np.maximum(1.0, argument * np.abs(ref))
        bad = ~(np.abs(ref - other) <= limit)
        return None if not bad.any() else f"counts differ beyond max(1, {argument:g} x): {ref[bad][:3]} vs {other[bad][:3]}"
    if rule == "rounding_or_value":
        if np.all(np.abs(ref) <= argument):
            return None if np.all(np.abs(other) <= argument) else f"{other!r} is not rounding (bound {argument:g})"
        ok, why = close(ref, other, VALUE_TOLERANCE)
        return None if ok else why
    if rule in ("rows_up_to_sign", "columns_up_to_sign"):
        if rule == "columns_up_to_sign":
            ref, other = ref.T, other.T
        scale = finite_scale(ref)
        for i in range(ref.shape[0]):
            ok_plus, why = close(ref[i], other[i], argument, scale)
            ok_minus, _ = close(ref[i], -other[i], argument, scale)
            if not (ok_plus or ok_minus):
                return f"{'row' if rule == 'rows_up_to_sign' else 'column'} {i}, either sign: {why}"
        return None
    if rule == "b_breve":
        B = siblings.get("B")
        if B is None or B.shape != (ref.shape[1], ref.shape[0]):
            ok, why = close(ref, other, argument)
            return None if ok else why
        used = np.abs(B).max(axis=1) > ROUNDING * finite_scale(B)  # words some topic uses
        for w in np.flatnonzero(~used):  # a distribution over topics, or all zero
            column = other[:, w]
            total = column.sum()
            if column.min() < 0 or not (abs(total - 1) <= 1e-9 or total == 0):
                return f"word {w}'s column is no distribution (sum {total:.3g})"
        ok, why = close(ref[:, used], other[:, used], argument, finite_scale(ref))
        return None if ok else f"on the words topics use: {why}"
    ok, why = close(ref, other, argument)
    return None if ok else why


def walk(f):
    """Every object by path, and every soft or external link by path (its target, as text):
    visititems follows neither, and a link to the wrong K must not pass."""
    objects, links = {"/": f["/"]}, {}

    def visit(group, prefix):
        for name in group:
            path = prefix + name
            link = group.get(name, getlink=True)
            if isinstance(link, h5py.SoftLink):
                links[path] = "soft " + link.path
            elif isinstance(link, h5py.ExternalLink):
                links[path] = f"external {link.filename}:{link.path}"
            else:
                objects[path] = group[name]
                if isinstance(group[name], h5py.Group):
                    visit(group[name], path + "/")
    visit(f, "/")
    return objects, links


def main():
    args = sys.argv[1:]
    meaning = "--meaning" in args
    args = [a for a in args if a != "--meaning"]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    first, second = args
    problems = []
    with h5py.File(first, "r") as a, h5py.File(second, "r") as b:
        (oa, links_a), (ob, links_b) = walk(a), walk(b)
        for path in sorted(set(links_a) | set(links_b)):
            if links_a.get(path) != links_b.get(path):
                problems.append(f"{path}: link {links_a.get(path)} != {links_b.get(path)}")
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
            name = path.rsplit("/", 1)[-1]
            if isinstance(x, h5py.Dataset):
                siblings = {k: v[()] for k, v in x.parent.items() if isinstance(v, h5py.Dataset) and k == "B"}
                why = compare_values(name, x[()], y[()], siblings, meaning)
                if why:
                    problems.append(f"{path}: {why}")
            for attr in sorted(set(x.attrs) | set(y.attrs)):
                if skipped(attr):
                    continue
                if attr not in x.attrs or attr not in y.attrs:
                    problems.append(f"{path}@{attr}: only in one file")
                    continue
                why = compare_values(f"{name}@{attr}", x.attrs[attr], y.attrs[attr], {}, meaning)
                if why:
                    problems.append(f"{path}@{attr}: {why}")
    for p in problems:
        print(p)
    print(f"compare_h5: {len(problems)} difference(s) between {first} and {second}"
          f" ({'by meaning' if meaning else 'bit for bit'})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
