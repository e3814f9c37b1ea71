/* Tables 47 and 48 and Appendix J.1's splits (seed 000 Section 7, Appendix
 * J.1) from the per-source totals of pb_bounds_lsets:
 * report/label_sensitivity.tsv, report/label_states.tsv,
 * report/label_splits.tsv and their markdown.  Shares are percentages of
 * the matched images summed over a source's cells, which is the mean over
 * models and conditions since every cell of a source has the same matched
 * images; dM_k, whose support differs between cells, is the mean over the
 * cells where it is defined. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "pairbound/agg.h"
#include "pairbound/bounds.h"
#include "pairbound/error.h"
#include "pairbound/lsets.h"
#include "pairbound/table.h"
#include "pairbound/text.h"
#include "bounds_stage_internal.h"

struct pb_rls__row {
  const struct pb_meta *meta;
  const int64_t *t;         /* the source's PB_LS_N_SLOTS counts */
  const struct pb_agg *dmk; /* every source's PB_LSD_N restricted dM_k sums */
  int32_t s;
  int conv;                 /* -1: Table 47's or a split's row; 0, 1: Table 48's original / set row */
  int64_t g[PB_LSG_N];      /* a split's row: its subgroup's counts */
  int split, rest;          /* a split's row: which split, and whether its second subgroup */
};

/* Column args: a value, or a share of the matched images (slot), or a share of the original h or w. */
enum { PB_RLS_SOURCE, PB_RLS_LABELS, PB_RLS_MATCHED, PB_RLS_CELLS, PB_RLS_ACC, PB_RLS_DELTA, PB_RLS_S,
       PB_RLS_SHARE, PB_RLS_MOVED, PB_RLS_EQ15_CELLS, PB_RLS_EQ15_FAIL, PB_RLS_DMK, PB_RLS_DMK_CHANGE,
       PB_RLS_DMK_CELLS, PB_RLS_SPLIT, PB_RLS_GROUP, PB_RLS_G_IMAGES, PB_RLS_G_SHARE, PB_RLS_G_ACC,
       PB_RLS_G_DELTA, PB_RLS_G_S };

static double pb_rls__pct(int64_t num, int64_t den) { return den > 0 ? 100.0 * (double)num / (double)den : NAN; }

/* J.1's subgroups by name: [split][rest] */
static const char *const pb_rls__split_name[PB_LSG_N_SPLITS] = {"candidate", "label"};
static const char *const pb_rls__group_name[PB_LSG_N_SPLITS][2] = {{"compatible", "incompatible"},
                                                                    {"retained", "removed"}};

/* A split row's cells: its subgroup's images, accuracy and s within it, and its share of Table 47's delta. */
static union pb_cell pb_rls__group_cell(const struct pb_rls__row *r, const struct pb_column *c)
{
  const int64_t *t = r->t, *g = r->g;
  switch (c->arg) {
  case PB_RLS_SPLIT: return (union pb_cell){.s = pb_rls__split_name[r->split]};
  case PB_RLS_GROUP: return (union pb_cell){.s = pb_rls__group_name[r->split][r->rest]};
  case PB_RLS_G_IMAGES: return (union pb_cell){.i = t[PB_LS_CELLS] > 0 ? g[PB_LSG_IMAGES] / t[PB_LS_CELLS] : 0};
  case PB_RLS_G_SHARE: return (union pb_cell){.x = pb_rls__pct(g[PB_LSG_IMAGES], t[PB_LS_N])};
  case PB_RLS_G_ACC: return (union pb_cell){.x = pb_rls__pct(g[PB_LSG_A1 + c->slot], g[PB_LSG_IMAGES])};
  case PB_RLS_G_DELTA: return (union pb_cell){.x = pb_rls__pct(g[PB_LSG_A1 + 1] - g[PB_LSG_A1], t[PB_LS_N])};
  case PB_RLS_G_S: return (union pb_cell){.x = pb_rls__pct(g[PB_LSG_S + c->slot], g[PB_LSG_IMAGES])};
  }
  return (union pb_cell){.x = NAN};
}

static union pb_cell pb_rls__cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_rls__row *r = ctx;
  const int64_t *t = r->t, *o0 = t + PB_LS_CONV, *o1 = o0 + PB_LS_NSTATE;
  const int64_t *o = r->conv == 1 ? o1 : o0;
  const int64_t cells = t[PB_LS_CELLS];
  switch (c->arg) {
  case PB_RLS_SOURCE: return (union pb_cell){.s = r->meta->sources[r->s].name};
  case PB_RLS_LABELS: return (union pb_cell){.s = r->conv ? "set" : "original"};
  case PB_RLS_MATCHED: return (union pb_cell){.i = cells > 0 ? t[PB_LS_N] / cells : 0};
  case PB_RLS_CELLS: return (union pb_cell){.i = cells};
  case PB_RLS_ACC: {
    const int64_t *q = c->slot ? o1 : o0;
    return (union pb_cell){.x = pb_rls__pct(q[PB_LSS_K] + q[PB_LSS_R], t[PB_LS_N])};
  }
  case PB_RLS_DELTA:
    return (union pb_cell){.x = pb_rls__pct(o1[PB_LSS_K] + o1[PB_LSS_R] - o0[PB_LSS_K] - o0[PB_LSS_R], t[PB_LS_N])};
  case PB_RLS_S: return (union pb_cell){.x = pb_rls__pct((c->slot ? o1 : o0)[PB_LSS_S], t[PB_LS_N])};
  case PB_RLS_SHARE: return (union pb_cell){.x = pb_rls__pct(o[c->slot], t[PB_LS_N])};
  case PB_RLS_MOVED:
    return (union pb_cell){.x = r->conv == 1 ? pb_rls__pct(t[c->slot], o0[c->slot == PB_LS_MOVED_H ? PB_LSS_H : PB_LSS_W])
                                             : NAN};
  case PB_RLS_EQ15_CELLS: return (union pb_cell){.i = cells};
  case PB_RLS_EQ15_FAIL: return (union pb_cell){.i = t[PB_LS_EQ15_FAIL]};
  case PB_RLS_DMK: return (union pb_cell){.x = 100.0 * pb_agg_mean(r->dmk, (int64_t)r->s * PB_LSD_N + r->conv)};
  case PB_RLS_DMK_CHANGE:
    return (union pb_cell){.x = r->conv == 1 ? 100.0 * pb_agg_mean(r->dmk, (int64_t)r->s * PB_LSD_N + PB_LSD_CHANGE)
                                             : NAN};
  case PB_RLS_DMK_CELLS: return (union pb_cell){.i = pb_agg_count(r->dmk, (int64_t)r->s * PB_LSD_N + PB_LSD_CHANGE)};
  default: return pb_rls__group_cell(r, c);
  }
}

/* Table 47: accuracy and s on the matched images, original against set. */
static void pb_rls__t47(const struct pb_meta *meta, const struct pb_bounds_lsets *ls, struct pb_table *t)
{
  static const struct pb_column cols[] = {
    {"source", PB_COL_STR, .arg = PB_RLS_SOURCE}, {"matched_images", PB_COL_INT, .arg = PB_RLS_MATCHED},
    {"cells", PB_COL_INT, .arg = PB_RLS_CELLS}, {"acc_original", PB_COL_NUM, 2, .slot = 0, .arg = PB_RLS_ACC},
    {"acc_set", PB_COL_NUM, 2, .slot = 1, .arg = PB_RLS_ACC}, {"delta_pp", PB_COL_NUM, -2, .arg = PB_RLS_DELTA},
    {"s_original", PB_COL_NUM, 2, .slot = 0, .arg = PB_RLS_S}, {"s_set", PB_COL_NUM, 2, .slot = 1, .arg = PB_RLS_S},
    {NULL}};
  static const struct pb_table_spec spec = {
    "Label sensitivity on the matched images (seed Table 47)",
    "Sources with label sets; matched images: evaluation images with a nonempty set. Accuracy is the perturbed "
    "accuracy a1 = k + r, and s the share of pairs wrong on both sides with the same stored prediction, both in % of "
    "the matched images, averaged over models and perturbed conditions (the cells); original: pred = label; set: "
    "the prediction is in the image's set (record-attached); delta = set - original in points.",
    cols};
  pb_table_open(t, &spec);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    if (!pb_lsets_source_has(&meta->sources[s])) continue;
    const struct pb_rls__row row = {meta, ls->tot + (size_t)s * PB_LS_N_SLOTS, &ls->dmk, s, -1, {0}, 0, 0};
    pb_table_row(t, &spec, pb_rls__cell, &row);
  }
}

/* Table 48: five-state shares, k split, acceptance events, moved h and w, and Eq. 15's check. */
static void pb_rls__t48(const struct pb_meta *meta, const struct pb_bounds_lsets *ls, struct pb_table *t)
{
  static const struct pb_column cols[] = {
    {"source", PB_COL_STR, .arg = PB_RLS_SOURCE}, {"labels", PB_COL_STR, .arg = PB_RLS_LABELS},
    {"h", PB_COL_NUM, 2, .slot = PB_LSS_H, .arg = PB_RLS_SHARE}, {"r", PB_COL_NUM, 2, .slot = PB_LSS_R, .arg = PB_RLS_SHARE},
    {"k", PB_COL_NUM, 2, .slot = PB_LSS_K, .arg = PB_RLS_SHARE},
    {"k_equal", PB_COL_NUM, 2, .slot = PB_LSS_KEQ, .arg = PB_RLS_SHARE},
    {"k_different", PB_COL_NUM, 2, .slot = PB_LSS_KDIFF, .arg = PB_RLS_SHARE},
    {"s", PB_COL_NUM, 2, .slot = PB_LSS_S, .arg = PB_RLS_SHARE}, {"w", PB_COL_NUM, 2, .slot = PB_LSS_W, .arg = PB_RLS_SHARE},
    {"H", PB_COL_NUM, 2, .slot = PB_LSS_HACC, .arg = PB_RLS_SHARE},
    {"L", PB_COL_NUM, 2, .slot = PB_LSS_LACC, .arg = PB_RLS_SHARE},
    {"h_moved", PB_COL_NUM, 1, .slot = PB_LS_MOVED_H, .arg = PB_RLS_MOVED, .md = "h moved (%)"},
    {"w_moved", PB_COL_NUM, 1, .slot = PB_LS_MOVED_W, .arg = PB_RLS_MOVED, .md = "w moved (%)"},
    {"eq15_cells", PB_COL_INT, .arg = PB_RLS_EQ15_CELLS}, {"eq15_failing", PB_COL_INT, .arg = PB_RLS_EQ15_FAIL},
    {"dMk_retained", PB_COL_NUM, 2, .arg = PB_RLS_DMK}, {"dMk_change", PB_COL_NUM, -2, .arg = PB_RLS_DMK_CHANGE},
    {"dMk_cells", PB_COL_INT, .arg = PB_RLS_DMK_CELLS},
    {NULL}};
  static const struct pb_table_spec spec = {
    "Five-state shares and acceptance events, original against set correctness (seed Table 48)",
    "% of the matched images, averaged over models and perturbed conditions; k = k_equal + k_different (two correct "
    "records with equal / different stored predictions); H: clean correct and accepted, perturbed wrong and "
    "accepted; L: clean correct and accepted, perturbed correct and rejected (at the cell's threshold). h_moved, "
    "w_moved: % of the original h and w records whose state differs under sets (k_equal and k_different one state). "
    "Eq. 15, q_agree - a1 = s - r - k_different (q_agree: equal stored predictions, a1 = k + r), is checked on every "
    "cell in both conventions: eq15_cells cells checked, eq15_failing the checks failing (the source's row). "
    "dMk_retained: dM_k, the mean M - M' (probability of the original label, clean minus perturbed) over the k "
    "pairs of this convention whose original label is in the set, in probability points, per cell, averaged over "
    "the dMk_cells cells where both conventions have such a pair; dMk_change: set - original, averaged over the "
    "same cells (M is a true-class probability only where the original label is accepted, hence the restriction).",
    cols};
  pb_table_open(t, &spec);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    if (!pb_lsets_source_has(&meta->sources[s])) continue;
    for (int conv = 0; conv < 2; conv++) {
      const struct pb_rls__row row = {meta, ls->tot + (size_t)s * PB_LS_N_SLOTS, &ls->dmk, s, conv, {0}, 0, 0};
      pb_table_row(t, &spec, pb_rls__cell, &row);
    }
  }
}

/* Appendix J.1's splits: per source the candidate-compatible and label-retained subgroups and their rests. */
static void pb_rls__splits(const struct pb_meta *meta, const struct pb_bounds_lsets *ls, struct pb_table *t)
{
  static const struct pb_column cols[] = {
    {"source", PB_COL_STR, .arg = PB_RLS_SOURCE}, {"split", PB_COL_STR, .arg = PB_RLS_SPLIT},
    {"subgroup", PB_COL_STR, .arg = PB_RLS_GROUP}, {"images", PB_COL_INT, .arg = PB_RLS_G_IMAGES},
    {"share", PB_COL_NUM, 2, .arg = PB_RLS_G_SHARE, .md = "share (%)"},
    {"acc_original", PB_COL_NUM, 2, .slot = 0, .arg = PB_RLS_G_ACC},
    {"acc_set", PB_COL_NUM, 2, .slot = 1, .arg = PB_RLS_G_ACC},
    {"delta_pp", PB_COL_NUM, -2, .arg = PB_RLS_G_DELTA},
    {"s_original", PB_COL_NUM, 2, .slot = 0, .arg = PB_RLS_G_S}, {"s_set", PB_COL_NUM, 2, .slot = 1, .arg = PB_RLS_G_S},
    {NULL}};
  static const struct pb_table_spec spec = {
    "Candidate-compatible and label-retained splits of the matched images (seed Appendix J.1)",
    "Per source the matched images of Table 47 split twice. candidate: compatible when the set holds a class the "
    "models can predict, incompatible otherwise; every set id of a store is a class of its source "
    "(checked at ingest and store open) and every model predicts among those classes, so every matched image is compatible here "
    "(the seed's 38 incompatible images had ReaL labels outside its 200 candidates). label: retained when the set "
    "holds the original label, removed otherwise. images and share (% of the matched images) per subgroup; "
    "acc_original, acc_set: perturbed accuracy a1 and s_original, s_set: s, in % of the subgroup's images; "
    "delta_pp: the subgroup's part of Table 47's delta, (set - original correct records) in points of all the "
    "matched images, so that a split's two parts add up to it. Averaged over models and perturbed conditions.",
    cols};
  pb_table_open(t, &spec);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    if (!pb_lsets_source_has(&meta->sources[s])) continue;
    const int64_t *tot = ls->tot + (size_t)s * PB_LS_N_SLOTS, *o0 = tot + PB_LS_CONV, *o1 = o0 + PB_LS_NSTATE;
    /* the whole matched cohort's counts, from which a subgroup's rest follows */
    const int64_t all[PB_LSG_N] = {[PB_LSG_IMAGES] = tot[PB_LS_N], [PB_LSG_A1] = o0[PB_LSS_K] + o0[PB_LSS_R],
                                   [PB_LSG_A1 + 1] = o1[PB_LSS_K] + o1[PB_LSS_R], [PB_LSG_S] = o0[PB_LSS_S],
                                   [PB_LSG_S + 1] = o1[PB_LSS_S]};
    for (int split = 0; split < PB_LSG_N_SPLITS; split++)
      for (int rest = 0; rest < 2; rest++) {
        struct pb_rls__row row = {meta, tot, &ls->dmk, s, -1, {0}, split, rest};
        const int64_t *g = tot + PB_LS_SPLIT + split * PB_LSG_N;
        for (int k = 0; k < PB_LSG_N; k++) row.g[k] = rest ? all[k] - g[k] : g[k];
        pb_table_row(t, &spec, pb_rls__cell, &row);
      }
  }
}

int pb_bounds_report_lsets(const struct pb_meta *meta, const struct pb_bounds_lsets *ls, struct pb_results *res,
                           struct pb_text *md)
{
  if (!ls->tot) return PB_OK;
  struct pb_table t = {{0}, {0}};
  int status = PB_OK;
  pb_rls__t47(meta, ls, &t);
  status |= pb_table_flush(&t, res, "label_sensitivity.tsv", md);
  pb_rls__t48(meta, ls, &t);
  status |= pb_table_flush(&t, res, "label_states.tsv", md);
  pb_rls__splits(meta, ls, &t);
  status |= pb_table_flush(&t, res, "label_splits.tsv", md);
  return status ? PB_FAIL : PB_OK;
}
