# Shared helpers of the MPI tests (sourced).  The harness exports PAIRBOUND,
# MPIRUN, H5DIFF, TOP_SRCDIR and the Open MPI root/oversubscribe settings.
set -u
: "${PAIRBOUND:?}" "${MPIRUN:?}" "${H5DIFF:?}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pbmpi.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILS=0
PASSES=0

ok() { PASSES=$((PASSES + 1)); echo "ok - $*"; }
not_ok() { FAILS=$((FAILS + 1)); echo "not ok - $*"; }
check() { # check DESCRIPTION COMMAND...
  local d=$1; shift
  if "$@"; then ok "$d"; else not_ok "$d"; fi
}
# pb NP THREADS ARGS...: run the real binary under mpirun
pb() {
  local np=$1 th=$2; shift 2
  OMP_NUM_THREADS=$th "$MPIRUN" --oversubscribe -np "$np" "$PAIRBOUND" -v 0 "$@"
}
# same_h5 A B: identical results or stores; /timings (wall seconds, include/pairbound/timer.h)
# and /provenance (command line, git revision) are the parts that may differ
same_h5() { "$H5DIFF" --exclude-path /provenance --exclude-path /timings "$1" "$2" >/dev/null; }
# ranks_identical REPORTS STAGE ARGS...: run the stage at 1-3 ranks x 1-2 threads into
# $WORK/o<np><th> and compare every report file and results.h5 with $WORK/o11
# (the caller's 1 rank x 1 thread run)
ranks_identical() {
  local reports=$1 np th f
  shift
  for np in 1 2 3; do
    for th in 1 2; do
      [ "$np$th" = 11 ] && continue
      pb "$np" "$th" "$@" -o "$WORK/o$np$th"
      for f in $reports; do
        check "$f identical at $np ranks x $th threads" cmp -s "$WORK/o11/report/$f" "$WORK/o$np$th/report/$f"
      done
      check "results.h5 identical at $np ranks x $th threads" same_h5 "$WORK/o11/results.h5" "$WORK/o$np$th/results.h5"
    done
  done
}
finish() {
  echo "# $PASSES passed, $FAILS failed"
  [ "$FAILS" -eq 0 ]
}
