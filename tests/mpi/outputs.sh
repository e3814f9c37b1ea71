#!/bin/sh
# Outputs never destroy data (issue: reliability, items 1 and 3): an output
# that is the input, a link, a device, an empty path or someone else's file
# is refused with the path named and everything left as it was; --force
# replaces only a regular file; two writers of one STORE or OUTDIR cannot
# both proceed (the second is told the pid holding it); a lock file that is
# not a regular file is refused; output names never hold control characters.
. "$(dirname "$0")/common.sh"
cd "$WORK" || exit 1
pb 1 1 synth --scale small --no-summary -o s.h5
sum() { cksum "$1" | cut -d' ' -f1-2; }
s0=$(sum s.h5)
# refused DESCRIPTION EXPECTED-MESSAGE COMMAND...
refused() {
  local d=$1 msg=$2; shift 2
  out=$("$@" 2>&1); rc=$?
  check "$d: refused (exit $rc)" [ $rc -ne 0 ]
  check "$d: says why" sh -c "printf '%s' \"\$1\" | grep -q -- \"\$2\"" _ "$out" "$msg"
}
refused "export onto its own store" "the output is the input s.h5" pb 1 1 export s.h5 -o s.h5
check "the store is intact" [ "$(sum s.h5)" = "$s0" ]
pb 1 1 export s.h5 -o s.csv
c0=$(sum s.csv)
refused "ingest onto its own CSV" "the output is the input s.csv" pb 1 1 ingest s.csv -o s.csv
check "the CSV is intact" [ "$(sum s.csv)" = "$c0" ]
ln -s s.csv alias.csv
refused "ingest onto a link to its CSV" "the output is the input" pb 1 1 ingest s.csv -o alias.csv
check "the CSV behind the link is intact" [ "$(sum s.csv)" = "$c0" ]
ln -s s.h5 link.h5
refused "synth onto a symbolic link" "link.h5: exists and is a symbolic link" pb 1 1 synth --scale small --no-summary -o link.h5
check "the link is still a link" [ -L link.h5 ]
refused "export onto a device" "/dev/null: exists and is a device" pb 1 1 export s.h5 -o /dev/null
mkfifo pipe
refused "export onto a FIFO" "pipe: exists and is a FIFO" pb 1 1 export s.h5 -o pipe
check "the FIFO is still a FIFO" [ -p pipe ]
refused "an empty output path" "needs a value\\|empty output" pb 1 1 export s.h5 -o ""
refused "an empty output directory" "output" pb 1 1 bounds s.h5 -o ""
check "nothing written into the filesystem root" [ ! -e /results.h5 ]
echo "my notes" > notes.txt
refused "export onto a file that is not pairbound's" "notes.txt: exists and is not a pairbound CSV export; give --force" \
  pb 1 1 export s.h5 -o notes.txt
check "the file is intact" [ "$(cat notes.txt)" = "my notes" ]
pb 1 1 export s.h5 -o notes.txt --force
check "--force replaces a regular file" cmp -s notes.txt s.csv
refused "--force never replaces an input" "the output is the input" pb 1 1 export s.h5 -o s.h5 --force
pb 1 1 export s.h5 -o s.csv
check "a re-export replaces its own earlier CSV" cmp -s notes.txt s.csv
mkdir mine && echo x > mine/keep
refused "a stage into someone's non-empty directory" "give --force" pb 1 1 bounds s.h5 -o mine
check "their file is intact" [ "$(cat mine/keep)" = x ]
pb 1 1 bounds s.h5 -o out
refused "a stage whose output would replace its store" "lies where this stage writes its output" \
  pb 1 1 bounds out/results.h5 -o out
check "no temporary left anywhere" sh -c '! ls -a . out out/report | grep -q "\.tmp"'
# a killed writer's temporaries (unique names nobody else renames) go with the next writer
touch out/report/bounds.tsv.tmp.AbC123 out/results.h5.tmp.XyZ789 s.h5.tmp.Qq1234 keep.tmp.notours
pb 1 1 bounds s.h5 -o out
check "the next stage run sweeps a killed run's temporaries" sh -c '! ls -a out out/report | grep -q "[.]tmp[.]"'
pb 1 1 synth --scale small --no-summary -o s.h5
check "the next synth sweeps its store's stale temporaries" test ! -e s.h5.tmp.Qq1234
check "a file that only looks alike is left alone" test -e keep.tmp.notours

# two writers at once: hold the lock as a running writer would, then try
exec 9>out/.pairbound.lock
flock -n 9 && echo 4242 >&9
refused "a second writer of one OUTDIR" "out is in use by pid 4242" pb 2 1 bounds s.h5 -o out
exec 9>s2.h5.lock
flock -n 9 && echo 4343 >&9
refused "a second writer of one STORE" "s2.h5 is in use by pid 4343" pb 1 1 synth --scale small --no-summary -o s2.h5
check "the second writer left no store" [ ! -e s2.h5 ]
exec 9>&-
pb 1 1 synth --scale small --no-summary -o s2.h5
check "once the lock is free the store is written" [ -e s2.h5 ]
check "and its lock file removed" [ ! -e s2.h5.lock ]
# real concurrency: two bounds runs into one OUTDIR; exactly one may write
( pb 1 1 bounds s.h5 -o race > race1.log 2>&1; echo $? > race1.rc ) &
( pb 1 1 bounds s.h5 -o race > race2.log 2>&1; echo $? > race2.rc ) &
wait
check "concurrent writers: at least one succeeds" sh -c 'grep -qx 0 race1.rc || grep -qx 0 race2.rc'
check "concurrent writers: any loser says the OUTDIR is in use" \
  sh -c 'for i in 1 2; do grep -qx 0 race$i.rc || grep -q "is in use by pid" race$i.log || exit 1; done'
pb 1 1 bounds s.h5 -o ref
check "concurrent writers: the result equals a lone run" cmp -s race/report/bounds.tsv ref/report/bounds.tsv
check "concurrent writers: results.h5 equals a lone run" same_h5 race/results.h5 ref/results.h5
check "a writer's lock file goes with it" test ! -e race/.pairbound.lock

# issue 47 item 1: an output name with a control character reached gnuplot's
# script, where a newline ends a command ("system" ran) and left files in
# the current directory: every -o refuses it up front, nothing is created
mkdir cc && cd cc || exit 1
inj=$(printf 'inj\nsystem "touch INJECTED"\n#')
nl=$(printf 'o\nnl')
tab=$(printf 'o\tt')
refused "a newline in OUTDIR (gnuplot would run a command)" 'output name "inj\\nsystem \\"touch INJECTED\\"\\n#" holds a control character' \
  pb 1 1 bounds ../s.h5 -o "$inj"
check "... and nothing ran" test ! -e INJECTED
refused "a newline in OUTDIR" "holds a control character" pb 1 1 screen ../s.h5 -o "$nl"
refused "a tab in OUTDIR" "holds a control character" pb 1 1 bounds ../s.h5 -o "$tab"
refused "a newline in synth's STORE" "holds a control character" pb 1 1 synth --scale small --no-summary -o "$nl"
refused "a newline in export's CSV" "holds a control character" pb 1 1 export ../s.h5 -o "$nl"
refused "a newline in world sample's file" "holds a control character" pb 1 1 world sample --world credit --level low -n 10 -o "$nl"
refused "a newline in run's OUTDIR" "holds a control character" pb 1 1 run --store ../s.h5 -o "$nl"
printf '[run]\nstore = ../s.h5\noutput = o\001x\nstages = bounds\n' > ../cc.ini
refused "a control character in a run configuration's output" "holds a control character" pb 1 1 run ../cc.ini
check "no file or directory left in the current directory (was inj, o, INJECTED)" test -z "$(ls -A)"
cd .. || exit 1

# issue 47 item 2: a lock file that is a symbolic link (dangling or not) or
# a FIFO is refused, naming it; nothing is written through it
echo VICTIM > victim.txt
mkdir lk && ln -s "$PWD/victim.txt" lk/.pairbound.lock
refused "OUTDIR's lock a symbolic link" "lk/.pairbound.lock: exists and is a symbolic link" pb 1 1 bounds s.h5 -o lk
ln -s "$PWD/victim.txt" s3.h5.lock
refused "STORE.lock a symbolic link (synth)" "s3.h5.lock: exists and is a symbolic link" \
  pb 1 1 synth --scale small --no-summary -o s3.h5
refused "STORE.lock a symbolic link (ingest)" "s3.h5.lock: exists and is a symbolic link" pb 1 1 ingest s.csv -o s3.h5
ln -s "$PWD/victim.txt" s.h5.lock
refused "STORE.lock a symbolic link (roles --set)" "s.h5.lock: exists and is a symbolic link" pb 1 1 roles s.h5 --set Syn=synthetic
rm s.h5.lock
ln -s "$PWD/victim.txt" v.csv.lock
refused "CSV.lock a symbolic link (export)" "v.csv.lock: exists and is a symbolic link" pb 1 1 export s.h5 -o v.csv
check "the link's target is untouched" [ "$(cat victim.txt)" = VICTIM ]
mkdir lk2 && ln -s "$PWD/nowhere" lk2/.pairbound.lock
refused "a dangling link as OUTDIR's lock" "exists and is a symbolic link" pb 1 1 bounds s.h5 -o lk2
ln -s "$PWD/nowhere2" d.csv.lock
refused "a dangling link as CSV.lock" "exists and is a symbolic link" pb 1 1 export s.h5 -o d.csv
check "a dangling link's target is never created" sh -c '[ ! -e nowhere ] && [ ! -e nowhere2 ]'
mkfifo f.csv.lock
refused "a FIFO as CSV.lock (never waited on)" "f.csv.lock: exists and is a FIFO" timeout 60 "$PAIRBOUND" -v 0 export s.h5 -o f.csv
check "no output behind any refused lock" sh -c '[ ! -e s3.h5 ] && [ ! -e v.csv ] && [ ! -e d.csv ] && [ ! -e f.csv ] && [ ! -e lk/results.h5 ]'

# issue 47 item 12: OUTDIR/report a symbolic link is refused (as results.h5 is), never replaced
mkdir elsewhere && echo mine > elsewhere/keep
pb 1 1 bounds s.h5 -o rl
rm -rf rl/report && ln -s "$PWD/elsewhere" rl/report
refused "OUTDIR/report a symbolic link" "rl/report: exists and is a symbolic link" pb 1 1 bounds s.h5 -o rl
refused "... also with --force" "rl/report: exists and is a symbolic link" pb 1 1 bounds s.h5 -o rl --force
check "the link is still a link, its directory untouched" sh -c '[ -L rl/report ] && [ "$(ls elsewhere)" = keep ]'

# issue 47 item 14: a regular file where a stage's OUTDIR goes is named as such
echo notes > afile
refused "OUTDIR a regular file" "afile: exists and is a regular file, not an output directory pairbound wrote" \
  pb 1 1 bounds s.h5 -o afile
check "the file is intact" [ "$(cat afile)" = notes ]
finish
