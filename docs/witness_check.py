import sys, h5py, numpy as np  # usage: python3 witness_check.py STORE OUTDIR/results.h5 (docs/verify.md)
st, res = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
W, C, names, bad, src = res["bounds/witnesses"], res["bounds/cells"], st["source_names"].asstr()[:], 0, {}
for c in range(len(W["offset"])):
    (s, m, cond, o, n), tau = (W[k][c] for k in ("source", "model", "condition", "offset", "n")), C["tau"][c]
    g = st["sources"][names[s]]
    if s not in src:  # under labels = set: a pred in the image's set becomes its label, a wrong pred = label n_classes
        ev, P, S, y, K = g["split"][:] == 1, g["pred"][:], g["smax"][:], g["label"][:], g.attrs["n_classes"]
        if W.attrs.get("labels", b"single") in (b"set", "set") and "label_set_offsets" in g:
            off, I = g["label_set_offsets"][:], np.arange(len(y)); ins = np.zeros((len(y), K), bool); ins[np.repeat(I, np.diff(off)), g["label_set_ids"][:]] = True
            P, ev = np.where(ins[I, P], y, np.where(P == y, K, P)), ev & (np.diff(off) > 0)  # images without a set left out
        src[s] = (ev, P, S, y[ev])
    ev, P, S, y = src[s]; cl = g.attrs["clean_index"]; p0, s0, p1, s1 = P[m, cl][ev], S[m, cl][ev], P[m, cond][ev], S[m, cond][ev]
    for lev in ("Ik_lo", "Ik_hi", "I5_lo", "I5_hi"):
        if (p := W[lev][o:o + n])[0] < 0: continue  # I5 outside the --i5 cells
        cnt = lambda q: [np.bincount(y, x, y.max() + 1) for x in ((p0 == y) & (p1[q] == y), (p0 != y) & (p1[q] != y) & (p0 == p1[q]))]
        same, H = [np.array_equal(u, v) for u, v in zip(cnt(p), cnt(np.arange(n)))], np.sum((p0 == y) & (s0 >= tau) & (p1[p] != y) & (s1[p] >= tau)) / n
        if np.any(np.sort(p) != np.arange(n)) or np.any(y[p] != y) or not same[0] or (lev[1] == "5" and not same[1]) or H != C["H_" + lev][c]:
            bad += 1; print(f"cell {c} {lev}: H {H} stored {C['H_' + lev][c]}, k/s kept {same}")
print(f"{len(W['offset'])} cells: {bad} witnesses fail"); sys.exit(bad > 0)
