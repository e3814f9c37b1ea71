/* Unit tests for the exact fragility profile of a finite law
 * (src/fragility/fragility_kernel.c, seed 001 Section 3.1, Appendix E, M).
 *
 * Expected values come from hand derivations (the two- and three-point laws
 * below, worked in docs/fragility.md), or from an independent solution of the
 * chi-square programme implemented here and nowhere else: enumerate every
 * support set S of r, take the affine stationary point on S, keep the
 * feasible ones, and certify the best by a Lagrange dual bound evaluated at
 * its multipliers.  The seed is PB_TEST_SEED (default 20260908), printed. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "pairbound/error.h"
#include "pairbound/fragility.h"
#include "pairbound/registry.h"
#include "testrng.h"

#define TOL 1e-12
#define MAXA 6

static double rng_unif(void) { return ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0; }

#define ASSERT_NEAR_TOL(a, b, tol, ...)                                                          \
  do {                                                                                           \
    const double got_ = (a), exp_ = (b);                                                         \
    if (!(fabs(got_ - exp_) <= (tol) || got_ == exp_)) {                                         \
      char ctx_[256];                                                                            \
      snprintf(ctx_, sizeof ctx_, " " __VA_ARGS__);                                              \
      ck_abort_msg("%s = %.17g, expected %.17g;%s", #a, got_, exp_, ctx_);                       \
    }                                                                                            \
  } while (0)
#define ASSERT_NEAR(a, b, ...) ASSERT_NEAR_TOL(a, b, TOL, __VA_ARGS__)

static void set_law(struct pb_fragility_law *L, const double *v, const double *m, int n)
{
  pb_fragility_law_init(L);
  ck_assert_int_eq(pb_fragility_law_set(L, v, m, n), PB_OK);
}

/* The optimiser must be feasible and attain the profile it claims. */
static void check_weights(const struct pb_fragility_law *L, enum pb_fragility_dir dir, double rho)
{
  double r[64], e1 = 0, e2 = 0, mv = 0, big = 1;
  pb_fragility_weights(L, dir, rho, r);
  for (int i = 0; i < L->n; i++) big = fmax(big, r[i]); /* rounding scales with the largest weight */
  for (int i = 0; i < L->n; i++) {
    ck_assert_msg(r[i] >= -1e-15, "negative weight %g at atom %d", r[i], i);
    e1 += L->p[i] * r[i];
    e2 += L->p[i] * (r[i] - 1) * (r[i] - 1);
    mv += L->p[i] * (r[i] - 1) * L->z[i];
  }
  ASSERT_NEAR_TOL(e1, 1.0, 1e-11 * big, "dir %d rho %g", (int)dir, rho);
  ck_assert_msg(e2 <= rho * (1 + 1e-12) + 1e-11 * big * big, "budget %.17g exceeds rho %.17g", e2, rho);
  double sign = dir == PB_FRAGILITY_UP ? 1 : -1;
  ASSERT_NEAR_TOL(sign * mv, pb_fragility_profile(L, dir, rho), 1e-11 * big, "dir %d rho %g", (int)dir, rho);
}

/* ------------------------------------------------------------ closed forms */

/* Two-point law eta in {0.2, 0.9}, masses {3/4, 1/4}: d = 0.7, q = 1/4,
 * Z in {-q d, (1-q) d}, G = q(1-q)d^2 = 0.091875.  Up: rho_plus = rho_sat =
 * (1-q)/q = 3, then (1-q)d = 0.525.  Down: rho_plus = rho_sat = 1/3, then q d. */
START_TEST(test_two_point)
{
  struct pb_fragility_law L;
  const double v[] = {0.9, 0.2}, m[] = {0.25, 0.75};
  set_law(&L, v, m, 2);
  ASSERT_NEAR(L.mean, 0.375);
  ASSERT_NEAR(L.G, 0.091875);
  ASSERT_NEAR(L.up.rho_plus, 3.0);
  ASSERT_NEAR(L.up.rho_sat, 3.0);
  ASSERT_NEAR(L.down.rho_plus, 1.0 / 3);
  ASSERT_NEAR(L.down.rho_sat, 1.0 / 3);
  const double rhos[] = {0, 0.01, 0.3, 1.0 / 3, 1, 2.5, 3, 3.5, 100};
  for (int i = 0; i < 9; i++) {
    double rho = rhos[i];
    ASSERT_NEAR(pb_fragility_profile(&L, PB_FRAGILITY_UP, rho), rho <= 3 ? sqrt(rho * 0.091875) : 0.525, "rho %g", rho);
    ASSERT_NEAR(pb_fragility_profile(&L, PB_FRAGILITY_DOWN, rho), rho <= 1.0 / 3 ? sqrt(rho * 0.091875) : 0.175,
                "rho %g", rho);
    check_weights(&L, PB_FRAGILITY_UP, rho);
    check_weights(&L, PB_FRAGILITY_DOWN, rho);
  }
  pb_fragility_law_free(&L);
}
END_TEST

/* Three-point law eta in {0.3, 0.5, 0.8} with masses {2/5, 1/3, 4/15}: mean
 * 1/2, Z in {-0.2, 0, 0.3}, G = 0.04 (docs/fragility.md, worked example).
 * Up: rho_plus = 0.04 / 0.2^2 = 1; middle piece (atoms {0, 0.3}: P = 3/5,
 * mu = 2/15, V = 1/75): Phi = 2/15 + sqrt((rho - 2/3) / 75); rho_sat = 11/4.
 * Down: -Z in {-0.3, 0, 0.2}, rho_plus = 4/9; atoms {0, 0.2}: P = 11/15,
 * mu = 6/55, V = 2/275: Phi = 6/55 + sqrt(2 (rho - 4/11) / 275); rho_sat = 3/2. */
static double three_up(double rho)
{
  return rho <= 1 ? sqrt(0.04 * rho) : rho >= 2.75 ? 0.3 : 2.0 / 15 + sqrt((rho - 2.0 / 3) / 75);
}
static double three_down(double rho)
{
  return rho <= 4.0 / 9 ? sqrt(0.04 * rho) : rho >= 1.5 ? 0.2 : 6.0 / 55 + sqrt(2 * (rho - 4.0 / 11) / 275);
}

START_TEST(test_three_point)
{
  struct pb_fragility_law L;
  const double v[] = {0.5, 0.8, 0.3}, m[] = {1.0 / 3, 4.0 / 15, 0.4};
  set_law(&L, v, m, 3);
  ASSERT_NEAR(L.mean, 0.5);
  ASSERT_NEAR(L.G, 0.04);
  ASSERT_NEAR(L.up.rho_plus, 1);
  ASSERT_NEAR(L.up.rho_sat, 2.75);
  ASSERT_NEAR(L.down.rho_plus, 4.0 / 9);
  ASSERT_NEAR(L.down.rho_sat, 1.5);
  /* the worked points: Phi_up(2) = 4/15, Phi_down(4/9) = 2/15 from both sides */
  ASSERT_NEAR(pb_fragility_profile(&L, PB_FRAGILITY_UP, 2), 4.0 / 15);
  ASSERT_NEAR(pb_fragility_profile(&L, PB_FRAGILITY_DOWN, 4.0 / 9), 2.0 / 15);
  for (double rho = 0; rho <= 4; rho += 1.0 / 64) {
    ASSERT_NEAR(pb_fragility_profile(&L, PB_FRAGILITY_UP, rho), three_up(rho), "rho %g", rho);
    ASSERT_NEAR(pb_fragility_profile(&L, PB_FRAGILITY_DOWN, rho), three_down(rho), "rho %g", rho);
    check_weights(&L, PB_FRAGILITY_UP, rho);
    check_weights(&L, PB_FRAGILITY_DOWN, rho);
  }
  /* truncated affine at rho = 2: t solves (rho+1) u^2 = V + u^2/P, so
   * u = sqrt(V / (rho + 1 - 1/P)) = 1/10, t = mu - u / P = -1/30, and
   * r = (Z - t)+ / u = {0, 1/3, 10/3} on {-0.2, 0, 0.3} */
  double r[3];
  pb_fragility_weights(&L, PB_FRAGILITY_UP, 2, r);
  ASSERT_NEAR(r[0], 0);
  ASSERT_NEAR(r[1], 1.0 / 3);
  ASSERT_NEAR(r[2], 10.0 / 3);
  pb_fragility_law_free(&L);
}
END_TEST

/* A law whose middle regime is empty: two distinct values after merging the
 * repeated 0.3 (a finite law has an empty middle regime exactly when it has
 * two atoms, docs/fragility.md).  Masses are unnormalised on purpose. */
START_TEST(test_empty_middle)
{
  struct pb_fragility_law L;
  const double v[] = {0.3, 0.9, 0.3, 0.5}, m[] = {1, 1, 2, 0};
  set_law(&L, v, m, 4);
  ck_assert_int_eq(L.n, 2);
  /* q = 1/4, d = 0.6: G = 3/16 * 0.36, rho_plus = rho_sat = 3 up, 1/3 down */
  ASSERT_NEAR(L.G, 0.0675);
  ASSERT_NEAR(L.up.rho_plus, L.up.rho_sat);
  ASSERT_NEAR(L.up.rho_sat, 3);
  ASSERT_NEAR(L.down.rho_plus, L.down.rho_sat);
  ASSERT_NEAR(pb_fragility_profile(&L, PB_FRAGILITY_UP, 3 * (1 + 1e-15)), 0.45);
  ASSERT_NEAR(pb_fragility_profile(&L, PB_FRAGILITY_UP, 3), sqrt(3 * 0.0675));
  ASSERT_NEAR(pb_fragility_profile(&L, PB_FRAGILITY_DOWN, 7), 0.15);
  pb_fragility_law_free(&L);
}
END_TEST

/* Saturation: beyond rho_sat = 1/P(top) - 1 the profile is the top atom and
 * the optimiser puts all mass on it; below, it is strictly smaller. */
START_TEST(test_saturation)
{
  struct pb_fragility_law L;
  const double v[] = {0, 0.25, 0.5, 1}, m[] = {0.1, 0.2, 0.3, 0.4};
  set_law(&L, v, m, 4);
  double mean = 0.25 * 0.2 + 0.5 * 0.3 + 0.4, top = 1 - mean;
  ASSERT_NEAR(L.up.rho_sat, 1.5);
  ASSERT_NEAR(L.down.rho_sat, 9);
  ASSERT_NEAR(pb_fragility_profile(&L, PB_FRAGILITY_UP, 1.5), top);
  ASSERT_NEAR(pb_fragility_profile(&L, PB_FRAGILITY_UP, 1e9), top);
  ASSERT_NEAR(pb_fragility_profile(&L, PB_FRAGILITY_UP, INFINITY), top);
  ASSERT_NEAR(pb_fragility_profile(&L, PB_FRAGILITY_DOWN, 9), mean);
  ck_assert(pb_fragility_profile(&L, PB_FRAGILITY_UP, 1.49) < top - 1e-6);
  double r[4];
  pb_fragility_weights(&L, PB_FRAGILITY_UP, 2, r);
  ASSERT_NEAR(r[3], 2.5);
  ASSERT_NEAR(r[0] + r[1] + r[2], 0);
  pb_fragility_law_free(&L);
}
END_TEST

/* G = 0: every admissible reweighting leaves reliability unchanged. */
START_TEST(test_zero_variance)
{
  struct pb_fragility_law L;
  const double v[] = {0.7, 0.7, 0.2}, m[] = {0.5, 0.5, 0};
  set_law(&L, v, m, 3);
  ck_assert_int_eq(L.n, 1);
  ASSERT_NEAR(L.G, 0);
  ASSERT_NEAR(L.mean, 0.7);
  ck_assert(isinf(L.up.rho_plus) && isinf(L.down.rho_plus));
  for (double rho = 0; rho < 50; rho += 0.7) {
    ASSERT_NEAR(pb_fragility_profile(&L, PB_FRAGILITY_UP, rho), 0);
    ASSERT_NEAR(pb_fragility_profile(&L, PB_FRAGILITY_DOWN, rho), 0);
    check_weights(&L, PB_FRAGILITY_UP, rho);
  }
  pb_fragility_law_free(&L);
}
END_TEST

START_TEST(test_invalid)
{
  struct pb_fragility_law L;
  pb_fragility_law_init(&L);
  const double v[] = {0.1, 0.2}, neg[] = {1, -0.5}, zero[] = {0, 0}, nanv[] = {NAN, 0.2}, one[] = {0.5, 0.5};
  ck_assert_int_eq(pb_fragility_law_set(&L, v, neg, 2), PB_FAIL);
  ck_assert(strstr(pb_error_message(), "atom 2") != NULL);
  ck_assert_int_eq(pb_fragility_law_set(&L, v, zero, 2), PB_FAIL);
  ck_assert_int_eq(pb_fragility_law_set(&L, nanv, one, 2), PB_FAIL);
  ck_assert(strstr(pb_error_message(), "atom 1") != NULL);
  pb_fragility_law_free(&L);
}
END_TEST

/* 100,000 atoms of mass 1e-5 (issue 47, item 10): the exact sum of the masses as read, 100,000 x
 * 1.0000000000000000818e-5, rounds to 1 (summed naively: 1 - 1.9e-12), so each distinct atom keeps the mass
 * 1e-5 and two values taking 50,000 atoms each get 0.5 (the exact 0.5000000000000000041 rounded): the two-point
 * law with G = 1/4 and rho_plus = rho_sat = (1 - q) / q = 1. */
START_TEST(test_many_atoms)
{
  enum { N = 100000 };
  double *v = malloc(N * sizeof *v), *m = malloc(N * sizeof *m);
  for (int i = 0; i < N; i++) v[i] = (double)i / N, m[i] = 1e-5;
  struct pb_fragility_law L;
  pb_fragility_law_init(&L);
  ck_assert_int_eq(pb_fragility_law_set(&L, v, m, N), PB_OK);
  ck_assert_int_eq(L.n, N);
  for (int i = 0; i < N; i++) ck_assert(L.p[i] == 1e-5);
  for (int i = 0; i < N; i++) v[i] = i % 2;
  ck_assert_int_eq(pb_fragility_law_set(&L, v, m, N), PB_OK);
  ck_assert_int_eq(L.n, 2);
  ck_assert(L.p[0] == 0.5 && L.p[1] == 0.5);
  ck_assert(L.mean == 0.5 && L.G == 0.25);
  ck_assert(L.up.rho_plus == 1 && L.up.rho_sat == 1 && L.down.rho_plus == 1 && L.down.rho_sat == 1);
  pb_fragility_law_free(&L);
  free(v);
  free(m);
}
END_TEST

/* A law of more atoms than a bin's (PB_FRAGILITY_MAX_GROUPS: the runs merged pairwise): 1,000 atoms over
 * 300 shuffled values with dyadic masses, so every sum is exact in any order and the expected law follows
 * from counting: distinct values ascending, each with its masses' share. */
START_TEST(test_many_atoms_sorted)
{
  enum { N = 1000, V = 300 };
  double v[N], m[N], want[V] = {0}, total = 0;
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < N; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const int k = (int)(x % V);
    v[i] = 0.25 * k - 20, m[i] = (double)(1 + (x >> 32) % 64) / 1024;
    want[k] += m[i], total += m[i];
  }
  struct pb_fragility_law L;
  pb_fragility_law_init(&L);
  ck_assert_int_eq(pb_fragility_law_set(&L, v, m, N), PB_OK);
  int j = 0;
  for (int k = 0; k < V; k++) {
    if (want[k] == 0) continue;
    ck_assert_int_lt(j, L.n);
    ck_assert(L.p[j] == want[k] / total);
    if (j > 0) ck_assert(L.z[j] > L.z[j - 1]);
    j++;
  }
  ck_assert_int_eq(j, L.n);
  ck_assert(fabs(L.z[0] + L.mean - (0.25 * 0 - 20)) < 1e-9 || want[0] == 0);
  pb_fragility_law_free(&L);
}
END_TEST

/* ------------------------------------------------------------ brute force */

/* Best feasible stationary point of max E[r Z] s.t. r >= 0, E r = 1,
 * E (r-1)^2 <= rho over every support set S; r = a + b z on S. */
static double enum_best(int n, const double *z, const double *p, double rho, double *a_out, double *b_out)
{
  double best = -INFINITY;
  for (unsigned S = 1; S < 1u << n; S++) {
    double P = 0, mu = 0, V = 0;
    for (int i = 0; i < n; i++)
      if (S >> i & 1) P += p[i], mu += p[i] * z[i];
    mu /= P;
    for (int i = 0; i < n; i++)
      if (S >> i & 1) V += p[i] * (z[i] - mu) * (z[i] - mu);
    double b = 0;
    if (__builtin_popcount(S) == 1) {
      mu = z[__builtin_ctz(S)]; /* exact: no rounded centred moment */
      if (1 / P - 1 > rho * (1 + 1e-9)) continue; /* 1/P - 1 cancels for P near 1 */
    } else if (V > 1e-300) {
      /* E[r^2] = 1/P + b^2 V = rho + 1 (budget active) */
      double c = rho + 1 - 1 / P;
      if (c < 0) continue;
      b = sqrt(c / V);
    } else if (1 / P - 1 > rho) {
      continue;
    }
    int ok = 1; /* r >= 0 on S, up to rounding relative to the size of r */
    for (int i = 0; i < n; i++)
      if (S >> i & 1 && 1 / P + b * (z[i] - mu) < -1e-9 * (1 / P + b * fabs(z[i] - mu))) ok = 0;
    if (!ok) continue;
    double obj = mu + b * V;
    if (obj > best) best = obj, *a_out = 1 / P - b * mu, *b_out = b;
  }
  return best;
}

/* Lagrange dual bound: for lambda > 0 and any nu, every feasible r has
 * E[rZ] <= nu + lambda rho / 2 + E max_{r>=0} [r (Z - nu) - lambda/2 (r-1)^2]. */
static double dual_bound(int n, const double *z, const double *p, double rho, double lambda, double nu)
{
  double d = nu + lambda * rho / 2;
  for (int i = 0; i < n; i++) {
    double r = 1 + (z[i] - nu) / lambda;
    if (r < 0) r = 0;
    d += p[i] * (r * (z[i] - nu) - lambda / 2 * (r - 1) * (r - 1));
  }
  return d;
}

static double brute_profile(int n, const double *eta, const double *p, double sign, double rho)
{
  double mean = 0, z[MAXA];
  for (int i = 0; i < n; i++) mean += p[i] * eta[i];
  for (int i = 0; i < n; i++) z[i] = sign * (eta[i] - mean);
  double a = 0, b = 0;
  double best = enum_best(n, z, p, rho, &a, &b);
  double top = -INFINITY;
  for (int i = 0; i < n; i++) top = fmax(top, z[i]);
  /* both are valid upper bounds; the first is tight in the affine regimes, the
   * second (lambda -> 0 at nu = max Z) at saturation, where ties may pick b > 0 */
  double ub = dual_bound(n, z, p, rho, 1e-12 / (1 + rho), top);
  if (b > 0) ub = fmin(ub, dual_bound(n, z, p, rho, 1 / b, (1 - a) / b));
  if (!(fabs(ub - best) <= 1e-10)) {
    for (int i = 0; i < n; i++) fprintf(stderr, "  z %.17g p %.17g\n", z[i], p[i]);
    fprintf(stderr, "  best %.17g a %g b %g ub %.17g rho %.17g\n", best, a, b, ub, rho);
  }
  ck_assert_msg(fabs(ub - best) <= 1e-10, "dual gap %.3g at rho %g (n %d)", ub - best, rho, n);
  return best;
}

START_TEST(test_random_vs_enumeration)
{
  rng_state = test_seed();
  struct pb_fragility_law L;
  pb_fragility_law_init(&L);
  for (int trial = 0; trial < 3000; trial++) {
    int n = 1 + (int)(rng_next() % MAXA);
    double eta[MAXA], p[MAXA], tot = 0;
    for (int i = 0; i < n; i++) {
      eta[i] = rng_unif();
      p[i] = trial % 5 == 0 ? 1e-4 + pow(rng_unif(), 4) : rng_unif(); /* some rare atoms */
      tot += p[i];
    }
    for (int i = 0; i < n; i++) p[i] /= tot;
    ck_assert_int_eq(pb_fragility_law_set(&L, eta, p, n), PB_OK);
    double rhos[8] = {pow(10, -3 + 5 * rng_unif()), pow(10, -2 + 3 * rng_unif()), 0.3, 3,
                      L.up.rho_plus, L.up.rho_sat, L.down.rho_plus, 0.5 * (L.up.rho_plus + L.up.rho_sat)};
    for (int j = 0; j < 8; j++) {
      double rho = rhos[j];
      if (!isfinite(rho) || rho > 1e6) continue;
      for (int d = 0; d < 2; d++) {
        double want = n == 1 ? 0 : brute_profile(n, eta, p, d == 0 ? 1 : -1, rho);
        double got = pb_fragility_profile(&L, d == 0 ? PB_FRAGILITY_UP : PB_FRAGILITY_DOWN, rho);
        ck_assert_msg(fabs(got - want) <= 1e-9, "trial %d n %d dir %d rho %.17g: %.17g vs brute %.17g (seed %lu)",
                      trial, n, d, rho, got, want, test_seed());
        check_weights(&L, d == 0 ? PB_FRAGILITY_UP : PB_FRAGILITY_DOWN, rho);
      }
    }
  }
  pb_fragility_law_free(&L);
}
END_TEST

/* Concave and non-decreasing on a fine grid; zero iff G = 0. */
START_TEST(test_random_shape)
{
  rng_state = test_seed() + 1;
  struct pb_fragility_law L;
  pb_fragility_law_init(&L);
  for (int trial = 0; trial < 300; trial++) {
    int n = 2 + (int)(rng_next() % 7);
    double eta[8], p[8];
    for (int i = 0; i < n; i++) eta[i] = rng_unif(), p[i] = rng_unif();
    ck_assert_int_eq(pb_fragility_law_set(&L, eta, p, n), PB_OK);
    for (int d = 0; d < 2; d++) {
      /* one assertion per profile (this test runs forked, where check writes the place of every passing
       * assertion for its crash report): the first rho at which it is not positive, decreases or is not concave */
      double prev2 = 0, prev = 0, h = 0.01;
      const char *bad = NULL;
      int k = 1;
      for (; k < 2000 && !bad; k++) {
        double f = pb_fragility_profile(&L, d ? PB_FRAGILITY_DOWN : PB_FRAGILITY_UP, k * h);
        bad = !(f > 0) ? "not positive" : !(f >= prev - 1e-13) ? "decreasing"
              : k >= 2 && !(f - 2 * prev + prev2 <= 1e-12) ? "not concave" : NULL;
        prev2 = prev, prev = f;
      }
      ck_assert_msg(!bad, "trial %d, %s profile %s at rho %g", trial, d ? "downward" : "upward", bad, (k - 1) * h);
    }
  }
  pb_fragility_law_free(&L);
}
END_TEST

/* ------------------------------------------------------------ witness laws */

/* Equal mean 1/2 and equal G = 0.04: A = {0.3, 0.7} each 1/2 and B = the
 * three-point law above.  Both have min Z = -0.2, so both upward profiles
 * are sqrt(0.04 rho) on [0, 1]; A saturates at 0.2 from rho = 1, B grows to
 * 0.3 at rho = 11/4, so they separate by exactly 0.1 for rho >= 11/4. */
START_TEST(test_witness_pair)
{
  struct pb_fragility_law A, B;
  const double va[] = {0.3, 0.7}, ma[] = {0.5, 0.5};
  const double vb[] = {0.3, 0.5, 0.8}, mb[] = {0.4, 1.0 / 3, 4.0 / 15};
  set_law(&A, va, ma, 2);
  set_law(&B, vb, mb, 3);
  printf("witness A: eta 0.3 (1/2), 0.7 (1/2); B: eta 0.3 (2/5), 0.5 (1/3), 0.8 (4/15)\n");
  ASSERT_NEAR(A.mean, B.mean);
  ASSERT_NEAR(A.G, B.G);
  for (double rho = 0; rho <= 1; rho += 1.0 / 128)
    ASSERT_NEAR(pb_fragility_profile(&A, PB_FRAGILITY_UP, rho), pb_fragility_profile(&B, PB_FRAGILITY_UP, rho),
                "rho %g", rho);
  for (double rho = 1.0 + 1.0 / 128; rho < 2.75; rho += 1.0 / 128) {
    double gap = pb_fragility_profile(&B, PB_FRAGILITY_UP, rho) - pb_fragility_profile(&A, PB_FRAGILITY_UP, rho);
    ck_assert_msg(gap > 0 && gap < 0.1, "gap %g at rho %g", gap, rho);
  }
  for (double rho = 2.75; rho <= 10; rho += 0.25)
    ASSERT_NEAR(pb_fragility_profile(&B, PB_FRAGILITY_UP, rho) - pb_fragility_profile(&A, PB_FRAGILITY_UP, rho), 0.1,
                "rho %g", rho);
  pb_fragility_law_free(&A);
  pb_fragility_law_free(&B);
}
END_TEST


/* ------------------------------------------------------------ restricted profile */

/* True restricted profile sum_b w_b Phi_b(rho) of a known population. */
static double true_restricted(int J, int K, const double *w, const double *q, const double *eta, double rho)
{
  struct pb_fragility_law L;
  pb_fragility_law_init(&L);
  double v = 0;
  for (int b = 0; b < J; b++) {
    ck_assert_int_eq(pb_fragility_law_set(&L, eta + b * K, q + b * K, K), PB_OK);
    v += w[b] * pb_fragility_profile(&L, PB_FRAGILITY_UP, rho);
  }
  pb_fragility_law_free(&L);
  return v;
}

static int draw_index(const double *p, int n)
{
  double u = rng_unif(), c = 0;
  for (int i = 0; i < n - 1; i++)
    if (u < (c += p[i])) return i;
  return n - 1;
}

/* The 95% split-sample bound lies at or below the true restricted profile in
 * at least 95% of 1,000 replicates of known populations, and is informative
 * (positive) in most of them.  The one-bin, two-group population makes the
 * bound tight (the single transfer is the affine optimiser: sqrt(rho q0 q1)
 * times the gap equals sqrt(rho G)), so point estimates in place of the
 * confidence limits would cover only about half the time. */
static void lcb_coverage(int J, int K, const double *w, const double *q, const double *eta, double rho, int N)
{
  enum { REPS = 1000 };
  double truth = true_restricted(J, K, w, q, eta, rho);
  int covered = 0, positive = 0;
  int64_t n[16], k[16];
  for (int rep = 0; rep < REPS; rep++) {
    memset(n, 0, sizeof n);
    memset(k, 0, sizeof k);
    for (int i = 0; i < N; i++) {
      int b = draw_index(w, J), g = draw_index(q + b * K, K);
      n[b * K + g]++;
      k[b * K + g] += rng_unif() < eta[b * K + g];
    }
    double lcb = pb_fragility_lcb(J, K, n, k, rho, 0.05);
    covered += lcb <= truth;
    positive += lcb > 0;
  }
  printf("LCB coverage (J %d, K %d, rho %g): %d / %d covered, %d positive (true profile %.6f)\n", J, K, rho, covered,
         REPS, positive, truth);
  ck_assert_msg(covered >= 0.95 * REPS, "coverage %d / %d at rho %g", covered, REPS, rho);
  ck_assert_msg(positive >= 0.5 * REPS, "bound positive in only %d / %d", positive, REPS);
}

START_TEST(test_lcb_coverage)
{
  rng_state = test_seed() + 2;
  const double w2[2] = {0.6, 0.4};
  const double q2[8] = {0.2, 0.3, 0.3, 0.2, 0.25, 0.25, 0.25, 0.25};
  const double eta2[8] = {0.2, 0.5, 0.7, 0.95, 0.6, 0.6, 0.9, 0.9};
  lcb_coverage(2, 4, w2, q2, eta2, 0.3, 4000);
  lcb_coverage(2, 4, w2, q2, eta2, 3, 4000);
  const double w1[1] = {1}, q1[2] = {0.5, 0.5}, eta1[2] = {0.4, 0.6};
  lcb_coverage(1, 2, w1, q1, eta1, 0.3, 2000);
}
END_TEST

/* LCB hand case: one bin, two groups of 1000 images each, 100 and 900
 * correct.  With a = 0.05 / (1 + 2 * 2), the Clopper-Pearson limits come
 * from GSL's beta quantiles directly; the transfer is from group 0 to 1. */
START_TEST(test_lcb_hand)
{
  int64_t n[2] = {1000, 1000}, k[2] = {100, 900};
  double a = 0.05 / 5, rho = 0.3;
  double qL = gsl_cdf_beta_Pinv(a, 1000, 1001); /* both groups: 1000 of 2000 */
  double lo1 = gsl_cdf_beta_Pinv(a, 900, 101), hi0 = gsl_cdf_beta_Qinv(a, 101, 900);
  double wL = gsl_cdf_beta_Pinv(a, 2000, 1);
  double step = fmin(qL, sqrt(rho * qL * qL / (2 * qL)));
  ASSERT_NEAR(pb_fragility_lcb(1, 2, n, k, rho, 0.05), wL * step * (lo1 - hi0));
  /* an empty group gives a vacuous interval: no transfer, bound 0 */
  int64_t n2[2] = {0, 1000}, k2[2] = {0, 900};
  ASSERT_NEAR(pb_fragility_lcb(1, 2, n2, k2, rho, 0.05), 0);
}
END_TEST

/* Known-propensity simulation (seed 001 U.1): a four-point law, proportional
 * stratified rate labels (at least one per cell), 2,000 replicates; plug-in
 * profile vs capped variance law min(sqrt(rho G), max Z) at rho = 3.  The
 * plug-in error shrinks with n while the cap keeps its population slack. */
static void known_propensity(int n, double *mae_plug, double *mae_cap)
{
  const double eta[4] = {0.2, 0.55, 0.75, 0.99}, q[4] = {0.1, 0.4, 0.4, 0.1}, rho = 3;
  struct pb_fragility_law L;
  pb_fragility_law_init(&L);
  ck_assert_int_eq(pb_fragility_law_set(&L, eta, q, 4), PB_OK);
  double truth = pb_fragility_profile(&L, PB_FRAGILITY_UP, rho), sp = 0, sc = 0;
  for (int rep = 0; rep < 2000; rep++) {
    double est[4];
    for (int g = 0; g < 4; g++) {
      int m = (int)lround(n * q[g]), c = 0;
      if (m < 1) m = 1;
      for (int i = 0; i < m; i++) c += rng_unif() < eta[g];
      est[g] = (double)c / m;
    }
    ck_assert_int_eq(pb_fragility_law_set(&L, est, q, 4), PB_OK);
    sp += fabs(pb_fragility_profile(&L, PB_FRAGILITY_UP, rho) - truth);
    sc += fabs(fmin(sqrt(rho * L.G), L.up.top) - truth);
  }
  *mae_plug = sp / 2000;
  *mae_cap = sc / 2000;
  pb_fragility_law_free(&L);
}

START_TEST(test_known_propensity)
{
  rng_state = test_seed() + 3;
  double p250, c250, p5000, c5000;
  known_propensity(250, &p250, &c250);
  known_propensity(5000, &p5000, &c5000);
  printf("known propensity, rho = 3: MAE plug-in %.4f cap %.4f (n = 250); plug-in %.4f cap %.4f (n = 5000)\n", p250,
         c250, p5000, c5000);
  ck_assert(p250 < c250);
  ck_assert(p5000 < c5000);
  ck_assert(p5000 < p250 / 2); /* plug-in error shrinks with n ... */
  ck_assert(c5000 > c250 / 2); /* ... the cap keeps most of its population slack */
}
END_TEST

/* A random store-like unit: n images, confidence, signal, correctness, parts. */
struct unit {
  int n;
  double s[4000], u[4000], s1[4000];
  uint8_t c[4000], c1[4000], part[4000];
};

static void random_unit(struct unit *x, int n)
{
  x->n = n;
  for (int i = 0; i < n; i++) {
    x->s[i] = 0.3 + 0.7 * rng_unif();
    x->u[i] = i % 50 == 7 ? NAN : rng_unif();
    double p = 0.2 + 0.5 * x->s[i] + 0.3 * (x->u[i] > 0.5 ? 1 : 0) - 0.2;
    x->c[i] = rng_unif() < p;
    x->s1[i] = x->s[i] * (0.5 + 0.5 * rng_unif());
    x->c1[i] = rng_unif() < p * 0.7;
    double r = rng_unif();
    x->part[i] = r < 0.4 ? PB_FRAGILITY_PART_A : r < 0.8 ? PB_FRAGILITY_PART_B : PB_FRAGILITY_PART_E;
  }
}

/* A fixed strictly increasing score map (s -> s^2, exact in double for float
 * scores) leaves every structural quantity unchanged and changes ECE. */
START_TEST(test_score_map)
{
  rng_state = test_seed() + 4;
  static struct unit x;
  random_unit(&x, 4000);
  for (int i = 0; i < x.n; i++) x.s[i] = (float)x.s[i];
  double s2[4000];
  for (int i = 0; i < x.n; i++) s2[i] = x.s[i] * x.s[i];
  struct pb_fragility_options o;
  pb_fragility_options_default(&o);
  o.n_null = 20;
  struct pb_fragility_input in = {x.n, x.s, x.u, x.c, x.part, 7, {NULL, NULL}}, in2 = in;
  in2.s = s2;
  int len = PB_FRAGILITY_ARM_LEN(o.n_grid);
  double *r1 = malloc(len * sizeof(double)), *r2 = malloc(len * sizeof(double));
  for (int arm = 0; arm < 2; arm++) {
    pb_fragility_arm(&in, &o, arm ? PB_FRAGILITY_PART_B : PB_FRAGILITY_PART_A, r1);
    pb_fragility_arm(&in2, &o, arm ? PB_FRAGILITY_PART_B : PB_FRAGILITY_PART_A, r2);
    for (int f = 0; f < len; f++)
      if (f != PB_FA_ECE)
        ck_assert_msg(memcmp(&r1[f], &r2[f], sizeof(double)) == 0, "field %d changed: %.17g vs %.17g", f, r1[f], r2[f]);
    ck_assert_msg(fabs(r1[PB_FA_ECE] - r2[PB_FA_ECE]) > 1e-3, "ECE unchanged: %g", r1[PB_FA_ECE]);
    ck_assert(r1[PB_FA_G_R] > 0 && r1[PB_FA_FAUC_UP] > 0 && r1[PB_FA_BINS] == 20);
  }
  free(r1);
  free(r2);
}
END_TEST

/* Partitions fitted once and handed to the kernels (struct pb_fragility_input's fitted, as the store
 * stage does) give every record to the bit that the kernels' own fits give. */
START_TEST(test_fitted_partitions)
{
  rng_state = test_seed() + 9;
  static struct unit x;
  random_unit(&x, 3000);
  struct pb_fragility_options o;
  pb_fragility_options_default(&o);
  o.n_null = 10;
  struct pb_fragility_input own = {x.n, x.s, x.u, x.c, x.part, 3, {NULL, NULL}}, given = own;
  struct pb_fragility_partition p[2];
  for (int a = 0; a < 2; a++)
    pb_fragility_partition_fit(&own, a ? PB_FRAGILITY_PART_B : PB_FRAGILITY_PART_A, o.n_bins, o.n_groups, &p[a]);
  given.fitted[0] = &p[0], given.fitted[1] = &p[1];
  const int len[4] = {PB_FRAGILITY_ARM_LEN(o.n_grid), PB_FRAGILITY_DIAG_LEN(o.n_grid), PB_FRAGILITY_RANDOM_LEN(o.n_grid),
                      PB_FRAGILITY_QMAP_LEN};
  for (int k = 0; k < 4; k++)
    for (int a = 0; a < 2 && (k < 3 || a == 0); a++) {
      double *r1 = malloc(len[k] * sizeof(double)), *r2 = malloc(len[k] * sizeof(double));
      const struct pb_fragility_input *in[2] = {&own, &given};
      for (int j = 0; j < 2; j++) {
        double *r = j ? r2 : r1;
        enum pb_fragility_part fit = a ? PB_FRAGILITY_PART_B : PB_FRAGILITY_PART_A;
        if (k == 0) pb_fragility_arm(in[j], &o, fit, r);
        else if (k == 1) pb_fragility_diag(in[j], &o, fit, r);
        else if (k == 2) pb_fragility_random(in[j], &o, fit, r);
        else pb_fragility_qmap(in[j], &o, r);
      }
      ck_assert_msg(memcmp(r1, r2, len[k] * sizeof(double)) == 0, "kernel %d arm %d differs (seed %llu)", k, a,
                    (unsigned long long)test_seed());
      free(r1);
      free(r2);
    }
  /* the given partition is the one used (one edge moved: the arm changes), but not by a copy of the input on
   * other arrays, even with the same values (it fits its own) */
  double *r1 = malloc(len[0] * sizeof(double)), *r2 = malloc(len[0] * sizeof(double));
  double *s2 = malloc(x.n * sizeof(double));
  memcpy(s2, x.s, x.n * sizeof(double));
  struct pb_fragility_input other = given;
  other.s = s2;
  pb_fragility_arm(&own, &o, PB_FRAGILITY_PART_A, r1);
  const double e0 = p[0].edge[0];
  p[0].edge[0] = -1.0;
  pb_fragility_arm(&given, &o, PB_FRAGILITY_PART_A, r2);
  ck_assert_msg(memcmp(r1, r2, len[0] * sizeof(double)) != 0, "a given partition was not used");
  pb_fragility_arm(&other, &o, PB_FRAGILITY_PART_A, r2);
  ck_assert_msg(memcmp(r1, r2, len[0] * sizeof(double)) == 0, "a partition of other arrays was used");
  p[0].edge[0] = e0;
  free(r1);
  free(r2);
  free(s2);
  pb_fragility_partition_free(&p[0]);
  pb_fragility_partition_free(&p[1]);
}
END_TEST

/* Equal-mass bins: 1,000 distinct fitting confidences, 20 bins of 50. */
START_TEST(test_partition)
{
  static struct unit x;
  rng_state = test_seed() + 5;
  random_unit(&x, 1000);
  for (int i = 0; i < 1000; i++) x.part[i] = PB_FRAGILITY_PART_A, x.u[i] = rng_unif();
  struct pb_fragility_input in = {1000, x.s, x.u, x.c, x.part, 0, {NULL, NULL}};
  struct pb_fragility_partition p;
  pb_fragility_partition_fit(&in, PB_FRAGILITY_PART_A, 20, 8, &p);
  int cnt[20] = {0}, gc[20][8];
  memset(gc, 0, sizeof gc);
  for (int i = 0; i < 1000; i++) {
    int b = pb_fragility_bin(&p, x.s[i]);
    cnt[b]++;
    gc[b][pb_fragility_group(&p, b, x.u[i])]++;
  }
  for (int b = 0; b < 20; b++) {
    ck_assert_int_eq(cnt[b], 50);
    for (int g = 0; g < 8; g++) ck_assert(gc[b][g] == 6 || gc[b][g] == 7); /* floor(k 50 / 8) cuts */
  }
  pb_fragility_partition_free(&p);
}
END_TEST

/* The perturbed side of a drift cell as kernels see it: confidence s1 (as
 * the store's float), correctness c1 as pred1 == label. */
struct drift_cell {
  float s1[4000];
  int32_t label[4000], pred1[4000];
};

static struct pb_cell_view drift_view(struct drift_cell *d, int n, const double *s1, const uint8_t *c1)
{
  for (int i = 0; i < n; i++) {
    d->s1[i] = (float)s1[i];
    d->label[i] = i % 3;
    d->pred1[i] = c1[i] ? d->label[i] : d->label[i] + 1;
  }
  return (struct pb_cell_view){.index = -1, .n = n, .label = d->label, .pred1 = d->pred1, .s1 = d->s1};
}

/* Drift split, hand case (docs/fragility.md): two bins, two groups. */
START_TEST(test_drift_hand)
{
  double edge[1] = {0.5}, cut[2] = {0.5, 0.5};
  struct pb_fragility_partition p = {2, 2, edge, cut};
  double s0[8], u[8], s1[8];
  uint8_t c0[8] = {1, 1, 0, 0, 1, 1, 1, 1}, c1[8] = {1, 0, 0, 0, 1, 1, 1, 0}, part[8];
  for (int i = 0; i < 8; i++) {
    s0[i] = 0.9;
    u[i] = i < 4 ? 0.2 : 0.8;
    s1[i] = i == 2 || i == 3 ? 0.2 : 0.9;
    part[i] = PB_FRAGILITY_PART_B;
  }
  struct pb_fragility_input in = {8, s0, u, c0, part, 0, {NULL, NULL}};
  double rec[PB_FD_FIXED];
  int32_t bin0[8], grp0[8];
  pb_fragility_assign(&in, &p, PB_FRAGILITY_PART_A, bin0, grp0);
  static struct drift_cell dc;
  const struct pb_cell_view v = drift_view(&dc, 8, s1, c1);
  ck_assert_int_eq(pb_fragility_drift(&v, &in, &p, bin0, grp0, rec), PB_OK);
  double k = sqrt(0.75);
  ASSERT_NEAR(rec[PB_FD_L_TOTAL], k / 12);
  ASSERT_NEAR(rec[PB_FD_L_COMP], k / 12);
  ASSERT_NEAR(rec[PB_FD_L_COND], k / 6);
  ASSERT_NEAR(rec[PB_FD_RATIO], 1);
  ASSERT_NEAR(rec[PB_FD_UTIL], 1); /* the composition reweighting is affine: it attains sqrt(rho G) */
  ck_assert_int_eq((int)rec[PB_FD_N_UTIL], 1);
  ck_assert_int_eq((int)rec[PB_FD_N_UNSUPPORTED], 1);
  ck_assert_int_eq((int)rec[PB_FD_N_UNDEF], 1);
  ASSERT_NEAR(rec[PB_FD_RESIDUAL], 0);
  /* a cell whose images are not the unit's is an error naming the cell */
  const struct pb_cell_view short_cell = drift_view(&dc, 7, s1, c1);
  ck_assert_int_eq(pb_fragility_drift(&short_cell, &in, &p, bin0, grp0, rec), PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "cell: fragility: 7 perturbed records for 8 clean images");
}
END_TEST

/* Exact additivity on random units: residual <= 1e-12, utilisation <= 1. */
START_TEST(test_drift_additivity)
{
  static struct unit x;
  rng_state = test_seed() + 6;
  for (int trial = 0; trial < 20; trial++) {
    random_unit(&x, 500 + 150 * trial);
    struct pb_fragility_input in = {x.n, x.s, x.u, x.c, x.part, 0, {NULL, NULL}};
    struct pb_fragility_partition p;
    pb_fragility_partition_fit(&in, PB_FRAGILITY_PART_A, 1 + trial % 20, 1 + trial % 8, &p);
    double rec[PB_FD_FIXED];
    static int32_t bin0[4000], grp0[4000];
    pb_fragility_assign(&in, &p, PB_FRAGILITY_PART_A, bin0, grp0);
    static struct drift_cell dc;
    const struct pb_cell_view v = drift_view(&dc, x.n, x.s1, x.c1);
    ck_assert_int_eq(pb_fragility_drift(&v, &in, &p, bin0, grp0, rec), PB_OK);
    ck_assert_msg(rec[PB_FD_RESIDUAL] <= 1e-12, "residual %g", rec[PB_FD_RESIDUAL]);
    ck_assert(rec[PB_FD_L_TOTAL] <= rec[PB_FD_L_COMP] + rec[PB_FD_L_COND] + 1e-12); /* triangle inequality */
    ck_assert(isnan(rec[PB_FD_UTIL]) || rec[PB_FD_UTIL] <= 1 + 1e-9);
    pb_fragility_partition_free(&p);
  }
}
END_TEST

/* A unit's perturbed cells split together (pb_fragility_drift_cells, the store stage's call) give each
 * cell's records to the bit that one call per cell gives, and a cell of the wrong length stops the
 * batch with its error. */
START_TEST(test_drift_cells)
{
  static struct unit x;
  static struct drift_cell dc[3];
  static double s1[3][4000];
  static uint8_t c1[3][4000];
  static int32_t bin0[4000], grp0[4000];
  rng_state = test_seed() + 10;
  random_unit(&x, 2500);
  struct pb_fragility_input in = {x.n, x.s, x.u, x.c, x.part, 0, {NULL, NULL}};
  struct pb_fragility_partition p;
  pb_fragility_partition_fit(&in, PB_FRAGILITY_PART_A, 20, 8, &p);
  pb_fragility_assign(&in, &p, PB_FRAGILITY_PART_A, bin0, grp0);
  struct pb_cell_view v[3];
  for (int c = 0; c < 3; c++) {
    for (int i = 0; i < x.n; i++) s1[c][i] = x.s[i] * (0.4 + 0.2 * c + 0.4 * rng_unif()), c1[c][i] = rng_unif() < 0.6;
    v[c] = drift_view(&dc[c], x.n, s1[c], c1[c]);
  }
  double rec[3][PB_FD_FIXED], flag[3][PB_FF_FIXED], r1[PB_FD_FIXED], f1[PB_FF_FIXED];
  ck_assert_int_eq(pb_fragility_drift_cells(v, 3, &in, &p, bin0, grp0, &rec[0][0], &flag[0][0]), PB_OK);
  for (int c = 0; c < 3; c++) {
    ck_assert_int_eq(pb_fragility_drift_flagged(&v[c], &in, &p, bin0, grp0, r1, f1), PB_OK);
    ck_assert_msg(memcmp(r1, rec[c], sizeof r1) == 0 && memcmp(f1, flag[c], sizeof f1) == 0,
                  "cell %d differs (seed %llu)", c, (unsigned long long)test_seed());
  }
  v[1].n = x.n - 1;
  ck_assert_int_ne(pb_fragility_drift_cells(v, 3, &in, &p, bin0, grp0, &rec[0][0], NULL), PB_OK);
  pb_fragility_partition_free(&p);
}
END_TEST

/* Selective-risk transport, hand case: two bins, two groups.  Fitting part:
 * s 0.1, 0.2 | 0.8, 0.9 (edge 0.8) with u 0.2, 0.8 in each bin (cut 0.8).
 * Rate part: bin 1 (s 0.85) groups of 20 with 10 and 20 correct, bin 0
 * (s 0.15) groups of 5 with 1 and 3 correct; w = 0.8, 0.2.  Coverage 0.8
 * accepts bin 1: risk 1/4, downward movement sqrt(0.3 / 16) (two-point law
 * {1/2, 1}); coverage 0.9 accepts both: risk 0.32, movement
 * 0.8 sqrt(0.3/16) + 0.2 sqrt(0.3 * 0.04). */
START_TEST(test_selective_hand)
{
  static struct unit x;
  int n = 0;
  const double fs[4] = {0.1, 0.2, 0.8, 0.9}, fu[4] = {0.2, 0.8, 0.2, 0.8};
  for (int i = 0; i < 4; i++, n++) x.s[n] = fs[i], x.u[n] = fu[i], x.c[n] = 1, x.part[n] = PB_FRAGILITY_PART_A;
  const int size[4] = {20, 20, 5, 5}, right[4] = {10, 20, 1, 3};
  for (int g = 0; g < 4; g++)
    for (int i = 0; i < size[g]; i++, n++) {
      x.s[n] = g < 2 ? 0.85 : 0.15;
      x.u[n] = g % 2 ? 0.9 : 0.1;
      x.c[n] = i < right[g];
      x.part[n] = PB_FRAGILITY_PART_B;
    }
  struct pb_fragility_options o;
  pb_fragility_options_default(&o);
  o.n_bins = 2, o.n_groups = 2, o.n_null = 0;
  struct pb_fragility_input in = {n, x.s, x.u, x.c, x.part, 0, {NULL, NULL}};
  double *r = malloc(PB_FRAGILITY_ARM_LEN(o.n_grid) * sizeof(double));
  pb_fragility_arm(&in, &o, PB_FRAGILITY_PART_A, r);
  double d1 = sqrt(0.3 / 16), d0 = sqrt(0.3 * 0.04);
  ASSERT_NEAR(r[PB_FA_SR_COV80], 0.8);
  ASSERT_NEAR(r[PB_FA_SR_RISK80], 0.25);
  ASSERT_NEAR(r[PB_FA_SR_ENV80], 0.25 + d1);
  ASSERT_NEAR(r[PB_FA_SR_REL80], d1 / 0.25);
  ASSERT_NEAR(r[PB_FA_SR_COV90], 1);
  ASSERT_NEAR(r[PB_FA_SR_RISK90], 0.32);
  ASSERT_NEAR(r[PB_FA_SR_ENV90], 0.32 + 0.8 * d1 + 0.2 * d0);
  ASSERT_NEAR(r[PB_FA_G_R], 0.8 / 16 + 0.2 * 0.04);
  ASSERT_NEAR(r[PB_FA_PLUGIN_LCB_RHO], 0.8 * d1 + 0.2 * d0); /* both laws are symmetric */
  ASSERT_NEAR(r[PB_FA_ECE], 0.8 * fabs(0.75 - 0.85) + 0.2 * fabs(0.4 - 0.15));
  free(r);
}
END_TEST

/* The option table's defaults (CLI, [fragility] of pairbound run) are the
 * kernel's documented defaults. */
START_TEST(test_option_defaults)
{
  struct pb_fragility_options k;
  struct pb_fragility_stage_options *o = pb_registry_options_new(pb_registry_find("fragility"));
  pb_fragility_options_default(&k);
  ck_assert(o->k.n_bins == k.n_bins && o->k.n_groups == k.n_groups && o->k.n_grid == k.n_grid);
  ck_assert(o->k.rho_min == k.rho_min && o->k.rho_max == k.rho_max && o->k.rho_lcb == k.rho_lcb);
  ck_assert(o->k.alpha == k.alpha && o->k.seed == k.seed && o->k.n_null == k.n_null);
  ck_assert(o->probe == NULL && o->group_file == NULL && o->law == NULL && o->rho == NULL && !o->store_given);
  pb_registry_options_free(pb_registry_find("fragility"), o);
}
END_TEST

static Suite *fragility_suite(void)
{
  Suite *s = suite_create("fragility");
  TCase *tc = tcase_create("closed");
  tcase_add_test(tc, test_two_point);
  tcase_add_test(tc, test_three_point);
  tcase_add_test(tc, test_empty_middle);
  tcase_add_test(tc, test_saturation);
  tcase_add_test(tc, test_zero_variance);
  tcase_add_test(tc, test_invalid);
  tcase_add_test(tc, test_many_atoms);
  tcase_add_test(tc, test_many_atoms_sorted);
  tcase_add_test(tc, test_witness_pair);
  tcase_add_test(tc, test_option_defaults);
  suite_add_tcase(s, tc);
  TCase *tr = tcase_create("random");
  tcase_set_timeout(tr, 120);
  tcase_add_test(tr, test_random_vs_enumeration);
  tcase_add_test(tr, test_random_shape);
  suite_add_tcase(s, tr);
  TCase *tk = tcase_create("restricted");
  tcase_set_timeout(tk, 120);
  tcase_add_test(tk, test_lcb_hand);
  tcase_add_test(tk, test_lcb_coverage);
  tcase_add_test(tk, test_known_propensity);
  tcase_add_test(tk, test_score_map);
  tcase_add_test(tk, test_partition);
  tcase_add_test(tk, test_fitted_partitions);
  tcase_add_test(tk, test_drift_hand);
  tcase_add_test(tk, test_selective_hand);
  tcase_add_test(tk, test_drift_additivity);
  tcase_add_test(tk, test_drift_cells);
  suite_add_tcase(s, tk);
  return s;
}

int main(void) { return test_run_forked(fragility_suite()); }
