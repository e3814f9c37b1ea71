# synth's entropy and collision of every record against an independent numpy
# recomputation from the vector docs/synth.md defines (synth_summaries.py),
# to one float32 step: the small panel (top-3 lists, half precision, 20 and
# 12 classes, at 2 ranks) and a 3-class panel without lists in float32.
# Skipped (77) without h5py.
. "$TOP_SRCDIR/tests/mpi/common.sh"

/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "# skipped: /usr/bin/python3 without h5py"; exit 77; }
pb 2 1 synth --config "$TOP_SRCDIR/inputs/small.ini" -o "$WORK/small.h5" > /dev/null
check "small panel: every summary recomputed" /usr/bin/python3 "$TOP_SRCDIR/tests/mpi/synth_summaries.py" "$WORK/small.h5" 1
cat > "$WORK/three.ini" <<'INI'
[panel]
seed = 7
topk = 0
half_precision = 0
[groups]
g = 0
[models]
m1 = g
m2 = g
[source S]
image_prefix = im
classes = 3
images_per_class = 30
dev_per_class = 15
clean_accuracy = 0.6
conditions = fog:0.4, snow:0.3
INI
pb 1 1 synth --config "$WORK/three.ini" -o "$WORK/three.h5" > /dev/null
check "3 classes, no lists, float32: every summary recomputed" \
  /usr/bin/python3 "$TOP_SRCDIR/tests/mpi/synth_summaries.py" "$WORK/three.h5" 0
finish
