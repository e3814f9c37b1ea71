/* pairbound: reliability evidence from stored classifier prediction records. */
#include "config.h"

#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mpi.h>

#include "cli.h"
#include "core/h5io.h"

/* Most of a stage's memory is touched once: the store's arrays, HDF5's chunk
 * buffers, the output text.  With 4 KiB pages every first touch is a page
 * fault, and on virtual machines a fault costs microseconds: loading the paper
 * store spent half its time in them.  glibc (2.35 and later) backs its heap
 * with transparent huge pages when the tunable glibc.malloc.hugetlb=1 is set,
 * but reads tunables only when a program starts, so pairbound re-executes
 * itself once with it added to GLIBC_TUNABLES, before MPI starts (the process
 * id, arguments and environment stay the same).  PB_HUGEPAGES=0 keeps the
 * default; a kernel with transparent huge pages off ignores the tunable.
 * Not under AddressSanitizer, whose allocator replaces glibc's, nor under
 * valgrind (its preloaded library in LD_PRELOAD), which would let the
 * re-executed program run outside it. */
static void pb_main__huge_pages(char **argv)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 35) && !defined(__SANITIZE_ADDRESS__)
  const char *opt = getenv("PB_HUGEPAGES");
  if (opt && strcmp(opt, "0") == 0) return;
  const char *pre = getenv("LD_PRELOAD");
  if (pre && strstr(pre, "vgpreload")) return;
  const char *old = getenv("GLIBC_TUNABLES");
  if (old && strstr(old, "glibc.malloc.hugetlb")) return; /* set by the user, or by us before the exec */
  static const char add[] = "glibc.malloc.hugetlb=1";
  size_t n = (old ? strlen(old) + 1 : 0) + sizeof add;
  char *v = malloc(n);
  if (!v) return;
  snprintf(v, n, "%s%s%s", old ? old : "", old ? ":" : "", add);
  if (setenv("GLIBC_TUNABLES", v, 1) == 0) execv("/proc/self/exe", argv);
  /* no exec (no /proc): run as we are, without the tunable in the environment */
  if (old) setenv("GLIBC_TUNABLES", old, 1);
  else unsetenv("GLIBC_TUNABLES");
  free(v);
#else
  (void)argv;
#endif
}

/* Whether a launcher started this process: the variables Open MPI, PMI(x)
 * and SLURM give their processes. */
static int pb_main__launched(void)
{
  static const char *const launched[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID"};
  for (size_t j = 0; j < sizeof launched / sizeof *launched; j++)
    if (getenv(launched[j])) return 1;
  return 0;
}

/* A process alone in MPI_COMM_WORLD (started without a launcher, or by one
 * that says it started one process) has no peer to reach, yet Open MPI
 * would still initialise the cm PML's PSM2 and libfabric libraries to find
 * that no high-speed network is there, about 0.2 s of every such start
 * (docs/run.md, "MPI start-up"); ob1, the PML it then picks, is set unless
 * the user chose one.  With more processes, or a launcher that does not say
 * how many, the PML is left to Open MPI and the site. */
static void pb_main__single_pml(void)
{
  static const char *const sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"};
  if (pb_main__launched()) {
    const char *size = NULL;
    for (size_t j = 0; j < sizeof sizes / sizeof *sizes && !size; j++) size = getenv(sizes[j]);
    if (!size || strcmp(size, "1") != 0) return;
  }
  setenv("OMPI_MCA_pml", "ob1", 0);
}

/* PMIx's shared-memory datastore (gds ds12/ds21) saves memory where many
 * processes of a job share a node, but the server builds two 4 MB segments
 * for it while a client starts: 25 ms of each MPI_Init here (docs/run.md,
 * "MPI start-up").  A process without a launcher, or one of at most
 * PB_MAIN_HASH_LOCAL on its node by mpirun's count, asks for the plain hash
 * datastore instead, unless the user chose one. */
#define PB_MAIN_HASH_LOCAL 8
static void pb_main__pmix_gds(void)
{
  const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (pb_main__launched() && !(local && atoi(local) >= 1 && atoi(local) <= PB_MAIN_HASH_LOCAL)) return;
  setenv("PMIX_MCA_gds", "hash", 0);
}

/* The connection of an Open MPI process to its PMIx server (mpirun's, or the
 * node daemon's) is a TCP socket without TCP_NODELAY, so a short message
 * written while the previous one waits for its delayed acknowledgement
 * stays back until that timer fires: MPI_Finalize's fence waited 40 ms for
 * it on every process here.  Set TCP_NODELAY on this process's TCP sockets
 * once MPI is up; it changes when bytes are sent, never what is sent. */
static void pb_main__tcp_nodelay(void)
{
  DIR *d = opendir("/proc/self/fd");
  if (!d) return;
  const int skip = dirfd(d);
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    const int fd = atoi(e->d_name), one = 1;
    int proto = 0;
    socklen_t len = sizeof proto;
    if (fd > 2 && fd != skip && getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) == 0 && proto == IPPROTO_TCP)
      (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  closedir(d);
}

int main(int argc, char **argv)
{
  pb_main__huge_pages(argv);
  pb_main__single_pml();
  pb_main__pmix_gds();
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  pb_main__tcp_nodelay();
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
