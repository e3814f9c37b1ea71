# A real single-node SLURM (Debian 12's slurmctld, slurmd, slurm-client and
# munge; run as root): a private munged, slurmctld and slurmd on a temporary
# slurm.conf for this host; jobs/pairbound.sbatch and a 3-task array of
# jobs/sweep.sbatch on the small store with 2 tasks each, outputs equal to a
# direct mpirun run; a job requeued while running (`scontrol requeue`, as after
# a preemption or node failure) resumes and gives identical outputs.  Every
# daemon is stopped by pid.
# Skipped (77) when SLURM or munge is not installed or not running as root.
. "$TOP_SRCDIR/tests/mpi/common.sh"

for p in slurmctld slurmd munged mungekey; do
  command -v "$p" > /dev/null || PATH=$PATH:/usr/sbin
  command -v "$p" > /dev/null || { echo "# $p not installed: skipped"; exit 77; }
done
for p in sbatch squeue scontrol scancel sinfo; do command -v "$p" > /dev/null || { echo "# $p not installed: skipped"; exit 77; }; done
[ "$(id -u)" = 0 ] && id munge > /dev/null 2>&1 || { echo "# needs root and the munge user: skipped"; exit 77; }

D=$WORK/slurm
chmod 755 "$WORK"  # the munge user reaches its socket directory through it
mkdir -p "$D/state" "$D/spool" "$D/log" "$D/munge"
H=$(hostname -s); CPUS=$(nproc); MEM=$(( $(free -m | awk '/Mem:/{print $2}') - 1024 ))
# two ports below the kernel's ephemeral range (the MPI tests running beside
# this one hold TCP connections there: a port taken from it once made
# slurmctld fail with "Address already in use"), neither of them in use
EPH=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2> /dev/null || echo 32768)
in_use() { ss -Htan 2> /dev/null | awk '{print $4}' | grep -q ":$1\$"; }
PORT=$((10000 + ($$ % ((EPH - 10002) / 2)) * 2))
while in_use $PORT || in_use $((PORT + 1)); do PORT=$((PORT + 2)); [ $PORT -lt $((EPH - 1)) ] || PORT=10000; done
cat > "$D/slurm.conf" << EOF2
ClusterName=pbtest
SlurmctldHost=$H
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge/munge.socket
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/log/ctld.log
SlurmdLogFile=$D/log/d.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName=$H CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=debug Nodes=$H Default=YES MaxTime=INFINITE State=UP
EOF2
export SLURM_CONF=$D/slurm.conf
# munge: a private key, socket and daemon (run as the munge user) for this test only
mungekey -c -k "$D/munge/munge.key" > /dev/null 2>&1
chown -R munge:munge "$D/munge"; chmod 755 "$D/munge"; chmod 400 "$D/munge/munge.key"
stop_daemons() {
  local f pid
  for f in "$D/slurmd.pid" "$D/slurmctld.pid" "$D/munge/munged.pid"; do
    pid=$(cat "$f" 2> /dev/null) && [ -n "$pid" ] && kill "$pid" 2> /dev/null
  done
  sleep 1
  [ -n "${PB_KEEP_WORK:-}" ] || rm -rf "$WORK"
}
trap stop_daemons EXIT
trap "exit 1" INT TERM
su -s /bin/sh munge -c "munged --socket='$D/munge/munge.socket' --key-file='$D/munge/munge.key' \
  --pid-file='$D/munge/munged.pid' --log-file='$D/munge/munged.log' --seed-file='$D/munge/munged.seed'" \
  || { echo "# munged did not start: skipped"; exit 77; }
slurmctld -f "$SLURM_CONF" && slurmd -f "$SLURM_CONF" || { echo "# slurm daemons did not start"; exit 99; }
i=0; until sinfo -h -o %t 2> /dev/null | grep -q idle; do
  i=$((i + 1)); [ $i -gt 60 ] && { echo "# node not idle after 30 s"; cat "$D/log/"*.log; exit 99; }; sleep 0.5
done
ok "slurmctld and slurmd up, node idle"

# wait_job ID [SECONDS]: until the job leaves the queue (bounded)
wait_job() {
  local i=0 lim=$((${2:-120} * 2))
  while squeue -h -j "$1" 2> /dev/null | grep -q .; do
    i=$((i + 1)); [ $i -gt $lim ] && { echo "# job $1 still queued"; scancel "$1"; return 1; }; sleep 0.5
  done
}
job_state() { scontrol show job "$1" 2> /dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
same_run() { # same_run A B [STAGE...]: every (or each named) stage output of run directory A equals B
  local a=$1 b=$2 s f bad=0
  shift 2
  for s in ${@:-bounds verify policy screen}; do
    same_h5 "$a/$s/results.h5" "$b/$s/results.h5" || { echo "# $s/results.h5 differs"; bad=1; }
    for f in "$a/$s/report/"*; do cmp -s "$f" "$b/$s/report/${f##*/}" || { echo "# $s/${f##*/} differs"; bad=1; }; done
  done
  return $bad
}

JOBS=$TOP_SRCDIR/jobs
cfg() { # cfg OUTDIR [extra lines]
  printf '[run]\nsynth = none\nstore = %s/s.h5\noutput = %s\nstages = bounds, verify, policy, screen\n' "$WORK" "$1"
  printf 'group_draws = 60\nclass_draws = 20\n%s\n' "${2:-}"
}
pb 1 1 synth --scale small --no-summary -o "$WORK/s.h5"
cfg "$WORK/direct" > "$WORK/direct.ini"
pb 2 1 run "$WORK/direct.ini" > /dev/null
cd "$WORK"

# the batch script, 2 tasks
cfg "$WORK/batch" > "$WORK/batch.ini"
id=$(CONFIG=$WORK/batch.ini PAIRBOUND=$PAIRBOUND LAUNCHER=mpirun sbatch --parsable -n 2 -c 1 \
     -o "$WORK/batch.out" "$JOBS/pairbound.sbatch")
check "sbatch pairbound.sbatch: submitted" test -n "$id"
wait_job "$id" 150
check "batch job completed" test "$(job_state "$id")" = COMPLETED
check "batch job: the summary in its output" grep -q "^pairbound run: 4 stages on .* (2 ranks x 1 thread)" "$WORK/batch.out"
check "batch job: outputs equal the direct mpirun run" same_run "$WORK/direct" "$WORK/batch"
check "batch job log: no message inside the summary" awk '/^pairbound run: 4 stages/ { s = 1 } s && /^\[/ { bad = 1 }
  /^report / { s = 0 } END { exit bad }' "$WORK/batch.out"

# a 3-task array of sweep.sbatch over seeds, 2 tasks each (two stages, to keep the test short)
cfg "$WORK/unused" > "$WORK/sweep.ini"
sed -i 's/^stages = .*/stages = bounds, screen/' "$WORK/sweep.ini"
id=$(CONFIG=$WORK/sweep.ini PAIRBOUND=$PAIRBOUND LAUNCHER=mpirun OUT=$WORK/sweep SEED0=20260908 \
     sbatch --parsable -n 2 -c 1 --array=0-2 -o "$WORK/sweep-%a.out" "$JOBS/sweep.sbatch")
check "sbatch --array=0-2 sweep.sbatch: submitted" test -n "$id"
wait_job "$id" 240
for t in 0 1 2; do
  check "array task $t: completed with its own output" test -s "$WORK/sweep/task-$t/REPORT.md"
done
check "array task 0 (seed 20260908): equals the direct run" same_run "$WORK/direct" "$WORK/sweep/task-0" bounds screen
check "array tasks 1, 2: other seeds, other intervals" sh -c "! cmp -s '$WORK/sweep/task-1/screen/report/screen_intervals.tsv' \
  '$WORK/sweep/task-2/screen/report/screen_intervals.tsv'"
check "array task 1: seed recorded" grep -q "^seed = 20260909$" "$WORK/sweep/task-1/REPORT.md"

# requeued while running, after its first stage (a preemption or node failure:
# `scontrol requeue` ends the job's processes and puts it back in the queue):
# the rerun resumes.  A requeue of a running job is always accepted, where a
# job ended by `scancel --signal=KILL` is recorded as CANCELLED or FAILED
# depending on which process the KILL reached first, and SLURM refuses to
# requeue a CANCELLED one.
cfg "$WORK/rq" > "$WORK/rq.ini"
id=$(CONFIG=$WORK/rq.ini PAIRBOUND=$PAIRBOUND LAUNCHER=mpirun sbatch --parsable -n 2 -c 1 --open-mode=append \
     -o "$WORK/rq.out" "$JOBS/pairbound.sbatch")
i=0; until [ -s "$WORK/rq/bounds/checkpoint.txt" ] || [ $i -gt 1200 ]; do i=$((i + 1)); sleep 0.1; done
check "requeue: the job is running after its first stage" test "$(job_state "$id")" = RUNNING
scontrol requeue "$id"
check "scontrol requeue: accepted" test $? -eq 0
# SLURM holds a requeued job back with a BeginTime: release it at once
i=0; until [ "$(job_state "$id")" = PENDING ] || [ $i -gt 600 ]; do i=$((i + 1)); sleep 0.1; done
check "requeue: the job is pending again" test "$(job_state "$id")" = PENDING
check "requeue: it stopped before completing" test ! -s "$WORK/rq/REPORT.md"
# release it only once the first run's processes are gone (they hold the
# output's lock until SLURM's SIGTERM/SIGKILL ends them), and not within the
# second of the requeue: slurmd revokes the job's credentials at the requeue
# and compares creation times in whole seconds, so a relaunch in that second
# is refused ("Job credential revoked"), which is why SLURM itself delays it
i=0; while pgrep -f "run $WORK/rq.ini" > /dev/null && [ $i -lt 600 ]; do i=$((i + 1)); sleep 0.1; done
sleep 2
i=0; while [ "$(job_state "$id")" = PENDING ] && [ $i -lt 240 ]; do
  scontrol update jobid="$id" StartTime=now 2> /dev/null; i=$((i + 1)); sleep 0.5
done
wait_job "$id" 240
if [ "$(job_state "$id")" != COMPLETED ]; then
  tail -n 25 "$WORK/rq.out" | sed 's/^/# rq.out: /'
  scontrol show job "$id" 2>&1 | sed 's/^/# job: /'
  scontrol show node 2>&1 | grep -E "State|Reason" | sed 's/^/# node: /'
  grep -h "$id" "$D/log/"*.log | tail -n 30 | sed 's/^/# slurm: /'
fi
# SLURM may requeue a relaunch that it refused (a credential revoked in the
# second of the requeue), so the count that resumes can exceed 1
grep "^pairbound.sbatch: restart" "$WORK/rq.out" | sed 's/^/# rq.out: /'
check "requeued job: restarted (SLURM_RESTART_COUNT >= 1) with --resume" grep -Eq "^pairbound.sbatch: restart [1-9][0-9]* of job $id: resuming" "$WORK/rq.out"
check "requeued job completed" test "$(job_state "$id")" = COMPLETED
check "requeued job resumed (kept bounds)" grep -q "run: bounds complete in .* (checkpoint matches)" "$WORK/rq.out"
check "requeued job: outputs equal the direct mpirun run" same_run "$WORK/direct" "$WORK/rq"
check "requeued job log: no message inside the summary" awk '/^pairbound run: 4 stages/ { s = 1 } s && /^\[/ { bad = 1 }
  /^report / { s = 0 } END { exit bad }' "$WORK/rq.out"
finish
