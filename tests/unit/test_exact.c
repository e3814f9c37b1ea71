/* Scoring kernels (seed 002 Eq. 1-5, 7-9, A.1-A.2, C.3-C.5) against
 * hand-worked cases and closed forms. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/exact.h"

#define TOL 1e-12

/* Expected log loss of q under p, written out independently of the kernel. */
static double hand_logloss(double p, double q)
{
  return -(p * log(q) + (1 - p) * log(1 - q));
}

START_TEST(test_kl_self_zero)
{
  const double p[] = {0.001, 0.2, 0.5, 0.73, 0.999};
  for (int i = 0; i < 5; i++) ck_assert_double_eq_tol(pb_exact_kl_term(p[i], p[i]), 0.0, TOL);
  /* Clipping only q (A.2): at p* = 0 the reported 0 becomes 0.001, so the
   * divergence is log(1 / 0.999), finite, and symmetric at p* = 1. */
  ck_assert_double_eq_tol(pb_exact_kl_term(0.0, 0.0), -log(0.999), TOL);
  ck_assert_double_eq_tol(pb_exact_kl_term(1.0, 1.0), -log(0.999), TOL);
  ck_assert_double_eq_tol(pb_exact_kl_term(0.0, 0.5), log(2.0), TOL);
}
END_TEST

START_TEST(test_kl_is_excess_logloss)
{
  /* KL(p*||q) = E[log loss of q] - E[log loss of p*] (Eq. 2), averaged. */
  const double p[] = {0.3, 0.9, 0.05, 0.5};
  const double q[] = {0.6, 0.7, 0.2, 0.5};
  struct pb_exact_accuracy a;
  pb_exact_score(4, p, q, NULL, &a);
  double excess = 0.0;
  for (int i = 0; i < 4; i++) excess += (hand_logloss(p[i], q[i]) - hand_logloss(p[i], p[i])) / 4.0;
  ck_assert_double_eq_tol(a.kl, excess, TOL);
  ck_assert_double_eq_tol(a.logloss_q - a.logloss_p, excess, TOL);
  ck_assert_double_eq_tol(pb_exact_kl_term(0.3, 0.6), 0.3 * log(0.5) + 0.7 * log(0.7 / 0.4), TOL);
}
END_TEST

START_TEST(test_accuracy_hand)
{
  /* Decisions 1, 1, 0 (q >= 1/2 -> 1): expected (0.9 + 0.2 + 0.5) / 3,
   * Bayes (0.9 + 0.8 + 0.5) / 3, realised 3/3 against y = 1, 1, 0. */
  const double p[] = {0.9, 0.2, 0.5};
  const double q[] = {0.6, 0.7, 0.4};
  const int y[] = {1, 1, 0};
  struct pb_exact_accuracy a;
  pb_exact_score(3, p, q, y, &a);
  ck_assert_double_eq_tol(a.expected, 1.6 / 3, TOL);
  ck_assert_double_eq_tol(a.bayes, 2.2 / 3, TOL);
  ck_assert_double_eq_tol(a.realised, 1.0, TOL);
  ck_assert_int_eq(a.clipped, 0);
  const double qc[] = {0.0, 0.9995, 0.001};
  pb_exact_score(3, p, qc, y, &a);
  ck_assert_int_eq(a.clipped, 2);  /* 0.001 itself is inside [0.001, 0.999] */
  /* an unknown forecast: incorrect, no expected accuracy, left out of KL */
  const double qn[] = {0.6, NAN, 0.4};
  pb_exact_score(3, p, qn, y, &a);
  ck_assert_int_eq(a.unknown, 1);
  ck_assert_double_eq_tol(a.expected, (0.9 + 0.5) / 3, TOL);
  ck_assert_double_eq_tol(a.realised, 2.0 / 3.0, TOL);
  ck_assert_double_eq_tol(a.bayes, 2.2 / 3, TOL);
  ck_assert_double_eq_tol(a.kl, (pb_exact_kl_term(0.9, 0.6) + pb_exact_kl_term(0.5, 0.4)) / 2, TOL);
  ck_assert_int_eq(pb_exact_decide(0.5), 1);
  ck_assert_int_eq(pb_exact_bin(1.0, 10), 9);
  ck_assert_int_eq(pb_exact_bin(0.0999, 10), 0);
  ck_assert_int_eq(pb_exact_bin(0.1, 10), 1);
}
END_TEST

START_TEST(test_mc_hand)
{
  /* Groups: 0 = everyone, 1 = G.  Cells (hand): overall bin 1: (0.15 - 0.05) / 4,
   * overall bin 8: (-0.22 + 0.10) / 4; G bin 1: 0.15 / 4; G bin 8: -0.22 / 4. */
  const double q[] = {0.15, 0.15, 0.82, 0.85};
  const double p[] = {0.30, 0.10, 0.60, 0.95};
  const unsigned char mem[4][2] = {{1, 1}, {1, 0}, {1, 1}, {1, 0}};
  struct pb_exact_moments m;
  pb_exact_moments_init(&m, 2, 10);
  for (int i = 0; i < 4; i++) pb_exact_moments_add(&m, mem[i], q[i], p[i]);
  int g, j;
  ck_assert_double_eq_tol(pb_exact_mc(&m, &g, &j), 0.055, TOL);
  ck_assert_int_eq(g, 1);
  ck_assert_int_eq(j, 8);
  ck_assert_double_eq_tol(pb_exact_ece(&m, 0), 0.025 + 0.03, TOL);
  ck_assert_int_eq(m.count[1 * 10 + 8], 1);
  /* Merging two halves gives the whole. */
  struct pb_exact_moments a, b;
  pb_exact_moments_init(&a, 2, 10);
  pb_exact_moments_init(&b, 2, 10);
  for (int i = 0; i < 2; i++) pb_exact_moments_add(&a, mem[i], q[i], p[i]);
  for (int i = 2; i < 4; i++) pb_exact_moments_add(&b, mem[i], q[i], p[i]);
  pb_exact_moments_merge(&a, &b);
  ck_assert_double_eq_tol(pb_exact_mc(&a, NULL, NULL), 0.055, TOL);
  pb_exact_moments_free(&a);
  pb_exact_moments_free(&b);
  pb_exact_moments_free(&m);
}
END_TEST

START_TEST(test_mc_pstar_zero_empirical_positive)
{
  /* q = p*: every population moment is exactly zero; with sampled labels
   * y = 1, 1, 1, 0 at p* = 1/2 the empirical moment is (3/2 - 1/2 - ... )
   * = (0.5 + 0.5 + 0.5 - 0.5) / 4 = 1/4. */
  const double p[] = {0.5, 0.5, 0.5, 0.5, 0.13, 0.87};
  const int y[] = {1, 1, 1, 0};
  const unsigned char all[1] = {1};
  struct pb_exact_moments pop, emp;
  pb_exact_moments_init(&pop, 1, 10);
  pb_exact_moments_init(&emp, 1, 10);
  for (int i = 0; i < 6; i++) pb_exact_moments_add(&pop, all, p[i], p[i]);
  for (int i = 0; i < 4; i++) pb_exact_moments_add(&emp, all, p[i], y[i]);
  ck_assert(pb_exact_mc(&pop, NULL, NULL) == 0.0);
  ck_assert_double_eq_tol(pb_exact_mc(&emp, NULL, NULL), 0.25, TOL);
  pb_exact_moments_free(&pop);
  pb_exact_moments_free(&emp);
}
END_TEST

START_TEST(test_hoeffding)
{
  /* width 1.1, 20 cells, alpha 0.05: t = 1.1 sqrt(log(800) / 2000). */
  ck_assert_double_eq_tol(pb_exact_hoeffding(1000, 20, 10, 0.05), 1.1 * sqrt(log(800.0) / 2000.0), TOL);
}
END_TEST

START_TEST(test_w1_snapshot_half)
{
  /* C.5: every input at p = 1/2; its 2-snapshot law is (1/4, 1/2, 1/4) on
   * {0, 1/2, 1} and W1 to the point mass at 1/2 is 1/4. */
  const double v[] = {0.5, 0.5, 0.5};
  struct pb_exact_law pi, proj;
  pb_exact_law_empirical(3, v, &pi);
  ck_assert_int_eq(pi.n, 1);
  const double one = 1.0;
  pb_exact_law_snapshot(2, 1, v, &one, &proj);
  ck_assert_int_eq(proj.n, 3);
  ck_assert_double_eq_tol(proj.w[0], 0.25, TOL);
  ck_assert_double_eq_tol(proj.w[1], 0.5, TOL);
  ck_assert_double_eq_tol(proj.w[2], 0.25, TOL);
  ck_assert_double_eq_tol(pb_exact_w1(&pi, &proj), 0.25, TOL);
  ck_assert_double_eq_tol(pb_exact_w1(&proj, &pi), 0.25, TOL);
  /* The observed fractions 0, 1/2, 1/2, 1 have the same law. */
  const int s[] = {0, 1, 1, 2};
  struct pb_exact_law frac;
  pb_exact_law_fractions(2, 4, s, &frac);
  ck_assert_double_eq_tol(pb_exact_w1(&frac, &proj), 0.0, TOL);
  ck_assert_double_eq_tol(pb_exact_w1(&frac, &pi), 0.25, TOL);
  pb_exact_law_free(&pi);
  pb_exact_law_free(&proj);
  pb_exact_law_free(&frac);
}
END_TEST

START_TEST(test_w1_hand)
{
  /* Point masses at 0.2 and 0.7: W1 = 0.5.  Law {0.2: 2/3, 0.5: 1/3}
   * against the point mass at 0.2: |F - G| = 1/3 on [0.2, 0.5): 0.1. */
  const double a[] = {0.2}, b[] = {0.7}, c[] = {0.5, 0.2, 0.2};
  struct pb_exact_law la, lb, lc;
  pb_exact_law_empirical(1, a, &la);
  pb_exact_law_empirical(1, b, &lb);
  pb_exact_law_empirical(3, c, &lc);
  ck_assert_double_eq_tol(pb_exact_w1(&la, &lb), 0.5, TOL);
  ck_assert_int_eq(lc.n, 2);
  ck_assert_double_eq_tol(lc.x[0], 0.2, TOL);
  ck_assert_double_eq_tol(lc.w[0], 2.0 / 3.0, TOL);
  ck_assert_double_eq_tol(pb_exact_w1(&la, &lc), 0.1, TOL);
  /* proj_1 of a law is Bernoulli(mean): for {0.2, 0.2, 0.5} mass 0.3 at 1;
   * W1 to the point mass at 0.3 = 0.3 * 0.7 + 0.7 * 0.3 = 0.42. */
  const double w3[] = {1, 1, 1}, m3[] = {0.3};
  struct pb_exact_law p1, pt;
  pb_exact_law_snapshot(1, 3, c, w3, &p1);
  ck_assert_double_eq_tol(p1.w[1], 0.3, TOL);
  pb_exact_law_empirical(1, m3, &pt);
  ck_assert_double_eq_tol(pb_exact_w1(&p1, &pt), 0.42, TOL);
  pb_exact_law_free(&la);
  pb_exact_law_free(&lb);
  pb_exact_law_free(&lc);
  pb_exact_law_free(&p1);
  pb_exact_law_free(&pt);
}
END_TEST

/* CDF of a law at t (mass at points <= t). */
static double hand_cdf(const struct pb_exact_law *l, double t)
{
  double f = 0.0;
  for (int i = 0; i < l->n; i++)
    if (l->x[i] <= t) f += l->w[i];
  return f;
}

START_TEST(test_w1_random_vs_grid)
{
  /* Random laws on multiples of 1/64: both CDFs are constant on every cell of
   * a 1/4096 grid, so summing |F - G| at the cell midpoints integrates exactly. */
  unsigned long long state = 20260908ull;
  for (int rep = 0; rep < 50; rep++) {
    double v[2][12];
    int n[2];
    struct pb_exact_law l[2];
    for (int a = 0; a < 2; a++) {
      n[a] = 1 + (int)((state = state * 6364136223846793005ull + 1442695040888963407ull) >> 60) % 12;
      for (int i = 0; i < n[a]; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        v[a][i] = (double)(state >> 58) / 64.0;
      }
      pb_exact_law_empirical(n[a], v[a], &l[a]);
    }
    double grid = 0.0;
    for (int cell = 0; cell < 4096; cell++) {
      double t = (cell + 0.5) / 4096.0;
      grid += fabs(hand_cdf(&l[0], t) - hand_cdf(&l[1], t)) / 4096.0;
    }
    ck_assert_double_eq_tol(pb_exact_w1(&l[0], &l[1]), grid, 1e-12);
    pb_exact_law_free(&l[0]);
    pb_exact_law_free(&l[1]);
  }
}
END_TEST

START_TEST(test_snapshot_mixture)
{
  /* proj_3 of {0.2 (weight 1), 0.6 (weight 3)}: P(S = 3) = (0.2^3 + 3 * 0.6^3) / 4,
   * P(S = 0) = (0.8^3 + 3 * 0.4^3) / 4; the masses sum to 1. */
  const double v[] = {0.2, 0.6}, c[] = {1.0, 3.0};
  struct pb_exact_law l;
  pb_exact_law_snapshot(3, 2, v, c, &l);
  ck_assert_int_eq(l.n, 4);
  ck_assert_double_eq_tol(l.w[3], (0.008 + 3 * 0.216) / 4, TOL);
  ck_assert_double_eq_tol(l.w[0], (0.512 + 3 * 0.064) / 4, TOL);
  ck_assert_double_eq_tol(l.w[0] + l.w[1] + l.w[2] + l.w[3], 1.0, TOL);
  ck_assert_double_eq_tol(l.x[2], 2.0 / 3.0, TOL);
  pb_exact_law_free(&l);
}
END_TEST

START_TEST(test_nn_hand)
{
  /* Training half x = 0, 1, 2, 3, 4, 10 with labels 0, 0, 1, 1, 1, 0; test
   * half 0.4, 2.2, 9, 3.6, 1.5, 4.4 with labels 1, 1, 1, 0, 0, 1.
   * 1NN: 0, 1, 0, 1, 0 (tie 1 vs 2 -> lower row 1), 1: errors at 0.4, 9, 3.6 -> 1/2.
   * 3NN: {0,1,2}->0, {2,3,1}->1, {10,4,3}->1, {4,3,2}->1, {1,2,0 (tie with 3)}->0,
   *      {4,3,2}->1: errors at 0.4, 3.6 -> 1/3. */
  const double x[] = {0, 1, 2, 3, 4, 10, 0.4, 2.2, 9, 3.6, 1.5, 4.4};
  const int y[] = {0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 1};
  struct pb_exact_nn e;
  pb_exact_nn_estimate(12, 1, x, y, 3, PB_EXACT_KNN_FEEBEE, &e);
  ck_assert_double_eq_tol(e.err_1nn, 0.5, TOL);
  ck_assert_double_eq_tol(e.err_knn, 1.0 / 3.0, TOL);
  ck_assert_double_eq_tol(e.ch_lower, 0.5, TOL);
  ck_assert_double_eq_tol(e.ch_upper, 0.5, TOL);
  /* FeeBee's binary k > 2 form, (1/3) / (1 + 1/sqrt 3) = 0.21132486540518713 (by hand: 1/(3 + sqrt 3)) */
  ck_assert_double_eq_tol(e.dv_lower, 0.21132486540518713, TOL);
  pb_exact_nn_estimate(12, 1, x, y, 3, PB_EXACT_KNN_SQRT2, &e);
  ck_assert_double_eq_tol(e.dv_lower, (1.0 / 3.0) / (1.0 + sqrt(2.0 / 3.0)), TOL);
  /* R1 = 1/6 from a relabelled 9 (y = 0): lower (1 - sqrt(2/3)) / 2. */
  int y2[12];
  for (int i = 0; i < 12; i++) y2[i] = y[i];
  y2[8] = 0;
  y2[6] = 0;
  pb_exact_nn_estimate(12, 1, x, y2, 3, PB_EXACT_KNN_FEEBEE, &e);
  ck_assert_double_eq_tol(e.err_1nn, 1.0 / 6.0, TOL);
  ck_assert_double_eq_tol(e.ch_lower, (1.0 - sqrt(2.0 / 3.0)) / 2.0, TOL);
}
END_TEST

/* qsort order of (distance, row): a brute-force neighbour list with ties to the lower row. */
struct nn_pair {
  double d;
  int row;
};
static int nn_cmp(const void *a, const void *b)
{
  const struct nn_pair *p = a, *q = b;
  return p->d < q->d ? -1 : p->d > q->d ? 1 : p->row - q->row;
}

/* The bounds as FeeBee's published estimator computes them for two classes
 * (methods/knn.py, _get_lowerbound, read and rewritten here): k = 1 gives
 * ((C-1)/C)(1 - sqrt(max(0, 1 - C/(C-1) R))) with C = 2, k > 2 gives
 * R / (1 + 1/sqrt(k)), an error of at most 1e-10 gives 0. */
static double feebee_lower(double r, int k)
{
  if (r <= 1e-10) return 0.0;
  if (k == 1) return 0.5 * (1.0 - sqrt(fmax(0.0, 1.0 - 2.0 * r)));
  return r / (1.0 + 1.0 / sqrt((double)k));
}

START_TEST(test_nn_against_brute_force)
{
  /* 400 points in [0, 1]^3 with noisy labels: every held-out point's 1 and 5
   * nearest training points by a full sort, the errors counted, and both
   * intervals from FeeBee's formulas; the kernel must agree to the last bit
   * on the errors and to rounding on the bounds. */
  enum { N = 400, D = 3, K = 5 };
  static double x[N * D];
  static int y[N];
  uint64_t s = 12345;
  for (int i = 0; i < N; i++) {
    for (int t = 0; t < D; t++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      x[i * D + t] = (double)(s >> 11) / 9007199254740992.0;
    }
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double u = (double)(s >> 11) / 9007199254740992.0, eta = x[i * D] > 0.5 ? 0.8 : 0.3;
    y[i] = u < eta;
  }
  int e1 = 0, e5 = 0;
  struct nn_pair p[N / 2];
  for (int i = N / 2; i < N; i++) {
    for (int r = 0; r < N / 2; r++) {
      double d2 = 0;
      for (int t = 0; t < D; t++) d2 += (x[r * D + t] - x[i * D + t]) * (x[r * D + t] - x[i * D + t]);
      p[r] = (struct nn_pair){d2, r};
    }
    qsort(p, N / 2, sizeof p[0], nn_cmp);
    int ones = 0;
    for (int j = 0; j < K; j++) ones += y[p[j].row];
    e1 += y[p[0].row] != y[i];
    e5 += (2 * ones > K) != y[i];
  }
  const double r1 = e1 / (N / 2.0), r5 = e5 / (N / 2.0);
  struct pb_exact_nn e;
  ck_assert_int_eq(pb_exact_nn_estimate(N, D, x, y, K, PB_EXACT_KNN_FEEBEE, &e), PB_OK);
  ck_assert(e.err_1nn == r1 && e.err_knn == r5);
  ck_assert(r5 > 0.1 && r1 > 0.1);   /* a case where the bounds are not trivial */
  ck_assert_double_eq_tol(e.ch_lower, feebee_lower(r1, 1), TOL);
  ck_assert_double_eq_tol(e.dv_lower, feebee_lower(r5, K), TOL);
  ck_assert_double_eq_tol(pb_exact_devroye_lower(r1, 1, PB_EXACT_KNN_FEEBEE), feebee_lower(r1, 1), TOL);
  /* the cautious form is the smaller one: 1 + sqrt(2/5) = 1.632... against 1 + 1/sqrt(5) = 1.447... */
  ck_assert_double_eq_tol(pb_exact_devroye_lower(r5, K, PB_EXACT_KNN_SQRT2) * 1.6324555320336759, r5, TOL);
  ck_assert_double_eq_tol(pb_exact_devroye_lower(r5, K, PB_EXACT_KNN_FEEBEE) * 1.4472135954999579, r5, TOL);
}
END_TEST

START_TEST(test_logistic_saturated)
{
  /* One binary feature, no penalty: the MLE reproduces the group
   * frequencies, sigmoid(b0) = 1/4 and sigmoid(b0 + b1) = 2/3, so
   * b0 = log(1/3) and b0 + b1 = log 2. */
  const double x[] = {0, 0, 0, 0, 1, 1, 1};
  const int y[] = {1, 0, 0, 0, 1, 1, 0};
  double beta[2];
  ck_assert_int_eq(pb_exact_logistic_fit(7, 1, x, y, 0.0, beta), PB_OK);
  ck_assert_double_eq_tol(beta[0], log(1.0 / 3.0), 1e-9);
  ck_assert_double_eq_tol(beta[0] + beta[1], log(2.0), 1e-9);
  const double one = 1.0;
  ck_assert_double_eq_tol(pb_exact_logistic_predict(1, beta, &one), 2.0 / 3.0, 1e-9);
  /* With lambda = 2 the optimum satisfies the stationarity conditions
   * sum(mu - y) = 0 (unpenalised intercept) and sum(mu - y) x + 2 b1 = 0. */
  ck_assert_int_eq(pb_exact_logistic_fit(7, 1, x, y, 2.0, beta), PB_OK);
  double g0 = 0.0, g1 = 0.0;
  for (int i = 0; i < 7; i++) {
    double mu = 1.0 / (1.0 + exp(-(beta[0] + beta[1] * x[i])));
    g0 += mu - y[i];
    g1 += (mu - y[i]) * x[i];
  }
  ck_assert_double_eq_tol(g0, 0.0, 1e-9);
  ck_assert_double_eq_tol(g1 + 2.0 * beta[1], 0.0, 1e-9);
  ck_assert(beta[1] > 0.0 && beta[1] < log(2.0) - log(1.0 / 3.0));
}
END_TEST

START_TEST(test_logistic_separable_fails)
{
  /* Separable data without penalty has no finite MLE: a clear failure. */
  const double x[] = {0, 0, 1, 1};
  const int y[] = {0, 0, 1, 1};
  double beta[2];
  ck_assert_int_eq(pb_exact_logistic_fit(4, 1, x, y, 0.0, beta), PB_FAIL);
  ck_assert_int_eq(pb_exact_logistic_fit(4, 1, x, y, 1.0, beta), PB_OK);
}
END_TEST

static Suite *exact_suite(void)
{
  Suite *s = suite_create("exact");
  TCase *tc = tcase_create("worked");
  tcase_add_test(tc, test_kl_self_zero);
  tcase_add_test(tc, test_kl_is_excess_logloss);
  tcase_add_test(tc, test_accuracy_hand);
  tcase_add_test(tc, test_mc_hand);
  tcase_add_test(tc, test_mc_pstar_zero_empirical_positive);
  tcase_add_test(tc, test_hoeffding);
  tcase_add_test(tc, test_w1_snapshot_half);
  tcase_add_test(tc, test_w1_hand);
  tcase_add_test(tc, test_w1_random_vs_grid);
  tcase_add_test(tc, test_snapshot_mixture);
  tcase_add_test(tc, test_nn_hand);
  tcase_add_test(tc, test_nn_against_brute_force);
  tcase_add_test(tc, test_logistic_saturated);
  tcase_add_test(tc, test_logistic_separable_fails);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  pb_error_install_gsl_handler();
  SRunner *sr = srunner_create(exact_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
