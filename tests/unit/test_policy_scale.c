/* The policy kernel's I5 endpoints at class sizes too large to enumerate
 * (12-60 records per side), against the kernel's previous algorithm kept
 * here as the reference: a DP over wrong labels on (sum e, sum j, g) that
 * takes any per-record values in {-1, 0, 1} and chooses A's g partners
 * record by record (docs/policy.md, "I5"; validated against enumeration by
 * tests/unit/test_policy.c while it was the kernel).  The new kernel instead
 * uses that threshold policies have nested acceptance sets and runs one DP on
 * (sum e, sum j) per cost vector, so the two share no code path beyond the
 * admissibility rule of docs/bounds.md.  Seed PB_TEST_SEED (default
 * 20260908), always printed. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/policy.h"
#include "testrng.h"

#define MAXN 64
#define NLAM 5
#define NEG (-1000000)

static const double LAMS[NLAM] = {0, 0.2, 0.5, 0.8, 1};


/* One class (label 0): counts and the perturbed records' values. */
struct rclass {
  int n, a, u, b, k, s, h, r, w;
  int nlab, c[MAXN], p[MAXN];   /* per wrong label: clean and perturbed wrong records */
  int wv[MAXN][MAXN];           /* [label][i]: value of its i-th perturbed wrong record */
  int cv[MAXN], nc;             /* correct perturbed records' values */
};

static int maxi(int a, int b) { return a > b ? a : b; }
static int mini(int a, int b) { return a < b ? a : b; }

static int cmp_desc(const void *pa, const void *pb) { return *(const int *)pb - *(const int *)pa; }

/* best total of x values out of v[0..n) (sorted descending in place) */
static void prefix(int *v, int n, int *out)
{
  qsort(v, (size_t)n, sizeof *v, cmp_desc);
  out[0] = 0;
  for (int x = 1; x <= n; x++) out[x] = out[x - 1] + v[x - 1];
}

/* The previous kernel's W5(g): DP over labels on (sum e, sum j, g). */
static void w5_reference(const struct rclass *cl, int gmax, int *W)
{
  const int h = cl->h, s = cl->s, r = cl->r, w = cl->w;
  static int cur[MAXN + 1][MAXN + 1][MAXN + 1], nxt[MAXN + 1][MAXN + 1][MAXN + 1];
  for (int E = 0; E <= h; E++)
    for (int J = 0; J <= s; J++)
      for (int G = 0; G <= gmax; G++) cur[E][J][G] = NEG;
  cur[0][0][0] = 0;
  for (int l = 0; l < cl->nlab; l++) {
    const int c = cl->c[l], p = cl->p[l];
    if (p == 0) continue;
    int v[MAXN], F[MAXN + 1];
    memcpy(v, cl->wv[l], (size_t)p * sizeof *v);
    prefix(v, p, F);
    for (int E = 0; E <= h; E++)
      for (int J = 0; J <= s; J++)
        for (int G = 0; G <= gmax; G++) nxt[E][J][G] = NEG;
    for (int e = 0; e <= mini(p, h); e++) {
      const int q0 = p - e, x = c + q0 - r - w;
      const int jlo = maxi(maxi(0, q0 - w), x > 0 ? (x + 1) / 2 : 0), jhi = mini(mini(c, q0), s);
      for (int E = 0; E + e <= h; E++)
        for (int J = 0; J <= s; J++)
          for (int G = 0; G <= gmax; G++) {
            if (cur[E][J][G] == NEG) continue;
            for (int t = 0; t <= e && G + t <= gmax; t++)
              for (int j = jlo; j <= jhi && J + j <= s; j++)
                nxt[E + e][J + j][G + t] = maxi(nxt[E + e][J + j][G + t], cur[E][J][G] + F[t]);
          }
    }
    memcpy(cur, nxt, sizeof cur);
  }
  for (int g = 0; g <= gmax; g++) W[g] = cur[h][s][g];
}

/* value of a perturbed record with acceptance mask mk (correct or wrong) */
static int value(int kind, int j, int l, int mk, int correct)
{
  const int aj = (mk >> j) & 1, al = (mk >> l) & 1;
  if (kind == 0) return correct ? al - aj : aj - al;   /* pair (j, l): D+ */
  const int v = correct ? 1 - aj : aj;                 /* J_j upper end; kind 2: negated */
  return kind == 1 ? v : -v;
}

/* max over x of lam W5(u - x) + (1 - lam) C(x) at I5, for one cost vector. */
static double class_max(const struct rclass *cl, const int *wmask_by_label[], const int *cmask, int kind, int j,
                        int l, double lam)
{
  const int u = cl->u, xlo = maxi(0, cl->k - (cl->a - cl->u)), xhi = mini(u, cl->k);
  struct rclass t = *cl;
  for (int q = 0; q < cl->nlab; q++)
    for (int i = 0; i < cl->p[q]; i++) t.wv[q][i] = value(kind, j, l, wmask_by_label[q][i], 0);
  int cv[MAXN], C[MAXN + 1], W[MAXN + 1];
  for (int i = 0; i < cl->b; i++) cv[i] = value(kind, j, l, cmask[i], 1);
  prefix(cv, cl->b, C);
  w5_reference(&t, u - xlo, W);
  double best = -1e300;
  for (int x = xlo; x <= xhi; x++) {
    ck_assert_int_gt(W[u - x], NEG / 2);
    const double v = lam * W[u - x] + (1 - lam) * C[x];
    if (v > best) best = v;
  }
  return best;
}

START_TEST(test_i5_matches_previous_algorithm)
{
  rng_state = test_seed() ^ 0x15ca1e;
  int checked = 0;
  for (int trial = 0; trial < 120; trial++) {
    const int n = rng_int(12, 60), nlab = rng_int(2, 6), P = rng_int(2, 5);
    const int acc0 = rng_int(40, 90), acc1 = rng_int(20, 80), persist = rng_int(0, 80);
    int32_t label[MAXN] = {0}, p0[MAXN], p1[MAXN];
    float s0[MAXN], s1[MAXN], tau[5];
    for (int i = 0; i < n; i++) {
      p0[i] = rng_int(0, 99) < acc0 ? 0 : rng_int(1, nlab);
      p1[i] = rng_int(0, 99) < acc1 ? 0 : (p0[i] != 0 && rng_int(0, 99) < persist ? p0[i] : rng_int(1, nlab));
      s0[i] = (float)rng_int(1, 16) / 16.0f;
      s1[i] = (float)rng_int(1, 16) / 16.0f;
    }
    for (int q = 0; q < P; q++) tau[q] = (float)rng_int(2, 15) / 16.0f;
    const float tau0 = (float)rng_int(4, 12) / 16.0f;
    const struct pb_cell_view in = {.index = -1, .n = n, .label = label, .pred0 = p0, .s0 = s0, .m0 = s0,
                                    .pred1 = p1, .s1 = s1, .m1 = s1, .tau = tau0};
    const struct pb_policy_setup ps = {.n_pol = P, .tau = tau, .n_lambda = NLAM, .lambda = LAMS};
    static struct pb_policy_result out;
    ck_assert_int_eq(pb_policy_cell(&in, &ps, &out), 0);

    /* the class's counts and per-label records, independently of the kernel */
    struct rclass cl;
    memset(&cl, 0, sizeof cl);
    cl.n = n;
    cl.nlab = nlab + 1;
    int cmask[MAXN], wm[MAXN + 1][MAXN];
    const int *wml[MAXN + 1];
    for (int i = 0; i < n; i++) {
      int mk = 0;
      for (int q = 0; q < P; q++) mk |= (s1[i] >= tau[q]) << q;
      cl.a += p0[i] == 0;
      cl.u += p0[i] == 0 && s0[i] >= tau0;
      cl.k += p0[i] == 0 && p1[i] == 0;
      cl.s += p0[i] != 0 && p0[i] == p1[i];
      if (p1[i] == 0) cmask[cl.b++] = mk;
      else wm[p1[i]][cl.p[p1[i]]++] = mk;
      if (p0[i] != 0) cl.c[p0[i]]++;
    }
    for (int q = 0; q <= nlab; q++) wml[q] = wm[q];
    cl.h = cl.a - cl.k;
    cl.r = cl.b - cl.k;
    cl.w = n - cl.a - cl.b + cl.k - cl.s;
    if (cl.u == 0) continue;
    checked++;
    for (int li = 0; li < NLAM; li++)
      for (int j = 0; j < P; j++) {
        const double hi = class_max(&cl, wml, cmask, 1, j, 0, LAMS[li]) / n;
        const double lo = -class_max(&cl, wml, cmask, 2, j, 0, LAMS[li]) / n;
        ck_assert_msg(fabs(out.J[PB_LEVEL_I5][li][j][1] - hi) < 1e-12 && fabs(out.J[PB_LEVEL_I5][li][j][0] - lo) < 1e-12,
                      "trial %d (n %d): J_%d at lambda %g: kernel [%.15g, %.15g], reference [%.15g, %.15g]", trial, n,
                      j, LAMS[li], out.J[PB_LEVEL_I5][li][j][0], out.J[PB_LEVEL_I5][li][j][1], lo, hi);
        for (int l = 0; l < P; l++) {
          if (l == j) continue;
          const double d = class_max(&cl, wml, cmask, 0, j, l, LAMS[li]) / n;
          ck_assert_msg(fabs(out.D[PB_LEVEL_I5][li][j][l] - d) < 1e-12,
                        "trial %d (n %d): D+_%d%d at lambda %g: kernel %.15g, reference %.15g", trial, n, j, l,
                        LAMS[li], out.D[PB_LEVEL_I5][li][j][l], d);
        }
      }
    for (int j = 0; j < P; j++) {   /* H ends: lambda = 1 */
      const double hi = class_max(&cl, wml, cmask, 1, j, 0, 1.0) / n, lo = -class_max(&cl, wml, cmask, 2, j, 0, 1.0) / n;
      ck_assert(fabs(out.H[PB_LEVEL_I5][j][1] - hi) < 1e-12 && fabs(out.H[PB_LEVEL_I5][j][0] - lo) < 1e-12);
    }
  }
  ck_assert_int_gt(checked, 100);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("policy_scale");
  TCase *tc = tcase_create("i5");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_i5_matches_previous_algorithm);
  suite_add_tcase(s, tc);
  return test_run_forked(s);
}
