/* One piece of work on a thread of its own while the caller goes on: a
 * writer that overlaps the next round's computing (export's text, ingest's
 * records).  The work must make no MPI call (the library asks for
 * MPI_THREAD_FUNNELED) and must not use what the caller changes meanwhile.
 * Pure (no MPI types). */
#ifndef PAIRBOUND_JOB_H
#define PAIRBOUND_JOB_H

#include <pthread.h>

struct pb_job {
  pthread_t thread;
  int running; /* on its own thread, not yet joined */
  void (*fn)(void *);
  void *arg;
};

/** Run @p fn(@p arg) on a thread of its own, or here and now when no thread can start. */
void pb_job_start(struct pb_job *job, void (*fn)(void *), void *arg);

/** Wait for the job started last on @p job to end (nothing when none runs). */
void pb_job_join(struct pb_job *job);

#endif /* PAIRBOUND_JOB_H */
