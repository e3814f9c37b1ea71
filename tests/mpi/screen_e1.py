# Seed E.1's per-unit Spearman of delta with -U, recomputed with scipy from the
# per-image scores of results.h5 (independent of GSL), against screen_fits.tsv.
import sys, h5py, numpy as np
from scipy.stats import spearmanr
img = h5py.File(sys.argv[1], "r")["screen/images"]
unit, delta, negu = img["unit"][:], img["delta"][:], img["U"][:]
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[2])]
col = rows[0].index("spearman_delta_negU")
bad = checked = 0
for k, r in enumerate(rows[1:]):
    sel = unit == k
    want = spearmanr(delta[sel], negu[sel]).statistic if sel.sum() >= 2 else float("nan")
    got = float(r[col])
    if not (np.isnan(want) and np.isnan(got)) and not abs(want - got) <= 1e-12:
        print("unit", k, r[0], r[1], "spearman", got, "expected", want); bad += 1
    checked += not np.isnan(want)
print(checked, "units checked")
sys.exit(1 if bad or checked == 0 else 0)
