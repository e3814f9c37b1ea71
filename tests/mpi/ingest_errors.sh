# ingest errors through the real binary: FILE:LINE message, exit 1, nothing written.
. "$TOP_SRCDIR/tests/mpi/common.sh"

H=model,group,source,condition,image,label,split,pred,smax,ptrue
printf '%s\n' "$H" 'm1,g1,S,clean,i1,0,eval,0,0.9,0.9' 'm1,g1,S,fog,i1,0,eval,1,abc,0.1' > "$WORK/bad.csv"
for np in 1 2; do
  pb "$np" 1 ingest "$WORK/bad.csv" -o "$WORK/bad.h5" 2> "$WORK/err$np.txt"
  rc=$?
  check "non-numeric field: exit status 1 at $np ranks" test "$rc" -eq 1
  check "non-numeric field: message names file and line at $np ranks" \
    grep -qF "pairbound ingest: error: $WORK/bad.csv:3: column 'smax': not a number: 'abc'" "$WORK/err$np.txt"
  check "non-numeric field: one message at $np ranks" test "$(grep -c '^pairbound' "$WORK/err$np.txt")" -eq 1
  check "non-numeric field: no store written at $np ranks" sh -c "! ls '$WORK'/bad.h5* 2>/dev/null | grep -q ."
done
printf '%s\n' "$H" 'm1,g1,S,clean,i1,0,eval,0,0.9,0.9' 'm1,g1,S,fog,i1,0,eval,1,0.8,0.1' \
  'm1,g1,S,clean,i2,1,eval,1,0.7,0.7' > "$WORK/missing.csv"
pb 1 1 ingest "$WORK/missing.csv" -o "$WORK/missing.h5" 2> "$WORK/err.txt"
check "missing record: exit status 1" test $? -eq 1
check "missing record: names cell and image" \
  grep -qF "pairbound ingest: error: $WORK/missing.csv: source S, model m1, condition fog: missing record for image i2" "$WORK/err.txt"
check "missing record: no store written" sh -c "! ls '$WORK'/missing.h5* 2>/dev/null | grep -q ."
pb 1 1 ingest "$WORK/nonexistent.csv" -o "$WORK/x.h5" 2> "$WORK/err.txt"
check "unreadable CSV: exit status 1" test $? -eq 1
finish
