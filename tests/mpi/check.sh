#!/bin/sh
# Store integrity: `pairbound check` passes a good store, and every kind of
# damage -- a class out of range, a probability above 1 or NaN, M > S, a
# flipped bit inside a checksummed chunk, a `topk` attribute that disagrees
# with the datasets -- is named by `check` (exit 1) and refused by the stages
# that read the records, at 1 and 2 ranks, with the cell and image named.
. "$(dirname "$0")/common.sh"
: "${H5POKE:?}"

pb 1 1 synth --scale small --no-summary -o "$WORK/good.h5"
out=$(pb 2 1 check "$WORK/good.h5"); rc=$?
check "a good store passes check" [ $rc -eq 0 ]
# rows: 5 models x (4 Syn + 5 ES + 7 Diverse + 5 Syn-B + 31 TTA + 3 Syn-B5 conditions) = 275;
# records: 5 x (4 x 120 + 5 x 60 + 7 x 60 + 5 x 60 + 31 x 60 + 3 x 60) = 17,700 (check reads probe sources too)
check "check counts every record (4 Syn + 5 ES + 7 Diverse + 5 Syn-B + 31 TTA + 3 Syn-B5 conditions x 5 models)" \
  sh -c "echo '$out' | grep -q '^checked 17700 records in 275 rows: ok, 0 damaged$'"

# damage DESCRIPTION DATASET INDEX VALUE EXPECTED-REASON [STAGE-READS-IT]
# (bounds reads no top-k lists, so top-k damage is shown through check and export)
damage() {
  cp "$WORK/good.h5" "$WORK/bad.h5"
  "$H5POKE" "$WORK/bad.h5" "$2" "$3" "$4" >/dev/null || { not_ok "$1: h5poke"; return; }
  for np in 1 2; do
    out=$(pb $np 1 check "$WORK/bad.h5" 2>&1); rc=$?
    check "$1: check exits 1 at $np ranks" [ $rc -eq 1 ]
    check "$1: check names the source, model, condition and image" \
      sh -c "printf '%s' \"\$1\" | grep -q 'source Syn, model [^,]*, condition [^,]*, image [^:]*: $5'" _ "$out"
    check "$1: check counts one damaged record" sh -c "printf '%s' \"\$1\" | grep -q ': 1 damaged'" _ "$out"
    [ "${6:-bounds}" = bounds ] || continue
    err=$(pb $np 1 bounds "$WORK/bad.h5" -o "$WORK/b$np" 2>&1); rc=$?
    check "$1: bounds refuses the store at $np ranks" [ $rc -eq 1 ]
    check "$1: bounds names the damaged record" \
      sh -c "printf '%s' \"\$1\" | grep -q 'invalid record: source Syn, model .*: $5'" _ "$err"
    check "$1: bounds leaves no output" [ ! -e "$WORK/b$np/results.h5" ]
  done
  out=$(pb 1 1 export "$WORK/bad.h5" -o "$WORK/bad.csv" 2>&1); rc=$?
  check "$1: export refuses the store" [ $rc -eq 1 ]
  check "$1: export writes no CSV" [ ! -e "$WORK/bad.csv" ]
}
damage "class out of range" /sources/Syn/pred 0 999 'predicted class 999 outside \[0, 20)'
damage "negative class" /sources/Syn/pred 5 -3 'predicted class -3 outside \[0, 20)'
damage "max probability above 1" /sources/Syn/smax 7 1.5 'max probability 1.5 outside \[0, 1\]'
damage "NaN probability" /sources/Syn/ptrue 7 nan 'true-class probability nan outside \[0, 1\]'
damage "top-k class out of range" /sources/Syn/topk_class 4 77 'top-[0-9] class 77 outside \[0, 20)' none

cp "$WORK/good.h5" "$WORK/flip.h5"
"$H5POKE" --flip "$WORK/flip.h5" /sources/ES/smax
out=$(pb 2 1 check "$WORK/flip.h5" 2>&1); rc=$?
check "flipped bit: check exits 1" [ $rc -eq 1 ]
check "flipped bit: check names the row whose chunk fails its checksum" \
  sh -c "printf '%s' \"\$1\" | grep -q 'source ES, model [^,]*, condition [^:]*: records cannot be read (a chunk fails its checksum'" _ "$out"
err=$(pb 2 1 bounds "$WORK/flip.h5" -o "$WORK/bf" 2>&1); rc=$?
check "flipped bit: bounds fails" [ $rc -eq 1 ]
check "flipped bit: bounds says the records are damaged" \
  sh -c "printf '%s' \"\$1\" | grep -q \"cannot read records 'smax' of source ES (damaged file\"" _ "$err"

cp "$WORK/good.h5" "$WORK/topk.h5"
"$H5POKE" --attr "$WORK/topk.h5" / topk 5
err=$(pb 1 1 bounds "$WORK/topk.h5" -o "$WORK/bt" 2>&1); rc=$?
check "topk attribute disagreeing with the datasets: bounds fails" [ $rc -eq 1 ]
err=$(pb 1 1 export "$WORK/topk.h5" -o "$WORK/topk.csv" 2>&1); rc=$?
check "topk attribute disagreeing with the datasets: export fails" [ $rc -eq 1 ]
check "topk attribute disagreeing: the message names the shapes" \
  sh -c "printf '%s' \"\$1\" | grep -q \"records 'topk_class' of source Syn have 4 dimensions .* but the metadata says\"" _ "$err"
cp "$WORK/good.h5" "$WORK/notopk.h5"
"$H5POKE" --attr "$WORK/notopk.h5" / topk 0
out=$(pb 1 1 export "$WORK/notopk.h5" -o "$WORK/notopk.csv" 2>&1); rc=$?
check "topk attribute 0 with top-k datasets present: the store still reads (lists ignored)" [ $rc -eq 0 ]
finish
