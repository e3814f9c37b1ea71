/* Unit tests of the verification enumerator (src/verify/verify_kernel.c): hand-worked
 * classes from seed 000 (Section 3.1, Appendix A.6 / Table 5), an independent
 * lexicographic enumeration written here, the class combination against
 * whole-cell Cartesian products, and agreement with the bounds engine. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pairbound/bounds.h"
#include "pairbound/rng.h"
#include "pairbound/verify.h"
#include "verify/verify_stage_internal.h"
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
  return (struct pb_verify_records){t->n, t->c0, t->z0, t->c1, t->z1, t->p0, t->p1, t->m0, t->m1, t->s1};
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
    pb_rng_init(&g, test_seed(), 901, (uint64_t)rep, 0);
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
    pb_rng_init(&g, test_seed(), 902, (uint64_t)rep, 0);
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
    struct pb_cell_view in = {.index = -1, .n = n, .label = lab, .pred0 = p0, .s0 = s0, .m0 = m0,
                              .pred1 = p1, .s1 = s1, .m1 = m1, .tau = tau};
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
  struct tclass t = {.n = PB_VERIFY_MAX_N}; /* records for the largest valid size, then claim one more */
  r = tclass_records(&t, 0.5f);
  r.n = PB_VERIFY_MAX_N + 1;
  ck_assert_int_eq(pb_verify_class_enumerate(&r, &q, NULL), -1);
  struct pb_verify_values v;
  ck_assert_int_eq(pb_verify_combine(&q, 0, &v), -1);
}
END_TEST

/* ---- rejection policies ------------------------------------------------- */

#include "pairbound/policy.h"

/* Enumerate one class with its partner-set tally and policy counts. */
static void pclass_of(struct tclass *t, float tau0, const struct pb_verify_policy_setup *ps, struct pb_verify_class *q,
                      struct pb_verify_pclass *pq, struct pb_verify_perm *list)
{
  static uint32_t tally[(PB_VERIFY_MAX_N + 1) * (PB_VERIFY_MAX_N + 1) << 6];
  struct pb_verify_records r = tclass_records(t, tau0);
  r.s1 = t->s1;
  ck_assert_int_le(pb_verify_tally_len(t->n), (int64_t)(sizeof tally / sizeof tally[0]));
  ck_assert_int_eq(pb_verify_class_enumerate_sets(&r, q, list, tally), 0);
  ck_assert_int_eq(pb_verify_class_policies(&r, q, tally, ps, pq), 0);
}

/* Cell A of docs (N = 4), policies j: tau .7, l: tau .6, clean tau0 .8.
 * Class 0 (label 0): clean d1 correct .9 (accepted: A), d2 correct .5;
 * perturbed r1 wrong (pred 3) .95, r2 correct .95; observed d1-r1, d2-r2.
 * Both policies accept r1 and r2: d1 with r1 costs lambda under both, d1 with
 * r2 costs 0 under both.  So h_j = h_l in [0, 1], l = 0, and the class's
 * c_j - c_l is always 0: D+ = 0 < J_j^hi - J_l^lo = lambda (strict).
 * Both bijections have k = 1, s = 0: the same at every level.
 * Class 1 (label 1): clean c1 correct .9 (A), c2 wrong (pred 5); perturbed
 * q1 wrong (pred 7) .65, q2 correct .65; observed c1-q1, c2-q2 (k = 0).  j
 * rejects both, l accepts both: c1 with q1 costs 0 under j, lambda under l
 * (H_l); c1 with q2 costs 1 - lambda under j (L_j), 0 under l.  k = 0 forces
 * c1-q1 at Ik and I5; I0 allows both. */
static void cell_a_classes(struct tclass t[2])
{
  memset(t, 0, 2 * sizeof *t);
  t[0].n = 2, t[0].y = 0;
  set_clean(&t[0], 0, 0, 0.9f, 0.9f);
  set_clean(&t[0], 1, 0, 0.5f, 0.5f);
  set_pert(&t[0], 0, 3, 0.95f, 0.01f);
  set_pert(&t[0], 1, 0, 0.95f, 0.95f);
  t[1].n = 2, t[1].y = 1;
  set_clean(&t[1], 0, 1, 0.9f, 0.9f);
  set_clean(&t[1], 1, 5, 0.9f, 0.05f);
  set_pert(&t[1], 0, 7, 0.65f, 0.1f);
  set_pert(&t[1], 1, 1, 0.65f, 0.65f);
}

START_TEST(test_policy_shared_beats_separate)
{
  struct pb_verify_policy_setup ps = {.n_pol = 2, .tau = {0.7f, 0.6f}, .n_lambda = 3, .lambda = {0.5, 0.0, 0.25}};
  struct tclass t[2];
  cell_a_classes(t);
  struct pb_verify_class q[2];
  static struct pb_verify_pclass pq[2];
  for (int c = 0; c < 2; c++) pclass_of(&t[c], 0.8f, &ps, &q[c], &pq[c], NULL);
  /* class 0 alone */
  ck_assert_int_eq(pq[0].u, 1);
  for (int lv = 0; lv < 3; lv++) {
    ck_assert_int_eq(pq[0].perms[lv], 2);
    for (int j = 0; j < 2; j++) {
      ck_assert_int_eq(pq[0].h[lv][j][0], 0);
      ck_assert_int_eq(pq[0].h[lv][j][1], 1);
      ck_assert_int_eq(pq[0].l[lv][j][1], 0);
      ck_assert(pq[0].hmean[lv][j] == 0.5);
    }
    ck_assert_int_eq(pq[0].D[lv][0][0][1][0], 0); /* c_j - c_l = 0 for every bijection */
    ck_assert_int_eq(pq[0].D[lv][0][0][1][1], 0);
    ck_assert_int_eq(pq[0].J[lv][0][0][1][0], 1); /* J_j max: (h, l) = (1, 0) */
    ck_assert_int_eq(pq[0].J[lv][0][1][0][0], 0); /* J_l min: (0, 0) */
    ck_assert_int_eq(pq[0].lemma1[lv][0][0][0], 1);
    ck_assert_int_eq(pq[0].lemma1[lv][0][0][1], 0);
  }
  ck_assert_int_eq(pq[0].h_obs[0], 1);
  ck_assert_int_eq(pq[0].corollary1, 1);
  /* class 1: Ik and I5 hold only the observed bijection */
  ck_assert_int_eq(pq[1].perms[PB_VERIFY_I0], 2);
  ck_assert_int_eq(pq[1].perms[PB_VERIFY_IK], 1);
  ck_assert_int_eq(pq[1].perms[PB_VERIFY_I5], 1);
  ck_assert_int_eq(pq[1].l[PB_VERIFY_I0][0][1], 1);
  ck_assert_int_eq(pq[1].l[PB_VERIFY_IK][0][1], 0);
  ck_assert_int_eq(pq[1].h[PB_VERIFY_IK][1][0], 1);
  ck_assert_int_eq(pq[1].e[0], 0);
  ck_assert_int_eq(pq[1].e[1], 1);

  struct pb_verify_pvalues *v = malloc(sizeof *v);
  ck_assert_int_eq(pb_verify_combine_policies(pq, 2, &ps, v), 0);
  for (int lv = PB_VERIFY_IK; lv <= PB_VERIFY_I5; lv++) {
    /* lambda .5: J_j = [0, .125], J_l = [.125, .25]; D+_jl = -lambda/4 (certified
     * while the separate test gives 0), D+_lj = lambda/4 < 2 lambda/4 */
    ck_assert(v->J[lv][0][0][0] == 0.0 && v->J[lv][0][0][1] == 0.125);
    ck_assert(v->J[lv][0][1][0] == 0.125 && v->J[lv][0][1][1] == 0.25);
    ck_assert(v->D[lv][0][0][1] == -0.125);
    ck_assert(v->D[lv][0][1][0] == 0.125);
    ck_assert(v->D[lv][0][1][0] < v->J[lv][0][1][1] - v->J[lv][0][0][0]);
    /* lambda 0: costs are L only; L_j = 0 at Ik, and c_l is 0 too: D+ = 0 */
    ck_assert(v->D[lv][1][0][1] == 0.0);
    /* means: class 0 h mean 1/2 for both policies, class 1 forced H_l = 1 */
    ck_assert(v->H_mean[lv][0] == 0.5 / 4 && v->H_mean[lv][1] == 1.5 / 4);
    ck_assert(v->L_mean[lv][0] == 0.0);
  }
  /* I0: class 1 may take q2: D+_jl = (1 - lambda)/4, D+_lj = lambda/4 */
  ck_assert(v->D[PB_VERIFY_I0][0][0][1] == 0.125 && v->D[PB_VERIFY_I0][0][1][0] == 0.125);
  ck_assert(v->D[PB_VERIFY_I0][2][0][1] == 0.75 / 4 && v->D[PB_VERIFY_I0][2][1][0] == 0.25 / 4);
  ck_assert(v->L_mean[PB_VERIFY_I0][0] == 0.5 / 4 && v->H_mean[PB_VERIFY_I0][1] == 1.0 / 4);
  /* Lemma 1 at I0, j, lambda .5: class 0 lambda + class 1 (1 - lambda) = 1 count */
  ck_assert(v->J_lemma1[PB_VERIFY_I0][0][0] == 0.25 && v->J[PB_VERIFY_I0][0][0][1] == 0.25);
  /* natural cost: E_j = 1/4 (r1 only), E_l = 2/4; L_j - L_l <= 0 at Ik */
  ck_assert(v->E[0] == 0.25 && v->E[1] == 0.5);
  ck_assert(v->Dn[PB_VERIFY_IK][0][0][1] == 0.5 * (0.25 - 0.5) + 0.5 * 0.0);
  ck_assert(v->Dn[PB_VERIFY_IK][0][0][1] == v->Dn[PB_VERIFY_I5][0][0][1]);
  /* observed: d1-r1 (H under both), c1-q1 (H under l) */
  ck_assert(v->H_obs[0] == 0.25 && v->H_obs[1] == 0.5);

  /* the policy engine agrees (cell of both classes, records interleaved) */
  int32_t lab[4] = {0, 1, 0, 1}, p0[4], p1[4];
  float s0[4], s1[4];
  const int cc[4] = {0, 1, 0, 1}, ii[4] = {0, 0, 1, 1};
  for (int i = 0; i < 4; i++)
    p0[i] = t[cc[i]].p0[ii[i]], p1[i] = t[cc[i]].p1[ii[i]], s0[i] = t[cc[i]].s0[ii[i]], s1[i] = t[cc[i]].s1[ii[i]];
  struct pb_cell_view in = {.index = -1, .n = 4, .label = lab, .pred0 = p0, .s0 = s0, .pred1 = p1, .s1 = s1,
                            .tau = 0.8f};
  struct pb_policy_setup pps = {.n_pol = 2, .tau = ps.tau, .n_lambda = 3, .lambda = ps.lambda};
  struct pb_policy_result *e = malloc(sizeof *e);
  ck_assert_int_eq(pb_policy_cell(&in, &pps, e), 0);
  for (int lv = 0; lv < 3; lv++)
    for (int li = 0; li < 3; li++)
      for (int j = 0; j < 2; j++) {
        ck_assert(fabs(e->J[lv][li][j][1] - v->J[lv][li][j][1]) <= 1e-12);
        ck_assert(fabs(e->J_lemma1[lv][li][j] - v->J_lemma1[lv][li][j]) <= 1e-12);
        for (int o = 0; o < 2; o++) ck_assert(fabs(e->D[lv][li][j][o] - v->D[lv][li][j][o]) <= 1e-12);
      }
  free(e);
  free(v);
}
END_TEST

/* Appendix A.6 / Table 5 class (labels T, A, B = 0, 10, 11), tau0 .6.  Clean:
 * record 1 correct .6 (accepted: A), records 2, 3 wrong 'A' .8.  Perturbed:
 * 1 wrong 'A' .8, 2 correct .6, 3 wrong 'B' .4; observed pairs 1-1, 2-2, 3-3:
 * k = 0, s = 0, w = 1.  Policies j: tau .9 (rejects perturbed 1), l: tau .7
 * (accepts it); perturbed 2 and 3 are rejected by both.  The clean record of
 * A costs: with perturbed 1, 0 under j and lambda under l (H_l); with 2,
 * 1 - lambda under both; with 3, 0 under both.
 * I0: all 6 bijections, A may take any: D+_jl = max(-lambda, 0, 0) = 0.
 * Ik (k = 0): A cannot take perturbed 2 (that is k = 1): 4 bijections,
 * D+_jl = max(-lambda, 0) = 0, J_j = [0, 0], J_l = [0, lambda]/3: no ordering.
 * I5 (s = 0): if A takes 3, a clean 'A' must meet perturbed 1 ('A'): s = 1.
 * So A takes 1: 2 bijections, D+_jl = -lambda/3 < 0, an ordering Ik lacks. */
START_TEST(test_policy_i5_adds_ordering)
{
  struct tclass t;
  memset(&t, 0, sizeof t);
  t.n = 3, t.y = 0;
  set_clean(&t, 0, 0, 0.6f, 0.6f);
  set_clean(&t, 1, 10, 0.8f, 0.1f);
  set_clean(&t, 2, 10, 0.8f, 0.1f);
  set_pert(&t, 0, 10, 0.8f, 0.1f);
  set_pert(&t, 1, 0, 0.6f, 0.6f);
  set_pert(&t, 2, 11, 0.4f, 0.3f);
  struct pb_verify_policy_setup ps = {.n_pol = 2, .tau = {0.9f, 0.7f}, .n_lambda = 2, .lambda = {0.5, 1.0}};
  struct pb_verify_class q;
  static struct pb_verify_pclass pq;
  pclass_of(&t, 0.6f, &ps, &q, &pq, NULL);
  ck_assert_int_eq(q.k, 0);
  ck_assert_int_eq(q.s, 0);
  ck_assert_int_eq(pq.perms[PB_VERIFY_I0], 6);
  ck_assert_int_eq(pq.perms[PB_VERIFY_IK], 4);
  ck_assert_int_eq(pq.perms[PB_VERIFY_I5], 2);
  for (int li = 0; li < 2; li++) {
    ck_assert_int_eq(pq.D[PB_VERIFY_I0][li][0][1][0], 0);   /* (dh, dl) = (0, 0) attains 0 */
    ck_assert_int_eq(pq.D[PB_VERIFY_IK][li][0][1][0], 0);
    ck_assert_int_eq(pq.D[PB_VERIFY_I5][li][0][1][0], -1);  /* forced: h_j - h_l = -1 */
    ck_assert_int_eq(pq.D[PB_VERIFY_I5][li][0][1][1], 0);
  }
  ck_assert_int_eq(pq.h[PB_VERIFY_IK][1][0], 0);
  ck_assert_int_eq(pq.h[PB_VERIFY_IK][1][1], 1);
  ck_assert_int_eq(pq.h[PB_VERIFY_I5][1][0], 1);
  ck_assert_int_eq(pq.h[PB_VERIFY_I5][1][1], 1);
  ck_assert_int_eq(pq.l[PB_VERIFY_I0][0][1], 1);
  ck_assert_int_eq(pq.l[PB_VERIFY_IK][0][1], 0);
  ck_assert_int_eq(pq.corollary1, 1);
  ck_assert_int_eq(pq.n_lvec[0], 1); /* (l_j, l_l) = (0, 0) only, at Ik and at I5 */
  /* means of h_l: 2 of 6 bijections at I0, 2 of 4 at Ik, all at I5 */
  ck_assert(pq.hmean[PB_VERIFY_I0][1] == 2.0 / 6 && pq.hmean[PB_VERIFY_IK][1] == 0.5 && pq.hmean[PB_VERIFY_I5][1] == 1.0);
  struct pb_verify_pvalues *v = malloc(sizeof *v);
  ck_assert_int_eq(pb_verify_combine_policies(&pq, 1, &ps, v), 0);
  ck_assert(v->D[PB_VERIFY_IK][0][0][1] == 0.0);
  ck_assert(v->J[PB_VERIFY_IK][0][0][1] - v->J[PB_VERIFY_IK][0][1][0] == 0.0); /* separate test: no ordering at Ik */
  ck_assert(v->D[PB_VERIFY_I5][0][0][1] == -0.5 / 3);
  ck_assert(v->D[PB_VERIFY_I5][1][0][1] == -1.0 / 3);
  /* Corollary 1: E_j = 0, E_l = 1/3; J' and D'+ equal at Ik and I5 */
  ck_assert(v->Dn[PB_VERIFY_IK][0][0][1] == -0.5 / 3 && v->Dn[PB_VERIFY_I5][0][0][1] == -0.5 / 3);
  free(v);
}
END_TEST

/* Random tiny cells: class combination against the whole-cell Cartesian
 * brute force and against the policy engine; Lemma 1 and Corollary 1 hold. */
START_TEST(test_policy_random_vs_cartesian_and_engine)
{
  struct pb_rng g;
  struct pb_verify_pvalues *v = malloc(sizeof *v), *x = malloc(sizeof *x);
  struct pb_policy_result *e = malloc(sizeof *e);
  static struct pb_verify_pclass pq[4];
  int strict = 0, i5_gain = 0;
  for (int rep = 0; rep < 300; rep++) {
    pb_rng_init(&g, test_seed(), 903, (uint64_t)rep, 0);
    const int ncls = 1 + (int)pb_rng_below(&g, 3);
    struct pb_verify_policy_setup ps = {.n_pol = 3, .tau = {0.25f, 0.5f, 0.75f}, .n_lambda = 3, .lambda = {0, 0.5, 0.7}};
    struct tclass t[4];
    struct pb_verify_class q[4];
    struct pb_verify_perm *lists[4];
    uint16_t W[4][PB_VERIFY_MAX_POL], R[4][PB_VERIFY_MAX_POL];
    int32_t lab[40], p0[40], p1[40];
    float s0[40], s1[40];
    int32_t n = 0;
    for (int c = 0; c < ncls; c++) {
      memset(&t[c], 0, sizeof t[c]);
      t[c].n = 1 + (int32_t)pb_rng_below(&g, 4);
      t[c].y = 10 * c;
      for (int i = 0; i < t[c].n; i++) {
        const int32_t w0 = (int32_t)pb_rng_below(&g, 3), w1 = (int32_t)pb_rng_below(&g, 3);
        set_clean(&t[c], i, w0 == 0 ? t[c].y : w0, 0.25f * (1 + (float)pb_rng_below(&g, 4)), 0.5f);
        set_pert(&t[c], i, w1 == 0 ? t[c].y : w1, 0.25f * (1 + (float)pb_rng_below(&g, 4)), 0.5f);
      }
      int64_t f = 1;
      for (int i = 2; i <= t[c].n; i++) f *= i;
      lists[c] = malloc((size_t)f * sizeof *lists[c]);
      pclass_of(&t[c], 0.5f, &ps, &q[c], &pq[c], lists[c]);
      ck_assert_int_eq(pq[c].corollary1, 1);
      memcpy(W[c], pq[c].W, sizeof W[c]);
      memcpy(R[c], pq[c].R, sizeof R[c]);
      for (int i = 0; i < t[c].n; i++) {
        lab[n] = t[c].y, p0[n] = t[c].p0[i], p1[n] = t[c].p1[i], s0[n] = t[c].s0[i], s1[n] = t[c].s1[i];
        n++;
      }
    }
    ck_assert_int_eq(pb_verify_combine_policies(pq, ncls, &ps, v), 0);
    ck_assert_int_eq(pb_verify_cartesian_policies(q, lists, (const uint16_t(*)[PB_VERIFY_MAX_POL])W,
                                                  (const uint16_t(*)[PB_VERIFY_MAX_POL])R, ncls, &ps, x), 0);
    struct pb_cell_view in = {.index = -1, .n = n, .label = lab, .pred0 = p0, .s0 = s0, .pred1 = p1, .s1 = s1,
                              .tau = 0.5f};
    struct pb_policy_setup pps = {.n_pol = ps.n_pol, .tau = ps.tau, .n_lambda = ps.n_lambda, .lambda = ps.lambda};
    ck_assert_int_eq(pb_policy_cell(&in, &pps, e), 0);
    for (int lv = 0; lv < 3; lv++)
      for (int j = 0; j < ps.n_pol; j++) {
        for (int b = 0; b < 2; b++) {
          ck_assert_msg(v->H[lv][j][b] == x->H[lv][j][b] && v->H[lv][j][b] == e->H[lv][j][b], "rep %d H", rep);
          ck_assert_msg(v->L[lv][j][b] == x->L[lv][j][b] && v->L[lv][j][b] == e->L[lv][j][b], "rep %d L", rep);
        }
        ck_assert_msg(fabs(v->H_mean[lv][j] - x->H_mean[lv][j]) <= 1e-12 && fabs(v->H_mean[lv][j] - e->H_mean[lv][j]) <= 1e-12,
                      "rep %d lv %d H mean %.17g %.17g %.17g", rep, lv, v->H_mean[lv][j], x->H_mean[lv][j], e->H_mean[lv][j]);
        ck_assert_msg(fabs(v->L_mean[lv][j] - x->L_mean[lv][j]) <= 1e-12 && fabs(v->L_mean[lv][j] - e->L_mean[lv][j]) <= 1e-12,
                      "rep %d L mean", rep);
        for (int li = 0; li < ps.n_lambda; li++) {
          for (int b = 0; b < 2; b++) {
            ck_assert_msg(fabs(v->J[lv][li][j][b] - x->J[lv][li][j][b]) <= 1e-12, "rep %d J vs Cartesian", rep);
            ck_assert_msg(fabs(v->J[lv][li][j][b] - e->J[lv][li][j][b]) <= 1e-12, "rep %d J vs engine", rep);
            ck_assert_msg(fabs(v->Jn[lv][li][j][b] - e->Jn[lv][li][j][b]) <= 1e-12, "rep %d J'", rep);
          }
          /* Lemma 1 from the enumerated intervals = the direct maximum = the engine's Eq. 8 */
          ck_assert_msg(fabs(v->J_lemma1[lv][li][j] - v->J[lv][li][j][1]) <= 1e-12, "rep %d Lemma 1", rep);
          ck_assert_msg(fabs(v->J_lemma1[lv][li][j] - e->J_lemma1[lv][li][j]) <= 1e-12, "rep %d Eq. 8 vs engine", rep);
          for (int o = 0; o < ps.n_pol; o++) {
            ck_assert_msg(fabs(v->D[lv][li][j][o] - x->D[lv][li][j][o]) <= 1e-12, "rep %d D+ vs Cartesian", rep);
            ck_assert_msg(fabs(v->D[lv][li][j][o] - e->D[lv][li][j][o]) <= 1e-12, "rep %d D+ vs engine", rep);
            ck_assert_msg(fabs(v->Dn[lv][li][j][o] - x->Dn[lv][li][j][o]) <= 1e-12 &&
                          fabs(v->Dn[lv][li][j][o] - e->Dn[lv][li][j][o]) <= 1e-12, "rep %d D'+", rep);
            if (o != j && v->D[lv][li][j][o] < v->J[lv][li][j][1] - v->J[lv][li][o][0] - 1e-12) strict++;
            if (lv == 2 && v->D[2][li][j][o] < -1e-12 && !(v->D[1][li][j][o] < -1e-12)) i5_gain++;
          }
        }
      }
    for (int c = 0; c < ncls; c++) free(lists[c]);
  }
  /* the sample must contain what the comparison is about */
  ck_assert_int_gt(strict, 0);
  ck_assert_int_gt(i5_gain, 0);
  free(v), free(x), free(e);
}
END_TEST

/* Appendix J under label sets (docs/verify.md, "Label sets"), worked by hand.
 * Class 0, tau = .5, images (clean pred, S, M; perturbed pred, S', M'; set):
 *   i1 (0, .9, .9; 0, .4, .4; {0})    i2 (5, .8, .1; 7, .9, .05; {0,5})
 *   i3 (7, .9, .2; 8, .3, .1; {0})    i4 (0, .9, .9; 3, .9, .01; {}: left out)
 * Under sets the clean records are A1, A2 correct and accepted, A3 wrong (7);
 * the perturbed B1 correct and rejected, B2 wrong (7) accepted, B3 wrong (8)
 * rejected.  Observed: k = 1 (A1-B1), s = 0.  Of the 6 bijections (partners
 * of A1, A2, A3): (B1,B2,B3) k1 s0 H1 L1 D .9-.4; (B1,B3,B2) k1 s1 H0 L1
 * D .9-.4; (B2,B1,B3) k1 s0 H1 L1 D .1-.4; (B2,B3,B1) k0; (B3,B1,B2) k1 s1
 * H0 L1 D .1-.4; (B3,B2,B1) k0.  So at Ik H [0, 1], at I5 H [1, 1] (strictly
 * narrower), L [1, 1] and D [.1-.4, .9-.4] at both.  Under single labels
 * (every set {0}) A2 is wrong, A1-B1 is forced at Ik and H is [0, 0] at both
 * levels: not narrower.  Class 1 (four images, set {1}) is larger than
 * --max-class 3: counted, not enumerated; i4 would make class 0 such a class. */
START_TEST(test_lsets_cell_hand)
{
  const int32_t label[8] = {0, 1, 0, 1, 0, 1, 0, 1};
  const int32_t p0[8] = {0, 1, 5, 1, 7, 1, 0, 1}, p1[8] = {0, 1, 7, 1, 8, 1, 3, 1};
  const float s0[8] = {.9f, .9f, .8f, .9f, .9f, .9f, .9f, .9f}, s1[8] = {.4f, .9f, .9f, .9f, .3f, .9f, .9f, .9f};
  const float m0[8] = {.9f, .9f, .1f, .9f, .2f, .9f, .9f, .9f}, m1[8] = {.4f, .9f, .05f, .9f, .1f, .9f, .01f, .9f};
  const struct pb_cell_view d = {.index = -1, .n = 8, .label = label, .pred0 = p0, .s0 = s0, .m0 = m0,
                                 .pred1 = p1, .s1 = s1, .m1 = m1, .tau = .5f};
  /* sets per record in cell order: {0}, {1}, {0,5}, {1}, {0}, {1}, {}, {1}; then every 5 dropped */
  const int64_t off[9] = {0, 1, 2, 4, 5, 6, 7, 7, 8};
  const int32_t sets[2][8] = {{0, 1, 0, 5, 1, 0, 1, 1}, {0, 1, 0, 1, 0, 1, 1, 0}};
  const int64_t off1[9] = {0, 1, 2, 3, 4, 5, 6, 6, 7};
  for (int conv = 0; conv < 2; conv++) {
    double rec[PB_VF_N] = {0};
    char fail[PB_VERIFY__MSG] = "";
    struct pb_verify__cellstate cs = {rec, fail, "hand"};
    struct pb_verify_class cls[2];
    int64_t out[PB_VLS_N];
    pb_verify__lsets_cell(&d, conv ? off1 : off, sets[conv], 10, 3, &cs, cls, out);
    ck_assert_msg(rec[PB_VF_FAILED] == 0, "%s", fail);
    ck_assert_int_eq(out[PB_VLS_CELLS], 1);
    ck_assert_int_eq(out[PB_VLS_CLASSES], 2);
    ck_assert_int_eq(out[PB_VLS_ENUMERATED], 1);
    ck_assert_int_eq(out[PB_VLS_SKIPPED], 1);
    ck_assert_int_eq(out[PB_VLS_AGREE], 1);
    ck_assert_int_eq(out[PB_VLS_NARROWER], conv == 0);
    const struct pb_verify_class *q = &cls[0];
    ck_assert_int_eq(q->n, 3);
    ck_assert_int_eq(q->a, conv ? 1 : 2);
    ck_assert_int_eq(q->k, 1);
    ck_assert_int_eq(q->s, 0);
    ck_assert_int_eq(q->H[PB_VERIFY_IK][0], 0);
    ck_assert_int_eq(q->H[PB_VERIFY_IK][1], conv ? 0 : 1);
    ck_assert_int_eq(q->H[PB_VERIFY_I5][0], conv ? 0 : 1);
    ck_assert_int_eq(q->H[PB_VERIFY_I5][1], conv ? 0 : 1);
    for (int lv = PB_VERIFY_IK; lv <= PB_VERIFY_I5; lv++) {
      ck_assert_int_eq(q->L[lv][0], 1);
      ck_assert_int_eq(q->L[lv][1], 1);
      /* single labels: only A1-B1 is correct-correct */
      ck_assert(q->D[lv][0] == (conv ? (double).9f : (double).1f) - (double).4f);
      ck_assert(q->D[lv][1] == (double).9f - (double).4f);
    }
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("verify");
  TCase *tc = tcase_create("hand-worked");
  tcase_add_test(tc, test_section31);
  tcase_add_test(tc, test_a6_counterexample);
  tcase_add_test(tc, test_invalid);
  tcase_add_test(tc, test_lsets_cell_hand);
  tcase_add_test(tc, test_policy_shared_beats_separate);
  tcase_add_test(tc, test_policy_i5_adds_ordering);
  suite_add_tcase(s, tc);
  TCase *tr = tcase_create("random");
  tcase_add_test(tr, test_random_vs_lexicographic);
  tcase_add_test(tr, test_combine_vs_cartesian_and_engine);
  tcase_add_test(tr, test_policy_random_vs_cartesian_and_engine);
  suite_add_tcase(s, tr);
  return pb_test_run(s);
}
