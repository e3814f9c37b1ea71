/* Common frame of every analysis stage: open the store, run the protocol,
 * create the results, find this rank's cells; close or discard at the end. */
#ifndef PAIRBOUND_STAGE_H
#define PAIRBOUND_STAGE_H

#include <stdint.h>
#include <mpi.h>

#include "pairbound/protocol.h"
#include "pairbound/results.h"
#include "pairbound/store.h"

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
/** Commit the results (status PB_OK) or discard them; closes the store. */
int pb_stage_close(struct pb_stage *stage, int status);

#endif /* PAIRBOUND_STAGE_H */
