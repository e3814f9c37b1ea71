# Real class sizes (issue 18): policy --all on small cuts of inputs/cifar.ini
# (10 classes x 150 evaluation records per side) and inputs/imagenet.ini
# (100 classes x 25) gives byte-identical reports and results.h5 at 1-3 ranks
# x 1-2 threads, with Lemma 1 and Corollary 1 holding in every cell.
. "$TOP_SRCDIR/tests/mpi/common.sh"

reports="policy_bounds.tsv policy_pairs.tsv policy_selection.tsv policy_checks.tsv policy.md"
# keep two models and two conditions (continuation lines dropped); shrink as named
cut_config() { # cut_config INI SED-EXPRESSION
  sed -e '/^resnet-50 \|^vit-b16 /d' -e '/^  /d' \
    -e 's/^conditions = .*/conditions = noise-2:0.7, noise-4:0.5/' -e "$2" "$1"
}
cut_config "$TOP_SRCDIR/inputs/cifar.ini" 's/^images_per_class = .*/images_per_class = 300/;s/^dev_per_class = .*/dev_per_class = 150/' \
  > "$WORK/cifar.ini"
cut_config "$TOP_SRCDIR/inputs/imagenet.ini" 's/^classes = .*/classes = 100/' > "$WORK/imagenet.ini"
for shape in cifar imagenet; do
  pb 1 1 synth --config "$WORK/$shape.ini" --no-summary -o "$WORK/$shape.h5"
  rm -rf "$WORK"/o*
  pb 1 1 policy --all "$WORK/$shape.h5" -o "$WORK/o11"
  check "$shape: 4 cells computed" test "$(awk -F'\t' 'NR == 2 { print $1 }' "$WORK/o11/report/policy_checks.tsv")" = 4
  check "$shape: Lemma 1 residual <= 1e-10, Corollary 1 violations 0" awk -F'\t' \
    'NR == 2 { exit !($2 <= 1e-10 && $3 == 0) }' "$WORK/o11/report/policy_checks.tsv"
  ranks_identical "$reports" policy --all "$WORK/$shape.h5"
done
finish
