/* Report of `pairbound exact worlds` (and the `exact` stage of `pairbound
 * run`): the combined tables of every world x level x predictor, and the
 * figures KL by world and level, estimator intervals against eps* over n,
 * empirical MC over n and higher-order/snapshot errors over k (seed 002
 * Section 5, Fig. 1/7 shapes). */
#include "config.h"

#include <math.h>
#include <stdarg.h>
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

/* A figure's data table as it is written: its columns, the first named
 * @p first (an integer when @p first_int, else a label), then per block b
 * its @p ns columns, the first named "label[b] suffix[0]" (label[b] alone
 * when suffix[0] is NULL), the others suffix[j]; every value's .slot is its
 * place among them.  Rows by pb_exact__fig_row; pb_exact__fig_close frees it. */
struct pb_exact__fig {
  struct pb_text *t;
  struct pb_column *cols;
  struct pb_table_spec spec;
};

static void pb_exact__fig_open(struct pb_exact__fig *f, struct pb_text *t, const char *first, int first_int, int nb,
                               const char *const *label, const char *const *suffix, int ns)
{
  struct pb_column *cols = pb_table_cols_new(1 + nb * ns);
  pb_table_col_name(&cols[0], "%s", first);
  cols[0].fmt = first_int ? PB_COL_INT : PB_COL_STR;
  cols[0].arg = first_int ? PB_EXACT_ROW_N : PB_EXACT_ROW_KEY;
  for (int b = 0; b < nb; b++)
    for (int j = 0; j < ns; j++) {
      struct pb_column *c = &cols[1 + b * ns + j];
      if (j > 0) pb_table_col_name(c, "%s", suffix[j]);
      else if (suffix[0]) pb_table_col_name(c, "%s %s", label[b], suffix[0]);
      else pb_table_col_name(c, "%s", label[b]);
      c->fmt = PB_COL_NUM, c->slot = b * ns + j, c->arg = PB_EXACT_ROW_X;
    }
  *f = (struct pb_exact__fig){t, cols, {NULL, NULL, cols}};
  pb_table_tsv_open(t, &f->spec);
}

/* A row of the figure's data: its first column @p key (a label) or @p n, then the values @p x. */
static void pb_exact__fig_row(const struct pb_exact__fig *f, const char *key, int64_t n, const double *x)
{
  const struct pb_exact_row row = {{key}, {n}, x};
  pb_table_tsv_row(f->t, &f->spec, pb_exact_row_cell, &row);
}

static void pb_exact__fig_close(struct pb_exact__fig *f) { pb_table_cols_free(f->cols); }

/* A row of a table: its entry's world, level and predictor. */
static struct pb_exact_row pb_exact__entry_row(const struct pb_exact_entry *en, int64_t n, const double *x)
{
  return (struct pb_exact_row){{en->world, en->level, en->pred}, {n}, x};
}

#define PB_EXACT__ENTRY_KEYS PB_EXACT_COL_KEY("world", 0), PB_EXACT_COL_KEY("level", 1), PB_EXACT_COL_KEY("predictor", 2)

/* Scores per world x level x predictor, and the KL-by-world-and-level figure data. */
static void pb_exact__kl(const struct pb_exact_grid *g, struct pb_table *t, struct pb_text *fig)
{
  static const struct pb_column cols[] = {
    PB_EXACT__ENTRY_KEYS,
    {"n_cases", PB_COL_INT, .arg = PB_EXACT_ROW_N}, PB_EXACT_COL_X("bayes_error", 0),
    PB_EXACT_COL_X("bayes_accuracy_cases", 1), PB_EXACT_COL_X("expected_accuracy", 2), PB_EXACT_COL_X("delta_acc", 3),
    PB_EXACT_COL_X("realised_accuracy", 4), PB_EXACT_COL_X("kl_nats", 5), PB_EXACT_COL_X("reference_kl_nats", 6),
    PB_EXACT_COL_X("reference_ece", 7), PB_EXACT_COL_X("reference_mc", 8), PB_EXACT_COL_X("reference_mc_halfwidth", 9),
    {NULL}};
  static const struct pb_table_spec spec = {
    "Scores by world, level and predictor (Eq. 1-3)",
    "Expected and realised accuracy and KL on the cases; reference values on the population reference; eps* by "
    "exact enumeration. A predictor that does not apply in a world is left out (logistic regression in covert "
    "transfer, A.1).",
    cols};
  struct pb_exact__fig f;
  pb_exact__fig_open(&f, fig, "world_level", 0, g->np, (const char *const *)g->p, (const char *const[]){NULL}, 1);
  pb_table_open(t, &spec);
  for (int w = 0; w < g->nw; w++)
    for (int l = 0; l < g->nl; l++) {
      char label[64];
      double kl[PB_EXACT_MAXL];
      for (int p = 0; p < g->np; p++) {
        const struct pb_exact_entry *en = pb_exact_at(g, w, l, p);
        kl[p] = en->have ? en->r.cases.kl : NAN;
        if (!en->have) continue;
        const struct pb_exact_result *r = &en->r;
        const double v[10] = {r->world.bayes_error, r->cases.bayes, r->cases.expected, r->cases.bayes - r->cases.expected,
                              r->cases.realised, r->cases.kl, r->ref_kl, r->ref_ece, r->ref_mc, r->ref_halfwidth};
        const struct pb_exact_row row = pb_exact__entry_row(en, r->n_cases, v);
        pb_table_row(t, &spec, pb_exact_row_cell, &row);
      }
      snprintf(label, sizeof label, "%s %s", g->w[w], g->l[l]);
      pb_exact__fig_row(&f, label, 0, kl);
    }
  pb_exact__fig_close(&f);
}

/* Estimator intervals per world x level x size; figure data: one column block per world x level. */
static void pb_exact__knn(const struct pb_exact_grid *g, struct pb_table *t, struct pb_text *fig, char (*label)[40],
                          int *panels)
{
  static const struct pb_column cols[] = {
    PB_EXACT_COL_KEY("world", 0), PB_EXACT_COL_KEY("level", 1), {"n", PB_COL_INT, .arg = PB_EXACT_ROW_N},
    PB_EXACT_COL_KEY("fields", 3), PB_EXACT_COLS_KNN, {NULL}};
  static const struct pb_table_spec spec = {
    "Nearest-neighbour Bayes-error estimators by world and level (C.3)",
    "Means over seeds 2032-2034: Cover-Hart 1NN and Devroye 5NN intervals against the exact Bayes error (dv_lower "
    "as stated below the table); fields = relevant repeats the largest size without the irrelevant fields (C.3 "
    "ablation).",
    cols};
  static const char *const suffix[5] = {"ch_lo", "ch_hi", "dv_lo", "dv_hi", "eps"};
  const struct pb_exact_entry *col[PB_EXACT_MAXL * PB_EXACT_MAXL];
  const char *names[PB_EXACT_MAXL * PB_EXACT_MAXL] = {NULL};
  int nc = 0;
  pb_table_open(t, &spec);
  for (int w = 0; w < g->nw; w++)
    for (int l = 0; l < g->nl; l++) {
      const struct pb_exact_entry *en = NULL;
      for (int p = 0; p < g->np && !en; p++)
        if (pb_exact_at(g, w, l, p)->r.have_knn) en = pb_exact_at(g, w, l, p);
      if (!en) continue;
      snprintf(label[nc], 40, "%s %s", en->world, en->level);
      names[nc] = label[nc];
      col[nc++] = en;
      for (int a = 0; a <= en->r.n_sizes; a++) {
        const int ablation = a == en->r.n_sizes;
        double x[5];
        pb_exact_knn_row(&en->r, a, x);
        struct pb_exact_row row = pb_exact__entry_row(en, en->r.sizes[ablation ? a - 1 : a], x);
        row.key[3] = ablation ? "relevant" : "all";
        pb_table_row(t, &spec, pb_exact_row_cell, &row);
      }
    }
  *panels = nc;
  struct pb_exact__fig f;
  double *x = pb_malloc((size_t)(5 * nc + 1) * sizeof *x);
  pb_exact__fig_open(&f, fig, "n", 1, nc, names, suffix, 5);
  for (int a = 0; nc > 0 && a < col[0]->r.n_sizes; a++) {
    for (int i = 0; i < nc; i++) pb_exact_knn_row(&col[i]->r, a, x + 5 * i);
    pb_exact__fig_row(&f, NULL, col[0]->r.sizes[a], x);
  }
  free(x);
  pb_exact__fig_close(&f);
}

/* Empirical MC per world x level x predictor x size; figure data at the last level, one column block per
 * world x predictor (mean, sd, reference). */
static void pb_exact__mc(const struct pb_exact_grid *g, struct pb_table *t, struct pb_text *fig)
{
  static const struct pb_column cols[] = {
    PB_EXACT__ENTRY_KEYS, {"n", PB_COL_INT, .arg = PB_EXACT_ROW_N}, PB_EXACT_COLS_MC,
    PB_EXACT_COL_X("reference_mc_halfwidth", 3), {NULL}};
  static const struct pb_table_spec spec = {
    "Empirical multicalibration error by world, level and predictor (Eq. 3, C.4)",
    "Mean and s.d. over calibration resamples; reference MC of the predictor with its 95% Hoeffding half-width.",
    cols};
  static const char *const suffix[3] = {"mean", "sd", "reference"};
  const struct pb_exact_entry *any = NULL;
  pb_table_open(t, &spec);
  for (int i = 0; i < g->nw * g->nl * g->np; i++) { /* every entry, world x level x predictor in order */
    const struct pb_exact_entry *en = &g->e[i];
    if (!en->have) continue;
    any = en;
    for (int a = 0; a < en->r.n_sizes; a++) {
      const double *v = en->r.emp_mc + a * en->r.resamples;
      const double x[4] = {pb_exact_mean(v, en->r.resamples, 1), pb_exact_sd(v, en->r.resamples, 1), en->r.ref_mc,
                           en->r.ref_halfwidth};
      const struct pb_exact_row row = pb_exact__entry_row(en, en->r.sizes[a], x);
      pb_table_row(t, &spec, pb_exact_row_cell, &row);
    }
  }
  if (!any) return;
  char(*label)[80] = pb_malloc((size_t)(g->nw * g->np) * sizeof *label);
  const char **names = pb_malloc((size_t)(g->nw * g->np) * sizeof *names);
  for (int w = 0; w < g->nw; w++)
    for (int p = 0; p < g->np; p++) {
      snprintf(label[w * g->np + p], sizeof label[0], "%s %s", g->w[w], g->p[p]);
      names[w * g->np + p] = label[w * g->np + p];
    }
  struct pb_exact__fig f;
  double *x = pb_malloc((size_t)(3 * g->nw * g->np) * sizeof *x);
  pb_exact__fig_open(&f, fig, "n", 1, g->nw * g->np, names, suffix, 3);
  for (int a = 0; a < any->r.n_sizes; a++) {
    for (int w = 0; w < g->nw; w++)
      for (int p = 0; p < g->np; p++) {
        const struct pb_exact_entry *en = pb_exact_at(g, w, g->nl - 1, p);
        const double *v = en->have ? en->r.emp_mc + a * en->r.resamples : NULL;
        double *y = x + 3 * (w * g->np + p);
        y[0] = v ? pb_exact_mean(v, en->r.resamples, 1) : NAN;
        y[1] = v ? pb_exact_sd(v, en->r.resamples, 1) : NAN;
        y[2] = v ? en->r.ref_mc : NAN;
      }
    pb_exact__fig_row(&f, NULL, any->r.sizes[a], x);
  }
  free(x), free(names), free(label);
  pb_exact__fig_close(&f);
}

/* Predictor shown in the higher-order figure: the last logistic one, else the last. */
static int pb_exact__ho_pred(const struct pb_exact_grid *g, int w)
{
  int best = -1;
  for (int p = 0; p < g->np; p++)
    if (pb_exact_at(g, w, g->nl - 1, p)->have && (best < 0 || !strncmp(g->p[p], "logistic:", 9))) best = p;
  return best;
}

/* Higher-order errors per world x level x predictor x k; figure data at the last level, per world. */
static void pb_exact__ho(const struct pb_exact_grid *g, struct pb_table *t, struct pb_text *fig)
{
  static const struct pb_column cols[] = {
    PB_EXACT__ENTRY_KEYS, {"k", PB_COL_INT, .arg = PB_EXACT_ROW_N}, PB_EXACT_COLS_HO, {NULL}};
  static const struct pb_table_spec spec = {
    "Higher-order and snapshot calibration errors by world, level and predictor (Eq. 5, 7-9)",
    "Bins of each predictor weighted by reference mass; |E_HO - delta_k| <= E_k (Eq. 8).", cols};
  static const char *const suffix[4] = {"E_HO", "E_k", "E_k_before", "delta_k"};
  pb_table_open(t, &spec);
  for (int i = 0; i < g->nw * g->nl * g->np; i++) { /* every entry, world x level x predictor in order */
    const struct pb_exact_entry *en = &g->e[i];
    for (int k = 0; en->have && k < PB_EXACT_NK; k++) {
      const double x[4] = {en->r.e_ho[k], en->r.e_k[k], en->r.e_k_before[k], en->r.delta_k[k]};
      const struct pb_exact_row row = pb_exact__entry_row(en, pb_exact_snapshot_k[k], x);
      pb_table_row(t, &spec, pb_exact_row_cell, &row);
    }
  }
  struct pb_exact__fig f;
  double *x = pb_malloc((size_t)(4 * g->nw) * sizeof *x);
  pb_exact__fig_open(&f, fig, "k", 1, g->nw, (const char *const *)g->w, suffix, 4);
  for (int k = 0; k < PB_EXACT_NK; k++) {
    for (int w = 0; w < g->nw; w++) {
      const int p = pb_exact__ho_pred(g, w);
      const struct pb_exact_result *r = p >= 0 ? &pb_exact_at(g, w, g->nl - 1, p)->r : NULL;
      x[4 * w + 0] = r ? r->e_ho[k] : NAN;
      x[4 * w + 1] = r ? r->e_k[k] : NAN;
      x[4 * w + 2] = r ? r->e_k_before[k] : NAN;
      x[4 * w + 3] = r ? r->delta_k[k] : NAN;
    }
    pb_exact__fig_row(&f, NULL, pb_exact_snapshot_k[k], x);
  }
  free(x);
  pb_exact__fig_close(&f);
}

static const char *const pb_exact__colour[PB_EXACT_MAXL] = {"#000080", "#800000", "#008000", "#806000",
                                                              "#600080", "#008080", "#404040", "#c04000"};

static void pb_exact__append(char *s, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void pb_exact__append(char *s, size_t cap, const char *fmt, ...)
{
  size_t n = strlen(s);
  va_list ap;
  va_start(ap, fmt);
  if (n < cap) vsnprintf(s + n, cap - n, fmt, ap);
  va_end(ap);
}

static void pb_exact__multiplot(char *s, size_t cap, int panels, const char *title)
{
  int cols = panels < 3 ? panels : 3, rows = (panels + cols - 1) / cols;
  pb_exact__append(s, cap, "set key top right font ',7' opaque\nset autoscale xfix\nset multiplot layout %d,%d title '%s'\n",
                   rows, cols, title);
}

int pb_exact_report_worlds(struct pb_results *res, const struct pb_exact_grid *g, const struct pb_exact_options *o)
{
  static char script[4][16384];
  struct pb_table t = {{0}, {0}};
  struct pb_text md = {0}, fig = {0};
  char label[PB_EXACT_MAXL * PB_EXACT_MAXL][40];
  int status = PB_OK, panels = 0;
  pb_text_printf(&md, "## Exact-probability scoring by world and level (pairbound exact worlds)\n\nCases %llu..%llu "
                      "of stream 0 of seed %llu in every world and level; population references of %lld inputs; "
                      "definitions: docs/exact.md, \"Scoring\".\n",
                 (unsigned long long)o->first, (unsigned long long)(o->first + (uint64_t)o->n_cases - 1),
                 (unsigned long long)o->seed, (long long)o->reference);
  for (int i = 0; i < 4; i++) script[i][0] = '\0';
  pb_exact__kl(g, &t, &fig);
  status |= pb_table_flush(&t, res, "exact_worlds.tsv", &md);
  pb_exact__append(script[0], sizeof script[0], "set style data linespoints\nset xtics rotate by -30\n"
                   "plot for [i=2:%d] DATA using 0:i:xtic(1) lw 2 title columnheader(i)", g->np + 1);
  struct pb_figure f0 = {"exact_fig_kl", "Mean KL from the exact class probability by world and level",
                         "world and hiding level", "mean KL(p*||q) on the cases (nats)", script[0]};
  status |= pb_figure_write(res, &f0, fig.buf, fig.len, &md);
  pb_text_free(&fig);

  pb_exact__knn(g, &t, &fig, label, &panels);
  status |= pb_table_flush(&t, res, "exact_worlds_knn.tsv", &md);
  if (panels > 0) pb_text_printf(&md, "\nkNN lower bound dv_lower = %s.\n", pb_exact_knn_bound_text(o->knn_bound));
  if (panels > 0) {
    pb_exact__multiplot(script[1], sizeof script[1], panels, "Bayes-error estimator intervals against eps*");
    for (int i = 0; i < panels; i++) {
      int b = 2 + 5 * i;
      pb_exact__append(script[1], sizeof script[1],
                       "set logscale x\nset title '%s'\nplot DATA using 1:%d:%d with filledcurves "
                       "lc rgb '#ffd0d0' title 'Cover-Hart 1NN', DATA using 1:%d:%d with filledcurves fs transparent "
                       "solid 0.5 lc rgb '#b0d0ff' title 'Devroye 5NN', DATA using 1:%d with lines lw 2 lc rgb "
                       "'black' title 'exact eps*'\n", label[i], b, b + 1, b + 2, b + 3, b + 4);
    }
    pb_exact__append(script[1], sizeof script[1], "unset multiplot");
    struct pb_figure f1 = {"exact_fig_estimators", "Bayes-error estimator intervals", "sample size n",
                           "Bayes error (probability)", script[1]};
    status |= pb_figure_write(res, &f1, fig.buf, fig.len, &md);
  }
  pb_text_free(&fig);

  pb_exact__mc(g, &t, &fig);
  status |= pb_table_flush(&t, res, "exact_worlds_mc.tsv", &md);
  if (fig.len > 0) {
    pb_exact__multiplot(script[2], sizeof script[2], g->nw, "Empirical MC error over calibration sample size");
    for (int w = 0; w < g->nw; w++) {
      pb_exact__append(script[2], sizeof script[2], "set logscale x\nset title '%s %s'\nplot", g->w[w],
                       g->l[g->nl - 1]);
      for (int p = 0; p < g->np; p++) {
        int b = 2 + 3 * (w * g->np + p);
        pb_exact__append(script[2], sizeof script[2],
                         "%s DATA using 1:%d:%d with yerrorlines lc rgb '%s' title '%s', DATA using 1:%d with lines "
                         "dt 2 lc rgb '%s' title '%s reference'", p ? "," : "", b, b + 1, pb_exact__colour[p],
                         g->p[p], b + 2, pb_exact__colour[p], g->p[p]);
      }
      pb_exact__append(script[2], sizeof script[2], "\n");
    }
    pb_exact__append(script[2], sizeof script[2], "unset multiplot");
    struct pb_figure f2 = {"exact_fig_worlds_mc", "Empirical MC error", "calibration inputs n", "MC error (probability)",
                           script[2]};
    status |= pb_figure_write(res, &f2, fig.buf, fig.len, &md);
  }
  pb_text_free(&fig);

  pb_exact__ho(g, &t, &fig);
  status |= pb_table_flush(&t, res, "exact_worlds_ho.tsv", &md);
  pb_exact__multiplot(script[3], sizeof script[3], g->nw, "Higher-order and snapshot calibration errors over k");
  for (int w = 0; w < g->nw; w++) {
    int b = 2 + 4 * w, p = pb_exact__ho_pred(g, w);
    pb_exact__append(script[3], sizeof script[3],
                     "set logscale x\nset title '%s %s, %s'\nplot DATA using 1:%d with linespoints lc rgb '#000080' "
                     "title 'E_HO', DATA using 1:%d with linespoints lc rgb '#800000' title 'E_k', DATA using 1:%d "
                     "with linespoints dt 3 lc rgb '#800000' title 'E_k before', DATA using 1:%d with linespoints dt 3 "
                     "pt 12 lc rgb 'black' title 'delta_k'\n",
                     g->w[w], g->l[g->nl - 1], p >= 0 ? g->p[p] : "-", b, b + 1, b + 2, b + 3);
  }
  pb_exact__append(script[3], sizeof script[3], "unset multiplot");
  struct pb_figure f3 = {"exact_fig_worlds_ho", "Higher-order errors", "labels per input k",
                         "population-weighted W1 (probability)", script[3]};
  status |= pb_figure_write(res, &f3, fig.buf, fig.len, &md);
  pb_text_free(&fig);
  if (status == PB_OK) status = pb_results_write_report(res, "exact.md", md.buf, md.len);
  pb_text_free(&md);
  return status ? PB_FAIL : PB_OK;
}

