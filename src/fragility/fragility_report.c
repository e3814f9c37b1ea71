/* Report of `pairbound fragility`: fragility.md with its tables and the
 * profile and drift-decomposition figures (rank 0), from the totals of
 * every rank's units (fragility_stage_reduce.c). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/agg.h"
#include "pairbound/error.h"
#include "pairbound/figure.h"
#include "pairbound/fragility.h"
#include "pairbound/results.h"
#include "pairbound/table.h"
#include "pairbound/text.h"
#include "fragility_internal.h"

/* A row of the tables: its labels, values, counts and exact means (slots
 * a0.. of @p a); a column's .arg says which, its .slot which one. */
struct pb_fragility__row {
  const char *key[2];
  const double *x;
  const int64_t *n;
  const struct pb_agg *a;
  int64_t a0;
};
enum { PB_FR__KEY, PB_FR__X, PB_FR__N, PB_FR__MEAN };

static union pb_cell pb_fragility__cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_fragility__row *r = ctx;
  switch (c->arg) {
  case PB_FR__KEY: return (union pb_cell){.s = r->key[c->slot]};
  case PB_FR__X: return (union pb_cell){.x = r->x[c->slot]};
  case PB_FR__N: return (union pb_cell){.i = r->n[c->slot]};
  case PB_FR__MEAN: return (union pb_cell){.x = pb_agg_mean(r->a, r->a0 + c->slot)};
  }
  return (union pb_cell){.s = ""};
}
/* Its columns: key[k]; x[i], n[i] and the mean of slot a0 + i (d decimals). */
#define PB_FR__COL_KEY(name, k) {name, PB_COL_STR, .slot = k, .arg = PB_FR__KEY}
#define PB_FR__COL_X(name, d, i) {name, PB_COL_NUM, d, .slot = i, .arg = PB_FR__X}
#define PB_FR__COL_N(name, i) {name, PB_COL_INT, .slot = i, .arg = PB_FR__N}
#define PB_FR__COL_MEAN(name, d, i) {name, PB_COL_NUM, d, .slot = i, .arg = PB_FR__MEAN}

/* Table: per source and arm, medians over models and LCB counts. */
static void pb_fragility__source_table(const struct pb_fragility_out *out, const struct pb_fragility_sum *S,
                                       struct pb_table *tb)
{
  static const struct pb_column cols[] = {
    PB_FR__COL_KEY("source", 0), PB_FR__COL_KEY("arm", 1), PB_FR__COL_N("models", 0),
    PB_FR__COL_X("FAUC_up", 4, 0), PB_FR__COL_X("FAUC_down", 4, 1), PB_FR__COL_X("G_R", 4, 2),
    PB_FR__COL_X("G_R_corrected", 4, 3), PB_FR__COL_N("lcb_positive", 1), PB_FR__COL_N("lcb_positive_both_arms", 2),
    PB_FR__COL_X("heldout_agreement", 3, 4), PB_FR__COL_X("null_median_agreement", 3, 5), {NULL}};
  const struct pb_meta *meta = out->meta;
  char title[160], lcb[40];
  pb_text_format_double(out->opt->rho_lcb, lcb);
  snprintf(title, sizeof title, "Restricted fragility by source and arm (medians over models; LCB at rho = %s)", lcb);
  const struct pb_table_spec spec = {
    title, "Arm A fits bins and groups on part A and estimates rates on part B; arm B swaps them.", cols};
  pb_table_open(tb, &spec);
  for (int32_t s = 0; s < meta->n_sources; s++)
    for (int a = 0; a < 2; a++) {
      const int64_t n[3] = {meta->n_models, S->lcb[s * 3 + a], S->lcb[s * 3 + 2]};
      const struct pb_fragility__row row = {{meta->sources[s].name, a == 0 ? "A" : "B"},
                                            S->med + ((size_t)s * 2 + a) * 6, n, NULL, 0};
      pb_table_row(tb, &spec, pb_fragility__cell, &row);
    }
}

static void pb_fragility__drift_table(const struct pb_fragility_out *out, const struct pb_fragility_sum *S,
                                      struct pb_table *tb)
{
  static const struct pb_column cols[] = {
    PB_FR__COL_KEY("source", 0), PB_FR__COL_KEY("tier", 1), PB_FR__COL_N("cells", 0),
    PB_FR__COL_MEAN("mean_ratio", 4, 0), PB_FR__COL_MEAN("mean_L_comp", 4, 1), PB_FR__COL_MEAN("mean_L_cond", 4, 2),
    PB_FR__COL_MEAN("mean_L_total", 4, 3), PB_FR__COL_X("median_utilisation", 3, 0),
    PB_FR__COL_N("utilisation_bins", 1), PB_FR__COL_N("undefined_bins", 2),
    PB_FR__COL_X("max_additivity_residual", 3, 1), {NULL}};
  static const struct pb_table_spec spec = {
    "Composition/conditional split of clean -> perturbed drift (Proposition 8)",
    "Means over model x condition cells; L = target-mass-weighted L2 norm over bins; ratio = L_comp / L_total; "
    "utilisation = |composition| / source envelope, median over cells of the per-cell median over bins where every "
    "target group has source support.",
    cols};
  const struct pb_meta *meta = out->meta;
  pb_table_open(tb, &spec);
  for (int32_t s = 0; s < meta->n_sources; s++)
    for (int ti = 0; ti < PB_FRAGILITY_NTIER; ti++) {
      const int64_t key = (int64_t)s * PB_FRAGILITY_NTIER + ti, *k = S->dk + key * 3;
      if (k[0] == 0) continue;
      const double x[2] = {S->dutil[key], S->dmax[key]};
      const struct pb_fragility__row row = {
        {meta->sources[s].name, ti == 0 ? "all" : ti == 1 ? "none" : pb_protocol_tier_name(ti - 2)}, x, k, &S->dm, key * 4};
      pb_table_row(tb, &spec, pb_fragility__cell, &row);
    }
}

/* Spearman across models of source FAUC_up and ECE (arm A) with L_comp, per
 * perturbed condition, averaged over the conditions where it is defined. */
static void pb_fragility__spearman_table(const struct pb_fragility_out *out, const struct pb_fragility_sum *S,
                                         struct pb_table *tb)
{
  static const struct pb_column cols[] = {
    PB_FR__COL_KEY("source", 0), PB_FR__COL_N("conditions", 0), PB_FR__COL_MEAN("mean_spearman_FAUC_Lcomp", 3, 0),
    PB_FR__COL_MEAN("mean_spearman_ECE_Lcomp", 3, 1), {NULL}};
  static const struct pb_table_spec spec = {
    "Source metrics and the composition term across models",
    "Spearman correlation across models of the source FAUC_up (arm A) and of the source ECE (arm A, rate part) with "
    "L_comp, per perturbed condition; mean over conditions where defined.",
    cols};
  const struct pb_meta *meta = out->meta;
  pb_table_open(tb, &spec);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const int64_t n = meta->sources[s].n_conditions - 1;
    const struct pb_fragility__row row = {{meta->sources[s].name}, NULL, &n, &S->sp, (int64_t)s * 2};
    pb_table_row(tb, &spec, pb_fragility__cell, &row);
  }
}

/* The profile figure's data at radius k: the radius, then per picked model
 * (.slot) its up, down and sqrt(rho G_R) profile (.arg 0-2). */
struct pb_fragility__prof_row {
  const struct pb_fragility_sum *S;
  int32_t n_grid, k;
  char rho[32];
};

static union pb_cell pb_fragility__prof_cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_fragility__prof_row *r = ctx;
  if (c->slot < 0) return (union pb_cell){.s = r->rho};
  return (union pb_cell){.x = r->S->prof[((size_t)c->slot * 3 + c->arg) * r->n_grid + r->k]};
}

/* Profile figure: up and down restricted profiles with the variance law for
 * the models of lowest, median and highest FAUC_up (first source, arm A). */
static int pb_fragility__profile_figure(struct pb_results *res, const struct pb_fragility_out *out,
                                        const struct pb_fragility_sum *S, struct pb_text *md)
{
  static const char *const curve[3] = {"up", "down", "sqrt(rho G_R)"};
  const struct pb_meta *meta = out->meta;
  const struct pb_fragility_options *o = out->opt;
  const int32_t np = S->n_pick;
  struct pb_column *cols = pb_table_cols_new(1 + 3 * np);
  pb_table_col_name(&cols[0], "rho");
  cols[0].slot = -1;
  for (int i = 0; i < np; i++)
    for (int j = 0; j < 3; j++) {
      struct pb_column *c = &cols[1 + 3 * i + j];
      pb_table_col_name(c, "%s %s", meta->model_ids[S->pick[i]], curve[j]);
      c->fmt = PB_COL_NUM, c->slot = i, c->arg = j;
    }
  const struct pb_table_spec spec = {NULL, NULL, cols};
  struct pb_text d = {0};
  pb_table_tsv_open(&d, &spec);
  for (int32_t k = 0; k < o->n_grid; k++) {
    struct pb_fragility__prof_row row = {S, o->n_grid, k, ""};
    snprintf(row.rho, sizeof row.rho, "%.17g", pb_fragility_grid(o, k));
    pb_table_tsv_row(&d, &spec, pb_fragility__prof_cell, &row);
  }
  pb_table_cols_free(cols);
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
static int pb_fragility__drift_figure(struct pb_results *res, const struct pb_fragility_out *out,
                                      const struct pb_fragility_sum *S, struct pb_text *md)
{
  /* a row's values: the cell-weighted means of ratio, L_comp, L_cond, L_total */
  static const struct pb_column cols[] = {
    PB_FR__COL_N("tier", 0), PB_FR__COL_X("L_comp", 0, 1), PB_FR__COL_X("L_cond", 0, 2), PB_FR__COL_X("L_total", 0, 3),
    PB_FR__COL_X("ratio", 0, 0), {NULL}};
  static const struct pb_table_spec spec = {NULL, NULL, cols};
  const struct pb_meta *meta = out->meta;
  struct pb_text d = {0};
  pb_table_tsv_open(&d, &spec);
  for (int tier = PB_TIER_MILD; tier <= PB_TIER_EXTREME; tier++) {
    double sum[4] = {0, 0, 0, 0};
    int64_t cnt = 0;
    for (int32_t s = 0; s < meta->n_sources; s++) {
      const int64_t key = (int64_t)s * PB_FRAGILITY_NTIER + tier + 2, cells = S->dk[key * 3];
      for (int k = 0; k < 4 && cells > 0; k++) {
        const double mean = pb_agg_mean(&S->dm, key * 4 + k);
        sum[k] += cells * (isnan(mean) ? 0 : mean);
      }
      cnt += cells;
    }
    if (cnt == 0) continue;
    const double x[4] = {sum[0] / cnt, sum[1] / cnt, sum[2] / cnt, sum[3] / cnt};
    const int64_t n = tier;
    const struct pb_fragility__row row = {{NULL}, x, &n, NULL, 0};
    pb_table_tsv_row(&d, &spec, pb_fragility__cell, &row);
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

int pb_fragility_report(struct pb_results *res, const struct pb_fragility_out *out, const struct pb_fragility_sum *S)
{
  const struct pb_meta *meta = out->meta;
  const struct pb_fragility_options *o = out->opt;
  struct pb_text md = {0};
  char a[40], b[40], c[40], al[40];
  pb_text_format_double(o->rho_min, a);
  pb_text_format_double(o->rho_max, b);
  pb_text_format_double(o->rho_lcb, c);
  pb_text_format_double(1 - o->alpha, al);
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
  pb_fragility__source_table(out, S, &tb);
  int status = pb_table_flush(&tb, res, "fragility_sources.tsv", &md);
  if (status == PB_OK) {
    pb_fragility__drift_table(out, S, &tb);
    status = pb_table_flush(&tb, res, "fragility_drift_summary.tsv", &md);
  }
  if (status == PB_OK) {
    pb_fragility__spearman_table(out, S, &tb);
    status = pb_table_flush(&tb, res, "fragility_spearman.tsv", &md);
  }
  if (status == PB_OK) status = pb_fragility__profile_figure(res, out, S, &md);
  if (status == PB_OK) status = pb_fragility__drift_figure(res, out, S, &md);
  if (status == PB_OK) status = pb_fragility_report_diag(res, out, S, &md);
  if (status == PB_OK) status = pb_fragility_report_qmap(res, out, S, &md);
  if (status == PB_OK) status = pb_results_write_report(res, "fragility.md", md.buf, md.len);
  pb_text_free(&tb.tsv);
  pb_text_free(&tb.md);
  pb_text_free(&md);
  return status;
}
