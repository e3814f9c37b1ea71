# The unit tests whose library calls are collective (MPI_UNIT_TESTS in
# Makefile.am), run under the launcher at 2 and 3 ranks: a partition that is
# not broadcast, or a collective that one rank leaves, passes at 1 rank only.
# Test cases tagged "serial" (kernels that make no MPI call) are left out.
. "$TOP_SRCDIR/tests/mpi/common.sh"
: "${MPI_UNIT_TESTS:?}" "${TOP_BUILDDIR:?}"
for t in $MPI_UNIT_TESTS; do
  for np in 2 3; do
    CK_EXCLUDE_TAGS=serial mpi_launch "$np" "$TOP_BUILDDIR/$t" > "$WORK/$(basename "$t").$np.log" 2>&1
    rc=$?
    check "$t at $np ranks (exit $rc)" test "$rc" -eq 0
    [ "$rc" -eq 0 ] || sed -n '/:[FE]:/p' "$WORK/$(basename "$t").$np.log" | head -5
  done
done
finish
