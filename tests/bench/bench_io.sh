#!/bin/bash
# Records in and out at paper scale (make bench; issue 41): export at 1 rank
# x 2 threads and 2 ranks, ingest of the exported CSV as one file, as one
# file per model (44) and under 2 ranks, an append of one model (468,000
# rows) into the 44-model store, and ingest's peak memory on a CSV ten times
# the paper's (BIG=10: the CSV ten times, each copy's models renamed; 45 GB
# of disk). Medians of
# REPEAT runs: wall, MB/s of CSV, M rows/s, peak RSS.
#   usage: bench_io.sh PAIRBOUND STORE [WORKDIR]
set -eu
PB=$1
STORE=$2
REPEAT=${REPEAT:-3}
W=${3:-$(mktemp -d "${TMPDIR:-/tmp}/pbbenchio.XXXXXX")}
[ -n "${3:-}" ] || trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml="${OMPI_MCA_pml:-ob1}"

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# io NAME BYTES ROWS NP THREADS [PREP] -- ARGS...: REPEAT runs of pairbound ARGS (after the shell
# command PREP and a sync, untimed: a run does not pay for the write-back of the gigabytes the run
# before it or PREP left dirty), medians of wall and peak RSS; BYTES of CSV and ROWS moved; the
# ranks bound as BIND says (mpirun --bind-to, default none)
io() {
  local name=$1 bytes=$2 rows=$3 np=$4 th=$5 prep=$6
  shift 7
  : > "$W/t"
  for i in $(seq "$REPEAT"); do
    eval "$prep"
    sync
    OMP_NUM_THREADS=$th /usr/bin/time -f '%e %M' -o "$W/one" \
      mpirun --oversubscribe --bind-to "${BIND:-none}" -np "$np" "$PB" -v 0 "$@" > /dev/null 2> "$W/log" || { cat "$W/log"; exit 1; }
    cat "$W/one" >> "$W/t"
  done
  local wall rss
  wall=$(awk '{print $1}' "$W/t" | median)
  rss=$(awk '{print $2}' "$W/t" | median)
  printf '%-34s %2d x %d  %8.2f s  %8.1f MB/s  %6.2f M rows/s  %6.0f MB peak (per rank)\n' "$name" "$np" "$th" "$wall" \
    "$(awk -v b="$bytes" -v w="$wall" 'BEGIN {print b / w / 1e6}')" \
    "$(awk -v r="$rows" -v w="$wall" 'BEGIN {print r / w / 1e6}')" "$(awk -v k="$rss" 'BEGIN {print k / 1024}')"
}

"$PB" -v 0 export "$STORE" -o "$W/p.csv"
BYTES=$(stat -c %s "$W/p.csv")
ROWS=$(($(wc -l < "$W/p.csv") - 1))
echo "records in and out: the paper CSV, $ROWS rows, $BYTES bytes"
# the floors the writers here stand on: the same bytes written by dd into the
# work directory's file system through the page cache (no sync; the store
# writers) and with O_DIRECT (export, docs/csv.md), medians of REPEAT; on a
# virtual machine whose fresh memory pages are slow to first touch the first
# alone can take several seconds, and varies from run to run
floor() { # floor NAME DD-FLAGS...
  local name=$1
  shift
  : > "$W/t"
  for i in $(seq "$REPEAT"); do
    /usr/bin/time -f '%e' -o "$W/one" dd if=/dev/zero of="$W/floor" bs=4M count=$((BYTES / 4194304)) "$@" 2> /dev/null ||
      echo 0 > "$W/one"
    cat "$W/one" >> "$W/t"
    rm -f "$W/floor"
  done
  printf '%-34s          %8.2f s  %8.1f MB/s  (dd of the CSV'"'"'s bytes)\n' "$name" \
    "$(median < "$W/t")" "$(awk -v b="$BYTES" -v w="$(median < "$W/t")" 'BEGIN {print (w > 0 ? b / w / 1e6 : 0)}')"
}
floor "write floor, page cache"
floor "write floor, O_DIRECT" oflag=direct
io "export" "$BYTES" "$ROWS" 1 2 : -- export "$STORE" -o "$W/e.csv" --force
io "export 2 ranks" "$BYTES" "$ROWS" 2 1 : -- export "$STORE" -o "$W/e.csv" --force
io "ingest (one file)" "$BYTES" "$ROWS" 1 2 : -- ingest "$W/p.csv" -o "$W/i.h5" --force
# both passes shared by the ranks (docs/csv.md, "Ranks"); then each rank bound to a core, as ranks on
# nodes of their own are: rank 0 cannot take the other's core for what it reads alone
io "ingest (one file) 2 ranks" "$BYTES" "$ROWS" 2 1 : -- ingest "$W/p.csv" -o "$W/i.h5" --force
BIND=core io "ingest 2 ranks, a core each" "$BYTES" "$ROWS" 2 1 : -- ingest "$W/p.csv" -o "$W/i.h5" --force
mkdir -p "$W/models"
awk -F, -v dir="$W/models" 'NR == 1 { h = $0; next }
  !($1 in f) { f[$1] = sprintf("%s/model%03d.csv", dir, n++); print h > f[$1]; print f[$1] > (dir "/list") }
  { print > f[$1] }' "$W/p.csv"
# shellcheck disable=SC2046 # the list of files
io "ingest (44 files, one per model)" "$BYTES" "$ROWS" 1 2 : -- ingest $(cat "$W/models/list") -o "$W/i.h5" --force
# one more model: the last model's rows under a new name
awk -F, -v OFS=, 'NR == 1 {print; next} {$1 = "appended-model"; print}' "$(tail -1 "$W/models/list")" > "$W/new.csv"
NB=$(stat -c %s "$W/new.csv")
NR=$(($(wc -l < "$W/new.csv") - 1))
io "append (one model)" "$NB" "$NR" 1 2 "cp '$STORE' '$W/a.h5'" -- ingest "$W/new.csv" --append -o "$W/a.h5"
# BIG times the paper's rows: the CSV read as BIG files, each copy's models renamed
if [ -n "${BIG:-}" ]; then
  for k in $(seq "$BIG"); do
    awk -F, -v OFS=, -v k="$k" 'NR == 1 {print; next} {$1 = $1 "-" k; print}' "$W/p.csv" > "$W/big$k.csv"
  done
  REPEAT=1 io "ingest ($BIG x the paper's rows)" $((BIG * BYTES)) $((BIG * ROWS)) 1 2 : -- ingest "$W"/big*.csv -o "$W/b.h5" --force
  rm -f "$W"/big*.csv "$W/b.h5"
fi
rm -rf "$W/p.csv" "$W/e.csv" "$W/i.h5" "$W/models" "$W/new.csv" "$W/a.h5"
