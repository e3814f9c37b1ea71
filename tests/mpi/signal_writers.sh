#!/bin/sh
# A synth or export stopped by SIGTERM while it writes leaves neither its
# temporary (STORE.tmp.*, CSV.tmp.*: hundreds of MB for a paper store) nor its
# lock file, and an existing output exactly as it was, at 1 and 2 ranks: the
# signal's immediate exit removes the files the writer registered
# (pb_signal_cleanup_file; ingest and roles --set register theirs alike).
. "$(dirname "$0")/common.sh"
cd "$WORK" || exit 1
GRACE=""
if "$MPIRUN" --version 2>&1 | grep -q "Open MPI"; then GRACE="--mca odls_base_sigkill_timeout 5"; fi
pb 1 1 synth --scale small --no-summary -o p.h5
sha256sum p.h5 > before
# stopped NAME NP PATTERN COMMAND...: start COMMAND on NP ranks, wait for a file
# matching PATTERN (its temporary), SIGTERM the launcher and its ranks, and wait for its end
stopped() {
  local name=$1 np=$2 pattern=$3 pid i rc
  shift 3
  # shellcheck disable=SC2086 # MPIRUN_FLAGS and GRACE are lists of words
  (OMP_NUM_THREADS=1 exec "$MPIRUN" $MPIRUN_FLAGS $GRACE -n "$np" "$PAIRBOUND" -v 0 "$@" > term.log 2>&1) &
  pid=$!
  for i in $(seq 600); do
    # shellcheck disable=SC2086 # PATTERN is a glob
    ls $pattern > /dev/null 2>&1 && break
    sleep 0.05
  done
  check "$name, $np rank(s): its temporary appeared" sh -c "ls $pattern > /dev/null 2>&1"
  # the launcher and its ranks at once, as SLURM's scancel signals every process of a step: the ranks do not
  # wait for the launcher to forward it (seconds, on a loaded machine, while a paper store is written in five)
  kill -TERM $pid
  pkill -TERM -P $pid 2> /dev/null
  timeout 60 sh -c "while kill -0 $pid 2>/dev/null; do sleep 0.1; done"
  wait $pid; rc=$?
  check "$name, $np rank(s): SIGTERM ends it non-zero ($rc)" [ $rc -ne 0 ]
  check "$name, $np rank(s): says its output is as it was" grep -q "stopped by a signal" term.log
  check "$name, $np rank(s): no temporary left" sh -c "! ls $pattern > /dev/null 2>&1"
}
for np in 1 2; do
  # the paper store takes seconds: the signal comes while it is written
  stopped "synth over an existing store" $np 'p.h5.tmp.*' synth --no-summary -o p.h5
  check "synth, $np rank(s): no lock file left" test ! -e p.h5.lock
  check "synth, $np rank(s): the existing store is as it was" sha256sum -c --quiet before
done
pb 2 1 synth --no-summary -o big.h5
for np in 1 2; do
  stopped "export" $np 'big.csv.tmp.*' export big.h5 -o big.csv
  check "export, $np rank(s): no lock file left" test ! -e big.csv.lock
  check "export, $np rank(s): no CSV" test ! -e big.csv
done
finish
