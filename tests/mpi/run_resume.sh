# pairbound run on the small store: every stage runs with default options
# (synth = small); kill-and-resume gives outputs identical to an uninterrupted
# run, for kills at several points (early, mid-stage, during writes) and a
# different rank count on resume; SIGTERM/SIGINT stop with a message saying how
# to resume and a non-zero status; --resume refuses a different configuration
# or store, naming what differs, and recomputes a damaged stage.
. "$TOP_SRCDIR/tests/mpi/common.sh"

cfg() { # cfg OUTDIR [extra [run] lines, replacing the draws when they set them]: a small-store run configuration
  printf '[run]\nsynth = small\nstore = %s/small.h5\noutput = %s\nstages = bounds, verify, policy, screen\n' "$WORK" "$1"
  case "${2:-}" in *group_draws*) ;; *) printf 'group_draws = 60\nclass_draws = 20\n' ;; esac
  printf '%s\n' "${2:-}"
}
cfg "$WORK/ref" > "$WORK/ref.ini"
pb 2 1 run "$WORK/ref.ini" > "$WORK/ref.out"
check "run with synth = small: every stage" test $? -eq 0
for s in bounds verify policy screen; do
  check "run: $s committed with its checkpoint" test -s "$WORK/ref/$s/checkpoint.txt" -a -s "$WORK/ref/$s/results.h5"
done
check "run: one-screen summary on stdout (<= 30 lines)" test "$(wc -l < "$WORK/ref.out")" -le 30
check "run: summary names REPORT.md" grep -qF "$WORK/ref/REPORT.md" "$WORK/ref.out"
# the checksums are XXH3-128 as xxhsum (an independent program) prints them
store_sum=$(xxhsum -H2 "$WORK/small.h5" | cut -d' ' -f1)
check "REPORT.md: provenance with the store checksum (xxhsum -H2)" grep -qF "XXH3-128 \`$store_sum\`" "$WORK/ref/REPORT.md"
check "checkpoint: the store checksum" grep -qx "store_xxh128 $store_sum" "$WORK/ref/bounds/checkpoint.txt"
check "checkpoint: results.h5's checksum" grep -qx "output results.h5 $(xxhsum -H2 "$WORK/ref/bounds/results.h5" | cut -d' ' -f1)" \
  "$WORK/ref/bounds/checkpoint.txt"
check "REPORT.md: ranks x threads" grep -q '^- parallelism: 2 MPI ranks x 1 OpenMP thread$' "$WORK/ref/REPORT.md"
for f in bounds/report/figure1_identified_widths policy/report/figure5_certified_orderings \
         screen/report/figure2b_auroc_gap screen/report/figure3_coverage_budget; do
  check "REPORT.md links $f" grep -qF "]($f." "$WORK/ref/REPORT.md"
done

# same_stages DIR: every stage output of DIR equals the reference
same_stages() {
  local s f bad=0
  for s in bounds verify policy screen; do
    same_h5 "$WORK/ref/$s/results.h5" "$1/$s/results.h5" || { echo "# $s/results.h5 differs"; bad=1; }
    for f in "$WORK/ref/$s/report/"*; do
      cmp -s "$f" "$1/$s/report/${f##*/}" || { echo "# $s/report/${f##*/} differs"; bad=1; }
    done
    [ "$(ls "$WORK/ref/$s/report")" = "$(ls "$1/$s/report" | grep -v '\.tmp$')" ] || { echo "# $s/report: other files"; bad=1; }
  done
  return $bad
}
# tree PID: PID and all its descendants
tree() {
  local c
  echo "$1"
  for c in $(ps -o pid= --ppid "$1"); do tree "$c"; done
}
# kill_at SECONDS DIR: start a 2-rank run and SIGKILL mpirun and every process
# it started (a node failure) after SECONDS
kill_at() {
  cfg "$2" > "$2.ini"
  OMP_NUM_THREADS=1 "$MPIRUN" --oversubscribe -np 2 "$PAIRBOUND" -v 0 run "$2.ini" > /dev/null 2>&1 &
  local pid=$! pids
  sleep "$1"
  pids=$(tree "$pid")
  kill -KILL $pids 2> /dev/null
  wait "$pid" 2> /dev/null
  while ps -o pid= -p "$(echo $pids | tr ' ' ,)" > /dev/null; do sleep 0.1; done
}
n=0
for t in 0.4 1.5 3 5; do
  n=$((n + 1))
  kill_at "$t" "$WORK/k$n"
  np=2; [ "$n" = 3 ] && np=3; [ "$n" = 4 ] && np=1
  pb "$np" 1 run "$WORK/k$n.ini" --resume > /dev/null
  check "SIGKILL after ${t}s, resumed at $np ranks: run completes" test $? -eq 0
  check "SIGKILL after ${t}s, resumed at $np ranks: outputs identical" same_stages "$WORK/k$n"
done
# a resume of a complete run recomputes nothing
"$PAIRBOUND" run "$WORK/k1.ini" --resume > /dev/null 2> "$WORK/again.err"
check "resume of a complete run: every stage kept" test "$(grep -c 'checkpoint matches' "$WORK/again.err")" -eq 4

# SIGTERM to mpirun (scheduler time limit) and SIGINT to a single process (Ctrl-C),
# sent once the first stage is done (the run is then surely past start-up)
first_stage() { local i=0; while ! grep -q "run: bounds done" "$1" && [ $i -lt 3000 ]; do sleep 0.05; i=$((i + 1)); done; }
long='group_draws = 4000
class_draws = 400'
cfg "$WORK/t" "$long" > "$WORK/t.ini"
OMP_NUM_THREADS=1 env "$SCHED_GRACE" "$MPIRUN" --oversubscribe -np 2 "$PAIRBOUND" run "$WORK/t.ini" > /dev/null 2> "$WORK/t.err" &
pid=$!; first_stage "$WORK/t.err"; kill -TERM "$pid"; wait "$pid"; rc=$?
check "SIGTERM: non-zero exit" test "$rc" -ne 0
# (the message of rank 0 is not checked here: mpirun may exit before relaying
# its ranks' last stderr lines; the single-process SIGINT case below checks it)
pb 2 1 run "$WORK/t.ini" --resume > /dev/null
check "SIGTERM: resumed run completes" test $? -eq 0
cfg "$WORK/i" "$long" > "$WORK/i.ini"
"$PAIRBOUND" run "$WORK/i.ini" > /dev/null 2> "$WORK/i.err" &
pid=$!; first_stage "$WORK/i.err"; kill -INT "$pid"; wait "$pid"; rc=$?
check "SIGINT: exit status 130" test "$rc" -eq 130
# (inside a block loop, e.g. verify's, the stop waits for the round's end and says so)
check "SIGINT: says how to resume" grep -Eq "with --resume \(signal 2\)|stopped by signal 2 at a block boundary.*resume with: .*run $WORK/i.ini --resume" "$WORK/i.err"

# refusals name what differs; a damaged stage is recomputed
cfg "$WORK/ref" "seed = 7" > "$WORK/seed.ini"
"$PAIRBOUND" run "$WORK/seed.ini" --resume > /dev/null 2> "$WORK/e.txt"
check "other settings: refused (exit 1)" test $? -eq 1
check "other settings: names the setting" grep -q "made with setting 'seed = 20260908', this run has 'seed = 7'" "$WORK/e.txt"
"$PAIRBOUND" -v 0 synth --scale small --seed 5 --no-summary -o "$WORK/other.h5"
"$PAIRBOUND" run "$WORK/ref.ini" --store "$WORK/other.h5" --resume > /dev/null 2> "$WORK/e.txt"
check "other store: refused" test $? -eq 1
check "other store: names the store checksum" grep -q "made with store checksum '[0-9a-f]*', this run has '[0-9a-f]*'" "$WORK/e.txt"
cp -r "$WORK/ref" "$WORK/dmg"
cfg "$WORK/dmg" > "$WORK/dmg.ini"
head -c 1000 "$WORK/ref/policy/report/policy_pairs.tsv" > "$WORK/dmg/policy/report/policy_pairs.tsv"
"$PAIRBOUND" run "$WORK/dmg.ini" --resume > /dev/null 2> "$WORK/e.txt"
check "truncated output: recomputed" grep -q "policy: report/policy_pairs.tsv is missing or differs from the checkpoint (in .*): recomputing" "$WORK/e.txt"
check "truncated output: identical after recomputing" same_stages "$WORK/dmg"
sed -i '1s/.*/pairbound-checkpoint 1/' "$WORK/dmg/bounds/checkpoint.txt" # as an older pairbound wrote it
"$PAIRBOUND" run "$WORK/dmg.ini" --resume > /dev/null 2> "$WORK/e.txt"
check "format 1 checkpoint: recomputed, saying why" \
  grep -q "bounds: checkpoint of another format (pairbound-checkpoint 1; this pairbound writes pairbound-checkpoint 2).*: recomputing" "$WORK/e.txt"
check "format 1 checkpoint: identical after recomputing" same_stages "$WORK/dmg"

# single stages: --resume keeps a complete, matching output and refuses another command
pb 2 1 policy "$WORK/small.h5" -o "$WORK/sp" --resume
check "policy --resume: checkpointed" test -s "$WORK/sp/checkpoint.txt"
cp "$WORK/sp/results.h5" "$WORK/sp.h5"
"$PAIRBOUND" policy "$WORK/small.h5" -o "$WORK/sp" --resume > /dev/null 2> "$WORK/e.txt"
check "policy --resume again: not recomputed" grep -q "policy: $WORK/sp is complete (checkpoint matches): not recomputed" "$WORK/e.txt"
check "policy --resume again: output untouched" cmp -s "$WORK/sp/results.h5" "$WORK/sp.h5"
"$PAIRBOUND" policy "$WORK/small.h5" -o "$WORK/sp" --resume --all > /dev/null 2> "$WORK/e.txt"
check "policy --resume with other options: refused" grep -q "cannot resume: .*this run has 'command = .*--all'" "$WORK/e.txt"
finish
