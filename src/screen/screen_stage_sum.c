/* The totals every screen table reads (pb_screen_sum, screen_internal.h):
 * each rank adds its own cells, exact sums (pairbound/agg.h) reduced to rank
 * 0, so a mean does not depend on how the cells were split over ranks.
 * Cells are weighted equally within source and tier; a paired difference
 * is the mean of cellwise differences over the cells where both values are
 * defined. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/agg.h"
#include "pairbound/error.h"
#include "screen_internal.h"

int32_t pb_screen_tta_row(const struct pb_screen_layout *L)
{
  for (int32_t e = 0; e < L->n_extra; e++)
    if (L->is_tta[e]) return PB_SR_FIXED + 2 * e;
  return -1;
}

void pb_screen_sum_init(struct pb_screen_sum *S, const struct pb_meta *meta, const struct pb_screen_layout *L,
                        const int32_t *targets, int32_t n_targets)
{
  memset(S, 0, sizeof *S);
  S->n_targets = n_targets;
  S->n_rows = L->n_rows;
  S->n_subsets = L->n_subsets;
  S->n_models = meta->n_models;
  S->mg = pb_malloc((size_t)(meta->n_models > 0 ? meta->n_models : 1) * sizeof *S->mg);
  S->n_groups = pb_meta_model_groups(meta, S->mg);
  for (int32_t t = 0; t < n_targets; t++)
    if (meta->sources[targets[t]].n_conditions > S->max_cond) S->max_cond = meta->sources[targets[t]].n_conditions;
  S->tta = pb_screen_tta_row(L);
  const int32_t pairs[PB_SS_NPAIR][2] = {
      [PB_SP_U_S] = {PB_SR_U, PB_SR_S},
      [PB_SP_U_DELTA] = {PB_SR_U, PB_SR_DELTA},
      [PB_SP_U_RET] = {PB_SR_U, PB_SR_RET},
      [PB_SP_U_A3] = {PB_SR_U, PB_SR_A3},
      [PB_SP_GSU_S] = {PB_SR_G_SU, PB_SR_S},
      [PB_SP_DELTA_U] = {PB_SR_DELTA, PB_SR_U},
      [PB_SP_U_TTA] = {PB_SR_U, S->tta},
      [PB_SP_U_MARGIN] = {PB_SR_U, PB_SR_MARGIN},
      [PB_SP_U_ENTROPY] = {PB_SR_U, PB_SR_ENTROPY},
      [PB_SP_U_GSU] = {PB_SR_U, PB_SR_G_SU},
      [PB_SP_NS_DERANGE] = {PB_SR_U_NS, PB_SR_U_DERANGE},
      [PB_SP_CCDEV_CLASS] = {PB_SR_U_CCDEV, PB_SR_CLASS_U_CC}};
  memcpy(S->pair, pairs, sizeof pairs);
  S->per_tt = PB_SS_SUB(S, S->n_subsets, 0);
  pb_agg_init(&S->a, pb_screen_sum_key(S, 3, 0, 0, 0));
}

void pb_screen_sum_free(struct pb_screen_sum *S)
{
  free(S->mg);
  pb_agg_free(&S->a);
}

int pb_screen_sum_reduce(struct pb_screen_sum *S, MPI_Comm comm) { return pb_agg_reduce(&S->a, comm, 0); }

/* metric f (0 n, 1 n_fail, 2 auroc, 3.. coverage) of score row r of a record (NaN for r < 0) */
static double pb_ssum__met(const struct pb_screen_layout *L, const double *rec, int32_t r, int f)
{
  return r < 0 ? NAN : rec[L->row_off + PB_SCREEN_MET * r + f];
}

/* One cell into its (target, tier) key: rows, pairs, Table 21, Table 25, subsets. */
static void pb_ssum__add_tier(struct pb_screen_sum *S, const struct pb_screen_layout *L, int32_t t, int tier,
                              const double *rec)
{
  struct pb_agg *a = &S->a;
  const int64_t k = pb_screen_sum_tt(S, t, tier, 0);
  pb_agg_add_int(a, k + PB_SS_CELLS, 1);
  for (int32_t r = 0; r < S->n_rows; r++)
    for (int f = 0; f < PB_SCREEN_MET; f++) pb_agg_add(a, k + PB_SS_ROW(r, f), pb_ssum__met(L, rec, r, f));
  for (int p = 0; p < PB_SS_NPAIR; p++)
    for (int f = 0; f < PB_SCREEN_MET; f++) {
      const double x = pb_ssum__met(L, rec, S->pair[p][0], f), y = pb_ssum__met(L, rec, S->pair[p][1], f);
      if (!isnan(x) && !isnan(y)) pb_agg_add(a, k + PB_SS_PAIR(S, p, f), x - y);
    }
  /* Table 21: p, ceilings, U / ceiling, random / ceiling at q = 0.2 */
  const int64_t o = k + PB_SS_CEIL(S);
  const double n = rec[PB_SI_N], nf = rec[PB_SI_NFAIL];
  if (n > 0) pb_agg_add(a, o, nf / n);
  for (int b = 0; b < 3 && nf > 0; b++) {
    const double cl = fmin(1.0, pb_screen_budget((int32_t)n, pb_screen_budget_pct[b]) / nf);
    pb_agg_add(a, o + 1 + b, cl);
    pb_agg_add(a, o + 4 + b, pb_ssum__met(L, rec, PB_SR_U, 3 + b) / cl);
    if (b == 1) pb_agg_add(a, o + 7, pb_ssum__met(L, rec, PB_SR_RANDOM, 4) / cl);
  }
  /* Table 25: defined cells, wins, degenerate cells, gap without them */
  const double u = pb_ssum__met(L, rec, PB_SR_U_NS, 2), d = pb_ssum__met(L, rec, PB_SR_U_DERANGE, 2);
  if (!isnan(u) && !isnan(d)) {
    const int deg = rec[PB_SI_DEGENERATE] == 1;
    pb_agg_add_int(a, k + PB_SS_ID(S), 1);
    pb_agg_add(a, k + PB_SS_ID(S) + 1, u > d ? 100.0 : 0.0);
    pb_agg_add_int(a, k + PB_SS_ID(S) + 2, deg);
    if (!deg) pb_agg_add(a, k + PB_SS_ID(S) + 3, u - d);
  }
  const double s_cov = pb_ssum__met(L, rec, PB_SR_S, 4);
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
  if (tier >= 0 && tier < PB_N_TIERS) pb_ssum__add_tier(S, L, t, tier, rec);
  if (tier != PB_TIER_MILD) return;
  const double u = pb_ssum__met(L, rec, PB_SR_U, 4);
  const double d[2] = {u - pb_ssum__met(L, rec, PB_SR_S, 4), S->tta >= 0 ? u - pb_ssum__met(L, rec, S->tta, 4) : NAN};
  const int32_t key[3] = {S->mg[C->model[c]], C->model[c], C->cond[c]};
  for (int kind = 0; kind < 3; kind++) {
    pb_agg_add_int(&S->a, pb_screen_sum_key(S, kind, t, key[kind], 0), 1);
    for (int j = 0; j < 2; j++) pb_agg_add(&S->a, pb_screen_sum_key(S, kind, t, key[kind], 1 + j), d[j]);
  }
}
