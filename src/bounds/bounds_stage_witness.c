/* `pairbound bounds --witnesses`: every cell's witness correspondences
 * (pb_bounds_witness_cell) held by the rank that computes the cell and
 * written by it into /bounds/witnesses (docs/bounds.md, "Witnesses"). */
#include "config.h"

#include <stdlib.h>

#include <mpi.h>

#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/lsets.h"
#include "pairbound/results.h"
#include "pairbound/stage.h"
#include "bounds_stage_internal.h"

/* Names of the four permutation datasets, in enum pb_witness order. */
static const char *const pb_bounds__witness_names[PB_WITNESS_N] = {"Ik_lo", "Ik_hi", "I5_lo", "I5_hi"};

void pb_bounds_witness_setup(const struct pb_stage *st, struct pb_bounds_wit *w)
{
  const struct pb_meta *meta = st->meta;
  const int64_t n = st->last - st->first, nalloc = n > 0 ? n : 1;
  int64_t *n_eval = pb_calloc((size_t)(meta->n_sources > 0 ? meta->n_sources : 1), sizeof *n_eval);
  for (int32_t s = 0; s < meta->n_sources; s++)
    for (int32_t i = 0; i < meta->sources[s].n_images; i++) n_eval[s] += meta->sources[s].split[i] == PB_SPLIT_EVAL;
  w->off = pb_malloc((size_t)(nalloc + 1) * sizeof *w->off);
  w->ref = pb_malloc((size_t)nalloc * sizeof *w->ref);
  w->off[0] = 0;
  for (int64_t c = 0; c < n; c++) {
    w->ref[c] = pb_dist_cell_at(meta, st->first + c);
    w->off[c + 1] = w->off[c] + n_eval[w->ref[c].source];
  }
  free(n_eval);
  w->n_local = w->off[n];
  for (int v = 0; v < PB_WITNESS_N; v++) w->perm[v] = pb_malloc((size_t)(w->n_local > 0 ? w->n_local : 1) * sizeof(int32_t));
}

void pb_bounds_witness_free(struct pb_bounds_wit *w)
{
  free(w->off);
  free(w->ref);
  for (int v = 0; v < PB_WITNESS_N; v++) free(w->perm[v]);
}

/* Collective: each rank writes its cells' offsets, sizes and store indices
 * and its slice of the four permutations at its offset (one MPI_Exscan). */
int pb_bounds_witness_write(struct pb_stage *st, const struct pb_bounds_wit *w)
{
  const int64_t n = st->last - st->first, nalloc = n > 0 ? n : 1;
  int64_t base = 0, total = 0;
  MPI_Exscan(&w->n_local, &base, 1, MPI_INT64_T, MPI_SUM, st->comm);
  if (st->rank == 0) base = 0; /* MPI_Exscan leaves rank 0's result undefined */
  MPI_Allreduce(&w->n_local, &total, 1, MPI_INT64_T, MPI_SUM, st->comm);
  int64_t *col[5];
  for (int j = 0; j < 5; j++) col[j] = pb_malloc((size_t)nalloc * sizeof *col[j]);
  for (int64_t c = 0; c < n; c++) {
    col[0][c] = base + w->off[c];
    col[1][c] = w->off[c + 1] - w->off[c];
    col[2][c] = w->ref[c].source;
    col[3][c] = w->ref[c].model;
    col[4][c] = w->ref[c].condition;
  }
  static const char *const cols[5] = {"offset", "n", "source", "model", "condition"};
  int status = pb_results_group(st->results, PB_BOUNDS_WITNESS_GROUP);
  /* the correctness the witnesses attain their ends under: a checker maps predictions alike (docs/verify.md) */
  if (status == PB_OK)
    status = pb_results_attr_str(st->results, PB_BOUNDS_WITNESS_GROUP, "labels",
                                 pb_store_labels_mode(st->store) == PB_LABELS_SET ? "set" : "single");
  for (int j = 0; j < 5 && status == PB_OK; j++) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", PB_BOUNDS_WITNESS_GROUP, cols[j]);
    status = pb_results_write_i64(st->results, path, st->n_cells, st->first, n, col[j]);
  }
  for (int v = 0; v < PB_WITNESS_N && status == PB_OK; v++) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", PB_BOUNDS_WITNESS_GROUP, pb_bounds__witness_names[v]);
    status = pb_results_write_i32(st->results, path, total, base, w->n_local, w->perm[v]);
  }
  for (int j = 0; j < 5; j++) free(col[j]);
  return status;
}
