/* Unit tests of the verification enumerator (src/verify.c): hand-worked
 * classes from seed 000 (Section 3.1, Appendix A.6 / Table 5), an independent
 * lexicographic enumeration written here, the class combination against
 * whole-cell Cartesian products, and agreement with the bounds engine. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pairbound/bounds.h"
#include "pairbound/util.h"
#include "pairbound/verify.h"
#include "testlib.h"

/* A class given by its records; c and z are derived from labels and tau. */
struct tclass {
  int32_t n, y;
  int32_t p0[PB_VERIFY_MAX_N], p1[PB_VERIFY_MAX_N];
  float s0[PB_VERIFY_MAX_N], s1[PB_VERIFY_MAX_N], m0[PB_VERIFY_MAX_N], m1[PB_VERIFY_MAX_N];
  uint8_t c0[PB_VERIFY_MAX_N], c1[PB_VERIFY_MAX_N], z0[PB_VERIFY_MAX_N], z1[PB_VERIFY_MAX_N];
};

static struct pb_verify_records tclass_records(struct tclass *t, float tau)
{
  for (int32_t i = 0; i < t->n; i++) {
    t->c0[i] = t->p0[i] == t->y, t->c1[i] = t->p1[i] == t->y;
    t->z0[i] = t->s0[i] >= tau, t->z1[i] = t->s1[i] >= tau;
  }
  return (struct pb_verify_records){t->n, t->c0, t->z0, t->c1, t->z1, t->p0, t->p1, t->m0, t->m1};
}

static void set_clean(struct tclass *t, int i, int32_t pred, float s, float m)
{
  t->p0[i] = pred, t->s0[i] = s, t->m0[i] = m;
}

static void set_pert(struct tclass *t, int i, int32_t pred, float s, float m)
{
  t->p1[i] = pred, t->s1[i] = s, t->m1[i] = m;
}

/* Section 3.1: (0.9, 0.1), (0.6, 0.4) clean; (0.6, 0.4), (0.2, 0.8) perturbed;
 * threshold 0.8.  Both matchings have k = 1, s = 0; (H, L) counts are (0, 1)
 * or (1, 0); the dM_k numerator is 0.9 - 0.6 or 0.6 - 0.6. */
START_TEST(test_section31)
{
  struct tclass t = {.n = 2, .y = 0};
  set_clean(&t, 0, 0, 0.9f, 0.9f);
  set_clean(&t, 1, 0, 0.6f, 0.6f);
  set_pert(&t, 0, 0, 0.6f, 0.6f);
  set_pert(&t, 1, 1, 0.8f, 0.2f);
  struct pb_verify_records r = tclass_records(&t, 0.8f);
  struct pb_verify_class q;
  ck_assert_int_eq(pb_verify_class_enumerate(&r, &q, NULL), 0);
  ck_assert_int_eq(q.perms, 2);
  ck_assert_int_eq(q.a, 2);
  ck_assert_int_eq(q.b, 1);
  ck_assert_int_eq(q.k, 1);
  ck_assert_int_eq(q.s, 0);
  ck_assert_int_eq(q.H_obs, 0);
  ck_assert_int_eq(q.L_obs, 1);
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++) {
    ck_assert_int_eq(q.H[lv][0], 0);
    ck_assert_int_eq(q.H[lv][1], 1);
    ck_assert_int_eq(q.L[lv][0], 0);
    ck_assert_int_eq(q.L[lv][1], 1);
  }
  const double hi = (double)0.9f - (double)0.6f;
  ck_assert(q.D_obs == hi);
  ck_assert(q.D[PB_VERIFY_IK][0] == 0.0 && q.D[PB_VERIFY_IK][1] == hi);
  ck_assert(q.D[PB_VERIFY_I5][0] == 0.0 && q.D[PB_VERIFY_I5][1] == hi);
  /* only k = 1 is attainable (a + b - n = 1), so the ratio range equals Ik's */
  ck_assert(!q.k_seen[0] && q.k_seen[1] && !q.k_seen[2]);
  ck_assert(q.D[PB_VERIFY_I0][0] == 0.0 && q.D[PB_VERIFY_I0][1] == hi);
  /* the cell of that one class: rates over N = 2, K = 1 */
  struct pb_verify_values v;
  ck_assert_int_eq(pb_verify_combine(&q, 1, &v), 0);
  ck_assert(v.H[PB_VERIFY_I5][0] == 0.0 && v.H[PB_VERIFY_I5][1] == 0.5);
  ck_assert(v.L_obs == 0.5 && v.H_obs == 0.0);
  ck_assert(v.dMk[PB_VERIFY_I0][0] == 0.0 && v.dMk[PB_VERIFY_I0][1] == hi);
}
END_TEST

/* Appendix A.6, Table 5 in the order (T, A, B) = labels (0, 1, 2), threshold
 * 0.6.  Clean: correct accepted, two wrong 'A' accepted.  Perturbed: correct
 * accepted, wrong 'A' accepted (0.8), wrong 'B' rejected (0.4).  With the
 * observed k = 0: s = 1, w = 0 pins H at 0; s = 0, w = 1 pins it at 1 (of 3). */
static void table5(struct tclass *t, const int *pert_order)
{
  memset(t, 0, sizeof *t);
  t->n = 3;
  t->y = 0;
  set_clean(t, 0, 0, 0.6f, 0.6f);
  set_clean(t, 1, 1, 0.8f, 0.1f);
  set_clean(t, 2, 1, 0.8f, 0.1f);
  const int32_t pp[3] = {0, 1, 2};
  const float ps[3] = {0.6f, 0.8f, 0.4f}, pm[3] = {0.6f, 0.1f, 0.3f};
  for (int i = 0; i < 3; i++) set_pert(t, i, pp[pert_order[i]], ps[pert_order[i]], pm[pert_order[i]]);
}

START_TEST(test_a6_counterexample)
{
  struct tclass t;
  struct pb_verify_class q;
  /* observed: clean T -> perturbed B (h, rejected), clean A -> perturbed A (s), clean A -> perturbed T (r) */
  const int order_s[3] = {2, 1, 0};
  table5(&t, order_s);
  struct pb_verify_records r = tclass_records(&t, 0.6f);
  ck_assert_int_eq(pb_verify_class_enumerate(&r, &q, NULL), 0);
  ck_assert_int_eq(q.perms, 6);
  ck_assert_int_eq(q.k, 0);
  ck_assert_int_eq(q.s, 1);
  ck_assert_int_eq(q.H_obs, 0);
  ck_assert_int_eq(q.H[PB_VERIFY_I5][0], 0);
  ck_assert_int_eq(q.H[PB_VERIFY_I5][1], 0);
  ck_assert_int_eq(q.H[PB_VERIFY_IK][0], 0);
  ck_assert_int_eq(q.H[PB_VERIFY_IK][1], 1);
  ck_assert_int_eq(q.H[PB_VERIFY_I0][0], 0);
  ck_assert_int_eq(q.H[PB_VERIFY_I0][1], 1);
  ck_assert(isnan(q.D[PB_VERIFY_IK][0]) && isnan(q.D[PB_VERIFY_I5][1]));
  /* k = 1 needs clean T -> perturbed T: numerator 0.6 - 0.6 */
  ck_assert(q.k_seen[0] && q.k_seen[1] && !q.k_seen[2]);
  ck_assert(q.D[PB_VERIFY_I0][0] == 0.0 && q.D[PB_VERIFY_I0][1] == 0.0);
  struct pb_verify_values v;
  ck_assert_int_eq(pb_verify_combine(&q, 1, &v), 0);
  ck_assert(v.H[PB_VERIFY_I5][1] == 0.0 && v.H[PB_VERIFY_IK][1] == 1.0 / 3.0);
  ck_assert(isnan(v.dMk[PB_VERIFY_IK][0]) && isnan(v.dMk_obs));
  ck_assert(v.dMk[PB_VERIFY_I0][0] == 0.0);

  /* observed: clean T -> perturbed A (H event), clean A -> perturbed B (w), clean A -> perturbed T (r) */
  const int order_w[3] = {1, 2, 0};
  table5(&t, order_w);
  r = tclass_records(&t, 0.6f);
  ck_assert_int_eq(pb_verify_class_enumerate(&r, &q, NULL), 0);
  ck_assert_int_eq(q.k, 0);
  ck_assert_int_eq(q.s, 0);
  ck_assert_int_eq(q.H_obs, 1);
  ck_assert_int_eq(q.H[PB_VERIFY_I5][0], 1);
  ck_assert_int_eq(q.H[PB_VERIFY_I5][1], 1);
  ck_assert_int_eq(q.H[PB_VERIFY_IK][0], 0);
  ck_assert_int_eq(q.H[PB_VERIFY_IK][1], 1);
  ck_assert_int_eq(pb_verify_combine(&q, 1, &v), 0);
  ck_assert(v.H[PB_VERIFY_I5][0] == 1.0 / 3.0 && v.H[PB_VERIFY_I5][1] == 1.0 / 3.0);
}
END_TEST

/* Independent reference written here: lexicographic permutations, each
 * bijection's counts and numerator computed from scratch. */
static int next_perm(int32_t *p, int32_t n)
{
  int32_t i = n - 2;
  while (i >= 0 && p[i] > p[i + 1]) i--;
  if (i < 0) return 0;
  int32_t j = n - 1;
  while (p[j] < p[i]) j--;
  int32_t t = p[i]; p[i] = p[j]; p[j] = t;
  for (int32_t a = i + 1, b = n - 1; a < b; a++, b--) t = p[a], p[a] = p[b], p[b] = t;
  return 1;
}

static void upd(int *init, double ext[2], double x)
{
  if (!*init || x < ext[0]) ext[0] = x;
  if (!*init || x > ext[1]) ext[1] = x;
}

START_TEST(test_random_vs_lexicographic)
{
  struct pb_rng g;
  for (int rep = 0; rep < 400; rep++) {
    pb_rng_init(&g, pb_test_seed(), 901, (uint64_t)rep, 0);
    struct tclass t;
    memset(&t, 0, sizeof t);
    t.n = 1 + (int32_t)pb_rng_below(&g, 6);
    t.y = 0;
    const float grid[4] = {0.25f, 0.5f, 0.75f, 1.0f}; /* ties and threshold equality */
    for (int i = 0; i < t.n; i++) {
      set_clean(&t, i, (int32_t)pb_rng_below(&g, 3), grid[pb_rng_below(&g, 4)], grid[pb_rng_below(&g, 4)] / 2);
      set_pert(&t, i, (int32_t)pb_rng_below(&g, 3), grid[pb_rng_below(&g, 4)], grid[pb_rng_below(&g, 4)] / 2);
    }
    struct pb_verify_records r = tclass_records(&t, 0.5f);
    struct pb_verify_class q;
    ck_assert_int_eq(pb_verify_class_enumerate(&r, &q, NULL), 0);
    int32_t p[PB_VERIFY_MAX_N];
    for (int i = 0; i < t.n; i++) p[i] = i;
    double H[3][2], L[3][2], D[3][2];
    int init[3][3] = {{0}};
    int64_t count = 0;
    int kobs = -1, sobs = -1;
    /* the observed key: identity pairing */
    kobs = sobs = 0;
    for (int i = 0; i < t.n; i++) {
      kobs += t.c0[i] && t.c1[i];
      sobs += !t.c0[i] && !t.c1[i] && t.p0[i] == t.p1[i];
    }
    /* second pass with the observed key known */
    for (int i = 0; i < t.n; i++) p[i] = i;
    do {
      int k = 0, s = 0, h = 0, l = 0;
      double x = 0, z = 0;
      for (int i = 0; i < t.n; i++) {
        int j = p[i];
        k += t.c0[i] && t.c1[j];
        s += !t.c0[i] && !t.c1[j] && t.p0[i] == t.p1[j];
        h += t.c0[i] && t.z0[i] && !t.c1[j] && t.z1[j];
        l += t.c0[i] && t.z0[i] && t.c1[j] && !t.z1[j];
      }
      for (int i = 0; i < t.n; i++)
        if (t.c0[i] && t.c1[p[i]]) x += (double)t.m0[i];
      for (int j = 0; j < t.n; j++)
        for (int i = 0; i < t.n; i++)
          if (p[i] == j && t.c0[i] && t.c1[j]) z += (double)t.m1[j];
      count++;
      const int in[3] = {1, k == kobs, k == kobs && s == sobs};
      for (int lv = 0; lv < 3; lv++) {
        if (!in[lv]) continue;
        upd(&init[lv][0], H[lv], h);
        init[lv][0] = 1;
        upd(&init[lv][1], L[lv], l);
        init[lv][1] = 1;
        if (lv > 0) {
          upd(&init[lv][2], D[lv], x - z);
          init[lv][2] = 1;
        } else if (k > 0) {
          upd(&init[lv][2], D[lv], (x - z) / k);
          init[lv][2] = 1;
        }
      }
    } while (next_perm(p, t.n));
    int64_t fact = 1;
    for (int i = 2; i <= t.n; i++) fact *= i;
    ck_assert_int_eq(count, fact);
    ck_assert_int_eq(q.perms, fact);
    ck_assert_int_eq(q.k, kobs);
    ck_assert_int_eq(q.s, sobs);
    for (int lv = 0; lv < 3; lv++) {
      ck_assert_msg(q.H[lv][0] == H[lv][0] && q.H[lv][1] == H[lv][1], "rep %d level %d H", rep, lv);
      ck_assert_msg(q.L[lv][0] == L[lv][0] && q.L[lv][1] == L[lv][1], "rep %d level %d L", rep, lv);
      if (lv > 0 && kobs == 0) ck_assert(isnan(q.D[lv][0]) && isnan(q.D[lv][1]));
      else if (init[lv][2]) ck_assert_msg(q.D[lv][0] == D[lv][0] && q.D[lv][1] == D[lv][1], "rep %d level %d D", rep, lv);
      else ck_assert(isnan(q.D[lv][0]));
    }
  }
}
END_TEST

/* Random tiny cells: class combination (sums and the knapsack on K) against
 * the brute-force Cartesian product, and both against the bounds engine. */
START_TEST(test_combine_vs_cartesian_and_engine)
{
  struct pb_rng g;
  int positive_k0 = 0, mixed_support = 0;
  for (int rep = 0; rep < 300; rep++) {
    pb_rng_init(&g, pb_test_seed(), 902, (uint64_t)rep, 0);
    const int ncls = 1 + (int)pb_rng_below(&g, 4);
    struct tclass t[4];
    struct pb_verify_class q[4];
    struct pb_verify_perm *lists[4];
    int32_t lab[40], p0[40], p1[40];
    float s0[40], s1[40], m0[40], m1[40];
    int32_t n = 0;
    const float tau = 0.5f;
    for (int c = 0; c < ncls; c++) {
      memset(&t[c], 0, sizeof t[c]);
      t[c].n = 1 + (int32_t)pb_rng_below(&g, 4); /* unequal class sizes */
      t[c].y = 10 * (ncls - c);                  /* labels not in index order */
      for (int i = 0; i < t[c].n; i++) {
        /* predictions: the true label or one of two wrong labels (shared across classes) */
        const int32_t w0 = (int32_t)pb_rng_below(&g, 3), w1 = (int32_t)pb_rng_below(&g, 3);
        set_clean(&t[c], i, w0 == 0 ? t[c].y : w0, 0.25f * (1 + (float)pb_rng_below(&g, 4)),
                  0.125f * (1 + (float)pb_rng_below(&g, 4)));
        set_pert(&t[c], i, w1 == 0 ? t[c].y : w1, 0.25f * (1 + (float)pb_rng_below(&g, 4)),
                 0.125f * (1 + (float)pb_rng_below(&g, 4)) + 0.01f * (float)pb_rng_below(&g, 3));
      }
      struct pb_verify_records r = tclass_records(&t[c], tau);
      int64_t f = 1;
      for (int i = 2; i <= t[c].n; i++) f *= i;
      lists[c] = malloc((size_t)f * sizeof *lists[c]);
      ck_assert_int_eq(pb_verify_class_enumerate(&r, &q[c], lists[c]), 0);
    }
    /* interleave the classes' records in the cell (records of a class keep their order) */
    int32_t pos[4] = {0, 0, 0, 0}, left = 0;
    for (int c = 0; c < ncls; c++) left += t[c].n;
    while (left > 0) {
      int c = (int)pb_rng_below(&g, (uint32_t)ncls);
      if (pos[c] == t[c].n) continue;
      int i = pos[c]++;
      lab[n] = t[c].y, p0[n] = t[c].p0[i], p1[n] = t[c].p1[i];
      s0[n] = t[c].s0[i], s1[n] = t[c].s1[i], m0[n] = t[c].m0[i], m1[n] = t[c].m1[i];
      n++, left--;
    }
    /* classes in ascending label order for the combination */
    struct pb_verify_class qs[4];
    struct pb_verify_perm *ls[4];
    for (int c = 0; c < ncls; c++) qs[c] = q[ncls - 1 - c], ls[c] = lists[ncls - 1 - c];
    struct pb_verify_values v, x, e;
    ck_assert_int_eq(pb_verify_combine(qs, ncls, &v), 0);
    ck_assert_int_eq(pb_verify_cartesian(qs, ls, ncls, &x), 0);
    struct pb_cell_input in = {n, lab, p0, s0, m0, p1, s1, m1, tau};
    struct pb_cell_bounds b;
    ck_assert_int_eq(pb_bounds_cell(&in, 1, &b), 0);
    const double eH[3][2] = {{b.H_I0[0], b.H_I0[1]}, {b.H_Ik[0], b.H_Ik[1]}, {b.H_I5[0], b.H_I5[1]}};
    const double eL[3][2] = {{b.L_I0[0], b.L_I0[1]}, {b.L_Ik[0], b.L_Ik[1]}, {b.L_I5[0], b.L_I5[1]}};
    const double eD[3][2] = {{b.dMk_I0[0], b.dMk_I0[1]}, {b.dMk_Ik[0], b.dMk_Ik[1]}, {b.dMk_I5[0], b.dMk_I5[1]}};
    (void)e;
    for (int lv = 0; lv < 3; lv++)
      for (int j = 0; j < 2; j++) {
        ck_assert_msg(v.H[lv][j] == x.H[lv][j] && v.L[lv][j] == x.L[lv][j], "rep %d: counts differ", rep);
        ck_assert_msg(isnan(v.dMk[lv][j]) == isnan(x.dMk[lv][j]), "rep %d: dMk definedness", rep);
        if (!isnan(v.dMk[lv][j])) ck_assert_msg(fabs(v.dMk[lv][j] - x.dMk[lv][j]) <= 1e-15, "rep %d lv %d", rep, lv);
        ck_assert_msg(fabs(v.H[lv][j] - eH[lv][j]) <= 1e-15 && fabs(v.L[lv][j] - eL[lv][j]) <= 1e-15,
                      "rep %d lv %d: engine counts differ", rep, lv);
        ck_assert_msg(isnan(v.dMk[lv][j]) == isnan(eD[lv][j]), "rep %d lv %d: engine dMk definedness", rep, lv);
        if (!isnan(v.dMk[lv][j])) ck_assert_msg(fabs(v.dMk[lv][j] - eD[lv][j]) <= 1e-12, "rep %d lv %d: dMk", rep, lv);
      }
    ck_assert(v.H_obs == x.H_obs && v.L_obs == x.L_obs && fabs(v.H_obs - b.H_obs) <= 1e-15);
    if (v.K == 0 && !isnan(v.dMk[0][0])) positive_k0++;
    if (!isnan(v.dMk[0][0]) && (v.dMk[0][0] < v.dMk[1][0] || v.dMk[0][1] > v.dMk[1][1])) mixed_support++;
    for (int c = 0; c < ncls; c++) free(lists[c]);
  }
  /* the sample must exercise what the knapsack is for */
  ck_assert_int_gt(positive_k0, 0);
  ck_assert_int_gt(mixed_support, 0);
}
END_TEST

START_TEST(test_invalid)
{
  struct pb_verify_class q;
  struct pb_verify_records r = {0};
  ck_assert_int_eq(pb_verify_class_enumerate(&r, &q, NULL), -1);
  struct tclass t = {.n = PB_VERIFY_MAX_N + 1};
  r = tclass_records(&t, 0.5f);
  r.n = PB_VERIFY_MAX_N + 1;
  ck_assert_int_eq(pb_verify_class_enumerate(&r, &q, NULL), -1);
  struct pb_verify_values v;
  ck_assert_int_eq(pb_verify_combine(&q, 0, &v), -1);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("verify");
  TCase *tc = tcase_create("hand-worked");
  tcase_add_test(tc, test_section31);
  tcase_add_test(tc, test_a6_counterexample);
  tcase_add_test(tc, test_invalid);
  suite_add_tcase(s, tc);
  TCase *tr = tcase_create("random");
  tcase_add_test(tr, test_random_vs_lexicographic);
  tcase_add_test(tr, test_combine_vs_cartesian_and_engine);
  suite_add_tcase(s, tr);
  return pb_test_run(s);
}
