/* Unit tests for the identification bounds (src/bounds/bounds_kernel.c, src/bounds/bounds_kernel_i5.c,
 * src/bounds/bounds_kernel_witness.c).
 *
 * Expected values come from hand derivations of the seed's worked cases or
 * from brute-force enumeration of every within-class bijection, implemented
 * here and nowhere else.  Random cells use dyadic scores (multiples of 1/16)
 * so that every floating sum is exact and 1e-12 is a safe tolerance.
 * The seed is PB_TEST_SEED (default 20260908) and is always printed. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/bounds.h"
#include "pairbound/calibration.h"
#include "pairbound/error.h"

#include "../../src/bounds/bounds_internal.h"
#include "testrng.h"

#define TOL 1e-12
#define MAXN 16
#define MAXC 4

/* ------------------------------------------------------------------ utils */

static int near(double a, double b)
{
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return fabs(a - b) <= TOL;
}

/* ASSERT_NEAR(got, expected [, printf-style context]) */
#define ASSERT_NEAR(a, b, ...)                                                          \
  do {                                                                                  \
    const double got_ = (a), exp_ = (b);                                                \
    if (!near(got_, exp_)) {                                                            \
      char ctx_[256];                                                                   \
      snprintf(ctx_, sizeof ctx_, " " __VA_ARGS__);                                     \
      ck_abort_msg("%s = %.17g, expected %.17g;%s", #a, got_, exp_, ctx_);              \
    }                                                                                   \
  } while (0)

struct tcell {
  int n;
  int32_t label[MAXN], pred0[MAXN], pred1[MAXN];
  float s0[MAXN], m0[MAXN], s1[MAXN], m1[MAXN];
  float tau;
};

static struct pb_cell_view as_input(const struct tcell *c)
{
  return (struct pb_cell_view){.index = -1, .n = c->n, .label = c->label,
                               .pred0 = c->pred0, .s0 = c->s0, .m0 = c->m0,
                               .pred1 = c->pred1, .s1 = c->s1, .m1 = c->m1, .tau = c->tau};
}

/* ------------------------------------------------------------ brute force */

/* Per-permutation statistics of one class. */
struct pstat {
  int cnt[5]; /* h r s w k */
  int H, L;
  double num; /* sum of M - M' over k pairs */
};

struct bclass {
  int nc, mem[MAXN];
  int np;
  struct pstat *ps;
  struct pstat obs;
};

static void class_stat(const struct tcell *c, const struct bclass *b, const int *perm,
                       struct pstat *st)
{
  memset(st, 0, sizeof *st);
  for (int i = 0; i < b->nc; i++) {
    int ci = b->mem[i], pj = b->mem[perm[i]];
    int y = c->label[ci];
    int c0 = c->pred0[ci] == y, c1 = c->pred1[pj] == y;
    int z0 = c->s0[ci] >= c->tau, z1 = c->s1[pj] >= c->tau;
    if (c0 && !c1) {
      st->cnt[0]++;
      st->H += z0 && z1;
    } else if (!c0 && c1) {
      st->cnt[1]++;
    } else if (!c0 && !c1) {
      st->cnt[c->pred0[ci] == c->pred1[pj] ? 2 : 3]++;
    } else {
      st->cnt[4]++;
      st->L += z0 && !z1;
      st->num += (double)c->m0[ci] - (double)c->m1[pj];
    }
  }
}

static void gen_perms(struct bclass *b, const struct tcell *c, int *perm, int *used, int depth)
{
  if (depth == b->nc) {
    class_stat(c, b, perm, &b->ps[b->np++]);
    return;
  }
  for (int j = 0; j < b->nc; j++) {
    if (used[j]) continue;
    used[j] = 1;
    perm[depth] = j;
    gen_perms(b, c, perm, used, depth + 1);
    used[j] = 0;
  }
}

static int factorial(int n) { return n <= 1 ? 1 : n * factorial(n - 1); }

struct brute {
  double H[3][2], L[3][2], D[3][2]; /* levels I0, Ik, I5; D NaN if no K > 0 */
  double Havg, Lavg, Dind;          /* uniform-permutation averages; Dind = E[num]/E[K] */
  long Kmin, Kmax;
  struct pstat obs;                 /* observed totals */
};

/* Every product of within-class permutations of the whole cell. */
static void brute_cell(const struct tcell *c, struct brute *out)
{
  struct bclass cls[MAXC];
  int ncls = 0;
  for (int i = 0; i < c->n; i++) {
    int f = -1;
    for (int q = 0; q < ncls; q++)
      if (c->label[cls[q].mem[0]] == c->label[i]) f = q;
    if (f < 0) {
      ck_assert_int_lt(ncls, MAXC);
      f = ncls++;
      cls[f].nc = 0;
    }
    cls[f].mem[cls[f].nc++] = i;
  }
  for (int q = 0; q < ncls; q++) {
    int perm[MAXN], used[MAXN] = {0};
    cls[q].ps = malloc(sizeof(struct pstat) * (size_t)factorial(cls[q].nc));
    cls[q].np = 0;
    gen_perms(&cls[q], c, perm, used, 0);
    int id[MAXN];
    for (int i = 0; i < cls[q].nc; i++) id[i] = i;
    class_stat(c, &cls[q], id, &cls[q].obs);
  }
  for (int l = 0; l < 3; l++)
    for (int e = 0; e < 2; e++) {
      out->H[l][e] = out->L[l][e] = out->D[l][e] = e ? -INFINITY : INFINITY;
    }
  double sH = 0, sL = 0, snum = 0, sK = 0, count = 0;
  out->Kmin = 1 << 30;
  out->Kmax = -1;
  int odo[MAXC] = {0};
  for (;;) {
    int H = 0, L = 0, K = 0, ik = 1, i5 = 1;
    double num = 0;
    for (int q = 0; q < ncls; q++) {
      const struct pstat *p = &cls[q].ps[odo[q]];
      H += p->H;
      L += p->L;
      K += p->cnt[4];
      num += p->num;
      if (p->cnt[4] != cls[q].obs.cnt[4]) ik = 0;
      if (memcmp(p->cnt, cls[q].obs.cnt, sizeof p->cnt) != 0) i5 = 0;
    }
    int lev[3] = {1, ik, i5};
    for (int l = 0; l < 3; l++) {
      if (!lev[l]) continue;
      double h = (double)H / c->n, ll = (double)L / c->n;
      if (h < out->H[l][0]) out->H[l][0] = h;
      if (h > out->H[l][1]) out->H[l][1] = h;
      if (ll < out->L[l][0]) out->L[l][0] = ll;
      if (ll > out->L[l][1]) out->L[l][1] = ll;
      if (K > 0) {
        double d = num / K;
        if (d < out->D[l][0]) out->D[l][0] = d;
        if (d > out->D[l][1]) out->D[l][1] = d;
      }
    }
    sH += H;
    sL += L;
    snum += num;
    sK += K;
    count += 1;
    if (K < out->Kmin) out->Kmin = K;
    if (K > out->Kmax) out->Kmax = K;
    int q = 0;
    while (q < ncls && ++odo[q] == cls[q].np) odo[q++] = 0;
    if (q == ncls) break;
  }
  for (int l = 0; l < 3; l++)
    if (isinf(out->D[l][0])) out->D[l][0] = out->D[l][1] = NAN;
  out->Havg = sH / count / c->n;
  out->Lavg = sL / count / c->n;
  out->Dind = sK > 0 ? snum / sK : NAN;
  memset(&out->obs, 0, sizeof out->obs);
  for (int q = 0; q < ncls; q++) {
    for (int e = 0; e < 5; e++) out->obs.cnt[e] += cls[q].obs.cnt[e];
    out->obs.H += cls[q].obs.H;
    out->obs.L += cls[q].obs.L;
    out->obs.num += cls[q].obs.num;
    free(cls[q].ps);
  }
}

/* -------------------------------------------------------- cell assertions */

static int contains(const double iv[2], double x)
{
  return iv[0] - TOL <= x && x <= iv[1] + TOL;
}

static int subset(const double in[2], const double outer[2])
{
  if (isnan(in[0])) return 1;
  return outer[0] - TOL <= in[0] && in[1] <= outer[1] + TOL;
}

/* The H count of the bijection perm (clean i with perturbed perm[i]) straight
 * from the definition; -1 unless perm is a within-class bijection that keeps
 * every class's observed k (and, with keep_s, its observed s). */
static int witness_h(const struct tcell *c, const int32_t *perm, int keep_s)
{
  int used[MAXN] = {0}, H = 0;
  for (int i = 0; i < c->n; i++) {
    const int j = perm[i];
    if (j < 0 || j >= c->n || used[j] || c->label[j] != c->label[i]) return -1;
    used[j] = 1;
    const int32_t y = c->label[i];
    H += c->pred0[i] == y && c->s0[i] >= c->tau && c->pred1[j] != y && c->s1[j] >= c->tau;
  }
  for (int i = 0; i < c->n; i++) { /* class of record i: its k and s, observed and under perm */
    const int32_t y = c->label[i];
    int k0 = 0, k1 = 0, s0 = 0, s1 = 0;
    for (int x = 0; x < c->n; x++) {
      if (c->label[x] != y) continue;
      const int32_t p0 = c->pred0[x], q0 = c->pred1[x], q1 = c->pred1[perm[x]];
      k0 += p0 == y && q0 == y;
      k1 += p0 == y && q1 == y;
      s0 += p0 != y && q0 != y && p0 == q0;
      s1 += p0 != y && q1 != y && p0 == q1;
    }
    if (k0 != k1 || (keep_s && s0 != s1)) return -1;
  }
  return H;
}

/* The kernel's four witnesses are bijections of their level whose H counts
 * are @p ends (Ik lower, upper, I5 lower, upper); without I5 only the Ik
 * ones, identical, and -1 for the I5 ones. */
static void check_witnesses(const struct tcell *c, const int ends[PB_WITNESS_N], const char *tag)
{
  int32_t w[2][PB_WITNESS_N][MAXN];
  int32_t *const p1[PB_WITNESS_N] = {w[0][0], w[0][1], w[0][2], w[0][3]};
  int32_t *const p0[PB_WITNESS_N] = {w[1][0], w[1][1], w[1][2], w[1][3]};
  struct pb_cell_view in = as_input(c);
  ck_assert_int_eq(pb_bounds_witness_cell(&in, 1, p1), 0);
  ck_assert_int_eq(pb_bounds_witness_cell(&in, 0, p0), 0);
  for (int v = 0; v < PB_WITNESS_N; v++) {
    const int H = witness_h(c, p1[v], v >= PB_WITNESS_I5_LO);
    ck_assert_msg(H == ends[v], "%s: witness %d has H count %d, expected %d (-1: not a bijection of its level)",
                  tag, v, H, ends[v]);
    for (int i = 0; i < c->n; i++)
      ck_assert(v < PB_WITNESS_I5_LO ? p0[v][i] == p1[v][i] : p0[v][i] == -1);
  }
}

/* Compare every endpoint with the enumeration and check the structural
 * properties (nesting, observed values inside, Theorem 1, Eq. 9). */
static void check_cell_against_brute(const struct tcell *c, const char *tag)
{
  struct pb_cell_view in = as_input(c);
  struct pb_cell_bounds b, b0;
  ck_assert_int_eq(pb_bounds_cell(&in, 1, &b), 0);
  ck_assert_int_eq(pb_bounds_cell(&in, 0, &b0), 0);
  struct brute e;
  brute_cell(c, &e);

  ck_assert_msg(b.h == e.obs.cnt[0] && b.r == e.obs.cnt[1] && b.s == e.obs.cnt[2] &&
                    b.w == e.obs.cnt[3] && b.k == e.obs.cnt[4],
                "%s: five-state totals", tag);
  ASSERT_NEAR(b.H_obs, (double)e.obs.H / c->n, "%s", tag);
  ASSERT_NEAR(b.L_obs, (double)e.obs.L / c->n, "%s", tag);
  ASSERT_NEAR(b.dMk_obs, e.obs.cnt[4] ? e.obs.num / e.obs.cnt[4] : NAN, "%s", tag);

  const double *HL[3] = {b.H_I0, b.H_Ik, b.H_I5};
  const double *LL[3] = {b.L_I0, b.L_Ik, b.L_I5};
  const double *DL[3] = {b.dMk_I0, b.dMk_Ik, b.dMk_I5};
  for (int l = 0; l < 3; l++)
    for (int k = 0; k < 2; k++) {
      ASSERT_NEAR(HL[l][k], e.H[l][k], "%s H level %d end %d", tag, l, k);
      ASSERT_NEAR(LL[l][k], e.L[l][k], "%s L level %d end %d", tag, l, k);
      ASSERT_NEAR(DL[l][k], e.D[l][k], "%s dMk level %d end %d", tag, l, k);
    }
  /* Nesting I5 within Ik within I0 and observed values inside every interval. */
  for (int l = 0; l < 2; l++) {
    ck_assert_msg(subset(HL[l + 1], HL[l]), "%s: H nesting %d", tag, l);
    ck_assert_msg(subset(LL[l + 1], LL[l]), "%s: L nesting %d", tag, l);
    ck_assert_msg(subset(DL[l + 1], DL[l]), "%s: dMk nesting %d", tag, l);
  }
  for (int l = 0; l < 3; l++) {
    ck_assert_msg(contains(HL[l], b.H_obs), "%s: H_obs outside level %d", tag, l);
    ck_assert_msg(contains(LL[l], b.L_obs), "%s: L_obs outside level %d", tag, l);
    if (b.k > 0) ck_assert_msg(contains(DL[l], b.dMk_obs), "%s: dMk_obs outside %d", tag, l);
  }
  /* Theorem 1: L and dM_k at I5 equal Ik (here bit for bit). */
  for (int k = 0; k < 2; k++) {
    ck_assert_msg(b.L_I5[k] == b.L_Ik[k], "%s: L I5 != Ik", tag);
    ck_assert_msg((isnan(b.dMk_I5[k]) && isnan(b.dMk_Ik[k])) || b.dMk_I5[k] == b.dMk_Ik[k],
                  "%s: dMk I5 != Ik", tag);
  }
  /* Independent values = uniform-permutation expectations (A.2, H.2). */
  ASSERT_NEAR(b.H_ind, e.Havg, "%s", tag);
  ASSERT_NEAR(b.L_ind, e.Lavg, "%s", tag);
  ASSERT_NEAR(b.dMk_ind, e.Dind, "%s", tag);
  if (b.k > 0) ASSERT_NEAR(b.W + b.V, b.dMk_obs - b.dMk_ind, "%s: Eq. 9", tag);
  else ck_assert_msg(isnan(b.W) && isnan(b.V), "%s: W,V must be NaN when K = 0", tag);
  ASSERT_NEAR(b.K_width_class, (double)(e.Kmax - e.Kmin) / c->n, "%s", tag);
  /* witnesses attain the enumerated ends (counts: ends times n, exact) */
  const int ends[PB_WITNESS_N] = {(int)lround(e.H[1][0] * c->n), (int)lround(e.H[1][1] * c->n),
                                  (int)lround(e.H[2][0] * c->n), (int)lround(e.H[2][1] * c->n)};
  check_witnesses(c, ends, tag);

  /* want_i5 = 0: identical non-I5 fields, NaN for the rest. */
  ck_assert(isnan(b0.H_I5[0]) && isnan(b0.H_I5[1]) && isnan(b0.L_I5[0]) && isnan(b0.dMk_I5[1]));
  ck_assert(isnan(b0.dMk_I0[0]) && isnan(b0.dMk_I0[1]));
  for (int k = 0; k < 2; k++) {
    ck_assert(b0.H_Ik[k] == b.H_Ik[k] && b0.L_Ik[k] == b.L_Ik[k] && b0.H_I0[k] == b.H_I0[k]);
    ck_assert((isnan(b.dMk_Ik[k]) && isnan(b0.dMk_Ik[k])) || b0.dMk_Ik[k] == b.dMk_Ik[k]);
  }
}

/* Observed marginal statistics straight from their definitions. */
static void check_marginals(const struct tcell *c, const struct pb_cell_bounds *b)
{
  int a0 = 0, a1 = 0, fl = 0, E = 0;
  double A = 0, m0 = 0, m1 = 0;
  for (int i = 0; i < c->n; i++) {
    a0 += c->pred0[i] == c->label[i];
    a1 += c->pred1[i] == c->label[i];
    fl += c->pred0[i] != c->pred1[i];
    E += c->pred1[i] != c->label[i] && c->s1[i] >= c->tau;
    A += fabs((double)c->s0[i] - c->s1[i]);
    m0 += c->s0[i];
    m1 += c->s1[i];
  }
  m0 /= c->n;
  m1 /= c->n;
  double sxy = 0, sxx = 0, syy = 0;
  for (int i = 0; i < c->n; i++) {
    sxy += (c->s0[i] - m0) * (c->s1[i] - m1);
    sxx += (c->s0[i] - m0) * (c->s0[i] - m0);
    syy += (c->s1[i] - m1) * (c->s1[i] - m1);
  }
  ASSERT_NEAR(b->acc0, (double)a0 / c->n);
  ASSERT_NEAR(b->acc1, (double)a1 / c->n);
  ASSERT_NEAR(b->F, (double)fl / c->n);
  ASSERT_NEAR(b->E, (double)E / c->n);
  ASSERT_NEAR(b->A, A / c->n);
  if (sxx > 0 && syy > 0) ck_assert(fabs(b->Q - sxy / sqrt(sxx * syy)) < 1e-9);
  else ck_assert(isnan(b->Q));
  int A_ = a0, B_ = a1, N = c->n;
  int kmin = A_ + B_ - N > 0 ? A_ + B_ - N : 0, kmax = A_ < B_ ? A_ : B_;
  ASSERT_NEAR(b->K_width_global, (double)(kmax - kmin) / N);
}

/* ---------------------------------------------------- worked seed examples */

static void set_rec(struct tcell *c, int i, int32_t y, int32_t p0, float s0, float m0, int32_t p1,
                    float s1, float m1)
{
  c->label[i] = y;
  c->pred0[i] = p0;
  c->s0[i] = s0;
  c->m0[i] = m0;
  c->pred1[i] = p1;
  c->s1[i] = s1;
  c->m1[i] = m1;
}

/* Table 2's ds_s, ds_w and the independent counterparts (H.2) on a cell
 * worked by hand.  Class 0 (three images): clean (pred, S) = (0, .75),
 * (1, .5), (2, .625); perturbed (1, .25), (1, .375), (3, .25).  Class 5
 * (one image): (5, 1) and (5, .875), correct on both sides.  Observed pairs:
 * h, s (d = .125), w (d = .375), k.  Independent: the nine class-0
 * combinations with weight 1/3 and the class-5 one with weight 1:
 * same-label combinations 2 + 1 (F_ind = (9 - 2)/3 / 4 = 7/12); sum of
 * |S - S'| 3 + .125 weighted (1 + .125) / 4; overlap a b / n = 0 + 1; wrong
 * same-label combinations (.5,.25) and (.5,.375): 2 of them, sum .375; wrong
 * different-label ones: four, sum .25 + .375 + .25 + .375 = 1.25.  Q_ind:
 * cell means .71875 and .4375, class means (.625, 7/24) and (1, .875). */
START_TEST(test_table2_hand)
{
  struct tcell c = {.n = 4, .tau = 0.6f,
                    .label = {0, 0, 0, 5}, .pred0 = {0, 1, 2, 5}, .pred1 = {1, 1, 3, 5},
                    .s0 = {0.75f, 0.5f, 0.625f, 1.0f}, .s1 = {0.25f, 0.375f, 0.25f, 0.875f},
                    .m0 = {0.75f, 0.25f, 0.125f, 1.0f}, .m1 = {0.125f, 0.125f, 0.0625f, 0.875f}};
  struct pb_cell_view in = as_input(&c);
  struct pb_cell_bounds b;
  ck_assert_int_eq(pb_bounds_cell(&in, 0, &b), 0);
  ck_assert_int_eq(b.s, 1);
  ck_assert_int_eq(b.w, 1);
  ASSERT_NEAR(b.ds_s, 0.125);
  ASSERT_NEAR(b.ds_w, 0.375);
  ASSERT_NEAR(b.F, 0.5);
  ASSERT_NEAR(b.F_ind, 7.0 / 12.0);
  ASSERT_NEAR(b.A_ind, 1.125 / 4.0);
  ASSERT_NEAR(b.k_ind, 0.25);
  ASSERT_NEAR(b.ds_s_ind, 0.375 / 2.0);
  ASSERT_NEAR(b.ds_w_ind, 1.25 / 4.0);
  const double cov = 3 * (0.625 - 0.71875) * (7.0 / 24.0 - 0.4375) + (1 - 0.71875) * (0.875 - 0.4375);
  const double sxx = 0.03125 * 0.03125 + 0.21875 * 0.21875 + 0.09375 * 0.09375 + 0.28125 * 0.28125;
  const double syy = 2 * 0.1875 * 0.1875 + 0.0625 * 0.0625 + 0.4375 * 0.4375;
  ASSERT_NEAR(b.Q_ind, cov / sqrt(sxx * syy));
  /* no wrong-wrong record: both ds undefined, observed and independent */
  struct tcell d = {.n = 2, .tau = 0.5f, .label = {1, 1}, .pred0 = {1, 2}, .pred1 = {1, 1},
                    .s0 = {0.5f, 0.5f}, .s1 = {0.5f, 0.75f}, .m0 = {0.5f, 0.25f}, .m1 = {0.5f, 0.75f}};
  in = as_input(&d);
  ck_assert_int_eq(pb_bounds_cell(&in, 0, &b), 0);
  ck_assert(isnan(b.ds_s) && isnan(b.ds_w) && isnan(b.ds_s_ind) && isnan(b.ds_w_ind));
  ASSERT_NEAR(b.k_ind, 1.0 / 2.0);
}
END_TEST

/* J.2 support on a hand store: models 0, 1 in group 0, model 2 in group 1,
 * model 3 in group 2; three images with labels 0, 0, 1.  Clean predictions:
 * image 0: 5, 5, 5, 0; image 1: 7, 0, 8, 7; image 2: 3, 3, 3, 3.  E.g. model 3
 * on image 1 (answer 7): one of the three others agrees (1/3), one of the
 * three outside group 2 (1/3), groups 0 and 1 agree with shares 1/2 and 0
 * (mean 1/4, exactly the low boundary). */
START_TEST(test_clean_support_hand)
{
  const int32_t group[4] = {0, 0, 1, 2}, label[3] = {0, 0, 1};
  const int32_t clean[4 * 3] = {5, 7, 3, /* model 0 */ 5, 0, 3, /* model 1 */ 5, 8, 3, /* model 2 */ 0, 7, 3};
  double sup[3 * 4 * 3];
  pb_bounds_clean_support(4, 3, group, 3, label, clean, sup);
  const double q = NAN;
  /* [variant][model][image] */
  const double want[3][4][3] = {
      {{2.0 / 3, 1.0 / 3, 1}, {2.0 / 3, q, 1}, {2.0 / 3, 0, 1}, {q, 1.0 / 3, 1}},
      {{0.5, 0.5, 1}, {0.5, q, 1}, {2.0 / 3, 0, 1}, {q, 1.0 / 3, 1}},
      {{0.5, 0.5, 1}, {0.5, q, 1}, {0.5, 0, 1}, {q, 0.25, 1}}};
  for (int v = 0; v < 3; v++)
    for (int m = 0; m < 4; m++)
      for (int i = 0; i < 3; i++) ASSERT_NEAR(sup[(v * 4 + m) * 3 + i], want[v][m][i], "variant %d model %d image %d", v, m, i);
  ck_assert_int_eq(pb_bounds_support_stratum(0.25), PB_SUPPORT_LOW);
  ck_assert_int_eq(pb_bounds_support_stratum(0.25 + 1e-9), PB_SUPPORT_MID);
  ck_assert_int_eq(pb_bounds_support_stratum(0.75), PB_SUPPORT_HIGH);
  ck_assert_int_eq(pb_bounds_support_stratum(2.0 / 3), PB_SUPPORT_MID);
  /* model 3 under a condition that keeps 7 on image 1 and changes 3 to 4 on image 2 */
  const int32_t p1[3] = {0, 7, 4};
  const float f[3] = {0.5f, 0.5f, 0.5f};
  struct pb_cell_view in = {.index = -1, .n = 3, .label = label, .pred0 = clean + 9, .s0 = f, .m0 = f,
                            .pred1 = p1, .s1 = f, .m1 = f, .tau = 0.5f};
  const double *ptr[3] = {sup + 9, sup + 12 + 9, sup + 24 + 9};
  int64_t c[PB_SUPPORT_N][PB_SUPPORT_N_STRATA][2];
  pb_bounds_support_cell(&in, ptr, c);
  /* other models: image 1 middle (kept), image 2 high (changed) */
  ck_assert(c[0][PB_SUPPORT_MID][0] == 1 && c[0][PB_SUPPORT_MID][1] == 1);
  ck_assert(c[0][PB_SUPPORT_HIGH][0] == 1 && c[0][PB_SUPPORT_HIGH][1] == 0 && c[0][PB_SUPPORT_LOW][0] == 0);
  ck_assert(c[1][PB_SUPPORT_MID][0] == 1 && c[1][PB_SUPPORT_HIGH][0] == 1 && c[1][PB_SUPPORT_LOW][0] == 0);
  /* equal group weights: image 1 at 1/4 is low support */
  ck_assert(c[2][PB_SUPPORT_LOW][0] == 1 && c[2][PB_SUPPORT_LOW][1] == 1 && c[2][PB_SUPPORT_MID][0] == 0);
  ck_assert(c[2][PB_SUPPORT_HIGH][0] == 1 && c[2][PB_SUPPORT_HIGH][1] == 0);
}
END_TEST

/* Platt's smoothed-target likelihood, written out here independently. */
static double platt_nll(const float *s, const uint8_t *c, int n, double a, double b)
{
  int np = 0;
  for (int i = 0; i < n; i++) np += c[i];
  double f = 0;
  for (int i = 0; i < n; i++) {
    const double t = c[i] ? (np + 1.0) / (np + 2.0) : 1.0 / (n - np + 2.0);
    const double x = log((double)s[i] / (1.0 - (double)s[i])), p = 1.0 / (1.0 + exp(-(a * x + b)));
    f -= t * log(p) + (1 - t) * log(1 - p);
  }
  return f;
}

/* Two distinct scores: the model is saturated, so the fitted probabilities
 * equal the mean smoothed target at each score (closed form).  Ten records
 * at S = sigma(-1) with 3 correct, ten at sigma(1) with 8 correct: 11
 * correct, 9 wrong, targets 12/13 and 1/11. */
START_TEST(test_platt_closed_form)
{
  float s[20];
  uint8_t c[20];
  for (int i = 0; i < 20; i++) {
    s[i] = (float)(1.0 / (1.0 + exp(i < 10 ? 1.0 : -1.0)));
    c[i] = i < 10 ? i < 3 : i < 18;
  }
  const double tp = 12.0 / 13.0, tn = 1.0 / 11.0, q1 = (3 * tp + 7 * tn) / 10, q2 = (8 * tp + 2 * tn) / 10;
  const double x1 = log((double)s[0] / (1 - (double)s[0])), x2 = log((double)s[10] / (1 - (double)s[10]));
  const double a = (log(q2 / (1 - q2)) - log(q1 / (1 - q1))) / (x2 - x1), b = log(q1 / (1 - q1)) - a * x1;
  double ab[2];
  ck_assert_int_eq(pb_bounds_platt_fit(s, c, 20, ab), 0);
  ck_assert_msg(fabs(ab[0] - a) < 1e-9 && fabs(ab[1] - b) < 1e-9, "fit (%.12g, %.12g), closed form (%.12g, %.12g)",
                ab[0], ab[1], a, b);
  ck_assert(fabs(pb_bounds_platt_apply(ab, s[0]) - q1) < 1e-9 && fabs(pb_bounds_platt_apply(ab, s[15]) - q2) < 1e-9);
  /* random records: no step of 1e-4 in any direction lowers the likelihood's negative */
  rng_state = test_seed() * 13u + 7u;
  float r[200];
  uint8_t rc[200];
  for (int i = 0; i < 200; i++) {
    r[i] = (float)(0.05 + 0.9 * rng_int(0, 1000) / 1000.0);
    rc[i] = rng_int(0, 999) < 1000 * r[i] * r[i] + 100;
  }
  ck_assert_int_eq(pb_bounds_platt_fit(r, rc, 200, ab), 0);
  const double f0 = platt_nll(r, rc, 200, ab[0], ab[1]);
  for (int da = -1; da <= 1; da++)
    for (int db = -1; db <= 1; db++)
      ck_assert_msg(platt_nll(r, rc, 200, ab[0] + 1e-4 * da, ab[1] + 1e-4 * db) >= f0 - 1e-12,
                    "a step (%d, %d) improves the fit", da, db);
  /* every record correct: the optimum is flat at the smoothed target 201/202 */
  for (int i = 0; i < 200; i++) rc[i] = 1;
  ck_assert_int_eq(pb_bounds_platt_fit(r, rc, 200, ab), 0);
  ck_assert(fabs(ab[0]) < 1e-6 && fabs(pb_bounds_platt_apply(ab, 0.5f) - 201.0 / 202.0) < 1e-9);
}
END_TEST

/* Thresholds of the F.1 protocols and one cell's counts, by hand. */
START_TEST(test_f1_protocols_hand)
{
  /* ten development scores .95 .9 ... .5 (descending), wrong at .8 and .6:
   * Q80 = 8th largest = .6; R5: prefixes of 1, 2 records have no error, the
   * third (.85) none, the fourth (.8) one error: 1/4 > 5%, and never back
   * under 5% later, so the cutoff is .85 */
  double v[10];
  uint8_t c[10];
  for (int i = 0; i < 10; i++) v[9 - i] = 0.95 - 0.05 * i, c[9 - i] = !(i == 3 || i == 7);
  double t[PB_F1_N_PROTOCOLS];
  pb_bounds_f1_thresholds(v, c, 10, t);
  ASSERT_NEAR(t[PB_F1_Q80], 0.95 - 0.05 * 7);
  ASSERT_NEAR(t[PB_F1_R5], 0.85);
  ASSERT_NEAR(t[PB_F1_A70], 0.7);
  /* a tie at the cutoff: .9 wrong and .9 correct; the wrong one counts first,
   * so no prefix of the tie is below 5% and the cutoff stays above it */
  double w[3] = {0.9, 0.95, 0.9};
  uint8_t wc[3] = {1, 1, 0};
  pb_bounds_f1_thresholds(w, wc, 3, t);
  ASSERT_NEAR(t[PB_F1_R5], 0.95);
  /* a cell of four records: (c0, c1) = (1,0), (1,1), (1,1), (0,0) with
   * clean / perturbed scores (.9,.8) (.9,.4) (.6,.95) (.3,.9) at threshold .7:
   * H: record 0; L: record 1; accepted perturbed: 0, 2, 3, of them wrong 0 and 3 */
  const int32_t label[4] = {1, 1, 1, 1}, p0[4] = {1, 1, 1, 2}, p1[4] = {2, 1, 1, 2};
  const double x0[4] = {0.9, 0.9, 0.6, 0.3}, x1[4] = {0.8, 0.4, 0.95, 0.9};
  const double thr[PB_F1_N_PROTOCOLS] = {0.7, 0.7, 0.7, 0.7, 2.0};
  struct pb_cell_view in = {.index = -1, .n = 4, .label = label, .pred0 = p0, .pred1 = p1};
  int64_t o[PB_F1_N_PROTOCOLS][PB_F1_N_COUNTS];
  pb_bounds_f1_cell(&in, x0, x1, thr, o);
  ck_assert(o[0][PB_F1_H] == 1 && o[0][PB_F1_L] == 1 && o[0][PB_F1_ACC] == 3 && o[0][PB_F1_ACC_ERR] == 2);
  ck_assert(o[4][PB_F1_H] == 0 && o[4][PB_F1_L] == 0 && o[4][PB_F1_ACC] == 0 && o[4][PB_F1_ACC_ERR] == 0);
}
END_TEST

/* Section 3.1: two images of class y (label 5), alternative label 9, tau 0.8.
 * Observed pairing gives (H, L, dM_k) = (0, 1/2, 0.9 - 0.6); the swapped
 * pairing gives (1/2, 0, 0.6 - 0.6).  Both have h = k = 1. */
START_TEST(test_section31_two_images)
{
  struct tcell c = {.n = 2, .tau = 0.8f};
  set_rec(&c, 0, 5, 5, 0.9f, 0.9f, 5, 0.6f, 0.6f);
  set_rec(&c, 1, 5, 5, 0.6f, 0.6f, 9, 0.8f, 0.2f);
  struct pb_cell_view in = as_input(&c);
  struct pb_cell_bounds b;
  ck_assert_int_eq(pb_bounds_cell(&in, 1, &b), 0);
  const double d03 = (double)0.9f - (double)0.6f; /* 0.3 in float32 records */
  ck_assert(b.h == 1 && b.k == 1 && b.r == 0 && b.s == 0 && b.w == 0);
  ASSERT_NEAR(b.H_obs, 0.0);
  ASSERT_NEAR(b.L_obs, 0.5);
  ASSERT_NEAR(b.dMk_obs, d03);
  const double *H[3] = {b.H_I0, b.H_Ik, b.H_I5}, *L[3] = {b.L_I0, b.L_Ik, b.L_I5};
  for (int l = 0; l < 3; l++) {
    ASSERT_NEAR(H[l][0], 0.0);
    ASSERT_NEAR(H[l][1], 0.5);
    ASSERT_NEAR(L[l][0], 0.0);
    ASSERT_NEAR(L[l][1], 0.5);
  }
  ASSERT_NEAR(b.dMk_Ik[0], 0.0);
  ASSERT_NEAR(b.dMk_Ik[1], d03);
  ASSERT_NEAR(b.dMk_I5[0], 0.0);
  ASSERT_NEAR(b.dMk_I5[1], d03);
  /* I0: k is forced to 1 (a = 2, b = 1, n = 2), so A.10 gives the same range. */
  ASSERT_NEAR(b.dMk_I0[0], 0.0);
  ASSERT_NEAR(b.dMk_I0[1], d03);
  /* Independent: u = 1 accepted correct clean, one wrong accepted and one
   * correct rejected perturbed record, n = 2: 1/2 per image, / N = 1/4. */
  ASSERT_NEAR(b.H_ind, 0.25);
  ASSERT_NEAR(b.L_ind, 0.25);
  check_cell_against_brute(&c, "sec3.1");
}
END_TEST

/* Appendix A.6, Table 5: class T (0), alternatives A (1), B (2), tau 0.6.
 * Clean: r1 (.6,.2,.2) correct accepted (tie at tau), r2 = r3 = (.1,.8,.1) A.
 * Perturbed: r1 correct accepted, r2 A accepted, r3 (.3,.3,.4) B rejected.
 * with_extra adds the correct accepted record (.7,.2,.1) to both sides. */
static void table5_cell(struct tcell *c, int persistent, int with_extra)
{
  memset(c, 0, sizeof *c);
  c->tau = 0.6f;
  c->n = 3 + (with_extra != 0);
  /* observed pairing: correct clean r1 -> wrong perturbed (r3 if s = 1, r2 if w = 1);
   * clean r2 -> perturbed r1 (r state); clean r3 -> the remaining wrong one. */
  if (persistent) {
    set_rec(c, 0, 0, 0, 0.6f, 0.6f, 2, 0.4f, 0.3f); /* h, perturbed rejected */
    set_rec(c, 1, 0, 1, 0.8f, 0.1f, 0, 0.6f, 0.6f); /* r */
    set_rec(c, 2, 0, 1, 0.8f, 0.1f, 1, 0.8f, 0.1f); /* s (A, A) */
  } else {
    set_rec(c, 0, 0, 0, 0.6f, 0.6f, 1, 0.8f, 0.1f); /* h, perturbed accepted */
    set_rec(c, 1, 0, 1, 0.8f, 0.1f, 0, 0.6f, 0.6f); /* r */
    set_rec(c, 2, 0, 1, 0.8f, 0.1f, 2, 0.4f, 0.3f); /* w (A, B) */
  }
  if (with_extra) set_rec(c, 3, 0, 0, 0.7f, 0.7f, 0, 0.7f, 0.7f); /* k */
}

START_TEST(test_a6_counterexample)
{
  for (int extra = 0; extra <= 1; extra++) {
    const double N = extra ? 4.0 : 3.0;
    for (int pers = 0; pers <= 1; pers++) {
      struct tcell c;
      table5_cell(&c, pers, extra);
      struct pb_cell_view in = as_input(&c);
      struct pb_cell_bounds b;
      ck_assert_int_eq(pb_bounds_cell(&in, 1, &b), 0);
      ck_assert(b.k == extra && b.h == 1 && b.r == 1 && b.s == pers && b.w == 1 - pers);
      ASSERT_NEAR(b.H_Ik[0], 0.0);
      ASSERT_NEAR(b.H_Ik[1], 1.0 / N);
      const double pinned = pers ? 0.0 : 1.0 / N; /* s=1,w=0 -> 0; s=0,w=1 -> 1/N */
      ASSERT_NEAR(b.H_I5[0], pinned);
      ASSERT_NEAR(b.H_I5[1], pinned);
      ASSERT_NEAR(b.H_obs, pinned);
      if (extra) {
        /* positive K: one correct-correct pair drawn from M in {.6, .7} per side */
        const double d = (double)0.7f - (double)0.6f;
        ASSERT_NEAR(b.dMk_Ik[0], -d);
        ASSERT_NEAR(b.dMk_Ik[1], d);
        ASSERT_NEAR(b.dMk_I5[0], -d);
        ASSERT_NEAR(b.dMk_I5[1], d);
      } else {
        ck_assert(isnan(b.dMk_Ik[0]) && isnan(b.dMk_I5[1]) && isnan(b.dMk_obs));
      }
      check_cell_against_brute(&c, "A.6");

      /* Same records through the per-class function, both refinements. */
      uint8_t z0[4], z1[4];
      for (int i = 0; i < c.n; i++) {
        z0[i] = c.s0[i] >= c.tau;
        z1[i] = c.s1[i] >= c.tau;
      }
      int64_t o[2];
      ck_assert_int_eq(pb_bounds_class_h_i5(c.n, 0, c.pred0, z0, c.pred1, z1, extra, 1, o), 0);
      ck_assert(o[0] == 0 && o[1] == 0);
      ck_assert_int_eq(pb_bounds_class_h_i5(c.n, 0, c.pred0, z0, c.pred1, z1, extra, 0, o), 0);
      ck_assert(o[0] == 1 && o[1] == 1);
      /* s = 2 would need two same-label wrong pairs: only one A on the perturbed side. */
      ck_assert_int_eq(pb_bounds_class_h_i5(c.n, 0, c.pred0, z0, c.pred1, z1, extra, 2, o), 1);
    }
  }
}
END_TEST

/* Two wrong labels A, B, one record each per side, no correct records:
 * same-label pairs are 0 (A-B, B-A) or 2 (A-A, B-B), never 1. */
START_TEST(test_s_not_interval)
{
  const int32_t p0[2] = {1, 2}, p1[2] = {1, 2};
  const uint8_t z0[2] = {1, 1}, z1[2] = {1, 0};
  int64_t o[2];
  ck_assert_int_eq(pb_bounds_class_h_i5(2, 0, p0, z0, p1, z1, 0, 0, o), 0);
  ck_assert(o[0] == 0 && o[1] == 0);
  ck_assert_int_eq(pb_bounds_class_h_i5(2, 0, p0, z0, p1, z1, 0, 1, o), 1);
  ck_assert_int_eq(pb_bounds_class_h_i5(2, 0, p0, z0, p1, z1, 0, 2, o), 0);
  ck_assert(o[0] == 0 && o[1] == 0);
  /* With one correct accepted clean record added (n = 3) H can be nonzero:
   * clean {y, A, B}, perturbed {A acc, B rej, A rej}.  h = 1, s + w = 2. */
  const int32_t q0[3] = {0, 1, 2}, q1[3] = {1, 2, 1};
  const uint8_t y0[3] = {1, 1, 1}, y1[3] = {1, 0, 0};
  /* s = 2: both A-A and B-B needed: B-B uses the only perturbed B, A-A one of
   * the two perturbed A's; the other A goes to the correct clean record:
   * H = 1 if it is the accepted A, else 0 -> [0, 1]. */
  ck_assert_int_eq(pb_bounds_class_h_i5(3, 0, q0, y0, q1, y1, 0, 2, o), 0);
  ck_assert(o[0] == 0 && o[1] == 1);
  /* s = 1: exactly one same pair among {clean A, clean B} x the two kept
   * perturbed.  Keep {A, B}: A-B, B-A gives 0, A-A, B-B gives 2 -> impossible.
   * Keep {A, A}: A-A plus B-A gives 1 (h block gets B rej, H = 0).
   * So s = 1 forces H = 0. */
  ck_assert_int_eq(pb_bounds_class_h_i5(3, 0, q0, y0, q1, y1, 0, 1, o), 0);
  ck_assert(o[0] == 0 && o[1] == 0);
  /* s = 0: keep {A, B}: A-B, B-A; h block gets the other A (acc or rej) ->
   * [0, 1]; keep {A, A}: clean A meets A, impossible without a same pair. */
  ck_assert_int_eq(pb_bounds_class_h_i5(3, 0, q0, y0, q1, y1, 0, 0, o), 0);
  ck_assert(o[0] == 0 && o[1] == 1);
}
END_TEST

/* Hand-worked class with I5 strictly inside Ik and an interior pinned value.
 * n = 5, y = 0.  Clean: two correct accepted, three wrong A (1).  Perturbed:
 * no correct, two A accepted, three B (2) rejected.  a = 2, b = 0, k = 0,
 * h = 2, r = 0, s + w = 3.  Ik (Eq. 7): [max(0, 2 - 0 - (5 - 2)), min(2, 2, 2)]
 * = [0, 2].  I5: the three clean A's meet three perturbed records with exactly
 * s of them A, so the h block holds 2 - s accepted A's: H = 2 - s exactly;
 * s = 3 is impossible (two perturbed A). */
START_TEST(test_i5_strictly_narrower)
{
  struct tcell c = {.n = 5, .tau = 0.5f};
  /* observed pairing with s = 1, w = 2: h pairs (y, A acc), (y, B); s pair
   * (A, A acc); w pairs (A, B), (A, B). */
  set_rec(&c, 0, 0, 0, 0.75f, 0.75f, 1, 0.75f, 0.125f);
  set_rec(&c, 1, 0, 0, 0.75f, 0.5f, 2, 0.25f, 0.125f);
  set_rec(&c, 2, 0, 1, 0.5f, 0.25f, 1, 0.625f, 0.25f);
  set_rec(&c, 3, 0, 1, 0.5f, 0.25f, 2, 0.25f, 0.125f);
  set_rec(&c, 4, 0, 1, 0.5f, 0.25f, 2, 0.25f, 0.125f);
  struct pb_cell_view in = as_input(&c);
  struct pb_cell_bounds b;
  ck_assert_int_eq(pb_bounds_cell(&in, 1, &b), 0);
  ck_assert(b.h == 2 && b.s == 1 && b.w == 2 && b.k == 0 && b.r == 0);
  ASSERT_NEAR(b.H_Ik[0], 0.0);
  ASSERT_NEAR(b.H_Ik[1], 0.4);
  ASSERT_NEAR(b.H_I5[0], 0.2);
  ASSERT_NEAR(b.H_I5[1], 0.2);
  ASSERT_NEAR(b.H_obs, 0.2);
  check_cell_against_brute(&c, "narrower");
  uint8_t z0[5], z1[5];
  for (int i = 0; i < 5; i++) {
    z0[i] = c.s0[i] >= c.tau;
    z1[i] = c.s1[i] >= c.tau;
  }
  for (int s = 0; s <= 3; s++) {
    int64_t o[2];
    int rc = pb_bounds_class_h_i5(5, 0, c.pred0, z0, c.pred1, z1, 0, s, o);
    if (s == 3) {
      ck_assert_int_eq(rc, 1);
    } else {
      ck_assert_int_eq(rc, 0);
      ck_assert(o[0] == 2 - s && o[1] == 2 - s);
    }
  }
}
END_TEST

/* Witnesses on the hand-worked class of test_i5_strictly_narrower (y = 0;
 * clean: two correct accepted y, three wrong A; perturbed: A acc, B rej,
 * A acc, B rej, B rej).  Ik keeps k = 0 and puts both correct clean records
 * against two wrong perturbed ones: H in [0, 2] (two B's: 0; two A's: 2).
 * I5 also keeps s = 1, which leaves exactly one accepted A for the h block:
 * H = 1 at both ends.  By hand, the observed pairing is an I5 witness
 * (H = 1), y->A, y->A, A->B, A->B, A->B is the Ik upper one (s = 0, H = 2)
 * and y->B, y->B, A->A, A->A, A->B the Ik lower one (s = 2, H = 0); the
 * enumeration of all 120 bijections (check_cell_against_brute) agrees. */
START_TEST(test_witness_hand)
{
  struct tcell c = {.n = 5, .tau = 0.5f};
  set_rec(&c, 0, 0, 0, 0.75f, 0.75f, 1, 0.75f, 0.125f);
  set_rec(&c, 1, 0, 0, 0.75f, 0.5f, 2, 0.25f, 0.125f);
  set_rec(&c, 2, 0, 1, 0.5f, 0.25f, 1, 0.625f, 0.25f);
  set_rec(&c, 3, 0, 1, 0.5f, 0.25f, 2, 0.25f, 0.125f);
  set_rec(&c, 4, 0, 1, 0.5f, 0.25f, 2, 0.25f, 0.125f);
  const int32_t obs[5] = {0, 1, 2, 3, 4}, up[5] = {0, 2, 1, 3, 4}, lo[5] = {1, 3, 0, 2, 4};
  ck_assert_int_eq(witness_h(&c, obs, 1), 1);
  ck_assert_int_eq(witness_h(&c, up, 0), 2);
  ck_assert_int_eq(witness_h(&c, up, 1), -1); /* s = 0: not an I5 bijection */
  ck_assert_int_eq(witness_h(&c, lo, 0), 0);
  ck_assert_int_eq(witness_h(&c, lo, 1), -1); /* s = 2 */
  const int ends[PB_WITNESS_N] = {0, 2, 1, 1};
  check_witnesses(&c, ends, "hand");
  check_cell_against_brute(&c, "hand witnesses");
}
END_TEST

/* Witnesses of single classes of 6-8 records with up to four wrong labels
 * (several labels in the r block and in the derangement), against the
 * enumeration of every bijection. */
START_TEST(test_witness_large_classes)
{
  rng_state = test_seed() * 104729u + 11u;
  for (int it = 0; it < 150; it++) {
    struct tcell c = {.n = rng_int(6, 8), .tau = (float)rng_int(4, 12) / 16.0f};
    const int pc = rng_int(0, 3), nwrong = rng_int(1, 4);
    for (int i = 0; i < c.n; i++) {
      int32_t p[2];
      float sc[2];
      for (int side = 0; side < 2; side++) {
        p[side] = rng_int(0, 3) < pc ? 5 : 6 + rng_int(0, nwrong - 1);
        sc[side] = rng_int(0, 3) == 0 ? c.tau : (float)rng_int(0, 16) / 16.0f;
      }
      set_rec(&c, i, 5, p[0], sc[0], 0.5f, p[1], sc[1], 0.25f);
    }
    char tag[64];
    snprintf(tag, sizeof tag, "large class %d", it);
    check_cell_against_brute(&c, tag);
  }
}
END_TEST

/* ------------------------------------------------------- random property */

static const int32_t label_pool[] = {0, 3, 7, 12, 1000, 70000, 131071};

/* A random cell: 1-3 classes of 1-5 records (at most 20,000 bijections),
 * shuffled record order, few wrong labels, dyadic scores, ties at tau. */
static void random_cell(struct tcell *c)
{
  int ncls, sizes[MAXC], total;
  long prod;
  do {
    ncls = rng_int(1, 3);
    total = 0;
    prod = 1;
    for (int q = 0; q < ncls; q++) {
      sizes[q] = rng_int(1, 5);
      total += sizes[q];
      prod *= factorial(sizes[q]);
    }
  } while (prod > 20000 || total > MAXN);
  int32_t labs[MAXC];
  for (int q = 0; q < ncls; q++) {
    int dup;
    do {
      labs[q] = label_pool[rng_int(0, (int)(sizeof label_pool / sizeof *label_pool) - 1)];
      dup = 0;
      for (int r = 0; r < q; r++) dup |= labs[r] == labs[q];
    } while (dup);
  }
  const int pc = rng_int(0, 4);      /* P(correct) = pc / 4, per cell */
  const int nwrong = rng_int(1, 3);  /* size of the wrong-label pool */
  c->n = total;
  c->tau = (float)rng_int(3, 13) / 16.0f;
  int i = 0;
  for (int q = 0; q < ncls; q++)
    for (int j = 0; j < sizes[q]; j++, i++) {
      c->label[i] = labs[q];
      for (int side = 0; side < 2; side++) {
        int32_t p = labs[q];
        if (rng_int(0, 3) >= pc) p = labs[q] + 1 + rng_int(0, nwrong - 1);
        float s = (float)rng_int(0, 16) / 16.0f, m = (float)rng_int(0, 16) / 16.0f;
        if (rng_int(0, 3) == 0) s = c->tau; /* exact ties at the threshold */
        if (side == 0) {
          c->pred0[i] = p;
          c->s0[i] = s;
          c->m0[i] = m;
        } else {
          c->pred1[i] = p;
          c->s1[i] = s;
          c->m1[i] = m;
        }
      }
    }
  /* shuffle whole images: labels need not be sorted */
  for (int a = total - 1; a > 0; a--) {
    int b = rng_int(0, a);
#define SWP(arr) do { __typeof__(c->arr[0]) t_ = c->arr[a]; c->arr[a] = c->arr[b]; c->arr[b] = t_; } while (0)
    SWP(label); SWP(pred0); SWP(s0); SWP(m0); SWP(pred1); SWP(s1); SWP(m1);
#undef SWP
  }
}

START_TEST(test_random_cells_vs_enumeration)
{
  rng_state = test_seed() * 7919u + 1u;
  int nk0 = 0, narrower = 0, ties = 0;
  for (int it = 0; it < 3000; it++) {
    struct tcell c;
    random_cell(&c);
    char tag[64];
    snprintf(tag, sizeof tag, "random cell %d", it);
    check_cell_against_brute(&c, tag);
    struct pb_cell_view in = as_input(&c);
    struct pb_cell_bounds b;
    ck_assert_int_eq(pb_bounds_cell(&in, 1, &b), 0);
    check_marginals(&c, &b);
    nk0 += b.k == 0;
    narrower += b.H_I5[1] - b.H_I5[0] < b.H_Ik[1] - b.H_Ik[0] - TOL;
    for (int i = 0; i < c.n; i++) ties += c.s0[i] == c.tau || c.s1[i] == c.tau;
  }
  printf("random cells: 3000 checked, %d with K = 0, %d with I5 H narrower than Ik, "
         "%d threshold ties\n", nk0, narrower, ties);
  ck_assert_int_gt(nk0, 0);
  ck_assert_int_gt(narrower, 0);
}
END_TEST

/* Image order must not matter (dyadic values: sums are exact). */
START_TEST(test_order_invariance)
{
  rng_state = test_seed() * 31u + 5u;
  for (int it = 0; it < 300; it++) {
    struct tcell c, d;
    random_cell(&c);
    d = c;
    for (int a = d.n - 1; a > 0; a--) {
      int b = rng_int(0, a);
      struct tcell t = d;
      d.label[a] = t.label[b]; d.label[b] = t.label[a];
      d.pred0[a] = t.pred0[b]; d.pred0[b] = t.pred0[a];
      d.pred1[a] = t.pred1[b]; d.pred1[b] = t.pred1[a];
      d.s0[a] = t.s0[b]; d.s0[b] = t.s0[a];
      d.s1[a] = t.s1[b]; d.s1[b] = t.s1[a];
      d.m0[a] = t.m0[b]; d.m0[b] = t.m0[a];
      d.m1[a] = t.m1[b]; d.m1[b] = t.m1[a];
    }
    struct pb_cell_view ic = as_input(&c), id = as_input(&d);
    struct pb_cell_bounds bc, bd;
    ck_assert_int_eq(pb_bounds_cell(&ic, 1, &bc), 0);
    ck_assert_int_eq(pb_bounds_cell(&id, 1, &bd), 0);
    const double *pc = &bc.acc0, *pd = &bd.acc0;
    const int nd = (int)((const double *)(&bc.K_width_global + 1) - pc);
    for (int j = 0; j < nd; j++) ck_assert_msg(near(pc[j], pd[j]), "field %d differs", j);
  }
}
END_TEST

/* Per-class function against enumeration for every (k, s), feasible or not. */
static void random_class(int n, int32_t *p0, uint8_t *z0, int32_t *p1, uint8_t *z1)
{
  const int pc = rng_int(0, 4), nw = rng_int(1, 4);
  for (int i = 0; i < n; i++) {
    p0[i] = rng_int(0, 3) < pc ? 0 : 1 + rng_int(0, nw - 1);
    p1[i] = rng_int(0, 3) < pc ? 0 : 1 + rng_int(0, nw - 1);
    z0[i] = (uint8_t)rng_int(0, 1);
    z1[i] = (uint8_t)rng_int(0, 1);
  }
}

static void enum_class_hs(int n, const int32_t *p0, const uint8_t *z0, const int32_t *p1,
                          const uint8_t *z1, int *perm, int *used, int depth,
                          int (*mn)[MAXN + 1], int (*mx)[MAXN + 1])
{
  if (depth == n) {
    int k = 0, s = 0, H = 0;
    for (int i = 0; i < n; i++) {
      int j = perm[i];
      int c0 = p0[i] == 0, c1 = p1[j] == 0;
      k += c0 && c1;
      s += !c0 && !c1 && p0[i] == p1[j];
      H += c0 && z0[i] && !c1 && z1[j];
    }
    if (H < mn[k][s]) mn[k][s] = H;
    if (H > mx[k][s]) mx[k][s] = H;
    return;
  }
  for (int j = 0; j < n; j++) {
    if (used[j]) continue;
    used[j] = 1;
    perm[depth] = j;
    enum_class_hs(n, p0, z0, p1, z1, perm, used, depth + 1, mn, mx);
    used[j] = 0;
  }
}

static void check_class_all_ks(int n, const int32_t *p0, const uint8_t *z0, const int32_t *p1,
                               const uint8_t *z1, int *nfeas, int *ninfeas)
{
  int mn[MAXN + 1][MAXN + 1], mx[MAXN + 1][MAXN + 1], perm[MAXN], used[MAXN] = {0};
  for (int a = 0; a <= n; a++)
    for (int b = 0; b <= n; b++) {
      mn[a][b] = 1 << 20;
      mx[a][b] = -1;
    }
  enum_class_hs(n, p0, z0, p1, z1, perm, used, 0, mn, mx);
  for (int k = 0; k <= n; k++)
    for (int s = 0; s <= n; s++) {
      int64_t o[2];
      int rc = pb_bounds_class_h_i5(n, 0, p0, z0, p1, z1, k, s, o);
      if (mx[k][s] < 0) {
        ck_assert_msg(rc == 1, "n=%d k=%d s=%d should be infeasible (rc %d)", n, k, s, rc);
        (*ninfeas)++;
      } else {
        ck_assert_msg(rc == 0, "n=%d k=%d s=%d should be feasible", n, k, s);
        ck_assert_msg(o[0] == mn[k][s] && o[1] == mx[k][s],
                      "n=%d k=%d s=%d: got [%lld,%lld], enumeration [%d,%d]", n, k, s,
                      (long long)o[0], (long long)o[1], mn[k][s], mx[k][s]);
        (*nfeas)++;
      }
    }
}

START_TEST(test_class_h_i5_vs_enumeration)
{
  rng_state = test_seed() * 104729u + 3u;
  int nf = 0, ni = 0;
  for (int it = 0; it < 4000; it++) {
    int n = rng_int(1, 7);
    int32_t p0[MAXN], p1[MAXN];
    uint8_t z0[MAXN], z1[MAXN];
    random_class(n, p0, z0, p1, z1);
    check_class_all_ks(n, p0, z0, p1, z1, &nf, &ni);
  }
  for (int it = 0; it < 40; it++) {
    int32_t p0[MAXN], p1[MAXN];
    uint8_t z0[MAXN], z1[MAXN];
    random_class(8, p0, z0, p1, z1);
    check_class_all_ks(8, p0, z0, p1, z1, &nf, &ni);
  }
  printf("per-class I5 H: %d feasible and %d infeasible (k, s) checked\n", nf, ni);
}
END_TEST

/* Larger classes (n 10..24) against an exhaustive label-level search that
 * keeps the three block choices per label explicit (e_l perturbed to the h
 * block, f_l clean to the r block, j_l same-label pairs) and checks Hall's
 * condition g_l + q_l <= w directly; the library eliminates f and j
 * analytically, this search does not. */
struct lsearch {
  int L, c[MAXN * 2], pa[MAXN * 2], pr[MAXN * 2];
  int h, r, s, w;
  int tmin, tmax;
};

static void lsearch_rec(struct lsearch *S, int l, int E, int F, int J, int tlo, int thi)
{
  if (l == S->L) {
    if (E == S->h && F == S->r && J == S->s) {
      if (tlo < S->tmin) S->tmin = tlo;
      if (thi > S->tmax) S->tmax = thi;
    }
    return;
  }
  const int c = S->c[l], p = S->pa[l] + S->pr[l];
  for (int e = 0; e <= p && E + e <= S->h; e++)
    for (int f = 0; f <= c && F + f <= S->r; f++)
      for (int j = 0; j <= c - f && j <= p - e && J + j <= S->s; j++) {
        int g = c - f - j, q = p - e - j;
        if (g + q > S->w) continue;
        int lo = e - S->pr[l] > 0 ? e - S->pr[l] : 0, hi = e < S->pa[l] ? e : S->pa[l];
        lsearch_rec(S, l + 1, E + e, F + f, J + j, tlo + lo, thi + hi);
      }
}

START_TEST(test_class_h_i5_vs_label_search)
{
  rng_state = test_seed() * 15485863u + 11u;
  int checked = 0;
  for (int it = 0; it < 400; it++) {
    const int n = rng_int(10, 24), nw = rng_int(1, 4);
    int32_t p0[64], p1[64];
    uint8_t z0[64], z1[64];
    const int pc = rng_int(0, 3);
    for (int i = 0; i < n; i++) {
      p0[i] = rng_int(0, 3) < pc ? 0 : 1 + rng_int(0, nw - 1);
      p1[i] = rng_int(0, 3) < pc ? 0 : 1 + rng_int(0, nw - 1);
      z0[i] = (uint8_t)rng_int(0, 1);
      z1[i] = (uint8_t)rng_int(0, 1);
    }
    int a = 0, b = 0, u = 0;
    struct lsearch S = {.L = nw};
    memset(S.c, 0, sizeof S.c);
    memset(S.pa, 0, sizeof S.pa);
    memset(S.pr, 0, sizeof S.pr);
    for (int i = 0; i < n; i++) {
      if (p0[i] == 0) { a++; u += z0[i]; } else S.c[p0[i] - 1]++;
      if (p1[i] == 0) b++; else if (z1[i]) S.pa[p1[i] - 1]++; else S.pr[p1[i] - 1]++;
    }
    for (int k = 0; k <= n; k++)
      for (int s = 0; s <= n; s++) {
        S.h = a - k;
        S.r = b - k;
        S.s = s;
        S.w = n - a - b + k - s;
        int64_t o[2];
        int rc = pb_bounds_class_h_i5(n, 0, p0, z0, p1, z1, k, s, o);
        if (S.h < 0 || S.r < 0 || S.w < 0) {
          ck_assert_int_eq(rc, 1);
          continue;
        }
        S.tmin = 1 << 20;
        S.tmax = -1;
        lsearch_rec(&S, 0, 0, 0, 0, 0, 0);
        if (S.tmax < 0) {
          ck_assert_msg(rc == 1, "n=%d k=%d s=%d should be infeasible", n, k, s);
          continue;
        }
        ck_assert_msg(rc == 0, "n=%d k=%d s=%d should be feasible", n, k, s);
        int lo = S.tmin - (a - u), hi = S.tmax;
        if (lo < 0) lo = 0;
        if (hi > u) hi = u;
        if (hi > S.h) hi = S.h;
        ck_assert_msg(o[0] == lo && o[1] == hi, "n=%d k=%d s=%d: [%lld,%lld] vs [%d,%d]", n, k,
                      s, (long long)o[0], (long long)o[1], lo, hi);
        checked++;
      }
  }
  printf("label-level search: %d feasible (k, s) checked at n = 10..24\n", checked);
}
END_TEST

START_TEST(test_invalid_input)
{
  struct pb_cell_bounds b;
  struct tcell c = {.n = 0, .tau = 0.5f};
  struct pb_cell_view in = as_input(&c);
  ck_assert_int_eq(pb_bounds_cell(&in, 0, &b), -1);
  ck_assert_int_eq(pb_bounds_cell(NULL, 0, &b), -1);
  c.n = 1;
  set_rec(&c, 0, -1, 0, 0.5f, 0.5f, 0, 0.5f, 0.5f);
  in = as_input(&c);
  ck_assert_int_eq(pb_bounds_cell(&in, 0, &b), -1);
  ck_assert_msg(strstr(pb_error_message(), "cell: bounds: record 0 has a negative") != NULL, "%s", pb_error_message());
  /* a store cell's error names the model, source, condition and class */
  c.n = 2;
  set_rec(&c, 0, 3, 3, 0.5f, 0.5f, 3, 0.5f, 0.5f);
  set_rec(&c, 1, 4, 4, 0.5f, 0.5f, -2, 0.5f, 0.5f);
  in = as_input(&c);
  in.index = 17, in.model = "m1", in.source = "Syn", in.condition = "blur-3";
  ck_assert_int_eq(pb_bounds_cell(&in, 1, &b), -1);
  ck_assert_str_eq(pb_error_message(),
                   "model m1, source Syn, condition blur-3, class 4: bounds: record 1 has a negative label or prediction");
  in.model = NULL;
  ck_assert_int_eq(pb_bounds_cell(&in, 1, &b), -1);
  ck_assert_str_eq(pb_error_message(), "cell 17, class 4: bounds: record 1 has a negative label or prediction");
  c.n = 1;
  set_rec(&c, 0, 0, 0, 0.5f, 0.5f, 0, 0.5f, 0.5f);
  in = as_input(&c);
  in.tau = NAN;
  ck_assert_int_eq(pb_bounds_cell(&in, 0, &b), -1);
  in.tau = 0.5f;
  ck_assert_int_eq(pb_bounds_cell(&in, 1, &b), 0);
  ck_assert(b.k == 1 && near(b.L_obs, 0.0) && near(b.dMk_obs, 0.0) && isnan(b.Q));
  int64_t o[2];
  const int32_t p[1] = {0};
  const uint8_t z[1] = {1};
  ck_assert_int_eq(pb_bounds_class_h_i5(0, 0, p, z, p, z, 0, 0, o), -1);
  ck_assert_int_eq(pb_bounds_class_h_i5(1, 0, p, z, p, z, 2, 0, o), 1);
}
END_TEST

/* Table 2's independent sums of one class from their definition, added to
 * *t: every (clean i, perturbed j) combination in index order, weight 1/n_y. */
static void class_ind_definition(const float *s0, const int32_t *p0, const float *s1, const int32_t *p1, int ny,
                                 int y, double mean0, double mean1, struct pb_bounds__ind *t)
{
  int64_t differ = 0, a = 0, b = 0, nss = 0, nww = 0;
  double absd = 0.0, sum0 = 0.0, sum1 = 0.0, ss = 0.0, sw = 0.0;
  for (int i = 0; i < ny; i++) {
    a += p0[i] == y;
    b += p1[i] == y;
    sum0 += s0[i];
    sum1 += s1[i];
  }
  for (int i = 0; i < ny; i++)
    for (int j = 0; j < ny; j++) {
      const double d = (double)s0[i] - (double)s1[j];
      differ += p0[i] != p1[j];
      absd += fabs(d);
      if (p0[i] == y || p1[j] == y) continue;
      if (p0[i] == p1[j]) nss++, ss += d;
      else nww++, sw += d;
    }
  const double w = 1.0 / ny;
  t->flips += (double)differ * w;
  t->absd += absd * w;
  t->cov += ny * (sum0 / ny - mean0) * (sum1 / ny - mean1);
  t->k += (double)(a * b) * w;
  t->dss_num += ss * w;
  t->dss_den += (double)nss * w;
  t->dsw_num += sw * w;
  t->dsw_den += (double)nww * w;
}

/* Bit patterns equal (so 0.0 and -0.0, or two NaNs, are told apart or matched exactly). */
static int same_bits(double x, double y) { return memcmp(&x, &y, sizeof x) == 0; }

/* A score: kind 0 on a coarse grid (multiples of 2^-10 in [0, 1], zeros
 * included), kind 1 a float with all 24 bits over 2^-20 .. 1 (sums of many
 * differences then round, and the kernel must use the definition's order). */
static float random_score(int kind)
{
  if (kind == 0) return rng_int(0, 6) == 0 ? 0.0f : (float)rng_int(0, 1024) / 1024.0f;
  const float m = (float)(rng_next() >> 40) / (float)(1u << 24);
  return ldexpf(m, -rng_int(0, 20));
}

/* pb_bounds__class_ind against the definition, bit for bit: its O(n log n)
 * route (scores on a grid) and its fallback (full-precision scores) must
 * both give the definition's doubles, since bounds' outputs must not change. */
START_TEST(test_class_ind_vs_definition)
{
  const unsigned long seed = test_seed() * 104729u + 11u;
  rng_state = seed;
  printf("class_ind vs definition: seed %lu\n", seed);
  enum { NY = 300 };
  static float s0[NY], s1[NY];
  static int32_t p0[NY], p1[NY];
  static double work[NY * 8];
  int rounded = 0;
  for (int it = 0; it < 4000; it++) {
    const int kind = it % 2, ny = rng_int(1, it % 10 == 9 ? NY : 80), y = rng_int(0, 5), nlab = rng_int(1, 8);
    ck_assert(pb_bounds__ind_work_len(ny) <= sizeof work);
    for (int i = 0; i < ny; i++) {
      /* mostly correct, wrong labels from a few classes so equal wrong answers occur */
      p0[i] = rng_int(0, 3) ? y : rng_int(0, nlab);
      p1[i] = rng_int(0, 2) ? y : rng_int(0, nlab);
      s0[i] = random_score(kind);
      s1[i] = random_score(kind);
    }
    if (kind == 0 && ny > 1) s0[0] = -0.0f;
    const double mean0 = random_score(0), mean1 = random_score(0);
    struct pb_bounds__ind got = {0}, want = {0};
    pb_bounds__class_ind(s0, p0, s1, p1, ny, y, mean0, mean1, work, &got);
    class_ind_definition(s0, p0, s1, p1, ny, y, mean0, mean1, &want);
    const double g[8] = {got.flips, got.absd, got.cov, got.k, got.dss_num, got.dss_den, got.dsw_num, got.dsw_den};
    const double e[8] = {want.flips, want.absd, want.cov, want.k, want.dss_num, want.dss_den, want.dsw_num,
                         want.dsw_den};
    for (int f = 0; f < 8; f++)
      if (!same_bits(g[f], e[f]))
        ck_abort_msg("seed %lu, instance %d (kind %d, n_y %d): sum %d = %.17g, definition %.17g", seed, it, kind,
                     ny, f, g[f], e[f]);
    /* the full-precision instances must include sums that round in double */
    if (kind == 1) {
      long double exact = 0.0L;
      for (int i = 0; i < ny; i++)
        for (int j = 0; j < ny; j++) exact += fabsl((long double)s0[i] - (long double)s1[j]);
      rounded += (long double)(want.absd * ny) != exact;
    }
  }
  printf("class_ind vs definition: 4000 instances, %d full-precision ones whose sum rounds\n", rounded);
  ck_assert_int_gt(rounded, 0);
}
END_TEST

static Suite *bounds_suite(void)
{
  Suite *s = suite_create("bounds");
  TCase *tc = tcase_create("worked");
  tcase_add_test(tc, test_section31_two_images);
  tcase_add_test(tc, test_table2_hand);
  tcase_add_test(tc, test_clean_support_hand);
  tcase_add_test(tc, test_platt_closed_form);
  tcase_add_test(tc, test_f1_protocols_hand);
  tcase_add_test(tc, test_a6_counterexample);
  tcase_add_test(tc, test_s_not_interval);
  tcase_add_test(tc, test_i5_strictly_narrower);
  tcase_add_test(tc, test_witness_hand);
  tcase_add_test(tc, test_invalid_input);
  suite_add_tcase(s, tc);
  TCase *tr = tcase_create("random");
  tcase_set_timeout(tr, 120);
  tcase_add_test(tr, test_random_cells_vs_enumeration);
  tcase_add_test(tr, test_order_invariance);
  tcase_add_test(tr, test_witness_large_classes);
  tcase_add_test(tr, test_class_h_i5_vs_enumeration);
  tcase_add_test(tr, test_class_h_i5_vs_label_search);
  tcase_add_test(tr, test_class_ind_vs_definition);
  suite_add_tcase(s, tr);
  return s;
}

int main(void) { return test_run_forked(bounds_suite()); }
