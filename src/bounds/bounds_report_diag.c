/* More diagnostics of the identification stage: Table 2's targets beside
 * their class-conditional independent counterparts (Section 3.1, H.2), the
 * B.2 strata and positive-width counts, the B.4 support subsets, J.2's
 * cross-model support, F.1's protocols and calibrators and F's probability gap.  Cells are weighted equally
 * within a source; rank 0 prints the totals of every rank's cells
 * (bounds_stage_reduce.c). */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "pairbound/error.h"
#include "bounds_stage_internal.h"

#define PP 100.0

/* Rows per source and part j < @p n of it: the label names[j], the first
 * slot @p base0 + @p step j. */
static void pb_more__rows(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_table *t,
                          const struct pb_table_spec *spec, pb_table_get_fn get, const char *const *names, int n,
                          int base0, int step)
{
  pb_table_open(t, spec);
  PB_BOUNDS_SOURCES(meta, s)
  for (int j = 0; j < n; j++) {
    const struct pb_bounds_row row = {S, s, base0 + step * j, {meta->sources[s].name, names[j]}};
    pb_table_row(t, spec, get, &row);
  }
}

/* Table 2's columns, with 2 decimals (percentage points) or 4 (Q, a correlation). */
#define PB_MORE__T2_COLS(d)                                                                                \
  {PB_ICOL_KEY("source", 0), PB_ICOL_KEY("summary", 1), PB_ICOL_COUNT("cells", 0), PB_ICOL_MEAN("paired", d, 0), \
   PB_ICOL_MEAN("independent", d, 1), PB_ICOL_MEAN("paired_minus_independent", -(d), 2), {NULL}}

/* Table 2: paired summaries beside their independent counterparts. */
static void pb_more__table2(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_table *t)
{
  static const struct pb_column pp[] = PB_MORE__T2_COLS(2), corr[] = PB_MORE__T2_COLS(4);
  static const char note[] =
    "Per cell in bounds.tsv. Means over cells where the paired value (and, when it has one, the class-conditional "
    "independent counterpart) is defined; percentage points except Q (correlation). ds_s, ds_w: E[S - S' | T = s / "
    "w]; k: retained-correct share. E needs perturbed records only and has no counterpart. Independent: every clean "
    "record with every perturbed record of its class, weight 1/n_y; conditional means are ratios of expected "
    "numerator and denominator (Eq. 14).";
  static const char title[] = "Reliability targets and paired summaries with their independent counterparts (seed "
                              "Table 2, Section 3.1, Appendix H.2)";
  static const struct pb_table_spec spec_pp = {title, note, pp}, spec_corr = {title, note, corr};
  pb_table_open(t, &spec_pp);
  PB_BOUNDS_SOURCES(meta, s)
  for (int j = 0; j < PB_BOUNDS_N_T2; j++) {
    const struct pb_bounds_row row = {S, s, PB_RS_T2 + 3 * j, {meta->sources[s].name, pb_bounds_t2[j].name}};
    pb_table_row(t, pb_bounds_t2[j].scale == 1.0 ? &spec_corr : &spec_pp, pb_bounds_row_cell, &row);
  }
}

/* Appendix B.2 strata: mean I5 widths on the panel by stratum. */
static void pb_more__strata(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_table *t)
{
  static const char *const bins[2][3] = {{"[0,.1)", "[.1,.5)", "[.5,1]"}, {"[0,.1)", "[.1,.3)", "[.3,1]"}};
  static const struct pb_column cols[] = {
    PB_ICOL_KEY("source", 0), PB_ICOL_KEY("stratifier", 1), PB_ICOL_KEY("stratum", 2), PB_ICOL_INT("cells", 0),
    PB_ICOL_MEAN("H_I5", 2, 1), PB_ICOL_MEAN("L_I5", 2, 2), PB_ICOL_MEAN("dMk_I5", 2, 3),
    PB_ICOL_COUNT("dMk_cells", 3), PB_ICOL_MEAN("H_norm", 4, 4), {NULL}};
  static const struct pb_table_spec spec = {
    "Panel I5 widths by support stratum (Appendix B.2)",
    "Panel cells with the I5 pass; percentage points of N; H_norm divides the H width by the maximum feasible H "
    "mass (cells where it is positive). Mean widths of empty strata are undefined; dMk means exclude K = 0 cells. "
    "Strata by K/N and by the one-sided event fractions that H and L intersect: U = P(C=1, Z=1) (left event of "
    "both), E = P(C'=0, Z'=1) (right event of H), V = P(C'=1, Z'=0) (right event of L).",
    cols};
  pb_table_open(t, &spec);
  PB_BOUNDS_SOURCES(meta, s)
  for (int j = 0; j < PB_BOUNDS_N_STRATA; j++)
    for (int b = 0; b < 3; b++) {
      const struct pb_bounds_row row = {S, s, PB_RS_STRATA + 5 * (3 * j + b),
                                          {meta->sources[s].name, pb_bounds_strata[j].name, bins[j != 0][b]}};
      pb_table_row(t, &spec, pb_bounds_row_cell, &row);
    }
}

/* Appendix B.2: cells (and matched cell-seeds) with a positive I5 width. */
static void pb_more__positive(const struct pb_meta *meta, const struct pb_bounds_sum *S, int matched,
                              struct pb_table *t)
{
  static const char *const support[2] = {"original", "matched (cell-seeds)"};
  static const struct pb_column cols[] = {
    PB_ICOL_KEY("source", 0), PB_ICOL_KEY("support", 1), PB_ICOL_INT("cells", 0), PB_ICOL_INT("H_positive", 1),
    PB_ICOL_INT("L_positive", 2), PB_ICOL_INT("dMk_positive", 3), PB_ICOL_INT("dMk_defined", 4), {NULL}};
  static const struct pb_table_spec spec = {
    "Positive remaining five-state widths (Appendix B.2)",
    "Panel cells with the I5 pass (original support) and panel cell-seeds of the matched supports: how many have a "
    "positive I5 width of H, L and dMk; dMk counts are out of the cells where it is defined (K > 0). Identical "
    "endpoints at two levels therefore rarely imply point identification.",
    cols};
  pb_more__rows(meta, S, t, &spec, pb_bounds_row_cell, support, 1 + (matched != 0), PB_RS_POS, 5);
}

enum {
  PB_MORE__ZERO_K = -1, PB_MORE__ZERO_K_IND0 = -2, PB_MORE__ZERO_K_IND_POS = -3, PB_MORE__RATE = -4,
  PB_MORE__RATE_OF = -5, PB_MORE__GAP_MODELS = -6, PB_MORE__GAP_EXCLUDED = -7
};

/* B.4's zero-K counts (the source's, on every subset row) and J.2's rates:
 * the share of the events in the column's slot that kept their wrong answer
 * (counted in the next slot). */
static union pb_cell pb_more__cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_bounds_row *r = ctx;
  switch (c->arg) {
  case PB_MORE__ZERO_K: return (union pb_cell){.i = pb_rs_int(r->S, r->s, PB_RS_SUB_ZK)};
  case PB_MORE__ZERO_K_IND0: return (union pb_cell){.i = pb_rs_int(r->S, r->s, PB_RS_SUB_ZK_IND0)};
  case PB_MORE__ZERO_K_IND_POS:
    return (union pb_cell){.i = pb_rs_int(r->S, r->s, PB_RS_SUB_ZK) - pb_rs_int(r->S, r->s, PB_RS_SUB_ZK_IND0)};
  case PB_MORE__RATE: {
    const int64_t ev = pb_rs_int(r->S, r->s, r->base + c->slot), same = pb_rs_int(r->S, r->s, r->base + c->slot + 1);
    return (union pb_cell){.x = ev ? PP * (double)same / ev : NAN};
  }
  case PB_MORE__RATE_OF: { /* F's gap: the count in the slot over its group's events (the group's first slot) */
    const int g0 = 1 + (c->slot - 1) / PB_GAP_N_COUNTS * PB_GAP_N_COUNTS;
    const int64_t ev = pb_rs_int(r->S, r->s, r->base + g0), k = pb_rs_int(r->S, r->s, r->base + c->slot);
    return (union pb_cell){.x = ev ? PP * (double)k / ev : NAN};
  }
  case PB_MORE__GAP_MODELS: return (union pb_cell){.i = pb_rs_int(r->S, r->s, PB_RS_GAP_MODELS)};
  case PB_MORE__GAP_EXCLUDED: return (union pb_cell){.i = pb_rs_int(r->S, r->s, PB_RS_GAP_MODELS + 1)};
  default: return pb_bounds_row_cell(ctx, c);
  }
}

/* Appendix B.4: Table 9 on changing support subsets, and the zero-K counts. */
static void pb_more__subsets(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_table *t)
{
  static const char *const name[3] = {"K > 0", "K >= 20", "1 <= K <= 5"};
  static const struct pb_column cols[] = {
    PB_ICOL_KEY("source", 0), PB_ICOL_KEY("subset", 1), PB_ICOL_INT("cells", 0), PB_ICOL_MEAN("mean_dMk", 2, 1),
    PB_ICOL_MEAN("pair_minus_ind", -2, 2), PB_ICOL_MEAN("mean_abs_W", 2, 3), PB_ICOL_MEAN("mean_abs_V", 2, 4),
    PB_ICOL_SHARE("share_V_gt_W_pct", 1, 5), {"zero_K", PB_COL_INT, .arg = PB_MORE__ZERO_K},
    {"zero_K_ind_zero", PB_COL_INT, .arg = PB_MORE__ZERO_K_IND0},
    {"zero_K_ind_positive", PB_COL_INT, .arg = PB_MORE__ZERO_K_IND_POS}, {NULL}};
  static const struct pb_table_spec spec = {
    "Signed decomposition on support subsets (Appendix B.4)",
    "Every cell of the grid; percentage points. Subsets by the observed retained-correct count K are descriptive, "
    "not support-corrected estimates of a common mean. zero_K: cells with K = 0; of those, zero_K_ind_zero have "
    "zero independent overlap mass and zero_K_ind_positive a positive one (repeated on every subset row).",
    cols};
  pb_more__rows(meta, S, t, &spec, pb_more__cell, name, 3, PB_RS_SUB, 6);
}

/* Appendix J.2 / Table 49: persistent same-wrong rate by cross-model support. */
static void pb_more__support(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_table *t)
{
  static const char *const variant[PB_SUPPORT_N] = {"other models", "other groups (Table 49)",
                                                    "other groups, equal weight"};
  /* a row's slots: [stratum][events, same wrong answer kept] */
  static const struct pb_column cols[] = {
    PB_ICOL_KEY("source", 0), PB_ICOL_KEY("support", 1),
    {"high_pct", PB_COL_NUM, 2, .slot = 2 * PB_SUPPORT_HIGH, .arg = PB_MORE__RATE},
    {"middle_pct", PB_COL_NUM, 2, .slot = 2 * PB_SUPPORT_MID, .arg = PB_MORE__RATE},
    {"low_pct", PB_COL_NUM, 2, .slot = 2 * PB_SUPPORT_LOW, .arg = PB_MORE__RATE},
    PB_ICOL_INT("high_events", 2 * PB_SUPPORT_HIGH), PB_ICOL_INT("middle_events", 2 * PB_SUPPORT_MID),
    PB_ICOL_INT("low_events", 2 * PB_SUPPORT_LOW), {NULL}};
  static const struct pb_table_spec spec = {
    "Cross-model support for a clean wrong answer (seed Table 49, Appendix J.2)",
    "Events: model x condition x evaluation image with a wrong clean prediction w; support: share of other models "
    "(all others; those outside the evaluated model's group, the seed's Table 49; or the mean of the other groups' "
    "shares) predicting w on the clean image; low <= 0.25, high >= 0.75. Rate: percentage of events whose "
    "perturbed prediction is still w (a persistent error), events of every cell pooled. These weight "
    "model-condition-image events; they are neither the state share s nor independent-image probabilities.",
    cols};
  pb_more__rows(meta, S, t, &spec, pb_more__cell, variant, PB_SUPPORT_N, PB_RS_SUPPORT, 2 * PB_SUPPORT_N_STRATA);
}

/* Appendix F.1 / Table 40: acceptance under each protocol, raw, Platt and isotonic. */
#define PB_MORE__CALS(x, d, i)                                                                               \
  PB_ICOL_MEAN(x "_raw", d, i), PB_ICOL_MEAN(x "_platt", d, (i) + 4), PB_ICOL_MEAN(x "_iso", d, (i) + 8)
static void pb_more__table40(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_table *t)
{
  static const char *const proto[PB_F1_N_PROTOCOLS] = {"Q80", "R5", "A0.9", "A0.7", "A0.5"};
  /* a row's slots: n, then [raw, Platt, isotonic][H, L, selective risk, coverage] */
  static const struct pb_column cols[] = {
    PB_ICOL_KEY("source", 0), PB_ICOL_KEY("protocol", 1), PB_ICOL_INT("cells", 0), PB_MORE__CALS("H", 2, 1),
    PB_MORE__CALS("L", 2, 2), PB_MORE__CALS("selrisk", 2, 3), PB_MORE__CALS("coverage", 3, 4), {NULL}};
  static const struct pb_table_spec spec = {
    "Acceptance protocols, raw, Platt-scaled and isotonic (seed Table 40, Appendix F.1)",
    "Every cell of the source, weighted equally; H, L and selective risk (errors among accepted perturbed inputs; "
    "mean over cells that accept any) in percent; coverage = share of perturbed inputs accepted. Q80: the quantile "
    "protocol's development threshold (80% clean-development coverage), recomputed on the calibrated scores; R5: "
    "the 5% risk rule (largest top-ranked development prefix with error <= 5%, every tie at its cutoff accepted); "
    "Ap: score >= p. Platt: logistic regression of clean development correctness on logit(S); iso: isotonic "
    "regression (pool-adjacent-violators, a non-decreasing step function) of the same; both per model and source, "
    "applied to both sides. Under Q80 the isotonic steps can only add acceptances (ties with the threshold's step).",
    cols};
  pb_more__rows(meta, S, t, &spec, pb_bounds_row_cell, proto, PB_F1_N_PROTOCOLS, PB_RS_T40, 1 + 4 * PB_CAL_N);
}

/* A row of the calibration table: the source's totals and its per-model counts (.arg PB_MORE__COUNT,
 * pb_table_member). */
struct pb_more__cal_row {
  struct pb_bounds_row r;
  int64_t models, changed, unchanged, changed_iso, unchanged_iso;
};
enum { PB_MORE__COUNT = -1 };
#define PB_MORE__CAL_COUNT(name, member) \
  {name, PB_COL_INT, .slot = offsetof(struct pb_more__cal_row, member), .arg = PB_MORE__COUNT}

static union pb_cell pb_more__cal_cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_more__cal_row *x = ctx;
  return c->arg == PB_MORE__COUNT ? pb_table_member(x, c) : pb_bounds_row_cell(&x->r, c);
}

/* Appendix F.1: the calibrators themselves and the binary Brier scores. */
static void pb_more__calibration(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_table *t)
{
  static const struct pb_column cols[] = {
    PB_ICOL_KEY("source", 0), PB_MORE__CAL_COUNT("models", models), PB_ICOL_MEAN("platt_a", 4, PB_RS_CAL + 0),
    PB_ICOL_MEAN("platt_b", 4, PB_RS_CAL + 1), PB_ICOL_MEAN("brier_dev_raw", 4, PB_RS_CAL + 2),
    PB_ICOL_MEAN("brier_dev_multiclass", 4, PB_RS_CAL + 9), PB_ICOL_MEAN("brier_clean_multiclass", 4, PB_RS_CAL + 10),
    PB_ICOL_MEAN("brier_perturbed_multiclass", 4, PB_RS_CAL + 11),
    PB_ICOL_MEAN("brier_dev_platt", 4, PB_RS_CAL + 3), PB_ICOL_MEAN("brier_perturbed_raw", 4, PB_RS_CAL + 4),
    PB_ICOL_MEAN("brier_perturbed_platt", 4, PB_RS_CAL + 5), PB_MORE__CAL_COUNT("q80_changed", changed),
    PB_MORE__CAL_COUNT("models_unchanged", unchanged), PB_ICOL_MEAN("iso_steps", 1, PB_RS_CAL + 7),
    PB_ICOL_MEAN("brier_dev_iso", 4, PB_RS_CAL + 6), PB_ICOL_MEAN("brier_perturbed_iso", 4, PB_RS_CAL + 8),
    PB_MORE__CAL_COUNT("iso_q80_changed", changed_iso), PB_MORE__CAL_COUNT("models_unchanged_iso", unchanged_iso),
    {NULL}};
  char note[1600];
  snprintf(note, sizeof note,
    "Means over the models of a source (the fit is per model and source) and, for the evaluation records' Brier "
    "scores, over its cells. Binary Brier score: mean (score - correct)^2. brier_dev_multiclass, "
    "brier_clean_multiclass, brier_perturbed_multiclass: multiclass Brier score of the raw probabilities on the "
    "clean development records, the clean and the perturbed evaluation records, the mean of 1 - 2 ptrue + "
    "collision (collision = sum of p^2 over all classes; Appendix F.1), %s. q80_changed: accept/reject decisions (both sides, "
    "every cell) that Platt scaling changes under the quantile protocol; models_unchanged: models with none (a "
    "strictly increasing calibrator changes none). iso_steps: blocks of the isotonic fit; iso_q80_changed and "
    "models_unchanged_iso: the same for isotonic regression, which is only non-decreasing: every change is a "
    "record rejected raw and accepted isotonic (a score below the raw threshold in its step).",
    meta->summaries & PB_SUMMARY_COLLISION ? "from the store's collision column (exact)"
                                           : "n/a: the store has no collision column (docs/store.md)");
  const struct pb_table_spec spec = {"Platt and isotonic calibration per model and source (Appendix F.1)", note, cols};
  pb_table_open(t, &spec);
  PB_BOUNDS_SOURCES(meta, s)
  {
    struct pb_more__cal_row x = {{S, s, 0, {meta->sources[s].name}}, 0, 0, 0, 0, 0};
    for (int32_t model = 0; model < meta->n_models; model++) {
      const size_t k = (size_t)s * meta->n_models + model;
      const int seen = S->cal_first[k].cell >= 0;
      x.models += seen;
      x.unchanged += seen && S->cal_changed[2 * k] == 0;
      x.changed += S->cal_changed[2 * k];
      x.unchanged_iso += seen && S->cal_changed[2 * k + 1] == 0;
      x.changed_iso += S->cal_changed[2 * k + 1];
    }
    pb_table_row(t, &spec, pb_more__cal_cell, &x);
  }
}

/* Appendix F: the probability-gap groups of clean errors, per source and tier (all tiers, then each with cells). */
static void pb_more__gap(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_table *t)
{
  enum { NG = PB_GAP_N_GROUPS, NC = PB_GAP_N_COUNTS, STRIDE = 1 + NG * NC };
  /* a row's slots: cells, then [group][events, same wrong answer, turned correct] */
#define PB_MORE__GAP_PCT(name, g, q) {name, PB_COL_NUM, 2, .slot = 1 + NC * (g) + (q), .arg = PB_MORE__RATE_OF}
  static const struct pb_column cols[] = {
    PB_ICOL_KEY("source", 0), PB_ICOL_KEY("tier", 1), PB_ICOL_INT("cells", 0),
    {"models", PB_COL_INT, .arg = PB_MORE__GAP_MODELS}, {"models_excluded", PB_COL_INT, .arg = PB_MORE__GAP_EXCLUDED},
    PB_MORE__GAP_PCT("low_same_pct", 0, PB_GAP_SAME), PB_MORE__GAP_PCT("mid_same_pct", 1, PB_GAP_SAME),
    PB_MORE__GAP_PCT("high_same_pct", 2, PB_GAP_SAME), PB_MORE__GAP_PCT("low_correct_pct", 0, PB_GAP_CORRECT),
    PB_MORE__GAP_PCT("mid_correct_pct", 1, PB_GAP_CORRECT), PB_MORE__GAP_PCT("high_correct_pct", 2, PB_GAP_CORRECT),
    PB_ICOL_INT("low_events", 1), PB_ICOL_INT("mid_events", 1 + NC), PB_ICOL_INT("high_events", 1 + 2 * NC), {NULL}};
#undef PB_MORE__GAP_PCT
  static const struct pb_table_spec spec = {
    "Clean probability gap of clean errors (Appendix F)",
    "Gap: top-1 minus top-2 probability of the clean record (the store's top-k lists). Per model and source, three "
    "groups cut at the 1/3 and 2/3 quantiles (linear interpolation) of the gaps of its misclassified clean "
    "development records, a gap equal to a cutpoint in the higher group; models with fewer than 6 such errors are "
    "excluded (models_excluded). Events: model x condition x evaluation image with a wrong clean prediction, "
    "grouped by its clean gap; same: the perturbed prediction is the same wrong answer (a persistent error), "
    "correct: it is the true class; percentages of the group's events, events of every cell of the row pooled "
    "(cells: those of the included models). "
    "The groups are relative to clean errors, not to the clean population; the association does not control for "
    "clean confidence and is not causal.",
    cols};
  const int32_t nrow_max = meta->n_sources * PB_RS_TIER_ROWS;
  int64_t *cells = pb_malloc((size_t)nrow_max * sizeof *cells);
  for (int32_t i = 0; i < nrow_max; i++)
    cells[i] = pb_rs_int(S, i / PB_RS_TIER_ROWS, PB_RS_GAP + STRIDE * (i % PB_RS_TIER_ROWS));
  int32_t (*rows)[2] = pb_malloc((size_t)nrow_max * sizeof *rows);
  const int32_t nr = pb_bounds_tier_rows(meta, cells, rows);
  pb_table_open(t, &spec);
  for (int32_t row = 0; row < nr; row++) {
    const int32_t s = rows[row][0], tier = rows[row][1];
    const struct pb_bounds_row r = {
      S, s, PB_RS_GAP + STRIDE * (tier + 1), {meta->sources[s].name, tier < 0 ? "all tiers" : pb_protocol_tier_name(tier)}};
    pb_table_row(t, &spec, pb_more__cell, &r);
  }
  free(rows);
  free(cells);
}

int pb_bounds_report_more(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_results *res,
                            const struct pb_bounds_options *opt, struct pb_text *md)
{
  struct pb_table t = {{0}, {0}};
  int status = PB_OK;
  pb_more__table2(meta, S, &t);
  status |= pb_table_flush(&t, res, "identification_table2.tsv", md);
  pb_more__strata(meta, S, &t);
  status |= pb_table_flush(&t, res, "identification_strata.tsv", md);
  pb_more__positive(meta, S, opt->matched, &t);
  status |= pb_table_flush(&t, res, "identification_positive_widths.tsv", md);
  pb_more__subsets(meta, S, &t);
  status |= pb_table_flush(&t, res, "identification_subsets.tsv", md);
  pb_more__support(meta, S, &t);
  status |= pb_table_flush(&t, res, "identification_crossmodel_support.tsv", md);
  if (opt->calibration) {
    pb_more__table40(meta, S, &t);
    status |= pb_table_flush(&t, res, "protocol_acceptance.tsv", md);
    pb_more__calibration(meta, S, &t);
    status |= pb_table_flush(&t, res, "protocol_calibration.tsv", md);
    if (meta->topk >= 2) {
      pb_more__gap(meta, S, &t);
      status |= pb_table_flush(&t, res, "protocol_gap.tsv", md);
    } else {
      pb_text_printf(md, "### Clean probability gap of clean errors (Appendix F)\n\nNot computed: the gap (top-1 "
                         "minus top-2 probability) needs top-k lists with k >= 2, and this store has %s.\n\n",
                     meta->topk == 1 ? "top-1 lists only" : "none");
    }
  }
  return status ? PB_FAIL : PB_OK;
}
