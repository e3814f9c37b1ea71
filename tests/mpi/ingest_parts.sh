# ingest's pass 1 in parts (src/ingest/ingest_dict.c): at 1, 2 and 3
# threads the same store (h5diff, and accepted by pairbound check) from the
# single CSV, from one file per model, from its rows shuffled (names first
# met in any part, late parts adding images to sources of early ones) and
# with --append, and with a quoted field (read again the serial way); and
# the same message at 1 and 2 threads for errors that the parts meet in
# different places (the serial pass reports them).
. "$TOP_SRCDIR/tests/mpi/common.sh"

per_model_csvs
check "the CSV has label sets" grep -q ',[0-9]*;[0-9]' "$WORK/a.csv"
head -1 "$WORK/a.csv" > "$WORK/shuf.csv"
awk 'BEGIN { srand(41) } NR > 1 { printf "%.9f\t%s\n", rand(), $0 }' "$WORK/a.csv" | sort -k1,1 | cut -f2- \
  >> "$WORK/shuf.csv"
half=$(($(wc -l < "$WORK/list") / 2))
for th in 1 2 3; do
  # shellcheck disable=SC2086 # ROLES and the lists are words
  pb 1 "$th" ingest "$WORK/a.csv" $ROLES -o "$WORK/one$th.h5"
  # shellcheck disable=SC2046,SC2086
  pb 1 "$th" ingest $(cat "$WORK/list") $ROLES -o "$WORK/files$th.h5"
  # shellcheck disable=SC2086
  pb 1 "$th" ingest "$WORK/shuf.csv" $ROLES -o "$WORK/shuf$th.h5"
  # shellcheck disable=SC2046,SC2086
  pb 1 "$th" ingest $(sed -n "1,${half}p" "$WORK/list") $ROLES -o "$WORK/app$th.h5"
  # shellcheck disable=SC2046
  pb 1 "$th" ingest $(sed -n "$((half + 1)),\$p" "$WORK/list") --append -o "$WORK/app$th.h5"
  for s in one files shuf app; do
    check "$s at $th threads: accepted by check" "$PAIRBOUND" -v 0 check "$WORK/$s$th.h5"
  done
  check "one CSV at $th threads = the synthesised store" same_h5 "$WORK/s.h5" "$WORK/one$th.h5"
  check "one file per model at $th threads = the one CSV" same_h5 "$WORK/one1.h5" "$WORK/files$th.h5"
  check "appended at $th threads = the one CSV" same_h5 "$WORK/one1.h5" "$WORK/app$th.h5"
  check "shuffled rows at $th threads = at 1 thread" same_h5 "$WORK/shuf1.h5" "$WORK/shuf$th.h5"
done
# a quoted field in a late part: that ingest is read again the serial way, to the same store
awk -F, -v OFS=, 'NR == 15000 { $5 = "\"" $5 "\"" } { print }' "$WORK/a.csv" > "$WORK/q.csv"
check "the CSV with a quoted field has one" grep -q '"' "$WORK/q.csv"
# shellcheck disable=SC2086
pb 1 2 ingest "$WORK/q.csv" $ROLES -o "$WORK/q.h5"
check "a quoted field at 2 threads: the same store" same_h5 "$WORK/one1.h5" "$WORK/q.h5"
# which way pass 1 went (-v 2): the checks above would pass as well if the parts were never used, since the
# serial pass builds the same stores; so the plain CSVs must go through them and the quoted one must not
for s in a q; do
  # shellcheck disable=SC2086
  OMP_NUM_THREADS=2 mpi_launch 1 "$PAIRBOUND" -v 2 ingest "$WORK/$s.csv" $ROLES -o "$WORK/way.h5" --force \
    2> "$WORK/way_$s.txt" > /dev/null
done
check "the plain CSV at 2 threads: pass 1 in parts" grep -q "pass 1 in parts" "$WORK/way_a.txt"
check "the quoted field at 2 threads: pass 1 read again in file order" grep -q "pass 1 read again" "$WORK/way_q.txt"
head -c -1 "$WORK/a.csv" > "$WORK/nonl.csv" # no line end after the last row: libcsv's, the serial pass's
# shellcheck disable=SC2086
OMP_NUM_THREADS=2 mpi_launch 1 "$PAIRBOUND" -v 2 ingest "$WORK/nonl.csv" $ROLES -o "$WORK/nonl.h5" 2> "$WORK/way_n.txt"
check "no final line end: the serial pass" grep -q "pass 1 read again" "$WORK/way_n.txt"
check "no final line end: the same store" same_h5 "$WORK/one1.h5" "$WORK/nonl.h5"
# under 2 ranks x 1 thread both ranks read pass 1's parts (docs/csv.md, "Ranks"), to the same store; where rank
# 0 reads alone (--append), it takes the waiting rank's thread too (when it may run on 2 CPUs)
# shellcheck disable=SC2086
OMP_NUM_THREADS=1 mpi_launch 2 "$PAIRBOUND" -v 2 ingest "$WORK/a.csv" $ROLES -o "$WORK/r2.h5" 2> "$WORK/way_r.txt"
check "2 ranks x 1 thread: pass 1 in parts" grep -q "pass 1 in parts" "$WORK/way_r.txt"
# shellcheck disable=SC2046,SC2086
pb 1 1 ingest $(sed -n "1,${half}p" "$WORK/list") $ROLES -o "$WORK/app_r.h5"
# shellcheck disable=SC2046
OMP_NUM_THREADS=1 mpi_launch 2 "$PAIRBOUND" -v 2 ingest $(sed -n "$((half + 1)),\$p" "$WORK/list") --append \
  -o "$WORK/app_r.h5" 2> "$WORK/way_a.txt"
check "2 ranks x 1 thread, --append: the same store" same_h5 "$WORK/one1.h5" "$WORK/app_r.h5"
if [ "$(nproc)" -ge 2 ]; then
  check "2 ranks x 1 thread, --append: rank 0 reads with 2 threads" \
    grep -q "rank 0 reads with 2 threads, its own 1 and those of the ranks waiting on its node" "$WORK/way_a.txt"
else
  echo "# one CPU: rank 0 keeps its own thread"
fi
check "2 ranks x 1 thread: the same store" same_h5 "$WORK/one1.h5" "$WORK/r2.h5"

# errors: CASE FILES... gives the same message at 1 and 2 threads, the
# expected one, and leaves no store
same_error() {
  local what=$1 want=$2 th
  shift 2
  for th in 1 2; do
    # shellcheck disable=SC2086
    pb 1 "$th" ingest "$@" $ROLES -o "$WORK/bad.h5" 2> "$WORK/err$th.txt"
    check "$what at $th threads: exit 1" test $? -eq 1
    check "$what at $th threads: no store" sh -c "! ls '$WORK'/bad.h5* 2>/dev/null | grep -q ."
  done
  # (the launcher's own lines name its job)
  check "$what: the same message at 1 and 2 threads" \
    test "$(grep '^pairbound' "$WORK/err1.txt")" = "$(grep '^pairbound' "$WORK/err2.txt")"
  check "$what: $want" grep -qF "$want" "$WORK/err2.txt"
}
B="$WORK/b.csv" # columns: model group source condition image label split labels pred smax ptrue top1_class ...
# line 16000 (TTA, img-39, a late part) takes another label than its image's first row, line 7540
awk -F, -v OFS=, 'NR == 16000 { $6 = 3; $9 = 3; $12 = 3 } { print }' "$WORK/a.csv" > "$B"
same_error "label across parts" "$B:16000: image img-39 of source TTA has label 3 here but 7 at line 7540" "$B"
# a bad smax at line 15000, then a model's other group at line 17000: the value comes first
awk -F, -v OFS=, 'NR == 15000 { $10 = "abc" } NR == 17000 { $2 = "omega" } { print }' "$WORK/a.csv" > "$B"
same_error "bad value before a dictionary error" "$B:15000: column 'smax': not a number: 'abc'" "$B"
# the other way round: the group first
awk -F, -v OFS=, 'NR == 15000 { $2 = "omega" } NR == 17000 { $10 = "abc" } { print }' "$WORK/a.csv" > "$B"
same_error "dictionary error before a bad value" "$B:15000: model m-c1 has group omega here but gamma at line" "$B"
# line 3000 again at the end
{ cat "$WORK/a.csv"; sed -n 3000p "$WORK/a.csv"; } > "$B"
same_error "duplicate" "$B:17702: duplicate record for source ES, model m-a2, condition off_iso3200, image img-59 (first at line 3000)" "$B"
# a store in use (its lock held as a running writer holds it) is refused once pass 1 is done, while the threads
# read the first window, which here holds a duplicate (line 3000 again): the store's message, as at 1 thread
exec 9> "$WORK/used.h5.lock"
flock -n 9 && echo 4444 >&9
for th in 1 2; do
  # shellcheck disable=SC2086
  pb 1 "$th" ingest "$B" $ROLES -o "$WORK/used.h5" 2> "$WORK/err$th.txt"
  check "a store in use at $th threads: exit 1" test $? -eq 1
  check "a store in use at $th threads: its message, not the duplicate's" \
    grep -qF "used.h5 is in use by pid 4444" "$WORK/err$th.txt"
done
exec 9>&-
check "a store in use: no store" test ! -e "$WORK/used.h5"
# a duplicate (line 101 again after line 200), then a bad value: the value, which pass 1 meets
awk -F, -v OFS=, 'NR == 101 { d = $0 } NR == 16000 { $11 = "-0.5" } { print } NR == 200 { print d }' \
  "$WORK/a.csv" > "$B"
same_error "duplicate before a bad value" "$B:16001: column 'ptrue': -0.5 outside [0, 1]" "$B"
# a record left out: missing
sed 9000d "$WORK/a.csv" > "$B"
same_error "missing record" "missing record for image" "$B"
# across files: a split in a later file against the first file's
awk -F, -v OFS=, 'NR == 2 { $7 = $7 == "dev" ? "eval" : "dev" } { print }' "$(sed -n 3p "$WORK/list")" > "$B"
# shellcheck disable=SC2046
same_error "split across files" "$B:2: image syn-001 of source Syn has split" \
  $(sed -n 1,2p "$WORK/list") "$B"
finish
