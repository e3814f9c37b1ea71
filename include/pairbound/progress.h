/* Progress of long loops on rank 0's stderr: on a terminal one live line
 * (done/total, rate, ETA) redrawn at most 4 times a second; otherwise a
 * plain line at most every 5 s ($PAIRBOUND_PROGRESS_INTERVAL seconds when
 * set); nothing with -v 0 or on other ranks.  A step costs two atomic
 * operations and, for the thread that finds the writer free, one clock read. */
#ifndef PAIRBOUND_PROGRESS_H
#define PAIRBOUND_PROGRESS_H

#include <stdint.h>

struct pb_progress {
  char what[64];       /* e.g. "bounds" */
  const char *unit;    /* e.g. "cells", "draws" */
  int64_t total, done; /* this rank's share */
  double t0, next, interval;
  int active, tty, shown;
  int busy;            /* a thread is checking the clock or writing */
};

/** Start reporting @p total units of work of this rank (rank 0 shows it). */
void pb_progress_begin(struct pb_progress *p, const char *what, const char *unit, int64_t total);
/** @p n more units done; callable from any OpenMP thread. */
void pb_progress_step(struct pb_progress *p, int64_t n);
/** Finish: a live line is completed with its total time and a newline. */
void pb_progress_end(struct pb_progress *p);

#endif /* PAIRBOUND_PROGRESS_H */
