/* The totals behind `pairbound fragility`'s report (fragility_internal.h,
 * struct pb_fragility_sum), from every rank's units: counts and exact sums
 * reduced to rank 0, medians by selection over the ranks, correlations
 * computed where the data of a condition meet, the profile models' records
 * fetched from their ranks; no rank holds another rank's records. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#include "pairbound/agg.h"
#include "pairbound/error.h"
#include "fragility_internal.h"

/* The arm fields of the source table's medians (struct pb_fragility_sum, med). */
static const int pb_fragility__med_cols[6] = {PB_FA_FAUC_UP, PB_FA_FAUC_DOWN, PB_FA_G_R, PB_FA_G_R_CORR,
                                               PB_FA_AGREE, PB_FA_NULL_MEDIAN};

/* Medians per (source, arm) by selection over the ranks, and the LCB counts (collective). */
static void pb_fragility__arm_summary(const struct pb_fragility_out *out, struct pb_fragility_sum *S)
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
static int pb_fragility__drift_summary(const struct pb_fragility_out *out, struct pb_fragility_sum *S)
{
  const struct pb_meta *meta = out->meta;
  const int32_t M = meta->n_models, ns = meta->n_sources, NT = PB_FRAGILITY_NTIER;
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
static int pb_fragility__spearman_summary(const struct pb_fragility_out *out, struct pb_fragility_sum *S)
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
static int pb_fragility__profile_summary(const struct pb_fragility_out *out, struct pb_fragility_sum *S)
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

void pb_fragility_sum_free(struct pb_fragility_sum *S)
{
  free(S->med), free(S->lcb), free(S->dk), free(S->dmax), free(S->dutil), free(S->prof);
  free(S->sel_n), free(S->sel_x), free(S->merge), free(S->score), free(S->fk), free(S->metric), free(S->rnd_n), free(S->rnd_med), free(S->tmp_med), free(S->tmp_lcb);
  free(S->auc), free(S->qm_n), free(S->qm_x), free(S->qt_n);
  pb_agg_free(&S->rnd_x);
  pb_agg_free(&S->fm);
  pb_agg_free(&S->dm);
  pb_agg_free(&S->sp);
}

int pb_fragility_summarise(const struct pb_fragility_out *out, struct pb_fragility_sum *S)
{
  const int32_t ns = out->meta->n_sources, NT = PB_FRAGILITY_NTIER;
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
  if (status == PB_OK) status = pb_fragility_diag_summarise(out, S);
  if (status == PB_OK) pb_fragility_qmap_summarise(out, S);
  return status;
}

