/* Unit tests for the exact fragility profile of a finite law
 * (src/fragility_kernel.c, seed 001 Section 3.1, Appendix E, M).
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

#include "pairbound/error.h"
#include "pairbound/fragility.h"

#define TOL 1e-12
#define MAXA 6

static uint64_t rng_state;
static uint64_t rng_next(void)
{
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double rng_unif(void) { return ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0; }
static unsigned long test_seed(void)
{
  const char *s = getenv("PB_TEST_SEED");
  return s ? strtoul(s, NULL, 10) : 20260908ul;
}

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
      double prev2 = 0, prev = 0, h = 0.01;
      for (int k = 1; k < 2000; k++) {
        double f = pb_fragility_profile(&L, d ? PB_FRAGILITY_DOWN : PB_FRAGILITY_UP, k * h);
        ck_assert(f > 0);
        ck_assert_msg(f >= prev - 1e-13, "decreasing at rho %g", k * h);
        if (k >= 2) ck_assert_msg(f - 2 * prev + prev2 <= 1e-12, "not concave at rho %g", k * h);
        prev2 = prev, prev = f;
      }
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
  tcase_add_test(tc, test_witness_pair);
  suite_add_tcase(s, tc);
  TCase *tr = tcase_create("random");
  tcase_set_timeout(tr, 120);
  tcase_add_test(tr, test_random_vs_enumeration);
  tcase_add_test(tr, test_random_shape);
  suite_add_tcase(s, tr);
  return s;
}

int main(void)
{
  printf("test seed %lu (set PB_TEST_SEED to change)\n", test_seed());
  SRunner *sr = srunner_create(fragility_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
