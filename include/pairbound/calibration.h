/* Platt scaling, isotonic regression and the acceptance protocols of seed
 * 000 Appendix F.1 (Table 40): the quantile protocol, the 5% risk rule and
 * absolute thresholds, on raw and calibrated maximum probabilities; and
 * Appendix F's probability-gap groups.  docs/bounds.md. */
#ifndef PAIRBOUND_CALIBRATION_H
#define PAIRBOUND_CALIBRATION_H

#include <stdint.h>

#include "pairbound/cell.h"

#define PB_PLATT_CLIP 1e-6 /* S is clipped to [1e-6, 1 - 1e-6] before its logit */

/* Protocols of Table 40 (and the 5% risk rule of Section F): thresholds per model and source. */
enum pb_f1_protocol { PB_F1_Q80, PB_F1_R5, PB_F1_A90, PB_F1_A70, PB_F1_A50, PB_F1_N_PROTOCOLS };
#define PB_F1_RISK 0.05 /* the risk rule's largest admissible error among the top-ranked */

/* Per-cell counts under one protocol and score (raw or Platt), both sides
 * thresholded with the same threshold. */
enum pb_f1_count { PB_F1_H, PB_F1_L, PB_F1_ACC, PB_F1_ACC_ERR, PB_F1_N_COUNTS };

/**
 * Platt scaling: maximum-likelihood (a, b) of P(correct) = 1 / (1 + exp(-(a x + b)))
 * with x = logit(S), and Platt's smoothed targets (N+ + 1)/(N+ + 2) for
 * correct and 1/(N- + 2) for wrong records, which keep the optimum finite
 * when the records are separable.  Newton's method with the 2 x 2 system
 * solved by GSL's Cholesky decomposition and step halving on the
 * log-likelihood.  Returns 0, or -1 (ab = NaN) when n == 0.
 */
int pb_bounds_platt_fit(const float *s, const uint8_t *correct, int32_t n, double ab[2]);

/** The Platt-scaled score of S. */
double pb_bounds_platt_apply(const double ab[2], float s);

/** Multiclass Brier score of one record (Appendix F.1): sum over classes of (p_c - [c = y])^2
 *  = 1 - 2 @p ptrue + @p collision (collision = sum p_c^2 over all classes). */
double pb_bounds_brier_multiclass(float ptrue, float collision);

/**
 * Means of pb_bounds_brier_multiclass over a cell's clean (m0, q0) and
 * perturbed (m1, q1) evaluation records, summed in image order (so the same
 * at any number of ranks and threads): out[0] clean, out[1] perturbed.  The
 * view must carry m0, q0, m1 and q1.
 */
void pb_bounds_brier_multiclass_cell(const struct pb_cell_view *in, double out[2]);

/**
 * Thresholds of every protocol from development scores v[0..n) with
 * correctness c: Q80 the lowest of the top round(0.8 n) scores; R5 the
 * lowest score of the largest top-ranked prefix with error <= 5%, errors
 * counted first among tied scores (+inf when none); Ap the constant p.
 * Q80 and R5 are NaN when n == 0.
 */
void pb_bounds_f1_thresholds(const double *v, const uint8_t *c, int32_t n, double thr[PB_F1_N_PROTOCOLS]);

/**
 * One cell's counts under thresholds thr[PB_F1_N_PROTOCOLS] applied to the
 * scores x0 (clean) and x1 (perturbed) of its records: out[p][count].
 */
void pb_bounds_f1_cell(const struct pb_cell_view *in, const double *x0, const double *x1, const double *thr,
                       int64_t out[PB_F1_N_PROTOCOLS][PB_F1_N_COUNTS]);

/* Isotonic regression of correctness on S (Zadrozny and Elkan 2002): a
 * non-decreasing step function, block j covering the scores from x[j] up to
 * (not including) x[j + 1]. */
struct pb_iso {
  int32_t n;  /* blocks, the steps of the function (0: no fit) */
  double *x;  /* [n] the lowest development score of each block, ascending */
  double *v;  /* [n] the block's share of correct records, strictly increasing */
};

/**
 * Pool-adjacent-violators fit on n records: records with equal scores are
 * pooled first (the fit is a function of S), then adjacent blocks are merged
 * while the left one's share of correct records is at least the right one's
 * (compared exactly as integer cross products; merging equal shares leaves
 * the fitted values unchanged and makes each block one step).  Returns 0, or
 * -1 (fit->n = 0) when n == 0.  Free with pb_bounds_iso_free.
 */
int pb_bounds_iso_fit(const float *s, const uint8_t *correct, int32_t n, struct pb_iso *fit);

/** The fitted value at S: that of the last block whose lowest score is <= S (the first block's below it). */
double pb_bounds_iso_apply(const struct pb_iso *fit, float s);

void pb_bounds_iso_free(struct pb_iso *fit);

/* Appendix F's probability-gap analysis: gap = top-1 minus top-2
 * probability of a clean record; per model three groups cut at the 1/3 and
 * 2/3 quantiles of the gaps of its misclassified clean development records. */
#define PB_GAP_MIN_ERRORS 6 /* fewer such errors exclude the model */
enum pb_gap_group { PB_GAP_LOW, PB_GAP_MID, PB_GAP_HIGH, PB_GAP_N_GROUPS };
/* Per group: clean-wrong evaluation records (events), those whose perturbed
 * prediction is the same wrong answer, and those that turn correct. */
enum pb_gap_count { PB_GAP_EVENTS, PB_GAP_SAME, PB_GAP_CORRECT, PB_GAP_N_COUNTS };

/**
 * The cutpoints of one model from the gaps @p gap[0..n) of its misclassified
 * clean development records (sorted in place): the 1/3 and 2/3 quantiles,
 * linear interpolation between order statistics (R's type 7, numpy's default)
 * at positions j (n - 1) / 3 taken exactly, so a cut on an order statistic is
 * that value.
 * Returns 0, or -1 (cut NaN) when n < PB_GAP_MIN_ERRORS.
 */
int pb_bounds_gap_cuts(double *gap, int32_t n, double cut[2]);

/** The group of @p gap: values equal to a cutpoint go to the higher group. */
int pb_bounds_gap_group(double gap, const double cut[2]);

/**
 * One cell's counts by group: @p group[i] is the group of evaluation image
 * i's clean gap (of the cell's model); each image with a wrong clean
 * prediction is an event of its group.
 */
void pb_bounds_gap_cell(const struct pb_cell_view *in, const int8_t *group,
                        int64_t out[PB_GAP_N_GROUPS][PB_GAP_N_COUNTS]);

#endif /* PAIRBOUND_CALIBRATION_H */
