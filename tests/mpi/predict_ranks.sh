# predict: byte-identical reports (out-of-fold predictions, intervals, deletion
# refits) and identical results.h5 for 1, 2, 3 ranks and 1, 2 threads; output
# shape; clear errors without output.
. "$TOP_SRCDIR/tests/mpi/common.sh"

pb 1 1 synth --config "$TOP_SRCDIR/tests/mpi/predict.ini" --no-summary -o "$WORK/s.h5"
args="--shuffles 3 --group-draws 300"
pb 1 1 predict "$WORK/s.h5" $args -o "$WORK/o11"
check "predict runs" test -s "$WORK/o11/report/predict.md"
reports="predict_features.tsv predict_sets.tsv predict_oof.tsv predict_deletion_oof.tsv predict_mae.tsv
  predict_gains.tsv predict_deletion.tsv predict_table43.tsv predict_table44.tsv predict_table45.tsv
  predict_table46.tsv predict_figure8.tsv predict.md"
ranks_identical "$reports" predict "$WORK/s.h5" $args
R="$WORK/o11/report"
check "features: 12 models x 2 feature x 2 target sources" test "$(($(wc -l < "$R/predict_features.tsv") - 1))" -eq 48
check "features: 36 columns" awk -F'\t' 'NF != 36 { bad = 1 } END { exit bad }' "$R/predict_features.tsv"
# 16 combinations x (20 single fits + 5 shuffle sets x 3 replicates) x 12 models
check "oof: one row per model and fit" test "$(($(wc -l < "$R/predict_oof.tsv") - 1))" -eq $((16 * 35 * 12))
# 16 combinations x 7 deletion sets x (5 groups x 12 models - 12 removed)
check "deletion oof: one row per retained model and refit" \
  test "$(($(wc -l < "$R/predict_deletion_oof.tsv") - 1))" -eq $((16 * 7 * 48))
check "oof: predictions and truths in [0, 100], lambda on the grid" awk -F'\t' 'NR > 1 {
  if ($9 < 0 || $9 > 100 || $10 < 0 || $10 > 100) bad = 1
  if ($8 != 0.1 && $8 != 0.3 && $8 != 1 && $8 != 3 && $8 != 10 && $8 != 30 && $8 != 100) bad = 1 } END { exit bad }' \
  "$R/predict_oof.tsv"
check "deletion oof: the removed group is never predicted" awk -F'\t' 'NR > 1 && $2 == $8 { bad = 1 } END { exit bad }' \
  "$R/predict_deletion_oof.tsv"
check "gains: intervals contain the estimate" awk -F'\t' 'NR > 1 && $12 != "nan" && ($10 < $11 - 1e-9 || $10 > $12 + 1e-9) { bad = 1 } END { exit bad }' \
  "$R/predict_gains.tsv"
check "verification: solvers agree to 1e-10 pp" awk '/largest difference from the Cholesky path/ {
  for (i = 1; i <= NF; i++) if ($i == "path") v = $(i + 1); ok = v + 0 <= 1e-10 } END { exit !ok }' "$R/predict.md"

# independent reconstruction from the states stage's per-cell counts: the
# a1 target pools counts over mild conditions; F and k average the per-cell
# rates over the feature source's conditions
pb 1 1 states "$WORK/s.h5" -o "$WORK/st"
check "a1 target = pooled (r + k) / n over mild conditions" awk -F'\t' '
  FNR == 1 { f++; for (i = 1; i <= NF; i++) h[f, $i] = i; next }
  f == 1 { if ($4 == "mild") { c[$1, $2] += $(h[1, "r"]) + $(h[1, "k"]); n[$1, $2] += $5 }
           fr[$1, $2] += ($(h[1, "h"]) + $(h[1, "r"]) + $(h[1, "w"])) / $5; kr[$1, $2] += $(h[1, "k"]) / $5; nc[$1, $2]++; next }
  { a = 100 * c[$1, $4] / n[$1, $4]; if (a - $(h[2, "a1"]) > 1e-9 || $(h[2, "a1"]) - a > 1e-9) bad = 1
    F = fr[$1, $3] / nc[$1, $3]; if (F - $(h[2, "F"]) > 1e-12 || $(h[2, "F"]) - F > 1e-12) bad = 1
    K = kr[$1, $3] / nc[$1, $3]; if (K - $(h[2, "k"]) > 1e-12 || $(h[2, "k"]) - K > 1e-12) bad = 1; rows++ }
  END { exit bad || rows != 48 }' "$WORK/st/report/states.tsv" "$R/predict_features.tsv"

# --help: every option of the usage lines is documented below them
"$PAIRBOUND" predict --help > "$WORK/h.txt"
check "predict --help exits 0" test $? -eq 0
for o in $(head -2 "$WORK/h.txt" | grep -o -- '--[a-z-]*' | sort -u); do
  check "predict --help documents $o" sh -c "tail -n +3 '$WORK/h.txt' | grep -q -- '$o'"
done
check "I.3: identification L pooled over mild cells equals the L_k targets" awk '/Common lost-acceptance target/ {
  for (i = 1; i <= NF; i++) if ($i == "to") v = $(i + 1); ok = v + 0 <= 1e-12 } END { exit !ok }' "$R/predict.md"

# bad input: a clear message, exit 1, no results
"$PAIRBOUND" -v 0 predict "$WORK/s.h5" --features Nope -o "$WORK/e1" 2> "$WORK/err1.txt"
check "unknown feature source: exit 1" test $? -eq 1
check "unknown feature source: message" grep -qF "the store has no source 'Nope'" "$WORK/err1.txt"
check "unknown feature source: no results" test ! -e "$WORK/e1/results.h5"
"$PAIRBOUND" -v 0 predict "$WORK/s.h5" --targets ES,,Diverse -o "$WORK/e2" 2> "$WORK/err2.txt"
check "empty source name: usage error" test $? -eq 2
"$PAIRBOUND" -v 0 predict "$WORK/s.h5" --features Syn,ES -o "$WORK/e3" 2> "$WORK/err3.txt"
check "a source both feature and target: exit 1 and message" grep -qF "source 'ES' is listed twice" "$WORK/err3.txt"
# a store with 3 groups: no deletion refits, and the report says so
pb 1 1 synth --scale small --no-summary -o "$WORK/small.h5"
pb 2 1 predict "$WORK/small.h5" --features Syn --shuffles 2 --group-draws 100 -o "$WORK/sm"
check "3 groups: runs without deletion refits" test "$(($(wc -l < "$WORK/sm/report/predict_deletion_oof.tsv")))" -eq 1
check "3 groups: report says why" grep -qF "fewer than 4 groups" "$WORK/sm/report/predict.md"
finish
