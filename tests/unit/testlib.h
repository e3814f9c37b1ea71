/* Shared scaffolding for the check-based unit tests.  The tests run the
 * library under MPI (HDF5 uses MPI-IO), so check runs in CK_NOFORK mode. */
#ifndef PAIRBOUND_TESTLIB_H
#define PAIRBOUND_TESTLIB_H

#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <mpi.h>

#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "testrng.h"

/* A fresh scratch directory per test program, one for all its ranks (made by
 * rank 0; the first call is collective), removed only on success, so a
 * failure leaves evidence behind. */
static inline const char *pb_test_dir(void)
{
  static char dir[256];
  if (!dir[0]) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      snprintf(dir, sizeof dir, "%s/pbtest.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
      if (!mkdtemp(dir)) abort();
    }
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  }
  return dir;
}

static inline char *pb_test_path(const char *name)
{
  static char path[8][512];
  static int next;
  char *p = path[next++ % 8];
  snprintf(p, 512, "%s/%s", pb_test_dir(), name);
  return p;
}

static inline int pb_test_exists(const char *path)
{
  struct stat sb;
  return stat(path, &sb) == 0;
}

/* How many temporaries of PATH exist (PATH.tmp.XXXXXX, src/core/output.c). */
static inline int pb_test_temps(const char *path)
{
  char pat[600];
  glob_t g;
  snprintf(pat, sizeof pat, "%s.tmp.*", path);
  int n = glob(pat, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
  globfree(&g);
  return n;
}


static inline int pb_test_run(Suite *s)
{
  int argc = 0;
  char **argv = NULL;
  MPI_Init(&argc, &argv);
  pb_log_init(0, 0);
  pb_error_install_gsl_handler();
  printf("test seed %lu (set PB_TEST_SEED to change)\n", test_seed());
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  pb_test_nofork = 1; /* no marks of passing assertions (testrng.h) */
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr), rank;
  srunner_free(sr);
  /* under mpirun -np K every rank runs every test: fail if any rank failed */
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char *dir = pb_test_dir();
  MPI_Barrier(MPI_COMM_WORLD);
  if (failed == 0 && rank == 0) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  }
  MPI_Finalize();
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif /* PAIRBOUND_TESTLIB_H */
