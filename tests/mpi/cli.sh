# Command line: help for every command, one-line errors with usage for bad options.
. "$TOP_SRCDIR/tests/mpi/common.sh"

"$PAIRBOUND" --help > "$WORK/help.txt"
check "--help exits 0" test $? -eq 0
for c in synth ingest export info protocol states bounds policy verify screen run; do
  check "--help lists $c" grep -q "pairbound $c" "$WORK/help.txt"
  "$PAIRBOUND" "$c" --help > "$WORK/h.txt"
  check "$c --help exits 0" test $? -eq 0
  # every long option named in the usage line is documented below it
  for o in $(head -1 "$WORK/h.txt" | grep -o -- '--[a-z-]*' | sort -u); do
    check "$c --help documents $o" sh -c "tail -n +2 '$WORK/h.txt' | grep -q -- '$o'"
  done
done
for c in info protocol states; do
  for o in --coverage --panel-seed --panel-cells; do
    check "$c --help documents $o" sh -c "'$PAIRBOUND' $c --help | grep -q -- '$o'"
  done
done
# run --help lists every [section] and the stages' keys (from the same tables)
"$PAIRBOUND" run --help > "$WORK/h.txt"
for s in run protocol bounds verify policy screen; do
  check "run --help lists [$s]" grep -q "^\[$s\]" "$WORK/h.txt"
done
for k in "perm_replicates = R" "matched = 0|1" "sample_seed = N" "lambdas = a,b,.." "probe = \[NAME=\]SRC" \
         "severity_sets = 0|1" "panel_cells = SRC=N" "seed = N"; do
  check "run --help documents '$k'" grep -q "^  $k" "$WORK/h.txt"
done
usage_error() { # usage_error DESCRIPTION EXPECTED-FIRST-LINE ARGS...
  local d=$1 want=$2; shift 2
  "$PAIRBOUND" "$@" > /dev/null 2> "$WORK/e.txt"
  local rc=$?
  check "$d: exit status 2" test "$rc" -eq 2
  check "$d: message" test "$(head -1 "$WORK/e.txt")" = "$want"
  check "$d: message then usage" sh -c "test \$(wc -l < '$WORK/e.txt') -eq 2 && sed -n 2p '$WORK/e.txt' | grep -q '^usage: '"
}
# global options: the value is named, not taken for a command (issue 17 item 10)
usage_error "--threads 0" "pairbound: --threads must be an integer from 1 to 4096, not '0'" --threads 0 info s.h5
usage_error "-v 9" "pairbound: -v (verbosity) must be an integer from 0 to 2, not '9'" -v 9 info s.h5
usage_error "--threads=0" "pairbound: --threads must be an integer from 1 to 4096, not '0'" --threads=0 info s.h5
# resampling draws are capped (issue 17 item 9: 10^7 draws ran for minutes)
usage_error "--group-draws above the cap" "pairbound bounds: --group-draws must be an integer in [0, 100000], got '100001'" \
  bounds s.h5 -o out --group-draws 100001
usage_error "--class-draws above the cap" "pairbound screen: --class-draws must be an integer in [0, 100000], got '100001'" \
  screen s.h5 -o out --class-draws 100001
usage_error "unknown option" "pairbound synth: unknown option '--bogus'" synth --bogus -o x.h5
usage_error "missing value" "pairbound synth: option '--seed' needs a value" synth -o x.h5 --seed
usage_error "bad scale" "pairbound synth: --scale must be 'paper' or 'small', got 'huge'" synth --scale huge -o x.h5
usage_error "bad seed" "pairbound synth: --seed must be a non-negative integer, got '-3'" synth --seed -3 -o x.h5
usage_error "missing output" "pairbound synth: missing -o STORE" synth
usage_error "export without store" "pairbound export: missing STORE" export -o x.csv
usage_error "bad coverage" "pairbound states: --coverage must be in (0, 1], got '2'" states s.h5 -o out --coverage 2
usage_error "bad panel cells" "pairbound info: --panel-cells takes SRC=N, got 'ES'" info s.h5 --panel-cells ES
usage_error "unknown command" "pairbound: unknown command or option 'frobnicate'" frobnicate
usage_error "--opt=value, bad value" "pairbound bounds: --perm-replicates must be an integer in [0, 10000000], got 'x'" \
  bounds s.h5 -o out --perm-replicates=x
usage_error "--opt value, bad list" "pairbound policy: --lambdas lists a value twice: '0.5,0.5'" \
  policy s.h5 --lambdas 0.5,0.5 -o out
usage_error "flag given a value" "pairbound policy: option '--all' takes no value" policy s.h5 --all=1 -o out
usage_error "bad choice" "pairbound screen: --split must be 'eval' or 'dev', got 'test'" screen s.h5 --split=test -o out
check "no output written by usage errors" test ! -e x.h5
"$PAIRBOUND" --version | grep -q '^pairbound '
check "--version prints the build" test $? -eq 0
"$PAIRBOUND" --version | grep -Eq '^kernels: (baseline|x86-64-v3|x86-64-v4) '
check "--version names the kernels' vector level" test $? -eq 0
# the revision is the one built, even when commits came after configure
if rev=$(git -C "$TOP_SRCDIR" rev-parse --short=12 HEAD 2> /dev/null); then
  check "--version names the git revision built" sh -c "'$PAIRBOUND' --version | grep -q '(git $rev[+)]'"
fi
"$PAIRBOUND" info "$WORK/none.h5" 2> "$WORK/e.txt"
check "missing store: exit 1" test $? -eq 1
check "missing store: message" grep -qx "pairbound info: error: $WORK/none.h5: cannot read file: No such file or directory" "$WORK/e.txt"
echo 'not hdf5' > "$WORK/plain.h5"
"$PAIRBOUND" states "$WORK/plain.h5" -o "$WORK/out" 2> "$WORK/e.txt"
check "non-HDF5 store: exit 1 and message" grep -qx "pairbound states: error: $WORK/plain.h5: not an HDF5 file" "$WORK/e.txt"
check "non-HDF5 store: no output directory" test ! -e "$WORK/out/results.h5"
# INI: a repeated key and a malformed line are named at their own line (issue 17 item 10)
printf '[bounds]\ntau = 0.5\n\ntau = 0.6\n' > "$WORK/dup.ini"
"$PAIRBOUND" run "$WORK/dup.ini" 2> "$WORK/e.txt"
check "INI key given twice: exit 1" test $? -eq 1
check "INI key given twice: named at its line" grep -qx "pairbound run: error: $WORK/dup.ini:4: \[bounds\] tau given twice" "$WORK/e.txt"
printf '; comment\n[bounds\ntau = 0.5\n' > "$WORK/syn.ini"
"$PAIRBOUND" run "$WORK/syn.ini" 2> "$WORK/e.txt"
check "INI section without ']': exit 1" test $? -eq 1
check "INI section without ']': named at its line" \
  grep -qx "pairbound run: error: $WORK/syn.ini:2: syntax error: section header without a closing '\]'" "$WORK/e.txt"
# store schema_version missing or not an integer: said so, not "version -1"
"$PAIRBOUND" -v 0 synth --scale small --no-summary -o "$WORK/sv.h5"
cp "$WORK/sv.h5" "$WORK/sv2.h5"
cp "$WORK/sv.h5" "$WORK/ok.h5"
"$H5POKE" --attr-del "$WORK/sv.h5" / schema_version
"$PAIRBOUND" info "$WORK/sv.h5" > /dev/null 2> "$WORK/e.txt"
check "store without schema_version: named" grep -qx "pairbound info: error: $WORK/sv.h5: no schema_version attribute (a damaged or foreign store)" "$WORK/e.txt"
"$H5POKE" --attr-str "$WORK/sv2.h5" / schema_version one
"$PAIRBOUND" info "$WORK/sv2.h5" > /dev/null 2> "$WORK/e.txt"
check "store with a string schema_version: named" \
  grep -qx "pairbound info: error: $WORK/sv2.h5: schema_version attribute is not an integer (a damaged or foreign store)" "$WORK/e.txt"
# one process alone (no launcher, or a launcher of one): Open MPI's ob1 PML
# is set unless the user chose one, so the cm PML (and its PSM2/libfabric
# start-up) is never opened; with two processes, or the user's own choice, it
# is left to Open MPI (docs/run.md, "MPI start-up")
if "$MPIRUN" --version 2>&1 | grep -q "Open MPI"; then
  cm() { grep -c "component cm" "$1"; }
  # pml LOG NP [VAR=VALUE]: the PML framework's log of pairbound info at NP
  # processes under the launcher (NP 0: started without one)
  pml() {
    local log=$1 np=$2
    shift 2
    # shellcheck disable=SC2086 # MPIRUN_FLAGS is a list of words
    [ "$np" -gt 0 ] && set -- "$@" "$MPIRUN" $MPIRUN_FLAGS -n "$np"
    env -u OMPI_MCA_pml OMPI_MCA_pml_base_verbose=10 "$@" "$PAIRBOUND" info "$WORK/ok.h5" > /dev/null 2> "$log"
  }
  pml "$WORK/pml0.txt" 0
  pml "$WORK/pml1.txt" 1
  pml "$WORK/pml2.txt" 2
  pml "$WORK/pmlu.txt" 1 OMPI_MCA_pml=^v
  check "PML: the log names the PMLs it opens" grep -q "component ob1" "$WORK/pml1.txt"
  # where this Open MPI opens cm when left to itself (two processes)
  if [ "$(cm "$WORK/pml2.txt")" -gt 0 ]; then
    check "PML: no launcher, cm not opened" test "$(cm "$WORK/pml0.txt")" -eq 0
    check "PML: one process under the launcher, cm not opened" test "$(cm "$WORK/pml1.txt")" -eq 0
    check "PML: the user's setting kept (cm opened)" test "$(cm "$WORK/pmlu.txt")" -gt 0
  else
    echo "# PML checks skipped: this Open MPI does not open the cm PML even at two processes"
  fi
fi
# a process no launcher started leaves without MPI_Finalize even when it succeeds (Open MPI 4.1's finalize
# crashed or hung now and then: src/core/platform.c); its MPI_Init sets Open MPI's launch variables, so the
# decision is the environment's before it. gdb stops at MPI_Finalize if it is called.
if command -v gdb > /dev/null; then
  # (LeakSanitizer cannot run under a debugger: no leak check in this one run of the sanitizer build)
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    gdb -batch -ex 'set breakpoint pending on' -ex 'break PMPI_Finalize' -ex run --args "$PAIRBOUND" policy --help \
    > "$WORK/gdb.txt" 2>&1
  check "a successful singleton leaves without MPI_Finalize" sh -c "grep -q 'exited normally' '$WORK/gdb.txt' &&
    ! grep -q 'hit Breakpoint' '$WORK/gdb.txt'"
else
  echo "# skipped: how a singleton leaves MPI (no gdb)"
fi
finish
