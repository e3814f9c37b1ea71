#!/bin/bash
# make bench-scale: the scale path of docs/scaling.md.  Builds, in TMPDIR, a
# store 10 times the paper (synth --scale-factor, default 10x1: 440 models,
# 91 M paired records, 10.7 GB with the top-5 lists) and the ImageNet-C-shaped store
# (inputs/imagenet75.ini: 50,000 evaluation images x 1,000 classes, 20 models x
# 75 conditions, 75 M paired records, 1.9 GB), then runs bounds, screen and
# verify on each at 1, 2 and 4 ranks (oversubscribed on a small machine) and
# prints wall seconds, nanoseconds per paired record (wall x ranks / records,
# so equal numbers mean perfect scaling), and peak memory of every rank
# (/usr/bin/time around each rank under mpirun).
#   usage: bench_scale.sh PAIRBOUND [SRCDIR]
# Environment: THREADS (per rank, default 1), RANKS (default "1 2 4"),
# SCALE_FACTOR (default 10x1), STORES (default "paper10 imagenet75": either or
# both), KEEP=1 keeps the stores (printed paths).
set -eu
PB=$1
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${2:-$(cd "$HERE/../.." && pwd)}
THREADS=${THREADS:-1}
RANKS=${RANKS:-1 2 4}
FACTOR=${SCALE_FACTOR:-10x1}
STORES=${STORES:-paper10 imagenet75}
W=$(mktemp -d "${TMPDIR:-/tmp}/pbscale.XXXXXX")
[ -n "${KEEP:-}" ] || trap 'rm -rf "$W"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_pml="${OMPI_MCA_pml:-ob1}"

# both stores and a margin for the outputs: 10.7 GB (top-5 lists) + 1.9 GB + 1 GB
need_kb=$((13600 * 1024))
free_kb=$(df -Pk "$W" | awk 'NR == 2 {print $4}')
if [ "$free_kb" -lt "$need_kb" ]; then
  echo "bench-scale: $W has $((free_kb / 1024)) MB free; the two stores need about $((need_kb / 1024)) MB (set TMPDIR)" >&2
  exit 1
fi

# per-rank wrapper: wall and peak resident memory of each rank, one line each
cat > "$W/rank.sh" << 'EOF'
#!/bin/sh
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${SLURM_PROCID:-0}}}
exec /usr/bin/time -f "$r %e %M" -o "$PBRANK_OUT.$r" "$@"
EOF
chmod +x "$W/rank.sh"

echo "pairbound bench-scale: $(nproc) cores, $(git -C "$SRC" rev-parse --short HEAD 2> /dev/null || echo unknown), $THREADS thread(s) per rank, $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"

# store NAME ARGS...: synth a store (timed) and print its dimensions
store() {
  local name=$1
  shift
  local t0 t1
  t0=$(date +%s.%N)
  OMP_NUM_THREADS=2 mpirun --oversubscribe --bind-to none -np 2 "$PB" -v 0 synth "$@" -o "$W/$name.h5" > "$W/$name.txt"
  t1=$(date +%s.%N)
  awk -v n="$name" -v t="$t1 - $t0" -v s="$(stat -c %s "$W/$name.h5")" '
    $1 == "models" {m = $2} $1 == "cells" {c = $2} $1 == "paired_records" {p = $2}
    END {split(t, a, " - "); printf "store %s: %d models, %d cells, %.1f M paired records, %.2f GB; synth %.1f s at 2 ranks\n",
      n, m, c, p / 1e6, s / 1e9, a[1] - a[2]}' "$W/$name.txt"
}

# run STORE RECORDS STAGE ARGS...: the stage at every rank count in $RANKS
run() {
  local st=$1 recs=$2 stage=$3 np
  shift 3
  for np in $RANKS; do
    rm -rf "$W/out" "$W/mem".*
    local t0 t1 rc=0
    t0=$(date +%s.%N)
    PBRANK_OUT="$W/mem" OMP_NUM_THREADS=$THREADS mpirun --oversubscribe --bind-to none -x PBRANK_OUT -np "$np" \
      "$W/rank.sh" "$PB" -v 0 "$stage" "$W/$st.h5" -o "$W/out" "$@" > /dev/null 2> "$W/err" || rc=$?
    t1=$(date +%s.%N)
    if [ "$rc" -ne 0 ]; then
      echo "  $stage on $st at $np ranks FAILED (exit $rc):"
      tail -3 "$W/err"
      continue
    fi
    cat "$W/mem".* | sort -n | awk -v st="$st" -v g="$stage" -v np="$np" -v th="$THREADS" -v r="$recs" -v t="$t1 - $t0" '
      {mem = mem sprintf(" %.0f", $3 / 1024); if ($3 > peak) peak = $3}
      END {split(t, a, " - "); w = a[1] - a[2];
        printf "  %-7s %-10s %d x %d: %7.2f s wall, %6.1f ns per paired record per rank, peak MB per rank:%s\n",
          g, st, np, th, w, w * np / r * 1e9, mem}'
  done
}

case " $STORES " in *" paper10 "*)
  store paper10 --scale-factor "$FACTOR"
  p10=$(awk '$1 == "paired_records" {print $2}' "$W/paper10.txt")
  run paper10 "$p10" bounds
  run paper10 "$p10" screen
  run paper10 "$p10" verify
  [ -n "${KEEP:-}" ] || rm -f "$W/paper10.h5" ;;
esac
case " $STORES " in *" imagenet75 "*)
  store imagenet75 --config "$SRC/inputs/imagenet75.ini"
  i75=$(awk '$1 == "paired_records" {print $2}' "$W/imagenet75.txt")
  run imagenet75 "$i75" bounds
  # ImageNet-C has one source: it is both target and probe (U from severity 3 of five corruptions)
  run imagenet75 "$i75" screen --targets ImageNet-C \
    --probe ImageNet-C:gaussian_noise_3,defocus_blur_3,snow_3,contrast_3,jpeg_3
  # verify's classes of 50 records per side are exact LPs (docs/verify.md): a sample of cells
  run imagenet75 "$i75" verify --cells sample --sample 40 ;;
esac
[ -n "${KEEP:-}" ] && echo "stores kept in $W"
exit 0
