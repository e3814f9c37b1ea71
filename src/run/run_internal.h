/* Pieces of `pairbound run` shared by run.c and run_report.c. */
#ifndef PAIRBOUND_RUN_INTERNAL_H
#define PAIRBOUND_RUN_INTERNAL_H

#include "pairbound/meta.h"
#include "pairbound/run.h"
#include "pairbound/text.h"

/* The seed paper's numbers a store declares (docs/store.md: each source's and
 * the root's seed_values), kept from its metadata for the report. */
struct pb_run_seed {
  int32_t n_sources;
  char **names;            /* [n_sources] source names, in store order */
  char **values;           /* [n_sources] their seed_values, NULL where none */
  char *panel;             /* the root's seed_values, or NULL */
};

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
  struct pb_run_seed seed; /* the store's seed values (none: a run that reads no store) */
};

/**
 * Rank 0: write OUTPUT/REPORT.md (provenance, then every stage's report in
 * the seed paper's order with its figure links made relative to OUTPUT) and
 * print the one-screen summary on stdout.
 */
int pb_run_report(const struct pb_run_config *cfg, const struct pb_run_facts *facts);

/** Keep the seed values of @p meta in @p seed (src/run/run_seed.c). */
void pb_run_seed_take(struct pb_run_seed *seed, const struct pb_meta *meta);
void pb_run_seed_free(struct pb_run_seed *seed);
/**
 * Rank 0, after the stages: compare every seed value of @p seed that names a
 * statistic of the comparison's table with that statistic in the stages'
 * report TSVs under cfg->output; write OUTPUT/seed_panel.tsv, append the
 * section "Synthetic panel against seed 000" to @p md and put the one-line
 * verdict in @p verdict.  A store without such seed values gives nothing
 * (verdict "").
 */
int pb_run_seed_compare(const struct pb_run_config *cfg, const struct pb_run_seed *seed, struct pb_text *md,
                        char *verdict, size_t n);

#endif /* PAIRBOUND_RUN_INTERNAL_H */
