/* Random draws of the resampling engine and the permutation nulls, pure
 * (no MPI): bootstrap multiplicities, within-class permutations and
 * derangements, label permutations, percentiles.  Every draw comes from the
 * counter-based RNG keyed by (base seed, analysis, draw index, stream), so
 * results never depend on the number of ranks or threads.  The collective
 * bootstrap that uses them is pairbound/resample.h. */
#ifndef PAIRBOUND_DRAWS_H
#define PAIRBOUND_DRAWS_H

#include <stdint.h>

#include "pairbound/rng.h"

/* Analysis ids of the RNG streams (synth uses 1-4). */
enum pb_rng_analysis {
  PB_RNG_GROUP_BOOT = 16,
  PB_RNG_CLASS_BOOT = 17,
  PB_RNG_PERM_WITHIN = 18,
  PB_RNG_DERANGE = 19,
  PB_RNG_LABEL_PERM = 20
};

#define PB_BOOT_LEVEL 0.95

struct pb_interval {
  double est;            /* the statistic on the original sample */
  double lo, hi;         /* percentile interval */
  int64_t n_draws;       /* draws in which the statistic was defined */
};

/* Cap on --group-draws / --class-draws (and group_draws / class_draws in a run
 * configuration): 95% percentile intervals are stable well below it, and the
 * cost is linear in draws (10^7 draws ran for minutes; issue 17 item 9). */
#define PB_BOOT_MAX_DRAWS 100000

struct pb_boot_spec {
  uint64_t seed;
  uint32_t analysis;     /* PB_RNG_GROUP_BOOT, PB_RNG_CLASS_BOOT, ... */
  uint32_t stream;       /* e.g. the source index of a class bootstrap */
  int64_t n_draws;
  double level;          /* 0.95 for 95% intervals */
};

/**
 * Multiplicities of one bootstrap draw: @p n_units units drawn with replacement
 * (mult[u] = times unit u was drawn; sums to n_units).  Draw index -1 gives the
 * original sample (all ones).
 */
void pb_resample_boot_multiplicities(const struct pb_boot_spec *spec, int64_t draw, int32_t n_units, int32_t *mult);

/* ---- permutation nulls.  @p label groups the n items into classes. */

/** Uniform random within-class permutation (perm[i] = partner of item i). */
void pb_resample_perm_within_class(uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate, int32_t n,
                          const int32_t *label, int32_t *perm);

/**
 * Classes of @p label for repeated permutations of the same items: order[]
 * lists the n items grouped by ascending label, index order within a class;
 * class c is order[cbeg[c] .. cbeg[c+1]) (cbeg has n + 1 entries).  Returns
 * the number of classes.
 */
int32_t pb_resample_perm_classes(int32_t n, const int32_t *label, int32_t *order, int32_t *cbeg);

/** pb_resample_perm_within_class from classes computed once by pb_resample_perm_classes (the same draws). */
void pb_resample_perm_within_grouped(uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate, int32_t n_classes,
                            const int32_t *order, const int32_t *cbeg, int32_t *perm);

/**
 * Uniform random within-class derangement (rejection sampling, exact):
 * perm[i] != i for every item of a class with at least two items; singleton
 * classes keep their item (returned count of such fixed items).
 */
int32_t pb_resample_derange_within_class(uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate, int32_t n,
                                const int32_t *label, int32_t *perm);

/** Uniform random derangement of 0..n-1 (n >= 2) from @p rng: shuffles until no fixed point (about e tries). */
void pb_resample_perm_derange(struct pb_rng *rng, int32_t n, int32_t *perm);

/** Uniform random permutation of n items (label permutations). */
void pb_resample_perm_uniform(uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate, int32_t n, int32_t *perm);

/**
 * Percentile of sorted data (linear interpolation, GSL's
 * quantile_from_sorted_data), NaN for n = 0; between two equal order
 * statistics it is that value exactly, where (1 - delta) a + delta a may
 * round away from a (a zero-width interval stays zero-width).
 */
double pb_resample_percentile_sorted(const double *sorted, int64_t n, double q);
/** pb_resample_percentile_sorted's value from unsorted NaN-free data, by selecting the
 *  two order statistics it reads (O(n) instead of a sort); @p v is reordered. */
double pb_resample_percentile_select(double *v, int64_t n, double q);

#endif /* PAIRBOUND_DRAWS_H */
