# docs/coverage.md lists every numbered table, figure and appendix analysis of
# seeds 000, 001 and 002 with the command and output files that produce it.  This test runs
# the reference run the document names (inputs/run.ini with synth = small) and
# checks every output a produced or partial row claims, running the
# standalone commands for `standalone:` outputs; and it checks the rows against
# the items the seed text numbers, so that no item can silently drop out.
. "$TOP_SRCDIR/tests/mpi/common.sh"

DOC=${COVERAGE_DOC:-$TOP_SRCDIR/docs/coverage.md}
ITEM_RE='^(Table [0-9]+|Figure [0-9]+|Appendix [A-Z]|[A-Z]\.[0-9]+)$'

# the rows: item <TAB> status <TAB> command <TAB> outputs (cells trimmed); a
# row with other than five cells is printed with status "malformed"
awk -F'|' -v re="$ITEM_RE" '
  function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
  /^\|/ {
    item = trim($2)
    if (item !~ re) next
    if (NF != 7) { print item "\tmalformed\t\t"; next }
    print item "\t" trim($4) "\t" trim($5) "\t" trim($6)
  }' "$DOC" > "$WORK/rows.tsv"
check "docs/coverage.md has rows" test -s "$WORK/rows.tsv"

# the reference run, as docs/coverage.md gives it: the small store, then the
# default pipeline on it (--store names a store that must exist)
sed 's/^synth = paper .*/synth = small/' "$TOP_SRCDIR/inputs/run.ini" > "$WORK/run.ini"
check "the reference config sets synth = small" grep -q '^synth = small' "$WORK/run.ini"
pb 1 2 synth --scale small -o "$WORK/small.h5" > /dev/null
pb 1 2 run "$WORK/run.ini" --store "$WORK/small.h5" -o "$WORK/run" > /dev/null
check "pairbound run on the small configuration exits 0" test $? -eq 0

n_std=0
while IFS="$(printf '\t')" read -r item status command outputs; do
  case "$status" in
    produced | partial) ;;
    "not produced") continue ;;
    *) not_ok "$item: status '$status' is not produced, partial or not produced"; continue ;;
  esac
  files=$(printf '%s\n' "$outputs" | grep -o '`[^`]*`' | tr -d '`')
  if [ -z "$files" ]; then
    case "$command" in
      'rows '* | 'statement:'*) ok "$item: $command" ;;
      *) not_ok "$item: $status but lists no output file" ;;
    esac
    continue
  fi
  base=$WORK/run
  if printf '%s\n' "$files" | grep -q '^standalone:'; then
    # the row's command, the one in backticks that starts with pairbound
    cmd=$(printf '%s\n' "$command" | grep -o '`pairbound [^`]*`' | head -1 | tr -d '`')
    case "$cmd" in
      'pairbound '*' STORE '*'-o OUT') ;;
      *) not_ok "$item: standalone outputs need a command 'pairbound ... STORE ... -o OUT', got '$cmd'"; continue ;;
    esac
    n_std=$((n_std + 1))
    base=$WORK/standalone$n_std
    args=${cmd#pairbound }
    args=${args/STORE/$WORK/small.h5}
    args=${args% -o OUT}
    # shellcheck disable=SC2086 # the documented command line, split into words
    pb 1 2 $args -o "$base" > /dev/null < /dev/null
    check "$item: '$cmd' exits 0" test $? -eq 0
  fi
  for f in $files; do
    f=${f#standalone:}
    if [ -s "$base/$f" ]; then ok "$item: $f"
    else not_ok "$item: $f is not produced (missing or empty under ${base#"$WORK"/})"; fi
  done
done < "$WORK/rows.tsv"

# items_match SEED ITEMS DOC_ITEMS ROWS: every numbered item of seed SEED
# (file ITEMS) has a row of the document (DOC_ITEMS) and every row is one
items_match() {
  local missing extra
  missing=$(comm -23 "$2" "$3" | tr '\n' ',' | sed 's/,$//; s/,/, /g')
  extra=$(comm -13 "$2" "$3" | tr '\n' ',' | sed 's/,$//; s/,/, /g')
  check "every item of seed $1 has a row${missing:+ (missing: $missing)}" test -z "$missing"
  check "every $4 is an item of seed $1${extra:+ (not in the seed: $extra)}" test -z "$extra"
}
# numbered DOC_ITEMS PREFIX LABEL: without the seed's text, its tables and
# figures (rows "PREFIXTable N") are numbered 1..max without a gap
numbered() {
  local kind max gaps
  for kind in Table Figure; do
    sed -nE "s/^$2$kind ([0-9]+)$/\1/p" "$1" | sort > "$WORK/nums"
    max=$(sort -n "$WORK/nums" | tail -1)
    gaps=$(seq 1 "${max:-0}" | sort | comm -23 - "$WORK/nums" | sort -n | tr '\n' ' ')
    check "$3${kind}s are numbered 1..${max:-0} without a gap${gaps:+ (missing: $gaps)}" test -n "$max" -a -z "$gaps"
  done
}

# every row names an item once
dups=$(cut -f1 "$WORK/rows.tsv" | sort | uniq -d | tr '\n' ' ')
check "no item listed twice${dups:+ (twice: $dups)}" test -z "$dups"
cut -f1 "$WORK/rows.tsv" | sort -u > "$WORK/doc_items"

# the seed's numbered items
SEED=${PAIRBOUND_SEED000:-}
if [ -z "$SEED" ]; then
  for s in "$TOP_SRCDIR"/../shared/seeds/000_*.txt; do [ -f "$s" ] && SEED=$s; done
fi
if [ -n "$SEED" ] && [ -f "$SEED" ]; then
  { grep -oE '(Table|Figure) [0-9]+' "$SEED"
    sed -nE 's/^Appendix ([A-Z]) .*/Appendix \1/p' "$SEED"
    sed -nE 's/^([A-Z]\.[0-9]+) [A-Z].*/\1/p' "$SEED"
  } | sort -u > "$WORK/seed_items"
  check "seed 000 numbers tables, figures and appendix sections" test "$(wc -l < "$WORK/seed_items")" -gt 50
  items_match 000 "$WORK/seed_items" "$WORK/doc_items" row
else
  echo "# seed 000 text not found (PAIRBOUND_SEED000, ../shared/seeds): checking the numbering only"
  numbered "$WORK/doc_items" "" ""
fi

# seed_rows ID ITEM_RE: the section of seed ID (docs/coverage.md, "Seed 001", "Seed 002"): rows named
# "ID ITEM" (matching ITEM_RE), whose outputs are files of the reference run above or, as wID:FILE, of the
# seed's reference commands the document lists ("    wID$ pairbound ..."), run here in one directory in
# their order; its items are left in $WORK/doc_itemsID
seed_rows() {
  local id=$1 re=$2 c item status command outputs files f path dups
  awk -F'|' -v re="$re" '
    function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
    /^\|/ {
      item = trim($2)
      if (item !~ re) next
      if (NF != 7) { print item "\tmalformed\t\t"; next }
      print item "\t" trim($4) "\t" trim($5) "\t" trim($6)
    }' "$DOC" > "$WORK/rows$id.tsv"
  check "docs/coverage.md has seed-$id rows" test -s "$WORK/rows$id.tsv"
  sed -n "s/^    w$id\\\$ pairbound //p" "$DOC" > "$WORK/w$id.commands"
  check "docs/coverage.md lists the seed-$id reference commands" test -s "$WORK/w$id.commands"
  mkdir -p "$WORK/w$id"
  while IFS= read -r c; do
    # shellcheck disable=SC2086 # the documented command line (a redirection included), run as written
    (cd "$WORK/w$id" && eval "pb 1 2 $c" < /dev/null > /dev/null)
    check "seed $id: 'pairbound $c' exits 0" test $? -eq 0
  done < "$WORK/w$id.commands"
  while IFS="$(printf '\t')" read -r item status command outputs; do
    case "$status" in
      produced | partial) ;;
      "not produced") continue ;;
      *) not_ok "$item: status '$status' is not produced, partial or not produced"; continue ;;
    esac
    files=$(printf '%s\n' "$outputs" | grep -o '`[^`]*`' | tr -d '`')
    if [ -z "$files" ]; then
      case "$command" in
        'rows '* | 'statement:'*) ok "$item: $command" ;;
        *) not_ok "$item: $status but lists no output file" ;;
      esac
      continue
    fi
    for f in $files; do
      case "$f" in
        "w$id:"*) path=$WORK/w$id/${f#w"$id":} ;;
        *) path=$WORK/run/$f ;;
      esac
      if [ -s "$path" ]; then ok "$item: $f"
      else not_ok "$item: $f is not produced (missing or empty)"; fi
    done
  done < "$WORK/rows$id.tsv"
  dups=$(cut -f1 "$WORK/rows$id.tsv" | sort | uniq -d | tr '\n' ' ')
  check "seed $id: no item listed twice${dups:+ (twice: $dups)}" test -z "$dups"
  cut -f1 "$WORK/rows$id.tsv" | sort -u > "$WORK/doc_items$id"
}
# seed_text ID: the seed's text ($PAIRBOUND_SEEDID, else ../shared/seeds/ID_*.txt beside the source tree), or ""
seed_text() {
  local s t
  eval "t=\${PAIRBOUND_SEED$1:-}"
  if [ -z "$t" ]; then
    for s in "$TOP_SRCDIR"/../shared/seeds/"$1"_*.txt; do [ -f "$s" ] && t=$s; done
  fi
  [ -n "$t" ] && [ -f "$t" ] && echo "$t"
}

seed_rows 002 '^002 (Table [0-9]+|Figure [0-9]+|Appendix [A-Z]|[A-Z]\.[0-9]+|[0-9]\.[0-9]+)$'
SEED2=$(seed_text 002)
if [ -n "$SEED2" ]; then
  # its tables and figures, appendices and numbered sections (x.y of the body, X.n of the appendices)
  { grep -oE '(Table|Figure) [0-9]+' "$SEED2"
    sed -nE 's/^## Appendix ([A-Z]) .*/Appendix \1/p' "$SEED2"
    sed -nE 's/^### ([A-Z]\.[0-9]+|[0-9]\.[0-9]+) .*/\1/p' "$SEED2"
  } | sed 's/^/002 /' | sort -u > "$WORK/seed_items002"
  check "seed 002 numbers tables, figures and sections" test "$(wc -l < "$WORK/seed_items002")" -gt 30
  items_match 002 "$WORK/seed_items002" "$WORK/doc_items002" "seed-002 row"
else
  echo "# seed 002 text not found (PAIRBOUND_SEED002, ../shared/seeds): checking the numbering only"
  numbered "$WORK/doc_items002" "002 " "seed 002: "
fi

# seed 001 names only some of its tables and figures (a summary of the paper), so without its text
# there is no numbering to check; with it, every table, figure, proposition and theorem it names,
# every numbered section of its body (headings "N Title", "N.M Title"), every appendix (headings
# "X Title") and appendix section ("X.n Title") has exactly one row
seed_rows 001 '^001 (Table [0-9]+|Figure [0-9]+|Proposition [0-9]+|Theorem [0-9]+|Appendix [A-Z]|[A-Z]\.[0-9]+|[0-9]+(\.[0-9]+)?)$'
SEED1=$(seed_text 001)
if [ -n "$SEED1" ]; then
  { grep -oE '(Table|Figure|Proposition|Theorem) [0-9]+' "$SEED1"
    sed -nE 's/^([A-Z]) [A-Z].*/Appendix \1/p' "$SEED1"
    sed -nE 's/^([A-Z]\.[0-9]+) [A-Z].*/\1/p' "$SEED1"
    sed -nE 's/^([0-9]+(\.[0-9]+)?) [A-Z].*/\1/p' "$SEED1"
  } | sed 's/^/001 /' | sort -u > "$WORK/seed_items001"
  check "seed 001 names tables, figures, results and sections" test "$(wc -l < "$WORK/seed_items001")" -gt 50
  items_match 001 "$WORK/seed_items001" "$WORK/doc_items001" "seed-001 row"
else
  echo "# seed 001 text not found (PAIRBOUND_SEED001, ../shared/seeds): its rows are checked, not their list"
fi
finish
