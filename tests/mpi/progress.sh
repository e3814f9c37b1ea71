# Progress lines on rank 0's stderr: plain lines off a terminal (here forced
# frequent with PAIRBOUND_PROGRESS_INTERVAL), none on a short run at the default
# interval, none with -v 0, a live redrawn line on a terminal; the outputs are
# the same with or without progress reporting.
. "$TOP_SRCDIR/tests/mpi/common.sh"

pb 1 1 synth --scale small --no-summary -o "$WORK/s.h5"
OMP_NUM_THREADS=2 PAIRBOUND_PROGRESS_INTERVAL=0.000001 "$MPIRUN" -np 2 "$PAIRBOUND" bounds "$WORK/s.h5" -o "$WORK/a" 2> "$WORK/a.err"
check "progress: lines 'bounds: DONE/TOTAL cells on rank 0'" grep -q '^\[0\] bounds\( (I5 pass)\)\?: [0-9]*/[0-9]* cells on rank 0 ([0-9]*%), .* cells/s, ETA ' "$WORK/a.err"
check "progress: only rank 0 reports" test "$(grep -c '^\[1\] bounds: [0-9]*/' "$WORK/a.err")" -eq 0
check "progress: counts never exceed the rank's share" sh -c "grep -o ': [0-9]*/[0-9]* cells on rank 0' '$WORK/a.err' |
  awk -F'[ /]' '{ if (\$2 + 0 > \$3 + 0) bad = 1 } END { exit bad }'"
OMP_NUM_THREADS=2 PAIRBOUND_PROGRESS_INTERVAL=0.000001 "$MPIRUN" -np 1 "$PAIRBOUND" -v 0 bounds "$WORK/s.h5" -o "$WORK/b" 2> "$WORK/b.err"
check "progress: -v 0 silences it" test ! -s "$WORK/b.err"
"$MPIRUN" -np 1 "$PAIRBOUND" bounds "$WORK/s.h5" -o "$WORK/c" 2> "$WORK/c.err"
check "progress: none off a terminal on a short stage" test "$(grep -c 'cells/s' "$WORK/c.err")" -eq 0
check "progress: outputs unchanged" same_h5 "$WORK/a/results.h5" "$WORK/b/results.h5"
check "progress: reports unchanged" cmp -s "$WORK/a/report/bounds.tsv" "$WORK/b/report/bounds.tsv"
if command -v script > /dev/null; then
  PAIRBOUND_PROGRESS_INTERVAL=0.000001 script -qc "'$PAIRBOUND' policy '$WORK/s.h5' -o '$WORK/d' > /dev/null" /dev/null > "$WORK/d.tty"
  check "progress on a terminal: redrawn in place, ends with done" grep -q "$(printf '\r')\[0\] policy: 85/85 cells (100%), .* done" "$WORK/d.tty"
fi
finish
