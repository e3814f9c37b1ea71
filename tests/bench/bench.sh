#!/bin/bash
# make bench: wall time, throughput and peak memory of every stage at paper
# scale (medians over REPEAT runs, default 3), plus the per-class cost of the
# exact I5 dynamic program at 50 records per side, and the policy kernel at
# real class sizes (25-1,000 records per side, CIFAR- and ImageNet-shaped stores).
#   usage: bench.sh PAIRBOUND [BENCH_I5 [BENCH_POLICY]]
set -eu
PB=$1
BI5=${2:-}
BPOL=${3:-}
REPEAT=${REPEAT:-3}
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d "${TMPDIR:-/tmp}/pbbench.XXXXXX")
trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# one machine: the PML Open MPI selects here, named so that start-up skips
# probing the cm PML's libraries, as jobs/main.sh (docs/run.md "MPI start-up")
export OMPI_MCA_pml="${OMPI_MCA_pml:-ob1}"
PAIRED=9108000
# every record synth writes: 18,832,000 of the analysed sources + the probe-only
# TTA (44 x 31 x 1,000) and Syn-B5 (44 x 10 x 1,000)
ALLREC=20636000

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# timings DIR: "stage/phase seconds" for every phase a stage recorded in
# DIR/results.h5 (/timings/STAGE/PHASE, slowest rank; see include/pairbound/timer.h)
timings() {
  h5ls -r -d "$1/results.h5/timings" 2> /dev/null |
    awk '/Dataset/ {name = substr($1, 2)} /^ *[-+0-9.eE]+$/ && name != "" {print name, $1; name = ""}'
}
# phase NAME: median over the last run()'s repetitions of phase NAME ("stage/phase")
phase() { awk -v k="$1" '$1 == k {print $2}' "$W/phases" | median; }
# phases STAGE: every phase STAGE recorded in the last run(), in its order, with medians
phases() {
  local k
  for k in $(awk -v s="$1/" 'index($1, s) == 1 && !seen[$1]++ {print substr($1, length(s) + 1)}' "$W/phases"); do
    printf '  %-30s %8.3f s\n' "$1/$k" "$(phase "$1/$k")"
  done
}
# colsum DIR PATH: sum of a results.h5 column (NaN entries skipped)
colsum() {
  h5dump -y -d "$2" "$1/results.h5" | awk '/DATA/ {on = 1; next} on && /}/ {on = 0} on {
    n = split($0, v, ","); for (i = 1; i <= n; i++) if (v[i] ~ /[0-9]/ && v[i] !~ /nan/) s += v[i]} END {printf "%.17g\n", s}'
}

# vs_seed WHAT SEED_SECONDS OURS: the seed's CPU time for a workload it timed
# (seed 000: hierarchy and matched support B.3, policy panel D, prediction I.4)
# beside ours, and the ratio
vs_seed() {
  awk -v w="$1" -v s="$2" -v o="$3" 'BEGIN { printf "  seed 000 %s: %.2f s on CPU; pairbound %.3f s: %.0fx faster\n", w, s, o, s / o }'
}
# wall: median wall seconds of the last run()
wall() { awk '{print $1}' "$W/t" | median; }

# run NAME RECORDS NP THREADS ARGS...: REPEAT runs, print medians (FRESH=1: the
# output removed before each, for --resume runs that would otherwise keep it)
run() {
  local name=$1 recs=$2 np=$3 th=$4 out="" prev=""
  shift 4
  for a in "$@"; do
    [ "$prev" = "-o" ] && out=$a
    prev=$a
  done
  : > "$W/t"
  : > "$W/phases"
  for i in $(seq "$REPEAT"); do
    [ -n "${FRESH:-}" ] && [ -n "$out" ] && rm -rf "$out"
    OMP_NUM_THREADS=$th /usr/bin/time -f '%e %M' -o "$W/one" \
      mpirun --oversubscribe --bind-to none -np "$np" "$PB" -v 1 "$@" > /dev/null 2> "$W/log"
    cat "$W/one" >> "$W/t"
    [ -n "$out" ] && timings "$out" >> "$W/phases"
    # a pipeline (RUN_REPORT: its REPORT.md): "run/STAGE seconds" from the report's wall-time line
    [ -n "${RUN_REPORT:-}" ] && sed -n 's/^- wall time: [0-9.]* s in all; //p' "$RUN_REPORT" |
      tr ',' '\n' | awk '{print "run/" $1, $2}' >> "$W/phases"
  done
  local wall rss
  wall=$(awk '{print $1}' "$W/t" | median)
  rss=$(awk '{print $2}' "$W/t" | median)
  printf '%-34s %2d x %d  %8.2f s  %10.2f M rec/s  %8.0f MB peak (per rank)\n' "$name" "$np" "$th" "$wall" \
    "$(echo "$recs $wall" | awk '{print $1 / $2 / 1e6}')" "$(echo "$rss" | awk '{print $1 / 1024}')"
}

echo "pairbound bench: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')), REPEAT=$REPEAT, medians"
# the build and the kernels' vector level: timings on a processor with
# AVX-512 and on one with AVX2 alone are not comparable
"$PB" --version | sed 's/^/  /'
echo "  MPI: OMPI_MCA_pml=$OMPI_MCA_pml"
echo "stage                              ranks x thr   wall        throughput        memory"
# FRESH: each run writes a new store, not one in place of the last (whose
# 1.2 GB the file system would free in synth's final rename, 0.3-0.6 s here)
FRESH=1 run "synth (paper, all records)" $ALLREC 1 2 synth --no-summary -o "$W/p.h5"
FRESH=1 run "synth (paper) 2 ranks" $ALLREC 2 1 synth --no-summary -o "$W/p.h5"
# records in and out: export, ingest (one file, 44 files, 2 ranks), append of one model
bash "$HERE/bench_io.sh" "$PB" "$W/p.h5" "$W"
run "protocol" $ALLREC 1 2 protocol "$W/p.h5" -o "$W/o"
phases protocol
run "states (paired records)" $PAIRED 1 2 states "$W/p.h5" -o "$W/o"
phases states
run "bounds (paired records)" $PAIRED 1 2 bounds "$W/p.h5" -o "$W/o"
vs_seed "hierarchy, full grid (whole process)" 218.35 "$(wall)"
vs_seed "matched support (its phase)" 88.07 "$(phase bounds/matched_support)"
echo "bounds phases (slowest rank, median over runs; results.h5 /timings/bounds):"
for k in load grid_pass i5_pass matched_support clean_support label_sets write; do
  printf '  %-30s %8.3f s\n' "$k" "$(phase "bounds/$k")"
done
run "bounds 2 ranks" $PAIRED 2 1 bounds "$W/p.h5" -o "$W/o"
run "bounds --i5 all" $PAIRED 1 2 bounds --i5 all --no-matched "$W/p.h5" -o "$W/o"
run "bounds --calibration (F.1)" $PAIRED 1 2 bounds --calibration "$W/p.h5" -o "$W/o"
echo "  calibration phase: $(phase bounds/calibration) s"
# witnesses (docs/bounds.md, "Witnesses"): built beside the I5 pass, then
# every one of them (4 per cell) checked by verify on all 11,088 cells
run "bounds --i5 all --witnesses" $PAIRED 1 2 bounds --i5 all --no-matched --witnesses "$W/p.h5" -o "$W/ow"
echo "  i5_pass phase: $(phase bounds/i5_pass) s, write phase: $(phase bounds/write) s"
run "verify --witnesses (all cells)" $PAIRED 1 2 verify --witnesses "$W/ow/results.h5" "$W/p.h5" -o "$W/vw"
echo "  witnesses phase: $(phase verify/witnesses) s"
# verify: every class of every cell (Syn 5 records per class, real sources 2-3),
# then C.1's shape restricted to 48 Syn cells
run "verify (all cells)" $PAIRED 1 2 verify "$W/p.h5" -o "$W/v"
phases verify
perms=$(colsum "$W/v" /verify/cells/permutations)
echo "$(phase verify/verify) $(phase verify/enumeration_cpu) $perms" |
  awk '{printf "  verify phase %.3f s: %.3g permutations/s overall, %.3g per enumerating thread-second\n", $1, $3 / $1, $3 / $2}'
# 2 ranks: the blocks split by their enumeration cost, each rank at its own pace
run "verify 2 ranks" $PAIRED 2 1 verify "$W/p.h5" -o "$W/v"
run "verify --sources Syn --sample 48" 240000 1 2 verify --sources Syn --cells sample --sample 48 "$W/p.h5" -o "$W/v"
# verify --policies: the policy engine against enumeration (per class and per
# cell) on the panel at the primary weight, the panel at the whole weight grid,
# and every cell at the primary weight
run "verify --policies (panel)" $PAIRED 1 2 verify --policies --cells panel "$W/p.h5" -o "$W/v"
run "verify --policies --lambdas grid (panel)" $PAIRED 1 2 verify --cells panel \
  --lambdas 0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1 "$W/p.h5" -o "$W/v"
run "verify --policies (all cells)" $PAIRED 1 2 verify --policies "$W/p.h5" -o "$W/v"
# policy: the seed's panel workload (74,250 bounds, 297,000 directed comparisons;
# target <= 1 s wall on 2 cores) and the full grid (target <= 20 s)
for scope in panel all; do
  if [ $scope = panel ]; then
    run "policy (panel, 450 cells)" $PAIRED 1 2 policy "$W/p.h5" -o "$W/op"
    vs_seed "policy panel (whole process)" 167.29 "$(wall)"
  else
    run "policy --all (11,088 cells)" $PAIRED 1 2 policy --all "$W/p.h5" -o "$W/oa"
    run "policy --all 2 ranks" $PAIRED 2 1 policy --all "$W/p.h5" -o "$W/oa"
    FRESH=1 run "policy --all --resume, 252 blocks" $PAIRED 1 2 policy --all --resume "$W/p.h5" -o "$W/oa"
  fi
  for k in load compute write; do
    printf '  policy %-5s %-24s %8.3f s\n' "$scope" "$k" "$(phase "policy/$k")"
  done
done

# screen: every score and metric of the 44 x (54 + 162) ES and Diverse cells
# (500 evaluation images each), 10 derangement draws, 3 x 88 logistic fits,
# 98 probe subsets on mild cells, the TTA^sel and U^sel selections (select:
# 2 targets x 18 greedy steps over 30 and 27 candidates x 44 models); the CPU
# line shows user + system seconds.
SCREENREC=4752000
run "screen (9504 cells)" $SCREENREC 1 2 screen "$W/p.h5" -o "$W/os"
echo "screen phases (slowest rank, median over runs; results.h5 /timings/screen):"
for k in load select compute write; do
  printf '  %-30s %8.3f s\n' "$k" "$(phase "screen/$k")"
done
OMP_NUM_THREADS=2 /usr/bin/time -f '  screen CPU: %U s user + %S s system, %e s wall (1 rank x 2 threads)' \
  mpirun --oversubscribe --bind-to none -np 1 "$PB" -v 0 screen "$W/p.h5" -o "$W/os" 2>&1 | tail -1
run "screen 2 ranks" $SCREENREC 2 1 screen "$W/p.h5" -o "$W/os"

# predict: the whole analysis of seed 000 Appendices H-I on the records it
# reads (every Syn and Syn-B cell, the mild ES and Diverse cells): 16
# source/target combinations, every feature set, 20 shuffle replicates, 2,000
# group-reweighting draws, 10 deletion refits.  Seed 000 I.4 times it at
# 199.84 s on CPU; the target is <= 2 s at 1 rank x 2 threads.
PREDREC=6446000
run "predict (16 combinations)" $PREDREC 1 2 predict "$W/p.h5" -o "$W/opr"
vs_seed "prediction (whole process)" 199.84 "$(wall)"
echo "predict phases (slowest rank, median over runs; results.h5 /timings/predict):"
for k in cells fits report; do
  printf '  %-30s %8.3f s\n' "$k" "$(phase "predict/$k")"
done
run "predict 2 ranks" $PREDREC 2 1 predict "$W/p.h5" -o "$W/opr"
# fragility: 44 models x 4 sources x 2 arms (20 bins x 8 groups, 13 radii,
# 200 null replicates each) and the drift split of all 11,088 cells
# (target <= 5 s wall at 1 rank x 2 threads); throughput in paired records
run "fragility (176 units, 11088 cells)" $PAIRED 1 2 fragility "$W/p.h5" -o "$W/of"
echo "fragility phases (slowest rank, median over runs; results.h5 /timings/fragility):"
for k in load compute write; do
  printf '  %-30s %8.3f s\n' "$k" "$(phase "fragility/$k")"
done
run "fragility 2 ranks" $PAIRED 2 1 fragility "$W/p.h5" -o "$W/of"
# the known-propensity study (seed 001 U.1): 2,000 replicates of 8 label
# samples (4 laws x n 250, 5,000: 21,000 labels a replicate), 10 designs x 7
# radii x 2 directions, and U.2's nested readouts from labels (3 laws x 16
# cells x 16 and 313 labels: 15,792 labels a replicate; target <= 30 s at 1
# rank x 2 threads); throughput in labels drawn
run "fragility --study known-propensity" $((2000 * (21000 + 15792))) 1 2 fragility --study known-propensity -o "$W/ok"

# resampling: 2,000 model-group draws and 200 class draws of every screening
# paired difference, 2,000 group draws of the bounds tables; strong scaling
echo
echo "resampling (draws x cells per second = (2000 + 200) x 9504 / wall for screen):"
run "bounds --group-draws 2000" $PAIRED 1 2 bounds --group-draws 2000 --no-matched "$W/p.h5" -o "$W/ob"
run "screen + 2000 group, 200 class draws" $((2200 * 9504)) 1 2 screen --group-draws 2000 --class-draws 200 "$W/p.h5" -o "$W/os"
# with --resume: the cost of keeping the 44 block checkpoints (0.6 MB each) until the stage commits
FRESH=1 run "  same, --resume (44 blocks kept)" $((2200 * 9504)) 1 2 screen --group-draws 2000 --class-draws 200 --resume \
  "$W/p.h5" -o "$W/os"
run "  same, 1 rank x 1 thread" $((2200 * 9504)) 1 1 screen --group-draws 2000 --class-draws 200 "$W/p.h5" -o "$W/os"
run "  same, 2 ranks x 1 thread" $((2200 * 9504)) 2 1 screen --group-draws 2000 --class-draws 200 "$W/p.h5" -o "$W/os"

# progress reporting: the same screening run with progress (-v 1, off a
# terminal: a line every 5 s) and without (-v 0); the difference is its cost
echo
echo "progress reporting cost (screen + 2000 group, 200 class draws, 1 rank x 2 threads, median wall):"
for v in 1 0; do
  : > "$W/t"
  for i in $(seq "$REPEAT"); do
    OMP_NUM_THREADS=2 /usr/bin/time -f '%e' -a -o "$W/t" mpirun --oversubscribe --bind-to none -np 1 "$PB" -v "$v" \
      screen --group-draws 2000 --class-draws 200 "$W/p.h5" -o "$W/os" > /dev/null 2>&1
  done
  printf '  -v %d %8.2f s\n' "$v" "$(median < "$W/t")"
done

# the main job: the default pipeline (inputs/run.ini: nine stages, checkpoints,
# REPORT.md, summary) on the store already built, then a shorter one
echo
sed -e 's|^synth = .*|synth = none|' -e "s|^store = .*|store = $W/p.h5|" -e "s|^output = .*|output = $W/od|" \
  "$HERE/../../inputs/run.ini" > "$W/default.ini"
RUN_REPORT="$W/od/REPORT.md" run "run: default pipeline (inputs/run.ini)" $PAIRED 1 2 run "$W/default.ini"
vs_seed "main job, its four timed analyses (218.35 + 88.07 + 167.29 + 199.84 s)" 673.55 "$(wall)"
pipeline_wall=$(wall)
cp "$W/phases" "$W/pipeline_phases"
printf '[run]\nsynth = none\nstore = %s\noutput = %s\nstages = bounds, verify, policy, screen\ngroup_draws = 2000\nclass_draws = 200\n[bounds]\nperm_replicates = 20\n' \
  "$W/p.h5" "$W/or" > "$W/run.ini"
run "run: bounds, verify, policy, screen" $PAIRED 1 2 run "$W/run.ini"
run "run: same, 2 ranks x 1 thread" $PAIRED 2 1 run "$W/run.ini"

# exact score (seed 002 C.3-C.5), credit risk at High, logistic:n=1000: the
# million-input calibration reference (target <= 10 s at 1 rank x 2 threads,
# faster at 2 ranks) and the kNN sweep n = 200..4000 x 3 seeds (target <= 5 s)
echo
echo "exact score (credit, High, logistic:n=1000; phases of the slowest rank, median over runs):"
"$PB" -v 0 world sample --world credit --level high -n 500 --first 1000 --seed 2032 -o "$W/cases.tsv"
for np in 1 2; do
  run "exact score (1M reference inputs)" 1000000 $np $((3 - np)) exact score "$W/cases.tsv" logistic:n=1000 -o "$W/ox"
  for k in reference higher_order empirical_mc knn write; do
    printf '  %-30s %8.3f s\n' "$k" "$(phase "exact/$k")"
  done
done

echo
echo "I5 at 50 evaluation records per class (4 models x 10 conditions x 100 classes):"
"$PB" -v 0 synth --config "$HERE/class50.ini" --no-summary -o "$W/c50.h5"
: > "$W/phases"
for i in $(seq "$REPEAT"); do
  OMP_NUM_THREADS=1 "$PB" -v 0 bounds --i5 all --no-matched "$W/c50.h5" -o "$W/o50" > /dev/null
  timings "$W/o50" >> "$W/phases"
done
v=$(phase bounds/i5_pass)
echo "$v" | awk '{printf "  I5 + variable-support pass %.3f s for 4000 classes: %.1f us per class (1 thread)\n", $1, $1 / 4000 * 1e6}'
if [ -n "$BI5" ] && [ -x "$BI5" ]; then
  echo
  "$BI5"
fi

# policy at real class sizes (issue 18): per-class cost of the exact kernel at
# 25-1,000 records per side (targets: n = 150 <= 5 ms, n = 1,000 <= 0.5 s per
# class) beside the bounds engine's exact I5 H program on the same classes,
# then policy --all on the CIFAR-shaped store (10 classes x 500 evaluation
# records, 4 models x 20 conditions; target <= 10 s at 1 rank x 2 threads) and
# on the ImageNet-shaped one (1,000 classes x 25, 4 models x 10 conditions)
echo
if [ -n "$BPOL" ] && [ -x "$BPOL" ]; then
  "$BPOL"
fi
"$PB" -v 0 synth --config "$HERE/../../inputs/cifar.ini" --no-summary -o "$W/cifar.h5"
"$PB" -v 0 synth --config "$HERE/../../inputs/imagenet.ini" --no-summary -o "$W/imagenet.h5"
for shape in cifar imagenet; do
  : > "$W/phases"
  if [ $shape = cifar ]; then
    run "policy --all (CIFAR-shaped, 80 cells)" 400000 1 2 policy --all "$W/cifar.h5" -o "$W/opc"
  else
    run "policy --all (ImageNet-shaped, 40 cells)" 1000000 1 2 policy --all "$W/imagenet.h5" -o "$W/opi"
  fi
  printf '  policy %-8s compute %8.3f s\n' "$shape" "$(phase policy/compute)"
done
# verify at real class sizes: every class of the CIFAR-shaped store (500
# records per side) by exact integer programs, against the bounds engine, and
# with --policies also against the policy engine
run "verify (CIFAR-shaped, LP per class)" 400000 1 2 verify "$W/cifar.h5" -o "$W/ovc"
run "verify --policies (CIFAR-shaped)" 400000 1 2 verify --policies "$W/cifar.h5" -o "$W/ovcp"

# ingest: a 10,000,000-row CSV exported from an ImageNet-shaped store (4 models
# x 50 conditions x 50,000 images; target >= 1 M rows/s), and the export
{
  sed -e '/^  /d' -e '/^conditions = /d' "$HERE/../../inputs/imagenet.ini"
  printf 'conditions = c1:0.6'
  for i in $(seq 2 49); do printf ',\n  c%d:0.%d' "$i" $((40 + i % 40)); done
  printf '\n'
} > "$W/in10m.ini"
"$PB" -v 0 synth --config "$W/in10m.ini" --no-summary -o "$W/in10m.h5"
run "export (10 M rows)" 10000000 1 1 export "$W/in10m.h5" -o "$W/in10m.csv"
rm -f "$W/in10m.h5"
echo "  CSV: $(wc -l < "$W/in10m.csv") lines, $(du -m "$W/in10m.csv" | cut -f1) MB"
run "ingest (10 M rows)" 10000000 1 1 ingest "$W/in10m.csv" -o "$W/in10m.h5"
/usr/bin/time -f '%U %S %e' -o "$W/one" "$PB" -v 0 ingest "$W/in10m.csv" -o "$W/in10m.h5"
awk '{printf "  ingest CPU: %.2f s user + %.2f s system for 10 M rows = %.2f M rows per CPU-second (wall %.2f s)\n",
  $1, $2, 10 / ($1 + $2), $3}' "$W/one"
rm -f "$W/in10m.csv" "$W/in10m.h5"

# worlds (seed 002): exact enumeration of all 9 world x level settings (1,842,687
# latent states; target <= 0.5 s, measured inside the process), case sampling
echo
: > "$W/wphases"
for i in $(seq "$REPEAT"); do
  "$PB" -v 1 world info --world all --level all 2>> "$W/wphases" > /dev/null
done
v=$(sed -n 's/.*exact enumeration of 9 world x level settings \([0-9.]*\) s.*/\1/p' "$W/wphases" | median)
echo "$v" | awk '{printf "world enumeration (9 settings, 1,842,687 states): %.3f s (target <= 0.5 s), %.1f M states/s\n", $1, 1.842687 / $1}'
run "world info --world all --level all" 1842687 1 1 world info --world all --level all
run "world sample credit 1,000,000 cases" 1000000 1 2 world sample --world credit --level medium -n 1000000 -o "$W/cases.tsv"
run "world sample credit 2 ranks" 1000000 2 1 world sample --world credit --level medium -n 1000000 -o "$W/cases.tsv"

# last: the default pipeline's time and where it goes (medians of each stage's
# wall time in REPORT.md; the rest is start-up, the store's checks and the report)
echo
echo "$pipeline_wall" | awk '{printf "pipeline (inputs/run.ini, 1 x 2): %.2f s in all;", $1}'
sep=" "
for st in $(awk '$1 ~ /^run\// && !seen[$1]++ {print substr($1, 5)}' "$W/pipeline_phases"); do
  printf '%s%s %.2f s' "$sep" "$st" "$(awk -v k="run/$st" '$1 == k {print $2}' "$W/pipeline_phases" | median)"
  sep=", "
done
echo

