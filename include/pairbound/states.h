/* Demo stage of the work distribution: per-cell accuracies and five-state
 * counts (seed 000 Table 1) under the observed correspondence. */
#ifndef PAIRBOUND_STATES_H
#define PAIRBOUND_STATES_H

#include <stdint.h>
#include <mpi.h>

#include "pairbound/cells.h"
#include "pairbound/protocol.h"

struct pb_states {
  int64_t n, h, r, s, w, k;  /* evaluation pairs and their five-state counts */
};

/** Five-state counts of one cell (h: correct->wrong, r: wrong->correct,
 *  s: same wrong label, w: different wrong labels, k: correct both). */
void pb_states_count(const struct pb_cell_data *cell, struct pb_states *out);

/** `pairbound states STORE -o OUTDIR`: counts for every cell (collective). */
int pb_states_run(const char *store_path, const char *outdir, MPI_Comm comm,
                  const struct pb_protocol_options *popt, const char *provenance);

#endif /* PAIRBOUND_STATES_H */
