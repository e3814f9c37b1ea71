# ingest of many CSV files (one per model, as one evaluation job per model
# writes them) and of stdin: the store equals the one ingested from the
# single CSV (every record, checksum and attribute but provenance); errors
# name their file.
. "$TOP_SRCDIR/tests/mpi/common.sh"

per_model_csvs
n=$(wc -l < "$WORK/list")
check "split into one file per model ($n files)" test "$n" -ge 2
# shellcheck disable=SC2086 # ROLES and the list are words
pb 1 1 ingest "$WORK/a.csv" $ROLES -o "$WORK/one.h5"
# shellcheck disable=SC2046,SC2086
pb 1 1 ingest $(cat "$WORK/list") $ROLES -o "$WORK/files.h5"
check "store from $n files equals the store from the single CSV" same_h5 "$WORK/one.h5" "$WORK/files.h5"
check "and the synthesised store" same_h5 "$WORK/s.h5" "$WORK/files.h5"
# shellcheck disable=SC2046,SC2086
pb 2 1 ingest $(cat "$WORK/list") $ROLES -o "$WORK/files2.h5"
check "the same at 2 ranks" same_h5 "$WORK/one.h5" "$WORK/files2.h5"
# shellcheck disable=SC2086
"$PAIRBOUND" -v 0 ingest - $ROLES -o "$WORK/stdin.h5" < "$WORK/a.csv"
check "store from stdin equals the store from the file" same_h5 "$WORK/one.h5" "$WORK/stdin.h5"
check "no copy of stdin left behind" sh -c "! ls '$WORK'/stdin.h5.* 2>/dev/null | grep -q ."
# errors name their file and line; the first in file order wins
first=$(sed -n 1p "$WORK/list") second=$(sed -n 2p "$WORK/list")
sed '3s/,eval,/,test,/; 3s/,dev,/,test,/' "$second" > "$WORK/bad.csv"
"$PAIRBOUND" -v 0 ingest "$first" "$WORK/bad.csv" -o "$WORK/bad.h5" 2> "$WORK/err.txt"
check "error in the second file: exit 1" test $? -eq 1
check "error in the second file: names it and its line" \
  grep -qF "pairbound ingest: error: $WORK/bad.csv:3: column 'split': expected 'dev' or 'eval', found 'test'" "$WORK/err.txt"
check "no store written" sh -c "! ls '$WORK'/bad.h5* 2>/dev/null | grep -q ."
"$PAIRBOUND" -v 0 ingest "$first" "$first" -o "$WORK/dup.h5" 2> "$WORK/err.txt"
check "a file given twice: its rows are duplicates, first seen in the first" \
  grep -qF ":2: duplicate record for source Syn, model" "$WORK/err.txt"
check "  ... named in both files" grep -qF "(first at line 2 of $first)" "$WORK/err.txt"
"$PAIRBOUND" -v 0 ingest - - -o "$WORK/x.h5" < /dev/null 2> "$WORK/err.txt"
check "stdin twice: refused" grep -qF "stdin (-) given more than once" "$WORK/err.txt"
finish
