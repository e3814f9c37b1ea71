/* Screening summary tables laid out like seed 000 Tables 16, 18, 19, 21,
 * 25-28, 33 and 36 and Figures 2(a) and 3: report/screen_*.tsv and
 * report/screen.md from the totals of every rank's cells (pb_screen_sum,
 * reduced by the stage); and what the other screen reports share: the
 * getters of the tables of the totals, of the subset tables and of the
 * interval tables.  Intervals are the stage's (docs/screen.md). */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/agg.h"
#include "pairbound/error.h"
#include "pairbound/figure.h"
#include "pairbound/num.h"
#include "pairbound/protocol.h"
#include "screen_internal.h"

/* ------------------------------------------------------------ shared getters */

void pb_screen_trow_at(struct pb_screen_trow *r, int32_t t, int tier, int b)
{
  r->t = t;
  r->tier = tier;
  r->b = b;
  snprintf(r->q, sizeof r->q, "%.1f", b >= 0 ? pb_screen_budget_pct[b] / 100.0 : NAN);
}

union pb_cell pb_screen_sum_cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_screen_trow *r = ctx;
  const struct pb_screen_sum *T = r->in->T;
  const int64_t key = pb_screen_sum_tt(T, r->t, r->tier, 0);
  const int f = c->arg == PB_SM_AT_Q ? 3 + r->b : c->arg;
  switch (c->slot) {
  case PB_SCOL_SOURCE: return (union pb_cell){.s = r->in->meta->sources[r->in->targets[r->t]].name};
  case PB_SCOL_TIER: return (union pb_cell){.s = pb_protocol_tier_name(r->tier)};
  case PB_SCOL_Q: return (union pb_cell){.s = r->q};
  case PB_SCOL_LABEL: return (union pb_cell){.s = r->label};
  case PB_SCOL_CELLS: return (union pb_cell){.i = (int64_t)pb_agg_sum(&T->a, key + PB_SS_CELLS)};
  case PB_SCOL_DEFINED: return (union pb_cell){.i = pb_agg_count(&T->a, key + PB_SS_ROW(c->arg, PB_SM_AUROC))};
  case PB_SCOL_CONDITIONS: {
    const int32_t nc = r->in->meta->sources[r->in->targets[r->t]].n_conditions;
    int64_t k = 0;
    for (int32_t j = 0; j < nc; j++) k += r->in->tier[r->t][j] == r->tier;
    return (union pb_cell){.i = k};
  }
  case PB_SCOL_CEIL: return (union pb_cell){.x = pb_agg_mean(&T->a, key + PB_SS_CEIL(T) + c->arg)};
  case PB_SCOL_ID:
    if (c->fmt == PB_COL_INT) return (union pb_cell){.i = (int64_t)pb_agg_sum(&T->a, key + PB_SS_ID(T) + c->arg)};
    return (union pb_cell){.x = pb_agg_mean(&T->a, key + PB_SS_ID(T) + c->arg)};
  default:
    if (c->slot <= PB_SCOL_PAIR)
      return (union pb_cell){.x = pb_agg_mean(&T->a, key + PB_SS_PAIR(T, PB_SCOL_PAIR - c->slot, f))};
    return (union pb_cell){.x = pb_agg_mean(&T->a, key + PB_SS_ROW(c->slot, f))};
  }
}

#define PB_SUB_COL(name, digits, member) {name, PB_COL_NUM, digits, .slot = offsetof(struct pb_screen_subrow, member)}
const struct pb_column pb_screen_subset_cols[] = {
  {"source", PB_COL_STR, .slot = offsetof(struct pb_screen_subrow, source)},
  {"tier", PB_COL_STR, .slot = offsetof(struct pb_screen_subrow, tier)},
  {"m", PB_COL_INT, .slot = offsetof(struct pb_screen_subrow, m)},
  {"set", PB_COL_STR, .slot = offsetof(struct pb_screen_subrow, set)},
  {"subsets", PB_COL_INT, .slot = offsetof(struct pb_screen_subrow, n)},
  PB_SUB_COL("coverage", 3, cov),     PB_SUB_COL("cov_min", 3, cov_min), PB_SUB_COL("cov_max", 3, cov_max),
  PB_SUB_COL("gain", -3, gain),       PB_SUB_COL("gain_min", -3, gain_min),
  PB_SUB_COL("auroc", 3, auroc),      PB_SUB_COL("auroc_min", 3, auroc_min), PB_SUB_COL("auroc_max", 3, auroc_max),
  {NULL}};

struct pb_interval pb_screen_class_iv(const struct pb_screen_boot *B, int32_t brow, int32_t x, int k)
{
  struct pb_interval v = {NAN, NAN, NAN, 0};
  const int c = pb_screen_boot_class_contrast(B, PB_SR_U, x);
  if (c >= 0 && B->draws > 0) pb_screen_boot_class_interval(B, brow, c * PB_SB_NMET + k, &v);
  return v;
}

union pb_cell pb_screen_iv_cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_screen_ivrow *r = ctx;
  const struct pb_interval *v = r->iv ? &r->iv[c->arg] : NULL;
  struct pb_interval cl;
  switch (c->slot) {
  case PB_SIV_STR: return (union pb_cell){.s = r->str[c->arg]};
  case PB_SIV_CELLS: return (union pb_cell){.i = r->cells};
  case PB_SIV_NAN: return (union pb_cell){.x = NAN};
  case PB_SIV_EST: return (union pb_cell){.x = v->est};
  case PB_SIV_LO: return (union pb_cell){.x = r->draws > 0 ? v->lo : NAN};
  case PB_SIV_HI: return (union pb_cell){.x = r->draws > 0 ? v->hi : NAN};
  case PB_SIV_MD:
    if (isnan(v->est)) snprintf(r->text, PB_SCREEN_IV_TEXT, "n/a");
    else if (r->draws > 0 && v->n_draws > 0)
      snprintf(r->text, PB_SCREEN_IV_TEXT, "%+.3f [%+.3f, %+.3f]", v->est, v->lo, v->hi);
    else snprintf(r->text, PB_SCREEN_IV_TEXT, "%+.3f", v->est);
    return (union pb_cell){.s = r->text};
  default:
    cl = pb_screen_class_iv(r->B, r->brow, r->x, c->arg);
    if (c->slot == PB_SIV_CLASS_LO) return (union pb_cell){.x = cl.lo};
    if (c->slot == PB_SIV_CLASS_HI) return (union pb_cell){.x = cl.hi};
    if (isnan(cl.lo)) snprintf(r->text, PB_SCREEN_IV_TEXT, "n/a");
    else snprintf(r->text, PB_SCREEN_IV_TEXT, "{%+.3f, %+.3f}", cl.lo, cl.hi);
    return (union pb_cell){.s = r->text};
  }
}

int pb_screen_figure(struct pb_results *res, const struct pb_figure *fig, struct pb_table *t, int draw,
                     struct pb_text *md)
{
  int status = draw ? pb_figure_write(res, fig, t->tsv.buf, t->tsv.len, md) : PB_OK;
  pb_text_free(&t->tsv);
  pb_text_free(&t->md);
  return status;
}

/* ------------------------------------------------------------ tables */

struct pb_srep {
  const struct pb_screen_rep_in *in;
  struct pb_table t;   /* the table being built */
};

/* Target index of source s, or -1. */
static int32_t pb_srep__target(const struct pb_srep *R, int32_t s)
{
  for (int32_t t = 0; t < R->in->n_targets; t++)
    if (R->in->targets[t] == s) return t;
  return -1;
}

static double pb_srep__at(const struct pb_srep *R, int32_t t, int tier, int64_t o)
{
  return pb_agg_mean(&R->in->T->a, pb_screen_sum_tt(R->in->T, t, tier, o));
}

/* Mean of metric f of score row r over target t's cells of a tier (NaN for r < 0). */
static double pb_srep__mean(const struct pb_srep *R, int32_t t, int tier, int32_t r, int f)
{
  return r < 0 ? NAN : pb_srep__at(R, t, tier, PB_SS_ROW(r, f));
}

static int64_t pb_srep__count(const struct pb_srep *R, int32_t t, int tier)
{
  return (int64_t)pb_agg_sum(&R->in->T->a, pb_screen_sum_tt(R->in->T, t, tier, PB_SS_CELLS));
}

/* The target of source s when it has cells, else -1: these tables go through the sources in store order. */
static int32_t pb_srep__with_cells(const struct pb_srep *R, int32_t s)
{
  const int32_t t = pb_srep__target(R, s);
  return t >= 0 && pb_agg_sum(&R->in->T->a, pb_screen_sum_t(R->in->T, t, 0)) > 0 ? t : -1;
}

/* Every (source, tier) with cells: its row of the totals in r. */
#define FOR_GROUPS(R, r)                                    \
  for (int32_t s_ = 0; s_ < (R)->in->meta->n_sources; s_++) \
    if (((r).t = pb_srep__with_cells((R), s_)) >= 0)        \
      for ((r).tier = 0; (r).tier < PB_N_TIERS; (r).tier++) \
        if (pb_srep__count((R), (r).t, (r).tier) > 0)

/* One row per (source, tier) of the totals. */
static void pb_srep__sum_table(struct pb_srep *R, const struct pb_table_spec *spec)
{
  struct pb_screen_trow r = {R->in, 0, 0, -1, "", NULL};
  pb_table_open(&R->t, spec);
  FOR_GROUPS(R, r) pb_table_row(&R->t, spec, pb_screen_sum_cell, &r);
}

/* One row per (source, tier, budget) of the totals. */
static void pb_srep__budget_table(struct pb_srep *R, const struct pb_table_spec *spec)
{
  struct pb_screen_trow r = {R->in, 0, 0, -1, "", NULL};
  pb_table_open(&R->t, spec);
  FOR_GROUPS(R, r)
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) {
    pb_screen_trow_at(&r, r.t, r.tier, b);
    pb_table_row(&R->t, spec, pb_screen_sum_cell, &r);
  }
}

#define PB_SREP_KEYS {"source", PB_COL_STR, .slot = PB_SCOL_SOURCE}, {"tier", PB_COL_STR, .slot = PB_SCOL_TIER}
#define PB_SREP_KEYS_Q PB_SREP_KEYS, {"q", PB_COL_STR, .slot = PB_SCOL_Q} /* a row per budget */
#define PB_SREP_MEAN(name, row, f) {name, PB_COL_NUM, 3, .slot = row, .arg = f}
#define PB_SREP_DIFF(name, p, f) {name, PB_COL_NUM, -3, .slot = PB_SCOL_DIFF(p), .arg = f}
/* The image-level scores and the class baseline, metric f (Tables 16 and 18). */
#define PB_SREP_SCORES(f)                                                                                  \
  PB_SREP_MEAN("S", PB_SR_S, f), PB_SREP_MEAN("U", PB_SR_U, f), PB_SREP_MEAN("delta", PB_SR_DELTA, f),   \
      PB_SREP_MEAN("ret", PB_SR_RET, f), PB_SREP_MEAN("margin", PB_SR_MARGIN, f),                          \
      PB_SREP_MEAN("entropy", PB_SR_ENTROPY, f), PB_SREP_MEAN("class_delta", PB_SR_CLASS_DELTA, f)

/* Table 16: AUROC of every score and the paired gaps. */
static const struct pb_column pb_srep__auroc_cols[] = {
  PB_SREP_KEYS,
  {"conditions", PB_COL_INT, .slot = PB_SCOL_CONDITIONS},
  {"cells", PB_COL_INT, .slot = PB_SCOL_CELLS},
  {"defined", PB_COL_INT, .slot = PB_SCOL_DEFINED, .arg = PB_SR_U},
  PB_SREP_SCORES(PB_SM_AUROC),
  PB_SREP_MEAN("g_S", PB_SR_G_S, PB_SM_AUROC),     PB_SREP_MEAN("g_SU", PB_SR_G_SU, PB_SM_AUROC),
  PB_SREP_MEAN("g_SUret", PB_SR_G_SURET, PB_SM_AUROC), PB_SREP_MEAN("A3", PB_SR_A3, PB_SM_AUROC),
  PB_SREP_DIFF("U-S", PB_SP_U_S, PB_SM_AUROC),     PB_SREP_DIFF("U-delta", PB_SP_U_DELTA, PB_SM_AUROC),
  PB_SREP_DIFF("U-ret", PB_SP_U_RET, PB_SM_AUROC), PB_SREP_DIFF("U-A3", PB_SP_U_A3, PB_SM_AUROC),
  PB_SREP_DIFF("g_SU-S", PB_SP_GSU_S, PB_SM_AUROC), PB_SREP_DIFF("delta-U", PB_SP_DELTA_U, PB_SM_AUROC),
  PB_SREP_DIFF("U-TTA", PB_SP_U_TTA, PB_SM_AUROC), {NULL}};
static const struct pb_table_spec pb_srep__auroc = {
  "AUROC of each score (seed Table 16)",
  "Failure positive; clean-correct images with probe responses; every score on the same images of a cell (class "
  "baselines on their supported images). Cells are weighted equally; `defined` counts cells with both outcomes. "
  "Differences are means of cellwise differences; intervals come from the resampling stage. " PB_SCREEN_A3_NOTE,
  pb_srep__auroc_cols};

/* Table 18: coverage levels at every budget. */
static const struct pb_column pb_srep__coverage_cols[] = {
  PB_SREP_KEYS_Q,
  PB_SREP_SCORES(PB_SM_AT_Q),
  PB_SREP_MEAN("g_SU", PB_SR_G_SU, PB_SM_AT_Q),   PB_SREP_MEAN("A3", PB_SR_A3, PB_SM_AT_Q),
  PB_SREP_MEAN("random", PB_SR_RANDOM, PB_SM_AT_Q), {NULL}};
static const struct pb_table_spec pb_srep__coverage = {
  "Failure coverage at budget q (seed Table 18)",
  "Share of a cell's failures among the top-q fraction of clean-correct images, k = max(1, round(q n)), ties at "
  "the cutoff prorated (expected coverage under random tie-breaking); random is one seeded draw per cell. "
  PB_SCREEN_A3_NOTE,
  pb_srep__coverage_cols};

/* Tables 19-20: paired coverage differences at every budget. */
static const struct pb_column pb_srep__coverage_diff_cols[] = {
  PB_SREP_KEYS_Q,
  PB_SREP_MEAN("S", PB_SR_S, PB_SM_AT_Q),         PB_SREP_MEAN("U", PB_SR_U, PB_SM_AT_Q),
  PB_SREP_DIFF("U-S", PB_SP_U_S, PB_SM_AT_Q),       PB_SREP_DIFF("U-delta", PB_SP_U_DELTA, PB_SM_AT_Q),
  PB_SREP_DIFF("U-ret", PB_SP_U_RET, PB_SM_AT_Q),   PB_SREP_DIFF("U-A3", PB_SP_U_A3, PB_SM_AT_Q),
  PB_SREP_DIFF("U-margin", PB_SP_U_MARGIN, PB_SM_AT_Q), PB_SREP_DIFF("U-entropy", PB_SP_U_ENTROPY, PB_SM_AT_Q),
  PB_SREP_DIFF("U-g_SU", PB_SP_U_GSU, PB_SM_AT_Q),  PB_SREP_DIFF("U-TTA", PB_SP_U_TTA, PB_SM_AT_Q),
  {NULL}};
static const struct pb_table_spec pb_srep__coverage_diff = {
  "Paired coverage differences (seed Tables 19-20)",
  "Means of cellwise differences in prorated coverage; group and class intervals are added by the resampling "
  "stage. " PB_SCREEN_A3_NOTE,
  pb_srep__coverage_diff_cols};

/* Table 21: failure share, attainable ceilings and U as a fraction of them. */
#define PB_SREP_CEIL(name, k) {name, PB_COL_NUM, 3, .slot = PB_SCOL_CEIL, .arg = k}
static const struct pb_column pb_srep__ceiling_cols[] = {
  PB_SREP_KEYS,
  PB_SREP_CEIL("p", 0),            PB_SREP_CEIL("ceil_q10", 1),     PB_SREP_CEIL("ceil_q20", 2),
  PB_SREP_CEIL("ceil_q30", 3),     PB_SREP_CEIL("U/ceil_q10", 4),   PB_SREP_CEIL("U/ceil_q20", 5),
  PB_SREP_CEIL("U/ceil_q30", 6),   PB_SREP_CEIL("random/ceil_q20", 7), {NULL}};
static const struct pb_table_spec pb_srep__ceiling = {
  "Failure share and attainable coverage ceiling (seed Table 21)",
  "p = n_fail / n; ceiling min(1, k / n_fail); ratio columns are means of cellwise ratios (cells with a failure), "
  "not ratios of the displayed means.",
  pb_srep__ceiling_cols};

/* Table 25: identity ablation on the non-singleton subset. */
static const struct pb_column pb_srep__identity_cols[] = {
  PB_SREP_KEYS,
  {"cells", PB_COL_INT, .slot = PB_SCOL_ID, .arg = 0},
  PB_SREP_MEAN("S", PB_SR_S_NS, PB_SM_AUROC),       PB_SREP_MEAN("U", PB_SR_U_NS, PB_SM_AUROC),
  PB_SREP_MEAN("derangement", PB_SR_U_DERANGE, PB_SM_AUROC), PB_SREP_MEAN("LOO mean", PB_SR_U_LOO, PB_SM_AUROC),
  PB_SREP_DIFF("gap", PB_SP_NS_DERANGE, PB_SM_AUROC),
  {"wins_pct", PB_COL_NUM, 1, .slot = PB_SCOL_ID, .arg = 1},
  {"degenerate", PB_COL_INT, .slot = PB_SCOL_ID, .arg = 2},
  {"gap_excl_degenerate", PB_COL_NUM, -3, .slot = PB_SCOL_ID, .arg = 3},
  {NULL}};
static const struct pb_table_spec pb_srep__identity = {
  "Identity ablation (seed Table 25)",
  "On clean-correct images whose class has at least two of them: S, U, U reassigned by a within-class derangement "
  "(AUROC averaged over the seeded draws) and the leave-one-out class mean. Gap = U - derangement (mean of cellwise "
  "gaps); wins = share of cells where U exceeds its control; degenerate cells have every non-singleton class "
  "outcome-pure, so the derangement equals U there.",
  pb_srep__identity_cols};

/* Table 26: development class means of U matched to U. */
static const struct pb_column pb_srep__class_cols[] = {
  PB_SREP_KEYS,
  PB_SREP_MEAN("S", PB_SR_S_CCDEV, PB_SM_AUROC),    PB_SREP_MEAN("U", PB_SR_U_CCDEV, PB_SM_AUROC),
  PB_SREP_MEAN("class_U_cc", PB_SR_CLASS_U_CC, PB_SM_AUROC), PB_SREP_MEAN("class_U_all", PB_SR_CLASS_U_ALL, PB_SM_AUROC),
  PB_SREP_MEAN("class_delta", PB_SR_CLASS_DELTA, PB_SM_AUROC),
  PB_SREP_DIFF("U-class", PB_SP_CCDEV_CLASS, PB_SM_AUROC), PB_SREP_DIFF("cov U-class", PB_SP_CCDEV_CLASS, PB_SM_COV20),
  {NULL}};
static const struct pb_table_spec pb_srep__class = {
  "Class-level baselines matched to U (seed Table 26)",
  "S and U on the images whose class has a clean-correct development class mean of U; the class means over "
  "clean-correct (cc) and all development images on their own supported images; gaps are U - class (cc) in AUROC "
  "and in coverage at q = 0.2.",
  pb_srep__class_cols};

/* Table 27: separation within clean-confidence terciles (all conditions), a row per (source, stratum). */
struct pb_srep__stratum {
  const char *source, *stratum;
  int64_t cells;
  double s, u, derangement, gap, retention;
};
#define PB_SREP_STRATUM(name, digits, member)                                   \
  {name, PB_COL_NUM, digits, .slot = offsetof(struct pb_srep__stratum, member)}
static const struct pb_column pb_srep__strata_cols[] = {
  {"source", PB_COL_STR, .slot = offsetof(struct pb_srep__stratum, source)},
  {"stratum", PB_COL_STR, .slot = offsetof(struct pb_srep__stratum, stratum)},
  {"cells", PB_COL_INT, .slot = offsetof(struct pb_srep__stratum, cells)},
  PB_SREP_STRATUM("S", 3, s), PB_SREP_STRATUM("U", 3, u), PB_SREP_STRATUM("derangement", 3, derangement),
  PB_SREP_STRATUM("gap", -3, gap), PB_SREP_STRATUM("retention gap", -3, retention), {NULL}};

static void pb_srep__strata(struct pb_srep *R)
{
  static const char *names[PB_SCREEN_STRATA] = {"low", "mid", "high"};
  static const struct pb_table_spec spec = {
    "Separation within clean-confidence terciles (seed Table 27)",
    "All conditions of each source, cells weighted equally. Terciles of S within model (mid-CDF, ties share a "
    "stratum); gap = U - derangement on the stratum's non-singleton images; retention gap = retention rate of "
    "images above the stratum's median U minus that below it.",
    pb_srep__strata_cols};
  const struct pb_agg *a = &R->in->T->a;
  pb_table_open(&R->t, &spec);
  for (int32_t s = 0; s < R->in->meta->n_sources; s++) {
    const int32_t t = pb_srep__with_cells(R, s);
    for (int k = 0; k < PB_SCREEN_STRATA && t >= 0; k++) {
      const int64_t q = pb_screen_sum_t(R->in->T, t, 1 + 5 * k);
      const struct pb_srep__stratum row = {R->in->meta->sources[s].name, names[k], pb_agg_count(a, q + 1),
                                           pb_agg_mean(a, q), pb_agg_mean(a, q + 1), pb_agg_mean(a, q + 2),
                                           pb_agg_mean(a, q + 3), pb_agg_mean(a, q + 4)};
      pb_table_row(&R->t, &spec, pb_table_member, &row);
    }
  }
}

/* Table 28's fixed rows of one (target, tier): each severity set, then all probes (one subset each). */
static void pb_srep__subsets_fixed(struct pb_srep *R, const struct pb_table_spec *spec, int32_t t, int tier,
                                   double S_cov)
{
  const struct pb_screen_layout *L = R->in->L;
  for (int32_t e = 0; e <= L->n_extra; e++) { /* the severity sets, then the primary set */
    if (e < L->n_extra && !L->is_severity[e]) continue;
    const int32_t ru = e < L->n_extra ? PB_SR_FIXED + 2 * e : PB_SR_U;
    const double cov = pb_srep__mean(R, t, tier, ru, PB_SM_COV20);
    const struct pb_screen_subrow row = {
        R->in->meta->sources[R->in->targets[t]].name, pb_protocol_tier_name(tier),
        e < L->n_extra ? L->extra_n[e] : L->n_probes, e < L->n_extra ? L->extra_names[e] : "all", 1, cov, NAN, NAN,
        cov - S_cov, NAN, pb_srep__mean(R, t, tier, ru, PB_SM_AUROC), NAN, NAN};
    pb_table_row(&R->t, spec, pb_table_member, &row);
  }
}

/* Table 28: U from prefixed subsets of the primary probe set, then the fixed sets. */
static void pb_srep__subsets(struct pb_srep *R)
{
  static const struct pb_table_spec spec = {
    "U from m probe conditions (seed Table 28)",
    "Cells of each tier of --subset-tiers (default mild) weighted equally. Set random: subsets fixed from the seed before any outcome (every subset when "
    "there are at most the requested number); per subset the equal-weight cell mean, then the mean [min, max] over "
    "subsets. Then the fixed sets, one subset each: every severity set (sevN, the primary conditions named -N) and "
    "all primary probes. Gain = coverage at q = 0.2 minus that of S on the same cells.",
    pb_screen_subset_cols};
  const struct pb_screen_layout *L = R->in->L;
  struct pb_screen_trow g = {R->in, 0, 0, -1, "", NULL};
  pb_table_open(&R->t, &spec);
  FOR_GROUPS(R, g)
  {
    if (!((L->subset_tiers >> g.tier) & 1)) continue;
    const double S_cov = pb_srep__mean(R, g.t, g.tier, PB_SR_S, PB_SM_COV20);
    for (int32_t j0 = 0; j0 < L->n_subsets_u;) {
      int32_t m = L->subset_m[j0], j1 = j0;
      while (j1 < L->n_subsets_u && L->subset_m[j1] == m) j1++;
      struct pb_num_nanmean cm = {0, 0}, am = {0, 0};
      double cmin = INFINITY, cmax = -INFINITY, amin = INFINITY, amax = -INFINITY;
      for (int32_t j = j0; j < j1; j++) {
        double x = pb_srep__at(R, g.t, g.tier, PB_SS_SUB(R->in->T, j, 1));
        double a = pb_srep__at(R, g.t, g.tier, PB_SS_SUB(R->in->T, j, 0));
        pb_num_nanmean_add(&cm, x);
        pb_num_nanmean_add(&am, a);
        if (!isnan(x)) cmin = fmin(cmin, x), cmax = fmax(cmax, x);
        if (!isnan(a)) amin = fmin(amin, a), amax = fmax(amax, a);
      }
      const struct pb_screen_subrow row = {
          R->in->meta->sources[R->in->targets[g.t]].name, pb_protocol_tier_name(g.tier), m, "random", j1 - j0,
          pb_num_nanmean_get(&cm), isinf(cmin) ? NAN : cmin, isinf(cmax) ? NAN : cmax, pb_num_nanmean_get(&cm) - S_cov,
          isinf(cmin) ? NAN : cmin - S_cov, pb_num_nanmean_get(&am), isinf(amin) ? NAN : amin,
          isinf(amax) ? NAN : amax};
      pb_table_row(&R->t, &spec, pb_table_member, &row);
      j0 = j1;
    }
    pb_srep__subsets_fixed(R, &spec, g.t, g.tier, S_cov);
  }
}

/* Tables 33 and 36: probe sets crossed with the scoring rules, a row per (source, probe set). */
struct pb_srep__pset {
  const char *source, *set;
  int64_t evaluations;
  double recall, auroc, a3_recall, a3_auroc, delta, dev_error;
};
#define PB_SREP_PSET(name, digits, member) {name, PB_COL_NUM, digits, .slot = offsetof(struct pb_srep__pset, member)}
static const struct pb_column pb_srep__pset_cols[] = {
  {"source", PB_COL_STR, .slot = offsetof(struct pb_srep__pset, source)},
  {"probe set", PB_COL_STR, .slot = offsetof(struct pb_srep__pset, set)},
  {"evaluations", PB_COL_INT, .slot = offsetof(struct pb_srep__pset, evaluations)},
  PB_SREP_PSET("recall_q20", 3, recall), PB_SREP_PSET("auroc", 3, auroc), PB_SREP_PSET("A3 recall_q20", 3, a3_recall),
  PB_SREP_PSET("A3 auroc", 3, a3_auroc), PB_SREP_PSET("delta", -3, delta), PB_SREP_PSET("dev_error", 4, dev_error),
  {NULL}};

/* Seed E.3: the mean over target t's units (models) of probe set p's development error rate (NaN: none defined). */
static double pb_srep__dev_error(const struct pb_srep *R, int32_t t, int32_t p)
{
  const int32_t M = R->in->meta->n_models, w = pb_screen_unit_width(R->in->L);
  double sum = 0;
  int32_t n = 0;
  for (int32_t m = 0; m < M; m++) {
    const double x = R->in->unit_stats[((int64_t)t * M + m) * w + 2 + p];
    if (!isnan(x)) sum += x, n++;
  }
  return n > 0 ? sum / n : NAN;
}

static void pb_srep__probesets(struct pb_srep *R, const char *probe_desc)
{
  const struct pb_screen_layout *L = R->in->L;
  const int32_t tta = R->in->T->tta, ref = tta >= 0 ? tta : PB_SR_S;
  char note[1024];
  snprintf(note, sizeof note,
           "Mild conditions. Evaluations = probe inputs per image beyond the clean prediction (the clean row counts "
           "that prediction). Mean = probability averaging (U), A3 = adapted A3Rank (Eq. 12). Primary set: %s. "
           "Delta = mean-rule coverage at q = 0.2 minus that of %s. dev_error (seed E.3) = the error rate of single "
           "probe predictions on each model's clean-correct development images, averaged over the set's probes and "
           "the models. " PB_SCREEN_A3_NOTE,
           probe_desc, tta >= 0 ? "TTA" : "clean confidence S");
  const struct pb_table_spec spec = {"Screening by probe set and scoring rule (seed Tables 33 and 36)", note,
                                     pb_srep__pset_cols};
  const int m = PB_TIER_MILD;
  pb_table_open(&R->t, &spec);
  for (int32_t s = 0; s < R->in->meta->n_sources; s++) {
    const int32_t t = pb_srep__with_cells(R, s);
    if (t < 0 || pb_srep__count(R, t, m) == 0) continue;
    const double ref_cov = pb_srep__mean(R, t, m, ref, PB_SM_COV20);
    for (int32_t e = -2; e < L->n_extra; e++) { /* clean, the primary set, each extra set */
      const int32_t ru = e == -2 ? PB_SR_S : e == -1 ? PB_SR_U : PB_SR_FIXED + 2 * e;
      const int32_t ra = e == -2 ? -1 : e == -1 ? PB_SR_A3 : PB_SR_FIXED + 2 * e + 1;
      const struct pb_srep__pset row = {
          R->in->meta->sources[s].name, e == -2 ? "clean" : e == -1 ? "all (U)" : L->extra_names[e],
          e == -2 ? 1 : e == -1 ? L->n_probes : L->extra_n[e], pb_srep__mean(R, t, m, ru, PB_SM_COV20),
          pb_srep__mean(R, t, m, ru, PB_SM_AUROC), pb_srep__mean(R, t, m, ra, PB_SM_COV20),
          pb_srep__mean(R, t, m, ra, PB_SM_AUROC), pb_srep__mean(R, t, m, ru, PB_SM_COV20) - ref_cov,
          e == -2 ? NAN : pb_srep__dev_error(R, t, e + 1)};
      pb_table_row(&R->t, &spec, pb_table_member, &row);
    }
  }
}

/* Figure 2(a): AUROC of the main scores by source and tier (clustered bars). */
static int pb_srep__figure_auroc(struct pb_srep *R, struct pb_text *md)
{
  static const struct pb_column cols[] = {
    {"source and tier", PB_COL_STR, .slot = PB_SCOL_LABEL},
    PB_SREP_MEAN("S", PB_SR_S, PB_SM_AUROC),     PB_SREP_MEAN("U", PB_SR_U, PB_SM_AUROC),
    PB_SREP_MEAN("delta", PB_SR_DELTA, PB_SM_AUROC), PB_SREP_MEAN("ret", PB_SR_RET, PB_SM_AUROC),
    PB_SREP_MEAN("g_SU", PB_SR_G_SU, PB_SM_AUROC), PB_SREP_MEAN("A3", PB_SR_A3, PB_SM_AUROC), {NULL}};
  static const struct pb_figure fig = {
      "figure2a_auroc", "Failure detection: AUROC of each score by source and tier (seed Figure 2a)",
      "target source and development tier", "AUROC (failure positive; 0.5 = chance)",
      "set style data histogram\nset style histogram cluster gap 1\nset style fill solid 0.85 border -1\n"
      "set boxwidth 0.9\nset xtics rotate by -35 scale 0\nset yrange [0:1]\nset key outside right top\n"
      "plot for [i=2:7] DATA using i:xtic(1), 0.5 with lines dt 2 lc rgb 'black' title 'chance'"};
  const struct pb_table_spec spec = {fig.title, PB_SCREEN_A3_NOTE, cols};
  struct pb_screen_trow r = {R->in, 0, 0, -1, "", NULL};
  struct pb_table t = {{0}, {0}};
  char label[300];
  int rows = 0;
  pb_table_open(&t, &spec);
  FOR_GROUPS(R, r)
  {
    snprintf(label, sizeof label, "%s %s", R->in->meta->sources[R->in->targets[r.t]].name, pb_protocol_tier_name(r.tier));
    r.label = label;
    pb_table_row(&t, &spec, pb_screen_sum_cell, &r);
    rows++;
  }
  return pb_screen_figure(R->in->res, &fig, &t, rows > 0, md);
}

/* Figure 3's rows: a budget; its columns (slot score row, arg target) the mean coverage on mild cells. */
static union pb_cell pb_srep__budget_cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_screen_trow *r = ctx;
  if (c->slot < 0) return (union pb_cell){.i = pb_screen_budget_pct[r->b]};
  const struct pb_screen_sum *T = r->in->T;
  return (union pb_cell){.x = pb_agg_mean(&T->a, pb_screen_sum_tt(T, c->arg, PB_TIER_MILD, PB_SS_ROW(c->slot, 3 + r->b)))};
}

/* Figure 3: failure coverage against the testing budget on mild conditions,
 * one line per target source (dash) and score (colour). */
static int pb_srep__figure_budget(struct pb_srep *R, struct pb_text *md)
{
  static const int32_t rows[] = {PB_SR_S, PB_SR_U, PB_SR_DELTA, PB_SR_RET, PB_SR_A3, PB_SR_RANDOM};
  const int nr = (int)(sizeof rows / sizeof rows[0]);
  const struct pb_meta *meta = R->in->meta;
  struct pb_column *cols = pb_calloc((size_t)(1 + nr * meta->n_sources + 1), sizeof *cols);
  int n_src = 0, nc = 1;
  cols[0] = (struct pb_column){"budget_pct", PB_COL_INT, .slot = -1};
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const int32_t t = pb_srep__with_cells(R, s);
    if (t < 0 || pb_srep__count(R, t, PB_TIER_MILD) == 0) continue;
    for (int j = 0; j < nr; j++) {
      size_t len = strlen(meta->sources[s].name) + strlen(R->in->L->row_names[rows[j]]) + 3;
      char *name = pb_malloc(len);
      snprintf(name, len, "%s: %s", meta->sources[s].name, R->in->L->row_names[rows[j]]);
      cols[nc++] = (struct pb_column){name, PB_COL_NUM, 3, .slot = rows[j], .arg = t};
    }
    n_src++;
  }
  char script[400];
  snprintf(script, sizeof script,
           "set key outside right top\nset yrange [0:1]\nset xtics 10\nset xrange [5:35]\n"
           "plot for [i=2:%d] DATA using 1:i with linespoints lw 2 pt 7 lc (i-2)%%%d+1 dt 1+(i-2)/%d",
           1 + n_src * nr, nr, nr);
  const struct pb_figure fig = {"figure3_coverage_budget",
                                "Failure coverage against the testing budget, mild conditions (seed Figure 3)",
                                "testing budget q (% of clean-correct images selected)",
                                "failure coverage (share of real failures found; ties prorated)", script};
  const struct pb_table_spec spec = {fig.title, PB_SCREEN_A3_NOTE, cols};
  struct pb_screen_trow r = {R->in, 0, PB_TIER_MILD, -1, "", NULL};
  struct pb_table t = {{0}, {0}};
  pb_table_open(&t, &spec);
  for (r.b = 0; r.b < PB_SCREEN_N_BUDGETS; r.b++) pb_table_row(&t, &spec, pb_srep__budget_cell, &r);
  for (int k = 1; k < nc; k++) free((char *)cols[k].name);
  free(cols);
  return pb_screen_figure(R->in->res, &fig, &t, n_src > 0, md);
}

/* The seed's mild-condition values that the targets declare (their seed_values, docs/synth.md), in
 * screen_seed.tsv, which `pairbound run`'s summary prints beside ours; no file when no target declares one. */
static int pb_srep__seed(const struct pb_srep *R)
{
  static const char *const key[] = {"auroc_U_mild", "auroc_S_mild", "coverage_U_mild", "coverage_S_mild"};
  struct pb_text t = {0};
  int any = 0, status = PB_OK;
  pb_text_printf(&t, "source\tauroc_U\tauroc_S\tcoverage_U\tcoverage_S\n");
  for (int32_t tg = 0; tg < R->in->n_targets; tg++) {
    const struct pb_source *src = &R->in->meta->sources[R->in->targets[tg]];
    pb_text_printf(&t, "%s", src->name);
    for (int k = 0; k < 4; k++) {
      const double v = pb_meta_seed_value(src, key[k]);
      any |= !isnan(v);
      pb_text_printf(&t, "\t%.15g", v);
    }
    pb_text_printf(&t, "\n");
  }
  if (any) status = pb_results_write_report(R->in->res, "screen_seed.tsv", t.buf, t.len);
  pb_text_free(&t);
  return status;
}

int pb_screen_report(const struct pb_screen_rep_in *in, const char *probe_desc, const struct pb_text *extra)
{
  const struct pb_screen_options *opt = in->opt;
  struct pb_srep R = {in, {{0}, {0}}};
  struct pb_text md = {0};
  int status = PB_OK;
  pb_text_printf(&md, "## Screening (pairbound screen)\n\nScores on %s images (fitting on %s images), tiers from %s "
                      "accuracy; primary probe set: %s; %d derangement draws; seed %llu. Per-cell values: "
                      "report/screen_cells.tsv, screen_cell_info.tsv, screen_strata.tsv; definitions: docs/screen.md.\n",
                 opt->swapped ? "development" : "evaluation", opt->swapped ? "evaluation" : "development",
                 opt->eval_tiers ? "evaluation" : "development", probe_desc, opt->n_derange,
                 (unsigned long long)opt->seed);
  pb_srep__sum_table(&R, &pb_srep__auroc);
  status |= pb_table_flush(&R.t, in->res, "screen_auroc.tsv", &md);
  if (status == PB_OK) status = pb_srep__figure_auroc(&R, &md);
  pb_srep__budget_table(&R, &pb_srep__coverage);
  status |= pb_table_flush(&R.t, in->res, "screen_coverage.tsv", &md);
  if (status == PB_OK) status = pb_srep__figure_budget(&R, &md);
  status |= pb_srep__seed(&R);
  pb_srep__budget_table(&R, &pb_srep__coverage_diff);
  status |= pb_table_flush(&R.t, in->res, "screen_coverage_diff.tsv", &md);
  pb_srep__sum_table(&R, &pb_srep__ceiling);
  status |= pb_table_flush(&R.t, in->res, "screen_ceiling.tsv", &md);
  pb_srep__sum_table(&R, &pb_srep__identity);
  status |= pb_table_flush(&R.t, in->res, "screen_identity.tsv", &md);
  pb_srep__sum_table(&R, &pb_srep__class);
  status |= pb_table_flush(&R.t, in->res, "screen_class.tsv", &md);
  pb_srep__strata(&R);
  status |= pb_table_flush(&R.t, in->res, "screen_strata_summary.tsv", &md);
  pb_srep__subsets(&R);
  status |= pb_table_flush(&R.t, in->res, "screen_subsets.tsv", &md);
  pb_srep__probesets(&R, probe_desc);
  status |= pb_table_flush(&R.t, in->res, "screen_probesets.tsv", &md);
  if (extra && extra->len) pb_text_printf(&md, "%s", extra->buf);
  if (status == PB_OK) status = pb_results_write_report(in->res, "screen.md", md.buf, md.len);
  pb_text_free(&md);
  return status ? PB_FAIL : PB_OK;
}
