/* Natural-transformation comparison tables of seed 000 Section 5.3 and
 * Appendix E.2-E.4 (docs/screen.md, "Natural probes"): Tables 29, 31/37,
 * 34 and 38 (natural rows), the development selections and Figure 4: the
 * model-group intervals from exact per-group sums of every rank's own cells
 * (collective), the subset means from the report's totals (pb_screen_sum);
 * the text is written on rank 0. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/agg.h"
#include "pairbound/error.h"
#include "pairbound/figure.h"
#include "pairbound/resample.h"
#include "screen_internal.h"

/* The seed's mild-condition coverage at q = 0.2 (Tables 33, 37). */
static const char *const pb_snat__seed_src[2] = {"ES", "Diverse"};
static const double pb_snat__seed_U[2] = {0.672, 0.449}, pb_snat__seed_TTA[2] = {0.596, 0.366};

enum { PB_SNAT_AUROC = 2, PB_SNAT_Q10 = 3, PB_SNAT_Q20 = 4 };

/* One cell statistic: rec[row a] - rec[row b] (b < 0: the level of a) of metric met. */
struct pb_snat_stat { int32_t a, b; int met; };

#define PB_SNAT_ROWS (PB_N_TIERS + 1) /* all tiers, then each tier (as screen_boot.c) */

struct pb_snat {
  const struct pb_meta *meta;
  const struct pb_screen_layout *L;
  const int32_t *targets;
  int32_t n_targets, n_stats;
  struct pb_snat_stat *st;
  struct pb_interval *iv;     /* [target * PB_SNAT_ROWS + row][stat] */
  int64_t *cells;             /* [target * PB_SNAT_ROWS + row] */
  const struct pb_screen_boot *B; /* class-bootstrap sums, reduced (draws 0: no class intervals) */
};

static double pb_snat__value(const struct pb_screen_layout *L, const double *rec, const struct pb_snat_stat *s)
{
  double a = rec[L->row_off + PB_SCREEN_MET * s->a + s->met];
  return s->b < 0 ? a : a - rec[L->row_off + PB_SCREEN_MET * s->b + s->met];
}

/* Cell means of every statistic with 95% model-group intervals, by target and
 * tier row, from exact per-group sums of this rank's cells (collective). */
static int pb_snat__boot(struct pb_snat *N, const struct pb_screen_cells *C, const struct pb_screen_options *opt,
                         MPI_Comm comm)
{
  const struct pb_meta *meta = N->meta;
  int32_t nr = N->n_targets * PB_SNAT_ROWS, ns = nr * N->n_stats;
  int32_t *mg = pb_malloc((size_t)meta->n_models * sizeof *mg), ng = pb_store_meta_model_groups(meta, mg);
  struct pb_screen_gsum G;
  pb_screen_gsum_init(&G, ns, ng);
  N->cells = pb_calloc((size_t)nr, sizeof *N->cells);
  for (int64_t c = 0; c < C->n; c++) {
    const double *rec = C->recs + c * N->L->rec_len;
    for (int32_t j = 0; j < PB_SNAT_ROWS; j++) {
      const int32_t row = C->target[c] * PB_SNAT_ROWS + j;
      if (j > 0 && rec[PB_SI_TIER] != j - 1) continue;
      N->cells[row]++;
      for (int32_t e = 0; e < N->n_stats; e++)
        pb_screen_gsum_add(&G, row * N->n_stats + e, mg[C->model[c]], pb_snat__value(N->L, rec, &N->st[e]));
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, N->cells, nr, MPI_INT64_T, MPI_SUM, comm);
  struct pb_boot_spec spec = {opt->seed, PB_RNG_GROUP_BOOT, 2, opt->group_draws, PB_BOOT_LEVEL};
  N->iv = pb_malloc((size_t)(ns > 0 ? ns : 1) * sizeof *N->iv);
  int status = pb_screen_gsum_boot(&G, &spec, comm, N->iv);
  free(mg);
  return status;
}

static const struct pb_interval *pb_snat__iv(const struct pb_snat *N, int32_t t, int tier, int32_t e)
{
  return &N->iv[(size_t)(t * PB_SNAT_ROWS + tier + 1) * N->n_stats + e];
}

/* value [lo, hi] as three columns (the interval n/a without draws) */
static void pb_snat__put(struct pb_table *t, const struct pb_interval *v, int digits, int draws)
{
  pb_table_num(t, v->est, digits);
  pb_table_num(t, draws ? v->lo : NAN, digits);
  pb_table_num(t, draws ? v->hi : NAN, digits);
}

/* Class-bootstrap interval {lo, hi} of U - row in metric k (0 auroc, 1-3 coverage at q = .1 .2 .3) on target
 * tg's cells of one tier, as two columns; n/a without class draws or class sums for that contrast. */
static void pb_snat__class(const struct pb_snat *N, int32_t tg, int tier, int32_t row, int k, struct pb_table *t)
{
  struct pb_interval v = {NAN, NAN, NAN, 0};
  int c = N->B ? pb_screen_boot_class_contrast(N->B, PB_SR_U, row) : -1;
  if (c >= 0 && N->B->draws > 0)
    pb_screen_boot_class_interval(N->B, tg * PB_SB_NROWS_PER_TARGET + 1 + tier, c * PB_SB_NMET + k, &v);
  pb_table_num(t, v.lo, -3);
  pb_table_num(t, v.hi, -3);
}

/* Table 37 (Table 31 on the swapped split): corruption versus natural averages by tier. */
static void pb_snat__tiers(const struct pb_snat *N, const struct pb_screen_options *opt, int32_t e0, int32_t tta,
                           struct pb_table *t)
{
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
           (long long)opt->group_draws, (long long)(N->B ? N->B->draws : 0));
  pb_table_begin(t, title, note,
                 "source\ttier\tcells\tS\tU\tTTA\tU-TTA\tgroup_lo\tgroup_hi\tclass_lo\tclass_hi\tauroc_U\tauroc_TTA\t"
                 "delta_auroc\tgroup_lo\tgroup_hi\tclass_lo\tclass_hi\tU-TTA_sel\tgroup_lo\tgroup_hi", NULL);
  for (int32_t tg = 0; tg < N->n_targets; tg++)
    for (int tier = 0; tier < PB_N_TIERS; tier++) {
      if (N->cells[tg * PB_SNAT_ROWS + tier + 1] == 0) continue;
      pb_table_str(t, N->meta->sources[N->targets[tg]].name, 1);
      pb_table_str(t, pb_protocol_tier_name(tier), 0);
      pb_table_int(t, N->cells[tg * PB_SNAT_ROWS + tier + 1]);
      for (int32_t e = 0; e < 3; e++) pb_table_num(t, pb_snat__iv(N, tg, tier, e0 + e)->est, 3);
      pb_snat__put(t, pb_snat__iv(N, tg, tier, e0 + 3), -3, opt->group_draws > 0);
      pb_snat__class(N, tg, tier, tta, 2, t);
      for (int32_t e = 4; e < 6; e++) pb_table_num(t, pb_snat__iv(N, tg, tier, e0 + e)->est, 3);
      pb_snat__put(t, pb_snat__iv(N, tg, tier, e0 + 6), -3, opt->group_draws > 0);
      pb_snat__class(N, tg, tier, tta, 0, t);
      pb_snat__put(t, pb_snat__iv(N, tg, tier, e0 + 7), -3, opt->group_draws > 0);
      pb_table_end_row(t);
    }
}

/* Table 29: the variants at three budgets. */
static void pb_snat__variants(const struct pb_snat *N, const struct pb_screen_options *opt, int32_t e0,
                              struct pb_table *t)
{
  pb_table_begin(t, "Paired coverage differences of the natural-augmentation variants (seed Table 29)",
                 "U0 and TTA0 add the untransformed image as a 19th term; TTA_sel is the development-selected natural "
                 "set. Native scoring needs the models' logits or cosine similarities, which a store does not hold "
                 "(n/a; docs/coverage.md). 95% model-group intervals.",
                 "source\ttier\tq\tU0-TTA0\tgroup_lo\tgroup_hi\tnative U-TTA\tU-TTA_sel\tgroup_lo\tgroup_hi\t"
                 "TTA_sel-TTA\tgroup_lo\tgroup_hi", NULL);
  for (int32_t tg = 0; tg < N->n_targets; tg++)
    for (int tier = 0; tier < PB_N_TIERS; tier++) {
      if (N->cells[tg * PB_SNAT_ROWS + tier + 1] == 0) continue;
      for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) {
        char q[16];
        snprintf(q, sizeof q, "0.%d", pb_screen_budget_pct[b] / 10);
        pb_table_str(t, N->meta->sources[N->targets[tg]].name, 1);
        pb_table_str(t, pb_protocol_tier_name(tier), 0);
        pb_table_str(t, q, 0);
        pb_snat__put(t, pb_snat__iv(N, tg, tier, e0 + b), -3, opt->group_draws > 0);
        pb_table_num(t, NAN, 3);
        pb_snat__put(t, pb_snat__iv(N, tg, tier, e0 + 3 + b), -3, opt->group_draws > 0);
        pb_snat__put(t, pb_snat__iv(N, tg, tier, e0 + 6 + b), -3, opt->group_draws > 0);
        pb_table_end_row(t);
      }
    }
}

/* Table 38 with the TTA baseline, and Table 34's natural rows (U - A3 on natural probes): mild cells. */
static void pb_snat__baselines(const struct pb_snat *N, const struct pb_screen_options *opt, int32_t e0,
                               int32_t n_base, const int32_t *rows, const char *const *names, struct pb_table *t)
{
  char note[800];
  snprintf(note, sizeof note,
           "Coverage at q = 0.2 and AUROC of each score; U-score in coverage at q = 0.2 and in AUROC with 95%% "
           "model-group intervals (group_lo/hi, %lld draws) and 95%% class-bootstrap intervals (class_lo/hi, %lld draws; "
           "n/a without). TTA = TTA18, agree_TTA = TTA "
           "agreement (share of the fixed transforms predicting the clean prediction; low = risk), A3_TTA = adapted "
           "A3Rank on the natural probes (Table 34's natural rows). Margin and entropy need top-k lists (NaN "
           "without them).",
           (long long)opt->group_draws, (long long)(N->B ? N->B->draws : 0));
  pb_table_begin(t, "Simple baselines against U on mild conditions, with TTA (seed Tables 38 and 34)", note,
                 "source\tscore\trecall_q20\tauroc\tU-score\tgroup_lo\tgroup_hi\tclass_lo\tclass_hi\tU-score auroc\t"
                 "group_lo\tgroup_hi\tclass_lo\tclass_hi", NULL);
  for (int32_t tg = 0; tg < N->n_targets; tg++) {
    if (N->cells[tg * PB_SNAT_ROWS + PB_TIER_MILD + 1] == 0) continue;
    for (int32_t j = 0; j < n_base; j++) {
      const int32_t e = e0 + 4 * j;
      pb_table_str(t, N->meta->sources[N->targets[tg]].name, 1);
      pb_table_str(t, names[j], 0);
      pb_table_num(t, pb_snat__iv(N, tg, PB_TIER_MILD, e)->est, 3);
      pb_table_num(t, pb_snat__iv(N, tg, PB_TIER_MILD, e + 1)->est, 3);
      pb_snat__put(t, pb_snat__iv(N, tg, PB_TIER_MILD, e + 2), -3, opt->group_draws > 0);
      pb_snat__class(N, tg, PB_TIER_MILD, rows[j], 2, t);
      pb_snat__put(t, pb_snat__iv(N, tg, PB_TIER_MILD, e + 3), -3, opt->group_draws > 0);
      pb_snat__class(N, tg, PB_TIER_MILD, rows[j], 0, t);
      pb_table_end_row(t);
    }
  }
}

/* The selected sets, pick by pick (seed E.2), and U_sel - U (the text's +0.003 / +0.025). */
static void pb_snat__selection(const struct pb_snat *N, const struct pb_screen_options *opt,
                               const struct pb_screen_sel_report *S, int32_t e_usel, struct pb_table *t)
{
  static const char *const set[2] = {"U_sel", "TTA_sel"};
  char note[600];
  snprintf(note, sizeof note,
           "Greedy forward selection on %s images: each step adds the candidate with the largest mean coverage at "
           "q = 0.2 over every model and perturbed condition of the source (ties to the earlier candidate); "
           "dev_coverage is that mean after the step; fixed = the candidate belongs to the fixed set (the primary "
           "probe set for U_sel, the 18 fixed transforms for TTA_sel).",
           opt->swapped ? "evaluation" : "development");
  pb_table_begin(t, "Development-selected probe sets TTA^sel and U^sel (seed Appendix E.2)", note,
                 "source\tset\tstep\tcandidate\tdev_coverage\tfixed", NULL);
  for (int32_t tg = 0; tg < N->n_targets; tg++)
    for (int g = 0; g < 2; g++)
      for (int32_t k = 0; S->n_chosen[g] && k < S->n_chosen[g][tg]; k++) {
        size_t x = (size_t)tg * S->n_pick[g] + k;
        pb_table_str(t, N->meta->sources[N->targets[tg]].name, 1);
        pb_table_str(t, set[g], 0);
        pb_table_int(t, k + 1);
        pb_table_str(t, S->names[g][x], 0);
        pb_table_num(t, S->value[g][x], 3);
        pb_table_str(t, S->fixed[g][x] ? "yes" : "no", 0);
        pb_table_end_row(t);
      }
  (void)e_usel;
}

/* Table 32's natural rows: TTA from m of the fixed transforms, the Table 28
 * index sets applied to the TTA list (per subset the equal-weight cell mean,
 * then mean [min, max] over subsets; gain over S on the same cells). */
static void pb_snat__subsets(const struct pb_snat *N, const struct pb_screen_sum *T, struct pb_table *t)
{
  const struct pb_screen_layout *L = N->L;
  pb_table_begin(t, "TTA from m natural transforms, prefixed subsets by index (seed Table 32, natural rows)",
                 "The Table 28 subsets of the primary probe set applied by index to the 18 fixed transforms; per "
                 "subset the equal-weight cell mean, then the mean [min, max] over subsets; gain = coverage at q = 0.2 "
                 "minus that of S. The corruption rows are screen_subsets.tsv.",
                 "source	tier	m	subsets	coverage	cov_min	cov_max	gain	gain_min	auroc	auroc_min	auroc_max",
                 NULL);
  for (int32_t tg = 0; tg < N->n_targets; tg++)
    for (int tier = 0; tier < PB_N_TIERS; tier++) {
      if (!((L->subset_tiers >> tier) & 1) || N->cells[tg * PB_SNAT_ROWS + tier + 1] == 0) continue;
      for (int32_t j0 = L->n_subsets_u; j0 < L->n_subsets;) {
        int32_t m = L->subset_m[j0], j1 = j0;
        while (j1 < L->n_subsets && L->subset_m[j1] == m) j1++;
        double acc[3] = {0, 0, 0}, lo[3] = {INFINITY, INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
        int32_t k = 0;
        for (int32_t j = j0; j < j1; j++) {
          double v[3];
          static const int sub[3] = {1, 0, 2}; /* coverage, AUROC, gain in the totals' order */
          for (int e = 0; e < 3; e++) { /* coverage, AUROC, gain */
            v[e] = pb_agg_mean(&T->a, pb_screen_sum_tt(T, tg, tier, PB_SS_SUB(T, j, sub[e])));
            acc[e] += v[e];
            lo[e] = fmin(lo[e], v[e]);
            if (e < 2) hi[e] = fmax(hi[e], v[e]);
          }
          k++;
        }
        pb_table_str(t, N->meta->sources[N->targets[tg]].name, 1);
        pb_table_str(t, pb_protocol_tier_name(tier), 0);
        pb_table_int(t, m);
        pb_table_int(t, j1 - j0);
        pb_table_num(t, acc[0] / k, 3);
        pb_table_num(t, isinf(lo[0]) ? NAN : lo[0], 3);
        pb_table_num(t, isinf(hi[0]) ? NAN : hi[0], 3);
        pb_table_num(t, acc[2] / k, -3);
        pb_table_num(t, isinf(lo[2]) ? NAN : lo[2], -3);
        pb_table_num(t, acc[1] / k, 3);
        pb_table_num(t, isinf(lo[1]) ? NAN : lo[1], 3);
        pb_table_num(t, isinf(hi[1]) ? NAN : hi[1], 3);
        pb_table_end_row(t);
        j0 = j1;
      }
    }
}

/* The headline check (seed abstract, Section 5.3): mild coverage at q = 0.2 of U and TTA18 beside the seed's. */
static void pb_snat__headline(const struct pb_snat *N, const struct pb_screen_options *opt, int32_t e0,
                              struct pb_text *md)
{
  pb_text_printf(md, "\n**Natural transforms against corruptions (seed Section 5.3).** Mild-condition failure "
                     "coverage at a 20%% budget, with 95%% model-group intervals, beside the seed's values:\n\n"
                     "| source | U | seed U | TTA18 | seed TTA18 | U - TTA18 |\n|---|---|---|---|---|---|\n");
  for (int32_t tg = 0; tg < N->n_targets; tg++) {
    if (N->cells[tg * PB_SNAT_ROWS + PB_TIER_MILD + 1] == 0) continue;
    const char *name = N->meta->sources[N->targets[tg]].name;
    int j = !strcmp(name, pb_snat__seed_src[0]) ? 0 : !strcmp(name, pb_snat__seed_src[1]) ? 1 : -1;
    pb_text_printf(md, "| %s |", name);
    for (int32_t e = 0; e < 3; e++) {
      const struct pb_interval *v = pb_snat__iv(N, tg, PB_TIER_MILD, e0 + e);
      if (opt->group_draws > 0) pb_text_printf(md, " %.3f [%.3f, %.3f] |", v->est, v->lo, v->hi);
      else pb_text_printf(md, " %.3f |", v->est);
      if (e < 2) {
        if (j >= 0) pb_text_printf(md, " %.3f |", e == 0 ? pb_snat__seed_U[j] : pb_snat__seed_TTA[j]);
        else pb_text_printf(md, " – |");
      }
    }
    pb_text_printf(md, "\n");
  }
  pb_text_printf(md, "\nThe seed reports that a 20%% budget finds 67%% (ES) and 45%% (Diverse) of mild failures with "
                     "U against 60%% and 37%% with TTA18. On a synthetic store these numbers follow from the "
                     "generator's parameters (docs/synth.md, \"U versus TTA\"), not from real models.\n");
}

/* Figure 4: the two probe sets crossed with the two scoring rules, mild conditions. */
static int pb_snat__figure(const struct pb_snat *N, int32_t e0, struct pb_results *res, struct pb_text *md)
{
  struct pb_text d = {0};
  int n_src = 0;
  pb_text_printf(&d, "probe set");
  for (int f = 0; f < 2; f++)
    for (int32_t tg = 0; tg < N->n_targets; tg++)
      if (N->cells[tg * PB_SNAT_ROWS + PB_TIER_MILD + 1] > 0) {
        const char *name = N->meta->sources[N->targets[tg]].name;
        pb_text_printf(&d, "\t%s mean %s\t%s A3 %s", name, f ? "AUROC" : "recall", name, f ? "AUROC" : "recall");
        n_src += f == 0;
      }
  pb_text_printf(&d, "\n");
  for (int set = 0; set < 2; set++) { /* natural, then corruptions */
    pb_text_printf(&d, "%s", set ? "Corruptions" : "Natural transforms");
    for (int f = 0; f < 2; f++)
      for (int32_t tg = 0; tg < N->n_targets; tg++)
        if (N->cells[tg * PB_SNAT_ROWS + PB_TIER_MILD + 1] > 0)
          for (int rule = 0; rule < 2; rule++)
            pb_text_double(&d, pb_snat__iv(N, tg, PB_TIER_MILD, e0 + 4 * set + 2 * rule + f)->est);
    pb_text_printf(&d, "\n");
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
  int status = n_src > 0 ? pb_figure_write(res, &fig, d.buf, d.len, md) : PB_OK;
  pb_text_free(&d);
  return status;
}

int pb_screen_natural_report(const struct pb_meta *meta, const struct pb_screen_layout *L, const int32_t *targets,
                             int32_t n_targets, const struct pb_screen_cells *C, const struct pb_screen_sum *T,
                             const struct pb_screen_options *opt, const struct pb_screen_boot *B,
                             const struct pb_screen_sel_report *S, MPI_Comm comm, struct pb_results *res,
                             struct pb_text *md)
{
  int32_t tta = -1;
  for (int32_t e = 0; e < L->n_extra && tta < 0; e++)
    if (L->is_tta[e]) tta = PB_SR_FIXED + 2 * e;
  if (tta < 0 || L->tta_rows < 0) return PB_OK;
  const int32_t r0 = L->tta_rows, a3t = tta + 1;
  const int32_t u0 = r0 + PB_SN_U0, t0 = r0 + PB_SN_TTA0, agr = r0 + PB_SN_AGREE, us = r0 + PB_SN_USEL,
                ts = r0 + PB_SN_TTASEL;
  const int32_t base_rows[] = {PB_SR_S, tta, PB_SR_MARGIN, PB_SR_ENTROPY, agr, a3t};
  static const char *const base_names[] = {"S", "TTA", "margin", "entropy", "agree_TTA", "A3_TTA"};
  const int32_t n_base = (int32_t)(sizeof base_rows / sizeof base_rows[0]);
  struct pb_snat_stat st[64];
  int32_t n = 0;
  /* 0: the tier table (8), 8: variants (9), 17: baselines (4 each), then Figure 4 (8), then U_sel - U */
  const int32_t e_tiers = n;
  st[n++] = (struct pb_snat_stat){PB_SR_S, -1, PB_SNAT_Q20};
  st[n++] = (struct pb_snat_stat){PB_SR_U, -1, PB_SNAT_Q20};
  st[n++] = (struct pb_snat_stat){tta, -1, PB_SNAT_Q20};
  st[n++] = (struct pb_snat_stat){PB_SR_U, tta, PB_SNAT_Q20};
  st[n++] = (struct pb_snat_stat){PB_SR_U, -1, PB_SNAT_AUROC};
  st[n++] = (struct pb_snat_stat){tta, -1, PB_SNAT_AUROC};
  st[n++] = (struct pb_snat_stat){PB_SR_U, tta, PB_SNAT_AUROC};
  st[n++] = (struct pb_snat_stat){PB_SR_U, ts, PB_SNAT_Q20};
  const int32_t e_var = n;
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) st[n++] = (struct pb_snat_stat){u0, t0, PB_SNAT_Q10 + b};
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) st[n++] = (struct pb_snat_stat){PB_SR_U, ts, PB_SNAT_Q10 + b};
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) st[n++] = (struct pb_snat_stat){ts, tta, PB_SNAT_Q10 + b};
  const int32_t e_base = n;
  for (int32_t j = 0; j < n_base; j++) {
    st[n++] = (struct pb_snat_stat){base_rows[j], -1, PB_SNAT_Q20};
    st[n++] = (struct pb_snat_stat){base_rows[j], -1, PB_SNAT_AUROC};
    st[n++] = (struct pb_snat_stat){PB_SR_U, base_rows[j], PB_SNAT_Q20};
    st[n++] = (struct pb_snat_stat){PB_SR_U, base_rows[j], PB_SNAT_AUROC};
  }
  const int32_t e_fig = n; /* set (natural, corruption) x rule (mean, A3) x metric (recall, AUROC) */
  const int32_t fig_rows[4] = {tta, a3t, PB_SR_U, PB_SR_A3};
  for (int j = 0; j < 4; j++) {
    st[n++] = (struct pb_snat_stat){fig_rows[j], -1, PB_SNAT_Q20};
    st[n++] = (struct pb_snat_stat){fig_rows[j], -1, PB_SNAT_AUROC};
  }
  const int32_t e_usel = n;
  st[n++] = (struct pb_snat_stat){us, PB_SR_U, PB_SNAT_Q20};
  struct pb_snat N = {meta, L, targets, n_targets, n, st, NULL, NULL, B};
  int rank;
  MPI_Comm_rank(comm, &rank);
  int status = pb_snat__boot(&N, C, opt, comm);
  if (status == PB_OK && rank == 0) {
    struct pb_table t = {{0}, {0}};
    pb_text_printf(md, "\n### Natural-transformation comparison (seed Section 5.3, Appendix E.2-E.4)\n");
    pb_snat__headline(&N, opt, e_tiers + 1, md);
    pb_snat__tiers(&N, opt, e_tiers, tta, &t);
    status |= pb_table_flush(&t, res, "screen_natural.tsv", md);
    pb_snat__variants(&N, opt, e_var, &t);
    status |= pb_table_flush(&t, res, "screen_natural_variants.tsv", md);
    pb_snat__subsets(&N, T, &t);
    status |= pb_table_flush(&t, res, "screen_natural_subsets.tsv", md);
    pb_snat__baselines(&N, opt, e_base, n_base, base_rows, base_names, &t);
    status |= pb_table_flush(&t, res, "screen_natural_baselines.tsv", md);
    pb_snat__selection(&N, opt, S, e_usel, &t);
    status |= pb_table_flush(&t, res, "screen_natural_selection.tsv", md);
    for (int32_t tg = 0; tg < n_targets; tg++) {
      if (N.cells[tg * PB_SNAT_ROWS + PB_TIER_MILD + 1] == 0) continue;
      const struct pb_interval *v = pb_snat__iv(&N, tg, PB_TIER_MILD, e_usel);
      pb_text_printf(md, "\n%s: the development selection U^sel changes mild coverage at q = 0.2 by %+.3f",
                     meta->sources[targets[tg]].name, v->est);
      if (opt->group_draws > 0) pb_text_printf(md, " [%+.3f, %+.3f]", v->lo, v->hi);
      pb_text_printf(md, " against U (seed: +0.003 on ES, +0.025 on Diverse).\n");
    }
    if (status == PB_OK) status = pb_snat__figure(&N, e_fig, res, md);
    status = status ? PB_FAIL : PB_OK;
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  free(N.iv);
  free(N.cells);
  return status;
}
