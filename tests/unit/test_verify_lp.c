/* The exact integer-programming check of verify (src/verify/verify_kernel_lp.c):
 * against enumeration of every bijection on classes of 2-8 records, then the
 * policy engine (pb_policy_cell) and the bounds engine's I5 H program
 * (pb_bounds_class_h_i5) against it at 20-300 records per side, where only the
 * LP can check them.  Seed PB_TEST_SEED (default 20260908), always printed. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/bounds.h"
#include "pairbound/policy.h"
#include "pairbound/verify.h"
#include "testrng.h"

#define MAXN 320


/* One class of label 0 with nlab wrong labels. */
struct tclass {
  int n;
  int32_t lab[MAXN], p0[MAXN], p1[MAXN];
  uint8_t c0[MAXN], z0[MAXN], c1[MAXN], z1[MAXN];
  float s0[MAXN], s1[MAXN], m[MAXN];
  float tau;
};

static void make_class(struct tclass *t, int n, int nlab)
{
  const int acc0 = rng_int(30, 95), acc1 = rng_int(10, 90), persist = rng_int(0, 90);
  t->n = n;
  t->tau = (float)rng_int(4, 12) / 16.0f;
  for (int i = 0; i < n; i++) {
    t->lab[i] = 0;
    t->p0[i] = rng_int(0, 99) < acc0 ? 0 : rng_int(1, nlab);
    t->p1[i] = rng_int(0, 99) < acc1 ? 0 : (t->p0[i] != 0 && rng_int(0, 99) < persist ? t->p0[i] : rng_int(1, nlab));
    t->s0[i] = (float)rng_int(1, 16) / 16.0f;
    t->s1[i] = (float)rng_int(1, 16) / 16.0f;
    t->m[i] = 0.5f;
    t->c0[i] = t->p0[i] == 0;
    t->c1[i] = t->p1[i] == 0;
    t->z0[i] = t->s0[i] >= t->tau;
    t->z1[i] = t->s1[i] >= t->tau;
  }
}

static struct pb_verify_records as_records(const struct tclass *t)
{
  struct pb_verify_records r = {t->n, t->c0, t->z0, t->c1, t->z1, t->p0, t->p1, t->m, t->m, t->s1};
  return r;
}

static void random_setup(struct pb_verify_policy_setup *ps)
{
  memset(ps, 0, sizeof *ps);
  ps->n_pol = rng_int(2, 4);
  for (int j = 0; j < ps->n_pol; j++) ps->tau[j] = (float)rng_int(2, 15) / 16.0f;
  ps->n_lambda = 2;
  ps->lambda[0] = 0.5;
  ps->lambda[1] = 0.2;
}

START_TEST(test_lp_vs_enumeration)
{
  rng_state = test_seed() ^ 0x1b;
  static uint32_t tally[9 * 9 << 8];
  int mips = 0;
  for (int trial = 0; trial < 300; trial++) {
    struct tclass t;
    make_class(&t, rng_int(2, 8), rng_int(1, 3));
    struct pb_verify_policy_setup ps;
    random_setup(&ps);
    const struct pb_verify_records r = as_records(&t);
    struct pb_verify_class q;
    static struct pb_verify_pclass pq;
    ck_assert_int_eq(pb_verify_class_enumerate_sets(&r, &q, NULL, tally), 0);
    ck_assert_int_eq(pb_verify_class_policies(&r, &q, tally, &ps, &pq), 0);
    static struct pb_verify_lp_class lp;
    ck_assert_int_eq(pb_verify_lp_class(&r, &ps, &lp), 0);
    mips += lp.n_mip;
    const int I5 = PB_VERIFY_I5;
    ck_assert_msg(lp.H[0] == q.H[I5][0] && lp.H[1] == q.H[I5][1], "trial %d: H LP [%d, %d] enumeration [%d, %d]",
                  trial, lp.H[0], lp.H[1], q.H[I5][0], q.H[I5][1]);
    for (int j = 0; j < ps.n_pol; j++) {
      for (int d = 0; d < 2; d++) {
        ck_assert_int_eq(lp.pol_h[j][d], pq.h[I5][j][d]);
        ck_assert_int_eq(lp.pol_l[j][d], pq.l[I5][j][d]);
      }
      for (int li = 0; li < ps.n_lambda; li++) {
        const double lam = ps.lambda[li];
        for (int d = 0; d < 2; d++) {
          const double a = lam * lp.J[li][j][d][0] + (1 - lam) * lp.J[li][j][d][1];
          const double b = lam * pq.J[I5][li][j][d][0] + (1 - lam) * pq.J[I5][li][j][d][1];
          ck_assert_msg(fabs(a - b) < 1e-12, "trial %d: J_%d end %d: LP %g enumeration %g", trial, j, d, a, b);
        }
        for (int l = 0; l < ps.n_pol; l++) {
          if (l == j) continue;
          const double a = lam * lp.D[li][j][l][0] + (1 - lam) * lp.D[li][j][l][1];
          const double b = lam * pq.D[I5][li][j][l][0] + (1 - lam) * pq.D[I5][li][j][l][1];
          ck_assert_msg(fabs(a - b) < 1e-12, "trial %d: D+_%d%d: LP %g enumeration %g", trial, j, l, a, b);
        }
      }
    }
  }
  printf("enumeration trials: %d programs needed branch and bound\n", mips);
}
END_TEST

/* The engines against the LP where enumeration is impossible. */
START_TEST(test_engines_vs_lp_large)
{
  rng_state = test_seed() ^ 0x2c;
  const int sizes[] = {20, 40, 75, 120, 200, 300};
  for (int trial = 0; trial < 24; trial++) {
    const int n = sizes[trial % 6];
    static struct tclass t;
    make_class(&t, n, rng_int(2, 9));
    struct pb_verify_policy_setup ps;
    random_setup(&ps);
    const struct pb_verify_records r = as_records(&t);
    static struct pb_verify_lp_class lp;
    ck_assert_int_eq(pb_verify_lp_class(&r, &ps, &lp), 0);
    /* bounds engine: I5 H count interval */
    int32_t k = 0, s = 0;
    for (int i = 0; i < n; i++) {
      k += t.c0[i] && t.c1[i];
      s += !t.c0[i] && !t.c1[i] && t.p0[i] == t.p1[i];
    }
    int64_t hb[2];
    ck_assert_int_eq(pb_bounds_class_h_i5(n, 0, t.p0, t.z0, t.p1, t.z1, k, s, hb), 0);
    ck_assert_msg(hb[0] == lp.H[0] && hb[1] == lp.H[1], "n %d: bounds engine H I5 [%ld, %ld], LP [%d, %d]", n,
                  (long)hb[0], (long)hb[1], lp.H[0], lp.H[1]);
    /* policy engine on the class alone (clean threshold = the class's tau) */
    const struct pb_cell_view in = {.index = -1, .n = n, .label = t.lab, .pred0 = t.p0, .s0 = t.s0, .m0 = t.m,
                                    .pred1 = t.p1, .s1 = t.s1, .m1 = t.m, .tau = t.tau};
    const struct pb_policy_setup pps = {.n_pol = ps.n_pol, .tau = ps.tau, .n_lambda = ps.n_lambda,
                                        .lambda = ps.lambda};
    static struct pb_policy_result e;
    ck_assert_int_eq(pb_policy_cell(&in, &pps, &e), 0);
    for (int j = 0; j < ps.n_pol; j++) {
      for (int d = 0; d < 2; d++) {
        ck_assert_msg(fabs(e.H[PB_LEVEL_I5][j][d] - (double)lp.pol_h[j][d] / n) < 1e-12, "n %d: H_%d end %d", n, j, d);
        ck_assert_msg(fabs(e.L[PB_LEVEL_I5][j][d] - (double)lp.pol_l[j][d] / n) < 1e-12, "n %d: L_%d end %d", n, j, d);
      }
      for (int li = 0; li < ps.n_lambda; li++) {
        const double lam = ps.lambda[li];
        for (int d = 0; d < 2; d++) {
          const double v = (lam * lp.J[li][j][d][0] + (1 - lam) * lp.J[li][j][d][1]) / n;
          ck_assert_msg(fabs(e.J[PB_LEVEL_I5][li][j][d] - v) < 1e-12, "n %d: J_%d end %d: engine %.15g LP %.15g", n,
                        j, d, e.J[PB_LEVEL_I5][li][j][d], v);
        }
        for (int l = 0; l < ps.n_pol; l++) {
          if (l == j) continue;
          const double v = (lam * lp.D[li][j][l][0] + (1 - lam) * lp.D[li][j][l][1]) / n;
          ck_assert_msg(fabs(e.D[PB_LEVEL_I5][li][j][l] - v) < 1e-12, "n %d: D+_%d%d: engine %.15g LP %.15g", n, j,
                        l, e.D[PB_LEVEL_I5][li][j][l], v);
        }
      }
    }
  }
}
END_TEST

START_TEST(test_invalid)
{
  struct tclass t;
  rng_state = 1;
  make_class(&t, 4, 2);
  struct pb_verify_records r = as_records(&t);
  struct pb_verify_lp_class lp;
  r.n = 0;
  ck_assert_int_eq(pb_verify_lp_class(&r, NULL, &lp), -1);
  r.n = PB_VERIFY_LP_MAX_N + 1;
  ck_assert_int_eq(pb_verify_lp_class(&r, NULL, &lp), -1);
}
END_TEST

/* GLPK's per-thread environment, freed after each test so leak checks see none */
static void teardown_glpk(void)
{
  pb_verify_lp_release();
}

int main(void)
{
  Suite *s = suite_create("verify_lp");
  TCase *tc = tcase_create("lp");
  tcase_set_timeout(tc, 600);
  tcase_add_checked_fixture(tc, NULL, teardown_glpk);
  tcase_add_test(tc, test_lp_vs_enumeration);
  tcase_add_test(tc, test_engines_vs_lp_large);
  tcase_add_test(tc, test_invalid);
  suite_add_tcase(s, tc);
  return test_run_forked(s);
}
