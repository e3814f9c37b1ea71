# Label sets (docs/protocol.md, "Label sets"; docs/bounds.md, "Label sensitivity"): on the small synthetic
# store (sets on ES and Diverse), Tables 47 and 48 are written under either `labels` convention, are the same
# in both, pass Eq. 15 on every cell, and bounds' outputs are byte-identical at 1 to 3 ranks under sets;
# Appendix J.1's splits (label_splits.tsv) and restricted dM_k (label_states.tsv) agree with Table 47;
# every markdown report names the convention.  verify's Appendix J table (docs/verify.md, "Label sets"):
# byte-identical at 1 to 3 ranks, the same under both conventions, every enumerated class agreeing at Ik and
# I5, and under sets the same counts as verify's own enumeration through the reader's map; synth's law of the
# sets (docs/synth.md) on a large synthetic source and screen's class lookups under sets (stored predictions,
# commit 61c9b85; tests/mpi/lsets_screen.py), with h5py.
. "$TOP_SRCDIR/tests/mpi/common.sh"

pb 1 1 synth --scale small --no-summary -o "$WORK/s.h5"
pb 1 1 bounds "$WORK/s.h5" --labels set -o "$WORK/o11"
ranks_identical "label_sensitivity.tsv label_states.tsv label_splits.tsv bounds.tsv REPORT.md" bounds "$WORK/s.h5" --labels set
pb 2 1 bounds "$WORK/s.h5" --labels single -o "$WORK/single"
for f in label_sensitivity.tsv label_states.tsv label_splits.tsv; do
  check "$f: the same under labels = single and set" cmp -s "$WORK/o11/report/$f" "$WORK/single/report/$f"
done
check "Table 47: one row per source with sets (ES, Diverse)" \
  test "$(cut -f1 "$WORK/o11/report/label_sensitivity.tsv" | tr '\n' ' ')" = "source ES Diverse "
check "Table 48: Eq. 15 checked on every cell, none failing" awk -F'\t' '
  NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  { if ($(c["eq15_cells"]) <= 0 || $(c["eq15_failing"]) != 0) bad = 1
    # shares of the five states add to 100, k = k_equal + k_different, original k_different = 0
    t = $(c["h"]) + $(c["r"]) + $(c["k"]) + $(c["s"]) + $(c["w"])
    if (t < 100 - 1e-9 || t > 100 + 1e-9) bad = 1
    d = $(c["k"]) - $(c["k_equal"]) - $(c["k_different"]); if (d < -1e-9 || d > 1e-9) bad = 1
    if ($(c["labels"]) == "original" && $(c["k_different"]) != 0) bad = 1 }
  END { exit bad || NR != 5 }' "$WORK/o11/report/label_states.tsv"
# J.1's splits against Table 47: every matched image candidate-compatible (set ids are classes of the source),
# retained + removed = matched, each split's two delta parts add up to Table 47's delta
check "J.1 splits: compatible = matched, incompatible 0, retained + removed = matched, delta parts add up" awk -F'\t' '
  FNR == 1 { for (i = 1; i <= NF; i++) c[FILENAME, $i] = i; next }
  FILENAME ~ /sensitivity/ { m[$1] = $(c[FILENAME, "matched_images"]); d[$1] = $(c[FILENAME, "delta_pp"]); next }
  { src = $1; sp = $(c[FILENAME, "split"]); g = $(c[FILENAME, "subgroup"]); n = $(c[FILENAME, "images"])
    rows++; img[src, sp] += n; dd[src, sp] += $(c[FILENAME, "delta_pp"])
    if (g == "compatible" && n != m[src]) bad = 1
    if (g == "incompatible" && n != 0) bad = 1 }
  END { for (s in m) for (k = 0; k < 2; k++) { sp = k ? "label" : "candidate"
          if (img[s, sp] != m[s]) bad = 1
          e = dd[s, sp] - d[s]; if (e < -1e-9 || e > 1e-9) bad = 1 }
        exit bad || rows != 8 }' "$WORK/o11/report/label_sensitivity.tsv" "$WORK/o11/report/label_splits.tsv"
check "restricted dM_k: defined on cells, set - original = the change" awk -F'\t' '
  NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  { if ($(c["dMk_cells"]) <= 0) bad = 1
    if ($(c["labels"]) == "original") { o = $(c["dMk_retained"]); if ($(c["dMk_change"]) != "nan") bad = 1; next }
    e = $(c["dMk_retained"]) - o - $(c["dMk_change"]); if (e < -1e-9 || e > 1e-9) bad = 1 }
  END { exit bad || NR != 5 }' "$WORK/o11/report/label_states.tsv"
check "REPORT.md under sets names the convention" grep -q '^Correctness: label sets' "$WORK/o11/report/REPORT.md"
check "REPORT.md under single labels names the convention" grep -q '^Correctness: single labels' "$WORK/single/report/REPORT.md"
pb 1 2 screen "$WORK/s.h5" --labels set -o "$WORK/screen"
check "screen.md names the convention" grep -q '^Correctness: label sets' "$WORK/screen/report/screen.md"
if [ -x /usr/bin/python3 ]; then PY=${PYTHON:-/usr/bin/python3}; else PY=${PYTHON:-python3}; fi
if "$PY" -c 'import h5py, numpy' 2> /dev/null; then
  check "screen under sets: margin and TTA agreement from the stored predictions, not the map" \
    "$PY" "$TOP_SRCDIR/tests/mpi/lsets_screen.py" "$WORK/s.h5" "$WORK/screen/results.h5"
else
  echo "# h5py missing: screen's stored-prediction lookups are not checked"
fi
# verify under label sets, in its own directory (ranks_identical writes $WORK/o*)
BWORK=$WORK WORK=$WORK/v
mkdir "$WORK"
pb 1 1 verify "$BWORK/s.h5" --labels single -o "$WORK/o11"
ranks_identical "verify_label_sets.tsv verify.tsv REPORT.md" verify "$BWORK/s.h5" --labels single
pb 2 1 verify "$BWORK/s.h5" --labels set -o "$WORK/set"
check "verify_label_sets.tsv: the same under labels = single and set" \
  cmp -s "$WORK/o11/report/verify_label_sets.tsv" "$WORK/set/report/verify_label_sets.tsv"
check "verify_label_sets.tsv: one row per source with sets (ES, Diverse)" \
  test "$(cut -f1 "$WORK/o11/report/verify_label_sets.tsv" | tr '\n' ' ')" = "source ES Diverse "
check "verify_label_sets.tsv: enumerated = classes - larger, all agreeing at Ik and I5, narrower <= enumerated" awk -F'\t' '
  NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  { e = $(c["enumerated"])
    if ($(c["cells"]) <= 0 || e <= 0 || e != $(c["classes"]) - $(c["larger_than_max_class"])) bad = 1
    if ($(c["L_dMk_equal_Ik_I5"]) != e || $(c["H_narrower_I5"]) > e) bad = 1 }
  END { exit bad || NR != 3 }' "$WORK/o11/report/verify_label_sets.tsv"
# under sets verify's main enumeration reads the reader's mapped predictions: per source the same classes and
# narrower H as the table's own mapping of the stored predictions
per_source() { # FILE COLUMN...: "source v1 v2 ..." per source, summed over verify.tsv's rows
  local f=$1; shift
  awk -F'\t' -v want="$*" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; n = split(want, w, " "); next }
    { for (j = 1; j <= n; j++) t[$(c["source"]), j] += $(c[w[j]]); seen[$(c["source"])] = 1 }
    END { for (s in seen) { l = s; for (j = 1; j <= n; j++) l = l " " t[s, j]; print l } }' "$f" | sort
}
check "under sets, verify.tsv's enumerated classes and narrower H per source are the table's" test \
  "$(per_source "$WORK/set/report/verify.tsv" classes_enumerated H_I5_narrower_classes | grep -E '^(ES|Diverse) ')" = \
  "$(awk -F'\t' 'NR > 1 { print $1, $4, $7 }' "$WORK/o11/report/verify_label_sets.tsv" | sort)"
check "REPORT.md: the label-set line and table" sh -c "grep -q '^- label sets (Appendix J' '$WORK/o11/report/REPORT.md' &&
  grep -q '^### Enumeration under label sets' '$WORK/o11/report/REPORT.md'"
WORK=$BWORK
# synth's law of the sets (docs/synth.md, "Label sets") on 20,000 images with label_sets = 0.4, read from the
# store's CSR datasets: 5% empty; of the others 10% without the original label (1-2 labels); of the rest the
# share p with 2-3 labels, the others {y} alone; each share within 4 binomial standard deviations
if "$PY" -c 'import h5py, numpy' 2> /dev/null; then
  printf '%s\n' '[panel]' 'seed = 7' 'topk = 3' '[groups]' 'a = 0.0' '[models]' 'm1 = a' '[source R]' \
    'role = synthetic' 'base = r' 'label_sets = 0.4' 'image_prefix = r' 'classes = 400' 'images_per_class = 50' \
    'dev_per_class = 25' 'clean_accuracy = 0.8' 'conditions = fog-2:0.6' > "$WORK/law.ini"
  pb 1 1 synth --config "$WORK/law.ini" --no-summary -o "$WORK/law.h5"
  check "synth's label sets follow the documented shares (4 sd)" "$PY" - "$WORK/law.h5" <<'PYEOF'
import sys, h5py, numpy as np
g = h5py.File(sys.argv[1], "r")["sources/R"]
y, off, ids = g["label"][:], g["label_set_offsets"][:], g["label_set_ids"][:]
n = np.diff(off)
has_y = np.array([y[i] in ids[off[i]:off[i + 1]] for i in range(len(y))])
def within(what, x, m, q):  # x successes of m trials, probability q: |x - m q| <= 4 sd
    sd = (m * q * (1 - q)) ** 0.5
    ok = abs(x - m * q) <= 4 * sd
    print(f"{what}: {x} of {m}, expected {m * q:.1f} +- {4 * sd:.1f}: {'ok' if ok else 'FAIL'}")
    return ok
empty, absent, withy = n == 0, (n > 0) & ~has_y, (n > 0) & has_y
ok = within("empty", empty.sum(), len(y), 0.05)
ok &= within("original absent | nonempty", absent.sum(), (n > 0).sum(), 0.10)
ok &= within("2-3 labels | original present", (withy & (n >= 2)).sum(), withy.sum(), 0.4)
shape = np.all((n[absent] >= 1) & (n[absent] <= 2)) and np.all(n[withy] <= 3)
print("absent sets have 1-2 labels, sets with the original at most 3:", shape)
sys.exit(0 if ok and shape else 1)
PYEOF
else
  echo "# h5py missing: synth's label-set law is not checked"
fi
# a store without sets: no tables, no line
H=model,group,source,condition,image,label,split,pred,smax,ptrue
printf '%s\n' "$H" 'm1,g,S,clean,i1,0,eval,0,0.9,0.9' 'm1,g,S,clean,i2,0,eval,0,0.6,0.6' \
  'm1,g,S,fog,i1,0,eval,0,0.6,0.6' 'm1,g,S,fog,i2,0,eval,1,0.8,0.2' > "$WORK/e.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/e.csv" -o "$WORK/e.h5"
pb 1 1 bounds "$WORK/e.h5" --tau 0.5 -o "$WORK/nosets"
check "no sets: no Table 47" test ! -e "$WORK/nosets/report/label_sensitivity.tsv"
check "no sets: no convention line" sh -c "! grep -q '^Correctness:' '$WORK/nosets/report/REPORT.md'"
pb 1 1 verify "$WORK/e.h5" --tau 0.5 -o "$WORK/vnosets"
check "no sets: no verify_label_sets.tsv" test ! -e "$WORK/vnosets/report/verify_label_sets.tsv"
check "no sets: no label-set line in verify's REPORT.md" sh -c "! grep -q 'label sets' '$WORK/vnosets/report/REPORT.md'"
# the protocol under sets (docs/protocol.md): images without a set are neither development nor evaluation
# images, so n_dev and the development accuracies count development images with a set only (small.ini at
# four times its images has development images without a set; the small store by chance has none)
if /usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null; then
  awk '{ print } /^\[panel\]/ { print "scale_factor = 1x4" }' "$TOP_SRCDIR/inputs/small.ini" > "$WORK/s4.ini"
  pb 1 1 synth --config "$WORK/s4.ini" --no-summary -o "$WORK/s4.h5"
  pb 2 1 protocol "$WORK/s4.h5" --labels set -o "$WORK/p4"
  check "protocol under sets: n_dev and development accuracies recomputed from the store" /usr/bin/python3 \
    "$TOP_SRCDIR/tests/mpi/lsets_protocol.py" "$WORK/s4.h5" "$WORK/p4/report/protocol_conditions.tsv" \
    "$WORK/p4/report/protocol_thresholds.tsv"
  # fragility under sets: an image without a set is in no part (fit, rate, evaluation) of any arm
  pb 1 2 fragility "$WORK/s4.h5" --labels single -o "$WORK/f4single"
  pb 1 2 fragility "$WORK/s4.h5" --labels set -o "$WORK/f4set"
  /usr/bin/python3 -c 'import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
for s in ("ES", "Diverse"): print(s, int((np.diff(f["sources"][s]["label_set_offsets"][:]) == 0).sum()))' "$WORK/s4.h5" > "$WORK/empty.txt"
  check "fragility under sets: each arm of ES and Diverse leaves out exactly their images without a set" awk -F'\t' '
    FILENAME ~ /empty/ { e[$1] = $2 + 0; next }
    FNR == 1 { next }
    $2 != "ES" && $2 != "Diverse" { next }
    FILENAME ~ /f4single/ { n[$1, $2, $3] = $4 + $5 + $6; next }
    { rows++; if (e[$2] == 0 || $4 + $5 + $6 != n[$1, $2, $3] - e[$2]) bad = 1 }
    END { exit bad || rows == 0 }' FS=' ' "$WORK/empty.txt" FS='\t' "$WORK/f4single/report/fragility.tsv" "$WORK/f4set/report/fragility.tsv"
fi
finish
