/* MPI work distribution: deterministic, cost-aware contiguous partitions of
 * ordered work lists (rows, cells, replicate blocks). */
#ifndef PAIRBOUND_DIST_H
#define PAIRBOUND_DIST_H

#include <stdint.h>
#include <mpi.h>

#include "pairbound/cell.h"
#include "pairbound/store.h"

/**
 * Split items 0..n-1 (in order) into @p nparts contiguous ranges of nearly
 * equal total cost: part p gets [first[p], first[p+1]).  Item i goes to the
 * part whose share of the total cost contains the midpoint of its own cost, so
 * the rule is exact integer arithmetic and identical on every rank.
 * @param first array of nparts + 1 entries.
 */
void pb_dist_partition(int64_t n, const int64_t *cost, int nparts, int64_t *first);

/** Partition computed on rank 0 and broadcast (the style every stage uses). */
void pb_dist_partition_bcast(int64_t n, const int64_t *cost, MPI_Comm comm, int64_t *first);


/** All cells of a store in global order, and the number of evaluation images of each source. */
int64_t pb_dist_cells(const struct pb_meta *meta, struct pb_cell_ref **cells);
int32_t pb_dist_eval_count(const struct pb_source *src);
/** Cell @p index of the global order of pb_dist_cells, without the list ({-1, -1, -1} past the end). */
struct pb_cell_ref pb_dist_cell_at(const struct pb_meta *meta, int64_t index);
/** Which of the cells [first, last) of that order belong to a source with label sets and, where @p cov is not
 *  NULL, are covered (cov[first + c]): a [last - first] array of 0/1 (caller frees), the selection of
 *  pb_cells_load_selected for the label-set passes of bounds and verify. */
uint8_t *pb_dist_lsets_cells(const struct pb_meta *meta, int64_t first, int64_t last, const uint8_t *cov);

/**
 * Cells of this rank: a contiguous range [*first, *last) of the global cell
 * list, balanced by evaluation records per cell.
 */
void pb_dist_my_cells(const struct pb_meta *meta, MPI_Comm comm, int64_t *first, int64_t *last);

/**
 * Rows (model x condition, clean included) of this rank: for each source s the
 * range [lo[s], hi[s]) of its rows, from one source-major list balanced by records.
 */
void pb_dist_my_rows(const struct pb_meta *meta, MPI_Comm comm, int32_t *lo, int32_t *hi);

#endif /* PAIRBOUND_DIST_H */
