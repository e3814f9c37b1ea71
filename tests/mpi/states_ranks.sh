# states (the work-distribution demo) and protocol: byte-identical reports and
# identical results.h5 for 1, 2, 3 ranks and 1, 2 threads.
. "$TOP_SRCDIR/tests/mpi/common.sh"

pb 1 1 synth --scale small --no-summary -o "$WORK/s.h5"
pb 1 1 states "$WORK/s.h5" -o "$WORK/o11"
check "states.tsv has one row per cell" test "$(($(wc -l < "$WORK/o11/report/states.tsv") - 1))" -eq 85
ranks_identical "states.tsv protocol_thresholds.tsv protocol_conditions.tsv protocol_panel.tsv" states "$WORK/s.h5"
check "no temporary results left" sh -c '! ls -a "$1"/o* "$1"/o*/report 2>/dev/null | grep -q "[.]tmp"' _ "$WORK"

# Paper scale, cells 10x different in size: 1 vs 3 ranks.
P=$(paper_store)  # the suite's paper store (tests/mpi/paper_store.sh)
pb 1 2 states "$P" -o "$WORK/p1"
pb 3 1 states "$P" -o "$WORK/p3"
check "paper states.tsv identical at 1 and 3 ranks" cmp -s "$WORK/p1/report/states.tsv" "$WORK/p3/report/states.tsv"
check "paper results.h5 identical at 1 and 3 ranks" same_h5 "$WORK/p1/results.h5" "$WORK/p3/results.h5"
check "paper states.tsv has 11,088 cells" test "$(($(wc -l < "$WORK/p1/report/states.tsv") - 1))" -eq 11088
# the five states partition every cell: h + r + s + w + k = n
check "five-state counts sum to n in every cell" \
  awk -F'\t' 'NR > 1 && $8 + $9 + $10 + $11 + $12 != $5 { bad = 1 } END { exit bad }' "$WORK/p1/report/states.tsv"
finish
