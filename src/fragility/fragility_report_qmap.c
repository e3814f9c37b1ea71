/* fragility.md's section of the monotone score maps (seed 001 Appendix Q,
 * Table 4; docs/fragility.md, "Monotone score maps") and its summary TSVs,
 * on rank 0 from the totals of fragility_stage_qmap.c. */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "pairbound/error.h"
#include "pairbound/fragility.h"
#include "pairbound/results.h"
#include "pairbound/table.h"
#include "pairbound/text.h"
#include "fragility_internal.h"

/* A row: keys, counts n[] and values x[] (a column's .arg says which, .slot which one). */
struct pb_fragility__qrow {
  const char *key[3];
  const int64_t *n;
  const double *x;
};
enum { PB_FQR__KEY, PB_FQR__N, PB_FQR__X };

static union pb_cell pb_fragility__qcell(const void *ctx, const struct pb_column *c)
{
  const struct pb_fragility__qrow *r = ctx;
  if (c->arg == PB_FQR__KEY) return (union pb_cell){.s = r->key[c->slot]};
  if (c->arg == PB_FQR__N) return (union pb_cell){.i = r->n[c->slot]};
  return (union pb_cell){.x = r->x[c->slot]};
}
#define PB_FQR__COL_KEY(name, k) {name, PB_COL_STR, .slot = k, .arg = PB_FQR__KEY}
#define PB_FQR__COL_N(name, i) {name, PB_COL_INT, .slot = i, .arg = PB_FQR__N}
#define PB_FQR__COL_X(name, d, i) {name, PB_COL_NUM, d, .slot = i, .arg = PB_FQR__X}

static const char *const pb_fragility__qmap_label[PB_FRAGILITY_QMAPS] = {"fitted", "sharp", "power"};

/* Table 4's counts and Q.4, Q.6, Q.7 per source, arm and map. */
static void pb_fragility__qmap_table(const struct pb_fragility_out *out, const struct pb_fragility_sum *S,
                                     struct pb_table *tb)
{
  static const struct pb_column cols[] = {
    PB_FQR__COL_KEY("source", 0), PB_FQR__COL_KEY("arm", 1), PB_FQR__COL_KEY("map", 2), PB_FQR__COL_N("models", 0),
    PB_FQR__COL_N("assignments", 1), PB_FQR__COL_N("train_bin_changes", 2), PB_FQR__COL_N("train_readout_changes", 3),
    PB_FQR__COL_N("eval_bin_changes", 4), PB_FQR__COL_N("eval_readout_changes", 5),
    PB_FQR__COL_X("max_structural_diff", 6, 0), PB_FQR__COL_N("merged_scores", 6), PB_FQR__COL_X("ece_raw", 4, 1),
    PB_FQR__COL_X("ece_mapped", 4, 2), PB_FQR__COL_X("ece_reduction", 3, 3), PB_FQR__COL_N("nll_improved", 7),
    PB_FQR__COL_N("refit_edge_changes", 8), PB_FQR__COL_X("refit_profile_change", 6, 4),
    PB_FQR__COL_X("refit_FAUC_change", 3, 5), {NULL}};
  char note[1600];
  snprintf(note, sizeof note,
           "Per arm (the stage's two folds) three strictly increasing maps of the confidence S in double precision: "
           "fitted, Platt's logistic sigma(a + b logit S) fitted on the arm's fitting part (the part that fixes its "
           "partition); sharp, sigma(%g logit S); power, S^%g. The partition's bin edges are pushed forward through "
           "the map and the readout's within-bin cuts kept. models: those whose map is defined (the fit converged "
           "with b > 0); assignments: their fitting-part (train) and held-out (rate part and part E) images; bin "
           "and readout changes: images whose bin, or bin and group, differ from the raw scores' (Table 4: zero for "
           "a map that keeps every score distinct); max_structural_diff: the largest |difference| of G_R, FAUC, "
           "selective coverage and risk, the profiles and variance laws; merged_scores: distinct raw scores that "
           "share a double after the map; ece (medians over models) and nll_improved (models whose binary NLL falls) "
           "on the rate part, held out of the fit; ece_reduction: median of (raw - mapped) / raw; refit: the "
           "readout refitted on the mapped scores (edges unlike the pushed-forward ones, the largest change of the "
           "upward profile, the largest |relative FAUC_up change|) (report/fragility_qmap.tsv).",
           PB_FRAGILITY_QMAP_SHARP_SLOPE, PB_FRAGILITY_QMAP_POWER_EXP);
  const struct pb_table_spec spec = {"Monotone score maps (Appendix Q, Table 4)", note, cols};
  pb_table_open(tb, &spec);
  for (int32_t s = 0; s < out->meta->n_sources; s++)
    for (int a = 0; a < 2; a++)
      for (int32_t k = 0; k < PB_FRAGILITY_QMAPS; k++) {
        const size_t c = ((size_t)s * 2 + (size_t)a) * PB_FRAGILITY_QMAPS + (size_t)k;
        const int64_t *n = S->qm_n + c * PB_FRAGILITY_QSUM_N;
        double x[PB_FRAGILITY_QSUM_X];
        for (int j = 0; j < PB_FRAGILITY_QSUM_X; j++) /* maxima over no model are undefined */
          x[j] = n[0] > 0 || (j >= 1 && j <= 3) ? S->qm_x[c * PB_FRAGILITY_QSUM_X + j] : NAN;
        const struct pb_fragility__qrow row = {
          {out->meta->sources[s].name, a == 0 ? "A" : "B", pb_fragility__qmap_label[k]}, n, x};
        pb_table_row(tb, &spec, pb_fragility__qcell, &row);
      }
}

/* Q.5: the pooled ties of the fitted maps per source. */
static void pb_fragility__qties_table(const struct pb_fragility_out *out, const struct pb_fragility_sum *S,
                                      struct pb_table *tb)
{
  static const struct pb_column cols[] = {
    PB_FQR__COL_KEY("source", 0), PB_FQR__COL_N("models", 0), PB_FQR__COL_N("images", 1 + PB_FT_IMAGES),
    PB_FQR__COL_N("pooled_raw_ties", 1 + PB_FT_RAW_GROUPS), PB_FQR__COL_N("within_fold", 1 + PB_FT_WITHIN),
    PB_FQR__COL_N("spanning_folds", 1 + PB_FT_SPANNING), PB_FQR__COL_N("fold_raw_ties", 1 + PB_FT_FOLD_RAW),
    PB_FQR__COL_N("fold_mapped_ties", 1 + PB_FT_FOLD_MAPPED), PB_FQR__COL_N("pooled_mapped_ties", 1 + PB_FT_MAPPED),
    {NULL}};
  static const struct pb_table_spec spec = {
    "Pooled and within-fold ties of the fitted maps (Appendix Q.5; sums over models)",
    "Parts A and B are the folds; each image is scored by the map fitted on the other part (its held-out fold's "
    "map); models: those with both fitted maps defined. A tie is a score held by two or more images: "
    "pooled_raw_ties over both folds, of which within_fold lie in one fold and spanning_folds in both; "
    "fold_raw_ties and fold_mapped_ties: each fold's ties of its raw and of its mapped scores, summed over the "
    "two folds (a map is a function: a fold keeps every raw tie, and the count changes only where the map "
    "merges distinct scores); pooled_mapped_ties: the ties of the pooled mapped scores, where the two maps part the "
    "folds of a spanning tie (report/fragility_qmap_ties.tsv).", cols};
  pb_table_open(tb, &spec);
  for (int32_t s = 0; s < out->meta->n_sources; s++) {
    const struct pb_fragility__qrow row = {{out->meta->sources[s].name, NULL, NULL},
                                           S->qt_n + (size_t)s * (PB_FT_FIXED + 1), NULL};
    pb_table_row(tb, &spec, pb_fragility__qcell, &row);
  }
}

int pb_fragility_report_qmap(struct pb_results *res, const struct pb_fragility_out *out,
                             const struct pb_fragility_sum *S, struct pb_text *md)
{
  struct pb_table tb = {{0}, {0}};
  pb_fragility__qmap_table(out, S, &tb);
  int status = pb_table_flush(&tb, res, "fragility_qmap_summary.tsv", md);
  if (status == PB_OK) {
    pb_fragility__qties_table(out, S, &tb);
    status = pb_table_flush(&tb, res, "fragility_qmap_ties_summary.tsv", md);
  }
  pb_text_free(&tb.tsv);
  pb_text_free(&tb.md);
  return status;
}
