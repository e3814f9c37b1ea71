/* Bootstrap percentile intervals and permutation nulls from counter-based streams. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/progress.h"
#include "pairbound/resample.h"
#include "pairbound/rng.h"
#include "pairbound/sort.h"

void pb_resample_boot_multiplicities(const struct pb_boot_spec *spec, int64_t draw, int32_t n_units, int32_t *mult)
{
  for (int32_t u = 0; u < n_units; u++) mult[u] = draw < 0;
  if (draw < 0) return;
  struct pb_rng rng;
  pb_rng_init(&rng, spec->seed, spec->analysis, (uint64_t)draw, spec->stream);
  for (int32_t u = 0; u < n_units; u++) mult[pb_rng_below(&rng, (uint32_t)n_units)]++;
}

double pb_resample_percentile_sorted(const double *sorted, int64_t n, double q)
{
  if (n <= 0) return NAN;
  const int64_t lhs = (int64_t)(q * (double)(n - 1)); /* GSL's left neighbour */
  if (lhs >= 0 && lhs + 1 < n && sorted[lhs] == sorted[lhs + 1]) return sorted[lhs];
  return gsl_stats_quantile_from_sorted_data(sorted, 1, (size_t)n, q);
}

double pb_resample_percentile_select(double *v, int64_t n, double q)
{
  if (n <= 0) return NAN;
  if (n > INT32_MAX) {
    gsl_sort(v, 1, (size_t)n);
    return pb_resample_percentile_sorted(v, n, q);
  }
  /* the two order statistics gsl_stats_quantile_from_sorted_data reads, and its expression */
  const double index = q * (double)(n - 1);
  const int64_t lhs = (int64_t)index;
  const double delta = index - (double)lhs;
  const double x0 = pb_sort_kth_largest(v, (int32_t)n, (int32_t)(n - lhs));
  if (lhs + 1 >= n) return x0;
  const double x1 = pb_sort_kth_largest(v, (int32_t)n, (int32_t)(n - lhs - 1));
  return x0 == x1 ? x0 : (1 - delta) * x0 + delta * x1;
}

/* Interval of one statistic from its draws (NaN draws left out). */
static void pb_boot__interval(double *v, int64_t n, double level, struct pb_interval *out)
{
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++)
    if (!isnan(v[i])) v[m++] = v[i];
  out->n_draws = m;
  out->lo = pb_resample_percentile_select(v, m, (1 - level) / 2);
  out->hi = pb_resample_percentile_select(v, m, 1 - (1 - level) / 2);
}

int pb_resample_boot_run(const struct pb_boot_spec *spec, int32_t n_units, int32_t n_stats, pb_boot_fn fn, void *ctx,
                MPI_Comm comm, struct pb_interval *out)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int64_t *first = pb_malloc((size_t)(size + 1) * sizeof *first);
  pb_dist_partition_bcast(spec->n_draws, NULL, comm, first);
  int64_t d0 = first[rank], nd = first[rank + 1] - d0;
  double *mine = pb_malloc((size_t)(nd > 0 ? nd : 1) * (size_t)n_stats * sizeof *mine);
  struct pb_progress prog;
  pb_progress_begin(&prog, "bootstrap", "draws", nd);
#pragma omp parallel
  {
    int32_t *mult = pb_malloc((size_t)(n_units > 0 ? n_units : 1) * sizeof *mult);
#pragma omp for schedule(static)
    for (int64_t d = 0; d < nd; d++) {
      pb_resample_boot_multiplicities(spec, d0 + d, n_units, mult);
      fn(mult, n_units, ctx, mine + d * n_stats);
      pb_progress_step(&prog, 1);
    }
    free(mult);
  }
  pb_progress_end(&prog);
  /* draw-major values of every rank, gathered in draw order */
  int *counts = pb_malloc((size_t)size * sizeof *counts), *displs = pb_malloc((size_t)size * sizeof *displs);
  for (int r = 0; r < size; r++) {
    counts[r] = (int)((first[r + 1] - first[r]) * n_stats);
    displs[r] = (int)(first[r] * n_stats);
  }
  double *all = pb_malloc((size_t)(spec->n_draws > 0 ? spec->n_draws : 1) * (size_t)n_stats * sizeof *all);
  MPI_Allgatherv(mine, counts[rank], MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, comm);
  double *est = pb_malloc((size_t)(n_stats > 0 ? n_stats : 1) * sizeof *est);
  int32_t *ones = pb_malloc((size_t)(n_units > 0 ? n_units : 1) * sizeof *ones);
  pb_resample_boot_multiplicities(spec, -1, n_units, ones);
  fn(ones, n_units, ctx, est);
  /* statistics are independent: threads take whole columns */
#pragma omp parallel
  {
    double *col = pb_malloc((size_t)(spec->n_draws > 0 ? spec->n_draws : 1) * sizeof *col);
#pragma omp for schedule(static)
    for (int32_t k = 0; k < n_stats; k++) {
      for (int64_t d = 0; d < spec->n_draws; d++) col[d] = all[d * n_stats + k];
      pb_boot__interval(col, spec->n_draws, spec->level, &out[k]);
      out[k].est = est[k];
    }
    free(col);
  }
  free(ones);
  free(est);
  free(all);
  free(counts);
  free(displs);
  free(mine);
  free(first);
  return PB_OK;
}

struct pb_boot__means {
  int32_t n_groups, n_stats;
  const double *sum, *count;   /* [group][stat] */
  const double *full;          /* [stat] the sample's own statistic, or NULL */
};

/* Weighted sums over groups in group order: identical for any partition of
 * draws.  The sample itself (every group once: the estimate, and with one
 * group every draw) takes the caller's statistic of it when given. */
static void pb_boot__means_fn(const int32_t *mult, int32_t n_units, void *ctx, double *values)
{
  const struct pb_boot__means *m = ctx;
  int32_t g1 = 0;
  while (m->full && g1 < n_units && mult[g1] == 1) g1++;
  if (m->full && g1 == n_units) {
    memcpy(values, m->full, (size_t)m->n_stats * sizeof *values);
    return;
  }
  for (int32_t k = 0; k < m->n_stats; k++) {
    double s = 0, c = 0;
    for (int32_t g = 0; g < n_units; g++) {
      s += mult[g] * m->sum[(size_t)g * m->n_stats + k];
      c += mult[g] * m->count[(size_t)g * m->n_stats + k];
    }
    values[k] = c > 0 ? s / c : NAN;
  }
}

int pb_resample_boot_group_means(const double *x, int64_t n_cells, int32_t n_stats, const int32_t *group, int32_t n_groups,
                        const struct pb_boot_spec *spec, MPI_Comm comm, struct pb_interval *out)
{
  double *sum = pb_calloc((size_t)n_groups * (size_t)n_stats, sizeof *sum);
  double *count = pb_calloc((size_t)n_groups * (size_t)n_stats, sizeof *count);
  for (int64_t c = 0; c < n_cells; c++)
    for (int32_t k = 0; k < n_stats; k++) {
      double v = x[c * n_stats + k];
      if (isnan(v)) continue;
      sum[(size_t)group[c] * n_stats + k] += v;
      count[(size_t)group[c] * n_stats + k] += 1;
    }
  int status = pb_resample_boot_group_sums(sum, count, NULL, n_groups, n_stats, spec, comm, out);
  free(sum);
  free(count);
  return status;
}

int pb_resample_boot_group_sums(const double *sum, const double *count, const double *full, int32_t n_groups,
                       int32_t n_stats, const struct pb_boot_spec *spec, MPI_Comm comm, struct pb_interval *out)
{
  struct pb_boot__means m = {n_groups, n_stats, sum, count, full};
  return pb_resample_boot_run(spec, n_groups, n_stats, pb_boot__means_fn, &m, comm, out);
}

/* ------------------------------------------------------------ permutations */

/* Items of each class in index order: order[cbeg[c] .. cbeg[c+1]).  Labels
 * spanning at most 4n values are placed by a counting sort (a stable pass in
 * index order); wider ones by sorting the keys (label, index), which are
 * distinct, so the order is total and qsort's instability cannot show.  Both
 * give the same order. */
static int32_t pb_perm__classes(int32_t n, const int32_t *label, int32_t *order, int32_t *cbeg)
{
  int32_t lo = n > 0 ? label[0] : 0, hi = lo, nc = 0;
  for (int32_t i = 1; i < n; i++) {
    lo = label[i] < lo ? label[i] : lo;
    hi = label[i] > hi ? label[i] : hi;
  }
  if (n > 0 && (int64_t)hi - lo < 4 * (int64_t)n) {
    const int32_t span = hi - lo + 1;
    int32_t *at = pb_calloc((size_t)span + 1, sizeof *at);
    for (int32_t i = 0; i < n; i++) at[label[i] - lo + 1]++;
    for (int32_t v = 0; v < span; v++) {
      if (at[v + 1] > 0) cbeg[nc++] = at[v];
      at[v + 1] += at[v];
    }
    for (int32_t i = 0; i < n; i++) order[at[label[i] - lo]++] = i;
    free(at);
    cbeg[nc] = n;
    return nc;
  }
  int64_t *key = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *key);
  /* label * 2^32 + index (a multiplication: labels may be negative, which a
   * left shift would make undefined); the low 32 bits are the index */
  for (int32_t i = 0; i < n; i++) key[i] = (int64_t)label[i] * 4294967296LL + i;
  qsort(key, (size_t)n, sizeof *key, pb_sort_cmp_i64);
  for (int32_t i = 0; i < n; i++) {
    order[i] = (int32_t)(key[i] & 0xffffffff);
    if (i == 0 || label[order[i]] != label[order[i - 1]]) cbeg[nc++] = i;
  }
  cbeg[nc] = n;
  free(key);
  return nc;
}

void pb_resample_perm_uniform(uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate, int32_t n, int32_t *perm)
{
  struct pb_rng rng;
  pb_rng_init(&rng, seed, analysis, item, replicate);
  for (int32_t i = 0; i < n; i++) perm[i] = i;
  pb_rng_shuffle(&rng, perm, n);
}

void pb_resample_perm_derange(struct pb_rng *rng, int32_t n, int32_t *perm)
{
  for (;;) {
    for (int32_t j = 0; j < n; j++) perm[j] = j;
    pb_rng_shuffle(rng, perm, n);
    int fixed = 0;
    for (int32_t j = 0; j < n && !fixed; j++) fixed = perm[j] == j;
    if (!fixed || n < 2) return;
  }
}

/* Permutation (or derangement) of each class of a grouping from one RNG
 * stream: classes in label order, a shuffle of each class's items.  Shuffling
 * a copy of the class's items moves them as shuffling positions 0 .. m-1
 * would, so a permutation takes one pb_rng_shuffle_segments over the copy. */
static int32_t pb_perm__within_grouped(uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate, int32_t nc,
                                       const int32_t *order, const int32_t *cbeg, int32_t *perm, int derange)
{
  struct pb_rng rng;
  pb_rng_init(&rng, seed, analysis, item, replicate);
  const int32_t n = nc > 0 ? cbeg[nc] : 0;
  int32_t *w = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *w), fixed = 0;
  if (!derange) {
    memcpy(w, order, (size_t)n * sizeof *w);
    pb_rng_shuffle_segments(&rng, w, nc, cbeg);
  } else {
    for (int32_t c = 0; c < nc; c++) { /* positions 0 .. m-1 of the class, as pb_resample_perm_derange draws them */
      int32_t m = cbeg[c + 1] - cbeg[c], *idx = w + cbeg[c];
      pb_resample_perm_derange(&rng, m, idx);
      fixed += m == 1;
      for (int32_t i = 0; i < m; i++) idx[i] = order[cbeg[c] + idx[i]];
    }
  }
  for (int32_t p = 0; p < n; p++) perm[order[p]] = w[p];
  free(w);
  return fixed;
}

static int32_t pb_perm__within(uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate, int32_t n,
                               const int32_t *label, int32_t *perm, int derange)
{
  int32_t *order = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
  int32_t *cbeg = pb_malloc((size_t)(n + 1) * sizeof *cbeg);
  int32_t nc = pb_perm__classes(n, label, order, cbeg);
  int32_t fixed = pb_perm__within_grouped(seed, analysis, item, replicate, nc, order, cbeg, perm, derange);
  free(order);
  free(cbeg);
  return fixed;
}

int32_t pb_resample_perm_classes(int32_t n, const int32_t *label, int32_t *order, int32_t *cbeg)
{
  return pb_perm__classes(n, label, order, cbeg);
}

void pb_resample_perm_within_grouped(uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate, int32_t n_classes,
                            const int32_t *order, const int32_t *cbeg, int32_t *perm)
{
  pb_perm__within_grouped(seed, analysis, item, replicate, n_classes, order, cbeg, perm, 0);
}

void pb_resample_perm_within_class(uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate, int32_t n,
                          const int32_t *label, int32_t *perm)
{
  pb_perm__within(seed, analysis, item, replicate, n, label, perm, 0);
}

int32_t pb_resample_derange_within_class(uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate, int32_t n,
                                const int32_t *label, int32_t *perm)
{
  return pb_perm__within(seed, analysis, item, replicate, n, label, perm, 1);
}

int pb_resample_boot_one_group(char *const *model_groups, int32_t n_models, int64_t group_draws, const char *stage)
{
  if (group_draws <= 0 || n_models <= 0) return 0;
  for (int32_t m = 1; m < n_models; m++)
    if (strcmp(model_groups[m], model_groups[0]) != 0) return 0;
  pb_warning("%s: every model is in the one model group '%s': the %lld group draws all redraw it, so every 95%% "
             "group interval has zero width (noted in the report)",
             stage, model_groups[0], (long long)group_draws);
  return 1;
}
