/* fragility.md's sections of the arms' diagnostics (seed 001 K, U.3, J.2;
 * docs/fragility.md) and their summary TSVs, on rank 0 from the totals of
 * fragility_stage_diag.c. */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_sort.h>

#include "pairbound/error.h"
#include "pairbound/agg.h"
#include "pairbound/draws.h"
#include "pairbound/fragility.h"
#include "pairbound/protocol.h"
#include "pairbound/results.h"
#include "pairbound/table.h"
#include "pairbound/text.h"
#include "fragility_internal.h"

/* A row: source and arm, then counts n[] and values x[] (a column's .arg says which, .slot which one). */
struct pb_fragility__drow {
  const char *key[3];
  const int64_t *n;
  const double *x;
};
enum { PB_FDG__KEY, PB_FDG__N, PB_FDG__X };

static union pb_cell pb_fragility__dcell(const void *ctx, const struct pb_column *c)
{
  const struct pb_fragility__drow *r = ctx;
  if (c->arg == PB_FDG__KEY) return (union pb_cell){.s = r->key[c->slot]};
  if (c->arg == PB_FDG__N) return (union pb_cell){.i = r->n[c->slot]};
  return (union pb_cell){.x = r->x[c->slot]};
}
#define PB_FDG__COL_KEY(name, k) {name, PB_COL_STR, .slot = k, .arg = PB_FDG__KEY}
#define PB_FDG__COL_N(name, i) {name, PB_COL_INT, .slot = i, .arg = PB_FDG__N}
#define PB_FDG__COL_X(name, d, i) {name, PB_COL_NUM, d, .slot = i, .arg = PB_FDG__X}

static void pb_fragility__sel_table(const struct pb_fragility_out *out, const struct pb_fragility_sum *S,
                                    struct pb_table *tb)
{
  static const struct pb_column cols[] = {
    PB_FDG__COL_KEY("source", 0), PB_FDG__COL_KEY("arm", 1), PB_FDG__COL_N("cells", 0), PB_FDG__COL_N("above_envelope", 1),
    PB_FDG__COL_X("median_excess", 6, 0), PB_FDG__COL_X("median_excess_over_envelope", 4, 1),
    {"max_identity_error", PB_COL_NUM, 0, .slot = 2, .arg = PB_FDG__X, .side = PB_COL_TSV_ONLY}, {NULL}};
  static const struct pb_table_spec spec = {
    "Selective-risk transport realised on part E (Appendix K)",
    "Per model, coverage 0.8 and 0.9 and grid radius: the downward optimiser of every accepted bin, fitted on the "
    "rate part, reweights part E; cells: those with a realised accepted-set risk increase; above_envelope: "
    "realised increase > the rate part's envelope sum_acc w Phi_down / W; medians over those; identity error: "
    "realised increase against the transport identity (report/fragility_selective.tsv).", cols};
  pb_table_open(tb, &spec);
  for (int32_t s = 0; s < out->meta->n_sources; s++)
    for (int a = 0; a < 2; a++) {
      const struct pb_fragility__drow row = {{out->meta->sources[s].name, a == 0 ? "A" : "B", NULL},
                                             S->sel_n + ((size_t)s * 2 + a) * 2, S->sel_x + ((size_t)s * 2 + a) * 3};
      pb_table_row(tb, &spec, pb_fragility__dcell, &row);
    }
}

static void pb_fragility__merge_table(const struct pb_fragility_out *out, const struct pb_fragility_sum *S,
                                      struct pb_table *tb)
{
  static const struct pb_column cols[] = {
    PB_FDG__COL_KEY("source", 0), PB_FDG__COL_KEY("arm", 1), PB_FDG__COL_N("groups_per_bin", 0), PB_FDG__COL_N("models", 1),
    PB_FDG__COL_X("FAUC_up", 4, 0), PB_FDG__COL_X("FAUC_share", 3, 1), PB_FDG__COL_X("G_R", 5, 2),
    PB_FDG__COL_X("G_R_corrected", 5, 3), PB_FDG__COL_X("rise_surviving_correction", 3, 4), {NULL}};
  static const struct pb_table_spec spec = {
    "Nested merges of the readout (Appendix U.3; medians over models)",
    "Adjacent quantile groups of every bin merged pairwise on the frozen bins, rate counts and masses; "
    "FAUC_share: FAUC_up over the unmerged readout's; rise_surviving_correction: (G_R_corrected at all groups - "
    "at this level) / (G_R at all groups - at this level) (report/fragility_merges.tsv).", cols};
  const int32_t levels = pb_fragility_merge_levels(out->opt->n_groups);
  pb_table_open(tb, &spec);
  for (int32_t s = 0; s < out->meta->n_sources; s++)
    for (int a = 0; a < 2; a++)
      for (int32_t j = 0; j < levels; j++) {
        const int64_t n[2] = {((out->opt->n_groups - 1) >> j) + 1, out->meta->n_models};
        const struct pb_fragility__drow row = {
          {out->meta->sources[s].name, a == 0 ? "A" : "B", NULL}, n,
          S->merge + (((size_t)s * 2 + a) * PB_FRAGILITY_MERGES + (size_t)j) * 5};
        pb_table_row(tb, &spec, pb_fragility__dcell, &row);
      }
}

static void pb_fragility__score_table(const struct pb_fragility_out *out, const struct pb_fragility_sum *S,
                                      struct pb_table *tb)
{
  static const struct pb_column cols[] = {
    PB_FDG__COL_KEY("source", 0), PB_FDG__COL_KEY("arm", 1), PB_FDG__COL_N("models", 0),
    PB_FDG__COL_X("score_only_FAUC_up", 4, 0), PB_FDG__COL_X("readout_FAUC_up", 4, 1),
    PB_FDG__COL_X("median_ratio", 3, 2), PB_FDG__COL_X("min_ratio", 3, 3), PB_FDG__COL_X("max_ratio", 3, 4), {NULL}};
  static const struct pb_table_spec spec = {
    "Score-only comparator (Appendix J.2; medians over models)",
    "Within each bin the same number of quantile groups of the confidence instead of the group signal, fitted "
    "and rated on the same parts; ratio = readout FAUC_up / score-only FAUC_up. The two partitions are not "
    "nested: a comparison, neither a floor nor a bound (report/fragility_score_only.tsv).", cols};
  pb_table_open(tb, &spec);
  for (int32_t s = 0; s < out->meta->n_sources; s++)
    for (int a = 0; a < 2; a++) {
      const int64_t n[1] = {out->meta->n_models};
      const struct pb_fragility__drow row = {{out->meta->sources[s].name, a == 0 ? "A" : "B", NULL}, n,
                                             S->score + ((size_t)s * 2 + a) * 5};
      pb_table_row(tb, &spec, pb_fragility__dcell, &row);
    }
}

/* The flagged-bin check per source and tier row (as the drift table's rows); x = the three means. */
static void pb_fragility__flag_table(const struct pb_fragility_out *out, const struct pb_fragility_sum *S,
                                     struct pb_table *tb)
{
  static const struct pb_column cols[] = {
    PB_FDG__COL_KEY("source", 0), PB_FDG__COL_KEY("tier", 1), PB_FDG__COL_N("cells", 0),
    PB_FDG__COL_X("mean_mass_kept", 3, 0), PB_FDG__COL_X("mean_ratio", 4, 1), PB_FDG__COL_X("mean_ratio_kept", 4, 2),
    PB_FDG__COL_N("cond_above_comp", 1), PB_FDG__COL_N("cond_above_comp_kept", 2), {NULL}};
  char note[512];
  snprintf(note, sizeof note,
           "Post-hoc higher-count-bin check (Appendix L): bins where a group has fewer than %d source or target images "
           "are excluded and the norms recomputed over the kept bins; mass_kept: target mass in the kept bins; "
           "cond_above_comp: cells with L_cond > L_comp over all bins, and over the kept ones. It changes the "
           "estimand and carries no interval (report/fragility_drift_flagged.tsv).", PB_FRAGILITY_FLAG_MIN);
  const struct pb_table_spec spec = {"Drift split without flagged low-count bins (Table 2's check)", note, cols};
  const struct pb_meta *meta = out->meta;
  pb_table_open(tb, &spec);
  for (int32_t s = 0; s < meta->n_sources; s++)
    for (int ti = 0; ti < PB_FRAGILITY_NTIER; ti++) {
      const int64_t key = (int64_t)s * PB_FRAGILITY_NTIER + ti, *k = S->fk + key * 3;
      if (k[0] == 0) continue;
      const double x[3] = {pb_agg_mean(&S->fm, key * 3), pb_agg_mean(&S->fm, key * 3 + 1),
                           pb_agg_mean(&S->fm, key * 3 + 2)};
      const struct pb_fragility__drow row = {
        {meta->sources[s].name, ti == 0 ? "all" : ti == 1 ? "none" : pb_protocol_tier_name(ti - 2), NULL}, k, x};
      pb_table_row(tb, &spec, pb_fragility__dcell, &row);
    }
}

/* One source and arm's metrics over the models: ece, gr, fauc (M each, model order). */
static void pb_fragility__metrics_of(const struct pb_fragility_out *out, const struct pb_fragility_sum *S, int32_t s,
                                     int a, double *ece, double *gr, double *fauc)
{
  const int32_t M = out->meta->n_models;
  for (int32_t m = 0; m < M; m++) {
    const double *x = S->metric + (((size_t)s * M + (size_t)m) * 2 + (size_t)a) * 6;
    ece[m] = x[0], gr[m] = x[1], fauc[m] = x[2];
  }
}

/* A row of the similar-ECE pair list. */
struct pb_fragility__pair_row {
  const char *source, *arm, *model_a, *model_b;
  double ece_a, ece_b, d_fauc, d_gr;
  int64_t concordant;
};

/* Table 13 (S): Spearman of the source metrics over the models; Table 16 (T): similar-ECE pairs, counted
 * here and listed in fragility_ece_pairs.tsv (rank 0). */
static int pb_fragility__metric_tables(struct pb_results *res, const struct pb_fragility_out *out,
                                       const struct pb_fragility_sum *S, struct pb_table *tb, struct pb_text *md)
{
  static const struct pb_column cols[] = {
    PB_FDG__COL_KEY("source", 0), PB_FDG__COL_KEY("arm", 1), PB_FDG__COL_N("models", 0),
    PB_FDG__COL_X("spearman_ece_G_R", 3, 0), PB_FDG__COL_X("spearman_ece_FAUC", 3, 1),
    PB_FDG__COL_X("spearman_G_R_FAUC", 3, 2), PB_FDG__COL_N("ece_pairs", 1), PB_FDG__COL_N("pairs_same_sign", 2), {NULL}};
  char note[640];
  snprintf(note, sizeof note,
           "Across the source's models (one state per model): Spearman correlations of ECE, G_R and FAUC_up (Table "
           "13); ece_pairs: model pairs with |ECE difference| <= %g (our tolerance), pairs_same_sign: those whose "
           "FAUC_up difference has the sign of their G_R difference (Table 16; every pair in "
           "report/fragility_ece_pairs.tsv).", PB_FRAGILITY_ECE_TOL);
  const struct pb_table_spec spec = {"Source metrics across models (Appendices S and T)", note, cols};
#define P(name, member, fmt) {name, fmt, 6, .slot = offsetof(struct pb_fragility__pair_row, member)}
  static const struct pb_column pcols[] = {
    P("source", source, PB_COL_STR), P("arm", arm, PB_COL_STR), P("model_a", model_a, PB_COL_STR),
    P("model_b", model_b, PB_COL_STR), P("ece_a", ece_a, PB_COL_NUM), P("ece_b", ece_b, PB_COL_NUM),
    P("FAUC_up_b_minus_a", d_fauc, PB_COL_NUM), P("G_R_b_minus_a", d_gr, PB_COL_NUM),
    P("same_sign", concordant, PB_COL_INT), {NULL}};
#undef P
  static const struct pb_table_spec pspec = {NULL, NULL, pcols};
  const struct pb_meta *meta = out->meta;
  const int32_t M = meta->n_models;
  double *v = pb_malloc((size_t)(M > 0 ? M : 1) * 3 * sizeof *v), *ece = v, *gr = v + M, *fauc = v + 2 * M;
  const size_t np = (size_t)M * (M > 1 ? M - 1 : 1) / 2 + 1;
  int32_t *pi = pb_malloc(np * sizeof *pi), *pj = pb_malloc(np * sizeof *pj);
  struct pb_text list = {0};
  pb_table_tsv_open(&list, &pspec);
  pb_table_open(tb, &spec);
  for (int32_t s = 0; s < meta->n_sources; s++)
    for (int a = 0; a < 2; a++) {
      pb_fragility__metrics_of(out, S, s, a, ece, gr, fauc);
      double x[3];
      int64_t n[3] = {pb_fragility_metric_spearman(M, ece, gr, fauc, x), 0, 0};
      n[1] = pb_fragility_ece_pairs(M, ece, gr, fauc, PB_FRAGILITY_ECE_TOL, pi, pj);
      for (int64_t k = 0; k < n[1]; k++) {
        const double df = fauc[pj[k]] - fauc[pi[k]], dg = gr[pj[k]] - gr[pi[k]];
        const int64_t same = (df > 0) - (df < 0) == (dg > 0) - (dg < 0);
        n[2] += same;
        const struct pb_fragility__pair_row row = {meta->sources[s].name, a == 0 ? "A" : "B", meta->model_ids[pi[k]],
                                                   meta->model_ids[pj[k]], ece[pi[k]], ece[pj[k]], df, dg, same};
        pb_table_tsv_row(&list, &pspec, pb_table_member, &row);
      }
      const struct pb_fragility__drow row = {{meta->sources[s].name, a == 0 ? "A" : "B", NULL}, n, x};
      pb_table_row(tb, &spec, pb_fragility__dcell, &row);
    }
  int status = pb_table_flush(tb, res, "fragility_metric_spearman.tsv", md);
  const int ls = pb_results_write_report(res, "fragility_ece_pairs.tsv", list.buf, list.len);
  pb_text_free(&list);
  free(v), free(pi), free(pj);
  return status != PB_OK ? status : ls;
}

/* A row of the random shifts' radius table. */
struct pb_fragility__radius_row {
  const char *source, *arm;
  double rho, share;
  int64_t cells, above;
};

/* R.1 and T: the random shifts per source and arm, and (TSV only) their share above the profile per radius. */
static int pb_fragility__random_tables(struct pb_results *res, const struct pb_fragility_out *out,
                                       const struct pb_fragility_sum *S, struct pb_table *tb, struct pb_text *md)
{
  static const struct pb_column cols[] = {
    PB_FDG__COL_KEY("source", 0), PB_FDG__COL_KEY("arm", 1), PB_FDG__COL_N("cells", 0), PB_FDG__COL_N("above_profile", 1),
    PB_FDG__COL_X("share_above", 4, 0), PB_FDG__COL_X("mean_excess", 3, 1), PB_FDG__COL_X("median_spearman", 3, 2),
    PB_FDG__COL_X("median_null_spearman", 3, 3), {NULL}};
  char note[768];
  snprintf(note, sizeof note,
           "Per model, bin and grid radius, %d random reweightings of the rate part's groups within the budget, "
           "applied to part E; a cell's movement is their median |held-out reliability change|, its profile the "
           "two-sided plug-in max(Phi_up, Phi_down). share_above: cells whose movement / profile exceeds 1; "
           "mean_excess: the mean of that ratio - 1 over them; spearman: profile vs movement over a model's cells "
           "(median over models); null: the same with both roles' labels permuted within bins (%d permutations, "
           "median per model, then over models). Random shifts are not natural shifts "
           "(report/fragility_random.tsv, fragility_random_radius.tsv).", PB_FRAGILITY_RANDOM_DRAWS, PB_FRAGILITY_RANDOM_NULL);
  const struct pb_table_spec spec = {"Random score-preserving shifts (Appendices R.1 and T)", note, cols};
#define Q(name, member, fmt) {name, fmt, 6, .slot = offsetof(struct pb_fragility__radius_row, member)}
  static const struct pb_column rcols[] = {
    Q("source", source, PB_COL_STR), Q("arm", arm, PB_COL_STR), Q("rho", rho, PB_COL_NUM), Q("cells", cells, PB_COL_INT),
    Q("above_profile", above, PB_COL_INT), Q("share_above", share, PB_COL_NUM), {NULL}};
#undef Q
  static const struct pb_table_spec rspec = {NULL, NULL, rcols};
  const int32_t G = out->opt->n_grid, w = 2 + 2 * G;
  struct pb_text list = {0};
  pb_table_tsv_open(&list, &rspec);
  pb_table_open(tb, &spec);
  for (int32_t s = 0; s < out->meta->n_sources; s++)
    for (int a = 0; a < 2; a++) {
      const int64_t *k = S->rnd_n + ((size_t)s * 2 + a) * w;
      const double *med = S->rnd_med + ((size_t)s * 2 + a) * 2;
      const double x[4] = {k[0] > 0 ? (double)k[1] / (double)k[0] : NAN,
                           k[1] > 0 ? pb_agg_sum(&S->rnd_x, (int64_t)s * 2 + a) / (double)k[1] : NAN, med[0], med[1]};
      const struct pb_fragility__drow row = {{out->meta->sources[s].name, a == 0 ? "A" : "B", NULL}, k, x};
      pb_table_row(tb, &spec, pb_fragility__dcell, &row);
      for (int32_t j = 0; j < G; j++) {
        const int64_t c = k[2 + 2 * j], ab = k[3 + 2 * j];
        const struct pb_fragility__radius_row r = {out->meta->sources[s].name, a == 0 ? "A" : "B",
                                                   pb_fragility_grid(out->opt, j), c > 0 ? (double)ab / (double)c : NAN,
                                                   c, ab};
        pb_table_tsv_row(&list, &rspec, pb_table_member, &r);
      }
    }
  int status = pb_table_flush(tb, res, "fragility_random_summary.tsv", md);
  const int ls = pb_results_write_report(res, "fragility_random_radius.tsv", list.buf, list.len);
  pb_text_free(&list);
  return status != PB_OK ? status : ls;
}

/* The median of the finite values of @p v[0..n) (sorted in place), as pb_agg_select_quantile gives. */
static double pb_fragility__median(double *v, int32_t n)
{
  int32_t m = 0;
  for (int32_t i = 0; i < n; i++)
    if (isfinite(v[i])) v[m++] = v[i];
  gsl_sort(v, 1, (size_t)m);
  return pb_resample_percentile_sorted(v, m, 0.5);
}

/* A row of the variance-law integrals per model. */
struct pb_fragility__auc_row {
  const char *model, *source, *arm;
  double fauc, var, cap, var_factor, cap_factor;
};

/* Table 18 (T): the integrals over log rho of the variance law, the capped law and the plug-in profile
 * (FAUC_up) per model, and per source and arm their medians, the medians of the factors against FAUC_up
 * and the Spearman of each integral with FAUC_up across models (rank 0). */
static int pb_fragility__auc_tables(struct pb_results *res, const struct pb_fragility_out *out,
                                    const struct pb_fragility_sum *S, struct pb_table *tb, struct pb_text *md)
{
  static const struct pb_column cols[] = {
    PB_FDG__COL_KEY("source", 0), PB_FDG__COL_KEY("arm", 1), PB_FDG__COL_N("models", 0), PB_FDG__COL_X("FAUC_up", 4, 0),
    PB_FDG__COL_X("var_law_auc", 4, 1), PB_FDG__COL_X("capped_law_auc", 4, 2), PB_FDG__COL_X("var_factor", 3, 3),
    PB_FDG__COL_X("capped_factor", 3, 4), PB_FDG__COL_X("spearman_var_FAUC", 3, 5),
    PB_FDG__COL_X("spearman_capped_FAUC", 3, 6), {NULL}};
  static const struct pb_table_spec spec = {
    "Variance-law baselines against FAUC (Appendix T, Table 18; medians over models)",
    "Integrals over log rho on the FAUC grid (trapezoids, not normalised) of the variance law sum_b w_b sqrt(rho "
    "G_b), the capped law sum_b w_b min(sqrt(rho G_b), upward saturation value) and the plug-in profile (FAUC_up); "
    "factors: a model's integral over its FAUC_up (median over models); spearman: each integral against FAUC_up "
    "across models (report/fragility_variance_auc.tsv).", cols};
#define A(name, member, fmt) {name, fmt, 6, .slot = offsetof(struct pb_fragility__auc_row, member)}
  static const struct pb_column pcols[] = {
    A("model", model, PB_COL_STR), A("source", source, PB_COL_STR), A("arm", arm, PB_COL_STR),
    A("FAUC_up", fauc, PB_COL_NUM), A("var_law_auc", var, PB_COL_NUM), A("capped_law_auc", cap, PB_COL_NUM),
    A("var_factor", var_factor, PB_COL_NUM), A("capped_factor", cap_factor, PB_COL_NUM), {NULL}};
#undef A
  static const struct pb_table_spec pspec = {NULL, NULL, pcols};
  const struct pb_meta *meta = out->meta;
  const int32_t M = meta->n_models;
  double *v = pb_malloc((size_t)(M > 0 ? M : 1) * 4 * sizeof *v), *f = v + M, *va = f + M, *ca = va + M;
  struct pb_text list = {0};
  pb_table_tsv_open(&list, &pspec);
  pb_table_open(tb, &spec);
  for (int32_t s = 0; s < meta->n_sources; s++)
    for (int a = 0; a < 2; a++) {
      double x[7];
      for (int32_t m = 0; m < M; m++) {
        const double *r = S->auc + (((size_t)s * M + (size_t)m) * 2 + (size_t)a) * PB_FRAGILITY_AUC_LEN;
        f[m] = r[PB_FRAGILITY_AUC_FAUC], va[m] = r[PB_FRAGILITY_AUC_VAR], ca[m] = r[PB_FRAGILITY_AUC_CAP];
        const struct pb_fragility__auc_row row = {meta->model_ids[m], meta->sources[s].name, a == 0 ? "A" : "B",
                                                  f[m], va[m], ca[m], va[m] / f[m], ca[m] / f[m]};
        pb_table_tsv_row(&list, &pspec, pb_table_member, &row);
      }
      double sp[3]; /* var-capped, var-FAUC, capped-FAUC */
      int64_t n[1] = {pb_fragility_metric_spearman(M, va, ca, f, sp)};
      x[5] = sp[1], x[6] = sp[2];
      const double *col[3] = {f, va, ca};
      for (int c = 0; c < 5; c++) {
        for (int32_t m = 0; m < M; m++) v[m] = c < 3 ? col[c][m] : (c == 3 ? va[m] : ca[m]) / f[m];
        x[c] = pb_fragility__median(v, M);
      }
      const struct pb_fragility__drow row = {{meta->sources[s].name, a == 0 ? "A" : "B", NULL}, n, x};
      pb_table_row(tb, &spec, pb_fragility__dcell, &row);
    }
  int status = pb_table_flush(tb, res, "fragility_variance_auc_summary.tsv", md);
  const int ls = pb_results_write_report(res, "fragility_variance_auc.tsv", list.buf, list.len);
  pb_text_free(&list);
  free(v);
  return status != PB_OK ? status : ls;
}

/* Table 9 (R.1): the random shifts' cells above the profile by quartile of G_R across a source's models
 * (rank 0). */
static int pb_fragility__quartile_table(struct pb_results *res, const struct pb_fragility_out *out,
                                        const struct pb_fragility_sum *S, struct pb_table *tb, struct pb_text *md)
{
  static const struct pb_column cols[] = {
    PB_FDG__COL_KEY("source", 0), PB_FDG__COL_KEY("arm", 1), PB_FDG__COL_N("quartile", 0), PB_FDG__COL_N("models", 1),
    PB_FDG__COL_X("G_R_min", 5, 0), PB_FDG__COL_X("G_R_max", 5, 1), PB_FDG__COL_N("cells", 2),
    PB_FDG__COL_N("above_profile", 3), PB_FDG__COL_X("share_above", 4, 2), {NULL}};
  static const struct pb_table_spec spec = {
    "Random shifts above the profile by restricted-heterogeneity quartile (Appendix R.1, Table 9)",
    "A source's models with a finite G_R ranked by it (equal values in model order), rank r of m in quartile "
    "floor(4 r / m) + 1; per quartile the models' G_R range and their random-shift cells, those whose median "
    "movement exceeds the two-sided profile and their share (report/fragility_random.tsv).", cols};
  const struct pb_meta *meta = out->meta;
  const int32_t M = meta->n_models;
  double *g = pb_malloc((size_t)(M > 0 ? M : 1) * sizeof *g);
  int32_t *q = pb_malloc((size_t)(M > 0 ? M : 1) * sizeof *q);
  pb_table_open(tb, &spec);
  for (int32_t s = 0; s < meta->n_sources; s++)
    for (int a = 0; a < 2; a++) {
      const double *r0 = S->auc + (size_t)s * M * 2 * PB_FRAGILITY_AUC_LEN + (size_t)a * PB_FRAGILITY_AUC_LEN;
      for (int32_t m = 0; m < M; m++) g[m] = r0[(size_t)m * 2 * PB_FRAGILITY_AUC_LEN + PB_FRAGILITY_AUC_G_R];
      pb_fragility_quartiles(M, g, q);
      for (int32_t j = 0; j < 4; j++) {
        int64_t n[4] = {j + 1, 0, 0, 0};
        double x[3] = {INFINITY, -INFINITY, NAN};
        for (int32_t m = 0; m < M; m++) {
          if (q[m] != j) continue;
          const double *r = r0 + (size_t)m * 2 * PB_FRAGILITY_AUC_LEN;
          n[1]++, n[2] += (int64_t)r[PB_FRAGILITY_AUC_CELLS], n[3] += (int64_t)r[PB_FRAGILITY_AUC_ABOVE];
          x[0] = fmin(x[0], g[m]), x[1] = fmax(x[1], g[m]);
        }
        if (n[1] == 0) continue;
        x[2] = n[2] > 0 ? (double)n[3] / (double)n[2] : NAN;
        const struct pb_fragility__drow row = {{meta->sources[s].name, a == 0 ? "A" : "B", NULL}, n, x};
        pb_table_row(tb, &spec, pb_fragility__dcell, &row);
      }
    }
  free(g);
  free(q);
  return pb_table_flush(tb, res, "fragility_random_quartiles.tsv", md);
}

/* The temperature-scaled state beside the released one per source and arm (rank 0). */
static int pb_fragility__tempered_table(struct pb_results *res, const struct pb_fragility_out *out,
                                        const struct pb_fragility_sum *S, struct pb_table *tb, struct pb_text *md)
{
  static const struct pb_column cols[] = {
    PB_FDG__COL_KEY("source", 0), PB_FDG__COL_KEY("arm", 1), PB_FDG__COL_N("models", 0),
    PB_FDG__COL_X("median_T", 3, 0), PB_FDG__COL_N("lcb_positive", 1), PB_FDG__COL_N("lcb_positive_scaled", 2),
    PB_FDG__COL_N("lcb_positive_both_arms_scaled", 3), PB_FDG__COL_X("FAUC_up", 4, 1),
    PB_FDG__COL_X("FAUC_up_scaled", 4, 2), PB_FDG__COL_X("ece_scaled", 4, 3),
    PB_FDG__COL_X("spearman_ece_FAUC", 3, 4), PB_FDG__COL_X("spearman_ece_FAUC_scaled", 3, 5), {NULL}};
  static const struct pb_table_spec spec = {
    "Temperature-scaled state (as released vs scaled; medians over models)",
    "T per model and source fitted on the clean development records (the store's split) by the negative "
    "log-likelihood of the top-k lists (the classes they miss share the remaining mass equally: approximate); "
    "the restricted profile, FAUC and lower bound recomputed on the scaled confidence, without the permutation "
    "null (report/fragility_tempered.tsv).", cols};
  const struct pb_meta *meta = out->meta;
  const int32_t M = meta->n_models;
  double *v = pb_malloc((size_t)(M > 0 ? M : 1) * 6 * sizeof *v);
  pb_table_open(tb, &spec);
  for (int32_t s = 0; s < meta->n_sources; s++)
    for (int a = 0; a < 2; a++) {
      for (int32_t m = 0; m < M; m++)
        for (int c = 0; c < 6; c++) v[(size_t)c * M + m] = S->metric[(((size_t)s * M + (size_t)m) * 2 + (size_t)a) * 6 + c];
      double r0[3], r1[3];
      pb_fragility_metric_spearman(M, v, v + M, v + 2 * M, r0);
      pb_fragility_metric_spearman(M, v + 3 * M, v + 4 * M, v + 5 * M, r1);
      const double *t = S->tmp_med + ((size_t)s * 2 + a) * 3;
      const double x[6] = {t[0], S->med[((size_t)s * 2 + a) * 6], t[2], t[1], r0[1], r1[1]};
      const int64_t n[4] = {M, S->lcb[s * 3 + a], S->tmp_lcb[s * 3 + a], S->tmp_lcb[s * 3 + 2]};
      const struct pb_fragility__drow row = {{meta->sources[s].name, a == 0 ? "A" : "B", NULL}, n, x};
      pb_table_row(tb, &spec, pb_fragility__dcell, &row);
    }
  free(v);
  return pb_table_flush(tb, res, "fragility_tempered_summary.tsv", md);
}

int pb_fragility_report_diag(struct pb_results *res, const struct pb_fragility_out *out,
                             const struct pb_fragility_sum *S, struct pb_text *md)
{
  struct pb_table tb = {{0}, {0}};
  pb_fragility__sel_table(out, S, &tb);
  int status = pb_table_flush(&tb, res, "fragility_selective_summary.tsv", md);
  double idmax = 0;
  for (int32_t i = 0; i < out->meta->n_sources * 2; i++) idmax = idmax > S->sel_x[i * 3 + 2] ? idmax : S->sel_x[i * 3 + 2];
  pb_text_printf(md, "Largest transport-identity error over every cell: %.3g (max_identity_error).\n\n", idmax);
  if (status == PB_OK) {
    pb_fragility__merge_table(out, S, &tb);
    status = pb_table_flush(&tb, res, "fragility_merges_summary.tsv", md);
  }
  if (status == PB_OK) {
    pb_fragility__score_table(out, S, &tb);
    status = pb_table_flush(&tb, res, "fragility_score_only_summary.tsv", md);
  }
  if (status == PB_OK) {
    pb_fragility__flag_table(out, S, &tb);
    status = pb_table_flush(&tb, res, "fragility_drift_flagged_summary.tsv", md);
  }
  if (status == PB_OK) status = pb_fragility__random_tables(res, out, S, &tb, md);
  if (status == PB_OK) status = pb_fragility__quartile_table(res, out, S, &tb, md);
  if (status == PB_OK) status = pb_fragility__metric_tables(res, out, S, &tb, md);
  if (status == PB_OK) status = pb_fragility__auc_tables(res, out, S, &tb, md);
  if (status == PB_OK && out->meta->topk > 0) status = pb_fragility__tempered_table(res, out, S, &tb, md);
  pb_text_free(&tb.tsv);
  pb_text_free(&tb.md);
  return status;
}
