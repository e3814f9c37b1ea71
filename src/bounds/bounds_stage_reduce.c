/* The totals behind the identification tables (bounds_stage_internal.h,
 * struct pb_bounds_sum): every rank adds up its own cells into exact
 * per-source sums (pairbound/agg.h) and the sums meet on rank 0, so the
 * tables do not depend on how the cells are split and no rank holds
 * another's records; and Table 10's model-group bootstrap. */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "pairbound/comm.h"
#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "bounds_stage_internal.h"

#define PP 100.0

static double pb_isum__width(const double *r, int lo) { return (r[lo + 1] - r[lo]) * PP; }

/* Tier row of a cell (0: all tiers, 1 + tier), or -1 when in none but the first. */
static int pb_isum__tier_row(const double *r) { return r[PB_IF_TIER] >= 0 && r[PB_IF_TIER] < PB_N_TIERS ? 1 + (int)r[PB_IF_TIER] : -1; }

/* Table 2: mean paired value and mean independent counterpart over the cells
 * where both are defined (the paired value defined implies the independent
 * one is: the observed matching is one of those averaged). */
static void pb_isum__table2_add(struct pb_bounds_sum *S, int32_t s, const double *r)
{
  for (int j = 0; j < PB_BOUNDS_N_T2; j++) {
    /* k is stored as a count; its share is k / n */
    const double div = pb_bounds_t2[j].paired == PB_IF_K ? r[PB_IF_NREC] : 1.0;
    const double p = r[pb_bounds_t2[j].paired] / div * pb_bounds_t2[j].scale;
    const double q = pb_bounds_t2[j].ind >= 0 ? r[pb_bounds_t2[j].ind] * pb_bounds_t2[j].scale : NAN;
    if (isnan(p) || (pb_bounds_t2[j].ind >= 0 && isnan(q))) continue;
    pb_rs_add(S, s, PB_RS_T2 + 3 * j + 0, p);
    pb_rs_add(S, s, PB_RS_T2 + 3 * j + 1, q);
    pb_rs_add(S, s, PB_RS_T2 + 3 * j + 2, p - q);
  }
}

/* Appendix B.2 strata, positive widths (panel cells with the I5 pass), B.4 subsets: one cell. */
static void pb_isum__panel_add(struct pb_bounds_sum *S, int32_t s, const double *r)
{
  if (r[PB_IF_PANEL] != 1 || isnan(r[PB_IF_H_I5_LO])) return;
  for (int j = 0; j < PB_BOUNDS_N_STRATA; j++) {
    double x = r[pb_bounds_strata[j].field];
    if (pb_bounds_strata[j].field == PB_IF_K) x /= r[PB_IF_NREC];
    const int bin = x < pb_bounds_strata[j].cut[0] ? 0 : x < pb_bounds_strata[j].cut[1] ? 1 : 2;
    const int o = PB_RS_STRATA + 5 * (3 * j + bin);
    pb_rs_tally(S, s, o, 1);
    pb_rs_add(S, s, o + 1, (r[PB_IF_H_I5_HI] - r[PB_IF_H_I5_LO]) * PP);
    pb_rs_add(S, s, o + 2, (r[PB_IF_L_I5_HI] - r[PB_IF_L_I5_LO]) * PP);
    pb_rs_add(S, s, o + 3, (r[PB_IF_D_I5_HI] - r[PB_IF_D_I5_LO]) * PP);
    if (r[PB_IF_H_I0_HI] > 0) pb_rs_add(S, s, o + 4, (r[PB_IF_H_I5_HI] - r[PB_IF_H_I5_LO]) / r[PB_IF_H_I0_HI]);
  }
  pb_rs_tally(S, s, PB_RS_POS + 0, 1);
  pb_rs_tally(S, s, PB_RS_POS + 1, r[PB_IF_H_I5_HI] - r[PB_IF_H_I5_LO] > 0);
  pb_rs_tally(S, s, PB_RS_POS + 2, r[PB_IF_L_I5_HI] - r[PB_IF_L_I5_LO] > 0);
  pb_rs_tally(S, s, PB_RS_POS + 3, r[PB_IF_D_I5_HI] - r[PB_IF_D_I5_LO] > 0);
  pb_rs_tally(S, s, PB_RS_POS + 4, !isnan(r[PB_IF_D_I5_LO]));
  for (int j = 0; j < PB_BOUNDS_N_MATCH_SEEDS; j++) {
    const double *x = r + PB_IF_MATCH + 4 * j;
    if (isnan(x[0])) continue;
    pb_rs_tally(S, s, PB_RS_POS + 5, 1);
    for (int k = 0; k < 3; k++) pb_rs_tally(S, s, PB_RS_POS + 6 + k, x[k] > 0);
    pb_rs_tally(S, s, PB_RS_POS + 9, !isnan(x[2]));
  }
}

static void pb_isum__subsets_add(struct pb_bounds_sum *S, int32_t s, const double *r)
{
  const double K = r[PB_IF_K];
  if (!isnan(K) && K == 0) {
    pb_rs_tally(S, s, PB_RS_SUB_ZK, 1);
    pb_rs_tally(S, s, PB_RS_SUB_ZK_IND0, r[PB_IF_K_IND] == 0);
  }
  if (!(K > 0)) return;
  const double W = fabs(r[PB_IF_WCOMP]) * PP, V = fabs(r[PB_IF_VCOMP]) * PP;
  for (int sub = 0; sub < 3; sub++) {
    if ((sub == 1 && K < 20) || (sub == 2 && K > 5)) continue;
    const int o = PB_RS_SUB + 6 * sub;
    pb_rs_tally(S, s, o, 1);
    pb_rs_add(S, s, o + 1, r[PB_IF_D_OBS] * PP);
    pb_rs_add(S, s, o + 2, (r[PB_IF_D_OBS] - r[PB_IF_D_IND]) * PP);
    pb_rs_add(S, s, o + 3, W);
    pb_rs_add(S, s, o + 4, V);
    pb_rs_tally(S, s, o + 5, V > W + PB_DECOMPOSITION_TIE_PP);
  }
}

/* Appendix F's gap counts of one cell (a model with enough development errors) into its tier rows. */
static void pb_isum__gap_add(struct pb_bounds_sum *S, int32_t s, const double *r)
{
  if (isnan(r[PB_IF_GAP])) return;
  const int rows[2] = {0, pb_isum__tier_row(r)}, stride = 1 + PB_GAP_N_GROUPS * PB_GAP_N_COUNTS;
  for (int i = 0; i < 2 && rows[i] >= 0; i++) {
    const int o = PB_RS_GAP + stride * rows[i];
    pb_rs_tally(S, s, o, 1);
    for (int k = 0; k < PB_GAP_N_GROUPS * PB_GAP_N_COUNTS; k++) pb_rs_tally(S, s, o + 1 + k, (int64_t)r[PB_IF_GAP + k]);
  }
}

/* J.2 event counts, F.1 acceptance counts and Brier scores, and F's gap counts of one cell. */
static void pb_isum__counts_add(struct pb_bounds_sum *S, int32_t s, const double *r)
{
  for (int v = 0; v < PB_SUPPORT_N; v++) {
    const double *x = r + PB_IF_J2 + 2 * PB_SUPPORT_N_STRATA * v;
    if (isnan(x[0])) continue;
    for (int k = 0; k < PB_SUPPORT_N_STRATA; k++) {
      pb_rs_tally(S, s, PB_RS_SUPPORT + 2 * (PB_SUPPORT_N_STRATA * v + k), (int64_t)x[2 * k]);
      pb_rs_tally(S, s, PB_RS_SUPPORT + 2 * (PB_SUPPORT_N_STRATA * v + k) + 1, (int64_t)x[2 * k + 1]);
    }
  }
  pb_isum__gap_add(S, s, r);
  if (isnan(r[PB_IF_F1])) return;
  for (int p = 0; p < PB_F1_N_PROTOCOLS; p++) {
    const int o = PB_RS_T40 + (1 + 4 * PB_CAL_N) * p;
    pb_rs_tally(S, s, o, 1);
    for (int k = 0; k < PB_CAL_N; k++) {
      const int f = k == PB_CAL_ISO ? PB_IF_F1_ISO : PB_IF_F1 + k * PB_F1_N_PROTOCOLS * PB_F1_N_COUNTS;
      const double *q = r + f + p * PB_F1_N_COUNTS, N = r[PB_IF_NREC];
      pb_rs_add(S, s, o + 1 + 4 * k + 0, PP * q[PB_F1_H] / N);
      pb_rs_add(S, s, o + 1 + 4 * k + 1, PP * q[PB_F1_L] / N);
      if (q[PB_F1_ACC] > 0) pb_rs_add(S, s, o + 1 + 4 * k + 2, PP * q[PB_F1_ACC_ERR] / q[PB_F1_ACC]);
      pb_rs_add(S, s, o + 1 + 4 * k + 3, q[PB_F1_ACC] / N);
    }
  }
  pb_rs_add(S, s, PB_RS_CAL + 4, r[PB_IF_F1_BRIER1_RAW]);
  pb_rs_add(S, s, PB_RS_CAL + 5, r[PB_IF_F1_BRIER1_PLATT]);
  pb_rs_add(S, s, PB_RS_CAL + 8, r[PB_IF_F1_BRIER1_ISO]);
  pb_rs_add(S, s, PB_RS_CAL + 10, r[PB_IF_F1_BRIER_CLEAN_MC]); /* NaN without a collision column: left out */
  pb_rs_add(S, s, PB_RS_CAL + 11, r[PB_IF_F1_BRIER1_MC]);
}

/* One cell of source s into the totals of Tables 6, 7, 9-11, H.2, 8 and Figure 1. */
static void pb_isum__add(struct pb_bounds_sum *S, int32_t s, const double *r)
{
  /* Table 6 */
  pb_rs_tally(S, s, PB_RS_GRID_N, 1);
  static const int grid[5] = {PB_IF_H_I0_LO, PB_IF_H_IK_LO, PB_IF_L_I0_LO, PB_IF_L_IK_LO, PB_IF_D_IK_LO};
  for (int j = 0; j < 5; j++) pb_rs_add(S, s, PB_RS_GRID_M + j, pb_isum__width(r, grid[j]));
  pb_rs_tally(S, s, PB_RS_GRID_ZERO, r[PB_IF_K] == 0);
  pb_rs_tally(S, s, PB_RS_GRID_STRADDLE, r[PB_IF_D_IK_LO] < 0 && r[PB_IF_D_IK_HI] > 0);
  /* Table 7 and Figure 1: panel cells with the I5 pass */
  if (r[PB_IF_PANEL] == 1 && !isnan(r[PB_IF_H_I5_LO])) {
    const double w0 = pb_isum__width(r, PB_IF_H_I0_LO), wk = pb_isum__width(r, PB_IF_H_IK_LO);
    const double w5 = pb_isum__width(r, PB_IF_H_I5_LO);
    pb_rs_tally(S, s, PB_RS_PANEL_N, 1);
    pb_rs_add(S, s, PB_RS_PANEL_M + 0, w0);
    pb_rs_add(S, s, PB_RS_PANEL_M + 1, wk);
    pb_rs_add(S, s, PB_RS_PANEL_M + 2, w5);
    pb_rs_add(S, s, PB_RS_PANEL_M + 3, wk - w5);
    pb_rs_tally(S, s, PB_RS_PANEL_NARROWER, w5 < wk - 1e-9);
    pb_rs_add(S, s, PB_RS_PANEL_M + 4, pb_isum__width(r, PB_IF_L_I5_LO));
    pb_rs_add(S, s, PB_RS_PANEL_M + 5, pb_isum__width(r, PB_IF_D_I5_LO));
    pb_rs_add(S, s, PB_RS_PANEL_M + 6, pb_isum__width(r, PB_IF_D_I0_LO));
    if (r[PB_IF_H_I0_HI] > 0) pb_rs_add(S, s, PB_RS_PANEL_M + 7, (r[PB_IF_H_I5_HI] - r[PB_IF_H_I5_LO]) / r[PB_IF_H_I0_HI]);
    static const int lo[9] = {PB_IF_H_I0_LO, PB_IF_H_IK_LO, PB_IF_H_I5_LO, PB_IF_L_I0_LO, PB_IF_L_IK_LO,
                              PB_IF_L_I5_LO, PB_IF_D_I0_LO, PB_IF_D_IK_LO, PB_IF_D_I5_LO};
    for (int j = 0; j < 9; j++) pb_rs_add(S, s, PB_RS_FIG1 + j, pb_isum__width(r, lo[j]));
  }
  /* Table 9: positive-K cells */
  if (r[PB_IF_K] > 0) {
    const double W = fabs(r[PB_IF_WCOMP]) * PP, V = fabs(r[PB_IF_VCOMP]) * PP;
    pb_rs_tally(S, s, PB_RS_DEC_N, 1);
    pb_rs_add(S, s, PB_RS_DEC_M + 0, (r[PB_IF_D_OBS] - r[PB_IF_D_IND]) * PP);
    pb_rs_add(S, s, PB_RS_DEC_M + 1, W);
    pb_rs_add(S, s, PB_RS_DEC_M + 2, V);
    pb_rs_tally(S, s, PB_RS_DEC_VBIG, V > W + PB_DECOMPOSITION_TIE_PP);
  }
  /* Tables 10 and 11: the all-tiers row and the cell's tier row */
  const int rows[2] = {0, pb_isum__tier_row(r)};
  for (int i = 0; i < 2 && rows[i] >= 0; i++) {
    const int o = PB_RS_TIER + 8 * rows[i];
    pb_rs_tally(S, s, o, 1);
    for (int j = 0; j < 3; j++) pb_rs_add(S, s, o + 1 + j, r[PB_IF_VR_C + j]);
    pb_rs_add(S, s, o + 4, r[PB_IF_KWC] * PP);
    pb_rs_add(S, s, o + 5, r[PB_IF_KWG] * PP);
    pb_rs_add(S, s, o + 6, (r[PB_IF_H] + r[PB_IF_R]) / r[PB_IF_NREC] * PP);
    pb_rs_add(S, s, o + 7, r[PB_IF_NPINNED] / r[PB_IF_NCLASSES] * PP);
  }
  /* H.2 */
  pb_rs_tally(S, s, PB_RS_PERM_N, 1);
  static const int perm[6] = {PB_IF_H_IND, PB_IF_H_PERM, PB_IF_L_IND, PB_IF_L_PERM, PB_IF_D_IND, PB_IF_D_PERM};
  for (int j = 0; j < 6; j++) pb_rs_add(S, s, PB_RS_PERM_M + j, r[perm[j]] * PP);
  /* Table 8: panel cells, original support and each matched seed */
  if (r[PB_IF_PANEL] == 1) {
    pb_rs_add(S, s, PB_RS_MATCH_ORIG + 0, pb_isum__width(r, PB_IF_H_I5_LO));
    pb_rs_add(S, s, PB_RS_MATCH_ORIG + 1, pb_isum__width(r, PB_IF_L_I5_LO));
    pb_rs_add(S, s, PB_RS_MATCH_ORIG + 2, pb_isum__width(r, PB_IF_D_I5_LO));
    if (r[PB_IF_H_I0_HI] > 0)
      pb_rs_add(S, s, PB_RS_MATCH_ORIG + 3, (r[PB_IF_H_I5_HI] - r[PB_IF_H_I5_LO]) / r[PB_IF_H_I0_HI]);
    for (int j = 0; j < PB_BOUNDS_N_MATCH_SEEDS; j++) {
      const double *x = r + PB_IF_MATCH + 4 * j;
      for (int k = 0; k < 3; k++) pb_rs_add(S, s, PB_RS_MATCH_SEED + 4 * j + k, x[k] * PP);
      if (x[3] > 0) pb_rs_add(S, s, PB_RS_MATCH_SEED + 4 * j + 3, x[0] / x[3]);
      pb_rs_tally(S, s, PB_RS_MATCH_UNDEF, isnan(x[2]) && !isnan(x[0]));
    }
  }
}

/* Statistic (row, metric) = cell mean of that metric over the row's cells:
 * each rank sums its cells per (source, tier row, model group, metric)
 * exactly, the sums reach every rank, and the bootstrap resamples the groups
 * from them (pb_resample_boot_group_sums). */
int pb_bounds_intervals(const struct pb_meta *meta, const double *recs, int64_t first, int64_t n_local,
                          const struct pb_bounds_options *opt, MPI_Comm comm, struct pb_bounds_intervals *out)
{
  const int32_t NR = PB_RS_TIER_ROWS, nrow_max = meta->n_sources * PB_RS_TIER_ROWS;
  int32_t *model_group = pb_malloc((size_t)meta->n_models * sizeof *model_group);
  const int32_t ng = pb_meta_model_groups(meta, model_group);
  int64_t *cells = pb_calloc((size_t)nrow_max, sizeof *cells);
  struct pb_agg a; /* [source][tier row][group][metric] */
  pb_agg_init(&a, (int64_t)nrow_max * ng * 3);
  for (int64_t c = 0; c < n_local; c++) {
    const double *r = recs + c * PB_IF_N;
    const struct pb_cell_ref ref = pb_dist_cell_at(meta, first + c);
    const int rows[2] = {0, pb_isum__tier_row(r)};
    for (int i = 0; i < 2 && rows[i] >= 0; i++) {
      const int64_t row = (int64_t)ref.source * NR + rows[i];
      cells[row]++;
      for (int j = 0; j < 3; j++) pb_agg_add(&a, (row * ng + model_group[ref.model]) * 3 + j, r[PB_IF_VR_C + j]);
    }
  }
  pb_comm_allreduce(MPI_IN_PLACE, cells, nrow_max, MPI_INT64_T, MPI_SUM, comm);
  int32_t (*rows)[2] = pb_malloc((size_t)nrow_max * sizeof *rows);
  out->n_rows = pb_bounds_tier_rows(meta, cells, rows);
  out->vr = NULL;
  int status = PB_OK;
  if (opt->group_draws > 0) status = pb_agg_reduce(&a, comm, -1);
  if (opt->group_draws > 0 && status == PB_OK) {
    const int32_t ns = 3 * out->n_rows;
    double *sum = pb_malloc((size_t)(ng > 0 ? ng : 1) * (ns > 0 ? ns : 1) * sizeof *sum);
    double *cnt = pb_malloc((size_t)(ng > 0 ? ng : 1) * (ns > 0 ? ns : 1) * sizeof *cnt);
    double *full = pb_malloc((size_t)(ns > 0 ? ns : 1) * sizeof *full);
    for (int32_t i = 0; i < out->n_rows; i++)
      for (int j = 0; j < 3; j++) {
        const int64_t row = (int64_t)rows[i][0] * NR + rows[i][1] + 1;
        for (int32_t g = 0; g < ng; g++) {
          sum[(size_t)g * ns + 3 * i + j] = pb_agg_sum(&a, (row * ng + g) * 3 + j);
          cnt[(size_t)g * ns + 3 * i + j] = (double)pb_agg_count(&a, (row * ng + g) * 3 + j);
        }
        full[3 * i + j] = pb_agg_mean_of(&a, row * ng * 3 + j, 3, ng); /* the table's exact mean */
      }
    struct pb_boot_spec spec = {opt->seed, PB_RNG_GROUP_BOOT, 0, opt->group_draws, PB_BOOT_LEVEL};
    out->vr = pb_malloc((size_t)(ns > 0 ? ns : 1) * sizeof *out->vr);
    status = pb_resample_boot_group_sums(sum, cnt, full, ng, ns, &spec, comm, out->vr);
    free(full);
    free(sum);
    free(cnt);
  }
  pb_agg_free(&a);
  free(rows);
  free(cells);
  free(model_group);
  return status;
}

int pb_bounds_summarise(const struct pb_meta *meta, const double *recs, int64_t first, int64_t n_local,
                          MPI_Comm comm, struct pb_bounds_sum *S)
{
  const int32_t ns = meta->n_sources, M = meta->n_models;
  pb_agg_init(&S->a, (int64_t)ns * PB_RS_N);
  S->cal_first = pb_malloc((size_t)(ns * M > 0 ? ns * M : 1) * sizeof *S->cal_first);
  pb_agg_loc_init(S->cal_first, ns * M, INFINITY);
  S->cal_changed = pb_calloc((size_t)(ns * M > 0 ? 2 * ns * M : 1), sizeof *S->cal_changed);
  for (int64_t c = 0; c < n_local; c++) {
    const double *r = recs + c * PB_IF_N;
    const struct pb_cell_ref ref = pb_dist_cell_at(meta, first + c);
    pb_isum__add(S, ref.source, r);
    pb_isum__table2_add(S, ref.source, r);
    pb_isum__panel_add(S, ref.source, r);
    pb_isum__subsets_add(S, ref.source, r);
    pb_isum__counts_add(S, ref.source, r);
    if (!isnan(r[PB_IF_F1])) {
      const size_t k = (size_t)ref.source * M + ref.model;
      pb_agg_loc_min(&S->cal_first[k], (double)(first + c), first + c, 0);
      S->cal_changed[2 * k] += (int64_t)r[PB_IF_F1_CHANGED];
      S->cal_changed[2 * k + 1] += (int64_t)r[PB_IF_F1_ISO_CHANGED];
    }
  }
  /* F.1's per-model values: the rank that holds a model's first cell adds them */
  int status = pb_agg_loc_reduce(S->cal_first, ns * M, 0, comm, -1);
  for (int64_t k = 0; k < (int64_t)ns * M && status == PB_OK; k++) {
    const int64_t g = S->cal_first[k].cell;
    if (g < first || g >= first + n_local) continue;
    const double *r = recs + (g - first) * PB_IF_N;
    static const int f[7] = {PB_IF_F1_PLATT_A,    PB_IF_F1_PLATT_B,    PB_IF_F1_BRIER0_RAW, PB_IF_F1_BRIER0_PLATT,
                             PB_IF_F1_BRIER0_ISO, PB_IF_F1_ISO_BLOCKS, PB_IF_F1_BRIER0_MC};
    static const int slot[7] = {0, 1, 2, 3, 6, 7, 9}; /* PB_RS_CAL's per-model slots */
    for (int j = 0; j < 7; j++) /* the multiclass score is NaN without a collision column: left out, its mean n/a */
      if (j < 6 || !isnan(r[f[j]])) pb_rs_add(S, (int32_t)(k / M), PB_RS_CAL + slot[j], r[f[j]]);
    /* Appendix F: the model takes part in the gap analysis with enough development errors */
    if (!isnan(r[PB_IF_GAP_ERRORS]))
      pb_rs_tally(S, (int32_t)(k / M), PB_RS_GAP_MODELS + (r[PB_IF_GAP_ERRORS] < PB_GAP_MIN_ERRORS), 1);
  }
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) pb_comm_reduce(MPI_IN_PLACE, S->cal_changed, 2 * ns * M, MPI_INT64_T, MPI_SUM, 0, comm);
  else pb_comm_reduce(S->cal_changed, NULL, 2 * ns * M, MPI_INT64_T, MPI_SUM, 0, comm);
  if (status == PB_OK) status = pb_agg_reduce(&S->a, comm, 0);
  return status;
}

void pb_bounds_sum_free(struct pb_bounds_sum *S)
{
  pb_agg_free(&S->a);
  free(S->cal_first);
  free(S->cal_changed);
}

