# bounds --calibration, Appendix F.1's multiclass Brier scores on a hand store
# of explicit 3-class distributions: each model's clean development mean, and
# per cell the means over its clean and its perturbed evaluation records
# (bounds.tsv), then the table's means over the cells of the source
# (protocol_calibration.tsv); the same at 3 ranks x 2 threads; a store
# without the collision column has them n/a and the caption says why.
. "$TOP_SRCDIR/tests/mpi/common.sh"

# One source S, classes 0-2, models m1 and m2, conditions clean and fog.  A
# row below is "model condition image label split p0 p1 p2"; awk writes its
# record: pred the argmax (no ties), smax, ptrue = p_label and collision =
# sum p^2.  Brier score of a record: sum_c (p_c - [c = label])^2, by hand:
#   d1 0 (.9 .1 0)   .01 + .01 = .02      e1 0 (.5 .3 .2)   .25 + .09 + .04 = .38
#   d2 1 (.2 .6 .2)  .04 + .16 + .04 = .24  e2 1 (.6 .4 0)  .36 + .36 = .72
#   d3 2 (.6 0 .4)   .36 + .36 = .72      e3 2 (.1 .1 .8)   .01 + .01 + .04 = .06
#   d4 0 (.7 .2 .1)  .09 + .04 + .01 = .14
#   e1 0 (.2 .7 .1)  .64 + .49 + .01 = 1.14   e1 0 (1 0 0)    0
#   e2 1 (.25 .5 .25) .0625 + .25 + .0625 = .375
#   e3 2 (0 0 1)     0
# Development (both models, every condition the same): (.02 + .24 + .72 + .14) / 4 = .28.
# m1: clean e1-e3 (.38 .72 .06): 1.16 / 3; fog (1.14 .375 0): 1.515 / 3 = .505.
# m2: clean is m1's fog (.505); fog e1 (1 0 0), e2 and e3 as m1's clean: (0 + .72 + .06) / 3 = .26.
rows() {
  for m in m1 m2; do
    for c in clean fog; do
      printf '%s\n' "$m $c d1 0 dev .9 .1 0" "$m $c d2 1 dev .2 .6 .2" "$m $c d3 2 dev .6 0 .4" "$m $c d4 0 dev .7 .2 .1"
    done
  done
  printf '%s\n' "m1 clean e1 0 eval .5 .3 .2" "m1 clean e2 1 eval .6 .4 0" "m1 clean e3 2 eval .1 .1 .8" \
    "m1 fog e1 0 eval .2 .7 .1" "m1 fog e2 1 eval .25 .5 .25" "m1 fog e3 2 eval 0 0 1" \
    "m2 clean e1 0 eval .2 .7 .1" "m2 clean e2 1 eval .25 .5 .25" "m2 clean e3 2 eval 0 0 1" \
    "m2 fog e1 0 eval 1 0 0" "m2 fog e2 1 eval .6 .4 0" "m2 fog e3 2 eval .1 .1 .8"
}
rows | awk 'BEGIN { print "model,group,source,condition,image,label,split,pred,smax,ptrue,collision" }
  { p[0] = $6; p[1] = $7; p[2] = $8; k = 0; q = 0
    for (c = 0; c < 3; c++) { q += p[c] * p[c]; if (p[c] > p[k]) k = c }
    printf "%s,g%s,S,%s,%s,%d,%s,%d,%.6g,%.6g,%.6g\n", $1, $1, $2, $3, $4, $5, k, p[k], p[$4], q }' > "$WORK/b.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/b.csv" -o "$WORK/b.h5"
check "hand store ingested" test $? -eq 0
pb 1 1 bounds "$WORK/b.h5" --calibration -o "$WORK/b1"
# float32 inputs: within 1e-6
check "bounds.tsv: each cell's development, clean and perturbed multiclass Brier scores" awk -F'\t' '
  function off(x, y) { return x - y > 1e-6 || y - x > 1e-6 }
  NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  { d = $(c["f1_brier_dev_multiclass"]); e = $(c["f1_brier_clean_multiclass"]); f = $(c["f1_brier_perturbed_multiclass"]) }
  $1 == "m1" && $3 == "fog" { n++; if (off(d, .28) || off(e, 1.16 / 3) || off(f, .505)) bad = 1 }
  $1 == "m2" && $3 == "fog" { n++; if (off(d, .28) || off(e, .505) || off(f, .26)) bad = 1 }
  END { exit !(n == 2 && !bad) }' "$WORK/b1/report/bounds.tsv"
# the table: means over the source's cells, (1.16 / 3 + .505) / 2 and (.505 + .26) / 2
T=$WORK/b1/report/protocol_calibration.tsv
check "protocol_calibration.tsv: the means over the cells" awk -F'\t' '
  function off(x, y) { return x - y > 1e-6 || y - x > 1e-6 }
  NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  $1 == "S" { n++; if (off($(c["brier_dev_multiclass"]), .28) || off($(c["brier_clean_multiclass"]), (1.16 / 3 + .505) / 2) ||
                      off($(c["brier_perturbed_multiclass"]), (.505 + .26) / 2)) bad = 1 }
  END { exit !(n == 1 && !bad) }' "$T"
check "the caption: exact, from the store's collision column" grep -qF "from the store's collision column (exact)" "$WORK/b1/report/REPORT.md"
pb 3 2 bounds "$WORK/b.h5" --calibration -o "$WORK/b3"
check "bounds.tsv identical at 3 ranks x 2 threads" cmp -s "$WORK/b1/report/bounds.tsv" "$WORK/b3/report/bounds.tsv"
check "protocol_calibration.tsv identical at 3 ranks x 2 threads" cmp -s "$T" "$WORK/b3/report/protocol_calibration.tsv"

# The same records without the collision column: every multiclass score NaN, the table's n/a and the caption says why.
cut -d, -f1-10 "$WORK/b.csv" > "$WORK/n.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/n.csv" -o "$WORK/n.h5"
pb 1 1 bounds "$WORK/n.h5" --calibration -o "$WORK/n1"
check "no collision column: NaN in bounds.tsv" awk -F'\t' '
  NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  { n++; if ($(c["f1_brier_dev_multiclass"]) != "nan" || $(c["f1_brier_clean_multiclass"]) != "nan" ||
             $(c["f1_brier_perturbed_multiclass"]) != "nan" || $(c["f1_brier_perturbed_raw"]) == "nan") bad = 1 }
  END { exit !(n == 2 && !bad) }' "$WORK/n1/report/bounds.tsv"
check "no collision column: no means in the table (nan; n/a in REPORT.md)" awk -F'\t' '
  NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  $1 == "S" { n++; if ($(c["brier_dev_multiclass"]) != "nan" || $(c["brier_clean_multiclass"]) != "nan" ||
                      $(c["brier_perturbed_multiclass"]) != "nan") bad = 1 }
  END { exit !(n == 1 && !bad) }' "$WORK/n1/report/protocol_calibration.tsv"
check "no collision column: the caption says why" grep -qF "n/a: the store has no collision column" "$WORK/n1/report/REPORT.md"
finish
