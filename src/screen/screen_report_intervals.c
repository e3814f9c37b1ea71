/* Interval tables of the screening paired differences U - S, U - delta,
 * U - ret, U - A3, U - margin, U - entropy, g_SU - S and the rest of
 * pb_screen_boot_contrast (seed 000 Tables 16-20, 25, 26, 34, 35, 38): cell
 * means with the model-group and class-bootstrap intervals the stage
 * resampled (screen_stage_boot.c); Figures 2(b) and 3(b); Table 27's tercile
 * gaps and U - U_<set> with group intervals. */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/figure.h"
#include "pairbound/resample.h"
#include "screen_internal.h"

/* A row of screen_intervals.tsv: one contrast of a (target, tier) row with
 * each metric's group interval g and class interval cl. */
struct pb_sint__row {
  const char *str[3];       /* source, tier, contrast */
  int64_t cells;
  int has_g, has_cl;        /* group intervals computed; class intervals (class draws, a class contrast) */
  struct pb_interval g[PB_SB_NMET], cl[PB_SB_NMET];
  double class_cells;       /* cells retained per class draw */
  char *text;               /* room for the markdown cell, PB_SCREEN_IV_TEXT bytes */
};

enum { PB_SINT_STR, PB_SINT_CELLS, PB_SINT_EST, PB_SINT_GLO, PB_SINT_GHI, PB_SINT_CLO, PB_SINT_CHI, PB_SINT_MD,
       PB_SINT_KEPT };

/* Columns: slot as above, arg the metric (0 AUROC, 1 + b coverage at budget b). */
static union pb_cell pb_sint__cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_sint__row *r = ctx;
  const struct pb_interval *g = r->has_g ? &r->g[c->arg] : NULL, *cl = &r->cl[c->arg];
  char *p = r->text;
  switch (c->slot) {
  case PB_SINT_STR: return (union pb_cell){.s = r->str[c->arg]};
  case PB_SINT_CELLS: return (union pb_cell){.i = r->cells};
  case PB_SINT_EST: return (union pb_cell){.x = g ? g->est : NAN};
  case PB_SINT_GLO: return (union pb_cell){.x = g ? g->lo : NAN};
  case PB_SINT_GHI: return (union pb_cell){.x = g ? g->hi : NAN};
  case PB_SINT_CLO: return (union pb_cell){.x = cl->lo};
  case PB_SINT_CHI: return (union pb_cell){.x = cl->hi};
  case PB_SINT_KEPT: return (union pb_cell){.x = r->class_cells};
  default: { /* "est [group] {class}" */
    size_t n = (size_t)snprintf(p, PB_SCREEN_IV_TEXT, "%+.3f", g ? g->est : NAN);
    if (g && g->n_draws) n += (size_t)snprintf(p + n, PB_SCREEN_IV_TEXT - n, " [%+.3f, %+.3f]", g->lo, g->hi);
    if (r->has_cl) snprintf(p + n, PB_SCREEN_IV_TEXT - n, " {%+.3f, %+.3f}", cl->lo, cl->hi);
    return (union pb_cell){.s = p};
  }
  }
}

#define PB_SINT_TSV(name, sl, k) {name, PB_COL_NUM, 3, .slot = sl, .arg = k, .side = PB_COL_TSV_ONLY}
#define PB_SINT_METRIC(name, mdname, k)                                                             \
  PB_SINT_TSV(name, PB_SINT_EST, k), PB_SINT_TSV(name "_group_lo", PB_SINT_GLO, k),                 \
      PB_SINT_TSV(name "_group_hi", PB_SINT_GHI, k), PB_SINT_TSV(name "_class_lo", PB_SINT_CLO, k), \
      PB_SINT_TSV(name "_class_hi", PB_SINT_CHI, k),                                                \
      {mdname, PB_COL_STR, .slot = PB_SINT_MD, .arg = k, .side = PB_COL_MD_ONLY}
static const struct pb_column pb_sint__cols[] = {
  {"source", PB_COL_STR, .slot = PB_SINT_STR, .arg = 0},
  {"tier", PB_COL_STR, .slot = PB_SINT_STR, .arg = 1},
  {"contrast", PB_COL_STR, .slot = PB_SINT_STR, .arg = 2},
  {"cells", PB_COL_INT, .slot = PB_SINT_CELLS},
  PB_SINT_METRIC("auroc", "AUROC", 0),
  PB_SINT_METRIC("cov_q10", "coverage 10%", 1),
  PB_SINT_METRIC("cov_q20", "coverage 20%", 2),
  PB_SINT_METRIC("cov_q30", "coverage 30%", 3),
  {"class_cells", PB_COL_NUM, 1, .slot = PB_SINT_KEPT, .md = "class cells"},
  {NULL}};

/* The contrasts of (target, tier) row @p row, a table row each. */
static void pb_sint__rows(const struct pb_screen_rep_in *in, int32_t row, const struct pb_table_spec *spec,
                          struct pb_table *t)
{
  const struct pb_screen_boot *B = in->B;
  const struct pb_screen_rows *D = &in->I->diff;
  const int32_t tg = row / PB_SB_NROWS_PER_TARGET, tier = row % PB_SB_NROWS_PER_TARGET - 1;
  double retained = 0;
  for (int64_t b = 0; b < B->draws; b++) retained += (double)B->cells[(size_t)row * (size_t)B->draws + (size_t)b];
  for (int c = 0; c < PB_SB_NCON; c++) {
    char name[64];
    snprintf(name, sizeof name, "%s-%s", in->L->row_names[pb_screen_boot_base[c]],
             in->L->row_names[pb_screen_boot_contrast[c]]);
    char text[PB_SCREEN_IV_TEXT];
    struct pb_sint__row r = {.str = {in->meta->sources[in->targets[tg]].name, tier < 0 ? "all tiers" : pb_protocol_tier_name(tier),
                                     name},
                             .cells = D->cells[row],
                             .has_g = in->opt->group_draws > 0,
                             .has_cl = B->draws > 0 && c < PB_SB_NCLASSCON,
                             .text = text};
    for (int k = 0; k < PB_SB_NMET; k++) {
      r.g[k] = *pb_screen_rows_iv(D, row, c * PB_SB_NMET + k);
      r.cl[k] = (struct pb_interval){NAN, NAN, NAN, 0};
      if (r.has_cl) pb_screen_boot_class_interval(B, row, c * PB_SB_NMET + k, &r.cl[k]);
    }
    r.class_cells = r.has_cl ? retained / (double)B->draws : NAN;
    pb_table_row(t, spec, pb_sint__cell, &r);
  }
}

/* Figures 2(b) and 3(b): the U - S gap in AUROC and in coverage at 20% by
 * target and tier, with the 95% model-group and class-bootstrap intervals
 * (missing intervals are left out of the plot, the estimate always shown). */
static int pb_sint__gap_figures(const struct pb_screen_rep_in *in, struct pb_text *md)
{
  static const struct pb_figure figs[2] = {
      {"figure2b_auroc_gap", "AUROC gain of U over clean confidence S with 95% intervals (seed Figure 2b)",
       "target source and development tier", "AUROC difference U - S", NULL},
      {"figure3b_coverage_gap", "Failure coverage gain of U over S at a 20% budget with 95% intervals (seed Figure 3)",
       "target source and development tier", "coverage difference U - S (share of failures)", NULL}};
  static const int met[2] = {0, 2}; /* auroc, cov_q20 */
  const char *script = "set xtics rotate by -35 scale 0\nset offsets 0.5, 0.5, 0, 0\nset key outside right top\n"
                       "plot DATA using 0:2:xtic(1) with points pt 7 ps 1.5 lc rgb 'black' title 'U - S (cell mean)', "
                       "DATA using ($0-0.12):2:3:4 with yerrorbars pt 7 lw 2 lc 1 title '95% model-group interval', "
                       "DATA using ($0+0.12):2:5:6 with yerrorbars pt 6 lw 2 lc 2 title '95% class interval', "
                       "0 with lines dt 2 lc rgb 'gray40' title 'no gain'";
  const struct pb_screen_rows *D = &in->I->diff;
  const int32_t nr = in->n_targets * PB_SB_NROWS_PER_TARGET;
  int status = PB_OK;
  for (int f = 0; f < 2 && status == PB_OK; f++) {
    const struct pb_column cols[] = {
      {"source and tier", PB_COL_STR, .slot = PB_SIV_STR, .arg = 0},
      {"U-S", PB_COL_NUM, 3, .slot = PB_SIV_EST},
      {"group_lo", PB_COL_NUM, 3, .slot = PB_SIV_LO},
      {"group_hi", PB_COL_NUM, 3, .slot = PB_SIV_HI},
      {"class_lo", PB_COL_NUM, 3, .slot = PB_SIV_CLASS_LO, .arg = met[f]},
      {"class_hi", PB_COL_NUM, 3, .slot = PB_SIV_CLASS_HI, .arg = met[f]},
      {NULL}};
    struct pb_figure fig = figs[f];
    fig.script = script;
    const struct pb_table_spec spec = {fig.title, "", cols};
    struct pb_table t = {{0}, {0}};
    char label[300];
    pb_table_open(&t, &spec);
    for (int32_t row = 0; row < nr; row++) {
      if (D->cells[row] == 0) continue;
      const int32_t tier = row % PB_SB_NROWS_PER_TARGET - 1;
      snprintf(label, sizeof label, "%s %s", in->meta->sources[in->targets[row / PB_SB_NROWS_PER_TARGET]].name,
               tier < 0 ? "all tiers" : pb_protocol_tier_name(tier));
      const struct pb_screen_ivrow r = {{label}, D->cells[row], pb_screen_rows_iv(D, row, met[f]),
                                        in->opt->group_draws, in->B, row, PB_SR_S, NULL};
      pb_table_row(&t, &spec, pb_screen_iv_cell, &r);
    }
    status = pb_screen_figure(in->res, &fig, &t, 1, md);
  }
  return status;
}

/* Tercile gaps (by target, all tiers) and U - U_<set> (by target and tier) with model-group intervals. */
static int pb_sint__more(const struct pb_screen_rep_in *in, struct pb_text *md)
{
  static const char *const strata[PB_SCREEN_STRATA] = {"low S", "mid S", "high S"};
  static const struct pb_column cols[] = {
    {"source", PB_COL_STR, .slot = PB_SIV_STR, .arg = 0},    {"tier", PB_COL_STR, .slot = PB_SIV_STR, .arg = 1},
    {"statistic", PB_COL_STR, .slot = PB_SIV_STR, .arg = 2}, {"cells", PB_COL_INT, .slot = PB_SIV_CELLS},
    {"value", PB_COL_NUM, 3, .slot = PB_SIV_EST},            {"group_lo", PB_COL_NUM, 3, .slot = PB_SIV_LO},
    {"group_hi", PB_COL_NUM, 3, .slot = PB_SIV_HI},          {NULL}};
  const struct pb_screen_rows *M = &in->I->more;
  const struct pb_screen_layout *L = in->L;
  const int32_t ne = M->n_stat, nr = in->n_targets * PB_SB_NROWS_PER_TARGET;
  char note[400];
  snprintf(note, sizeof note, "Cell means with 95%% model-group intervals (%lld draws): the Table 27 gap (AUROC of U "
           "minus its derangement control on the non-singleton images, within terciles of clean confidence S) and, "
           "for each extra probe set, U - U_set in AUROC and in coverage at 20%% (Tables 29, 31, 37 with a TTA set).",
           (long long)in->opt->group_draws);
  const struct pb_table_spec spec = {"Tercile gaps and probe-set contrasts with intervals (seed Tables 27, 29, 31, 37)",
                                     note, cols};
  struct pb_table t = {{0}, {0}};
  pb_table_open(&t, &spec);
  for (int32_t row = 0; row < nr; row++) {
    if (M->cells[row] == 0) continue;
    const int32_t tg = row / PB_SB_NROWS_PER_TARGET, tier = row % PB_SB_NROWS_PER_TARGET - 1;
    for (int e = 0; e < ne; e++) {
      if (e < PB_SCREEN_STRATA && tier >= 0) continue; /* terciles pool all conditions of a source */
      char name[160];
      if (e < PB_SCREEN_STRATA) snprintf(name, sizeof name, "gap U-U_derange (%s)", strata[e]);
      else snprintf(name, sizeof name, "U-U_%s %s", L->extra_names[(e - PB_SCREEN_STRATA) / 2],
                    (e - PB_SCREEN_STRATA) % 2 ? "cov_q20" : "auroc");
      const struct pb_screen_ivrow r = {.str = {in->meta->sources[in->targets[tg]].name,
                                                tier < 0 ? "all tiers" : pb_protocol_tier_name(tier), name},
                                        .cells = M->cells[row],
                                        .iv = pb_screen_rows_iv(M, row, e),
                                        .draws = in->opt->group_draws};
      pb_table_row(&t, &spec, pb_screen_iv_cell, &r);
    }
  }
  return pb_table_flush(&t, in->res, "screen_intervals_more.tsv", md);
}

int pb_screen_interval_report(const struct pb_screen_rep_in *in, struct pb_text *md)
{
  const struct pb_screen_rows *D = &in->I->diff;
  if (!D->cells) return PB_OK;
  char note[800];
  snprintf(note, sizeof note,
           "Cell means of the per-cell paired differences (cells weighted equally); [lo, hi]: 95%% model-group "
           "bootstrap (%lld draws); {lo, hi}: 95%% class bootstrap (%lld draws, one class draw per source shared by "
           "its cells, class-weighted AUROC and prorated coverage, cells without both outcomes skipped; "
           "class_cells = mean cells retained). " PB_SCREEN_A3_NOTE,
           (long long)in->opt->group_draws, (long long)in->B->draws);
  const struct pb_table_spec spec = {"Paired differences with intervals (seed Tables 16, 17, 19, 20, 25, 26, 34, 35, 38)",
                                     note, pb_sint__cols};
  struct pb_table t = {{0}, {0}};
  pb_table_open(&t, &spec);
  for (int32_t row = 0; row < in->n_targets * PB_SB_NROWS_PER_TARGET; row++)
    if (D->cells[row] > 0) pb_sint__rows(in, row, &spec, &t);
  int status = pb_table_flush(&t, in->res, "screen_intervals.tsv", md);
  if (status == PB_OK) status = pb_sint__gap_figures(in, md);
  if (status == PB_OK && in->I->more.cells) status = pb_sint__more(in, md);
  return status;
}
