/* Screening summary tables laid out like seed 000 Tables 16, 18, 19, 21,
 * 25-28, 33 and 36: report/screen_*.tsv and report/screen.md, and the
 * totals every screen table reads (pb_screen_sum: each rank adds its own
 * cells, exact sums reduced to rank 0).  Cells are weighted equally within
 * source and tier; a paired difference is the mean of cellwise differences
 * over the cells where both values are defined.  Intervals are the
 * resampling stage's (docs/screen.md). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/protocol.h"
#include "pairbound/agg.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/figure.h"
#include "pairbound/num.h"
#include "screen_internal.h"

/* ------------------------------------------------------------ totals */

static int32_t pb_srep__tta(const struct pb_screen_layout *L);

void pb_screen_sum_init(struct pb_screen_sum *S, const struct pb_meta *meta, const struct pb_screen_layout *L,
                        const int32_t *targets, int32_t n_targets)
{
  memset(S, 0, sizeof *S);
  S->n_targets = n_targets;
  S->n_rows = L->n_rows;
  S->n_subsets = L->n_subsets;
  S->n_models = meta->n_models;
  S->mg = pb_malloc((size_t)(meta->n_models > 0 ? meta->n_models : 1) * sizeof *S->mg);
  S->n_groups = pb_store_meta_model_groups(meta, S->mg);
  for (int32_t t = 0; t < n_targets; t++)
    if (meta->sources[targets[t]].n_conditions > S->max_cond) S->max_cond = meta->sources[targets[t]].n_conditions;
  S->tta = pb_srep__tta(L);
  const int32_t pairs[PB_SS_NPAIR][2] = {
      {PB_SR_U, PB_SR_S},      {PB_SR_U, PB_SR_DELTA},   {PB_SR_U, PB_SR_RET},          {PB_SR_U, PB_SR_A3},
      {PB_SR_G_SU, PB_SR_S},   {PB_SR_DELTA, PB_SR_U},   {PB_SR_U, S->tta},             {PB_SR_U, PB_SR_MARGIN},
      {PB_SR_U, PB_SR_ENTROPY}, {PB_SR_U, PB_SR_G_SU},   {PB_SR_U_NS, PB_SR_U_DERANGE}, {PB_SR_U_CCDEV, PB_SR_CLASS_U_CC}};
  memcpy(S->pair, pairs, sizeof pairs);
  S->per_tt = PB_SS_SUB(S, S->n_subsets, 0);
  pb_agg_init(&S->a, pb_screen_sum_key(S, 3, 0, 0, 0));
}

void pb_screen_sum_free(struct pb_screen_sum *S)
{
  free(S->mg);
  pb_agg_free(&S->a);
}

int pb_screen_sum_pair(const struct pb_screen_sum *S, int32_t a, int32_t b)
{
  for (int p = 0; p < PB_SS_NPAIR; p++)
    if (S->pair[p][0] == a && S->pair[p][1] == b) return p;
  return -1;
}

int pb_screen_sum_reduce(struct pb_screen_sum *S, MPI_Comm comm) { return pb_agg_reduce(&S->a, comm, 0); }

/* metric f (0 n, 1 n_fail, 2 auroc, 3.. coverage) of score row r of a record (NaN for r < 0) */
static double pb_srep__met(const struct pb_screen_layout *L, const double *rec, int32_t r, int f)
{
  return r < 0 ? NAN : rec[L->row_off + PB_SCREEN_MET * r + f];
}

/* One cell into its (target, tier) key: rows, pairs, Table 21, Table 25, subsets. */
static void pb_srep__add_tier(struct pb_screen_sum *S, const struct pb_screen_layout *L, int32_t t, int tier,
                              const double *rec)
{
  struct pb_agg *a = &S->a;
  const int64_t k = pb_screen_sum_tt(S, t, tier, 0);
  pb_agg_add_int(a, k + PB_SS_CELLS, 1);
  for (int32_t r = 0; r < S->n_rows; r++)
    for (int f = 0; f < PB_SCREEN_MET; f++) pb_agg_add(a, k + PB_SS_ROW(r, f), pb_srep__met(L, rec, r, f));
  for (int p = 0; p < PB_SS_NPAIR; p++)
    for (int f = 0; f < PB_SCREEN_MET; f++) {
      const double x = pb_srep__met(L, rec, S->pair[p][0], f), y = pb_srep__met(L, rec, S->pair[p][1], f);
      if (!isnan(x) && !isnan(y)) pb_agg_add(a, k + PB_SS_PAIR(S, p, f), x - y);
    }
  /* Table 21: p, ceilings, U / ceiling, random / ceiling at q = 0.2 */
  const int64_t o = k + PB_SS_CEIL(S);
  const double n = rec[PB_SI_N], nf = rec[PB_SI_NFAIL];
  if (n > 0) pb_agg_add(a, o, nf / n);
  for (int b = 0; b < 3 && nf > 0; b++) {
    const double cl = fmin(1.0, pb_screen_budget((int32_t)n, pb_screen_budget_pct[b]) / nf);
    pb_agg_add(a, o + 1 + b, cl);
    pb_agg_add(a, o + 4 + b, pb_srep__met(L, rec, PB_SR_U, 3 + b) / cl);
    if (b == 1) pb_agg_add(a, o + 7, pb_srep__met(L, rec, PB_SR_RANDOM, 4) / cl);
  }
  /* Table 25: defined cells, wins, degenerate cells, gap without them */
  const double u = pb_srep__met(L, rec, PB_SR_U_NS, 2), d = pb_srep__met(L, rec, PB_SR_U_DERANGE, 2);
  if (!isnan(u) && !isnan(d)) {
    const int deg = rec[PB_SI_DEGENERATE] == 1;
    pb_agg_add_int(a, k + PB_SS_ID(S), 1);
    pb_agg_add(a, k + PB_SS_ID(S) + 1, u > d ? 100.0 : 0.0);
    pb_agg_add_int(a, k + PB_SS_ID(S) + 2, deg);
    if (!deg) pb_agg_add(a, k + PB_SS_ID(S) + 3, u - d);
  }
  const double s_cov = pb_srep__met(L, rec, PB_SR_S, 4);
  for (int32_t j = 0; j < S->n_subsets; j++) {
    const double *x = rec + L->subset_off + 2 * j;
    pb_agg_add(a, k + PB_SS_SUB(S, j, 0), x[0]);
    pb_agg_add(a, k + PB_SS_SUB(S, j, 1), x[1]);
    pb_agg_add(a, k + PB_SS_SUB(S, j, 2), x[1] - s_cov);
  }
}

void pb_screen_sum_add(struct pb_screen_sum *S, const struct pb_screen_layout *L, const struct pb_screen_cells *C,
                       int64_t c)
{
  const double *rec = C->recs + c * L->rec_len;
  const int32_t t = C->target[c];
  const int tier = isnan(rec[PB_SI_TIER]) ? -1 : (int)rec[PB_SI_TIER];
  /* Table 27 pools every condition of a source */
  const int64_t k = pb_screen_sum_t(S, t, 0);
  pb_agg_add_int(&S->a, k, 1);
  for (int j = 0; j < PB_SCREEN_STRATA; j++) {
    const double *o = rec + L->strata_off + PB_SCREEN_STRATUM_F * j;
    const int64_t q = k + 1 + 5 * j;
    pb_agg_add(&S->a, q, o[2]);
    pb_agg_add(&S->a, q + 1, o[3]);
    pb_agg_add(&S->a, q + 2, o[5]);
    if (!isnan(o[4]) && !isnan(o[5])) pb_agg_add(&S->a, q + 3, o[4] - o[5]);
    pb_agg_add(&S->a, q + 4, o[6]);
  }
  if (tier >= 0 && tier < PB_N_TIERS) pb_srep__add_tier(S, L, t, tier, rec);
  if (tier != PB_TIER_MILD) return;
  const double u = pb_srep__met(L, rec, PB_SR_U, 4);
  const double d[2] = {u - pb_srep__met(L, rec, PB_SR_S, 4), S->tta >= 0 ? u - pb_srep__met(L, rec, S->tta, 4) : NAN};
  const int32_t key[3] = {S->mg[C->model[c]], C->model[c], C->cond[c]};
  for (int kind = 0; kind < 3; kind++) {
    pb_agg_add_int(&S->a, pb_screen_sum_key(S, kind, t, key[kind], 0), 1);
    for (int j = 0; j < 2; j++) pb_agg_add(&S->a, pb_screen_sum_key(S, kind, t, key[kind], 1 + j), d[j]);
  }
}

/* ------------------------------------------------------------ tables */

struct pb_srep {
  const struct pb_meta *meta;
  const struct pb_screen_layout *L;
  const int32_t *targets;
  int32_t n_targets;
  const struct pb_screen_sum *S;
  struct pb_table t;   /* the table being built */
};

/* Target index of source s, or -1. */
static int32_t pb_srep__target(const struct pb_srep *R, int32_t s)
{
  for (int32_t t = 0; t < R->n_targets; t++)
    if (R->targets[t] == s) return t;
  return -1;
}

/* Mean of metric f of score row r over source s's cells of a tier (NaN for r < 0). */
static double pb_srep__mean(const struct pb_srep *R, int32_t s, int tier, int32_t r, int f)
{
  if (r < 0) return NAN;
  return pb_agg_mean(&R->S->a, pb_screen_sum_tt(R->S, pb_srep__target(R, s), tier, PB_SS_ROW(r, f)));
}

/* Mean of the cellwise differences a - b over the cells where both are defined. */
static double pb_srep__diff(const struct pb_srep *R, int32_t s, int tier, int32_t a, int32_t b, int f)
{
  const int p = pb_screen_sum_pair(R->S, a, b);
  if (p < 0) PB_ERROR("screen report: no totals of the difference of rows %d and %d", (int)a, (int)b);
  return pb_agg_mean(&R->S->a, pb_screen_sum_tt(R->S, pb_srep__target(R, s), tier, PB_SS_PAIR(R->S, p, f)));
}

/* Mean (pb_srep__at) and integer total (pb_srep__tally) of offset o of source s and a tier. */
static double pb_srep__at(const struct pb_srep *R, int32_t s, int tier, int64_t o)
{
  return pb_agg_mean(&R->S->a, pb_screen_sum_tt(R->S, pb_srep__target(R, s), tier, o));
}

static int64_t pb_srep__tally(const struct pb_srep *R, int32_t s, int tier, int64_t o)
{
  return (int64_t)pb_agg_sum(&R->S->a, pb_screen_sum_tt(R->S, pb_srep__target(R, s), tier, o));
}

static int64_t pb_srep__count(const struct pb_srep *R, int32_t s, int tier)
{
  return pb_srep__target(R, s) < 0 ? 0 : pb_srep__tally(R, s, tier, PB_SS_CELLS);
}

/* Sources that have cells, in store order. */
static int pb_srep__has(const struct pb_srep *R, int32_t s)
{
  const int32_t t = pb_srep__target(R, s);
  return t >= 0 && pb_agg_sum(&R->S->a, pb_screen_sum_t(R->S, t, 0)) > 0;
}

#define FOR_GROUPS(R, s, tier)                                   \
  for (int32_t s = 0; s < (R)->meta->n_sources; s++)             \
    if (pb_srep__has((R), s))                                    \
      for (int tier = 0; tier < PB_N_TIERS; tier++)              \
        if (pb_srep__count((R), s, tier) > 0)

static int32_t pb_srep__tta(const struct pb_screen_layout *L)
{
  for (int32_t e = 0; e < L->n_extra; e++)
    if (L->is_tta[e]) return PB_SR_FIXED + 2 * e;
  return -1;
}

/* Table 16: AUROC of every score and the paired gaps. */
static void pb_srep__auroc(struct pb_srep *R)
{
  int32_t tta = pb_srep__tta(R->L);
  pb_table_begin(&R->t, "AUROC of each score (seed Table 16)",
                  "Failure positive; clean-correct images with probe responses; every score on the same images of a "
                  "cell (class baselines on their supported images). Cells are weighted equally; `defined` counts "
                  "cells with both outcomes. Differences are means of cellwise differences; intervals come from the "
                  "resampling stage.",
                  "source\ttier\tcells\tdefined\tS\tU\tdelta\tret\tmargin\tentropy\tclass_delta\tg_S\tg_SU\tg_SUret\tA3\t"
                  "U-S\tU-delta\tU-ret\tU-A3\tg_SU-S\tdelta-U\tU-TTA", NULL);
  static const int32_t cols[] = {PB_SR_S, PB_SR_U, PB_SR_DELTA, PB_SR_RET, PB_SR_MARGIN, PB_SR_ENTROPY,
                                 PB_SR_CLASS_DELTA, PB_SR_G_S, PB_SR_G_SU, PB_SR_G_SURET, PB_SR_A3};
  FOR_GROUPS(R, s, tier)
  {
    const int64_t defined = pb_agg_count(&R->S->a, pb_screen_sum_tt(R->S, pb_srep__target(R, s), tier, PB_SS_ROW(PB_SR_U, 2)));
    pb_table_str(&R->t, R->meta->sources[s].name, 1);
    pb_table_str(&R->t, pb_protocol_tier_name(tier), 0);
    pb_table_int(&R->t, pb_srep__count(R, s, tier));
    pb_table_int(&R->t, defined);
    for (size_t j = 0; j < sizeof cols / sizeof cols[0]; j++) pb_table_num(&R->t, pb_srep__mean(R, s, tier, cols[j], 2), 3);
    pb_table_num(&R->t, pb_srep__diff(R, s, tier, PB_SR_U, PB_SR_S, 2), -3);
    pb_table_num(&R->t, pb_srep__diff(R, s, tier, PB_SR_U, PB_SR_DELTA, 2), -3);
    pb_table_num(&R->t, pb_srep__diff(R, s, tier, PB_SR_U, PB_SR_RET, 2), -3);
    pb_table_num(&R->t, pb_srep__diff(R, s, tier, PB_SR_U, PB_SR_A3, 2), -3);
    pb_table_num(&R->t, pb_srep__diff(R, s, tier, PB_SR_G_SU, PB_SR_S, 2), -3);
    pb_table_num(&R->t, pb_srep__diff(R, s, tier, PB_SR_DELTA, PB_SR_U, 2), -3);
    pb_table_num(&R->t, pb_srep__diff(R, s, tier, PB_SR_U, tta, 2), -3);
    pb_table_end_row(&R->t);
  }
}

/* A row of the per-budget tables: its source, tier and budget. */
struct pb_srep__at {
  const struct pb_srep *R;
  int32_t s;
  int tier, b;
  char q[16];
};

enum { PB_SREP__SOURCE = -1, PB_SREP__TIER = -2, PB_SREP__Q = -3 };

/* Key columns (source, tier, q) by name; any other column is the mean of its
 * score (slot) at the row's budget. */
static union pb_cell pb_srep__coverage_cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_srep__at *a = ctx;
  switch (c->slot) {
  case PB_SREP__SOURCE: return (union pb_cell){.s = a->R->meta->sources[a->s].name};
  case PB_SREP__TIER: return (union pb_cell){.s = pb_protocol_tier_name(a->tier)};
  case PB_SREP__Q: return (union pb_cell){.s = a->q};
  default: return (union pb_cell){.x = pb_srep__mean(a->R, a->s, a->tier, c->slot, 3 + a->b)};
  }
}

/* Table 18: coverage levels at every budget. */
static void pb_srep__coverage(struct pb_srep *R)
{
  static const struct pb_column cols[] = {
    {"source", PB_COL_STR, .slot = PB_SREP__SOURCE},   {"tier", PB_COL_STR, .slot = PB_SREP__TIER},
    {"q", PB_COL_STR, .slot = PB_SREP__Q},             {"S", PB_COL_NUM, 3, .slot = PB_SR_S},
    {"U", PB_COL_NUM, 3, .slot = PB_SR_U},             {"delta", PB_COL_NUM, 3, .slot = PB_SR_DELTA},
    {"ret", PB_COL_NUM, 3, .slot = PB_SR_RET},         {"margin", PB_COL_NUM, 3, .slot = PB_SR_MARGIN},
    {"entropy", PB_COL_NUM, 3, .slot = PB_SR_ENTROPY}, {"class_delta", PB_COL_NUM, 3, .slot = PB_SR_CLASS_DELTA},
    {"g_SU", PB_COL_NUM, 3, .slot = PB_SR_G_SU},       {"A3", PB_COL_NUM, 3, .slot = PB_SR_A3},
    {"random", PB_COL_NUM, 3, .slot = PB_SR_RANDOM},   {NULL}};
  static const struct pb_table_spec spec = {
    "Failure coverage at budget q (seed Table 18)",
    "Share of a cell's failures among the top-q fraction of clean-correct images, k = max(1, round(q n)), ties at "
    "the cutoff prorated (expected coverage under random tie-breaking); random is one seeded draw per cell.",
    cols};
  pb_table_open(&R->t, &spec);
  FOR_GROUPS(R, s, tier)
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) {
    struct pb_srep__at at = {R, s, tier, b, ""};
    snprintf(at.q, sizeof at.q, "%.1f", pb_screen_budget_pct[b] / 100.0);
    pb_table_row(&R->t, &spec, pb_srep__coverage_cell, &at);
  }
}

/* Tables 19-20: paired coverage differences at every budget. */
static void pb_srep__coverage_diff(struct pb_srep *R)
{
  int32_t tta = pb_srep__tta(R->L);
  pb_table_begin(&R->t, "Paired coverage differences (seed Tables 19-20)",
                  "Means of cellwise differences in prorated coverage; group and class intervals are added by the "
                  "resampling stage.",
                  "source\ttier\tq\tS\tU\tU-S\tU-delta\tU-ret\tU-A3\tU-margin\tU-entropy\tU-g_SU\tU-TTA", NULL);
  static const int32_t other[] = {PB_SR_S, PB_SR_DELTA, PB_SR_RET, PB_SR_A3, PB_SR_MARGIN, PB_SR_ENTROPY, PB_SR_G_SU};
  FOR_GROUPS(R, s, tier)
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) {
    char q[16];
    snprintf(q, sizeof q, "%.1f", pb_screen_budget_pct[b] / 100.0);
    pb_table_str(&R->t, R->meta->sources[s].name, 1);
    pb_table_str(&R->t, pb_protocol_tier_name(tier), 0);
    pb_table_str(&R->t, q, 0);
    pb_table_num(&R->t, pb_srep__mean(R, s, tier, PB_SR_S, 3 + b), 3);
    pb_table_num(&R->t, pb_srep__mean(R, s, tier, PB_SR_U, 3 + b), 3);
    for (size_t j = 0; j < sizeof other / sizeof other[0]; j++)
      pb_table_num(&R->t, pb_srep__diff(R, s, tier, PB_SR_U, other[j], 3 + b), -3);
    pb_table_num(&R->t, pb_srep__diff(R, s, tier, PB_SR_U, tta, 3 + b), -3);
    pb_table_end_row(&R->t);
  }
}

/* Table 21: failure share, attainable ceilings and U as a fraction of them. */
static void pb_srep__ceiling(struct pb_srep *R)
{
  pb_table_begin(&R->t, "Failure share and attainable coverage ceiling (seed Table 21)",
                  "p = n_fail / n; ceiling min(1, k / n_fail); ratio columns are means of cellwise ratios (cells with "
                  "a failure), not ratios of the displayed means.",
                  "source\ttier\tp\tceil_q10\tceil_q20\tceil_q30\tU/ceil_q10\tU/ceil_q20\tU/ceil_q30\trandom/ceil_q20", NULL);
  FOR_GROUPS(R, s, tier)
  {
    const int64_t o = PB_SS_CEIL(R->S);
    pb_table_str(&R->t, R->meta->sources[s].name, 1);
    pb_table_str(&R->t, pb_protocol_tier_name(tier), 0);
    pb_table_num(&R->t, pb_srep__at(R, s, tier, o), 3);
    for (int b = 0; b < 3; b++) pb_table_num(&R->t, pb_srep__at(R, s, tier, o + 1 + b), 3);
    for (int b = 0; b < 3; b++) pb_table_num(&R->t, pb_srep__at(R, s, tier, o + 4 + b), 3);
    pb_table_num(&R->t, pb_srep__at(R, s, tier, o + 7), 3);
    pb_table_end_row(&R->t);
  }
}

/* Table 25: identity ablation on the non-singleton subset. */
static void pb_srep__identity(struct pb_srep *R)
{
  pb_table_begin(&R->t, "Identity ablation (seed Table 25)",
                  "On clean-correct images whose class has at least two of them: S, U, U reassigned by a within-class "
                  "derangement (AUROC averaged over the seeded draws) and the leave-one-out class mean. Gap = U - "
                  "derangement (mean of cellwise gaps); wins = share of cells where U exceeds its control; degenerate "
                  "cells have every non-singleton class outcome-pure, so the derangement equals U there.",
                  "source\ttier\tcells\tS\tU\tderangement\tLOO mean\tgap\twins_pct\tdegenerate\tgap_excl_degenerate", NULL);
  FOR_GROUPS(R, s, tier)
  {
    const int64_t o = PB_SS_ID(R->S), defined = pb_srep__tally(R, s, tier, o);
    pb_table_str(&R->t, R->meta->sources[s].name, 1);
    pb_table_str(&R->t, pb_protocol_tier_name(tier), 0);
    pb_table_int(&R->t, defined);
    pb_table_num(&R->t, pb_srep__mean(R, s, tier, PB_SR_S_NS, 2), 3);
    pb_table_num(&R->t, pb_srep__mean(R, s, tier, PB_SR_U_NS, 2), 3);
    pb_table_num(&R->t, pb_srep__mean(R, s, tier, PB_SR_U_DERANGE, 2), 3);
    pb_table_num(&R->t, pb_srep__mean(R, s, tier, PB_SR_U_LOO, 2), 3);
    pb_table_num(&R->t, pb_srep__diff(R, s, tier, PB_SR_U_NS, PB_SR_U_DERANGE, 2), -3);
    pb_table_num(&R->t, pb_srep__at(R, s, tier, o + 1), 1);
    pb_table_int(&R->t, pb_srep__tally(R, s, tier, o + 2));
    pb_table_num(&R->t, pb_srep__at(R, s, tier, o + 3), -3);
    pb_table_end_row(&R->t);
  }
}

/* Table 26: development class means of U matched to U. */
static void pb_srep__class(struct pb_srep *R)
{
  pb_table_begin(&R->t, "Class-level baselines matched to U (seed Table 26)",
                  "S and U on the images whose class has a clean-correct development class mean of U; the class means "
                  "over clean-correct (cc) and all development images on their own supported images; gaps are U - "
                  "class (cc) in AUROC and in coverage at q = 0.2.",
                  "source\ttier\tS\tU\tclass_U_cc\tclass_U_all\tclass_delta\tU-class\tcov U-class", NULL);
  FOR_GROUPS(R, s, tier)
  {
    pb_table_str(&R->t, R->meta->sources[s].name, 1);
    pb_table_str(&R->t, pb_protocol_tier_name(tier), 0);
    pb_table_num(&R->t, pb_srep__mean(R, s, tier, PB_SR_S_CCDEV, 2), 3);
    pb_table_num(&R->t, pb_srep__mean(R, s, tier, PB_SR_U_CCDEV, 2), 3);
    pb_table_num(&R->t, pb_srep__mean(R, s, tier, PB_SR_CLASS_U_CC, 2), 3);
    pb_table_num(&R->t, pb_srep__mean(R, s, tier, PB_SR_CLASS_U_ALL, 2), 3);
    pb_table_num(&R->t, pb_srep__mean(R, s, tier, PB_SR_CLASS_DELTA, 2), 3);
    pb_table_num(&R->t, pb_srep__diff(R, s, tier, PB_SR_U_CCDEV, PB_SR_CLASS_U_CC, 2), -3);
    pb_table_num(&R->t, pb_srep__diff(R, s, tier, PB_SR_U_CCDEV, PB_SR_CLASS_U_CC, 4), -3);
    pb_table_end_row(&R->t);
  }
}

/* Table 27: separation within clean-confidence terciles (all conditions). */
static void pb_srep__strata(struct pb_srep *R)
{
  static const char *names[PB_SCREEN_STRATA] = {"low", "mid", "high"};
  pb_table_begin(&R->t, "Separation within clean-confidence terciles (seed Table 27)",
                  "All conditions of each source, cells weighted equally. Terciles of S within model (mid-CDF, ties "
                  "share a stratum); gap = U - derangement on the stratum's non-singleton images; retention gap = "
                  "retention rate of images above the stratum's median U minus that below it.",
                  "source\tstratum\tcells\tS\tU\tderangement\tgap\tretention gap", NULL);
  for (int32_t s = 0; s < R->meta->n_sources; s++) {
    if (!pb_srep__has(R, s)) continue;
    for (int k = 0; k < PB_SCREEN_STRATA; k++) {
      const int64_t q = pb_screen_sum_t(R->S, pb_srep__target(R, s), 1 + 5 * k);
      const int64_t cells = pb_agg_count(&R->S->a, q + 1);
      pb_table_str(&R->t, R->meta->sources[s].name, 1);
      pb_table_str(&R->t, names[k], 0);
      pb_table_int(&R->t, cells);
      for (int j = 0; j < 3; j++) pb_table_num(&R->t, pb_agg_mean(&R->S->a, q + j), 3);
      pb_table_num(&R->t, pb_agg_mean(&R->S->a, q + 3), -3);
      pb_table_num(&R->t, pb_agg_mean(&R->S->a, q + 4), -3);
      pb_table_end_row(&R->t);
    }
  }
}

/* Table 28: U from prefixed subsets of the primary probe set. */
static void pb_srep__subsets(struct pb_srep *R)
{
  const struct pb_screen_layout *L = R->L;
  pb_table_begin(&R->t, "U from m probe conditions (seed Table 28)",
                  "Subsets fixed from the seed before any outcome (every subset when there are at most the requested "
                  "number); per subset the equal-weight cell mean, then the mean [min, max] over subsets. Gain = "
                  "coverage at q = 0.2 minus that of S on the same cells. Probe-set rows (all, severity sets) follow.",
                  "source\ttier\tm\tsubsets\tcoverage\tcov_min\tcov_max\tgain\tgain_min\tauroc\tauroc_min\tauroc_max", NULL);
  FOR_GROUPS(R, s, tier)
  {
    if (!((L->subset_tiers >> tier) & 1)) continue;
    double S_cov = pb_srep__mean(R, s, tier, PB_SR_S, 4);
    for (int32_t j0 = 0; j0 < L->n_subsets_u;) {
      int32_t m = L->subset_m[j0], j1 = j0;
      while (j1 < L->n_subsets_u && L->subset_m[j1] == m) j1++;
      struct pb_num_nanmean cm = {0, 0}, am = {0, 0};
      double cmin = INFINITY, cmax = -INFINITY, amin = INFINITY, amax = -INFINITY;
      for (int32_t j = j0; j < j1; j++) {
        double x = pb_srep__at(R, s, tier, PB_SS_SUB(R->S, j, 1)), a = pb_srep__at(R, s, tier, PB_SS_SUB(R->S, j, 0));
        pb_num_nanmean_add(&cm, x);
        pb_num_nanmean_add(&am, a);
        if (!isnan(x)) cmin = fmin(cmin, x), cmax = fmax(cmax, x);
        if (!isnan(a)) amin = fmin(amin, a), amax = fmax(amax, a);
      }
      pb_table_str(&R->t, R->meta->sources[s].name, 1);
      pb_table_str(&R->t, pb_protocol_tier_name(tier), 0);
      pb_table_int(&R->t, m);
      pb_table_int(&R->t, j1 - j0);
      pb_table_num(&R->t, pb_num_nanmean_get(&cm), 3);
      pb_table_num(&R->t, isinf(cmin) ? NAN : cmin, 3);
      pb_table_num(&R->t, isinf(cmax) ? NAN : cmax, 3);
      pb_table_num(&R->t, pb_num_nanmean_get(&cm) - S_cov, -3);
      pb_table_num(&R->t, isinf(cmin) ? NAN : cmin - S_cov, -3);
      pb_table_num(&R->t, pb_num_nanmean_get(&am), 3);
      pb_table_num(&R->t, isinf(amin) ? NAN : amin, 3);
      pb_table_num(&R->t, isinf(amax) ? NAN : amax, 3);
      pb_table_end_row(&R->t);
      j0 = j1;
    }
  }
}

/* Tables 33 and 36: probe sets crossed with the scoring rules. */
static void pb_srep__probesets(struct pb_srep *R, const char *probe_desc)
{
  const struct pb_screen_layout *L = R->L;
  int32_t tta = pb_srep__tta(L);
  char note[1024];
  snprintf(note, sizeof note,
           "Mild conditions. Evaluations = probe inputs per image beyond the clean prediction (the clean row counts "
           "that prediction). Mean = probability averaging (U), A3 = adapted A3Rank (Eq. 12). Primary set: %s. "
           "Delta = mean-rule coverage at q = 0.2 minus that of %s.",
           probe_desc, tta >= 0 ? "TTA" : "clean confidence S");
  pb_table_begin(&R->t, "Screening by probe set and scoring rule (seed Tables 33 and 36)", note,
                  "source\tprobe set\tevaluations\trecall_q20\tauroc\tA3 recall_q20\tA3 auroc\tdelta", NULL);
  for (int32_t s = 0; s < R->meta->n_sources; s++) {
    if (!pb_srep__has(R, s) || pb_srep__count(R, s, PB_TIER_MILD) == 0) continue;
    int32_t ref = tta >= 0 ? tta : PB_SR_S;
    double ref_cov = pb_srep__mean(R, s, PB_TIER_MILD, ref, 4);
    for (int32_t e = -2; e < L->n_extra; e++) {
      int32_t ru = e == -2 ? PB_SR_S : e == -1 ? PB_SR_U : PB_SR_FIXED + 2 * e;
      int32_t ra = e == -2 ? -1 : e == -1 ? PB_SR_A3 : PB_SR_FIXED + 2 * e + 1;
      pb_table_str(&R->t, R->meta->sources[s].name, 1);
      pb_table_str(&R->t, e == -2 ? "clean" : e == -1 ? "all (U)" : L->extra_names[e], 0);
      pb_table_int(&R->t, e == -2 ? 1 : e == -1 ? L->n_probes : L->extra_n[e]);
      pb_table_num(&R->t, pb_srep__mean(R, s, PB_TIER_MILD, ru, 4), 3);
      pb_table_num(&R->t, pb_srep__mean(R, s, PB_TIER_MILD, ru, 2), 3);
      pb_table_num(&R->t, pb_srep__mean(R, s, PB_TIER_MILD, ra, 4), 3);
      pb_table_num(&R->t, pb_srep__mean(R, s, PB_TIER_MILD, ra, 2), 3);
      pb_table_num(&R->t, pb_srep__mean(R, s, PB_TIER_MILD, ru, 4) - ref_cov, -3);
      pb_table_end_row(&R->t);
    }
  }
}

/* Figure 2(a): AUROC of the main scores by source and tier (clustered bars). */
static int pb_srep__figure_auroc(struct pb_srep *R, struct pb_results *res, struct pb_text *md)
{
  static const int32_t cols[] = {PB_SR_S, PB_SR_U, PB_SR_DELTA, PB_SR_RET, PB_SR_G_SU, PB_SR_A3};
  const int nc = (int)(sizeof cols / sizeof cols[0]);
  struct pb_text d = {0};
  pb_text_printf(&d, "source and tier");
  for (int j = 0; j < nc; j++) pb_text_printf(&d, "\t%s", pb_screen_row_names[cols[j]]);
  pb_text_printf(&d, "\n");
  int rows = 0;
  FOR_GROUPS(R, s, tier)
  {
    pb_text_printf(&d, "%s %s", R->meta->sources[s].name, pb_protocol_tier_name(tier));
    for (int j = 0; j < nc; j++) pb_text_double(&d, pb_srep__mean(R, s, tier, cols[j], 2));
    pb_text_printf(&d, "\n");
    rows++;
  }
  const struct pb_figure fig = {
      "figure2a_auroc", "Failure detection: AUROC of each score by source and tier (seed Figure 2a)",
      "target source and development tier", "AUROC (failure positive; 0.5 = chance)",
      "set style data histogram\nset style histogram cluster gap 1\nset style fill solid 0.85 border -1\n"
      "set boxwidth 0.9\nset xtics rotate by -35 scale 0\nset yrange [0:1]\nset key outside right top\n"
      "plot for [i=2:7] DATA using i:xtic(1), 0.5 with lines dt 2 lc rgb 'black' title 'chance'"};
  int status = rows > 0 ? pb_figure_write(res, &fig, d.buf, d.len, md) : PB_OK;
  pb_text_free(&d);
  return status;
}

/* Figure 3: failure coverage against the testing budget on mild conditions,
 * one line per target source (dash) and score (colour). */
static int pb_srep__figure_budget(struct pb_srep *R, struct pb_results *res, struct pb_text *md)
{
  static const int32_t cols[] = {PB_SR_S, PB_SR_U, PB_SR_DELTA, PB_SR_RET, PB_SR_A3, PB_SR_RANDOM};
  const int nc = (int)(sizeof cols / sizeof cols[0]);
  struct pb_text d = {0};
  int n_src = 0;
  pb_text_printf(&d, "budget_pct");
  for (int32_t s = 0; s < R->meta->n_sources; s++)
    if (pb_srep__has(R, s) && pb_srep__count(R, s, PB_TIER_MILD) > 0) {
      for (int j = 0; j < nc; j++) pb_text_printf(&d, "\t%s: %s", R->meta->sources[s].name, pb_screen_row_names[cols[j]]);
      n_src++;
    }
  pb_text_printf(&d, "\n");
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) {
    pb_text_printf(&d, "%d", (int)pb_screen_budget_pct[b]);
    for (int32_t s = 0; s < R->meta->n_sources; s++)
      if (pb_srep__has(R, s) && pb_srep__count(R, s, PB_TIER_MILD) > 0)
        for (int j = 0; j < nc; j++) pb_text_double(&d, pb_srep__mean(R, s, PB_TIER_MILD, cols[j], 3 + b));
    pb_text_printf(&d, "\n");
  }
  char script[400];
  snprintf(script, sizeof script,
           "set key outside right top\nset yrange [0:1]\nset xtics 10\nset xrange [5:35]\n"
           "plot for [i=2:%d] DATA using 1:i with linespoints lw 2 pt 7 lc (i-2)%%%d+1 dt 1+(i-2)/%d",
           1 + n_src * nc, nc, nc);
  const struct pb_figure fig = {"figure3_coverage_budget",
                                "Failure coverage against the testing budget, mild conditions (seed Figure 3)",
                                "testing budget q (% of clean-correct images selected)",
                                "failure coverage (share of real failures found; ties prorated)", script};
  int status = n_src > 0 ? pb_figure_write(res, &fig, d.buf, d.len, md) : PB_OK;
  pb_text_free(&d);
  return status;
}

int pb_screen_report(const struct pb_meta *meta, const struct pb_screen_layout *L, const int32_t *targets,
                     int32_t n_targets, const struct pb_screen_sum *S, struct pb_results *res,
                     const struct pb_screen_options *opt, const char *probe_desc, const struct pb_text *extra)
{
  struct pb_srep R = {meta, L, targets, n_targets, S, {{0}, {0}}};
  struct pb_text md = {0};
  int status = PB_OK;
  pb_text_printf(&md, "## Screening (pairbound screen)\n\nScores on %s images (fitting on %s images), tiers from %s "
                      "accuracy; primary probe set: %s; %d derangement draws; seed %llu. Per-cell values: "
                      "report/screen_cells.tsv, screen_cell_info.tsv, screen_strata.tsv; definitions: docs/screen.md.\n",
                 opt->swapped ? "development" : "evaluation", opt->swapped ? "evaluation" : "development",
                 opt->eval_tiers ? "evaluation" : "development", probe_desc, opt->n_derange,
                 (unsigned long long)opt->seed);
  pb_srep__auroc(&R);
  status |= pb_table_flush(&R.t, res, "screen_auroc.tsv", &md);
  if (status == PB_OK) status = pb_srep__figure_auroc(&R, res, &md);
  pb_srep__coverage(&R);
  status |= pb_table_flush(&R.t, res, "screen_coverage.tsv", &md);
  if (status == PB_OK) status = pb_srep__figure_budget(&R, res, &md);
  pb_srep__coverage_diff(&R);
  status |= pb_table_flush(&R.t, res, "screen_coverage_diff.tsv", &md);
  pb_srep__ceiling(&R);
  status |= pb_table_flush(&R.t, res, "screen_ceiling.tsv", &md);
  pb_srep__identity(&R);
  status |= pb_table_flush(&R.t, res, "screen_identity.tsv", &md);
  pb_srep__class(&R);
  status |= pb_table_flush(&R.t, res, "screen_class.tsv", &md);
  pb_srep__strata(&R);
  status |= pb_table_flush(&R.t, res, "screen_strata_summary.tsv", &md);
  pb_srep__subsets(&R);
  status |= pb_table_flush(&R.t, res, "screen_subsets.tsv", &md);
  pb_srep__probesets(&R, probe_desc);
  status |= pb_table_flush(&R.t, res, "screen_probesets.tsv", &md);
  if (extra && extra->len) pb_text_printf(&md, "%s", extra->buf);
  if (status == PB_OK) status = pb_results_write_report(res, "screen.md", md.buf, md.len);
  pb_text_free(&md);
  return status ? PB_FAIL : PB_OK;
}
