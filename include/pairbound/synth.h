/* Deterministic synthetic panel generator (latent skill/difficulty/fragility model). */
#ifndef PAIRBOUND_SYNTH_H
#define PAIRBOUND_SYNTH_H

#include <stdint.h>
#include <mpi.h>

#include "pairbound/synth_config.h"
#include "pairbound/store.h"

/* Stream identifiers of the counter-based RNG (analysis ids). */
enum pb_rng_stream {
  PB_RNG_SYNTH_MODEL = 1,
  PB_RNG_SYNTH_IMAGE = 2,
  PB_RNG_SYNTH_SPLIT = 3,
  PB_RNG_SYNTH_RECORD = 4,
  PB_RNG_SYNTH_LSETS = 5   /* label sets: a stream of their own, so that no other field changes with them */
};

/** Build the store metadata (models, sources, images, conditions) of a configuration. */
int pb_synth_meta(const struct pb_synth_config *cfg, struct pb_meta *meta);

/**
 * Generate rows [first_row, first_row + n_rows) of source @p src (row =
 * model * n_conditions + condition).  Each record depends only on the seed and
 * its (source base, model, condition, image) names, never on the caller's
 * partition; OpenMP threads share the work.
 */
void pb_synth_rows(const struct pb_synth_config *cfg, const struct pb_meta *meta, int32_t src,
                   int32_t first_row, int32_t n_rows, struct pb_rows *out);

/** Generate the whole store at @p path, rows split over the ranks of @p comm. */
int pb_synth_store(const struct pb_synth_config *cfg, const char *path, MPI_Comm comm);

#endif /* PAIRBOUND_SYNTH_H */
