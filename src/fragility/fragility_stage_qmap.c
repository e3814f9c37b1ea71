/* The monotone score maps in the fragility stage (seed 001 Appendix Q;
 * docs/fragility.md, "Monotone score maps"): their per-row TSVs, each rank
 * writing its own units' rows, and the report's totals — counts summed over
 * the ranks, maxima reduced, medians by selection over the ranks (no rank
 * holds another rank's records). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "pairbound/agg.h"
#include "pairbound/error.h"
#include "pairbound/fields.h"
#include "pairbound/fragility.h"
#include "pairbound/results.h"
#include "pairbound/text.h"
#include "fragility_internal.h"

/* The names of the maps (fragility_qmap.tsv's map column). */
static const char *const pb_fragility__qmap_name[PB_FRAGILITY_QMAPS] = {"fitted", "sharp", "power"};

static const struct pb_field pb_fragility__qmap_f[PB_FQ_FIXED] = {
  [PB_FQ_DEFINED] = {"defined", PB_FMT_INT}, [PB_FQ_INTERCEPT] = {"intercept", PB_FMT_NUM},
  [PB_FQ_SLOPE] = {"slope", PB_FMT_NUM}, [PB_FQ_N_TRAIN] = {"n_train", PB_FMT_INT},
  [PB_FQ_TRAIN_BIN] = {"train_bin_changes", PB_FMT_INT}, [PB_FQ_TRAIN_READOUT] = {"train_readout_changes", PB_FMT_INT},
  [PB_FQ_N_EVAL] = {"n_eval", PB_FMT_INT}, [PB_FQ_EVAL_BIN] = {"eval_bin_changes", PB_FMT_INT},
  [PB_FQ_EVAL_READOUT] = {"eval_readout_changes", PB_FMT_INT},
  [PB_FQ_STRUCT_DIFF] = {"max_structural_diff", PB_FMT_NUM}, [PB_FQ_DISTINCT] = {"distinct_scores", PB_FMT_INT},
  [PB_FQ_MERGED] = {"merged_scores", PB_FMT_INT}, [PB_FQ_ECE_RAW] = {"ece_raw", PB_FMT_NUM},
  [PB_FQ_ECE_MAP] = {"ece_mapped", PB_FMT_NUM}, [PB_FQ_NLL_RAW] = {"nll_raw", PB_FMT_NUM},
  [PB_FQ_NLL_MAP] = {"nll_mapped", PB_FMT_NUM}, [PB_FQ_REFIT_EDGES] = {"refit_edge_changes", PB_FMT_INT},
  [PB_FQ_REFIT_PROFILE] = {"refit_profile_change", PB_FMT_NUM},
  [PB_FQ_REFIT_FAUC] = {"refit_FAUC_relative_change", PB_FMT_NUM}};

static const struct pb_field pb_fragility__qties_f[PB_FT_FIXED] = {
  [PB_FT_IMAGES] = {"images", PB_FMT_INT}, [PB_FT_RAW_GROUPS] = {"pooled_raw_ties", PB_FMT_INT},
  [PB_FT_WITHIN] = {"within_fold", PB_FMT_INT}, [PB_FT_SPANNING] = {"spanning_folds", PB_FMT_INT},
  [PB_FT_FOLD_RAW] = {"fold_raw_ties", PB_FMT_INT}, [PB_FT_FOLD_MAPPED] = {"fold_mapped_ties", PB_FMT_INT},
  [PB_FT_MAPPED] = {"pooled_mapped_ties", PB_FMT_INT}};

/* Map k of arm a of the rank's unit u. */
static const double *pb_fragility__qrec(const struct pb_fragility_out *out, int64_t u, int a, int32_t k)
{
  const size_t at = ((size_t)a * PB_FRAGILITY_QMAPS + (size_t)k) * PB_FQ_FIXED;
  return out->qmap + (size_t)(u - out->u0) * PB_FRAGILITY_QMAP_LEN + at;
}

int pb_fragility_qmap_tsv(struct pb_results *res, const struct pb_fragility_out *out)
{
  const struct pb_meta *meta = out->meta;
  const struct pb_fields fq = pb_fields_static("/fragility/qmap", PB_FQ_FIXED, pb_fragility__qmap_f);
  const struct pb_fields ft = pb_fields_static("/fragility/qmap_ties", PB_FT_FIXED, pb_fragility__qties_f);
  struct pb_text h = {0}, t = {0}, h2 = {0}, t2 = {0};
  pb_fields_tsv_header(&fq, "model\tsource\tarm\tmap", 0, &h);
  pb_text_printf(&h, "\n");
  pb_fields_tsv_header(&ft, "model\tsource", 0, &h2);
  pb_text_printf(&h2, "\n");
  for (int64_t u = out->u0; u < out->u0 + out->nu; u++) {
    const char *model = meta->model_ids[u % meta->n_models], *source = meta->sources[u / meta->n_models].name;
    for (int a = 0; a < 2; a++)
      for (int32_t k = 0; k < PB_FRAGILITY_QMAPS; k++) {
        pb_text_printf(&t, "%s\t%s\t%s\t%s", model, source, a == 0 ? "A" : "B", pb_fragility__qmap_name[k]);
        pb_fields_tsv_values(&fq, pb_fragility__qrec(out, u, a, k), 0, &t);
        pb_text_printf(&t, "\n");
      }
    pb_text_printf(&t2, "%s\t%s", model, source);
    const double *ties = out->qmap + (size_t)(u - out->u0) * PB_FRAGILITY_QMAP_LEN + 2 * PB_FRAGILITY_QMAPS * PB_FQ_FIXED;
    pb_fields_tsv_values(&ft, ties, 0, &t2);
    pb_text_printf(&t2, "\n");
  }
  int status = pb_results_tsv(res, "fragility_qmap.tsv", h.buf, t.buf, t.len);
  const int s2 = pb_results_tsv(res, "fragility_qmap_ties.tsv", h2.buf, t2.buf, t2.len);
  pb_text_free(&h), pb_text_free(&t), pb_text_free(&h2), pb_text_free(&t2);
  return status != PB_OK ? status : s2;
}

/* One (source, arm, map): the counts and maxima of the rank's units, then the medians over models
 * (collective; @p v room for the rank's units). */
static void pb_fragility__qmap_cell(const struct pb_fragility_out *out, int32_t s, int a, int32_t k, double *v,
                                    int64_t *n, double *x)
{
  const int32_t M = out->meta->n_models;
  for (int64_t u = out->u0; u < out->u0 + out->nu; u++) {
    const double *r = pb_fragility__qrec(out, u, a, k);
    if (u / M != s || !(r[PB_FQ_DEFINED] > 0)) continue;
    n[0]++;
    n[1] += (int64_t)(r[PB_FQ_N_TRAIN] + r[PB_FQ_N_EVAL]);
    n[2] += (int64_t)r[PB_FQ_TRAIN_BIN], n[3] += (int64_t)r[PB_FQ_TRAIN_READOUT];
    n[4] += (int64_t)r[PB_FQ_EVAL_BIN], n[5] += (int64_t)r[PB_FQ_EVAL_READOUT];
    n[6] += (int64_t)r[PB_FQ_MERGED];
    n[7] += r[PB_FQ_NLL_MAP] < r[PB_FQ_NLL_RAW];
    n[8] += (int64_t)r[PB_FQ_REFIT_EDGES];
    x[0] = fmax(x[0], r[PB_FQ_STRUCT_DIFF]);
    x[4] = fmax(x[4], r[PB_FQ_REFIT_PROFILE]);
    x[5] = fmax(x[5], fabs(r[PB_FQ_REFIT_FAUC]));
  }
  for (int c = 0; c < 3; c++) { /* ECE raw, mapped, relative reduction (NaN when undefined, left out) */
    int64_t m = 0;
    for (int64_t u = out->u0; u < out->u0 + out->nu; u++) {
      const double *r = pb_fragility__qrec(out, u, a, k);
      if (u / M != s) continue;
      const double e0 = r[PB_FQ_ECE_RAW], e1 = r[PB_FQ_ECE_MAP];
      v[m++] = !(r[PB_FQ_DEFINED] > 0) ? NAN : c == 0 ? e0 : c == 1 ? e1 : e0 > 0 ? (e0 - e1) / e0 : NAN;
    }
    x[1 + c] = pb_agg_select_quantile(v, m, 0.5, out->comm);
  }
}

void pb_fragility_qmap_summarise(const struct pb_fragility_out *out, struct pb_fragility_sum *S)
{
  const int32_t ns = out->meta->n_sources, M = out->meta->n_models, cells = ns * 2 * PB_FRAGILITY_QMAPS;
  S->qm_n = pb_calloc((size_t)cells * PB_FRAGILITY_QSUM_N, sizeof *S->qm_n);
  S->qm_x = pb_calloc((size_t)cells * PB_FRAGILITY_QSUM_X, sizeof *S->qm_x);
  S->qt_n = pb_calloc((size_t)ns * (PB_FT_FIXED + 1), sizeof *S->qt_n);
  double *v = pb_malloc((size_t)(out->nu > 0 ? out->nu : 1) * sizeof *v);
  for (int32_t c = 0; c < cells; c++)
    pb_fragility__qmap_cell(out, c / (2 * PB_FRAGILITY_QMAPS), c / PB_FRAGILITY_QMAPS % 2, c % PB_FRAGILITY_QMAPS, v,
                            S->qm_n + (size_t)c * PB_FRAGILITY_QSUM_N, S->qm_x + (size_t)c * PB_FRAGILITY_QSUM_X);
  free(v);
  for (int64_t u = out->u0; u < out->u0 + out->nu; u++) {
    const double *t = out->qmap + (size_t)(u - out->u0) * PB_FRAGILITY_QMAP_LEN + 2 * PB_FRAGILITY_QMAPS * PB_FQ_FIXED;
    if (isnan(t[PB_FT_MAPPED])) continue; /* a fitted map undefined */
    int64_t *k = S->qt_n + (size_t)(u / M) * (PB_FT_FIXED + 1);
    k[0]++;
    for (int f = 0; f < PB_FT_FIXED; f++) k[1 + f] += (int64_t)t[f];
  }
  MPI_Allreduce(MPI_IN_PLACE, S->qm_n, cells * PB_FRAGILITY_QSUM_N, MPI_INT64_T, MPI_SUM, out->comm);
  MPI_Allreduce(MPI_IN_PLACE, S->qt_n, ns * (PB_FT_FIXED + 1), MPI_INT64_T, MPI_SUM, out->comm);
  double *mx = pb_malloc((size_t)cells * 3 * sizeof *mx);
  for (int32_t c = 0; c < cells; c++)
    for (int j = 0; j < 3; j++) mx[c * 3 + j] = S->qm_x[(size_t)c * PB_FRAGILITY_QSUM_X + (j ? 3 + j : 0)];
  MPI_Allreduce(MPI_IN_PLACE, mx, cells * 3, MPI_DOUBLE, MPI_MAX, out->comm);
  for (int32_t c = 0; c < cells; c++)
    for (int j = 0; j < 3; j++) S->qm_x[(size_t)c * PB_FRAGILITY_QSUM_X + (j ? 3 + j : 0)] = mx[c * 3 + j];
  free(mx);
}
