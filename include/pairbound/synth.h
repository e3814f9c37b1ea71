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

/**
 * Model @p m's persistence factor u_m ~ N(0, 1), a seeded draw of its own
 * (docs/synth.md, "Persistence"): on a source with persistence = p its
 * perturbed records share a fraction p Phi(u_m) of their noise with its clean
 * records, and a source's persistence_gain g adds s_c g u_m to its perturbed
 * margins.
 */
double pb_synth_persistence_factor(const struct pb_synth_config *cfg, int32_t m);

/**
 * Entropy and collision of a synthetic record's whole probability vector:
 * the @p n probabilities @p p the generator pinned, in its order (the
 * predicted class, the true class when it differs, the runner-ups), and the
 * n_classes - n other classes, each min((1 - sum p) / (n_classes - n), @p cap)
 * (docs/synth.md, "Per-record summaries"); summed in that order in double,
 * rounded to float.
 */
void pb_synth_summaries(const float *p, int32_t n, int32_t n_classes, float cap, float *entropy, float *collision);

/**
 * For the tests: the records' near math (their normals, sigmoids and powers
 * four records at a time, pb_num_log_n and the others; docs/synth.md,
 * "Performance") checked with tolerance @p tol (0: the default; below 0:
 * no near math, glibc's scalar functions alone), and with @p jitter != 0
 * each near normal pb_rng_normal's times 1 + jitter x a deterministic value
 * in [-1, 1], on every machine.  Returns the records refused (and made again
 * with the scalar functions) since the last call.
 */
long pb_synth_set_near(double tol, double jitter);

/** Generate the whole store at @p path, rows split over the ranks of @p comm. */
int pb_synth_store(const struct pb_synth_config *cfg, const char *path, MPI_Comm comm);

#endif /* PAIRBOUND_SYNTH_H */
