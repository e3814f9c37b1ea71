/* Report of `pairbound fragility`: report/fragility.tsv, fragility_drift.tsv
 * (each rank writes its own units' rows), fragility.md with the profile and
 * drift-decomposition figures (rank 0, from totals, medians by selection and
 * correlations computed where the data of a condition meet: no rank holds
 * another rank's records). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#include "pairbound/agg.h"
#include "pairbound/error.h"
#include "pairbound/fields.h"
#include "pairbound/figure.h"
#include "pairbound/fragility.h"
#include "pairbound/results.h"
#include "pairbound/text.h"
#include "fragility_internal.h"

/* report/fragility.tsv: one row per model, source and arm; each rank its own units (collective). */
static int pb_fragility__arm_tsv(struct pb_results *res, const struct pb_fragility_out *out)
{
  const struct pb_meta *meta = out->meta;
  struct pb_text h = {0}, t = {0};
  pb_fields_tsv_header(out->arm_fields, "model\tsource\tarm", 0, &h);
  pb_text_printf(&h, "\n");
  for (int64_t u = out->u0; u < out->u0 + out->nu; u++)
    for (int a = 0; a < 2; a++) {
      const double *r = out->arms + ((size_t)(u - out->u0) * 2 + a) * out->arm_len;
      pb_text_printf(&t, "%s\t%s\t%s", meta->model_ids[u % meta->n_models], meta->sources[u / meta->n_models].name,
                     a == 0 ? "A" : "B");
      pb_fields_tsv_values(out->arm_fields, r, 0, &t);
      pb_text_printf(&t, "\n");
    }
  int status = pb_results_tsv(res, "fragility.tsv", h.buf, t.buf, t.len);
  pb_text_free(&h);
  pb_text_free(&t);
  return status;
}

/* report/fragility_drift.tsv: one row per model x perturbed condition; each rank its own units (collective). */
static int pb_fragility__drift_tsv(struct pb_results *res, const struct pb_fragility_out *out)
{
  const struct pb_meta *meta = out->meta;
  struct pb_text h = {0}, t = {0};
  pb_fields_tsv_header(&pb_fragility_drift_fields, "model\tsource\tcondition\ttier", 0, &h);
  pb_text_printf(&h, "\n");
  for (int64_t u = out->u0; u < out->u0 + out->nu; u++) {
    int32_t s = (int32_t)(u / meta->n_models);
    const struct pb_source *S = &meta->sources[s];
    int64_t d = out->drift0[u];
    for (int32_t c = 0; c < S->n_conditions; c++) {
      if (c == S->clean) continue;
      const double *r = out->drift + (size_t)(d++ - out->d0) * PB_FD_FIXED;
      int tier = out->tier[s][c];
      pb_text_printf(&t, "%s\t%s\t%s\t%s", meta->model_ids[u % meta->n_models], S->name, S->conditions[c],
                     tier >= 0 ? pb_protocol_tier_name(tier) : "none");
      pb_fields_tsv_values(&pb_fragility_drift_fields, r, 0, &t);
      pb_text_printf(&t, "\n");
    }
  }
  int status = pb_results_tsv(res, "fragility_drift.tsv", h.buf, t.buf, t.len);
  pb_text_free(&h);
  pb_text_free(&t);
  return status;
}

/* Tier rows of the drift table: all tiers, none, mild, severe, extreme (tier + 2). */
#define PB_FR__NTIER (PB_TIER_EXTREME + 3)
/* The source table's medians over models, per (source, arm): FAUC_up,
 * FAUC_down, G_R, G_R_corrected, held-out and null-median agreement. */
static const int pb_fragility__med_cols[6] = {PB_FA_FAUC_UP, PB_FA_FAUC_DOWN, PB_FA_G_R, PB_FA_G_R_CORR,
                                               PB_FA_AGREE, PB_FA_NULL_MEDIAN};

/* What the tables print, from every rank's units (on rank 0; the medians on every rank). */
struct pb_fragility__sum {
  double *med;        /* [source][arm][6] medians over models (NaN left out) */
  int64_t *lcb;       /* [source][3]: models with LCB > 0 on arm A, on arm B, on both */
  struct pb_agg dm;   /* [source][tier row][4] ratio, L_comp, L_cond, L_total */
  int64_t *dk;        /* [source][tier row][3] cells, utilisation bins, undefined bins */
  double *dmax;       /* [source][tier row] largest additivity residual (from 0) */
  double *dutil;      /* [source][tier row] median utilisation over cells */
  struct pb_agg sp;   /* [source][2] Spearman (FAUC, ECE) over the conditions where finite */
  int32_t pick[3], n_pick;  /* profile models: lowest, median, highest FAUC_up of source 0, arm A */
  double *prof;       /* [n_pick][3 n_grid] their profiles */
};

/* Medians per (source, arm) by selection over the ranks, and the LCB counts (collective). */
static void pb_fragility__arm_summary(const struct pb_fragility_out *out, struct pb_fragility__sum *S)
{
  const struct pb_meta *meta = out->meta;
  const int32_t M = meta->n_models, ns = meta->n_sources;
  double *v = pb_malloc((size_t)(out->nu > 0 ? out->nu : 1) * sizeof *v);
  for (int32_t s = 0; s < ns; s++)
    for (int a = 0; a < 2; a++)
      for (int c = 0; c < 6; c++) {
        int64_t n = 0;
        for (int64_t u = out->u0; u < out->u0 + out->nu; u++)
          if (u / M == s) v[n++] = out->arms[((size_t)(u - out->u0) * 2 + a) * out->arm_len + pb_fragility__med_cols[c]];
        S->med[((size_t)s * 2 + a) * 6 + c] = pb_agg_select_quantile(v, n, 0.5, out->comm);
      }
  free(v);
  for (int64_t u = out->u0; u < out->u0 + out->nu; u++) {
    const double *r = out->arms + (size_t)(u - out->u0) * 2 * out->arm_len;
    int64_t *k = S->lcb + (u / M) * 3;
    k[0] += r[PB_FA_LCB] > 0;
    k[1] += r[out->arm_len + PB_FA_LCB] > 0;
    k[2] += r[PB_FA_LCB] > 0 && r[out->arm_len + PB_FA_LCB] > 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, S->lcb, ns * 3, MPI_INT64_T, MPI_SUM, out->comm);
}

/* Drift means, counts, maxima and utilisation medians per (source, tier row) (collective). */
static int pb_fragility__drift_summary(const struct pb_fragility_out *out, struct pb_fragility__sum *S)
{
  const struct pb_meta *meta = out->meta;
  const int32_t M = meta->n_models, ns = meta->n_sources, NT = PB_FR__NTIER;
  static const int f[4] = {PB_FD_RATIO, PB_FD_L_COMP, PB_FD_L_COND, PB_FD_L_TOTAL};
  double *util = pb_malloc((size_t)(out->nd > 0 ? out->nd : 1) * sizeof *util);
  for (int32_t s = 0; s < ns; s++)
    for (int ti = 0; ti < NT; ti++) {
      const struct pb_source *src = &meta->sources[s];
      int64_t n = 0;
      const size_t key = (size_t)s * NT + ti;
      for (int64_t u = out->u0; u < out->u0 + out->nu; u++) {
        if (u / M != s) continue;
        int64_t d = out->drift0[u];
        for (int32_t c = 0; c < src->n_conditions; c++) {
          if (c == src->clean) continue;
          const double *r = out->drift + (size_t)(d++ - out->d0) * PB_FD_FIXED;
          if (ti > 0 && out->tier[s][c] != ti - 2) continue;
          for (int k = 0; k < 4; k++) pb_agg_add(&S->dm, (int64_t)key * 4 + k, r[f[k]]);
          util[n++] = r[PB_FD_UTIL];
          S->dk[key * 3 + 0]++;
          S->dk[key * 3 + 1] += (int64_t)r[PB_FD_N_UTIL];
          S->dk[key * 3 + 2] += (int64_t)r[PB_FD_N_UNDEF];
          S->dmax[key] = fmax(S->dmax[key], r[PB_FD_RESIDUAL]);
        }
      }
      S->dutil[key] = pb_agg_select_quantile(util, n, 0.5, out->comm);
    }
  free(util);
  MPI_Allreduce(MPI_IN_PLACE, S->dk, ns * NT * 3, MPI_INT64_T, MPI_SUM, out->comm);
  MPI_Allreduce(MPI_IN_PLACE, S->dmax, ns * NT, MPI_DOUBLE, MPI_MAX, out->comm);
  return pb_agg_reduce(&S->dm, out->comm, 0);
}

/* Spearman across models of arm A's FAUC_up and ECE with L_comp, per
 * (source, perturbed condition): every rank sends its units' three values to
 * the rank that owns the condition (conditions dealt round robin), which
 * computes the correlation over the models in model order; the finite ones
 * are summed exactly per source (collective, on rank 0). */
static int pb_fragility__spearman_summary(const struct pb_fragility_out *out, struct pb_fragility__sum *S)
{
  const struct pb_meta *meta = out->meta;
  const int32_t M = meta->n_models, ns = meta->n_sources;
  int rank, size;
  MPI_Comm_rank(out->comm, &rank);
  MPI_Comm_size(out->comm, &size);
  int64_t *q0 = pb_malloc((size_t)(ns + 1) * sizeof *q0); /* first (source, condition) of each source */
  q0[0] = 0;
  for (int32_t s = 0; s < ns; s++) q0[s + 1] = q0[s] + meta->sources[s].n_conditions - 1;
  int *cnt = pb_calloc((size_t)size, sizeof *cnt), *rcnt = pb_malloc((size_t)size * sizeof *rcnt);
  int *off = pb_malloc((size_t)(size + 1) * sizeof *off), *roff = pb_malloc((size_t)(size + 1) * sizeof *roff);
  for (int64_t u = out->u0; u < out->u0 + out->nu; u++)
    for (int64_t q = q0[u / M]; q < q0[u / M + 1]; q++) cnt[q % size] += 5;
  off[0] = 0;
  for (int r = 0; r < size; r++) off[r + 1] = off[r] + cnt[r];
  double *snd = pb_malloc((size_t)(off[size] > 0 ? off[size] : 1) * sizeof *snd);
  int *at = pb_malloc((size_t)size * sizeof *at);
  memcpy(at, off, (size_t)size * sizeof *at);
  for (int64_t u = out->u0; u < out->u0 + out->nu; u++) {
    const double *a = out->arms + (size_t)(u - out->u0) * 2 * out->arm_len;
    for (int64_t q = q0[u / M]; q < q0[u / M + 1]; q++) {
      const double lc = out->drift[(size_t)(out->drift0[u] + q - q0[u / M] - out->d0) * PB_FD_FIXED + PB_FD_L_COMP];
      double *x = snd + at[q % size];
      at[q % size] += 5;
      x[0] = (double)q, x[1] = (double)(u % M), x[2] = a[PB_FA_FAUC_UP], x[3] = a[PB_FA_ECE], x[4] = lc;
    }
  }
  MPI_Alltoall(cnt, 1, MPI_INT, rcnt, 1, MPI_INT, out->comm);
  roff[0] = 0;
  for (int r = 0; r < size; r++) roff[r + 1] = roff[r] + rcnt[r];
  double *rcv = pb_malloc((size_t)(roff[size] > 0 ? roff[size] : 1) * sizeof *rcv);
  MPI_Alltoallv(snd, cnt, off, MPI_DOUBLE, rcv, rcnt, roff, MPI_DOUBLE, out->comm);
  /* this rank's conditions q = rank, rank + size, ...: values by model */
  const int64_t nq = q0[ns] > rank ? (q0[ns] - rank + size - 1) / size : 0;
  double *val = pb_malloc((size_t)(nq > 0 ? nq : 1) * M * 3 * sizeof *val);
  for (int64_t i = 0; i < nq * M * 3; i++) val[i] = NAN;
  for (int i = 0; i < roff[size]; i += 5) {
    const double *x = rcv + i;
    double *v = val + (((int64_t)x[0] / size) * M + (int64_t)x[1]) * 3;
    v[0] = x[2], v[1] = x[3], v[2] = x[4];
  }
  double *xs = pb_malloc((size_t)M * 3 * sizeof *xs), *w = pb_malloc((size_t)2 * M * sizeof *w);
  for (int64_t j = 0, s = 0; j < nq; j++) {
    const int64_t q = rank + j * size;
    while (q >= q0[s + 1]) s++;
    size_t n = 0;
    for (int32_t m = 0; m < M; m++) {
      const double *v = val + (j * M + m) * 3;
      if (isnan(v[0]) || isnan(v[1]) || isnan(v[2])) continue;
      xs[n] = v[0], xs[M + n] = v[1], xs[2 * M + n++] = v[2];
    }
    if (n < 3) continue;
    const double rf = gsl_stats_spearman(xs, 1, xs + 2 * M, 1, n, w), re = gsl_stats_spearman(xs + M, 1, xs + 2 * M, 1, n, w);
    if (isfinite(rf)) pb_agg_add(&S->sp, s * 2, rf);
    if (isfinite(re)) pb_agg_add(&S->sp, s * 2 + 1, re);
  }
  free(xs), free(w), free(val), free(rcv), free(snd), free(at);
  free(cnt), free(rcnt), free(off), free(roff), free(q0);
  return pb_agg_reduce(&S->sp, out->comm, 0);
}

/* The profile figure's models: among source 0's models with FAUC_up (arm A)
 * defined, sorted by it with ties in model order, the first, the middle
 * (n / 2) and the last; and their three profiles, fetched from their ranks
 * (collective, rank 0). */
static int pb_fragility__profile_summary(const struct pb_fragility_out *out, struct pb_fragility__sum *S)
{
  const int32_t M = out->meta->n_models, G = out->opt->n_grid, len2 = 2 * out->arm_len;
  const int64_t hi = out->u0 + out->nu < M ? out->u0 + out->nu : M; /* this rank's units of source 0 */
  double *v = pb_malloc((size_t)(M > 0 ? M : 1) * sizeof *v);
  int64_t n_local = 0;
  struct pb_loc lo, top;
  pb_agg_loc_init(&lo, 1, INFINITY);
  pb_agg_loc_init(&top, 1, -INFINITY);
  for (int64_t u = out->u0; u < hi; u++) {
    v[n_local++] = out->arms[(size_t)(u - out->u0) * len2 + PB_FA_FAUC_UP];
    pb_agg_loc_min(&lo, v[n_local - 1], u, 0);
  }
  for (int64_t u = hi - 1; u >= out->u0; u--) /* the last of equal maxima: the lowest M - 1 - u, met first from the top */
    pb_agg_loc_max(&top, out->arms[(size_t)(u - out->u0) * len2 + PB_FA_FAUC_UP], M - 1 - u, 0);
  const int64_t n = pb_agg_select_count(v, n_local, out->comm);
  pb_agg_loc_reduce(&lo, 1, 0, out->comm, -1);
  pb_agg_loc_reduce(&top, 1, 1, out->comm, -1);
  S->n_pick = 0;
  if (n > 0) S->pick[S->n_pick++] = (int32_t)lo.cell;
  if (n > 2) { /* position n / 2: the value there, then among the models of that value the right one */
    const int64_t k = n / 2;
    double med, mid;
    pb_agg_select_kth(v, n_local, &k, 1, out->comm, &med);
    int64_t below = 0, m_eq = 0;
    for (int64_t i = 0; i < n_local; i++) below += v[i] < med;
    MPI_Allreduce(MPI_IN_PLACE, &below, 1, MPI_INT64_T, MPI_SUM, out->comm);
    for (int64_t i = 0; i < n_local; i++)
      if (v[i] == med) v[m_eq++] = (double)(out->u0 + i);
    const int64_t j = k - below;
    pb_agg_select_kth(v, m_eq, &j, 1, out->comm, &mid);
    S->pick[S->n_pick++] = (int32_t)mid;
  }
  if (n > 1) S->pick[S->n_pick++] = (int32_t)(M - 1 - top.cell);
  free(v);
  int32_t *fields = pb_malloc((size_t)3 * G * sizeof *fields);
  for (int32_t k = 0; k < 3 * G; k++) fields[k] = PB_FA_FIXED + k;
  S->prof = pb_malloc((size_t)(S->n_pick > 0 ? S->n_pick : 1) * 3 * G * sizeof *S->prof);
  int status = PB_OK;
  for (int i = 0; i < S->n_pick && status == PB_OK; i++)
    status = pb_agg_fetch(out->comm, out->u0, out->nu, S->pick[i], out->arms, len2, fields, 3 * G,
                          S->prof + (size_t)i * 3 * G, 0);
  free(fields);
  return status;
}

static void pb_fragility__sum_free(struct pb_fragility__sum *S)
{
  free(S->med), free(S->lcb), free(S->dk), free(S->dmax), free(S->dutil), free(S->prof);
  pb_agg_free(&S->dm);
  pb_agg_free(&S->sp);
}

/* Everything the tables and figures print (collective; complete on rank 0). */
static int pb_fragility__summarise(const struct pb_fragility_out *out, struct pb_fragility__sum *S)
{
  const int32_t ns = out->meta->n_sources, NT = PB_FR__NTIER;
  memset(S, 0, sizeof *S);
  S->med = pb_malloc((size_t)ns * 2 * 6 * sizeof *S->med);
  S->lcb = pb_calloc((size_t)ns * 3, sizeof *S->lcb);
  pb_agg_init(&S->dm, (int64_t)ns * NT * 4);
  S->dk = pb_calloc((size_t)ns * NT * 3, sizeof *S->dk);
  S->dmax = pb_calloc((size_t)ns * NT, sizeof *S->dmax);
  S->dutil = pb_malloc((size_t)ns * NT * sizeof *S->dutil);
  pb_agg_init(&S->sp, (int64_t)ns * 2);
  pb_fragility__arm_summary(out, S);
  int status = pb_fragility__drift_summary(out, S);
  if (status == PB_OK) status = pb_fragility__spearman_summary(out, S);
  if (status == PB_OK) status = pb_fragility__profile_summary(out, S);
  return status;
}

/* Table: per source and arm, medians over models and LCB counts. */
static void pb_fragility__source_table(const struct pb_fragility_out *out, const struct pb_fragility__sum *S,
                                       struct pb_table *tb)
{
  const struct pb_meta *meta = out->meta;
  int32_t M = meta->n_models;
  char title[160], lcb[40];
  pb_text_format_double(out->opt->rho_lcb, lcb);
  snprintf(title, sizeof title, "Restricted fragility by source and arm (medians over models; LCB at rho = %s)", lcb);
  pb_table_begin(tb, title, "Arm A fits bins and groups on part A and estimates rates on part B; arm B swaps them.",
                 "source\tarm\tmodels\tFAUC_up\tFAUC_down\tG_R\tG_R_corrected\tlcb_positive\tlcb_positive_both_arms\t"
                 "heldout_agreement\tnull_median_agreement", NULL);
  for (int32_t s = 0; s < meta->n_sources; s++)
    for (int a = 0; a < 2; a++) {
      const double *med = S->med + ((size_t)s * 2 + a) * 6;
      pb_table_str(tb, meta->sources[s].name, 1);
      pb_table_str(tb, a == 0 ? "A" : "B", 0);
      pb_table_int(tb, M);
      for (int c = 0; c < 4; c++) pb_table_num(tb, med[c], 4);
      pb_table_int(tb, S->lcb[s * 3 + a]);
      pb_table_int(tb, S->lcb[s * 3 + 2]);
      pb_table_num(tb, med[4], 3);
      pb_table_num(tb, med[5], 3);
      pb_table_end_row(tb);
    }
}

static void pb_fragility__drift_table(const struct pb_fragility_out *out, const struct pb_fragility__sum *S,
                                      struct pb_table *tb)
{
  const struct pb_meta *meta = out->meta;
  pb_table_begin(tb, "Composition/conditional split of clean -> perturbed drift (Proposition 8)",
                 "Means over model x condition cells; L = target-mass-weighted L2 norm over bins; ratio = L_comp / "
                 "L_total; utilisation = |composition| / source envelope, median over cells of the per-cell median "
                 "over bins where every target group has source support.",
                 "source\ttier\tcells\tmean_ratio\tmean_L_comp\tmean_L_cond\tmean_L_total\tmedian_utilisation\t"
                 "utilisation_bins\tundefined_bins\tmax_additivity_residual", NULL);
  for (int32_t s = 0; s < meta->n_sources; s++)
    for (int ti = 0; ti < PB_FR__NTIER; ti++) {
      const int64_t key = (int64_t)s * PB_FR__NTIER + ti, *k = S->dk + key * 3;
      if (k[0] == 0) continue;
      pb_table_str(tb, meta->sources[s].name, 1);
      pb_table_str(tb, ti == 0 ? "all" : ti == 1 ? "none" : pb_protocol_tier_name(ti - 2), 0);
      pb_table_int(tb, k[0]);
      for (int j = 0; j < 4; j++) pb_table_num(tb, pb_agg_mean(&S->dm, key * 4 + j), 4);
      pb_table_num(tb, S->dutil[key], 3);
      pb_table_int(tb, k[1]);
      pb_table_int(tb, k[2]);
      pb_table_num(tb, S->dmax[key], 3);
      pb_table_end_row(tb);
    }
}

/* Spearman across models of source FAUC_up and ECE (arm A) with L_comp, per
 * perturbed condition, averaged over the conditions where it is defined. */
static void pb_fragility__spearman_table(const struct pb_fragility_out *out, const struct pb_fragility__sum *S,
                                         struct pb_table *tb)
{
  const struct pb_meta *meta = out->meta;
  pb_table_begin(tb, "Source metrics and the composition term across models",
                 "Spearman correlation across models of the source FAUC_up (arm A) and of the source ECE (arm A, rate "
                 "part) with L_comp, per perturbed condition; mean over conditions where defined.",
                 "source\tconditions\tmean_spearman_FAUC_Lcomp\tmean_spearman_ECE_Lcomp", NULL);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    pb_table_str(tb, meta->sources[s].name, 1);
    pb_table_int(tb, meta->sources[s].n_conditions - 1);
    pb_table_num(tb, pb_agg_mean(&S->sp, (int64_t)s * 2), 3);
    pb_table_num(tb, pb_agg_mean(&S->sp, (int64_t)s * 2 + 1), 3);
    pb_table_end_row(tb);
  }
}

/* Profile figure: up and down restricted profiles with the variance law for
 * the models of lowest, median and highest FAUC_up (first source, arm A). */
static int pb_fragility__profile_figure(struct pb_results *res, const struct pb_fragility_out *out,
                                        const struct pb_fragility__sum *S, struct pb_text *md)
{
  const struct pb_meta *meta = out->meta;
  const struct pb_fragility_options *o = out->opt;
  const int32_t *pick = S->pick, np = S->n_pick;
  struct pb_text d = {0};
  pb_text_printf(&d, "rho");
  for (int i = 0; i < np; i++)
    pb_text_printf(&d, "\t%s up\t%s down\t%s sqrt(rho G_R)", meta->model_ids[pick[i]], meta->model_ids[pick[i]],
                   meta->model_ids[pick[i]]);
  pb_text_printf(&d, "\n");
  for (int32_t k = 0; k < o->n_grid; k++) {
    pb_text_printf(&d, "%.17g", pb_fragility_grid(o, k));
    for (int i = 0; i < np; i++) {
      const double *r = S->prof + (size_t)i * 3 * o->n_grid;
      pb_text_double(&d, r[k]);
      pb_text_double(&d, r[o->n_grid + k]);
      pb_text_double(&d, r[2 * o->n_grid + k]);
    }
    pb_text_printf(&d, "\n");
  }
  char title[160], script[512];
  snprintf(title, sizeof title, "Restricted fragility profiles, %s, arm A (lowest, median, highest FAUC)",
           meta->sources[0].name);
  snprintf(script, sizeof script,
           "set logscale x\nset xrange [%.17g:%.17g]\nset key left top\nset style data linespoints\n"
           "plot for [i=0:%d] DATA using 1:(column(2+3*i)) lt i+1 pt 7 dt 1 title columnheader(2+3*i), "
           "for [i=0:%d] DATA using 1:(column(3+3*i)) lt i+1 pt 5 dt 2 title columnheader(3+3*i), "
           "for [i=0:%d] DATA using 1:(column(4+3*i)) lt i+1 pt 0 dt 3 title columnheader(4+3*i)",
           o->rho_min, o->rho_max, np - 1, np - 1, np - 1);
  struct pb_figure fig = {"fragility_profiles", title, "chi-square budget rho (log scale)",
                          "reliability movement (accuracy units)", script};
  int status = np > 0 ? pb_figure_write(res, &fig, d.buf, d.len, md) : PB_OK;
  pb_text_free(&d);
  return status;
}

/* Drift figure: mean L_comp, L_cond and L_total by severity tier, all sources pooled. */
static int pb_fragility__drift_figure(struct pb_results *res, const struct pb_fragility_out *out,
                                      const struct pb_fragility__sum *S, struct pb_text *md)
{
  const struct pb_meta *meta = out->meta;
  struct pb_text d = {0};
  pb_text_printf(&d, "tier\tL_comp\tL_cond\tL_total\tratio\n");
  for (int tier = PB_TIER_MILD; tier <= PB_TIER_EXTREME; tier++) {
    double sum[4] = {0, 0, 0, 0};
    int64_t cnt = 0;
    for (int32_t s = 0; s < meta->n_sources; s++) {
      const int64_t key = (int64_t)s * PB_FR__NTIER + tier + 2, cells = S->dk[key * 3];
      for (int k = 0; k < 4 && cells > 0; k++) {
        const double mean = pb_agg_mean(&S->dm, key * 4 + k);
        sum[k] += cells * (isnan(mean) ? 0 : mean);
      }
      cnt += cells;
    }
    if (cnt == 0) continue;
    pb_text_printf(&d, "%d", tier);
    pb_text_double(&d, sum[1] / cnt);
    pb_text_double(&d, sum[2] / cnt);
    pb_text_double(&d, sum[3] / cnt);
    pb_text_double(&d, sum[0] / cnt);
    pb_text_printf(&d, "\n");
  }
  struct pb_figure fig = {"fragility_drift_tiers", "Clean -> perturbed drift split by severity tier (all sources, cell means)",
                          "severity tier", "target-mass-weighted L2 norm (accuracy units)",
                          "set xtics ('mild' 0, 'severe' 1, 'extreme' 2)\nset xrange [-0.5:2.5]\nset key left top\n"
                          "plot DATA using 1:2 with linespoints pt 7, DATA using 1:3 with linespoints pt 5, "
                          "DATA using 1:4 with linespoints pt 9"};
  int status = pb_figure_write(res, &fig, d.buf, d.len, md);
  pb_text_free(&d);
  return status;
}

int pb_fragility_report(struct pb_results *res, const struct pb_fragility_out *out)
{
  const struct pb_meta *meta = out->meta;
  const struct pb_fragility_options *o = out->opt;
  int rank;
  MPI_Comm_rank(out->comm, &rank);
  int status = pb_fragility__arm_tsv(res, out);
  if (status == PB_OK) status = pb_fragility__drift_tsv(res, out);
  if (status != PB_OK) return status;
  struct pb_fragility__sum S;
  status = pb_fragility__summarise(out, &S);
  if (rank != 0 || status != PB_OK) {
    pb_fragility__sum_free(&S);
    return status;
  }
  struct pb_text md = {0};
  char a[40], b[40], c[40], al[40];
  pb_text_format_double(o->rho_min, a);
  pb_text_format_double(o->rho_max, b);
  pb_text_format_double(o->rho_lcb, c);
  pb_text_format_double(1 - o->alpha, al);
  pb_text_printf(&md,
                 "# Fragility (seed 001)\n\n"
                 "Restricted fragility profiles of every model and source from the clean records, both split arms, "
                 "and the composition/conditional split of clean -> perturbed drift (docs/fragility.md).\n\n"
                 "- %d confidence bins (equal mass on the fitting part) x %d within-bin quantile groups of the group "
                 "signal; images split by a seeded hash of their id (seed %llu): part A 40%%, part B 40%%, part E 20%%.\n"
                 "- FAUC: trapezoids in log rho over %d log-spaced radii from %s to %s (not normalised, uncorrected "
                 "rates); G_R_corrected subtracts the binomial noise of the group rates.\n"
                 "- Lower confidence bound: %s-level split-sample bound at rho = %s (Clopper-Pearson limits, "
                 "Bonferroni over bins, group masses and rates).\n"
                 "- Held-out agreement: Spearman over bins of predicted and realised drift on part E at rho = %s; "
                 "null: %d within-bin label permutations of the rate part.\n",
                 (int)o->n_bins, (int)o->n_groups, (unsigned long long)o->seed, (int)o->n_grid, a, b, al, c, c,
                 (int)o->n_null);
  pb_text_printf(&md, "- Group signal per source:");
  for (int32_t s = 0; s < meta->n_sources; s++)
    pb_text_printf(&md, "%s %s: %s", s ? ";" : "", meta->sources[s].name, out->u_signal[s]);
  pb_text_printf(&md, ".\n\nTables: report/fragility.tsv (one row per model, source and arm), "
                      "report/fragility_drift.tsv (one row per model x perturbed condition).\n\n");
  struct pb_table tb = {{0}, {0}};
  pb_fragility__source_table(out, &S, &tb);
  status = pb_table_flush(&tb, res, "fragility_sources.tsv", &md);
  if (status == PB_OK) {
    pb_fragility__drift_table(out, &S, &tb);
    status = pb_table_flush(&tb, res, "fragility_drift_summary.tsv", &md);
  }
  if (status == PB_OK) {
    pb_fragility__spearman_table(out, &S, &tb);
    status = pb_table_flush(&tb, res, "fragility_spearman.tsv", &md);
  }
  if (status == PB_OK) status = pb_fragility__profile_figure(res, out, &S, &md);
  if (status == PB_OK) status = pb_fragility__drift_figure(res, out, &S, &md);
  if (status == PB_OK) status = pb_results_write_report(res, "fragility.md", md.buf, md.len);
  pb_text_free(&tb.tsv);
  pb_text_free(&tb.md);
  pb_text_free(&md);
  pb_fragility__sum_free(&S);
  return status;
}
