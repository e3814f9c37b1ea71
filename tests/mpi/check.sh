#!/bin/sh
# Store integrity: `pairbound check` passes a good store, and every kind of
# damage -- a class out of range, a probability above 1 or NaN, M > S, a
# flipped bit inside a checksummed chunk, a `topk` attribute that disagrees
# with the datasets -- is named by `check` (exit 1) and refused by the stages
# that read the records, at 1 and 2 ranks, with the cell and image named.
. "$(dirname "$0")/common.sh"
: "${H5POKE:?}"

pb 1 1 synth --scale small --no-summary -o "$WORK/good.h5"
out=$(pb 2 1 check "$WORK/good.h5"); rc=$?
check "a good store passes check" [ $rc -eq 0 ]
# rows: 5 models x (4 Syn + 5 ES + 7 Diverse + 5 Syn-B + 31 TTA + 3 Syn-B5 conditions) = 275;
# records: 5 x (4 x 120 + 5 x 60 + 7 x 60 + 5 x 60 + 31 x 60 + 3 x 60) = 17,700 (check reads probe sources too)
check "check counts every record (4 Syn + 5 ES + 7 Diverse + 5 Syn-B + 31 TTA + 3 Syn-B5 conditions x 5 models)" \
  sh -c "echo '$out' | grep -q '^checked 17700 records in 275 rows: ok, 0 damaged$'"

# damage DESCRIPTION DATASET INDEX VALUE EXPECTED-REASON [STAGE-READS-IT]
# (bounds reads no top-k lists, so top-k damage is shown through check and export)
damage() {
  cp "$WORK/good.h5" "$WORK/bad.h5"
  "$H5POKE" "$WORK/bad.h5" "$2" "$3" "$4" >/dev/null || { not_ok "$1: h5poke"; return; }
  for np in 1 2; do
    out=$(pb $np 1 check "$WORK/bad.h5" 2>&1); rc=$?
    check "$1: check exits 1 at $np ranks" [ $rc -eq 1 ]
    check "$1: check names the source, model, condition and image" \
      sh -c "printf '%s' \"\$1\" | grep -q 'source Syn, model [^,]*, condition [^,]*, image [^:]*: $5'" _ "$out"
    check "$1: check counts one damaged record" sh -c "printf '%s' \"\$1\" | grep -q ': 1 damaged'" _ "$out"
    [ "${6:-bounds}" = bounds ] || continue
    err=$(pb $np 1 bounds "$WORK/bad.h5" -o "$WORK/b$np" 2>&1); rc=$?
    check "$1: bounds refuses the store at $np ranks" [ $rc -eq 1 ]
    check "$1: bounds names the damaged record" \
      sh -c "printf '%s' \"\$1\" | grep -q 'invalid record: source Syn, model .*: $5'" _ "$err"
    check "$1: bounds leaves no output" [ ! -e "$WORK/b$np/results.h5" ]
  done
  out=$(pb 1 1 export "$WORK/bad.h5" -o "$WORK/bad.csv" 2>&1); rc=$?
  check "$1: export refuses the store" [ $rc -eq 1 ]
  check "$1: export writes no CSV" [ ! -e "$WORK/bad.csv" ]
}
damage "class out of range" /sources/Syn/pred 0 999 'predicted class 999 outside \[0, 20)'
damage "negative class" /sources/Syn/pred 5 -3 'predicted class -3 outside \[0, 20)'
damage "max probability above 1" /sources/Syn/smax 7 1.5 'max probability 1.5 outside \[0, 1\]'
damage "NaN probability" /sources/Syn/ptrue 7 nan 'true-class probability nan outside \[0, 1\]'
damage "top-k class out of range" /sources/Syn/topk_class 4 77 'top-[0-9] class 77 outside \[0, 20)' none

cp "$WORK/good.h5" "$WORK/flip.h5"
"$H5POKE" --flip "$WORK/flip.h5" /sources/ES/smax
out=$(pb 2 1 check "$WORK/flip.h5" 2>&1); rc=$?
check "flipped bit: check exits 1" [ $rc -eq 1 ]
check "flipped bit: check names the row whose chunk fails its checksum" \
  sh -c "printf '%s' \"\$1\" | grep -q 'source ES, model [^,]*, condition [^:]*: records cannot be read (a chunk fails its checksum'" _ "$out"
err=$(pb 2 1 bounds "$WORK/flip.h5" -o "$WORK/bf" 2>&1); rc=$?
check "flipped bit: bounds fails" [ $rc -eq 1 ]
check "flipped bit: bounds says the records are damaged" \
  sh -c "printf '%s' \"\$1\" | grep -q \"cannot read records 'smax' of source ES (damaged file\"" _ "$err"

# a `topk` attribute that disagrees with the datasets, behind a valid checksum of the root's attributes (else
# that checksum names it first, below)
cp "$WORK/good.h5" "$WORK/topk.h5"
"$H5POKE" --attr "$WORK/topk.h5" / topk 5
"$H5POKE" --digest "$WORK/topk.h5" /
err=$(pb 1 1 bounds "$WORK/topk.h5" -o "$WORK/bt" 2>&1); rc=$?
check "topk attribute disagreeing with the datasets: bounds fails" [ $rc -eq 1 ]
err=$(pb 1 1 export "$WORK/topk.h5" -o "$WORK/topk.csv" 2>&1); rc=$?
check "topk attribute disagreeing with the datasets: export fails" [ $rc -eq 1 ]
check "topk attribute disagreeing: the message names the shapes" \
  sh -c "printf '%s' \"\$1\" | grep -q \"records 'topk_class' of source Syn have 4 dimensions .* but the metadata says\"" _ "$err"

# --- metadata checksums (issue 47, item 6; docs/store.md, "Integrity").  Each change below breaks no rule
# of the metadata (a label still below 20 classes, a split code still 0 or 1, names still valid and unique), so
# before the checksums `check` passed every one and bounds computed from it.
out=$(pb 1 1 check "$WORK/good.h5")
check "a good store: check says its metadata match their checksums (4 + 5 per source x 6 sources + 2 label-set datasets x ES, Diverse)" \
  sh -c "printf '%s' \"\$1\" | grep -qx 'metadata: 38 objects match their checksums (XXH3-128)'" _ "$out"
# meta_damage DESCRIPTION OBJECT-NAMED WHAT H5POKE-ARGUMENTS... (the store is the argument after the option)
meta_damage() {
  local d=$1 obj=$2 what=$3 op=$4 np
  shift 4
  cp "$WORK/good.h5" "$WORK/meta.h5"
  "$H5POKE" "$op" "$WORK/meta.h5" "$@" > /dev/null || { not_ok "$d: h5poke"; return; }
  for np in 1 2; do
    out=$(pb $np 1 check "$WORK/meta.h5" 2>&1); rc=$?
    check "$d: check exits 1 at $np ranks" [ $rc -eq 1 ]
    check "$d: check names $obj" sh -c "printf '%s' \"\$1\" | grep -q '^metadata: $obj: $what'" _ "$out"
    check "$d: check reads no record" sh -c "printf '%s' \"\$1\" | grep -q 'records not checked'" _ "$out"
  done
  err=$(pb 2 1 bounds "$WORK/meta.h5" -o "$WORK/bm" 2>&1); rc=$?
  check "$d: bounds refuses the store" [ $rc -eq 1 ]
  check "$d: bounds names $obj" \
    sh -c "printf '%s' \"\$1\" | grep -q 'meta.h5: damaged metadata: $obj: $what'" _ "$err"
  check "$d: bounds leaves no output" [ ! -e "$WORK/bm/results.h5" ]
}
changed='values do not match their checksum'
meta_damage "a flipped bit in a label (0 -> 1)" sources/Syn/label "$changed" --flip /sources/Syn/label 0 0
meta_damage "a flipped bit in a split code (0 <-> 1)" sources/Syn/split "$changed" --flip /sources/Syn/split 0 0
meta_damage "a flipped bit in an image id (syn-001 -> ryn-001)" sources/Syn/image_id "$changed" \
  --flip /sources/Syn/image_id 0 0
meta_damage "a flipped bit in a condition name (fog-2 -> gog-2)" sources/Syn/condition "$changed" \
  --flip /sources/Syn/condition 8 0
meta_damage "a flipped bit in a model group (alpha -> \`lpha)" models/group "$changed" --flip /models/group 0 0
meta_damage "source_names cut to 2 entries" source_names "$changed" --truncate /source_names 2
meta_damage "n_classes 20 -> 21" "the attributes of sources/Syn" "$changed" --attr /sources/Syn n_classes 21
meta_damage "the root's topk 3 -> 0" "the attributes of the root" "$changed" --attr / topk 0
meta_damage "a checksum deleted" models/id "no checksum (attribute xxh3_128)" --attr-del /models/id xxh3_128
# roles are rewritten in place by `roles --set` and carry no checksum; a bit flipped in their NUL padding
# (role 0 "synthetic", width 6 + 16 + 1 = 23) is refused as what it is
cp "$WORK/good.h5" "$WORK/pad.h5"
"$H5POKE" --attr-flip "$WORK/pad.h5" / roles 20 0
err=$(pb 1 1 check "$WORK/pad.h5" 2>&1); rc=$?
check "a flipped bit in a role's padding: check exits 1" [ $rc -eq 1 ]
check "a flipped bit in a role's padding: named" sh -c "printf '%s' \"\$1\" | grep -q \
  \"pad.h5: damaged metadata: the role of source Syn in attribute 'roles' has bytes after its end\"" _ "$err"
# a store of schema 1 has no checksums: check says so; roles --set makes it schema 2, with them
cp "$WORK/good.h5" "$WORK/v1.h5"
"$H5POKE" --attr "$WORK/v1.h5" / schema_version 1
"$H5POKE" --attr-del "$WORK/v1.h5" / roles
for obj in / /models/id /models/group /source_names; do "$H5POKE" --attr-del "$WORK/v1.h5" $obj xxh3_128; done
# label sets are schema 3's: a schema-1 store holds none
for obj in ES/label_set_offsets ES/label_set_ids Diverse/label_set_offsets Diverse/label_set_ids; do
  "$H5POKE" --unlink "$WORK/v1.h5" "/sources/$obj"
done
for src in Syn ES Diverse Syn-B TTA Syn-B5; do
  for obj in "" /image_id /label /split /condition; do "$H5POKE" --attr-del "$WORK/v1.h5" "/sources/$src$obj" xxh3_128; done
done
out=$(pb 1 1 check "$WORK/v1.h5" 2>&1); rc=$?
check "schema 1: check passes" [ $rc -eq 0 ]
check "schema 1: check says the metadata are not checksummed" \
  sh -c "printf '%s' \"\$1\" | grep -qx 'metadata: not checksummed (a schema-1 store)'" _ "$out"
pb 1 1 roles "$WORK/v1.h5" --set Syn-B5=extra:Syn-B > /dev/null
out=$(pb 1 1 check "$WORK/v1.h5" 2>&1); rc=$?
check "schema 1 given roles: check passes" [ $rc -eq 0 ]
check "schema 1 given roles: its metadata now match their checksums (4 + 5 per source x 6 sources)" \
  sh -c "printf '%s' \"\$1\" | grep -qx 'metadata: 34 objects match their checksums (XXH3-128)'" _ "$out"
"$H5POKE" --flip "$WORK/v1.h5" /sources/Syn/label 0 0
out=$(pb 1 1 check "$WORK/v1.h5" 2>&1); rc=$?
check "schema 1 given roles: a flipped label is named" \
  sh -c "printf '%s' \"\$1\" | grep -q '^metadata: sources/Syn/label: $changed'" _ "$out"

# --- structural invariants (issue 47, item 7), behind valid checksums (h5poke --digest writes the documented
# form), as a store written by another program could have them
# structure DESCRIPTION MESSAGE H5POKE-ARGUMENTS... (then the object's checksum is written again)
structure() {
  local d=$1 msg=$2 op=$3 np
  shift 3
  cp "$WORK/good.h5" "$WORK/st.h5"
  "$H5POKE" "$op" "$WORK/st.h5" "$@" > /dev/null || { not_ok "$d: h5poke"; return; }
  "$H5POKE" --digest "$WORK/st.h5" "$1" || { not_ok "$d: h5poke --digest"; return; }
  for np in 1 2; do
    err=$(pb $np 1 check "$WORK/st.h5" 2>&1); rc=$?
    check "$d: check exits 1 at $np ranks" [ $rc -eq 1 ]
    check "$d: check names the store and the fault" \
      sh -c "printf '%s' \"\$1\" | grep -qF \"pairbound check: error: $WORK/st.h5: \$2\"" _ "$err" "$msg"
  done
  err=$(pb 2 1 bounds "$WORK/st.h5" -o "$WORK/bs" 2>&1); rc=$?
  check "$d: bounds refuses the store" [ $rc -eq 1 ]
  check "$d: bounds names the fault" sh -c "printf '%s' \"\$1\" | grep -qF \"\$2\"" _ "$err" "$msg"
  check "$d: bounds leaves no output" [ ! -e "$WORK/bs/results.h5" ]
}
structure "a model id twice" "invalid store: model id 'm-a1' twice (model ids 0 and 1)" --str /models/id 1 m-a1
structure "a condition name twice" "invalid store: source Syn: condition 'fog-2' twice (conditions 1 and 2)" \
  --str /sources/Syn/condition 2 fog-2
structure "a second clean condition" \
  "invalid store: source Syn: a second condition named 'clean' (conditions 0 and 2): a source has exactly one" \
  --str /sources/Syn/condition 2 clean
structure "an image id twice" "invalid store: source Syn: image id 'syn-001' twice (image ids 0 and 1)" \
  --str /sources/Syn/image_id 1 syn-001
structure "a source name twice" "invalid store: source name 'Syn' twice (source names 0 and 1)" \
  --str /source_names 1 Syn
structure "topk 0 beside top-k lists" "source Syn has top-k lists 'topk_class', but the root attribute topk is 0" \
  --attr / topk 0
# roles carry no checksum: a role naming no source (extra:Syn-B with one bit flipped: byte 5 x 23 + 10)
cp "$WORK/good.h5" "$WORK/role.h5"
"$H5POKE" --attr-flip "$WORK/role.h5" / roles 125 0
err=$(pb 1 1 check "$WORK/role.h5" 2>&1); rc=$?
check "a role naming no source: check exits 1" [ $rc -eq 1 ]
check "a role naming no source: named" \
  sh -c "printf '%s' \"\$1\" | grep -qF 'role.h5: invalid store: source Syn-B5: role extra:Syn-C names no source'" _ "$err"
# which optional datasets a store holds is checksummed (schema 3): removing a source's label sets, or every
# source's summaries, is damage to the source's or the root's attributes, not a store without them
cp "$WORK/good.h5" "$WORK/nosets.h5"
cp "$WORK/good.h5" "$WORK/nosum.h5"
"$H5POKE" --unlink "$WORK/nosets.h5" /sources/ES/label_set_offsets
"$H5POKE" --unlink "$WORK/nosets.h5" /sources/ES/label_set_ids
for src in Syn ES Diverse Syn-B TTA Syn-B5; do
  "$H5POKE" --unlink "$WORK/nosum.h5" "/sources/$src/entropy"
  "$H5POKE" --unlink "$WORK/nosum.h5" "/sources/$src/collision"
done
out=$(pb 1 1 check "$WORK/nosets.h5" 2>&1); rc=$?
check "label sets removed from a source: damaged (exit 1)" [ $rc -eq 1 ]
check "label sets removed from a source: the source's attributes named" \
  sh -c "printf '%s' \"\$1\" | grep -q '^metadata: the attributes of sources/ES: values do not match their checksum'" _ "$out"
out=$(pb 1 1 check "$WORK/nosum.h5" 2>&1); rc=$?
check "summaries removed: damaged (exit 1)" [ $rc -eq 1 ]
check "summaries removed: the root's attributes named" \
  sh -c "printf '%s' \"\$1\" | grep -q '^metadata: the attributes of the root: values do not match their checksum'" _ "$out"
finish
