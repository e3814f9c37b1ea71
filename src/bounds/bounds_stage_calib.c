/* `pairbound bounds`, Appendix F.1 / Table 40: acceptance under the quantile
 * protocol, the 5% risk rule and absolute thresholds, on raw, Platt-scaled
 * and isotonic scores fitted on each model's clean development records; and
 * Appendix F's probability-gap groups of clean errors, from the same rows.
 * It lives here because its outputs are bounds' own targets (H, L, the
 * accepted-error rate) under other thresholds, on the cells bounds loads.
 * Every rank reads the clean rows of every model (predictions, S and, for
 * the gap, the top-k lists) and fits every model's calibrators; each scores
 * its own cells (with their collision column, for the multiclass Brier
 * scores, where the store has one). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/calibration.h"
#include "pairbound/cells.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/stage.h"
#include "bounds_stage_internal.h"

/* Per model of one source: Platt (a, b), isotonic fit, development Brier
 * scores and thresholds [raw, Platt, isotonic][protocol]; the probability-gap
 * cutpoints and groups (Appendix F). */
struct pb_calib__model {
  double ab[2], brier[PB_CAL_N], thr[PB_CAL_N][PB_F1_N_PROTOCOLS];
  double brier_mc;          /* multiclass Brier score of the development records (NaN: no collision column) */
  struct pb_iso iso;
  double *c0[PB_CAL_N - 1]; /* Platt, isotonic scores of the clean evaluation records, shared by the model's cells */
  int32_t gap_errors;       /* misclassified clean development records (-1: no top-2 probabilities) */
  double cut[2];            /* their gap terciles' cutpoints (NaN: fewer than PB_GAP_MIN_ERRORS) */
  int8_t *group;            /* [evaluation image] gap group of the clean record (NULL: no top-2 probabilities) */
};

/* Score of S under calibrator k. */
static double pb_calib__score(const struct pb_calib__model *cm, int k, float s)
{
  return k == PB_CAL_PLATT ? pb_bounds_platt_apply(cm->ab, s) : k == PB_CAL_ISO ? pb_bounds_iso_apply(&cm->iso, s)
                                                                               : (double)s;
}

/* Appendix F: gap = top-1 minus top-2 probability of every clean record; the
 * cutpoints from the development errors, the group of every evaluation image. */
static void pb_calib__gap(const struct pb_source *src, const int32_t *pred, const float *topk, int32_t k,
                          struct pb_calib__model *out)
{
  double *g = pb_malloc(((size_t)src->n_images + 1) * sizeof *g);
  int32_t n = 0, ne = 0;
  for (int32_t i = 0; i < src->n_images; i++)
    if (src->split[i] == PB_SPLIT_DEV && pred[i] != src->labels[i])
      g[n++] = (double)topk[(size_t)i * k] - (double)topk[(size_t)i * k + 1];
  out->gap_errors = n;
  const int ok = pb_bounds_gap_cuts(g, n, out->cut) == 0;
  out->group = pb_malloc((size_t)src->n_images + 1);
  for (int32_t i = 0; i < src->n_images; i++)
    if (src->split[i] == PB_SPLIT_EVAL)
      out->group[ne++] = ok ? (int8_t)pb_bounds_gap_group((double)topk[(size_t)i * k] - (double)topk[(size_t)i * k + 1],
                                                           out->cut)
                            : -1;
  free(g);
}

/* Appendix F.1's multiclass Brier score of the clean development records:
 * sum over classes of (p_c - [c = y])^2 = 1 - 2 p_y + sum p_c^2, the mean
 * of 1 - 2 M + collision in image order. */
static double pb_calib__brier_mc(const struct pb_source *src, const float *ptrue, const float *collision, int32_t n_dev)
{
  double sum = 0.0;
  for (int32_t i = 0; i < src->n_images; i++)
    if (src->split[i] == PB_SPLIT_DEV) sum += pb_bounds_brier_multiclass(ptrue[i], collision[i]);
  return sum / n_dev;
}

/* Fits and thresholds of model m from its clean row (all images of the source). */
static void pb_calib__model(const struct pb_source *src, const int32_t *pred, const float *smax, int32_t n_dev,
                            struct pb_calib__model *out)
{
  float *s = pb_malloc((size_t)n_dev * sizeof *s);
  uint8_t *c = pb_malloc((size_t)n_dev);
  double *v = pb_malloc((size_t)n_dev * sizeof *v);
  int32_t j = 0;
  for (int32_t i = 0; i < src->n_images; i++)
    if (src->split[i] == PB_SPLIT_DEV) {
      s[j] = smax[i];
      c[j++] = pred[i] == src->labels[i];
    }
  pb_bounds_platt_fit(s, c, n_dev, out->ab);
  pb_bounds_iso_fit(s, c, n_dev, &out->iso);
  for (int k = 0; k < PB_CAL_N; k++) {
    out->brier[k] = 0.0;
    for (int32_t i = 0; i < n_dev; i++) {
      v[i] = pb_calib__score(out, k, s[i]);
      out->brier[k] += (v[i] - c[i]) * (v[i] - c[i]);
    }
    out->brier[k] /= n_dev;
    pb_bounds_f1_thresholds(v, c, n_dev, out->thr[k]);
  }
  for (int k = 1; k < PB_CAL_N; k++) {
    out->c0[k - 1] = pb_malloc(((size_t)src->n_images - n_dev + 1) * sizeof *out->c0[k - 1]);
    j = 0;
    for (int32_t i = 0; i < src->n_images; i++)
      if (src->split[i] == PB_SPLIT_EVAL) out->c0[k - 1][j++] = pb_calib__score(out, k, smax[i]);
  }
  free(s);
  free(c);
  free(v);
}

/* One cell's F.1 fields from its model's calibrators, and its gap counts. */
static void pb_calib__cell(const struct pb_cell_view *d, const struct pb_calib__model *cm, double *x, double *rec)
{
  /* scores [raw, Platt, isotonic]: clean (calibrated ones shared by the model's cells) and perturbed */
  const double *x0[PB_CAL_N] = {x, cm->c0[0], cm->c0[1]};
  double *x1[PB_CAL_N] = {x + d->n, x + 2 * (size_t)d->n, x + 3 * (size_t)d->n};
  double brier[PB_CAL_N] = {0, 0, 0};
  int64_t changed[PB_CAL_N] = {0, 0, 0};
  for (int32_t i = 0; i < d->n; i++) {
    x[i] = d->s0[i];
    const int c1 = d->pred1[i] == d->label[i];
    for (int k = 0; k < PB_CAL_N; k++) {
      x1[k][i] = pb_calib__score(cm, k, d->s1[i]);
      brier[k] += (x1[k][i] - c1) * (x1[k][i] - c1);
    }
    const double tr = cm->thr[PB_CAL_RAW][PB_F1_Q80];
    for (int k = 1; k < PB_CAL_N; k++) {
      const double tc = cm->thr[k][PB_F1_Q80];
      changed[k] += ((x0[0][i] >= tr) != (x0[k][i] >= tc)) + ((x1[0][i] >= tr) != (x1[k][i] >= tc));
    }
  }
  int64_t counts[PB_CAL_N][PB_F1_N_PROTOCOLS][PB_F1_N_COUNTS];
  for (int k = 0; k < PB_CAL_N; k++) pb_bounds_f1_cell(d, x0[k], x1[k], cm->thr[k], counts[k]);
  for (int k = 0; k < PB_CAL_N; k++) {
    double *r = rec + (k == PB_CAL_ISO ? PB_IF_F1_ISO : PB_IF_F1 + k * PB_F1_N_PROTOCOLS * PB_F1_N_COUNTS);
    for (int p = 0; p < PB_F1_N_PROTOCOLS; p++)
      for (int q = 0; q < PB_F1_N_COUNTS; q++) *r++ = (double)counts[k][p][q];
  }
  rec[PB_IF_F1_CHANGED] = (double)changed[PB_CAL_PLATT];
  rec[PB_IF_F1_BRIER1_RAW] = brier[PB_CAL_RAW] / d->n;
  rec[PB_IF_F1_BRIER1_PLATT] = brier[PB_CAL_PLATT] / d->n;
  rec[PB_IF_F1_PLATT_A] = cm->ab[0];
  rec[PB_IF_F1_PLATT_B] = cm->ab[1];
  rec[PB_IF_F1_BRIER0_RAW] = cm->brier[PB_CAL_RAW];
  rec[PB_IF_F1_BRIER0_PLATT] = cm->brier[PB_CAL_PLATT];
  rec[PB_IF_F1_ISO_CHANGED] = (double)changed[PB_CAL_ISO];
  rec[PB_IF_F1_BRIER1_ISO] = brier[PB_CAL_ISO] / d->n;
  rec[PB_IF_F1_BRIER0_ISO] = cm->brier[PB_CAL_ISO];
  rec[PB_IF_F1_ISO_BLOCKS] = cm->iso.n;
  rec[PB_IF_F1_BRIER0_MC] = cm->brier_mc;
  if (d->q0) { /* the cell's collision column was loaded (the store has one) */
    double mc[2];
    pb_bounds_brier_multiclass_cell(d, mc);
    rec[PB_IF_F1_BRIER_CLEAN_MC] = mc[0], rec[PB_IF_F1_BRIER1_MC] = mc[1];
  }
  if (!cm->group) return;
  rec[PB_IF_GAP_ERRORS] = cm->gap_errors;
  rec[PB_IF_GAP_CUT_LOW] = cm->cut[0];
  rec[PB_IF_GAP_CUT_HIGH] = cm->cut[1];
  if (cm->gap_errors < PB_GAP_MIN_ERRORS) return;
  int64_t g[PB_GAP_N_GROUPS][PB_GAP_N_COUNTS];
  pb_bounds_gap_cell(d, cm->group, g);
  for (int k = 0; k < PB_GAP_N_GROUPS * PB_GAP_N_COUNTS; k++) rec[PB_IF_GAP + k] = (double)(&g[0][0])[k];
}

int pb_bounds_calib_prep(const struct pb_stage *st, int32_t s, struct pb_bounds_calib_src *p)
{
  const struct pb_meta *meta = st->meta;
  const int32_t M = meta->n_models;
  const struct pb_source *src = &meta->sources[s];
  memset(p, 0, sizeof *p);
  int32_t n_dev = 0;
  for (int32_t i = 0; i < src->n_images; i++) n_dev += src->split[i] == PB_SPLIT_DEV;
  if (n_dev == 0) return PB_OK; /* no development records: the fields stay NaN */
  int32_t *rows = pb_malloc((size_t)M * sizeof *rows);
  for (int32_t m = 0; m < M; m++) rows[m] = m * src->n_conditions + src->clean;
  struct pb_rows r;
  /* the gap needs the top-2 probabilities: a store with shorter top-k lists has no gap analysis */
  const int gap = meta->topk >= 2, mc = (meta->summaries & PB_SUMMARY_COLLISION) != 0;
  const int fields =
    PB_FIELD_PRED | PB_FIELD_SMAX | (gap ? PB_FIELD_TOPK : 0) | (mc ? PB_FIELD_PTRUE | PB_FIELD_COLLISION : 0);
  int status = pb_store_agree(st->store, pb_store_read_fields(st->store, s, M, rows, fields, &r));
  free(rows);
  if (status != PB_OK) return status;
  struct pb_calib__model *cm = pb_calloc((size_t)M, sizeof *cm);
#pragma omp parallel for schedule(dynamic, 1)
  for (int32_t m = 0; m < M; m++) {
    const size_t o = (size_t)m * src->n_images;
    pb_calib__model(src, r.pred + o, r.smax + o, n_dev, &cm[m]);
    cm[m].gap_errors = -1;
    cm[m].brier_mc = mc ? pb_calib__brier_mc(src, r.ptrue + o, r.collision + o, n_dev) : NAN;
    if (gap) pb_calib__gap(src, r.pred + o, r.topk_prob + o * r.topk, r.topk, &cm[m]);
  }
  pb_store_rows_free(&r);
  p->n_models = M;
  p->models = cm;
  return PB_OK;
}

void pb_bounds_calib_cells(const struct pb_stage *st, const struct pb_bounds_calib_src *p,
                             const struct pb_cell_block *b, double *recs)
{
  if (!p->models) return;
  int32_t nmax = 1;
  for (int64_t c = 0; c < b->n_cells; c++) nmax = b->cells[c].n > nmax ? b->cells[c].n : nmax;
#pragma omp parallel
  {
    double *x = pb_malloc(4 * (size_t)nmax * sizeof *x);
#pragma omp for schedule(dynamic, 16)
    for (int64_t c = 0; c < b->n_cells; c++) {
      if (b->cells[c].n == 0) continue;
      const struct pb_cell_view d = pb_cells_view(st->meta, &b->cells[c], NAN);
      pb_calib__cell(&d, &p->models[b->cells[c].ref.model], x, recs + c * PB_IF_N);
    }
    free(x);
  }
}

void pb_bounds_calib_free(struct pb_bounds_calib_src *p)
{
  for (int32_t m = 0; m < p->n_models; m++) {
    for (int k = 0; k < PB_CAL_N - 1; k++) free(p->models[m].c0[k]);
    pb_bounds_iso_free(&p->models[m].iso);
    free(p->models[m].group);
  }
  free(p->models);
  memset(p, 0, sizeof *p);
}
