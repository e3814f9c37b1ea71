/* Random score-preserving shifts (seed 001 R.1) and their two-role
 * label-permutation null (Appendix T; docs/fragility.md): how far random
 * reweightings within the χ² budget move held-out reliability, against the
 * plug-in profile, and how much of that ordering survives when the labels
 * of both roles are permuted within bins.  Pure computation: no MPI, no I/O. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#include "pairbound/draws.h"
#include "pairbound/error.h"
#include "pairbound/fragility.h"
#include "pairbound/rng.h"
#include "pairbound/sort.h"
#include "fragility_kernel_internal.h"

static int pb_fragility__cmp_up(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* A random direction over the groups with rate data (masses q > 0): standard normal, centred and scaled
 * to E_q[d] = 0, E_q[d^2] = 1 (d = 0 elsewhere); returns the largest step t keeping 1 + t d >= 0 (0 for
 * a bin whose groups cannot be told apart, where every direction vanishes). */
static double pb_fragility__direction(int32_t K, const double *q, struct pb_rng *rng, double *d)
{
  double mean = 0, var = 0, tmax = INFINITY;
  for (int32_t g = 0; g < K; g++) {
    d[g] = q[g] > 0 ? pb_rng_normal(rng) : 0;
    mean += q[g] * d[g];
  }
  for (int32_t g = 0; g < K; g++) d[g] = q[g] > 0 ? d[g] - mean : 0, var += q[g] * d[g] * d[g];
  if (!(var > 0)) return 0;
  for (int32_t g = 0; g < K; g++) {
    d[g] /= sqrt(var);
    if (d[g] < 0) tmax = fmin(tmax, -1 / d[g]);
  }
  return tmax;
}

/* The held-out |movement| of a bin under r = 1 + t d, normalised on part E's group masses qe (rates ee). */
static double pb_fragility__movement(int32_t K, const double *qe, const double *ee, const double *d, double t)
{
  double sw = 0, swe = 0, base = 0;
  for (int32_t g = 0; g < K; g++) {
    const double r = 1 + t * d[g];
    sw += qe[g] * r, swe += qe[g] * r * ee[g], base += qe[g] * ee[g];
  }
  return sw > 0 ? fabs(swe / sw - base) : 0;
}

/* One world (observed labels, or a permutation's): per bin with rate and part-E images,
 * PB_FRAGILITY_RANDOM_DRAWS random directions (stream keyed by item, bin and replicate), each stepped at
 * every grid radius by t = min(sqrt(rho), its largest feasible step); per radius with a positive
 * two-sided profile max(Phi_up, Phi_down) of the rate law, a cell: the profile and the median |movement|.
 * Returns the cells. */
static int32_t pb_fragility__random_world(const struct pb_fragility__tally *R, const struct pb_fragility__tally *E,
                                          const struct pb_fragility_options *o, uint64_t item, uint32_t rep,
                                          struct pb_fragility_law *law, double *prof, double *move, int32_t *radius)
{
  enum { D = PB_FRAGILITY_RANDOM_DRAWS };
  double eta[PB_FRAGILITY_MAX_GROUPS], q[PB_FRAGILITY_MAX_GROUPS], qe[PB_FRAGILITY_MAX_GROUPS];
  double ee[PB_FRAGILITY_MAX_GROUPS], m[D], tmax[D];
  double *d = pb_malloc((size_t)D * (size_t)R->K * sizeof(double)), rhos[PB_FRAGILITY_MAX_GRID];
  int32_t n = 0;
  for (int32_t k = 0; k < o->n_grid; k++) rhos[k] = pb_fragility_grid(o, k); /* once: each is formatted and parsed */
  for (int32_t b = 0; b < R->J; b++) {
    if (E->nb[b] == 0 || !pb_fragility__bin_law(R, b, law, eta, q)) continue;
    struct pb_rng rng;
    pb_rng_init(&rng, o->seed, PB_RNG_FRAGILITY_RANDOM, item * PB_FRAGILITY_MAX_BINS + (uint64_t)b, rep);
    for (int j = 0; j < D; j++) tmax[j] = pb_fragility__direction(R->K, q, &rng, d + (size_t)j * R->K);
    for (int32_t g = 0; g < E->K; g++) { /* part E's group masses and rates (0 and 0 for an empty group) */
      const int64_t ne = E->n[(size_t)b * E->K + g];
      qe[g] = (double)ne / (double)E->nb[b];
      ee[g] = ne > 0 ? (double)E->k[(size_t)b * E->K + g] / (double)ne : 0;
    }
    for (int32_t k = 0; k < o->n_grid; k++) {
      const double rho = rhos[k];
      const double phi = fmax(pb_fragility_profile(law, PB_FRAGILITY_UP, rho), pb_fragility_profile(law, PB_FRAGILITY_DOWN, rho));
      if (!(phi > 0)) continue;
      for (int j = 0; j < D; j++) m[j] = pb_fragility__movement(E->K, qe, ee, d + (size_t)j * R->K, fmin(sqrt(rho), tmax[j]));
      pb_sort_small_double(m, D, 64); /* |movements|: no NaN, no -0 */
      prof[n] = phi;
      move[n] = pb_resample_percentile_sorted(m, D, 0.5);
      radius[n++] = k;
    }
  }
  free(d);
  return n;
}

static double pb_fragility__spearman(const double *x, const double *y, int32_t n, double *work)
{
  double r = n >= 3 ? gsl_stats_spearman(x, 1, y, 1, (size_t)n, work) : NAN;
  return isfinite(r) ? r : NAN;
}

/* The images of one part with a signal, grouped by bin (counting sort): group and correctness. */
struct pb_fragility__part_items {
  int32_t *b0, *grp;
  uint8_t *cor;
};

static void pb_fragility__items(const struct pb_fragility_input *in, const struct pb_fragility_partition *p,
                                enum pb_fragility_part part, struct pb_fragility__part_items *it)
{
  int32_t J = p->J, n = 0;
  it->b0 = pb_calloc((size_t)J + 1, sizeof(int32_t));
  for (int32_t i = 0; i < in->n; i++)
    if (in->part[i] == part && !isnan(in->u[i])) it->b0[pb_fragility_bin(p, in->s[i]) + 1]++, n++;
  for (int32_t b = 0; b < J; b++) it->b0[b + 1] += it->b0[b];
  int32_t *fill = pb_malloc((size_t)J * sizeof(int32_t));
  memcpy(fill, it->b0, (size_t)J * sizeof(int32_t));
  it->grp = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof(int32_t));
  it->cor = pb_malloc((size_t)(n > 0 ? n : 1));
  for (int32_t i = 0; i < in->n; i++) {
    if (in->part[i] != part || isnan(in->u[i])) continue;
    int32_t b = pb_fragility_bin(p, in->s[i]), j = fill[b]++;
    it->grp[j] = pb_fragility_group(p, b, in->u[i]);
    it->cor[j] = in->correct[i];
  }
  free(fill);
}

/* The counts of @p it with correctness permuted within bins (replicate rep > 0, stream keyed by seed,
 * item and bin; rep 0: as observed). */
static void pb_fragility__items_tally(const struct pb_fragility__part_items *it, uint64_t seed, uint64_t item,
                                      uint32_t rep, struct pb_fragility__tally *t, int32_t *perm)
{
  pb_fragility__tally_clear(t);
  for (int32_t b = 0; b < t->J; b++) {
    int32_t nb = it->b0[b + 1] - it->b0[b];
    if (rep > 0)
      pb_resample_perm_uniform(seed, PB_RNG_FRAGILITY_RANDOM_NULL, item * PB_FRAGILITY_MAX_BINS + (uint64_t)b, rep, nb, perm);
    for (int32_t j = 0; j < nb; j++)
      pb_fragility__add(t, b, it->grp[it->b0[b] + j], it->cor[it->b0[b] + (rep > 0 ? perm[j] : j)], 0);
  }
}

void pb_fragility_random(const struct pb_fragility_input *in, const struct pb_fragility_options *o,
                         enum pb_fragility_part fit, double *rec)
{
  enum pb_fragility_part rate = fit == PB_FRAGILITY_PART_A ? PB_FRAGILITY_PART_B : PB_FRAGILITY_PART_A;
  const int32_t J = o->n_bins, G = o->n_grid, cap = J * G;
  const uint64_t item = in->item * 2 + (fit == PB_FRAGILITY_PART_A ? 0 : 1);
  struct pb_fragility_partition own;
  const struct pb_fragility_partition *p = pb_fragility__partition(in, fit, J, o->n_groups, &own);
  struct pb_fragility__part_items ir, ie;
  pb_fragility__items(in, p, rate, &ir);
  pb_fragility__items(in, p, PB_FRAGILITY_PART_E, &ie);
  struct pb_fragility__tally R, E;
  pb_fragility__tally_init(&R, J, o->n_groups);
  pb_fragility__tally_init(&E, J, o->n_groups);
  struct pb_fragility_law law;
  pb_fragility_law_init(&law);
  const int32_t nmax = (ir.b0[J] > ie.b0[J] ? ir.b0[J] : ie.b0[J]) + 1;
  int32_t *perm = pb_malloc((size_t)nmax * sizeof(int32_t)), *radius = pb_malloc((size_t)cap * sizeof(int32_t));
  double *prof = pb_malloc((size_t)cap * 4 * sizeof(double)), *move = prof + cap, *work = move + cap;
  double nulls[PB_FRAGILITY_RANDOM_NULL];
  int32_t nn = 0;
  memset(rec, 0, (size_t)PB_FRAGILITY_RANDOM_LEN(G) * sizeof(double));
  for (uint32_t rep = 0; rep <= PB_FRAGILITY_RANDOM_NULL; rep++) {
    /* the two roles permuted on streams of their own: rate items 2 item, evaluation items 2 item + 1 */
    pb_fragility__items_tally(&ir, o->seed, item * 2, rep, &R, perm);
    pb_fragility__items_tally(&ie, o->seed, item * 2 + 1, rep, &E, perm);
    const int32_t n = pb_fragility__random_world(&R, &E, o, item, rep, &law, prof, move, radius);
    const double rs = pb_fragility__spearman(prof, move, n, work);
    if (rep > 0) {
      if (!isnan(rs)) nulls[nn++] = rs;
      continue;
    }
    rec[PB_FX_CELLS] = n;
    rec[PB_FX_SPEARMAN] = rs;
    for (int32_t c = 0; c < n; c++) {
      const double ratio = move[c] / prof[c];
      rec[PB_FX_FIXED + 2 * radius[c]]++;
      if (!(ratio > 1)) continue;
      rec[PB_FX_ABOVE]++;
      rec[PB_FX_EXCESS_SUM] += ratio - 1;
      rec[PB_FX_FIXED + 2 * radius[c] + 1]++;
    }
  }
  qsort(nulls, (size_t)nn, sizeof *nulls, pb_fragility__cmp_up);
  rec[PB_FX_NULL_SPEARMAN] = pb_resample_percentile_sorted(nulls, nn, 0.5);
  free(perm), free(radius), free(prof);
  free(ir.b0), free(ir.grp), free(ir.cor), free(ie.b0), free(ie.grp), free(ie.cor);
  pb_fragility_law_free(&law);
  pb_fragility__tally_free(&R);
  pb_fragility__tally_free(&E);
  pb_fragility_partition_free(&own);
}
