/* Status codes, error messages and rank-prefixed logging. */
#ifndef PAIRBOUND_ERROR_H
#define PAIRBOUND_ERROR_H

#include <stdio.h>
#include <stdlib.h>

#define PB_OK 0
#define PB_FAIL (-1)

/* Record the reason for a failed library call (thread-local, printf-style).
 * The caller returns PB_FAIL; the top level prints pb_error_message(). */
void pb_error_set(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *pb_error_message(void);
void pb_error_clear(void);

/* Rank and verbosity used by the logging helpers. */
void pb_log_init(int rank, int verbosity);
int pb_log_rank(void);
int pb_log_verbosity(void);

void pb_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pb_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Fatal internal error: print rank, file, function, line and abort every rank. */
void pb_abort(const char *file, const char *func, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn));
#define PB_ERROR(...) do { pb_abort(__FILE__, __func__, __LINE__, __VA_ARGS__); } while (0)

/* Install a GSL error handler that reports through PB_ERROR. */
void pb_error_install_gsl_handler(void);

/* Allocation helpers that abort the job when memory is exhausted. */
void *pb_malloc(size_t n);
void *pb_calloc(size_t count, size_t size);
void *pb_realloc(void *p, size_t n);
char *pb_strdup(const char *s);

#endif /* PAIRBOUND_ERROR_H */
