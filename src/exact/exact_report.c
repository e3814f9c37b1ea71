/* Outputs of `pairbound exact score`: results.h5 /exact, report/exact_*.tsv,
 * report/exact.md and its figures (docs/exact.md, "Scoring"). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "pairbound/error.h"
#include "pairbound/exact.h"
#include "pairbound/figure.h"
#include "pairbound/results.h"
#include "exact_internal.h"

/* Column PREFIX/NAME written whole by rank 0 (collective). */
static int pb_exact__col(struct pb_results *res, int rank, const char *prefix, const char *name, int64_t n,
                         const double *v)
{
  char path[256];
  snprintf(path, sizeof path, "%s/%s", prefix, name);
  return pb_results_write_f64(res, path, n, 0, rank == 0 ? n : 0, v);
}

static double pb_exact__mean(const double *v, int n, int stride)
{
  double s = 0.0;
  for (int i = 0; i < n; i++) s += v[i * stride];
  return s / n;
}

static double pb_exact__sd(const double *v, int n, int stride)
{
  double m = pb_exact__mean(v, n, stride), s = 0.0;
  for (int i = 0; i < n; i++) s += (v[i * stride] - m) * (v[i * stride] - m);
  return n > 1 ? sqrt(s / (n - 1)) : NAN;
}

/* Summary values as /exact/summary {name, value} and report/exact_scores.tsv. */
#define PB_EXACT__NSUM 26
static void pb_exact__summary(const struct pb_exact_result *r, const char **name, double *v)
{
  const char *n[PB_EXACT__NSUM] = {
    "n_cases", "expected_accuracy", "bayes_accuracy_cases", "delta_acc", "realised_accuracy", "kl_nats",
    "logloss_q_nats", "logloss_pstar_nats", "clipped_forecasts", "unknown_forecasts", "cases_ece_pstar", "cases_mc_pstar", "cases_mc_labels",
    "world_bayes_error", "world_bayes_accuracy", "world_positive_prior", "world_entropy_bits", "world_states",
    "reference_n", "reference_kl_nats", "reference_ece", "reference_mc", "reference_mc_halfwidth", "reference_mc_group",
    "reference_mc_bin", "ho_covered_mass"};
  double x[PB_EXACT__NSUM] = {
    (double)r->n_cases, r->cases.expected, r->cases.bayes, r->cases.bayes - r->cases.expected, r->cases.realised,
    r->cases.kl, r->cases.logloss_q, r->cases.logloss_p, (double)r->cases.clipped, (double)r->cases.unknown, r->cases_ece, r->cases_mc, r->emp_cases_mc,
    r->world.bayes_error, r->world.bayes_accuracy, r->world.positive_prior, r->world.entropy_bits,
    (double)r->world.states, r->have_reference ? (double)r->reference_n : NAN, r->have_reference ? r->ref_kl : NAN,
    r->have_reference ? r->ref_ece : NAN, r->have_reference ? r->ref_mc : NAN,
    r->have_reference ? r->ref_halfwidth : NAN, r->have_reference ? (double)r->ref_mc_group : NAN,
    r->have_reference ? (double)r->ref_mc_bin : NAN, r->have_ho ? r->covered_mass : NAN};
  for (int i = 0; i < PB_EXACT__NSUM; i++) name[i] = n[i], v[i] = x[i];
}

int pb_exact_report_h5(struct pb_results *res, const char *prefix, const struct pb_exact_result *r)
{
  int rank;
  char path[256];
  MPI_Comm_rank(pb_results_comm(res), &rank);
  const char *name[PB_EXACT__NSUM];
  double v[PB_EXACT__NSUM], ho[5][PB_EXACT_NK];
  int status = pb_results_group(res, prefix);
  pb_exact__summary(r, name, v);
  snprintf(path, sizeof path, "%s/summary_name", prefix);
  status |= pb_results_write_strings(res, path, PB_EXACT__NSUM, (char *const *)name);
  status |= pb_exact__col(res, rank, prefix, "summary_value", PB_EXACT__NSUM, v);
  if (r->have_ho) {
    for (int t = 0; t < PB_EXACT_NK; t++) {
      ho[0][t] = pb_exact_snapshot_k[t], ho[1][t] = r->e_ho[t], ho[2][t] = r->e_k[t];
      ho[3][t] = r->e_k_before[t], ho[4][t] = r->delta_k[t];
    }
    status |= pb_exact__col(res, rank, prefix, "ho_k", PB_EXACT_NK, ho[0]);
    status |= pb_exact__col(res, rank, prefix, "ho_E_HO", PB_EXACT_NK, ho[1]);
    status |= pb_exact__col(res, rank, prefix, "ho_E_k", PB_EXACT_NK, ho[2]);
    status |= pb_exact__col(res, rank, prefix, "ho_E_k_before", PB_EXACT_NK, ho[3]);
    status |= pb_exact__col(res, rank, prefix, "ho_delta_k", PB_EXACT_NK, ho[4]);
  }
  if (r->emp_mc) status |= pb_exact__col(res, rank, prefix, "mc_empirical", (int64_t)r->n_sizes * r->resamples, r->emp_mc);
  if (r->have_knn) {
    int64_t n = (int64_t)r->n_sizes * PB_EXACT_NSEEDS;
    double *k = pb_malloc(sizeof(double) * (size_t)(6 * n));
    for (int64_t i = 0; i < n; i++) {
      const struct pb_exact_nn *e = &r->knn[i / PB_EXACT_NSEEDS][i % PB_EXACT_NSEEDS];
      k[i] = e->err_1nn, k[n + i] = e->err_knn, k[2 * n + i] = e->ch_lower, k[3 * n + i] = e->ch_upper;
      k[4 * n + i] = e->dv_lower, k[5 * n + i] = e->dv_upper;
    }
    static const char *const cols[6] = {"knn_err_1nn", "knn_err_knn", "knn_ch_lower", "knn_ch_upper", "knn_dv_lower",
                                        "knn_dv_upper"};
    for (int c = 0; c < 6; c++) status |= pb_exact__col(res, rank, prefix, cols[c], n, k + c * n);
    /* the ablation without irrelevant fields at the largest size, seed-major in the same layout */
    for (int i = 0; i < PB_EXACT_NSEEDS; i++)
      for (int c = 0; c < 6; c++) k[c * PB_EXACT_NSEEDS + i] = (&r->knn_relevant[i].err_1nn)[c];
    for (int c = 0; c < 6; c++) {
      char name[64];
      snprintf(name, sizeof name, "%s_relevant", cols[c]);
      status |= pb_exact__col(res, rank, prefix, name, PB_EXACT_NSEEDS, k + c * PB_EXACT_NSEEDS);
    }
    free(k);
  }
  return status ? PB_FAIL : PB_OK;
}

/* A row's first cell: an integer. */
static void pb_exact__first(struct pb_table *t, int64_t v)
{
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", (long long)v);
  pb_table_str(t, buf, 1);
}

static void pb_exact__scores_table(struct pb_table *t, const struct pb_world *w, const struct pb_exact_predictor *p,
                                   const struct pb_exact_result *r)
{
  const char *name[PB_EXACT__NSUM];
  double v[PB_EXACT__NSUM];
  char title[200];
  snprintf(title, sizeof title, "Scores of `%s` in %s at %s (residual scale %g)", p->name, pb_world_name(w),
           pb_world_level_name(w), pb_world_residual_scale(w));
  pb_table_begin(t, title,
                 "Eq. 1-2 on the cases (expected accuracy against the exact p*, KL with q clipped to [0.001, 0.999]); "
                 "world values by exact enumeration; reference values integrate the predictor over the sampled "
                 "population reference (nan for a predictions file, which has no values off the cases).",
                 "quantity\tvalue", NULL);
  pb_exact__summary(r, name, v);
  for (int i = 0; i < PB_EXACT__NSUM; i++) {
    pb_table_str(t, name[i], 1);
    pb_table_num(t, v[i], isfinite(v[i]) && v[i] == floor(v[i]) ? 0 : 6);  /* counts without decimals */
    pb_table_end_row(t);
  }
}

static void pb_exact__groups_table(struct pb_table *t, const struct pb_exact_groups *g)
{
  pb_table_begin(t, "Multicalibration groups (Section 5)",
                 "Group 0 is the whole population; `reference_mc_group` and `reference_mc_bin` of the scores "
                 "name the cell where the reference MC error is attained (bins 0-9 of width 0.1).",
                 "group\tname", NULL);
  for (int i = 0; i < g->n; i++) {
    pb_exact__first(t, i);
    pb_table_str(t, g->name[i], 0);
    pb_table_end_row(t);
  }
}

/* Empirical MC per size (mean and sd over resamples) against the reference MC and its band. */
static void pb_exact__mc_table(struct pb_table *t, struct pb_text *fig, const struct pb_exact_result *r)
{
  pb_table_begin(t, "Empirical multicalibration error over calibration sample size (Eq. 3)",
                 "Labels as targets on independent calibration resamples; the reference row integrates exact p* "
                 "over the population reference with a 95% simultaneous Hoeffding band (C.4).",
                 "n\tresamples\tmc_mean\tmc_sd\treference_mc\treference_lo\treference_hi", NULL);
  pb_text_printf(fig, "n\tmc_mean\tmc_sd\treference_mc\treference_lo\treference_hi\n");
  double lo = fmax(0.0, r->ref_mc - r->ref_halfwidth), hi = r->ref_mc + r->ref_halfwidth;
  for (int a = 0; a < r->n_sizes; a++) {
    double m = pb_exact__mean(r->emp_mc + a * r->resamples, r->resamples, 1);
    double s = pb_exact__sd(r->emp_mc + a * r->resamples, r->resamples, 1);
    pb_exact__first(t, r->sizes[a]);
    pb_table_int(t, r->resamples);
    pb_table_num(t, m, 4);
    pb_table_num(t, s, 4);
    pb_table_num(t, r->ref_mc, 4);
    pb_table_num(t, lo, 4);
    pb_table_num(t, hi, 4);
    pb_table_end_row(t);
    pb_text_printf(fig, "%lld", (long long)r->sizes[a]);
    pb_text_double(fig, m);
    pb_text_double(fig, s);
    pb_text_double(fig, r->ref_mc);
    pb_text_double(fig, lo);
    pb_text_double(fig, hi);
    pb_text_printf(fig, "\n");
  }
}

static void pb_exact__ho_table(struct pb_table *t, struct pb_text *fig, const struct pb_exact_result *r)
{
  pb_table_begin(t, "Higher-order and snapshot calibration errors over k (Eq. 5, 7-9)",
                 "Bins of the scored predictor weighted by reference mass; E_k_before uses the model's own binomial "
                 "laws (Eq. 9); |E_HO - delta_k| <= E_k (Eq. 8).",
                 "k\tE_HO\tE_k\tE_k_before\tdelta_k", NULL);
  pb_text_printf(fig, "k\tE_HO\tE_k\tE_k_before\tdelta_k\n");
  for (int i = 0; i < PB_EXACT_NK; i++) {
    pb_exact__first(t, pb_exact_snapshot_k[i]);
    pb_table_num(t, r->e_ho[i], 4);
    pb_table_num(t, r->e_k[i], 4);
    pb_table_num(t, r->e_k_before[i], 4);
    pb_table_num(t, r->delta_k[i], 4);
    pb_table_end_row(t);
    pb_text_printf(fig, "%d", pb_exact_snapshot_k[i]);
    pb_text_double(fig, r->e_ho[i]);
    pb_text_double(fig, r->e_k[i]);
    pb_text_double(fig, r->e_k_before[i]);
    pb_text_double(fig, r->delta_k[i]);
    pb_text_printf(fig, "\n");
  }
}

/* Interval endpoints (ch_lower .. dv_upper) averaged over the seeds. */
static void pb_exact__knn_means(const struct pb_exact_nn *e, double v[4])
{
  int stride = (int)(sizeof(struct pb_exact_nn) / sizeof(double));
  for (int c = 0; c < 4; c++) v[c] = pb_exact__mean(&e[0].ch_lower + c, PB_EXACT_NSEEDS, stride);
}

static void pb_exact__knn_table(struct pb_table *t, struct pb_text *fig, const struct pb_exact_result *r)
{
  pb_table_begin(t, "Nearest-neighbour Bayes-error estimators over sample size (C.3)",
                 "Mean over seeds 2032-2034 of the Cover-Hart 1NN interval [(1 - sqrt(1 - 2 R1)) / 2, R1] and the "
                 "kNN (k = 5) interval [R5 / (1 + sqrt(2/5)), R5], against the exact Bayes error; the last row "
                 "repeats the largest size without the irrelevant fields (fields = relevant).",
                 "n\tfields\tch_lower\tch_upper\tdv_lower\tdv_upper\tbayes_error", NULL);
  pb_text_printf(fig, "n\tch_lower\tch_upper\tdv_lower\tdv_upper\tbayes_error\n");
  for (int a = 0; a <= r->n_sizes; a++) {
    int ablation = a == r->n_sizes;
    double v[4];
    pb_exact__knn_means(ablation ? r->knn_relevant : r->knn[a], v);
    pb_exact__first(t, r->sizes[ablation ? a - 1 : a]);
    pb_table_str(t, ablation ? "relevant" : "all", 0);
    for (int c = 0; c < 4; c++) pb_table_num(t, v[c], 4);
    pb_table_num(t, r->world.bayes_error, 4);
    pb_table_end_row(t);
    if (ablation) continue;
    pb_text_printf(fig, "%lld", (long long)r->sizes[a]);
    for (int c = 0; c < 4; c++) pb_text_double(fig, v[c]);
    pb_text_double(fig, r->world.bayes_error);
    pb_text_printf(fig, "\n");
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

/* Rank 0: every table, figure and the markdown section. */
static int pb_exact__files(struct pb_results *res, const struct pb_world *w, const struct pb_exact_predictor *p,
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

int pb_exact_report_write(struct pb_results *res, const struct pb_world *w, const struct pb_exact_eval *e)
{
  int rank;
  MPI_Comm comm = pb_results_comm(res);
  MPI_Comm_rank(comm, &rank);
  int status = pb_exact_report_h5(res, "/exact", &e->r);
  if (status == PB_OK && rank == 0) status = pb_exact__files(res, w, &e->pred, &e->groups, &e->r);
  MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  return status;
}
