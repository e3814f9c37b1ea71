# Resampling: model-group bootstrap intervals and permutation controls are
# byte-identical for 1, 2, 3 and 4 ranks and 1 or 2 threads (fewer layouts
# under the sanitizers: common.sh, LAYOUTS).
. "$TOP_SRCDIR/tests/mpi/common.sh"

pb 1 1 synth --scale small --no-summary -o "$WORK/s.h5"
args="--group-draws 500 --perm-replicates 4 --seed 11"
pb 1 1 bounds "$WORK/s.h5" -o "$WORK/o11" $args
check "interval columns filled" awk -F'\t' 'NR == 2 { exit !($7 != "nan" && $8 != "nan" && $7 <= $4 && $4 <= $8) }' \
  "$WORK/o11/report/identification_variance_ratio.tsv"
for l in $LAYOUTS 41 42; do
  np=${l%?} th=${l#?}
  pb "$np" "$th" bounds "$WORK/s.h5" -o "$WORK/o$np$th" $args
  for f in identification_variance_ratio.tsv identification_permutation.tsv bounds.tsv REPORT.md; do
    check "$f identical at $np ranks x $th threads" cmp -s "$WORK/o11/report/$f" "$WORK/o$np$th/report/$f"
  done
done
# screening: group and class bootstrap intervals of the paired differences
pb 1 1 synth --config "$TOP_SRCDIR/tests/mpi/screen.ini" --no-summary -o "$WORK/sc.h5"
sargs="--group-draws 300 --class-draws 40 --seed 5 --probe TTA=Syn-B:fog-2,fog-4"
pb 1 1 screen "$WORK/sc.h5" -o "$WORK/c11" $sargs
check "screen interval table written" test -s "$WORK/c11/report/screen_intervals.tsv"
check "tercile gaps and U - U_TTA rows" sh -c "grep -q 'gap U-U_derange (low S)' '$WORK/c11/report/screen_intervals_more.tsv' && grep -q 'U-U_TTA auroc' '$WORK/c11/report/screen_intervals_more.tsv'"
check "screen intervals bracket finite values" awk -F'\t' 'NR > 1 && $5 != "nan" { n++; if ($6 > $7 || $8 > $9) bad = 1 }
  END { exit bad || n == 0 }' "$WORK/c11/report/screen_intervals.tsv"
for np in 2 3 4; do
  th=$((np % 2 + 1))
  pb "$np" "$th" screen "$WORK/sc.h5" -o "$WORK/c$np" $sargs
  for f in screen_intervals.tsv screen_intervals_more.tsv screen.md screen_cells.tsv screen_protocol.tsv \
    screen_identity_delta.tsv screen_baselines.tsv screen_groups.tsv screen_models.tsv screen_capture.tsv; do
    check "screen $f identical at $np ranks x $th threads" cmp -s "$WORK/c11/report/$f" "$WORK/c$np/report/$f"
  done
done
pb 1 1 bounds "$WORK/s.h5" -o "$WORK/seed12" --group-draws 500 --perm-replicates 4 --seed 12
check "another seed moves the intervals" sh -c "! cmp -s '$WORK/o11/report/identification_variance_ratio.tsv' '$WORK/seed12/report/identification_variance_ratio.tsv'"
finish
