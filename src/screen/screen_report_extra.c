/* Screening appendix tables of seed 000 E.1, E.3 and E.4: Table 22
 * (protocol sensitivity), the delta identity ablation, Table 17's class
 * intervals, Table 18's random tie-break beside the prorated value, Table
 * 38's baselines, Table 39 (model groups, per-model positivity), Figure 6
 * (single-probe recall) and the capture-factor diagnostics.  Cells are
 * weighted equally; the means come from the totals of every rank's cells
 * (pb_screen_sum), the intervals from the stage's model-group and class
 * bootstraps (docs/screen.md). */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/agg.h"
#include "pairbound/error.h"
#include "pairbound/figure.h"
#include "pairbound/resample.h"
#include "screen_internal.h"

struct pb_sx {
  const struct pb_screen_rep_in *in;
  struct pb_table t;
};

static const char *pb_sx__src(const struct pb_sx *S, int32_t t) { return S->in->meta->sources[S->in->targets[t]].name; }

/* Totals of target t and a tier at offset o: mean, and cells. */
static double pb_sx__mean(const struct pb_sx *S, int32_t t, int tier, int64_t o)
{
  return pb_agg_mean(&S->in->T->a, pb_screen_sum_tt(S->in->T, t, tier, o));
}

static int64_t pb_sx__cells(const struct pb_sx *S, int32_t t, int tier)
{
  return (int64_t)pb_agg_sum(&S->in->T->a, pb_screen_sum_tt(S->in->T, t, tier, PB_SS_CELLS));
}

/* Boot row (pb_screen_rows) of target t's cells of a tier. */
static int32_t pb_sx__brow(int32_t t, int tier) { return t * PB_SB_NROWS_PER_TARGET + 1 + tier; }

/* ------------------------------------------------------------ Table 22, delta ablation */

#define PB_SX_STR(name, k) {name, PB_COL_STR, .slot = PB_SIV_STR, .arg = k}
#define PB_SX_EST(name, mdname, k) {name, PB_COL_NUM, 3, .slot = PB_SIV_EST, .arg = k, .md = mdname}
/* statistic k as est, group_lo, group_hi in the TSV, "est [lo, hi]" in the markdown */
#define PB_SX_IV(name, mdname, k)                                                     \
  {name, PB_COL_NUM, .slot = PB_SIV_EST, .arg = k, .side = PB_COL_TSV_ONLY},          \
      {"group_lo", PB_COL_NUM, .slot = PB_SIV_LO, .arg = k, .side = PB_COL_TSV_ONLY}, \
      {"group_hi", PB_COL_NUM, .slot = PB_SIV_HI, .arg = k, .side = PB_COL_TSV_ONLY}, \
      {mdname, PB_COL_STR, .slot = PB_SIV_MD, .arg = k, .side = PB_COL_MD_ONLY}

static const struct pb_column pb_sx__t22_cols[] = {
  PB_SX_STR("source", 0), PB_SX_STR("tier", 1), {"cells", PB_COL_INT, .slot = PB_SIV_CELLS},
  PB_SX_EST("S", NULL, 0), PB_SX_EST("U", NULL, 1), PB_SX_EST("U_rank", NULL, 2), PB_SX_EST("U_pow05", "U^0.5", 3),
  PB_SX_EST("U_pow2", "U^2", 4), PB_SX_IV("U_rank-S", "U_rank - S [groups]", 5), {NULL}};

static const struct pb_column pb_sx__delta_cols[] = {
  PB_SX_STR("source", 0), PB_SX_STR("tier", 1), {"cells", PB_COL_INT, .slot = PB_SIV_CELLS},
  PB_SX_EST("U", NULL, 0), PB_SX_EST("U_derange", "U derangement", 1), PB_SX_EST("delta", NULL, 2),
  PB_SX_EST("delta_derange", "delta derangement", 3), PB_SX_EST("wins", NULL, 4),
  PB_SX_IV("gap", "delta gap [groups]", 5), {NULL}};

static const struct pb_table_spec pb_sx__t22 = {
  "Protocol sensitivity: U_rank and power means (seed Table 22)",
  "AUROC (failure positive) of S, U, U_rank (each probe's true-class probability replaced by its mid-CDF percentile "
  "among the unit's clean-correct images, then averaged) and U^0.5, U^2 (means of the powered probabilities), cells "
  "weighted equally; U_rank - S is the mean cellwise gap.",
  pb_sx__t22_cols};

static const struct pb_table_spec pb_sx__delta = {
  "Identity ablation of delta (seed E.1, beside Table 25)",
  "AUROC on the non-singleton subset of U and delta = S - U and of their within-class derangement controls (the "
  "same derangement draws move U and delta); wins = share of cells where delta exceeds its control; gap = delta "
  "minus its control.",
  pb_sx__delta_cols};

/* A table of per-(source, tier) cell means R with a model-group interval on the last statistic. */
static int pb_sx__tier_table(struct pb_sx *S, const struct pb_table_spec *table, const struct pb_screen_rows *R,
                             const char *file, struct pb_text *md)
{
  char note[1024], text[PB_SCREEN_IV_TEXT];
  snprintf(note, sizeof note, "%s Interval: 95%% model-group bootstrap (%lld draws; none when 0).", table->note,
           (long long)S->in->opt->group_draws);
  const struct pb_table_spec spec = {table->title, note, table->cols};
  pb_table_open(&S->t, &spec);
  for (int32_t t = 0; t < S->in->n_targets; t++)
    for (int tier = 0; tier < PB_N_TIERS; tier++) {
      const int32_t row = pb_sx__brow(t, tier);
      if (R->cells[row] == 0) continue;
      const struct pb_screen_ivrow r = {{pb_sx__src(S, t), pb_protocol_tier_name(tier)}, R->cells[row],
                                        pb_screen_rows_iv(R, row, 0), S->in->opt->group_draws, .text = text};
      pb_table_row(&S->t, &spec, pb_screen_iv_cell, &r);
    }
  return pb_table_flush(&S->t, S->in->res, file, md);
}

/* ------------------------------------------------------------ Table 17 */

/* A row of Table 17: per contrast the plain cell mean and its class interval, TSV three columns, markdown one. */
struct pb_sx__t17 {
  const char *source, *tier;
  double kept;              /* class cells: mean cells retained per draw */
  double v[3][3];           /* contrast j: est, class lo, class hi */
  const char *md[3];
};
#define PB_SX_T17(name, mdname, j)                                                                     \
  {name, PB_COL_NUM, .slot = offsetof(struct pb_sx__t17, v[j][0]), .side = PB_COL_TSV_ONLY},           \
      {"class_lo", PB_COL_NUM, .slot = offsetof(struct pb_sx__t17, v[j][1]), .side = PB_COL_TSV_ONLY}, \
      {"class_hi", PB_COL_NUM, .slot = offsetof(struct pb_sx__t17, v[j][2]), .side = PB_COL_TSV_ONLY}, \
      {mdname, PB_COL_STR, .slot = offsetof(struct pb_sx__t17, md[j]), .side = PB_COL_MD_ONLY}
static const struct pb_column pb_sx__t17_cols[] = {
  {"source", PB_COL_STR, .slot = offsetof(struct pb_sx__t17, source)},
  {"tier", PB_COL_STR, .slot = offsetof(struct pb_sx__t17, tier)},
  {"class_cells", PB_COL_NUM, 1, .slot = offsetof(struct pb_sx__t17, kept), .md = "class cells"},
  PB_SX_T17("U-S", "U - S {classes}", 0), PB_SX_T17("delta-U", "delta - U {classes}", 1),
  PB_SX_T17("g_SU-S", "g(S,U) - S {classes}", 2), {NULL}};

/* Seed Table 17: per source and tier the AUROC differences U - S, delta - U
 * and g(S,U) - S (plain cell means) with class-bootstrap intervals. */
static int pb_sx__table17(struct pb_sx *S, struct pb_text *md)
{
  static const int pair[3] = {PB_SP_U_S, PB_SP_DELTA_U, PB_SP_GSU_S};
  static const int base[3] = {PB_SR_U, PB_SR_U, PB_SR_G_SU}, x[3] = {PB_SR_S, PB_SR_DELTA, PB_SR_S};
  const struct pb_screen_boot *B = S->in->B;
  char note[600], text[3][PB_SCREEN_IV_TEXT];
  snprintf(note, sizeof note, "AUROC differences, plain cell means; {lo, hi}: 95%% class bootstrap (%lld draws of the "
           "classes, one draw shared by the cells of a source, cells without both outcomes skipped; class cells = "
           "mean cells retained per draw). delta - U is minus the U - delta contrast.",
           (long long)B->draws);
  const struct pb_table_spec spec = {"Class-resampled AUROC differences (seed Table 17)", note, pb_sx__t17_cols};
  pb_table_open(&S->t, &spec);
  for (int32_t t = 0; t < S->in->n_targets; t++)
    for (int tier = 0; tier < PB_N_TIERS; tier++) {
      if (pb_sx__cells(S, t, tier) == 0) continue;
      const int32_t row = pb_sx__brow(t, tier);
      struct pb_sx__t17 r = {.source = pb_sx__src(S, t), .tier = pb_protocol_tier_name(tier), .kept = NAN};
      double kept = 0;
      for (int64_t b = 0; b < B->draws; b++) kept += (double)B->cells[(size_t)row * (size_t)B->draws + (size_t)b];
      if (B->draws > 0) r.kept = kept / (double)B->draws;
      for (int j = 0; j < 3; j++) {
        struct pb_interval v = {NAN, NAN, NAN, 0};
        const int c = pb_screen_boot_class_contrast(B, base[j], x[j]);
        if (c >= 0 && B->draws > 0) pb_screen_boot_class_interval(B, row, c * PB_SB_NMET, &v);
        const int flip = j == 1; /* delta - U from the U - delta contrast */
        r.v[j][0] = pb_sx__mean(S, t, tier, PB_SS_PAIR(S->in->T, pair[j], PB_SM_AUROC));
        r.v[j][1] = flip ? -v.hi : v.lo;
        r.v[j][2] = flip ? -v.lo : v.hi;
        int n = snprintf(text[j], sizeof text[j], "%+.3f", r.v[j][0]);
        if (!isnan(r.v[j][1])) snprintf(text[j] + n, sizeof text[j] - (size_t)n, " {%+.3f, %+.3f}", r.v[j][1], r.v[j][2]);
        r.md[j] = text[j];
      }
      pb_table_row(&S->t, &spec, pb_table_member, &r);
    }
  return pb_table_flush(&S->t, S->in->res, "screen_class_intervals.tsv", md);
}

/* ------------------------------------------------------------ Table 18 tie-break */

#define PB_SX_Q(name, mdname, row) {name, PB_COL_NUM, 3, .slot = row, .arg = PB_SM_AT_Q, .md = mdname}
static const struct pb_column pb_sx__tiebreak_cols[] = {
  {"source", PB_COL_STR, .slot = PB_SCOL_SOURCE}, {"tier", PB_COL_STR, .slot = PB_SCOL_TIER},
  {"q", PB_COL_STR, .slot = PB_SCOL_Q}, {"cells", PB_COL_INT, .slot = PB_SCOL_CELLS},
  PB_SX_Q("S_tie", "S", PB_SR_S_TB), PB_SX_Q("U_tie", "U", PB_SR_U_TB), PB_SX_Q("delta_tie", "delta", PB_SR_DELTA_TB),
  PB_SX_Q("ret_tie", "ret", PB_SR_RET_TB), PB_SX_Q("random", NULL, PB_SR_RANDOM),
  PB_SX_Q("S_prorated", "S prorated", PB_SR_S), PB_SX_Q("U_prorated", "U prorated", PB_SR_U),
  PB_SX_Q("delta_prorated", "delta prorated", PB_SR_DELTA), PB_SX_Q("ret_prorated", "ret prorated", PB_SR_RET),
  {NULL}};

/* Prorated and one-random-tie-break coverage of S, U, delta, ret and random,
 * per source, tier and budget (means only, as the seed's table). */
static int pb_sx__tiebreak(struct pb_sx *S, struct pb_text *md)
{
  static const struct pb_table_spec spec = {
    "Screening coverage with one seeded random tie-break (seed Table 18)",
    "Share of failures among the top-q clean-correct images, cells weighted equally: 'tie' breaks the ties of each "
    "score once at random (stream keyed by seed, cell and score; docs/screen.md), 'prorated' is its expectation (the "
    "value used by every paired difference); random = one seeded random order per cell.",
    pb_sx__tiebreak_cols};
  struct pb_screen_trow r = {S->in, 0, 0, -1, "", NULL};
  pb_table_open(&S->t, &spec);
  for (int32_t t = 0; t < S->in->n_targets; t++)
    for (int tier = 0; tier < PB_N_TIERS; tier++)
      for (int b = 0; b < PB_SCREEN_N_BUDGETS && pb_sx__cells(S, t, tier) > 0; b++) {
        pb_screen_trow_at(&r, t, tier, b);
        pb_table_row(&S->t, &spec, pb_screen_sum_cell, &r);
      }
  return pb_table_flush(&S->t, S->in->res, "screen_coverage_tiebreak.tsv", md);
}

/* ------------------------------------------------------------ Table 38 */

#define PB_SX_CLASS                                                                         \
  {"class_lo", PB_COL_NUM, .slot = PB_SIV_CLASS_LO, .arg = 2, .side = PB_COL_TSV_ONLY},     \
      {"class_hi", PB_COL_NUM, .slot = PB_SIV_CLASS_HI, .arg = 2, .side = PB_COL_TSV_ONLY}, \
      {"{classes}", PB_COL_STR, .slot = PB_SIV_CLASS_MD, .arg = 2, .side = PB_COL_MD_ONLY}
static const struct pb_column pb_sx__baseline_cols[] = {
  PB_SX_STR("source", 0), PB_SX_STR("score", 1), {"cells", PB_COL_INT, .slot = PB_SIV_CELLS},
  PB_SX_EST("recall_q20", "Recall@.2", 0), PB_SX_EST("auroc", "AUROC", 1), PB_SX_IV("U-score", "U - score [groups]", 2),
  PB_SX_CLASS, {NULL}};

const char *pb_screen_entropy_note(const struct pb_meta *meta)
{
  if (meta->summaries & PB_SUMMARY_ENTROPY) return "entropy is the store's entropy column (exact)";
  if (meta->topk > 0)
    return "entropy completes the top-k lists uniformly (an approximation: the store has no entropy column)";
  return "entropy is NaN (the store has neither an entropy column nor top-k lists)";
}

/* Mild-tier baselines per source: recall at 0.2, AUROC and U - score in
 * recall with its model-group interval, for S, margin, entropy and U_TTA. */
static int pb_sx__baselines(struct pb_sx *S, struct pb_text *md)
{
  const struct pb_screen_ivs *I = S->in->I;
  const int64_t draws = S->in->opt->group_draws;
  char note[1100], text[PB_SCREEN_IV_TEXT];
  snprintf(note, sizeof note,
           "Mild cells weighted equally: recall (coverage) at q = 0.2 and AUROC of each score, and the mean "
           "cellwise U - score recall difference with its 95%% model-group interval (%lld draws). margin is NaN "
           "without top-k lists in the store (docs/screen.md); the TTA row needs an extra probe "
           "set named TTA%s. {lo, hi}: 95%% class bootstrap (%lld draws). Here %s.",
           (long long)draws, S->in->T->tta >= 0 ? "" : " (its class interval is not computed)",
           (long long)S->in->B->draws, pb_screen_entropy_note(S->in->meta));
  const struct pb_table_spec spec = {"Additional simple baselines on mild conditions (seed Table 38)", note,
                                     pb_sx__baseline_cols};
  pb_table_open(&S->t, &spec);
  for (int32_t t = 0; t < S->in->n_targets; t++) {
    const int32_t row = pb_sx__brow(t, PB_TIER_MILD);
    for (int j = 0; j < I->n_base && I->base.cells[row] > 0; j++) {
      const struct pb_screen_ivrow r = {{pb_sx__src(S, t), S->in->L->row_names[I->base_row[j]]}, I->base.cells[row],
                                        pb_screen_rows_iv(&I->base, row, 3 * j), j > 0 ? draws : 0, S->in->B, row,
                                        I->base_row[j], text};
      pb_table_row(&S->t, &spec, pb_screen_iv_cell, &r);
    }
  }
  return pb_table_flush(&S->t, S->in->res, "screen_baselines.tsv", md);
}

/* ------------------------------------------------------------ Table 39 */

/* A row of the tables of mild-cell recall differences U - S and U - TTA at q = 0.2 by unit: a model group, a
 * model, a condition. */
struct pb_sx__unit {
  const char *source, *name, *group;
  int64_t cells;
  double d[2];
};
#define PB_SX_UNIT(name, member) {name, PB_COL_STR, .slot = offsetof(struct pb_sx__unit, member)}
#define PB_SX_UNIT_D(digits)                                                    \
  {"cells", PB_COL_INT, .slot = offsetof(struct pb_sx__unit, cells)},           \
      {"U-S", PB_COL_NUM, digits, .slot = offsetof(struct pb_sx__unit, d[0])},  \
      {"U-TTA", PB_COL_NUM, digits, .slot = offsetof(struct pb_sx__unit, d[1])}

/* Unit k of kind (0 group, 1 model, 2 condition) of target t. */
static struct pb_sx__unit pb_sx__unit(const struct pb_sx *S, int32_t t, int kind, int32_t k)
{
  const struct pb_screen_sum *T = S->in->T;
  struct pb_sx__unit u = {.source = pb_sx__src(S, t), .cells = (int64_t)pb_agg_sum(&T->a, pb_screen_sum_key(T, kind, t, k, 0))};
  for (int j = 0; j < 2; j++) u.d[j] = pb_agg_mean(&T->a, pb_screen_sum_key(T, kind, t, k, 1 + j));
  return u;
}

/* Group name of group index g (first model of the group). */
static const char *pb_sx__group_name(const struct pb_sx *S, int32_t g)
{
  for (int32_t m = 0; m < S->in->meta->n_models; m++)
    if (S->in->T->mg[m] == g) return S->in->meta->model_groups[m];
  return "?";
}

static int pb_sx__groups(struct pb_sx *S, struct pb_text *md)
{
  static const struct pb_column cols[] = {PB_SX_UNIT("source", source), PB_SX_UNIT("group", name), PB_SX_UNIT_D(-3),
                                          {NULL}};
  static const struct pb_table_spec spec = {
    "Mild-condition recall differences by model group (seed Table 39)",
    "Recall (coverage) differences at q = 0.2 on mild cells, cells weighted equally within each model group; U - TTA "
    "needs an extra probe set named TTA (nan otherwise).",
    cols};
  pb_table_open(&S->t, &spec);
  for (int32_t t = 0; t < S->in->n_targets; t++)
    for (int32_t g = 0; g < S->in->T->n_groups; g++) {
      struct pb_sx__unit u = pb_sx__unit(S, t, 0, g);
      u.name = pb_sx__group_name(S, g);
      if (u.cells > 0) pb_table_row(&S->t, &spec, pb_table_member, &u);
    }
  return pb_table_flush(&S->t, S->in->res, "screen_groups.tsv", md);
}

/* Per model: the positivity counts of E.4. */
static int pb_sx__models(struct pb_sx *S, struct pb_text *md)
{
  static const struct pb_column cols[] = {PB_SX_UNIT("source", source), PB_SX_UNIT("model", name),
                                          PB_SX_UNIT("group", group), PB_SX_UNIT_D(-5), {NULL}};
  static const struct pb_table_spec spec = {
    "Per-model mild recall differences at q = 0.2 (seed E.4, Table 39 text)",
    "Mean over each model's mild cells; the counts below give how many models have a positive mean.", cols};
  const struct pb_meta *meta = S->in->meta;
  struct pb_text sum = {0};
  pb_table_open(&S->t, &spec);
  for (int32_t t = 0; t < S->in->n_targets; t++) {
    int32_t pos[2] = {0, 0}, def[2] = {0, 0};
    for (int32_t m = 0; m < meta->n_models; m++) {
      struct pb_sx__unit u = pb_sx__unit(S, t, 1, m);
      if (u.cells == 0) continue;
      u.name = meta->model_ids[m];
      u.group = meta->model_groups[m];
      pb_table_row(&S->t, &spec, pb_table_member, &u);
      for (int j = 0; j < 2; j++) {
        def[j] += !isnan(u.d[j]);
        pos[j] += u.d[j] > 0;
      }
    }
    if (def[0] > 0 && S->in->T->tta >= 0)
      pb_text_printf(&sum, "- %s: U - S positive for %d of %d models; U - TTA positive for %d of %d.\n",
                     pb_sx__src(S, t), pos[0], def[0], pos[1], def[1]);
    else if (def[0] > 0)
      pb_text_printf(&sum, "- %s: U - S positive for %d of %d models; U - TTA n/a (no TTA probe set).\n",
                     pb_sx__src(S, t), pos[0], def[0]);
  }
  int status = pb_table_flush(&S->t, S->in->res, "screen_models.tsv", md);
  if (status == PB_OK && sum.len) pb_text_printf(md, "\nModel-level positivity (mild, recall at q = 0.2):\n\n%s\n", sum.buf);
  pb_text_free(&sum);
  return status;
}

/* ------------------------------------------------------------ E.1 text statistics */

/* Seed E.1's statistics per target source and over all: how many g(S) fits rank like S (a negative weight on S:
 * the failure score falls as S rises) and the Spearman correlation of delta with -U across models. */
struct pb_sx__e1 {
  const char *source;
  int64_t units, fits, like_s, reversed, defined;
  double rho_min, rho_median, rho_max;
};
#define PB_SX_E1(name, type, member, ...) {name, type, __VA_ARGS__, .slot = offsetof(struct pb_sx__e1, member)}
static const struct pb_column pb_sx__e1_cols[] = {
  PB_SX_E1("source", PB_COL_STR, source, 0), PB_SX_E1("units", PB_COL_INT, units, 0),
  PB_SX_E1("gS_fits", PB_COL_INT, fits, 0), PB_SX_E1("gS_ranks_like_S", PB_COL_INT, like_s, 0),
  PB_SX_E1("gS_reversed", PB_COL_INT, reversed, 0), PB_SX_E1("spearman_units", PB_COL_INT, defined, 0),
  PB_SX_E1("spearman_min", PB_COL_NUM, rho_min, 2), PB_SX_E1("spearman_median", PB_COL_NUM, rho_median, 2),
  PB_SX_E1("spearman_max", PB_COL_NUM, rho_max, 2), {NULL}};

static int pb_sx__cmp_double(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The row of targets [t0, t1) (all models). */
static void pb_sx__e1_row(const struct pb_sx *S, int32_t t0, int32_t t1, const char *name, double *rho,
                          struct pb_sx__e1 *r)
{
  const int32_t M = S->in->meta->n_models;
  *r = (struct pb_sx__e1){name, 0, 0, 0, 0, 0, NAN, NAN, NAN};
  for (int32_t t = t0; t < t1; t++)
    for (int32_t m = 0; m < M; m++) {
      const double *v = S->in->unit_stats + ((int64_t)t * M + m) * pb_screen_unit_width(S->in->L);
      r->units++;
      r->fits += !isnan(v[1]);
      r->like_s += v[1] < 0;
      r->reversed += v[1] > 0;
      if (!isnan(v[0])) rho[r->defined++] = v[0];
    }
  if (r->defined == 0) return;
  qsort(rho, (size_t)r->defined, sizeof *rho, pb_sx__cmp_double);
  const int64_t h = r->defined / 2;
  r->rho_min = rho[0], r->rho_max = rho[r->defined - 1];
  r->rho_median = r->defined % 2 ? rho[h] : (rho[h - 1] + rho[h]) / 2;
}

static int pb_sx__e1(struct pb_sx *S, struct pb_text *md)
{
  static const struct pb_table_spec spec = {
    "g(S) against S and delta against -U per model (seed Appendix E.1 text)",
    "Per (model, target source) unit: gS_ranks_like_S counts the development fits of g(S) whose standardised weight "
    "on S is negative (the fitted failure score falls as S rises, so g(S) ranks the images exactly as S), "
    "gS_reversed those with a positive weight (the ranking reverses; reported, not corrected, as in the seed). "
    "Spearman: the rank correlation (ties share their mean rank) of delta = S - U with -U over the unit's "
    "clean-correct analysis images, its minimum, median and maximum across units (screen_fits.tsv, "
    "spearman_delta_negU).",
    pb_sx__e1_cols};
  const int32_t T = S->in->n_targets;
  double *rho = pb_malloc((size_t)(T * S->in->meta->n_models + 1) * sizeof *rho);
  struct pb_sx__e1 r;
  pb_table_open(&S->t, &spec);
  for (int32_t t = 0; t < T; t++) {
    pb_sx__e1_row(S, t, t + 1, pb_sx__src(S, t), rho, &r);
    pb_table_row(&S->t, &spec, pb_table_member, &r);
  }
  if (T > 1) {
    pb_sx__e1_row(S, 0, T, "all", rho, &r);
    pb_table_row(&S->t, &spec, pb_table_member, &r);
  }
  free(rho);
  return pb_table_flush(&S->t, S->in->res, "screen_e1.tsv", md);
}

/* ------------------------------------------------------------ Figure 6 */

/* Probe type and severity of a condition name: "fog-4" -> "fog", "4"; a name
 * without a trailing -digits is its own type with severity "". */
static void pb_sx__split_severity(const char *name, char *type, size_t tlen, const char **sev)
{
  const char *dash = strrchr(name, '-');
  int digits = dash && dash[1] != '\0';
  for (const char *p = dash ? dash + 1 : name; digits && *p; p++) digits = *p >= '0' && *p <= '9';
  size_t n = digits ? (size_t)(dash - name) : strlen(name);
  snprintf(type, tlen, "%.*s", (int)n, name);
  for (char *p = type; *p; p++) /* the type is a gnuplot string literal */
    if (*p == '\'' || *p == '"' || *p == '\\') *p = '_';
  *sev = digits ? dash + 1 : "";
}

/* Mean over target t's mild cells of score row r's recall at q = 0.2, or of
 * the single-probe subset j (row < 0). */
static double pb_sx__mild_recall(const struct pb_sx *S, int32_t t, int32_t r, int32_t j)
{
  return pb_sx__mean(S, t, PB_TIER_MILD, r >= 0 ? PB_SS_ROW(r, PB_SM_COV20) : PB_SS_SUB(S->in->T, j, 1));
}

/* A row of Figure 6's data: a single probe (subset j), whose own fields are the key columns (.arg PB_SX6_KEY,
 * pb_table_member); columns of each target t (.arg): the probe's recall (.slot PB_SX6_SUB), then the lines of
 * score row .slot >= 0. */
struct pb_sx__probe {
  const struct pb_sx *S;
  const char *probe, *type, *severity;
  int64_t y, sv;
  int32_t j;
};
enum { PB_SX6_KEY = -1 /* .arg of a key column */, PB_SX6_SUB = -1 /* .slot of a recall column */ };

static union pb_cell pb_sx__probe_cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_sx__probe *p = ctx;
  if (c->arg == PB_SX6_KEY) return pb_table_member(p, c);
  return (union pb_cell){.x = c->slot == PB_SX6_SUB ? pb_sx__mild_recall(p->S, c->arg, -1, p->j)
                                                    : pb_sx__mild_recall(p->S, c->arg, c->slot, 0)};
}

/* "PREFIXsource" column names of Figure 6's data. */
static char *pb_sx__name(const char *prefix, const char *source)
{
  size_t len = strlen(prefix) + strlen(source) + 1;
  char *s = pb_malloc(len);
  snprintf(s, len, "%s%s", prefix, source);
  return s;
}

/* Figure 6's columns: the probe's keys, each target's single-probe recall, each target's lines (U, S, TTA);
 * names allocated (pb_sx__free_cols). */
static struct pb_column *pb_sx__probe_cols(const struct pb_sx *S, int nline)
{
  static const char *const prefix[3] = {"all_", "clean_S_", "TTA_"};
  const int32_t nt = S->in->n_targets, rows[3] = {PB_SR_U, PB_SR_S, S->in->T->tta};
  struct pb_column *cols = pb_calloc((size_t)(5 + nt * (1 + nline) + 1), sizeof *cols);
#define PB_SX6_MEMBER(name, fmt, member) {name, fmt, .slot = offsetof(struct pb_sx__probe, member), .arg = PB_SX6_KEY}
  static const struct pb_column keys[5] = {
    PB_SX6_MEMBER("probe", PB_COL_STR, probe), PB_SX6_MEMBER("type", PB_COL_STR, type),
    PB_SX6_MEMBER("y", PB_COL_INT, y), PB_SX6_MEMBER("severity_index", PB_COL_INT, sv),
    PB_SX6_MEMBER("severity", PB_COL_STR, severity)};
#undef PB_SX6_MEMBER
  int n = 0;
  for (; n < 5; n++) cols[n] = keys[n];
  for (int32_t t = 0; t < nt; t++) {
    cols[n] = (struct pb_column){pb_sx__name("recall_", pb_sx__src(S, t)), PB_COL_NUM, 3, .slot = PB_SX6_SUB, .arg = t};
    n++;
  }
  for (int32_t t = 0; t < nt; t++)
    for (int k = 0; k < nline; k++) {
      cols[n] = (struct pb_column){pb_sx__name(prefix[k], pb_sx__src(S, t)), PB_COL_NUM, 3, .slot = rows[k], .arg = t};
      n++;
    }
  return cols;
}

static void pb_sx__free_cols(struct pb_column *cols, int first)
{
  for (int k = first; cols[k].name; k++) free((char *)cols[k].name);
  free(cols);
}
/* Figure 6's single probes (subsets of size 1): subset index, type (y: its
 * index) and severity (sv: its marker, sevs[sv] its text). */
struct pb_sx__probes {
  int32_t n, ntypes, nsev;
  char (*type)[128];
  const char **sev, *sevs[4];
  int32_t *y, *sv, *jof;
};

static void pb_sx__probes(const struct pb_sx *S, struct pb_sx__probes *P)
{
  const struct pb_screen_layout *L = S->in->L;
  const struct pb_source *src = &S->in->meta->sources[L->probe_src];
  memset(P, 0, sizeof *P);
  for (int32_t j = 0; j < L->n_subsets; j++) P->n += L->subset_m[j] == 1;
  const size_t n1 = (size_t)(P->n > 0 ? P->n : 1);
  P->type = pb_calloc(n1, sizeof *P->type);
  P->sev = pb_calloc(n1, sizeof *P->sev);
  P->y = pb_calloc(n1, sizeof *P->y);
  P->sv = pb_calloc(n1, sizeof *P->sv);
  P->jof = pb_calloc(n1, sizeof *P->jof);
  for (int32_t j = 0, i = 0; j < L->n_subsets; j++) {
    if (L->subset_m[j] != 1) continue;
    P->jof[i] = j;
    pb_sx__split_severity(src->conditions[L->probe_cond[L->subset_idx[j][0]]], P->type[i], sizeof P->type[i],
                          &P->sev[i]);
    P->y[i] = -1;
    for (int32_t k = 0; k < i && P->y[i] < 0; k++)
      if (!strcmp(P->type[k], P->type[i])) P->y[i] = P->y[k];
    if (P->y[i] < 0) P->y[i] = P->ntypes++;
    P->sv[i] = -1;
    for (int32_t k = 0; k < P->nsev && P->sv[i] < 0; k++)
      if (!strcmp(P->sevs[k], P->sev[i])) P->sv[i] = k;
    if (P->sv[i] < 0) P->sv[i] = P->nsev < 4 ? P->nsev++ : 3; /* more than four severities share the last marker */
    if (P->sevs[P->sv[i]] == NULL) P->sevs[P->sv[i]] = P->sev[i];
    i++;
  }
}

static void pb_sx__probes_free(struct pb_sx__probes *P)
{
  free(P->type);
  free(P->sev);
  free(P->y);
  free(P->sv);
  free(P->jof);
}

/* Figure 6's gnuplot script: a point per probe, target and severity, a line per target and score. */
static void pb_sx__figure6_script(const struct pb_sx *S, const struct pb_sx__probes *P, int nline, struct pb_text *sc)
{
  static const int pt[4] = {7, 5, 9, 13}; /* filled circle, square, triangle, diamond */
  static const char *const line[3] = {"average of all probes (U)", "clean confidence S", "TTA average"};
  const int32_t nt = S->in->n_targets;
  double off = nt > 1 ? 0.3 / (nt - 1) : 0;
  pb_text_printf(sc, "set key outside below\nset offsets graph 0.05, graph 0.05, 0, 0\nset yrange [-0.7:%d.7]\n"
                     "set grid xtics\nset ytics scale 0 (", P->ntypes - 1);
  for (int32_t i = 0, k = 0; i < P->n; i++) /* one label per type, at its first probe */
    if (P->y[i] == k) pb_text_printf(sc, "%s'%s' %d", k++ ? ", " : "", P->type[i], P->y[i]);
  pb_text_printf(sc, ")\nplot ");
  const char *sep = "";
  for (int32_t t = 0; t < nt; t++)
    for (int32_t v = 0; v < P->nsev; v++) {
      pb_text_printf(sc, "%sDATA using (column(4)==%d ? column(%d) : 1/0):(column(3)%+.3f) with points "
                         "pt %d ps 1.6 lc %d title '%s, %s%s'", sep, v, 6 + t, -0.15 + t * off, pt[v], t + 1,
                     pb_sx__src(S, t), P->sevs[v][0] ? "severity " : "single probe", P->sevs[v]);
      sep = ", \\\n  ";
    }
  for (int32_t t = 0; t < nt; t++)
    for (int k = 0; k < nline; k++)
      pb_text_printf(sc, "%sDATA using %d:3 with lines lw 2 dt %d lc %d title '%s: %s'", sep,
                     6 + nt + t * nline + k, k + 1, t + 1, pb_sx__src(S, t), line[k]);
  pb_text_printf(sc, "\n");
}

static int pb_sx__figure6(struct pb_sx *S, struct pb_text *md)
{
  const struct pb_screen_layout *L = S->in->L;
  const struct pb_source *src = &S->in->meta->sources[L->probe_src];
  const int nline = S->in->T->tta >= 0 ? 3 : 2;
  struct pb_sx__probes P;
  pb_sx__probes(S, &P);
  if (P.n == 0 || !(L->subset_tiers & 1 << PB_TIER_MILD)) {
    pb_text_printf(md, "\nFigure 6 (single-probe recall) needs subset size 1 on mild cells (--subset-sizes, "
                       "--subset-tiers); not drawn.\n");
    pb_sx__probes_free(&P);
    return PB_OK;
  }
  int any = 0; /* gnuplot refuses a plot without one finite point */
  for (int32_t i = 0; i < P.n; i++)
    for (int32_t t = 0; t < S->in->n_targets; t++) any |= !isnan(pb_sx__mild_recall(S, t, -1, P.jof[i]));
  struct pb_text sc = {0};
  pb_sx__figure6_script(S, &P, nline, &sc);
  const struct pb_figure fig = {"figure6_probe_recall",
                                "Failure recall at a 20% budget for each single probe, mild conditions (seed Figure 6)",
                                "failure recall at q = 0.2 (share of real failures found; ties prorated)",
                                "probe type", sc.buf};
  struct pb_column *cols = pb_sx__probe_cols(S, nline);
  const struct pb_table_spec spec = {fig.title, "", cols};
  struct pb_table t = {{0}, {0}};
  pb_table_open(&t, &spec);
  for (int32_t i = 0; i < P.n; i++) {
    const struct pb_sx__probe p = {S, src->conditions[L->probe_cond[L->subset_idx[P.jof[i]][0]]], P.type[i],
                                   P.sev[i][0] ? P.sev[i] : "-", P.y[i], P.sv[i], P.jof[i]};
    pb_table_row(&t, &spec, pb_sx__probe_cell, &p);
  }
  int status = pb_screen_figure(S->in->res, &fig, &t, any, md);
  if (!any) pb_text_printf(md, "\nFigure 6 (single-probe recall): no mild cell has a defined recall; not drawn.\n");
  pb_sx__free_cols(cols, 5);
  pb_text_free(&sc);
  pb_sx__probes_free(&P);
  return status;
}

/* ------------------------------------------------------------ E.3 capture diagnostics */

/* Field f of a '_'-separated condition name into out; the field count. */
static int pb_sx__field(const char *name, int f, char *out, size_t len)
{
  int n = 0;
  const char *p = name;
  out[0] = '\0';
  for (;;) {
    const char *e = strchr(p, '_');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (n == f) snprintf(out, len, "%.*s", (int)l, p);
    n++;
    if (!e) return n;
    p = e + 1;
  }
}

struct pb_sx_capture {
  int32_t n;            /* mild conditions of the target */
  int32_t *cond;        /* their condition indices */
  double *mean;         /* [n][2] model-averaged U - S, U - TTA recall differences at q = 0.2 */
};

/* A row of screen_capture.tsv: a grouping of the conditions and the mean of their differences. */
struct pb_sx__group {
  const char *source, *contrast, *grouping;
  int64_t conditions;
  double mean;
  int64_t positive;
};
static const struct pb_column pb_sx__group_cols[] = {
  {"source", PB_COL_STR, .slot = offsetof(struct pb_sx__group, source)},
  {"contrast", PB_COL_STR, .slot = offsetof(struct pb_sx__group, contrast)},
  {"grouping", PB_COL_STR, .slot = offsetof(struct pb_sx__group, grouping)},
  {"conditions", PB_COL_INT, .slot = offsetof(struct pb_sx__group, conditions)},
  {"mean", PB_COL_NUM, -4, .slot = offsetof(struct pb_sx__group, mean)},
  {"positive", PB_COL_INT, .slot = offsetof(struct pb_sx__group, positive)},
  {NULL}};
static const struct pb_table_spec pb_sx__group_spec = {
  "Capture sensitivity by factor of the condition grid (seed E.3)",
  "Means of the per-condition differences over all mild conditions, over the conditions with one level of one "
  "factor (factor i = the i-th '_'-separated field of the condition name), and with that level deleted; positive = "
  "1 when the mean is above 0.",
  pb_sx__group_cols};

/* One grouping row: mean of the condition means selected by (f, level, keep). */
static void pb_sx__capture_row(struct pb_sx *S, int32_t t, const struct pb_sx_capture *C, int j, int f,
                               const char *level, int keep, int *all_pos)
{
  const struct pb_source *src = &S->in->meta->sources[S->in->targets[t]];
  double sum = 0;
  int32_t n = 0;
  char v[128], label[300];
  for (int32_t i = 0; i < C->n; i++) {
    double x = C->mean[2 * i + j];
    if (isnan(x)) continue;
    if (f >= 0) {
      pb_sx__field(src->conditions[C->cond[i]], f, v, sizeof v);
      if ((strcmp(v, level) == 0) != keep) continue;
    }
    sum += x;
    n++;
  }
  if (n == 0) return;
  double m = sum / n;
  if (f < 0) snprintf(label, sizeof label, "all mild conditions");
  else snprintf(label, sizeof label, "%s factor %d = %s", keep ? "only" : "without", f + 1, level);
  const struct pb_sx__group row = {pb_sx__src(S, t), j ? "U-TTA" : "U-S", label, n, m, m > 0};
  pb_table_row(&S->t, &pb_sx__group_spec, pb_table_member, &row);
  if (f >= 0) *all_pos &= m > 0;
}

/* The grouping rows of contrast j of target t: every mild condition, then each level of each factor kept and
 * deleted (fields >= 2: the names share a grid); whether every one keeps a positive mean. */
static int pb_sx__capture_groups(struct pb_sx *S, int32_t t, const struct pb_sx_capture *C, int j, int fields)
{
  const struct pb_source *src = &S->in->meta->sources[S->in->targets[t]];
  int all_pos = 1;
  pb_sx__capture_row(S, t, C, j, -1, NULL, 1, &all_pos);
  for (int f = 0; fields >= 2 && f < fields; f++)
    for (int32_t i = 0; i < C->n; i++) {
      char lv[128], prev[128];
      pb_sx__field(src->conditions[C->cond[i]], f, lv, sizeof lv);
      int seen = 0;
      for (int32_t i2 = 0; i2 < i && !seen; i2++) {
        pb_sx__field(src->conditions[C->cond[i2]], f, prev, sizeof prev);
        seen = !strcmp(prev, lv);
      }
      if (seen) continue;
      pb_sx__capture_row(S, t, C, j, f, lv, 1, &all_pos);
      pb_sx__capture_row(S, t, C, j, f, lv, 0, &all_pos);
    }
  return all_pos;
}

/* Per mild condition the model-averaged paired differences; their positive
 * counts; means grouped by each level of each factor of the condition grid
 * (the '_'-separated fields of the names) and with any one level deleted. */
static int pb_sx__capture(struct pb_sx *S, struct pb_text *md)
{
  static const struct pb_column per_cols[] = {PB_SX_UNIT("source", source), PB_SX_UNIT("condition", name),
                                              PB_SX_UNIT_D(-4), {NULL}};
  static const struct pb_table_spec per_spec = {
    "Capture sensitivity: mild conditions (seed E.3)",
    "Per mild condition, the paired recall difference at q = 0.2 averaged over the models' cells.", per_cols};
  struct pb_table per = {{0}, {0}};
  struct pb_text sum = {0};
  pb_table_open(&per, &per_spec);
  pb_table_open(&S->t, &pb_sx__group_spec);
  for (int32_t t = 0; t < S->in->n_targets; t++) {
    const struct pb_source *src = &S->in->meta->sources[S->in->targets[t]];
    int32_t nc = src->n_conditions;
    struct pb_sx_capture C = {0, pb_malloc((size_t)nc * sizeof(int32_t)), pb_calloc((size_t)nc * 2, sizeof(double))};
    int32_t pos[2] = {0, 0}, def[2] = {0, 0}, fields = -1;
    for (int32_t k = 0; k < nc; k++) {
      struct pb_sx__unit u = pb_sx__unit(S, t, 2, k);
      if (u.cells == 0) continue;
      u.name = src->conditions[k];
      C.cond[C.n] = k;
      char tmp[8];
      int nf = pb_sx__field(src->conditions[k], 0, tmp, sizeof tmp);
      fields = fields < 0 || fields == nf ? nf : 0; /* 0: names do not share one grid */
      pb_table_row(&per, &per_spec, pb_table_member, &u);
      for (int j = 0; j < 2; j++) {
        C.mean[2 * C.n + j] = u.d[j];
        def[j] += !isnan(u.d[j]);
        pos[j] += u.d[j] > 0;
      }
      C.n++;
    }
    for (int j = 0; j < 2; j++) {
      if (def[j] == 0) continue;
      int all_pos = pb_sx__capture_groups(S, t, &C, j, fields);
      pb_text_printf(&sum, "- %s, %s: mean positive in %d of %d mild conditions; %s\n", src->name,
                     j ? "U - TTA" : "U - S", pos[j], def[j],
                     fields >= 2 ? (all_pos ? "every factor-level group and one-level deletion keeps a positive mean"
                                            : "some factor-level group or deletion has a non-positive mean")
                                 : "condition names form no factor grid");
    }
    free(C.cond);
    free(C.mean);
  }
  int status = pb_table_flush(&per, S->in->res, "screen_capture_conditions.tsv", md);
  if (status == PB_OK) status = pb_table_flush(&S->t, S->in->res, "screen_capture.tsv", md);
  if (status == PB_OK && sum.len) pb_text_printf(md, "\nCapture sensitivity (seed E.3):\n\n%s\n", sum.buf);
  pb_text_free(&sum);
  return status;
}

/* ------------------------------------------------------------ entry */

int pb_screen_extra_report(const struct pb_screen_rep_in *in, struct pb_text *md)
{
  struct pb_sx S = {in, {{0}, {0}}};
  pb_text_printf(md, "\n### Appendix E checks (seed Tables 17-18, 22, 38-39, Figure 6, E.1 and E.3)\n");
  int status = pb_sx__tier_table(&S, &pb_sx__t22, &in->I->t22, "screen_protocol.tsv", md);
  if (status == PB_OK) status = pb_sx__tier_table(&S, &pb_sx__delta, &in->I->delta, "screen_identity_delta.tsv", md);
  if (status == PB_OK) status = pb_sx__baselines(&S, md);
  if (status == PB_OK) status = pb_sx__table17(&S, md);
  if (status == PB_OK) status = pb_sx__tiebreak(&S, md);
  if (status == PB_OK) status = pb_sx__groups(&S, md);
  if (status == PB_OK) status = pb_sx__models(&S, md);
  if (status == PB_OK) status = pb_sx__e1(&S, md);
  if (status == PB_OK) status = pb_sx__figure6(&S, md);
  if (status == PB_OK) status = pb_sx__capture(&S, md);
  return status;
}
