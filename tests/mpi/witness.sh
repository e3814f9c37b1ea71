# bounds --witnesses and verify --witnesses (docs/bounds.md and docs/verify.md,
# "Witnesses"): the witnesses pass verify on the small synthetic store and on
# an ingested store of 75 records per class; a witness with one pair swapped
# fails, naming cell, class, level and end; the h5py checker of docs/verify.md
# (docs/witness_check.py, included there verbatim) agrees.
. "$TOP_SRCDIR/tests/mpi/common.sh"
if [ -x /usr/bin/python3 ]; then PY=${PYTHON:-/usr/bin/python3}; else PY=${PYTHON:-python3}; fi
have_h5py=1
"$PY" -c 'import h5py, numpy' 2> /dev/null || { have_h5py=0; echo "# h5py missing: the Python checks are skipped"; }
SCRIPT="$TOP_SRCDIR/docs/witness_check.py"

check "docs/verify.md includes docs/witness_check.py verbatim" sh -c \
  "awk '/^<!-- witness_check.py -->/ {on = 1; getline; next} on && /^\`\`\`\$/ {exit} on' '$TOP_SRCDIR/docs/verify.md' | cmp -s - '$SCRIPT'"
check "docs/witness_check.py: at most 20 lines" test "$(wc -l < "$SCRIPT")" -le 20

# witnesses STORE OUT [ARGS]: bounds --witnesses ARGS, then verify --witnesses $VARGS and the Python checker pass
VARGS=""
witnesses() {
  local s=$1 o=$2; shift 2
  pb 1 2 bounds "$s" --witnesses "$@" -o "$o"
  check "$o: bounds --witnesses" test -s "$o/results.h5"
  # shellcheck disable=SC2086 # VARGS is a list of words
  pb 2 1 verify "$s" --witnesses "$o/results.h5" $VARGS -o "$o.v"
  check "$o: verify --witnesses passes" test $? -eq 0
  [ "$have_h5py" = 1 ] || return 0
  check "$o: docs/witness_check.py passes" "$PY" "$SCRIPT" "$s" "$o/results.h5"
}

pb 1 1 synth --scale small --no-summary -o "$WORK/s.h5"
witnesses "$WORK/s.h5" "$WORK/b" --i5 all
# default --i5 (the panel): cells outside it have no I5 witness, and verify says so
witnesses "$WORK/s.h5" "$WORK/bp"
# the small store has label sets (ES, Diverse), so the two above are of labels = set: single labels too,
# and verify refuses witnesses of the other convention
VARGS="--labels single" witnesses "$WORK/s.h5" "$WORK/b1" --i5 all --labels single
out=$(OMP_NUM_THREADS=1 mpi_launch 1 "$PAIRBOUND" -v 0 verify "$WORK/s.h5" --witnesses "$WORK/b1/results.h5" \
      -o "$WORK/vx" 2>&1)
check "verify refuses witnesses of labels = single under set" sh -c "printf '%s' \"\$1\" | \
  grep -qF 'b1/results.h5: its witnesses are of labels = single, this run judges correctness by labels = set: give --labels single'" _ "$out"
out=$(OMP_NUM_THREADS=1 mpi_launch 1 "$PAIRBOUND" -v 1 verify "$WORK/s.h5" --witnesses "$WORK/b/results.h5" \
      -o "$WORK/v1" 2>&1)
check "verify --witnesses: 4 witnesses per cell, 85 cells" sh -c "printf '%s' \"\$1\" | grep -q '340 checked (0 I5 ones absent'" _ "$out"

# an ingested store: 2 models, 3 classes of 75 evaluation images, 2 perturbed conditions, 5 labels
awk 'BEGIN { srand(43); print "model,group,source,condition,image,label,split,pred,smax,ptrue"
  for (m = 1; m <= 2; m++) for (c = 0; c < 3; c++) { cond = c == 0 ? "clean" : "cond" c
    for (i = 0; i < 225; i++) { y = int(i / 75); p = rand() < 0.6 ? y : (y + 1 + int(rand() * 4)) % 5
      s = 0.2 + 0.8 * rand(); printf "m%d,g%d,S,%s,img%03d,%d,eval,%d,%.4f,%.4f\n", m, m, cond, i, y, p, s, p == y ? s : s / 3 } } }' \
  > "$WORK/c75.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/c75.csv" -o "$WORK/c75.h5"
VARGS="--tau 0.6" witnesses "$WORK/c75.h5" "$WORK/c" --tau 0.6 --i5 all
check "ingested store: 4 cells x 225 records of witnesses" test "$(h5ls "$WORK/c/results.h5/bounds/witnesses/I5_lo" | grep -c '{900}')" -eq 1

# mutations: verify names cell, class, level and end; exit 1
fails() { # fails DESCRIPTION FILE PATTERN
  pb 1 1 verify "$WORK/s.h5" --witnesses "$2" -o "$WORK/vbad" 2> "$WORK/err.txt"
  check "$1: verify exits 1" test $? -eq 1
  check "$1: the message" grep -qE "$3" "$WORK/err.txt"
}
cp "$WORK/b/results.h5" "$WORK/m1.h5"
"$H5POKE" "$WORK/m1.h5" /bounds/witnesses/Ik_hi 3 60 > /dev/null
fails "a partner outside the cell" "$WORK/m1.h5" \
  "witness check failed.*cell m-a1/Syn/fog-2, class [0-9]+: witness Ik_hi \(H at Ik, upper end\): clean record 3 is paired with 60"
cp "$WORK/b/results.h5" "$WORK/m3.h5"
"$H5POKE" "$WORK/m3.h5" /bounds/cells/H_Ik_hi 0 0.5 > /dev/null
fails "an end changed in the file" "$WORK/m3.h5" \
  "cell m-a1/Syn/fog-2: witness Ik_hi \(H at Ik, upper end\): the witness has H = [0-9]+/60 = .*, the file 0.5 \(every class attains its own end"
if [ "$have_h5py" = 1 ]; then
  # swap the partners of two records of one class so that its k and s stay and its H count changes
  cp "$WORK/b/results.h5" "$WORK/m2.h5"
  "$PY" - "$WORK/s.h5" "$WORK/m2.h5" > "$WORK/swap.txt" << 'PYEOF'
import sys, h5py, numpy as np
st, f = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r+")
W, names = f["bounds/witnesses"], st["source_names"].asstr()[:]
for c in range(len(W["offset"])):
    g = st["sources"][names[W["source"][c]]]
    ev = g["split"][:] == 1; y = g["label"][:][ev]; m, k, cl = W["model"][c], W["condition"][c], g.attrs["clean_index"]
    p0, s0, p1, s1, tau = g["pred"][m, cl][ev], g["smax"][m, cl][ev], g["pred"][m, k][ev], g["smax"][m, k][ev], f["bounds/cells/tau"][c]
    o, n = W["offset"][c], W["n"][c]
    p = W["I5_hi"][o:o + n]
    st5 = lambda i, j: (p0[i] == y[i] and p1[j] == y[i], p0[i] != y[i] and p1[j] != y[i] and p0[i] == p1[j],
                        p0[i] == y[i] and s0[i] >= tau and p1[j] != y[i] and s1[j] >= tau)
    for i in range(n):
        for j in range(n):
            a, b = np.add(st5(i, p[i]), st5(j, p[j])), np.add(st5(i, p[j]), st5(j, p[i]))
            if y[i] == y[j] and a[0] == b[0] and a[1] == b[1] and a[2] != b[2]:
                d = W["I5_hi"]; v = d[:]; v[o + i], v[o + j] = v[o + j], v[o + i]; d[:] = v
                print(c, st["models/id"].asstr()[m] + "/" + names[W["source"][c]] + "/" + g["condition"].asstr()[k], y[i]); sys.exit(0)
sys.exit(1)
PYEOF
  check "a swap that changes H found" test -s "$WORK/swap.txt"
  read -r mc mcell mclass < "$WORK/swap.txt"
  fails "one pair swapped" "$WORK/m2.h5" \
    "cell $mcell, class $mclass: witness I5_hi \(H at I5, upper end\): the witness has H count"
  "$PY" "$SCRIPT" "$WORK/s.h5" "$WORK/m2.h5" > "$WORK/py.txt"
  check "docs/witness_check.py: the swap fails" test $? -eq 1
  check "docs/witness_check.py: names the cell and witness" grep -q "^cell $mc I5_hi" "$WORK/py.txt"
fi
finish
