#!/bin/sh
# From a model evaluation to pairbound's report, on Fashion-MNIST
# (examples/fashion_mnist/README.md):
#
#   1. evaluate.py trains scikit-learn classifiers and writes their prediction
#      records, clean and perturbed, as OUT/records.csv and OUT/direct.h5;
#   2. the CSV is ingested with each source's role, both stores are checked
#      and must hold the same records;
#   3. `pairbound run` runs every stage the roles allow into OUT/run
#      (OUT/run/REPORT.md);
#   4. check.py checks the report's sections and recomputes a few bounds from
#      the records alone.
#
# usage: run.sh OUT [IMAGES [TRAIN]]    (defaults 1000 test and 4000 training images)
# environment: PAIRBOUND (default: the build in this checkout, else pairbound
# on PATH), PYTHON (default /usr/bin/python3, the interpreter Debian's
# python3-sklearn is installed for).  Exit status 0 when every step and check
# passes.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUT [IMAGES [TRAIN]]}
images=${2:-1000}
train=${3:-4000}
if [ -z "${PAIRBOUND:-}" ]; then
  if [ -x "$here/../../pairbound" ]; then PAIRBOUND=$here/../../pairbound; else PAIRBOUND=pairbound; fi
fi
if [ -z "${PYTHON:-}" ]; then
  if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi

die() { echo "run.sh: $*" >&2; exit 1; }
step() { echo "== $*"; }

# Each missing piece named with the Debian package that provides it.
command -v "$PYTHON" > /dev/null 2>&1 || die "no $PYTHON (apt-get install python3)"
for dep in numpy:python3-numpy sklearn:python3-sklearn h5py:python3-h5py xxhash:python3-xxhash; do
  "$PYTHON" -c "import ${dep%%:*}" 2> /dev/null || die "$PYTHON cannot import ${dep%%:*} (apt-get install ${dep#*:})"
done
data=/usr/share/datasets/fashion-mnist
[ -r "$data/t10k-images-idx3-ubyte.gz" ] || die "no Fashion-MNIST in $data (apt-get install dataset-fashion-mnist)"
"$PAIRBOUND" --version > /dev/null 2>&1 || die "cannot run $PAIRBOUND (build pairbound, or set PAIRBOUND)"

mkdir -p "$out"
start=$(date +%s)

step "records: $images test images, $train training images"
"$PYTHON" "$here/evaluate.py" "$out" --images "$images" --train "$train"

# A CSV has no place for roles, so ingest is told what each source is for:
# the corruption suite is the synthetic probe, the two capture sets are the
# real targets, and the natural transformations are TTA probes (the first 4
# conditions fixed).  --classes 10: Fashion-MNIST has 10 classes, whatever
# the records happen to contain.
step "ingest"
"$PAIRBOUND" ingest "$out/records.csv" -o "$out/ingested.h5" --classes 10 \
  --role fmnist-c=synthetic --role camera=real --role wild=real --role augment=natural:4

step "check both stores, compare their records"
"$PAIRBOUND" check "$out/ingested.h5"
"$PAIRBOUND" check "$out/direct.h5"
"$PAIRBOUND" export "$out/ingested.h5" -o "$out/ingested.csv"
"$PAIRBOUND" export "$out/direct.h5" -o "$out/direct.csv"
cmp "$out/ingested.csv" "$out/direct.csv" || die "the ingested and the h5py-written store hold different records"
[ "$("$PAIRBOUND" roles "$out/ingested.h5")" = "$("$PAIRBOUND" roles "$out/direct.h5")" ] ||
  die "the ingested and the h5py-written store have different roles"
"$PAIRBOUND" roles "$out/direct.h5"
records=$(date +%s)

step "pairbound run"
"$PAIRBOUND" run --store "$out/ingested.h5" -o "$out/run"
done_run=$(date +%s)

step "checks"
# With a synthetic source that shares its images with two real ones and five
# model groups, the roles allow every stage of the default pipeline.
"$PYTHON" "$here/check.py" report "$out/run/REPORT.md" \
  --allowed bounds,verify,verify.policies,policy,screen,screen.dev,screen.dev_tiers,predict,fragility
"$PYTHON" "$here/check.py" bounds "$out/records.csv" "$out/run/bounds/report/bounds.tsv"

echo "run.sh: records and stores $((records - start)) s, pairbound run $((done_run - records)) s;" \
  "report $out/run/REPORT.md"
