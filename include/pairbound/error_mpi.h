/* The MPI part of error handling: agreeing on a status across ranks and
 * ending the whole job (the pure part, which kernels use, is
 * pairbound/error.h). */
#ifndef PAIRBOUND_ERROR_MPI_H
#define PAIRBOUND_ERROR_MPI_H

#include <mpi.h>

#include "pairbound/error.h"

/**
 * Agree on a status before the next collective step (collective on @p comm):
 * PB_FAIL on every rank when any rank passed PB_FAIL; a rank that did not fail
 * gets the lowest failing rank's message as "rank R: ...", a failing rank keeps
 * its own (a check that fails alike on every rank reads the same), so a
 * rank's local error ends the collective work of all ranks instead of leaving
 * them waiting in a call it no longer makes.
 */
int pb_error_agree(MPI_Comm comm, int status);

/* Fatal internal error: print rank, file, function, line and abort every rank. */
void pb_abort(const char *file, const char *func, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn));
#define PB_ERROR(...) do { pb_abort(__FILE__, __func__, __LINE__, __VA_ARGS__); } while (0)

/* Install a GSL error handler that reports through PB_ERROR. */
void pb_error_install_gsl_handler(void);

#endif /* PAIRBOUND_ERROR_MPI_H */
