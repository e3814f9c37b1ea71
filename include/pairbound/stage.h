/* Common frame of every analysis stage: open the store, run the protocol,
 * create the results, find this rank's cells; close or discard at the end. */
#ifndef PAIRBOUND_STAGE_H
#define PAIRBOUND_STAGE_H

#include <stdint.h>
#include <mpi.h>

#include "pairbound/protocol.h"
#include "pairbound/results.h"
#include "pairbound/store.h"

/** Compute the protocol from a store (collective; rows split over ranks; src/core/protocol.c). */
int pb_protocol_compute(struct pb_store *st, MPI_Comm comm, const struct pb_protocol_options *opt,
                        struct pb_protocol *out);

/** Write the protocol into results.h5 (/protocol) and report/protocol_*.tsv (collective). */
int pb_protocol_write(const struct pb_protocol *p, const struct pb_meta *meta, struct pb_results *res);

struct pb_stage {
  MPI_Comm comm;
  int rank, size;
  struct pb_store *store;
  const struct pb_meta *meta;
  struct pb_protocol protocol;
  struct pb_results *results;
  int64_t n_cells;          /* global cells */
  int64_t first, last;      /* this rank's cells */
};

/** Open STORE, compute and write the protocol, create OUTDIR (collective). */
int pb_stage_open(const char *store_path, const char *outdir, MPI_Comm comm,
                  const struct pb_protocol_options *popt, const char *provenance, struct pb_stage *stage);
/**
 * Keep (@p on = 1) the protocol that pb_stage_open computes and reuse it
 * while the store file (device, inode, size, modification time), the
 * protocol options and the communicator are the same; 0 drops it.  For
 * `pairbound run`, whose stages all open one store; collective in
 * pb_stage_open (every rank agrees on a reuse).
 */
void pb_stage_protocol_memo(int on);
/** pb_stage_open timing its phases (open, compute, write) in @p tm when not NULL: the protocol stage, whose
 * whole work this is. */
struct pb_timer;
int pb_stage_open_timed(const char *store_path, const char *outdir, MPI_Comm comm,
                        const struct pb_protocol_options *popt, const char *provenance, struct pb_stage *stage,
                        struct pb_timer *tm);
/**
 * Every rank's records (rec_len doubles per item, this rank's n_local items
 * in order, n_total over all ranks) joined in global order, on rank 0 only
 * (to_all = 0, NULL elsewhere) or on every rank (collective).  Caller frees.
 * Only for items whose number does not grow with the cells or images (e.g.
 * predict's fits); a report summarises per-cell records with the
 * aggregates of pairbound/agg.h instead (docs/architecture.md, "Writing
 * outputs").  n_local * rec_len must fit an MPI count (int).
 */
double *pb_stage_gather(const struct pb_stage *stage, int64_t n_local, int64_t n_total, int32_t rec_len,
                        const double *recs, int to_all);

/* What a stage needs of its store (pb_stage_require). */
#define PB_STAGE_NEEDS_CELLS 1 /* a perturbed condition besides 'clean' in some source */
#define PB_STAGE_NEEDS_EVAL 2  /* evaluation images (split 'eval') in some source */

/**
 * Does the store hold what stage @p name @p needs?  Else PB_FAIL with a
 * message naming @p store_path and what it lacks.  Every rank holds the same
 * metadata, so every rank returns the same (no communication).
 */
int pb_stage_require(const struct pb_stage *stage, const char *store_path, const char *name, unsigned needs);

/** Commit the results (status PB_OK) or discard them; closes the store. */
int pb_stage_close(struct pb_stage *stage, int status);

#endif /* PAIRBOUND_STAGE_H */
