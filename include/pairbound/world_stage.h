/* `pairbound world`: the command that prints a world's exact facts or writes
 * its cases (the kernel is pairbound/world.h). */
#ifndef PAIRBOUND_WORLD_STAGE_H
#define PAIRBOUND_WORLD_STAGE_H

#include <mpi.h>

#include "pairbound/world.h"

/* Cases with their visible attributes, labels and exact p* (a CASES file or drawn). */
struct pb_world_cases {
  struct pb_world *world;  /* owned */
  uint64_t seed, stream;
  int64_t n, cap;
  int na;
  uint64_t *index;
  double *x, *pstar;
  int *y;
};
void pb_world_cases_free(struct pb_world_cases *c);
/** Read a CASES file (docs/exact.md, "CASES file") into @p c, checking every p_star against the world's;
 *  PB_FAIL naming the file and line (src/world/world_stage_cases.c). */
int pb_world_cases_read(const char *path, struct pb_world_cases *c);
/** Take @p w and draw its cases [first, first + n) of stream 0 of @p seed, as `world sample` does. */
void pb_world_cases_draw(struct pb_world *w, uint64_t seed, uint64_t first, int64_t n, struct pb_world_cases *c);

/**
 * `pairbound world VERB`: info (`name value` lines on stdout, rank 0), sample
 * (cases FIRST .. FIRST + N - 1 into the CASES file @p output), render (the
 * memos of the CASES file @p input into the MEMOS file @p output), decode
 * (the MEMOS file @p input checked and, when @p output is given, its visible
 * attributes written there) or prompts (the prompt set of the CASES file
 * @p input into @p output).  Every file is identical for any number of ranks
 * and threads.  Collective over @p comm.
 */
int pb_world_run(const char *verb, const char *input, const char *output, const struct pb_world_options *o,
                 MPI_Comm comm);

#endif /* PAIRBOUND_WORLD_STAGE_H */
