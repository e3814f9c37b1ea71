/* The environment variables pairbound reads or sets (include/pairbound/env.h). */
#define _GNU_SOURCE /* environ */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "pairbound/env.h"
#include "pairbound/error.h"
#include "pairbound/parse.h"

const struct pb_env pb_env_table[PB_ENV_N] = {
    [PB_ENV_GNUPLOT] = {"PAIRBOUND_GNUPLOT", PB_ENV_USER,
                        "the gnuplot that renders report figures (default gnuplot); none: no figures, their data "
                        "TSVs are still written"},
    [PB_ENV_PROGRESS_INTERVAL] = {"PAIRBOUND_PROGRESS_INTERVAL", PB_ENV_USER,
                                  "seconds between progress lines on rank 0 (default 0.25 on a terminal, else 5)"},
    [PB_ENV_HUGEPAGES] = {"PB_HUGEPAGES", PB_ENV_USER,
                          "1: transparent huge pages for the heap (one re-execution with glibc.malloc.hugetlb=1); default: "
                          "glibc's pages"},
    [PB_ENV_MALLOC_KEEP] = {"PB_MALLOC_KEEP", PB_ENV_USER,
                            "0: glibc's default of handing large freed blocks back to the kernel; default: the "
                            "process keeps what it frees for its later allocations"},
    [PB_ENV_DIRECT_IO] = {"PAIRBOUND_DIRECT_IO", PB_ENV_USER,
                          "0: CSV exports and store records written through the page cache, not with O_DIRECT"},
    [PB_ENV_STORE_READ] = {"PAIRBOUND_STORE_READ", PB_ENV_SWITCH,
                           "hdf5: every record read through HDF5, none by the direct chunk reads"},
    [PB_ENV_SCREEN_PIECE_BYTES] = {"PAIRBOUND_SCREEN_PIECE_BYTES", PB_ENV_SWITCH,
                                   "bytes of records screen may read at once (default 256 MiB; 1: a round at a "
                                   "time)"},
    [PB_ENV_INGEST_WINDOW_BYTES] = {"PAIRBOUND_INGEST_WINDOW_BYTES", PB_ENV_SWITCH,
                                    "bytes of records in one window of an ingest's pass 2 (default 64 MiB; a "
                                    "write unit at least): the same store"},
    [PB_ENV_VERIFY_NO_MEMO] = {"PAIRBOUND_VERIFY_NO_MEMO", PB_ENV_SWITCH,
                               "1: verify enumerates policies without its per-thread memo"},
    [PB_ENV_TEST_READ_FAIL_RANK] = {"PAIRBOUND_TEST_READ_FAIL_RANK", PB_ENV_HOOK,
                                    "R: rank R's first read selection of every transfer fails as a local HDF5 "
                                    "error would (and every read goes through HDF5)"},
    [PB_ENV_VERIFY_TEST_CORRUPT] = {"PAIRBOUND_VERIFY_TEST_CORRUPT", PB_ENV_HOOK,
                                    "CELL[,LABEL]: verify's engine value D+_01 at I5 of global cell CELL (of its "
                                    "class LABEL alone) is off by 1e-9, so the check must fail"},
    [PB_ENV_TEST_APPEND_KILL] = {"PAIRBOUND_TEST_APPEND_KILL", PB_ENV_HOOK,
                                 "N: an append kills itself (SIGKILL) at its step N: 1 once its undo journal is "
                                 "written, 2 once the store is grown, 3 once the records are written and the file "
                                 "closed, before the journal is removed"},
    [PB_ENV_GLIBC_TUNABLES] = {"GLIBC_TUNABLES", PB_ENV_LIBRARY,
                               "glibc.malloc.hugetlb=1 added by one re-execution at start-up when PB_HUGEPAGES=1 (glibc "
                               "2.35 or later; not under AddressSanitizer or valgrind)"},
    [PB_ENV_OMPI_MCA_PML] = {"OMPI_MCA_pml", PB_ENV_LIBRARY, "ob1 in a process alone in MPI_COMM_WORLD"},
    [PB_ENV_PMIX_MCA_GDS] = {"PMIX_MCA_gds", PB_ENV_LIBRARY,
                             "hash when mpirun started at most 8 processes on the node"},
    [PB_ENV_OMPI_MCA_SHAREDFP] = {"OMPI_MCA_sharedfp", PB_ENV_LIBRARY,
                                  "^lockedfile: MPI-IO opens files of any path length"},
    [PB_ENV_LD_PRELOAD] = {"LD_PRELOAD", PB_ENV_LAUNCHER, "valgrind's library there: no huge-pages re-execution"},
    [PB_ENV_OMPI_COMM_WORLD_SIZE] = {"OMPI_COMM_WORLD_SIZE", PB_ENV_LAUNCHER,
                                     "set: Open MPI's launcher started the process; its value: how many"},
    [PB_ENV_OMPI_COMM_WORLD_LOCAL_SIZE] = {"OMPI_COMM_WORLD_LOCAL_SIZE", PB_ENV_LAUNCHER,
                                           "the processes mpirun started on this node"},
    [PB_ENV_PMIX_RANK] = {"PMIX_RANK", PB_ENV_LAUNCHER, "set: a PMIx launcher started the process"},
    [PB_ENV_PMI_RANK] = {"PMI_RANK", PB_ENV_LAUNCHER, "set: a PMI launcher started the process"},
    [PB_ENV_PMI_SIZE] = {"PMI_SIZE", PB_ENV_LAUNCHER, "set: a PMI launcher started the process; its value: how many"},
    [PB_ENV_SLURM_PROCID] = {"SLURM_PROCID", PB_ENV_LAUNCHER, "set: SLURM started the process"},
    [PB_ENV_SLURM_STEP_NUM_TASKS] = {"SLURM_STEP_NUM_TASKS", PB_ENV_LAUNCHER, "the processes of the SLURM job step"},
};

const char *pb_env_get(enum pb_env_var var) { return getenv(pb_env_table[var].name); }

int pb_env_given(enum pb_env_var var)
{
  const char *v = pb_env_get(var);
  return v && v[0];
}

int pb_env_set(enum pb_env_var var, const char *value, int overwrite)
{
  return value ? setenv(pb_env_table[var].name, value, overwrite) : unsetenv(pb_env_table[var].name);
}

char *const *pb_env_inherited(void) { return environ; }

int pb_env_int(enum pb_env_var var, int64_t lo, int64_t hi, int64_t *out)
{
  if (!pb_env_given(var)) return PB_FAIL;
  if (pb_parse_int(pb_env_get(var), lo, hi, out) == PB_OK) return PB_OK;
  pb_warning("%s='%s' is not an integer in [%lld, %lld]: ignored", pb_env_table[var].name, pb_env_get(var),
             (long long)lo, (long long)hi);
  return PB_FAIL;
}

int pb_env_int_list(enum pb_env_var var, int64_t lo, int64_t hi, int max, int64_t *out, int *n)
{
  if (!pb_env_given(var)) return PB_FAIL;
  if (pb_parse_int_list(pb_env_get(var), lo, hi, max, out, n) == PB_OK) return PB_OK;
  pb_warning("%s='%s' is not 1 to %d comma-separated integers in [%lld, %lld]: ignored", pb_env_table[var].name,
             pb_env_get(var), max, (long long)lo, (long long)hi);
  return PB_FAIL;
}

int pb_env_double(enum pb_env_var var, double lo, double hi, double *out)
{
  if (!pb_env_given(var)) return PB_FAIL;
  if (pb_parse_double(pb_env_get(var), lo, hi, 0, out) == PB_OK) return PB_OK;
  pb_warning("%s='%s' is not a number in [%g, %g]: ignored", pb_env_table[var].name, pb_env_get(var), lo, hi);
  return PB_FAIL;
}
