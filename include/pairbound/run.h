/* `pairbound run`: the whole pipeline from one INI configuration. */
#ifndef PAIRBOUND_RUN_H
#define PAIRBOUND_RUN_H

#include <stdint.h>
#include <mpi.h>

#include "pairbound/exact.h"
#include "pairbound/identify.h"
#include "pairbound/protocol.h"

#define PB_RUN_MAX_STAGES 16

struct pb_run_config {
  char *synth;          /* NULL: use an existing store; "paper", "small" or a synth INI path */
  char *store, *output;
  int32_t n_stages;
  char *stages[PB_RUN_MAX_STAGES];
  uint64_t seed;
  int64_t group_draws, class_draws;
  struct pb_protocol_options protocol;
  struct pb_identify_options bounds;
  int policy_all;       /* policy on the full grid instead of the panel */
  struct pb_exact_options exact; /* [exact]: worlds scored by the exact stage */
  int exact_worlds;     /* [exact] names worlds: the exact stage joins the pipeline */
  char *text;           /* the configuration itself (provenance) */
};

/** Parse run configuration text; errors read "NAME:LINE: reason". */
int pb_run_config_parse(const char *text, const char *name, struct pb_run_config *cfg);
int pb_run_config_load(const char *path, struct pb_run_config *cfg);
void pb_run_config_free(struct pb_run_config *cfg);

/** Names of the stages `run` knows, in pipeline order, NULL-terminated. */
const char *const *pb_run_stage_names(void);

/**
 * Run the pipeline (collective): synthesise the store if asked and absent,
 * run each stage into OUTPUT/STAGE, write OUTPUT/REPORT.md (the stages'
 * reports in order) and print it on rank 0.
 */
int pb_run(const struct pb_run_config *cfg, MPI_Comm comm, const char *provenance);

extern const char pb_embedded_run_ini[];

#endif /* PAIRBOUND_RUN_H */
