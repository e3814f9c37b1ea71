/* Collective calls that wait without spinning (include/pairbound/comm.h).
 *
 * Open MPI (4.1, shared-memory and TCP transports alike) waits in a blocking
 * call by polling its progress engine without pause.  A rank that reaches a
 * collective call before the others therefore burns its core until the last
 * one arrives: at 2 ranks x 1 thread on the paper store each rank of bounds
 * spent about 60 % of its CPU time polling (perf), and on cores shared with
 * other work that polling takes the time slices the late rank needs, so the
 * wait grows with it (docs/scaling.md, "Ranks and threads").  OpenMP's
 * threads, by contrast, spin briefly and then sleep.  These calls post the
 * nonblocking form of the collective and wait for it the same way: polls for
 * PB_COMM__SPIN seconds, then sleeps between polls, from PB_COMM__NAP_MIN
 * nanoseconds doubling up to PB_COMM__NAP_MAX.  A rank asleep adds at most one
 * nap to the collective's completion; the results are the blocking call's
 * (only integer sums, minima, maxima and copies pass through here, whose
 * results do not depend on the order in which ranks combine). */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "config.h"

#include <sched.h>
#include <time.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/comm.h"

#define PB_COMM__SPIN 50e-6
#define PB_COMM__NAP_MIN 20000L
#define PB_COMM__NAP_MAX 500000L

int pb_comm_wait(MPI_Request *req)
{
  const double t0 = MPI_Wtime();
  long nap = PB_COMM__NAP_MIN;
  for (;;) {
    int done = 0;
    const int rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || done) return rc;
    if (MPI_Wtime() - t0 < PB_COMM__SPIN) continue;
    struct timespec ts = {0, nap};
    nanosleep(&ts, NULL);
    nap = nap * 2 < PB_COMM__NAP_MAX ? nap * 2 : PB_COMM__NAP_MAX;
  }
}

int pb_comm_allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
  MPI_Request req;
  const int rc = MPI_Iallreduce(in, out, count, type, op, comm, &req);
  return rc != MPI_SUCCESS ? rc : pb_comm_wait(&req);
}

int pb_comm_reduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm)
{
  MPI_Request req;
  const int rc = MPI_Ireduce(in, out, count, type, op, root, comm, &req);
  return rc != MPI_SUCCESS ? rc : pb_comm_wait(&req);
}

int pb_comm_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
  MPI_Request req;
  const int rc = MPI_Ibcast(buf, count, type, root, comm, &req);
  return rc != MPI_SUCCESS ? rc : pb_comm_wait(&req);
}

int pb_comm_barrier(MPI_Comm comm)
{
  MPI_Request req;
  const int rc = MPI_Ibarrier(comm, &req);
  return rc != MPI_SUCCESS ? rc : pb_comm_wait(&req);
}

int pb_comm_node_threads(MPI_Comm comm)
{
  MPI_Comm node = MPI_COMM_NULL;
  int local = 1, threads = omp_get_max_threads();
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
  }
  int want = threads * local;
  cpu_set_t cpus;
  /* no more than the CPUs this process may run on: a rank bound to one core gains nothing from more */
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) < want) want = CPU_COUNT(&cpus);
  return want > threads ? want : threads;
}
