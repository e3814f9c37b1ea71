# Store layout and scale factor (docs/store.md "Layout", docs/synth.md "Scale factor"):
# record chunks are model slabs; a store written with the earlier one-row
# chunks reads to the same results; synth --scale-factor gives the expected
# dimensions and the same store at any rank count and from the INI key.
. "$TOP_SRCDIR/tests/mpi/common.sh"

# --scale-factor 2 on the small panel (5 models; Syn 20 classes x 6 images,
# 3 evaluation per class; 3,000 paired records): 10 models, 240 Syn images,
# 4 x 3,000 paired records
pb 1 1 synth --scale small --scale-factor 2 -o "$WORK/f11.h5" > "$WORK/f11.txt"
check "x2: 10 models" grep -qx 'models 10' "$WORK/f11.txt"
check "x2: Syn has 240 images" grep -qx 'source.Syn.images 240' "$WORK/f11.txt"
check "x2: Syn has 120 evaluation images" grep -qx 'source.Syn.eval_images 120' "$WORK/f11.txt"
check "x2: 4 x 3,000 paired records" grep -qx 'paired_records 12000' "$WORK/f11.txt"
check "x2: 170 cells" grep -qx 'cells 170' "$WORK/f11.txt"
h5dump -d /models/id "$WORK/f11.h5" > "$WORK/ids.txt"
check "x2: copies named ID~2 after the originals" \
  grep -q '"m-a1", "m-a2", "m-b1", "m-b2", "m-c1", "m-a1~2", "m-a2~2", "m-b1~2"' "$WORK/ids.txt"
h5dump -d /models/group "$WORK/f11.h5" > "$WORK/groups.txt"
check "x2: a copy keeps its model's group" grep -q '"alpha", "alpha", "beta", "beta", "gamma", "alpha", "alpha", "beta",' "$WORK/groups.txt"
for np in 2 3; do
  for th in 1 2; do
    pb "$np" "$th" synth --scale small --scale-factor 2 --no-summary -o "$WORK/f$np$th.h5"
    check "x2 store identical at $np ranks x $th threads" "$H5DIFF" "$WORK/f11.h5" "$WORK/f$np$th.h5"
  done
done
pb 1 1 synth --scale small --scale-factor 3x1 -o "$WORK/m3.h5" > "$WORK/m3.txt"
check "3x1: 15 models, 3 x 3,000 paired records" \
  sh -c "grep -qx 'models 15' '$WORK/m3.txt' && grep -qx 'paired_records 9000' '$WORK/m3.txt'"
pb 1 1 synth --scale small --scale-factor 1x3 -o "$WORK/i3.h5" > "$WORK/i3.txt"
check "1x3: 5 models, 360 Syn images, 3 x 3,000 paired records" sh -c "grep -qx 'models 5' '$WORK/i3.txt' && \
  grep -qx 'source.Syn.images 360' '$WORK/i3.txt' && grep -qx 'paired_records 9000' '$WORK/i3.txt'"
# the INI key is the same scaling (only the provenance text differs)
sed 's/^\[panel\]/[panel]\nscale_factor = 2/' "$TOP_SRCDIR/inputs/small.ini" > "$WORK/small2.ini"
pb 1 1 synth --config "$WORK/small2.ini" --no-summary -o "$WORK/ini2.h5"
check "scale_factor = 2 in [panel] is --scale-factor 2" \
  "$H5DIFF" --exclude-path /provenance "$WORK/f11.h5" "$WORK/ini2.h5"
check "scale factor 0 refused, naming the value" sh -c \
  "! '$PAIRBOUND' synth --scale small --scale-factor 0 -o '$WORK/z.h5' 2> '$WORK/z.err' && grep -q \"scale factor '0'\" '$WORK/z.err' && test ! -e '$WORK/z.h5'"
sed 's/^\[panel\]/[panel]\nscale_factor = 0/' "$TOP_SRCDIR/inputs/small.ini" > "$WORK/small0.ini"
check "scale_factor = 0 refused, naming file and line" sh -c \
  "! '$PAIRBOUND' synth --config '$WORK/small0.ini' -o '$WORK/z.h5' 2> '$WORK/z0.err' && grep -q \"small0.ini:5: scale factor '0'\" '$WORK/z0.err'"
check "scale factor 2x refused" sh -c "! '$PAIRBOUND' synth --scale small --scale-factor 2x -o '$WORK/z.h5' 2> /dev/null"

# Layout: every record dataset chunked by model slab, (1, conditions, images[, k])
h5dump -pH "$WORK/f11.h5" > "$WORK/layout.txt"
check "Syn records chunked (1, 4, 240): a model slab" grep -q "CHUNKED ( 1, 4, 240 )" "$WORK/layout.txt"
check "Syn top-k chunked (1, 4, 240, 3)" grep -q "CHUNKED ( 1, 4, 240, 3 )" "$WORK/layout.txt"
check "no one-row chunks" sh -c "! grep -q 'CHUNKED ( 1, 1, ' '$WORK/layout.txt'"
# the earlier layout (one row per chunk, Fletcher32), made with h5repack: same results
args=$(h5ls -r "$WORK/f11.h5" | awk '$2 == "Dataset" && $1 ~ /\/(pred|smax|ptrue|topk_class|topk_prob)$/ {
  d = $3 " " $4 " " $5 " " $6; gsub(/[{},]/, " ", d); n = split(d, v, " "); c = "1x1x" v[3]; if (n > 3) c = c "x" v[4]
  printf " -l %s:CHUNK=%s -f %s:FLET", $1, c, $1 }')
# shellcheck disable=SC2086 # args is a list of h5repack options
h5repack $args "$WORK/f11.h5" "$WORK/rows.h5"
h5dump -pH "$WORK/rows.h5" > "$WORK/rows.txt"
check "row-chunked copy made" grep -q "CHUNKED ( 1, 1, 240 )" "$WORK/rows.txt"
for np in 1 2; do
  pb "$np" 2 bounds "$WORK/f11.h5" -o "$WORK/bn$np"
  pb "$np" 2 bounds "$WORK/rows.h5" -o "$WORK/bo$np"
  check "bounds on a row-chunked store: same results at $np ranks" same_h5 "$WORK/bn$np/results.h5" "$WORK/bo$np/results.h5"
  check "bounds on a row-chunked store: same tables at $np ranks" diff -r "$WORK/bn$np/report" "$WORK/bo$np/report"
done
pb 2 1 export "$WORK/rows.h5" -o "$WORK/rows.csv"
pb 1 1 export "$WORK/f11.h5" -o "$WORK/f11.csv"
check "export of a row-chunked store identical" cmp -s "$WORK/rows.csv" "$WORK/f11.csv"
finish
