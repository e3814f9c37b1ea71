/* What the fragility kernels share (pure: no MPI, no I/O): group counts of
 * one part on a partition, the finite law of a bin's group rates, and the
 * plug-in summaries of an arm record (fragility_kernel_restricted.c), which
 * the arm's diagnostics (fragility_kernel_diag.c) evaluate on other
 * partitions of the same counts. */
#ifndef PAIRBOUND_FRAGILITY_KERNEL_INTERNAL_H
#define PAIRBOUND_FRAGILITY_KERNEL_INTERNAL_H

#include <stdint.h>

#include "pairbound/fragility.h"

/* Group counts of one part on a partition: n[b K + g] images, k[...] correct. */
struct pb_fragility__tally {
  int32_t J, K;
  int64_t *n, *k, *nb, total;
  double *ssum;                /* [J] sum of confidences (ECE) */
};

void pb_fragility__tally_init(struct pb_fragility__tally *t, int32_t J, int32_t K);
void pb_fragility__tally_clear(struct pb_fragility__tally *t);
void pb_fragility__tally_free(struct pb_fragility__tally *t);

static inline void pb_fragility__add(struct pb_fragility__tally *t, int32_t b, int32_t g, int correct, double s)
{
  t->n[(size_t)b * t->K + g]++;
  t->k[(size_t)b * t->K + g] += correct != 0;
  t->nb[b]++;
  t->ssum[b] += s;
  t->total++;
}

/** The partition of @p in fitted on part @p fit (A or B) with @p J bins and @p K groups: in->fitted[fit]
 *  when the caller supplied it with that shape, else fitted into @p own (zeroed otherwise); release @p own
 *  with pb_fragility_partition_free either way. */
const struct pb_fragility_partition *pb_fragility__partition(const struct pb_fragility_input *in,
                                                             enum pb_fragility_part fit, int32_t J, int32_t K,
                                                             struct pb_fragility_partition *own);

/** The law of bin b's group rates (groups with images, masses n_g / n_b); eta[g] NaN for an empty group.
 *  @return 1 when the bin has images and the law was set, else 0. */
int pb_fragility__bin_law(const struct pb_fragility__tally *t, int32_t b, struct pb_fragility_law *law, double *eta,
                          double *q);
/** r of a group of rate @p eta under the law's optimiser @p r (per atom); 1 for a group without rate data. */
double pb_fragility__group_weight(const struct pb_fragility_law *law, const double *r, double eta);
/** The plug-in summaries of the rate part @p R into the arm record @p rec (PB_FRAGILITY_ARM_LEN doubles). */
void pb_fragility__summaries(const struct pb_fragility__tally *R, const struct pb_fragility_options *o,
                             struct pb_fragility_law *law, double *rec);

#endif /* PAIRBOUND_FRAGILITY_KERNEL_INTERNAL_H */
