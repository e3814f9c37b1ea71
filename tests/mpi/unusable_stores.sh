#!/bin/sh
# Stores the stages cannot use (issue 17, item 8) say in words what they
# lack, naming the store, instead of failing inside HDF5 ("cannot write
# dataset .../n"): a store with only the 'clean' condition (nothing to
# analyse), one whose images are all in the development split (nothing to
# evaluate on), and a screen with nothing to screen (no target image occurs
# in the probe source), which still writes its tables, every value n/a, and
# says why; a truncated store is named as such.  Each store is made from CSVs
# ingested here.
. "$(dirname "$0")/common.sh"
cd "$WORK" || exit 1
pb 1 1 synth --scale small --no-summary -o s.h5
pb 1 1 export s.h5 -o s.csv
# refused NP DESCRIPTION EXPECTED-MESSAGE ARGS...: exit 1 with the message, no output
refused() {
  local np=$1 d=$2 msg=$3; shift 3
  out=$(pb "$np" 1 "$@" 2>&1); rc=$?
  check "$d: exit 1 (got $rc)" [ $rc -eq 1 ]
  check "$d: says what the store lacks" sh -c 'printf "%s" "$1" | grep -qF -- "$2"' _ "$out" "$msg"
  check "$d: no output" sh -c '! ls "$1"/report "$1"/results.h5 >/dev/null 2>&1' _ "$(eval echo "\${$#}")"
}
awk -F, 'NR == 1 || $4 == "clean"' s.csv > clean.csv
pb 1 1 ingest clean.csv -o clean.h5
for st in states bounds policy verify fragility screen predict; do
  refused 2 "only 'clean' conditions: $st" \
    "clean.h5: nothing for $st to analyse: no source has a condition besides 'clean'" $st clean.h5 -o c_$st
done
sed 's/,eval,/,dev,/' s.csv > dev.csv
pb 1 1 ingest dev.csv -o dev.h5
for st in bounds policy verify screen predict; do
  refused 2 "every image in the development split: $st" \
    "dev.h5: $st needs evaluation images, but every image of the store is in the development split" $st dev.h5 -o d_$st
done
pb 2 1 states dev.h5 -o d_states
check "every image in the development split: states still runs (it needs no split)" test -s d_states/results.h5

# nothing to screen: the target sources' image ids do not occur in the probe
# source.  By roles there is then no probe (a synthetic source that shares
# images with a real one), which screen says; given, they screen nothing.
awk -F, 'BEGIN { OFS = "," } NR > 1 && ($3 == "ES" || $3 == "Diverse") { $5 = "x" $5 } { print }' s.csv > nojoin.csv
pb 1 1 ingest nojoin.csv --role Syn=synthetic --role Syn-B=synthetic --role TTA=natural:18 --role Syn-B5=extra:Syn-B \
  -o nojoin.h5
refused 1 "nothing to screen by roles" "no probe source: no synthetic source shares images with a real source" \
  screen nojoin.h5 -o sj0
for np in 1 2; do
  # shellcheck disable=SC2086 # MPIRUN_FLAGS is a list of words
  OMP_NUM_THREADS=1 "$MPIRUN" $MPIRUN_FLAGS -n $np "$PAIRBOUND" screen nojoin.h5 --probe Syn-B --targets ES,Diverse \
    -o sj$np 2> sj$np.err
  check "nothing to screen, $np rank(s): exit 0 (was: HDF5: cannot write dataset '/screen/images/unit')" test $? -eq 0
  check "nothing to screen, $np rank(s): warns why" \
    grep -q "warning: screen: nojoin.h5: no image of the target sources (ES, Diverse) occurs in the probe source Syn-B" \
    sj$np.err
  check "nothing to screen, $np rank(s): the report says why" grep -q "^\*Nothing to screen: " sj$np/report/screen.md
  check "nothing to screen, $np rank(s): the AUROC table has its conditions and cells, none defined, every value nan" \
    awk -F'\t' 'NR > 1 { rows++; if ($3 < 1 || $4 < 1 || $5 != 0) bad = 1; for (i = 6; i <= NF; i++) if ($i != "nan") bad = 1 }
                END { exit bad || rows == 0 }' sj$np/report/screen_auroc.tsv
done
check "nothing to screen: identical at 1 and 2 ranks" cmp -s sj1/report/screen_auroc.tsv sj2/report/screen_auroc.tsv
# issue 47 item 14: a store one byte short (an interrupted copy) said only "cannot open"
cp s.h5 short.h5 && truncate -s -1 short.h5
for cmd in info check; do
  out=$(pb 1 1 $cmd short.h5 2>&1)
  check "$cmd of a truncated store: says it is truncated, naming it" \
    sh -c 'printf "%s" "$1" | grep -qF "short.h5: cannot open: the file is truncated, damaged or incompletely copied (HDF5: truncated file: eof = $2,"' _ "$out" "$(($(wc -c < s.h5) - 1))"
done
refused 2 "bounds of a truncated store" "short.h5: cannot open: the file is truncated" bounds short.h5 -o tr
finish
