/* Unit tests for the policy kernel (src/policy/policy_kernel.c).
 *
 * Expected values come from hand derivations (two worked cells below) or
 * from brute-force enumeration of every within-class bijection (and, for
 * two-class cells, of the whole Cartesian product), implemented here and
 * nowhere else.  The seed is PB_TEST_SEED (default 20260908), always printed. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/policy.h"
#include "pairbound/error.h"
#include "testrng.h"

#define TOL 1e-12
#define MAXN 24
#define MAXP 5
#define NLAM 6

static const double LAMS_GRID[NLAM] = {0, 0.1, 0.25, 0.5, 0.7, 1};
/* weights within 2^-16 of 0, 1/2 and 1, which the kernel takes by its scan over the split instead of its
 * closed form, and two (0.3, 0.35) of one group of equal slope signs */
static const double LAMS_SCAN[NLAM] = {1e-6, 0.5 - 1e-7, 0.5 + 1e-7, 1 - 1e-6, 0.3, 0.35};
static const double *LAMS = LAMS_GRID;


#define ASSERT_NEAR(a, b, ...)                                                                   \
  do {                                                                                           \
    const double got_ = (a), exp_ = (b);                                                         \
    if (!(fabs(got_ - exp_) <= TOL || (isnan(got_) && isnan(exp_)))) {                           \
      char ctx_[256];                                                                            \
      snprintf(ctx_, sizeof ctx_, " " __VA_ARGS__);                                              \
      ck_abort_msg("%s = %.17g, expected %.17g;%s", #a, got_, exp_, ctx_);                       \
    }                                                                                            \
  } while (0)

struct tcell {
  int n, P;
  int32_t label[MAXN], pred0[MAXN], pred1[MAXN];
  float s0[MAXN], s1[MAXN], tau0, tau[MAXP];
};

static struct pb_cell_view as_input(const struct tcell *c)
{
  return (struct pb_cell_view){.index = -1, .n = c->n, .label = c->label, .pred0 = c->pred0, .s0 = c->s0,
                               .pred1 = c->pred1, .s1 = c->s1, .tau = c->tau0};
}

static struct pb_policy_setup as_setup(const struct tcell *c)
{
  return (struct pb_policy_setup){.n_pol = c->P, .tau = c->tau, .n_lambda = NLAM, .lambda = LAMS};
}

static int run(const struct tcell *c, struct pb_policy_result *r)
{
  struct pb_cell_view in = as_input(c);
  struct pb_policy_setup ps = as_setup(c);
  return pb_policy_cell(&in, &ps, r);
}

static int lam_index(double l)
{
  for (int i = 0; i < NLAM; i++)
    if (LAMS[i] == l) return i;
  return -1;
}

/* ------------------------------------------------------------ worked cells */

/* Cell A (N = 4), policies j: tau 0.7, l: tau 0.6, clean tau0 0.8.
 * Class 0: clean d1 correct .9 (accepted), d2 correct .5; perturbed r1 wrong
 * (pred 3) .95, r2 correct .95; observed d1-r1, d2-r2 (k = 1).  Both
 * policies accept r1 and r2, so the A record costs lambda with r1 and 0 with
 * r2 under either policy: the class difference is always 0, yet each J
 * interval is [0, lambda].
 * Class 1: clean c1 correct .9 (accepted), c2 wrong (pred 5); perturbed q1
 * wrong (pred 7) .65, q2 correct .65; observed c1-q1, c2-q2 (k = 0).  With q1
 * the A record costs 0 under j (rejected) and lambda under l; with q2 it
 * costs 1 - lambda under j (correct rejected) and 0 under l.  k = 0 forces q1
 * at Ik and I5.
 * At Ik, lambda = .5: J_j = [0, .125], J_l = [.125, .25], so the separate
 * test gives J_j^hi - J_l^lo = 0 (no ordering), but under one correspondence
 * J_j - J_l = (0 - lambda)/4 = -.125 always (certified, mixed switches: q1
 * wrong and q2 correct both switch).  D+_lj = .125 < J_l^hi - J_j^lo = .25
 * strictly.  At I0 the A record of class 1 may take q2: D+_jl = (1-lambda)/4. */
static void cell_a(struct tcell *c)
{
  memset(c, 0, sizeof *c);
  c->n = 4;
  c->P = 2;
  c->tau0 = 0.8f;
  c->tau[0] = 0.7f;
  c->tau[1] = 0.6f;
  const int32_t lab[] = {0, 0, 1, 1}, p0[] = {0, 0, 1, 5}, p1[] = {3, 0, 7, 1};
  const float s0[] = {0.9f, 0.5f, 0.9f, 0.9f}, s1[] = {0.95f, 0.95f, 0.65f, 0.65f};
  memcpy(c->label, lab, sizeof lab);
  memcpy(c->pred0, p0, sizeof p0);
  memcpy(c->pred1, p1, sizeof p1);
  memcpy(c->s0, s0, sizeof s0);
  memcpy(c->s1, s1, sizeof s1);
}

START_TEST(test_shared_beats_separate)
{
  struct tcell c;
  struct pb_policy_result r;
  cell_a(&c);
  ck_assert_int_eq(run(&c, &r), 0);
  const int h = lam_index(0.5);
  for (int lv = PB_LEVEL_IK; lv <= PB_LEVEL_I5; lv++) {
    ASSERT_NEAR(r.J[lv][h][0][0], 0, "level %d", lv);
    ASSERT_NEAR(r.J[lv][h][0][1], 0.125, "level %d", lv);
    ASSERT_NEAR(r.J[lv][h][1][0], 0.125, "level %d", lv);
    ASSERT_NEAR(r.J[lv][h][1][1], 0.25, "level %d", lv);
    ASSERT_NEAR(r.D[lv][h][0][1], -0.125, "level %d", lv);   /* certified ... */
    ASSERT_NEAR(r.J[lv][h][0][1] - r.J[lv][h][1][0], 0, "level %d", lv);  /* ... separate test misses */
    ASSERT_NEAR(r.D[lv][h][1][0], 0.125, "level %d", lv);
    ck_assert(r.D[lv][h][1][0] < r.J[lv][h][1][1] - r.J[lv][h][0][0] - 0.1);   /* strict: .125 < .25 */
    /* H_j: class 0 only (r1 accepted by both): [0, 1]/4; L_j at Ik: A of class 1 sits with q1 */
    ASSERT_NEAR(r.H[lv][0][0], 0, "");
    ASSERT_NEAR(r.H[lv][0][1], 0.25, "");
    ASSERT_NEAR(r.L[lv][0][1], 0, "");
    ASSERT_NEAR(r.H[lv][1][0], 0.25, "");   /* q1 accepted by l, forced */
    ASSERT_NEAR(r.H[lv][1][1], 0.5, "");
  }
  ASSERT_NEAR(r.D[PB_LEVEL_I0][h][0][1], 0.125, "I0: (1 - lambda)/4");
  ASSERT_NEAR(r.D[PB_LEVEL_I0][h][1][0], 0.125, "I0: lambda/4");
  ASSERT_NEAR(r.L[PB_LEVEL_I0][0][1], 0.25, "I0: q2 reachable");
  ck_assert_int_eq(r.mixed[0][1], 1);
  ck_assert_int_eq(r.same[0][1], 0);
  /* means at Ik: class 0, E[H_j count] = (u/a)(h/(n-b)) t = 1/2; class 1 forced 0 */
  ASSERT_NEAR(r.H_mean[PB_LEVEL_IK][0], 0.5 / 4, "");
  ASSERT_NEAR(r.L_mean[PB_LEVEL_IK][0], 0, "");
  /* I0: independent value u t / n per class: class 0 1*1/2, class 1 0 (t_j = 0) */
  ASSERT_NEAR(r.H_mean[PB_LEVEL_I0][0], 0.5 / 4, "");
  /* I0 L_j: class 1 u v / n = 1 * 1 / 2 */
  ASSERT_NEAR(r.L_mean[PB_LEVEL_I0][0], 0.5 / 4, "");
  /* observed: d1-r1 (H under both), c1-q1 (H under l only) */
  ASSERT_NEAR(r.H_obs[0], 0.25, "");
  ASSERT_NEAR(r.H_obs[1], 0.5, "");
}
END_TEST

/* Cell B (N = 4): the A.6 / Table 5 class with I5 fixing the wrong partner.
 * Class 0: clean 1 correct .6 (accepted at tau0 .6), clean 2, 3 wrong A (.8);
 * perturbed 1 correct .6, 2 wrong A .8, 3 wrong B .4.  Observed: clean1 -
 * pert2, clean2 - pert1, clean3 - pert3: k = 0, s = 0, w = 1.  At I5 the one
 * wrong-wrong pair must change labels, so clean 3 (A) takes pert3 (B) and the
 * accepted correct clean record takes pert2.  Class 1: a correct perturbed
 * record at .8 with a rejected clean one (cost-free), making the switches
 * between tau .9 and .7 mixed.  Policies j: .9 (rejects pert2), l: .7
 * (accepts it).  J_j - J_l = -lambda [pert2] : at I5 -lambda/4 always; at Ik
 * pert3 (rejected by both, difference 0) is possible, so D+ = 0: the ordering
 * is added by the five-state counts.  At I0 pert1 (correct, rejected by both)
 * is possible too. */
START_TEST(test_i5_adds_ordering)
{
  struct tcell c;
  memset(&c, 0, sizeof c);
  c.n = 4;
  c.P = 2;
  c.tau0 = 0.6f;
  c.tau[0] = 0.9f;
  c.tau[1] = 0.7f;
  const int32_t lab[] = {0, 0, 0, 1}, p0[] = {0, 10, 10, 2}, p1[] = {10, 0, 11, 1};
  const float s0[] = {0.6f, 0.8f, 0.8f, 0.1f}, s1[] = {0.8f, 0.6f, 0.4f, 0.8f};
  memcpy(c.label, lab, sizeof lab);
  memcpy(c.pred0, p0, sizeof p0);
  memcpy(c.pred1, p1, sizeof p1);
  memcpy(c.s0, s0, sizeof s0);
  memcpy(c.s1, s1, sizeof s1);
  struct pb_policy_result r;
  ck_assert_int_eq(run(&c, &r), 0);
  for (int li = 0; li < NLAM; li++) {
    const double lam = LAMS[li];
    ASSERT_NEAR(r.D[PB_LEVEL_I5][li][0][1], -lam / 4, "lambda %g", lam);
    ASSERT_NEAR(r.D[PB_LEVEL_IK][li][0][1], 0, "lambda %g", lam);
    ASSERT_NEAR(r.D[PB_LEVEL_I0][li][0][1], 0, "lambda %g", lam);
    /* natural cost: E_j = 0, E_l = 1/4 (pert2), L differences 0: identical at Ik and I5 */
    ASSERT_NEAR(r.Dn[PB_LEVEL_IK][li][0][1], -lam / 4, "");
    ASSERT_NEAR(r.Dn[PB_LEVEL_I5][li][0][1], -lam / 4, "");
  }
  ck_assert_int_eq(r.mixed[0][1], 1);
  ASSERT_NEAR(r.H[PB_LEVEL_I5][1][0], 0.25, "");
  ASSERT_NEAR(r.H[PB_LEVEL_I5][1][1], 0.25, "");
  ASSERT_NEAR(r.H[PB_LEVEL_IK][1][0], 0, "");
  ASSERT_NEAR(r.H[PB_LEVEL_IK][1][1], 0.25, "");
  /* feasible means of H_l: I5 forced 1/4; Ik (u/a)(h/(n-b)) t = 1 * 1/2 * 1 */
  ASSERT_NEAR(r.H_mean[PB_LEVEL_I5][1], 0.25, "");
  ASSERT_NEAR(r.H_mean[PB_LEVEL_IK][1], 0.125, "");
  ASSERT_NEAR(r.H_mean[PB_LEVEL_I0][1], 1.0 / 3 / 4, "u t / n = 1/3");
}
END_TEST

START_TEST(test_argmin_tie_rule)
{
  const double q[5] = {0.6, 0.7, 0.8, 0.9, 1.0};
  const double v1[5] = {1, 1 + 5e-13, 2, 1, 3};       /* 0, 1, 3 tie: .7 and .9 equally close, lower wins */
  ck_assert_int_eq(pb_policy_argmin(v1, q, 5), 1);
  const double v2[5] = {1, 1, 1, 1, 1};
  ck_assert_int_eq(pb_policy_argmin(v2, q, 5), 2);
  const double v3[5] = {1, 1 + 2e-12, 1 + 2e-12, 5, 5}; /* beyond the tolerance: no tie */
  ck_assert_int_eq(pb_policy_argmin(v3, q, 5), 0);
  const double v4[5] = {NAN, 2, NAN, 2, 1.5};
  ck_assert_int_eq(pb_policy_argmin(v4, q, 5), 4);
  ck_assert_int_eq(pb_policy_argmin(v2, NULL, 5), 0);
  const double v5[2] = {NAN, NAN};
  ck_assert_int_eq(pb_policy_argmin(v5, NULL, 2), -1);
}
END_TEST

START_TEST(test_invalid_input)
{
  struct tcell c;
  struct pb_policy_result r;
  cell_a(&c);
  c.pred1[2] = -1;
  ck_assert_int_eq(run(&c, &r), -1);
  cell_a(&c);
  c.tau[1] = NAN;
  ck_assert_int_eq(run(&c, &r), -1);
  cell_a(&c);
  struct pb_cell_view in = as_input(&c);
  struct pb_policy_setup ps = as_setup(&c);
  const double bad = 1.5;
  ps.lambda = &bad;
  ps.n_lambda = 1;
  ck_assert_int_eq(pb_policy_cell(&in, &ps, &r), -1);
  ps = as_setup(&c);
  ps.n_pol = PB_POLICY_MAX + 1;
  ck_assert_int_eq(pb_policy_cell(&in, &ps, &r), -1);
  /* the message names the cell and the class of the offending record */
  c.pred1[2] = -1;
  in = as_input(&c);
  in.model = "m7", in.source = "srcX", in.condition = "fog";
  ps = as_setup(&c);
  ck_assert_int_eq(pb_policy_cell(&in, &ps, &r), -1);
  char want[128];
  snprintf(want, sizeof want, "model m7, source srcX, condition fog, class %d: ", c.label[2]);
  ck_assert_msg(strstr(pb_error_message(), want) != NULL, "message '%s' lacks '%s'", pb_error_message(), want);
}
END_TEST

/* ------------------------------------------------------------ brute force */

struct bclass {
  int nc, mem[MAXN];
  int kobs, sobs;
};

/* Per-permutation event counts under every policy. */
struct bperm {
  int k, s, h[MAXP], l[MAXP];
};

static void perm_stats(const struct tcell *c, const struct bclass *b, const int *perm, struct bperm *st)
{
  memset(st, 0, sizeof *st);
  for (int i = 0; i < b->nc; i++) {
    int ci = b->mem[i], pj = b->mem[perm[i]];
    int y = c->label[ci];
    int c0 = c->pred0[ci] == y, c1 = c->pred1[pj] == y;
    st->k += c0 && c1;
    st->s += !c0 && !c1 && c->pred0[ci] == c->pred1[pj];
    if (!(c0 && c->s0[ci] >= c->tau0)) continue;
    for (int j = 0; j < c->P; j++) {
      int acc = c->s1[pj] >= c->tau[j];
      st->h[j] += !c1 && acc;
      st->l[j] += c1 && !acc;
    }
  }
}

static int next_perm(int *p, int n)
{
  int i = n - 2;
  while (i >= 0 && p[i] >= p[i + 1]) i--;
  if (i < 0) return 0;
  int j = n - 1;
  while (p[j] <= p[i]) j--;
  int t = p[i];
  p[i] = p[j];
  p[j] = t;
  for (int a = i + 1, z = n - 1; a < z; a++, z--) t = p[a], p[a] = p[z], p[z] = t;
  return 1;
}

/* All bijections of a class, with its level flags. */
struct benum {
  int np;
  struct bperm *ps;
  uint8_t *ok[3];
};

static int feasible(const struct bclass *b, const struct bperm *p, int lv)
{
  return lv == 0 || (lv == 1 && p->k == b->kobs) || (lv == 2 && p->k == b->kobs && p->s == b->sobs);
}

static void enumerate(const struct tcell *c, const struct bclass *b, struct benum *e)
{
  int perm[MAXN], cap = 1;
  for (int i = 2; i <= b->nc; i++) cap *= i;
  e->ps = malloc((size_t)cap * sizeof *e->ps);
  for (int lv = 0; lv < 3; lv++) e->ok[lv] = malloc((size_t)cap);
  for (int i = 0; i < b->nc; i++) perm[i] = i;
  e->np = 0;
  do {
    perm_stats(c, b, perm, &e->ps[e->np]);
    for (int lv = 0; lv < 3; lv++) e->ok[lv][e->np] = (uint8_t)feasible(b, &e->ps[e->np], lv);
    e->np++;
  } while (next_perm(perm, b->nc));
}

static void benum_free(struct benum *e)
{
  free(e->ps);
  for (int lv = 0; lv < 3; lv++) free(e->ok[lv]);
}

static int split_classes(const struct tcell *c, struct bclass *cls)
{
  int nclass = 0;
  int order[MAXN];
  for (int i = 0; i < c->n; i++) order[i] = i;
  /* classes in ascending label order */
  for (int i = 1; i < c->n; i++)
    for (int j = i; j > 0 && c->label[order[j - 1]] > c->label[order[j]]; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  for (int q = 0; q < c->n; q++) {
    int i = order[q];
    if (q == 0 || c->label[i] != c->label[order[q - 1]]) {
      memset(&cls[nclass], 0, sizeof cls[nclass]);
      nclass++;
    }
    struct bclass *b = &cls[nclass - 1];
    b->mem[b->nc++] = i;
  }
  for (int ci = 0; ci < nclass; ci++) {
    struct bclass *b = &cls[ci];
    int id[MAXN];
    for (int i = 0; i < b->nc; i++) id[i] = i;
    struct bperm st;
    perm_stats(c, b, id, &st);
    b->kobs = st.k;
    b->sobs = st.s;
  }
  return nclass;
}

static double cost(const struct bperm *p, int j, double lam) { return lam * p->h[j] + (1 - lam) * p->l[j]; }

/* Compare every kernel output with classwise enumeration. */
static void check_cell(const struct tcell *c, int trial)
{
  struct pb_policy_result r;
  ck_assert_msg(run(c, &r) == 0, "trial %d: kernel failed", trial);
  struct bclass cls[MAXN];
  int ncl = split_classes(c, cls);
  struct benum en[MAXN];
  for (int ci = 0; ci < ncl; ci++) enumerate(c, &cls[ci], &en[ci]);
  const double N = c->n;
  const int P = c->P;
  for (int lv = 0; lv < 3; lv++) {
    for (int j = 0; j < P; j++) {
      double hl = 0, hh = 0, ll = 0, lh = 0, hm = 0, lm = 0;
      for (int ci = 0; ci < ncl; ci++) {
        int a = 1 << 30, bmax = -1, c2 = 1 << 30, d = -1, cnt = 0;
        double sh = 0, sl = 0;
        for (int q = 0; q < en[ci].np; q++) {
          if (!en[ci].ok[lv][q]) continue;
          const struct bperm *p = &en[ci].ps[q];
          a = p->h[j] < a ? p->h[j] : a;
          bmax = p->h[j] > bmax ? p->h[j] : bmax;
          c2 = p->l[j] < c2 ? p->l[j] : c2;
          d = p->l[j] > d ? p->l[j] : d;
          sh += p->h[j];
          sl += p->l[j];
          cnt++;
        }
        ck_assert(cnt > 0);
        hl += a, hh += bmax, ll += c2, lh += d;
        hm += sh / cnt, lm += sl / cnt;
      }
      ASSERT_NEAR(r.H[lv][j][0], hl / N, "trial %d lv %d j %d", trial, lv, j);
      ASSERT_NEAR(r.H[lv][j][1], hh / N, "trial %d lv %d j %d", trial, lv, j);
      ASSERT_NEAR(r.L[lv][j][0], ll / N, "trial %d lv %d j %d", trial, lv, j);
      ASSERT_NEAR(r.L[lv][j][1], lh / N, "trial %d lv %d j %d", trial, lv, j);
      ASSERT_NEAR(r.H_mean[lv][j], hm / N, "trial %d lv %d j %d (mean)", trial, lv, j);
      ASSERT_NEAR(r.L_mean[lv][j], lm / N, "trial %d lv %d j %d (mean)", trial, lv, j);
    }
    for (int li = 0; li < NLAM; li++) {
      const double lam = LAMS[li];
      for (int j = 0; j < P; j++) {
        double jlo = 0, jhi = 0, mean = 0;
        for (int ci = 0; ci < ncl; ci++) {
          double mn = INFINITY, mx = -INFINITY, s = 0;
          int cnt = 0;
          for (int q = 0; q < en[ci].np; q++) {
            if (!en[ci].ok[lv][q]) continue;
            double v = cost(&en[ci].ps[q], j, lam);
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
            s += v;
            cnt++;
          }
          jlo += mn, jhi += mx, mean += s / cnt;
        }
        ASSERT_NEAR(r.J[lv][li][j][0], jlo / N, "trial %d lv %d lam %g j %d", trial, lv, lam, j);
        ASSERT_NEAR(r.J[lv][li][j][1], jhi / N, "trial %d lv %d lam %g j %d", trial, lv, lam, j);
        /* Lemma 1 (Eq. 8) equals the direct maximisation */
        ck_assert_msg(fabs(r.J_lemma1[lv][li][j] - r.J[lv][li][j][1]) <= 1e-12, "trial %d: Lemma 1 residual %g",
                      trial, fabs(r.J_lemma1[lv][li][j] - r.J[lv][li][j][1]));
        /* the feasible mean lies inside the sharp interval */
        double fm = lam * r.H_mean[lv][j] + (1 - lam) * r.L_mean[lv][j];
        ASSERT_NEAR(fm, mean / N, "trial %d lv %d lam %g j %d (J mean)", trial, lv, lam, j);
        ck_assert(fm >= r.J[lv][li][j][0] - TOL && fm <= r.J[lv][li][j][1] + TOL);
        for (int l = 0; l < P; l++) {
          double dp = 0, dn = 0;
          for (int ci = 0; ci < ncl; ci++) {
            double mx = -INFINITY, mxl = -INFINITY;
            for (int q = 0; q < en[ci].np; q++) {
              if (!en[ci].ok[lv][q]) continue;
              const struct bperm *p = &en[ci].ps[q];
              double v = cost(p, j, lam) - cost(p, l, lam);
              mx = v > mx ? v : mx;
              double vl = p->l[j] - p->l[l];
              mxl = vl > mxl ? vl : mxl;
            }
            dp += mx;
            dn += mxl;
          }
          ASSERT_NEAR(r.D[lv][li][j][l], dp / N, "trial %d lv %d lam %g (%d,%d)", trial, lv, lam, j, l);
          ASSERT_NEAR(r.Dn[lv][li][j][l], lam * (r.E[j] - r.E[l]) + (1 - lam) * dn / N, "trial %d natural", trial);
          /* structural: D+_jj = 0, D+ <= separate gap, monotone in information */
          if (j == l) ck_assert(r.D[lv][li][j][l] == 0.0);
          ck_assert(r.D[lv][li][j][l] <= r.J[lv][li][j][1] - r.J[lv][li][l][0] + TOL);
          if (lv > 0) ck_assert(r.D[lv][li][j][l] <= r.D[lv - 1][li][j][l] + TOL);
        }
      }
    }
  }
  /* Corollary 1: natural-cost intervals and differences identical at Ik and I5 */
  for (int li = 0; li < NLAM; li++)
    for (int j = 0; j < P; j++) {
      ck_assert(r.Jn[PB_LEVEL_IK][li][j][0] == r.Jn[PB_LEVEL_I5][li][j][0]);
      ck_assert(r.Jn[PB_LEVEL_IK][li][j][1] == r.Jn[PB_LEVEL_I5][li][j][1]);
      for (int l = 0; l < P; l++) ck_assert(r.Dn[PB_LEVEL_IK][li][j][l] == r.Dn[PB_LEVEL_I5][li][j][l]);
    }
  /* I0 mean = class-conditional independent value u t / n */
  for (int j = 0; j < P; j++) {
    double ind = 0;
    for (int ci = 0; ci < ncl; ci++) {
      int u = 0, t = 0;
      for (int i = 0; i < cls[ci].nc; i++) {
        int q = cls[ci].mem[i], y = c->label[q];
        u += c->pred0[q] == y && c->s0[q] >= c->tau0;
        t += c->pred1[q] != y && c->s1[q] >= c->tau[j];
      }
      ind += (double)u * t / cls[ci].nc;
    }
    ASSERT_NEAR(r.H_mean[PB_LEVEL_I0][j], ind / N, "trial %d: independent value", trial);
  }
  ck_assert_int_eq(r.n_mean_unrepresentable, 0);
  /* whole-cell product enumeration for two small classes */
  if (ncl == 2 && en[0].np * en[1].np <= 20000) {
    for (int lv = 0; lv < 3; lv++)
      for (int li = 0; li < NLAM; li++)
        for (int j = 0; j < P; j++)
          for (int l = 0; l < P; l++) {
            double mx = -INFINITY, s = 0;
            long cnt = 0;
            for (int q0 = 0; q0 < en[0].np; q0++) {
              if (!en[0].ok[lv][q0]) continue;
              for (int q1 = 0; q1 < en[1].np; q1++) {
                if (!en[1].ok[lv][q1]) continue;
                const struct bperm *a = &en[0].ps[q0], *b = &en[1].ps[q1];
                double jj = (cost(a, j, LAMS[li]) + cost(b, j, LAMS[li])) / N;
                double v = jj - (cost(a, l, LAMS[li]) + cost(b, l, LAMS[li])) / N;
                mx = v > mx ? v : mx;
                s += jj;
                cnt++;
              }
            }
            ASSERT_NEAR(r.D[lv][li][j][l], mx, "trial %d: product enumeration", trial);
            ASSERT_NEAR(LAMS[li] * r.H_mean[lv][j] + (1 - LAMS[li]) * r.L_mean[lv][j], s / cnt,
                        "trial %d: product mean", trial);
          }
  }
  for (int ci = 0; ci < ncl; ci++) benum_free(&en[ci]);
}

/* Random cell: classes of sizes 1..maxn, few wrong labels (so that same-label
 * structure matters), scores on a 1/16 grid shared with the thresholds (ties). */
static void random_cell(struct tcell *c, int ncl, int maxn)
{
  memset(c, 0, sizeof *c);
  c->P = rng_int(1, MAXP);
  c->tau0 = (float)rng_int(4, 14) / 16.0f;
  for (int j = 0; j < c->P; j++) c->tau[j] = (float)rng_int(3, 15) / 16.0f;
  for (int y = 0; y < ncl; y++) {
    int ny = rng_int(1, maxn);
    int pc0 = rng_int(0, 100), pc1 = rng_int(0, 100), nlab = rng_int(1, 3);
    for (int i = 0; i < ny && c->n < MAXN; i++) {
      int q = c->n++;
      c->label[q] = y;
      c->pred0[q] = rng_int(0, 99) < pc0 ? y : 10 + rng_int(0, nlab - 1);
      c->pred1[q] = rng_int(0, 99) < pc1 ? y : 10 + rng_int(0, nlab - 1);
      c->s0[q] = (float)rng_int(1, 16) / 16.0f;
      c->s1[q] = (float)rng_int(1, 16) / 16.0f;
    }
  }
  /* shuffle record order (the kernel must not care) */
  for (int i = c->n - 1; i > 0; i--) {
    int j = rng_int(0, i);
#define SWAP(T, a) do { T t_ = a[i]; a[i] = a[j]; a[j] = t_; } while (0)
    SWAP(int32_t, c->label);
    SWAP(int32_t, c->pred0);
    SWAP(int32_t, c->pred1);
    SWAP(float, c->s0);
    SWAP(float, c->s1);
#undef SWAP
  }
}

START_TEST(test_random_vs_enumeration)
{
  rng_state = test_seed();
  for (int trial = 0; trial < 1500; trial++) {
    struct tcell c;
    random_cell(&c, rng_int(1, 3), 6);
    check_cell(&c, trial);
  }
}
END_TEST

/* The same enumeration at weights next to the slopes' zeros (the scan path) and in a shared group. */
START_TEST(test_random_scan_weights)
{
  rng_state = test_seed() ^ 0x2e2e;
  LAMS = LAMS_SCAN;
  for (int trial = 0; trial < 600; trial++) {
    struct tcell c;
    random_cell(&c, rng_int(1, 3), 6);
    check_cell(&c, trial);
  }
  LAMS = LAMS_GRID;
}
END_TEST

START_TEST(test_random_two_class_products)
{
  rng_state = test_seed() ^ 0x5151;
  for (int trial = 0; trial < 400; trial++) {
    struct tcell c;
    random_cell(&c, 2, 5);
    check_cell(&c, trial);
  }
}
END_TEST

/* Larger classes (8 and 9 records): the DP over labels and the exact I5 count
 * with several labels, against enumeration of 40,320 / 362,880 bijections. */
START_TEST(test_random_large_classes)
{
  rng_state = test_seed() ^ 0xabcdef;
  for (int trial = 0; trial < 12; trial++) {
    struct tcell c;
    random_cell(&c, 1, 1);
    c.n = 0;
    int ny = trial < 9 ? 8 : 9, nlab = rng_int(2, 4);
    for (int i = 0; i < ny; i++) {
      c.label[c.n] = 0;
      c.pred0[c.n] = rng_int(0, 2) == 0 ? 0 : 10 + rng_int(0, nlab - 1);
      c.pred1[c.n] = rng_int(0, 2) == 0 ? 0 : 10 + rng_int(0, nlab - 1);
      c.s0[c.n] = (float)rng_int(1, 16) / 16.0f;
      c.s1[c.n] = (float)rng_int(1, 16) / 16.0f;
      c.n++;
    }
    check_cell(&c, trial);
  }
}
END_TEST

/* Zero the per-weight entries beyond NLAM, which pb_policy_cell leaves as they were. */
static void clear_unused_weights(struct pb_policy_result *r)
{
#define CLEAR_TAIL(a) memset(a[lv][NLAM], 0, sizeof a[lv] - NLAM * sizeof a[lv][0])
  for (int lv = 0; lv < PB_POLICY_N_LEVELS; lv++) {
    CLEAR_TAIL(r->J);
    CLEAR_TAIL(r->J_lemma1);
    CLEAR_TAIL(r->D);
    CLEAR_TAIL(r->Jn);
    CLEAR_TAIL(r->Dn);
  }
#undef CLEAR_TAIL
}

/* Independence of record order and of being computed among other classes. */
START_TEST(test_deterministic)
{
  rng_state = test_seed() ^ 0x77;
  for (int trial = 0; trial < 50; trial++) {
    struct tcell c;
    random_cell(&c, 3, 6);
    struct pb_policy_result r1, r2;
    /* different garbage beyond n_lambda: a call writes only the used weights */
    memset(&r1, 0x5a, sizeof r1);
    memset(&r2, 0xa5, sizeof r2);
    ck_assert_int_eq(run(&c, &r1), 0);
    ck_assert_int_eq(run(&c, &r2), 0);
    clear_unused_weights(&r1);
    clear_unused_weights(&r2);
    ck_assert(memcmp(&r1, &r2, sizeof r1) == 0);
  }
}
END_TEST

static Suite *policy_suite(void)
{
  Suite *s = suite_create("policy");
  TCase *tc = tcase_create("worked");
  tcase_add_test(tc, test_shared_beats_separate);
  tcase_add_test(tc, test_i5_adds_ordering);
  tcase_add_test(tc, test_argmin_tie_rule);
  tcase_add_test(tc, test_invalid_input);
  suite_add_tcase(s, tc);
  TCase *tr = tcase_create("random");
  tcase_set_timeout(tr, 300);
  tcase_add_test(tr, test_random_vs_enumeration);
  tcase_add_test(tr, test_random_scan_weights);
  tcase_add_test(tr, test_random_two_class_products);
  tcase_add_test(tr, test_random_large_classes);
  tcase_add_test(tr, test_deterministic);
  suite_add_tcase(s, tr);
  return s;
}

int main(void) { return test_run_forked(policy_suite()); }
