# A full disk (issue 17 item 4): every writer fails with exit status 1 and its
# reason, never SIGSEGV (HDF5 1.10 crashed closing a failed file inside
# MPI_Finalize), and leaves no temporary behind.  Needs a small tmpfs: mounted
# when this runs as root with mount(8) allowed, else the checks are skipped.
. "$TOP_SRCDIR/tests/mpi/common.sh"

full="$WORK/full"
mkdir -p "$full"
if ! mount -t tmpfs -o size=200k tmpfs "$full" 2>/dev/null; then
  echo "ok - # SKIP cannot mount a tmpfs here (not root?)"
  finish
  exit 0
fi
trap 'umount "$full"; rm -rf "$WORK"' EXIT

pb 1 1 synth --scale small --no-summary -o "$WORK/s.h5"
# one rank: with more, a rank whose write fails can leave the others waiting
# in a collective HDF5 call (not yet handled; see the issue 17 notes)
for np in 1; do
  rm -rf "${full:?}"/*
  # shellcheck disable=SC2086 # MPIRUN_FLAGS is a list of words
  OMP_NUM_THREADS=1 timeout 120 "$MPIRUN" $MPIRUN_FLAGS -n "$np" "$PAIRBOUND" -v 0 synth --scale small --no-summary \
    -o "$full/s.h5" 2> "$WORK/e_synth$np.txt"
  st=$?
  check "synth on a full disk, $np rank(s): exit 1 (was SIGSEGV, 139)" test $st -eq 1
  check "synth on a full disk, $np rank(s): says which dataset" grep -qF "HDF5: cannot create dataset" "$WORK/e_synth$np.txt"
  check "synth on a full disk, $np rank(s): no store, no temporary" test -z "$(ls "$full" | grep -v '\.lock$')"
done
rm -rf "${full:?}"/*
# fill the disk but for a few kilobytes, so that results.h5 fails partway
head -c 190000 /dev/zero > "$full/filler" 2>/dev/null
pb 1 1 bounds "$WORK/s.h5" -o "$full/o" 2> "$WORK/e_bounds.txt"
st=$?
check "bounds on a full disk: exit 1, no crash" test $st -eq 1
check "bounds on a full disk: a reason is printed" grep -q "pairbound bounds: error: ." "$WORK/e_bounds.txt"
check "bounds on a full disk: no results.h5 and no temporary" test -z "$(ls "$full/o" 2>/dev/null | grep results)"
rm -rf "${full:?}"/*
"$PAIRBOUND" -v 0 export "$WORK/s.h5" -o "$full/s.csv" 2> "$WORK/e_export.txt"
st=$?
check "export on a full disk: exit 1" test $st -eq 1
check "export on a full disk: the errno reason" grep -qF "$full/s.csv: cannot write file: No space left on device" "$WORK/e_export.txt"
check "export on a full disk: no CSV, no temporary" test -z "$(ls "$full" | grep -v '\.lock$')"
finish
