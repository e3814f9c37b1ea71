# fragility --study known-propensity: byte-identical reports and identical
# results.h5 for 1, 2, 3 ranks and 1, 2 threads; output shape; a different
# seed changes the draws; usage errors exit 2 with no output.
. "$TOP_SRCDIR/tests/mpi/common.sh"

pb 1 1 fragility --study known-propensity --replicates 40 -o "$WORK/o11"
R="$WORK/o11/report"
check "study runs" test -s "$R/known_propensity.tsv"
ranks_identical "known_propensity.tsv known_propensity_laws.tsv known_propensity_seed.tsv witness_laws.tsv nested_readouts.tsv nested_finite.tsv REPORT.md" \
  fragility --study known-propensity --replicates 40
# 10 designs (3 laws x n 250, 5000; B/16 x 250, 5000; 30-label B, C) x 2 directions x 7 radii
check "one row per design, direction and radius" test "$(($(wc -l < "$R/known_propensity.tsv") - 1))" -eq 140
check "header as documented" sh -c "head -1 '$R/known_propensity.tsv' | grep -q '^law	arm	direction	n	min_labels	rho	replicates	cells_kept	truth	cap_population	plugin_mean	plugin_bias	plugin_mae	plugin_rel_mae	plugin_rmse	cap_mean	cap_bias	cap_mae	cap_rel_mae	cap_rmse$'"
check "radii 0 .. 3 and 40 replicates in every row" awk -F'\t' 'NR > 1 { seen[$6]++; if ($7 != 40) bad = 1 }
  END { if (length(seen) != 7 || !(0 in seen) || !(3 in seen) || !(0.03 in seen)) bad = 1; exit bad }' "$R/known_propensity.tsv"
# law B at rho = 3 (up): truth 0.255 (docs/fragility.md), capped law of the true law min(sqrt(3 G), 0.351) = 0.3451
check "law B truth and population cap at rho = 3" awk -F'\t' '$1 == "B" && $3 == "up" && $6 == 3 {
  n++; if ($9 - 0.255 > 1e-9 || 0.255 - $9 > 1e-9 || $10 < 0.3450 || $10 > 0.3452) bad = 1 } END { exit bad || n != 3 }' \
  "$R/known_propensity.tsv"
# the 30-label rule at n = 250 drops B's two endpoints (25 labels each) and C's hard cell (13 labels)
check "30-label arm keeps 2 cells of B and 3 of C" awk -F'\t' '$2 == "min30" { k[$1] = $8 } END { exit !(k["B"] == 2 && k["C"] == 3) }' \
  "$R/known_propensity.tsv"
check "MAE >= |bias|, RMSE >= MAE" awk -F'\t' 'NR > 1 { for (c = 12; c <= 17; c += 5) {
  b = $c < 0 ? -$c : $c; if ($(c + 1) < b - 1e-12 || $(c + 3) < $(c + 1) - 1e-12) bad = 1 } } END { exit bad }' \
  "$R/known_propensity.tsv"
# U.2: 3 laws x 2 orders x 5 readout sizes x 4 radii
check "nested_readouts.tsv: 120 rows" test "$(($(wc -l < "$R/nested_readouts.tsv") - 1))" -eq 120
# U.2's finite-sample part: 3 laws x 2 n x 5 readout sizes x 4 radii; K = 1 has no spread
check "nested_finite.tsv: 120 rows" test "$(($(wc -l < "$R/nested_finite.tsv") - 1))" -eq 120
check "nested_finite.tsv: K = 1 estimates 0 exactly" awk -F'\t' 'NR > 1 && $3 == 1 && ($9 != 0 || $11 != 0) { bad = 1 } END { exit bad }' "$R/nested_finite.tsv"
check "results.h5 has /fragility/study" sh -c "h5ls -r '$WORK/o11/results.h5' | grep -q '^/fragility/study/plugin_mae'"
check "REPORT.md has the seed's values" grep -q "| plug-in MAE | B | primary | 250 | 3 | 0.022 |" "$R/REPORT.md"
pb 1 1 fragility --study known-propensity --replicates 40 --seed 7 -o "$WORK/s7"
check "--seed changes the draws" sh -c "! cmp -s '$R/known_propensity.tsv' '$WORK/s7/report/known_propensity.tsv'"

"$PAIRBOUND" -v 0 fragility --study known-propensity --bins 4 -o "$WORK/e1" 2> "$WORK/err1.txt"
check "store option with --study: exit 2" test $? -eq 2
check "store option with --study: message" grep -q "store options other than --seed are not taken with --study" "$WORK/err1.txt"
check "store option with --study: no output" test ! -e "$WORK/e1"
"$PAIRBOUND" -v 0 fragility --study nope -o "$WORK/e2" 2> "$WORK/err2.txt"
check "unknown study: exit 2" test $? -eq 2
check "unknown study: message" grep -q -- "--study takes known-propensity" "$WORK/err2.txt"
"$PAIRBOUND" -v 0 fragility --study known-propensity 2> "$WORK/err3.txt"
check "study without -o: exit 2" test $? -eq 2
"$PAIRBOUND" -v 0 fragility "$WORK/none.h5" --replicates 5 -o "$WORK/e4" 2> "$WORK/err4.txt"
check "--replicates without --study: exit 2" test $? -eq 2
check "--replicates without --study: message" grep -q -- "--replicates needs --study known-propensity" "$WORK/err4.txt"
finish
