/* Loading a rank's cells: the evaluation records of each model x perturbed
 * condition cell together with the same model's clean records. */
#ifndef PAIRBOUND_CELLS_H
#define PAIRBOUND_CELLS_H

#include <stdint.h>
#include <mpi.h>

#include "pairbound/cell.h"
#include "pairbound/dist.h"
#include "pairbound/store.h"

/* One cell, evaluation images only, in store image order (image i pairs with image i). */
struct pb_cell_data {
  struct pb_cell_ref ref;
  int64_t index;                 /* global cell index */
  int32_t n;                     /* evaluation images */
  const int32_t *label;          /* [n] true labels */
  const int32_t *pred0, *pred1;  /* clean / perturbed predicted labels */
  const float *s0, *s1;          /* max probabilities (NULL unless loaded) */
  const float *m0, *m1;          /* true-class probabilities (NULL unless loaded) */
};

struct pb_cell_block {
  int64_t first, n_cells;
  struct pb_cell_data *cells;
  int32_t n_sources;
  struct pb_rows *rows;          /* [n_sources] evaluation-only records of the rows read */
  int32_t **labels;              /* [n_sources] evaluation labels */
};

/**
 * Load cells [first, last) of the global cell list (collective: every rank
 * calls with its own range).  @p fields is a PB_FIELD_* mask.
 */
int pb_cells_load(struct pb_store *st, int64_t first, int64_t last, int fields, struct pb_cell_block *out);

/**
 * As pb_cells_load, reading only the cells c with want[c - first] != 0 (the
 * others keep their ref and index, with n = 0 and no records), so a stage
 * restricted to the panel reads only the panel's rows.
 */
int pb_cells_load_selected(struct pb_store *st, int64_t first, int64_t last, int fields, const uint8_t *want,
                           struct pb_cell_block *out);
void pb_cells_free(struct pb_cell_block *b);

/**
 * The kernels' view of a loaded cell with threshold @p tau: every field named,
 * the names of its model, source and condition taken from @p meta.
 */
struct pb_cell_view pb_cells_view(const struct pb_meta *meta, const struct pb_cell_data *d, float tau);

#endif /* PAIRBOUND_CELLS_H */
