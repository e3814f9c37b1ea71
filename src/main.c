/* pairbound: reliability evidence from stored classifier prediction records. */
#include "config.h"

#include <stdio.h>
#include <unistd.h>

#include <mpi.h>

#include "cli.h"
#include "h5io.h"

int main(int argc, char **argv)
{
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int status = pb_cli_main(argc, argv);
  if (pb_h5_unclosed()) {
    /* a file HDF5 failed to close makes its termination (run by
     * MPI_Finalize) crash: leave with the reason already printed */
    fflush(NULL);
    _exit(status ? status : 1);
  }
  MPI_Finalize();
  return status;
}
