/* pairbound: reliability evidence from stored classifier prediction records. */
#include "config.h"

#include <mpi.h>

#include "cli.h"

int main(int argc, char **argv)
{
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int status = pb_cli_main(argc, argv);
  MPI_Finalize();
  return status;
}
