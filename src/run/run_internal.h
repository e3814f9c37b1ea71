/* Pieces of `pairbound run` shared by run.c and run_report.c. */
#ifndef PAIRBOUND_RUN_INTERNAL_H
#define PAIRBOUND_RUN_INTERNAL_H

#include "pairbound/run.h"

/* What the run did, for REPORT.md's provenance and the closing summary. */
struct pb_run_facts {
  const char *build;       /* pb_results_build_info() */
  const char *store_digest;   /* pb_checksum_xxh128_file of the store */
  const char *settings;    /* effective analysis settings, "key = value" lines */
  int ranks, threads;
  double wall[PB_RUN_MAX_STAGES]; /* seconds per stage, in cfg->stages order */
  int resumed[PB_RUN_MAX_STAGES]; /* 1: taken from its checkpoint */
  char skipped[PB_RUN_MAX_STAGES][512]; /* why a stage that cannot run on this store was skipped ("": it ran) */
  double total;            /* seconds of the whole run */
};

/**
 * Rank 0: write OUTPUT/REPORT.md (provenance, then every stage's report in
 * the seed paper's order with its figure links made relative to OUTPUT) and
 * print the one-screen summary on stdout.
 */
int pb_run_report(const struct pb_run_config *cfg, const struct pb_run_facts *facts);

#endif /* PAIRBOUND_RUN_INTERNAL_H */
