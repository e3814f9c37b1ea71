# Natural-transformation probes (seed 000 Section 5.3, E.2-E.4): the synthetic
# TTA source is identical for 1-3 ranks x 1-2 threads; screen finds it by its
# probe role, and its natural tables (U - TTA contrasts, the TTA^sel and U^sel
# selections, Figure 4's data, the class-bootstrap intervals of U - TTA and
# U - A3_TTA) are byte-identical across ranks and threads;
# --probe TTA=SRC keeps working; probe sources (natural, extra) have no cells and no rows in bounds' tables.
. "$TOP_SRCDIR/tests/mpi/common.sh"

pb 1 1 synth --scale small --no-summary -o "$WORK/s11.h5"
for l in $LAYOUTS; do
  np=${l%?} th=${l#?}
  pb "$np" "$th" synth --scale small --no-summary -o "$WORK/s$np$th.h5"
  check "synth TTA source identical at $np ranks x $th threads" \
    "$H5DIFF" "$WORK/s11.h5" "$WORK/s$np$th.h5" /sources/TTA /sources/TTA
  check "synth Syn-B5 source identical at $np ranks x $th threads" \
    "$H5DIFF" "$WORK/s11.h5" "$WORK/s$np$th.h5" /sources/Syn-B5 /sources/Syn-B5
done
# the small panel: 18 fixed + 12 pool transforms, declared natural; 2 extra Syn-B conditions
"$PAIRBOUND" synth --scale small -o "$WORK/sum.h5" > "$WORK/summary.txt"
check "TTA source: 30 transforms, role natural with 18 fixed" sh -c "grep -qx 'source.TTA.conditions 30' '$WORK/summary.txt' &&
  grep -qx 'source.TTA.role natural:18 (declared)' '$WORK/summary.txt'"
check "probe sources have no cells" sh -c "grep -qx 'source.TTA.cells 0' '$WORK/summary.txt' &&
  grep -qx 'source.Syn-B5.cells 0' '$WORK/summary.txt' && grep -qx 'cells 85' '$WORK/summary.txt'"

S="$WORK/s11.h5"
pb 1 1 screen "$S" --group-draws 200 --class-draws 40 -o "$WORK/o11"
reports="screen_natural.tsv screen_natural_subsets.tsv screen_natural_variants.tsv screen_natural_baselines.tsv screen_natural_selection.tsv
  figure4_probe_sets.tsv screen_probesets.tsv screen_cells.tsv screen_baselines.tsv screen_intervals.tsv screen.md"
ranks_identical "$reports" screen "$S" --group-draws 200 --class-draws 40
R="$WORK/o11/report"
# seed E.3: development error rates of the probe sets (primary, sev2, sev4, TTA) recomputed from the store
if /usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null; then
  check "screen_probesets.tsv: dev_error of every probe set recomputed from the store" \
    /usr/bin/python3 "$TOP_SRCDIR/tests/mpi/screen_dev_error.py" "$S" "$R/screen_probesets.tsv" Syn-B
  check "screen_probesets.tsv: development error rates ordered TTA < sev2 < sev4 on both targets (the seed's order)" \
    awk -F'\t' 'NR > 1 { e[$1, $2] = $9; t[$1] = 1 }
      END { for (s in t) { n++; if (!(e[s, "TTA"] < e[s, "sev2"] && e[s, "sev2"] < e[s, "sev4"])) bad = 1 } exit bad || n != 2 }' \
    "$R/screen_probesets.tsv"
else
  echo "# skipped: the numpy check of screen_probesets.tsv's dev_error (no h5py/numpy for /usr/bin/python3)"
fi
# class-bootstrap intervals of U - TTA (coverage at .2: columns 10-11, AUROC: 17-18 of screen_natural.tsv)
check "U-TTA class intervals finite, lo <= hi, on every tier row" awk -F'\t' 'NR > 1 { n++
  if ($7 == "nan" || $10 == "nan" || $17 == "nan" || $10 > $11 || $17 > $18) bad = 1 } END { exit bad || n == 0 }' "$R/screen_natural.tsv"
# the same statistic in three tables: Table 37's mild rows, Table 38's TTA rows (natural and screen_baselines.tsv)
check "U-TTA class intervals agree across Tables 37 and 38" awk -F'\t' '
  FILENAME ~ /natural\.tsv$/ && $2 == "mild" { t[$1] = $10 FS $11 FS $17 FS $18; n++ }
  FILENAME ~ /natural_baselines/ && $2 == "TTA" { if (t[$1] != $8 FS $9 FS $13 FS $14) bad = 1; m++ }
  FILENAME ~ /screen_baselines/ && $2 == "U_TTA" { split(t[$1], v, FS); if (v[1] != $9 || v[2] != $10) bad = 1; k++ }
  END { exit bad || n == 0 || n != m || n != k }' "$R/screen_natural.tsv" "$R/screen_natural_baselines.tsv" "$R/screen_baselines.tsv"
check "Tables 34, 38 natural rows: U-A3_TTA and U-agree_TTA class intervals" awk -F'\t' '
  $2 == "A3_TTA" { a++; if ($8 == "nan" || $13 == "nan" || $8 > $9 || $13 > $14) bad = 1 }
  $2 == "agree_TTA" { g++; if ($8 == "nan" || $13 == "nan" || $8 > $9 || $13 > $14) bad = 1 } END { exit bad || a == 0 || g != a }' "$R/screen_natural_baselines.tsv"
# a TTA set equal to the primary set: U - TTA is 0 in every class draw and U - A3_TTA is
# the fixed contrast U - A3 of screen_intervals.tsv (its class columns 8-9, 18-19)
pb 2 2 screen "$S" --probe TTA=Syn-B --class-draws 30 -o "$WORK/same"
check "TTA = primary set: class intervals of U - TTA are [0, 0]" awk -F'\t' 'NR > 1 { n++
  if ($10 != 0 || $11 != 0 || $17 != 0 || $18 != 0) bad = 1 } END { exit bad || n == 0 }' "$WORK/same/report/screen_natural.tsv"
check "TTA = primary set: U - A3_TTA has U - A3's class intervals" awk -F'\t' '
  FILENAME ~ /intervals/ && $2 == "mild" && $3 == "U-A3" { a[$1] = $8 FS $9 FS $18 FS $19 }
  FILENAME ~ /baselines/ && $2 == "A3_TTA" { n++; if (a[$1] != $13 FS $14 FS $8 FS $9) bad = 1 }
  END { exit bad || n == 0 }' "$WORK/same/report/screen_intervals.tsv" "$WORK/same/report/screen_natural_baselines.tsv"
# 5 models x 2 targets... the selection: 18 natural picks, 4 Syn-B picks (of Syn-B's 4 + Syn-B5's 2) per target
for src in ES Diverse; do
  check "$src: TTA_sel picks 18 of the 30 transforms" test "$(awk -F'\t' -v s=$src '$1 == s && $2 == "TTA_sel"' "$R/screen_natural_selection.tsv" | wc -l)" -eq 18
  check "$src: U_sel picks 4 of the 6 Syn-B conditions" test "$(awk -F'\t' -v s=$src '$1 == s && $2 == "U_sel"' "$R/screen_natural_selection.tsv" | wc -l)" -eq 4
  check "$src: picks are distinct" test "$(awk -F'\t' -v s=$src '$1 == s { print $2, $4 }' "$R/screen_natural_selection.tsv" | sort -u | wc -l)" -eq 22
done
check "natural rows in screen_cells.tsv" awk -F'\t' 'NR > 1 { seen[$5] = 1 } END {
  n = split("U_TTA A3_TTA U0 TTA0 agree_TTA U_sel TTA_sel", w, " ")
  for (i = 1; i <= n; i++) if (!(w[i] in seen)) exit 1 }' "$R/screen_cells.tsv"
check "the report states the headline beside the seed's" grep -qF "| source | U | seed U | TTA18 | seed TTA18 | U - TTA18 |" "$R/screen.md"
check "Figure 4 rendered or explained" sh -c "test -s '$R/figure4_probe_sets.png' || grep -q 'figure4_probe_sets' '$R/screen.md'"

# --probe TTA=SRC (an explicit natural set) still works: 2 transforms, TTA_sel then picks 2
pb 2 1 screen "$S" --probe TTA=TTA:hflip,rot+5 -o "$WORK/ex"
check "explicit TTA set: U_TTA is the mean of 2 transforms" grep -qP '^ES\tTTA\t2\t' "$WORK/ex/report/screen_probesets.tsv"
check "without class draws the class intervals are n/a" awk -F'\t' 'NR > 1 { n++
  if ($10 != "nan" || $11 != "nan" || $17 != "nan" || $18 != "nan") bad = 1 } END { exit bad || n == 0 }' \
  "$WORK/ex/report/screen_natural.tsv"
# bounds' per-source tables (every one, with --calibration) list only the sources that have cells;
# the conditions table lists every source's conditions, probe sources included
pb 1 2 bounds "$S" --calibration -o "$WORK/b"
check "bounds tables: no rows of the probe sources" sh -c "! grep -l -P '^(TTA|Syn-B5)\t' \$(ls '$WORK/b/report/'*.tsv | grep -v protocol_conditions)"
check "bounds tables: the target sources are there" grep -q -P '^ES\t' "$WORK/b/report/identification_table2.tsv"
check "explicit TTA set: TTA_sel picks 2" test "$(awk -F'\t' '$1 == "ES" && $2 == "TTA_sel"' "$WORK/ex/report/screen_natural_selection.tsv" | wc -l)" -eq 2
finish
