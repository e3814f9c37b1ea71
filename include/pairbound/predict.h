/* Model-level prediction (seed 000 Section 6, Appendices H-I): per-model
 * synthetic summaries predicting real model-level targets by nested
 * leave-one-group-out ridge regression.  See docs/predict.md. */
#ifndef PAIRBOUND_PREDICT_H
#define PAIRBOUND_PREDICT_H

#include <stdint.h>

#include "pairbound/bounds.h"
#include "pairbound/options.h"

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

/* How the ridge normal equations are solved: the production path (one
 * penalty: Cholesky of Z'Z + lambda I; a grid: the ridge path from one
 * tridiagonal reduction of Z'Z, within 1e-9 pp of a Cholesky solve per
 * penalty) or the independent check path of I.4 (SVD of Z). */
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
 * training groups is chosen, ties (MAEs within 1e-9 pp) going to the
 * larger penalty, and the outer group is predicted from a fit on all
 * training groups.
 *
 * One nested run fitted directly, fold by fold: the reference that
 * pb_predict_nested_all (the stage's shared-fit path) is tested against.
 *
 * @param pred     [n]: out-of-fold prediction (percentage points), NaN for rows of @p deleted
 * @param lam_idx  [n]: index of the chosen penalty, -1 for rows of @p deleted
 * @return PB_OK, or PB_FAIL when fewer than three groups remain or a fit fails.
 */
int pb_predict_nested(const struct pb_predict_problem *pr, int32_t deleted, enum pb_predict_solver solver,
                      double *pred, int32_t *lam_idx);

/**
 * pb_predict_nested without deletion and, when @p deletions is non-zero, for
 * every group g deleted, sharing the fits they have in common (a fit is
 * determined by its excluded groups: the G(G-1)/2 pair fits and, for the
 * deletions, G(G-1)(G-2)/6 triple fits over the grid serve every inner fold;
 * the outer fits, at the chosen penalty only, are made per run).
 * Bit for bit identical to pb_predict_nested(pr, -1) and
 * pb_predict_nested(pr, g) for every g.
 *
 * @param pred     [1 + G][n] (deletions) or [n]: block 0 without deletion, block 1 + g with group g
 *                 deleted (a group without rows gives the block-0 result)
 * @param lam_idx  same shape: chosen penalty index, -1 where not predicted
 * @return PB_OK, or PB_FAIL with fewer than 3 groups (4 with deletions) or a failed fit.
 */
int pb_predict_nested_all(const struct pb_predict_problem *pr, int deletions, enum pb_predict_solver solver,
                          double *pred, int32_t *lam_idx);

/* ---- per-cell summaries and targets (H.1-H.3, Table 42) */

/* Columns of the per-cell synthetic summary (pb_predict_cell_summary).  The
 * eight paired summaries and their class-conditional independent
 * counterparts (Eq. 14) are consecutive blocks in the same order. */
enum pb_predict_cell_col {
  PB_PC_ACC0,      /* clean accuracy */
  PB_PC_A1,        /* perturbed accuracy a1 */
  PB_PC_S0,        /* mean S, clean */
  PB_PC_S1,        /* mean S', perturbed */
  PB_PC_M0,        /* mean M among correct clean records */
  PB_PC_M1,        /* mean M' among correct perturbed records */
  PB_PC_LOGLOSS,   /* -mean log(max(M', 1e-6)) */
  PB_PC_R80,       /* error rate among the top-80% perturbed scores (pb_predict_cell_counts) */
  PB_PC_E,         /* accepted-error mass P(C' = 0, Z' = 1) */
  PB_PC_CR,        /* correct-and-rejected mass P(C' = 1, Z' = 0) */
  PB_PC_F,         /* paired: label-change rate */
  PB_PC_A,         /* E|S - S'| */
  PB_PC_Q,         /* corr(S, S') */
  PB_PC_K,         /* retained-correct share k */
  PB_PC_DMK,       /* E[M - M' | k] */
  PB_PC_DSS,       /* E[S - S' | s] */
  PB_PC_DSW,       /* E[S - S' | w] */
  PB_PC_L,         /* P(k, Z = 1, Z' = 0) */
  PB_PC_IND,       /* first independent counterpart: PB_PC_IND + (q - PB_PC_F) */
  PB_PC_N = PB_PC_IND + 8
};
#define PB_PREDICT_N_PAIRED 8
/* Clipping floor of the perturbed log loss (H.3). */
#define PB_PREDICT_LOGLOSS_FLOOR 1e-6
/* Share of perturbed records selected for R80. */
#define PB_PREDICT_R80_COVERAGE 0.8

/* Integer counts of one real cell from which the targets are pooled. */
struct pb_predict_counts {
  int64_t n;            /* evaluation images */
  int64_t correct;      /* perturbed correct (a1) */
  int64_t selected;     /* perturbed records with S' at or above the top-80% cutoff (ties included) */
  int64_t selected_wrong;
  int64_t accepted_wrong; /* C' = 0, Z' = 1 (E_tau) */
  int64_t lost;         /* retained correct, Z = 1, Z' = 0 (L_k), observed correspondence */
  int64_t correct_rejected; /* C' = 1, Z' = 0 */
};

/** Target counts of one cell (threshold in->tau; R80 cutoff from the perturbed scores). */
int pb_predict_cell_counts(const struct pb_cell_view *in, struct pb_predict_counts *out);

/**
 * Every synthetic summary of one cell, out[PB_PC_N]: the marginal ones, the
 * paired summaries under the observed correspondence (from pb_bounds_cell
 * where it computes them) and their class-conditional independent
 * counterparts, each clean record combined with every perturbed record of its
 * class with weight 1/n_y; conditional means are the ratio of the combined
 * numerator and denominator (Eq. 14).  NaN marks an undefined mean (no
 * support).  @return PB_OK or PB_FAIL on invalid input.
 */
int pb_predict_cell_summary(const struct pb_cell_view *in, double *out);

/**
 * The eight paired summaries (F, A, Q, k, dM_k, ds_s, ds_w, L, in
 * pb_predict_cell_col order) when clean record i is paired with perturbed
 * record perm[i] (perm = NULL: the observed pairing).  O(n); used for the
 * within-class shuffle control.
 */
void pb_predict_cell_paired(const struct pb_cell_view *in, const int32_t *perm, double *out);

/**
 * The shuffle control: for r = 0 .. n_rep - 1, the eight paired summaries
 * (out[r][8]) under the within-class permutation of the resampling engine's
 * stream (seed, analysis, item, r) (pb_resample_perm_within_grouped).  Identical to
 * pb_predict_cell_paired with pb_resample_perm_within_class permutations, with the
 * class grouping and everything independent of the pairing computed once.
 */
void pb_predict_cell_shuffles(const struct pb_cell_view *in, uint64_t seed, uint32_t analysis, uint64_t item,
                              int32_t n_rep, double *out);

/* ---- the predict stage (`pairbound predict STORE -o OUTDIR`) */

#define PB_PREDICT_MAX_SOURCES 4

struct pb_protocol_options;

struct pb_predict_options {
  int32_t n_features, n_targets;
  char features[PB_PREDICT_MAX_SOURCES][64];  /* feature sources (n_features 0: by role, the synthetic ones) */
  char targets[PB_PREDICT_MAX_SOURCES][64];   /* target sources (n_targets 0: by role, the real ones) */
  int64_t group_draws;        /* group-reweighting draws of stored out-of-fold errors (default 2000) */
  int32_t shuffles;           /* within-class shuffle replicates (default 20; 0 = no shuffle control) */
  int deletion;               /* run the whole-group deletion refits (default 1) */
  uint64_t seed;              /* RNG seed of the shuffles and the intervals (default 20260913) */
};

/** Options of `pairbound predict` and [predict] (include/pairbound/options.h). */
extern const struct pb_option pb_predict_option_table[];


#endif /* PAIRBOUND_PREDICT_H */
