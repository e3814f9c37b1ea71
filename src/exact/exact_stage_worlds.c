/* `pairbound exact worlds` and the `exact` stage of `pairbound run`: every
 * built-in predictor scored in every world x level on cases drawn directly
 * (seed 002 Section 5, Fig. 1/7 shapes): one results.h5 with
 * /exact/WORLD/LEVEL/PREDICTOR groups, the combined report tables and the
 * figures KL by world and level, estimator intervals against eps* over n,
 * empirical MC over n and higher-order/snapshot errors over k. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "pairbound/error.h"
#include "pairbound/exact.h"
#include "pairbound/figure.h"
#include "pairbound/results.h"
#include "pairbound/world.h"
#include "exact_internal.h"

#define PB_EXACT__MAXL 8

/* One scored (world, level, predictor); have = 0 when the predictor does not apply there. */
struct pb_exact__entry {
  char world[16], level[16], pred[64];
  int have;
  struct pb_exact_result r;
};

struct pb_exact__grid {
  int nw, nl, np;
  char *w[PB_EXACT__MAXL], *l[PB_EXACT__MAXL], *p[PB_EXACT__MAXL];
  char *buf[3];
  struct pb_exact__entry *e;  /* [w][l][p] */
};

static int pb_exact__split(char *list, char **item, int *n)
{
  char *save = NULL;
  *n = 0;
  for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (*n == PB_EXACT__MAXL) return PB_FAIL;
    item[(*n)++] = t;
  }
  return PB_OK;
}

static struct pb_exact__entry *pb_exact__at(const struct pb_exact__grid *g, int w, int l, int p)
{
  return &g->e[(w * g->nl + l) * g->np + p];
}

static double pb_exact__mean(const double *v, int n, int stride)
{
  double s = 0.0;
  for (int i = 0; i < n; i++) s += v[i * stride];
  return s / n;
}

static double pb_exact__sd(const double *v, int n)
{
  double m = pb_exact__mean(v, n, 1), s = 0.0;
  for (int i = 0; i < n; i++) s += (v[i] - m) * (v[i] - m);
  return n > 1 ? sqrt(s / (n - 1)) : NAN;
}

/* Mean over the seeds of endpoint @p c (0 ch_lower .. 3 dv_upper) at size index @p a (n_sizes: the ablation). */
static double pb_exact__knn_mean(const struct pb_exact_result *r, int a, int c)
{
  const double *e = (a < r->n_sizes ? &r->knn[a][0].ch_lower : &r->knn_relevant[0].ch_lower) + c;
  return pb_exact__mean(e, PB_EXACT_NSEEDS, (int)(sizeof(struct pb_exact_nn) / sizeof(double)));
}

/* Score every predictor of one world x level; the kNN sweep runs once per world x level. */
static int pb_exact__cell(MPI_Comm comm, const struct pb_exact_options *o, struct pb_exact__grid *g, int wi, int li,
                          struct pb_results *res, struct pb_timer *timer)
{
  struct pb_world *w;
  struct pb_exact_cases c;
  struct pb_exact_nn knn[PB_EXACT_MAX_SIZES][PB_EXACT_NSEEDS], rel[PB_EXACT_NSEEDS];
  int have_knn = 0, status = PB_OK;
  if (pb_world_open(g->w[wi], g->l[li], 1.0, &w)) return PB_FAIL;
  pb_exact_cases_draw(w, o->seed, o->first, o->n_cases, &c);
  for (int pi = 0; pi < g->np && status == PB_OK; pi++) {
    struct pb_exact__entry *en = pb_exact__at(g, wi, li, pi);
    struct pb_exact_eval e;
    snprintf(en->world, sizeof en->world, "%s", g->w[wi]);
    snprintf(en->level, sizeof en->level, "%s", g->l[li]);
    snprintf(en->pred, sizeof en->pred, "%s", g->p[pi]);
    /* logistic regression has no structured signal in covert transfer (A.1) */
    if (!strncmp(g->p[pi], "logistic:", 9) && pb_world_kind(w) == PB_WORLD_COVERT) continue;
    status = pb_exact_evaluate(comm, &c, g->p[pi], NULL, o, !have_knn, &e);
    if (status != PB_OK) {
      pb_exact_eval_free(&e);
      break;
    }
    for (int i = 0; i < e.timer.n; i++) pb_timer_add(timer, e.timer.phase[i], e.timer.sec[i]);
    if (e.r.have_knn) {
      memcpy(knn, e.r.knn, sizeof knn);
      memcpy(rel, e.r.knn_relevant, sizeof rel);
      have_knn = 1;
    }
    char prefix[160], name[64];
    snprintf(name, sizeof name, "%s", g->p[pi]);
    for (char *s = name; *s; s++)
      if (*s == ':' || *s == '=' || *s == '/') *s = '_';
    snprintf(prefix, sizeof prefix, "/exact/%s/%s/%s", g->w[wi], g->l[li], name);
    status = pb_exact_report_h5(res, prefix, &e.r);
    en->r = e.r;
    en->have = 1;
    e.r.emp_mc = NULL;  /* now the entry's */
    pb_exact_eval_free(&e);
    pb_message("exact: %s %s %s scored", g->w[wi], g->l[li], g->p[pi]);
  }
  for (int pi = 0; pi < g->np && have_knn; pi++) {
    struct pb_exact__entry *en = pb_exact__at(g, wi, li, pi);
    memcpy(en->r.knn, knn, sizeof knn);
    memcpy(en->r.knn_relevant, rel, sizeof rel);
    en->r.have_knn = 1;
  }
  pb_exact_cases_free(&c);
  return status;
}

static void pb_exact__first(struct pb_table *t, const struct pb_exact__entry *en, int with_pred)
{
  pb_table_str(t, en->world, 1);
  pb_table_str(t, en->level, 0);
  if (with_pred) pb_table_str(t, en->pred, 0);
}

/* Scores per world x level x predictor, and the KL-by-world-and-level figure data. */
static void pb_exact__kl(const struct pb_exact__grid *g, struct pb_table *t, struct pb_text *fig)
{
  pb_table_begin(t, "Scores by world, level and predictor (Eq. 1-3)",
                 "Expected and realised accuracy and KL on the cases; reference values on the population reference; "
                 "eps* by exact enumeration. A predictor that does not apply in a world is left out (logistic "
                 "regression in covert transfer, A.1).",
                 "world\tlevel\tpredictor\tn_cases\tbayes_error\tbayes_accuracy_cases\texpected_accuracy\tdelta_acc\t"
                 "realised_accuracy\tkl_nats\treference_kl_nats\treference_ece\treference_mc\treference_mc_halfwidth",
                 NULL);
  pb_text_printf(fig, "world_level");
  for (int p = 0; p < g->np; p++) pb_text_printf(fig, "\t%s", g->p[p]);
  pb_text_printf(fig, "\n");
  for (int w = 0; w < g->nw; w++)
    for (int l = 0; l < g->nl; l++) {
      pb_text_printf(fig, "%s %s", g->w[w], g->l[l]);
      for (int p = 0; p < g->np; p++) {
        const struct pb_exact__entry *en = pb_exact__at(g, w, l, p);
        pb_text_double(fig, en->have ? en->r.cases.kl : NAN);
        if (!en->have) continue;
        const struct pb_exact_result *r = &en->r;
        pb_exact__first(t, en, 1);
        pb_table_int(t, r->n_cases);
        double v[10] = {r->world.bayes_error, r->cases.bayes, r->cases.expected, r->cases.bayes - r->cases.expected,
                        r->cases.realised, r->cases.kl, r->ref_kl, r->ref_ece, r->ref_mc, r->ref_halfwidth};
        for (int i = 0; i < 10; i++) pb_table_num(t, v[i], 4);
        pb_table_end_row(t);
      }
      pb_text_printf(fig, "\n");
    }
}

/* Estimator intervals per world x level x size; figure data: one column block per world x level. */
static void pb_exact__knn(const struct pb_exact__grid *g, struct pb_table *t, struct pb_text *fig, char (*label)[40],
                          int *panels)
{
  pb_table_begin(t, "Nearest-neighbour Bayes-error estimators by world and level (C.3)",
                 "Means over seeds 2032-2034: Cover-Hart 1NN and Devroye 5NN intervals against the exact Bayes error; "
                 "fields = relevant repeats the largest size without the irrelevant fields (C.3 ablation).",
                 "world\tlevel\tn\tfields\tch_lower\tch_upper\tdv_lower\tdv_upper\tbayes_error", NULL);
  const struct pb_exact__entry *col[PB_EXACT__MAXL * PB_EXACT__MAXL];
  int nc = 0;
  for (int w = 0; w < g->nw; w++)
    for (int l = 0; l < g->nl; l++) {
      const struct pb_exact__entry *en = NULL;
      for (int p = 0; p < g->np && !en; p++)
        if (pb_exact__at(g, w, l, p)->r.have_knn) en = pb_exact__at(g, w, l, p);
      if (!en) continue;
      snprintf(label[nc], 40, "%s %s", en->world, en->level);
      col[nc++] = en;
      for (int a = 0; a <= en->r.n_sizes; a++) {
        int ablation = a == en->r.n_sizes;
        pb_exact__first(t, en, 0);
        pb_table_int(t, en->r.sizes[ablation ? a - 1 : a]);
        pb_table_str(t, ablation ? "relevant" : "all", 0);
        for (int c = 0; c < 4; c++) pb_table_num(t, pb_exact__knn_mean(&en->r, a, c), 4);
        pb_table_num(t, en->r.world.bayes_error, 4);
        pb_table_end_row(t);
      }
    }
  *panels = nc;
  pb_text_printf(fig, "n");
  for (int i = 0; i < nc; i++)
    pb_text_printf(fig, "\t%s %s ch_lo\tch_hi\tdv_lo\tdv_hi\teps", col[i]->world, col[i]->level);
  pb_text_printf(fig, "\n");
  for (int a = 0; nc > 0 && a < col[0]->r.n_sizes; a++) {
    pb_text_printf(fig, "%lld", (long long)col[0]->r.sizes[a]);
    for (int i = 0; i < nc; i++) {
      for (int c = 0; c < 4; c++) pb_text_double(fig, pb_exact__knn_mean(&col[i]->r, a, c));
      pb_text_double(fig, col[i]->r.world.bayes_error);
    }
    pb_text_printf(fig, "\n");
  }
}

/* Empirical MC per world x level x predictor x size; figure data at the last level, one column block per
 * world x predictor (mean, sd, reference). */
static void pb_exact__mc(const struct pb_exact__grid *g, struct pb_table *t, struct pb_text *fig)
{
  pb_table_begin(t, "Empirical multicalibration error by world, level and predictor (Eq. 3, C.4)",
                 "Mean and s.d. over calibration resamples; reference MC of the predictor with its 95% Hoeffding "
                 "half-width.",
                 "world\tlevel\tpredictor\tn\tmc_mean\tmc_sd\treference_mc\treference_mc_halfwidth", NULL);
  const struct pb_exact__entry *any = NULL;
  for (int w = 0; w < g->nw; w++)
    for (int l = 0; l < g->nl; l++)
      for (int p = 0; p < g->np; p++) {
        const struct pb_exact__entry *en = pb_exact__at(g, w, l, p);
        if (!en->have) continue;
        any = en;
        for (int a = 0; a < en->r.n_sizes; a++) {
          const double *v = en->r.emp_mc + a * en->r.resamples;
          pb_exact__first(t, en, 1);
          pb_table_int(t, en->r.sizes[a]);
          pb_table_num(t, pb_exact__mean(v, en->r.resamples, 1), 4);
          pb_table_num(t, pb_exact__sd(v, en->r.resamples), 4);
          pb_table_num(t, en->r.ref_mc, 4);
          pb_table_num(t, en->r.ref_halfwidth, 4);
          pb_table_end_row(t);
        }
      }
  if (!any) return;
  pb_text_printf(fig, "n");
  for (int w = 0; w < g->nw; w++)
    for (int p = 0; p < g->np; p++) pb_text_printf(fig, "\t%s %s mean\tsd\treference", g->w[w], g->p[p]);
  pb_text_printf(fig, "\n");
  for (int a = 0; a < any->r.n_sizes; a++) {
    pb_text_printf(fig, "%lld", (long long)any->r.sizes[a]);
    for (int w = 0; w < g->nw; w++)
      for (int p = 0; p < g->np; p++) {
        const struct pb_exact__entry *en = pb_exact__at(g, w, g->nl - 1, p);
        const double *v = en->have ? en->r.emp_mc + a * en->r.resamples : NULL;
        pb_text_double(fig, v ? pb_exact__mean(v, en->r.resamples, 1) : NAN);
        pb_text_double(fig, v ? pb_exact__sd(v, en->r.resamples) : NAN);
        pb_text_double(fig, v ? en->r.ref_mc : NAN);
      }
    pb_text_printf(fig, "\n");
  }
}

/* Predictor shown in the higher-order figure: the last logistic one, else the last. */
static int pb_exact__ho_pred(const struct pb_exact__grid *g, int w)
{
  int best = -1;
  for (int p = 0; p < g->np; p++)
    if (pb_exact__at(g, w, g->nl - 1, p)->have && (best < 0 || !strncmp(g->p[p], "logistic:", 9))) best = p;
  return best;
}

/* Higher-order errors per world x level x predictor x k; figure data at the last level, per world. */
static void pb_exact__ho(const struct pb_exact__grid *g, struct pb_table *t, struct pb_text *fig)
{
  pb_table_begin(t, "Higher-order and snapshot calibration errors by world, level and predictor (Eq. 5, 7-9)",
                 "Bins of each predictor weighted by reference mass; |E_HO - delta_k| <= E_k (Eq. 8).",
                 "world\tlevel\tpredictor\tk\tE_HO\tE_k\tE_k_before\tdelta_k", NULL);
  for (int w = 0; w < g->nw; w++)
    for (int l = 0; l < g->nl; l++)
      for (int p = 0; p < g->np; p++) {
        const struct pb_exact__entry *en = pb_exact__at(g, w, l, p);
        if (!en->have) continue;
        for (int i = 0; i < PB_EXACT_NK; i++) {
          pb_exact__first(t, en, 1);
          pb_table_int(t, pb_exact_snapshot_k[i]);
          pb_table_num(t, en->r.e_ho[i], 4);
          pb_table_num(t, en->r.e_k[i], 4);
          pb_table_num(t, en->r.e_k_before[i], 4);
          pb_table_num(t, en->r.delta_k[i], 4);
          pb_table_end_row(t);
        }
      }
  pb_text_printf(fig, "k");
  for (int w = 0; w < g->nw; w++) pb_text_printf(fig, "\t%s E_HO\tE_k\tE_k_before\tdelta_k", g->w[w]);
  pb_text_printf(fig, "\n");
  for (int i = 0; i < PB_EXACT_NK; i++) {
    pb_text_printf(fig, "%d", pb_exact_snapshot_k[i]);
    for (int w = 0; w < g->nw; w++) {
      int p = pb_exact__ho_pred(g, w);
      const struct pb_exact_result *r = p >= 0 ? &pb_exact__at(g, w, g->nl - 1, p)->r : NULL;
      pb_text_double(fig, r ? r->e_ho[i] : NAN);
      pb_text_double(fig, r ? r->e_k[i] : NAN);
      pb_text_double(fig, r ? r->e_k_before[i] : NAN);
      pb_text_double(fig, r ? r->delta_k[i] : NAN);
    }
    pb_text_printf(fig, "\n");
  }
}

static const char *const pb_exact__colour[PB_EXACT__MAXL] = {"#000080", "#800000", "#008000", "#806000",
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

/* Rank 0: the combined tables, the four figures and report/exact.md. */
static int pb_exact__worlds_files(struct pb_results *res, const struct pb_exact__grid *g,
                                  const struct pb_exact_options *o)
{
  static char script[4][16384];
  struct pb_table t = {{0}, {0}};
  struct pb_text md = {0}, fig = {0};
  char label[PB_EXACT__MAXL * PB_EXACT__MAXL][40];
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

static void pb_exact__grid_free(struct pb_exact__grid *g)
{
  for (int i = 0; g->e && i < g->nw * g->nl * g->np; i++) free(g->e[i].r.emp_mc);
  free(g->e);
  for (int i = 0; i < 3; i++) free(g->buf[i]);
}

int pb_exact_worlds_run(const struct pb_exact_options *o, const char *outdir, MPI_Comm comm, const char *provenance)
{
  struct pb_exact__grid g = {0};
  struct pb_results *res = NULL;
  struct pb_timer timer;
  int rank, status = PB_FAIL;
  MPI_Comm_rank(comm, &rank);
  pb_timer_start(&timer, "exact");
  g.buf[0] = pb_strdup(o->worlds);
  g.buf[1] = pb_strdup(o->levels);
  g.buf[2] = pb_strdup(o->predictors);
  if (pb_exact__split(g.buf[0], g.w, &g.nw) || pb_exact__split(g.buf[1], g.l, &g.nl) ||
      pb_exact__split(g.buf[2], g.p, &g.np) || g.nw == 0 || g.nl == 0 || g.np == 0) {
    pb_error_set("exact worlds: 1 to %d worlds, levels and predictors each", PB_EXACT__MAXL);
    goto done;
  }
  for (int p = 0; p < g.np; p++)
    if (strcmp(g.p[p], "pstar") && strcmp(g.p[p], "prior") && strncmp(g.p[p], "logistic:n=", 11)) {
      pb_error_set("exact worlds: predictor '%s' is not built in (pstar, prior, logistic:n=N)", g.p[p]);
      goto done;
    }
  g.e = pb_calloc((size_t)(g.nw * g.nl * g.np), sizeof *g.e);
  if (pb_results_create(outdir, comm, provenance, &res)) goto done;
  pb_figure_prepare(res); /* its gnuplot starts while the worlds are computed */
  for (int w = 0; w < g.nw; w++)
    for (int l = 0; l < g.nl; l++)
      if (pb_exact__cell(comm, o, &g, w, l, res, &timer)) goto done;
  pb_timer_skip(&timer);
  status = rank == 0 ? pb_exact__worlds_files(res, &g, o) : PB_OK;
  MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  pb_timer_lap(&timer, "write");
  int64_t scored = 0;
  for (int i = 0; i < g.nw * g.nl * g.np; i++) scored += g.e[i].have;
  if (status == PB_OK) status = pb_exact_timings(&timer, comm, res, o->reference * scored);
  if (status == PB_OK) status = pb_results_commit(res);
  res = NULL;
done:
  if (res) pb_results_close(res);
  pb_exact__grid_free(&g);
  return status;
}
