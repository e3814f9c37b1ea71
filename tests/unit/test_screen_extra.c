/* Unit tests for the protocol-sensitivity and tie-break kernels
 * (src/screen/screen_kernel_extra.c; seed 000 Tables 18 and 22).
 *
 * Expected values are hand-worked (power means, mid-CDF percentiles with
 * ties), follow from invariance (U_rank under a strictly increasing rescaling
 * of one probe), or from the hypergeometric law of a uniformly random tie
 * split: the cutoff group of g images with f failures gives h = k - A of its
 * places, so the failures taken X have P(X = x) = C(f,x) C(g-f,h-x) / C(g,h),
 * mean h f / g (the prorated value) and variance
 * h (f/g) (1 - f/g) (g - h) / (g - 1).  The seed is PB_TEST_SEED. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <check.h>

#include "pairbound/rng.h"
#include "pairbound/screen.h"
#include "testlib.h"

static struct pb_rng trng;

static void test_rng(uint32_t which) { pb_rng_init(&trng, test_seed(), 0x7e58u, which, 0); }
static int32_t rint_(int32_t lo, int32_t hi) { return lo + (int32_t)pb_rng_below(&trng, (uint32_t)(hi - lo + 1)); }

START_TEST(test_power_means)
{
  /* image 1 of two probes: 0.25 and 1.0 -> U^0.5 = (0.5 + 1) / 2, U^2 = (0.0625 + 1) / 2 */
  static const float a[] = {0.9f, 0.25f}, b[] = {0.1f, 1.0f};
  const float *m[] = {a, b};
  ck_assert_double_eq_tol(pb_screen_u_power(m, 2, 1, 0.5), 0.75, 1e-15);
  ck_assert_double_eq_tol(pb_screen_u_power(m, 2, 1, 2.0), 0.53125, 1e-15);
  ck_assert_double_eq_tol(pb_screen_u_power(m, 2, 1, 1.0), pb_screen_u(m, 2, 1), 1e-15);
}
END_TEST

START_TEST(test_rank_normalised)
{
  /* the four analysis images sit at probe positions j = {3, 0, 2, 1}.
   * probe a at them: 0.1, 0.5, 0.5, 0.9 -> mid-CDF 1/8, 4/8, 4/8, 7/8;
   * probe b at them: 0.9, 0.2, 0.3, 0.2 -> 7/8, 2/8, 5/8, 2/8 */
  static const float a[] = {0.5f, 0.9f, 0.5f, 0.1f}, b[] = {0.2f, 0.2f, 0.3f, 0.9f};
  const float *m[] = {a, b};
  const int32_t j[] = {3, 0, 2, 1};
  const double want[] = {0.5, 0.375, 0.5625, 0.5625};
  double out[4];
  pb_screen_u_rank(m, 2, j, 4, out);
  for (int q = 0; q < 4; q++) ck_assert_double_eq_tol(out[q], want[q], 1e-15);

  /* invariance: a strictly increasing rescaling of one probe changes nothing */
  test_rng(1);
  for (int rep = 0; rep < 50; rep++) {
    int32_t n = rint_(1, 30), P = rint_(1, 5);
    float v[5][30], w[5][30];
    const float *mv[5], *mw[5];
    int32_t jj[30];
    for (int32_t p = 0; p < P; p++) {
      for (int32_t i = 0; i < n; i++) {
        v[p][i] = (float)rint_(0, 6) / 8.0f; /* coarse: many ties */
        w[p][i] = p == 0 ? v[p][i] * v[p][i] * v[p][i] + 0.25f : v[p][i];
      }
      mv[p] = v[p];
      mw[p] = w[p];
    }
    for (int32_t i = 0; i < n; i++) jj[i] = i;
    double o1[30], o2[30], sum = 0;
    pb_screen_u_rank(mv, P, jj, n, o1);
    pb_screen_u_rank(mw, P, jj, n, o2);
    for (int32_t i = 0; i < n; i++) {
      ck_assert(o1[i] == o2[i]);
      ck_assert(o1[i] > 0 && o1[i] < 1);
      sum += o1[i];
    }
    /* mid-CDF percentiles of one probe sum to n / 2 over the images */
    ck_assert_double_eq_tol(sum, n / 2.0, 1e-12);
  }
}
END_TEST

/* Ranked score and outcome helpers. */
struct fixture {
  struct pb_screen_ranked r;
  struct pb_screen_outcome o;
  int32_t fail[64], keep[64];
};

static void fixture_set(struct fixture *f, const double *s, const uint8_t *y, int32_t n)
{
  pb_screen_rank(s, n, NULL, 0, &f->r);
  f->o.fail = f->fail;
  f->o.keep = f->keep;
  pb_screen_outcome_set(&f->o, y, n);
}

START_TEST(test_tiebreak_hypergeometric)
{
  /* ten tied images, five failures, q = .2: k = 2, A = 0, g = 10, h = 2:
   * X = 0, 1, 2 with probabilities 10/45, 25/45, 10/45; coverage X / 5 */
  double s[10];
  uint8_t y[10];
  for (int i = 0; i < 10; i++) s[i] = 1.0, y[i] = (uint8_t)(i % 2);
  struct fixture f;
  fixture_set(&f, s, y, 10);
  const int N = 9000;
  int count[3] = {0, 0, 0};
  for (int d = 0; d < N; d++) {
    struct pb_rng rng;
    double cov[3];
    pb_rng_init(&rng, 7, PB_RNG_SCREEN_TIEBREAK, 1, (uint32_t)d);
    pb_screen_ranked_tiebreak(&f.r, &f.o, &rng, cov);
    int x = (int)lround(cov[1] * 5);
    ck_assert(fabs(cov[1] * 5 - x) < 1e-12 && x >= 0 && x <= 2);
    count[x]++;
  }
  const double p[3] = {10.0 / 45, 25.0 / 45, 10.0 / 45};
  for (int x = 0; x < 3; x++) {
    double sd = sqrt(N * p[x] * (1 - p[x]));
    ck_assert_msg(fabs(count[x] - N * p[x]) < 5 * sd, "X = %d: %d of %d draws, expected %.1f", x, count[x], N,
                  N * p[x]);
  }
  pb_screen_ranked_free(&f.r);
}
END_TEST

START_TEST(test_tiebreak_mean_is_prorated)
{
  test_rng(2);
  for (int rep = 0; rep < 40; rep++) {
    int32_t n = rint_(2, 40), levels = rint_(1, 5);
    double s[40];
    uint8_t y[40];
    for (int32_t i = 0; i < n; i++) {
      s[i] = rint_(0, levels - 1);
      y[i] = (uint8_t)rint_(0, 1);
    }
    struct fixture f;
    fixture_set(&f, s, y, n);
    struct pb_screen_metric pm;
    pb_screen_ranked_metrics(&f.r, &f.o, 7, &pm);
    const int N = 2000;
    double mean[3] = {0, 0, 0}, first[3];
    for (int d = 0; d < N; d++) {
      struct pb_rng rng;
      double cov[3];
      pb_rng_init(&rng, 11, PB_RNG_SCREEN_TIEBREAK, (uint64_t)rep, (uint32_t)d);
      pb_screen_ranked_tiebreak(&f.r, &f.o, &rng, cov);
      for (int b = 0; b < 3; b++) {
        if (d == 0) first[b] = cov[b];
        mean[b] += cov[b] / N;
      }
    }
    for (int b = 0; b < 3; b++) {
      if (pm.n_fail == 0) {
        ck_assert(isnan(mean[b]));
        continue;
      }
      /* failures in the cutoff group, counted independently of the kernel */
      int32_t k = pb_screen_budget(n, pb_screen_budget_pct[b]), A = 0, g = 0, fg = 0;
      double cut = NAN;
      double sorted[40];
      for (int32_t i = 0; i < n; i++) sorted[i] = s[i];
      for (int32_t i = 0; i < n; i++) /* k-th largest score */
        for (int32_t j2 = i + 1; j2 < n; j2++)
          if (sorted[j2] > sorted[i]) {
            double t = sorted[i];
            sorted[i] = sorted[j2];
            sorted[j2] = t;
          }
      cut = sorted[k - 1];
      for (int32_t i = 0; i < n; i++) {
        A += s[i] > cut;
        g += s[i] == cut;
        fg += s[i] == cut && y[i];
      }
      int32_t h = k - A;
      double pf = (double)fg / g;
      double var = g > 1 ? h * pf * (1 - pf) * (g - h) / (g - 1) : 0;
      double bound = 5 * sqrt(var / N) / pm.n_fail + 1e-12;
      ck_assert_msg(fabs(mean[b] - pm.cov[b]) <= bound, "rep %d b %d: mean %.6f prorated %.6f bound %.6f", rep, b,
                    mean[b], pm.cov[b], bound);
      if (var == 0) ck_assert(first[b] == pm.cov[b]); /* no uncertainty: the draw is the prorated value */
    }
    pb_screen_ranked_free(&f.r);
  }
}
END_TEST

START_TEST(test_tiebreak_seeded)
{
  /* the same stream gives the same draw; distinct scores leave nothing to break */
  double s[] = {3, 1, 2, 2, 2, 0, 2};
  uint8_t y[] = {1, 0, 1, 0, 1, 0, 0};
  struct fixture f;
  fixture_set(&f, s, y, 7);
  double c1[3], c2[3];
  struct pb_rng r1, r2;
  pb_rng_init(&r1, 99, PB_RNG_SCREEN_TIEBREAK, 5, 3);
  pb_rng_init(&r2, 99, PB_RNG_SCREEN_TIEBREAK, 5, 3);
  pb_screen_ranked_tiebreak(&f.r, &f.o, &r1, c1);
  pb_screen_ranked_tiebreak(&f.r, &f.o, &r2, c2);
  for (int b = 0; b < 3; b++) ck_assert(c1[b] == c2[b]);
  pb_screen_ranked_free(&f.r);
  double t[] = {6, 5, 4, 3, 2, 1, 0};
  fixture_set(&f, t, y, 7);
  struct pb_screen_metric pm;
  pb_screen_ranked_metrics(&f.r, &f.o, 7, &pm);
  pb_screen_ranked_tiebreak(&f.r, &f.o, &r1, c1);
  /* n = 7: k = 1, 1, 2 (0.7, 1.4, 2.1 rounded); failures 3: top-1 = 1 failure, top-2 = 1 */
  ck_assert_double_eq_tol(c1[0], 1.0 / 3, 1e-15);
  ck_assert_double_eq_tol(c1[2], 1.0 / 3, 1e-15);
  for (int b = 0; b < 3; b++) ck_assert(c1[b] == pm.cov[b]);
  pb_screen_ranked_free(&f.r);
}
END_TEST

static Suite *screen_extra_suite(void)
{
  Suite *s = suite_create("screen_extra");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_power_means);
  tcase_add_test(tc, test_rank_normalised);
  tcase_add_test(tc, test_tiebreak_hypergeometric);
  tcase_add_test(tc, test_tiebreak_mean_is_prorated);
  tcase_add_test(tc, test_tiebreak_seeded);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(screen_extra_suite()); }
