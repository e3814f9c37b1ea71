/* `pairbound screen`: the outputs.  Every report table from this rank's
 * cells (totals reduced to rank 0, interval tables collective), then the
 * results.h5 columns (/screen/cells, /screen/strata, /screen/subsets,
 * /screen/images) and the TSV files of every cell.  docs/screen.md. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/comm.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/fields.h"
#include "pairbound/resample.h"
#include "pairbound/stage.h"
#include "pairbound/text.h"
#include "pairbound/timer.h"
#include "screen_internal.h"
#include "screen_stage_internal.h"

/* Per-image score arrays written to results.h5 (/screen/images): the rows
 * whose score is one value per image (random and the derangement excluded). */
static const int pb_screen__image_rows[] = {PB_SR_S, PB_SR_U, PB_SR_DELTA, PB_SR_RET, PB_SR_MARGIN, PB_SR_ENTROPY,
                                            PB_SR_CLASS_DELTA, PB_SR_CLASS_U_CC, PB_SR_CLASS_U_ALL, PB_SR_G_S,
                                            PB_SR_G_SU, PB_SR_G_SURET, PB_SR_A3, PB_SR_U_LOO};
#define PB_SCREEN_N_IMAGE_ROWS ((int)(sizeof pb_screen__image_rows / sizeof pb_screen__image_rows[0]))

/* No target image has a partner in the primary probe source: nothing can be
 * screened, but the tables (every value n/a) still say which cells there are.
 * Warn, and return the markdown note saying why (caller frees), else NULL. */
static char *pb_screen__nothing_note(const struct pb_screen__ctx *X, const char *store_path)
{
  if (X->n_joined > 0) return NULL;
  struct pb_text names = {0}, note = {0};
  for (int32_t t = 0; t < X->n_targets; t++)
    pb_text_printf(&names, "%s%s", t ? ", " : "", X->meta->sources[X->targets[t]].name);
  const char *probe = X->meta->sources[X->ps[0].src].name;
  pb_warning("screen: %s: no image of the target sources (%s) occurs in the probe source %s (images are matched by "
             "image id), so nothing can be screened: every table is empty (n/a)",
             store_path, names.buf, probe);
  pb_text_printf(&note, "\n*Nothing to screen: no image of the target sources (%s) of %s occurs in the probe source "
                        "%s (images are matched by image id), so no image has a probe response and every value of the "
                        "screening tables is n/a.*\n", names.buf, store_path, probe);
  pb_text_free(&names);
  return note.buf;
}

/* Whether score row r is written per image (/screen/images). */
int pb_screen__image_row(int32_t r)
{
  int keep = r >= PB_SR_FIXED;
  for (int j = 0; j < PB_SCREEN_N_IMAGE_ROWS; j++) keep |= pb_screen__image_rows[j] == r;
  return keep;
}

/* ------------------------------------------------------------ outputs */

static const char *const pb_screen__strata_names[PB_SCREEN_STRATA] = {"low", "mid", "high"};

/* Field tables: /screen/cells (information fields, then per score row the
 * metrics in /screen/cells/<row>), /screen/strata/<stratum>_<field>, and the
 * report TSVs screen_cells, screen_strata, screen_cell_info and screen_fits. */
static const struct pb_field pb_screen__info_fields[PB_SI_N_FIELDS] = {
  [PB_SI_TIER] = {"tier", PB_FMT_TIER}, [PB_SI_N] = {"n", PB_FMT_INT}, [PB_SI_NFAIL] = {"n_fail", PB_FMT_INT},
  [PB_SI_NNS] = {"n_nonsingleton", PB_FMT_INT}, [PB_SI_NFAIL_NS] = {"n_fail_nonsingleton", PB_FMT_INT},
  [PB_SI_DEGENERATE] = {"derange_degenerate", PB_FMT_INT}, [PB_SI_NUNMATCHED] = {"n_unmatched", PB_FMT_INT},
  [PB_SI_A3APPROX] = {"a3_approx_images", PB_FMT_INT}};
static const struct pb_field pb_screen__met_fields[PB_SCREEN_MET] = {
  {"n", PB_FMT_INT}, {"n_fail", PB_FMT_INT}, {"auroc", PB_FMT_NUM},
  {"cov_q10", PB_FMT_NUM}, {"cov_q20", PB_FMT_NUM}, {"cov_q30", PB_FMT_NUM}};
static const struct pb_field pb_screen__stratum_fields[PB_SCREEN_STRATUM_F] = {
  {"n", PB_FMT_INT}, {"n_fail", PB_FMT_INT}, {"auroc_S", PB_FMT_NUM}, {"auroc_U", PB_FMT_NUM},
  {"auroc_U_nonsingleton", PB_FMT_NUM}, {"auroc_U_derange", PB_FMT_NUM}, {"ret_gap", PB_FMT_NUM}};
static const struct pb_fields pb_screen__met = {.n = PB_SCREEN_MET, .f = pb_screen__met_fields};
static const struct pb_fields pb_screen__stratum = {.n = PB_SCREEN_STRATUM_F, .f = pb_screen__stratum_fields};

/* screen_cell_info.tsv after model, source, condition, tier: counts, the
 * failure rate and the budget ceilings (derived), then the information fields. */
enum { PB_SIT_N, PB_SIT_NFAIL, PB_SIT_P, PB_SIT_CEIL, PB_SIT_NNS = PB_SIT_CEIL + PB_SCREEN_N_BUDGETS, PB_SIT_NFAIL_NS,
       PB_SIT_DEGENERATE, PB_SIT_NUNMATCHED, PB_SIT_A3APPROX, PB_SIT_N_FIELDS };
_Static_assert(PB_SCREEN_N_BUDGETS == 3, "screen_cell_info.tsv names three budget ceilings");
static const struct pb_field pb_screen__info_tsv_fields[PB_SIT_N_FIELDS] = {
  [PB_SIT_N] = {"n", PB_FMT_INT}, [PB_SIT_NFAIL] = {"n_fail", PB_FMT_INT}, [PB_SIT_P] = {"p", PB_FMT_NUM},
  [PB_SIT_CEIL + 0] = {"ceil_q10", PB_FMT_NUM}, [PB_SIT_CEIL + 1] = {"ceil_q20", PB_FMT_NUM},
  [PB_SIT_CEIL + 2] = {"ceil_q30", PB_FMT_NUM}, [PB_SIT_NNS] = {"n_nonsingleton", PB_FMT_INT},
  [PB_SIT_NFAIL_NS] = {"n_fail_nonsingleton", PB_FMT_INT}, [PB_SIT_DEGENERATE] = {"derange_degenerate", PB_FMT_INT},
  [PB_SIT_NUNMATCHED] = {"n_unmatched", PB_FMT_INT}, [PB_SIT_A3APPROX] = {"a3_approx_images", PB_FMT_INT}};
static const struct pb_fields pb_screen__info_tsv = {.n = PB_SIT_N_FIELDS, .f = pb_screen__info_tsv_fields};

/* screen_fits.tsv after model, source: fit sizes, then per fit g_S, g_SU,
 * g_SUret the standardised intercept and weights (S, U, ret) and the gradient
 * norm, then seed E.1's Spearman of delta with -U over the unit's images. */
enum { PB_SF_N_IMAGES, PB_SF_N_OBS, PB_SF_N_FAIL, PB_SF_FIT, PB_SF_SPEARMAN = PB_SF_FIT + 3 * 5, PB_SF_N_FIELDS };
/* The five fields of fit G (index i): its standardised intercept and weights, and its gradient norm. */
#define PB_SCREEN__FIT(i, g)                                                                                 \
  [PB_SF_FIT + 5 * i + 0] = {#g "_b", PB_FMT_NUM}, [PB_SF_FIT + 5 * i + 1] = {#g "_wS", PB_FMT_NUM},       \
  [PB_SF_FIT + 5 * i + 2] = {#g "_wU", PB_FMT_NUM}, [PB_SF_FIT + 5 * i + 3] = {#g "_wret", PB_FMT_NUM},    \
  [PB_SF_FIT + 5 * i + 4] = {#g "_grad", PB_FMT_NUM}
static const struct pb_field pb_screen__fit_fields[PB_SF_N_FIELDS] = {
  [PB_SF_N_IMAGES] = {"n_images", PB_FMT_INT}, [PB_SF_N_OBS] = {"n_obs", PB_FMT_INT},
  [PB_SF_N_FAIL] = {"n_fail", PB_FMT_INT},
  PB_SCREEN__FIT(0, gS), PB_SCREEN__FIT(1, gSU), PB_SCREEN__FIT(2, gSUret),
  [PB_SF_SPEARMAN] = {"spearman_delta_negU", PB_FMT_NUM}};
#undef PB_SCREEN__FIT
static const struct pb_fields pb_screen__fits_tsv = {.n = PB_SF_N_FIELDS, .f = pb_screen__fit_fields};

/* The TSV rows of one unit's cells: screen_cells, screen_cell_info, screen_strata. */
static void pb_screen__unit_text(const struct pb_screen__ctx *X, int64_t u, const double *recs,
                                 const struct pb_screen__unit *U, struct pb_text *t)
{
  const struct pb_meta *meta = X->meta;
  const struct pb_screen_layout *L = &X->L;
  int32_t tt, m;
  pb_screen__cell_names(X, u, &tt, &m);
  const struct pb_source *src = &meta->sources[X->targets[tt]];
  double fit[PB_SF_N_FIELDS] = {[PB_SF_N_IMAGES] = U->n_fit, [PB_SF_N_OBS] = U->n_fit_trials,
                                [PB_SF_N_FAIL] = U->n_fit_fails};
  for (int g = 0; g < 3; g++) {
    const struct pb_screen_logit *f = &U->fit[g];
    double *o = fit + PB_SF_FIT + 5 * g;
    o[0] = f->ok ? f->b : NAN;
    for (int j = 0; j < 3; j++) o[1 + j] = f->ok && j <= g ? f->w[j] : NAN;
    o[4] = f->ok ? f->grad_norm : NAN;
  }
  fit[PB_SF_SPEARMAN] = pb_screen__e1_spearman(U);
  pb_text_printf(&t[3], "%s\t%s", meta->model_ids[m], src->name);
  pb_fields_tsv_values(&pb_screen__fits_tsv, fit, 0, &t[3]);
  pb_text_printf(&t[3], "\n");
  int64_t cell = 0;
  for (int32_t c = 0; c < src->n_conditions; c++) {
    if (c == src->clean) continue;
    const double *rec = recs + (cell++) * L->rec_len;
    const char *tier = pb_protocol_tier_name((int)rec[PB_SI_TIER]);
    char head[1024];
    snprintf(head, sizeof head, "%s\t%s\t%s\t%s", meta->model_ids[m], src->name, src->conditions[c], tier);
    for (int32_t r = 0; r < L->n_rows; r++) {
      pb_text_printf(&t[0], "%s\t%s", head, L->row_names[r]);
      pb_fields_tsv_values(&pb_screen__met, rec + L->row_off + PB_SCREEN_MET * r, 0, &t[0]);
      pb_text_printf(&t[0], "\n");
    }
    const int64_t nn = (int64_t)rec[PB_SI_N], nf = (int64_t)rec[PB_SI_NFAIL];
    double info[PB_SIT_N_FIELDS] = {
      [PB_SIT_N] = nn, [PB_SIT_NFAIL] = nf, [PB_SIT_P] = nn > 0 ? (double)nf / nn : NAN,
      [PB_SIT_NNS] = rec[PB_SI_NNS], [PB_SIT_NFAIL_NS] = rec[PB_SI_NFAIL_NS],
      [PB_SIT_DEGENERATE] = rec[PB_SI_DEGENERATE], [PB_SIT_NUNMATCHED] = rec[PB_SI_NUNMATCHED],
      [PB_SIT_A3APPROX] = rec[PB_SI_A3APPROX]};
    for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++)
      info[PB_SIT_CEIL + b] =
          nf > 0 ? fmin(1.0, (double)pb_screen_budget((int32_t)nn, pb_screen_budget_pct[b]) / nf) : NAN;
    pb_text_printf(&t[1], "%s", head);
    pb_fields_tsv_values(&pb_screen__info_tsv, info, 0, &t[1]);
    pb_text_printf(&t[1], "\n");
    for (int st = 0; st < PB_SCREEN_STRATA; st++) {
      pb_text_printf(&t[2], "%s\t%s", head, pb_screen__strata_names[st]);
      pb_fields_tsv_values(&pb_screen__stratum, rec + L->strata_off + PB_SCREEN_STRATUM_F * st, 0, &t[2]);
      pb_text_printf(&t[2], "\n");
    }
  }
}

/* /screen/cells (keys, information fields, per-row metrics), /screen/strata
 * and /screen/subsets of this rank's cells [c0, c0 + nloc) (collective). */
static int pb_screen__write_cells(struct pb_stage *st, const struct pb_screen__ctx *X, int64_t u0, int64_t u1,
                                  const double *recs)
{
  const struct pb_screen_layout *L = &X->L;
  const int64_t c0 = X->unit_cell0[u0], nloc = X->unit_cell0[u1] - c0, n_cells = X->unit_cell0[X->n_units];
  int status = pb_results_group(st->results, "/screen/cells");
  int64_t *icol = pb_malloc((size_t)(nloc > 0 ? nloc : 1) * sizeof *icol);
  const char *keys[3] = {"source", "model", "condition"};
  for (int k = 0; k < 3 && status == PB_OK; k++) {
    int64_t j = 0;
    for (int64_t u = u0; u < u1; u++) {
      int32_t t, m;
      pb_screen__cell_names(X, u, &t, &m);
      const struct pb_source *src = &X->meta->sources[X->targets[t]];
      for (int32_t c = 0; c < src->n_conditions; c++)
        if (c != src->clean) icol[j++] = k == 0 ? X->targets[t] : k == 1 ? m : c;
    }
    char path[128];
    snprintf(path, sizeof path, "/screen/cells/%s", keys[k]);
    status = pb_results_write_i64(st->results, path, n_cells, c0, nloc, icol);
  }
  free(icol);
  const struct pb_fields info = pb_fields_static("/screen/cells", PB_SI_N_FIELDS, pb_screen__info_fields);
  if (status == PB_OK) status = pb_fields_write_at(&info, st->results, n_cells, c0, nloc, recs, L->rec_len);
  for (int32_t r = 0; r < L->n_rows && status == PB_OK; r++) {
    char group[256];
    snprintf(group, sizeof group, "/screen/cells/%s", L->row_names[r]);
    const struct pb_fields met = pb_fields_static(group, PB_SCREEN_MET, pb_screen__met_fields);
    status = pb_fields_write_at(&met, st->results, n_cells, c0, nloc, recs + L->row_off + PB_SCREEN_MET * r,
                                L->rec_len);
  }
  struct pb_fields strata; /* stratum-major block: <stratum>_<field> */
  pb_fields_alloc(&strata, "/screen/strata", PB_SCREEN_STRATA * PB_SCREEN_STRATUM_F);
  for (int sn = 0; sn < PB_SCREEN_STRATA; sn++)
    for (int f = 0; f < PB_SCREEN_STRATUM_F; f++)
      pb_fields_setf(&strata, sn * PB_SCREEN_STRATUM_F + f, PB_FMT_NUM, "%s_%s", pb_screen__strata_names[sn],
                     pb_screen__stratum_fields[f].name);
  if (status == PB_OK)
    status = pb_fields_write_at(&strata, st->results, n_cells, c0, nloc, recs + L->strata_off, L->rec_len);
  pb_fields_free(&strata);
  if (status == PB_OK && L->n_subsets > 0) {
    /* [cell][subset] flattened, cell-major */
    int64_t ns = L->n_subsets;
    double *a = pb_malloc((size_t)(nloc > 0 ? nloc : 1) * ns * sizeof *a), *v = pb_malloc((size_t)(nloc > 0 ? nloc : 1) * ns * sizeof *v);
    for (int64_t c = 0; c < nloc; c++)
      for (int64_t j = 0; j < ns; j++) {
        a[c * ns + j] = recs[c * L->rec_len + L->subset_off + 2 * j];
        v[c * ns + j] = recs[c * L->rec_len + L->subset_off + 2 * j + 1];
      }
    status = pb_results_group(st->results, "/screen/subsets");
    if (status == PB_OK) status = pb_results_write_f64(st->results, "/screen/subsets/auroc", n_cells * ns, c0 * ns, nloc * ns, a);
    if (status == PB_OK) status = pb_results_write_f64(st->results, "/screen/subsets/cov_q20", n_cells * ns, c0 * ns, nloc * ns, v);
    int64_t *sz = pb_malloc((size_t)ns * sizeof *sz);
    for (int64_t j = 0; j < ns; j++) sz[j] = L->subset_m[j];
    if (status == PB_OK) status = pb_results_write_i64(st->results, "/screen/subsets/m", ns, st->rank == 0 ? 0 : ns,
                                                       st->rank == 0 ? ns : 0, sz);
    free(sz);
    free(a);
    free(v);
  }
  return status;
}

/* Per-image scores and packed outcomes (what class resampling recomputes
 * from), and each cell's offsets into them (collective). */
static int pb_screen__write_images(struct pb_stage *st, const struct pb_screen__ctx *X, int64_t u0, int64_t u1,
                                   const struct pb_screen__unit *units, uint64_t *const *bits, const int32_t *n_words)
{
  const struct pb_screen_layout *L = &X->L;
  const int64_t c0 = X->unit_cell0[u0], nloc = X->unit_cell0[u1] - c0, n_cells = X->unit_cell0[X->n_units];
  int64_t my_img = 0, my_words = 0, img0 = 0, word0 = 0, tot[2];
  for (int64_t u = u0; u < u1; u++) {
    my_img += units[u - u0].n;
    my_words += (int64_t)n_words[u - u0] * (X->unit_cell0[u + 1] - X->unit_cell0[u]);
  }
  int64_t mine[2] = {my_img, my_words}, before[2] = {0, 0};
  MPI_Exscan(mine, before, 2, MPI_INT64_T, MPI_SUM, st->comm);
  if (st->rank == 0) before[0] = before[1] = 0;
  pb_comm_allreduce(mine, tot, 2, MPI_INT64_T, MPI_SUM, st->comm);
  img0 = before[0];
  word0 = before[1];
  int status = pb_results_group(st->results, "/screen/images");
  int64_t ni = my_img > 0 ? my_img : 1;
  double *iv = pb_malloc((size_t)ni * sizeof *iv);
  int64_t *ii = pb_malloc((size_t)ni * sizeof *ii);
  for (int k = 0; k < 3 && status == PB_OK; k++) {
    int64_t j = 0;
    for (int64_t u = u0; u < u1; u++)
      for (int32_t q = 0; q < units[u - u0].n; q++)
        ii[j++] = k == 0 ? u : k == 1 ? units[u - u0].img[q] : units[u - u0].label[q];
    const char *nm[3] = {"/screen/images/unit", "/screen/images/image", "/screen/images/label"};
    status = pb_results_write_i64(st->results, nm[k], tot[0], img0, my_img, ii);
  }
  for (int32_t r = 0; r < L->n_rows + X->opt->n_derange && status == PB_OK; r++) {
    char path[256];
    int is_row = r < L->n_rows;
    if (is_row) {
      int keep = r >= PB_SR_FIXED;
      for (int j = 0; j < PB_SCREEN_N_IMAGE_ROWS; j++) keep |= pb_screen__image_rows[j] == r;
      if (!keep) continue;
      snprintf(path, sizeof path, "/screen/images/%s", L->row_names[r]);
    } else {
      snprintf(path, sizeof path, "/screen/images/U_derange_%d", r - L->n_rows);
    }
    int64_t j = 0;
    for (int64_t u = u0; u < u1; u++)
      for (int32_t q = 0; q < units[u - u0].n; q++)
        iv[j++] = is_row ? units[u - u0].score[r][q] : units[u - u0].der_score[r - L->n_rows][q];
    status = pb_results_write_f64(st->results, path, tot[0], img0, my_img, iv);
  }
  free(iv);
  free(ii);
  /* per cell: first image of its unit in /screen/images, first outcome word */
  if (status == PB_OK) {
    int64_t j = 0, io = img0, wo = word0;
    int64_t *ci = pb_malloc((size_t)(nloc > 0 ? nloc : 1) * sizeof *ci), *cw = pb_malloc((size_t)(nloc > 0 ? nloc : 1) * sizeof *cw);
    for (int64_t u = u0; u < u1; u++) {
      for (int64_t c = X->unit_cell0[u]; c < X->unit_cell0[u + 1]; c++) {
        ci[j] = io;
        cw[j++] = wo;
        wo += n_words[u - u0];
      }
      io += units[u - u0].n;
    }
    status = pb_results_write_i64(st->results, "/screen/cells/image_offset", n_cells, c0, nloc, ci);
    if (status == PB_OK) status = pb_results_write_i64(st->results, "/screen/cells/outcome_offset", n_cells, c0, nloc, cw);
    free(ci);
    free(cw);
  }
  if (status == PB_OK) {
    int64_t nw = my_words > 0 ? my_words : 1, j = 0;
    int64_t *w = pb_malloc((size_t)nw * sizeof *w);
    for (int64_t u = u0; u < u1; u++) {
      int64_t cnt = (int64_t)n_words[u - u0] * (X->unit_cell0[u + 1] - X->unit_cell0[u]);
      memcpy(w + j, bits[u - u0], (size_t)cnt * sizeof *w);
      j += cnt;
    }
    status = pb_results_group(st->results, "/screen/outcome");
    if (status == PB_OK) status = pb_results_write_i64(st->results, "/screen/outcome/bits", tot[1], word0, my_words, w);
    free(w);
  }
  return status;
}

/* screen_cells.tsv, screen_cell_info.tsv, screen_strata.tsv and
 * screen_fits.tsv in cell order: a round of units formats in parallel into
 * buffers that are reused round after round (so the 60 MB of text is never
 * held, nor its pages faulted in, at once) and goes to the files in unit
 * order (collective). */
static int pb_screen__write_tsv(struct pb_stage *st, const struct pb_screen__ctx *X, int64_t u0, int64_t u1,
                                const double *recs, const struct pb_screen__unit *units)
{
  static const char *const names[4] = {"screen_cells.tsv", "screen_cell_info.tsv", "screen_strata.tsv",
                                       "screen_fits.tsv"};
  const struct pb_screen_layout *L = &X->L;
  const int64_t c0 = X->unit_cell0[u0], round = 16 * (int64_t)omp_get_max_threads();
  struct pb_text head[4] = {{0}};
  pb_fields_tsv_header(&pb_screen__met, "model\tsource\tcondition\ttier\tscore", 0, &head[0]);
  pb_fields_tsv_header(&pb_screen__info_tsv, "model\tsource\tcondition\ttier", 0, &head[1]);
  pb_fields_tsv_header(&pb_screen__stratum, "model\tsource\tcondition\ttier\tstratum", 0, &head[2]);
  pb_fields_tsv_header(&pb_screen__fits_tsv, "model\tsource", 0, &head[3]);
  struct pb_tsv *tf[4] = {NULL};
  int status = PB_OK;
  for (int k = 0; k < 4 && status == PB_OK; k++) {
    pb_text_printf(&head[k], "\n");
    status = pb_results_tsv_open(st->results, names[k], head[k].buf, &tf[k]);
  }
  struct pb_text *tu = pb_calloc((size_t)(4 * round), sizeof *tu);
  for (int64_t a = u0; a < u1 && status == PB_OK; a += round) {
    const int64_t b = a + round < u1 ? a + round : u1;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t u = a; u < b; u++) {
      struct pb_text *t = &tu[4 * (u - a)];
      for (int j = 0; j < 4; j++) t[j].len = 0;
      pb_screen__unit_text(X, u, recs + (X->unit_cell0[u] - c0) * L->rec_len, &units[u - u0], t);
    }
    for (int j = 0; j < 4; j++)
      for (int64_t u = a; u < b; u++) pb_tsv_write(tf[j], tu[4 * (u - a) + j].buf, tu[4 * (u - a) + j].len);
  }
  for (int64_t j = 0; j < 4 * round; j++) pb_text_free(&tu[j]);
  free(tu);
  if (status == PB_OK) /* collective, in the same order on every rank */
    for (int j = 0; j < 4; j++) {
      int one = pb_tsv_commit(tf[j]);
      tf[j] = NULL;
      if (status == PB_OK) status = one;
    }
  for (int j = 0; j < 4; j++) {
    pb_tsv_abort(tf[j]);
    pb_text_free(&head[j]);
  }
  return status;
}

/* Every output of this rank's units [u0, u1) (collective). */
int pb_screen__write(struct pb_stage *st, const struct pb_screen__ctx *X, int64_t u0, int64_t u1,
                     const double *recs, struct pb_screen__unit *units, uint64_t *const *bits,
                     const int32_t *n_words, struct pb_timer *tm)
{
  /* sub-phases of "write", recorded on every rank whatever the status (pb_timer_reduce) */
  double t0 = MPI_Wtime();
  int status = pb_screen__write_cells(st, X, u0, u1, recs);
  if (status == PB_OK) status = pb_screen__write_images(st, X, u0, u1, units, bits, n_words);
  double t1 = MPI_Wtime();
  pb_timer_add(tm, "write_h5", t1 - t0);
  pb_message("screen: results.h5 columns %.3f s", t1 - t0);
  if (status == PB_OK) status = pb_screen__write_tsv(st, X, u0, u1, recs, units);
  pb_timer_add(tm, "write_tsv", MPI_Wtime() - t1);
  pb_message("screen: TSV files %.3f s", MPI_Wtime() - t1);
  return status;
}

/* The interval tables (every rank resamples collectively) and the report on
 * rank 0, from every cell's record gathered in global order (collective). */
/* The natural-comparison tables with the selections named (rank 0). */
static int pb_screen__natural_report(const struct pb_screen__ctx *X, const struct pb_screen_rep_in *in,
                                     struct pb_text *extra)
{
  struct pb_screen_sel_report S;
  memset(&S, 0, sizeof S);
  for (int g = 0; g < 2; g++) {
    const struct pb_screen__pool *pl = &X->pool[g];
    if (!pl->n_chosen) continue;
    size_t n = (size_t)X->n_targets * pl->n_pick;
    S.n_pick[g] = pl->n_pick;
    S.n_chosen[g] = pl->n_chosen;
    S.value[g] = pl->value;
    S.names[g] = pb_calloc(n > 0 ? n : 1, sizeof(char *));
    S.fixed[g] = pb_calloc(n > 0 ? n : 1, 1);
    for (int32_t t = 0; t < X->n_targets; t++)
      for (int32_t k = 0; k < pl->n_chosen[t]; k++) {
        int32_t a = pl->chosen[(size_t)t * pl->n_pick + k];
        const struct pb_screen__pset *ps = &X->ps[pl->ps[a]];
        const struct pb_source *src = &X->meta->sources[ps->src];
        const char *cond = src->conditions[ps->cond[pl->k[a]]];
        size_t len = strlen(src->name) + strlen(cond) + 2;
        char *name = S.names[g][(size_t)t * pl->n_pick + k] = pb_malloc(len);
        snprintf(name, len, "%s:%s", src->name, cond);
        /* the fixed set leads each pool: the primary set, or the natural source's first conditions */
        S.fixed[g][(size_t)t * pl->n_pick + k] = a < pl->n_pick;
      }
  }
  int status = pb_screen_natural_report(in, &S, extra);
  for (int g = 0; g < 2; g++) {
    for (size_t j = 0; S.names[g] && j < (size_t)X->n_targets * S.n_pick[g]; j++) free(S.names[g][j]);
    free(S.names[g]);
    free(S.fixed[g]);
  }
  return status;
}

/* Every report table from this rank's units [u0, u1) (recs: their cells):
 * the totals of every rank's cells on rank 0 for the mean tables, exact
 * per-group sums for the intervals (collective), then the reports on rank 0;
 * no rank holds another rank's records. */
/* The per-unit statistics of pb_screen_rep_in.unit_stats on rank 0 (g(S)'s weight NaN: no fit). Each unit is on
 * one rank, the others add zeros: the sums are the values (collective). */
static double *pb_screen__unit_stats(const struct pb_stage *st, const struct pb_screen__ctx *X, int64_t u0,
                                     int64_t u1, const struct pb_screen__unit *units)
{
  const int32_t w = pb_screen_unit_width(&X->L);
  const size_t n = (size_t)X->n_units * w;
  double *v = pb_calloc(n > 0 ? n : 1, sizeof *v);
  for (int64_t u = u0; u < u1; u++) {
    const struct pb_screen__unit *U = &units[u - u0];
    double *o = v + u * w;
    o[0] = pb_screen__e1_spearman(U);
    o[1] = U->fit[0].ok ? U->fit[0].w[0] : NAN;
    for (int32_t p = 0; p < w - 2; p++) o[2 + p] = U->dev_err[p];
  }
  if (st->rank == 0) MPI_Reduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, MPI_SUM, 0, st->comm);
  else MPI_Reduce(v, NULL, (int)n, MPI_DOUBLE, MPI_SUM, 0, st->comm);
  return v;
}

int pb_screen__report_all(struct pb_stage *st, const struct pb_screen__ctx *X, int64_t u0, int64_t u1,
                          const double *recs, const struct pb_screen__unit *units, struct pb_screen_boot *boot,
                          const char *store_path)
{
  const struct pb_screen_options *opt = X->opt;
  const int64_t c0 = X->unit_cell0[u0], nloc = X->unit_cell0[u1] - c0;
  int32_t *target = pb_malloc((size_t)(nloc > 0 ? nloc : 1) * sizeof *target);
  int32_t *model = pb_malloc((size_t)(nloc > 0 ? nloc : 1) * sizeof *model);
  int32_t *cond = pb_malloc((size_t)(nloc > 0 ? nloc : 1) * sizeof *cond);
  for (int64_t u = u0; u < u1; u++)
    for (int64_t c = X->unit_cell0[u]; c < X->unit_cell0[u + 1]; c++) {
      target[c - c0] = (int32_t)(u / st->meta->n_models);
      model[c - c0] = (int32_t)(u % st->meta->n_models);
      /* a unit's cells are its perturbed conditions in order, clean skipped */
      int32_t k = (int32_t)(c - X->unit_cell0[u]), clean = st->meta->sources[X->targets[target[c - c0]]].clean;
      cond[c - c0] = k < clean ? k : k + 1;
    }
  const struct pb_screen_cells C = {nloc, recs, target, model, cond};
  struct pb_screen_sum T;
  pb_screen_sum_init(&T, st->meta, &X->L, X->targets, X->n_targets);
  for (int64_t c = 0; c < nloc; c++) pb_screen_sum_add(&T, &X->L, &C, c);
  int status = pb_screen_sum_reduce(&T, st->comm);
  struct pb_screen_ivs I;
  memset(&I, 0, sizeof I);
  if (status == PB_OK) status = pb_screen_ivs_boot(boot, st->meta, &X->L, &C, opt, st->comm, &I);
  double *ust = pb_screen__unit_stats(st, X, u0, u1, units);
  const struct pb_screen_rep_in in = {st->meta, &X->L, X->targets, X->n_targets, opt,          &T,
                                      boot,     &I,     ust,        (const int8_t *const *)X->tier, st->results};
  struct pb_text extra = {0};
  char *nothing = pb_screen__nothing_note(X, store_path);
  if (nothing) pb_text_printf(&extra, "%s", nothing);
  free(nothing);
  if (status == PB_OK && st->rank == 0) status = pb_screen_interval_report(&in, &extra);
  if (status == PB_OK && st->rank == 0) status = pb_screen_extra_report(&in, &extra);
  if (status == PB_OK && st->rank == 0) status = pb_screen__natural_report(X, &in, &extra);
  if (pb_resample_boot_one_group(st->meta->model_groups, st->meta->n_models, opt->group_draws, "screen"))
    pb_text_printf(&extra, "%s", PB_BOOT_ONE_GROUP_NOTE);
  if (status == PB_OK && st->rank == 0) {
    char desc[1024];
    const struct pb_source *P = &st->meta->sources[X->ps[0].src];
    snprintf(desc, sizeof desc, "%d conditions of %s", X->ps[0].n, P->name);
    status = pb_screen_report(&in, desc, &extra);
  }
  pb_comm_bcast(&status, 1, MPI_INT, 0, st->comm);
  pb_text_free(&extra);
  pb_screen_ivs_free(&I);
  pb_screen_sum_free(&T);
  free(ust);
  free(target);
  free(model);
  free(cond);
  return status;
}
