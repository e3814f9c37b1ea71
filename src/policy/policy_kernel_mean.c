/* Exact feasible-permutation mean at I5 (docs/policy.md): per wrong label,
 * the probability that one of its perturbed records sits in the h block under
 * a uniform bijection with the class's five observed counts, from exact
 * 128-bit counts of those bijections. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy_kernel_internal.h"

#define PB_POLICY__COUNT_WORK 2000000   /* exact I5 mean: state updates per class (a few ms) */

typedef __int128 pb_i128;

static int pb_policy__mul(pb_i128 a, pb_i128 b, pb_i128 *o) { return __builtin_mul_overflow(a, b, o); }
static int pb_policy__add(pb_i128 a, pb_i128 b, pb_i128 *o) { return __builtin_add_overflow(a, b, o); }

static pb_i128 pb_policy__binom(int32_t n, int32_t k, int *ovf)
{
  if (k < 0 || k > n) return 0;
  if (k > n - k) k = n - k;
  pb_i128 r = 1;
  for (int32_t i = 1; i <= k; i++) {
    /* r * (n - k + i) / i stays integral at every step */
    if (pb_policy__mul(r, n - k + i, &r)) {
      *ovf = 1;
      return 0;
    }
    r /= i;
  }
  return r;
}

static pb_i128 pb_policy__fact(int32_t n, int *ovf)
{
  pb_i128 r = 1;
  for (int32_t i = 2; i <= n; i++)
    if (pb_policy__mul(r, i, &r)) {
      *ovf = 1;
      return 0;
    }
  return r;
}

/* Sum over bijections with the class's five counts of (weight label's e, or 1),
 * up to the constant factor C(a,k) C(b,k) k! h! r!: per label choose e (h
 * block), f (r block), j (same-label pairs), and the zero-diagonal rest by
 * inclusion-exclusion over i forced same-label pairs (rook polynomial):
 *   prod_l C(p,e) C(c,f) C(c-f,j) C(p-e,j) j! (-1)^i C(c-f-j,i) C(p-e-j,i) i!  * (w - sum i)!.
 * DP on (sum e, sum f, sum j, sum i).  Sets *ovf on 128-bit overflow or when
 * the state updates would exceed *budget (decremented by those done). */
static pb_i128 pb_policy__count5(const struct pb_policy__class *cl, int32_t weighted, int64_t *budget, int *ovf)
{
  const int32_t h = cl->hb, r = cl->rb, s = cl->s, w = cl->w;
  const size_t D1 = (size_t)w + 1, D2 = D1 * (s + 1), D3 = D2 * (r + 1), nst = D3 * (h + 1);
  /* the final sum multiplies by w!, which decides overflow before any work */
  pb_policy__fact(w, ovf);
  if (nst > (size_t)*budget) *ovf = 1;
  if (*ovf) return 0;
  pb_i128 *cur = calloc(nst, sizeof *cur), *nxt = calloc(nst, sizeof *nxt);
  pb_i128 total = 0;
  if (!cur || !nxt) {
    *ovf = 1;
    goto done;
  }
  cur[0] = 1;
  for (int32_t li = 0; li < cl->n_lab && !*ovf; li++) {
    const struct pb_policy__label *L = &cl->lab[li];
    memset(nxt, 0, nst * sizeof *nxt);
    for (int32_t e = 0; e <= L->p && e <= h && !*ovf; e++)
      for (int32_t f = 0; f <= L->c && f <= r && !*ovf; f++)
        for (int32_t j = 0; j <= L->c - f && j <= L->p - e && j <= s && !*ovf; j++)
          for (int32_t i = 0; i <= L->c - f - j && i <= L->p - e - j && i <= w && !*ovf; i++) {
            pb_i128 t = pb_policy__binom(L->p, e, ovf), x;
            const pb_i128 fac[] = {pb_policy__binom(L->c, f, ovf), pb_policy__binom(L->c - f, j, ovf),
                                   pb_policy__binom(L->p - e, j, ovf), pb_policy__fact(j, ovf),
                                   pb_policy__binom(L->c - f - j, i, ovf), pb_policy__binom(L->p - e - j, i, ovf),
                                   pb_policy__fact(i, ovf), li == weighted ? e : 1};
            for (size_t q = 0; q < sizeof fac / sizeof fac[0]; q++) *ovf |= pb_policy__mul(t, fac[q], &t);
            if (i & 1) t = -t;
            if (t == 0 || *ovf) continue;
            *budget -= (int64_t)(h - e + 1) * (r - f + 1) * (s - j + 1) * (w - i + 1);
            if (*budget < 0) {
              *ovf = 1;
              continue;
            }
            for (int32_t E = 0; E + e <= h; E++)
              for (int32_t Fv = 0; Fv + f <= r; Fv++)
                for (int32_t J = 0; J + j <= s; J++)
                  for (int32_t I = 0; I + i <= w; I++) {
                    pb_i128 v = cur[E * D3 + Fv * D2 + J * D1 + I];
                    if (v == 0) continue;
                    pb_i128 *d = &nxt[(E + e) * D3 + (Fv + f) * D2 + (J + j) * D1 + I + i];
                    *ovf |= pb_policy__mul(v, t, &x);
                    *ovf |= pb_policy__add(*d, x, d);
                  }
          }
    pb_i128 *tmp = cur;
    cur = nxt;
    nxt = tmp;
  }
  for (int32_t I = 0; I <= w && !*ovf; I++) {
    pb_i128 x;
    *ovf |= pb_policy__mul(cur[h * D3 + r * D2 + s * D1 + I], pb_policy__fact(w - I, ovf), &x);
    *ovf |= pb_policy__add(total, x, &total);
  }
done:
  free(cur);
  free(nxt);
  return total;
}

/* log2 C(n, k) */
static double pb_policy__lbinom(int32_t n, int32_t k)
{
  return (lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0)) / M_LN2;
}

/* rho[li] = E[e_l] / p_l: the probability that a wrong perturbed record of
 * label l sits in the h block under a uniform feasible I5 bijection.  Records
 * of one label are exchangeable (permuting them preserves all five counts).
 * Returns 0, or 1 when the exact counts do not fit in 128 bits or need more
 * than PB_POLICY__COUNT_WORK state updates. */
int pb_policy__rho5(const struct pb_policy__class *cl, double *rho)
{
  int npos = 0;
  for (int32_t li = 0; li < cl->n_lab; li++) npos += cl->lab[li].p > 0;
  for (int32_t li = 0; li < cl->n_lab; li++) rho[li] = 0;
  if (cl->hb == 0) return 0;
  if (cl->m == 0 || npos == 1) { /* the h block is every wrong record / one exchangeable label */
    for (int32_t li = 0; li < cl->n_lab; li++)
      if (cl->lab[li].p > 0) rho[li] = (double)cl->hb / (double)(cl->m == 0 ? cl->hb : cl->lab[li].p);
    return 0;
  }
  /* T >= the weight of the observed block structure alone (every structure's
   * weight times its zero-diagonal count, which is >= 1 for the observed one):
   * when that exceeds 2^127 the counts cannot fit, so skip the DPs */
  double lb = 0;
  for (int32_t li = 0; li < cl->n_lab; li++) {
    const struct pb_policy__label *L = &cl->lab[li];
    const int32_t e = L->e_obs, f = L->f_obs, j = L->j_obs;
    lb += pb_policy__lbinom(L->p, e) + pb_policy__lbinom(L->c, f) + pb_policy__lbinom(L->c - f, j) +
          pb_policy__lbinom(L->p - e, j) + lgamma(j + 1.0) / M_LN2;
  }
  if (lb > 127.5) return 1;
  /* the npos + 1 count DPs share one budget of state updates: beyond it the
   * class counts as unrepresentable, like one whose counts overflow */
  int64_t budget = PB_POLICY__COUNT_WORK;
  int ovf = 0;
  pb_i128 T = pb_policy__count5(cl, -1, &budget, &ovf);
  if (ovf || T <= 0) return 1;
  for (int32_t li = 0; li < cl->n_lab; li++) {
    if (cl->lab[li].p == 0) continue;
    pb_i128 S = pb_policy__count5(cl, li, &budget, &ovf);
    if (ovf) return 1;
    /* exact integer quotient and remainder keep the ratio accurate */
    pb_i128 den = T, q = S / den, rem = S % den;
    long double v = (long double)q + (long double)rem / (long double)den;
    rho[li] = (double)(v / (long double)cl->lab[li].p);
  }
  return 0;
}

