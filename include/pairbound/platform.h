/* Start-up tuning of the process and of the libraries it starts: glibc's
 * huge pages and freed memory, Open MPI's PML and PMIx's datastore for small
 * jobs, TCP_NODELAY on the process's sockets; and how a process ends
 * (docs/run.md, "MPI start-up").  None of it changes an output.  Pure (no
 * MPI types). */
#ifndef PAIRBOUND_PLATFORM_H
#define PAIRBOUND_PLATFORM_H

/**
 * Before MPI_Init: where PB_HUGEPAGES=1, re-execute the program once (@p argv,
 * same process id and environment) with glibc.malloc.hugetlb=1 added to
 * GLIBC_TUNABLES, so that glibc backs its heap with transparent huge pages;
 * then, unless the user chose them, OMPI_MCA_pml=ob1 for a process alone in
 * MPI_COMM_WORLD, PMIX_MCA_gds=hash for a launched one on a node with few
 * processes, and OMPI_MCA_sharedfp=^lockedfile.  Does not return when the
 * re-execution succeeds.
 */
void pb_platform_before_mpi(char **argv);

/**
 * At an analysis stage's start (pb_stage_begin): unless PB_MALLOC_KEEP=0 or
 * GLIBC_TUNABLES sets glibc's malloc mmap or trim tunables, glibc keeps what
 * the process frees from then on (M_MMAP_MAX 0, M_TRIM_THRESHOLD INT_MAX), so
 * a later allocation reuses memory already touched.
 */
void pb_platform_keep_freed(void);

/** Once MPI is up: TCP_NODELAY on the process's TCP sockets (its connection to the PMIx server). */
void pb_platform_after_mpi(void);
/** Whether the process, ending with @p status, leaves without MPI_Finalize: on an error, or when no launcher
 * started it (Open MPI 4.1's finalize can crash or hang after a short run; src/core/platform.c). */
int pb_platform_skip_finalize(int status);

#endif /* PAIRBOUND_PLATFORM_H */
