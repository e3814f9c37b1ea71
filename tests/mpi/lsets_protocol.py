# The protocol under labels = set recomputed from the store with numpy
# (docs/protocol.md, "Label sets"): per source and condition the mean over
# models of the development accuracy, over the development images that have
# a set (an image without one is neither development nor evaluation), a
# record right when its prediction is in its image's set; and n_dev.
# usage: lsets_protocol.py STORE protocol_conditions.tsv protocol_thresholds.tsv
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
conds = {(r[0], r[1]): float(r[2]) for r in (l.rstrip("\n").split("\t") for l in list(open(sys.argv[2]))[1:])}
ndev = {(r[2]): int(r[3]) for r in (l.rstrip("\n").split("\t") for l in list(open(sys.argv[3]))[1:])}
bad = checked = 0
for name in (n.decode() for n in f["source_names"][:]):
    g = f["sources"][name]
    if "label_set_offsets" not in g:
        continue
    y, off, P = g["label"][:], g["label_set_offsets"][:], g["pred"][:]
    ins = np.zeros((len(y), g.attrs["n_classes"]), bool)
    ins[np.repeat(np.arange(len(y)), np.diff(off)), g["label_set_ids"][:]] = True
    dev = (g["split"][:] == 0) & (np.diff(off) > 0)
    right = ins[np.arange(len(y)), P]  # [models][conditions][images]
    if ndev.get(name) != dev.sum():
        print(name, "n_dev", ndev.get(name), "expected", dev.sum()); bad += 1
    for c, cn in enumerate(x.decode() for x in g["condition"][:]):
        want = right[:, c, dev].mean()
        if abs(conds[(name, cn)] - want) > 1e-12:
            print(name, cn, "mean_dev_accuracy", conds[(name, cn)], "expected", want); bad += 1
        checked += 1
print(checked, "conditions checked")
sys.exit(1 if bad or checked == 0 else 0)
