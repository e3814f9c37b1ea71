/* The analysis stages, each described once and registered once.
 *
 * A stage is one `const struct pb_stage_desc pb_<name>_stage` in its own
 * folder (src/<name>/<name>_stage.c): its name (the command-line verb, the
 * folder, the [<name>] section of a run configuration and OUTDIR/<name>
 * under `pairbound run`), its option table, how to run it, what REPORT.md
 * shows of it and what a run configuration hands it.  src/run/registry.c
 * lists every descriptor once, in pipeline order; the command line
 * (src/cli/cli.c), the pipeline (src/run/run.c) and REPORT.md with the
 * run's summary (src/run/run_report.c) all iterate that one list.  Adding a
 * stage is a folder and one line there (docs/architecture.md). */
#ifndef PAIRBOUND_REGISTRY_H
#define PAIRBOUND_REGISTRY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <mpi.h>

#include "pairbound/options.h"
#include "pairbound/protocol.h"

/* What a stage runs on: the same for the command line and `pairbound run`. */
struct pb_stage_call {
  const char *store;                          /* STORE, or NULL for a stage that reads none */
  const char *outdir;                         /* OUTDIR the stage writes (a run's OUTPUT/<instance>) */
  MPI_Comm comm;
  const struct pb_protocol_options *protocol;
  const char *provenance;                     /* build, command line (and configuration) */
  const char *section;                        /* NULL on the command line; under `pairbound run` the
                                                 configuration section ("screen.dev"), which messages name */
};

/* The words of a command line after the verb, for a stage's own checks. */
struct pb_stage_args {
  const char *operand;                        /* first operand (STORE, or exact's score|worlds), or NULL */
  char *const *more;                          /* the operands after it */
  int n_more;
  const char *output;                         /* -o, or NULL */
};

/* A key a stage takes from another section of a run configuration unless
 * its own section sets it (docs/run.md): "run.seed" (plus .add, modulo
 * 2^64), "run.group_draws", "run.class_draws", "bounds.tau" (when given). */
struct pb_stage_inherit {
  const char *key;
  const char *from;
  int64_t add;
};

/* Returned by a stage's .command when the command line asks for the stage
 * itself (STORE -o OUTDIR): the common stage path then runs it. */
#define PB_STAGE_RUN 1
/* Returned by .command for a usage error (message set with pb_error_set). */
#define PB_STAGE_USAGE 2

struct pb_stage_desc {
  const char *name;
  const char *help;                           /* --help description, before the options */
  const char *operand;                        /* synopsis operand: NULL = "STORE" */
  int output_optional;                        /* -o may be left out (the stage's .command checks) */
  int protocol;                               /* takes the protocol options */
  const struct pb_option *options;            /* its option table, or NULL */
  size_t options_size;                        /* sizeof its options struct */
  void (*defaults)(void *opts);               /* NULL: pb_options_defaults(options) on zeroed memory */
  void (*release)(void *opts);                /* frees what pb_options_free does not, or NULL */
  /* the stage on call->store into call->outdir (collective) */
  int (*run)(const struct pb_stage_call *call, const void *opts);
  /* command-line forms other than STORE -o OUTDIR (fragility --law, exact score|worlds): NULL, or
   * PB_STAGE_RUN, PB_STAGE_USAGE, or the status of a command it carried out itself */
  int (*command)(const struct pb_stage_call *call, const struct pb_stage_args *args, const void *opts);
  /* ---- under `pairbound run` */
  int pipeline;                               /* a pipeline stage (protocol and states are commands only) */
  int reads_store;                            /* 0: needs no store (exact draws its worlds) */
  int blocks;                                 /* its loops keep blocks (pairbound/blocks.h): the checkpoint
                                                 key is needed before it starts */
  const char *report;                         /* report/FILE that REPORT.md shows */
  int report_order;                           /* place in REPORT.md and the summary (seed 000's order) */
  const struct pb_stage_inherit *inherits;    /* keys from other sections, {NULL}-terminated, or NULL */
  const char *joins;                          /* a key of its section that, when given, adds the stage
                                                 to the pipeline (last), or NULL */
  /* its lines of the run's one-screen summary, read back from its report TSVs in @p dir (OUTPUT/<name>) */
  void (*summary)(FILE *fp, const char *dir);
};

/** Every stage, in pipeline order, NULL-terminated (src/run/registry.c). */
extern const struct pb_stage_desc *const pb_registry_stages[];

/** The stage called @p name, or the kind of an instance name KIND.NAME (NAME of letters, digits, '_', '-');
 * NULL when neither. */
const struct pb_stage_desc *pb_registry_find(const char *name);

/** Index of @p d in pb_registry_stages. */
int pb_registry_index(const struct pb_stage_desc *d);

/** Options of @p d with its defaults (calloc'd; release with pb_registry_options_free). */
void *pb_registry_options_new(const struct pb_stage_desc *d);
void pb_registry_options_free(const struct pb_stage_desc *d, void *opts);

#endif /* PAIRBOUND_REGISTRY_H */
