/* Natural-transformation comparison tables of seed 000 Section 5.3 and
 * Appendix E.2-E.4 (docs/screen.md, "Natural probes"): Tables 29, 31/37,
 * 34 and 38 (natural rows), the development selections and Figure 4, from
 * the model-group intervals the stage resampled (pb_screen_ivs.natural), the
 * class-bootstrap sums and the report's totals (pb_screen_sum). */
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


struct pb_snat {
  const struct pb_screen_rep_in *in;
  const struct pb_screen_natural *nat;  /* where each table's statistics start */
  const struct pb_screen_rows *R;       /* the natural statistics by target and tier row */
};

static int32_t pb_snat__row(int32_t t, int tier) { return t * PB_SB_NROWS_PER_TARGET + tier + 1; }

static const struct pb_interval *pb_snat__iv(const struct pb_snat *N, int32_t t, int tier, int32_t e)
{
  return pb_screen_rows_iv(N->R, pb_snat__row(t, tier), e);
}

static const char *pb_snat__src(const struct pb_snat *N, int32_t t)
{
  return N->in->meta->sources[N->in->targets[t]].name;
}

#define PB_SNAT_STR(name, k) {name, PB_COL_STR, .slot = PB_SIV_STR, .arg = k}
#define PB_SNAT_EST(name, digits, e) {name, PB_COL_NUM, digits, .slot = PB_SIV_EST, .arg = e}
/* value [lo, hi] as three columns (the interval n/a without draws) */
#define PB_SNAT_IV(name, e)                                                            \
  PB_SNAT_EST(name, -3, e), {"group_lo", PB_COL_NUM, -3, .slot = PB_SIV_LO, .arg = e}, \
      {"group_hi", PB_COL_NUM, -3, .slot = PB_SIV_HI, .arg = e}
/* class-bootstrap interval {lo, hi} of U - the row's contrast in metric k (0 auroc, 1-3 coverage at q = .1 .2 .3) */
#define PB_SNAT_CLASS(k)                                              \
  {"class_lo", PB_COL_NUM, -3, .slot = PB_SIV_CLASS_LO, .arg = k},    \
      {"class_hi", PB_COL_NUM, -3, .slot = PB_SIV_CLASS_HI, .arg = k}

/* Every target tg and tier with cells (the totals' row pb_snat__row(tg, tier)). */
#define PB_SNAT__FOR_ROWS(N, tg, tier)                   \
  for (int32_t tg = 0; tg < (N)->in->n_targets; tg++)   \
    for (int tier = 0; tier < PB_N_TIERS; tier++)        \
      if ((N)->R->cells[pb_snat__row(tg, tier)] > 0)

/* Table 37 (Table 31 on the swapped split): corruption versus natural averages by tier. */
static const struct pb_column pb_snat__tier_cols[] = {
  PB_SNAT_STR("source", 0), PB_SNAT_STR("tier", 1), {"cells", PB_COL_INT, .slot = PB_SIV_CELLS},
  PB_SNAT_EST("S", 3, 0), PB_SNAT_EST("U", 3, 1), PB_SNAT_EST("TTA", 3, 2), PB_SNAT_IV("U-TTA", 3), PB_SNAT_CLASS(2),
  PB_SNAT_EST("auroc_U", 3, 4), PB_SNAT_EST("auroc_TTA", 3, 5), PB_SNAT_IV("delta_auroc", 6), PB_SNAT_CLASS(0),
  PB_SNAT_IV("U-TTA_sel", 7), {NULL}};

static void pb_snat__tiers(const struct pb_snat *N, struct pb_table *t)
{
  const struct pb_screen_options *opt = N->in->opt;
  char title[200], note[700];
  snprintf(title, sizeof title, "Corruption versus natural-transformation averages by tier (seed Table %s)",
           opt->swapped ? "31" : "37");
  snprintf(note, sizeof note,
           "Coverage at q = 0.2 and AUROC on %s images, cells weighted equally; U = the primary (corruption) probe "
           "mean, TTA = the 18 fixed natural transforms (TTA18), TTA_sel = the development-selected natural set%s. "
           "Differences with 95%% model-group intervals (group_lo/hi, %lld draws) and, for U - TTA and delta_auroc "
           "(AUROC of U - TTA), 95%% class-bootstrap intervals (class_lo/hi, %lld draws, the class draws of "
           "screen_intervals.tsv: class-weighted metrics, cells without both outcomes skipped; n/a without).",
           opt->swapped ? "development" : "evaluation", opt->swapped ? " (selected on evaluation images)" : "",
           (long long)opt->group_draws, (long long)N->in->B->draws);
  const struct pb_table_spec spec = {title, note, pb_snat__tier_cols};
  pb_table_open(t, &spec);
  PB_SNAT__FOR_ROWS(N, tg, tier) {
    const int32_t row = pb_snat__row(tg, tier);
    const struct pb_screen_ivrow r = {{pb_snat__src(N, tg), pb_protocol_tier_name(tier)}, N->R->cells[row],
                                      pb_snat__iv(N, tg, tier, N->nat->e_tiers), opt->group_draws, N->in->B, row,
                                      N->nat->tta, NULL};
    pb_table_row(t, &spec, pb_screen_iv_cell, &r);
  }
}

/* Table 29: the variants at three budgets (statistics of budget b at e_var + b + 3 k). */
static const struct pb_column pb_snat__variant_cols[] = {
  PB_SNAT_STR("source", 0), PB_SNAT_STR("tier", 1), PB_SNAT_STR("q", 2), PB_SNAT_IV("U0-TTA0", 0),
  {"native U-TTA", PB_COL_NUM, 3, .slot = PB_SIV_NAN}, PB_SNAT_IV("U-TTA_sel", 3), PB_SNAT_IV("TTA_sel-TTA", 6),
  {NULL}};
static const struct pb_table_spec pb_snat__variant_spec = {
  "Paired coverage differences of the natural-augmentation variants (seed Table 29)",
  "U0 and TTA0 add the untransformed image as a 19th term; TTA_sel is the development-selected natural set. "
  "Native scoring needs the models' logits or cosine similarities, which a store does not hold (n/a; "
  "docs/coverage.md). 95% model-group intervals.",
  pb_snat__variant_cols};

static void pb_snat__variants(const struct pb_snat *N, struct pb_table *t)
{
  pb_table_open(t, &pb_snat__variant_spec);
  PB_SNAT__FOR_ROWS(N, tg, tier) {
    const int32_t row = pb_snat__row(tg, tier);
    for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) {
      char q[16];
      snprintf(q, sizeof q, "0.%d", pb_screen_budget_pct[b] / 10);
      const struct pb_screen_ivrow r = {.str = {pb_snat__src(N, tg), pb_protocol_tier_name(tier), q},
                                        .cells = N->R->cells[row],
                                        .iv = pb_snat__iv(N, tg, tier, N->nat->e_var + b),
                                        .draws = N->in->opt->group_draws};
      pb_table_row(t, &pb_snat__variant_spec, pb_screen_iv_cell, &r);
    }
  }
}

/* Table 38 with the TTA baseline, and Table 34's natural rows (U - A3 on natural probes): mild cells. */
static const struct pb_column pb_snat__baseline_cols[] = {
  PB_SNAT_STR("source", 0), PB_SNAT_STR("score", 1), PB_SNAT_EST("recall_q20", 3, 0), PB_SNAT_EST("auroc", 3, 1),
  PB_SNAT_IV("U-score", 2), PB_SNAT_CLASS(2), PB_SNAT_IV("U-score auroc", 3), PB_SNAT_CLASS(0), {NULL}};

static void pb_snat__baselines(const struct pb_snat *N, struct pb_table *t)
{
  const struct pb_screen_natural *nat = N->nat;
  char note[1300];
  snprintf(note, sizeof note,
           "Coverage at q = 0.2 and AUROC of each score; U-score in coverage at q = 0.2 and in AUROC with 95%% "
           "model-group intervals (group_lo/hi, %lld draws) and 95%% class-bootstrap intervals (class_lo/hi, %lld draws; "
           "n/a without). TTA = TTA18, agree_TTA = TTA "
           "agreement (share of the fixed transforms predicting the clean prediction; low = risk), A3_TTA = adapted "
           "A3Rank on the natural probes (Table 34's natural rows). Margin needs top-k lists (NaN without "
           "them). Here %s. " PB_SCREEN_A3_NOTE,
           (long long)N->in->opt->group_draws, (long long)N->in->B->draws, pb_screen_entropy_note(N->in->meta));
  const struct pb_table_spec spec = {"Simple baselines against U on mild conditions, with TTA (seed Tables 38 and 34)",
                                     note, pb_snat__baseline_cols};
  pb_table_open(t, &spec);
  for (int32_t tg = 0; tg < N->in->n_targets; tg++) {
    const int32_t row = pb_snat__row(tg, PB_TIER_MILD);
    for (int32_t j = 0; j < nat->n_base && N->R->cells[row] > 0; j++) {
      const struct pb_screen_ivrow r = {{pb_snat__src(N, tg), nat->base_name[j]}, N->R->cells[row],
                                        pb_snat__iv(N, tg, PB_TIER_MILD, nat->e_base + 4 * j),
                                        N->in->opt->group_draws, N->in->B, row, nat->base_row[j], NULL};
      pb_table_row(t, &spec, pb_screen_iv_cell, &r);
    }
  }
}

/* A pick of a development selection. */
struct pb_snat__pick {
  const char *source, *set;
  int64_t step;
  const char *candidate;
  double coverage;
  const char *fixed;
};
static const struct pb_column pb_snat__pick_cols[] = {
  {"source", PB_COL_STR, .slot = offsetof(struct pb_snat__pick, source)},
  {"set", PB_COL_STR, .slot = offsetof(struct pb_snat__pick, set)},
  {"step", PB_COL_INT, .slot = offsetof(struct pb_snat__pick, step)},
  {"candidate", PB_COL_STR, .slot = offsetof(struct pb_snat__pick, candidate)},
  {"dev_coverage", PB_COL_NUM, 3, .slot = offsetof(struct pb_snat__pick, coverage)},
  {"fixed", PB_COL_STR, .slot = offsetof(struct pb_snat__pick, fixed)},
  {NULL}};

/* The selected sets, pick by pick (seed E.2). */
static void pb_snat__selection(const struct pb_snat *N, const struct pb_screen_sel_report *S, struct pb_table *t)
{
  static const char *const set[2] = {"U_sel", "TTA_sel"};
  char note[600];
  snprintf(note, sizeof note,
           "Greedy forward selection on %s images: each step adds the candidate with the largest mean coverage at "
           "q = 0.2 over every model and perturbed condition of the source (ties to the earlier candidate); "
           "dev_coverage is that mean after the step; fixed = the candidate belongs to the fixed set (the primary "
           "probe set for U_sel, the 18 fixed transforms for TTA_sel).",
           N->in->opt->swapped ? "evaluation" : "development");
  const struct pb_table_spec spec = {"Development-selected probe sets TTA^sel and U^sel (seed Appendix E.2)", note,
                                     pb_snat__pick_cols};
  pb_table_open(t, &spec);
  for (int32_t tg = 0; tg < N->in->n_targets; tg++)
    for (int g = 0; g < 2; g++)
      for (int32_t k = 0; S->n_chosen[g] && k < S->n_chosen[g][tg]; k++) {
        size_t x = (size_t)tg * S->n_pick[g] + k;
        const struct pb_snat__pick p = {pb_snat__src(N, tg), set[g],         k + 1,
                                        S->names[g][x],      S->value[g][x], S->fixed[g][x] ? "yes" : "no"};
        pb_table_row(t, &spec, pb_table_member, &p);
      }
}

/* Table 32's natural rows: TTA from m of the fixed transforms, the Table 28
 * index sets applied to the TTA list (per subset the equal-weight cell mean,
 * then mean [min, max] over subsets; gain over S on the same cells). */
static void pb_snat__subsets(const struct pb_snat *N, struct pb_table *t)
{
  static const struct pb_table_spec spec = {
    "TTA from m natural transforms, prefixed subsets by index (seed Table 32, natural rows)",
    "The Table 28 subsets of the primary probe set applied by index to the 18 fixed transforms; per subset the "
    "equal-weight cell mean, then the mean [min, max] over subsets; gain = coverage at q = 0.2 minus that of S. The "
    "corruption rows are screen_subsets.tsv.",
    pb_screen_subset_cols};
  const struct pb_screen_layout *L = N->in->L;
  const struct pb_screen_sum *T = N->in->T;
  pb_table_open(t, &spec);
  PB_SNAT__FOR_ROWS(N, tg, tier) {
    if (!((L->subset_tiers >> tier) & 1)) continue;
    for (int32_t j0 = L->n_subsets_u; j0 < L->n_subsets;) {
      int32_t m = L->subset_m[j0], j1 = j0;
      while (j1 < L->n_subsets && L->subset_m[j1] == m) j1++;
      double acc[3] = {0, 0, 0}, lo[3] = {INFINITY, INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
      int32_t k = 0;
      for (int32_t j = j0; j < j1; j++) {
        static const int sub[3] = {1, 0, 2}; /* coverage, AUROC, gain in the totals' order */
        for (int e = 0; e < 3; e++) { /* coverage, AUROC, gain */
          const double v = pb_agg_mean(&T->a, pb_screen_sum_tt(T, tg, tier, PB_SS_SUB(T, j, sub[e])));
          acc[e] += v;
          lo[e] = fmin(lo[e], v);
          if (e < 2) hi[e] = fmax(hi[e], v);
        }
        k++;
      }
      const struct pb_screen_subrow r = {
          pb_snat__src(N, tg), pb_protocol_tier_name(tier), m, "random", j1 - j0, acc[0] / k, isinf(lo[0]) ? NAN : lo[0],
          isinf(hi[0]) ? NAN : hi[0], acc[2] / k, isinf(lo[2]) ? NAN : lo[2], acc[1] / k,
          isinf(lo[1]) ? NAN : lo[1], isinf(hi[1]) ? NAN : hi[1]};
      pb_table_row(t, &spec, pb_table_member, &r);
      j0 = j1;
    }
  }
}

/* The targets that declare the seed value @p key (pb_meta_seed_value), with those values; their number. */
static int32_t pb_snat__seeded(const struct pb_snat *N, const char *key, int32_t *tg, double *v)
{
  int32_t n = 0;
  for (int32_t t = 0; t < N->in->n_targets; t++) {
    const double x = pb_meta_seed_value(&N->in->meta->sources[N->in->targets[t]], key);
    if (!isnan(x)) tg[n] = t, v[n++] = x;
  }
  return n;
}

/* ", " between items and " and " before the last. */
static const char *pb_snat__sep(int32_t i, int32_t n) { return i == 0 ? "" : i + 1 == n ? " and " : ", "; }

/* The seed's headline numbers, where the targets declare them (a synthetic panel's configuration). */
static void pb_snat__seed_note(const struct pb_snat *N, struct pb_text *md)
{
  const int32_t nt = N->in->n_targets > 0 ? N->in->n_targets : 1;
  int32_t *tg = pb_malloc((size_t)nt * sizeof *tg), *tg2 = pb_malloc((size_t)nt * sizeof *tg2);
  double *u = pb_malloc((size_t)nt * sizeof *u), *tta = pb_malloc((size_t)nt * sizeof *tta);
  const int32_t n = pb_snat__seeded(N, "natural_coverage_U", tg, u);
  if (n > 0 && pb_snat__seeded(N, "natural_coverage_TTA18", tg2, tta) == n) {
    pb_text_printf(md, "\nThe seed reports that a 20%% budget finds ");
    for (int32_t i = 0; i < n; i++)
      pb_text_printf(md, "%s%.0f%% (%s)", pb_snat__sep(i, n), 100 * u[i], pb_snat__src(N, tg[i]));
    pb_text_printf(md, " of mild failures with U against ");
    for (int32_t i = 0; i < n; i++) pb_text_printf(md, "%s%.0f%%", pb_snat__sep(i, n), 100 * tta[i]);
    pb_text_printf(md, " with TTA18. On a synthetic store these numbers follow from the generator's parameters "
                       "(docs/synth.md, \"U versus TTA\"), not from real models.\n");
  }
  free(tg), free(tg2), free(u), free(tta);
}

/* The headline check (seed abstract, Section 5.3): mild coverage at q = 0.2 of U and TTA18 beside the seed's. */
static void pb_snat__headline(const struct pb_snat *N, struct pb_text *md)
{
  const int32_t e0 = N->nat->e_tiers + 1;
  pb_text_printf(md, "\n**Natural transforms against corruptions (seed Section 5.3).** Mild-condition failure "
                     "coverage at a 20%% budget, with 95%% model-group intervals, beside the seed's values:\n\n"
                     "| source | U | seed U | TTA18 | seed TTA18 | U - TTA18 |\n|---|---|---|---|---|---|\n");
  for (int32_t tg = 0; tg < N->in->n_targets; tg++) {
    if (N->R->cells[pb_snat__row(tg, PB_TIER_MILD)] == 0) continue;
    const char *name = pb_snat__src(N, tg);
    /* the seed's mild-condition coverage at q = 0.2 (Tables 33, 37), where the source declares it (a synthetic
     * panel's configuration, docs/synth.md) */
    const struct pb_source *src = &N->in->meta->sources[N->in->targets[tg]];
    const double seed[2] = {pb_meta_seed_value(src, "natural_coverage_U"),
                            pb_meta_seed_value(src, "natural_coverage_TTA18")};
    pb_text_printf(md, "| %s |", name);
    for (int32_t e = 0; e < 3; e++) {
      const struct pb_interval *v = pb_snat__iv(N, tg, PB_TIER_MILD, e0 + e);
      if (N->in->opt->group_draws > 0) pb_text_printf(md, " %.3f [%.3f, %.3f] |", v->est, v->lo, v->hi);
      else pb_text_printf(md, " %.3f |", v->est);
      if (e < 2) {
        if (!isnan(seed[e])) pb_text_printf(md, " %.3f |", seed[e]);
        else pb_text_printf(md, " – |");
      }
    }
    pb_text_printf(md, "\n");
  }
  pb_snat__seed_note(N, md);
}

/* Figure 4's rows: a probe set (0 natural, 1 corruptions); columns (slot target, arg 2 rule + metric) the mild
 * cell means of the scoring rules (mean, A3) in recall and AUROC. */
struct pb_snat__set {
  const struct pb_snat *N;
  int set;
};

static union pb_cell pb_snat__set_cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_snat__set *r = ctx;
  if (c->slot < 0) return (union pb_cell){.s = r->set ? "Corruptions" : "Natural transforms"};
  return (union pb_cell){.x = pb_snat__iv(r->N, c->slot, PB_TIER_MILD, r->N->nat->e_fig + 4 * r->set + c->arg)->est};
}

/* Figure 4: the two probe sets crossed with the two scoring rules, mild conditions. */
static int pb_snat__figure(const struct pb_snat *N, struct pb_text *md)
{
  const int32_t nt = N->in->n_targets;
  struct pb_column *cols = pb_calloc((size_t)(2 + 4 * nt), sizeof *cols);
  int n_src = 0, n = 1;
  cols[0] = (struct pb_column){"probe set", PB_COL_STR, .slot = -1};
  for (int f = 0; f < 2; f++)
    for (int32_t tg = 0; tg < nt; tg++)
      for (int rule = 0; rule < 2 && N->R->cells[pb_snat__row(tg, PB_TIER_MILD)] > 0; rule++) {
        const char *name = pb_snat__src(N, tg);
        size_t len = strlen(name) + 16;
        char *h = pb_malloc(len);
        snprintf(h, len, "%s %s %s", name, rule ? "A3" : "mean", f ? "AUROC" : "recall");
        cols[n++] = (struct pb_column){h, PB_COL_NUM, 3, .slot = tg, .arg = 2 * rule + f};
        n_src += f == 0 && rule == 0;
      }
  char script[900];
  int nc = 2 * n_src;
  snprintf(script, sizeof script,
           "set multiplot layout 1,2\nset xrange [-0.3:1.3]\nset key bottom right\n"
           "set title 'Failure recall at a 20%% budget'\nset ylabel 'failure recall (share of real failures found)'\n"
           "plot for [i=2:%d] DATA using 0:i:xtic(1) with linespoints lw 2 pt 7 ps 1.3 lc (i-2)/2+1 dt 1+(i-2)%%2 "
           "title columnheader(i)\n"
           "set title 'AUROC'\nset ylabel 'AUROC (failure positive)'\n"
           "plot for [i=%d:%d] DATA using 0:i:xtic(1) with linespoints lw 2 pt 7 ps 1.3 lc (i-%d)/2+1 "
           "dt 1+(i-%d)%%2 title columnheader(i)\nunset multiplot",
           1 + nc, 2 + nc, 1 + 2 * nc, 2 + nc, 2 + nc);
  const struct pb_figure fig = {"figure4_probe_sets",
                                "Corruptions versus natural transforms at 18 inputs each, two scoring rules, mild "
                                "conditions (seed Figure 4)",
                                "probe set (18 transformed inputs per image)", "failure recall / AUROC", script};
  const struct pb_table_spec spec = {fig.title, PB_SCREEN_A3_NOTE, cols};
  struct pb_table t = {{0}, {0}};
  pb_table_open(&t, &spec);
  for (int set = 0; set < 2; set++) { /* natural, then corruptions */
    const struct pb_snat__set r = {N, set};
    pb_table_row(&t, &spec, pb_snat__set_cell, &r);
  }
  for (int k = 1; k < n; k++) free((char *)cols[k].name);
  free(cols);
  return pb_screen_figure(N->in->res, &fig, &t, n_src > 0, md);
}

/* U_sel - U on mild cells, beside the seed's where the targets declare it. */
static void pb_snat__usel(const struct pb_snat *N, struct pb_text *md)
{
  for (int32_t tg = 0; tg < N->in->n_targets; tg++) {
    if (N->R->cells[pb_snat__row(tg, PB_TIER_MILD)] == 0) continue;
    const struct pb_interval *v = pb_snat__iv(N, tg, PB_TIER_MILD, N->nat->e_usel);
    pb_text_printf(md, "\n%s: the development selection U^sel changes mild coverage at q = 0.2 by %+.3f",
                   pb_snat__src(N, tg), v->est);
    if (N->in->opt->group_draws > 0) pb_text_printf(md, " [%+.3f, %+.3f]", v->lo, v->hi);
    pb_text_printf(md, " against U");
    int32_t *tgs = pb_malloc((size_t)N->in->n_targets * sizeof *tgs);
    double *seed = pb_malloc((size_t)N->in->n_targets * sizeof *seed);
    const int32_t n = pb_snat__seeded(N, "natural_usel_gain", tgs, seed);
    for (int32_t i = 0; i < n; i++)
      pb_text_printf(md, "%s%+.3f on %s", i ? ", " : " (seed: ", seed[i], pb_snat__src(N, tgs[i]));
    pb_text_printf(md, "%s.\n", n > 0 ? ")" : "");
    free(tgs);
    free(seed);
  }
}

int pb_screen_natural_report(const struct pb_screen_rep_in *in, const struct pb_screen_sel_report *S,
                             struct pb_text *md)
{
  if (!in->I->natural.cells) return PB_OK;
  const struct pb_snat N = {in, &in->I->nat, &in->I->natural};
  struct pb_table t = {{0}, {0}};
  int status = PB_OK;
  pb_text_printf(md, "\n### Natural-transformation comparison (seed Section 5.3, Appendix E.2-E.4)\n");
  pb_snat__headline(&N, md);
  pb_snat__tiers(&N, &t);
  status |= pb_table_flush(&t, in->res, "screen_natural.tsv", md);
  pb_snat__variants(&N, &t);
  status |= pb_table_flush(&t, in->res, "screen_natural_variants.tsv", md);
  pb_snat__subsets(&N, &t);
  status |= pb_table_flush(&t, in->res, "screen_natural_subsets.tsv", md);
  pb_snat__baselines(&N, &t);
  status |= pb_table_flush(&t, in->res, "screen_natural_baselines.tsv", md);
  pb_snat__selection(&N, S, &t);
  status |= pb_table_flush(&t, in->res, "screen_natural_selection.tsv", md);
  pb_snat__usel(&N, md);
  if (status == PB_OK) status = pb_snat__figure(&N, md);
  return status ? PB_FAIL : PB_OK;
}
