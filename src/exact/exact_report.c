/* Report of `pairbound exact score`: report/exact_*.tsv, report/exact.md and
 * its figures (docs/exact.md, "Scoring"); and what the worlds report shares
 * with it (the summary values, the row getter, means over resamples and
 * seeds). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/exact.h"
#include "pairbound/figure.h"
#include "pairbound/results.h"
#include "pairbound/table.h"
#include "pairbound/text.h"
#include "exact_internal.h"

double pb_exact_mean(const double *v, int n, int stride)
{
  double s = 0.0;
  for (int i = 0; i < n; i++) s += v[i * stride];
  return s / n;
}

double pb_exact_sd(const double *v, int n, int stride)
{
  double m = pb_exact_mean(v, n, stride), s = 0.0;
  for (int i = 0; i < n; i++) s += (v[i * stride] - m) * (v[i * stride] - m);
  return n > 1 ? sqrt(s / (n - 1)) : NAN;
}

/* Endpoint c (0 ch_lower .. 3 dv_upper) at size index a, averaged over the seeds. */
static double pb_exact__knn_mean(const struct pb_exact_result *r, int a, int c)
{
  const double *e = (a < r->n_sizes ? &r->knn[a][0].ch_lower : &r->knn_relevant[0].ch_lower) + c;
  return pb_exact_mean(e, PB_EXACT_NSEEDS, (int)(sizeof(struct pb_exact_nn) / sizeof(double)));
}

void pb_exact_knn_row(const struct pb_exact_result *r, int a, double x[5])
{
  for (int c = 0; c < 4; c++) x[c] = pb_exact__knn_mean(r, a, c);
  x[4] = r->world.bayes_error;
}

const char *pb_exact_knn_bound_text(int knn_bound)
{
  return knn_bound == PB_EXACT_KNN_SQRT2
           ? "R5 / (1 + sqrt(2/5)), the more cautious form (--knn-bound sqrt2)"
           : "R5 / (1 + 1/sqrt(5)), the form of FeeBee's implementation, which seed 002 follows (--knn-bound feebee)";
}

void pb_exact_summary(const struct pb_exact_result *r, const char **name, double *v)
{
  const char *n[PB_EXACT_NSUM] = {
    "n_cases", "expected_accuracy", "bayes_accuracy_cases", "delta_acc", "realised_accuracy", "kl_nats",
    "logloss_q_nats", "logloss_pstar_nats", "clipped_forecasts", "unknown_forecasts", "cases_ece_pstar", "cases_mc_pstar", "cases_mc_labels",
    "world_bayes_error", "world_bayes_accuracy", "world_positive_prior", "world_entropy_bits", "world_states",
    "reference_n", "reference_kl_nats", "reference_ece", "reference_mc", "reference_mc_halfwidth", "reference_mc_group",
    "reference_mc_bin", "ho_covered_mass"};
  double x[PB_EXACT_NSUM] = {
    (double)r->n_cases, r->cases.expected, r->cases.bayes, r->cases.bayes - r->cases.expected, r->cases.realised,
    r->cases.kl, r->cases.logloss_q, r->cases.logloss_p, (double)r->cases.clipped, (double)r->cases.unknown, r->cases_ece, r->cases_mc, r->emp_cases_mc,
    r->world.bayes_error, r->world.bayes_accuracy, r->world.positive_prior, r->world.entropy_bits,
    (double)r->world.states, r->have_reference ? (double)r->reference_n : NAN, r->have_reference ? r->ref_kl : NAN,
    r->have_reference ? r->ref_ece : NAN, r->have_reference ? r->ref_mc : NAN,
    r->have_reference ? r->ref_halfwidth : NAN, r->have_reference ? (double)r->ref_mc_group : NAN,
    r->have_reference ? (double)r->ref_mc_bin : NAN, r->have_ho ? r->covered_mass : NAN};
  for (int i = 0; i < PB_EXACT_NSUM; i++) name[i] = n[i], v[i] = x[i];
}

union pb_cell pb_exact_row_cell(const void *row, const struct pb_column *c)
{
  const struct pb_exact_row *r = row;
  switch (c->arg) {
  case PB_EXACT_ROW_KEY: return (union pb_cell){.s = r->key[c->slot]};
  case PB_EXACT_ROW_N: return (union pb_cell){.i = r->n[c->slot]};
  case PB_EXACT_ROW_X: return (union pb_cell){.x = r->x[c->slot]};
  }
  return (union pb_cell){.s = ""};
}

/* The summary values; counts show without decimals in the markdown. */
static void pb_exact__scores_table(struct pb_table *t, const struct pb_world *w, const struct pb_exact_predictor *p,
                                   const struct pb_exact_result *r)
{
  static const struct pb_column count[] = {{"quantity", PB_COL_STR, .arg = PB_EXACT_ROW_KEY},
                                           {"value", PB_COL_NUM, 0, .arg = PB_EXACT_ROW_X}, {NULL}},
                                value[] = {{"quantity", PB_COL_STR, .arg = PB_EXACT_ROW_KEY},
                                           {"value", PB_COL_NUM, 6, .arg = PB_EXACT_ROW_X}, {NULL}};
  static const char note[] =
    "Eq. 1-2 on the cases (expected accuracy against the exact p*, KL with q clipped to [0.001, 0.999]); world "
    "values by exact enumeration; reference values integrate the predictor over the sampled population reference "
    "(nan for a predictions file, which has no values off the cases).";
  const char *name[PB_EXACT_NSUM];
  double v[PB_EXACT_NSUM];
  char title[200];
  snprintf(title, sizeof title, "Scores of `%s` in %s at %s (residual scale %g)", p->name, pb_world_name(w),
           pb_world_level_name(w), pb_world_residual_scale(w));
  const struct pb_table_spec spec_count = {title, note, count}, spec_value = {title, note, value};
  pb_table_open(t, &spec_value);
  pb_exact_summary(r, name, v);
  for (int i = 0; i < PB_EXACT_NSUM; i++) {
    const struct pb_exact_row row = {{name[i]}, {0}, &v[i]};
    pb_table_row(t, isfinite(v[i]) && v[i] == floor(v[i]) ? &spec_count : &spec_value, pb_exact_row_cell, &row);
  }
}

static void pb_exact__groups_table(struct pb_table *t, const struct pb_exact_groups *g)
{
  static const struct pb_column cols[] = {
    {"group", PB_COL_INT, .arg = PB_EXACT_ROW_N}, {"name", PB_COL_STR, .arg = PB_EXACT_ROW_KEY}, {NULL}};
  static const struct pb_table_spec spec = {
    "Multicalibration groups (Section 5)",
    "Group 0 is the whole population; `reference_mc_group` and `reference_mc_bin` of the scores name the cell where "
    "the reference MC error is attained (bins 0-9 of width 0.1).",
    cols};
  pb_table_open(t, &spec);
  for (int i = 0; i < g->n; i++) {
    const struct pb_exact_row row = {{g->name[i]}, {i}, NULL};
    pb_table_row(t, &spec, pb_exact_row_cell, &row);
  }
}

/* Empirical MC per size (mean and sd over resamples) against the reference MC
 * and its band; the figure's data without the resample count. */
static void pb_exact__mc_table(struct pb_table *t, struct pb_text *fig, const struct pb_exact_result *r)
{
  static const struct pb_column cols[] = {
    {"n", PB_COL_INT, .slot = 0, .arg = PB_EXACT_ROW_N}, {"resamples", PB_COL_INT, .slot = 1, .arg = PB_EXACT_ROW_N},
    PB_EXACT_COLS_MC, PB_EXACT_COL_X("reference_lo", 3), PB_EXACT_COL_X("reference_hi", 4), {NULL}};
  static const struct pb_column fig_cols[] = {
    {"n", PB_COL_INT, .slot = 0, .arg = PB_EXACT_ROW_N}, PB_EXACT_COLS_MC, PB_EXACT_COL_X("reference_lo", 3),
    PB_EXACT_COL_X("reference_hi", 4), {NULL}};
  static const struct pb_table_spec spec = {
    "Empirical multicalibration error over calibration sample size (Eq. 3)",
    "Labels as targets on independent calibration resamples; the reference row integrates exact p* over the "
    "population reference with a 95% simultaneous Hoeffding band (C.4).",
    cols}, fig_spec = {NULL, NULL, fig_cols};
  pb_table_open(t, &spec);
  pb_table_tsv_open(fig, &fig_spec);
  double lo = fmax(0.0, r->ref_mc - r->ref_halfwidth), hi = r->ref_mc + r->ref_halfwidth;
  for (int a = 0; a < r->n_sizes; a++) {
    const double x[5] = {pb_exact_mean(r->emp_mc + a * r->resamples, r->resamples, 1),
                         pb_exact_sd(r->emp_mc + a * r->resamples, r->resamples, 1), r->ref_mc, lo, hi};
    const struct pb_exact_row row = {{NULL}, {r->sizes[a], r->resamples}, x};
    pb_table_row(t, &spec, pb_exact_row_cell, &row);
    pb_table_tsv_row(fig, &fig_spec, pb_exact_row_cell, &row);
  }
}

/* Higher-order and snapshot errors per k; the figure's data is the table's TSV. */
static void pb_exact__ho_table(struct pb_table *t, struct pb_text *fig, const struct pb_exact_result *r)
{
  static const struct pb_column cols[] = {{"k", PB_COL_INT, .arg = PB_EXACT_ROW_N}, PB_EXACT_COLS_HO, {NULL}};
  static const struct pb_table_spec spec = {
    "Higher-order and snapshot calibration errors over k (Eq. 5, 7-9)",
    "Bins of the scored predictor weighted by reference mass; E_k_before uses the model's own binomial laws (Eq. 9); "
    "|E_HO - delta_k| <= E_k (Eq. 8).",
    cols};
  pb_table_open(t, &spec);
  pb_table_tsv_open(fig, &spec);
  for (int i = 0; i < PB_EXACT_NK; i++) {
    const double x[4] = {r->e_ho[i], r->e_k[i], r->e_k_before[i], r->delta_k[i]};
    const struct pb_exact_row row = {{NULL}, {pb_exact_snapshot_k[i]}, x};
    pb_table_row(t, &spec, pb_exact_row_cell, &row);
    pb_table_tsv_row(fig, &spec, pb_exact_row_cell, &row);
  }
}

/* Nearest-neighbour intervals per size and the ablation row; the figure's
 * data without the fields column and the ablation. */
static void pb_exact__knn_table(struct pb_table *t, struct pb_text *fig, const struct pb_exact_result *r)
{
  static const struct pb_column cols[] = {
    {"n", PB_COL_INT, .arg = PB_EXACT_ROW_N}, {"fields", PB_COL_STR, .arg = PB_EXACT_ROW_KEY}, PB_EXACT_COLS_KNN, {NULL}};
  static const struct pb_column fig_cols[] = {{"n", PB_COL_INT, .arg = PB_EXACT_ROW_N}, PB_EXACT_COLS_KNN, {NULL}};
  static const struct pb_table_spec spec = {
    "Nearest-neighbour Bayes-error estimators over sample size (C.3)",
    "Mean over seeds 2032-2034 of the Cover-Hart 1NN interval [(1 - sqrt(1 - 2 R1)) / 2, R1] and the kNN (k = 5) "
    "interval [dv_lower, R5] (dv_lower as stated below the table), against the exact Bayes error; the last row "
    "repeats the largest size without the irrelevant fields (fields = relevant).",
    cols}, fig_spec = {NULL, NULL, fig_cols};
  pb_table_open(t, &spec);
  pb_table_tsv_open(fig, &fig_spec);
  for (int a = 0; a <= r->n_sizes; a++) {
    const int ablation = a == r->n_sizes;
    double x[5];
    pb_exact_knn_row(r, a, x);
    const struct pb_exact_row row = {{ablation ? "relevant" : "all"}, {r->sizes[ablation ? a - 1 : a]}, x};
    pb_table_row(t, &spec, pb_exact_row_cell, &row);
    if (!ablation) pb_table_tsv_row(fig, &fig_spec, pb_exact_row_cell, &row);
  }
}

static const struct pb_figure pb_exact__fig_mc = {
  "exact_fig_mc", "Empirical MC error over calibration sample size", "calibration inputs n", "MC error (probability)",
  "set logscale x; set autoscale xfix; plot DATA using 1:5:6 with filledcurves lc rgb '#c8c8ff' title 'reference MC, 95% Hoeffding band', "
  "DATA using 1:4 with lines lc rgb '#000080' title 'reference MC', "
  "DATA using 1:2:3 with yerrorlines lc rgb '#800000' title 'empirical MC (mean +- sd)'"};
static const struct pb_figure pb_exact__fig_ho = {
  "exact_fig_ho", "Higher-order and snapshot calibration errors over k", "labels per input k",
  "population-weighted W1 (probability)",
  "set logscale x; set autoscale xfix; plot DATA using 1:2 with linespoints lc rgb '#000080' title 'E_HO (fitted)', "
  "DATA using 1:3 with linespoints lc rgb '#800000' title 'E_k (fitted)', "
  "DATA using 1:4 with linespoints dt 3 lc rgb '#800000' title 'E_k (before fitting)', "
  "DATA using 1:5 with linespoints dt 3 pt 12 lc rgb 'black' title 'delta_k'"};
static const struct pb_figure pb_exact__fig_knn = {
  "exact_fig_knn", "Bayes-error estimator intervals against the exact Bayes error", "sample size n",
  "Bayes error (probability)",
  "set logscale x; set autoscale xfix; plot DATA using 1:2:3 with filledcurves lc rgb '#ffd0d0' title 'Cover-Hart 1NN interval', "
  "DATA using 1:4:5 with filledcurves fs transparent solid 0.5 lc rgb '#b0d0ff' title 'Devroye 5NN interval', "
  "DATA using 1:6 with lines lw 2 lc rgb 'black' title 'exact Bayes error'"};

int pb_exact_report(struct pb_results *res, const struct pb_world *w, const struct pb_exact_predictor *p,
                    const struct pb_exact_groups *g, const struct pb_exact_result *r)
{
  struct pb_table t = {{0}, {0}};
  struct pb_text md = {0}, fig = {0};
  int status = PB_OK;
  pb_text_printf(&md, "## Exact-probability scoring (pairbound exact score)\n\nPredictor `%s` on %lld cases of %s "
                      "at %s; definitions: docs/exact.md, \"Scoring\".\n",
                 p->name, (long long)r->n_cases, pb_world_name(w), pb_world_level_name(w));
  pb_exact__scores_table(&t, w, p, r);
  status |= pb_table_flush(&t, res, "exact_scores.tsv", &md);
  pb_exact__groups_table(&t, g);
  status |= pb_table_flush(&t, res, "exact_groups.tsv", &md);
  if (r->emp_mc) {
    pb_exact__mc_table(&t, &fig, r);
    status |= pb_table_flush(&t, res, "exact_mc.tsv", &md);
    status |= pb_figure_write(res, &pb_exact__fig_mc, fig.buf, fig.len, &md);
    pb_text_free(&fig);
  }
  if (r->have_ho) {
    pb_exact__ho_table(&t, &fig, r);
    status |= pb_table_flush(&t, res, "exact_ho.tsv", &md);
    status |= pb_figure_write(res, &pb_exact__fig_ho, fig.buf, fig.len, &md);
    pb_text_free(&fig);
  }
  if (r->have_knn) {
    pb_exact__knn_table(&t, &fig, r);
    status |= pb_table_flush(&t, res, "exact_knn.tsv", &md);
    pb_text_printf(&md, "\nkNN lower bound dv_lower = %s.\n", pb_exact_knn_bound_text(r->knn_bound));
    status |= pb_figure_write(res, &pb_exact__fig_knn, fig.buf, fig.len, &md);
    pb_text_free(&fig);
  } else {
    pb_text_printf(&md, "\nNearest-neighbour estimators are not run in %s (no structured signal, seed 002 A.1).\n",
                   pb_world_name(w));
  }
  if (status == PB_OK) status = pb_results_write_report(res, "exact.md", md.buf, md.len);
  pb_text_free(&md);
  return status ? PB_FAIL : PB_OK;
}

