#!/bin/sh
# Limits and messages (issue 17, items 9 and 10).
# Resource abuse from valid-looking input (item 9): a class index
# beyond the documented limit of 2^20 classes per source is refused at ingest
# (the label, a prediction, --classes) and at store open, with the limit in
# the message, instead of sizing per-class tables by it; draws beyond the
# documented maximum are a usage error.  Each must be refused at once (a
# time limit catches the old behaviour: seconds to minutes of work).
. "$(dirname "$0")/common.sh"
cd "$WORK" || exit 1
pb 1 1 synth --scale small --no-summary -o s.h5
pb 1 1 export s.h5 -o s.csv
# tpb NP ARGS...: pairbound on NP ranks, stopped after 30 s
# shellcheck disable=SC2086 # MPIRUN_FLAGS is a list of words
tpb() { local np=$1; shift; OMP_NUM_THREADS=1 timeout 30 "$MPIRUN" $MPIRUN_FLAGS -n "$np" "$PAIRBOUND" -v 0 "$@"; }
# refused DESCRIPTION EXIT EXPECTED-MESSAGE COMMAND...: exits EXIT (within the time limit), says why
refused() {
  local d=$1 want=$2 msg=$3; shift 3
  out=$("$@" 2>&1); rc=$?
  check "$d: exit $want (got $rc)" [ $rc -eq "$want" ]
  check "$d: says why" sh -c 'printf "%s" "$1" | grep -qF -- "$2"' _ "$out" "$msg"
}
awk -F, 'NR == 2 { $6 = 2000000000 } { print }' OFS=, s.csv > biglabel.csv
refused "a label of 2e9 at ingest" 1 \
  "biglabel.csv:2: column 'label': class 2000000000 of source Syn exceeds the limit of 1048576 classes per source" \
  tpb 1 ingest biglabel.csv -o big.h5
check "no store from it" test ! -e big.h5
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "pred") p = i } NR == 3 { $p = 1048576 } { print }' OFS=, s.csv > bigpred.csv
refused "a prediction of 2^20 at ingest" 1 "column 'pred': class 1048576 of source Syn exceeds the limit of 1048576" \
  tpb 1 ingest bigpred.csv -o big.h5
refused "--classes beyond the limit" 2 "1 <= N <= 1048576 (the limit of classes per source), found '2147483647'" \
  tpb 1 ingest s.csv --classes 2147483647 -o big.h5
refused "--classes SRC=N beyond the limit" 2 "found 'Syn=1048577'" tpb 1 ingest s.csv --classes Syn=1048577 -o big.h5
pb 1 1 ingest s.csv --classes Syn=1048576 -o atcap.h5
check "exactly 2^20 classes is accepted" test -s atcap.h5
# a store written by something else (or edited) that claims 2e9 classes
cp s.h5 huge.h5
"$H5POKE" --attr huge.h5 /sources/Syn n_classes 2000000001
"$H5POKE" --digest huge.h5 /sources/Syn # as its writer would have: the checksum holds, the limit refuses it
for cmd in bounds check info; do
  if [ $cmd = bounds ]; then set -- tpb 2 bounds huge.h5 -o o; else set -- tpb 1 $cmd huge.h5; fi
  refused "a store with 2e9+1 classes: $cmd" 1 "source Syn: 2000000001 classes, more than the limit of 1048576 per source" "$@"
done
refused "predict --group-draws 10^7" 2 "--group-draws must be an integer in [0, 100000], got '10000000'" \
  tpb 1 predict s.h5 -o p --group-draws 10000000
for st in bounds screen; do
  refused "$st --group-draws 10^7" 2 "--group-draws must be an integer in [0, 100000]" tpb 1 $st s.h5 -o p --group-draws 10000000
done

# --- messages (item 10)
sed 's/^classes = 20$/classes = 2147483647/' "$TOP_SRCDIR/inputs/small.ini" > huge.ini
refused "synth: classes = 2^31-1 names the real cap" 1 \
  "huge.ini:28: [source Syn] classes must be an integer in [2, 1048576] (the limit of classes per source), got '2147483647'" \
  tpb 1 synth --config huge.ini -o h.h5 --no-summary
# a long name must not push the reason out of the message (it was cut at 2,048 bytes)
long=$WORK
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14; do long=$long/$(printf 'd%.0s' $(seq 200))$i; done
mkdir -p "$long"
awk -F, 'NR == 2 { $6 = -3 } { print }' OFS=, s.csv > "$long/neg.csv"
check "the CSV path is over 2,048 bytes" [ ${#long} -gt 2800 ]
refused "an error behind a ${#long}-byte path keeps its reason" 1 "neg.csv:2: column 'label': negative class -3" \
  tpb 1 ingest "$long/neg.csv" -o neg.h5
# a store and outputs behind a 1,000-character path (Open MPI's lockedfile
# shared-file-pointer component aborted from about 240; docs/run.md)
deep=$WORK
while [ ${#deep} -lt 1000 ]; do deep=$deep/$(printf 'p%.0s' $(seq 90)); done
mkdir -p "$deep"
cp s.h5 "$deep/s.h5"
check "the store path is 1,000 characters or more" [ ${#deep} -ge 1000 ]
out=$(tpb 1 info "$deep/s.h5" 2>&1)
check "info on a store behind a long path" sh -c 'printf "%s" "$1" | grep -qx "schema_version 3"' _ "$out"
tpb 2 bounds "$deep/s.h5" -o "$deep/o" > /dev/null 2>&1
check "bounds at 2 ranks, store and output behind a long path" test -s "$deep/o/report/bounds.tsv"
tpb 2 synth --scale small --no-summary -o "$deep/n.h5" > /dev/null 2>&1
check "synth at 2 ranks into a long path" sh -c 'test -s "$1/n.h5" && ! ls "$1"/n.h5.* > /dev/null 2>&1' _ "$deep"
# run cannot take --probe: on a store without a probe source (no synthetic
# role) run skips screen, naming the role to set and the INI key
grep -v ',Syn-B,' s.csv > nob.csv
pb 1 1 ingest nob.csv -o nob.h5
printf '[run]\nstore = nob.h5\noutput = runo\nstages = screen\n' > nob.ini
refused "run: no probe source: screen skipped, naming the role and the [screen] key" 0 \
  "skipped screen: no synthetic source shares images with a real source (declare the probe suite: pairbound roles STORE --set SRC=synthetic, or set probe in [screen])" \
  tpb 1 run nob.ini
check "run: ... and never --probe" sh -c '! printf "%s" "$1" | grep -q -- --probe' _ "$out"
# a probe the configuration names but the store lacks fails the run, naming the key
printf '[screen]\nprobe = Syn-B\n' >> nob.ini
refused "run: a probe source the [screen] section names but the store lacks fails, naming the sources" 1 \
  "probe source Syn-B is not in the store (the store's sources: Syn, ES, Diverse, TTA, Syn-B5)" tpb 1 run nob.ini
check "run: ... and never --probe" sh -c '! printf "%s" "$1" | grep -q -- --probe' _ "$out"
refused "screen: the same store suggests the option" 1 "give --probe SRC" tpb 1 screen nob.h5 -o so
printf '[run]\nstore = nob.h5\noutput = runo\nstages = fragility\n[fragility]\nprobe = Nope\n' > nob2.ini
refused "run: an unknown [fragility] probe names the key" 1 "[fragility] probe = Nope: no such source" tpb 1 run nob2.ini
# one model group: the group intervals collapse to the estimate; say so
awk -F, 'NR == 1 || $2 == "alpha"' s.csv > one.csv
pb 1 1 ingest one.csv --role Syn=synthetic --role Syn-B=synthetic --role TTA=natural:18 --role Syn-B5=extra:Syn-B \
  -o one.h5
for st in bounds screen; do
  # shellcheck disable=SC2086 # MPIRUN_FLAGS is a list of words
  OMP_NUM_THREADS=1 "$MPIRUN" $MPIRUN_FLAGS -n 2 "$PAIRBOUND" $st one.h5 -o one_$st --group-draws 200 2> one_$st.err
  check "$st, one model group: warns on stderr" \
    grep -q "warning: $st: every model is in the one model group 'alpha'.*zero width" one_$st.err
  check "$st, one model group: the report says so" grep -q "every model belongs to one model group" one_$st/report/*.md
done
check "bounds, one model group: the intervals are indeed zero-width (lo = estimate = hi)" \
  awk -F'\t' 'NR > 1 && !($4 == $7 && $7 == $8 && $5 == $9 && $9 == $10) { bad = 1 } END { exit bad || NR < 2 }' \
  one_bounds/report/identification_variance_ratio.tsv
pb 1 1 bounds s.h5 -o two --group-draws 200 2> two.err
check "bounds, several groups: no such warning" sh -c '! grep -q "one model group" two.err two/report/REPORT.md'
finish
