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
same_h5() { "$H5DIFF" --exclude-path /provenance "$1" "$2" >/dev/null; }
finish() {
  echo "# $PASSES passed, $FAILS failed"
  [ "$FAILS" -eq 0 ]
}
