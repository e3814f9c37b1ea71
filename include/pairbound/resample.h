/* Resampling and permutation nulls: model-group and class bootstrap
 * percentile intervals, within-class permutations and derangements, label
 * permutations.  Every draw comes from the counter-based RNG keyed by
 * (base seed, analysis, draw index, stream), so results never depend on the
 * number of ranks or threads. */
#ifndef PAIRBOUND_RESAMPLE_H
#define PAIRBOUND_RESAMPLE_H

#include <stdint.h>
#include <mpi.h>

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

/**
 * A statistic vector as a function of unit multiplicities; must be
 * deterministic and thread-safe (called concurrently for different draws).
 * Undefined values are NaN and are left out of that statistic's interval.
 */
typedef void (*pb_boot_fn)(const int32_t *mult, int32_t n_units, void *ctx, double *values);

/**
 * Bootstrap percentile intervals of @p n_stats statistics (collective).
 * Draws are split over the ranks of @p comm in contiguous blocks and over
 * OpenMP threads; values are gathered in draw order and every rank receives
 * the same intervals.  Percentiles use linear interpolation between order
 * statistics (GSL's quantile_from_sorted_data).
 */
int pb_resample_boot_run(const struct pb_boot_spec *spec, int32_t n_units, int32_t n_stats, pb_boot_fn fn, void *ctx,
                         MPI_Comm comm, struct pb_interval *out);

/**
 * Model-group bootstrap of cell-weighted means: statistic k is the mean of
 * x[c][k] over cells c where it is defined, each cell weighted by the
 * multiplicity of its model group.  Costs O(groups x stats) per draw.
 */
int pb_resample_boot_group_means(const double *x, int64_t n_cells, int32_t n_stats, const int32_t *group,
                                 int32_t n_groups, const struct pb_boot_spec *spec, MPI_Comm comm,
                                 struct pb_interval *out);

/**
 * pb_resample_boot_group_means from the cells already reduced to their groups:
 * sum[g][k] and count[g][k] are the sum and the number of the defined values
 * of statistic k over the cells of group g (every rank passes the same, e.g.
 * from pb_agg_reduce to all ranks), so no rank needs the cells themselves.
 * @p full (may be NULL): full[k] is statistic k of the sample itself, every
 * group once, as the caller computes its point estimate (e.g. the exact mean,
 * pb_agg_mean); a draw that takes every group once (with one group: every
 * draw) gets it instead of sum / count rounded twice, so that such a draw
 * equals the estimate and one group's intervals have zero width exactly.
 */
int pb_resample_boot_group_sums(const double *sum, const double *count, const double *full, int32_t n_groups,
                                int32_t n_stats, const struct pb_boot_spec *spec, MPI_Comm comm,
                                struct pb_interval *out);

/* Markdown note of a stage whose group intervals have zero width (pb_resample_boot_one_group). */
#define PB_BOOT_ONE_GROUP_NOTE                                                                                   \
  "\n*Warning: every model belongs to one model group, so resampling the model groups redraws that group every " \
  "time and each 95% group interval above has zero width: it says nothing about the uncertainty between groups " \
  "(the intervals need models of at least two groups).*\n"

/**
 * Are group intervals requested (@p group_draws > 0) while all @p n_models
 * models are in one group?  Then every draw is that group and each interval
 * collapses to its point estimate: warns on stderr (naming @p stage and the
 * group) and returns 1, so that the stage adds PB_BOOT_ONE_GROUP_NOTE to its
 * markdown; else 0.
 */
int pb_resample_boot_one_group(char *const *model_groups, int32_t n_models, int64_t group_draws, const char *stage);

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
void pb_resample_perm_within_grouped(uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate,
                                     int32_t n_classes, const int32_t *order, const int32_t *cbeg, int32_t *perm);

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
void pb_resample_perm_uniform(uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate, int32_t n,
                              int32_t *perm);

/* ---- class-weighted screening metrics (class bootstrap): integer weights
 * act as replication counts, so each metric equals the unweighted one on the
 * data set with every image repeated as often as its class was drawn. */

/** The most budgets pb_resample_weighted_metrics takes. */
#define PB_WM_MAX_PCT 8

/** One score's images packed for repeated weighted passes (pb_resample_weighted_codes). */
struct pb_wm_codes {
  const uint32_t *code; /**< n: label << 2 | (first image of its tie group) << 1 | (failure), descending score */
  const uint32_t *ret;  /**< n - n_fail: the retained images' labels, descending score */
  const uint32_t *fail; /**< n_fail: the failures' labels, descending score */
  const uint32_t *ra;   /**< n_fail: retained images strictly above failure f's tie group */
  const uint32_t *rae;  /**< n_fail: retained images above or in failure f's tie group */
  int32_t n, n_fail;
};

/** 32-bit words pb_resample_weighted_codes needs for n images. */
#define PB_WM_CODE_WORDS(n) (4 * (size_t)(n))

/**
 * Packs one score's images into @p words (PB_WM_CODE_WORDS(n) of them, which
 * @p out points into): @p order lists the images with a defined score in
 * ascending score order (ties adjacent).  Labels below 2^30.
 */
void pb_resample_weighted_codes(const double *score, const uint8_t *y, const int32_t *label, const int32_t *order,
                                int32_t n, uint32_t *words, struct pb_wm_codes *out);

/** Weightings pb_resample_weighted_metrics evaluates in one pass. */
#define PB_WM_LANES 32

/**
 * For each of PB_WM_LANES weightings l (image weight mult[label *
 * PB_WM_LANES + l]): AUROC auroc[l] with failures positive (ties 1/2; NaN
 * without weighted failures or retained images), and the failure coverage
 * cov[l * n_pct + b] of the top k = max(1, round(pcts[b] W / 100)) images by
 * score (W = total weight, ties at the cutoff prorated; NaN without
 * failures), in one pass over the codes of pb_resample_weighted_codes: the tie
 * groups, which all weightings share, are walked once.  @p pos[l] and
 * @p total[l] are the weighted failures and images among the coded ones,
 * which the caller sums over classes (O(classes), not O(images)).
 * @p mult16, where not NULL, holds the same weights as 16-bit integers
 * (each at most 65,535): with it, weightings whose totals are all at most
 * 65,535 take the pass in 16-bit lanes, twice the lanes of a vector.
 * n_pct <= PB_WM_MAX_PCT.
 */
void pb_resample_weighted_metrics(const struct pb_wm_codes *codes, const int32_t *mult, const uint16_t *mult16,
                                  const int64_t *pos, const int64_t *total, const int *pcts, int n_pct, double *auroc,
                                  double *cov);

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

#endif /* PAIRBOUND_RESAMPLE_H */
