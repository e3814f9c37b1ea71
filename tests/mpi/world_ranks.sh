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

# memos (seed 002 Sec. 3.4, App. B): render, decode -o and prompts identical for any rank and thread count
# (credit risk at every layout, the other worlds at the last: the split over ranks does not depend on the world)
for w in covert credit review; do
  pb 1 1 world render "$WORK/$w.11.tsv" -o "$WORK/$w.memos"
  pb 1 1 world decode "$WORK/$w.memos" -o "$WORK/$w.dec"
  pb 1 1 world prompts "$WORK/$w.11.tsv" --shots 5 -o "$WORK/$w.prompts"
  layouts=${LAYOUTS##* }
  [ $w = credit ] && layouts=$LAYOUTS
  for l in $layouts; do
    np=${l%?} th=${l#?}
    pb "$np" "$th" world render "$WORK/$w.11.tsv" -o "$WORK/$w.$l.memos"
    pb "$np" "$th" world decode "$WORK/$w.memos" -o "$WORK/$w.$l.dec"
    pb "$np" "$th" world prompts "$WORK/$w.11.tsv" --shots 5 -o "$WORK/$w.$l.prompts"
    check "$w MEMOS identical at $np ranks x $th threads" cmp -s "$WORK/$w.memos" "$WORK/$w.$l.memos"
    check "$w decoded attributes identical at $np ranks x $th threads" cmp -s "$WORK/$w.dec" "$WORK/$w.$l.dec"
    check "$w PROMPTS identical at $np ranks x $th threads" cmp -s "$WORK/$w.prompts" "$WORK/$w.$l.prompts"
  done
  # h(r(x)) = x through the files: the decoded rows are the CASES rows without y (p_star included)
  grep -v '^#' "$WORK/$w.11.tsv" | awk -F'\t' 'BEGIN { OFS = "\t" } { $(NF - 1) = ""; sub(/\t\t/, "\t"); print }' \
    > "$WORK/$w.want"
  check "$w: decode reads back every case's attributes and p_star" sh -c "grep -v '^#' '$WORK/$w.dec' | cmp -s - '$WORK/$w.want'"
  check "$w: one memo and one prompt per case" test "$(wc -l < "$WORK/$w.memos") $(wc -l < "$WORK/$w.prompts")" = "2501 2501"
done
check "memo: the covert identifier in 4 hyphen-separated groups of 4" \
  grep -qE '"case":7,.*run identifier is [a-z]{4}-[a-z]{4}-[a-z]{4}-[a-z]{4}\.' "$WORK/covert.memos"
pb 1 1 world decode "$WORK/credit.memos" > "$WORK/dec.out"
check "decode without -o: one line" grep -qx "decoded 2501 memos of credit at medium: every visible attribute read back" \
  "$WORK/dec.out"
# prompts: demonstrations are nested prefixes (rows 0..K-1 of the cases' stream), the same in every prompt
demos() { head -n "${2:-1}" "$1" | tail -n 1 | sed 's/.*"demonstrations":\[//; s/\],"memo":.*//'; }
pb 1 1 world prompts "$WORK/credit.11.tsv" --shots 2 -o "$WORK/p2"
pb 1 1 world prompts "$WORK/credit.11.tsv" --shots 0 -o "$WORK/p0"
d2=$(demos "$WORK/p2") d5=$(demos "$WORK/credit.prompts")
case "$d5" in "$d2",*) prefix=1 ;; *) prefix=0 ;; esac
check "prompts: the 2 demonstrations are the first 2 of 5" test "$prefix" -eq 1
check "prompts: the same demonstrations in every prompt" test "$(demos "$WORK/credit.prompts" 2501)" = "$(demos "$WORK/credit.prompts")"
check "prompts: 5 demonstrations with their outcomes" test "$(demos "$WORK/credit.prompts" | grep -o '"outcome":"[a-z-]*"' | wc -l)" -eq 5
check "prompts: --shots 0 has none" grep -q '"shots":0,.*"demonstrations":\[\],"memo"' "$WORK/p0"
check "prompts: the seed's system message with the world's classes" grep -qF \
  '"system":"Estimate P(outcome=default) for the test case. The positive class is default' "$WORK/credit.prompts"
check "prompts: the test memo is the case's memo" test "$(sed -n 1p "$WORK/credit.memos" | sed 's/.*"memo"://; s/}$//')" \
  = "$(sed -n 1p "$WORK/credit.prompts" | sed 's/.*,"memo"://; s/,"user":.*//')"
"$PAIRBOUND" world prompts "$WORK/credit.11.tsv" --shots 10 -o "$WORK/bad.jsonl" 2> "$WORK/e.txt"
check "prompts overlapping the demonstrations: exit 1" test $? -eq 1
check "prompts overlapping the demonstrations: message" grep -qF "demonstrations are rows 0..9 of the cases' stream, which case 7" \
  "$WORK/e.txt"
check "prompts overlapping the demonstrations: no output" test ! -e "$WORK/bad.jsonl"
# decode errors: the first bad memo's line, case and reason, at any rank count; nothing written
sed '3s/Employees (people): \([0-9]*\)\./Employees (people): \1.5./; 2000s/Sector: [a-z ]*\./Sector: mining./' \
  "$WORK/credit.memos" > "$WORK/bad.memos"
for np in 1 3; do
  rm -f "$WORK/bad.dec"
  OMP_NUM_THREADS=1 mpi_launch $np "$PAIRBOUND" -v 0 world decode "$WORK/bad.memos" -o "$WORK/bad.dec" 2> "$WORK/e.txt"
  check "decode of a bad memo at $np ranks: exit 1" test $? -eq 1
  check "decode of a bad memo at $np ranks: line, case and reason" grep -qF \
    "bad.memos:3: case 9: employees: off the grid: " "$WORK/e.txt"
  check "decode of a bad memo at $np ranks: no output" test ! -e "$WORK/bad.dec"
done
sed -n 2000p "$WORK/bad.memos" > "$WORK/bad2.memos"
"$PAIRBOUND" world decode "$WORK/bad2.memos" 2> "$WORK/e.txt"
check "decode: a value none of the attribute's phrases" grep -qF "bad2.memos:1: case 2006: sector: malformed" "$WORK/e.txt"
# decode reads JSON as any writer may write it: keys in another order and spaced, an extra key, \u000a and \/
# escapes, and a line with an escaped quote and backslash that states no attribute (h reads only its phrases)
sed -n 1p "$WORK/credit.memos" | sed 's/^{"case":\([0-9]*\),"world":"credit","level":"medium","residual_scale":1,"memo":"\(.*\)"}$/{ "memo" : "\2\\u000aNote: \\"see\\" \\\\ and\\\/or.", "level":"medium", "extra": 3, "world" : "credit" , "case" : \1 }/; s/\\n/\\u000a/g' \
  > "$WORK/escaped.memos"
check "decode: the record is rewritten with escapes" grep -qF 'Note: \"see\" \\ and\/or.", "level":"medium", "extra": 3' \
  "$WORK/escaped.memos"
"$PAIRBOUND" -v 0 world decode "$WORK/escaped.memos" -o "$WORK/escaped.dec"
check "decode: JSON escapes, key order and spacing read as the written record" \
  test "$(grep -v '^#' "$WORK/escaped.dec")" = "$(grep -v '^#' "$WORK/credit.dec" | head -n 2)"
# a key given twice is ambiguous (the memo would be two texts, the level either value): refused
sed -n 1p "$WORK/credit.memos" | sed 's/"level":"medium",/"level":"medium","level":"high",/' > "$WORK/twice.memos"
"$PAIRBOUND" world decode "$WORK/twice.memos" 2> "$WORK/e.txt"
check "decode: a key given twice" grep -qF 'twice.memos:1: key "level" given twice' "$WORK/e.txt"
printf '{"case": 1, "world": "credit", "memo": "x"}\n' > "$WORK/bad3.memos"
"$PAIRBOUND" world decode "$WORK/bad3.memos" 2> "$WORK/e.txt"
check "decode: a record without its level" grep -qF 'bad3.memos:1: expected one JSON object with "case"' "$WORK/e.txt"
sed -n 1p "$WORK/credit.memos" > "$WORK/mixed.memos"
sed -n 1p "$WORK/review.memos" >> "$WORK/mixed.memos"
"$PAIRBOUND" world decode "$WORK/mixed.memos" 2> "$WORK/e.txt"
check "decode: records of two worlds" grep -qF "mixed.memos:2: world review at medium (residual scale 1) is not the file's" \
  "$WORK/e.txt"
"$PAIRBOUND" world render 2> /dev/null
check "render without CASES: exit 2" test $? -eq 2
"$PAIRBOUND" world render "$WORK/credit.11.tsv" 2> /dev/null
check "render without -o: exit 2" test $? -eq 2
"$PAIRBOUND" world render "$WORK/missing.tsv" -o "$WORK/m.jsonl" 2> "$WORK/e.txt"
check "render of a missing CASES file: exit 1" test $? -eq 1

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
