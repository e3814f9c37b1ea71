/* Report tables of the policy stage, laid out like seed 000 Tables 4, 12-15
 * and Figure 5: report/policy_*.tsv and report/policy.md (its own markdown
 * file, so that running `bounds` and `policy` into one OUTDIR keeps both).
 * Cells are weighted equally within a source and summed in cell order;
 * regrets are printed in percentage points. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/figure.h"
#include "pairbound/util.h"
#include "policy_internal.h"

#define PP 100.0

static const double *pb_prep__lam(const double *rec, int32_t li) { return rec + PB_PC_NBASE + (size_t)li * PB_PL_N; }

/* Synthetic-corruption sources are Syn and Syn-B; every other source is a real capture (D.1). */
static int pb_prep__real(const char *name) { return strcmp(name, "Syn") != 0 && strcmp(name, "Syn-B") != 0; }

/* Table 12 (+ the directed counts behind it) at the primary weight. */
static void pb_prep__orderings(const struct pb_meta *meta, const struct pb_cell_ref *cells, const double *recs,
                               int64_t n_cells, int32_t rl, int32_t li, struct pb_table *t)
{
  pb_table_begin(t, "Additional strict policy comparisons (seed Table 12 / Table 4)",
                  "Cells with at least one mixed-outcome ordering: `shared` = D+ < -1e-12 missed by the separate "
                  "I5 intervals; `plus_k`, `plus_5` = strict at the richer level but not at the poorer one "
                  "(I0 -> Ik, Ik -> I5). `directed_*` count ordered pairs.",
                  "source\tcells\tshared\tplus_k\tplus_5\tdirected_shared\tdirected_plus_k\tdirected_plus_5", NULL);
  for (int32_t s = 0; s <= meta->n_sources; s++) {
    if (s < meta->n_sources && meta->sources[s].probe_role) continue; /* a probe source has no cells */
    int64_t v[7] = {0};
    for (int64_t c = 0; c < n_cells; c++) {
      const double *r = recs + c * rl;
      if (r[PB_PC_SCOPE] != 1 || (s < meta->n_sources && cells[c].source != s)) continue;
      const double *l = pb_prep__lam(r, li);
      v[0]++;
      v[1] += l[PB_PL_CERT + 2] > 0;
      v[2] += l[PB_PL_INCK] > 0;
      v[3] += l[PB_PL_INC5] > 0;
      v[4] += (int64_t)l[PB_PL_CERT + 2];
      v[5] += (int64_t)l[PB_PL_INCK];
      v[6] += (int64_t)l[PB_PL_INC5];
    }
    pb_table_str(t, s < meta->n_sources ? meta->sources[s].name : "Total", 1);
    for (int i = 0; i < 7; i++) pb_table_int(t, v[i]);
    pb_table_end_row(t);
  }
}

/* Post hoc merge of identical acceptance vectors (Appendix D). */
static void pb_prep__actions(const struct pb_meta *meta, const struct pb_cell_ref *cells, const double *recs,
                             int64_t n_cells, int32_t rl, int32_t li, struct pb_table *t)
{
  pb_table_begin(t, "Cells left with one distinct action",
                  "After removing policies strictly worse than another throughout the feasible set, thresholds "
                  "with identical evaluation acceptance vectors are merged (post hoc diagnostic).",
                  "source\tcells\tone_action_I0\tone_action_Ik\tone_action_I5", NULL);
  for (int32_t s = 0; s <= meta->n_sources; s++) {
    if (s < meta->n_sources && meta->sources[s].probe_role) continue; /* a probe source has no cells */
    int64_t v[4] = {0};
    for (int64_t c = 0; c < n_cells; c++) {
      const double *r = recs + c * rl;
      if (r[PB_PC_SCOPE] != 1 || (s < meta->n_sources && cells[c].source != s)) continue;
      const double *l = pb_prep__lam(r, li);
      v[0]++;
      for (int lv = 0; lv < 3; lv++) v[1 + lv] += l[PB_PL_NACT + lv] == 1;
    }
    pb_table_str(t, s < meta->n_sources ? meta->sources[s].name : "Total", 1);
    for (int i = 0; i < 4; i++) pb_table_int(t, v[i]);
    pb_table_end_row(t);
  }
}

/* Better / worse / tied: minimax against the feasible-mean rule on realized cost. */
static void pb_prep__bwt(const double *l, int lv, int64_t bwt[3])
{
  double a = l[PB_PL_REG_MM + lv], b = l[PB_PL_REG_MEAN + lv];
  if (isnan(a) || isnan(b)) return;
  if (a < b - PB_POLICY_STRICT) bwt[0]++;
  else if (a > b + PB_POLICY_STRICT) bwt[1]++;
  else bwt[2]++;
}

/* Table 13 at the primary weight, I5, with the two controls. */
static void pb_prep__selection(const struct pb_meta *meta, const struct pb_cell_ref *cells, const double *recs,
                               int64_t n_cells, int32_t rl, int32_t li, struct pb_table *t)
{
  pb_table_begin(t, "Realized regret of the selection rules (seed Table 13)",
                  "I5; mean realized regret in percentage points (cells equally weighted within source); "
                  "Better/Worse/Tied: minimax lower/higher/equal realized cost than the feasible-permutation mean rule. "
                  "Controls: the fixed 80% policy and the marginal proxy.",
                  "source\tcells\tfeasible_mean\tminimax\tbetter\tworse\ttied\tfixed80\tproxy", NULL);
  for (int32_t s = 0; s <= meta->n_sources; s++) {
    if (s < meta->n_sources && meta->sources[s].probe_role) continue; /* a probe source has no cells */
    double sum[4] = {0};
    int64_t n[4] = {0}, cells_n = 0, bwt[3] = {0};
    for (int64_t c = 0; c < n_cells; c++) {
      const double *r = recs + c * rl;
      if (r[PB_PC_SCOPE] != 1 || (s < meta->n_sources && cells[c].source != s)) continue;
      const double *l = pb_prep__lam(r, li);
      const double v[4] = {l[PB_PL_REG_MEAN + 2], l[PB_PL_REG_MM + 2], l[PB_PL_REG_FIX], l[PB_PL_REG_PROXY]};
      cells_n++;
      for (int i = 0; i < 4; i++)
        if (!isnan(v[i])) sum[i] += v[i] * PP, n[i]++;
      pb_prep__bwt(l, 2, bwt);
    }
    pb_table_str(t, s < meta->n_sources ? meta->sources[s].name : "Total", 1);
    pb_table_int(t, cells_n);
    pb_table_num(t, n[0] ? sum[0] / n[0] : NAN, 6);
    pb_table_num(t, n[1] ? sum[1] / n[1] : NAN, 6);
    for (int i = 0; i < 3; i++) pb_table_int(t, bwt[i]);
    pb_table_num(t, n[2] ? sum[2] / n[2] : NAN, 6);
    pb_table_num(t, n[3] ? sum[3] / n[3] : NAN, 6);
    pb_table_end_row(t);
  }
}

/* Table 14: the weight grid at I5 over all cells in scope. */
static void pb_prep__weights(const struct pb_policy_options *opt, const double *recs, int64_t n_cells, int32_t rl,
                             struct pb_table *t)
{
  pb_table_begin(t, "Selection over the weight grid (seed Table 14)",
                  "I5; delta = feasible-mean regret minus minimax regret in percentage points, averaged equally over "
                  "cells (negative favours the mean rule).",
                  "lambda\tcells\tdelta_pp\tbetter\tworse\ttied", NULL);
  for (int32_t li = 0; li < opt->n_lambdas; li++) {
    double sum = 0;
    int64_t n = 0, bwt[3] = {0};
    for (int64_t c = 0; c < n_cells; c++) {
      const double *r = recs + c * rl;
      if (r[PB_PC_SCOPE] != 1) continue;
      const double *l = pb_prep__lam(r, li);
      double d = l[PB_PL_REG_MEAN + 2] - l[PB_PL_REG_MM + 2];
      if (!isnan(d)) sum += d * PP, n++;
      pb_prep__bwt(l, 2, bwt);
    }
    char lam[40];
    pb_format_double(opt->lambdas[li], lam);
    pb_table_str(t, lam, 1);
    pb_table_int(t, n);
    pb_table_num(t, n ? sum / n : NAN, 6);
    for (int i = 0; i < 3; i++) pb_table_int(t, bwt[i]);
    pb_table_end_row(t);
  }
}

/* Figure 5 counts of source s at weight li: cells, then cells with an
 * additional certified ordering (shared correspondence, I0 -> Ik, Ik -> I5). */
static void pb_prep__fig5_counts(const struct pb_cell_ref *cells, const double *recs, int64_t n_cells, int32_t rl,
                                 int32_t s, int32_t li, int64_t v[4])
{
  v[0] = v[1] = v[2] = v[3] = 0;
  for (int64_t c = 0; c < n_cells; c++) {
    const double *r = recs + c * rl;
    if (r[PB_PC_SCOPE] != 1 || cells[c].source != s) continue;
    const double *l = pb_prep__lam(r, li);
    v[0]++;
    v[1] += l[PB_PL_CERT + 2] > 0;
    v[2] += l[PB_PL_INCK] > 0;
    v[3] += l[PB_PL_INC5] > 0;
  }
}

/* Figure 5 data: per source and weight, the fraction of cells with an additional certified ordering. */
static void pb_prep__figure5(const struct pb_meta *meta, const struct pb_cell_ref *cells,
                             const struct pb_policy_options *opt, const double *recs, int64_t n_cells, int32_t rl,
                             struct pb_table *t)
{
  pb_table_begin(t, "Sensitivity to the cost weight (seed Figure 5 data)",
                  "Fraction of cells with an additional certified mixed-outcome ordering: shared correspondence vs "
                  "separate I5 intervals, and the information increments I0 -> Ik and Ik -> I5.",
                  "source\tlambda\tcells\tshared\tplus_k\tplus_5", NULL);
  for (int32_t s = 0; s < meta->n_sources; s++)
    if (!meta->sources[s].probe_role) /* a probe source has no cells */
    for (int32_t li = 0; li < opt->n_lambdas; li++) {
      int64_t v[4];
      pb_prep__fig5_counts(cells, recs, n_cells, rl, s, li, v);
      char lam[40];
      pb_format_double(opt->lambdas[li], lam);
      pb_table_str(t, meta->sources[s].name, 1);
      pb_table_str(t, lam, 0);
      pb_table_int(t, v[0]);
      for (int i = 1; i < 4; i++) pb_table_num(t, v[0] ? (double)v[i] / v[0] : NAN, 4);
      pb_table_end_row(t);
    }
}

/* Figure 5 as a plot: one line per source and comparison across the weight grid
 * (colour = source, dash = comparison), sources without cells in scope left out. */
static int pb_prep__figure5_plot(const struct pb_meta *meta, const struct pb_cell_ref *cells,
                                 const struct pb_policy_options *opt, const double *recs, int64_t n_cells, int32_t rl,
                                 struct pb_results *res, struct pb_text *md)
{
  static const char *const cmp[3] = {"shared vs separate", "I0 -> Ik", "Ik -> I5"};
  struct pb_text d = {0};
  int32_t n_cols = 0;
  int64_t v[4];
  pb_text_printf(&d, "lambda");
  for (int32_t s = 0; s < meta->n_sources; s++) {
    pb_prep__fig5_counts(cells, recs, n_cells, rl, s, 0, v);
    for (int i = 0; i < 3 && v[0] > 0; i++, n_cols++) pb_text_printf(&d, "\t%s: %s", meta->sources[s].name, cmp[i]);
  }
  pb_text_printf(&d, "\n");
  for (int32_t li = 0; li < opt->n_lambdas; li++) {
    char lam[40];
    pb_format_double(opt->lambdas[li], lam);
    pb_text_printf(&d, "%s", lam);
    for (int32_t s = 0; s < meta->n_sources; s++) {
      pb_prep__fig5_counts(cells, recs, n_cells, rl, s, li, v);
      for (int i = 1; i < 4 && v[0] > 0; i++) pb_text_double(&d, (double)v[i] / v[0]);
    }
    pb_text_printf(&d, "\n");
  }
  char script[512];
  snprintf(script, sizeof script,
           "set key outside right top\nset yrange [0:*]\nset xrange [0:1]\n"
           "plot for [i=2:%d] DATA using 1:i with linespoints lw 2 lc ((i-2)/3+1) pt ((i-2)%%3*2+5) dt 1+(i+1)%%3",
           n_cols + 1);
  const struct pb_figure fig = {"figure5_certified_orderings", "Certified policy orderings across the cost weight (seed Figure 5)",
                                "cost weight lambda (weight of wrong accepted predictions)",
                                "fraction of cells in scope with an additional certified ordering", script};
  int status = n_cols > 0 ? pb_figure_write(res, &fig, d.buf, d.len, md) : PB_OK;
  pb_text_free(&d);
  return status;
}

/* Numerical checks: Lemma 1 residual, Corollary 1 violations, exact means. */
static void pb_prep__checks(const double *recs, int64_t n_cells, int32_t rl, struct pb_table *t)
{
  pb_table_begin(t, "Numerical checks",
                  "Lemma 1: largest |Eq. 8 - direct maximisation| in percentage points over all levels, weights and "
                  "policies. Corollary 1: natural-cost interval ends and D'+ that differ between Ik and I5 (must be 0). "
                  "Unrepresentable means: I5 classes whose exact bijection counts exceed 128 bits (feasible mean NaN).",
                  "cells\tlemma1_max_residual_pp\tcorollary1_violations\tunrepresentable_mean_classes", NULL);
  double res = 0;
  int64_t n = 0, viol = 0, bad = 0;
  for (int64_t c = 0; c < n_cells; c++) {
    const double *r = recs + c * rl;
    if (r[PB_PC_SCOPE] != 1) continue;
    n++;
    res = fmax(res, r[PB_PC_LEMMA1] * PP);
    viol += (int64_t)r[PB_PC_COR1];
    bad += (int64_t)r[PB_PC_MEAN_BAD];
  }
  pb_text_printf(&t->tsv, "%lld", (long long)n);
  pb_text_printf(&t->md, "| %lld", (long long)n);
  pb_table_num(t, res, 17);
  pb_table_int(t, viol);
  pb_table_int(t, bad);
  pb_table_end_row(t);
}

/* D.1: among real cells in scope with K > 0 and a mixed certified pair at the
 * primary weight, the cell nearest the median marginal H width of all real
 * cells in scope; ties go to the earlier cell (source, model, condition order). */
static int pb_prep__illustration(const struct pb_meta *meta, const struct pb_cell_ref *cells, const double *recs,
                                 int64_t n_cells, int32_t rl, struct pb_table *t)
{
  double *w = malloc((size_t)(n_cells > 0 ? n_cells : 1) * sizeof *w);
  int64_t nw = 0, best = -1;
  for (int64_t c = 0; c < n_cells; c++) {
    const double *r = recs + c * rl;
    if (r[PB_PC_SCOPE] == 1 && pb_prep__real(meta->sources[cells[c].source].name)) w[nw++] = r[PB_PC_HW_I0];
  }
  qsort(w, (size_t)nw, sizeof *w, pb_cmp_double); /* nw <= cells: O(n log n) */
  double med = nw == 0 ? NAN : nw % 2 ? w[nw / 2] : (w[nw / 2 - 1] + w[nw / 2]) / 2;
  free(w);
  double bd = INFINITY;
  for (int64_t c = 0; c < n_cells && nw > 0; c++) {
    const double *r = recs + c * rl;
    if (r[PB_PC_SCOPE] != 1 || !pb_prep__real(meta->sources[cells[c].source].name) || !(r[PB_PC_K] > 0) ||
        isnan(r[PB_PC_D1]))
      continue;
    double d = fabs(r[PB_PC_HW_I0] - med);
    if (d < bd) bd = d, best = c;
  }
  pb_text_printf(&t->md, "\n### Real-record illustration (seed D.1 / Table 15)\n\n");
  if (best < 0) {
    pb_text_printf(&t->md, "No real cell in scope has positive retained-correct support and a mixed certified "
                           "pair at the primary weight.\n");
    pb_text_printf(&t->tsv, "target\tI0_lo\tI0_hi\tIk_lo\tIk_hi\tI5_lo\tI5_hi\tobserved\n");
    return 0;
  }
  const double *r = recs + best * rl;
  const struct pb_source *src = &meta->sources[cells[best].source];
  pb_text_printf(&t->md, "Cell: model %s, source %s, condition %s (clean threshold %.6g; median marginal H width of "
                         "the real cells %.4f pp, this cell %.4f pp). H, L in percentage points, dMk in probability "
                         "points.\n\n| target | I0 | Ik | I5 | observed |\n|---|---|---|---|---|\n",
                 meta->model_ids[cells[best].model], src->name, src->conditions[cells[best].condition],
                 r[PB_PC_TAU0], med * PP, r[PB_PC_HW_I0] * PP);
  pb_text_printf(&t->tsv, "# model %s\tsource %s\tcondition %s\n", meta->model_ids[cells[best].model], src->name,
                 src->conditions[cells[best].condition]);
  pb_text_printf(&t->tsv, "target\tI0_lo\tI0_hi\tIk_lo\tIk_hi\tI5_lo\tI5_hi\tobserved\n");
  const char *names[3] = {"H", "L", "dMk"};
  for (int q = 0; q < 3; q++) {
    const double *v = r + PB_PC_T15 + 7 * q;
    pb_text_printf(&t->tsv, "%s", names[q]);
    for (int i = 0; i < 7; i++) pb_text_double(&t->tsv, v[i]);
    pb_text_printf(&t->tsv, "\n");
    pb_text_printf(&t->md, "| %s | [%.1f, %.1f] | [%.1f, %.1f] | [%.1f, %.1f] | %.1f |\n", names[q], v[0] * PP,
                   v[1] * PP, v[2] * PP, v[3] * PP, v[4] * PP, v[5] * PP, v[6] * PP);
  }
  const double *d = r + PB_PC_D1;
  pb_text_printf(&t->tsv, "pair\tj\tl\ttau_j\ttau_l\tq_j\tq_l\tJj_lo\tJj_hi\tJl_lo\tJl_hi\tseparate_gap\tDplus_I5\tDplus_I0\n"
                          "pair");
  for (int i = 0; i < 13; i++) pb_text_double(&t->tsv, d[i]);
  pb_text_printf(&t->tsv, "\n");
  pb_text_printf(&t->md, "\nFirst mixed certified pair in index order (I5, primary weight): policy %d (nominal "
                         "coverage %.2f, threshold %.6g) against policy %d (%.2f, %.6g). J intervals [%.1f, %.1f] and "
                         "[%.1f, %.1f] points; separate endpoints give an upper difference of %+.2f, one common "
                         "correspondence gives %+.2f (at I0: %+.2f).\n",
                 (int)d[0], d[4], d[2], (int)d[1], d[5], d[3], d[6] * PP, d[7] * PP, d[8] * PP, d[9] * PP,
                 d[10] * PP, d[11] * PP, d[12] * PP);
  return 0;
}

int pb_policy_report(const struct pb_meta *meta, const double *recs, int64_t n_cells, int32_t rec_len,
                     const struct pb_policy_options *opt, int32_t primary, struct pb_results *res)
{
  struct pb_cell_ref *cells;
  pb_dist_cells(meta, &cells);
  struct pb_text md = {0};
  struct pb_table t = {{0}, {0}};
  int status = PB_OK;
  char lam[40];
  pb_format_double(opt->lambdas[primary], lam);
  pb_text_printf(&md, "# pairbound policy report\n\nRejection-policy comparisons under a shared correspondence "
                      "(seed 000 Section 4.2, Appendix D) on the %s; primary weight lambda = %s. Per-policy bounds: "
                      "report/policy_bounds.tsv; pairwise certificates: report/policy_pairs.tsv.\n",
                 opt->all ? "full grid" : "frozen panel", lam);
  pb_prep__orderings(meta, cells, recs, n_cells, rec_len, primary, &t);
  status |= pb_table_flush(&t, res, "policy_orderings.tsv", &md);
  pb_prep__actions(meta, cells, recs, n_cells, rec_len, primary, &t);
  status |= pb_table_flush(&t, res, "policy_actions.tsv", &md);
  pb_prep__selection(meta, cells, recs, n_cells, rec_len, primary, &t);
  status |= pb_table_flush(&t, res, "policy_selection.tsv", &md);
  pb_prep__weights(opt, recs, n_cells, rec_len, &t);
  status |= pb_table_flush(&t, res, "policy_weights.tsv", &md);
  pb_prep__figure5(meta, cells, opt, recs, n_cells, rec_len, &t);
  status |= pb_table_flush(&t, res, "policy_figure5.tsv", &md);
  if (status == PB_OK) status = pb_prep__figure5_plot(meta, cells, opt, recs, n_cells, rec_len, res, &md);
  pb_prep__checks(recs, n_cells, rec_len, &t);
  status |= pb_table_flush(&t, res, "policy_checks.tsv", &md);
  pb_prep__illustration(meta, cells, recs, n_cells, rec_len, &t);
  status |= pb_table_flush(&t, res, "policy_illustration.tsv", &md);
  if (status == PB_OK) status = pb_results_write_report(res, "policy.md", md.buf, md.len);
  pb_text_free(&md);
  free(cells);
  return status ? PB_FAIL : PB_OK;
}
