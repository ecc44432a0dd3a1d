# SPDX-License-Identifier: MIT
# A measurement, not part of jsmf: the two other factor rectifiers of the authors' code
# (PALM and iPALM, moontae/JSMF codes/+compression), written from their update rules, run
# on a dense C from jsmf cooc; the rectified C = sym(Y1 Y2ᵀ) / its sum goes to a copy of the
# C file, which jsmf fit --cooc FILE --rectify none then factorizes and measures.
# Usage: factor_palm.py C.h5 K ITERATIONS palm|ipalm OUT.h5 [r (1e-4, the authors')]
# iPALM: the authors' file assigns the second factor's update to Y3 and never updates Y2;
# here Y2 takes it, as the method (Pock & Sabach 2016) intends.
import sys, time, shutil, h5py, numpy as np
from scipy.sparse.linalg import eigsh
src, K, T, method, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
r = float(sys.argv[6]) if len(sys.argv) > 6 else 1e-4
with h5py.File(src, "r") as f:
    C = f["/cooc/C"][()]
C = 0.5 * (C + C.T)
t0 = time.time()
lam, V = eigsh(C, k=K, which="LA")
print(f"eigs {time.time()-t0:.1f}s lambda1 {lam.max():.3e} lambdaK {lam.min():.3e}", flush=True)
Y1 = V * np.sqrt(np.maximum(lam, 0)); Y2 = Y1.copy()
Y1p, Y2p = Y1.copy(), Y2.copy()
I = np.eye(K)
t0 = time.time()
for t in range(1, T + 1):
    if method == "palm":
        g = 2.01
        c = g * np.linalg.norm(Y2.T @ Y2 + r * I, 2)
        U = Y1 - 2 * (Y1 @ (Y2.T @ Y2) - C @ Y2 + r * (Y1 - Y2)) / c
        Y1 = np.maximum(U, 0)
        d = g * np.linalg.norm(Y1.T @ Y1 + r * I, 2)
        W = Y2 - 2 * (Y2 @ (Y1.T @ Y1) - C @ Y1 + r * (Y2 - Y1)) / d
        Y2 = np.maximum(W, 0)
    else:  # ipalm, with Y2 updated (the authors' file assigns Y3 and never updates Y2)
        a = b = 0.1
        c = np.linalg.norm(Y2.T @ Y2 + r * I, 2); tau = (1 + 2 * b) / (2 - 2 * a) * c
        U = Y1 + a * (Y1 - Y1p); Vv = Y1 + b * (Y1 - Y1p); Y1p = Y1
        Y1 = np.maximum(U - (Vv @ (Y2.T @ Y2) - C @ Y2 + r * (Vv - Y2)) / tau, 0)
        d = np.linalg.norm(Y1.T @ Y1 + r * I, 2); tau = (1 + 2 * b) / (2 - 2 * a) * d
        U = Y2 + a * (Y2 - Y2p); Vv = Y2 + b * (Y2 - Y2p); Y2p = Y2
        Y2 = np.maximum(U - (Vv @ (Y1.T @ Y1) - C @ Y1 + r * (Vv - Y1)) / tau, 0)
    if t % max(1, T // 10) == 0 or t == T:
        R = C - Y1 @ Y2.T
        print(f"{method} it {t}: |C - Y1Y2'|_F/|C|_F {np.linalg.norm(R)/np.linalg.norm(C):.4e} "
              f"|Y1-Y2|/|Y1| {np.linalg.norm(Y1-Y2)/np.linalg.norm(Y1):.3e} {time.time()-t0:.1f}s", flush=True)
Ct = 0.5 * (Y1 @ Y2.T + Y2 @ Y1.T)
Ct /= Ct.sum()
shutil.copy(src, out)
with h5py.File(out, "r+") as f:
    f["/cooc/C"][...] = Ct
    f["/stats/unigram"][...] = Ct.sum(axis=1)
    f.attrs["rectification"] = "none"
print("min", Ct.min(), "sum", Ct.sum())
