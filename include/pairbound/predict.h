/* Model-level prediction (seed 000 Section 6, Appendices H-I): per-model
 * synthetic summaries predicting real model-level targets by nested
 * leave-one-group-out ridge regression.  See docs/predict.md. */
#ifndef PAIRBOUND_PREDICT_H
#define PAIRBOUND_PREDICT_H

#include <stdint.h>

#include "pairbound/bounds.h"

/* ---- ridge and nested leave-one-group-out (H.4) */

#define PB_PREDICT_N_LAMBDA 7
/* The ridge grid {0.1, 0.3, 1, 3, 10, 30, 100} in ascending order. */
extern const double pb_predict_lambda[PB_PREDICT_N_LAMBDA];

/* Targets in percentage points are divided by 100 and clipped to
 * [PB_PREDICT_CLIP, 1 - PB_PREDICT_CLIP] before the probit transform. */
#define PB_PREDICT_CLIP 1e-4

/** Probit transform of a percentage: Phi^{-1}(clip(pct / 100)). */
double pb_predict_probit(double pct);
/** Back-transform to percentage points: Phi(z) * 100. */
double pb_predict_unprobit(double z);
/** Median of v[0..n) (mean of the two middle values for even n; NaN for n = 0); sorts v. */
double pb_predict_median(double *v, int32_t n);

/* One regression problem: n models (rows), p features, row-major x with NaN
 * for a missing feature, finite targets y in percentage points, and each
 * row's model group in [0, n_groups). */
struct pb_predict_problem {
  int32_t n, p, n_groups;
  const double *x;        /* [n][p] */
  const double *y;        /* [n] */
  const int32_t *group;   /* [n] */
};

/* How the ridge normal equations are solved: the production path (Cholesky
 * of Z'Z + lambda I) or the independent check path of I.4 (SVD of Z). */
enum pb_predict_solver { PB_PREDICT_CHOLESKY = 0, PB_PREDICT_SVD = 1 };

/**
 * Ridge fit on the rows with train[r] != 0 and predictions for every row.
 *
 * Training-only preprocessing: each column's missing values (training and
 * held-out rows alike) are replaced by the training rows' median (zero when
 * the column has no training value), then centred by the training mean and
 * divided by the training population standard deviation (ddof 0; a column
 * constant over the training rows is centred and left unscaled).  The targets
 * are probit-transformed; ridge minimises |y - b - Z beta|^2 + lambda |beta|^2
 * with the intercept b unpenalised, in closed form.
 *
 * @param n_lambda  number of penalties; @p lambda their values (> 0)
 * @param pred      [n_lambda][n]: back-transformed predictions in percentage points
 * @return PB_OK, or PB_FAIL (pb_error_set) without training rows or on a solver failure.
 */
int pb_predict_ridge(const struct pb_predict_problem *pr, const uint8_t *train, int32_t n_lambda,
                     const double *lambda, enum pb_predict_solver solver, double *pred);

/**
 * Nested leave-one-group-out prediction over the groups that have rows,
 * leaving out @p deleted (-1: none) from training, inner validation and
 * evaluation (the whole-group deletion refit of I.2).  For each outer group,
 * the penalty of pb_predict_lambda minimising the inner MAE (original scale,
 * mean over every inner held-out model) over leave-one-group-out folds of the
 * training groups is chosen, ties going to the larger penalty, and the outer
 * group is predicted from a fit on all training groups.
 *
 * @param pred     [n]: out-of-fold prediction (percentage points), NaN for rows of @p deleted
 * @param lam_idx  [n]: index of the chosen penalty, -1 for rows of @p deleted
 * @return PB_OK, or PB_FAIL when fewer than three groups remain or a fit fails.
 */
int pb_predict_nested(const struct pb_predict_problem *pr, int32_t deleted, enum pb_predict_solver solver,
                      double *pred, int32_t *lam_idx);

#endif /* PAIRBOUND_PREDICT_H */
