#!/bin/sh
# Resource abuse from valid-looking input (issue 17, item 9): a class index
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
awk -F, 'NR == 3 { $8 = 1048576 } { print }' OFS=, s.csv > bigpred.csv
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
for cmd in bounds check info; do
  if [ $cmd = bounds ]; then set -- tpb 2 bounds huge.h5 -o o; else set -- tpb 1 $cmd huge.h5; fi
  refused "a store with 2e9+1 classes: $cmd" 1 "source Syn: 2000000001 classes, more than the limit of 1048576 per source" "$@"
done
refused "predict --group-draws 10^7" 2 "--group-draws must be an integer in [0, 100000], got '10000000'" \
  tpb 1 predict s.h5 -o p --group-draws 10000000
for st in bounds screen; do
  refused "$st --group-draws 10^7" 2 "--group-draws must be an integer in [0, 100000]" tpb 1 $st s.h5 -o p --group-draws 10000000
done
finish
