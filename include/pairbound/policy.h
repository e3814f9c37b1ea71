/* Rejection-policy comparisons under a shared correspondence (seed 000
 * Section 4.2, Appendix A.7-A.8, Appendix D).  See docs/policy.md. */
#ifndef PAIRBOUND_POLICY_H
#define PAIRBOUND_POLICY_H

#include <stdint.h>

#include "pairbound/cell.h"

#define PB_POLICY_MAX 8            /* perturbed-side policies per cell */
#define PB_POLICY_MAX_LAMBDA 32    /* cost weights per call */
#define PB_POLICY_STRICT 1e-12     /* Appendix D: D+ < -1e-12 is strict; values within 1e-12 tie */

enum pb_policy_level { PB_LEVEL_I0, PB_LEVEL_IK, PB_LEVEL_I5, PB_POLICY_N_LEVELS };
extern const char *const pb_policy_level_names[PB_POLICY_N_LEVELS];   /* "I0", "Ik", "I5" */

/* The policies compared in a cell: clean threshold tau (the cell view's),
 * perturbed policy j accepts S' >= tau[j]; costs weighted by each lambda. */
struct pb_policy_setup {
  int32_t n_pol;                         /* 1..PB_POLICY_MAX */
  const float *tau;                      /* [n_pol] perturbed thresholds: Z'_j = [S' >= tau_j] */
  int32_t n_lambda;                      /* 1..PB_POLICY_MAX_LAMBDA */
  const double *lambda;                  /* [n_lambda] weights in [0, 1] */
};

/* Everything pb_policy_cell() derives.  Rates are counts / N.  Index order:
 * [level][lambda][j] and [level][lambda][j][l] with j, l 0-based policies. */
struct pb_policy_result {
  int64_t N;
  int32_t n_pol, n_lambda;
  double E[PB_POLICY_MAX];          /* P(C' = 0, Z'_j = 1): accepted errors (marginal) */
  double Rj[PB_POLICY_MAX];         /* P(C' = 1, Z'_j = 0): rejected correct (marginal) */
  double H_obs[PB_POLICY_MAX], L_obs[PB_POLICY_MAX];    /* observed correspondence */
  uint8_t mixed[PB_POLICY_MAX][PB_POLICY_MAX];   /* switching records include correct and wrong */
  uint8_t same[PB_POLICY_MAX][PB_POLICY_MAX];    /* identical evaluation acceptance vectors */
  double H[PB_POLICY_N_LEVELS][PB_POLICY_MAX][2], L[PB_POLICY_N_LEVELS][PB_POLICY_MAX][2];
  double H_mean[PB_POLICY_N_LEVELS][PB_POLICY_MAX];   /* uniform feasible-permutation means */
  double L_mean[PB_POLICY_N_LEVELS][PB_POLICY_MAX];
  double J[PB_POLICY_N_LEVELS][PB_POLICY_MAX_LAMBDA][PB_POLICY_MAX][2];   /* sharp, separate endpoints */
  double J_lemma1[PB_POLICY_N_LEVELS][PB_POLICY_MAX_LAMBDA][PB_POLICY_MAX]; /* Eq. 8 */
  double D[PB_POLICY_N_LEVELS][PB_POLICY_MAX_LAMBDA][PB_POLICY_MAX][PB_POLICY_MAX];  /* D+_jl, Eq. 11 */
  /* natural cost J'_j = lambda E_j + (1 - lambda) L_j (Corollary 1) */
  double Jn[PB_POLICY_N_LEVELS][PB_POLICY_MAX_LAMBDA][PB_POLICY_MAX][2];
  double Dn[PB_POLICY_N_LEVELS][PB_POLICY_MAX_LAMBDA][PB_POLICY_MAX][PB_POLICY_MAX];
  int64_t n_mean_unrepresentable;   /* I5 classes whose exact count overflowed 128 bits (H_mean I5 = NaN) */
};

/**
 * Policy bounds of one cell at I0, Ik and I5 (seed 000 Eq. 2, 8, 10, 11):
 * sharp H_j, L_j, J_j intervals, the Lemma 1 upper bound, D+_jl for every
 * ordered pair, feasible-permutation means of H_j and L_j, observed values,
 * and the natural-cost intervals and differences.  Exact integer
 * optimisation per class (docs/policy.md); deterministic (classes in
 * ascending label order, integer totals until one final division).
 * Thread-safe.
 *
 * @param in   the cell (n > 0, labels and predictions >= 0, label, pred0, pred1, s0, s1
 *             present; in->tau is the clean threshold Z = [S >= tau], not NaN)
 * @param ps   the policies (1 <= n_pol <= PB_POLICY_MAX, 1 <= n_lambda <=
 *             PB_POLICY_MAX_LAMBDA, lambdas in [0, 1], thresholds not NaN)
 * @param out  filled on success: every field, except that the per-weight arrays
 *             (J, J_lemma1, D, Jn, Dn) are written for the first n_lambda weights only
 * @return 0 on success, -1 on invalid input or allocation failure
 *         (pb_error_set names the cell, the class where one is at fault, and the cause)
 */
int pb_policy_cell(const struct pb_cell_view *in, const struct pb_policy_setup *ps, struct pb_policy_result *out);

/**
 * Index minimising @p v over @p n policies with Appendix D's tie rule: values
 * within PB_POLICY_STRICT of the minimum tie; ties prefer nominal coverage
 * @p q closest to 0.8, then lower coverage, then lower index.  NaN values
 * never win; q may be NULL (ties then go to the lowest index).  -1 if all NaN.
 */
int pb_policy_argmin(const double *v, const double *q, int32_t n);

/* ---- the options of the `pairbound policy` stage (pb_policy_stage, pairbound/registry.h) */

#include "pairbound/options.h"

#define PB_POLICY_PRIMARY_LAMBDA 0.5

struct pb_policy_options {
  int all;                        /* full grid instead of the frozen panel */
  int have_tau;
  float tau;                      /* clean threshold for every cell (--tau) */
  int32_t n_taus;                 /* > 0: perturbed thresholds for every cell (--policy-taus) */
  float taus[PB_POLICY_MAX];
  int32_t n_lambdas;
  double lambdas[PB_POLICY_MAX_LAMBDA];   /* default 0, .1, ..., 1 */
};

/** Options of `pairbound policy` and [policy] (include/pairbound/options.h). */
extern const struct pb_option pb_policy_option_table[];

#endif /* PAIRBOUND_POLICY_H */
