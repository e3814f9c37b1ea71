/* Status codes, error messages and rank-prefixed logging: the pure part,
 * which kernels use (no MPI; they return a status and never end the job).
 * Agreeing on a status across ranks and ending the job are in
 * pairbound/error_mpi.h. */
#ifndef PAIRBOUND_ERROR_H
#define PAIRBOUND_ERROR_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define PB_OK 0
#define PB_FAIL (-1)

/* Longest message kept, with its terminating NUL.  A longer one keeps its
 * reason: the longest words (file names, paths, values) lose their middle to
 * "…" until it fits; only then is the end cut. */
#define PB_ERROR_MAX 8192

/* Record the reason for a failed library call (thread-local, printf-style).
 * The caller returns PB_FAIL; the top level prints pb_error_message(). */
void pb_error_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *pb_error_message(void);
void pb_error_clear(void);

/* The first error of a parallel loop over items (cells, units, classes):
 * whichever thread fails, the failing item with the lowest index is kept with
 * the message its thread set, so the error reported is the same for any
 * number of threads (and, items being global indices, of ranks).
 *
 *   struct pb_error_first fe;
 *   pb_error_first_init(&fe);
 *   #pragma omp parallel for
 *   for (i = 0; i < n; i++)
 *     if (kernel(...) != 0) pb_error_first_record(&fe, i);
 *   status = pb_error_first_status(&fe);   (PB_FAIL, message set, if any failed) */
struct pb_error_first {
  int64_t item;                  /* lowest failing item, -1: none */
  char message[PB_ERROR_MAX];
};
void pb_error_first_init(struct pb_error_first *e);
/** Record that @p item failed with the calling thread's pb_error_message() (thread-safe). */
void pb_error_first_record(struct pb_error_first *e, int64_t item);
/** Has any item failed?  (Also usable inside the loop to skip later items.) */
int pb_error_first_any(const struct pb_error_first *e);
/** PB_OK, or PB_FAIL with the first failure's message set on the calling thread. */
int pb_error_first_status(const struct pb_error_first *e);

/* Rank and verbosity used by the logging helpers. */
void pb_log_init(int rank, int verbosity);
int pb_log_rank(void);
int pb_log_verbosity(void);

void pb_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pb_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Allocation helpers that abort the job when memory is exhausted. */
void *pb_malloc(size_t n);
void *pb_calloc(size_t count, size_t size);
void *pb_realloc(void *p, size_t n);
char *pb_strdup(const char *s);

#endif /* PAIRBOUND_ERROR_H */
