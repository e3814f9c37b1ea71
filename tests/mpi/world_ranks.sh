# pairbound world: info values by name, CASES identical for 1-3 ranks x 1-2
# threads, p* in the file matching `info`, clean errors with no output left.
. "$TOP_SRCDIR/tests/mpi/common.sh"

# info: the covert-transfer Bayes errors are the exact rationals 1/52, 25/338,
# 49/338 (shortest round-trip text of the doubles, as awk prints them with %.17g)
for lv in low:1/52 medium:25/338 high:49/338; do
  l=${lv%%:*} q=${lv#*:}
  pb 1 1 world info --world covert --level "$l" > "$WORK/i.txt"
  want=$(awk "BEGIN { printf \"%.17g\", $q }")
  got=$(awk '$1 == "bayes_error" { printf "%.17g", $2 }' "$WORK/i.txt")
  cf=$(awk '$1 == "closed_form_bayes_error" { printf "%.17g", $2 }' "$WORK/i.txt")
  check "covert $l bayes_error = $q" test "$got" = "$want"
  check "covert $l closed form = $q" test "$cf" = "$want"
done
pb 1 1 world info --world credit --level low > "$WORK/c.txt"
check "credit: 393660 states" grep -qx 'states 393660' "$WORK/c.txt"
check "credit: default prior 0.211" awk '$1 == "positive_prior" { exit !($2 > 0.2105 && $2 < 0.2115) }' "$WORK/c.txt"
for n in bayes_error bayes_accuracy positive_prior entropy_bits states; do
  check "info prints $n" grep -q "^$n " "$WORK/c.txt"
done
pb 1 1 world info --world all --level all > "$WORK/all.txt"
check "info --world all --level all: 9 blocks" test "$(grep -c '^world ' "$WORK/all.txt")" -eq 9
# strictly rising Bayes error Low < Medium < High in every world
check "bayes_error strictly rises with the level" awk '
  $1 == "world" { if ($2 != w) prev = -1; w = $2 }
  $1 == "bayes_error" { if ($2 <= prev) bad = 1; prev = $2 }
  END { exit bad }' "$WORK/all.txt"
# our choices are disclosed where the numbers are printed: the review weights (tuned to the seed's prior 0.241)
# in every review block, and at least one ours.NAME line in every block
check "review: info says the factor weights are ours, tuned to 0.241" test "$(awk '
  $1 == "world" { w = $2 } w == "review" && $1 == "ours.factor_weights" && /are ours, not the seed/ && /0\.241/ { n++ }
  END { print n + 0 }' "$WORK/all.txt")" -eq 3
check "every world and level discloses its choices" awk '
  $1 == "world" { if (seen && !ours) bad = 1; seen = 1; ours = 0 } $1 ~ /^ours\./ { ours = 1 }
  END { exit bad || !ours }' "$WORK/all.txt"

# sample: identical bytes for any rank and thread count
for w in covert credit review; do
  pb 1 1 world sample --world $w --level medium -n 2501 --seed 11 --first 7 -o "$WORK/$w.11.tsv"
  for l in $LAYOUTS; do
    np=${l%?} th=${l#?}
    pb "$np" "$th" world sample --world $w --level medium -n 2501 --seed 11 --first 7 -o "$WORK/$w.$np$th.tsv"
    check "$w CASES identical at $np ranks x $th threads" cmp -s "$WORK/$w.11.tsv" "$WORK/$w.$np$th.tsv"
  done
done
check "CASES: 8 comment lines, header, 2501 rows" test "$(wc -l < "$WORK/credit.11.tsv")" -eq 2510
check "CASES: rows numbered from --first" awk -F'\t' '!/^#/ && $1 != "case" { if ($1 != 7 + n++) bad = 1 } END { exit bad }' \
  "$WORK/credit.11.tsv"
check "CASES header ends with y and p_star" sh -c "grep -v '^#' '$WORK/credit.11.tsv' | head -1 | grep -q \"$(printf '\ty\tp_star$')\""
# a sub-range of the stream is the same rows: cases 100..199 of one run
pb 2 1 world sample --world credit --level medium -n 100 --seed 11 --first 107 -o "$WORK/part.tsv"
grep -v '^#' "$WORK/part.tsv" | tail -n +2 > "$WORK/part.rows"
grep -v '^#' "$WORK/credit.11.tsv" | tail -n +2 | sed -n 101,200p > "$WORK/full.rows"
check "a sub-range reproduces the same rows" cmp -s "$WORK/part.rows" "$WORK/full.rows"
# realised labels agree with p*: p* = 0 gives y = 0 and p* = 1 gives y = 1
check "labels consistent with p*" awk -F'\t' '!/^#/ && $1 != "case" {
  if (($NF == 0 && $(NF-1) != 0) || ($NF == 1 && $(NF-1) != 1)) bad = 1 } END { exit bad }' "$WORK/credit.11.tsv"

# errors: exit status, one message, nothing written
"$PAIRBOUND" world sample --world weather --level low -o "$WORK/bad.tsv" 2> "$WORK/e.txt"
check "unknown world: exit 2" test $? -eq 2
check "unknown world: message names it" grep -q "got 'weather'" "$WORK/e.txt"
check "unknown world: no output" test ! -e "$WORK/bad.tsv"
"$PAIRBOUND" world sample --world credit --level low --residual-scale 9 -o "$WORK/bad.tsv" 2> "$WORK/e.txt"
check "residual scale out of range: exit 1" test $? -eq 1
check "residual scale out of range: message" grep -q "residual scale 9 outside" "$WORK/e.txt"
"$PAIRBOUND" world sample --world credit --level low -o "$WORK/nodir/x.tsv" 2> "$WORK/e.txt"
check "unwritable output: exit 1" test $? -eq 1
"$PAIRBOUND" world sample --world credit -o "$WORK/bad.tsv" 2> /dev/null
check "sample without --level: exit 2" test $? -eq 2
"$PAIRBOUND" world sample --world credit --level low 2> /dev/null
check "sample without -o: exit 2" test $? -eq 2
"$PAIRBOUND" world frob --world credit --level low 2> /dev/null
check "unknown verb: exit 2" test $? -eq 2
"$PAIRBOUND" world --help | grep -q -- '--residual-scale'
check "world --help documents --residual-scale" test $? -eq 0
check "no temporary files left" sh -c "! ls '$WORK'/*.tmp* 2>/dev/null | grep -q ."
finish
