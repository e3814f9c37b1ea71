# The worked example (examples/fashion_mnist): real scikit-learn classifiers
# on Debian's Fashion-MNIST, their records ingested with roles and written
# directly with h5py, `pairbound run` on them, and the example's own checks
# (every stage the roles allow in REPORT.md; the threshold and the I0/Ik
# closed forms of 9 cells recomputed from the records in numpy).  Then what
# the example does not show: the two stores are equal as HDF5 files too; a
# store whose roles allow neither screen nor predict has both skipped with
# their reasons; `pairbound roles --set` on a store another program wrote
# with a narrow `roles` attribute; the records are the same on a second
# evaluation.
#
# Needs python3-sklearn, python3-numpy, python3-h5py, python3-xxhash and dataset-fashion-mnist
# (jobs/setup.sh installs them): without them the test fails, naming the
# package.  Under the sanitizers (PB_TEST_SANITIZERS=1) it runs at 200 test
# and 1,000 training images instead of 1,000 and 4,000: the sanitizers look
# for memory errors along code paths (a real CSV's ingest, a store h5py
# wrote, every stage on real records), which the smaller evaluation follows
# as well, and the default pipeline's verification costs several times more
# under them.
. "$TOP_SRCDIR/tests/mpi/common.sh"

EX=$TOP_SRCDIR/examples/fashion_mnist
if [ "${PB_TEST_SANITIZERS:-0}" = 1 ]; then IMAGES=200 TRAIN=1000; else IMAGES=1000 TRAIN=4000; fi
if [ -x /usr/bin/python3 ]; then PY=${PYTHON:-/usr/bin/python3}; else PY=${PYTHON:-python3}; fi
export PAIRBOUND PYTHON="$PY"
O="$WORK/fashion mnist"  # a blank in the path: the example quotes every path

check "run.sh: records, ingest with roles, check, the same records in both stores, pairbound run, its checks" \
  sh "$EX/run.sh" "$O" "$IMAGES" "$TRAIN"
check "the ingested and the h5py-written store are the same HDF5 contents" same_h5 "$O/ingested.h5" "$O/direct.h5"
check "REPORT.md opens with the findings" grep -q '^## Findings' "$O/run/REPORT.md"

# Roles that allow neither screen nor predict: no synthetic source.
cp "$O/direct.h5" "$WORK/allreal.h5"
check "roles --set on the h5py-written store" sh -c '"$1" roles "$2" --set fmnist-c=real | grep -qx "fmnist-c real (declared)"' \
  sh "$PAIRBOUND" "$WORK/allreal.h5"
printf '[run]\nsynth = none\nstore = %s\noutput = %s\nstages = bounds, screen, predict\n' \
  "$WORK/allreal.h5" "$WORK/skip" > "$WORK/skip.ini"
check "a run without a synthetic source exits 0" sh -c '"$1" -v 0 run "$2" > "$3"' sh "$PAIRBOUND" "$WORK/skip.ini" \
  "$WORK/skip.out"
check "the summary names screen's reason" grep -q '^skipped screen: no synthetic source shares images' "$WORK/skip.out"
check "the summary names predict's reason" grep -q '^skipped predict: the store has 0 synthetic sources' "$WORK/skip.out"
check "REPORT.md: bounds reported, screen and predict skipped with their reasons" \
  "$PY" "$EX/check.py" report "$WORK/skip/REPORT.md" --allowed bounds

# A store another program wrote with a `roles` attribute just wide enough for
# its roles: a longer role is not truncated (the attribute is replaced on a copy).
cp "$O/direct.h5" "$WORK/narrow.h5"
"$PY" - "$WORK/narrow.h5" << 'EOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r+") as f:
    roles = [r.decode() for r in f.attrs["roles"]]
    del f.attrs["roles"]
    t = h5py.h5t.C_S1.copy()
    t.set_size(10)
    t.set_strpad(h5py.h5t.STR_NULLTERM)
    data = np.array([r.encode() for r in roles], dtype="S10")
    h5py.h5a.create(f.id, b"roles", t, h5py.h5s.create_simple((len(roles),))).write(data, mtype=t)
EOF
check "roles --set a role longer than a narrow roles attribute" sh -c \
  '"$1" roles "$2" --set camera=extra:fmnist-c > /dev/null && "$1" roles "$2" | grep -qx "camera extra:fmnist-c (declared)"' \
  sh "$PAIRBOUND" "$WORK/narrow.h5"
check "that store still checks" sh -c '"$1" check "$2" > /dev/null' sh "$PAIRBOUND" "$WORK/narrow.h5"

# Deterministic: the same records from a second, small evaluation
for i in 1 2; do "$PY" "$EX/evaluate.py" "$WORK/small$i" --images 100 --train 500 2> /dev/null; done
check "evaluate.py writes the same records twice" cmp -s "$WORK/small1/records.csv" "$WORK/small2/records.csv"
finish
