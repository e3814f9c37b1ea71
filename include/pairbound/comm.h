/* Collective calls that wait without spinning (src/core/comm.c;
 * docs/scaling.md, "Where communication enters").  Each takes the arguments
 * of the MPI call it stands for and returns what MPI returns. */
#ifndef PAIRBOUND_COMM_H
#define PAIRBOUND_COMM_H

#include <mpi.h>

/** Wait for @p req as MPI_Wait would, sleeping between polls once it has waited a few microseconds. */
int pb_comm_wait(MPI_Request *req);
/** MPI_Allreduce that waits through pb_comm_wait. */
int pb_comm_allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm);
/** MPI_Reduce that waits through pb_comm_wait. */
int pb_comm_reduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm);
/** MPI_Bcast that waits through pb_comm_wait. */
int pb_comm_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
/** MPI_Barrier that waits through pb_comm_wait. */
int pb_comm_barrier(MPI_Comm comm);

/**
 * Collective: the OpenMP threads one rank may run while every other rank of @p comm on its node waits asleep
 * in these calls: its own times the ranks on its node, at most the CPUs it may run on, at least its own.
 */
int pb_comm_node_threads(MPI_Comm comm);

#endif /* PAIRBOUND_COMM_H */
