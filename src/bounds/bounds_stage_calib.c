/* `pairbound bounds`, Appendix F.1 / Table 40: acceptance under the quantile
 * protocol, the 5% risk rule and absolute thresholds, on raw and on
 * Platt-scaled scores fitted on each model's clean development records.
 * It lives here because its outputs are bounds' own targets (H, L, the
 * accepted-error rate) under other thresholds, on the cells bounds loads.
 * Every rank reads the clean rows of every model (predictions and S) and
 * fits every model's calibrator; each scores its own cells. */
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

/* Per model of one source: Platt (a, b), development Brier scores raw and
 * Platt, and the thresholds [raw, Platt][protocol]. */
struct pb_calib__model {
  double ab[2], brier[2], thr[2][PB_F1_N_PROTOCOLS];
  double *p0;  /* Platt scores of the clean evaluation records, shared by the model's cells */
};

/* Fit and thresholds of model m from its clean row (all images of the source). */
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
  out->brier[0] = out->brier[1] = 0.0;
  for (int32_t i = 0; i < n_dev; i++) {
    const double p = pb_bounds_platt_apply(out->ab, s[i]);
    out->brier[0] += ((double)s[i] - c[i]) * ((double)s[i] - c[i]);
    out->brier[1] += (p - c[i]) * (p - c[i]);
  }
  out->brier[0] /= n_dev;
  out->brier[1] /= n_dev;
  for (int k = 0; k < 2; k++) {
    for (int32_t i = 0; i < n_dev; i++) v[i] = k ? pb_bounds_platt_apply(out->ab, s[i]) : (double)s[i];
    pb_bounds_f1_thresholds(v, c, n_dev, out->thr[k]);
  }
  out->p0 = pb_malloc(((size_t)src->n_images - n_dev + 1) * sizeof *out->p0);
  j = 0;
  for (int32_t i = 0; i < src->n_images; i++)
    if (src->split[i] == PB_SPLIT_EVAL) out->p0[j++] = pb_bounds_platt_apply(out->ab, smax[i]);
  free(s);
  free(c);
  free(v);
}

/* One cell's F.1 fields from its model's calibration. */
static void pb_calib__cell(const struct pb_cell_view *d, const struct pb_calib__model *cm, double *x, double *rec)
{
  double *x0 = x, *x1 = x + d->n, *p1 = x + 2 * (size_t)d->n;
  const double *p0 = cm->p0;
  double brier[2] = {0, 0};
  int64_t changed = 0;
  for (int32_t i = 0; i < d->n; i++) {
    x0[i] = d->s0[i], x1[i] = d->s1[i];
    p1[i] = pb_bounds_platt_apply(cm->ab, d->s1[i]);
    const int c1 = d->pred1[i] == d->label[i];
    brier[0] += (x1[i] - c1) * (x1[i] - c1);
    brier[1] += (p1[i] - c1) * (p1[i] - c1);
    const double tr = cm->thr[0][PB_F1_Q80], tp = cm->thr[1][PB_F1_Q80];
    changed += ((x0[i] >= tr) != (p0[i] >= tp)) + ((x1[i] >= tr) != (p1[i] >= tp));
  }
  int64_t counts[2][PB_F1_N_PROTOCOLS][PB_F1_N_COUNTS];
  pb_bounds_f1_cell(d, x0, x1, cm->thr[0], counts[0]);
  pb_bounds_f1_cell(d, p0, p1, cm->thr[1], counts[1]);
  double *r = rec + PB_IF_F1;
  for (int k = 0; k < 2; k++)
    for (int p = 0; p < PB_F1_N_PROTOCOLS; p++)
      for (int q = 0; q < PB_F1_N_COUNTS; q++) *r++ = (double)counts[k][p][q];
  rec[PB_IF_F1_CHANGED] = (double)changed;
  rec[PB_IF_F1_BRIER1_RAW] = brier[0] / d->n;
  rec[PB_IF_F1_BRIER1_PLATT] = brier[1] / d->n;
  rec[PB_IF_F1_PLATT_A] = cm->ab[0];
  rec[PB_IF_F1_PLATT_B] = cm->ab[1];
  rec[PB_IF_F1_BRIER0_RAW] = cm->brier[0];
  rec[PB_IF_F1_BRIER0_PLATT] = cm->brier[1];
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
  int status = pb_error_agree(st->comm, pb_store_read_fields(st->store, s, M, rows, PB_FIELD_PRED | PB_FIELD_SMAX, &r));
  free(rows);
  if (status != PB_OK) return status;
  struct pb_calib__model *cm = pb_malloc((size_t)M * sizeof *cm);
#pragma omp parallel for schedule(dynamic, 1)
  for (int32_t m = 0; m < M; m++)
    pb_calib__model(src, r.pred + (size_t)m * src->n_images, r.smax + (size_t)m * src->n_images, n_dev, &cm[m]);
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
    double *x = pb_malloc(3 * (size_t)nmax * sizeof *x);
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
  for (int32_t m = 0; m < p->n_models; m++) free(p->models[m].p0);
  free(p->models);
  memset(p, 0, sizeof *p);
}
