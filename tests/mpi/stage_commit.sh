#!/bin/sh
# A stage's outputs appear all at once or not at all (issue 17, item 5): a
# stage that fails late, or is stopped by SIGTERM while it writes, leaves an
# existing good OUTDIR byte for byte as it was, with no staging directory or
# temporary behind; a killed run's staging directory goes with the next run;
# an earlier checkpoint goes when the outputs it described are replaced; a
# stage stopped during its figures leaves no gnuplot and no PNG on stdout.
. "$(dirname "$0")/common.sh"
cd "$WORK" || exit 1
pb 1 1 synth --scale small --no-summary -o s.h5
pb 1 1 synth --scale small --seed 7 --no-summary -o s2.h5
pb 1 1 bounds s.h5 -o o --resume
# every file's checksum and every name but the lock file's (removed when a
# writer ends, left with the pid of one stopped by a signal, and reused)
snap() { (cd o && find . -type f ! -name .pairbound.lock -print0 | sort -z | xargs -0 sha256sum && find . ! -name .pairbound.lock | sort); }
snap > before
check "a checkpoint to keep" test -s o/checkpoint.txt
clean() { ! ls -a o o/report | grep -q "pairbound-stage\|[.]tmp"; }

# a real late failure: gnuplot breaks on the first figure, after the tables
cat > badgp <<'EOS'
#!/bin/sh
if [ "$1" = -e ]; then echo pngcairo; exit 0; fi
cat >/dev/null; echo "broken plotter" >&2; exit 3
EOS
chmod +x badgp
for np in 1 2; do
  out=$(PAIRBOUND_GNUPLOT=$PWD/badgp pb $np 1 bounds s2.h5 -o o 2>&1); rc=$?
  check "$np rank(s): a stage failing in its figures exits non-zero ($rc)" [ $rc -ne 0 ]
  check "$np rank(s): says why" sh -c 'printf "%s" "$1" | grep -q "gnuplot failed: broken plotter"' _ "$out"
  snap > after
  check "$np rank(s): the failed stage left OUTDIR exactly as it was" cmp -s before after
  check "$np rank(s): no staging directory or temporary left" clean
done

# SIGTERM while the stage writes (gnuplot waits) at 1 and 2 ranks
cat > slowgp <<EOS
#!/bin/sh
if [ "\$1" = -e ]; then echo pngcairo; exit 0; fi
cat >/dev/null; echo \$\$ > "$WORK/gp.pid"; exec sleep 60
EOS
chmod +x slowgp
# Open MPI's mpirun, on SIGTERM, sends its ranks SIGCONT, waits
# odls_base_sigkill_timeout (1 s), sends SIGTERM, waits as long again and
# sends SIGKILL: on a machine busy with the rest of the suite's I/O, 1 s may
# not be enough for rank 0 to remove its staging directory (a killed run's
# directory is the next run's to sweep, tested below); 5 s is the grace
# period a scheduler gives, without the test waiting twice 20 s
GRACE=""
if "$MPIRUN" --version 2>&1 | grep -q "Open MPI"; then GRACE="--mca odls_base_sigkill_timeout 5"; fi
for np in 1 2; do
  rm -f gp.pid
  # shellcheck disable=SC2086 # MPIRUN_FLAGS and GRACE are lists of words
  (PAIRBOUND_GNUPLOT=$PWD/slowgp OMP_NUM_THREADS=1 exec "$MPIRUN" $MPIRUN_FLAGS $GRACE -n $np "$PAIRBOUND" bounds s2.h5 -o o \
     > term.log 2>&1) &
  pid=$! # the launcher itself, which passes the signal on to every rank
  for i in $(seq 300); do [ -s gp.pid ] && break; sleep 0.1; done
  check "$np rank(s): the stage is writing its figures" test -s gp.pid
  check "$np rank(s): ... in a staging directory inside OUTDIR" sh -c 'ls -d o/.pairbound-stage.* >/dev/null 2>&1'
  kill -TERM $pid
  timeout 60 sh -c "while kill -0 $pid 2>/dev/null; do sleep 0.1; done"
  wait $pid; rc=$?
  check "$np rank(s): nothing of the stopped stage lives on (its gnuplot)" sh -c '! kill -0 "$(cat gp.pid)" 2>/dev/null'
  [ -s gp.pid ] && kill "$(cat gp.pid)" 2>/dev/null
  check "$np rank(s): SIGTERM ends the stage non-zero ($rc)" [ $rc -ne 0 ]
  check "$np rank(s): and says OUTDIR is as it was" grep -q "stopped by a signal; o is as it was before this run" term.log
  snap > after
  check "$np rank(s): the stopped stage left OUTDIR exactly as it was" cmp -s before after
  check "$np rank(s): no staging directory or temporary left" clean
done

# issue 47 item 5: SIGTERM while gnuplot draws screen's figures, at moments
# spread over that phase (0 to 0.27 s after its first figure's data is
# written): gnuplot is killed and waited for before the staging directory
# goes, and nothing but pairbound's own output reaches its stdout (gnuplot,
# its output directory gone, wrote PNG bytes there)
if gnuplot -e 'set terminal' 2>&1 | grep -q pngcairo; then
  cat > pidgp <<EOS
#!/bin/sh
[ "\$1" = -e ] || echo \$\$ >> "$WORK/gp.pids"
exec gnuplot "\$@"
EOS
  chmod +x pidgp
  png=0 alive=0 rcs=""
  for k in 0 1 2 3 4 5 6 7 8 9; do
    rm -rf x gp.pids
    PAIRBOUND_GNUPLOT=$PWD/pidgp OMP_NUM_THREADS=1 "$PAIRBOUND" -v 0 screen s.h5 -o x > x.out 2> x.err &
    pid=$!
    for i in $(seq 1000); do
      ls x/.pairbound-stage.*/report/figure*.tsv > /dev/null 2>&1 && break
      kill -0 $pid 2> /dev/null || break
      sleep 0.01
    done
    sleep "0.0$((3 * k))"
    kill -TERM $pid 2> /dev/null
    wait $pid
    rcs="$rcs $?"
    for p in $(cat gp.pids 2> /dev/null); do kill -0 "$p" 2> /dev/null && alive=$((alive + 1)); done
    # one that outlived the stage: what it still writes to stdout counts too
    for p in $(cat gp.pids 2> /dev/null); do timeout 20 sh -c "while kill -0 $p 2> /dev/null; do sleep 0.05; done"; done
    grep -q PNG x.out && png=$((png + 1))
    check "SIGTERM $k during screen's figures: no staging directory left" sh -c '! ls -d x/.pairbound-stage.* > /dev/null 2>&1'
  done
  echo "# exit statuses:$rcs"
  check "SIGTERM during screen's figures: no PNG bytes on stdout ($png of 10 had some)" test $png -eq 0
  check "SIGTERM during screen's figures: no gnuplot outlives the stage ($alive left)" test $alive -eq 0
else
  echo "# gnuplot with pngcairo is not installed: figures under SIGTERM not tested here"
fi

# a run killed outright (SIGKILL) leaves its staging directory: the next run sweeps it
mkdir -p o/.pairbound-stage.Kx12Ab/report && echo half > o/.pairbound-stage.Kx12Ab/report/bounds.tsv
pb 2 1 bounds s2.h5 -o o
check "the next run sweeps a killed run's staging directory" clean
pb 1 1 bounds s2.h5 -o o2
check "the new output is complete (report)" cmp -s o/report/bounds.tsv o2/report/bounds.tsv
check "the new output is complete (results.h5)" same_h5 o/results.h5 o2/results.h5
check "an outdated checkpoint goes with the outputs it described" test ! -e o/checkpoint.txt
finish
