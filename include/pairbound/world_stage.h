/* `pairbound world`: the command that prints a world's exact facts or writes
 * its cases (the kernel is pairbound/world.h). */
#ifndef PAIRBOUND_WORLD_STAGE_H
#define PAIRBOUND_WORLD_STAGE_H

#include <mpi.h>

#include "pairbound/world.h"

/**
 * `world info` (@p sample 0: `name value` lines on stdout, rank 0) or `world
 * sample` (cases FIRST .. FIRST + N - 1 into the CASES file @p output,
 * identical for any number of ranks and threads).  Collective over @p comm.
 */
int pb_world_run(int sample, const char *output, const struct pb_world_options *o, MPI_Comm comm);

#endif /* PAIRBOUND_WORLD_STAGE_H */
