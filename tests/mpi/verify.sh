# verify: passes on the small synthetic store and on a store of many tiny
# random cells (ties, threshold equality, zero overlap, classes without a
# correct record, unequal class sizes); identical outputs for 1, 2, 3 ranks;
# a corrupted bound in a bounds results file makes it fail, naming the cell;
# --policies verifies the policy engine the same way (a wrong engine value,
# injected by a test-only hook, is caught and named).
. "$TOP_SRCDIR/tests/mpi/common.sh"
: "${H5POKE:?}"

# ---------------------------------------------------------------- small synth
pb 1 1 synth --scale small --no-summary -o "$WORK/s.h5"
pb 1 1 verify "$WORK/s.h5" -o "$WORK/v11"
check "small synth: verify passes" test $? -eq 0
for run in "2 1" "3 2"; do
  set -- $run
  pb "$1" "$2" verify "$WORK/s.h5" -o "$WORK/v$1$2"
  check "small synth: verify.tsv identical at $1 ranks x $2 threads" cmp -s "$WORK/v11/report/verify.tsv" "$WORK/v$1$2/report/verify.tsv"
  check "small synth: REPORT.md identical at $1 ranks x $2 threads" cmp -s "$WORK/v11/report/REPORT.md" "$WORK/v$1$2/report/REPORT.md"
  check "small synth: results.h5 identical at $1 ranks x $2 threads" same_h5 "$WORK/v11/results.h5" "$WORK/v$1$2/results.h5"
done
check "small synth: one row per cell" test "$(($(wc -l < "$WORK/v11/report/verify.tsv") - 1))" -eq 85
check "small synth: verdict in REPORT.md" grep -qF "**Verdict: passed**" "$WORK/v11/report/REPORT.md"
small_panel="--panel-cells Syn=3 --panel-cells ES=3 --panel-cells Diverse=3 --panel-cells Syn-B=3"
pb 2 1 verify "$WORK/s.h5" -o "$WORK/vp" --cells panel $small_panel
check "--cells panel: the 12 panel cells" test "$(($(wc -l < "$WORK/vp/report/verify.tsv") - 1))" -eq 12
pb 1 1 verify "$WORK/s.h5" -o "$WORK/vs" --cells sample --sample 2 --sources Syn,ES
check "--cells sample --sample 2 --sources Syn,ES: 4 rows" test "$(($(wc -l < "$WORK/vs/report/verify.tsv") - 1))" -eq 4
check "--sources: only the named sources" test "$(cut -f2 "$WORK/vs/report/verify.tsv" | sort -u | tr '\n' ' ')" = "ES Syn source "

# ------------------------------------------------------- tiny random cells
# Source S: 9 classes of sizes 1,2,3,4,1,2,3,4,5 (products too large for the
# Cartesian check); source T: 5 classes of sizes 3,1,2,3,2 (Cartesian product
# of 144 bijections per cell).  Class 0 of each source is never predicted
# correctly; model m4 under c3 is always wrong after perturbation (K = 0).
# S values sit on a grid with 0.5 = tau (ties, threshold equality); M values
# such as 0.3 are not dyadic, so dM_k sums round.
awk 'BEGIN {
  srand(20260908)
  print "model,group,source,condition,image,label,split,pred,smax,ptrue"
  split("1 2 3 4 1 2 3 4 5", szS, " "); split("3 1 2 3 2", szT, " ")
  split("0.3 0.5 0.5 0.7 0.9 0.55 1", grid, " "); split("0.1 0.5 0.3 0.9", frac, " ")
  nsrc = 2; src[1] = "S"; src[2] = "T"; ncls[1] = 9; ncls[2] = 5
  for (s = 1; s <= nsrc; s++)
    for (m = 1; m <= 4; m++)
      for (c = 0; c <= 3; c++) {
        cond = c == 0 ? "clean" : "c" c
        img = 0
        for (y = 0; y < ncls[s]; y++) {
          n = s == 1 ? szS[y + 1] : szT[y + 1]
          for (i = 0; i < n; i++) {
            img++
            pc = 0.25 + 0.15 * m - 0.1 * c
            if (y == 0 || (m == 4 && c == 3)) pc = 0
            if (rand() < pc) pred = y; else pred = (y + 1 + int(rand() * 2)) % ncls[s]
            if (pred == y && y == 0) pred = 1
            sm = grid[1 + int(rand() * 7)]
            pt = pred == y ? sm : sm * frac[1 + int(rand() * 4)]
            printf "m%d,g%d,%s,%s,i%d,%d,eval,%d,%s,%.6g\n", m, (m + 1) % 2 + 1, src[s], cond, img, y, pred, sm, pt
          }
        }
      }
}' > "$WORK/tiny.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/tiny.csv" -o "$WORK/tiny.h5"
check "tiny store ingested" test -e "$WORK/tiny.h5"
pb 1 1 verify "$WORK/tiny.h5" --tau 0.5 -o "$WORK/t11"
check "tiny cells: verify passes" test $? -eq 0
for run in "2 2" "3 1"; do
  set -- $run
  pb "$1" "$2" verify "$WORK/tiny.h5" --tau 0.5 -o "$WORK/t$1$2"
  check "tiny cells: verify.tsv identical at $1 ranks x $2 threads" cmp -s "$WORK/t11/report/verify.tsv" "$WORK/t$1$2/report/verify.tsv"
  check "tiny cells: results.h5 identical at $1 ranks x $2 threads" same_h5 "$WORK/t11/results.h5" "$WORK/t$1$2/results.h5"
done
tsv="$WORK/t11/report/verify.tsv"
col() { head -1 "$tsv" | tr '\t' '\n' | grep -nx "$1" | cut -d: -f1; }
check "tiny cells: 24 cells" test "$(($(wc -l < "$tsv") - 1))" -eq 24
check "tiny cells: every T cell brute-forced over its 144-combination Cartesian product" \
  awk -F'\t' -v c="$(col cartesian_combinations)" 'NR > 1 && $2 == "T" && $c != 144 { bad = 1 } NR > 1 && $2 == "S" && $c != 0 { bad = 1 } END { exit bad }' "$tsv"
check "tiny cells: zero-overlap cells have undefined dM_k at Ik" \
  awk -F'\t' -v k="$(col dMk_Ik_lo)" '$1 == "m4" && $3 == "c3" { n++; if ($k != "nan") bad = 1 } END { exit bad || n != 2 }' "$tsv"
check "tiny cells: some class has strictly narrower five-state H" \
  awk -F'\t' -v c="$(col H_I5_narrower_classes)" 'NR > 1 { t += $c } END { exit !(t > 0) }' "$tsv"
check "tiny cells: no failures" awk -F'\t' 'NR > 1 && $NF != "-" { bad = 1 } END { exit bad }' "$tsv"
pb 1 1 verify "$WORK/tiny.h5" --tau 0.5 --max-class 4 --lp-max 0 -o "$WORK/tmax"
check "--max-class 4: passes" test $? -eq 0
check "--max-class 4: the size-5 class of every S cell is skipped" \
  awk -F'\t' -v c="$(col classes_skipped)" -v r="$(col res_H_I0)" 'NR > 1 && $2 == "S" { if ($c != 1 || $r != "nan") bad = 1 } END { exit bad }' "$WORK/tmax/report/verify.tsv"
check "--max-class 4: REPORT.md counts skipped classes" grep -qF "skipped as larger than 4 records per side 12" "$WORK/tmax/report/REPORT.md"

# ------------------------------------------------ a corrupted results file
pb 2 1 bounds "$WORK/tiny.h5" --tau 0.5 --i5 all --no-matched -o "$WORK/b"
pb 2 1 verify "$WORK/tiny.h5" --tau 0.5 --against "$WORK/b/results.h5" -o "$WORK/a0"
check "--against an intact bounds file: passes" test $? -eq 0
cp "$WORK/b/results.h5" "$WORK/bad.h5"
cell=13 # global cell index: row 15 of verify.tsv
name=$(awk -F'\t' -v r=$((cell + 2)) 'NR == r { print $1 "/" $2 "/" $3 }' "$tsv")
old=$("$H5POKE" "$WORK/bad.h5" /bounds/cells/H_I5_hi $cell 0.75)
check "corruption helper changed a value" test "$old" != 0.75
pb 2 1 verify "$WORK/tiny.h5" --tau 0.5 --against "$WORK/bad.h5" -o "$WORK/a1" 2> "$WORK/err.txt"
check "--against a corrupted file: exit status 1" test $? -eq 1
check "--against a corrupted file: message names the cell" grep -qF "cell $name: H at I5" "$WORK/err.txt"
check "--against a corrupted file: outputs still written" test -e "$WORK/a1/results.h5" -a -e "$WORK/a1/report/verify.tsv"
check "--against a corrupted file: only that cell fails" \
  awk -F'\t' -v r=$((cell + 2)) 'NR > 1 && (($NF != "-") != (NR == r)) { bad = 1 } END { exit bad }' "$WORK/a1/report/verify.tsv"
check "--against a corrupted file: REPORT.md says FAILED" grep -qF "**Verdict: FAILED**" "$WORK/a1/report/REPORT.md"
# a bounds file made for the panel only still verifies what it has
pb 1 1 bounds "$WORK/s.h5" -o "$WORK/bs" $small_panel
pb 1 2 verify "$WORK/s.h5" --against "$WORK/bs/results.h5" -o "$WORK/as"
check "--against a panel-only I5 file: passes" test $? -eq 0
check "--against a panel-only I5 file: counts cells without I5" grep -q "no I5 values .*: 73$" "$WORK/as/report/REPORT.md"
"$PAIRBOUND" -v 0 verify "$WORK/tiny.h5" --tau 0.6 --against "$WORK/b/results.h5" -o "$WORK/a2" 2> "$WORK/err2.txt"
check "--against with another threshold: exit 1, says so" grep -qF "results file threshold 0.5 differs" "$WORK/err2.txt"

# ------------------------------------------------------ rejection policies
# --policies: the policy engine against enumeration, per class and per cell,
# on both stores; identical outputs for 1, 2, 3 ranks; a wrong engine value
# (test-only hook PAIRBOUND_VERIFY_TEST_CORRUPT=CELL[,LABEL]) is caught.
pb 1 1 verify "$WORK/s.h5" --policies -o "$WORK/p11"
check "small synth --policies: passes" test $? -eq 0
for run in "2 1" "3 2"; do
  set -- $run
  pb "$1" "$2" verify "$WORK/s.h5" --policies -o "$WORK/p$1$2"
  check "small synth --policies: verify.tsv identical at $1 ranks x $2 threads" cmp -s "$WORK/p11/report/verify.tsv" "$WORK/p$1$2/report/verify.tsv"
  check "small synth --policies: REPORT.md identical at $1 ranks x $2 threads" cmp -s "$WORK/p11/report/REPORT.md" "$WORK/p$1$2/report/REPORT.md"
  check "small synth --policies: results.h5 identical at $1 ranks x $2 threads" same_h5 "$WORK/p11/results.h5" "$WORK/p$1$2/results.h5"
done
# the class memo (docs/verify.md) changes no byte: off, and 1 rank x 1 thread vs 2
PAIRBOUND_VERIFY_NO_MEMO=1 pb 1 2 verify "$WORK/s.h5" --policies -o "$WORK/p_nomemo"
check "small synth --policies: verify.tsv identical without the class memo" cmp -s "$WORK/p11/report/verify.tsv" "$WORK/p_nomemo/report/verify.tsv"
check "small synth --policies: results.h5 identical without the class memo" same_h5 "$WORK/p11/results.h5" "$WORK/p_nomemo/results.h5"
OMP_NUM_THREADS=1 "$PAIRBOUND" -v 1 verify "$WORK/s.h5" --policies -o "$WORK/p_memo" 2> "$WORK/pmemo.txt"
check "small synth --policies: the memo reuses repeated classes" \
  grep -qE "class policy checks: [1-9][0-9]* canonical forms checked, [1-9][0-9]* repeats reused" "$WORK/pmemo.txt"
ptsv="$WORK/p11/report/verify.tsv"
pcol() { head -1 "$1" | tr '\t' '\n' | grep -nx "$2" | cut -d: -f1; }
check "small synth --policies: every class's policy counts enumerated" \
  awk -F'\t' -v a="$(pcol "$ptsv" pol_classes)" -v b="$(pcol "$ptsv" classes_enumerated)" 'NR > 1 && $a != $b { bad = 1 } END { exit bad }' "$ptsv"
check "small synth --policies: REPORT.md has the Policy section, Lemma 1 and Corollary 1 counts" \
  grep -q "^- Lemma 1 checks: [1-9][0-9]*, failed 0; Corollary 1 checks: [1-9][0-9]*, failed 0$" "$WORK/p11/report/REPORT.md"
check "without --policies: no policy columns computed" \
  awk -F'\t' -v a="$(pcol "$WORK/v11/report/verify.tsv" pol_res_Dplus_I5)" 'NR > 1 && $a != "nan" { bad = 1 } END { exit bad }' "$WORK/v11/report/verify.tsv"
ptaus="--tau 0.5 --policy-taus 0.3,0.5,0.55,0.7,0.9 --lambdas 0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1"
pb 1 1 verify "$WORK/tiny.h5" $ptaus -o "$WORK/q11"
check "tiny cells --policies (whole grid): passes" test $? -eq 0
for run in "2 2" "3 1"; do
  set -- $run
  pb "$1" "$2" verify "$WORK/tiny.h5" $ptaus -o "$WORK/q$1$2"
  check "tiny cells --policies: verify.tsv identical at $1 ranks x $2 threads" cmp -s "$WORK/q11/report/verify.tsv" "$WORK/q$1$2/report/verify.tsv"
  check "tiny cells --policies: results.h5 identical at $1 ranks x $2 threads" same_h5 "$WORK/q11/results.h5" "$WORK/q$1$2/results.h5"
done
PAIRBOUND_VERIFY_NO_MEMO=1 pb 1 1 verify "$WORK/tiny.h5" $ptaus -o "$WORK/q_nomemo"
check "tiny cells --policies: verify.tsv identical without the class memo" cmp -s "$WORK/q11/report/verify.tsv" "$WORK/q_nomemo/report/verify.tsv"
check "tiny cells --policies: results.h5 identical without the class memo" same_h5 "$WORK/q11/results.h5" "$WORK/q_nomemo/results.h5"
qtsv="$WORK/q11/report/verify.tsv"
check "tiny cells --policies: every T cell brute-forced (policy Cartesian check), residual <= 1e-12" \
  awk -F'\t' -v c="$(pcol "$qtsv" pol_cartesian_res)" 'NR > 1 && $2 == "T" && !($c <= 1e-12) { bad = 1 } END { exit bad }' "$qtsv"
check "tiny cells --policies: some D+ strictly below the separate-interval gap" \
  awk -F'\t' -v c="$(pcol "$qtsv" pol_shared_strict)" 'NR > 1 { t += $c } END { exit !(t > 0) }' "$qtsv"
check "tiny cells --policies: no failures" awk -F'\t' 'NR > 1 && $NF != "-" { bad = 1 } END { exit bad }' "$qtsv"
pcell=13
pname=$(awk -F'\t' -v r=$((pcell + 2)) 'NR == r { print $1 "/" $2 "/" $3 }' "$qtsv")
PAIRBOUND_VERIFY_TEST_CORRUPT=$pcell "$PAIRBOUND" -v 0 verify "$WORK/tiny.h5" $ptaus -o "$WORK/q_bad" 2> "$WORK/perr.txt"
check "wrong policy engine value (cell level): exit status 1" test $? -eq 1
check "wrong policy engine value (cell level): message names the cell and D+" grep -qF "cell $pname: policy D+_jl at I5" "$WORK/perr.txt"
check "wrong policy engine value (cell level): only that cell fails" \
  awk -F'\t' -v r=$((pcell + 2)) 'NR > 1 && (($NF != "-") != (NR == r)) { bad = 1 } END { exit bad }' "$WORK/q_bad/report/verify.tsv"
PAIRBOUND_VERIFY_TEST_CORRUPT=$pcell,2 "$PAIRBOUND" -v 0 verify "$WORK/tiny.h5" $ptaus -o "$WORK/q_bad2" 2> "$WORK/perr2.txt"
check "wrong policy engine value (one class): exit status 1" test $? -eq 1
check "wrong policy engine value (one class): message names the cell and class" grep -qF "cell $pname, class 2: policy D+_jl" "$WORK/perr2.txt"
check "wrong policy engine value: REPORT.md says FAILED" grep -qF "**Verdict: FAILED**" "$WORK/q_bad2/report/REPORT.md"
"$PAIRBOUND" verify "$WORK/tiny.h5" --tau 0.5 --policies -o "$WORK/u" 2> "$WORK/perr3.txt"
check "--policies on a store without development images: exit 1, asks for --policy-taus" grep -qF "give --policy-taus" "$WORK/perr3.txt"
"$PAIRBOUND" verify "$WORK/s.h5" -o "$WORK/u" --lambdas 0.5,0.5 2> "$WORK/perr4.txt"
check "--lambdas with a repeated value: usage error" test $? -eq 2

# ------------------------------------------------------------ usage errors
"$PAIRBOUND" verify "$WORK/s.h5" -o "$WORK/u" --max-class 11 2> "$WORK/err3.txt"
check "--max-class 11: usage error" test $? -eq 2
"$PAIRBOUND" verify "$WORK/s.h5" -o "$WORK/u" --sources Nope 2> "$WORK/err4.txt"
check "--sources with an unknown source: exit 1" grep -qF "no source 'Nope'" "$WORK/err4.txt"
# ------------------------------------- cells without evaluation records (issue 17 item 2)
"$PAIRBOUND" -v 0 export "$WORK/s.h5" -o "$WORK/s.csv"
# one source without evaluation images (the others keep theirs): its cells have none
awk -F, 'BEGIN { OFS = "," } $3 == "Syn" && $7 == "eval" { $7 = "dev" } { print }' "$WORK/s.csv" > "$WORK/d.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/d.csv" -o "$WORK/d.h5"
"$PAIRBOUND" -v 0 verify "$WORK/d.h5" -o "$WORK/d_out" 2> "$WORK/derr.txt"
dst=$?
check "no evaluation records: exit 1, no crash (was SIGSEGV)" test $dst -eq 1
check "no evaluation records: the reason names a cell and n = 0" \
  grep -qE "cell [^ ]+/Syn/[^ ]+: no evaluation records \(n = 0\)" "$WORK/derr.txt"
# no evaluation image at all: the store is refused as a whole, saying what it lacks
sed 's/,eval,/,dev,/' "$WORK/s.csv" > "$WORK/d2.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/d2.csv" -o "$WORK/d2.h5"
"$PAIRBOUND" -v 0 verify "$WORK/d2.h5" -o "$WORK/d2_out" 2> "$WORK/d2err.txt"
check "no evaluation image in the store: exit 1" test $? -eq 1
check "no evaluation image in the store: says so, naming the store" \
  grep -qF "d2.h5: verify needs evaluation images, but every image of the store is in the development split" "$WORK/d2err.txt"
finish
