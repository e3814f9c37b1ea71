/* Start-up tuning of the process and of the libraries it starts: glibc's
 * huge pages, Open MPI's PML and PMIx's datastore for small jobs, and
 * TCP_NODELAY on the process's sockets (docs/run.md, "MPI start-up").  None
 * of it changes an output.  Pure (no MPI types). */
#ifndef PAIRBOUND_PLATFORM_H
#define PAIRBOUND_PLATFORM_H

/**
 * Before MPI_Init: re-execute the program once (@p argv, same process id and
 * environment) with glibc.malloc.hugetlb=1 added to GLIBC_TUNABLES, so that
 * glibc backs its heap with transparent huge pages; then, unless the user
 * chose them, OMPI_MCA_pml=ob1 for a process alone in MPI_COMM_WORLD and
 * PMIX_MCA_gds=hash for one without a launcher or on a node with few
 * processes.  Does not return when the re-execution succeeds.
 */
void pb_platform_before_mpi(char **argv);

/** Once MPI is up: TCP_NODELAY on the process's TCP sockets (its connection to the PMIx server). */
void pb_platform_after_mpi(void);

#endif /* PAIRBOUND_PLATFORM_H */
