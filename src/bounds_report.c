/* Diagnostics tables of the identification stage, laid out like seed 000's
 * Tables 6-11 and B.2: report/identification_*.tsv and report/REPORT.md.
 * Widths are reported in percentage points of N; cells are weighted equally
 * within each source (and tier), summed in cell order. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/protocol.h"
#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/figure.h"
#include "pairbound/util.h"
#include "bounds_stage_internal.h"

#define PP 100.0

static double pb_rep__width(const double *r, int lo) { return (r[lo + 1] - r[lo]) * PP; }

/* First cells of a row: the source, and a tier label when given. */
static void pb_rep__label(struct pb_table *t, const char *source, const char *tier)
{
  pb_table_str(t, source, 1);
  if (tier) pb_table_str(t, tier, 0);
}

/* Table 6: full-grid mean widths. */
static void pb_rep__grid(const struct pb_meta *meta, const struct pb_cell_ref *cells, const double *recs,
                         int64_t n_cells, struct pb_table *t)
{
  pb_table_begin(t, "Full-grid mean identification widths (seed Table 6)",
                 "Percentage points of N; cells weighted equally within a source; dMk means exclude K = 0 cells. "
                 "For L and dMk the I5 bounds equal Ik (Theorem 1).",
                 "source\tcells\tH_I0\tH_Ik\tL_I0\tL_Ik\tdMk_Ik\tdMk_cells\tdMk_straddle_zero\tzero_K_cells", NULL);
  for (int32_t s = pb_meta_target(meta, 0); s < meta->n_sources; s = pb_meta_target(meta, s + 1)) {
    struct pb_nanmean m[5] = {{0}};
    int64_t n = 0, straddle = 0, zero = 0;
    for (int64_t c = 0; c < n_cells; c++) {
      const double *r = recs + c * PB_IF_N;
      if (cells[c].source != s) continue;
      n++;
      pb_nanmean_add(&m[0], pb_rep__width(r, PB_IF_H_I0_LO));
      pb_nanmean_add(&m[1], pb_rep__width(r, PB_IF_H_IK_LO));
      pb_nanmean_add(&m[2], pb_rep__width(r, PB_IF_L_I0_LO));
      pb_nanmean_add(&m[3], pb_rep__width(r, PB_IF_L_IK_LO));
      pb_nanmean_add(&m[4], pb_rep__width(r, PB_IF_D_IK_LO));
      zero += r[PB_IF_K] == 0;
      straddle += r[PB_IF_D_IK_LO] < 0 && r[PB_IF_D_IK_HI] > 0;
    }
    pb_rep__label(t, meta->sources[s].name, NULL);
    pb_table_int(t, n);
    for (int j = 0; j < 5; j++) pb_table_num(t, pb_nanmean_get(&m[j]), 2);
    pb_table_int(t, m[4].n);
    pb_table_int(t, straddle);
    pb_table_int(t, zero);
    pb_table_end_row(t);
  }
}

/* Table 7 (and the A.10 ranges): panel cells with the I5 pass. */
static void pb_rep__panel(const struct pb_meta *meta, const struct pb_cell_ref *cells, const double *recs,
                          int64_t n_cells, struct pb_table *t)
{
  pb_table_begin(t, "Panel: H widths by information level (seed Table 7)",
                 "Percentage points; the same panel cells at every level. Extra = Ik - I5 width; narrower counts "
                 "cells with a strictly narrower I5 interval. L and dMk at I5 (equal to Ik by Theorem 1) and the "
                 "variable-support dMk range at I0 (A.10) follow; normalised H = I5 width / maximum feasible H mass.",
                 "source\tcells\tH_I0\tH_Ik\tH_I5\textra\tnarrower\tL_I5\tdMk_I5\tdMk_I0_varsupport\t"
                 "dMk_I0_defined\tH_normalised", NULL);
  for (int32_t s = pb_meta_target(meta, 0); s < meta->n_sources; s = pb_meta_target(meta, s + 1)) {
    struct pb_nanmean m[8] = {{0}};
    int64_t n = 0, narrower = 0;
    for (int64_t c = 0; c < n_cells; c++) {
      const double *r = recs + c * PB_IF_N;
      if (cells[c].source != s || r[PB_IF_PANEL] != 1 || isnan(r[PB_IF_H_I5_LO])) continue;
      n++;
      double w0 = pb_rep__width(r, PB_IF_H_I0_LO), wk = pb_rep__width(r, PB_IF_H_IK_LO);
      double w5 = pb_rep__width(r, PB_IF_H_I5_LO);
      pb_nanmean_add(&m[0], w0);
      pb_nanmean_add(&m[1], wk);
      pb_nanmean_add(&m[2], w5);
      pb_nanmean_add(&m[3], wk - w5);
      narrower += w5 < wk - 1e-9;
      pb_nanmean_add(&m[4], pb_rep__width(r, PB_IF_L_I5_LO));
      pb_nanmean_add(&m[5], pb_rep__width(r, PB_IF_D_I5_LO));
      pb_nanmean_add(&m[6], pb_rep__width(r, PB_IF_D_I0_LO));
      if (r[PB_IF_H_I0_HI] > 0) pb_nanmean_add(&m[7], (r[PB_IF_H_I5_HI] - r[PB_IF_H_I5_LO]) / r[PB_IF_H_I0_HI]);
    }
    pb_rep__label(t, meta->sources[s].name, NULL);
    pb_table_int(t, n);
    for (int j = 0; j < 4; j++) pb_table_num(t, pb_nanmean_get(&m[j]), 2);
    pb_table_int(t, narrower);
    for (int j = 4; j < 7; j++) pb_table_num(t, pb_nanmean_get(&m[j]), 2);
    pb_table_int(t, m[6].n);
    pb_table_num(t, pb_nanmean_get(&m[7]), 4);
    pb_table_end_row(t);
  }
}

/* Table 9: signed decomposition on positive-K cells, with the 1e-8 pp tie rule. */
static void pb_rep__decomposition(const struct pb_meta *meta, const struct pb_cell_ref *cells, const double *recs,
                                  int64_t n_cells, struct pb_table *t)
{
  pb_table_begin(t, "Signed confidence decomposition (seed Table 9, Eq. 9)",
                 "Positive-K cells; percentage points; |V|>|W| counts cells with |V| > |W| + 1e-8 pp.",
                 "source\tK_pos_cells\tpair_minus_ind\tmean_abs_W\tmean_abs_V\tshare_V_gt_W_pct", NULL);
  for (int32_t s = pb_meta_target(meta, 0); s < meta->n_sources; s = pb_meta_target(meta, s + 1)) {
    struct pb_nanmean m[3] = {{0}};
    int64_t n = 0, vbig = 0;
    for (int64_t c = 0; c < n_cells; c++) {
      const double *r = recs + c * PB_IF_N;
      if (cells[c].source != s || !(r[PB_IF_K] > 0)) continue;
      n++;
      double W = fabs(r[PB_IF_WCOMP]) * PP, V = fabs(r[PB_IF_VCOMP]) * PP;
      pb_nanmean_add(&m[0], (r[PB_IF_D_OBS] - r[PB_IF_D_IND]) * PP);
      pb_nanmean_add(&m[1], W);
      pb_nanmean_add(&m[2], V);
      vbig += V > W + PB_DECOMPOSITION_TIE_PP;
    }
    pb_rep__label(t, meta->sources[s].name, NULL);
    pb_table_int(t, n);
    for (int j = 0; j < 3; j++) pb_table_num(t, pb_nanmean_get(&m[j]), 2);
    pb_table_num(t, n ? PP * (double)vbig / n : NAN, 1);
    pb_table_end_row(t);
  }
}

/* Rows by source, then all tiers and each tier with cells: Tables 10 and 11.
 * rows[i] = {source, tier (-1 = all tiers)}; returns the row count. */
static int32_t pb_rep__tier_rows(const struct pb_meta *meta, const struct pb_cell_ref *cells, const double *recs,
                                 int64_t n_cells, int32_t (*rows)[2])
{
  int32_t n = 0;
  for (int32_t s = pb_meta_target(meta, 0); s < meta->n_sources; s = pb_meta_target(meta, s + 1))
    for (int tier = -1; tier < PB_N_TIERS; tier++) {
      int any = 0;
      for (int64_t c = 0; c < n_cells && !any; c++)
        any = cells[c].source == s && (tier < 0 || recs[c * PB_IF_N + PB_IF_TIER] == tier);
      if (any) rows[n][0] = s, rows[n][1] = tier, n++;
    }
  return n;
}

static int pb_rep__in_row(const struct pb_cell_ref *cell, const double *r, const int32_t row[2])
{
  return cell->source == row[0] && (row[1] < 0 || r[PB_IF_TIER] == row[1]);
}

static int32_t pb_rep__max_rows(const struct pb_meta *meta) { return meta->n_sources * (PB_N_TIERS + 1); }

int pb_identify_intervals(const struct pb_meta *meta, const double *recs, int64_t n_cells,
                          const struct pb_identify_options *opt, MPI_Comm comm, struct pb_identify_intervals *out)
{
  struct pb_cell_ref *cells;
  pb_dist_cells(meta, &cells);
  int32_t (*rows)[2] = pb_malloc((size_t)pb_rep__max_rows(meta) * sizeof *rows);
  out->n_rows = pb_rep__tier_rows(meta, cells, recs, n_cells, rows);
  out->vr = NULL;
  int status = PB_OK;
  if (opt->group_draws > 0) {
    /* statistic (row, metric) = cell mean of that metric over the row's cells */
    int32_t ns = 3 * out->n_rows, *group = pb_malloc((size_t)(n_cells > 0 ? n_cells : 1) * sizeof *group), ng = 0;
    int32_t *model_group = pb_malloc((size_t)meta->n_models * sizeof *model_group);
    for (int32_t m = 0; m < meta->n_models; m++) {
      model_group[m] = -1;
      for (int32_t j = 0; j < m && model_group[m] < 0; j++)
        if (strcmp(meta->model_groups[j], meta->model_groups[m]) == 0) model_group[m] = model_group[j];
      if (model_group[m] < 0) model_group[m] = ng++;
    }
    double *x = pb_malloc((size_t)(n_cells > 0 ? n_cells : 1) * (size_t)ns * sizeof *x);
    for (int64_t c = 0; c < n_cells; c++) {
      group[c] = model_group[cells[c].model];
      for (int32_t r = 0; r < out->n_rows; r++)
        for (int j = 0; j < 3; j++)
          x[c * ns + 3 * r + j] = pb_rep__in_row(&cells[c], recs + c * PB_IF_N, rows[r]) ? recs[c * PB_IF_N + PB_IF_VR_C + j] : NAN;
    }
    struct pb_boot_spec spec = {opt->seed, PB_RNG_GROUP_BOOT, 0, opt->group_draws, PB_BOOT_LEVEL};
    out->vr = pb_malloc((size_t)(ns > 0 ? ns : 1) * sizeof *out->vr);
    status = pb_boot_group_means(x, n_cells, ns, group, ng, &spec, comm, out->vr);
    free(x);
    free(group);
    free(model_group);
  }
  free(rows);
  free(cells);
  return status;
}

/* Table 10 (with model-group intervals when drawn) or Table 11. */
static void pb_rep__by_tier(const struct pb_meta *meta, const struct pb_cell_ref *cells, const double *recs,
                            int64_t n_cells, struct pb_table *t, int table, const struct pb_identify_intervals *iv)
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
  int32_t (*rows)[2] = pb_malloc((size_t)pb_rep__max_rows(meta) * sizeof *rows);
  int32_t nr = pb_rep__tier_rows(meta, cells, recs, n_cells, rows);
  for (int32_t row = 0; row < nr; row++) {
    struct pb_nanmean m[4] = {{0}};
    int64_t n = 0;
    for (int64_t c = 0; c < n_cells; c++) {
      const double *r = recs + c * PB_IF_N;
      if (!pb_rep__in_row(&cells[c], r, rows[row])) continue;
      n++;
      if (table == 10) {
        for (int j = 0; j < 3; j++) pb_nanmean_add(&m[j], r[PB_IF_VR_C + j]);
      } else {
        pb_nanmean_add(&m[0], r[PB_IF_KWC] * PP);
        pb_nanmean_add(&m[1], r[PB_IF_KWG] * PP);
        pb_nanmean_add(&m[2], (r[PB_IF_H] + r[PB_IF_R]) / r[PB_IF_NREC] * PP);
        pb_nanmean_add(&m[3], r[PB_IF_NPINNED] / r[PB_IF_NCLASSES] * PP);
      }
    }
    pb_rep__label(t, meta->sources[rows[row][0]].name, rows[row][1] < 0 ? "all tiers" : pb_tier_name(rows[row][1]));
    pb_table_int(t, n);
    if (table == 10) {
      for (int j = 0; j < 3; j++) {
        const struct pb_interval *v = iv->vr ? &iv->vr[3 * row + j] : NULL;
        pb_text_double(&t->tsv, pb_nanmean_get(&m[j]));
        if (v) pb_text_printf(&t->md, " | %.2f [%.2f, %.2f]", pb_nanmean_get(&m[j]), v->lo, v->hi);
        else pb_text_printf(&t->md, " | %.2f", pb_nanmean_get(&m[j]));
      }
      for (int j = 0; j < 3; j++) {
        const struct pb_interval *v = iv->vr ? &iv->vr[3 * row + j] : NULL;
        pb_text_double(&t->tsv, v ? v->lo : NAN);
        pb_text_double(&t->tsv, v ? v->hi : NAN);
      }
    } else {
      for (int j = 0; j < 4; j++) pb_table_num(t, pb_nanmean_get(&m[j]), 2);
    }
    pb_table_end_row(t);
  }
  free(rows);
}

/* H.2: independent counterparts against the mean over permutation replicates. */
static void pb_rep__perm(const struct pb_meta *meta, const struct pb_cell_ref *cells, const double *recs,
                         int64_t n_cells, struct pb_table *t, int32_t replicates)
{
  char note[256];
  snprintf(note, sizeof note, "Cell means of the independent values (Eq. 4, Eq. 14) and of the same targets under %d "
           "uniform within-class permutations per cell (H.2's empirical control); rates in pp, dMk over K > 0.",
           replicates);
  pb_table_begin(t, "Independent counterparts and the permutation control (Appendix H.2)", note,
                 "source\tcells\tH_ind\tH_perm\tL_ind\tL_perm\tdMk_ind\tdMk_perm", NULL);
  for (int32_t s = pb_meta_target(meta, 0); s < meta->n_sources; s = pb_meta_target(meta, s + 1)) {
    struct pb_nanmean m[6] = {{0}};
    int64_t n = 0;
    for (int64_t c = 0; c < n_cells; c++) {
      const double *r = recs + c * PB_IF_N;
      if (cells[c].source != s) continue;
      n++;
      pb_nanmean_add(&m[0], r[PB_IF_H_IND] * PP);
      pb_nanmean_add(&m[1], r[PB_IF_H_PERM] * PP);
      pb_nanmean_add(&m[2], r[PB_IF_L_IND] * PP);
      pb_nanmean_add(&m[3], r[PB_IF_L_PERM] * PP);
      pb_nanmean_add(&m[4], r[PB_IF_D_IND] * PP);
      pb_nanmean_add(&m[5], r[PB_IF_D_PERM] * PP);
    }
    pb_rep__label(t, meta->sources[s].name, NULL);
    pb_table_int(t, n);
    for (int j = 0; j < 6; j++) pb_table_num(t, pb_nanmean_get(&m[j]), 3);
    pb_table_end_row(t);
  }
}

/* B.2 / Table 8: panel I5 widths before and after matching support; seed means first. */
static void pb_rep__matched(const struct pb_meta *meta, const struct pb_cell_ref *cells, const double *recs,
                            int64_t n_cells, struct pb_table *t)
{
  pb_table_begin(t, "Matched support (seed Table 8, Appendix B.2)",
                 "Panel cells, I5 widths in percentage points, original vs matched to the classes common to every "
                 "source with two evaluation records per class (SHA-256 order of seed, source, class, image; seeds "
                 "20260910-20260914). Matched values average defined cells within each seed, then the seeds "
                 "equally; min/max over seeds are sensitivity summaries. H_norm divides each H width by the "
                 "maximum feasible H mass.",
                 "source\tH_orig\tH_matched\tL_orig\tL_matched\tdMk_orig\tdMk_matched\tdMk_matched_min\t"
                 "dMk_matched_max\tdMk_undefined_cell_seeds\tH_norm_orig\tH_norm_matched", NULL);
  for (int32_t s = pb_meta_target(meta, 0); s < meta->n_sources; s = pb_meta_target(meta, s + 1)) {
    struct pb_nanmean orig[4] = {{0}}, seeds[4] = {{0}};
    double dmin = INFINITY, dmax = -INFINITY;
    int64_t undefined = 0;
    for (int j = 0; j < PB_IDENTIFY_N_MATCH_SEEDS; j++) {
      struct pb_nanmean m[4] = {{0}};
      for (int64_t c = 0; c < n_cells; c++) {
        const double *r = recs + c * PB_IF_N, *x = r + PB_IF_MATCH + 4 * j;
        if (cells[c].source != s || r[PB_IF_PANEL] != 1) continue;
        if (j == 0) {
          pb_nanmean_add(&orig[0], pb_rep__width(r, PB_IF_H_I5_LO));
          pb_nanmean_add(&orig[1], pb_rep__width(r, PB_IF_L_I5_LO));
          pb_nanmean_add(&orig[2], pb_rep__width(r, PB_IF_D_I5_LO));
          if (r[PB_IF_H_I0_HI] > 0) pb_nanmean_add(&orig[3], (r[PB_IF_H_I5_HI] - r[PB_IF_H_I5_LO]) / r[PB_IF_H_I0_HI]);
        }
        for (int k = 0; k < 3; k++) pb_nanmean_add(&m[k], x[k] * PP);
        if (x[3] > 0) pb_nanmean_add(&m[3], x[0] / x[3]);
        undefined += isnan(x[2]) && !isnan(x[0]);
      }
      for (int k = 0; k < 4; k++) pb_nanmean_add(&seeds[k], pb_nanmean_get(&m[k]));
      double d = pb_nanmean_get(&m[2]);
      if (!isnan(d)) dmin = fmin(dmin, d), dmax = fmax(dmax, d);
    }
    pb_rep__label(t, meta->sources[s].name, NULL);
    for (int k = 0; k < 3; k++) {
      pb_table_num(t, pb_nanmean_get(&orig[k]), 2);
      pb_table_num(t, pb_nanmean_get(&seeds[k]), 2);
    }
    pb_table_num(t, isinf(dmin) ? NAN : dmin, 2);
    pb_table_num(t, isinf(dmax) ? NAN : dmax, 2);
    pb_table_int(t, undefined);
    pb_table_num(t, pb_nanmean_get(&orig[3]), 4);
    pb_table_num(t, pb_nanmean_get(&seeds[3]), 4);
    pb_table_end_row(t);
  }
}

/* Figure 1: panel mean widths of H, L and dMk at I0, Ik and I5, one cluster of
 * three bars per source and target (the seed's W0, W1, W2). dMk at I0 is the
 * variable-support range (defined cells only); panel cells with the I5 pass. */
static int pb_rep__figure1(const struct pb_meta *meta, const struct pb_cell_ref *cells, const double *recs,
                           int64_t n_cells, struct pb_results *res, struct pb_text *md)
{
  static const char *const target[3] = {"H", "L", "dMk"};
  static const int lo[3][3] = {{PB_IF_H_I0_LO, PB_IF_H_IK_LO, PB_IF_H_I5_LO},
                               {PB_IF_L_I0_LO, PB_IF_L_IK_LO, PB_IF_L_I5_LO},
                               {PB_IF_D_I0_LO, PB_IF_D_IK_LO, PB_IF_D_I5_LO}};
  struct pb_text d = {0};
  pb_text_printf(&d, "source and target\tI0 (marginal records)\tIk (+ classwise overlap)\tI5 (+ five-state counts)\n");
  int rows = 0;
  for (int32_t s = pb_meta_target(meta, 0); s < meta->n_sources; s = pb_meta_target(meta, s + 1))
    for (int k = 0; k < 3; k++) {
      struct pb_nanmean m[3] = {{0}};
      for (int64_t c = 0; c < n_cells; c++) {
        const double *r = recs + c * PB_IF_N;
        if (cells[c].source != s || r[PB_IF_PANEL] != 1 || isnan(r[PB_IF_H_I5_LO])) continue;
        for (int j = 0; j < 3; j++) pb_nanmean_add(&m[j], pb_rep__width(r, lo[k][j]));
      }
      if (m[2].n == 0) continue;
      pb_text_printf(&d, "%s %s", meta->sources[s].name, target[k]);
      for (int j = 0; j < 3; j++) pb_text_double(&d, pb_nanmean_get(&m[j]));
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
static int pb_rep__matched_figure(const struct pb_meta *meta, const struct pb_cell_ref *cells, const double *recs,
                                  int64_t n_cells, struct pb_results *res, struct pb_text *md)
{
  static const char *const target[3] = {"H", "L", "dMk"};
  static const int lo[3] = {PB_IF_H_I5_LO, PB_IF_L_I5_LO, PB_IF_D_I5_LO};
  struct pb_text d = {0};
  pb_text_printf(&d, "source and target\toriginal support\tmatched support (mean over seeds)\n");
  int rows = 0;
  for (int32_t s = pb_meta_target(meta, 0); s < meta->n_sources; s = pb_meta_target(meta, s + 1))
    for (int k = 0; k < 3; k++) {
      struct pb_nanmean orig = {0}, seeds = {0};
      for (int j = 0; j < PB_IDENTIFY_N_MATCH_SEEDS; j++) {
        struct pb_nanmean m = {0};
        for (int64_t c = 0; c < n_cells; c++) {
          const double *r = recs + c * PB_IF_N;
          if (cells[c].source != s || r[PB_IF_PANEL] != 1) continue;
          if (j == 0) pb_nanmean_add(&orig, pb_rep__width(r, lo[k]));
          pb_nanmean_add(&m, r[PB_IF_MATCH + 4 * j + k] * PP);
        }
        pb_nanmean_add(&seeds, pb_nanmean_get(&m));
      }
      if (orig.n == 0) continue;
      pb_text_printf(&d, "%s %s", meta->sources[s].name, target[k]);
      pb_text_double(&d, pb_nanmean_get(&orig));
      pb_text_double(&d, pb_nanmean_get(&seeds));
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
  for (int32_t s = pb_meta_target(meta, 0); s < meta->n_sources; s = pb_meta_target(meta, s + 1)) {
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

int pb_identify_report(const struct pb_meta *meta, const struct pb_protocol *p, const double *recs, int64_t n_cells,
                       struct pb_results *res, const struct pb_identify_options *opt,
                       const struct pb_identify_intervals *iv)
{
  struct pb_cell_ref *cells;
  pb_dist_cells(meta, &cells);
  struct pb_text md = {0};
  struct pb_table t = {{0}, {0}};
  int status = PB_OK;
  pb_rep__protocol(meta, p, &md);
  pb_text_printf(&md, "\n## Identification (pairbound bounds)\n\nPer-cell intervals: report/bounds.tsv. "
                      "I5 and the variable-support dMk range cover the %s.\n",
                 opt->i5_scope == PB_IDENTIFY_I5_ALL ? "full grid" : opt->i5_scope == PB_IDENTIFY_I5_PANEL ? "panel" : "no cell");
  pb_rep__grid(meta, cells, recs, n_cells, &t);
  status |= pb_table_flush(&t, res, "identification_grid.tsv", &md);
  pb_rep__panel(meta, cells, recs, n_cells, &t);
  status |= pb_table_flush(&t, res, "identification_panel.tsv", &md);
  if (status == PB_OK) status = pb_rep__figure1(meta, cells, recs, n_cells, res, &md);
  pb_rep__decomposition(meta, cells, recs, n_cells, &t);
  status |= pb_table_flush(&t, res, "identification_decomposition.tsv", &md);
  pb_rep__by_tier(meta, cells, recs, n_cells, &t, 10, iv);
  status |= pb_table_flush(&t, res, "identification_variance_ratio.tsv", &md);
  if (pb_boot_one_group(meta->model_groups, meta->n_models, opt->group_draws, "bounds"))
    pb_text_printf(&md, "%s", PB_BOOT_ONE_GROUP_NOTE);
  pb_rep__by_tier(meta, cells, recs, n_cells, &t, 11, iv);
  status |= pb_table_flush(&t, res, "identification_accuracy_only.tsv", &md);
  if (opt->perm_replicates > 0) {
    pb_rep__perm(meta, cells, recs, n_cells, &t, opt->perm_replicates);
    status |= pb_table_flush(&t, res, "identification_permutation.tsv", &md);
  }
  if (opt->matched) {
    pb_rep__matched(meta, cells, recs, n_cells, &t);
    status |= pb_table_flush(&t, res, "identification_matched.tsv", &md);
    if (status == PB_OK) status = pb_rep__matched_figure(meta, cells, recs, n_cells, res, &md);
  }
  if (status == PB_OK) status = pb_identify_report_more(meta, cells, recs, n_cells, res, opt, &md);
  if (status == PB_OK) status = pb_results_write_report(res, "REPORT.md", md.buf, md.len);
  pb_text_free(&md);
  free(cells);
  return status ? PB_FAIL : PB_OK;
}
