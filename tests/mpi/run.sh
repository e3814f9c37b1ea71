# pairbound run: every [stage] key reaches the stage exactly as the same option
# on the command line would, the run seed reaches every stage's streams (bounds
# seed + 0, verify sample_seed + 3, screen seed + 4, predict seed + 5, fragility seed + 6; docs/run.md), and bad
# configurations fail with FILE:LINE and write nothing; a run locks its OUTDIR;
# a configuration of any length is recorded in its outputs' provenance.
. "$TOP_SRCDIR/tests/mpi/common.sh"

pb 1 1 synth --config "$TOP_SRCDIR/tests/mpi/screen.ini" --no-summary -o "$WORK/s.h5"
cat > "$WORK/run.ini" <<INI
[run]
synth = none
store = $WORK/s.h5
output = $WORK/r
stages = bounds, verify, verify.policies, policy, screen, screen.dev, predict, fragility
seed = 100
group_draws = 3
class_draws = 2

[protocol]
coverage = 0.7

[bounds]
perm_replicates = 2
i5 = all
matched = 0

[verify]
cells = sample
sample = 2
max_class = 5

[policy]
all = 1
lambdas = 0.5, 0.25

[screen]
targets = ES
probe = TTA=Syn-B:fog-2
subsets = 3
subset_tiers = all
severity_sets = 0

[screen.dev]
split = dev
targets = ES
subsets = 3
severity_sets = 0

[verify.policies]
policies = 1
cells = sample
sample = 2
max_class = 5

[predict]
features = Syn-B
targets = ES, Diverse
shuffles = 2
deletion = 0
[fragility]
bins = 6
groups = 3
grid = 5
rho_max = 2
lcb_rho = 0.5
null = 4
probe = self
INI
pb 2 1 run "$WORK/run.ini" > /dev/null
check "run exits 0" test $? -eq 0
# the same analyses from the command line, seeds spelt out (100 + offset)
pb 2 1 bounds "$WORK/s.h5" --coverage=0.7 --seed 100 --group-draws 3 --perm-replicates=2 --i5 all --no-matched -o "$WORK/b"
pb 2 1 verify "$WORK/s.h5" --coverage 0.7 --cells sample --sample 2 --sample-seed 103 --max-class=5 -o "$WORK/v"
pb 2 1 policy "$WORK/s.h5" --coverage 0.7 --all --lambdas=0.5,0.25 -o "$WORK/p"
pb 2 1 screen "$WORK/s.h5" --coverage 0.7 --seed=104 --group-draws 3 --class-draws 2 --targets ES \
  --probe TTA=Syn-B:fog-2 --subsets 3 --subset-tiers all --no-severity-sets -o "$WORK/c"
pb 2 1 predict "$WORK/s.h5" --coverage 0.7 --seed 105 --group-draws=3 --features Syn-B --targets ES,Diverse \
  --shuffles 2 --no-deletion -o "$WORK/d"
pb 2 1 fragility "$WORK/s.h5" --coverage 0.7 --seed 106 --bins=6 --groups 3 --grid 5 --rho-max 2 --lcb-rho 0.5 \
  --null 4 --probe self -o "$WORK/f"
# further instances (docs/run.md): their own section from the stage's defaults, the run's seed and draws
pb 2 1 screen "$WORK/s.h5" --coverage 0.7 --seed=104 --group-draws 3 --class-draws 2 --split dev --targets ES \
  --subsets 3 --no-severity-sets -o "$WORK/c2"
pb 2 1 verify "$WORK/s.h5" --coverage 0.7 --cells sample --sample 2 --sample-seed 103 --max-class=5 --policies -o "$WORK/v2"
for d in b:bounds v:verify p:policy c:screen d:predict f:fragility c2:screen.dev v2:verify.policies; do
  dir=${d%%:*} stage=${d#*:}
  check "run $stage = command line: results.h5" same_h5 "$WORK/r/$stage/results.h5" "$WORK/$dir/results.h5"
  for f in $(cd "$WORK/$dir/report" && ls); do
    check "run $stage = command line: $f" cmp -s "$WORK/r/$stage/report/$f" "$WORK/$dir/report/$f"
  done
done
check "REPORT.md holds the instances" test "$(grep -c '^# Stage instance' "$WORK/r/REPORT.md")" -eq 2
"$PAIRBOUND" -v 1 run "$WORK/run.ini" --resume > /dev/null 2> "$WORK/resume.txt"
check "--resume keeps the instances" test "$(grep -c '\(screen.dev\|verify.policies\) complete in .*not recomputed' "$WORK/resume.txt")" -eq 2
printf '[run]\nstore = %s/s.h5\noutput = %s/bad_out\nstages = screen\n[screen.dev]\nsplit = dev\n' "$WORK" "$WORK" > "$WORK/bad.ini"
"$PAIRBOUND" -v 0 run "$WORK/bad.ini" > /dev/null 2> "$WORK/err.txt"
check "an instance section without its stage: exit 1" test $? -eq 1
check "an instance section without its stage: message" \
  test "$(cat "$WORK/err.txt")" = "pairbound run: error: $WORK/bad.ini: section [screen.dev] is a stage instance that [run] stages does not list"
# the screen seed is not screen's standalone default under a run seed of 100
pb 1 1 screen "$WORK/s.h5" --coverage 0.7 --group-draws 3 --class-draws 2 --targets ES \
  --probe TTA=Syn-B:fog-2 --subsets 3 --subset-tiers all --no-severity-sets -o "$WORK/c0"
check "run seed 100 changes screen's streams" sh -c "! cmp -s '$WORK/r/screen/report/screen_intervals.tsv' '$WORK/c0/report/screen_intervals.tsv'"
pb 1 1 predict "$WORK/s.h5" --coverage 0.7 --group-draws 3 --features Syn-B --targets ES,Diverse --shuffles 2 \
  --no-deletion -o "$WORK/d0"
check "run seed 100 changes predict's streams" sh -c "! cmp -s '$WORK/r/predict/report/predict_gains.tsv' '$WORK/d0/report/predict_gains.tsv'"
# nor is fragility's (image roles and null)
pb 1 1 fragility "$WORK/s.h5" --coverage 0.7 --bins=6 --groups 3 --grid 5 --rho-max 2 --lcb-rho 0.5 --null 4 \
  --probe self -o "$WORK/f0"
check "run seed 100 changes fragility's streams" sh -c "! cmp -s '$WORK/r/fragility/report/fragility.tsv' '$WORK/f0/report/fragility.tsv'"

# bad configurations: FILE:LINE: reason, exit 1, no output
bad_config() { # bad_config DESCRIPTION LINE REASON CONFIG-TEXT
  local d=$1 line=$2 why=$3
  printf '%b' "$4" > "$WORK/bad.ini"
  "$PAIRBOUND" -v 0 run "$WORK/bad.ini" > /dev/null 2> "$WORK/err.txt"
  check "$d: exit 1" test $? -eq 1
  check "$d: message" test "$(cat "$WORK/err.txt")" = "pairbound run: error: $WORK/bad.ini:$line: $why"
  check "$d: no output" test ! -e "$WORK/bad_out"
}
# consecutive instances reading the same rows share them (src/store/store_memo.c), at 3 ranks, and
# the second's outputs are still those of its command line
printf '[run]\nsynth = none\nstore = %s/s.h5\noutput = %s/m\nstages = screen, screen.dev\nseed = 100\ngroup_draws = 3\nclass_draws = 2\n[screen]\ntargets = ES\nsubsets = 3\nseverity_sets = 0\n[screen.dev]\nsplit = dev\ntargets = ES\nsubsets = 3\nseverity_sets = 0\n' \
  "$WORK" "$WORK" > "$WORK/memo.ini"
OMP_NUM_THREADS=1 mpi_launch 3 "$PAIRBOUND" -v 2 run "$WORK/memo.ini" > /dev/null 2> "$WORK/memo.txt"
check "memo run exits 0" test $? -eq 0
check "screen.dev takes screen's rows from the memo" grep -q "from the run's rows memo, not read again" "$WORK/memo.txt"
pb 3 1 screen "$WORK/s.h5" --seed=104 --group-draws 3 --class-draws 2 --split dev --targets ES --subsets 3 \
  --no-severity-sets -o "$WORK/m2"
check "memo: screen.dev = command line: results.h5" same_h5 "$WORK/m/screen.dev/results.h5" "$WORK/m2/results.h5"
for f in $(cd "$WORK/m2/report" && ls); do
  check "memo: screen.dev = command line: $f" cmp -s "$WORK/m/screen.dev/report/$f" "$WORK/m2/report/$f"
done

head="[run]\nstore = $WORK/s.h5\noutput = $WORK/bad_out\nstages = screen\n"
bad_config "unknown key" 7 "unknown key 'draws' in [screen]" "$head\n[screen]\ndraws = 3\n"
bad_config "unknown section" 6 "unknown section [sreen]" "$head[sreen]\nseed = 3\n"
bad_config "repeated key" 6 "[run] seed given twice" "$head""seed = 1\nseed = 2\n"
bad_config "bad value" 7 "[screen] derange must be an integer in [0, 1000], got '-1'" "$head\n[screen]\nderange = -1\n"
bad_config "bad choice" 7 "[bounds] i5 must be 'none', 'panel' or 'all', got 'some'" "$head\n[bounds]\ni5 = some\n"
bad_config "command-line-only option" 7 "unknown key 'output' in [verify]" "$head\n[verify]\noutput = x\n"
bad_config "fragility's --law is not a key" 7 "unknown key 'law' in [fragility]" "$head\n[fragility]\nlaw = b.law\n"
# issue 47 item 14: an empty item in stages was skipped silently
head="[run]\nstore = $WORK/s.h5\noutput = $WORK/bad_out\n"
bad_config "two commas in stages" 4 "[run] stages: 'bounds,,screen' lists an empty stage name (two commas in a row, or one at an end)" \
  "$head""stages = bounds,,screen\n"
bad_config "a comma at the end of stages" 4 "[run] stages: 'bounds,' lists an empty stage name (two commas in a row, or one at an end)" \
  "$head""stages = bounds,\n"
bad_config "a comma at the start of stages" 4 "[run] stages: ', bounds' lists an empty stage name (two commas in a row, or one at an end)" \
  "$head""stages = , bounds\n"

# issue 47 item 4: a run locks its OUTDIR, so a second run into it is refused
# while the first runs, naming the directory, and the first completes with its
# own outputs.  The first waits in its figures' check (a stand-in gnuplot that
# answers once the test says go, without pngcairo) while the second tries.
cat > "$WORK/waitgp" <<EOS
#!/bin/sh
if [ "\$1" = -e ]; then
  while [ ! -e "$WORK/go" ]; do sleep 0.05; done
  echo "no such terminal here"; exit 0
fi
cat > /dev/null
EOS
chmod +x "$WORK/waitgp"
printf '[run]\nsynth = none\nstore = %s/s.h5\noutput = %s/R\nstages = bounds\n' "$WORK" "$WORK" > "$WORK/r1.ini"
sed -e 's/^stages = bounds$/stages = bounds\nseed = 7/' "$WORK/r1.ini" > "$WORK/r7.ini"
(PAIRBOUND_GNUPLOT=$WORK/waitgp "$PAIRBOUND" -v 0 run "$WORK/r1.ini" > /dev/null 2> "$WORK/r1.err"; echo $? > "$WORK/r1.rc") &
for i in $(seq 1200); do ls -d "$WORK"/R/bounds/.pairbound-stage.* > /dev/null 2>&1 && break; sleep 0.05; done
check "the first run is inside its first stage" sh -c "ls -d '$WORK'/R/bounds/.pairbound-stage.* > /dev/null 2>&1"
"$PAIRBOUND" -v 0 run "$WORK/r7.ini" > /dev/null 2> "$WORK/r7.err"
check "a second run into the same OUTDIR: exit 1" test $? -eq 1
check "a second run into the same OUTDIR: names the directory and the first run" grep -qF "$WORK/R is in use by pid" "$WORK/r7.err"
touch "$WORK/go"
wait
check "the first run completes" test "$(cat "$WORK/r1.rc")" = 0
check "... with its own settings (seed), not the second's" sh -c "grep -q '^setting seed = 20260908\$' '$WORK/R/bounds/checkpoint.txt' && ! grep -q '^setting seed = 7\$' '$WORK/R/bounds/checkpoint.txt'"
sed -e "s|$WORK/R|$WORK/R2|" "$WORK/r1.ini" > "$WORK/r2.ini"
PAIRBOUND_GNUPLOT=none "$PAIRBOUND" -v 0 run "$WORK/r2.ini" > /dev/null
check "... and its outputs are a lone run's (results.h5)" same_h5 "$WORK/R/bounds/results.h5" "$WORK/R2/bounds/results.h5"
check "... and its outputs are a lone run's (bounds.tsv)" cmp -s "$WORK/R/bounds/report/bounds.tsv" "$WORK/R2/bounds/report/bounds.tsv"
check "no lock file left after the runs" test -z "$(find "$WORK/R" "$WORK/R2" -name '*.lock')"

# issue 47 item 9: a configuration over 64 KB is valid: the provenance text
# (the configuration's text) that cannot be an HDF5 attribute is the dataset
# /provenance/text; a shorter one stays the attribute
{
  printf '[run]\nsynth = none\nstore = %s/s.h5\noutput = %s/big\nstages = bounds\n' "$WORK" "$WORK"
  i=0
  while [ $i -lt 1000 ]; do
    i=$((i + 1))
    echo "; comment line $i of a configuration longer than an HDF5 attribute can hold (64 KiB)"
  done
} > "$WORK/big.ini"
PAIRBOUND_GNUPLOT=none "$PAIRBOUND" -v 0 run "$WORK/big.ini" > /dev/null 2> "$WORK/big.err"
check "a configuration of $(wc -c < "$WORK/big.ini") bytes: the run exits 0" test $? -eq 0
check "... its whole text in /provenance/text" sh -c "h5dump -d /provenance/text '$WORK/big/bounds/results.h5' | grep -q 'comment line 1000 of'"
check "... the results are those of a short configuration" same_h5 "$WORK/big/bounds/results.h5" "$WORK/R2/bounds/results.h5"
check "... no lock file left" test -z "$(find "$WORK/big" -name '*.lock')"
check "a short provenance stays the attribute /provenance text" sh -c "h5dump -A -g /provenance '$WORK/R2/bounds/results.h5' | grep -q 'ATTRIBUTE \"text\"'"
finish
