/* Diagnostics tables of the identification stage, laid out like seed 000's
 * Tables 6-11 and B.2: report/identification_*.tsv and report/REPORT.md.
 * Widths are reported in percentage points of N; cells are weighted equally
 * within each source (and tier).  Rank 0 prints the totals of every rank's
 * cells (bounds_stage_reduce.c). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/protocol.h"
#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/figure.h"
#include "pairbound/num.h"
#include "pairbound/text.h"
#include "bounds_stage_internal.h"

/* One row per source of a table whose columns read the totals from the row's first slot @p base. */
static void pb_rep__by_source(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_table *t,
                              const struct pb_table_spec *spec, pb_table_get_fn get, int base)
{
  pb_table_open(t, spec);
  PB_BOUNDS_SOURCES(meta, s)
  {
    const struct pb_bounds_row row = {S, s, base, {meta->sources[s].name}};
    pb_table_row(t, spec, get, &row);
  }
}

/* Table 6: full-grid mean widths. */
static void pb_rep__grid(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_table *t)
{
  static const struct pb_column cols[] = {
    PB_ICOL_KEY("source", 0), PB_ICOL_INT("cells", PB_RS_GRID_N), PB_ICOL_MEAN("H_I0", 2, PB_RS_GRID_M + 0),
    PB_ICOL_MEAN("H_Ik", 2, PB_RS_GRID_M + 1), PB_ICOL_MEAN("L_I0", 2, PB_RS_GRID_M + 2),
    PB_ICOL_MEAN("L_Ik", 2, PB_RS_GRID_M + 3), PB_ICOL_MEAN("dMk_Ik", 2, PB_RS_GRID_M + 4),
    PB_ICOL_COUNT("dMk_cells", PB_RS_GRID_M + 4), PB_ICOL_INT("dMk_straddle_zero", PB_RS_GRID_STRADDLE),
    PB_ICOL_INT("zero_K_cells", PB_RS_GRID_ZERO), {NULL}};
  static const struct pb_table_spec spec = {
    "Full-grid mean identification widths (seed Table 6)",
    "Percentage points of N; cells weighted equally within a source; dMk means exclude K = 0 cells. For L and dMk "
    "the I5 bounds equal Ik (Theorem 1).",
    cols};
  pb_rep__by_source(meta, S, t, &spec, pb_bounds_row_cell, 0);
}

/* Table 7 (and the A.10 ranges): panel cells with the I5 pass. */
static void pb_rep__panel(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_table *t)
{
  static const struct pb_column cols[] = {
    PB_ICOL_KEY("source", 0), PB_ICOL_INT("cells", PB_RS_PANEL_N), PB_ICOL_MEAN("H_I0", 2, PB_RS_PANEL_M + 0),
    PB_ICOL_MEAN("H_Ik", 2, PB_RS_PANEL_M + 1), PB_ICOL_MEAN("H_I5", 2, PB_RS_PANEL_M + 2),
    PB_ICOL_MEAN("extra", 2, PB_RS_PANEL_M + 3), PB_ICOL_INT("narrower", PB_RS_PANEL_NARROWER),
    PB_ICOL_MEAN("L_I5", 2, PB_RS_PANEL_M + 4), PB_ICOL_MEAN("dMk_I5", 2, PB_RS_PANEL_M + 5),
    PB_ICOL_MEAN("dMk_I0_varsupport", 2, PB_RS_PANEL_M + 6), PB_ICOL_COUNT("dMk_I0_defined", PB_RS_PANEL_M + 6),
    PB_ICOL_MEAN("H_normalised", 4, PB_RS_PANEL_M + 7), {NULL}};
  static const struct pb_table_spec spec = {
    "Panel: H widths by information level (seed Table 7)",
    "Percentage points; the same panel cells at every level. Extra = Ik - I5 width; narrower counts cells with a "
    "strictly narrower I5 interval. L and dMk at I5 (equal to Ik by Theorem 1) and the variable-support dMk range "
    "at I0 (A.10) follow; normalised H = I5 width / maximum feasible H mass.",
    cols};
  pb_rep__by_source(meta, S, t, &spec, pb_bounds_row_cell, 0);
}

/* Table 9: signed decomposition on positive-K cells, with the 1e-8 pp tie rule. */
static void pb_rep__decomposition(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_table *t)
{
  /* the rows start at PB_RS_DEC_N, the count that the share divides */
  static const struct pb_column cols[] = {
    PB_ICOL_KEY("source", 0), PB_ICOL_INT("K_pos_cells", 0),
    PB_ICOL_MEAN("pair_minus_ind", 2, PB_RS_DEC_M + 0 - PB_RS_DEC_N),
    PB_ICOL_MEAN("mean_abs_W", 2, PB_RS_DEC_M + 1 - PB_RS_DEC_N),
    PB_ICOL_MEAN("mean_abs_V", 2, PB_RS_DEC_M + 2 - PB_RS_DEC_N),
    PB_ICOL_SHARE("share_V_gt_W_pct", 1, PB_RS_DEC_VBIG - PB_RS_DEC_N), {NULL}};
  static const struct pb_table_spec spec = {
    "Signed confidence decomposition (seed Table 9, Eq. 9)",
    "Positive-K cells; percentage points; |V|>|W| counts cells with |V| > |W| + 1e-8 pp.", cols};
  pb_rep__by_source(meta, S, t, &spec, pb_bounds_row_cell, PB_RS_DEC_N);
}

/* A row of Table 10: the totals' row, and its model-group intervals (NULL: not drawn). */
struct pb_rep__vr_row {
  struct pb_bounds_row r;
  const struct pb_interval *iv; /* [3] */
  char *buf;
};

enum { PB_REP__VR_MD = -1, PB_REP__VR_LO = -2, PB_REP__VR_HI = -3 };
/* Ratio X (.slot i): its mean in the TSV and "mean [lo, hi]" in the markdown; its interval's ends, TSV only. */
#define PB_REP__VR(x, i)                                                      \
  {x, PB_COL_NUM, .slot = i, .arg = PB_IROW_MEAN, .side = PB_COL_TSV_ONLY}, \
      {x, PB_COL_STR, .slot = i, .arg = PB_REP__VR_MD, .side = PB_COL_MD_ONLY}
#define PB_REP__VR_ENDS(x, i)                                                          \
  {x "_lo", PB_COL_NUM, .slot = i, .arg = PB_REP__VR_LO, .side = PB_COL_TSV_ONLY}, \
      {x "_hi", PB_COL_NUM, .slot = i, .arg = PB_REP__VR_HI, .side = PB_COL_TSV_ONLY}

/* Table 10's variance ratios: the mean, its interval ends (.slot: the
 * ratio's slot after the row's first) and, in the markdown, both in one cell. */
static union pb_cell pb_rep__vr_cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_rep__vr_row *v = ctx;
  const struct pb_interval *iv = v->iv ? &v->iv[c->slot - 1] : NULL;
  switch (c->arg) {
  case PB_REP__VR_LO: return (union pb_cell){.x = iv ? iv->lo : NAN};
  case PB_REP__VR_HI: return (union pb_cell){.x = iv ? iv->hi : NAN};
  case PB_REP__VR_MD: {
    const double m = pb_rs_mean(v->r.S, v->r.s, v->r.base + c->slot);
    if (iv) snprintf(v->buf, 96, "%.2f [%.2f, %.2f]", m, iv->lo, iv->hi);
    else snprintf(v->buf, 96, "%.2f", m);
    return (union pb_cell){.s = v->buf};
  }
  default: return pb_bounds_row_cell(&v->r, c);
  }
}

/* Rows of Tables 10 and 11: per source, all tiers and each tier with cells
 * (@p iv: Table 10's intervals by row, or NULL). */
static void pb_rep__by_tier(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_table *t,
                            const struct pb_table_spec *spec, const struct pb_bounds_intervals *iv)
{
  const int32_t nrow_max = meta->n_sources * PB_RS_TIER_ROWS;
  int64_t *cells = pb_malloc((size_t)nrow_max * sizeof *cells);
  for (int32_t i = 0; i < nrow_max; i++) cells[i] = pb_rs_int(S, i / PB_RS_TIER_ROWS, PB_RS_TIER + 8 * (i % PB_RS_TIER_ROWS));
  int32_t (*rows)[2] = pb_malloc((size_t)nrow_max * sizeof *rows);
  const int32_t nr = pb_bounds_tier_rows(meta, cells, rows);
  char buf[96];
  pb_table_open(t, spec);
  for (int32_t row = 0; row < nr; row++) {
    const int32_t s = rows[row][0], tier = rows[row][1];
    const struct pb_rep__vr_row v = {
      {S, s, PB_RS_TIER + 8 * (tier + 1), {meta->sources[s].name, tier < 0 ? "all tiers" : pb_protocol_tier_name(tier)}},
      iv && iv->vr ? &iv->vr[3 * row] : NULL, buf};
    pb_table_row(t, spec, pb_rep__vr_cell, &v);
  }
  free(rows);
  free(cells);
}

/* The leading columns of a row of pb_rep__by_tier. */
#define PB_REP__TIER_KEYS PB_ICOL_KEY("source", 0), PB_ICOL_KEY("tier", 1), PB_ICOL_INT("cells", 0)

/* Table 10, with model-group intervals when drawn. */
static void pb_rep__variance_ratio(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_table *t,
                                   const struct pb_bounds_intervals *iv)
{
  static const struct pb_column cols[] = {
    PB_REP__TIER_KEYS, PB_REP__VR("C", 1), PB_REP__VR("S", 2), PB_REP__VR("M", 3),
    PB_REP__VR_ENDS("C", 1), PB_REP__VR_ENDS("S", 2), PB_REP__VR_ENDS("M", 3), {NULL}};
  static const struct pb_table_spec spec = {
    "Paired-to-unpaired variance ratio (seed Table 10)",
    "var(X - X') / (var(X) + var(X')) over evaluation pairs, mean over cells (weighted equally); [lo, hi]: 95% "
    "percentile intervals from resampling the model groups (--group-draws).",
    cols};
  pb_rep__by_tier(meta, S, t, &spec, iv);
}

/* Table 11: what accuracies alone identify of K. */
static void pb_rep__accuracy_only(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_table *t)
{
  static const struct pb_column cols[] = {
    PB_REP__TIER_KEYS, PB_ICOL_MEAN("K_width_classwise", 2, 4), PB_ICOL_MEAN("K_width_global", 2, 5),
    PB_ICOL_MEAN("observed_h_plus_r", 2, 6), PB_ICOL_MEAN("pinned_pct", 2, 7), {NULL}};
  static const struct pb_table_spec spec = {
    "Identification of K from accuracies alone (seed Table 11)",
    "Percentage points of N: width of K from per-class accuracies and from global accuracies, observed gross flips "
    "h + r, and the share of classes whose overlap is pinned.",
    cols};
  pb_rep__by_tier(meta, S, t, &spec, NULL);
}

/* H.2: independent counterparts against the mean over permutation replicates. */
static void pb_rep__perm(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_table *t,
                         int32_t replicates)
{
  static const struct pb_column cols[] = {
    PB_ICOL_KEY("source", 0), PB_ICOL_INT("cells", PB_RS_PERM_N), PB_ICOL_MEAN("H_ind", 3, PB_RS_PERM_M + 0),
    PB_ICOL_MEAN("H_perm", 3, PB_RS_PERM_M + 1), PB_ICOL_MEAN("L_ind", 3, PB_RS_PERM_M + 2),
    PB_ICOL_MEAN("L_perm", 3, PB_RS_PERM_M + 3), PB_ICOL_MEAN("dMk_ind", 3, PB_RS_PERM_M + 4),
    PB_ICOL_MEAN("dMk_perm", 3, PB_RS_PERM_M + 5), {NULL}};
  char note[256];
  snprintf(note, sizeof note, "Cell means of the independent values (Eq. 4, Eq. 14) and of the same targets under %d "
           "uniform within-class permutations per cell (H.2's empirical control); rates in pp, dMk over K > 0.",
           replicates);
  const struct pb_table_spec spec = {"Independent counterparts and the permutation control (Appendix H.2)", note, cols};
  pb_rep__by_source(meta, S, t, &spec, pb_bounds_row_cell, 0);
}

/* Mean over the seeds of the per-seed means of target k of source s (seeds in order, undefined ones left out). */
static double pb_rep__seed_mean(const struct pb_bounds_sum *S, int32_t s, int k)
{
  struct pb_num_nanmean seeds = {0};
  for (int j = 0; j < PB_BOUNDS_N_MATCH_SEEDS; j++) pb_num_nanmean_add(&seeds, pb_rs_mean(S, s, PB_RS_MATCH_SEED + 4 * j + k));
  return pb_num_nanmean_get(&seeds);
}

enum { PB_REP__SEED_MEAN = -1, PB_REP__SEED_MIN = -2, PB_REP__SEED_MAX = -3 };
/* Target X (.slot k after PB_RS_MATCH_ORIG) on the original support and its matched supports' mean over the seeds. */
#define PB_REP__ORIG_MATCHED(x, d, k) \
  PB_ICOL_MEAN(x "_orig", d, k), {x "_matched", PB_COL_NUM, d, .slot = k, .arg = PB_REP__SEED_MEAN}

/* Matched support: a column whose slot is an original-support width
 * (PB_RS_MATCH_ORIG + target) shows, by its kind, the matched supports' mean
 * over the seeds or their smallest or largest seed mean. */
static union pb_cell pb_rep__matched_cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_bounds_row *r = ctx;
  const int k = r->base + c->slot - PB_RS_MATCH_ORIG;
  if (c->arg == PB_REP__SEED_MEAN) return (union pb_cell){.x = pb_rep__seed_mean(r->S, r->s, k)};
  if (c->arg != PB_REP__SEED_MIN && c->arg != PB_REP__SEED_MAX) return pb_bounds_row_cell(ctx, c);
  double lo = INFINITY, hi = -INFINITY;
  for (int j = 0; j < PB_BOUNDS_N_MATCH_SEEDS; j++) {
    const double d = pb_rs_mean(r->S, r->s, PB_RS_MATCH_SEED + 4 * j + k);
    if (!isnan(d)) lo = fmin(lo, d), hi = fmax(hi, d);
  }
  const double x = c->arg == PB_REP__SEED_MIN ? lo : hi;
  return (union pb_cell){.x = isinf(x) ? NAN : x};
}

/* B.2 / Table 8: panel I5 widths before and after matching support; seed means first. */
static void pb_rep__matched(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_table *t)
{
  static const struct pb_column cols[] = {
    PB_ICOL_KEY("source", 0), PB_REP__ORIG_MATCHED("H", 2, 0), PB_REP__ORIG_MATCHED("L", 2, 1),
    PB_REP__ORIG_MATCHED("dMk", 2, 2), {"dMk_matched_min", PB_COL_NUM, 2, .slot = 2, .arg = PB_REP__SEED_MIN},
    {"dMk_matched_max", PB_COL_NUM, 2, .slot = 2, .arg = PB_REP__SEED_MAX},
    PB_ICOL_INT("dMk_undefined_cell_seeds", PB_RS_MATCH_UNDEF - PB_RS_MATCH_ORIG), PB_REP__ORIG_MATCHED("H_norm", 4, 3),
    {NULL}};
  static const struct pb_table_spec spec = {
    "Matched support (seed Table 8, Appendix B.2)",
    "Panel cells, I5 widths in percentage points, original vs matched to the classes common to every source with "
    "two evaluation records per class (SHA-256 order of seed, source, class, image; seeds 20260910-20260914). "
    "Matched values average defined cells within each seed, then the seeds equally; min/max over seeds are "
    "sensitivity summaries. H_norm divides each H width by the maximum feasible H mass.",
    cols};
  pb_rep__by_source(meta, S, t, &spec, pb_rep__matched_cell, PB_RS_MATCH_ORIG);
}

#define PB_REP__BARS                                                                                               \
  "set style data histogram\nset style histogram cluster gap 1\nset style fill solid 0.85 border -1\n"            \
  "set boxwidth 0.9\nset xtics rotate by -35 scale 0\nset yrange [0:*]\nset key top right\n"

/* A bar chart of the panel's widths: its figure (every chart's x axis the
 * sources and targets, PB_REP__TARGETS; its .script after PB_REP__BARS) and
 * its data, one row per source and target k (H, L, dMk), columns .cols of
 * getter .get, whose first slot is .base0 + .step k, left out where the slot
 * .need after it counts no value. */
struct pb_rep__bars {
  struct pb_figure fig;
  const struct pb_column *cols;
  pb_table_get_fn get;
  int base0, step, need;
};

static int pb_rep__widths_figure(const struct pb_meta *meta, const struct pb_bounds_sum *S,
                                 const struct pb_rep__bars *b, struct pb_results *res, struct pb_text *md)
{
  static const char *const target[3] = {"H", "L", "dMk"};
  const struct pb_table_spec spec = {NULL, NULL, b->cols};
  struct pb_text d = {0};
  char label[160];
  int rows = 0;
  pb_table_tsv_open(&d, &spec);
  PB_BOUNDS_SOURCES(meta, s)
  for (int k = 0; k < 3; k++) {
    const struct pb_bounds_row row = {S, s, b->base0 + b->step * k, {label}};
    if (pb_rs_count(S, s, row.base + b->need) == 0) continue;
    snprintf(label, sizeof label, "%s %s", meta->sources[s].name, target[k]);
    pb_table_tsv_row(&d, &spec, b->get, &row);
    rows++;
  }
  int status = rows > 0 ? pb_figure_write(res, &b->fig, d.buf, d.len, md) : PB_OK;
  pb_text_free(&d);
  return status;
}

#define PB_REP__TARGETS "source and target (H: accepted error, L: lost acceptance, dMk: confidence change of correct pairs)"

/* Figure 1: panel mean widths of H, L and dMk at I0, Ik and I5, one cluster of
 * three bars per source and target (the seed's W0, W1, W2). dMk at I0 is the
 * variable-support range (defined cells only); panel cells with the I5 pass. */
static const struct pb_column pb_rep__figure1_cols[] = {
  PB_ICOL_KEY("source and target", 0), PB_ICOL_MEAN("I0 (marginal records)", 0, 0),
  PB_ICOL_MEAN("Ik (+ classwise overlap)", 0, 1), PB_ICOL_MEAN("I5 (+ five-state counts)", 0, 2), {NULL}};
static const struct pb_rep__bars pb_rep__figure1 = {
  {"figure1_identified_widths", "Mean identified widths on the panel by information level (seed Figure 1)",
   PB_REP__TARGETS, "mean interval width (percentage points of N)",
   PB_REP__BARS "plot DATA using 2:xtic(1), '' using 3, '' using 4"},
  pb_rep__figure1_cols, pb_bounds_row_cell, PB_RS_FIG1, 3, 2};

/* The matched-support comparison (B.2) as a figure: panel I5 widths of H, L
 * and dMk per source, original support against the seed mean of the matched
 * supports. */
static const struct pb_column pb_rep__matched_figure_cols[] = {
  PB_ICOL_KEY("source and target", 0), PB_ICOL_MEAN("original support", 0, 0),
  {"matched support (mean over seeds)", PB_COL_NUM, .slot = 0, .arg = PB_REP__SEED_MEAN}, {NULL}};
static const struct pb_rep__bars pb_rep__matched_figure = {
  {"figure_matched_support", "I5 widths on original and matched support (seed Table 8, Appendix B.2)",
   PB_REP__TARGETS, "mean I5 interval width (percentage points of N)",
   PB_REP__BARS "plot DATA using 2:xtic(1), '' using 3"},
  pb_rep__matched_figure_cols, pb_rep__matched_cell, PB_RS_MATCH_ORIG, 1, 0};

/* The protocol summary that heads REPORT.md. */
static void pb_rep__protocol(const struct pb_meta *meta, const struct pb_protocol *p, struct pb_text *md)
{
  pb_text_printf(md, "# pairbound report\n\n## Protocol\n\nAcceptance: S >= tau with tau the lowest of the top "
                     "round(%g n_dev) clean-development scores per model and source (ties accepted).\n\n"
                     "| source | cells | mild | severe | extreme | panel cells |\n|---|---|---|---|---|---|\n",
                 p->coverage);
  for (int32_t s = pb_meta_target(meta, 0); s < meta->n_sources; s = pb_meta_target(meta, s + 1)) {
    const struct pb_source *src = &meta->sources[s];
    int64_t tiers[PB_N_TIERS] = {0}, panel = 0;
    for (int32_t c = 0; c < src->n_conditions; c++)
      if (p->src[s].tier[c] >= 0) tiers[p->src[s].tier[c]]++;
    for (int32_t i = 0; i < meta->n_models * src->n_conditions; i++) panel += p->src[s].panel[i];
    pb_text_printf(md, "| %s | %lld | %lld | %lld | %lld | %lld |\n", src->name,
                   (long long)meta->n_models * (src->n_conditions - 1), (long long)tiers[0], (long long)tiers[1],
                   (long long)tiers[2], (long long)panel);
  }
}

int pb_bounds_report(const struct pb_meta *meta, const struct pb_protocol *p, const struct pb_bounds_sum *S,
                       struct pb_results *res, const struct pb_bounds_options *opt,
                       const struct pb_bounds_intervals *iv, const struct pb_bounds_lsets *lsets)
{
  struct pb_text md = {0};
  struct pb_table t = {{0}, {0}};
  int status = PB_OK;
  pb_rep__protocol(meta, p, &md);
  pb_text_printf(&md, "\n## Identification (pairbound bounds)\n\nPer-cell intervals: report/bounds.tsv. "
                      "I5 and the variable-support dMk range cover the %s.\n",
                 opt->i5_scope == PB_BOUNDS_I5_ALL ? "full grid" : opt->i5_scope == PB_BOUNDS_I5_PANEL ? "panel" : "no cell");
  pb_rep__grid(meta, S, &t);
  status |= pb_table_flush(&t, res, "identification_grid.tsv", &md);
  pb_rep__panel(meta, S, &t);
  status |= pb_table_flush(&t, res, "identification_panel.tsv", &md);
  if (status == PB_OK) status = pb_rep__widths_figure(meta, S, &pb_rep__figure1, res, &md);
  pb_rep__decomposition(meta, S, &t);
  status |= pb_table_flush(&t, res, "identification_decomposition.tsv", &md);
  pb_rep__variance_ratio(meta, S, &t, iv);
  status |= pb_table_flush(&t, res, "identification_variance_ratio.tsv", &md);
  if (pb_resample_boot_one_group(meta->model_groups, meta->n_models, opt->group_draws, "bounds"))
    pb_text_printf(&md, "%s", PB_BOOT_ONE_GROUP_NOTE);
  pb_rep__accuracy_only(meta, S, &t);
  status |= pb_table_flush(&t, res, "identification_accuracy_only.tsv", &md);
  if (opt->perm_replicates > 0) {
    pb_rep__perm(meta, S, &t, opt->perm_replicates);
    status |= pb_table_flush(&t, res, "identification_permutation.tsv", &md);
  }
  if (opt->matched) {
    pb_rep__matched(meta, S, &t);
    status |= pb_table_flush(&t, res, "identification_matched.tsv", &md);
    if (status == PB_OK) status = pb_rep__widths_figure(meta, S, &pb_rep__matched_figure, res, &md);
  }
  if (status == PB_OK) status = pb_bounds_report_more(meta, S, res, opt, &md);
  if (status == PB_OK) status = pb_bounds_report_lsets(meta, lsets, res, &md);
  if (status == PB_OK) status = pb_results_write_report(res, "REPORT.md", md.buf, md.len);
  pb_text_free(&md);
  return status ? PB_FAIL : PB_OK;
}
