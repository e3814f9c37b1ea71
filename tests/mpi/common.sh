# Shared helpers of the MPI tests (sourced).  The harness exports PAIRBOUND,
# MPIRUN, MPIRUN_FLAGS, H5DIFF, TOP_SRCDIR and the Open MPI root settings.
set -u
: "${PAIRBOUND:?}" "${MPIRUN:?}" "${H5DIFF:?}"
# OPEN_MPI: 1 when the launcher is Open MPI's
if "$MPIRUN" --version 2>&1 | grep -q "Open MPI"; then OPEN_MPI=1; else OPEN_MPI=0; fi
# MPIRUN_FLAGS=auto (configure's default): Open MPI's mpirun needs
# --oversubscribe (more ranks than cores) and --bind-to none (else it pins a
# rank's threads to one core); other launchers (srun, MPICH) get no flags.
if [ "${MPIRUN_FLAGS:-auto}" = auto ]; then
  if [ "$OPEN_MPI" = 1 ]; then MPIRUN_FLAGS="--oversubscribe --bind-to none"; else MPIRUN_FLAGS=""; fi
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/pbmpi.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# Open MPI's session directories under WORK, removed with it: a rank or
# launcher a test kills leaves its own behind, and every later MPI start on
# the machine reads the directory that holds them (9,630 left by earlier
# suites made `pairbound --version` take 0.14 s here instead of 0.10 s)
mkdir "$WORK/tmp"
export TMPDIR="$WORK/tmp"
FAILS=0
PASSES=0

ok() { PASSES=$((PASSES + 1)); echo "ok - $*"; }
not_ok() { FAILS=$((FAILS + 1)); echo "not ok - $*"; }
check() { # check DESCRIPTION COMMAND...
  local d=$1; shift
  if "$@"; then ok "$d"; else not_ok "$d"; fi
}
# mpi_launch NP PROGRAM ARGS...: PROGRAM on NP ranks (-n: mpirun, mpiexec and srun all take it)
mpi_launch() {
  local np=$1; shift
  # shellcheck disable=SC2086 # MPIRUN_FLAGS is a list of words
  "$MPIRUN" $MPIRUN_FLAGS -n "$np" "$@"
}
# pb NP THREADS ARGS...: run the real binary under the launcher
pb() {
  local np=$1 th=$2; shift 2
  OMP_NUM_THREADS=$th mpi_launch "$np" "$PAIRBOUND" -v 0 "$@"
}
# SCHED_GRACE: Open MPI's default grace between the SIGTERM and the SIGKILL
# that mpirun sends its ranks (1 s), which the suite's environment sets to 0
# (Makefile.am).  Tests that signal mpirun as a scheduler would, or whose
# ranks abort each other, run the launcher under `env "$SCHED_GRACE"` (env
# execs it, so $! is still the launcher) or export it.
SCHED_GRACE=OMPI_MCA_odls_base_sigkill_timeout=1
# same_h5 A B: identical results or stores; /timings (wall seconds, include/pairbound/timer.h)
# and /provenance (command line, git revision) are the parts that may differ
same_h5() { "$H5DIFF" --exclude-path /provenance --exclude-path /timings "$1" "$2" >/dev/null; }
# LAYOUTS: the ranks x threads layouts ("NT": N ranks, T threads) that the
# byte-identity tests compare with 1 rank x 1 thread.  Under the sanitizers
# (PB_TEST_SANITIZERS=1, build-aux/check-sanitize.sh) only 2 x 2 (ranks and
# threads together) and 3 x 1 (uneven partitions): the sanitizers look for
# memory errors and undefined behaviour along code paths, which the other
# layouts repeat at four times the cost; the normal suite compares all five.
if [ "${PB_TEST_SANITIZERS:-0}" = 1 ]; then LAYOUTS="22 31"; else LAYOUTS="12 21 22 31 32"; fi
# pb_tcp NP THREADS ARGS...: pb with Open MPI's byte transfer layer forced onto
# TCP (btl tcp,self: no shared memory between the ranks, as between nodes; the
# loopback interface, which Open MPI leaves out unless asked, so that it works
# on a machine without another interface); returns 77 under another launcher
pb_tcp() {
  [ "$OPEN_MPI" = 1 ] || return 77
  (export OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=lo; pb "$@")
}
# TCP_LAYOUT: the ranks x threads layout that the byte-identity tests also run
# over TCP (none under the sanitizers, whose layouts above cover the code paths)
if [ "${PB_TEST_SANITIZERS:-0}" = 1 ]; then TCP_LAYOUT=""; else TCP_LAYOUT=31; fi
# ranks_identical REPORTS STAGE ARGS...: run the stage at each of $LAYOUTS into
# $WORK/o<np><th>, and at $TCP_LAYOUT over TCP into $WORK/o<np><th>tcp, and
# compare every report file and results.h5 with $WORK/o11 (the caller's 1 rank
# x 1 thread run)
ranks_identical() {
  local reports=$1 l np th f how out where
  shift
  for l in $LAYOUTS ${TCP_LAYOUT:+$TCP_LAYOUT/tcp}; do
    how=${l#*/} l=${l%/*}
    np=${l%?} th=${l#?} out="$WORK/o$l" where="$np ranks x $th threads"
    if [ "$how" = tcp ]; then
      out="$WORK/o${l}tcp" where="$where over TCP"
      pb_tcp "$np" "$th" "$@" -o "$out"
      [ $? = 77 ] && { echo "# skipped: the TCP layout (Open MPI only)"; continue; }
    else
      pb "$np" "$th" "$@" -o "$out"
    fi
    for f in $reports; do
      check "$f identical at $where" cmp -s "$WORK/o11/report/$f" "$out/report/$f"
    done
    check "results.h5 identical at $where" same_h5 "$WORK/o11/results.h5" "$out/results.h5"
  done
}
# paper_store_path: where tests/mpi/paper_store.sh leaves the suite's shared
# paper-scale store (synth at 2 ranks x 1 thread; its summary in PATH.txt)
paper_store_path() { echo "${TOP_BUILDDIR:-.}/tests/mpi/paper.h5"; }
# paper_store: that store, or the same one synthesised into $WORK when this
# test runs without it (on its own, outside the suite's ordering)
paper_store() {
  local s
  s=$(paper_store_path)
  if [ ! -s "$s" ]; then
    s="$WORK/p.h5"
    [ -s "$s" ] || pb 2 1 synth -o "$s" > "$s.txt"
  fi
  echo "$s"
}
# per_model_csvs: the small panel without seed values as $WORK/s.h5, its CSV
# $WORK/a.csv, and one CSV per model ($WORK/model000.csv, ..., listed in
# $WORK/list in order of first appearance, each row where export put it);
# ROLES: the panel's roles as ingest's --role options
per_model_csvs() {
  grep -v '^seed_values' "$TOP_SRCDIR/inputs/small.ini" > "$WORK/small.ini"
  pb 1 1 synth --config "$WORK/small.ini" --no-summary -o "$WORK/s.h5"
  "$PAIRBOUND" -v 0 export "$WORK/s.h5" -o "$WORK/a.csv"
  ROLES="--role Syn=synthetic --role ES=real --role Diverse=real --role Syn-B=synthetic --role TTA=natural:18"
  ROLES="$ROLES --role Syn-B5=extra:Syn-B"
  awk -F, -v dir="$WORK" 'NR == 1 { h = $0; next }
    !($1 in f) { f[$1] = sprintf("%s/model%03d.csv", dir, n++); print h > f[$1]; print f[$1] > (dir "/list") }
    { print > f[$1] }' "$WORK/a.csv"
}
finish() {
  echo "# $PASSES passed, $FAILS failed"
  [ "$FAILS" -eq 0 ]
}
