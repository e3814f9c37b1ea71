# Block checkpoints inside long stages (screen with bootstrap draws, policy
# --all and verify --policies, on a store large enough for many blocks): SIGKILL at several points (early,
# mid-loop, during the write) and --resume at 1 and 3 ranks give outputs
# identical to an uninterrupted run; a flipped or truncated block is
# recomputed with a message (a FIFO or a link in a block's place is named and
# never read); another store or setting is refused, naming
# what differs; SIGTERM stops at a block boundary with the resume command and
# a non-zero status.  Kills are placed by polling for block files, never by
# sleeping, so a loaded machine only moves where they land.
. "$TOP_SRCDIR/tests/mpi/common.sh"

# a store with 60 screening units (30 models x 2 targets): 60 blocks
sed -e '/^m-c1 = gamma$/a m-a3 = alpha\nm-a4 = alpha\nm-a5 = alpha\nm-a6 = alpha\nm-a7 = alpha\nm-a8 = alpha\nm-a9 = alpha\nm-a10 = alpha\nm-b3 = beta\nm-b4 = beta\nm-b5 = beta\nm-b6 = beta\nm-b7 = beta\nm-b8 = beta\nm-b9 = beta\nm-b10 = beta\nm-c2 = gamma\nm-c3 = gamma\nm-c4 = gamma\nm-c5 = gamma\nm-c6 = gamma\nm-c7 = gamma\nm-c8 = gamma\nm-c9 = gamma\nm-c10 = gamma' \
    -e 's/^classes = 12$/classes = 40/' -e 's/^images_per_class = 5$/images_per_class = 40/' \
    "$TOP_SRCDIR/inputs/small.ini" > "$WORK/medium.ini"
"$PAIRBOUND" -v 0 synth --config "$WORK/medium.ini" --no-summary -o "$WORK/medium.h5"
STORE=$WORK/medium.h5
ARGS="--group-draws 200 --class-draws 200"
T=60
# R: the ranks of most resumes (another count than the killed 2-rank runs)
R=3

# same_out DIR: every report file and results.h5 of DIR equal the reference's
same_out() {
  local f bad=0
  same_h5 "$WORK/ref/results.h5" "$1/results.h5" || { echo "# $1/results.h5 differs"; bad=1; }
  for f in "$WORK/ref/report/"*; do
    cmp -s "$f" "$1/report/${f##*/}" || { echo "# $1/report/${f##*/} differs"; bad=1; }
  done
  [ "$(ls "$WORK/ref/report")" = "$(ls "$1/report")" ] || { echo "# $1/report: other files"; bad=1; }
  return $bad
}
# tl NP PROGRAM ARGS...: mpi_launch under a time limit (a hang fails, never blocks the suite)
tl() {
  local np=$1
  shift
  timeout 300 "$MPIRUN" $MPIRUN_FLAGS -n "$np" "$@"
}
nblocks() { ls "$1"/.pairbound-blocks/*/ 2> /dev/null | grep -c '\.blk$'; }
# tree PID: PID and all its descendants
tree() {
  local c
  echo "$1"
  for c in $(ps -o pid= --ppid "$1"); do tree "$c"; done
}
# wait_for PID TEST...: poll (at most 120 s) until TEST holds or PID has ended; 0 when TEST held
wait_for() {
  local pid=$1 i=0
  shift
  while [ $i -lt 2400 ]; do
    "$@" && return 0
    kill -0 "$pid" 2> /dev/null || return 1
    sleep 0.05
    i=$((i + 1))
  done
  return 1
}
at_least() { [ "$(nblocks "$2")" -ge "$1" ]; } # at_least N DIR
# killed DIR TEST...: a 2-rank $CMD --resume into DIR, SIGKILLed (mpirun and
# every process it started, a node failure) once TEST holds
CMD="screen $STORE $ARGS"
killed() {
  local dir=$1 pid pids
  shift
  OMP_NUM_THREADS=1 timeout 300 "$MPIRUN" $MPIRUN_FLAGS -n 2 "$PAIRBOUND" -v 0 $CMD -o "$dir" --resume > /dev/null 2>&1 &
  pid=$!
  if wait_for "$pid" "$@" "$dir"; then
    pids=$(tree "$pid")
    kill -KILL $pids 2> /dev/null
  fi
  wait "$pid" 2> /dev/null
}

timeout 300 "$PAIRBOUND" -v 0 screen "$STORE" $ARGS -o "$WORK/ref"
check "reference run" test $? -eq 0

# an uninterrupted --resume run: the same output, its blocks removed once committed
OMP_NUM_THREADS=2 tl 2 "$PAIRBOUND" -v 0 screen "$STORE" $ARGS -o "$WORK/plain" --resume
check "--resume run at 2 ranks x 2 threads: completes" test $? -eq 0
check "--resume run: output identical" same_out "$WORK/plain"
check "--resume run: blocks removed after the commit" test ! -e "$WORK/plain/.pairbound-blocks"
# blocks a kill left between the commit and their removal: removed by the next --resume, which recomputes nothing
mkdir -p "$WORK/plain/.pairbound-blocks/screen" && echo left > "$WORK/plain/.pairbound-blocks/screen/7.blk"
"$PAIRBOUND" -v 1 screen "$STORE" $ARGS -o "$WORK/plain" --resume > /dev/null 2> "$WORK/plain.err"
check "blocks left after the commit: not recomputed" grep -q "is complete (checkpoint matches): not recomputed" "$WORK/plain.err"
check "blocks left after the commit: removed" test ! -e "$WORK/plain/.pairbound-blocks"

# SIGKILL early (first block), mid-loop (half the blocks), after the last block (during the write)
n=0
for point in "at_least 1" "at_least 30" "at_least $T"; do
  n=$((n + 1))
  killed "$WORK/k$n" $point
  have=$(nblocks "$WORK/k$n")
  echo "# kill $n ($point): $have of $T blocks were complete"
  np=$R; [ $n = 2 ] && np=1
  OMP_NUM_THREADS=2 tl $np "$PAIRBOUND" -v 1 screen "$STORE" $ARGS -o "$WORK/k$n" --resume \
    > /dev/null 2> "$WORK/k$n.err"
  check "SIGKILL ($point), resumed at $np ranks: completes" test $? -eq 0
  check "SIGKILL ($point), resumed at $np ranks: output identical" same_out "$WORK/k$n"
  if grep -q "is complete (checkpoint matches): not recomputed" "$WORK/k$n.err"; then
    # the kill landed after the commit, while the blocks were being removed:
    # the committed output is kept and the blocks left over are removed
    echo "# kill $n landed after the commit"
    check "SIGKILL ($point) after the commit: leftover blocks removed" test ! -e "$WORK/k$n/.pairbound-blocks"
  elif [ "$have" -gt 0 ]; then
    check "SIGKILL ($point): the $have complete blocks were not recomputed" \
      grep -q "blocks/screen: $have of $T blocks resumed, $((T - have)) computed (0 damaged" "$WORK/k$n.err"
  fi
done

# damaged blocks: one with a flipped payload byte, one truncated, one replaced by another (intact) block;
# one replaced by a FIFO (whose open used to wait for ever, deaf to SIGTERM) and one by a symbolic
# link to an intact copy of itself (issue 47 item 8): only a regular file is read, the others are
# named and recomputed
killed "$WORK/d" at_least 30
B=$WORK/d/.pairbound-blocks/screen
files=$(ls "$B" | grep '\.blk$' | sort -n | head -6)
set -- $files
if [ $# -eq 6 ]; then
  size=$(stat -c %s "$B/$1")
  printf '\377' | dd of="$B/$1" bs=1 seek=$((size - 5)) conv=notrunc 2> /dev/null
  head -c $(($(stat -c %s "$B/$2") / 2)) "$B/$2" > "$B/t" && mv "$B/t" "$B/$2"
  cp "$B/$4" "$B/$3.x" && mv "$B/$3.x" "$B/$3"
  rm "$B/$5" && mkfifo "$B/$5"
  mv "$B/$6" "$WORK/copy.blk" && ln -s "$WORK/copy.blk" "$B/$6"
  have=$(nblocks "$WORK/d")
  OMP_NUM_THREADS=1 timeout 120 "$MPIRUN" $MPIRUN_FLAGS -n 2 "$PAIRBOUND" -v 2 screen "$STORE" $ARGS -o "$WORK/d" \
    --resume > /dev/null 2> "$WORK/d.err"
  check "damaged blocks: resume completes (never waits on the FIFO)" test $? -eq 0
  check "damaged blocks: flipped byte detected" grep -q "/$1: payload checksum differs: recomputing this block" "$WORK/d.err"
  check "damaged blocks: truncation detected" grep -q "/$2: truncated (payload length differs): recomputing" "$WORK/d.err"
  check "damaged blocks: another block's file detected" grep -q "/$3: holds another block: recomputing" "$WORK/d.err"
  check "damaged blocks: a FIFO named, not read" grep -q "/$5: a FIFO, not a regular file: not read: recomputing" "$WORK/d.err"
  check "damaged blocks: a symbolic link named, not followed" \
    grep -q "/$6: a symbolic link, not a regular file: not read: recomputing" "$WORK/d.err"
  check "damaged blocks: counted" grep -q "$((have - 5)) of $T blocks resumed, $((T - have + 5)) computed (5 damaged" "$WORK/d.err"
  check "damaged blocks: output identical" same_out "$WORK/d"
  check "damaged blocks: the link's target untouched" test -s "$WORK/copy.blk"
else
  not_ok "damaged blocks: the killed run left $# blocks"
fi

# another store or setting: refused, naming what differs; the blocks are kept
killed "$WORK/r" at_least 5
have=$(nblocks "$WORK/r")
"$PAIRBOUND" screen "$STORE" --group-draws 200 --class-draws 100 -o "$WORK/r" --resume > /dev/null 2> "$WORK/e.txt"
check "other setting: refused (exit 1)" test $? -eq 1
check "other setting: names it" \
  grep -q "cannot resume: the completed blocks were made with setting 'command = .*--class-draws 200.*', this run has 'command = .*--class-draws 100" "$WORK/e.txt"
"$PAIRBOUND" -v 0 synth --config "$WORK/medium.ini" --seed 5 --no-summary -o "$WORK/other.h5"
"$PAIRBOUND" screen "$WORK/other.h5" $ARGS -o "$WORK/r" --resume > /dev/null 2> "$WORK/e.txt"
check "other store: refused" test $? -eq 1
check "other store: names the store checksum" grep -q "completed blocks were made with store checksum '[0-9a-f]*', this run has '[0-9a-f]*'" "$WORK/e.txt"
check "refusals keep the blocks" test "$(nblocks "$WORK/r")" -eq "$have"

# SIGTERM to a single process: stops at the next block boundary, keeps the
# blocks, says how to resume, exits 128 + 15; the resume is identical
timeout 300 "$PAIRBOUND" screen "$STORE" $ARGS -o "$WORK/t" --resume > /dev/null 2> "$WORK/t.err" &
pid=$!
# (to pairbound itself: timeout would also signal its process group, a second,
# simultaneous delivery of the same request that the test of mpirun covers)
wait_for "$pid" at_least 3 "$WORK/t" && kill -TERM $(ps -o pid= --ppid "$pid")
wait "$pid"
rc=$?
check "SIGTERM: exit status 143" test "$rc" -eq 143
check "SIGTERM: stopped at a block boundary" grep -q "stopped by signal 15 at a block boundary; [0-9]* of $T blocks are complete" "$WORK/t.err"
check "SIGTERM: says how to resume" grep -q "resume with: .*pairbound screen $STORE $ARGS -o $WORK/t --resume" "$WORK/t.err"
check "SIGTERM: completed blocks kept" at_least 3 "$WORK/t"
check "SIGTERM: no output committed" test ! -e "$WORK/t/results.h5"
timeout 300 "$PAIRBOUND" -v 0 screen "$STORE" $ARGS -o "$WORK/t" --resume
check "SIGTERM: resume identical" same_out "$WORK/t"

# SIGTERM to mpirun (a scheduler's time limit): non-zero, then an identical resume
OMP_NUM_THREADS=1 timeout 300 env "$SCHED_GRACE" "$MPIRUN" $MPIRUN_FLAGS -n 2 "$PAIRBOUND" -v 0 screen "$STORE" $ARGS -o "$WORK/m" \
  --resume > /dev/null 2>&1 &
pid=$!
wait_for "$pid" at_least 3 "$WORK/m" && kill -TERM "$pid"
wait "$pid"
check "SIGTERM to mpirun: non-zero exit" test $? -ne 0
# mpirun can return while its ranks still exit (and hold OUTDIR's lock): wait for them
for i in $(seq 100); do pgrep -f -- "-o $WORK/m --resume" > /dev/null || break; sleep 0.1; done
OMP_NUM_THREADS=1 tl $R "$PAIRBOUND" -v 0 screen "$STORE" $ARGS -o "$WORK/m" --resume
check "SIGTERM to mpirun: resume at $R ranks identical" same_out "$WORK/m"

# policy --all: blocks of cells (255 on this store), killed mid-loop, resumed at $R ranks
OMP_NUM_THREADS=1 tl 2 "$PAIRBOUND" -v 0 policy "$STORE" --all -o "$WORK/pref"
CMD="policy $STORE --all"
killed "$WORK/p" at_least 60
have=$(nblocks "$WORK/p")
OMP_NUM_THREADS=2 tl $R "$PAIRBOUND" -v 1 policy "$STORE" --all -o "$WORK/p" --resume > /dev/null 2> "$WORK/p.err"
check "policy --all killed with $have of 255 blocks, resumed at $R ranks: completes" test $? -eq 0
check "policy --all resumed: results.h5 identical" same_h5 "$WORK/pref/results.h5" "$WORK/p/results.h5"
bad=0
for f in "$WORK/pref/report/"*; do cmp -s "$f" "$WORK/p/report/${f##*/}" || bad=1; done
check "policy --all resumed: report identical" test $bad -eq 0
[ "$have" -gt 0 ] && check "policy --all: the $have complete blocks were not recomputed" \
  grep -q "blocks/policy: $have of 255 blocks resumed" "$WORK/p.err"

# SIGTERM to one rank of a loop without collective calls (policy --all polls,
# pb_blocks_poll): rank 1 stops at its next round and its notice, passed on by
# rank 0, stops rank 2 at its own next round, well before its last block
# (block 254, the highest cells, is rank 2's last); every rank reports the signal
# and the resume is identical.  SCHED_GRACE: the ranks exit 143 one by one.
# rank_pid PID R: the process of rank R among PID's descendants
rank_pid() {
  local p
  for p in $(tree "$1"); do
    tr '\0' '\n' < "/proc/$p/environ" 2> /dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" && { echo "$p"; return; }
  done
}
OMP_NUM_THREADS=1 timeout 300 env "$SCHED_GRACE" "$MPIRUN" $MPIRUN_FLAGS -n 3 "$PAIRBOUND" -v 0 policy "$STORE" --all \
  -o "$WORK/p1" --resume > /dev/null 2> "$WORK/p1.err" &
pid=$!
wait_for "$pid" at_least 12 "$WORK/p1" && kill -TERM "$(rank_pid "$pid" 1)"
wait "$pid"
check "SIGTERM to rank 1 of 3 (policy --all): non-zero exit" test $? -ne 0
check "SIGTERM to rank 1 of 3: stopped at a block boundary" \
  grep -q "stopped by signal 15 at a block boundary; [0-9]* of 255 blocks are complete" "$WORK/p1.err"
have=$(nblocks "$WORK/p1")
echo "# SIGTERM to rank 1: $have of 255 blocks complete"
check "SIGTERM to rank 1 of 3: rank 2 stopped too (its last block, 254, not computed)" \
  test ! -e "$WORK/p1/.pairbound-blocks/policy/254.blk"
for i in $(seq 100); do pgrep -f -- "-o $WORK/p1 --resume" > /dev/null || break; sleep 0.1; done
OMP_NUM_THREADS=2 tl $R "$PAIRBOUND" -v 0 policy "$STORE" --all -o "$WORK/p1" --resume
check "SIGTERM to rank 1 of 3: resume completes" test $? -eq 0
check "SIGTERM to rank 1 of 3: resumed results.h5 identical" same_h5 "$WORK/pref/results.h5" "$WORK/p1/results.h5"

# verify --policies: blocks of cells as policy (the checks of Syn, to keep it short)
OMP_NUM_THREADS=1 tl 2 "$PAIRBOUND" -v 0 verify "$STORE" --policies --sources Syn -o "$WORK/vref"
CMD="verify $STORE --policies --sources Syn"
killed "$WORK/v" at_least 10
have=$(nblocks "$WORK/v")
OMP_NUM_THREADS=2 tl $R "$PAIRBOUND" -v 1 verify "$STORE" --policies --sources Syn -o "$WORK/v" --resume > /dev/null \
  2> "$WORK/v.err"
check "verify --policies killed with $have blocks, resumed at $R ranks: completes" test $? -eq 0
check "verify --policies resumed: results.h5 identical" same_h5 "$WORK/vref/results.h5" "$WORK/v/results.h5"
bad=0
for f in "$WORK/vref/report/"*; do cmp -s "$f" "$WORK/v/report/${f##*/}" || bad=1; done
check "verify --policies resumed: report identical" test $bad -eq 0

# pairbound run keeps blocks too: killed mid-screen, resumed at $R ranks
printf '[run]\nstore = %s\noutput = %s\nstages = screen\ngroup_draws = 200\nclass_draws = 200\n' "$STORE" "$WORK/run_ref" \
  > "$WORK/run_ref.ini"
sed "s|$WORK/run_ref|$WORK/run_k|" "$WORK/run_ref.ini" > "$WORK/run_k.ini"
timeout 300 "$PAIRBOUND" -v 0 run "$WORK/run_ref.ini" > /dev/null
OMP_NUM_THREADS=1 timeout 300 "$MPIRUN" $MPIRUN_FLAGS -n 2 "$PAIRBOUND" -v 0 run "$WORK/run_k.ini" > /dev/null 2>&1 &
pid=$!
if wait_for "$pid" at_least 20 "$WORK/run_k/screen"; then kill -KILL $(tree "$pid") 2> /dev/null; fi
wait "$pid" 2> /dev/null
have=$(nblocks "$WORK/run_k/screen")
OMP_NUM_THREADS=1 tl $R "$PAIRBOUND" -v 1 run "$WORK/run_k.ini" --resume > /dev/null 2> "$WORK/run.err"
check "run killed mid-screen: resume completes" test $? -eq 0
[ "$have" -gt 0 ] && check "run killed mid-screen: $have blocks resumed" grep -q "$have of $T blocks resumed" "$WORK/run.err"
check "run killed mid-screen: results.h5 identical" same_h5 "$WORK/run_ref/screen/results.h5" "$WORK/run_k/screen/results.h5"
bad=0
for f in "$WORK/run_ref/screen/report/"*; do cmp -s "$f" "$WORK/run_k/screen/report/${f##*/}" || bad=1; done
check "run killed mid-screen: report identical" test $bad -eq 0
finish
