# A read error on one rank only (PAIRBOUND_TEST_READ_FAIL_RANK: that rank's
# first selection of every store transfer fails, as a local HDF5 error would)
# must end the job with the error message on every rank count, not hang it in
# the collective read the failing rank no longer makes.
. "$TOP_SRCDIR/tests/mpi/common.sh"

"$PAIRBOUND" -v 0 synth --scale small --no-summary -o "$WORK/s.h5"
for np in 2 3; do
  for stage in bounds policy screen; do
    last=$((np - 1))
    PAIRBOUND_TEST_READ_FAIL_RANK=$last timeout 120 "$MPIRUN" --oversubscribe -np "$np" \
      "$PAIRBOUND" -v 0 "$stage" "$WORK/s.h5" -o "$WORK/$stage$np" 2> "$WORK/err.txt"
    rc=$?
    check "$stage: local read failure on rank $last of $np: exits (no hang), status 1" test "$rc" -eq 1
    check "$stage: the message names the failing rank and the records" \
      grep -qE "^pairbound $stage: error: rank $last: $WORK/s.h5: cannot select rows of records '[a-z_]+' of source " \
      "$WORK/err.txt"
    check "$stage: no results committed" test ! -e "$WORK/$stage$np/results.h5"
  done
done
# the hook off: the same runs succeed
pb 2 1 bounds "$WORK/s.h5" -o "$WORK/ok"
check "no injected failure: bounds passes at 2 ranks" test $? -eq 0
# a stage's own failure on a later rank (issue 17 item 6): source Diverse (the
# last cells) has no development images, so its threshold is missing; the
# reason, with the rank and the cell, reaches the user, never "unknown error"
"$PAIRBOUND" -v 0 export "$WORK/s.h5" -o "$WORK/s.csv"
awk -F, 'BEGIN { OFS = "," } $3 == "Diverse" && $7 == "dev" { $7 = "eval" } { print }' "$WORK/s.csv" > "$WORK/nd.csv"
# (the probe-only sources keep their roles, so Diverse holds the last cells)
"$PAIRBOUND" -v 0 ingest "$WORK/nd.csv" --role TTA=natural:18 --role Syn-B5=extra:Syn-B -o "$WORK/nd.h5"
for stage in bounds policy verify; do
  timeout 120 "$MPIRUN" --oversubscribe -np 5 "$PAIRBOUND" -v 0 "$stage" "$WORK/nd.h5" -o "$WORK/nd_$stage" \
    2> "$WORK/err.txt"
  rc=$?
  check "$stage at 5 ranks, failure on a later rank: status 1" test "$rc" -eq 1
  check "$stage at 5 ranks: the reason names the rank, source and model" \
    grep -qE "^pairbound $stage: error: rank [1-4]: source Diverse, model [^ ,]+(, condition [^ ]+)?: no development threshold" \
    "$WORK/err.txt"
done
finish
