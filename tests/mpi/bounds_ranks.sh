# bounds: byte-identical reports (with --calibration's Table 40, calibration
# and probability-gap tables) and identical results.h5 for 1, 2, 3 ranks and
# 1, 2 threads, with and without --witnesses; --tau on a store without
# development images.
. "$TOP_SRCDIR/tests/mpi/common.sh"

pb 1 1 synth --scale small --no-summary -o "$WORK/s.h5"
pb 1 1 bounds "$WORK/s.h5" --calibration -o "$WORK/o11"
reports="bounds.tsv identification_grid.tsv identification_panel.tsv identification_decomposition.tsv
  identification_variance_ratio.tsv identification_accuracy_only.tsv identification_matched.tsv
  identification_table2.tsv identification_strata.tsv identification_positive_widths.tsv identification_subsets.tsv
  identification_crossmodel_support.tsv protocol_acceptance.tsv protocol_calibration.tsv protocol_gap.tsv
  REPORT.md"
ranks_identical "$reports" bounds "$WORK/s.h5" --calibration
# --witnesses: /bounds/witnesses (each rank its cells' slice) identical too, and bounds.tsv as without it
mv "$WORK/o11" "$WORK/plain11"
pb 1 1 bounds "$WORK/s.h5" --witnesses --i5 all -o "$WORK/o11"
ranks_identical "bounds.tsv" bounds "$WORK/s.h5" --witnesses --i5 all
check "--witnesses: results.h5 has /bounds/witnesses" sh -c "h5ls '$WORK/o11/results.h5/bounds/witnesses' | grep -q '^I5_hi'"
pb 1 1 bounds "$WORK/s.h5" --i5 all -o "$WORK/all11"
check "--witnesses: bounds.tsv as without it" cmp -s "$WORK/o11/report/bounds.tsv" "$WORK/all11/report/bounds.tsv"
rm -rf "$WORK/o11"
mv "$WORK/plain11" "$WORK/o11"
check "bounds.tsv: one row per cell" test "$(($(wc -l < "$WORK/o11/report/bounds.tsv") - 1))" -eq 85
want='model	source	condition	n	E	H_obs	H_I0_lo	H_I0_hi	H_Ik_lo	H_Ik_hi	H_I5_lo	H_I5_hi	H_ind	L_obs	L_I0_lo	L_I0_hi	L_Ik_lo	L_Ik_hi	L_I5_lo	L_I5_hi	L_ind	dMk_obs	dMk_I0_lo	dMk_I0_hi	dMk_Ik_lo	dMk_Ik_hi	dMk_I5_lo	dMk_I5_hi	dMk_ind'
check "bounds.tsv: required leading columns" test "$(head -1 "$WORK/o11/report/bounds.tsv" | cut -f1-29)" = "$want"
# every row: intervals nested I5 in Ik in I0 and the observed value inside (columns per header)
check "bounds.tsv: nesting and observed values inside" awk -F'\t' '
  NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  { for (t = 1; t <= 3; t++) {
      T = t == 1 ? "H" : t == 2 ? "L" : "dMk"; o = $(c[T "_obs"])
      if (o == "nan") continue
      l0 = $(c[T "_I0_lo"]); h0 = $(c[T "_I0_hi"]); lk = $(c[T "_Ik_lo"]); hk = $(c[T "_Ik_hi"])
      l5 = $(c[T "_I5_lo"]); h5 = $(c[T "_I5_hi"])
      if (!(l0 - 1e-12 <= lk && lk <= l5 + 1e-12 && l5 <= o + 1e-12 && o <= h5 + 1e-12 && h5 <= hk + 1e-12 && hk <= h0 + 1e-12)) bad = 1
      if (T != "H" && (l5 != lk || h5 != hk)) bad = 1 } }
  END { exit bad }' "$WORK/o11/report/bounds.tsv"
# F.1 under the quantile protocol: Platt with a > 0 (strictly increasing) changes no decision; isotonic
# regression (only non-decreasing) can change decisions, but only by accepting more, never fewer
check "bounds.tsv: Q80 decisions under Platt (a > 0) and isotonic regression" awk -F'\t' '
  NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  { if ($(c["f1_platt_a"]) > 0 && ($(c["f1_q80_platt_changed"]) != 0 || $(c["f1_q80_platt_acc"]) != $(c["f1_q80_raw_acc"]))) bad = 1
    if ($(c["f1_q80_iso_acc"]) < $(c["f1_q80_raw_acc"])) bad = 1
    n += $(c["f1_platt_a"]) > 0; iso += $(c["f1_q80_iso_changed"]) }
  END { exit !(n > 0 && iso > 0 && !bad) }' "$WORK/o11/report/bounds.tsv"

# the reads: independent at 2 ranks (no rank waits for another's sources), collective where the direct path
# is off, the same outputs both ways
OMP_NUM_THREADS=1 mpi_launch 3 "$PAIRBOUND" -v 2 bounds "$WORK/s.h5" --calibration -o "$WORK/ind3" > "$WORK/ind3.log" 2>&1
check "3 ranks: every rank reads independently" test "$(grep -c 'bounds: independent reads' "$WORK/ind3.log")" -eq 3
PAIRBOUND_STORE_READ=hdf5 OMP_NUM_THREADS=1 mpi_launch 3 "$PAIRBOUND" -v 2 bounds "$WORK/s.h5" --calibration \
  -o "$WORK/col3" > "$WORK/col3.log" 2>&1
check "3 ranks, HDF5 reads: collective, source by source" test "$(grep -c 'bounds: collective reads' "$WORK/col3.log")" -eq 3
for f in bounds.tsv protocol_calibration.tsv REPORT.md; do
  check "$f identical with independent and collective reads" cmp -s "$WORK/ind3/report/$f" "$WORK/col3/report/$f"
done

P=$(paper_store)  # the suite's paper store (tests/mpi/paper_store.sh)
pb 1 2 bounds "$P" --calibration -o "$WORK/p1"
pb 3 1 bounds "$P" --calibration -o "$WORK/p3"
for f in $reports; do
  check "paper $f identical at 1 and 3 ranks" cmp -s "$WORK/p1/report/$f" "$WORK/p3/report/$f"
done
check "paper results.h5 identical at 1 and 3 ranks" same_h5 "$WORK/p1/results.h5" "$WORK/p3/results.h5"
check "paper bounds.tsv: 11,088 cells" test "$(($(wc -l < "$WORK/p1/report/bounds.tsv") - 1))" -eq 11088

# A store with evaluation images only: the protocol has no threshold, --tau supplies one.
H=model,group,source,condition,image,label,split,pred,smax,ptrue
printf '%s\n' "$H" 'm1,g,S,clean,i1,0,eval,0,0.9,0.9' 'm1,g,S,clean,i2,0,eval,0,0.6,0.6' \
  'm1,g,S,fog,i1,0,eval,0,0.6,0.6' 'm1,g,S,fog,i2,0,eval,1,0.8,0.2' > "$WORK/e.csv"
"$PAIRBOUND" ingest "$WORK/e.csv" -o "$WORK/e.h5"
"$PAIRBOUND" bounds "$WORK/e.h5" -o "$WORK/e0" 2> "$WORK/err.txt"
check "no development images: exit 1 without --tau" test $? -eq 1
check "no development images: message" grep -qF "source S, model m1: no development threshold" "$WORK/err.txt"
check "no development images: no results" test ! -e "$WORK/e0/results.h5"
"$PAIRBOUND" -v 0 bounds "$WORK/e.h5" --tau 0.8 -o "$WORK/e1"
check "--tau: bounds computed" test $? -eq 0
# Section 3.1's example: H in [0, 1/2], L in [0, 1/2], dM_k in [0, 0.3] at Ik (one k pair)
# (H, L, dM_k) is (0, 1/2, 0.3) or (1/2, 0, 0) depending on the matching, so every
# interval spans both; E = 1/2; independent values 1/4, 1/4 and 0.15 (float32 inputs, 1e-6).
want="2 .5 0 0 .5 0 .5 0 .5 .25 .5 0 .5 0 .5 0 .5 .25 .3 0 .3 0 .3 0 .3 .15"
check "--tau: Section 3.1 example" awk -F'\t' -v want="$want" 'NR == 2 {
  n = split(want, w, " "); for (i = 1; i <= n; i++) { d = $(i + 3) - w[i]; if (d > 1e-6 || d < -1e-6) bad = 1 } }
  END { exit bad }' "$WORK/e1/report/bounds.tsv"
finish
