# bounds --calibration, Appendix F's probability-gap table on a hand store:
# the stage's choice of development errors, its reading of the top-k lists
# and its grouping of evaluation events (the kernels are tests/unit/test_calibration.c);
# a store without top-k lists writes no gap table and says why.
. "$TOP_SRCDIR/tests/mpi/common.sh"

# One source, label 0 everywhere.  m1's six clean development records are
# wrong (prediction 1) with gaps 1/16 .. 6/16 (top-1 0.5, top-2 0.5 - i/16):
# cutpoints at positions 5/3 and 10/3, 2/16 + (2/3)(1/16) = 1/6 and
# 4/16 + (1/3)(1/16) = 13/48.  Its clean evaluation errors e1, e2, e3 have
# gaps 2/16 (low), 3/16 (middle), 5/16 (high); e4 is correct (no event).
# Under fog e1 keeps its wrong answer, e2 turns correct, e3 changes to
# class 2.  m2 is m1 with d6 correct: five errors, excluded.
{
  echo model,group,source,condition,image,label,split,pred,smax,ptrue,top1_class,top1_prob,top2_class,top2_prob
  for m in m1 m2; do
    for c in clean fog; do
      for i in 1 2 3 4 5 6; do
        p2=$(awk -v i=$i 'BEGIN { printf "%.6g", 0.5 - i / 16 }')
        if [ $m = m2 ] && [ $i = 6 ]; then echo "$m,g$m,S,$c,d$i,0,dev,0,0.9,0.9,0,0.9,1,0.05"
        else echo "$m,g$m,S,$c,d$i,0,dev,1,0.5,$p2,1,0.5,0,$p2"; fi
      done
      echo "$m,g$m,S,$c,e4,0,eval,0,0.9,0.9,0,0.9,1,0.05"
    done
    echo "$m,g$m,S,clean,e1,0,eval,1,0.5,0.375,1,0.5,0,0.375"
    echo "$m,g$m,S,clean,e2,0,eval,1,0.5,0.3125,1,0.5,0,0.3125"
    echo "$m,g$m,S,clean,e3,0,eval,1,0.5,0.1875,1,0.5,0,0.1875"
    echo "$m,g$m,S,fog,e1,0,eval,1,0.5,0.375,1,0.5,0,0.375"
    echo "$m,g$m,S,fog,e2,0,eval,0,0.6,0.6,0,0.6,1,0.3"
    echo "$m,g$m,S,fog,e3,0,eval,2,0.5,0.2,2,0.5,0,0.2"
  done
} > "$WORK/g.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/g.csv" -o "$WORK/g.h5"
check "hand store ingested" test $? -eq 0
pb 1 1 bounds "$WORK/g.h5" --calibration -o "$WORK/g1"
T=$WORK/g1/report/protocol_gap.tsv
# source tier cells models models_excluded low/mid/high_same_pct low/mid/high_correct_pct low/mid/high_events
check "gap table: all-tiers row by hand" awk -F'\t' '$1 == "S" && $2 == "all tiers" {
  n++; bad = !($3 == 1 && $4 == 1 && $5 == 1 && $6 == 100 && $7 == 0 && $8 == 0 && $9 == 0 && $10 == 100 &&
                $11 == 0 && $12 == 1 && $13 == 1 && $14 == 1) }
  END { exit !(n == 1 && !bad) }' "$T"
check "bounds.tsv: m1's cutpoints 1/6 and 13/48, m2 excluded with five errors" awk -F'\t' '
  NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  $1 == "m1" { n++; d0 = $(c["gap_cut_low"]) - 1 / 6; d1 = $(c["gap_cut_high"]) - 13 / 48
               if (d0 * d0 > 1e-24 || d1 * d1 > 1e-24 || $(c["gap_dev_errors"]) != 6) bad = 1 }
  $1 == "m2" { n++; if ($(c["gap_dev_errors"]) != 5 || $(c["gap_low_events"]) != "nan" || $(c["gap_cut_low"]) != "nan") bad = 1 }
  END { exit !(n == 2 && !bad) }' "$WORK/g1/report/bounds.tsv"
pb 3 1 bounds "$WORK/g.h5" --calibration -o "$WORK/g3"
check "gap table identical at 3 ranks" cmp -s "$T" "$WORK/g3/report/protocol_gap.tsv"

# The same records without top-k lists: no gap, no table, and the report says why.
cut -d, -f1-10 "$WORK/g.csv" > "$WORK/n.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/n.csv" -o "$WORK/n.h5"
pb 1 1 bounds "$WORK/n.h5" --calibration -o "$WORK/n1"
check "no top-k lists: no gap table" test ! -e "$WORK/n1/report/protocol_gap.tsv"
check "no top-k lists: the report says why" grep -qF "Not computed: the gap (top-1 minus top-2 probability) needs top-k lists with k >= 2, and this store has none." "$WORK/n1/report/REPORT.md"
check "no top-k lists: Table 40 still written" test -s "$WORK/n1/report/protocol_acceptance.tsv"
finish
