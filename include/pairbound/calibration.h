/* Platt scaling and the acceptance protocols of seed 000 Appendix F.1
 * (Table 40): the quantile protocol, the 5% risk rule and absolute
 * thresholds, on raw and Platt-scaled maximum probabilities.  docs/bounds.md. */
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

#endif /* PAIRBOUND_CALIBRATION_H */
