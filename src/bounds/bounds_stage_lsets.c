/* `pairbound bounds`, Tables 47 and 48 (seed 000 Section 7, Appendix J.1):
 * on a store with label sets, every rank counts both conventions on its
 * cells' matched images (pb_bounds_lsets_cell) from their stored
 * predictions: in the stage's own pass over the cells under labels =
 * single, where those are the predictions it reads, else read again here
 * (PB_FIELD_ORIGINAL);
 * the integer counts are summed per source, exactly, onto rank 0, and so
 * are the cells' restricted dM_k (pairbound/agg.h), so that neither depends
 * on the ranks or threads. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/agg.h"
#include "pairbound/bounds.h"
#include "pairbound/cells.h"
#include "pairbound/comm.h"
#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/lsets.h"
#include "pairbound/stage.h"
#include "bounds_stage_internal.h"

/* A cell's restricted dM_k into its source's slots, where both conventions have it (the change is then
 * defined, and the three means are over the same cells). */
static void pb_bounds__lsets_dmk(struct pb_agg *a, int32_t s, const double dmk[2])
{
  if (isnan(dmk[0]) || isnan(dmk[1])) return;
  pb_agg_add(a, (int64_t)s * PB_LSD_N + PB_LSD_ORIGINAL, dmk[0]);
  pb_agg_add(a, (int64_t)s * PB_LSD_N + PB_LSD_SET, dmk[1]);
  pb_agg_add(a, (int64_t)s * PB_LSD_N + PB_LSD_CHANGE, dmk[1] - dmk[0]);
}

void pb_bounds_lsets_cells_alloc(int64_t n, struct pb_bounds_lsets_cells *lc)
{
  lc->rec = pb_calloc((size_t)(n > 0 ? n : 1) * PB_LS_N_SLOTS, sizeof *lc->rec);
  lc->dmk = pb_malloc((size_t)(n > 0 ? n : 1) * 2 * sizeof *lc->dmk);
  for (int64_t c = 0; c < 2 * n; c++) lc->dmk[c] = NAN;
}

void pb_bounds_lsets_cells_free(struct pb_bounds_lsets_cells *lc)
{
  free(lc->rec);
  free(lc->dmk);
  lc->rec = NULL;
  lc->dmk = NULL;
}

void pb_bounds_lsets_block(const struct pb_meta *meta, const struct pb_cell_block *b, int32_t s, const int64_t *off,
                           const int32_t *ids, const float *tau, int64_t *rec, double *dmk)
{
  const int32_t K = meta->sources[s].n_classes;
#pragma omp parallel for schedule(dynamic)
  for (int64_t c = 0; c < b->n_cells; c++) {
    const struct pb_cell_data *d = &b->cells[c];
    if (d->ref.source != s || d->n == 0) continue;
    const struct pb_cell_view v = pb_cells_view(meta, d, tau[c]);
    pb_bounds_lsets_cell(&v, off, ids, K, rec + c * PB_LS_N_SLOTS, dmk + 2 * c);
  }
}

/* Under labels = set the stage's predictions are the set map: the stored ones are read again, for the cells
 * of the sources with sets only. */
static int pb_bounds__lsets_reread(const struct pb_stage *st, const struct pb_bounds_options *opt,
                                   struct pb_bounds_lsets_cells *lc)
{
  const struct pb_meta *meta = st->meta;
  const int64_t n = st->last - st->first;
  struct pb_cell_block b;
  uint8_t *want = pb_dist_lsets_cells(meta, st->first, st->last, NULL);
  int status = pb_cells_load_selected(st->store, st->first, st->last,
                                      PB_FIELD_PRED | PB_FIELD_SMAX | PB_FIELD_PTRUE | PB_FIELD_ORIGINAL, want, &b);
  free(want);
  if (status != PB_OK) return status;
  float *tau = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *tau);
  for (int64_t c = 0; c < n; c++) {
    const struct pb_cell_ref *r = &b.cells[c].ref;
    tau[c] = opt->have_tau ? opt->tau : st->protocol.src[r->source].tau[r->model];
  }
  for (int32_t s = 0; s < meta->n_sources; s++) {
    if (!pb_lsets_source_has(&meta->sources[s])) continue;
    int64_t *off;
    int32_t *ids;
    pb_lsets_eval(&meta->sources[s], &off, &ids);
    pb_bounds_lsets_block(meta, &b, s, off, ids, tau, lc->rec, lc->dmk);
    free(off);
    free(ids);
  }
  free(tau);
  pb_cells_free(&b);
  return PB_OK;
}

int pb_bounds_lsets(const struct pb_stage *st, const struct pb_bounds_options *opt,
                    const struct pb_bounds_lsets_cells *lc, struct pb_bounds_lsets *out)
{
  const struct pb_meta *meta = st->meta;
  out->tot = NULL;
  if (!pb_store_has_lsets(meta)) return PB_OK;
  const int64_t n = st->last - st->first, N = (int64_t)meta->n_sources * PB_LS_N_SLOTS;
  struct pb_bounds_lsets_cells own = {NULL, NULL};
  int status = PB_OK;
  if (!lc) {
    pb_bounds_lsets_cells_alloc(n, &own);
    status = pb_bounds__lsets_reread(st, opt, &own);
    lc = &own;
  }
  int64_t *tot = pb_calloc((size_t)N, sizeof *tot);
  pb_agg_init(&out->dmk, (int64_t)meta->n_sources * PB_LSD_N);
  /* integer sums: exact in any order, the same for any ranks and threads */
  for (int64_t c = 0; c < n && status == PB_OK; c++) {
    const int32_t s = pb_dist_cell_at(meta, st->first + c).source;
    for (int k = 0; k < PB_LS_N_SLOTS; k++) tot[(size_t)s * PB_LS_N_SLOTS + k] += lc->rec[c * PB_LS_N_SLOTS + k];
    pb_bounds__lsets_dmk(&out->dmk, s, lc->dmk + 2 * c);
  }
  pb_bounds_lsets_cells_free(&own);
  status = pb_error_agree(st->comm, status);
  if (status == PB_OK)
    status = pb_comm_reduce(st->rank == 0 ? MPI_IN_PLACE : tot, tot, (int)N, MPI_INT64_T, MPI_SUM, 0, st->comm);
  if (status == PB_OK) status = pb_agg_reduce(&out->dmk, st->comm, 0);
  if (status == PB_OK) out->tot = tot;
  else {
    free(tot);
    pb_agg_free(&out->dmk);
  }
  return status;
}

void pb_bounds_lsets_free(struct pb_bounds_lsets *ls)
{
  free(ls->tot);
  ls->tot = NULL;
  pb_agg_free(&ls->dmk);
}
