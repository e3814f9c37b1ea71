/* Resampling: model-group and class bootstrap percentile intervals over
 * the ranks (collective), on the draws of pairbound/draws.h (which kernels
 * use without MPI).  The class-weighted screening metrics of the class
 * bootstrap are screen's (pairbound/screen_kernel.h). */
#ifndef PAIRBOUND_RESAMPLE_H
#define PAIRBOUND_RESAMPLE_H

#include <stdint.h>

#include <mpi.h>

#include "pairbound/draws.h"

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
int pb_resample_boot_group_means(const double *x, int64_t n_cells, int32_t n_stats, const int32_t *group, int32_t n_groups,
                        const struct pb_boot_spec *spec, MPI_Comm comm, struct pb_interval *out);

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
                       int32_t n_stats, const struct pb_boot_spec *spec, MPI_Comm comm, struct pb_interval *out);

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

#endif /* PAIRBOUND_RESAMPLE_H */
