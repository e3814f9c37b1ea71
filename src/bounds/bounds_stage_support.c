/* `pairbound bounds`, Appendix J.2: cross-model support for each cell's clean
 * wrong answers.  Every rank reads the clean predictions of every model (one
 * row per model and source, predicted labels only) and scores its own cells. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/bounds.h"
#include "pairbound/cells.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/stage.h"
#include "bounds_stage_internal.h"

/* Clean predictions of every model on source s's evaluation images (collective). */
static int pb_bounds__clean_eval(struct pb_store *store, const struct pb_source *src, int32_t s, int32_t n_models,
                                   int32_t *clean, int32_t *label, int32_t *n_eval)
{
  int32_t *rows = pb_malloc((size_t)n_models * sizeof *rows);
  for (int32_t m = 0; m < n_models; m++) rows[m] = m * src->n_conditions + src->clean;
  struct pb_rows r;
  int status = pb_store_read_fields(store, s, n_models, rows, PB_FIELD_PRED, &r);
  free(rows);
  if (status != PB_OK) return status;
  int32_t ne = 0;
  for (int32_t i = 0; i < src->n_images; i++)
    if (src->split[i] == PB_SPLIT_EVAL) label[ne++] = src->labels[i];
  for (int32_t m = 0; m < n_models; m++) {
    int32_t j = 0;
    for (int32_t i = 0; i < src->n_images; i++)
      if (src->split[i] == PB_SPLIT_EVAL) clean[(size_t)m * ne + j++] = r.pred[(size_t)m * src->n_images + i];
  }
  *n_eval = ne;
  pb_store_rows_free(&r);
  return PB_OK;
}

int pb_bounds_support_prep(const struct pb_stage *st, int32_t s, struct pb_bounds_support_src *p)
{
  const struct pb_meta *meta = st->meta;
  const struct pb_source *src = &meta->sources[s];
  const int32_t M = meta->n_models;
  memset(p, 0, sizeof *p);
  int32_t *group = pb_malloc((size_t)M * sizeof *group);
  const int32_t ng = pb_meta_model_groups(meta, group);
  int32_t *clean = pb_malloc(((size_t)M * src->n_images + 1) * sizeof *clean);
  int32_t *label = pb_malloc(((size_t)src->n_images + 1) * sizeof *label), ne = 0;
  int status = pb_store_agree(st->store, pb_bounds__clean_eval(st->store, src, s, M, clean, label, &ne));
  if (status == PB_OK) {
    p->ne = ne;
    p->plane = (size_t)M * ne;
    p->support = pb_malloc((PB_SUPPORT_N * p->plane + 1) * sizeof *p->support);
    pb_bounds_clean_support(M, ng, group, ne, label, clean, p->support);
  }
  free(clean);
  free(label);
  free(group);
  return status;
}

void pb_bounds_support_cells(const struct pb_stage *st, const struct pb_bounds_support_src *p,
                               const struct pb_cell_block *b, double *recs)
{
  if (!p->support) return;
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t c = 0; c < b->n_cells; c++) {
    const struct pb_cell_data *d = &b->cells[c];
    if (d->n != p->ne) continue;
    const struct pb_cell_view v = pb_cells_view(st->meta, d, NAN);
    const double *sup[PB_SUPPORT_N];
    for (int k = 0; k < PB_SUPPORT_N; k++) sup[k] = p->support + k * p->plane + (size_t)d->ref.model * p->ne;
    int64_t counts[PB_SUPPORT_N][PB_SUPPORT_N_STRATA][2];
    pb_bounds_support_cell(&v, sup, counts);
    double *r = recs + c * PB_IF_N + PB_IF_J2;
    for (int k = 0; k < PB_SUPPORT_N * PB_SUPPORT_N_STRATA * 2; k++) r[k] = (double)(&counts[0][0][0])[k];
  }
}

void pb_bounds_support_free(struct pb_bounds_support_src *p)
{
  free(p->support);
  memset(p, 0, sizeof *p);
}
