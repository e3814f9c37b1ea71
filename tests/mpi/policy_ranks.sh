# policy: byte-identical reports and identical results.h5 for 1, 2, 3 ranks and
# 1, 2 threads; row counts and headers; a hand-worked cell through the CLI
# (--tau, --policy-taus, --lambdas on a store without development images).
. "$TOP_SRCDIR/tests/mpi/common.sh"

pb 1 1 synth --scale small --no-summary -o "$WORK/s.h5"
pb 1 1 policy "$WORK/s.h5" -o "$WORK/o11"
reports="policy_bounds.tsv policy_pairs.tsv policy_orderings.tsv policy_actions.tsv policy_selection.tsv
  policy_weights.tsv policy_figure5.tsv policy_checks.tsv policy_illustration.tsv policy.md"
ranks_identical "$reports" policy "$WORK/s.h5"
pb 2 1 policy --all "$WORK/s.h5" -o "$WORK/a2"
pb 1 2 policy --all "$WORK/s.h5" -o "$WORK/a1"
for f in $reports; do check "--all: $f identical at 1 and 2 ranks" cmp -s "$WORK/a1/report/$f" "$WORK/a2/report/$f"; done
# 85 cells in the small store's panel (= its full grid: 15 Syn + 20 ES + 30 Diverse + 20 Syn-B): 3 levels x 11 weights x 5 policies, x 4 comparators
check "policy_bounds.tsv: 165 rows per cell" test "$(($(wc -l < "$WORK/o11/report/policy_bounds.tsv") - 1))" -eq $((85 * 165))
check "policy_pairs.tsv: 660 rows per cell" test "$(($(wc -l < "$WORK/o11/report/policy_pairs.tsv") - 1))" -eq $((85 * 660))
want='model	source	condition	level	lambda	j	tau_j	J_lo	J_hi	H_lo	H_hi	L_lo	L_hi	J_upper_lemma1	regret	feasible_mean	realized_cost'
check "policy_bounds.tsv header" test "$(head -1 "$WORK/o11/report/policy_bounds.tsv")" = "$want"
want='model	source	condition	level	lambda	j	l	Dplus	separate_gap	certified	mixed_switch'
check "policy_pairs.tsv header" test "$(head -1 "$WORK/o11/report/policy_pairs.tsv")" = "$want"
# every row: J_lo <= feasible mean <= J_hi, realized cost inside, Lemma 1 = J_hi, regret >= 0
check "policy_bounds.tsv: means and observed costs inside, Lemma 1" awk -F'\t' 'NR > 1 {
  if (!($8 <= $16 + 1e-12 && $16 <= $9 + 1e-12 && $8 <= $17 + 1e-12 && $17 <= $9 + 1e-12)) bad = 1
  d = $14 - $9; if (d > 1e-12 || d < -1e-12) bad = 1; if ($15 < -1e-12) bad = 1 } END { exit bad }' \
  "$WORK/o11/report/policy_bounds.tsv"
check "policy_pairs.tsv: D+ <= separate gap; certified only when mixed and missed" awk -F'\t' 'NR > 1 {
  if ($8 > $9 + 1e-12) bad = 1; if ($10 == 1 && !($8 < -1e-12 && $9 >= -1e-12 && $11 == 1)) bad = 1 } END { exit bad }' \
  "$WORK/o11/report/policy_pairs.tsv"
check "checks: Corollary 1 violations 0" awk -F'\t' 'NR == 2 { exit !($3 == 0 && $4 == 0 && $2 <= 1e-10) }' \
  "$WORK/o11/report/policy_checks.tsv"

# Hand-worked cell (tests/unit/test_policy.c, cell A) through ingest and the CLI:
# tau0 .8, policies .7 and .6.  At Ik and I5, lambda .5: D+_01 = -.125 with separate
# gap 0 (certified, mixed switches); at I0 D+_01 = (1 - lambda)/4 = .125.
H=model,group,source,condition,image,label,split,pred,smax,ptrue
printf '%s\n' "$H" 'm1,g,S,clean,i1,0,eval,0,0.9,0.9' 'm1,g,S,clean,i2,0,eval,0,0.5,0.5' \
  'm1,g,S,clean,i3,1,eval,1,0.9,0.9' 'm1,g,S,clean,i4,1,eval,5,0.9,0.05' \
  'm1,g,S,fog,i1,0,eval,3,0.95,0.01' 'm1,g,S,fog,i2,0,eval,0,0.95,0.95' \
  'm1,g,S,fog,i3,1,eval,7,0.65,0.1' 'm1,g,S,fog,i4,1,eval,1,0.65,0.65' > "$WORK/e.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/e.csv" -o "$WORK/e.h5"
"$PAIRBOUND" policy "$WORK/e.h5" -o "$WORK/e0" 2> "$WORK/err.txt"
check "no development images: exit 1 without --tau" test $? -eq 1
check "no development images: message" grep -qF "no development threshold" "$WORK/err.txt"
check "no development images: no results" test ! -e "$WORK/e0/results.h5"
"$PAIRBOUND" -v 0 policy "$WORK/e.h5" --tau 0.8 --policy-taus 0.7,0.6 --lambdas 0.5 -o "$WORK/e1"
check "--tau --policy-taus: computed" test $? -eq 0
row() { awk -F'\t' -v lv="$1" -v j="$2" -v l="$3" '$4 == lv && $6 == j && $7 == l { print $8, $9, $10, $11 }' \
  "$WORK/e1/report/policy_pairs.tsv"; }
check "hand cell: Ik D+_01 = -.125, gap 0, certified, mixed" test "$(row Ik 0 1)" = "-0.125 0 1 1"
check "hand cell: I5 D+_01 = -.125, gap 0, certified, mixed" test "$(row I5 0 1)" = "-0.125 0 1 1"
check "hand cell: I0 D+_01 = .125, not certified" test "$(row I0 0 1)" = "0.125 0.25 0 1"
check "hand cell: I5 D+_10 = .125 < gap .25" test "$(row I5 1 0)" = "0.125 0.25 0 1"
"$PAIRBOUND" -v 0 policy "$WORK/e.h5" --tau 0.8 --lambdas 0.5,0.5 -o "$WORK/e2" 2> /dev/null
check "--lambdas with a repeated value: usage error" test $? -eq 2
finish
