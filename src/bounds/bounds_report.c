/* Diagnostics tables of the identification stage, laid out like seed 000's
 * Tables 6-11 and B.2: report/identification_*.tsv and report/REPORT.md.
 * Widths are reported in percentage points of N; cells are weighted equally
 * within each source (and tier).  Every rank adds up its own cells (exact
 * sums, pairbound/agg.h) and rank 0 prints the totals: the tables do not
 * depend on how the cells are split, and no rank holds another's records. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/figure.h"
#include "pairbound/num.h"
#include "pairbound/protocol.h"
#include "bounds_stage_internal.h"

#define PP 100.0

static double pb_rep__width(const double *r, int lo) { return (r[lo + 1] - r[lo]) * PP; }

/* First cells of a row: the source, and a tier label when given. */
static void pb_rep__label(struct pb_table *t, const char *source, const char *tier)
{
  pb_table_str(t, source, 1);
  if (tier) pb_table_str(t, tier, 0);
}

/* Tier row of a cell (0: all tiers, 1 + tier), or -1 when in none but the first. */
static int pb_rep__tier_row(const double *r) { return r[PB_IF_TIER] >= 0 && r[PB_IF_TIER] < PB_N_TIERS ? 1 + (int)r[PB_IF_TIER] : -1; }

/* One cell of source s into the totals of Tables 6, 7, 9-11, H.2, 8 and Figure 1. */
static void pb_rep__add(struct pb_identify_sum *S, int32_t s, const double *r)
{
  /* Table 6 */
  pb_rs_tally(S, s, PB_RS_GRID_N, 1);
  static const int grid[5] = {PB_IF_H_I0_LO, PB_IF_H_IK_LO, PB_IF_L_I0_LO, PB_IF_L_IK_LO, PB_IF_D_IK_LO};
  for (int j = 0; j < 5; j++) pb_rs_add(S, s, PB_RS_GRID_M + j, pb_rep__width(r, grid[j]));
  pb_rs_tally(S, s, PB_RS_GRID_ZERO, r[PB_IF_K] == 0);
  pb_rs_tally(S, s, PB_RS_GRID_STRADDLE, r[PB_IF_D_IK_LO] < 0 && r[PB_IF_D_IK_HI] > 0);
  /* Table 7 and Figure 1: panel cells with the I5 pass */
  if (r[PB_IF_PANEL] == 1 && !isnan(r[PB_IF_H_I5_LO])) {
    const double w0 = pb_rep__width(r, PB_IF_H_I0_LO), wk = pb_rep__width(r, PB_IF_H_IK_LO);
    const double w5 = pb_rep__width(r, PB_IF_H_I5_LO);
    pb_rs_tally(S, s, PB_RS_PANEL_N, 1);
    pb_rs_add(S, s, PB_RS_PANEL_M + 0, w0);
    pb_rs_add(S, s, PB_RS_PANEL_M + 1, wk);
    pb_rs_add(S, s, PB_RS_PANEL_M + 2, w5);
    pb_rs_add(S, s, PB_RS_PANEL_M + 3, wk - w5);
    pb_rs_tally(S, s, PB_RS_PANEL_NARROWER, w5 < wk - 1e-9);
    pb_rs_add(S, s, PB_RS_PANEL_M + 4, pb_rep__width(r, PB_IF_L_I5_LO));
    pb_rs_add(S, s, PB_RS_PANEL_M + 5, pb_rep__width(r, PB_IF_D_I5_LO));
    pb_rs_add(S, s, PB_RS_PANEL_M + 6, pb_rep__width(r, PB_IF_D_I0_LO));
    if (r[PB_IF_H_I0_HI] > 0) pb_rs_add(S, s, PB_RS_PANEL_M + 7, (r[PB_IF_H_I5_HI] - r[PB_IF_H_I5_LO]) / r[PB_IF_H_I0_HI]);
    static const int lo[9] = {PB_IF_H_I0_LO, PB_IF_H_IK_LO, PB_IF_H_I5_LO, PB_IF_L_I0_LO, PB_IF_L_IK_LO,
                              PB_IF_L_I5_LO, PB_IF_D_I0_LO, PB_IF_D_IK_LO, PB_IF_D_I5_LO};
    for (int j = 0; j < 9; j++) pb_rs_add(S, s, PB_RS_FIG1 + j, pb_rep__width(r, lo[j]));
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
  const int rows[2] = {0, pb_rep__tier_row(r)};
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
    pb_rs_add(S, s, PB_RS_MATCH_ORIG + 0, pb_rep__width(r, PB_IF_H_I5_LO));
    pb_rs_add(S, s, PB_RS_MATCH_ORIG + 1, pb_rep__width(r, PB_IF_L_I5_LO));
    pb_rs_add(S, s, PB_RS_MATCH_ORIG + 2, pb_rep__width(r, PB_IF_D_I5_LO));
    if (r[PB_IF_H_I0_HI] > 0)
      pb_rs_add(S, s, PB_RS_MATCH_ORIG + 3, (r[PB_IF_H_I5_HI] - r[PB_IF_H_I5_LO]) / r[PB_IF_H_I0_HI]);
    for (int j = 0; j < PB_IDENTIFY_N_MATCH_SEEDS; j++) {
      const double *x = r + PB_IF_MATCH + 4 * j;
      for (int k = 0; k < 3; k++) pb_rs_add(S, s, PB_RS_MATCH_SEED + 4 * j + k, x[k] * PP);
      if (x[3] > 0) pb_rs_add(S, s, PB_RS_MATCH_SEED + 4 * j + 3, x[0] / x[3]);
      pb_rs_tally(S, s, PB_RS_MATCH_UNDEF, isnan(x[2]) && !isnan(x[0]));
    }
  }
}

/* Table 6: full-grid mean widths. */
static void pb_rep__grid(const struct pb_meta *meta, const struct pb_identify_sum *S, struct pb_table *t)
{
  pb_table_begin(t, "Full-grid mean identification widths (seed Table 6)",
                 "Percentage points of N; cells weighted equally within a source; dMk means exclude K = 0 cells. "
                 "For L and dMk the I5 bounds equal Ik (Theorem 1).",
                 "source\tcells\tH_I0\tH_Ik\tL_I0\tL_Ik\tdMk_Ik\tdMk_cells\tdMk_straddle_zero\tzero_K_cells", NULL);
  for (int32_t s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1)) {
    pb_rep__label(t, meta->sources[s].name, NULL);
    pb_table_int(t, pb_rs_int(S, s, PB_RS_GRID_N));
    for (int j = 0; j < 5; j++) pb_table_num(t, pb_rs_mean(S, s, PB_RS_GRID_M + j), 2);
    pb_table_int(t, pb_rs_count(S, s, PB_RS_GRID_M + 4));
    pb_table_int(t, pb_rs_int(S, s, PB_RS_GRID_STRADDLE));
    pb_table_int(t, pb_rs_int(S, s, PB_RS_GRID_ZERO));
    pb_table_end_row(t);
  }
}

/* Table 7 (and the A.10 ranges): panel cells with the I5 pass. */
static void pb_rep__panel(const struct pb_meta *meta, const struct pb_identify_sum *S, struct pb_table *t)
{
  pb_table_begin(t, "Panel: H widths by information level (seed Table 7)",
                 "Percentage points; the same panel cells at every level. Extra = Ik - I5 width; narrower counts "
                 "cells with a strictly narrower I5 interval. L and dMk at I5 (equal to Ik by Theorem 1) and the "
                 "variable-support dMk range at I0 (A.10) follow; normalised H = I5 width / maximum feasible H mass.",
                 "source\tcells\tH_I0\tH_Ik\tH_I5\textra\tnarrower\tL_I5\tdMk_I5\tdMk_I0_varsupport\t"
                 "dMk_I0_defined\tH_normalised", NULL);
  for (int32_t s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1)) {
    pb_rep__label(t, meta->sources[s].name, NULL);
    pb_table_int(t, pb_rs_int(S, s, PB_RS_PANEL_N));
    for (int j = 0; j < 4; j++) pb_table_num(t, pb_rs_mean(S, s, PB_RS_PANEL_M + j), 2);
    pb_table_int(t, pb_rs_int(S, s, PB_RS_PANEL_NARROWER));
    for (int j = 4; j < 7; j++) pb_table_num(t, pb_rs_mean(S, s, PB_RS_PANEL_M + j), 2);
    pb_table_int(t, pb_rs_count(S, s, PB_RS_PANEL_M + 6));
    pb_table_num(t, pb_rs_mean(S, s, PB_RS_PANEL_M + 7), 4);
    pb_table_end_row(t);
  }
}

/* Table 9: signed decomposition on positive-K cells, with the 1e-8 pp tie rule. */
static void pb_rep__decomposition(const struct pb_meta *meta, const struct pb_identify_sum *S, struct pb_table *t)
{
  pb_table_begin(t, "Signed confidence decomposition (seed Table 9, Eq. 9)",
                 "Positive-K cells; percentage points; |V|>|W| counts cells with |V| > |W| + 1e-8 pp.",
                 "source\tK_pos_cells\tpair_minus_ind\tmean_abs_W\tmean_abs_V\tshare_V_gt_W_pct", NULL);
  for (int32_t s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1)) {
    const int64_t n = pb_rs_int(S, s, PB_RS_DEC_N), vbig = pb_rs_int(S, s, PB_RS_DEC_VBIG);
    pb_rep__label(t, meta->sources[s].name, NULL);
    pb_table_int(t, n);
    for (int j = 0; j < 3; j++) pb_table_num(t, pb_rs_mean(S, s, PB_RS_DEC_M + j), 2);
    pb_table_num(t, n ? PP * (double)vbig / n : NAN, 1);
    pb_table_end_row(t);
  }
}

/* Rows by source, then all tiers and each tier with cells: Tables 10 and 11.
 * rows[i] = {source, tier (-1 = all tiers)}; returns the row count.  @p cells
 * [source][tier row] counts the cells of each. */
static int32_t pb_rep__tier_rows(const struct pb_meta *meta, const int64_t *cells, int32_t (*rows)[2])
{
  int32_t n = 0;
  for (int32_t s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1))
    for (int tier = -1; tier < PB_N_TIERS; tier++)
      if (cells[(size_t)s * PB_RS_TIER_ROWS + tier + 1] > 0) rows[n][0] = s, rows[n][1] = tier, n++;
  return n;
}

static int32_t pb_rep__max_rows(const struct pb_meta *meta) { return meta->n_sources * PB_RS_TIER_ROWS; }

/* Statistic (row, metric) = cell mean of that metric over the row's cells:
 * each rank sums its cells per (source, tier row, model group, metric)
 * exactly, the sums reach every rank, and the bootstrap resamples the groups
 * from them (pb_resample_boot_group_sums). */
int pb_identify_intervals(const struct pb_meta *meta, const double *recs, int64_t first, int64_t n_local,
                          const struct pb_identify_options *opt, MPI_Comm comm, struct pb_identify_intervals *out)
{
  const int32_t NR = PB_RS_TIER_ROWS, nrow_max = pb_rep__max_rows(meta);
  int32_t *model_group = pb_malloc((size_t)meta->n_models * sizeof *model_group);
  const int32_t ng = pb_store_meta_model_groups(meta, model_group);
  int64_t *cells = pb_calloc((size_t)nrow_max, sizeof *cells);
  struct pb_agg a; /* [source][tier row][group][metric] */
  pb_agg_init(&a, (int64_t)nrow_max * ng * 3);
  for (int64_t c = 0; c < n_local; c++) {
    const double *r = recs + c * PB_IF_N;
    const struct pb_cell_ref ref = pb_dist_cell_at(meta, first + c);
    const int rows[2] = {0, pb_rep__tier_row(r)};
    for (int i = 0; i < 2 && rows[i] >= 0; i++) {
      const int64_t row = (int64_t)ref.source * NR + rows[i];
      cells[row]++;
      for (int j = 0; j < 3; j++) pb_agg_add(&a, (row * ng + model_group[ref.model]) * 3 + j, r[PB_IF_VR_C + j]);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, cells, nrow_max, MPI_INT64_T, MPI_SUM, comm);
  int32_t (*rows)[2] = pb_malloc((size_t)nrow_max * sizeof *rows);
  out->n_rows = pb_rep__tier_rows(meta, cells, rows);
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

/* Table 10 (with model-group intervals when drawn) or Table 11. */
static void pb_rep__by_tier(const struct pb_meta *meta, const struct pb_identify_sum *S, struct pb_table *t, int table,
                            const struct pb_identify_intervals *iv)
{
  if (table == 10)
    pb_table_begin(t, "Paired-to-unpaired variance ratio (seed Table 10)",
                      "var(X - X') / (var(X) + var(X')) over evaluation pairs, mean over cells (weighted equally); "
                      "[lo, hi]: 95% percentile intervals from resampling the model groups (--group-draws).",
                      "source\ttier\tcells\tC\tS\tM\tC_lo\tC_hi\tS_lo\tS_hi\tM_lo\tM_hi",
                      "source\ttier\tcells\tC\tS\tM");
  else
    pb_table_begin(t, "Identification of K from accuracies alone (seed Table 11)",
                   "Percentage points of N: width of K from per-class accuracies and from global accuracies, observed "
                   "gross flips h + r, and the share of classes whose overlap is pinned.",
                   "source\ttier\tcells\tK_width_classwise\tK_width_global\tobserved_h_plus_r\tpinned_pct", NULL);
  const int32_t nrow_max = pb_rep__max_rows(meta);
  int64_t *cells = pb_malloc((size_t)nrow_max * sizeof *cells);
  for (int32_t i = 0; i < nrow_max; i++) cells[i] = pb_rs_int(S, i / PB_RS_TIER_ROWS, PB_RS_TIER + 8 * (i % PB_RS_TIER_ROWS));
  int32_t (*rows)[2] = pb_malloc((size_t)nrow_max * sizeof *rows);
  int32_t nr = pb_rep__tier_rows(meta, cells, rows);
  for (int32_t row = 0; row < nr; row++) {
    const int32_t s = rows[row][0];
    const int o = PB_RS_TIER + 8 * (rows[row][1] + 1);
    pb_rep__label(t, meta->sources[s].name, rows[row][1] < 0 ? "all tiers" : pb_protocol_tier_name(rows[row][1]));
    pb_table_int(t, pb_rs_int(S, s, o));
    if (table == 10) {
      for (int j = 0; j < 3; j++) {
        const struct pb_interval *v = iv->vr ? &iv->vr[3 * row + j] : NULL;
        const double m = pb_rs_mean(S, s, o + 1 + j);
        pb_text_double(&t->tsv, m);
        if (v) pb_text_printf(&t->md, " | %.2f [%.2f, %.2f]", m, v->lo, v->hi);
        else pb_text_printf(&t->md, " | %.2f", m);
      }
      for (int j = 0; j < 3; j++) {
        const struct pb_interval *v = iv->vr ? &iv->vr[3 * row + j] : NULL;
        pb_text_double(&t->tsv, v ? v->lo : NAN);
        pb_text_double(&t->tsv, v ? v->hi : NAN);
      }
    } else {
      for (int j = 0; j < 4; j++) pb_table_num(t, pb_rs_mean(S, s, o + 4 + j), 2);
    }
    pb_table_end_row(t);
  }
  free(rows);
  free(cells);
}

/* H.2: independent counterparts against the mean over permutation replicates. */
static void pb_rep__perm(const struct pb_meta *meta, const struct pb_identify_sum *S, struct pb_table *t,
                         int32_t replicates)
{
  char note[256];
  snprintf(note, sizeof note, "Cell means of the independent values (Eq. 4, Eq. 14) and of the same targets under %d "
           "uniform within-class permutations per cell (H.2's empirical control); rates in pp, dMk over K > 0.",
           replicates);
  pb_table_begin(t, "Independent counterparts and the permutation control (Appendix H.2)", note,
                 "source\tcells\tH_ind\tH_perm\tL_ind\tL_perm\tdMk_ind\tdMk_perm", NULL);
  for (int32_t s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1)) {
    pb_rep__label(t, meta->sources[s].name, NULL);
    pb_table_int(t, pb_rs_int(S, s, PB_RS_PERM_N));
    for (int j = 0; j < 6; j++) pb_table_num(t, pb_rs_mean(S, s, PB_RS_PERM_M + j), 3);
    pb_table_end_row(t);
  }
}

/* Mean over the seeds of the per-seed means of target k of source s (seeds in order, undefined ones left out). */
static double pb_rep__seed_mean(const struct pb_identify_sum *S, int32_t s, int k)
{
  struct pb_num_nanmean seeds = {0};
  for (int j = 0; j < PB_IDENTIFY_N_MATCH_SEEDS; j++) pb_num_nanmean_add(&seeds, pb_rs_mean(S, s, PB_RS_MATCH_SEED + 4 * j + k));
  return pb_num_nanmean_get(&seeds);
}

/* B.2 / Table 8: panel I5 widths before and after matching support; seed means first. */
static void pb_rep__matched(const struct pb_meta *meta, const struct pb_identify_sum *S, struct pb_table *t)
{
  pb_table_begin(t, "Matched support (seed Table 8, Appendix B.2)",
                 "Panel cells, I5 widths in percentage points, original vs matched to the classes common to every "
                 "source with two evaluation records per class (SHA-256 order of seed, source, class, image; seeds "
                 "20260910-20260914). Matched values average defined cells within each seed, then the seeds "
                 "equally; min/max over seeds are sensitivity summaries. H_norm divides each H width by the "
                 "maximum feasible H mass.",
                 "source\tH_orig\tH_matched\tL_orig\tL_matched\tdMk_orig\tdMk_matched\tdMk_matched_min\t"
                 "dMk_matched_max\tdMk_undefined_cell_seeds\tH_norm_orig\tH_norm_matched", NULL);
  for (int32_t s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1)) {
    double dmin = INFINITY, dmax = -INFINITY;
    for (int j = 0; j < PB_IDENTIFY_N_MATCH_SEEDS; j++) {
      const double d = pb_rs_mean(S, s, PB_RS_MATCH_SEED + 4 * j + 2);
      if (!isnan(d)) dmin = fmin(dmin, d), dmax = fmax(dmax, d);
    }
    pb_rep__label(t, meta->sources[s].name, NULL);
    for (int k = 0; k < 3; k++) {
      pb_table_num(t, pb_rs_mean(S, s, PB_RS_MATCH_ORIG + k), 2);
      pb_table_num(t, pb_rep__seed_mean(S, s, k), 2);
    }
    pb_table_num(t, isinf(dmin) ? NAN : dmin, 2);
    pb_table_num(t, isinf(dmax) ? NAN : dmax, 2);
    pb_table_int(t, pb_rs_int(S, s, PB_RS_MATCH_UNDEF));
    pb_table_num(t, pb_rs_mean(S, s, PB_RS_MATCH_ORIG + 3), 4);
    pb_table_num(t, pb_rep__seed_mean(S, s, 3), 4);
    pb_table_end_row(t);
  }
}

/* Figure 1: panel mean widths of H, L and dMk at I0, Ik and I5, one cluster of
 * three bars per source and target (the seed's W0, W1, W2). dMk at I0 is the
 * variable-support range (defined cells only); panel cells with the I5 pass. */
static int pb_rep__figure1(const struct pb_meta *meta, const struct pb_identify_sum *S, struct pb_results *res,
                           struct pb_text *md)
{
  static const char *const target[3] = {"H", "L", "dMk"};
  struct pb_text d = {0};
  pb_text_printf(&d, "source and target\tI0 (marginal records)\tIk (+ classwise overlap)\tI5 (+ five-state counts)\n");
  int rows = 0;
  for (int32_t s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1))
    for (int k = 0; k < 3; k++) {
      if (pb_rs_count(S, s, PB_RS_FIG1 + 3 * k + 2) == 0) continue;
      pb_text_printf(&d, "%s %s", meta->sources[s].name, target[k]);
      for (int j = 0; j < 3; j++) pb_text_double(&d, pb_rs_mean(S, s, PB_RS_FIG1 + 3 * k + j));
      pb_text_printf(&d, "\n");
      rows++;
    }
  const struct pb_figure fig = {
      "figure1_identified_widths", "Mean identified widths on the panel by information level (seed Figure 1)",
      "source and target (H: accepted error, L: lost acceptance, dMk: confidence change of correct pairs)",
      "mean interval width (percentage points of N)",
      "set style data histogram\nset style histogram cluster gap 1\nset style fill solid 0.85 border -1\n"
      "set boxwidth 0.9\nset xtics rotate by -35 scale 0\nset yrange [0:*]\nset key top right\n"
      "plot DATA using 2:xtic(1), '' using 3, '' using 4"};
  int status = rows > 0 ? pb_figure_write(res, &fig, d.buf, d.len, md) : PB_OK;
  pb_text_free(&d);
  return status;
}

/* The matched-support comparison (B.2) as a figure: panel I5 widths of H, L
 * and dMk per source, original support against the seed mean of the matched
 * supports. */
static int pb_rep__matched_figure(const struct pb_meta *meta, const struct pb_identify_sum *S, struct pb_results *res,
                                  struct pb_text *md)
{
  static const char *const target[3] = {"H", "L", "dMk"};
  struct pb_text d = {0};
  pb_text_printf(&d, "source and target\toriginal support\tmatched support (mean over seeds)\n");
  int rows = 0;
  for (int32_t s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1))
    for (int k = 0; k < 3; k++) {
      if (pb_rs_count(S, s, PB_RS_MATCH_ORIG + k) == 0) continue;
      pb_text_printf(&d, "%s %s", meta->sources[s].name, target[k]);
      pb_text_double(&d, pb_rs_mean(S, s, PB_RS_MATCH_ORIG + k));
      pb_text_double(&d, pb_rep__seed_mean(S, s, k));
      pb_text_printf(&d, "\n");
      rows++;
    }
  const struct pb_figure fig = {
      "figure_matched_support", "I5 widths on original and matched support (seed Table 8, Appendix B.2)",
      "source and target (H: accepted error, L: lost acceptance, dMk: confidence change of correct pairs)",
      "mean I5 interval width (percentage points of N)",
      "set style data histogram\nset style histogram cluster gap 1\nset style fill solid 0.85 border -1\n"
      "set boxwidth 0.9\nset xtics rotate by -35 scale 0\nset yrange [0:*]\nset key top right\n"
      "plot DATA using 2:xtic(1), '' using 3"};
  int status = rows > 0 ? pb_figure_write(res, &fig, d.buf, d.len, md) : PB_OK;
  pb_text_free(&d);
  return status;
}

/* The protocol summary that heads REPORT.md. */
static void pb_rep__protocol(const struct pb_meta *meta, const struct pb_protocol *p, struct pb_text *md)
{
  pb_text_printf(md, "# pairbound report\n\n## Protocol\n\nAcceptance: S >= tau with tau the lowest of the top "
                     "round(%g n_dev) clean-development scores per model and source (ties accepted).\n\n"
                     "| source | cells | mild | severe | extreme | panel cells |\n|---|---|---|---|---|---|\n",
                 p->coverage);
  for (int32_t s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1)) {
    const struct pb_source *src = &meta->sources[s];
    int64_t tiers[PB_N_TIERS] = {0}, panel = 0;
    for (int32_t c = 0; c < src->n_conditions; c++)
      if (p->src[s].tier[c] >= 0) tiers[p->src[s].tier[c]]++;
    for (int32_t i = 0; i < meta->n_models * src->n_conditions; i++) panel += p->src[s].panel[i];
    pb_text_printf(md, "| %s | %lld | %lld | %lld | %lld | %lld |\n", src->name,
                   (long long)meta->n_models * (src->n_conditions - 1), (long long)tiers[0], (long long)tiers[1],
                   (long long)tiers[2], (long long)panel);
  }
}

/* The totals of every rank's cells on rank 0 (collective); this rank holds
 * n_local records of cells first.. . */
static int pb_rep__summarise(const struct pb_meta *meta, const double *recs, int64_t first, int64_t n_local,
                             MPI_Comm comm, struct pb_identify_sum *S)
{
  const int32_t ns = meta->n_sources, M = meta->n_models;
  pb_agg_init(&S->a, (int64_t)ns * PB_RS_N);
  S->cal_first = pb_malloc((size_t)(ns * M > 0 ? ns * M : 1) * sizeof *S->cal_first);
  pb_agg_loc_init(S->cal_first, ns * M, INFINITY);
  S->cal_changed = pb_calloc((size_t)(ns * M > 0 ? ns * M : 1), sizeof *S->cal_changed);
  for (int64_t c = 0; c < n_local; c++) {
    const double *r = recs + c * PB_IF_N;
    const struct pb_cell_ref ref = pb_dist_cell_at(meta, first + c);
    pb_rep__add(S, ref.source, r);
    pb_identify_more_add(S, ref.source, r);
    if (!isnan(r[PB_IF_F1])) {
      const size_t k = (size_t)ref.source * M + ref.model;
      pb_agg_loc_min(&S->cal_first[k], (double)(first + c), first + c, 0);
      S->cal_changed[k] += (int64_t)r[PB_IF_F1_CHANGED];
    }
  }
  /* F.1's per-model values: the rank that holds a model's first cell adds them */
  int status = pb_agg_loc_reduce(S->cal_first, ns * M, 0, comm, -1);
  for (int64_t k = 0; k < (int64_t)ns * M && status == PB_OK; k++) {
    const int64_t g = S->cal_first[k].cell;
    if (g < first || g >= first + n_local) continue;
    const double *r = recs + (g - first) * PB_IF_N;
    static const int f[4] = {PB_IF_F1_PLATT_A, PB_IF_F1_PLATT_B, PB_IF_F1_BRIER0_RAW, PB_IF_F1_BRIER0_PLATT};
    for (int j = 0; j < 4; j++) pb_rs_add(S, (int32_t)(k / M), PB_RS_CAL + j, r[f[j]]);
  }
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) MPI_Reduce(MPI_IN_PLACE, S->cal_changed, ns * M, MPI_INT64_T, MPI_SUM, 0, comm);
  else MPI_Reduce(S->cal_changed, NULL, ns * M, MPI_INT64_T, MPI_SUM, 0, comm);
  if (status == PB_OK) status = pb_agg_reduce(&S->a, comm, 0);
  return status;
}

static void pb_rep__sum_free(struct pb_identify_sum *S)
{
  pb_agg_free(&S->a);
  free(S->cal_first);
  free(S->cal_changed);
}

int pb_identify_report(const struct pb_meta *meta, const struct pb_protocol *p, const double *recs, int64_t first,
                       int64_t n_local, struct pb_results *res, const struct pb_identify_options *opt,
                       const struct pb_identify_intervals *iv, MPI_Comm comm)
{
  int rank;
  MPI_Comm_rank(comm, &rank);
  struct pb_identify_sum S;
  int status = pb_rep__summarise(meta, recs, first, n_local, comm, &S);
  if (rank != 0 || status != PB_OK) {
    pb_rep__sum_free(&S);
    return status;
  }
  struct pb_text md = {0};
  struct pb_table t = {{0}, {0}};
  pb_rep__protocol(meta, p, &md);
  pb_text_printf(&md, "\n## Identification (pairbound bounds)\n\nPer-cell intervals: report/bounds.tsv. "
                      "I5 and the variable-support dMk range cover the %s.\n",
                 opt->i5_scope == PB_IDENTIFY_I5_ALL ? "full grid" : opt->i5_scope == PB_IDENTIFY_I5_PANEL ? "panel" : "no cell");
  pb_rep__grid(meta, &S, &t);
  status |= pb_table_flush(&t, res, "identification_grid.tsv", &md);
  pb_rep__panel(meta, &S, &t);
  status |= pb_table_flush(&t, res, "identification_panel.tsv", &md);
  if (status == PB_OK) status = pb_rep__figure1(meta, &S, res, &md);
  pb_rep__decomposition(meta, &S, &t);
  status |= pb_table_flush(&t, res, "identification_decomposition.tsv", &md);
  pb_rep__by_tier(meta, &S, &t, 10, iv);
  status |= pb_table_flush(&t, res, "identification_variance_ratio.tsv", &md);
  if (pb_resample_boot_one_group(meta->model_groups, meta->n_models, opt->group_draws, "bounds"))
    pb_text_printf(&md, "%s", PB_BOOT_ONE_GROUP_NOTE);
  pb_rep__by_tier(meta, &S, &t, 11, iv);
  status |= pb_table_flush(&t, res, "identification_accuracy_only.tsv", &md);
  if (opt->perm_replicates > 0) {
    pb_rep__perm(meta, &S, &t, opt->perm_replicates);
    status |= pb_table_flush(&t, res, "identification_permutation.tsv", &md);
  }
  if (opt->matched) {
    pb_rep__matched(meta, &S, &t);
    status |= pb_table_flush(&t, res, "identification_matched.tsv", &md);
    if (status == PB_OK) status = pb_rep__matched_figure(meta, &S, res, &md);
  }
  if (status == PB_OK) status = pb_identify_report_more(meta, &S, res, opt, &md);
  if (status == PB_OK) status = pb_results_write_report(res, "REPORT.md", md.buf, md.len);
  pb_text_free(&md);
  pb_rep__sum_free(&S);
  return status ? PB_FAIL : PB_OK;
}
