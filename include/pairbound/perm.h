/* Permutation nulls from counter-based streams: within-class permutations
 * and derangements, label permutations.  Every draw comes from the RNG keyed
 * by (base seed, analysis, item, replicate), so results never depend on the
 * number of ranks or threads (pure: no MPI; pairbound/resample.h adds the
 * bootstrap). */
#ifndef PAIRBOUND_PERM_H
#define PAIRBOUND_PERM_H

#include <stdint.h>

#include "pairbound/util.h"

/* ---- permutation nulls.  @p label groups the n items into classes. */

/** Uniform random within-class permutation (perm[i] = partner of item i). */
void pb_perm_within_class(uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate, int32_t n,
                          const int32_t *label, int32_t *perm);

/**
 * Classes of @p label for repeated permutations of the same items: order[]
 * lists the n items grouped by ascending label, index order within a class;
 * class c is order[cbeg[c] .. cbeg[c+1]) (cbeg has n + 1 entries).  Returns
 * the number of classes.
 */
int32_t pb_perm_classes(int32_t n, const int32_t *label, int32_t *order, int32_t *cbeg);

/** pb_perm_within_class from classes computed once by pb_perm_classes (the same draws). */
void pb_perm_within_grouped(uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate, int32_t n_classes,
                            const int32_t *order, const int32_t *cbeg, int32_t *perm);

/**
 * Uniform random within-class derangement (rejection sampling, exact):
 * perm[i] != i for every item of a class with at least two items; singleton
 * classes keep their item (returned count of such fixed items).
 */
int32_t pb_derange_within_class(uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate, int32_t n,
                                const int32_t *label, int32_t *perm);

/** Uniform random derangement of 0..n-1 (n >= 2) from @p rng: shuffles until no fixed point (about e tries). */
void pb_perm_derange(struct pb_rng *rng, int32_t n, int32_t *perm);

/** Uniform random permutation of n items (label permutations). */
void pb_perm_uniform(uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate, int32_t n, int32_t *perm);

#endif /* PAIRBOUND_PERM_H */
