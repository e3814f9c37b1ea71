# The per-record summary columns entropy and collision through the real
# binary (docs/csv.md, "Per-record summaries"): every rule refused at its
# file and line, exit 1, nothing written; a valid CSV round-trips ingest ->
# export byte for byte.  Expected bounds are worked by hand below.
. "$TOP_SRCDIR/tests/mpi/common.sh"

H=model,group,source,condition,image,label,split,pred,smax,ptrue,top1_class,top1_prob,top2_class,top2_prob
# rec CONDITION IMAGE LABEL SPLIT PRED PTRUE SECOND ENTROPY COLLISION: smax .5, list (PRED .5) (SECOND .25)
rec() { echo "m1,g1,S,$1,$2,$3,$4,$5,0.5,$6,$5,0.5,$7,0.25,$8,$9"; }
# 4 classes, 8 records; each stands for the vector (.5, .25, .25, 0): entropy
# 1.5 ln 2 = 1.0397208 (float32), collision .25 + 2 (.0625) = .375.  The
# last record (line 9, wrong: pred 0, label 3) takes ENTROPY COLLISION.
csv() {
  echo "$H,entropy,collision"
  for c in clean fog; do
    rec $c i0 0 dev 0 0.5 1 1.0397208 0.375
    rec $c i1 1 dev 1 0.5 2 1.0397208 0.375
    rec $c i2 2 eval 2 0.5 3 1.0397208 0.375
    [ $c = clean ] && rec $c i3 3 eval 3 0.5 0 1.0397208 0.375
  done
  rec fog i3 3 eval 0 0.25 3 "$1" "$2"
}
csv 1.0397208 0.375 > "$WORK/ok.csv"
for np in 1 2 3; do
  pb "$np" 1 ingest "$WORK/ok.csv" --classes S=4 -o "$WORK/ok$np.h5" &&
    pb "$np" 1 export "$WORK/ok$np.h5" -o "$WORK/ok$np.csv"
  check "summaries round-trip byte for byte (ingest and export at $np ranks)" cmp -s "$WORK/ok.csv" "$WORK/ok$np.csv"
done
# refused ENTROPY COLLISION MESSAGE: the last record's pair is refused at
# line 9 with MESSAGE, at 1 and 3 ranks, with the class count given (pass 1)
# and inferred (4, from the labels: pass 2)
refused() {
  csv "$1" "$2" > "$WORK/bad.csv"
  for np in 1 3; do
    for classes in "--classes S=4" ""; do
      # shellcheck disable=SC2086 # classes is one option or none
      pb "$np" 1 ingest "$WORK/bad.csv" $classes -o "$WORK/bad.h5" 2> "$WORK/err.txt"
      rc=$?
      check "$1,$2 refused (exit 1) at $np ranks ${classes:-inferred}" test "$rc" -eq 1
      check "$1,$2: '$3' at $np ranks ${classes:-inferred}" \
        grep -qF "pairbound ingest: error: $WORK/bad.csv:9: $3" "$WORK/err.txt"
      check "$1,$2: no store at $np ranks ${classes:-inferred}" sh -c "! ls '$WORK'/bad.h5* 2>/dev/null | grep -q ."
    done
  done
}
R='(docs/csv.md, "Per-record summaries")'
# entropy in [0, ln 4 = 1.38629436]
refused 1.5 0.375 "column 'entropy': 1.5 outside [0, log(4) = 1.38629436] $R"
refused -0.01 0.375 "column 'entropy': -0.01 outside [0, log(4) = 1.38629436] $R"
# the top-2 list (.5, .25) leaves t = .25 for 2 classes of at most .25:
# entropy from H_k = .5 ln 2 + .25 ln 4 = ln 2 = 0.693147181 to
# H_k + .25 ln(2 / .25) = 1.75 ln 2 = 1.21300757
refused 1.3 0.375 "column 'entropy': 1.3 outside [0.693147181, 1.21300757], what the top-2 list allows $R"
refused 0.6 0.375 "column 'entropy': 0.6 outside [0.693147181, 1.21300757], what the top-2 list allows $R"
# collision in [max(.5^2, .25^2) = .25, 1]
refused 1.0397208 0.2 "column 'collision': 0.2 outside [max(smax^2, ptrue^2) = 0.25, 1] $R"
refused 1.0397208 1.5 "column 'collision': 1.5 outside [max(smax^2, ptrue^2) = 0.25, 1] $R"
# collision from C_k = .25 + .0625 = .3125 to C_k + .25^2 = .375 (one class at .25)
refused 1.0397208 0.3 "column 'collision': 0.3 outside [0.3125, 0.375], what the top-2 list allows $R"
refused 1.0397208 0.4 "column 'collision': 0.4 outside [0.3125, 0.375], what the top-2 list allows $R"
# numbers are read as probabilities are
refused abc 0.375 "column 'entropy': not a number: 'abc'"
refused 1.0397208 0x1p-1 "column 'collision': hexadecimal number '0x1p-1' not accepted (write it in decimal)"
refused inf 0.375 "column 'entropy': not finite: 'inf'"
refused 1.0397208 nan "column 'collision': not finite: 'nan'"
# every file needs the same summary columns
csv 1.0397208 0.375 | head -5 > "$WORK/a.csv"
{ echo "$H,entropy"; csv 1.0397208 0.375 | sed -n '6,$p' | cut -d, -f1-15; } > "$WORK/b.csv"
pb 1 1 ingest "$WORK/a.csv" "$WORK/b.csv" --classes S=4 -o "$WORK/ab.h5" 2> "$WORK/err.txt"
check "a file without the collision column: exit 1" test $? -eq 1
check "a file without the collision column: named at its header" grep -qF \
  "$WORK/b.csv:1: no column 'collision', but $WORK/a.csv has one: every file needs the same summary columns" "$WORK/err.txt"
finish
