# Resampling: model-group bootstrap intervals and permutation controls are
# byte-identical for 1, 2, 3 and 4 ranks and 1 or 2 threads.
. "$TOP_SRCDIR/tests/mpi/common.sh"

pb 1 1 synth --scale small --no-summary -o "$WORK/s.h5"
args="--group-draws 500 --perm-replicates 4 --seed 11"
pb 1 1 bounds "$WORK/s.h5" -o "$WORK/o11" $args
check "interval columns filled" awk -F'\t' 'NR == 2 { exit !($7 != "nan" && $8 != "nan" && $7 <= $4 && $4 <= $8) }' \
  "$WORK/o11/report/identification_variance_ratio.tsv"
for np in 1 2 3 4; do
  for th in 1 2; do
    [ "$np$th" = 11 ] && continue
    pb "$np" "$th" bounds "$WORK/s.h5" -o "$WORK/o$np$th" $args
    for f in identification_variance_ratio.tsv identification_permutation.tsv bounds.tsv REPORT.md; do
      check "$f identical at $np ranks x $th threads" cmp -s "$WORK/o11/report/$f" "$WORK/o$np$th/report/$f"
    done
  done
done
pb 1 1 bounds "$WORK/s.h5" -o "$WORK/seed12" --group-draws 500 --perm-replicates 4 --seed 12
check "another seed moves the intervals" sh -c "! cmp -s '$WORK/o11/report/identification_variance_ratio.tsv' '$WORK/seed12/report/identification_variance_ratio.tsv'"
finish
