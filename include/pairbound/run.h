/* `pairbound run`: the whole pipeline from one INI configuration (docs/run.md). */
#ifndef PAIRBOUND_RUN_H
#define PAIRBOUND_RUN_H

#include <stdint.h>
#include <stdio.h>
#include <mpi.h>

#include "pairbound/protocol.h"

#define PB_RUN_MAX_STAGES 16
#define PB_RUN_MAX_INSTANCES 8
#define PB_RUN_MAX_KINDS 16     /* stages in the registry (pairbound/registry.h) */

/* A named further instance of a stage: `stages = ..., screen.dev` runs the
 * screen stage a second time with the options of section [screen.dev]
 * (starting from screen's defaults and what [run] gives every screen), into
 * OUTPUT/screen.dev with its own checkpoint (docs/run.md). */
struct pb_run_instance {
  char *name;                   /* KIND.NAME, KIND a stage */
  int seen_in_stages;           /* listed in [run] stages */
  void *opts;                   /* its options (its kind's options struct) */
};

struct pb_run_config {
  char *synth;          /* NULL: use an existing store; "paper", "small" or a synth INI path */
  char *store, *output;
  int32_t n_stages;
  char *stages[PB_RUN_MAX_STAGES];
  uint64_t seed;        /* [run] seed: every stage's seed (plus its offset) unless its section sets one */
  int64_t group_draws, class_draws;
  struct pb_protocol_options protocol;
  void *opts[PB_RUN_MAX_KINDS]; /* [STAGE] sections: the options of pb_registry_stages[k] */
  int32_t n_instances;  /* further named instances of stages (KIND.NAME) */
  struct pb_run_instance instances[PB_RUN_MAX_INSTANCES];
  char *text;           /* the configuration itself (provenance) */
  int resume;           /* --resume: keep stages whose checkpointed output matches */
};

/**
 * Parse run configuration text: [run], [protocol] and one [STAGE] section per
 * stage with the keys of the stage's option table.  Unknown sections and keys,
 * repeated keys (except repeatable options) and bad values are errors reading
 * "NAME:LINE: reason".
 */
int pb_run_config_parse(const char *text, const char *name, struct pb_run_config *cfg);
int pb_run_config_load(const char *path, struct pb_run_config *cfg);
/** Whether @p cfg has an output directory and, if a stage reads one, a store
 * (either may come from the configuration or from --store and -o). */
int pb_run_config_check(const struct pb_run_config *cfg);
void pb_run_config_free(struct pb_run_config *cfg);

/** Describe every section and key of a run configuration (for `pairbound run --help`). */
void pb_run_config_help(FILE *fp);

/**
 * Run the pipeline (collective): synthesise the store if asked and absent,
 * run each stage into OUTPUT/STAGE and checkpoint it (with cfg->resume, keep
 * a stage whose checkpoint matches), write OUTPUT/REPORT.md (provenance, then
 * the stages' reports in the seed paper's order) and print a one-screen
 * summary on rank 0.
 */
int pb_run_pipeline(const struct pb_run_config *cfg, MPI_Comm comm, const char *provenance);

extern const char pb_embedded_run_ini[];

#endif /* PAIRBOUND_RUN_H */
