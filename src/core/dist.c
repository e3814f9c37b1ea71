/* Deterministic cost-aware partition of ordered work lists over MPI ranks. */
#include "config.h"

#include <stdlib.h>

#include <mpi.h>

#include "pairbound/comm.h"
#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/lsets.h"

void pb_dist_partition(int64_t n, const int64_t *cost, int nparts, int64_t *first)
{
  int64_t total = 0;
  for (int64_t i = 0; i < n; i++) total += cost ? cost[i] : 1;
  int p = 0;
  int64_t before = 0;
  first[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t c = cost ? cost[i] : 1;
    /* midpoint of item i is before + c/2; it belongs to part floor(2*mid*P / (2*total)) */
    int64_t part = total > 0 ? (int64_t)(((2 * (__int128)before + c) * nparts) / (2 * (__int128)total)) : 0;
    if (part >= nparts) part = nparts - 1;
    while (p < part) first[++p] = i;
    before += c;
  }
  while (p < nparts) first[++p] = n;
}

void pb_dist_partition_bcast(int64_t n, const int64_t *cost, MPI_Comm comm, int64_t *first)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (rank == 0) pb_dist_partition(n, cost, size, first);
  pb_comm_bcast(first, size + 1, MPI_INT64_T, 0, comm);
}

int32_t pb_dist_eval_count(const struct pb_source *src)
{
  int32_t n = 0;
  for (int32_t i = 0; i < src->n_images; i++) n += src->split[i] == PB_SPLIT_EVAL;
  return n;
}

int64_t pb_dist_cells(const struct pb_meta *meta, struct pb_cell_ref **cells)
{
  int64_t n = pb_meta_cells(meta), k = 0;
  struct pb_cell_ref *c = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
  for (int32_t s = 0; s < meta->n_sources; s++)
    for (int32_t m = 0; m < meta->n_models && !pb_meta_is_probe(&meta->sources[s]); m++)
      for (int32_t j = 0; j < meta->sources[s].n_conditions; j++)
        if (j != meta->sources[s].clean) c[k++] = (struct pb_cell_ref){s, m, j};
  *cells = c;
  return n;
}

struct pb_cell_ref pb_dist_cell_at(const struct pb_meta *meta, int64_t index)
{
  for (int32_t s = 0; s < meta->n_sources && index >= 0; s++) {
    const struct pb_source *src = &meta->sources[s];
    if (pb_meta_is_probe(src)) continue;
    const int has_clean = src->clean >= 0 && src->clean < src->n_conditions;
    const int64_t per = src->n_conditions - has_clean, n = (int64_t)meta->n_models * per;
    if (index < n) {
      const int32_t j = (int32_t)(index % per);
      return (struct pb_cell_ref){s, (int32_t)(index / per), j + (has_clean && j >= src->clean)};
    }
    index -= n;
  }
  return (struct pb_cell_ref){-1, -1, -1};
}

void pb_dist_my_cells(const struct pb_meta *meta, MPI_Comm comm, int64_t *first, int64_t *last)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  struct pb_cell_ref *cells;
  int64_t n = pb_dist_cells(meta, &cells);
  int64_t *cost = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *cost);
  for (int64_t i = 0; i < n; i++) cost[i] = pb_dist_eval_count(&meta->sources[cells[i].source]);
  int64_t *bounds = pb_malloc((size_t)(size + 1) * sizeof *bounds);
  pb_dist_partition_bcast(n, cost, comm, bounds);
  *first = bounds[rank];
  *last = bounds[rank + 1];
  free(bounds);
  free(cost);
  free(cells);
}

void pb_dist_my_rows(const struct pb_meta *meta, MPI_Comm comm, int32_t *lo, int32_t *hi)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int64_t n = 0;
  for (int32_t s = 0; s < meta->n_sources; s++) n += (int64_t)meta->n_models * meta->sources[s].n_conditions;
  int64_t *cost = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *cost);
  int64_t *first = pb_malloc((size_t)(size + 1) * sizeof *first);
  for (int32_t s = 0, x = 0; s < meta->n_sources; s++)
    for (int64_t r = 0; r < (int64_t)meta->n_models * meta->sources[s].n_conditions; r++)
      cost[x++] = meta->sources[s].n_images;
  pb_dist_partition_bcast(n, cost, comm, first);
  int64_t offset = 0;
  for (int32_t s = 0; s < meta->n_sources; s++) {
    int64_t rows = (int64_t)meta->n_models * meta->sources[s].n_conditions;
    int64_t a = first[rank] - offset, b = first[rank + 1] - offset;
    lo[s] = (int32_t)(a < 0 ? 0 : a > rows ? rows : a);
    hi[s] = (int32_t)(b < 0 ? 0 : b > rows ? rows : b);
    offset += rows;
  }
  free(first);
  free(cost);
}

uint8_t *pb_dist_lsets_cells(const struct pb_meta *meta, int64_t first, int64_t last, const uint8_t *cov)
{
  const int64_t n = last - first;
  uint8_t *with = pb_malloc((size_t)(n > 0 ? n : 1));
  for (int64_t c = 0; c < n; c++)
    with[c] = (!cov || cov[first + c]) && pb_lsets_source_has(&meta->sources[pb_dist_cell_at(meta, first + c).source]);
  return with;
}
