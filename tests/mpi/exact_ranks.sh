# exact score: byte-identical reports and identical results.h5 for 1, 2, 3 ranks
# and 1, 2 threads (reference blocks spread over ranks); predictions files
# against the built-in predictors; errors name file and line and leave no results.
. "$TOP_SRCDIR/tests/mpi/common.sh"

pb 1 1 world sample --world credit --level high -n 300 --first 1000 --seed 2032 -o "$WORK/cases.tsv"
small="--reference 70000 --calibration 400 --resamples 3 --sizes 100,300"
pb 1 1 exact score "$WORK/cases.tsv" logistic:n=500 $small -o "$WORK/o11"
reports="exact_scores.tsv exact_groups.tsv exact_mc.tsv exact_ho.tsv exact_knn.tsv exact_fig_knn.tsv exact.md"
ranks_identical "$reports" exact score "$WORK/cases.tsv" logistic:n=500 $small

val() { awk -F'\t' -v k="$2" '$1 == k { print $2 }' "$1/report/exact_scores.tsv"; }
# p* as a predictions file scores like the built-in pstar on the cases; its MC is exactly zero
awk -F'\t' '/^[0-9]/ { print $NF }' "$WORK/cases.tsv" > "$WORK/pstar.txt"
pb 1 1 exact score "$WORK/cases.tsv" "$WORK/pstar.txt" $small -o "$WORK/f"
pb 2 1 exact score "$WORK/cases.tsv" pstar $small -o "$WORK/p"
for k in expected_accuracy bayes_accuracy_cases realised_accuracy kl_nats cases_mc_pstar cases_mc_labels; do
  check "predictions file = pstar: $k" test "$(val "$WORK/f" $k)" = "$(val "$WORK/p" $k)"
done
check "pstar: population MC exactly 0" test "$(val "$WORK/p" reference_mc)" = 0
# a model's replies as the prompts ask for them (world prompts): "probability_positive: X", with or without the space
awk 'NR % 2 { print "probability_positive: " $1; next } { print "probability_positive:" $1 }' "$WORK/pstar.txt" \
  > "$WORK/replies.txt"
pb 1 1 exact score "$WORK/cases.tsv" "$WORK/replies.txt" $small -o "$WORK/r"
check "replies = predictions file" cmp -s "$WORK/r/report/exact_scores.tsv" "$WORK/f/report/exact_scores.tsv"
# end to end: the prompt set of the cases (world prompts), answered by a model that reads each prompt's test memo
# back with h (world decode) and replies with the exact p* of what it read, one line per prompt in their order,
# scores exactly as the p* predictions file
pb 1 1 world prompts "$WORK/cases.tsv" --shots 50 -o "$WORK/prompts.jsonl"
sed 's/^{"case":\([0-9]*\),"world":"\([a-z]*\)","level":"\([a-z]*\)",.*,"memo":\(".*"\),"user":".*"}$/{"case":\1,"world":"\2","level":"\3","memo":\4}/' \
  "$WORK/prompts.jsonl" > "$WORK/asked.memos"
pb 1 1 world decode "$WORK/asked.memos" -o "$WORK/asked.tsv"
awk -F'\t' '/^[0-9]/ { print "probability_positive: " $NF }' "$WORK/asked.tsv" > "$WORK/model.txt"
check "prompts -> model replies: one reply per case" test "$(wc -l < "$WORK/model.txt")" -eq 300
pb 1 1 exact score "$WORK/cases.tsv" "$WORK/model.txt" $small -o "$WORK/m"
check "prompts -> model replies -> exact score: the p* model scores as the p* predictions file" \
  cmp -s "$WORK/m/report/exact_scores.tsv" "$WORK/f/report/exact_scores.tsv"
# the seed's demonstration counts (A.2): 0, 10, 25 and 50, each set a prefix of the next
demos() { head -n 1 "$1" | sed 's/.*"demonstrations":\[//; s/\],"memo":.*//'; }
for k in 0 10 25; do pb 1 1 world prompts "$WORK/cases.tsv" --shots $k -o "$WORK/prompts$k.jsonl"; done
check "prompts: 0 demonstrations" test -z "$(demos "$WORK/prompts0.jsonl")"
for kk in "10 25" "25 50"; do
  set -- $kk
  small_set=$(demos "$WORK/prompts$1.jsonl") large_set=$(demos "$WORK/prompts$2.jsonl")
  [ "$2" = 50 ] && large_set=$(demos "$WORK/prompts.jsonl")
  check "prompts: $1 demonstrations, rows 0 .. $1 - 1" test "$(printf '%s' "$small_set" | grep -o '"case":[0-9]*' | \
    tr '\n' ' ')" = "$(seq 0 $(($1 - 1)) | sed 's/^/"case":/' | tr '\n' ' ')"
  case "$large_set" in "$small_set",*) prefix=1 ;; *) prefix=0 ;; esac
  check "prompts: $1 demonstrations are a prefix of $2, byte for byte" test "$prefix" = 1
done
check "pstar: expected accuracy = Bayes accuracy" test "$(val "$WORK/p" expected_accuracy)" = "$(val "$WORK/p" bayes_accuracy_cases)"
check "pstar: empirical MC positive at every size" awk -F'\t' 'NR > 1 && !($2 > 0) { bad = 1 } END { exit bad }' \
  "$WORK/p/report/exact_mc.tsv"
check "predictions file: no population reference" test "$(val "$WORK/f" reference_mc)" = nan
# Eq. 8: |E_HO - delta_k| <= E_k at every k
check "higher-order: |E_HO - delta_k| <= E_k" awk -F'\t' 'NR > 1 { d = $2 - $5; if (d < 0) d = -d; if (d > $3 + 1e-12) bad = 1 }
  END { exit bad }' "$WORK/o11/report/exact_ho.tsv"
check "credit risk: 45 groups plus everyone" test "$(($(wc -l < "$WORK/o11/report/exact_groups.tsv") - 1))" -eq 46

# exact worlds: every world x level x predictor, identical at 1-3 ranks x 1-2 threads
wsmall="--worlds covert,credit --levels low,high --predictors pstar,prior,logistic:n=300 --cases 200 $small"
pb 1 1 exact worlds $wsmall -o "$WORK/w11"
for np in 2 3; do
  pb $np $((np - 1)) exact worlds $wsmall -o "$WORK/w$np"
  for f in exact_worlds.tsv exact_worlds_knn.tsv exact_worlds_mc.tsv exact_worlds_ho.tsv exact_fig_kl.tsv exact.md; do
    check "worlds: $f identical at $np ranks" cmp -s "$WORK/w11/report/$f" "$WORK/w$np/report/$f"
  done
  check "worlds: results.h5 identical at $np ranks" same_h5 "$WORK/w11/results.h5" "$WORK/w$np/results.h5"
done
# 2 worlds x 2 levels x 3 predictors, less logistic regression in covert transfer
check "worlds: 10 scored rows" test "$(($(wc -l < "$WORK/w11/report/exact_worlds.tsv") - 1))" -eq 10
check "worlds: covert Bayes errors 0.019 and 0.145 (closed form)" test \
  "$(awk -F'\t' '$1 == "covert" && $3 == "pstar" { printf "%.3f ", $5 }' "$WORK/w11/report/exact_worlds.tsv")" = "0.019 0.145 "
check "worlds: p* has expected accuracy = Bayes accuracy and zero reference MC" awk -F'\t' \
  '$3 == "pstar" && ($6 != $7 || $13 != 0) { bad = 1 } END { exit bad }' "$WORK/w11/report/exact_worlds.tsv"
# the kNN interval's lower end (C.3): R5 / (1 + 1/sqrt 5) by default (FeeBee's form, which the seed follows),
# R5 / (1 + sqrt(2/5)) with --knn-bound sqrt2; dv_upper is R5 itself, both averaged over the three seeds
knn_form() { # knn_form TSV C: every row's dv_lower * (1 + C) equals its dv_upper
  awk -F'\t' -v c="$2" 'NR > 1 { n++; d = $7 * (1 + c) - $8; if (d > 1e-12 || d < -1e-12) bad = 1 }
    END { exit bad || n == 0 }' "$1"
}
check "worlds: dv_lower = R5 / (1 + 1/sqrt 5)" knn_form "$WORK/w11/report/exact_worlds_knn.tsv" 0.44721359549995794
check "worlds: the report states the kNN bound" grep -qF "R5 / (1 + 1/sqrt(5)), the form of FeeBee" \
  "$WORK/w11/report/exact.md"
pb 1 1 exact worlds --worlds credit --levels high --predictors pstar --knn-bound sqrt2 $small -o "$WORK/wsq"
check "worlds --knn-bound sqrt2: dv_lower = R5 / (1 + sqrt(2/5))" knn_form "$WORK/wsq/report/exact_worlds_knn.tsv" \
  0.63245553203367588
# the same cell scored alone from a world sample file gives the same numbers
pb 1 1 world sample --world credit --level high -n 200 --first 1000 --seed 2032 -o "$WORK/ch.tsv"
pb 1 1 exact score "$WORK/ch.tsv" logistic:n=300 $small -o "$WORK/ch"
check "worlds = score on the sampled file (KL, reference MC)" test \
  "$(awk -F'\t' '$1 == "credit" && $2 == "high" && $3 == "logistic:n=300" { print $10, $13 }' "$WORK/w11/report/exact_worlds.tsv")" \
  = "$(val "$WORK/ch" kl_nats) $(val "$WORK/ch" reference_mc)"
# run: an [exact] section naming worlds joins the exact stage to the pipeline
printf '[run]\nsynth = none\nstore = %s\noutput = %s\nstages = exact\n[exact]\nworlds = credit\nlevels = high\npredictors = pstar\nreference = 20000\nsizes = 100\nresamples = 2\n' \
  "$WORK/none.h5" "$WORK/run" > "$WORK/run.ini"
pb 1 1 run "$WORK/run.ini" > "$WORK/run.out"
check "run: exact stage report" test -s "$WORK/run/exact/report/exact_worlds.tsv"
check "run: REPORT.md includes the exact section" grep -qF "pairbound exact worlds" "$WORK/run/REPORT.md"
# its summary lines and finding are read back from its TSVs: eps* and p*'s KL as the table has them
eps=$(awk -F'\t' 'NR == 2 { printf "%.3f", $5 }' "$WORK/run/exact/report/exact_worlds.tsv")
kl=$(awk -F'\t' 'NR == 2 { printf "%.4f", $10 }' "$WORK/run/exact/report/exact_worlds.tsv")
check "run: summary line of the exact stage" grep -qx "exact   exact Bayes error (high): credit $eps" "$WORK/run.out"
check "run: summary KL range read from the table" grep -qF "on 500 cases, lowest-highest over the settings: pstar $kl-$kl" \
  "$WORK/run.out"
above=$(awk -F'\t' 'NR > 1 && $4 == "all" { c = $5 > $9; d = $7 > $9 } END { print c + 0, d + 0 }' \
  "$WORK/run/exact/report/exact_worlds_knn.tsv")
check "run: summary counts the kNN intervals above eps*" grep -qF \
  "n = 100: interval above eps* in ${above% *} of 1 settings (Cover-Hart 1NN), ${above#* } of 1 (Devroye 5NN)" "$WORK/run.out"
check "run: REPORT.md's findings have the exact stage" grep -qF \
  "### Scores against exact class probabilities (seed 002)" "$WORK/run/REPORT.md"
# the exact seed is the run seed + PB_RUN_SEED_EXACT (-20258876): the default run seed gives 2032, the standalone
# default, so the run's exact stage equals `exact worlds` with the same options
pb 1 1 exact worlds --worlds credit --levels high --predictors pstar --reference 20000 --sizes 100 --resamples 2 \
  -o "$WORK/runalone"
check "run: default run seed = exact --seed 2032" cmp -s "$WORK/run/exact/report/exact_worlds.tsv" \
  "$WORK/runalone/report/exact_worlds.tsv"
sed 's/^\[run\]$/[run]\nseed = 20260909/' "$WORK/run.ini" > "$WORK/run2.ini"
sed 's/^\[exact\]$/[exact]\nseed = 2032/' "$WORK/run2.ini" > "$WORK/run3.ini"
sed -i "s|$WORK/run\$|$WORK/run2|" "$WORK/run2.ini"
sed -i "s|$WORK/run\$|$WORK/run3|" "$WORK/run3.ini"
pb 1 1 run "$WORK/run2.ini" > /dev/null
pb 1 1 run "$WORK/run3.ini" > /dev/null
differ() { ! cmp -s "$1" "$2"; }
check "run: another run seed draws other cases" differ "$WORK/run/exact/report/exact_worlds.tsv" \
  "$WORK/run2/exact/report/exact_worlds.tsv"
check "run: [exact] seed wins over the run seed" cmp -s "$WORK/run/exact/report/exact_worlds.tsv" \
  "$WORK/run3/exact/report/exact_worlds.tsv"
printf '[run]\nsynth = none\nstore = x.h5\noutput = %s\n[exact]\nworlds = credit\nsizes = 5\n' "$WORK/run4" > "$WORK/run4.ini"
"$PAIRBOUND" run "$WORK/run4.ini" > /dev/null 2> "$WORK/err.txt"
check "run: bad [exact] value is an error naming file and line" grep -qF "run4.ini:7: [exact] sizes must be" "$WORK/err.txt"
check "run: bad [exact] value writes nothing" test ! -e "$WORK/run4"
"$PAIRBOUND" exact worlds --worlds credit,mars -o "$WORK/e" 2> /dev/null
check "worlds: unknown world is a usage error" test $? -eq 2

# an unknown forecast (invalid reply) counts as incorrect and is left out of KL
awk 'NR == 2 { print "unknown"; next } { print }' "$WORK/pstar.txt" > "$WORK/unk.txt"
pb 1 1 exact score "$WORK/cases.tsv" "$WORK/unk.txt" $small -o "$WORK/u"
check "unknown forecast counted" test "$(val "$WORK/u" unknown_forecasts)" = 1
check "unknown forecast: expected accuracy below Bayes accuracy" awk -v a="$(val "$WORK/u" expected_accuracy)" \
  -v b="$(val "$WORK/u" bayes_accuracy_cases)" 'BEGIN { exit !(a < b) }'

# errors: file and line, exit 1, no results
fails() { # fails DESCRIPTION PATTERN ARGS...
  local d=$1 pat=$2; shift 2
  rm -rf "$WORK/e"
  "$PAIRBOUND" exact score "$@" $small -o "$WORK/e" 2> "$WORK/err.txt"
  check "$d: exit 1" test $? -eq 1
  check "$d: message" grep -qF -- "$pat" "$WORK/err.txt"
  check "$d: no results" test ! -e "$WORK/e/results.h5"
}
awk 'NR == 3 { print "1.5"; next } { print }' "$WORK/pstar.txt" > "$WORK/bad.txt"
fails "probability above 1" "bad.txt:3: expected one probability" "$WORK/cases.tsv" "$WORK/bad.txt"
head -n 5 "$WORK/pstar.txt" > "$WORK/short.txt"
fails "too few predictions" "5 predictions for 300 cases" "$WORK/cases.tsv" "$WORK/short.txt"
awk -F'\t' 'BEGIN { OFS = "\t" } /^1002\t/ { $NF = 0.5 } { print }' "$WORK/cases.tsv" > "$WORK/badp.tsv"
line=$(grep -n '^1002	' "$WORK/badp.tsv" | cut -d: -f1)
fails "p_star not the world's" "badp.tsv:$line: p_star 0.5 is not the world's exact p*" "$WORK/badp.tsv" pstar
fails "training rows overlap the cases" "overlap case 1000" "$WORK/cases.tsv" logistic:n=1001
pb 1 1 world sample --world covert --level low -n 20 -o "$WORK/cov.tsv"
fails "logistic in covert transfer" "not run in covert" "$WORK/cov.tsv" logistic:n=50
awk -F'\t' 'BEGIN { OFS = "\t" } /^[0-9]/ && $NF == 0 && !done { $(NF - 1) = 1; done = 1 } { print }' \
  "$WORK/cov.tsv" > "$WORK/covbad.tsv"
fails "label impossible at p* = 0" "label y = 1 is impossible at p* = 0" "$WORK/covbad.tsv" pstar
# numbers are decimals only (issue 47, item 11): strtod alone reads 0x3 as 3 and 0x1p-2 as 0.25
awk 'NR == 3 { print "0x1p-2"; next } { print }' "$WORK/pstar.txt" > "$WORK/hex.txt"
fails "hexadecimal prediction" "hex.txt:3: expected one probability" "$WORK/cases.tsv" "$WORK/hex.txt"
awk -F'\t' 'BEGIN { OFS = "\t" } /^1002\t/ { $2 = "0x" $2 } { print }' "$WORK/cases.tsv" > "$WORK/hexc.tsv"
fails "hexadecimal attribute" "hexc.tsv:$line: expected a case index" "$WORK/hexc.tsv" pstar
sed 's/^# residual_scale 1$/# residual_scale 0x1p0/' "$WORK/cases.tsv" > "$WORK/hexs.tsv"
fails "hexadecimal residual scale" "hexs.tsv:4: bad value '0x1p0' for residual_scale" "$WORK/hexs.tsv" pstar
# the rows are the `# cases` N indices `# first` .. first + N - 1 (issue 47, item 13); `# cases 300` is line 8
sed '$d' "$WORK/cases.tsv" > "$WORK/fewer.tsv"
fails "a row fewer than # cases" "fewer.tsv:8: \`# cases 300\`, but the file has 299 rows" "$WORK/fewer.tsv" pstar
sed 's/^# cases 300$/# cases 299/' "$WORK/cases.tsv" > "$WORK/more.tsv"
fails "a row more than # cases" "more.tsv:309: more rows than the 299 cases of \`# cases 299\` (line 8)" \
  "$WORK/more.tsv" pstar
awk -F'\t' 'BEGIN { OFS = "\t" } /^1002\t/ { $1 = 1001 } { print }' "$WORK/cases.tsv" > "$WORK/dup.tsv"
fails "a case index twice" "dup.tsv:$line: case index 1001 again (first on line $((line - 1)))" "$WORK/dup.tsv" pstar
awk -F'\t' 'BEGIN { OFS = "\t" } /^1002\t/ { $1 = 1300 } { print }' "$WORK/cases.tsv" > "$WORK/range.tsv"
fails "a case index past the range" "range.tsv:$line: case index 1300 outside 1000 .. 1299" "$WORK/range.tsv" pstar
sed '/^# cases /d' "$WORK/cases.tsv" > "$WORK/nocount.tsv"
fails "no # cases line" "nocount.tsv:8: the header lacks" "$WORK/nocount.tsv" pstar
"$PAIRBOUND" exact score "$WORK/cases.tsv" pstar --sizes 5 -o "$WORK/e" 2> /dev/null
check "--sizes below 10: usage error" test $? -eq 2
finish
