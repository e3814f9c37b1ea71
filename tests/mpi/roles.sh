# Source roles (docs/store.md, "Roles"): what a source is for comes from its
# role, never from its name.  The small panel's records under other names,
# with the same roles given at ingest, give the same numbers; `roles --set`
# rewrites one attribute and no record; a bad role names its source; a store
# without roles runs under the documented inference, skipping with the role
# to set what it cannot serve.
. "$TOP_SRCDIR/tests/mpi/common.sh"

# The seed's names and a user's (the order of first appearance, and so every
# table's row order, is the same)
NAMES="Syn:noise ES:camera Diverse:wild Syn-B:blur Syn-B5:blur-more TTA:shifts"
rename() { # rename FILE...: the seed's source names to the user's, as whole fields or after a '_'
  local p s=""
  for p in $NAMES; do s="$s s/(^|[^[:alnum:]-])${p%%:*}(\$|[^[:alnum:]_-])/\\1${p#*:}\\2/g;"; done
  sed -E "$s$s" "$@"
}
# The natural source's probe set is called TTA under either name (docs/screen.md):
# same_tsv SEED USER compares the two with every TTA, source or set, read as shifts
tta() { sed -E 's/(^|[^[:alnum:]])TTA($|[^[:alnum:]])/\1shifts\2/g; s/(^|[^[:alnum:]])TTA($|[^[:alnum:]])/\1shifts\2/g' "$1"; }
same_tsv() { rename "$1" | tta /dev/stdin | cmp -s - <(tta "$2"); }
# Both stores from the same CSV, so neither carries the panel's seed values
pb 1 1 synth --scale small --no-summary -o "$WORK/s.h5"
"$PAIRBOUND" -v 0 export "$WORK/s.h5" -o "$WORK/seed.csv"
rename "$WORK/seed.csv" > "$WORK/user.csv"
"$PAIRBOUND" -v 0 ingest "$WORK/seed.csv" --classes Syn=20 --classes ES=12 --classes Diverse=12 \
  --role Syn=synthetic --role ES=real --role Diverse=real --role Syn-B=synthetic \
  --role TTA=natural:18 --role Syn-B5=extra:Syn-B -o "$WORK/seed.h5"
check "ingest with the seed's names" test $? -eq 0
"$PAIRBOUND" -v 0 ingest "$WORK/user.csv" --classes noise=20 --classes camera=12 --classes wild=12 \
  --role noise=synthetic --role camera=real --role wild=real --role blur=synthetic \
  --role shifts=natural:18 --role blur-more=extra:blur -o "$WORK/user.h5"
check "ingest with a user's names" test $? -eq 0

# Every stage's defaults from roles: the same numbers under either names.
# Bounds without B.2's matched support, whose subsample is by definition the
# SHA-256 order of the source's name with the class and image (docs/bounds.md):
# other names, other images, as with other image names.
for stage in bounds policy screen predict; do
  args=""
  [ "$stage" = bounds ] && args=--no-matched
  pb 1 1 "$stage" "$WORK/seed.h5" $args -o "$WORK/seed_$stage" > /dev/null
  pb 1 1 "$stage" "$WORK/user.h5" $args -o "$WORK/user_$stage" > /dev/null
  n=0 same=0
  for f in "$WORK/seed_$stage"/report/*.tsv; do
    n=$((n + 1))
    same_tsv "$f" "$WORK/user_$stage/report/${f##*/}" && same=$((same + 1))
  done
  check "$stage: the same $n TSVs under the user's names ($same equal)" test "$n" -gt 0 -a "$same" -eq "$n"
done

# roles prints every source's role; --set rewrites the roles and no record
"$PAIRBOUND" roles "$WORK/user.h5" > "$WORK/roles.txt"
check "roles prints each source's role" grep -qx "shifts natural:18 (declared)" "$WORK/roles.txt"
cp "$WORK/user.h5" "$WORK/before.h5"
"$PAIRBOUND" -v 0 roles "$WORK/user.h5" --set wild=synthetic --set shifts=natural:6 > /dev/null
check "roles --set exits 0" test $? -eq 0
"$PAIRBOUND" roles "$WORK/user.h5" > "$WORK/roles2.txt"
check "roles --set: the new roles" sh -c "grep -qx 'wild synthetic (declared)' '$WORK/roles2.txt' &&
  grep -qx 'shifts natural:6 (declared)' '$WORK/roles2.txt' && grep -qx 'camera real (declared)' '$WORK/roles2.txt'"
check "roles --set: no record changed (every source's datasets and attributes)" \
  "$H5DIFF" "$WORK/before.h5" "$WORK/user.h5" /sources /sources
"$PAIRBOUND" -v 0 check "$WORK/user.h5" > /dev/null
check "roles --set: the store still checks" test $? -eq 0

# A bad role names its source and leaves the store as it was
cp "$WORK/user.h5" "$WORK/before.h5"
bad_role() { # bad_role DESCRIPTION PATTERN ROLES-ARGS...
  local d=$1 pat=$2; shift 2
  "$PAIRBOUND" -v 0 roles "$WORK/user.h5" "$@" 2> "$WORK/err.txt"
  check "$d: status 1" test $? -eq 1
  check "$d: the error names the source" grep -qE "$pat" "$WORK/err.txt"
  check "$d: the store unchanged" cmp -s "$WORK/before.h5" "$WORK/user.h5"
}
bad_role "unknown role" "source camera.*capture" --set camera=capture
bad_role "natural role on a source that probes no source with cells" "^pairbound roles: error: .*source noise: role natural:3" \
  --set noise=natural:3
bad_role "natural:N above the perturbed conditions" "source shifts: role natural:31" --set shifts=natural:31
bad_role "extra role naming no synthetic source" "source blur-more" --set blur-more=extra:camera
bad_role "unknown source" "wilde" --set wilde=real
"$PAIRBOUND" -v 0 ingest "$WORK/user.csv" --role camera=capture -o "$WORK/bad.h5" 2> "$WORK/err.txt"
check "ingest --role with an unknown role: a usage error naming the source" \
  sh -c "test $? -eq 2 && grep -qE 'camera.*capture' '$WORK/err.txt' && test ! -e '$WORK/bad.h5'"

# A real source without a mild condition is no target of predict by role
# (a warning names it); the others are (single labels: the tiers the configuration gives are those of
# its stored labels, while the small store's label sets would make Diverse easier)
awk '/^\[source Diverse\]/ { d = 1 } /^\[source Syn-B\]/ { d = 0 } d && /^tiers = / { $0 = "tiers = 0,3,3" } { print }' \
  "$TOP_SRCDIR/inputs/small.ini" > "$WORK/nomild.ini"
pb 1 1 synth --config "$WORK/nomild.ini" --no-summary -o "$WORK/nomild.h5"
OMP_NUM_THREADS=1 mpi_launch 1 "$PAIRBOUND" predict "$WORK/nomild.h5" --labels single -o "$WORK/nomild" > /dev/null 2> "$WORK/err.txt"
check "predict by role, a real source without a mild condition: exit 0" test $? -eq 0
check "predict: the warning names it" \
  grep -q "warning: predict: real source 'Diverse' has no mild condition (development accuracy >= 0.40): not a target" \
  "$WORK/err.txt"
check "predict: the other real source is the one target" \
  sh -c "cut -f4 '$WORK/nomild/report/predict_features.tsv' | tail -n +2 | sort -u | tr '\n' ' ' | grep -qx 'ES '"

# Without roles every source is inferred real: run exits 0, runs what it can
# and says which role to set for what it cannot
"$PAIRBOUND" -v 0 ingest "$WORK/user.csv" -o "$WORK/none.h5"
"$PAIRBOUND" roles "$WORK/none.h5" > "$WORK/roles3.txt"
check "no roles declared: inferred real" grep -qx "noise real (inferred: not declared)" "$WORK/roles3.txt"
cat > "$WORK/run.ini" <<INI
[run]
synth = none
stages = bounds, screen, predict
group_draws = 3
class_draws = 2
INI
pb 1 1 run "$WORK/run.ini" --store "$WORK/none.h5" -o "$WORK/none" > "$WORK/out.txt"
check "run on a store without roles exits 0" test $? -eq 0
check "run: screen skipped with the role to set" \
  grep -qE "^skipped screen: .*roles STORE --set SRC=synthetic" "$WORK/out.txt"
check "run: predict skipped with its reason" grep -qE "^skipped predict: " "$WORK/out.txt"
check "run: REPORT.md says why screen was skipped" grep -q "^# screen: skipped" "$WORK/none/REPORT.md"
check "run: bounds ran" test -s "$WORK/none/bounds/report/bounds.tsv"
# --store names a store that must exist: the default configuration's synth
# (the paper store) never stands in for a mistyped path
OMP_NUM_THREADS=1 mpi_launch 1 "$PAIRBOUND" -v 0 run --store "$WORK/nonee.h5" -o "$WORK/typo" 2> "$WORK/err.txt"
check "run --store with a missing store: status 1, named" \
  sh -c "test $? -eq 1 && grep -q 'nonee.h5: cannot read the store: No such file or directory' '$WORK/err.txt'"
check "run --store with a missing store: nothing generated or written" \
  sh -c "! ls -d '$WORK'/nonee.h5* '$WORK/typo' > /dev/null 2>&1"
finish
