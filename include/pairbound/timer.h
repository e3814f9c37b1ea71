/* Named phase timings of a stage: laps measured with MPI_Wtime on every rank,
 * reduced to the slowest rank (what a user waits for), written into
 * results.h5 as /timings/<stage>/<phase> (seconds) and read from there by
 * `make bench` (tests/bench/bench.sh).  /timings is the one part of a
 * results.h5 that differs between otherwise identical runs: compare results
 * with `h5diff --exclude-path /timings`. */
#ifndef PAIRBOUND_TIMER_H
#define PAIRBOUND_TIMER_H

#include <mpi.h>

#include "pairbound/results.h"

#define PB_TIMER_MAX 16
#define PB_TIMER_NAME_MAX 32 /* bytes of a phase name with its NUL */

struct pb_timer {
  const char *stage;                 /* group under /timings, e.g. "bounds" */
  int n;
  const char *phase[PB_TIMER_MAX];   /* dataset names: identifiers such as "grid_pass" */
  double sec[PB_TIMER_MAX];
  char met_elsewhere[PB_TIMER_MAX][PB_TIMER_NAME_MAX]; /* pb_timer_reduce: names only other ranks met */
  double t0;                         /* start of the phase being timed */
};

/** Start timing @p stage (a string literal or otherwise outliving the timer). */
void pb_timer_start(struct pb_timer *t, const char *stage);
/** End the running phase as @p phase (time since the start or the last lap); a repeated name accumulates. */
void pb_timer_lap(struct pb_timer *t, const char *phase);
/** Add @p sec seconds measured elsewhere to @p phase. */
void pb_timer_add(struct pb_timer *t, const char *phase, double sec);
/** Restart the clock without recording (time not attributed to any phase). */
void pb_timer_skip(struct pb_timer *t);
/** Seconds of @p phase (0 if not recorded). */
double pb_timer_get(const struct pb_timer *t, const char *phase);
/**
 * Replace every phase's time by the slowest rank's (collective).  The ranks
 * may have met different phases, or met them in other orders (a rank with no
 * work in a part of a stage skips its laps): every rank then holds the union,
 * in rank 0's order followed by the phases only later ranks met, a phase a
 * rank never met counting 0 s there.
 */
void pb_timer_reduce(struct pb_timer *t, MPI_Comm comm);
/** End the last phase as @p phase, then pb_timer_reduce (collective): a stage's timings before it says them. */
void pb_timer_end(struct pb_timer *t, const char *phase, MPI_Comm comm);
/** Say every phase at -v 2: "STAGE: PHASE S s; ..." (after pb_timer_reduce: the slowest rank's). */
void pb_timer_message(const struct pb_timer *t);
/** Write /timings/<stage>/<phase> (one double each, rank 0's values) into the results (collective). */
int pb_timer_write(const struct pb_timer *t, struct pb_results *res);

#endif /* PAIRBOUND_TIMER_H */
