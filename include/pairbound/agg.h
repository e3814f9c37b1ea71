/* Report aggregates that do not depend on how cells are split over ranks
 * and threads, so that no rank needs another rank's per-cell records:
 * exact keyed sums and means, maxima and minima with the first cell that
 * attains them, exact order statistics of values spread over the ranks, and
 * one record fetched from the rank that owns it (docs/architecture.md,
 * "Writing outputs"). */
#ifndef PAIRBOUND_AGG_H
#define PAIRBOUND_AGG_H

#include <stdint.h>
#include <mpi.h>

/* ---- exact keyed sums.  A slot holds the sum of the values added to it as
 * a fixed-point number of PB_AGG_LIMBS 32-bit digits, each in an int64 limb,
 * digit j of weight 2^(32 j + PB_AGG_LSB_EXP): 2^-256 up to 2^160, wider than
 * any value a report sums.  Adding a double splits its 53-bit significand
 * over three digits without carries, so sums are exact and the same for
 * any order and grouping of the terms.  Bits of a term below 2^-256 are
 * dropped (its magnitude truncated: the same for every partition); a term of
 * magnitude 2^128 or more counts as an infinity of its sign. */
#define PB_AGG_LIMBS 13
#define PB_AGG_LSB_EXP (-256)
/* int64 per slot: the limbs, the count of values added, of +inf and of -inf */
#define PB_AGG_WIDTH (PB_AGG_LIMBS + 3)

struct pb_agg {
  int64_t n;   /* slots */
  int64_t *v;  /* [n][PB_AGG_WIDTH] */
};

/** @p n zeroed slots; free with pb_agg_free. */
void pb_agg_init(struct pb_agg *a, int64_t n);
void pb_agg_free(struct pb_agg *a);
/** Add @p x to slot @p i; NaN is skipped (neither summed nor counted), as pb_num_nanmean_add. */
void pb_agg_add(struct pb_agg *a, int64_t i, double x);
/** Add the integer @p k to slot @p i exactly (any int64) and count it. */
void pb_agg_add_int(struct pb_agg *a, int64_t i, int64_t k);
/** Slot @p j of @p dst += slot @p i of @p src, exactly (totals over groups; @p dst may be @p src). */
void pb_agg_fold(struct pb_agg *dst, int64_t j, const struct pb_agg *src, int64_t i);
/** Every slot of @p dst += the same slot of @p src (threads into their rank; same n). */
void pb_agg_merge(struct pb_agg *dst, const struct pb_agg *src);
/**
 * Sum every slot over the ranks of @p comm (collective; MPI_SUM on the limbs,
 * exact for any number of ranks): onto rank @p root, or onto every rank when
 * @p root < 0.  Other ranks' slots are left unspecified.
 */
int pb_agg_reduce(struct pb_agg *a, MPI_Comm comm, int root);
/** Values counted in slot @p i (infinities included, NaN not). */
int64_t pb_agg_count(const struct pb_agg *a, int64_t i);
/** The exact sum rounded once to the nearest double (ties to even); 0 when empty, NaN for +inf and -inf. */
double pb_agg_sum(const struct pb_agg *a, int64_t i);
/** The exact sum over the count, rounded once; NaN when nothing was counted (as pb_num_nanmean_get). */
double pb_agg_mean(const struct pb_agg *a, int64_t i);
/** The exact mean of slots first, first + stride, ... (@p n of them) together, rounded once (a total over groups). */
double pb_agg_mean_of(const struct pb_agg *a, int64_t first, int64_t stride, int64_t n);

/* ---- maxima and minima with their location.  Feed the candidates of a rank
 * in global cell order: a value replaces the current one only when strictly
 * larger (smaller), so the first cell wins ties, and NaN never wins; the
 * reduction keeps that rule across ranks (equal values: the lower cell). */
struct pb_loc {
  double v;      /* the start value until a candidate beats it */
  int64_t cell;  /* -1: none did */
  int64_t tag;   /* carried with the winner (a class label, ...) */
};

/** @p n locations starting at value @p start with no cell. */
void pb_agg_loc_init(struct pb_loc *l, int n, double start);
void pb_agg_loc_max(struct pb_loc *l, double v, int64_t cell, int64_t tag);
void pb_agg_loc_min(struct pb_loc *l, double v, int64_t cell, int64_t tag);
/**
 * The winners over the ranks of @p comm (collective; @p is_max as fed), on
 * rank @p root or on every rank when @p root < 0.
 */
int pb_agg_loc_reduce(struct pb_loc *l, int n, int is_max, MPI_Comm comm, int root);

/* ---- exact order statistics over the ranks: a radix select on the
 * order-preserving 64-bit key of each double (8 rounds of 256-bin histograms
 * summed over the ranks), so the values are those a sort of every rank's
 * values gives, without moving them.  NaN is left out; -0.0 orders before
 * +0.0. */

/** Values that are not NaN, over every rank of @p comm (collective). */
int64_t pb_agg_select_count(const double *v, int64_t n_local, MPI_Comm comm);
/**
 * out[j] = the k[j]-th smallest (0-based, 0 <= k[j] < pb_agg_select_count) of
 * the non-NaN values v[0..n_local) of every rank (collective; every rank gets
 * them).
 */
void pb_agg_select_kth(const double *v, int64_t n_local, const int64_t *k, int nk, MPI_Comm comm, double *out);
/**
 * Quantile @p q of the non-NaN values of every rank, interpolated as
 * pb_resample_percentile_sorted (GSL's quantile_from_sorted_data) on them sorted;
 * NaN when there is none (collective).
 */
double pb_agg_select_quantile(const double *v, int64_t n_local, double q, MPI_Comm comm);

/* ---- one record from its owner */

/**
 * Fields @p fields[0..n_fields) (all rec_len fields when @p fields is NULL)
 * of global item @p item, from the rank that holds it: each rank holds items
 * [first, first + n_local) of rec_len doubles each in @p recs (contiguous
 * ranges).  Arrives in @p out on rank @p root, or on every rank when
 * @p root < 0 (collective).  PB_FAIL, @p out NaN, when no rank holds it.
 */
int pb_agg_fetch(MPI_Comm comm, int64_t first, int64_t n_local, int64_t item, const double *recs, int32_t rec_len,
                 const int32_t *fields, int32_t n_fields, double *out, int root);

#endif /* PAIRBOUND_AGG_H */
