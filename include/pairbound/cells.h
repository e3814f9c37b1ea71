/* Loading a rank's cells: the evaluation records of each model x perturbed
 * condition cell together with the same model's clean records. */
#ifndef PAIRBOUND_CELLS_H
#define PAIRBOUND_CELLS_H

#include <stdint.h>
#include <mpi.h>

#include "pairbound/cell.h"
#include "pairbound/dist.h"
#include "pairbound/store.h"

struct pb_cell_block {
  int64_t first, n_cells;
  struct pb_cell_data *cells;
  int32_t n_sources;
  struct pb_rows *rows;          /* [n_sources] evaluation-only records of the rows read */
  int32_t **labels;              /* [n_sources] evaluation labels */
};

/**
 * Load cells [first, last) of the global cell list (collective: every rank
 * calls with its own range).  @p fields is a PB_FIELD_* mask of PRED, SMAX,
 * PTRUE and COLLISION (read only where the store has the column; else the
 * cells' q0/q1 stay NULL); top-k lists and entropy are not held.
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
 * A rank's cells [first, last) in pieces, loaded through buffers reused from
 * piece to piece, so a stage holds one piece's records instead of its whole
 * share (and touches no fresh memory after the first pieces).  Sources go in
 * turn, every rank the same: pb_cells_stream_pieces(cs, s) (collective)
 * returns the number of pieces of source s, the most any rank has; piece j
 * is this rank's cells of s whose models are the j-th range of cs->per
 * models from its first one (consecutive in the cell
 * order; none past its cells).  Each rank pieces its own share, so the ranks
 * work at once; every load makes the same reads on every rank (empty where a
 * rank has nothing), so the collective calls match, and every rank returns
 * the same status.  While the store's reads are independent
 * (pb_store_reads_independent), neither call is collective: a rank counts
 * its own pieces (none in a source where it has no cells) and each load
 * returns its own status.
 */
struct pb_cells_stream {
  struct pb_store *st;
  MPI_Comm comm;              /* the store's communicator */
  int64_t first, last;        /* the rank's cells */
  int fields;                 /* PB_FIELD_* read */
  struct pb_cell_ref *all;    /* every cell, pb_dist_cells */
  int32_t *rows;              /* rows of the current piece */
  struct pb_rows buf;         /* whole rows of one read batch of the current source */
  size_t cap;                 /* records per field that block.rows[src] can hold */
  int32_t src;                /* the current source, -1 before the first */
  int64_t c0, c1;             /* the rank's cells of src */
  int32_t m_lo, per;          /* the first model of those cells; models per piece (records of the fields
                                 read fit 64 MB, in whole read batches; at most the models there are) */
  int32_t per_read;           /* models per read batch of src */
  size_t piece_bytes;         /* records per piece (64 MB; tests set less, before the first source) */
  size_t batch_bytes;         /* whole-row bytes per field of a read batch (4 MB; likewise) */
  struct pb_cell_block block; /* the current piece: first, n_cells, cells, rows[src], labels[src] */
};

void pb_cells_stream_open(struct pb_store *st, MPI_Comm comm, int64_t first, int64_t last, int fields,
                          struct pb_cells_stream *cs);

/** Make @p s the current source; returns its number of pieces (collective unless reads are independent). */
int32_t pb_cells_stream_pieces(struct pb_cells_stream *cs, int32_t s);

/** Load piece @p j of the current source into cs->block (collective unless reads are independent). */
int pb_cells_stream_load(struct pb_cells_stream *cs, int32_t j);
void pb_cells_stream_close(struct pb_cells_stream *cs);

/**
 * The kernels' view of a loaded cell with threshold @p tau: every field named,
 * the names of its model, source and condition taken from @p meta.
 */
struct pb_cell_view pb_cells_view(const struct pb_meta *meta, const struct pb_cell_data *d, float tau);

#endif /* PAIRBOUND_CELLS_H */
