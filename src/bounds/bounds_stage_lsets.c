/* `pairbound bounds`, Tables 47 and 48 (seed 000 Section 7, Appendix J.1):
 * on a store with label sets, every rank reads its cells' stored
 * predictions (PB_FIELD_ORIGINAL: whichever convention `labels` chose) and
 * counts both conventions on the matched images (pb_bounds_lsets_cell);
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

int pb_bounds_lsets(const struct pb_stage *st, const struct pb_bounds_options *opt, struct pb_bounds_lsets *out)
{
  const struct pb_meta *meta = st->meta;
  out->tot = NULL;
  if (!pb_store_has_lsets(meta)) return PB_OK;
  const int64_t n = st->last - st->first, N = (int64_t)meta->n_sources * PB_LS_N_SLOTS;
  struct pb_cell_block b;
  int status = pb_cells_load(st->store, st->first, st->last,
                             PB_FIELD_PRED | PB_FIELD_SMAX | PB_FIELD_PTRUE | PB_FIELD_ORIGINAL, &b);
  int64_t *tot = pb_calloc((size_t)N, sizeof *tot), *rec = pb_calloc((size_t)(n > 0 ? n : 1) * PB_LS_N_SLOTS, sizeof *rec);
  double *dmk = pb_malloc((size_t)(n > 0 ? n : 1) * 2 * sizeof *dmk);
  for (int64_t c = 0; c < 2 * n; c++) dmk[c] = NAN;
  pb_agg_init(&out->dmk, (int64_t)meta->n_sources * PB_LSD_N);
  for (int32_t s = 0; s < meta->n_sources && status == PB_OK; s++) {
    const struct pb_source *src = &meta->sources[s];
    if (!pb_lsets_source_has(src)) continue;
    int64_t *off;
    int32_t *ids;
    pb_lsets_eval(src, &off, &ids);
#pragma omp parallel for schedule(dynamic)
    for (int64_t c = 0; c < n; c++) {
      const struct pb_cell_data *d = &b.cells[c];
      if (d->ref.source != s || d->n == 0) continue;
      const float tau = opt->have_tau ? opt->tau : st->protocol.src[s].tau[d->ref.model];
      const struct pb_cell_view v = pb_cells_view(meta, d, tau);
      pb_bounds_lsets_cell(&v, off, ids, src->n_classes, rec + c * PB_LS_N_SLOTS, dmk + 2 * c);
    }
    free(off);
    free(ids);
  }
  /* integer sums: exact in any order, the same for any ranks and threads */
  for (int64_t c = 0; c < n && status == PB_OK; c++) {
    const int32_t s = b.cells[c].ref.source;
    for (int k = 0; k < PB_LS_N_SLOTS; k++) tot[(size_t)s * PB_LS_N_SLOTS + k] += rec[c * PB_LS_N_SLOTS + k];
    pb_bounds__lsets_dmk(&out->dmk, s, dmk + 2 * c);
  }
  free(rec);
  free(dmk);
  if (status == PB_OK) pb_cells_free(&b);
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
