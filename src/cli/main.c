/* pairbound: reliability evidence from stored classifier prediction records. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <mpi.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

#include "pairbound/comm.h"
#include "pairbound/platform.h"
#include "pairbound/signals.h"
#include "cli.h"
#include "core/h5io.h"

int main(int argc, char **argv)
{
  pb_platform_before_mpi(argv); /* huge pages, PML and PMIx defaults (docs/run.md, "MPI start-up") */
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  pb_platform_after_mpi();
  int status = pb_cli_main(argc, argv);
  pb_signal_finished(status);
  if (pb_h5_unclosed()) {
    /* a file HDF5 failed to close makes its termination (run by
     * MPI_Finalize) crash: leave with the reason already printed */
    fflush(NULL);
    _exit(status ? status : 1);
  }
  /* every rank has written what it had to say before any leaves, and all decide alike */
  fflush(NULL);
  int worst = status;
  pb_comm_allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (pb_platform_skip_finalize(worst)) {
    /* no library code runs after this point while MPI's threads are still up: every file is closed and
     * flushed; under AddressSanitizer the leak check that exit would run comes first */
#ifdef __SANITIZE_ADDRESS__
    __lsan_do_leak_check();
#endif
    _exit(status ? status : worst);
  }
  MPI_Finalize();
  return status;
}
