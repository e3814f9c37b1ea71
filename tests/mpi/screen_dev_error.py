# Seed E.3's development error rates (screen_probesets.tsv, dev_error) recomputed
# from the store with numpy: per target source, model and probe set, over the
# development images whose clean prediction is right and that the probe source
# holds (by image id), the mean share of the set's probes predicting another
# class than the image's label; then the mean over models.  A source with
# label sets (the screen runs under labels = auto, so set) judges its own
# records by them (docs/protocol.md, "Label sets"): a prediction in the image's
# set is right, and images without a set are left out of the target.
# usage: screen_dev_error.py STORE PROBESETS.tsv PRIMARY_SOURCE
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
names = [n.decode() for n in f["source_names"][:]]
roles = dict(zip(names, [r.decode() for r in f.attrs["roles"]]))
def right(g):
    # [models][conditions][images] booleans: the prediction is right for its image, and the images kept
    P, y = g["pred"][:], g["label"][:]
    if "label_set_offsets" not in g:
        return P == y, np.ones(len(y), bool)
    off = g["label_set_offsets"][:]
    ins = np.zeros((len(y), g.attrs["n_classes"]), bool)
    ins[np.repeat(np.arange(len(y)), np.diff(off)), g["label_set_ids"][:]] = True
    return ins[np.arange(len(y)), P], np.diff(off) > 0
def conds(src):
    return [c.decode() for c in f["sources"][src]["condition"][:]]
def probe_set(name):
    if name == "all (U)":
        return sys.argv[3], [c for c in conds(sys.argv[3]) if c != "clean"]
    if name.startswith("sev"):
        return sys.argv[3], [c for c in conds(sys.argv[3]) if c.endswith("-" + name[3:])]
    if name == "TTA":
        nat = [s for s in names if roles[s].startswith("natural")][0]
        k = int(roles[nat].split(":")[1])
        return nat, [c for c in conds(nat) if c != "clean"][:k]
    return None, None
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[2])]
col = rows[0].index("dev_error")
bad = checked = 0
for r in rows[1:]:
    psrc, pc = probe_set(r[1])
    if psrc is None:
        continue
    T, P = f["sources"][r[0]], f["sources"][psrc]
    pos = {iid: j for j, iid in enumerate(P["image_id"][:])}
    tc, ci = conds(r[0]).index("clean"), [conds(psrc).index(c) for c in pc]
    label, split, ids = T["label"][:], T["split"][:], T["image_id"][:]
    (tr, keep), (pr, _) = right(T), right(P)
    rates = []
    for m in range(T["pred"].shape[0]):
        wrong = [np.mean([not pr[m, c, pos[ids[i]]] for c in ci])
                 for i in range(len(label))
                 if split[i] == 0 and keep[i] and tr[m, tc, i] and ids[i] in pos]
        if wrong:
            rates.append(np.mean(wrong))
    want = np.mean(rates) if rates else float("nan")
    got = float(r[col])
    if not (np.isnan(want) and np.isnan(got)) and not abs(want - got) <= 1e-12:
        print(r[0], r[1], "dev_error", got, "expected", want); bad += 1
    checked += 1
print(checked, "probe-set rows checked")
sys.exit(1 if bad or checked == 0 else 0)
