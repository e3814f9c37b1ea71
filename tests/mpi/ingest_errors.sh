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
# numeric forms (issue 17 item 11, docs/csv.md): hexadecimal and float32
# underflow refused at their line; -0 stored and exported as 0; CR-only line ends refused
ok_csv() { printf '%s\n' "$H" "m1,g1,S,clean,i1,0,eval,1,0.9,$1" 'm1,g1,S,fog,i1,0,eval,1,0.8,0.1'; }
ok_csv 0x1p-1 > "$WORK/hex.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/hex.csv" -o "$WORK/hex.h5" 2> "$WORK/err.txt"
check "hexadecimal float: exit 1" test $? -eq 1
check "hexadecimal float: named at its line" \
  grep -qF "$WORK/hex.csv:2: column 'ptrue': hexadecimal number '0x1p-1' not accepted" "$WORK/err.txt"
ok_csv 1e-50 > "$WORK/under.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/under.csv" -o "$WORK/under.h5" 2> "$WORK/err.txt"
check "1e-50 (underflows float32): exit 1" test $? -eq 1
check "1e-50: named at its line" grep -qF "$WORK/under.csv:2: column 'ptrue': 1e-50 is not zero but underflows to 0" "$WORK/err.txt"
ok_csv 1e-40 > "$WORK/sub.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/sub.csv" -o "$WORK/sub.h5" 2> "$WORK/err.txt"
check "1e-40 (a float32 subnormal): accepted" test $? -eq 0
ok_csv -0 > "$WORK/negzero.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/negzero.csv" -o "$WORK/negzero.h5" &&
  "$PAIRBOUND" -v 0 export "$WORK/negzero.h5" -o "$WORK/negzero_out.csv"
check "-0: exported as 0" test "$(sed -n 2p "$WORK/negzero_out.csv" | cut -d, -f10)" = 0
ok_csv 0.5 | tr '\n' '\r' > "$WORK/cr.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/cr.csv" -o "$WORK/cr.h5" 2> "$WORK/err.txt"
check "CR-only line ends: exit 1" test $? -eq 1
check "CR-only line ends: said so" grep -qF "$WORK/cr.csv:1: carriage return inside a line: line ends must be LF or CRLF" "$WORK/err.txt"
printf '%s\r\n' "$H" 'm1,g1,S,clean,i1,0,eval,1,0.9,0.5' 'm1,g1,S,fog,i1,0,eval,1,0.8,0.1' > "$WORK/crlf.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/crlf.csv" -o "$WORK/crlf.h5" 2> "$WORK/err.txt"
check "CRLF line ends: accepted" test $? -eq 0

# label sets (docs/csv.md, column 'labels'): each refused at its line with the reason, nothing written
HL=$H,labels
lsets_err() { # lsets_err NAME MESSAGE ROWS...: ingest fails with exactly MESSAGE (after "FILE:") and writes nothing
  local name=$1 msg=$2; shift 2
  printf '%s\n' "$@" > "$WORK/$name.csv"
  "$PAIRBOUND" -v 0 ingest "$WORK/$name.csv" -o "$WORK/$name.h5" 2> "$WORK/err.txt"
  check "labels, $name: exit 1" test $? -eq 1
  check "labels, $name: message" grep -qxF "pairbound ingest: error: $WORK/$name.csv:$msg" "$WORK/err.txt"
  check "labels, $name: no store written" sh -c "! ls '$WORK'/$name.h5* 2>/dev/null | grep -q ."
}
lsets_err ldup "1: duplicate column 'labels'" "$HL,labels" 'm1,g1,S,clean,i1,0,eval,0,0.9,0.9,1,1'
lsets_err lempty "2: column 'labels': empty class id in label set '3;;4'" "$HL" 'm1,g1,S,clean,i1,0,eval,0,0.9,0.9,3;;4'
lsets_err ltwice "2: column 'labels': class 3 twice in label set '3;0;3'" "$HL" 'm1,g1,S,clean,i1,0,eval,0,0.9,0.9,3;0;3'
lsets_err lnotid "2: column 'labels': 'x' in label set '1;x' is no class id (an integer in [0, 1048576))" "$HL" \
  'm1,g1,S,clean,i1,0,eval,0,0.9,0.9,1;x'
lsets_err lconflict "3: image i1 of source S has label set '0;3' here but '0;2' at line 2" "$HL" \
  'm1,g1,S,clean,i1,0,eval,0,0.9,0.9,0;2' 'm1,g1,S,fog,i1,0,eval,1,0.8,0.1,0;3'

finish
