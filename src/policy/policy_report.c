/* Report tables of the policy stage, laid out like seed 000 Tables 4, 12-15
 * and Figure 5: report/policy_*.tsv and report/policy.md (its own markdown
 * file, so that running `bounds` and `policy` into one OUTDIR keeps both).
 * Cells are weighted equally within a source; rank 0 prints the totals of
 * every rank's cells (policy_stage_reduce.c); regrets are printed in
 * percentage points. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/figure.h"
#include "pairbound/text.h"
#include "policy_internal.h"

#define PP 100.0

/* A row of the tables: its labels, its counts and its first regret slot;
 * a column's .arg says what it shows, its .slot which label, count or
 * regret after the first. */
struct pb_prep__row {
  const struct pb_policy_sum *S;
  const char *key[2];
  const int64_t *k;
  int64_t a;
};
enum {
  PB_PREP__KEY,      /* key[slot] */
  PB_PREP__COUNT,    /* k[slot] */
  PB_PREP__SHARE,    /* k[slot] / k[0] */
  PB_PREP__REGRET,   /* mean regret in slot a + slot */
  PB_PREP__LEMMA1    /* the largest Lemma 1 residual */
};

static union pb_cell pb_prep__cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_prep__row *r = ctx;
  switch (c->arg) {
  case PB_PREP__KEY: return (union pb_cell){.s = r->key[c->slot]};
  case PB_PREP__COUNT: return (union pb_cell){.i = r->k[c->slot]};
  case PB_PREP__SHARE: return (union pb_cell){.x = r->k[0] ? (double)r->k[c->slot] / r->k[0] : NAN};
  case PB_PREP__REGRET: return (union pb_cell){.x = pb_agg_mean(&r->S->a, r->a + c->slot)};
  case PB_PREP__LEMMA1: return (union pb_cell){.x = r->S->lemma1};
  }
  return (union pb_cell){.s = ""};
}
/* Its columns: key[k]; count k[i], its share k[i] / k[0], mean regret i; Table 13's comparison of the minimax
 * rule with the feasible-permutation mean rule (counts from i). */
#define PB_PREP__COL_KEY(name, k) {name, PB_COL_STR, .slot = k, .arg = PB_PREP__KEY}
#define PB_PREP__COL_COUNT(name, i) {name, PB_COL_INT, .slot = i, .arg = PB_PREP__COUNT}
#define PB_PREP__COL_SHARE(name, i) {name, PB_COL_NUM, 4, .slot = i, .arg = PB_PREP__SHARE}
#define PB_PREP__COL_REGRET(name, i) {name, PB_COL_NUM, 6, .slot = i, .arg = PB_PREP__REGRET}
#define PB_PREP__COLS_BWT(i) \
  PB_PREP__COL_COUNT("better", (i) + 0), PB_PREP__COL_COUNT("worse", (i) + 1), PB_PREP__COL_COUNT("tied", (i) + 2)

/* One row per source with cells (a probe source has none), then the Total. */
static void pb_prep__by_source(const struct pb_meta *meta, const struct pb_policy_sum *S, struct pb_table *t,
                               const struct pb_table_spec *spec)
{
  pb_table_open(t, spec);
  for (int32_t s = 0; s <= meta->n_sources; s++) {
    if (s < meta->n_sources && pb_meta_is_probe(&meta->sources[s])) continue;
    const struct pb_prep__row row = {S, {s < meta->n_sources ? meta->sources[s].name : "Total"},
                                     pb_policy_sum_src(S, s), (int64_t)s * 4};
    pb_table_row(t, spec, pb_prep__cell, &row);
  }
}

/* The tables with a row per source, at the primary weight: Table 12 (and the
 * directed counts behind it), Appendix D's post hoc merge of identical
 * acceptance vectors, Table 13 (I5, with the two controls). */
static int pb_prep__source_tables(const struct pb_meta *meta, const struct pb_policy_sum *S, struct pb_table *t,
                                  struct pb_results *res, struct pb_text *md)
{
  static const struct pb_column orderings[] = {
    PB_PREP__COL_KEY("source", 0), PB_PREP__COL_COUNT("cells", PB_PS_ORD + 0),
    PB_PREP__COL_COUNT("shared", PB_PS_ORD + 1), PB_PREP__COL_COUNT("plus_k", PB_PS_ORD + 2),
    PB_PREP__COL_COUNT("plus_5", PB_PS_ORD + 3), PB_PREP__COL_COUNT("directed_shared", PB_PS_ORD + 4),
    PB_PREP__COL_COUNT("directed_plus_k", PB_PS_ORD + 5), PB_PREP__COL_COUNT("directed_plus_5", PB_PS_ORD + 6),
    {NULL}};
  static const struct pb_column actions[] = {
    PB_PREP__COL_KEY("source", 0), PB_PREP__COL_COUNT("cells", PB_PS_ORD),
    PB_PREP__COL_COUNT("one_action_I0", PB_PS_ACT + 0), PB_PREP__COL_COUNT("one_action_Ik", PB_PS_ACT + 1),
    PB_PREP__COL_COUNT("one_action_I5", PB_PS_ACT + 2), {NULL}};
  static const struct pb_column selection[] = {
    PB_PREP__COL_KEY("source", 0), PB_PREP__COL_COUNT("cells", PB_PS_ORD),
    PB_PREP__COL_REGRET("feasible_mean", 0), PB_PREP__COL_REGRET("minimax", 1), PB_PREP__COLS_BWT(PB_PS_BWT),
    PB_PREP__COL_REGRET("fixed80", 2), PB_PREP__COL_REGRET("proxy", 3), {NULL}};
  static const struct pb_table_spec spec[3] = {
    {"Additional strict policy comparisons (seed Table 12 / Table 4)",
     "Cells with at least one mixed-outcome ordering: `shared` = D+ < -1e-12 missed by the separate I5 intervals; "
     "`plus_k`, `plus_5` = strict at the richer level but not at the poorer one (I0 -> Ik, Ik -> I5). `directed_*` "
     "count ordered pairs.",
     orderings},
    {"Cells left with one distinct action",
     "After removing policies strictly worse than another throughout the feasible set, thresholds with identical "
     "evaluation acceptance vectors are merged (post hoc diagnostic).",
     actions},
    {"Realized regret of the selection rules (seed Table 13)",
     "I5; mean realized regret in percentage points (cells equally weighted within source); Better/Worse/Tied: "
     "minimax lower/higher/equal realized cost than the feasible-permutation mean rule. Controls: the fixed 80% "
     "policy and the marginal proxy.",
     selection}};
  static const char *const file[3] = {"policy_orderings.tsv", "policy_actions.tsv", "policy_selection.tsv"};
  int status = PB_OK;
  for (int i = 0; i < 3; i++) {
    pb_prep__by_source(meta, S, t, &spec[i]);
    status |= pb_table_flush(t, res, file[i], md);
  }
  return status;
}

/* Table 14: the weight grid at I5 over all cells in scope. */
static void pb_prep__weights(const struct pb_policy_options *opt, const struct pb_policy_sum *S, struct pb_table *t)
{
  static const struct pb_column cols[] = {
    PB_PREP__COL_KEY("lambda", 0), PB_PREP__COL_COUNT("cells", PB_PS_W_N), PB_PREP__COL_REGRET("delta_pp", 0),
    PB_PREP__COLS_BWT(PB_PS_W_BWT), {NULL}};
  static const struct pb_table_spec spec = {
    "Selection over the weight grid (seed Table 14)",
    "I5; delta = feasible-mean regret minus minimax regret in percentage points, averaged equally over cells "
    "(negative favours the mean rule).",
    cols};
  pb_table_open(t, &spec);
  for (int32_t li = 0; li < opt->n_lambdas; li++) {
    char lam[40];
    pb_text_format_double(opt->lambdas[li], lam);
    const struct pb_prep__row row = {S, {lam}, pb_policy_sum_lam(S, li), (int64_t)(S->ns + 1) * 4 + li};
    pb_table_row(t, &spec, pb_prep__cell, &row);
  }
}

/* Figure 5 data: per source and weight, the fraction of cells with an additional certified ordering. */
static void pb_prep__figure5(const struct pb_meta *meta, const struct pb_policy_options *opt,
                             const struct pb_policy_sum *S, struct pb_table *t)
{
  static const struct pb_column cols[] = {
    PB_PREP__COL_KEY("source", 0), PB_PREP__COL_KEY("lambda", 1), PB_PREP__COL_COUNT("cells", 0),
    PB_PREP__COL_SHARE("shared", 1), PB_PREP__COL_SHARE("plus_k", 2), PB_PREP__COL_SHARE("plus_5", 3), {NULL}};
  static const struct pb_table_spec spec = {
    "Sensitivity to the cost weight (seed Figure 5 data)",
    "Fraction of cells with an additional certified mixed-outcome ordering: shared correspondence vs separate I5 "
    "intervals, and the information increments I0 -> Ik and Ik -> I5.",
    cols};
  pb_table_open(t, &spec);
  for (int32_t s = 0; s < meta->n_sources; s++)
    if (!pb_meta_is_probe(&meta->sources[s])) /* a probe source has no cells */
    for (int32_t li = 0; li < opt->n_lambdas; li++) {
      char lam[40];
      pb_text_format_double(opt->lambdas[li], lam);
      const struct pb_prep__row row = {S, {meta->sources[s].name, lam}, pb_policy_sum_fig5(S, s, li), 0};
      pb_table_row(t, &spec, pb_prep__cell, &row);
    }
}

/* Figure 5's plot data at one weight: a column per source (.slot) and
 * comparison (.arg, 1-3) whose source has cells in scope. */
struct pb_prep__fig5_row {
  const struct pb_policy_sum *S;
  int32_t li;
  const char *lambda;
};

static union pb_cell pb_prep__fig5_cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_prep__fig5_row *r = ctx;
  if (c->slot < 0) return (union pb_cell){.s = r->lambda};
  const int64_t *v = pb_policy_sum_fig5(r->S, c->slot, r->li);
  return (union pb_cell){.x = (double)v[c->arg] / v[0]};
}

/* Figure 5 as a plot: one line per source and comparison across the weight grid
 * (colour = source, dash = comparison), sources without cells in scope left out. */
static int pb_prep__figure5_plot(const struct pb_meta *meta, const struct pb_policy_options *opt,
                                 const struct pb_policy_sum *S, struct pb_results *res, struct pb_text *md)
{
  static const char *const cmp[3] = {"shared vs separate", "I0 -> Ik", "Ik -> I5"};
  struct pb_column *cols = pb_table_cols_new(1 + 3 * meta->n_sources);
  int32_t n_cols = 0;
  pb_table_col_name(&cols[0], "lambda");
  cols[0].slot = -1;
  for (int32_t s = 0; s < meta->n_sources; s++)
    for (int i = 0; i < 3 && pb_policy_sum_fig5(S, s, 0)[0] > 0; i++, n_cols++) {
      struct pb_column *c = &cols[1 + n_cols];
      pb_table_col_name(c, "%s: %s", meta->sources[s].name, cmp[i]);
      c->fmt = PB_COL_NUM, c->slot = s, c->arg = 1 + i;
    }
  const struct pb_table_spec spec = {NULL, NULL, cols};
  struct pb_text d = {0};
  pb_table_tsv_open(&d, &spec);
  for (int32_t li = 0; li < opt->n_lambdas; li++) {
    char lam[40];
    pb_text_format_double(opt->lambdas[li], lam);
    const struct pb_prep__fig5_row row = {S, li, lam};
    pb_table_tsv_row(&d, &spec, pb_prep__fig5_cell, &row);
  }
  pb_table_cols_free(cols);
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
static void pb_prep__checks(const struct pb_policy_sum *S, struct pb_table *t)
{
  static const struct pb_column cols[] = {
    PB_PREP__COL_COUNT("cells", 0), {"lemma1_max_residual_pp", PB_COL_NUM, 17, .arg = PB_PREP__LEMMA1},
    PB_PREP__COL_COUNT("corollary1_violations", 1), PB_PREP__COL_COUNT("unrepresentable_mean_classes", 2), {NULL}};
  static const struct pb_table_spec spec = {
    "Numerical checks",
    "Lemma 1: largest |Eq. 8 - direct maximisation| in percentage points over all levels, weights and policies. "
    "Corollary 1: natural-cost interval ends and D'+ that differ between Ik and I5 (must be 0). Unrepresentable "
    "means: I5 classes whose exact bijection counts exceed 128 bits (feasible mean NaN).",
    cols};
  const struct pb_prep__row row = {S, {NULL}, pb_policy_sum_checks(S), 0};
  pb_table_open(t, &spec);
  pb_table_row(t, &spec, pb_prep__cell, &row);
}

/* D.1's rows: a target's intervals at I0, Ik and I5 and its observed value
 * (.slot: the value), which the markdown shows as "[lo, hi]" in points
 * (.arg = 1); or the pair's values. */
struct pb_prep__d1_row {
  const char *name;
  const double *v;
  char *buf;
};

static union pb_cell pb_prep__d1_cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_prep__d1_row *r = ctx;
  if (c->slot < 0) return (union pb_cell){.s = r->name};
  if (c->fmt == PB_COL_NUM) return (union pb_cell){.x = r->v[c->slot]};
  if (c->arg) snprintf(r->buf, 64, "[%.1f, %.1f]", r->v[c->slot] * PP, r->v[c->slot + 1] * PP);
  else snprintf(r->buf, 64, "%.1f", r->v[c->slot] * PP);
  return (union pb_cell){.s = r->buf};
}

#define PB_PREP__D1_LEVEL(lv, i)                                                                             \
  {lv "_lo", PB_COL_NUM, .slot = i, .side = PB_COL_TSV_ONLY}, {lv "_hi", PB_COL_NUM, .slot = i + 1, .side = PB_COL_TSV_ONLY}, \
    {lv, PB_COL_STR, .slot = i, .arg = 1, .side = PB_COL_MD_ONLY}

/* D.1's table and text from the picked cell's record (Table 15 in the
 * markdown, the TSV with every digit and the pair behind the text). */
static void pb_prep__illustration(const struct pb_meta *meta, const struct pb_policy_sum *S, struct pb_table *t)
{
  static const struct pb_column cols[] = {
    {"target", PB_COL_STR, .slot = -1}, PB_PREP__D1_LEVEL("I0", 0), PB_PREP__D1_LEVEL("Ik", 2),
    PB_PREP__D1_LEVEL("I5", 4), {"observed", PB_COL_NUM, .slot = 6, .side = PB_COL_TSV_ONLY},
    {"observed", PB_COL_STR, .slot = 6, .side = PB_COL_MD_ONLY}, {NULL}};
  static const char *const pair_names[] = {"j", "l", "tau_j", "tau_l", "q_j", "q_l", "Jj_lo", "Jj_hi",
                                           "Jl_lo", "Jl_hi", "separate_gap", "Dplus_I5", "Dplus_I0"};
  static const char title[] = "Real-record illustration (seed D.1 / Table 15)";
  const double *r = S->rec;
  if (S->best < 0) {
    const struct pb_table_spec spec = {title, NULL, cols};
    pb_text_printf(&t->md, "\n### %s\n\nNo real cell in scope has positive retained-correct support and a mixed "
                           "certified pair at the primary weight.\n", title);
    pb_table_tsv_open(&t->tsv, &spec);
    return;
  }
  const struct pb_cell_ref cell = pb_dist_cell_at(meta, S->best);
  const struct pb_source *src = &meta->sources[cell.source];
  struct pb_text note = {0};
  char buf[64];
  pb_text_printf(&note, "Cell: model %s, source %s, condition %s (clean threshold %.6g; median marginal H width of "
                        "the real cells %.4f pp, this cell %.4f pp). H, L in percentage points, dMk in probability "
                        "points.",
                 meta->model_ids[cell.model], src->name, src->conditions[cell.condition], r[PB_PC_TAU0], S->med * PP,
                 r[PB_PC_HW_I0] * PP);
  const struct pb_table_spec spec = {title, note.buf, cols};
  pb_text_printf(&t->tsv, "# model %s\tsource %s\tcondition %s\n", meta->model_ids[cell.model], src->name,
                 src->conditions[cell.condition]);
  pb_table_open(t, &spec);
  static const char *const names[3] = {"H", "L", "dMk"};
  for (int q = 0; q < 3; q++) {
    const struct pb_prep__d1_row row = {names[q], r + PB_PC_T15 + 7 * q, buf};
    pb_table_row(t, &spec, pb_prep__d1_cell, &row);
  }
  pb_text_free(&note);
  struct pb_column pair[1 + 13 + 1] = {{"pair", PB_COL_STR, .slot = -1}};
  for (int i = 0; i < 13; i++) pair[1 + i] = (struct pb_column){pair_names[i], PB_COL_NUM, .slot = i};
  const struct pb_table_spec pair_spec = {NULL, NULL, pair};
  const double *d = r + PB_PC_D1;
  const struct pb_prep__d1_row pair_row = {"pair", d, buf};
  pb_table_tsv_open(&t->tsv, &pair_spec);
  pb_table_tsv_row(&t->tsv, &pair_spec, pb_prep__d1_cell, &pair_row);
  pb_text_printf(&t->md, "\nFirst mixed certified pair in index order (I5, primary weight): policy %d (nominal "
                         "coverage %.2f, threshold %.6g) against policy %d (%.2f, %.6g). J intervals [%.1f, %.1f] and "
                         "[%.1f, %.1f] points; separate endpoints give an upper difference of %+.2f, one common "
                         "correspondence gives %+.2f (at I0: %+.2f).\n",
                 (int)d[0], d[4], d[2], (int)d[1], d[5], d[3], d[6] * PP, d[7] * PP, d[8] * PP, d[9] * PP,
                 d[10] * PP, d[11] * PP, d[12] * PP);
}

int pb_policy_report(const struct pb_meta *meta, const struct pb_policy_options *opt, const struct pb_policy_sum *S,
                     struct pb_results *res)
{
  struct pb_text md = {0};
  struct pb_table t = {{0}, {0}};
  char lam[40];
  int status = PB_OK;
  pb_text_format_double(opt->lambdas[S->li], lam);
  pb_text_printf(&md, "# pairbound policy report\n\nRejection-policy comparisons under a shared correspondence "
                      "(seed 000 Section 4.2, Appendix D) on the %s; primary weight lambda = %s. Per-policy bounds: "
                      "report/policy_bounds.tsv; pairwise certificates: report/policy_pairs.tsv.\n",
                 opt->all ? "full grid" : "frozen panel", lam);
  status |= pb_prep__source_tables(meta, S, &t, res, &md);
  pb_prep__weights(opt, S, &t);
  status |= pb_table_flush(&t, res, "policy_weights.tsv", &md);
  pb_prep__figure5(meta, opt, S, &t);
  status |= pb_table_flush(&t, res, "policy_figure5.tsv", &md);
  if (status == PB_OK) status = pb_prep__figure5_plot(meta, opt, S, res, &md);
  pb_prep__checks(S, &t);
  status |= pb_table_flush(&t, res, "policy_checks.tsv", &md);
  pb_prep__illustration(meta, S, &t);
  status |= pb_table_flush(&t, res, "policy_illustration.tsv", &md);
  if (status == PB_OK) status = pb_results_write_report(res, "policy.md", md.buf, md.len);
  pb_text_free(&md);
  return status ? PB_FAIL : PB_OK;
}
