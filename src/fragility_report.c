/* Report of `pairbound fragility`: report/fragility.tsv, fragility_drift.tsv,
 * fragility.md with the profile and drift-decomposition figures (rank 0). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#include "pairbound/error.h"
#include "pairbound/fields.h"
#include "pairbound/figure.h"
#include "pairbound/fragility.h"
#include "pairbound/resample.h"
#include "pairbound/results.h"
#include "pairbound/util.h"
#include "fragility_internal.h"

/* report/fragility.tsv: one row per model, source and arm. */
static int pb_fragility__arm_tsv(struct pb_results *res, const struct pb_fragility_out *out)
{
  const struct pb_meta *meta = out->meta;
  struct pb_text t = {0};
  pb_fields_tsv_header(out->arm_fields, "model\tsource\tarm", 0, &t);
  pb_text_printf(&t, "\n");
  for (int64_t u = 0; u < out->n_units; u++)
    for (int a = 0; a < 2; a++) {
      const double *r = out->arms + ((size_t)u * 2 + a) * out->arm_len;
      pb_text_printf(&t, "%s\t%s\t%s", meta->model_ids[u % meta->n_models], meta->sources[u / meta->n_models].name,
                     a == 0 ? "A" : "B");
      pb_fields_tsv_values(out->arm_fields, r, 0, &t);
      pb_text_printf(&t, "\n");
    }
  int status = pb_results_write_report(res, "fragility.tsv", t.buf, t.len);
  pb_text_free(&t);
  return status;
}

/* report/fragility_drift.tsv: one row per model x perturbed condition. */
static int pb_fragility__drift_tsv(struct pb_results *res, const struct pb_fragility_out *out)
{
  const struct pb_meta *meta = out->meta;
  struct pb_text t = {0};
  pb_fields_tsv_header(&pb_fragility_drift_fields, "model\tsource\tcondition\ttier", 0, &t);
  pb_text_printf(&t, "\n");
  for (int64_t u = 0; u < out->n_units; u++) {
    int32_t s = (int32_t)(u / meta->n_models);
    const struct pb_source *S = &meta->sources[s];
    int64_t d = out->drift0[u];
    for (int32_t c = 0; c < S->n_conditions; c++) {
      if (c == S->clean) continue;
      const double *r = out->drift + (size_t)d++ * PB_FD_FIXED;
      int tier = out->tier[s][c];
      pb_text_printf(&t, "%s\t%s\t%s\t%s", meta->model_ids[u % meta->n_models], S->name, S->conditions[c],
                     tier >= 0 ? pb_tier_name(tier) : "none");
      pb_fields_tsv_values(&pb_fragility_drift_fields, r, 0, &t);
      pb_text_printf(&t, "\n");
    }
  }
  int status = pb_results_write_report(res, "fragility_drift.tsv", t.buf, t.len);
  pb_text_free(&t);
  return status;
}

static int pb_fragility__cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of the defined values among v[0..n) (sorts in place after compaction). */
static double pb_fragility__median(double *v, int64_t n)
{
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++)
    if (!isnan(v[i])) v[m++] = v[i];
  qsort(v, (size_t)m, sizeof *v, pb_fragility__cmp);
  return pb_percentile_sorted(v, m, 0.5);
}

/* Table: per source and arm, medians over models and LCB counts. */
static void pb_fragility__source_table(const struct pb_fragility_out *out, struct pb_table *tb)
{
  const struct pb_meta *meta = out->meta;
  int32_t M = meta->n_models;
  char title[160], lcb[40];
  pb_format_double(out->opt->rho_lcb, lcb);
  snprintf(title, sizeof title, "Restricted fragility by source and arm (medians over models; LCB at rho = %s)", lcb);
  pb_table_begin(tb, title, "Arm A fits bins and groups on part A and estimates rates on part B; arm B swaps them.",
                 "source\tarm\tmodels\tFAUC_up\tFAUC_down\tG_R\tG_R_corrected\tlcb_positive\tlcb_positive_both_arms\t"
                 "heldout_agreement\tnull_median_agreement", NULL);
  static const int cols[] = {PB_FA_FAUC_UP, PB_FA_FAUC_DOWN, PB_FA_G_R, PB_FA_G_R_CORR};
  double *v = pb_malloc((size_t)M * sizeof *v);
  for (int32_t s = 0; s < meta->n_sources; s++)
    for (int a = 0; a < 2; a++) {
      const double *base = out->arms + (size_t)s * M * 2 * out->arm_len;
#define PB_FR_AT(m, arm, f) base[((size_t)(m) * 2 + (arm)) * out->arm_len + (f)]
      pb_table_str(tb, meta->sources[s].name, 1);
      pb_table_str(tb, a == 0 ? "A" : "B", 0);
      pb_table_int(tb, M);
      for (int c = 0; c < 4; c++) {
        for (int32_t m = 0; m < M; m++) v[m] = PB_FR_AT(m, a, cols[c]);
        pb_table_num(tb, pb_fragility__median(v, M), 4);
      }
      int64_t pos = 0, both = 0;
      for (int32_t m = 0; m < M; m++) {
        pos += PB_FR_AT(m, a, PB_FA_LCB) > 0;
        both += PB_FR_AT(m, 0, PB_FA_LCB) > 0 && PB_FR_AT(m, 1, PB_FA_LCB) > 0;
      }
      pb_table_int(tb, pos);
      pb_table_int(tb, both);
      for (int32_t m = 0; m < M; m++) v[m] = PB_FR_AT(m, a, PB_FA_AGREE);
      pb_table_num(tb, pb_fragility__median(v, M), 3);
      for (int32_t m = 0; m < M; m++) v[m] = PB_FR_AT(m, a, PB_FA_NULL_MEDIAN);
      pb_table_num(tb, pb_fragility__median(v, M), 3);
      pb_table_end_row(tb);
#undef PB_FR_AT
    }
  free(v);
}

/* Mean of field f over the drift records of source s (all tiers when tier < -1). */
static void pb_fragility__drift_stats(const struct pb_fragility_out *out, int32_t s, int tier, double *mean,
                                      int64_t *cells, double *med_util, int64_t *util_bins, int64_t *undef_bins,
                                      double *max_resid)
{
  const struct pb_meta *meta = out->meta;
  const struct pb_source *S = &meta->sources[s];
  double sum[4] = {0, 0, 0, 0};
  int64_t cnt[4] = {0, 0, 0, 0}, n = 0;
  double *util = pb_malloc((size_t)(meta->n_models * S->n_conditions + 1) * sizeof *util);
  *util_bins = *undef_bins = 0;
  *max_resid = 0;
  static const int f[4] = {PB_FD_RATIO, PB_FD_L_COMP, PB_FD_L_COND, PB_FD_L_TOTAL};
  for (int32_t m = 0; m < meta->n_models; m++) {
    int64_t d = out->drift0[(int64_t)s * meta->n_models + m];
    for (int32_t c = 0; c < S->n_conditions; c++) {
      if (c == S->clean) continue;
      const double *r = out->drift + (size_t)d++ * PB_FD_FIXED;
      if (tier >= -1 && out->tier[s][c] != tier) continue;
      for (int k = 0; k < 4; k++)
        if (!isnan(r[f[k]])) sum[k] += r[f[k]], cnt[k]++;
      util[n++] = r[PB_FD_UTIL];
      *util_bins += (int64_t)r[PB_FD_N_UTIL];
      *undef_bins += (int64_t)r[PB_FD_N_UNDEF];
      *max_resid = fmax(*max_resid, r[PB_FD_RESIDUAL]);
    }
  }
  for (int k = 0; k < 4; k++) mean[k] = cnt[k] ? sum[k] / cnt[k] : NAN;
  *cells = n;
  *med_util = pb_fragility__median(util, n);
  free(util);
}

static void pb_fragility__drift_table(const struct pb_fragility_out *out, struct pb_table *tb)
{
  const struct pb_meta *meta = out->meta;
  pb_table_begin(tb, "Composition/conditional split of clean -> perturbed drift (Proposition 8)",
                 "Means over model x condition cells; L = target-mass-weighted L2 norm over bins; ratio = L_comp / "
                 "L_total; utilisation = |composition| / source envelope, median over cells of the per-cell median "
                 "over bins where every target group has source support.",
                 "source\ttier\tcells\tmean_ratio\tmean_L_comp\tmean_L_cond\tmean_L_total\tmedian_utilisation\t"
                 "utilisation_bins\tundefined_bins\tmax_additivity_residual", NULL);
  for (int32_t s = 0; s < meta->n_sources; s++)
    for (int tier = -2; tier <= PB_TIER_EXTREME; tier++) {
      double mean[4], mu, resid;
      int64_t cells, ub, un;
      pb_fragility__drift_stats(out, s, tier, mean, &cells, &mu, &ub, &un, &resid);
      if (cells == 0) continue;
      pb_table_str(tb, meta->sources[s].name, 1);
      pb_table_str(tb, tier == -2 ? "all" : tier == -1 ? "none" : pb_tier_name(tier), 0);
      pb_table_int(tb, cells);
      for (int k = 0; k < 4; k++) pb_table_num(tb, mean[k], 4);
      pb_table_num(tb, mu, 3);
      pb_table_int(tb, ub);
      pb_table_int(tb, un);
      pb_table_num(tb, resid, 3);
      pb_table_end_row(tb);
    }
}

/* Spearman across models of source FAUC_up and ECE (arm A) with L_comp, per
 * perturbed condition, averaged over the conditions where it is defined. */
static void pb_fragility__spearman_table(const struct pb_fragility_out *out, struct pb_table *tb)
{
  const struct pb_meta *meta = out->meta;
  int32_t M = meta->n_models;
  pb_table_begin(tb, "Source metrics and the composition term across models",
                 "Spearman correlation across models of the source FAUC_up (arm A) and of the source ECE (arm A, rate "
                 "part) with L_comp, per perturbed condition; mean over conditions where defined.",
                 "source\tconditions\tmean_spearman_FAUC_Lcomp\tmean_spearman_ECE_Lcomp", NULL);
  double *x = pb_malloc((size_t)M * sizeof *x), *e = pb_malloc((size_t)M * sizeof *e);
  double *y = pb_malloc((size_t)M * sizeof *y), *w = pb_malloc((size_t)2 * M * sizeof *w);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *S = &meta->sources[s];
    double sf = 0, se = 0;
    int32_t nf = 0, ne = 0, k = 0;
    for (int32_t c = 0; c < S->n_conditions; c++) {
      if (c == S->clean) continue;
      int32_t n = 0;
      for (int32_t m = 0; m < M; m++) {
        int64_t u = (int64_t)s * M + m;
        const double *a = out->arms + (size_t)u * 2 * out->arm_len;
        double lc = out->drift[(size_t)(out->drift0[u] + k) * PB_FD_FIXED + PB_FD_L_COMP];
        if (isnan(a[PB_FA_FAUC_UP]) || isnan(a[PB_FA_ECE]) || isnan(lc)) continue;
        x[n] = a[PB_FA_FAUC_UP], e[n] = a[PB_FA_ECE], y[n++] = lc;
      }
      k++;
      if (n < 3) continue;
      double rf = gsl_stats_spearman(x, 1, y, 1, (size_t)n, w), re = gsl_stats_spearman(e, 1, y, 1, (size_t)n, w);
      if (isfinite(rf)) sf += rf, nf++;
      if (isfinite(re)) se += re, ne++;
    }
    pb_table_str(tb, S->name, 1);
    pb_table_int(tb, S->n_conditions - 1);
    pb_table_num(tb, nf ? sf / nf : NAN, 3);
    pb_table_num(tb, ne ? se / ne : NAN, 3);
    pb_table_end_row(tb);
  }
  free(x);
  free(e);
  free(y);
  free(w);
}

/* Profile figure: up and down restricted profiles with the variance law for
 * the models of lowest, median and highest FAUC_up (first source, arm A). */
static int pb_fragility__profile_figure(struct pb_results *res, const struct pb_fragility_out *out, struct pb_text *md)
{
  const struct pb_meta *meta = out->meta;
  const struct pb_fragility_options *o = out->opt;
  int32_t M = meta->n_models, pick[3], np = 0;
  int32_t *ord = pb_malloc((size_t)M * sizeof *ord), n = 0;
  for (int32_t m = 0; m < M; m++)
    if (!isnan(out->arms[(size_t)m * 2 * out->arm_len + PB_FA_FAUC_UP])) ord[n++] = m;
  for (int32_t i = 1; i < n; i++) /* insertion sort by FAUC_up, ties by model order: stable and exact */
    for (int32_t j = i; j > 0; j--) {
      double a = out->arms[(size_t)ord[j - 1] * 2 * out->arm_len + PB_FA_FAUC_UP];
      double b = out->arms[(size_t)ord[j] * 2 * out->arm_len + PB_FA_FAUC_UP];
      if (!(b < a)) break;
      int32_t t = ord[j];
      ord[j] = ord[j - 1];
      ord[j - 1] = t;
    }
  if (n > 0) pick[np++] = ord[0];
  if (n > 2) pick[np++] = ord[n / 2];
  if (n > 1) pick[np++] = ord[n - 1];
  free(ord);
  struct pb_text d = {0};
  pb_text_printf(&d, "rho");
  for (int i = 0; i < np; i++)
    pb_text_printf(&d, "\t%s up\t%s down\t%s sqrt(rho G_R)", meta->model_ids[pick[i]], meta->model_ids[pick[i]],
                   meta->model_ids[pick[i]]);
  pb_text_printf(&d, "\n");
  for (int32_t k = 0; k < o->n_grid; k++) {
    pb_text_printf(&d, "%.17g", pb_fragility_grid(o, k));
    for (int i = 0; i < np; i++) {
      const double *r = out->arms + (size_t)pick[i] * 2 * out->arm_len + PB_FA_FIXED;
      pb_text_double(&d, r[k]);
      pb_text_double(&d, r[o->n_grid + k]);
      pb_text_double(&d, r[2 * o->n_grid + k]);
    }
    pb_text_printf(&d, "\n");
  }
  char title[160], script[512];
  snprintf(title, sizeof title, "Restricted fragility profiles, %s, arm A (lowest, median, highest FAUC)",
           meta->sources[0].name);
  snprintf(script, sizeof script,
           "set logscale x\nset xrange [%.17g:%.17g]\nset key left top\nset style data linespoints\n"
           "plot for [i=0:%d] DATA using 1:(column(2+3*i)) lt i+1 pt 7 dt 1 title columnheader(2+3*i), "
           "for [i=0:%d] DATA using 1:(column(3+3*i)) lt i+1 pt 5 dt 2 title columnheader(3+3*i), "
           "for [i=0:%d] DATA using 1:(column(4+3*i)) lt i+1 pt 0 dt 3 title columnheader(4+3*i)",
           o->rho_min, o->rho_max, np - 1, np - 1, np - 1);
  struct pb_figure fig = {"fragility_profiles", title, "chi-square budget rho (log scale)",
                          "reliability movement (accuracy units)", script};
  int status = np > 0 ? pb_figure_write(res, &fig, d.buf, d.len, md) : PB_OK;
  pb_text_free(&d);
  return status;
}

/* Drift figure: mean L_comp, L_cond and L_total by severity tier, all sources pooled. */
static int pb_fragility__drift_figure(struct pb_results *res, const struct pb_fragility_out *out, struct pb_text *md)
{
  const struct pb_meta *meta = out->meta;
  struct pb_text d = {0};
  pb_text_printf(&d, "tier\tL_comp\tL_cond\tL_total\tratio\n");
  for (int tier = PB_TIER_MILD; tier <= PB_TIER_EXTREME; tier++) {
    double sum[4] = {0, 0, 0, 0};
    int64_t cnt = 0;
    for (int32_t s = 0; s < meta->n_sources; s++) {
      double mean[4], mu, resid;
      int64_t cells, ub, un;
      pb_fragility__drift_stats(out, s, tier, mean, &cells, &mu, &ub, &un, &resid);
      for (int k = 0; k < 4 && cells > 0; k++) sum[k] += cells * (isnan(mean[k]) ? 0 : mean[k]);
      cnt += cells;
    }
    if (cnt == 0) continue;
    pb_text_printf(&d, "%d", tier);
    pb_text_double(&d, sum[1] / cnt);
    pb_text_double(&d, sum[2] / cnt);
    pb_text_double(&d, sum[3] / cnt);
    pb_text_double(&d, sum[0] / cnt);
    pb_text_printf(&d, "\n");
  }
  struct pb_figure fig = {"fragility_drift_tiers", "Clean -> perturbed drift split by severity tier (all sources, cell means)",
                          "severity tier", "target-mass-weighted L2 norm (accuracy units)",
                          "set xtics ('mild' 0, 'severe' 1, 'extreme' 2)\nset xrange [-0.5:2.5]\nset key left top\n"
                          "plot DATA using 1:2 with linespoints pt 7, DATA using 1:3 with linespoints pt 5, "
                          "DATA using 1:4 with linespoints pt 9"};
  int status = pb_figure_write(res, &fig, d.buf, d.len, md);
  pb_text_free(&d);
  return status;
}

int pb_fragility_report(struct pb_results *res, const struct pb_fragility_out *out)
{
  const struct pb_meta *meta = out->meta;
  const struct pb_fragility_options *o = out->opt;
  int status = pb_fragility__arm_tsv(res, out);
  if (status == PB_OK) status = pb_fragility__drift_tsv(res, out);
  if (status != PB_OK) return status;
  struct pb_text md = {0};
  char a[40], b[40], c[40], al[40];
  pb_format_double(o->rho_min, a);
  pb_format_double(o->rho_max, b);
  pb_format_double(o->rho_lcb, c);
  pb_format_double(1 - o->alpha, al);
  pb_text_printf(&md,
                 "# Fragility (seed 001)\n\n"
                 "Restricted fragility profiles of every model and source from the clean records, both split arms, "
                 "and the composition/conditional split of clean -> perturbed drift (docs/fragility.md).\n\n"
                 "- %d confidence bins (equal mass on the fitting part) x %d within-bin quantile groups of the group "
                 "signal; images split by a seeded hash of their id (seed %llu): part A 40%%, part B 40%%, part E 20%%.\n"
                 "- FAUC: trapezoids in log rho over %d log-spaced radii from %s to %s (not normalised, uncorrected "
                 "rates); G_R_corrected subtracts the binomial noise of the group rates.\n"
                 "- Lower confidence bound: %s-level split-sample bound at rho = %s (Clopper-Pearson limits, "
                 "Bonferroni over bins, group masses and rates).\n"
                 "- Held-out agreement: Spearman over bins of predicted and realised drift on part E at rho = %s; "
                 "null: %d within-bin label permutations of the rate part.\n",
                 (int)o->n_bins, (int)o->n_groups, (unsigned long long)o->seed, (int)o->n_grid, a, b, al, c, c,
                 (int)o->n_null);
  pb_text_printf(&md, "- Group signal per source:");
  for (int32_t s = 0; s < meta->n_sources; s++)
    pb_text_printf(&md, "%s %s: %s", s ? ";" : "", meta->sources[s].name, out->u_signal[s]);
  pb_text_printf(&md, ".\n\nTables: report/fragility.tsv (one row per model, source and arm), "
                      "report/fragility_drift.tsv (one row per model x perturbed condition).\n\n");
  struct pb_table tb = {{0}, {0}};
  pb_fragility__source_table(out, &tb);
  status = pb_table_flush(&tb, res, "fragility_sources.tsv", &md);
  if (status == PB_OK) {
    pb_fragility__drift_table(out, &tb);
    status = pb_table_flush(&tb, res, "fragility_drift_summary.tsv", &md);
  }
  if (status == PB_OK) {
    pb_fragility__spearman_table(out, &tb);
    status = pb_table_flush(&tb, res, "fragility_spearman.tsv", &md);
  }
  if (status == PB_OK) status = pb_fragility__profile_figure(res, out, &md);
  if (status == PB_OK) status = pb_fragility__drift_figure(res, out, &md);
  if (status == PB_OK) status = pb_results_write_report(res, "fragility.md", md.buf, md.len);
  pb_text_free(&tb.tsv);
  pb_text_free(&tb.md);
  pb_text_free(&md);
  return status;
}
