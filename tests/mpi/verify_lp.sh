# verify at real class sizes (issue 18): on a store with 75 evaluation records
# per class (a cut of inputs/cifar.ini), every class is checked by the exact
# integer programs, against the bounds and the policy engines, and the
# coverage is stated first on stderr and in REPORT.md; outputs identical at
# 1-3 ranks x 1-2 threads; a wrong engine value fails and names the class;
# a run that checks nothing fails unless --allow-empty.
. "$TOP_SRCDIR/tests/mpi/common.sh"

sed -e '/^resnet-50 \|^vit-b16 /d' -e '/^  /d' -e 's/^conditions = .*/conditions = noise-2:0.7, fog-4:0.6/' \
  -e 's/^images_per_class = .*/images_per_class = 150/;s/^dev_per_class = .*/dev_per_class = 75/' \
  "$TOP_SRCDIR/inputs/cifar.ini" > "$WORK/c75.ini"
pb 1 1 synth --config "$WORK/c75.ini" --no-summary -o "$WORK/c75.h5"
OMP_NUM_THREADS=1 "$MPIRUN" --oversubscribe -np 1 "$PAIRBOUND" -v 1 verify --policies "$WORK/c75.h5" -o "$WORK/o11" \
  2> "$WORK/err.txt"
check "75 per class: verify --policies passes" test $? -eq 0
check "75 per class: coverage is the first line on stderr" \
  sh -c "head -1 '$WORK/err.txt' | grep -qF 'coverage: 40 classes in 4 cells: 0 enumerated (<= 8 records per side), 40 by exact LP (<= 1000), 0 not checked'"
tsv="$WORK/o11/report/verify.tsv"
col() { head -1 "$tsv" | tr '\t' '\n' | grep -nx "$1" | cut -d: -f1; }
check "75 per class: every class of every cell checked by LP" awk -F'\t' -v a="$(col classes)" -v b="$(col classes_lp)" \
  -v s="$(col classes_skipped)" 'NR > 1 { n++; if ($a != 10 || $b != 10 || $s != 0) bad = 1 } END { exit bad || n != 4 }' "$tsv"
check "75 per class: LP agrees with both engines and the closed forms" awk -F'\t' -v x="$(col lp_res_H_I5)" \
  -v y="$(col lp_pol_res_I5)" -v z="$(col closed_form_res_I0_Ik)" \
  'NR > 1 { if (!($x == 0 && $y == 0 && $z == 0)) bad = 1 } END { exit bad }' "$tsv"
check "75 per class: REPORT.md states coverage" \
  grep -qF "**coverage**: 40 classes: 0 enumerated (at most 8 records per side), 40 checked by exact integer programs" \
  "$WORK/o11/report/REPORT.md"
ranks_identical "verify.tsv REPORT.md" verify --policies "$WORK/c75.h5"

# a wrong policy-engine value in one LP-checked class fails the run and names it
PAIRBOUND_VERIFY_TEST_CORRUPT=0,3 "$PAIRBOUND" -v 0 verify --policies "$WORK/c75.h5" -o "$WORK/bad" 2> "$WORK/err2.txt"
check "corrupted engine value: exit 1" test $? -eq 1
check "corrupted engine value: names cell, class and target" \
  grep -qF "class 3: D+_01 at I5, lambda 0.5: exact LP and policy engine differ" "$WORK/err2.txt"

# checking nothing is not a success
"$PAIRBOUND" -v 0 verify --lp-max 0 "$WORK/c75.h5" -o "$WORK/none" 2> "$WORK/err3.txt"
check "--lp-max 0: nothing checked, exit 1" test $? -eq 1
check "--lp-max 0: says so" grep -qF "verify checked no class: 40 classes in 4 covered cells" "$WORK/err3.txt"
check "--lp-max 0: outputs still written" test -s "$WORK/none/report/REPORT.md"
"$PAIRBOUND" -v 0 verify --lp-max 0 --allow-empty "$WORK/c75.h5" -o "$WORK/none2"
check "--allow-empty: exit 0" test $? -eq 0
"$PAIRBOUND" -v 0 verify --lp-max 2001 "$WORK/c75.h5" -o "$WORK/x" 2> /dev/null
check "--lp-max above 2000: usage error" test $? -eq 2
finish
