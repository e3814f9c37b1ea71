/* Start-up tuning of the process and the libraries it starts
 * (include/pairbound/platform.h; docs/run.md, "MPI start-up"). */
#include "config.h"

#include <dirent.h>
#include <limits.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "pairbound/env.h"
#include "pairbound/error.h"
#include "pairbound/parse.h"
#include "pairbound/platform.h"

/* Most of a stage's memory is touched once: the store's arrays, HDF5's chunk
 * buffers, the output text.  glibc (2.35 and later) backs its heap with
 * transparent huge pages when the tunable glibc.malloc.hugetlb=1 is set, but
 * reads tunables only when a program starts, so with PB_HUGEPAGES=1
 * pairbound re-executes itself once with it added to GLIBC_TUNABLES, before
 * MPI starts (the process id, arguments and environment stay the same).
 * Whether that pays depends on the machine: on a virtual machine whose host
 * takes back free memory (free page reporting) a huge page is mostly carved
 * from memory the host must map again, page by page, and every stage but
 * synth ran slower with it than with glibc's default pages (docs/scaling.md,
 * "Page faults and huge pages"), so the default is glibc's.  A kernel with
 * transparent huge pages off ignores the tunable.  Not under
 * AddressSanitizer, whose allocator replaces glibc's, nor under valgrind (its
 * preloaded library in LD_PRELOAD), which would let the re-executed program
 * run outside it. */
static void pb_platform__huge_pages(char **argv)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 35) && !defined(__SANITIZE_ADDRESS__)
  const char *opt = pb_env_get(PB_ENV_HUGEPAGES);
  if (!opt || strcmp(opt, "1") != 0) return;
  const char *pre = pb_env_get(PB_ENV_LD_PRELOAD);
  if (pre && strstr(pre, "vgpreload")) return;
  const char *old = pb_env_get(PB_ENV_GLIBC_TUNABLES);
  if (old && strstr(old, "glibc.malloc.hugetlb")) return; /* set by the user, or by us before the exec */
  static const char add[] = "glibc.malloc.hugetlb=1";
  size_t n = (old ? strlen(old) + 1 : 0) + sizeof add;
  char *v = malloc(n);
  if (!v) return;
  snprintf(v, n, "%s%s%s", old ? old : "", old ? ":" : "", add);
  if (pb_env_set(PB_ENV_GLIBC_TUNABLES, v, 1) == 0) execv("/proc/self/exe", argv);
  /* no exec (no /proc): run as we are, without the tunable in the environment */
  pb_env_set(PB_ENV_GLIBC_TUNABLES, old, 1);
  free(v);
#else
  (void)argv;
#endif
}

/* Whether a launcher started this process: the variables Open MPI, PMI(x)
 * and SLURM give their processes.  Asked before MPI_Init only: a singleton's
 * MPI_Init starts its own helper daemon and sets these variables in its
 * environment (pb_platform__was_launched keeps the answer for after it). */
static int pb_platform__was_launched = -1;
static int pb_platform__launched(void)
{
  static const enum pb_env_var launched[] = {PB_ENV_OMPI_COMM_WORLD_SIZE, PB_ENV_PMIX_RANK, PB_ENV_PMI_RANK,
                                             PB_ENV_PMI_SIZE, PB_ENV_SLURM_PROCID};
  for (size_t j = 0; j < sizeof launched / sizeof *launched; j++)
    if (pb_env_get(launched[j])) return 1;
  return 0;
}

/* A process alone in MPI_COMM_WORLD (started without a launcher, or by one
 * that says it started one process) has no peer to reach, yet Open MPI
 * would still initialise the cm PML's PSM2 and libfabric libraries to find
 * that no high-speed network is there, about 0.2 s of every such start
 * (docs/run.md, "MPI start-up"); ob1, the PML it then picks, is set unless
 * the user chose one.  With more processes, or a launcher that does not say
 * how many, the PML is left to Open MPI and the site. */
static void pb_platform__single_pml(void)
{
  static const enum pb_env_var sizes[] = {PB_ENV_OMPI_COMM_WORLD_SIZE, PB_ENV_PMI_SIZE, PB_ENV_SLURM_STEP_NUM_TASKS};
  if (pb_platform__launched()) {
    const char *size = NULL;
    for (size_t j = 0; j < sizeof sizes / sizeof *sizes && !size; j++) size = pb_env_get(sizes[j]);
    if (!size || strcmp(size, "1") != 0) return;
  }
  pb_env_set(PB_ENV_OMPI_MCA_PML, "ob1", 0);
}

/* PMIx's shared-memory datastore (gds ds12/ds21) saves memory where many
 * processes of a job share a node, but the server builds two 4 MB segments
 * for it while a client starts: 25 ms of each MPI_Init here (docs/run.md,
 * "MPI start-up").  A process of at most PB_PLATFORM__HASH_LOCAL on its node
 * by mpirun's count asks for the plain hash datastore instead, unless the
 * user chose one.  Not a process without a launcher: a singleton with the
 * hash datastore crashed in MPI_Finalize about once in 70 starts (Open MPI
 * 4.1, PMIx 4.2; none in 400 with ds21, none in 150 under mpirun -np 1). */
#define PB_PLATFORM__HASH_LOCAL 8
static void pb_platform__pmix_gds(void)
{
  int64_t local = 0;
  pb_env_int(PB_ENV_OMPI_COMM_WORLD_LOCAL_SIZE, 0, INT64_MAX, &local);
  if (!pb_platform__launched() || !(local >= 1 && local <= PB_PLATFORM__HASH_LOCAL)) return;
  pb_env_set(PB_ENV_PMIX_MCA_GDS, "hash", 0);
}

/* Opening a file through MPI-IO, Open MPI's ompio asks every shared-file-
 * pointer component whether it can serve the file; lockedfile builds the
 * name of its lock file in a fixed buffer and aborts the process ("buffer
 * overflow detected") for a path of about 240 characters or more, common on
 * cluster scratch.  pairbound never uses a shared file pointer, so the
 * component is left out unless the user chose the components. */
static void pb_platform__sharedfp(void)
{
  pb_env_set(PB_ENV_OMPI_MCA_SHAREDFP, "^lockedfile", 0);
}

/* The connection of an Open MPI process to its PMIx server (mpirun's, or the
 * node daemon's) is a TCP socket without TCP_NODELAY, so a short message
 * written while the previous one waits for its delayed acknowledgement
 * stays back until that timer fires: MPI_Finalize's fence waited 40 ms for
 * it on every process here.  Set TCP_NODELAY on this process's TCP sockets
 * once MPI is up; it changes when bytes are sent, never what is sent. */
void pb_platform_after_mpi(void)
{
  DIR *d = opendir("/proc/self/fd");
  if (!d) return;
  const int skip = dirfd(d);
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    int64_t fd;
    int proto = 0;
    const int one = 1;
    socklen_t len = sizeof proto;
    if (pb_parse_int(e->d_name, 3, INT_MAX, &fd) == PB_OK && fd != skip &&
        getsockopt((int)fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) == 0 && proto == IPPROTO_TCP)
      (void)setsockopt((int)fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  closedir(d);
}

/* glibc hands a freed block larger than its mmap threshold (128 KiB, rising
 * to 32 MiB) back to the kernel, and trims its heap's free top beyond 128
 * KiB: the next large allocation touches fresh memory again, which on a
 * virtual machine can cost more than the work on it (docs/scaling.md, "Page
 * faults and huge pages").  An analysis stage allocates and frees its large
 * arrays source by source and piece by piece, and `run` stage after stage,
 * so from its start (pb_stage_begin) the process keeps what it frees: no
 * block of its own mapping, no trimming.  The price is that the process keeps
 * its peak memory until it ends, a peak it reached anyway.  ingest, export
 * and synth, whose memory is bounded by design and gained nothing, keep
 * glibc's default; so do PB_MALLOC_KEEP=0 and the user's own glibc.malloc
 * mmap or trim tunables. */
void pb_platform_keep_freed(void)
{
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
  const char *opt = pb_env_get(PB_ENV_MALLOC_KEEP);
  if (opt && strcmp(opt, "0") == 0) return;
  const char *t = pb_env_get(PB_ENV_GLIBC_TUNABLES);
  if (t && (strstr(t, "glibc.malloc.mmap_") || strstr(t, "glibc.malloc.trim_"))) return;
  (void)mallopt(M_MMAP_MAX, 0);
  (void)mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
}

void pb_platform_before_mpi(char **argv)
{
  pb_platform__huge_pages(argv);
  pb_platform__was_launched = pb_platform__launched();
  pb_platform__single_pml();
  pb_platform__pmix_gds();
  pb_platform__sharedfp();
}

/* Open MPI 4.1 ends a process in MPI_Finalize by joining its progress
 * thread, which may still be running a PMIx event callback of a component
 * that finalize has already closed: on a loaded machine about one short run
 * in 200 (a usage error, a bad configuration) died there of SIGSEGV or hung
 * for good, in a singleton as under mpirun -np 1.  A process that ends with
 * an error, or that no launcher started, has nothing left to tell another
 * process and leaves without it: a launcher reports the non-zero status as
 * for any failed process, and a singleton's helper daemon ends with it.  A
 * launched process that succeeded still finalizes, as its launcher
 * requires.  Whether a launcher started the process is what the
 * environment said before MPI_Init: a singleton's MPI_Init sets Open MPI's
 * variables, so asked afterwards every successful singleton looked launched
 * and finalized.  @p status is the worst of every rank's (main.c): all
 * decide alike, after every rank has written its messages. */
int pb_platform_skip_finalize(int status)
{
  return status != 0 || !(pb_platform__was_launched >= 0 ? pb_platform__was_launched : pb_platform__launched());
}
