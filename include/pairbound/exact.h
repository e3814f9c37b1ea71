/* Scoring probability forecasts against exact class probabilities (seed 002
 * Sections 3.1 and 5, Appendix A.2, C.2-C.5): expected and realised accuracy
 * against Bayes accuracy, KL(p*||q), population and empirical multicalibration
 * over groups x equal-width bins, higher-order (Bayes mixture) and k-snapshot
 * calibration errors, nearest-neighbour Bayes-error estimators and an L2
 * logistic-regression reference predictor.  Pure computation: no MPI, no I/O.
 * The `exact score` stage (src/exact/exact_stage.c) draws the inputs from a world
 * (include/pairbound/world.h).  See docs/exact.md, "Scoring". */
#ifndef PAIRBOUND_EXACT_H
#define PAIRBOUND_EXACT_H

#include <stdint.h>

#include "pairbound/options.h"

/* A.2: only q is clipped, to [PB_EXACT_CLIP, 1 - PB_EXACT_CLIP]. */
#define PB_EXACT_CLIP 0.001
/* Eq. 3 / C.5: equal-width probability bins. */
#define PB_EXACT_BINS 10
/* C.5: snapshot sizes k. */
#define PB_EXACT_NK 7
extern const int pb_exact_snapshot_k[PB_EXACT_NK];

/* ---- Eq. 1, Eq. 2: per-input terms. */
double pb_exact_clip(double q);
/** KL(p* || q) of one input in nats, q clipped (Eq. 2, A.2); 0 log 0 = 0. */
double pb_exact_kl_term(double pstar, double q);
/** Expected log loss of q (clipped) under labels drawn with probability p*, in nats. */
double pb_exact_logloss(double pstar, double q);
/** Hard decision of a probability forecast: class 1 when q >= 1/2 (ties to class 1, as f*). */
int pb_exact_decide(double q);
/** Equal-width bin of q in [0, 1] among @p nbins (q = 1 in the last bin). */
int pb_exact_bin(double q, int nbins);

/* Means over n inputs (sums in input order); q may be NaN for an unknown forecast. */
struct pb_exact_accuracy {
  int64_t n;
  double expected;   /* A_exp = mean P(Y = f(x) | x), Eq. 1; an unknown forecast contributes 0 */
  double bayes;      /* A* on the same inputs = mean max(p*, 1 - p*) */
  double realised;   /* fraction of sampled labels predicted correctly (unknown: incorrect) */
  double kl;         /* mean KL(p* || q) over the valid forecasts, Eq. 2 */
  double logloss_q;  /* mean expected log loss of q (valid forecasts) */
  double logloss_p;  /* mean expected log loss of p* on the same inputs (entropy in nats) */
  int64_t unknown;   /* forecasts given as NaN (no valid reply) */
  int64_t clipped;   /* forecasts outside [PB_EXACT_CLIP, 1 - PB_EXACT_CLIP] (A.2 reports these) */
};
/** @p y may be NULL (realised = NaN). */
void pb_exact_score(int64_t n, const double *pstar, const double *q, const int *y, struct pb_exact_accuracy *out);

/* ---- Eq. 3: group x bin moments E[1_G 1_B (target - q)].
 * sum[g * nbins + j] accumulates (target - q) over inputs in group g and bin
 * j; count the inputs there; n all inputs seen. */
struct pb_exact_moments {
  int ngroups, nbins;
  int64_t n;
  int64_t *count;
  double *sum;
};
void pb_exact_moments_init(struct pb_exact_moments *m, int ngroups, int nbins);
void pb_exact_moments_free(struct pb_exact_moments *m);
void pb_exact_moments_clear(struct pb_exact_moments *m);
/** Add one input: @p member[g] != 0 for each group containing it. */
void pb_exact_moments_add(struct pb_exact_moments *m, const unsigned char *member, double q, double target);
/** into += from (cell by cell; callers merge in a fixed order). */
void pb_exact_moments_merge(struct pb_exact_moments *into, const struct pb_exact_moments *from);
/** MC = max over cells |sum| / n (Eq. 3); the maximising cell into *g, *j (may be NULL). */
double pb_exact_mc(const struct pb_exact_moments *m, int *g, int *j);
/** Population binned ECE of group @p g: sum over bins |sum| / n (Eq. 3 with the max over bins replaced by a sum). */
double pb_exact_ece(const struct pb_exact_moments *m, int g);
/**
 * Half-width of a simultaneous (1 - alpha) Hoeffding band for all
 * @p ncells moments, each a mean of @p n independent terms 1_G 1_B (p* - q)
 * lying in an interval of width 1 + 1/nbins (C.4).
 */
double pb_exact_hoeffding(int64_t n, int ncells, int nbins, double alpha);

/* ---- Eq. 4-9: distributions on [0, 1] as sorted support with weights. */
struct pb_exact_law {
  int n;
  double *x;   /* ascending */
  double *w;   /* nonnegative, summing to 1 */
};
void pb_exact_law_free(struct pb_exact_law *l);
/** W1 with cost |p - p'|: the integral of |F - G| over [0, 1]. */
double pb_exact_w1(const struct pb_exact_law *a, const struct pb_exact_law *b);
/**
 * Empirical law of @p n values (sorted, repeats merged, equal weights) - the
 * Bayes mixture pi*_C of Eq. 4 on a reference sample.
 */
void pb_exact_law_empirical(int64_t n, const double *v, struct pb_exact_law *out);
/**
 * Mixture of Binomial(k, v_i) / k laws with weights @p c_i (normalised), on
 * support {0, 1/k, ..., 1}: proj_k of an empirical law (Eq. 4-5), or
 * nu_before of Eq. 9 when v are forecasts q.
 */
void pb_exact_law_snapshot(int k, int n, const double *v, const double *c, struct pb_exact_law *out);
/** Law of observed fractions s_i / k (counts of positives among k labels), equal weights (nu-hat of C.5). */
void pb_exact_law_fractions(int k, int64_t n, const int *s, struct pb_exact_law *out);

/* ---- C.3: nearest-neighbour Bayes-error estimators on encoded features. */
/* The constant of Devroye's binary kNN bound R_k <= R* (1 + c) (docs/exact.md):
 * c = 1/sqrt(k), FeeBee's implementation, which seed 002 follows (default), or
 * c = sqrt(2/k), a smaller, more cautious lower bound. */
enum pb_exact_knn_bound { PB_EXACT_KNN_FEEBEE = 0, PB_EXACT_KNN_SQRT2 = 1 };
struct pb_exact_nn {
  double err_1nn, err_knn;     /* held-out error of 1NN and kNN (second half classified from the first) */
  double ch_lower, ch_upper;   /* Cover-Hart: (1 - sqrt(1 - 2 R1)) / 2 and R1 */
  double dv_lower, dv_upper;   /* Devroye: pb_exact_devroye_lower(R_k) and R_k */
};
/** Lower bound on R* from a kNN error @p rk: rk / (1 + c) with c of @p form (k >= 3), Cover-Hart's for k = 1. */
double pb_exact_devroye_lower(double rk, int k, enum pb_exact_knn_bound form);
/**
 * 1NN and kNN (k odd) estimators: rows [0, n/2) classify rows [n/2, n) under
 * Euclidean distance; distance ties go to the lower row index.
 * @param x row-major [n][d] encoded features
 * @param form the kNN lower bound's constant
 */
int pb_exact_nn_estimate(int64_t n, int d, const double *x, const int *y, int k, enum pb_exact_knn_bound form,
                         struct pb_exact_nn *out);

/* ---- A.1: L2-regularised logistic regression, Newton / IRLS. */
/**
 * Fit beta[0] (intercept, unpenalised) and beta[1..d] minimising
 * sum_i logloss(y_i, sigmoid(beta0 + x_i . beta)) + lambda / 2 |beta_{1..d}|^2.
 * @return PB_OK, or PB_FAIL when Newton does not converge.
 */
int pb_exact_logistic_fit(int64_t n, int d, const double *x, const int *y, double lambda, double *beta);
double pb_exact_logistic_predict(int d, const double *beta, const double *x);

/* ---- `pairbound exact score|worlds` (src/exact/exact_stage.c, src/exact/exact_stage_worlds.c) */
#define PB_EXACT_MAX_SIZES 8
struct pb_exact_options {
  int64_t reference, calibration;             /* population reference and calibration inputs */
  int32_t resamples;                          /* empirical-MC calibration resamples */
  double lambda;                              /* logistic L2 penalty */
  int32_t n_sizes;
  int64_t sizes[PB_EXACT_MAX_SIZES];          /* empirical-MC and kNN sample sizes */
  /* worlds: every world x level, cases [first, first + n_cases) of (seed, stream 0), each predictor */
  char *worlds, *levels, *predictors;         /* comma-separated lists (owned) */
  uint64_t seed, first;
  int64_t n_cases;
  int knn_bound;                              /* enum pb_exact_knn_bound (--knn-bound feebee|sqrt2) */
};
/* The options of `pairbound exact` and of a run configuration's [exact]
 * section (include/pairbound/options.h). */
extern const struct pb_option pb_exact_option_table[];
/* Defaults (the table's): the seed's sizes, 1,000,000 reference inputs, 2,000 calibration inputs, 10
 * resamples, lambda 1; worlds covert,credit,review at low,medium,high, predictors pstar,prior,logistic:n=1000,
 * seed 2032, cases 1000..1499 (A.5).  The stage is pb_exact_stage (pairbound/registry.h). */

#define PB_EXACT_HELP \
  "Score positive-class probability forecasts against exact class probabilities (seed 002; docs/exact.md,\n" \
  "\"Scoring\"): expected and realised accuracy against Bayes accuracy, KL(p*||q) with q clipped to\n" \
  "[0.001, 0.999], ECE and multicalibration error over groups x 10 bins on a sampled population reference\n" \
  "with a simultaneous Hoeffding band and the empirical estimator over calibration resamples, higher-order\n" \
  "and k-snapshot calibration errors, and the 1NN / kNN Bayes-error estimators over sample sizes.\n\n" \
  "  score CASES PRED     CASES: a cases file from `pairbound world sample` (its header names world, level,\n" \
  "                       seed); PRED: a file with one probability per case (lines in case order, `unknown`\n" \
  "                       or `nan` for a forecast not given; '#' lines and a header line `q` are skipped),\n" \
  "                       or a built-in predictor: pstar (exact p*), prior (the class prior), logistic:n=N\n" \
  "                       (L2 logistic regression on rows 0..N-1 of the cases' stream, which must not\n" \
  "                       overlap the cases)\n" \
  "  worlds               score built-in predictors in every world x level on cases drawn directly\n" \
  "                       (rows FIRST.. of stream 0 of SEED, as `world sample`); KL by world and level\n" \
  "Writes OUTDIR/results.h5 (/exact), report/exact*.tsv and report/exact.md.\n"

#endif /* PAIRBOUND_EXACT_H */
