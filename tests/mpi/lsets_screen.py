# usage: python3 lsets_screen.py STORE SCREEN_OUTDIR/results.h5 (tests/mpi/lsets_ranks.sh)
# Under --labels set screen's per-image margin and TTA agreement must read the stored predictions (the
# classes the model predicted), not the correctness map (pb_lsets_pred): recomputed here from the store,
#   margin = S - max(M if label != pred, top-k probabilities of the classes != pred)   (docs/screen.md)
#   agree_TTA = share of the TTA source's fixed probes (its first 18 perturbed conditions) predicting the clean
#               record's class, for the same model and image (by image id)
# and compared with /screen/images (both stored negated, as every score: higher = more likely to fail); the
# map would give other values on some images, which the check requires so that it can tell the two apart.
import sys, h5py, numpy as np
st, res = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
I, C = res["screen/images"], res["screen/cells"]
names = st["source_names"].asstr()[:]
unit, img, off = I["unit"][:], I["image"][:], C["image_offset"][:]
um = {unit[off[c]]: (C["source"][c], C["model"][c]) for c in range(len(off)) if off[c] < len(unit)}
t = st["sources"]["TTA"]
tid = {v: j for j, v in enumerate(t["image_id"].asstr()[:])}
tconds = [c for c in range(t["pred"].shape[1]) if c != t.attrs["clean_index"]][:18]
TT = t["pred"][:]
src = {}
def mapped(g, i, p):  # the correctness map (docs/protocol.md, "Label sets")
    o, y = g["label_set_offsets"][:], g["label"][i]
    ids = g["label_set_ids"][o[i]:o[i + 1]]
    return p if len(ids) == 0 else y if p in ids else g.attrs["n_classes"] if p == y else p
def margin(g, m, cl, i, p):
    y, M = g["label"][i], float(g["ptrue"][m, cl, i])
    second = M if y != p else 0.0
    for c, pr in zip(g["topk_class"][m, cl, i], g["topk_prob"][m, cl, i]):
        if c >= 0 and c != p: second = max(second, float(pr))
    return float(g["smax"][m, cl, i]) - second
n = len(unit)
mar, mar_map, ag, ag_map = (np.empty(n) for _ in range(4))
for q in range(n):
    s, m = um[unit[q]]
    g, i = st["sources"][names[s]], img[q]
    cl = g.attrs["clean_index"]
    p = g["pred"][m, cl, i]
    pm = mapped(g, i, p)
    j = tid[g["image_id"].asstr()[i]]
    mar[q], mar_map[q] = margin(g, m, cl, i, p), margin(g, m, cl, i, pm)
    ag[q] = np.mean([TT[m, c, j] == p for c in tconds])
    ag_map[q] = np.mean([TT[m, c, j] == pm for c in tconds])
ok_m = np.array_equal(-I["margin"][:], mar)
ok_a = np.array_equal(-I["agree_TTA"][:], ag)
dm, da = int(np.sum(mar_map != mar)), int(np.sum(ag_map != ag))
print(f"{n} images: margin from the stored predictions {ok_m}, agree_TTA {ok_a}; the map would change "
      f"the margin of {dm} and the agreement of {da}")
sys.exit(0 if ok_m and ok_a and dm > 0 and da > 0 else 1)
