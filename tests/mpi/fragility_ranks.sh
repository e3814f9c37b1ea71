# fragility STORE: byte-identical reports and identical results.h5 for 1, 2, 3
# ranks and 1, 2 threads; output shape; exact additivity of the drift split;
# clear errors with no output.
. "$TOP_SRCDIR/tests/mpi/common.sh"

pb 1 1 synth --config "$TOP_SRCDIR/tests/mpi/screen.ini" --no-summary -o "$WORK/s.h5"
pb 1 1 fragility "$WORK/s.h5" --null 20 -o "$WORK/o11"
check "fragility runs" test -s "$WORK/o11/report/fragility.tsv"
reports="fragility.tsv fragility_drift.tsv fragility_sources.tsv fragility_drift_summary.tsv fragility_spearman.tsv
  fragility_profiles.tsv fragility_drift_tiers.tsv fragility.md fragility_selective.tsv fragility_merges.tsv
  fragility_score_only.tsv fragility_selective_summary.tsv fragility_merges_summary.tsv fragility_score_only_summary.tsv
  fragility_drift_flagged.tsv fragility_drift_flagged_summary.tsv fragility_metric_spearman.tsv fragility_ece_pairs.tsv
  fragility_random.tsv fragility_random_summary.tsv fragility_random_radius.tsv fragility_tempered.tsv
  fragility_random_quartiles.tsv fragility_variance_auc.tsv fragility_variance_auc_summary.tsv fragility_qmap.tsv
  fragility_qmap_ties.tsv fragility_qmap_summary.tsv fragility_qmap_ties_summary.tsv"
ranks_identical "$reports" fragility "$WORK/s.h5" --null 20
T="$WORK/o11/report/fragility.tsv"
D="$WORK/o11/report/fragility_drift.tsv"
check "fragility.tsv header starts as specified" sh -c "head -1 '$T' | grep -q '^model	source	arm	n_fit	n_rate	n_eval	bins	groups	G_R	G_R_corrected	FAUC_up	FAUC_down	rho_plus	profile_up_rho0.3	lcb_rho0.3'"
check "fragility.tsv has profile_up_0.01 ... profile_up_3" sh -c "head -1 '$T' | grep -q 'profile_up_0.01	' && head -1 '$T' | grep -q 'profile_up_3	'"
models=$("$PAIRBOUND" info "$WORK/s.h5" | awk '$1 == "models" { print $2 }')
sources=$("$PAIRBOUND" info "$WORK/s.h5" | awk '$1 == "sources" { print $2 }')
cells=$("$PAIRBOUND" info "$WORK/s.h5" | awk '$1 == "cells" { print $2 }')
check "fragility.tsv: one row per model, source and arm" test "$(($(wc -l < "$T") - 1))" -eq $((models * sources * 2))
check "fragility_drift.tsv: one row per cell" test "$(($(wc -l < "$D") - 1))" -eq "$cells"
check "drift additivity residual <= 1e-12 everywhere" awk -F'\t' 'NR > 1 && ($14 == "nan" || $14 > 1e-12) { bad = 1 } END { exit bad }' "$D"
check "G_R_corrected <= G_R, LCB >= 0, FAUC >= 0" awk -F'\t' 'NR > 1 && ($10 > $9 || $15 < 0 || $11 < 0 || $12 < 0) { bad = 1 } END { exit bad }' "$T"
# the diagnostics (seed 001 K, U.3, J.2): shapes, and their summaries recounted from the rows
SEL="$WORK/o11/report/fragility_selective.tsv"
check "fragility_selective.tsv: 2 coverages x 13 radii per model, source and arm" test "$(($(wc -l < "$SEL") - 1))" -eq $((models * sources * 2 * 26))
check "fragility_merges.tsv: 4 levels (8, 4, 2, 1 groups) per model, source and arm" test "$(($(wc -l < "$WORK/o11/report/fragility_merges.tsv") - 1))" -eq $((models * sources * 2 * 4))
# columns: selective 11 realised_increase, 8 envelope_increase, 12 excess; summary 3 cells, 4 above_envelope
awk -F'\t' 'NR > 1 && $11 != "nan" && $8 != "nan" { n[$2 " " $3]++; if ($12 > 0) k[$2 " " $3]++ }
  END { for (u in n) print u, n[u], k[u] + 0 }' "$SEL" | sort > "$WORK/sel_rows.txt"
awk -F'\t' 'NR > 1 { print $1, $2, $3, $4 }' "$WORK/o11/report/fragility_selective_summary.tsv" | sort > "$WORK/sel_sum.txt"
check "selective summary: cells and cells above the envelope recounted from the rows" cmp "$WORK/sel_rows.txt" "$WORK/sel_sum.txt"
awk -F'\t' 'NR > 1 { print $1, $2, $3, $11 }' "$T" > "$WORK/fauc.txt"
awk -F'\t' 'NR > 1 && $4 == 8 { print $1, $2, $3, $7 }' "$WORK/o11/report/fragility_merges.tsv" > "$WORK/fauc_m.txt"
awk -F'\t' 'NR > 1 { print $1, $2, $3, $8 }' "$WORK/o11/report/fragility_score_only.tsv" > "$WORK/fauc_j.txt"
check "fragility_drift_flagged.tsv: one row per cell" test "$(($(wc -l < "$WORK/o11/report/fragility_drift_flagged.tsv") - 1))" -eq "$cells"
# similar-ECE pairs recounted from fragility.tsv (columns 2 source, 3 arm, 9 G_R, 11 FAUC_up, 16 ece)
awk -F'\t' 'NR > 1 { k = $2 " " $3; n[k]++; e[k, n[k]] = $16; g[k, n[k]] = $9; f[k, n[k]] = $11 }
  END { for (k in n) { p = 0; for (i = 1; i <= n[k]; i++) for (j = i + 1; j <= n[k]; j++) {
          d = e[k, i] - e[k, j]; if (d < 0) d = -d; if (d <= 0.005) p++ }
        print k, p } }' "$T" | sort > "$WORK/pairs_rows.txt"
awk -F'\t' 'NR > 1 { print $1, $2, $7 }' "$WORK/o11/report/fragility_metric_spearman.tsv" | sort > "$WORK/pairs_sum.txt"
check "similar-ECE pairs recounted from fragility.tsv" cmp "$WORK/pairs_rows.txt" "$WORK/pairs_sum.txt"
topk=$("$PAIRBOUND" info "$WORK/s.h5" | awk '$1 == "topk" { print $2 }')
if [ "${topk:-0}" -gt 0 ]; then
  check "fragility_tempered.tsv: one row per model, source and arm, T in (0.05, 20)" awk -F'\t' -v n=$((models * sources * 2)) '
    NR > 1 { rows++; if (!($4 > 0.05 && $4 < 20)) bad = 1 } END { exit bad || rows != n }' "$WORK/o11/report/fragility_tempered.tsv"
fi
check "merges: the unmerged level's FAUC_up is fragility.tsv's" cmp "$WORK/fauc_m.txt" "$WORK/fauc.txt"
# the monotone maps (seed 001 Q): shapes; Table 4 (a defined fitted map moves no image and changes no
# structural quantity); the raw ECE is fragility.tsv's (columns 16 there, 17 in fragility_qmap.tsv)
Q="$WORK/o11/report/fragility_qmap.tsv"
check "fragility_qmap.tsv: 3 maps per model, source and arm" test "$(($(wc -l < "$Q") - 1))" -eq $((models * sources * 6))
check "fragility_qmap_ties.tsv: one row per model and source" test "$(($(wc -l < "$WORK/o11/report/fragility_qmap_ties.tsv") - 1))" -eq $((models * sources))
check "fitted maps: no bin or readout change, no structural difference" awk -F'\t' '
  NR > 1 && $4 == "fitted" && $5 == 1 { n++; if ($9 != 0 || $10 != 0 || $12 != 0 || $13 != 0 || $14 != 0) bad = 1 }
  END { exit bad || n == 0 }' "$Q"
awk -F'\t' 'NR > 1 && $4 == "power" { print $1, $2, $3, $17 }' "$Q" > "$WORK/ece_q.txt"
awk -F'\t' 'NR > 1 { print $1, $2, $3, $16 }' "$T" > "$WORK/ece_t.txt"
check "fragility_qmap.tsv: ece_raw is fragility.tsv's ece" cmp "$WORK/ece_q.txt" "$WORK/ece_t.txt"
# Table 18: the variance law's integral recomputed from fragility.tsv's var_law_<rho> columns (trapezoids in log rho)
check "fragility_variance_auc.tsv: var_law_auc is the trapezoid integral of fragility.tsv's var_law columns" awk -F'\t' '
  NR == FNR { if (FNR == 1) { for (i = 1; i <= NF; i++) if ($i ~ /^var_law_/) { c[++k] = i; r[k] = substr($i, 9) + 0 } }
    else { a = 0; for (j = 2; j <= k; j++) a += log(r[j] / r[j - 1]) * ($c[j] + $c[j - 1]) / 2; v[$1 " " $2 " " $3] = a }
    next }
  FNR > 1 { d = $5 - v[$1 " " $2 " " $3]; if (d < 0) d = -d; if (!(d <= 1e-12 * (1 + $5))) bad = 1; n++ }
  END { exit bad || n == 0 }' "$T" "$WORK/o11/report/fragility_variance_auc.tsv"
# Table 9: the quartiles share out every random-shift cell of a source and arm
awk -F'\t' 'NR > 1 { n[$1 " " $2] += $7 } END { for (k in n) print k, n[k] }' "$WORK/o11/report/fragility_random_quartiles.tsv" | sort > "$WORK/q_cells.txt"
awk -F'\t' 'NR > 1 { print $1, $2, $3 }' "$WORK/o11/report/fragility_random_summary.tsv" | sort > "$WORK/r_cells.txt"
check "fragility_random_quartiles.tsv: the quartiles' cells add up to the random summary's" cmp "$WORK/q_cells.txt" "$WORK/r_cells.txt"
check "score-only comparator: its readout FAUC_up is fragility.tsv's" cmp "$WORK/fauc_j.txt" "$WORK/fauc.txt"
check "results.h5 has /fragility" sh -c "h5ls -r '$WORK/o11/results.h5' | grep -q '^/fragility/drift/L_comp'"
check "fragility.md links both figures" sh -c "grep -q 'fragility_profiles' '$WORK/o11/report/fragility.md' && grep -q 'fragility_drift_tiers' '$WORK/o11/report/fragility.md'"

# without gnuplot the report is still complete and says the figures were skipped
PAIRBOUND_GNUPLOT=none pb 1 1 fragility "$WORK/s.h5" --null 2 -o "$WORK/ng"
check "no gnuplot: report written" test -s "$WORK/ng/report/fragility.md"
check "no gnuplot: figures skipped and said so" sh -c "! test -e '$WORK/ng/report/fragility_profiles.png' && grep -qi 'skipped' '$WORK/ng/report/fragility.md'"

# a user-supplied group column (label mod 3 of every clean image) replaces U
pb 1 1 export "$WORK/s.h5" -o "$WORK/s.csv"
awk -F, 'NR > 1 && $4 == "clean" && !seen[$3 FS $5]++ { print $3, $5, $6 % 3 }' "$WORK/s.csv" > "$WORK/groups.txt"
pb 1 1 fragility "$WORK/s.h5" --null 2 --group-file "$WORK/groups.txt" -o "$WORK/gf"
check "--group-file: report names the column" grep -q "the column of $WORK/groups.txt" "$WORK/gf/report/fragility.md"
check "--group-file: G_R differs from the U readout" sh -c "! cmp -s '$WORK/gf/report/fragility.tsv' '$WORK/ng/report/fragility.tsv'"
head -3 "$WORK/groups.txt" > "$WORK/bad_groups.txt"
echo "$(head -1 "$WORK/groups.txt" | cut -d" " -f1) no-such-image 1" >> "$WORK/bad_groups.txt"
"$PAIRBOUND" -v 0 fragility "$WORK/s.h5" --group-file "$WORK/bad_groups.txt" -o "$WORK/e4" 2> "$WORK/err4.txt"
check "bad group file: exit 1" test $? -eq 1
check "bad group file: file and line" grep -q "bad_groups.txt:4: unknown image id for this source" "$WORK/err4.txt"
check "bad group file: no results" test ! -e "$WORK/e4/results.h5"

# bad input: a clear message, exit 1 or 2, no results
"$PAIRBOUND" -v 0 fragility "$WORK/s.h5" --probe Nope -o "$WORK/e1" 2> "$WORK/err1.txt"
check "unknown probe source: exit 1" test $? -eq 1
check "unknown probe source: message" grep -q -- "--probe Nope: no such source" "$WORK/err1.txt"
check "unknown probe source: no results" test ! -e "$WORK/e1/results.h5"
"$PAIRBOUND" -v 0 fragility "$WORK/s.h5" --rho-min 5 -o "$WORK/e2" 2> "$WORK/err2.txt"
check "rho-min above rho-max: exit 1" test $? -eq 1
check "rho-min above rho-max: message" grep -q "need 0 < --rho-min < --rho-max" "$WORK/err2.txt"
"$PAIRBOUND" -v 0 fragility "$WORK/s.h5" --bins 0 -o "$WORK/e3" 2> "$WORK/err3.txt"
check "zero bins: usage error" test $? -eq 2
finish
