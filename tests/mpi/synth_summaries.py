# Every record's entropy and collision in a synthetic store, recomputed with
# numpy from the vector docs/synth.md defines ("Top-k lists", "Per-record
# summaries"), independently of the C code: the pinned probabilities (S; M
# when the prediction is wrong; the runner-ups r_j = round(min(rho^j (1 - S -
# M [wrong]), round(0.96 S))), rho = 1/2 (runner_up_spread = 0, which the
# recomputation needs); all but S sorted, descending),
# the list being their first k, and n - pinned further classes at
# q = min((1 - sum pinned) / (n - pinned), cap), cap = the list's last
# probability (S without a list).  Each recomputed value, rounded to float32,
# must equal the stored one within one float32 step.  Also prints, per
# source, the share of records whose tail is capped (the vector then sums to
# less than 1).  Usage: synth_summaries.py STORE HALF_PRECISION(0|1)
import sys
import h5py
import numpy as np

path, half = sys.argv[1], sys.argv[2] == "1"


def rnd(x):
    """A probability as synth stores it: half precision or float32, as float64."""
    return (x.astype(np.float16) if half else x.astype(np.float32)).astype(np.float64)


def plogp(p):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)


f = h5py.File(path, "r")
k = int(f.attrs["topk"])
bad = checked = 0
for name, g in f["sources"].items():
    K = int(g.attrs["n_classes"])
    S = g["smax"][...].astype(np.float64).ravel()
    M = g["ptrue"][...].astype(np.float64).ravel()
    shape = g["pred"].shape
    wrong = (g["pred"][...] != np.broadcast_to(g["label"][...], shape)).ravel()
    n = S.size
    # pinned probabilities in the generator's order; NaN = not pinned
    P = np.full((n, 1 + 1 + k), np.nan)
    P[:, 0] = S
    P[wrong, 1] = M[wrong]
    if k > 0:
        rest, cap96 = 1.0 - S - np.where(wrong, M, 0.0), rnd(0.96 * S)
        n0 = 1 + wrong
        runners = np.minimum(k, K - n0)
        R = np.full((n, k), np.nan)
        for j in range(k):
            rest = rest * 0.5
            R[:, j] = np.where(j < runners, rnd(np.minimum(rest, cap96)), np.nan)
        # after S, M (when wrong) and the runner-ups sorted together, descending; NaN (not pinned) last
        P[:, 1:] = -np.sort(-np.concatenate([P[:, 1:2], R], axis=1), axis=1)
        tk = g["topk_prob"][...].reshape(n, k).astype(np.float64)
        order = np.argsort(np.isnan(P), axis=1, kind="stable")
        first_k = np.take_along_axis(P, order, axis=1)[:, :k]
        mismatch = np.flatnonzero(np.any(first_k != tk, axis=1))
        if mismatch.size:
            print(name, mismatch.size, "lists unlike the recomputed pinned vector, first", mismatch[0],
                  first_k[mismatch[0]], tk[mismatch[0]])
            bad += 1
        cap = tk[:, k - 1]
    else:
        cap = S
    pinned = np.sum(~np.isnan(P), axis=1)
    Pz = np.nan_to_num(P)
    n_tail = K - pinned
    left = np.maximum(1.0 - Pz.sum(axis=1), 0.0)
    share = np.where(n_tail > 0, left / np.maximum(n_tail, 1), 0.0)
    q = np.where(n_tail > 0, np.minimum(share, cap), 0.0)
    capped = (n_tail > 0) & (share > cap)
    H = plogp(Pz).sum(axis=1) + n_tail * plogp(q)
    C = (Pz * Pz).sum(axis=1) + n_tail * q * q
    for what, want in (("entropy", H), ("collision", C)):
        got = g[what][...].ravel()
        w32 = want.astype(np.float32)
        ulp = np.spacing(np.maximum(np.abs(w32), np.float32(1e-30)))
        off = np.flatnonzero(np.abs(got - w32) > ulp)
        checked += got.size
        if off.size:
            i = off[0]
            print(name, what, off.size, "records differ, first", i, "stored", got[i], "recomputed", want[i])
            bad += 1
    mass = Pz.sum(axis=1) + n_tail * q
    print(f"{name}: {n} records, {int(capped.sum())} with a capped tail ({capped.mean():.4%}), "
          f"min sum {mass.min():.4f}, wrong among them {int((capped & wrong).sum())}")
print(checked, "summaries checked")
sys.exit(1 if bad or checked == 0 else 0)
