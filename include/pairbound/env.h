/* Every environment variable pairbound reads or sets, in one table
 * (src/core/env.c), listed in docs/run.md ("Environment"): its name, whom it
 * is for and what it does.  Code names a variable by its enum, so one that
 * is not in the table cannot be read.  Pure (no MPI). */
#ifndef PAIRBOUND_ENV_H
#define PAIRBOUND_ENV_H

#include <stdint.h>

enum pb_env_var {
  /* settings for users */
  PB_ENV_GNUPLOT,             /* PAIRBOUND_GNUPLOT */
  PB_ENV_PROGRESS_INTERVAL,   /* PAIRBOUND_PROGRESS_INTERVAL */
  PB_ENV_HUGEPAGES,           /* PB_HUGEPAGES */
  PB_ENV_MALLOC_KEEP,         /* PB_MALLOC_KEEP */
  PB_ENV_DIRECT_IO,           /* PAIRBOUND_DIRECT_IO */
  /* switches for tests and benchmarks */
  PB_ENV_STORE_READ,          /* PAIRBOUND_STORE_READ */
  PB_ENV_SCREEN_PIECE_BYTES,  /* PAIRBOUND_SCREEN_PIECE_BYTES */
  PB_ENV_INGEST_WINDOW_BYTES, /* PAIRBOUND_INGEST_WINDOW_BYTES */
  PB_ENV_VERIFY_NO_MEMO,      /* PAIRBOUND_VERIFY_NO_MEMO */
  /* test hooks: faults injected into production code */
  PB_ENV_TEST_READ_FAIL_RANK, /* PAIRBOUND_TEST_READ_FAIL_RANK */
  PB_ENV_VERIFY_TEST_CORRUPT, /* PAIRBOUND_VERIFY_TEST_CORRUPT */
  PB_ENV_TEST_APPEND_KILL,    /* PAIRBOUND_TEST_APPEND_KILL */
  /* for the libraries pairbound starts: set at start-up unless set (src/core/platform.c) */
  PB_ENV_GLIBC_TUNABLES,
  PB_ENV_OMPI_MCA_PML,
  PB_ENV_PMIX_MCA_GDS,
  PB_ENV_OMPI_MCA_SHAREDFP,
  /* set by a launcher, a debugger or the scheduler: read to know how the process was started */
  PB_ENV_LD_PRELOAD,
  PB_ENV_OMPI_COMM_WORLD_SIZE,
  PB_ENV_OMPI_COMM_WORLD_LOCAL_SIZE,
  PB_ENV_PMIX_RANK,
  PB_ENV_PMI_RANK,
  PB_ENV_PMI_SIZE,
  PB_ENV_SLURM_PROCID,
  PB_ENV_SLURM_STEP_NUM_TASKS,
  PB_ENV_N
};

/* Whom a variable is for. */
enum pb_env_kind {
  PB_ENV_USER,     /* a setting a user may give */
  PB_ENV_SWITCH,   /* a switch for tests and benchmarks: another path to the same outputs */
  PB_ENV_HOOK,     /* a test hook: injects a fault so that a test reaches an error path; never set otherwise */
  PB_ENV_LIBRARY,  /* a library's setting that pairbound sets at start-up unless it is set */
  PB_ENV_LAUNCHER  /* set by the launcher, a debugger or the scheduler; only read */
};

struct pb_env {
  const char *name;
  int kind;         /* enum pb_env_kind */
  const char *what; /* what it does (docs/run.md says the same, with the measurements) */
};

/** The table, indexed by enum pb_env_var. */
extern const struct pb_env pb_env_table[PB_ENV_N];

/** The value of @p var, NULL when unset. */
const char *pb_env_get(enum pb_env_var var);
/** Whether @p var is set to a non-empty value. */
int pb_env_given(enum pb_env_var var);
/** setenv(3) of @p var (@p value NULL: unsetenv); with @p overwrite 0 a value already set stays. */
int pb_env_set(enum pb_env_var var, const char *value, int overwrite);
/** The whole environment (environ), for a child process started with posix_spawn to inherit as it is. */
char *const *pb_env_inherited(void);
/**
 * @p var as a decimal integer in [@p lo, @p hi] (pairbound/parse.h): PB_OK;
 * unset or empty: PB_FAIL, nothing said; anything else: PB_FAIL with a
 * warning naming the variable, and the caller keeps its default.
 */
int pb_env_int(enum pb_env_var var, int64_t lo, int64_t hi, int64_t *out);
/** The same for a real in [@p lo, @p hi]. */
int pb_env_double(enum pb_env_var var, double lo, double hi, double *out);
/** The same for 1 to @p max comma-separated integers in [@p lo, @p hi]; *@p n gets their count. */
int pb_env_int_list(enum pb_env_var var, int64_t lo, int64_t hi, int max, int64_t *out, int *n);

#endif /* PAIRBOUND_ENV_H */
