/* The arms' diagnostics in the fragility stage (seed 001 K, U.3, J.2;
 * docs/fragility.md): their per-row TSVs, each rank writing its own units'
 * rows, and the report's totals by selection over the ranks (no rank holds
 * another rank's records). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "pairbound/agg.h"
#include "pairbound/error.h"
#include "pairbound/fields.h"
#include "pairbound/fragility.h"
#include "pairbound/protocol.h"
#include "pairbound/results.h"
#include "pairbound/text.h"
#include "fragility_internal.h"

static const struct pb_field pb_fragility__sel[PB_FK_FIXED] = {
  [PB_FK_COVERAGE] = {"coverage", PB_FMT_NUM}, [PB_FK_RHO] = {"rho", PB_FMT_NUM}, [PB_FK_RISK] = {"risk", PB_FMT_NUM},
  [PB_FK_ENVELOPE] = {"envelope_increase", PB_FMT_NUM}, [PB_FK_EVAL_COVERAGE] = {"eval_coverage", PB_FMT_NUM},
  [PB_FK_EVAL_RISK] = {"eval_risk", PB_FMT_NUM}, [PB_FK_REALISED] = {"realised_increase", PB_FMT_NUM},
  [PB_FK_EXCESS] = {"excess", PB_FMT_NUM}, [PB_FK_IDENTITY] = {"identity_error", PB_FMT_NUM}};
static const struct pb_field pb_fragility__merge[PB_FM_FIXED] = {
  [PB_FM_GROUPS] = {"groups_per_bin", PB_FMT_INT}, [PB_FM_G_R] = {"G_R", PB_FMT_NUM},
  [PB_FM_G_R_CORR] = {"G_R_corrected", PB_FMT_NUM}, [PB_FM_FAUC_UP] = {"FAUC_up", PB_FMT_NUM},
  [PB_FM_FAUC_SHARE] = {"FAUC_share", PB_FMT_NUM}};
static const struct pb_field pb_fragility__score[PB_FJ_FIXED] = {
  [PB_FJ_GROUPS] = {"groups", PB_FMT_INT}, [PB_FJ_G_R] = {"G_R", PB_FMT_NUM},
  [PB_FJ_FAUC_UP] = {"FAUC_up", PB_FMT_NUM}, [PB_FJ_FAUC_DOWN] = {"FAUC_down", PB_FMT_NUM},
  [PB_FJ_READOUT_FAUC_UP] = {"readout_FAUC_up", PB_FMT_NUM}, [PB_FJ_RATIO] = {"readout_over_score", PB_FMT_NUM}};

static const struct pb_field pb_fragility__flag[PB_FF_FIXED] = {
  [PB_FF_MASS_KEPT] = {"mass_kept", PB_FMT_NUM}, [PB_FF_BINS_KEPT] = {"bins_kept", PB_FMT_INT},
  [PB_FF_BINS_FLAGGED] = {"bins_flagged", PB_FMT_INT}, [PB_FF_L_TOTAL] = {"L_total_kept", PB_FMT_NUM},
  [PB_FF_L_COMP] = {"L_comp_kept", PB_FMT_NUM}, [PB_FF_L_COND] = {"L_cond_kept", PB_FMT_NUM},
  [PB_FF_RATIO] = {"ratio_kept", PB_FMT_NUM}};

static const struct pb_field pb_fragility__random[PB_FX_FIXED] = {
  [PB_FX_CELLS] = {"cells", PB_FMT_INT}, [PB_FX_SPEARMAN] = {"spearman", PB_FMT_NUM},
  [PB_FX_NULL_SPEARMAN] = {"null_median_spearman", PB_FMT_NUM}, [PB_FX_ABOVE] = {"cells_above_profile", PB_FMT_INT},
  [PB_FX_EXCESS_SUM] = {"excess_sum", PB_FMT_NUM}};

/* The diagnostics record of the rank's unit u, arm a. */
static const double *pb_fragility__diag_rec(const struct pb_fragility_out *out, int64_t u, int a)
{
  return out->diag + ((size_t)(u - out->u0) * 2 + (size_t)a) * (size_t)out->diag_len;
}

/* One TSV of the diagnostics: per unit and arm, @p rows records of @p fs at
 * offset @p at of the arm's diagnostics, @p stride apart; @p key(j) names
 * row j's extra key column (NULL: none). */
static int pb_fragility__diag_one(struct pb_results *res, const struct pb_fragility_out *out, const char *name,
                                  const struct pb_fields *fs, const char *keys, int32_t at, int32_t rows,
                                  int32_t stride, const char *(*key)(const struct pb_fragility_out *, int32_t))
{
  const struct pb_meta *meta = out->meta;
  struct pb_text h = {0}, t = {0};
  pb_fields_tsv_header(fs, keys, 0, &h);
  pb_text_printf(&h, "\n");
  for (int64_t u = out->u0; u < out->u0 + out->nu; u++)
    for (int a = 0; a < 2; a++)
      for (int32_t j = 0; j < rows; j++) {
        pb_text_printf(&t, "%s\t%s\t%s", meta->model_ids[u % meta->n_models], meta->sources[u / meta->n_models].name,
                       a == 0 ? "A" : "B");
        if (key) pb_text_printf(&t, "\t%s", key(out, j));
        pb_fields_tsv_values(fs, pb_fragility__diag_rec(out, u, a) + at + (size_t)j * stride, 0, &t);
        pb_text_printf(&t, "\n");
      }
  int status = pb_results_tsv(res, name, h.buf, t.buf, t.len);
  pb_text_free(&h);
  pb_text_free(&t);
  return status;
}

static const char *pb_fragility__cov_key(const struct pb_fragility_out *out, int32_t j)
{
  return j / out->opt->n_grid == 0 ? "0.8" : "0.9";
}

/* report/fragility_drift_flagged.tsv: one row per model x perturbed condition, as fragility_drift.tsv (collective). */
static int pb_fragility__flag_tsv(struct pb_results *res, const struct pb_fragility_out *out)
{
  const struct pb_meta *meta = out->meta;
  const struct pb_fields fs = pb_fields_static("/fragility/drift_flagged", PB_FF_FIXED, pb_fragility__flag);
  struct pb_text h = {0}, t = {0};
  pb_fields_tsv_header(&fs, "model\tsource\tcondition\ttier", 0, &h);
  pb_text_printf(&h, "\n");
  for (int64_t u = out->u0; u < out->u0 + out->nu; u++) {
    int32_t s = (int32_t)(u / meta->n_models);
    const struct pb_source *S = &meta->sources[s];
    int64_t d = out->drift0[u];
    for (int32_t c = 0; c < S->n_conditions; c++) {
      if (c == S->clean) continue;
      int tier = out->tier[s][c];
      pb_text_printf(&t, "%s\t%s\t%s\t%s", meta->model_ids[u % meta->n_models], S->name, S->conditions[c],
                     tier >= 0 ? pb_protocol_tier_name(tier) : "none");
      pb_fields_tsv_values(&fs, out->flag + (size_t)(d++ - out->d0) * PB_FF_FIXED, 0, &t);
      pb_text_printf(&t, "\n");
    }
  }
  int status = pb_results_tsv(res, "fragility_drift_flagged.tsv", h.buf, t.buf, t.len);
  pb_text_free(&h);
  pb_text_free(&t);
  return status;
}

/* report/fragility_tempered.tsv: fragility.tsv's columns of the temperature-scaled state, with T (collective). */
static int pb_fragility__tempered_tsv(struct pb_results *res, const struct pb_fragility_out *out)
{
  const struct pb_meta *meta = out->meta;
  const size_t w = 2 * (size_t)out->arm_len + 1;
  struct pb_text h = {0}, t = {0};
  pb_fields_tsv_header(out->arm_fields, "model\tsource\tarm\ttemperature", 0, &h);
  pb_text_printf(&h, "\n");
  for (int64_t u = out->u0; u < out->u0 + out->nu; u++)
    for (int a = 0; a < 2; a++) {
      const double *r = out->temper + (size_t)(u - out->u0) * w;
      char T[40];
      pb_text_format_double(r[2 * out->arm_len], T);
      pb_text_printf(&t, "%s\t%s\t%s\t%s", meta->model_ids[u % meta->n_models], meta->sources[u / meta->n_models].name,
                     a == 0 ? "A" : "B", T);
      pb_fields_tsv_values(out->arm_fields, r + (size_t)a * out->arm_len, 0, &t);
      pb_text_printf(&t, "\n");
    }
  int status = pb_results_tsv(res, "fragility_tempered.tsv", h.buf, t.buf, t.len);
  pb_text_free(&h);
  pb_text_free(&t);
  return status;
}

int pb_fragility_diag_tsv(struct pb_results *res, const struct pb_fragility_out *out)
{
  const struct pb_fields sel = pb_fields_static("/fragility/selective", PB_FK_FIXED, pb_fragility__sel);
  const struct pb_fields mer = pb_fields_static("/fragility/merges", PB_FM_FIXED, pb_fragility__merge);
  const struct pb_fields sco = pb_fields_static("/fragility/score_only", PB_FJ_FIXED, pb_fragility__score);
  const int32_t G = out->opt->n_grid, sl = PB_FRAGILITY_SEL_LEN(G);
  int status = pb_fragility__diag_one(res, out, "fragility_selective.tsv", &sel, "model\tsource\tarm\ttarget_coverage",
                                      0, PB_FRAGILITY_COVERAGES * G, PB_FK_FIXED, pb_fragility__cov_key);
  int s2 = pb_fragility__diag_one(res, out, "fragility_merges.tsv", &mer, "model\tsource\tarm", sl,
                                  pb_fragility_merge_levels(out->opt->n_groups), PB_FM_FIXED, NULL);
  int s3 = pb_fragility__diag_one(res, out, "fragility_score_only.tsv", &sco, "model\tsource\tarm",
                                  sl + PB_FRAGILITY_MERGES * PB_FM_FIXED, 1, PB_FJ_FIXED, NULL);
  int s4 = pb_fragility__flag_tsv(res, out);
  const struct pb_fields rnd = pb_fields_static("/fragility/random", PB_FX_FIXED, pb_fragility__random);
  int s5 = pb_fragility__diag_one(res, out, "fragility_random.tsv", &rnd, "model\tsource\tarm",
                                  PB_FRAGILITY_DIAG_LEN(G), 1, PB_FX_FIXED, NULL);
  int s6 = pb_fragility__tempered_tsv(res, out);
  return status != PB_OK ? status : s2 != PB_OK ? s2 : s3 != PB_OK ? s3 : s4 != PB_OK ? s4 : s5 != PB_OK ? s5 : s6;
}

/* Selective cells of (source, arm) with a realised increase and those above the envelope, the medians of
 * the excess and of excess / envelope among the latter, the largest identity error (collective). */
static void pb_fragility__sel_summary(const struct pb_fragility_out *out, int32_t s, int a, double *v, double *w,
                                      struct pb_fragility_sum *S)
{
  const int32_t M = out->meta->n_models, cells = PB_FRAGILITY_COVERAGES * out->opt->n_grid;
  int64_t n = 0, *k = S->sel_n + ((size_t)s * 2 + a) * 2;
  double idmax = 0, *x = S->sel_x + ((size_t)s * 2 + a) * 3;
  for (int64_t u = out->u0; u < out->u0 + out->nu; u++) {
    if (u / M != s) continue;
    for (int32_t j = 0; j < cells; j++) {
      const double *r = pb_fragility__diag_rec(out, u, a) + (size_t)j * PB_FK_FIXED;
      if (isnan(r[PB_FK_REALISED]) || isnan(r[PB_FK_ENVELOPE])) continue;
      k[0]++;
      idmax = fmax(idmax, r[PB_FK_IDENTITY]);
      if (!(r[PB_FK_EXCESS] > 0)) continue;
      k[1]++;
      v[n] = r[PB_FK_EXCESS];
      w[n++] = r[PB_FK_ENVELOPE] > 0 ? r[PB_FK_EXCESS] / r[PB_FK_ENVELOPE] : NAN;
    }
  }
  x[0] = pb_agg_select_quantile(v, n, 0.5, out->comm);
  x[1] = pb_agg_select_quantile(w, n, 0.5, out->comm);
  MPI_Allreduce(&idmax, &x[2], 1, MPI_DOUBLE, MPI_MAX, out->comm);
}

/* The medians over models of (source, arm)'s merge levels and score-only comparator (collective). */
static void pb_fragility__merge_summary(const struct pb_fragility_out *out, int32_t s, int a, double *v,
                                        struct pb_fragility_sum *S)
{
  const int32_t M = out->meta->n_models, sl = PB_FRAGILITY_SEL_LEN(out->opt->n_grid);
  static const int mf[4] = {PB_FM_FAUC_UP, PB_FM_FAUC_SHARE, PB_FM_G_R, PB_FM_G_R_CORR};
  for (int32_t j = 0; j < PB_FRAGILITY_MERGES; j++)
    for (int c = 0; c < 5; c++) {
      int64_t n = 0;
      for (int64_t u = out->u0; u < out->u0 + out->nu; u++) {
        if (u / M != s) continue;
        const double *r = pb_fragility__diag_rec(out, u, a) + sl, *x = r + (size_t)j * PB_FM_FIXED;
        if (c < 4) v[n++] = x[mf[c]];
        else { /* (Gc_K - Gc_j) / (G_K - G_j): the rise that the binomial-noise correction keeps */
          const double d = r[PB_FM_G_R] - x[PB_FM_G_R];
          v[n++] = j > 0 && d > 0 ? (r[PB_FM_G_R_CORR] - x[PB_FM_G_R_CORR]) / d : NAN;
        }
      }
      S->merge[(((size_t)s * 2 + a) * PB_FRAGILITY_MERGES + j) * 5 + c] = pb_agg_select_quantile(v, n, 0.5, out->comm);
    }
  static const int sf[3] = {PB_FJ_FAUC_UP, PB_FJ_READOUT_FAUC_UP, PB_FJ_RATIO};
  double *x = S->score + ((size_t)s * 2 + a) * 5;
  for (int c = 0; c < 3; c++) {
    int64_t n = 0;
    for (int64_t u = out->u0; u < out->u0 + out->nu; u++)
      if (u / M == s) v[n++] = pb_fragility__diag_rec(out, u, a)[sl + PB_FRAGILITY_MERGES * PB_FM_FIXED + sf[c]];
    x[c] = pb_agg_select_quantile(v, n, 0.5, out->comm);
    if (c == 2) {
      x[3] = pb_agg_select_quantile(v, n, 0, out->comm);
      x[4] = pb_agg_select_quantile(v, n, 1, out->comm);
    }
  }
}

/* The flagged-bin check per (source, tier row) as the drift table's rows: mean kept mass, mean ratio over
 * all bins and over the kept ones, cells, and cells whose conditional norm exceeds the composition norm
 * over all bins and over the kept ones (collective; the means on rank 0). */
static int pb_fragility__flag_summary(const struct pb_fragility_out *out, struct pb_fragility_sum *S)
{
  const struct pb_meta *meta = out->meta;
  const int32_t M = meta->n_models, NT = PB_FRAGILITY_NTIER;
  pb_agg_init(&S->fm, (int64_t)meta->n_sources * NT * 3);
  S->fk = pb_calloc((size_t)meta->n_sources * NT * 3, sizeof *S->fk);
  for (int64_t u = out->u0; u < out->u0 + out->nu; u++) {
    const int32_t s = (int32_t)(u / M);
    const struct pb_source *src = &meta->sources[s];
    int64_t d = out->drift0[u];
    for (int32_t c = 0; c < src->n_conditions; c++) {
      if (c == src->clean) continue;
      const double *r = out->drift + (size_t)(d - out->d0) * PB_FD_FIXED, *f = out->flag + (size_t)(d - out->d0) * PB_FF_FIXED;
      d++;
      for (int ti = 0; ti < NT; ti++) {
        if (ti > 0 && out->tier[s][c] != ti - 2) continue;
        const size_t key = (size_t)s * NT + ti;
        pb_agg_add(&S->fm, (int64_t)key * 3, f[PB_FF_MASS_KEPT]);
        pb_agg_add(&S->fm, (int64_t)key * 3 + 1, r[PB_FD_RATIO]);
        pb_agg_add(&S->fm, (int64_t)key * 3 + 2, f[PB_FF_RATIO]);
        S->fk[key * 3]++;
        S->fk[key * 3 + 1] += r[PB_FD_L_COND] > r[PB_FD_L_COMP];
        S->fk[key * 3 + 2] += f[PB_FF_L_COND] > f[PB_FF_L_COMP];
      }
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, S->fk, meta->n_sources * NT * 3, MPI_INT64_T, MPI_SUM, out->comm);
  return pb_agg_reduce(&S->fm, out->comm, 0);
}

void pb_fragility__gather(const struct pb_fragility_out *out, int32_t width, const double *mine, double **all)
{
  int rank, size;
  MPI_Comm_rank(out->comm, &rank);
  MPI_Comm_size(out->comm, &size);
  int cnt = (int)(out->nu * 2 * width), *cnts = NULL, *offs = NULL;
  *all = NULL;
  if (rank == 0) {
    cnts = pb_malloc((size_t)size * sizeof *cnts);
    offs = pb_malloc((size_t)size * sizeof *offs);
    *all = pb_malloc((size_t)(out->n_units > 0 ? out->n_units : 1) * 2 * width * sizeof **all);
  }
  MPI_Gather(&cnt, 1, MPI_INT, cnts, 1, MPI_INT, 0, out->comm);
  if (rank == 0)
    for (int r = 0, o = 0; r < size; o += cnts[r++]) offs[r] = o; /* ranks hold contiguous units in order */
  MPI_Gatherv(mine, cnt, MPI_DOUBLE, *all, cnts, offs, MPI_DOUBLE, 0, out->comm);
  free(cnts);
  free(offs);
}

/* ECE, G_R and FAUC_up of every unit and arm to rank 0 (collective): the report's correlations and
 * similar-ECE pairs compare models, three numbers each. */
static void pb_fragility__metric_gather(const struct pb_fragility_out *out, struct pb_fragility_sum *S)
{
  double *mine = pb_malloc((size_t)(out->nu > 0 ? out->nu : 1) * 12 * sizeof *mine);
  for (int64_t u = 0; u < out->nu; u++)
    for (int a = 0; a < 2; a++) {
      const double *r = out->arms + ((size_t)u * 2 + (size_t)a) * out->arm_len;
      const double *q = out->temper + (size_t)u * (2 * (size_t)out->arm_len + 1) + (size_t)a * out->arm_len;
      double *x = mine + ((size_t)u * 2 + (size_t)a) * 6;
      x[0] = r[PB_FA_ECE], x[1] = r[PB_FA_G_R], x[2] = r[PB_FA_FAUC_UP];
      x[3] = q[PB_FA_ECE], x[4] = q[PB_FA_G_R], x[5] = q[PB_FA_FAUC_UP];
    }
  pb_fragility__gather(out, 6, mine, &S->metric);
  free(mine);
}

/* Tables 18 and 9 compare models: G_R, FAUC_up, the integrals over log rho of the variance law and the
 * capped law, and the random-shift cells and cells above the profile of every unit and arm, to rank 0
 * (collective). */
static void pb_fragility__auc_gather(const struct pb_fragility_out *out, struct pb_fragility_sum *S)
{
  const int32_t G = out->opt->n_grid, W = PB_FRAGILITY_AUC_LEN;
  double *mine = pb_malloc((size_t)(out->nu > 0 ? out->nu : 1) * 2 * W * sizeof *mine);
  for (int64_t u = 0; u < out->nu; u++)
    for (int a = 0; a < 2; a++) {
      const double *r = out->arms + ((size_t)u * 2 + (size_t)a) * out->arm_len;
      const double *d = out->diag + ((size_t)u * 2 + (size_t)a) * (size_t)out->diag_len + PB_FRAGILITY_DIAG_LEN(G);
      double *x = mine + ((size_t)u * 2 + (size_t)a) * W;
      x[PB_FRAGILITY_AUC_G_R] = r[PB_FA_G_R];
      x[PB_FRAGILITY_AUC_FAUC] = r[PB_FA_FAUC_UP];
      x[PB_FRAGILITY_AUC_VAR] = pb_fragility_log_auc(out->opt, r + PB_FA_FIXED + 2 * G);
      x[PB_FRAGILITY_AUC_CAP] = pb_fragility_log_auc(out->opt, r + PB_FA_FIXED + 3 * G);
      x[PB_FRAGILITY_AUC_CELLS] = d[PB_FX_CELLS];
      x[PB_FRAGILITY_AUC_ABOVE] = d[PB_FX_ABOVE];
    }
  pb_fragility__gather(out, W, mine, &S->auc);
  free(mine);
}

/* Random shifts per (source, arm): counts over the models, the excess sum, the Spearman medians (collective). */
static int pb_fragility__random_summary(const struct pb_fragility_out *out, struct pb_fragility_sum *S, double *v)
{
  const int32_t M = out->meta->n_models, ns = out->meta->n_sources, G = out->opt->n_grid, w = 2 + 2 * G;
  S->rnd_n = pb_calloc((size_t)ns * 2 * w, sizeof *S->rnd_n);
  S->rnd_med = pb_malloc((size_t)ns * 2 * 2 * sizeof *S->rnd_med);
  pb_agg_init(&S->rnd_x, (int64_t)ns * 2);
  for (int32_t s = 0; s < ns; s++)
    for (int a = 0; a < 2; a++) {
      int64_t *k = S->rnd_n + ((size_t)s * 2 + a) * w;
      for (int c = 0; c < 2; c++) {
        int64_t n = 0;
        for (int64_t u = out->u0; u < out->u0 + out->nu; u++)
          if (u / M == s) v[n++] = pb_fragility__diag_rec(out, u, a)[PB_FRAGILITY_DIAG_LEN(G) + (c ? PB_FX_NULL_SPEARMAN : PB_FX_SPEARMAN)];
        S->rnd_med[((size_t)s * 2 + a) * 2 + c] = pb_agg_select_quantile(v, n, 0.5, out->comm);
      }
      for (int64_t u = out->u0; u < out->u0 + out->nu; u++) {
        if (u / M != s) continue;
        const double *x = pb_fragility__diag_rec(out, u, a) + PB_FRAGILITY_DIAG_LEN(G);
        k[0] += (int64_t)x[PB_FX_CELLS];
        k[1] += (int64_t)x[PB_FX_ABOVE];
        for (int32_t j = 0; j < 2 * G; j++) k[2 + j] += (int64_t)x[PB_FX_FIXED + j];
        pb_agg_add(&S->rnd_x, (int64_t)s * 2 + a, x[PB_FX_EXCESS_SUM]);
      }
    }
  MPI_Allreduce(MPI_IN_PLACE, S->rnd_n, ns * 2 * w, MPI_INT64_T, MPI_SUM, out->comm);
  return pb_agg_reduce(&S->rnd_x, out->comm, 0);
}

/* The temperature-scaled state per (source, arm): medians of T, ECE, FAUC_up and the LCB counts (collective). */
static void pb_fragility__tempered_summary(const struct pb_fragility_out *out, struct pb_fragility_sum *S, double *v)
{
  const int32_t M = out->meta->n_models, ns = out->meta->n_sources, len = out->arm_len;
  const size_t w = 2 * (size_t)len + 1;
  static const int f[3] = {-1, PB_FA_ECE, PB_FA_FAUC_UP};
  S->tmp_med = pb_malloc((size_t)ns * 2 * 3 * sizeof *S->tmp_med);
  S->tmp_lcb = pb_calloc((size_t)ns * 3, sizeof *S->tmp_lcb);
  for (int32_t s = 0; s < ns; s++)
    for (int a = 0; a < 2; a++)
      for (int c = 0; c < 3; c++) {
        int64_t n = 0;
        for (int64_t u = out->u0; u < out->u0 + out->nu; u++) {
          const double *r = out->temper + (size_t)(u - out->u0) * w;
          if (u / M == s) v[n++] = f[c] < 0 ? r[2 * len] : r[(size_t)a * len + f[c]];
        }
        S->tmp_med[((size_t)s * 2 + a) * 3 + c] = pb_agg_select_quantile(v, n, 0.5, out->comm);
      }
  for (int64_t u = out->u0; u < out->u0 + out->nu; u++) {
    const double *r = out->temper + (size_t)(u - out->u0) * w;
    int64_t *k = S->tmp_lcb + (u / M) * 3;
    k[0] += r[PB_FA_LCB] > 0;
    k[1] += r[len + PB_FA_LCB] > 0;
    k[2] += r[PB_FA_LCB] > 0 && r[len + PB_FA_LCB] > 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, S->tmp_lcb, ns * 3, MPI_INT64_T, MPI_SUM, out->comm);
}

int pb_fragility_diag_summarise(const struct pb_fragility_out *out, struct pb_fragility_sum *S)
{
  pb_fragility__metric_gather(out, S);
  pb_fragility__auc_gather(out, S);
  const int32_t ns = out->meta->n_sources;
  S->sel_n = pb_calloc((size_t)ns * 2 * 2, sizeof *S->sel_n);
  S->sel_x = pb_malloc((size_t)ns * 2 * 3 * sizeof *S->sel_x);
  S->merge = pb_malloc((size_t)ns * 2 * PB_FRAGILITY_MERGES * 5 * sizeof *S->merge);
  S->score = pb_malloc((size_t)ns * 2 * 5 * sizeof *S->score);
  const size_t cap = (size_t)(out->nu > 0 ? out->nu : 1) * PB_FRAGILITY_COVERAGES * (size_t)out->opt->n_grid;
  double *v = pb_malloc(cap * sizeof *v), *w = pb_malloc(cap * sizeof *w);
  for (int32_t s = 0; s < ns; s++)
    for (int a = 0; a < 2; a++) {
      pb_fragility__sel_summary(out, s, a, v, w, S);
      pb_fragility__merge_summary(out, s, a, v, S);
    }
  MPI_Allreduce(MPI_IN_PLACE, S->sel_n, ns * 4, MPI_INT64_T, MPI_SUM, out->comm);
  pb_fragility__tempered_summary(out, S, v);
  int status = pb_fragility__random_summary(out, S, v);
  free(v);
  free(w);
  return status != PB_OK ? status : pb_fragility__flag_summary(out, S);
}
