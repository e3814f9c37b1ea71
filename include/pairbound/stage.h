/* What a stage is (struct pb_stage_desc: one per stage, each in its own
 * folder, listed in pairbound/registry.h) and the common frame of every
 * analysis stage: open the store, run the protocol, create the results,
 * find this rank's cells; close or discard at the end. */
#ifndef PAIRBOUND_STAGE_H
#define PAIRBOUND_STAGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <mpi.h>

#include "pairbound/options.h"
#include "pairbound/protocol.h"
#include "pairbound/results.h"
#include "pairbound/store.h"
#include "pairbound/text.h"
#include "pairbound/timer.h"

/* What a stage runs on: the same for the command line and `pairbound run`. */
struct pb_stage_call {
  const char *store;                          /* STORE, or NULL for a stage that reads none */
  const char *outdir;                         /* OUTDIR the stage writes (a run's OUTPUT/<instance>) */
  MPI_Comm comm;
  const struct pb_protocol_options *protocol;
  const char *provenance;                     /* build, command line (and configuration) */
  const char *section;                        /* NULL on the command line; under `pairbound run` the
                                                 configuration section ("screen.dev"), which messages name */
  const struct pb_stage_desc *stage;          /* the stage being run */
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

/* What a stage does with a store: pb_stage_begin opens it, runs the protocol, checks what the stage needs. */
struct pb_stage_store {
  int reads;                                  /* reads STORE (under `pairbound run`, the run's store) and takes
                                                 the protocol options; 0: none (exact draws its worlds) */
  unsigned needs;                             /* what it needs of the store (PB_STAGE_NEEDS_*) */
  int figures;                                /* draws figures: pb_stage_begin starts their gnuplot */
};

/* A stage's options: one table (pairbound/options.h) filling one struct. */
struct pb_stage_options {
  const struct pb_option *table;              /* NULL: no options */
  size_t size;                                /* sizeof the struct */
  void (*defaults)(void *opts);               /* NULL: pb_options_defaults(table) on zeroed memory */
  void (*release)(void *opts);                /* frees what pb_options_free does not, or NULL */
};

/* A stage's part in `pairbound run` (docs/run.md); a command that is no
 * pipeline stage (protocol, states) has none: .report NULL. */
struct pb_stage_pipeline {
  const char *report;                         /* report/FILE that REPORT.md shows */
  int order;                                  /* place in REPORT.md and the summary (seed 000's order) */
  int blocks;                                 /* its loops keep blocks (pairbound/blocks.h): the checkpoint
                                                 key is needed before it starts */
  const struct pb_stage_inherit *inherits;    /* keys from other sections, {NULL}-terminated, or NULL */
  const char *joins;                          /* a key of its section that, when given, adds the stage
                                                 to the pipeline (last), or NULL */
  /* whether it can run on the store of @p meta with @p opts (its roles, groups, ...), beyond .needs; else 0
   * with the one-line reason in @p why, and `pairbound run` skips it (NULL: it can) */
  int (*applies)(const struct pb_meta *meta, const void *opts, char *why, size_t n);
  /* its lines of the run's one-screen summary on @p fp and its findings for the first page of REPORT.md in
   * @p md (each may be NULL), read back from its report TSVs in @p dir (OUTPUT/<name>); @p rel is the path of
   * its report/ relative to REPORT.md, for figure links */
  void (*summary)(FILE *fp, struct pb_text *md, const char *dir, const char *rel);
};

struct pb_stage_desc {
  const char *name;
  const char *operand;                        /* synopsis operand: NULL = "STORE" */
  int output_optional;                        /* -o may be left out (the stage's .command checks) */
  struct pb_stage_store store;
  struct pb_stage_options options;
  /* the stage on call->store into call->outdir (collective) */
  int (*run)(const struct pb_stage_call *call, const void *opts);
  /* command-line forms other than STORE -o OUTDIR (fragility --law, exact score|worlds): NULL, or
   * PB_STAGE_RUN, PB_STAGE_USAGE, or the status of a command it carried out itself */
  int (*command)(const struct pb_stage_call *call, const struct pb_stage_args *args, const void *opts);
  struct pb_stage_pipeline pipeline;
  const char *help;                           /* --help description, before the options */
};

/** Compute the protocol from a store (collective; rows split over ranks; src/core/protocol.c). */
int pb_protocol_compute(struct pb_store *st, MPI_Comm comm, const struct pb_protocol_options *opt,
                        struct pb_protocol *out);

/** Write the protocol into results.h5 (/protocol) and report/protocol_*.tsv (collective). */
int pb_protocol_write(const struct pb_protocol *p, const struct pb_meta *meta, struct pb_results *res);

struct pb_stage {
  MPI_Comm comm;
  int rank, size;
  struct pb_store *store;
  const struct pb_meta *meta;
  struct pb_protocol protocol;
  struct pb_results *results;
  int64_t n_cells;          /* global cells */
  int64_t first, last;      /* this rank's cells */
  struct pb_timer timer;    /* a store stage's phases (pb_stage_begin starts it, pb_stage_end writes it) */
};

/** Open STORE, compute and write the protocol, create OUTDIR (collective). */
int pb_stage_open(const char *store_path, const char *outdir, MPI_Comm comm,
                  const struct pb_protocol_options *popt, const char *provenance, struct pb_stage *stage);
/**
 * Keep (@p on = 1) the protocol that pb_stage_open computes and reuse it
 * while the store file (device, inode, size, modification time), the
 * protocol options and the communicator are the same; 0 drops it.  For
 * `pairbound run`, whose stages all open one store; collective in
 * pb_stage_open (every rank agrees on a reuse).
 */
void pb_stage_protocol_memo(int on);
/** pb_stage_open timing its phases (open, compute, write) in @p tm when not NULL: the protocol stage, whose
 * whole work this is. */
struct pb_timer;
int pb_stage_open_timed(const char *store_path, const char *outdir, MPI_Comm comm,
                        const struct pb_protocol_options *popt, const char *provenance, struct pb_stage *stage,
                        struct pb_timer *tm);
/**
 * Every rank's records (rec_len doubles per item, this rank's n_local items
 * in order, n_total over all ranks) joined in global order, on rank 0 only
 * (to_all = 0, NULL elsewhere) or on every rank (collective).  Caller frees.
 * Only for items whose number does not grow with the cells or images (e.g.
 * predict's fits); a report summarises per-cell records with the
 * aggregates of pairbound/agg.h instead (docs/architecture.md, "Writing
 * outputs").  n_local * rec_len must fit an MPI count (int).
 */
double *pb_stage_gather(const struct pb_stage *stage, int64_t n_local, int64_t n_total, int32_t rec_len,
                        const double *recs, int to_all);

/* What a stage needs of its store (pb_stage_require). */
#define PB_STAGE_NEEDS_CELLS 1 /* a perturbed condition besides 'clean' in some source */
#define PB_STAGE_NEEDS_EVAL 2  /* evaluation images (split 'eval') in some source */

/**
 * Whether the store of @p meta lacks what stage @p name @p needs: 1 with the
 * reason, naming @p store_path, in @p why; 0 when it has it (pure).
 */
int pb_stage_lacks(const struct pb_meta *meta, const char *store_path, const char *name, unsigned needs, char *why,
                   size_t n);
/**
 * Does the store hold what stage @p name @p needs?  Else PB_FAIL with a
 * message naming @p store_path and what it lacks.  Every rank holds the same
 * metadata, so every rank returns the same (no communication).
 */
int pb_stage_require(const struct pb_stage *stage, const char *store_path, const char *name, unsigned needs);

/**
 * The start of every store stage (collective): pb_stage_open of @p call's
 * store into its OUTDIR, pb_stage_require of what its stage needs, and,
 * for a stage that draws figures, their gnuplot started to work beside it;
 * stage->timer times it as /timings/NAME, its first phase counting the
 * opening.  PB_FAIL with nothing left open on failure.
 */
int pb_stage_begin(const struct pb_stage_call *call, struct pb_stage *stage);

/** Commit the results (status PB_OK) or discard them; closes the store. */
int pb_stage_close(struct pb_stage *stage, int status);
/** The end of a stage begun by pb_stage_begin: its timings into the results (status PB_OK), then pb_stage_close. */
int pb_stage_end(struct pb_stage *stage, int status);

#endif /* PAIRBOUND_STAGE_H */
