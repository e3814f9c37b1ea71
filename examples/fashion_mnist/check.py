#!/usr/bin/env python3
"""Checks of a `pairbound run` on the example's records (examples/fashion_mnist).

  check.py bounds RECORDS.csv BOUNDS.tsv [--cells N]
      recomputes, from the records alone, the acceptance threshold and the
      I0 and Ik closed forms of H and L (seed 000 Eq. 4, 5 and 7) for N cells
      of each source and compares them with bounds.tsv of the bounds stage
  check.py report REPORT.md --allowed STAGE,...
      every stage of the run has its section or its reason for being skipped,
      and the stages the store's roles allow were not skipped

Nothing here reads pairbound's intermediate outputs: the threshold, the
per-class counts and the intervals are computed in numpy from the records;
only the final values being checked are read from bounds.tsv.
Exit status 0 when everything agrees, 1 otherwise.
"""

import argparse
import csv
import math
import re
import sys

import numpy as np

COVERAGE = 0.8  # the protocol's clean-development coverage (docs/protocol.md)


def read_records(path, wanted):
    """{(model, source): {condition: (image ids, label, split, pred, smax)}}
    for the (model, source) pairs in `wanted`; smax as float32, as stored."""
    rows = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            key = (r["model"], r["source"])
            if key in wanted:
                rows.setdefault(key, {}).setdefault(r["condition"], []).append(
                    (r["image"], int(r["label"]), r["split"] == "eval", int(r["pred"]), r["smax"]))
    out = {}
    for key, conds in rows.items():
        out[key] = {}
        for cond, recs in conds.items():
            ids, label, is_eval, pred, smax = zip(*recs)
            out[key][cond] = (np.array(ids), np.array(label), np.array(is_eval), np.array(pred),
                              np.array(smax, dtype=np.float32))  # the text's nearest float32, as ingest reads it
    return out


def threshold(clean):
    """The acceptance threshold tau of one model and source (docs/protocol.md):
    the r-th largest clean development S, r = round(0.8 n_dev) rounded half
    away from zero and clamped to [1, n_dev]; ties at the cutoff are accepted."""
    _, _, is_eval, _, smax = clean
    dev = np.sort(smax[~is_eval])[::-1]
    r = min(max(int(math.floor(COVERAGE * len(dev) + 0.5)), 1), len(dev))
    return dev[r - 1]


def closed_forms(clean, pert, tau):
    """H and L at I0 and Ik of one cell, from per-class counts of its
    evaluation records paired by image (seed 000 Eq. 4, 5, 7)."""
    ids0, label, is_eval, pred0, s0 = clean
    ids1, label1, _, pred1, s1 = pert
    assert (ids0 == ids1).all() and (label == label1).all(), "records of a cell in another image order"
    e = is_eval
    y, c0, z0 = label[e], pred0[e] == label[e], s0[e] >= tau  # acceptance S >= tau on the float32 values
    c1, z1 = pred1[e] == label[e], s1[e] >= tau
    sums = {k: 0 for k in ("H_I0_lo", "H_I0_hi", "H_Ik_lo", "H_Ik_hi", "L_I0_lo", "L_I0_hi", "L_Ik_lo", "L_Ik_hi",
                           "H_obs", "L_obs", "k")}
    for cls in np.unique(y):
        m = y == cls
        n = int(m.sum())
        a, b = int(c0[m].sum()), int(c1[m].sum())  # correct clean, correct perturbed
        u = int((c0 & z0)[m].sum())  # correct and accepted clean
        t = int((~c1 & z1)[m].sum())  # wrong and accepted perturbed (H's event)
        v = int((c1 & ~z1)[m].sum())  # correct and rejected perturbed (L's event)
        k = int((c0 & c1)[m].sum())  # correct on both sides under the observed pairing
        h = a - k
        sums["H_I0_lo"] += max(0, u + t - n)
        sums["H_I0_hi"] += min(u, t)
        sums["L_I0_lo"] += max(0, u + v - n)
        sums["L_I0_hi"] += min(u, v)
        sums["L_Ik_lo"] += max(0, k - (a - u) - (b - v))
        sums["L_Ik_hi"] += min(u, v, k)
        sums["H_Ik_lo"] += max(0, h - (a - u) - ((n - b) - t))
        sums["H_Ik_hi"] += min(u, t, h)
        sums["H_obs"] += int((c0 & z0 & ~c1 & z1)[m].sum())
        sums["L_obs"] += int((c0 & z0 & c1 & ~z1)[m].sum())
        sums["k"] += k
    N = int(e.sum())
    vals = {key: cnt / N for key, cnt in sums.items() if key != "k"}  # counts summed, divided once by N
    vals["k"] = sums["k"]
    vals["n"] = N
    return vals


def check_bounds(args):
    with open(args.tsv, newline="") as f:
        table = list(csv.DictReader(f, delimiter="\t"))
    # a few cells per source, spread over models and conditions: first, last and middle ones
    by_source = {}
    for row in table:
        by_source.setdefault(row["source"], []).append(row)
    chosen = []
    for rows in by_source.values():
        step = max(1, len(rows) // args.cells)
        chosen += rows[::step][: args.cells - 1] + [rows[-1]]
    recs = read_records(args.records, {(r["model"], r["source"]) for r in chosen})
    fails, checked = 0, 0
    for row in chosen:
        cell = "%s/%s/%s" % (row["model"], row["source"], row["condition"])
        conds = recs[row["model"], row["source"]]
        tau = threshold(conds["clean"])
        got = closed_forms(conds["clean"], conds[row["condition"]], tau)
        bad = []
        if float(tau) != float(row["tau"]):
            bad.append("tau %r != %s" % (float(tau), row["tau"]))
        for key in ("n", "k"):
            if got[key] != int(row[key]):
                bad.append("%s %d != %s" % (key, got[key], row[key]))
        for key in ("H_I0_lo", "H_I0_hi", "H_Ik_lo", "H_Ik_hi", "L_I0_lo", "L_I0_hi", "L_Ik_lo", "L_Ik_hi",
                    "H_obs", "L_obs"):
            if abs(got[key] - float(row[key])) > 1e-12:
                bad.append("%s %.17g != %s" % (key, got[key], row[key]))
        # the observed pairing is one feasible correspondence: inside every interval
        for q in ("H", "L"):
            for info in ("I0", "Ik"):
                if not got["%s_%s_lo" % (q, info)] <= got[q + "_obs"] <= got["%s_%s_hi" % (q, info)]:
                    bad.append("%s_obs outside its %s interval" % (q, info))
        checked += 1
        if bad:
            fails += 1
            print("not ok - bounds %s: %s" % (cell, "; ".join(bad)))
        else:
            print("ok - bounds %s: tau %.6g, H I0 [%.3f, %.3f] Ik [%.3f, %.3f], L I0 [%.3f, %.3f] Ik [%.3f, %.3f]" % (
                cell, tau, got["H_I0_lo"], got["H_I0_hi"], got["H_Ik_lo"], got["H_Ik_hi"], got["L_I0_lo"],
                got["L_I0_hi"], got["L_Ik_lo"], got["L_Ik_hi"]))
    print("# %d cells checked against %s, %d differ" % (checked, args.tsv, fails))
    return fails == 0 and checked > 0


def check_report(args):
    """REPORT.md's contents list every stage as `- [NAME](#stage-NAME): TITLE`,
    or `: skipped` with a line `- **NAME** was skipped: REASON.` among the findings."""
    text = open(args.report).read()
    contents = re.findall(r"^- \[([^\]]+)\]\(#stage-([^)]+)\): (.*)$", text, re.M)
    ok = bool(contents)
    if not ok:
        print("not ok - report: %s has no contents" % args.report)
    for name, anchor, title in contents:
        if title == "skipped":
            why = re.search(r"^- \*\*%s\*\* was skipped: (.+)\.$" % re.escape(name), text, re.M)
            if why and name not in args.allowed:
                print("ok - report: %s skipped: %s" % (name, why.group(1)))
            else:
                ok = False
                print("not ok - report: %s skipped %s" % (name, "although its roles allow it" if why else
                                                          "without a reason"))
        elif '<a id="stage-%s"></a>' % anchor in text:
            print("ok - report: %s: %s" % (name, title))
        else:
            ok = False
            print("not ok - report: %s listed but its section is missing" % name)
    missing = [s for s in args.allowed if s not in [c[0] for c in contents]]
    for s in missing:
        print("not ok - report: %s, which the roles allow, is not in the run" % s)
    return ok and not missing


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    b = sub.add_parser("bounds", help="recompute I0/Ik closed forms from the records")
    b.add_argument("records")
    b.add_argument("tsv")
    b.add_argument("--cells", type=int, default=3, help="cells per source (default 3)")
    r = sub.add_parser("report", help="every stage reported, or skipped with its reason")
    r.add_argument("report")
    r.add_argument("--allowed", type=lambda s: [x for x in s.split(",") if x], default=[],
                   help="stages the store's roles allow: none of them may be skipped")
    args = ap.parse_args()
    ok = check_bounds(args) if args.what == "bounds" else check_report(args)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
