/* exact's lines of `pairbound run`'s one-screen summary and its finding on
 * REPORT.md's first page, read back from its report TSVs
 * (pairbound/report_tsv.h): the exact Bayes error of every world and level,
 * the range of each predictor's mean KL from p*, and how often the
 * nearest-neighbour intervals miss eps* (seed 002 Section 5). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pairbound/report_tsv.h"
#include "pairbound/text.h"
#include "exact_internal.h"

/* Every row's world, in the table's order, once; returns how many. */
static int pb_exact__worlds_of(const struct pb_report_tsv *t, const char **w)
{
  int n = 0;
  for (int r = 1; r < t->n_rows; r++) {
    const char *x = pb_report_tsv_at(t, r, "world");
    int seen = 0;
    for (int i = 0; i < n; i++) seen |= x && !strcmp(w[i], x);
    if (x && !seen && n < PB_EXACT_MAXL) w[n++] = x;
  }
  return n;
}

/* "covert 0.019/0.074/0.145, credit ...": eps* of each world at its levels in the table's order. */
static void pb_exact__eps_text(const struct pb_report_tsv *t, struct pb_text *out)
{
  const char *w[PB_EXACT_MAXL];
  const int nw = pb_exact__worlds_of(t, w);
  for (int i = 0; i < nw; i++) {
    pb_text_printf(out, "%s%s ", i ? ", " : "", w[i]);
    const char *last = NULL;
    for (int r = 1, k = 0; r < t->n_rows; r++) {
      const char *lv = pb_report_tsv_at(t, r, "level");
      if (strcmp(pb_report_tsv_at(t, r, "world"), w[i]) || (last && !strcmp(last, lv))) continue;
      pb_text_printf(out, "%s%.3f", k++ ? "/" : "", pb_report_tsv_num(t, r, "bayes_error"));
      last = lv;
    }
  }
}

/* The levels of the first world, "low/medium/high". */
static void pb_exact__levels_text(const struct pb_report_tsv *t, struct pb_text *out)
{
  const char *w0 = pb_report_tsv_at(t, 1, "world"), *last = NULL;
  for (int r = 1, k = 0; r < t->n_rows; r++) {
    const char *lv = pb_report_tsv_at(t, r, "level");
    if (strcmp(pb_report_tsv_at(t, r, "world"), w0) || (last && !strcmp(last, lv))) continue;
    pb_text_printf(out, "%s%s", k++ ? "/" : "", lv);
    last = lv;
  }
}

/* "pstar 0.0000-0.0010, prior ...": each predictor's lowest and highest mean KL over the settings it ran in. */
static void pb_exact__kl_text(const struct pb_report_tsv *t, struct pb_text *out)
{
  const char *p[PB_EXACT_MAXL];
  int np = 0;
  for (int r = 1; r < t->n_rows; r++) {
    const char *x = pb_report_tsv_at(t, r, "predictor");
    int seen = 0;
    for (int i = 0; i < np; i++) seen |= !strcmp(p[i], x);
    if (!seen && np < PB_EXACT_MAXL) p[np++] = x;
  }
  for (int i = 0; i < np; i++) {
    double lo = INFINITY, hi = -INFINITY;
    for (int r = 1; r < t->n_rows; r++)
      if (!strcmp(pb_report_tsv_at(t, r, "predictor"), p[i])) {
        const double kl = pb_report_tsv_num(t, r, "kl_nats");
        lo = kl < lo ? kl : lo, hi = kl > hi ? kl : hi;
      }
    pb_text_printf(out, "%s%s %.4f-%.4f", i ? ", " : "", p[i], lo, hi);
  }
}

/* At the largest n with every field: the settings whose 1NN and 5NN intervals lie entirely above eps*. */
static void pb_exact__knn_counts(const struct pb_report_tsv *k, int64_t *n, int *settings, int *ch, int *dv)
{
  *n = 0, *settings = *ch = *dv = 0;
  for (int r = 1; r < k->n_rows; r++)
    if (!strcmp(pb_report_tsv_at(k, r, "fields"), "all") && pb_report_tsv_num(k, r, "n") > (double)*n)
      *n = (int64_t)pb_report_tsv_num(k, r, "n");
  for (int r = 1; r < k->n_rows; r++) {
    if (strcmp(pb_report_tsv_at(k, r, "fields"), "all") || pb_report_tsv_num(k, r, "n") != (double)*n) continue;
    const double eps = pb_report_tsv_num(k, r, "bayes_error");
    (*settings)++;
    *ch += pb_report_tsv_num(k, r, "ch_lower") > eps;
    *dv += pb_report_tsv_num(k, r, "dv_lower") > eps;
  }
}

void pb_exact_run_summary(FILE *fp, struct pb_text *md, const char *dir, const char *rel)
{
  struct pb_report_tsv t, k;
  if (pb_report_tsv_load(dir, "exact_worlds.tsv", &t) != 0) return;
  if (t.n_rows < 2) {
    pb_report_tsv_free(&t);
    return;
  }
  const int have_knn = pb_report_tsv_load(dir, "exact_worlds_knn.tsv", &k) == 0;
  int64_t n = 0;
  int settings = 0, ch = 0, dv = 0;
  if (have_knn) pb_exact__knn_counts(&k, &n, &settings, &ch, &dv);
  struct pb_text eps = {0}, lv = {0}, kl = {0};
  pb_exact__eps_text(&t, &eps);
  pb_exact__levels_text(&t, &lv);
  pb_exact__kl_text(&t, &kl);
  const char *cases = pb_report_tsv_at(&t, 1, "n_cases");
  if (fp) {
    fprintf(fp, "exact   exact Bayes error (%s): %s\n", lv.buf, eps.buf);
    fprintf(fp, "          mean KL(p*||q) on %s cases, lowest-highest over the settings: %s\n", cases, kl.buf);
    if (settings > 0)
      fprintf(fp, "          n = %lld: interval above eps* in %d of %d settings (Cover-Hart 1NN), %d of %d (Devroye 5NN)\n",
              (long long)n, ch, settings, dv, settings);
  }
  if (md) {
    pb_text_printf(md, "\n### Scores against exact class probabilities (seed 002)\n\n"
                       "Worlds whose class probabilities are known exactly, drawn without the store: the exact "
                       "Bayes error of each world at hiding levels %s is %s. Mean KL(p*||q) in nats on %s cases "
                       "per setting, lowest to highest over the settings: %s — the part of the log loss a "
                       "predictor could still avoid, zero for p* itself up to the clipping of q to "
                       "[0.001, 0.999].",
                   lv.buf, eps.buf, cases, kl.buf);
    if (settings > 0)
      pb_text_printf(md, " At n = %lld the nearest-neighbour Bayes-error intervals lie entirely above the true "
                         "Bayes error in %d of %d settings (Cover-Hart 1NN) and %d of %d (Devroye 5NN): estimates "
                         "an exact reference shows to be too high.",
                     (long long)n, ch, settings, dv, settings);
    pb_text_printf(md, "\n\n![mean KL by world and level](%sexact_fig_kl.png)\n", rel);
  }
  pb_text_free(&eps);
  pb_text_free(&lv);
  pb_text_free(&kl);
  if (have_knn) pb_report_tsv_free(&k);
  pb_report_tsv_free(&t);
}
