# ingest --append: a store ingested from one model's CSV and then given the
# others (one at a time, or several files at once) equals the store ingested
# from the single CSV (every record, checksum and attribute but provenance);
# refusals leave the store as it was; a stage checkpoint of the old store no
# longer resumes; a SIGKILL at any moment leaves the old store (byte for
# byte, once the next open has undone the append from its journal) or the
# new one, both accepted by pairbound check; readers and an append exclude
# each other.
. "$TOP_SRCDIR/tests/mpi/common.sh"

per_model_csvs
n=$(wc -l < "$WORK/list")
m() { sed -n "$1p" "$WORK/list"; }
# shellcheck disable=SC2086 # ROLES is a list of words
pb 1 1 ingest "$WORK/a.csv" $ROLES -o "$WORK/one.h5"
# shellcheck disable=SC2086
pb 1 1 ingest "$(m 1)" $ROLES -o "$WORK/app.h5"
for k in $(seq 2 "$n"); do
  pb 1 1 ingest "$(m "$k")" --append -o "$WORK/app.h5"
  check "append model $k of $n: accepted by check" "$PAIRBOUND" -v 0 check "$WORK/app.h5"
done
check "one model, then $((n - 1)) appends = the single CSV" same_h5 "$WORK/one.h5" "$WORK/app.h5"
check "no temporary or journal left" sh -c "! ls '$WORK'/app.h5.* 2>/dev/null | grep -q ."
# shellcheck disable=SC2086
pb 1 1 ingest "$(m 1)" "$(m 2)" $ROLES -o "$WORK/two.h5"
# shellcheck disable=SC2046
pb 2 1 ingest $(sed -n '3,$p' "$WORK/list") --append -o "$WORK/two.h5"
check "two models, then the others at once (2 ranks) = the single CSV" same_h5 "$WORK/one.h5" "$WORK/two.h5"
check "provenance keeps the first ingest and says what was appended" \
  sh -c "h5dump -a /provenance/text '$WORK/two.h5' | grep -q appended:"
# a run's checkpoint of the store before an append does not resume on it
# shellcheck disable=SC2086
pb 1 1 ingest "$(m 1)" "$(m 2)" $ROLES -o "$WORK/c.h5"
printf '[run]\nstore = %s\noutput = %s\nstages = bounds\n' "$WORK/c.h5" "$WORK/r" > "$WORK/r.ini"
"$PAIRBOUND" -v 0 run "$WORK/r.ini" > /dev/null
check "run on the store before the append" test -s "$WORK/r/bounds/checkpoint.txt"
pb 1 1 ingest "$(m 3)" --append -o "$WORK/c.h5"
"$PAIRBOUND" -v 0 run "$WORK/r.ini" --resume > /dev/null 2> "$WORK/e.txt"
check "run --resume after the append: refused" test $? -eq 1
check "  ... naming the store checksum" grep -q "made with store checksum '[0-9a-f]*', this run has '[0-9a-f]*'" "$WORK/e.txt"

# refusals name file and line and leave the store untouched
cp "$WORK/two.h5" "$WORK/keep.h5"
"$PAIRBOUND" -v 0 ingest "$(m 1)" --append -o "$WORK/two.h5" 2> "$WORK/e.txt"
check "a model already in the store: refused" grep -qF ":2: model $(sed -n 2p "$(m 1)" | cut -d, -f1) is already in $WORK/two.h5" "$WORK/e.txt"
sed '1!s/^[^,]*,/newmodel,/; 2s/,Syn,clean,[^,]*,/,Syn,clean,syn-99999,/' "$(m 1)" > "$WORK/newimg.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/newimg.csv" --append -o "$WORK/two.h5" 2> "$WORK/e.txt"
check "an image not in the store: refused" \
  grep -qF "$WORK/newimg.csv:2: image syn-99999 of source Syn is not in $WORK/two.h5 (--append adds models, not images)" "$WORK/e.txt"
sed '1!s/^[^,]*,/newmodel,/' "$(m 1)" | sed '$d' > "$WORK/short.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/short.csv" --append -o "$WORK/two.h5" 2> "$WORK/e.txt"
check "a new model missing a record: refused" grep -qF "missing record for image" "$WORK/e.txt"
# shellcheck disable=SC2086
"$PAIRBOUND" -v 0 ingest "$(m 1)" --append --role Syn=real -o "$WORK/two.h5" 2> "$WORK/e.txt"
check "--role with --append: refused" grep -qF -- "--role and --append" "$WORK/e.txt"
check "the store is untouched by every refusal" cmp -s "$WORK/keep.h5" "$WORK/two.h5"
check "no temporary or journal left by the refusals" sh -c "! ls '$WORK'/two.h5.* 2>/dev/null | grep -q ."

# SIGKILL during an append: the old store or the new one, both checked
# shellcheck disable=SC2086
pb 1 1 ingest "$(m 1)" "$(m 2)" "$(m 3)" $ROLES -o "$WORK/old.h5"
cat "$(m 4)" > "$WORK/new.csv"
sed 1d "$(m 5)" >> "$WORK/new.csv"
cp "$WORK/old.h5" "$WORK/ref_new.h5"
"$PAIRBOUND" -v 0 ingest "$WORK/new.csv" --append -o "$WORK/ref_new.h5"
old=0 new=0
for d in 0 0.01 0.02 0.04 0.06 0.08 0.1 0.15 0.2 0.3 0.5; do
  cp "$WORK/old.h5" "$WORK/k.h5"
  "$PAIRBOUND" -v 0 ingest "$WORK/new.csv" --append -o "$WORK/k.h5" 2> /dev/null &
  pid=$!
  sleep "$d"
  kill -9 "$pid" 2> /dev/null
  wait "$pid" 2> /dev/null
  # the next open (check's) undoes an append the kill interrupted
  check "SIGKILL after ${d} s: accepted by check" "$PAIRBOUND" -v 0 check "$WORK/k.h5"
  if cmp -s "$WORK/old.h5" "$WORK/k.h5"; then old=$((old + 1)); state=old
  elif same_h5 "$WORK/ref_new.h5" "$WORK/k.h5"; then new=$((new + 1)); state=new
  else state=neither; fi
  check "SIGKILL after ${d} s: the old store byte for byte, or the new one ($state)" test "$state" != neither
  check "SIGKILL after ${d} s: no undo journal left" test ! -e "$WORK/k.h5.undo"
done
echo "# kills leaving the old store: $old, the new one: $new"
# the next append after a kill undoes it first
cp "$WORK/old.h5" "$WORK/k.h5"
PAIRBOUND_TEST_APPEND_KILL=2 "$PAIRBOUND" -v 0 ingest "$WORK/new.csv" --append -o "$WORK/k.h5" 2> /dev/null
# (as a kill while the journal or a store was being written leaves them)
: > "$WORK/k.h5.undo.tmp.AbC123"
: > "$WORK/k.h5.tmp.AbC123"
"$PAIRBOUND" -v 0 ingest "$WORK/new.csv" --append -o "$WORK/k.h5" 2> /dev/null
check "after a kill, an append completes" sh -c "'$H5DIFF' --exclude-path /provenance '$WORK/ref_new.h5' '$WORK/k.h5' >/dev/null"
check "  ... and leaves no journal, copy or lock" sh -c "! ls '$WORK'/k.h5.* 2>/dev/null | grep -q ."
# kills at each step of an append (PAIRBOUND_TEST_APPEND_KILL): a half-grown store, a grown one without its
# records, a complete one whose journal is not yet removed; each the old store again, byte for byte
for step in 1 2 3; do
  cp "$WORK/old.h5" "$WORK/k.h5"
  PAIRBOUND_TEST_APPEND_KILL=$step "$PAIRBOUND" -v 0 ingest "$WORK/new.csv" --append -o "$WORK/k.h5" 2> /dev/null
  check "killed at step $step: exit by SIGKILL, the undo journal left" sh -c "test $? -eq 137 && test -s '$WORK/k.h5.undo'"
  [ "$step" -gt 1 ] && check "  ... the file itself changed" sh -c "! cmp -s '$WORK/old.h5' '$WORK/k.h5'"
  check "  ... accepted by check" "$PAIRBOUND" -v 0 check "$WORK/k.h5"
  check "  ... the old store byte for byte, no journal or lock left" sh -c \
    "cmp -s '$WORK/old.h5' '$WORK/k.h5' && ! ls '$WORK'/k.h5.* 2>/dev/null | grep -q ."
done
# a journal while the append is still running (its lock held): readers refuse the store, which stays as it is
cp "$WORK/old.h5" "$WORK/k.h5"
PAIRBOUND_TEST_APPEND_KILL=2 "$PAIRBOUND" -v 0 ingest "$WORK/new.csv" --append -o "$WORK/k.h5" 2> /dev/null
cp "$WORK/k.h5" "$WORK/k.half"
# hold FLOCK-ARGS...: a process holding that flock (its pid in holder.pid) until release
hold() {
  rm -f "$WORK/holder.pid"
  flock "$@" sh -c "echo \$\$ > '$WORK/holder.pid'; exec sleep 60" &
  while [ ! -s "$WORK/holder.pid" ]; do sleep 0.05; done
}
release() { kill "$(cat "$WORK/holder.pid")"; wait; }
hold "$WORK/k.h5.lock"
"$PAIRBOUND" -v 0 info "$WORK/k.h5" > /dev/null 2> "$WORK/e.txt"
check "an append running: a reader refuses the store" test $? -eq 1
check "  ... naming the lock" grep -qF "$WORK/k.h5 is in use by pid" "$WORK/e.txt"
check "  ... and leaves it as it is" sh -c "cmp -s '$WORK/k.half' '$WORK/k.h5' && test -s '$WORK/k.h5.undo'"
release
# a damaged journal: the store cannot be restored, so it is refused, and nothing is written
printf 'X' | dd of="$WORK/k.h5.undo" bs=1 seek=100 conv=notrunc 2> /dev/null
"$PAIRBOUND" -v 0 check "$WORK/k.h5" > /dev/null 2> "$WORK/e.txt"
check "a damaged undo journal: check refuses the store" test $? -eq 1
check "  ... saying so" grep -qF "k.h5.undo: the undo journal of an interrupted append is damaged" "$WORK/e.txt"
check "  ... and leaves both as they are" sh -c "cmp -s '$WORK/k.half' '$WORK/k.h5' && test -s '$WORK/k.h5.undo'"
# a journal of a store since replaced (another file now at the path) is only removed
rm "$WORK/k.h5.undo"
cp "$WORK/old.h5" "$WORK/k.h5"
PAIRBOUND_TEST_APPEND_KILL=2 "$PAIRBOUND" -v 0 ingest "$WORK/new.csv" --append -o "$WORK/k.h5" 2> /dev/null
cp "$WORK/old.h5" "$WORK/other.h5"
mv "$WORK/other.h5" "$WORK/k.h5"
check "a journal of a replaced store: the new file opens" "$PAIRBOUND" -v 0 check "$WORK/k.h5"
check "  ... untouched, and the journal gone" sh -c "cmp -s '$WORK/old.h5' '$WORK/k.h5' && test ! -e '$WORK/k.h5.undo'"
# readers and an append exclude each other (flock on the store: shared for readers, exclusive for an append)
hold -s "$WORK/k.h5"
"$PAIRBOUND" -v 0 ingest "$WORK/new.csv" --append -o "$WORK/k.h5" 2> "$WORK/e.txt"
check "a store being read: an append refuses it" test $? -eq 1
check "  ... saying why" grep -qF "open in another process" "$WORK/e.txt"
check "  ... and the store as it was, no journal left" sh -c "cmp -s '$WORK/old.h5' '$WORK/k.h5' && ! ls '$WORK'/k.h5.* 2>/dev/null | grep -q ."
release
hold -x "$WORK/k.h5"
"$PAIRBOUND" -v 0 info "$WORK/k.h5" > /dev/null 2> "$WORK/e.txt"
check "a store held by an append: a reader refuses it" test $? -eq 1
check "  ... saying why" grep -qF "models are being added to it" "$WORK/e.txt"
release
# a store of schema 2 (before label sets and per-record summaries): append refuses it, saying how to convert
# it, and leaves it as it was; roles --set converts it to schema 3 (checksums rewritten, check passes)
# shellcheck disable=SC2086
pb 1 1 ingest "$(m 1)" $ROLES -o "$WORK/v2.h5"
for src in Syn ES Diverse Syn-B TTA Syn-B5; do
  for d in entropy collision label_set_offsets label_set_ids; do "$H5POKE" --unlink "$WORK/v2.h5" "/sources/$src/$d" 2>/dev/null; done
  "$H5POKE" --digest "$WORK/v2.h5" "/sources/$src"
done
"$H5POKE" --attr "$WORK/v2.h5" / schema_version 2
"$H5POKE" --digest "$WORK/v2.h5" /
check "schema 2: check passes" "$PAIRBOUND" -v 0 check "$WORK/v2.h5"
cp "$WORK/v2.h5" "$WORK/v2.before"
# model 2's records without the columns schema 2 cannot hold
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "labels" || $i == "entropy" || $i == "collision") d[i] = 1 }
  { o = ""; for (i = 1; i <= NF; i++) if (!(i in d)) o = o (o == "" ? "" : ",") $i; print o }' "$(m 2)" > "$WORK/m2old.csv"
pb 1 1 ingest "$WORK/m2old.csv" --append -o "$WORK/v2.h5" 2> "$WORK/e.txt"
check "schema 2: append refused" test $? -eq 1
check "  ... saying how to convert it" grep -qF "v2.h5: schema 2; models are added to stores of schema 3 (\`pairbound roles STORE --set SRC=ROLE\` converts it)" "$WORK/e.txt"
check "  ... and the store as it was" cmp -s "$WORK/v2.h5" "$WORK/v2.before"
pb 1 1 roles "$WORK/v2.h5" --set Syn=synthetic > /dev/null
check "roles --set on schema 2: schema 3, check passes" sh -c "'$PAIRBOUND' -v 0 info '$WORK/v2.h5' | grep -qx 'schema_version 3' &&
  '$PAIRBOUND' -v 0 check '$WORK/v2.h5' > /dev/null"
# a synthesised panel keeps its seed values, the panel's and its sources', through an append (the CSV
# carries records only), and the checksums cover them: a model's records under a new name, appended to
# the store they came from (the root's seed values used to be left out of the new checksum)
sed 's/^half_precision = 1$/half_precision = 1\nseed_values = orderings_shared:0.693/' "$TOP_SRCDIR/inputs/small.ini" > "$WORK/panel.ini"
pb 1 1 synth --config "$WORK/panel.ini" --no-summary -o "$WORK/panel.h5"
"$PAIRBOUND" -v 0 export "$WORK/panel.h5" -o "$WORK/panel.csv"
first=$(sed -n 2p "$WORK/panel.csv" | cut -d, -f1)
awk -F, -v OFS=, -v m="$first" 'NR == 1 { print; next } $1 == m { $1 = "appended"; print }' "$WORK/panel.csv" > "$WORK/panel_new.csv"
seeds() { h5dump -A "$1" | grep -A14 'ATTRIBUTE "seed_values"' | grep '(0):'; }
seeds "$WORK/panel.h5" > "$WORK/seeds_before.txt"
pb 1 1 ingest "$WORK/panel_new.csv" --append -o "$WORK/panel.h5"
check "append to a synthesised panel: accepted by check (its seed values kept and checksummed)" \
  "$PAIRBOUND" -v 0 check "$WORK/panel.h5"
seeds "$WORK/panel.h5" > "$WORK/seeds_after.txt"
check "  ... the panel's seed values as they were" sh -c "test -s '$WORK/seeds_before.txt' && cmp -s '$WORK/seeds_before.txt' '$WORK/seeds_after.txt'"
finish
