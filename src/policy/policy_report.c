/* Report tables of the policy stage, laid out like seed 000 Tables 4, 12-15
 * and Figure 5: report/policy_*.tsv and report/policy.md (its own markdown
 * file, so that running `bounds` and `policy` into one OUTDIR keeps both).
 * Cells are weighted equally within a source; every rank adds up its own
 * cells (counts in int64, regrets as exact sums, pairbound/agg.h) and rank 0
 * prints the totals, so no rank holds another's records; regrets are printed
 * in percentage points. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/agg.h"
#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/figure.h"
#include "pairbound/text.h"
#include "policy_internal.h"

#define PP 100.0

static const double *pb_prep__lam(const double *rec, int32_t li) { return rec + PB_PC_NBASE + (size_t)li * PB_PL_N; }

/* Synthetic-corruption sources are Syn and Syn-B; every other source is a real capture (D.1). */
static int pb_prep__real(const char *name) { return strcmp(name, "Syn") != 0 && strcmp(name, "Syn-B") != 0; }

/* What the tables add up over the cells in scope, summed over the ranks: per
 * source (s = n_sources: every cell, the Total rows) the integer counts of
 * Tables 12 and 13 and the cells with one action, per weight Table 14's
 * counts, per (source, weight) Figure 5's counts, and the checks; exact sums
 * of the regrets.  The same for any split of the cells. */
enum { PB_PS__ORD = 0, PB_PS__ACT = 7, PB_PS__BWT = 10, PB_PS__PER_SRC = 13 }; /* counts per source */
enum { PB_PS__W_N = 0, PB_PS__W_BWT = 1, PB_PS__PER_LAM = 4 };                 /* counts per weight */
struct pb_prep__sum {
  int32_t ns, nl, li;   /* sources, weights, the primary weight */
  int64_t *k;           /* counts: per source, per weight, per (source, weight) 4, then cells / Cor. 1 / bad means */
  struct pb_agg a;      /* regrets x PP: per source the 4 of Table 13, then per weight Table 14's delta */
  double lemma1;        /* largest Lemma 1 residual x PP (from 0) */
};

static int64_t *pb_prep__src(const struct pb_prep__sum *S, int32_t s) { return S->k + (size_t)s * PB_PS__PER_SRC; }
static int64_t *pb_prep__lamk(const struct pb_prep__sum *S, int32_t li)
{
  return S->k + (size_t)(S->ns + 1) * PB_PS__PER_SRC + (size_t)li * PB_PS__PER_LAM;
}
/* Figure 5 counts of source s at weight li: cells, then cells with an
 * additional certified ordering (shared correspondence, I0 -> Ik, Ik -> I5). */
static int64_t *pb_prep__fig5(const struct pb_prep__sum *S, int32_t s, int32_t li)
{
  return pb_prep__lamk(S, S->nl) + ((size_t)s * S->nl + li) * 4;
}
static int64_t *pb_prep__chk(const struct pb_prep__sum *S) { return pb_prep__fig5(S, S->ns, 0); }
static int64_t pb_prep__nk(int32_t ns, int32_t nl)
{
  return (int64_t)(ns + 1) * PB_PS__PER_SRC + (int64_t)nl * PB_PS__PER_LAM + (int64_t)ns * nl * 4 + 3;
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

/* One cell in scope of source @p s into the counts and sums of its source and of the Total. */
static void pb_prep__add(struct pb_prep__sum *S, int32_t s, const double *r)
{
  const double *l = pb_prep__lam(r, S->li);
  const int32_t keys[2] = {s, S->ns};
  for (int j = 0; j < 2; j++) {
    int64_t *v = pb_prep__src(S, keys[j]);
    v[PB_PS__ORD + 0]++;
    v[PB_PS__ORD + 1] += l[PB_PL_CERT + 2] > 0;
    v[PB_PS__ORD + 2] += l[PB_PL_INCK] > 0;
    v[PB_PS__ORD + 3] += l[PB_PL_INC5] > 0;
    v[PB_PS__ORD + 4] += (int64_t)l[PB_PL_CERT + 2];
    v[PB_PS__ORD + 5] += (int64_t)l[PB_PL_INCK];
    v[PB_PS__ORD + 6] += (int64_t)l[PB_PL_INC5];
    for (int lv = 0; lv < 3; lv++) v[PB_PS__ACT + lv] += l[PB_PL_NACT + lv] == 1;
    pb_prep__bwt(l, 2, v + PB_PS__BWT);
    const double x[4] = {l[PB_PL_REG_MEAN + 2], l[PB_PL_REG_MM + 2], l[PB_PL_REG_FIX], l[PB_PL_REG_PROXY]};
    for (int i = 0; i < 4; i++) pb_agg_add(&S->a, (int64_t)keys[j] * 4 + i, x[i] * PP);
  }
  for (int32_t li = 0; li < S->nl; li++) {
    const double *m = pb_prep__lam(r, li);
    int64_t *w = pb_prep__lamk(S, li), *f = pb_prep__fig5(S, s, li);
    const double d = m[PB_PL_REG_MEAN + 2] - m[PB_PL_REG_MM + 2];
    w[PB_PS__W_N] += !isnan(d);
    pb_agg_add(&S->a, (int64_t)(S->ns + 1) * 4 + li, d * PP);
    pb_prep__bwt(m, 2, w + PB_PS__W_BWT);
    f[0]++;
    f[1] += m[PB_PL_CERT + 2] > 0;
    f[2] += m[PB_PL_INCK] > 0;
    f[3] += m[PB_PL_INC5] > 0;
  }
  int64_t *chk = pb_prep__chk(S);
  chk[0]++;
  chk[1] += (int64_t)r[PB_PC_COR1];
  chk[2] += (int64_t)r[PB_PC_MEAN_BAD];
  S->lemma1 = fmax(S->lemma1, r[PB_PC_LEMMA1] * PP);
}

/* The summary of every rank's cells in scope on rank 0 (collective); this rank
 * holds n_local records of cells first.. . */
static int pb_prep__summarise(const struct pb_meta *meta, const double *recs, int64_t first, int64_t n_local, int32_t rl,
                              const struct pb_policy_options *opt, int32_t primary, MPI_Comm comm,
                              struct pb_prep__sum *S)
{
  int rank;
  MPI_Comm_rank(comm, &rank);
  *S = (struct pb_prep__sum){meta->n_sources, opt->n_lambdas, primary, NULL, {0, NULL}, 0.0};
  const int64_t nk = pb_prep__nk(S->ns, S->nl);
  S->k = pb_calloc((size_t)nk, sizeof *S->k);
  pb_agg_init(&S->a, (int64_t)(S->ns + 1) * 4 + S->nl);
  for (int64_t c = 0; c < n_local; c++) {
    const double *r = recs + c * rl;
    if (r[PB_PC_SCOPE] == 1) pb_prep__add(S, pb_dist_cell_at(meta, first + c).source, r);
  }
  int status = pb_agg_reduce(&S->a, comm, 0);
  if (rank == 0) {
    MPI_Reduce(MPI_IN_PLACE, S->k, (int)nk, MPI_INT64_T, MPI_SUM, 0, comm);
    MPI_Reduce(MPI_IN_PLACE, &S->lemma1, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  } else {
    MPI_Reduce(S->k, NULL, (int)nk, MPI_INT64_T, MPI_SUM, 0, comm);
    MPI_Reduce(&S->lemma1, NULL, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  }
  return status;
}

static void pb_prep__sum_free(struct pb_prep__sum *S)
{
  free(S->k);
  pb_agg_free(&S->a);
}

/* Table 12 (+ the directed counts behind it) at the primary weight. */
static void pb_prep__orderings(const struct pb_meta *meta, const struct pb_prep__sum *S, struct pb_table *t)
{
  pb_table_begin(t, "Additional strict policy comparisons (seed Table 12 / Table 4)",
                  "Cells with at least one mixed-outcome ordering: `shared` = D+ < -1e-12 missed by the separate "
                  "I5 intervals; `plus_k`, `plus_5` = strict at the richer level but not at the poorer one "
                  "(I0 -> Ik, Ik -> I5). `directed_*` count ordered pairs.",
                  "source\tcells\tshared\tplus_k\tplus_5\tdirected_shared\tdirected_plus_k\tdirected_plus_5", NULL);
  for (int32_t s = 0; s <= meta->n_sources; s++) {
    if (s < meta->n_sources && meta->sources[s].probe_role) continue; /* a probe source has no cells */
    const int64_t *v = pb_prep__src(S, s) + PB_PS__ORD;
    pb_table_str(t, s < meta->n_sources ? meta->sources[s].name : "Total", 1);
    for (int i = 0; i < 7; i++) pb_table_int(t, v[i]);
    pb_table_end_row(t);
  }
}

/* Post hoc merge of identical acceptance vectors (Appendix D). */
static void pb_prep__actions(const struct pb_meta *meta, const struct pb_prep__sum *S, struct pb_table *t)
{
  pb_table_begin(t, "Cells left with one distinct action",
                  "After removing policies strictly worse than another throughout the feasible set, thresholds "
                  "with identical evaluation acceptance vectors are merged (post hoc diagnostic).",
                  "source\tcells\tone_action_I0\tone_action_Ik\tone_action_I5", NULL);
  for (int32_t s = 0; s <= meta->n_sources; s++) {
    if (s < meta->n_sources && meta->sources[s].probe_role) continue; /* a probe source has no cells */
    const int64_t *v = pb_prep__src(S, s);
    pb_table_str(t, s < meta->n_sources ? meta->sources[s].name : "Total", 1);
    pb_table_int(t, v[PB_PS__ORD]);
    for (int i = 0; i < 3; i++) pb_table_int(t, v[PB_PS__ACT + i]);
    pb_table_end_row(t);
  }
}

/* Table 13 at the primary weight, I5, with the two controls. */
static void pb_prep__selection(const struct pb_meta *meta, const struct pb_prep__sum *S, struct pb_table *t)
{
  pb_table_begin(t, "Realized regret of the selection rules (seed Table 13)",
                  "I5; mean realized regret in percentage points (cells equally weighted within source); "
                  "Better/Worse/Tied: minimax lower/higher/equal realized cost than the feasible-permutation mean rule. "
                  "Controls: the fixed 80% policy and the marginal proxy.",
                  "source\tcells\tfeasible_mean\tminimax\tbetter\tworse\ttied\tfixed80\tproxy", NULL);
  for (int32_t s = 0; s <= meta->n_sources; s++) {
    if (s < meta->n_sources && meta->sources[s].probe_role) continue; /* a probe source has no cells */
    const int64_t *v = pb_prep__src(S, s);
    pb_table_str(t, s < meta->n_sources ? meta->sources[s].name : "Total", 1);
    pb_table_int(t, v[PB_PS__ORD]);
    pb_table_num(t, pb_agg_mean(&S->a, (int64_t)s * 4 + 0), 6);
    pb_table_num(t, pb_agg_mean(&S->a, (int64_t)s * 4 + 1), 6);
    for (int i = 0; i < 3; i++) pb_table_int(t, v[PB_PS__BWT + i]);
    pb_table_num(t, pb_agg_mean(&S->a, (int64_t)s * 4 + 2), 6);
    pb_table_num(t, pb_agg_mean(&S->a, (int64_t)s * 4 + 3), 6);
    pb_table_end_row(t);
  }
}

/* Table 14: the weight grid at I5 over all cells in scope. */
static void pb_prep__weights(const struct pb_policy_options *opt, const struct pb_prep__sum *S, struct pb_table *t)
{
  pb_table_begin(t, "Selection over the weight grid (seed Table 14)",
                  "I5; delta = feasible-mean regret minus minimax regret in percentage points, averaged equally over "
                  "cells (negative favours the mean rule).",
                  "lambda\tcells\tdelta_pp\tbetter\tworse\ttied", NULL);
  for (int32_t li = 0; li < opt->n_lambdas; li++) {
    const int64_t *w = pb_prep__lamk(S, li);
    char lam[40];
    pb_text_format_double(opt->lambdas[li], lam);
    pb_table_str(t, lam, 1);
    pb_table_int(t, w[PB_PS__W_N]);
    pb_table_num(t, pb_agg_mean(&S->a, (int64_t)(S->ns + 1) * 4 + li), 6);
    for (int i = 0; i < 3; i++) pb_table_int(t, w[PB_PS__W_BWT + i]);
    pb_table_end_row(t);
  }
}

/* Figure 5 data: per source and weight, the fraction of cells with an additional certified ordering. */
static void pb_prep__figure5(const struct pb_meta *meta, const struct pb_policy_options *opt,
                             const struct pb_prep__sum *S, struct pb_table *t)
{
  pb_table_begin(t, "Sensitivity to the cost weight (seed Figure 5 data)",
                  "Fraction of cells with an additional certified mixed-outcome ordering: shared correspondence vs "
                  "separate I5 intervals, and the information increments I0 -> Ik and Ik -> I5.",
                  "source\tlambda\tcells\tshared\tplus_k\tplus_5", NULL);
  for (int32_t s = 0; s < meta->n_sources; s++)
    if (!meta->sources[s].probe_role) /* a probe source has no cells */
    for (int32_t li = 0; li < opt->n_lambdas; li++) {
      const int64_t *v = pb_prep__fig5(S, s, li);
      char lam[40];
      pb_text_format_double(opt->lambdas[li], lam);
      pb_table_str(t, meta->sources[s].name, 1);
      pb_table_str(t, lam, 0);
      pb_table_int(t, v[0]);
      for (int i = 1; i < 4; i++) pb_table_num(t, v[0] ? (double)v[i] / v[0] : NAN, 4);
      pb_table_end_row(t);
    }
}

/* Figure 5 as a plot: one line per source and comparison across the weight grid
 * (colour = source, dash = comparison), sources without cells in scope left out. */
static int pb_prep__figure5_plot(const struct pb_meta *meta, const struct pb_policy_options *opt,
                                 const struct pb_prep__sum *S, struct pb_results *res, struct pb_text *md)
{
  static const char *const cmp[3] = {"shared vs separate", "I0 -> Ik", "Ik -> I5"};
  struct pb_text d = {0};
  int32_t n_cols = 0;
  pb_text_printf(&d, "lambda");
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const int64_t *v = pb_prep__fig5(S, s, 0);
    for (int i = 0; i < 3 && v[0] > 0; i++, n_cols++) pb_text_printf(&d, "\t%s: %s", meta->sources[s].name, cmp[i]);
  }
  pb_text_printf(&d, "\n");
  for (int32_t li = 0; li < opt->n_lambdas; li++) {
    char lam[40];
    pb_text_format_double(opt->lambdas[li], lam);
    pb_text_printf(&d, "%s", lam);
    for (int32_t s = 0; s < meta->n_sources; s++) {
      const int64_t *v = pb_prep__fig5(S, s, li);
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
static void pb_prep__checks(const struct pb_prep__sum *S, struct pb_table *t)
{
  pb_table_begin(t, "Numerical checks",
                  "Lemma 1: largest |Eq. 8 - direct maximisation| in percentage points over all levels, weights and "
                  "policies. Corollary 1: natural-cost interval ends and D'+ that differ between Ik and I5 (must be 0). "
                  "Unrepresentable means: I5 classes whose exact bijection counts exceed 128 bits (feasible mean NaN).",
                  "cells\tlemma1_max_residual_pp\tcorollary1_violations\tunrepresentable_mean_classes", NULL);
  const int64_t *chk = pb_prep__chk(S);
  pb_text_printf(&t->tsv, "%lld", (long long)chk[0]);
  pb_text_printf(&t->md, "| %lld", (long long)chk[0]);
  pb_table_num(t, S->lemma1, 17);
  pb_table_int(t, chk[1]);
  pb_table_int(t, chk[2]);
  pb_table_end_row(t);
}

/* D.1: among real cells in scope with K > 0 and a mixed certified pair at the
 * primary weight, the cell nearest the median marginal H width of all real
 * cells in scope (NaN widths left out); ties go to the earlier cell (source,
 * model, condition order).  Collective: the median by selection over the
 * ranks, the cell by a located minimum; returns it (-1: none) on every rank. */
static int64_t pb_prep__pick(const struct pb_meta *meta, const double *recs, int64_t first, int64_t n_local, int32_t rl,
                             MPI_Comm comm, double *med_out)
{
  double *w = pb_malloc((size_t)(n_local > 0 ? n_local : 1) * sizeof *w);
  uint8_t *real = pb_malloc((size_t)(n_local > 0 ? n_local : 1));
  int64_t nl = 0;
  for (int64_t c = 0; c < n_local; c++) {
    const double *r = recs + c * rl;
    real[c] = r[PB_PC_SCOPE] == 1 && pb_prep__real(meta->sources[pb_dist_cell_at(meta, first + c).source].name);
    if (real[c]) w[nl++] = r[PB_PC_HW_I0];
  }
  const int64_t nw = pb_agg_select_count(w, nl, comm), k[2] = {(nw - 1) / 2, nw / 2};
  double x[2] = {NAN, NAN};
  if (nw > 0) pb_agg_select_kth(w, nl, k, 2, comm, x);
  const double med = nw == 0 ? NAN : nw % 2 ? x[1] : (x[0] + x[1]) / 2;
  free(w);
  struct pb_loc best;
  pb_agg_loc_init(&best, 1, INFINITY);
  for (int64_t c = 0; c < n_local && nw > 0; c++) {
    const double *r = recs + c * rl;
    if (real[c] && r[PB_PC_K] > 0 && !isnan(r[PB_PC_D1])) pb_agg_loc_min(&best, fabs(r[PB_PC_HW_I0] - med), first + c, 0);
  }
  free(real);
  pb_agg_loc_reduce(&best, 1, 0, comm, -1);
  *med_out = med;
  return best.cell;
}

/* D.1's table and text from the picked cell's record @p r (rank 0). */
static void pb_prep__illustration(const struct pb_meta *meta, int64_t best, const double *r, double med,
                                  struct pb_table *t)
{
  pb_text_printf(&t->md, "\n### Real-record illustration (seed D.1 / Table 15)\n\n");
  if (best < 0) {
    pb_text_printf(&t->md, "No real cell in scope has positive retained-correct support and a mixed certified "
                           "pair at the primary weight.\n");
    pb_text_printf(&t->tsv, "target\tI0_lo\tI0_hi\tIk_lo\tIk_hi\tI5_lo\tI5_hi\tobserved\n");
    return;
  }
  const struct pb_cell_ref cell = pb_dist_cell_at(meta, best);
  const struct pb_source *src = &meta->sources[cell.source];
  pb_text_printf(&t->md, "Cell: model %s, source %s, condition %s (clean threshold %.6g; median marginal H width of "
                         "the real cells %.4f pp, this cell %.4f pp). H, L in percentage points, dMk in probability "
                         "points.\n\n| target | I0 | Ik | I5 | observed |\n|---|---|---|---|---|\n",
                 meta->model_ids[cell.model], src->name, src->conditions[cell.condition], r[PB_PC_TAU0], med * PP,
                 r[PB_PC_HW_I0] * PP);
  pb_text_printf(&t->tsv, "# model %s\tsource %s\tcondition %s\n", meta->model_ids[cell.model], src->name,
                 src->conditions[cell.condition]);
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
}

int pb_policy_report(const struct pb_meta *meta, const double *recs, int64_t first, int64_t n_local, int32_t rec_len,
                     const struct pb_policy_options *opt, int32_t primary, struct pb_results *res, MPI_Comm comm)
{
  int rank;
  MPI_Comm_rank(comm, &rank);
  struct pb_prep__sum S;
  int status = pb_prep__summarise(meta, recs, first, n_local, rec_len, opt, primary, comm, &S);
  double med;
  const int64_t best = pb_prep__pick(meta, recs, first, n_local, rec_len, comm, &med);
  double *rec = pb_malloc((size_t)rec_len * sizeof *rec);
  if (best >= 0) status |= pb_agg_fetch(comm, first, n_local, best, recs, rec_len, NULL, 0, rec, 0);
  if (rank != 0 || status != PB_OK) {
    free(rec);
    pb_prep__sum_free(&S);
    return status ? PB_FAIL : PB_OK;
  }
  struct pb_text md = {0};
  struct pb_table t = {{0}, {0}};
  char lam[40];
  pb_text_format_double(opt->lambdas[primary], lam);
  pb_text_printf(&md, "# pairbound policy report\n\nRejection-policy comparisons under a shared correspondence "
                      "(seed 000 Section 4.2, Appendix D) on the %s; primary weight lambda = %s. Per-policy bounds: "
                      "report/policy_bounds.tsv; pairwise certificates: report/policy_pairs.tsv.\n",
                 opt->all ? "full grid" : "frozen panel", lam);
  pb_prep__orderings(meta, &S, &t);
  status |= pb_table_flush(&t, res, "policy_orderings.tsv", &md);
  pb_prep__actions(meta, &S, &t);
  status |= pb_table_flush(&t, res, "policy_actions.tsv", &md);
  pb_prep__selection(meta, &S, &t);
  status |= pb_table_flush(&t, res, "policy_selection.tsv", &md);
  pb_prep__weights(opt, &S, &t);
  status |= pb_table_flush(&t, res, "policy_weights.tsv", &md);
  pb_prep__figure5(meta, opt, &S, &t);
  status |= pb_table_flush(&t, res, "policy_figure5.tsv", &md);
  if (status == PB_OK) status = pb_prep__figure5_plot(meta, opt, &S, res, &md);
  pb_prep__checks(&S, &t);
  status |= pb_table_flush(&t, res, "policy_checks.tsv", &md);
  pb_prep__illustration(meta, best, rec, med, &t);
  status |= pb_table_flush(&t, res, "policy_illustration.tsv", &md);
  if (status == PB_OK) status = pb_results_write_report(res, "policy.md", md.buf, md.len);
  pb_text_free(&md);
  free(rec);
  pb_prep__sum_free(&S);
  return status ? PB_FAIL : PB_OK;
}
