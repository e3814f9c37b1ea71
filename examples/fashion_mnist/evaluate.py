#!/usr/bin/env python3
"""From a model evaluation to pairbound prediction records (examples/fashion_mnist).

Trains a handful of scikit-learn classifiers on part of Fashion-MNIST, has them
predict the same base test images clean and under four kinds of perturbation,
and writes one record per (model, source, condition, image):

  OUT/records.csv    the CSV interchange format (docs/csv.md), for
                     `pairbound ingest OUT/records.csv -o STORE --role ...`
  OUT/direct.h5      the same records written straight into a record store
                     with h5py, following docs/store.md (schema 3)

Sources (names are this example's own; the roles say what they are for):

  fmnist-c  synthetic   digital corruptions at severities 1-3 (ImageNet-C-like)
  camera    real        a simulated recapture with a phone camera: blur,
                        contrast, brightness, sensor noise, a slight tilt
  wild      real        simulated prints photographed in the wild: paper
                        warping, uneven light, occluders, hand-held framing
  augment   natural:4   natural transformations (flip, shifts, zoom, rotations)
                        for test-time augmentation; the first 4 are fixed

Only Debian 12 packages are needed: python3-sklearn, python3-numpy,
python3-h5py, python3-xxhash and dataset-fashion-mnist.  Every random choice is seeded, so a
rerun on the same machine and library versions writes the same records.
"""

import argparse
import gzip
import os
import struct
import sys
import time
import warnings
import zlib

try:
    import numpy as np
except ImportError:
    sys.exit("evaluate.py: numpy is missing (Debian: apt-get install python3-numpy)")
try:
    import h5py
except ImportError:
    sys.exit("evaluate.py: h5py is missing (Debian: apt-get install python3-h5py)")
try:
    import xxhash
except ImportError:
    sys.exit("evaluate.py: xxhash is missing (Debian: apt-get install python3-xxhash)")
try:
    import sklearn
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
except ImportError:
    sys.exit("evaluate.py: scikit-learn is missing (Debian: apt-get install python3-sklearn)")

DATA = "/usr/share/datasets/fashion-mnist"
N_CLASSES = 10
TOPK = 3
SIDE = 28


def log(msg):
    print("evaluate.py: " + msg, file=sys.stderr, flush=True)


# ----------------------------------------------------------------- data


def load_idx(path):
    """An IDX file (the MNIST format): big-endian dimensions, then uint8 data."""
    try:
        with gzip.open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        sys.exit("evaluate.py: %s not found (Debian: apt-get install dataset-fashion-mnist, or --data DIR)" % path)
    ndim = raw[3]
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)


def choose_images(labels, per_class, rng):
    """per_class test images of each class, and a dev/eval split inside each
    class (half each): thresholds come from dev, the analyses from eval."""
    index, split = [], []
    for y in range(N_CLASSES):
        pick = np.sort(rng.choice(np.flatnonzero(labels == y), per_class, replace=False))
        index.append(pick)
        is_eval = np.zeros(per_class, bool)
        is_eval[rng.permutation(per_class)[: per_class // 2]] = True
        split.append(is_eval)
    order = np.argsort(np.concatenate(index), kind="stable")  # file order reads more naturally than by class
    return np.concatenate(index)[order], np.concatenate(split)[order]


# ----------------------------------------------------------- perturbations
# Images are float arrays (n, 28, 28) in [0, 1], light garment on black.


def blur(x, sigma):
    """Separable Gaussian blur; the border repeats (the background is black)."""
    r = max(1, int(np.ceil(3 * sigma)))
    k = np.exp(-0.5 * (np.arange(-r, r + 1) / sigma) ** 2)
    k /= k.sum()
    p = np.pad(x, ((0, 0), (r, r), (0, 0)), mode="edge")
    x = sum(k[i] * p[:, i:i + SIDE, :] for i in range(2 * r + 1))
    p = np.pad(x, ((0, 0), (0, 0), (r, r)), mode="edge")
    return sum(k[i] * p[:, :, i:i + SIDE] for i in range(2 * r + 1))


def sample(x, sy, sx):
    """Bilinear resampling at source coordinates (sy, sx) per output pixel;
    outside the image is black, as on a screen or a sheet of paper."""
    n = len(x)
    y0, x0 = np.floor(sy), np.floor(sx)
    wy, wx = sy - y0, sx - x0
    img = np.arange(n)[:, None, None]
    out = np.zeros_like(sy)
    for dy, dx, w in ((0, 0, (1 - wy) * (1 - wx)), (0, 1, (1 - wy) * wx), (1, 0, wy * (1 - wx)), (1, 1, wy * wx)):
        yy, xx = (y0 + dy).astype(int), (x0 + dx).astype(int)
        inside = (yy >= 0) & (yy < SIDE) & (xx >= 0) & (xx < SIDE)
        out += w * np.where(inside, x[img, np.clip(yy, 0, SIDE - 1), np.clip(xx, 0, SIDE - 1)], 0.0)
    return out


GRID_Y, GRID_X = np.meshgrid(np.arange(SIDE, dtype=float), np.arange(SIDE, dtype=float), indexing="ij")
CENTRE = (SIDE - 1) / 2


def affine(x, rot_deg, shift, zoom):
    """Rotate by rot_deg, shift by (dy, dx) pixels and scale by zoom about the
    centre; each argument is a scalar or one value per image."""
    n = len(x)
    th = np.deg2rad(np.broadcast_to(rot_deg, (n,)))[:, None, None]
    z = np.broadcast_to(zoom, (n,))[:, None, None]
    sh = np.broadcast_to(shift, (n, 2))
    py, px = GRID_Y - CENTRE - sh[:, 0, None, None], GRID_X - CENTRE - sh[:, 1, None, None]
    # inverse map: output pixel -> where it came from
    sy = (np.cos(th) * py - np.sin(th) * px) / z + CENTRE
    sx = (np.sin(th) * py + np.cos(th) * px) / z + CENTRE
    return sample(x, sy, sx)


def jitter(x, rng, rot, shift, zoom):
    """A random pose per image: how a hand-held capture frames it."""
    n = len(x)
    return affine(x, rng.uniform(-rot, rot, n), rng.uniform(-shift, shift, (n, 2)), rng.uniform(1 - zoom, 1 + zoom, n))


def elastic(x, rng, alpha, sigma=3.0):
    """A smooth random displacement field: paper that is not flat."""
    n = len(x)
    dy = blur(rng.uniform(-1, 1, (n, SIDE, SIDE)), sigma) * alpha
    dx = blur(rng.uniform(-1, 1, (n, SIDE, SIDE)), sigma) * alpha
    return sample(x, GRID_Y + dy, GRID_X + dx)


def tone(x, contrast=1.0, brightness=0.0):
    """Contrast about mid-grey, then a brightness offset: exposure and screen glare."""
    return (x - 0.5) * contrast + 0.5 + brightness


def gradient(x, rng, strength):
    """Uneven light: a random linear ramp across the image."""
    n = len(x)
    a = rng.uniform(0, 2 * np.pi, n)[:, None, None]
    ramp = (np.cos(a) * (GRID_Y - CENTRE) + np.sin(a) * (GRID_X - CENTRE)) / SIDE
    return x + strength * ramp


def occlude(x, rng, size):
    """A grey occluder (a thumb, a price tag) of size x size at a random place."""
    x = x.copy()
    for i, (r, c) in enumerate(rng.integers(0, SIDE - size + 1, (len(x), 2))):
        x[i, r:r + size, c:c + size] = 0.4
    return x


def pixelate(x, f):
    """Nearest-neighbour down- and up-sampling by a factor f."""
    idx = (np.arange(SIDE) // f) * f
    return x[:, idx][:, :, idx]


def features(x):
    """What the models see: 2x2 average pooling to 14x14 (196 values), which
    keeps training and prediction fast without a BLAS library."""
    x = np.asarray(x, dtype=np.float32).reshape(len(x), SIDE // 2, 2, SIDE // 2, 2)
    return x.mean(axis=(2, 4)).reshape(len(x), -1)


def noise(x, rng, std):
    return x + rng.normal(0, std, x.shape)


def impulse(x, rng, amount):
    """Salt and pepper: a share `amount` of the pixels set to black or white."""
    u = rng.random(x.shape)
    return np.where(u < amount / 2, 0.0, np.where(u > 1 - amount / 2, 1.0, x))


# Each condition is a function (images, rng) -> images.  Severities end in -N:
# screen groups a synthetic source's conditions into severity sets by that suffix.
SYNTHETIC = {}
for sev, (std, amount, sigma, f, c) in enumerate(
        [(0.08, 0.03, 0.7, 2, 0.8), (0.16, 0.08, 1.1, 3, 0.6), (0.28, 0.15, 1.6, 4, 0.4)], start=1):
    SYNTHETIC["gauss-%d" % sev] = lambda x, rng, std=std: noise(x, rng, std)
    SYNTHETIC["impulse-%d" % sev] = lambda x, rng, a=amount: impulse(x, rng, a)
    SYNTHETIC["blur-%d" % sev] = lambda x, rng, s=sigma: blur(x, s)
    SYNTHETIC["pixelate-%d" % sev] = lambda x, rng, f=f: pixelate(x, f)
    SYNTHETIC["contrast-%d" % sev] = lambda x, rng, c=c: tone(x, c)


def camera(distance_blur, contrast, brightness, sensor):
    """One camera setting: a slight random pose, optics, exposure, sensor noise."""
    def capture(x, rng):
        x = jitter(x, rng, rot=4, shift=1.0, zoom=0.05)
        x = tone(blur(x, distance_blur), contrast, brightness)
        return noise(x, rng, sensor)
    return capture


CAMERA = {
    "daylight-near": camera(0.5, 0.95, 0.00, 0.02),
    "daylight-far": camera(1.0, 0.90, 0.00, 0.04),
    "indoor-near": camera(0.6, 0.80, 0.03, 0.06),
    "indoor-far": camera(1.1, 0.75, 0.03, 0.08),
    "dusk-near": camera(0.7, 0.60, 0.00, 0.12),
    "dusk-far": camera(1.3, 0.50, 0.00, 0.15),
}


def wild(warp, light, occluder, rot, sensor):
    """One field setting: warped paper, uneven light, maybe an occluder, hand-held framing."""
    def capture(x, rng):
        x = jitter(elastic(x, rng, warp), rng, rot=rot, shift=2.0, zoom=0.08)
        x = gradient(blur(x, 0.6), rng, light)
        if occluder:
            x = occlude(x, rng, occluder)
        return noise(x, rng, sensor)
    return capture


WILD = {
    "table-1": wild(1.0, 0.3, 0, 5, 0.04),
    "table-2": wild(2.0, 0.5, 0, 5, 0.06),
    "hand-1": wild(1.0, 0.3, 0, 15, 0.06),
    "hand-2": wild(2.0, 0.5, 0, 25, 0.08),
    "shelf-1": wild(1.5, 0.6, 7, 8, 0.06),
    "shelf-2": wild(3.0, 0.8, 13, 15, 0.12),
}

# natural transformations, no randomness: the first four are the fixed TTA set
AUGMENT = {
    "hflip": lambda x, rng: x[:, :, ::-1],
    "shift-left": lambda x, rng: affine(x, 0, (0, -2), 1),
    "shift-right": lambda x, rng: affine(x, 0, (0, 2), 1),
    "zoom-out": lambda x, rng: affine(x, 0, (0, 0), 0.9),
    "zoom-in": lambda x, rng: affine(x, 0, (0, 0), 1.1),
    "rot-plus": lambda x, rng: affine(x, 8, (0, 0), 1),
    "rot-minus": lambda x, rng: affine(x, -8, (0, 0), 1),
    "shift-up": lambda x, rng: affine(x, 0, (-2, 0), 1),
}

# (name, role, conditions): the store's sources in this order
SOURCES = [
    ("fmnist-c", "synthetic", SYNTHETIC),
    ("camera", "real", CAMERA),
    ("wild", "real", WILD),
    ("augment", "natural:4", AUGMENT),
]


# ------------------------------------------------------------------ models


def models(seed):
    """(name, group, estimator): the group is the model family, which
    pairbound resamples as a unit (model-group bootstrap, leave-one-group-out
    prediction), so near-copies share one.  Small on purpose: numpy on a
    plain Debian uses the reference BLAS, so matrix products are slow."""
    pca = lambda n: PCA(n, svd_solver="full")  # noqa: E731  (exact, no random start)
    return [
        ("logreg", "linear", make_pipeline(StandardScaler(), pca(50), LogisticRegression(C=0.1, max_iter=200))),
        ("lda", "linear", make_pipeline(pca(50), LinearDiscriminantAnalysis())),
        ("forest", "trees", RandomForestClassifier(60, min_samples_leaf=2, random_state=seed)),
        ("extra-trees", "trees", ExtraTreesClassifier(60, min_samples_leaf=2, random_state=seed)),
        ("knn-5", "neighbours", make_pipeline(pca(20), KNeighborsClassifier(5, weights="distance"))),
        ("knn-25", "neighbours", make_pipeline(pca(20), KNeighborsClassifier(25, weights="distance"))),
        ("mlp-64", "neural", make_pipeline(StandardScaler(), pca(50),
                                           MLPClassifier((64,), alpha=1e-3, max_iter=50, random_state=seed))),
        ("mlp-128", "neural", make_pipeline(StandardScaler(), pca(50),
                                            MLPClassifier((128,), alpha=1e-2, max_iter=30, random_state=seed))),
        ("naive-bayes", "bayes", make_pipeline(pca(20), GaussianNB())),
    ]


# ----------------------------------------------------------------- records


def records_of(prob, labels):
    """Per-image record fields from probability vectors (rows of `prob`).

    Everything is taken from the float32 values the store keeps, so the
    record rules hold exactly: pred is the most probable class, the lowest
    index among ties (the fixed tie rule); smax = top1_prob; ptrue = smax when
    pred is the label; the top-k list is the same stable descending order."""
    p = prob.astype(np.float32)
    order = np.argsort(-p, axis=1, kind="stable")[:, :TOPK]
    top_p = np.take_along_axis(p, order, axis=1)
    ptrue = p[np.arange(len(p)), labels]
    return order[:, 0].astype(np.int32), top_p[:, 0], ptrue, order.astype(np.int32), top_p


def fmt(v):
    """float32 as text: 9 significant digits read back as the same float32."""
    return "%.9g" % v


def write_csv(path, model_list, sources, image_ids, labels, split, rec):
    """One row per record, in the store's order (source, model, condition,
    image), so the ingested store lists everything in the order written here."""
    header = "model,group,source,condition,image,label,split,pred,smax,ptrue," + ",".join(
        "top%d_class,top%d_prob" % (k, k) for k in range(1, TOPK + 1))
    splits = np.where(split, "eval", "dev")
    lab = [str(v) for v in labels]
    with open(path + ".part", "w") as out:
        out.write(header + "\n")
        for src, _, conds in sources:
            for m, (name, group, _) in enumerate(model_list):
                for c in conds:
                    pred, smax, ptrue, top_c, top_p = rec[src][m][c]
                    head = "%s,%s,%s,%s," % (name, group, src, c)
                    rows = []
                    for i in range(len(image_ids)):
                        tops = ",".join("%d,%s" % (top_c[i, k], fmt(top_p[i, k])) for k in range(TOPK))
                        rows.append("%s%s,%s,%s,%d,%s,%s,%s\n" % (head, image_ids[i], lab[i], splits[i], pred[i],
                                                                  fmt(smax[i]), fmt(ptrue[i]), tops))
                    out.write("".join(rows))
    os.replace(path + ".part", path)


# --------------------------------------------------------- the HDF5 store


def strtype(width):
    """docs/store.md: fixed-length, NUL-terminated ASCII strings (H5T_C_S1),
    which h5py's default (NUL-padded) is not; hence the low-level API."""
    t = h5py.h5t.C_S1.copy()
    t.set_size(width)
    t.set_strpad(h5py.h5t.STR_NULLTERM)
    return t


def put_strings(loc, name, values, width=None, attr=False):
    """A 1-D string dataset (or attribute) of `values`; width = longest + 1."""
    width = width or max(len(v) for v in values) + 1
    t = strtype(width)
    data = np.array([v.encode() for v in values], dtype="S%d" % width)
    space = h5py.h5s.create_simple((len(values),))
    if attr:
        h5py.h5a.create(loc.id, name.encode(), t, space).write(data, mtype=t)
    else:
        h5py.h5d.create(loc.id, name.encode(), t, space).write(h5py.h5s.ALL, h5py.h5s.ALL, data, mtype=t)


def put_text_attr(loc, name, text):
    """A scalar string attribute."""
    t = strtype(len(text) + 1)
    space = h5py.h5s.create(h5py.h5s.SCALAR)
    h5py.h5a.create(loc.id, name.encode(), t, space).write(np.array(text.encode(), dtype="S%d" % (len(text) + 1)),
                                                           mtype=t)


def put_records(grp, name, data):
    """A record dataset [model][condition][image](+[k]), chunked by model slab
    (up to 4 MiB, as pairbound writes it) with a Fletcher32 checksum per chunk."""
    per_row = data[0, 0].nbytes
    rows = int(min(data.shape[1], max(1, (4 << 20) // per_row)))
    grp.create_dataset(name, data=data, chunks=(1, rows) + data.shape[2:], fletcher32=True)


def checksum(loc, data):
    """The metadata checksum of a store of schema 2 or 3 (docs/store.md, "Integrity"):
    attribute xxh3_128, the XXH3-128 of the object's canonical bytes."""
    put_text_attr(loc, "xxh3_128", xxhash.xxh3_128_hexdigest(data))


def names_bytes(names):
    """Canonical bytes of a string dataset: every value followed by one NUL."""
    return b"".join(n.encode() + b"\0" for n in names)


def write_store(path, model_list, sources, image_ids, labels, split, rec, provenance):
    """The same records as the CSV, written as a schema-3 store (docs/store.md; no label sets, no per-record summaries),
    with the checksum of every metadata object."""
    with h5py.File(path + ".part", "w") as f:
        put_text_attr(f, "format", "pairbound-store")
        f.attrs.create("schema_version", 3, dtype="<i4")
        checksum(f, b"format pairbound-store\nschema_version 3\ntopk %d\n" % TOPK)
        longest = max(len(s) for s, _, _ in sources)
        # wide enough for any role of these sources (extra:NAME, natural:N), as
        # pairbound writes it, so that `pairbound roles --set` can rewrite it in place
        put_strings(f, "roles", [role for _, role, _ in sources], width=longest + 16, attr=True)
        f.attrs.create("topk", TOPK, dtype="<i4")
        put_text_attr(f.create_group("provenance"), "text", provenance)
        g = f.create_group("models")
        for name, values in (("id", [m for m, _, _ in model_list]), ("group", [gr for _, gr, _ in model_list])):
            put_strings(g, name, values)
            checksum(g[name], names_bytes(values))
        put_strings(f, "source_names", [s for s, _, _ in sources])
        checksum(f["source_names"], names_bytes([s for s, _, _ in sources]))
        all_sources = f.create_group("sources")
        for src, _, conds in sources:
            g = all_sources.create_group(src)
            g.attrs.create("n_classes", N_CLASSES, dtype="<i4")
            g.attrs.create("clean_index", list(conds).index("clean"), dtype="<i4")
            checksum(g, b"n_classes %d\nclean_index %d\n" % (N_CLASSES, list(conds).index("clean")))
            put_strings(g, "image_id", image_ids)
            checksum(g["image_id"], names_bytes(image_ids))
            g.create_dataset("label", data=labels.astype("<i4"))
            checksum(g["label"], labels.astype("<i4").tobytes())
            g.create_dataset("split", data=split.astype("u1"))  # 0 = dev, 1 = eval
            checksum(g["split"], split.astype("u1").tobytes())
            put_strings(g, "condition", list(conds))
            checksum(g["condition"], names_bytes(list(conds)))
            fields = [np.stack([np.stack([rec[src][m][c][j] for c in conds]) for m in range(len(model_list))])
                      for j in range(5)]
            put_records(g, "pred", fields[0].astype("<i4"))
            put_records(g, "smax", fields[1].astype("<f4"))
            put_records(g, "ptrue", fields[2].astype("<f4"))
            put_records(g, "topk_class", fields[3].astype("<i4"))
            put_records(g, "topk_prob", fields[4].astype("<f4"))
    os.replace(path + ".part", path)


# -------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="output directory")
    ap.add_argument("--images", type=int, default=1000,
                    help="base test images, a multiple of 20: half development, half evaluation (default 1000)")
    ap.add_argument("--train", type=int, default=4000, help="training images (default 4000 of 60000)")
    ap.add_argument("--seed", type=int, default=20260908, help="seed of every random choice")
    ap.add_argument("--data", default=DATA, help="directory of the Fashion-MNIST *-ubyte.gz files (default %s)" % DATA)
    args = ap.parse_args()
    if args.images < 20 or args.images % 20:
        ap.error("--images must be a positive multiple of 20 (an even number per class)")
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    warnings.filterwarnings("ignore", category=ConvergenceWarning)  # a few epochs are enough here

    rng = np.random.default_rng(args.seed)
    train_x = load_idx(os.path.join(args.data, "train-images-idx3-ubyte.gz"))
    train_y = load_idx(os.path.join(args.data, "train-labels-idx1-ubyte.gz"))
    test_x = load_idx(os.path.join(args.data, "t10k-images-idx3-ubyte.gz"))
    test_y = load_idx(os.path.join(args.data, "t10k-labels-idx1-ubyte.gz"))
    pick = rng.choice(len(train_y), args.train, replace=False)
    fit_x = features(train_x[pick] / 255)
    fit_y = train_y[pick]
    index, split = choose_images(test_y, args.images // N_CLASSES, rng)
    base = test_x[index].astype(float) / 255
    labels = test_y[index].astype(np.int32)
    image_ids = ["t10k-%05d" % i for i in index]  # the same id in every source: the same base image

    # every perturbed image, once, shared by all models; clean first in each source
    sources = []
    images = {}
    for src, role, perturb in SOURCES:
        conds = {"clean": None}
        conds.update(perturb)
        sources.append((src, role, conds))
        for cond, fn in perturb.items():
            # one random stream per (source, condition), keyed by their names:
            # adding or reordering conditions changes no other condition's images
            x = fn(base, np.random.default_rng([args.seed, zlib.crc32(("%s/%s" % (src, cond)).encode())]))
            images[src, cond] = features(np.clip(x, 0, 1))
    clean = features(base)
    log("%d training and %d test images, %d perturbed sets (%.1f s)" % (args.train, len(base), len(images),
                                                                       time.time() - t0))

    model_list = models(args.seed)
    rec = {src: [] for src, _, _ in sources}
    for name, group, est in model_list:
        t1 = time.time()
        est.fit(fit_x, fit_y)
        if list(est.classes_) != list(range(N_CLASSES)):
            sys.exit("evaluate.py: %s did not see every class; use more --train images" % name)
        # one predict_proba over every image: the clean records are the same in every source
        keys = list(images)
        prob = est.predict_proba(np.concatenate([clean] + [images[k] for k in keys]))
        parts = np.split(prob, len(keys) + 1)
        clean_rec = records_of(parts[0], labels)
        by_key = dict(zip(keys, parts[1:]))
        for src, _, conds in sources:
            rec[src].append({c: clean_rec if c == "clean" else records_of(by_key[src, c], labels) for c in conds})
        acc = (clean_rec[0] == labels).mean()
        log("%-12s %-10s clean accuracy %.3f (%.1f s)" % (name, group, acc, time.time() - t1))

    csv_path = os.path.join(args.out, "records.csv")
    write_csv(csv_path, model_list, sources, image_ids, labels, split, rec)
    provenance = ("examples/fashion_mnist/evaluate.py --images %d --train %d --seed %d (scikit-learn %s, numpy %s, "
                  "h5py %s)" % (args.images, args.train, args.seed, sklearn.__version__, np.__version__,
                                h5py.__version__))
    write_store(os.path.join(args.out, "direct.h5"), model_list, sources, image_ids, labels, split, rec, provenance)
    n = sum(len(model_list) * len(conds) * len(base) for _, _, conds in sources)
    log("%d records in %s and %s (%.1f s)" % (n, csv_path, os.path.join(args.out, "direct.h5"), time.time() - t0))


if __name__ == "__main__":
    main()
