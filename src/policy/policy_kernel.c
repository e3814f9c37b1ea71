/* Exact per-class policy bounds (seed 000 Eq. 2, 8, 10, 11; Appendix A.7-A.8,
 * D).  Derivations in docs/policy.md.
 *
 * In one class, every cost counts events of the u correct accepted clean
 * records A only, so a correspondence matters through the multiset of
 * perturbed records pi(A): x correct ones (from the k block) and g = u - x
 * wrong ones (from the h block).  Levels constrain which (x, pi(A)) occur:
 *   I0: any u records;  Ik: x in [max(0, k-(a-u)), min(u, k)], any wrong;
 *   I5: same x range, wrong ones inside an h block admissible for (k, s).
 * For a cost vector (per-record values in {-1, 0, 1}, one for correct and
 * one for wrong perturbed records) the class maximum is
 *   max_x  lambda W(u - x) + (1 - lambda) C(x),
 * with C(x), W(g) the best totals of x correct / g wrong records: prefix sums
 * of sorted values, and at I5 an exact DP over wrong labels. */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/bounds.h"
#include "pairbound/error.h"
#include "pairbound/policy.h"
#include "pairbound/sort.h"
#include "policy_kernel_internal.h"

const char *const pb_policy_level_names[PB_POLICY_N_LEVELS] = {"I0", "Ik", "I5"};

#define PB_POLICY__NEG (INT32_MIN / 4)
#define PB_POLICY_TIE_COVERAGE 0.8   /* Appendix D tie rule: nominal coverage closest to .8 */
#define PB_POLICY__NCOMBO (PB_POLICY_MAX * PB_POLICY_MAX + 2 * PB_POLICY_MAX)
#define PB_POLICY__NLAM (PB_POLICY_MAX_LAMBDA + 2)

/* Per-call scratch and integer accumulators. */
struct pb_policy__work {
  int32_t P, NL, ncombo;
  double lam[PB_POLICY__NLAM];               /* 0, 1, then the caller's weights */
  /* weights with the same maximisers share a group (pb_policy__groups): the
   * sums below are per group, grp[li] is weight li's */
  int32_t ngrp, grp[PB_POLICY__NLAM];
  uint16_t rise[PB_POLICY__NLAM];            /* group: pb_policy__rising(), or 0 with scan */
  uint8_t scan[PB_POLICY__NLAM];             /* group of one weight that evaluates every point */
  double glam[PB_POLICY__NLAM];              /* group: its (first) weight */
  int64_t tot[PB_POLICY_N_LEVELS][PB_POLICY__NCOMBO][PB_POLICY__NLAM][2];
  int64_t all[PB_POLICY_N_LEVELS][PB_POLICY__NCOMBO][2];   /* what every group adds (one split point) */
  int64_t lem[PB_POLICY_N_LEVELS][PB_POLICY__NLAM][PB_POLICY_MAX][2];
  double hmean[PB_POLICY_N_LEVELS][PB_POLICY_MAX], lmean[PB_POLICY_N_LEVELS][PB_POLICY_MAX];
  int32_t *dp;
  size_t dp_cap;
  int hmean_bad;
};

/* Value of a perturbed record with mask @p mk under combo @p c:
 * c < P*P: pair (j, l) = (c / P, c % P): wrong +[acc_j]-[acc_l], correct the negation;
 * then P upper-J combos (wrong [acc_j], correct [rej_j]) and P negated ones. */
static inline int pb_policy__val(int32_t P, int32_t c, uint16_t mk, int correct)
{
  if (c < P * P) {
    int j = c / P, l = c % P;
    int d = ((mk >> j) & 1) - ((mk >> l) & 1);
    return correct ? -d : d;
  }
  int neg = c >= P * P + P;
  int j = (c - P * P) % P;
  int acc = (mk >> j) & 1;
  int v = correct ? 1 - acc : acc;
  return neg ? -v : v;
}

/* Best total of x values chosen among values in {-1, 0, 1}: cnt[0..2] = #(-1, 0, +1).
 * Concave in x and linear between its breakpoints x = cnt[2], cnt[2] + cnt[1]. */
static inline int32_t pb_policy__top(const int32_t cnt[3], int32_t x)
{
  const int32_t plus = x < cnt[2] ? x : cnt[2], minus = x - cnt[2] - cnt[1];
  return plus - (minus > 0 ? minus : 0);
}

/* Distinct acceptance masks of a set of records and how many records carry
 * each (every policy thresholds the one perturbed score, so a class has at
 * most P + 1 of them; 2^P bounds the arrays), and the counts every cost
 * vector's values come from: records accepted by tau_j, and accepted by tau_j
 * but not by tau_l. */
struct pb_policy__hist {
  int32_t n, nd;
  uint16_t mask[1 << PB_POLICY_MAX];
  int32_t cnt[1 << PB_POLICY_MAX];
  int32_t set[PB_POLICY_MAX], only[PB_POLICY_MAX][PB_POLICY_MAX];
};

static void pb_policy__hist_build(struct pb_policy__hist *h, const uint16_t *masks, int32_t n, int32_t P)
{
  h->n = n;
  h->nd = 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t q = 0;
    while (q < h->nd && h->mask[q] != masks[i]) q++;
    if (q == h->nd) h->mask[h->nd] = masks[i], h->cnt[h->nd++] = 0;
    h->cnt[q]++;
  }
  memset(h->set, 0, sizeof h->set);
  memset(h->only, 0, sizeof h->only);
  for (int32_t q = 0; q < h->nd; q++)
    for (int32_t j = 0; j < P; j++) {
      if (!((h->mask[q] >> j) & 1)) continue;
      h->set[j] += h->cnt[q];
      for (int32_t l = 0; l < P; l++) h->only[j][l] += (h->mask[q] >> l) & 1 ? 0 : h->cnt[q];
    }
}

/* #(-1, 0, +1) values of combo c (pb_policy__val) over the records of @p h. */
static void pb_policy__hist_vals(const struct pb_policy__hist *h, int32_t P, int32_t c, int correct, int32_t cnt[3])
{
  if (c < P * P) { /* wrong +[acc_j]-[acc_l], correct the negation */
    const int32_t j = c / P, l = c % P, plus = h->only[j][l], minus = h->only[l][j];
    cnt[0] = correct ? plus : minus;
    cnt[2] = correct ? minus : plus;
    cnt[1] = h->n - plus - minus;
    return;
  }
  const int32_t j = (c - P * P) % P, one = correct ? h->n - h->set[j] : h->set[j];
  const int neg = c >= P * P + P;
  cnt[0] = neg ? one : 0;
  cnt[1] = h->n - one;
  cnt[2] = neg ? 0 : one;
}

static int32_t pb_policy__max3(int32_t a, int32_t b, int32_t c)
{
  int32_t m = a > b ? a : b;
  return m > c ? m : c;
}

/* Lane kernels of pb_policy__best_q: nc is a multiple of PB_POLICY__LANES,
 * and the fixed-width inner loops vectorise at -O2. */
#define PB_POLICY__LANES 16

static void pb_policy__fill(int32_t *restrict o, int32_t nc)
{
  for (int32_t c = 0; c < nc; c++) o[c] = PB_POLICY__NEG;
}

static void pb_policy__vmax(int32_t *restrict o, const int32_t *restrict a, const int32_t *restrict b, int32_t nc)
{
  for (int32_t c0 = 0; c0 < nc; c0 += PB_POLICY__LANES)
    for (int32_t c = c0; c < c0 + PB_POLICY__LANES; c++) o[c] = a[c] > b[c] ? a[c] : b[c];
}

/* o = max(o, max(a, b) + v) */
static void pb_policy__vput(int32_t *restrict o, const int32_t *restrict a, const int32_t *restrict b,
                            const int32_t *restrict v, int32_t nc)
{
  for (int32_t c0 = 0; c0 < nc; c0 += PB_POLICY__LANES)
    for (int32_t c = c0; c < c0 + PB_POLICY__LANES; c++) {
      const int32_t m = (a[c] > b[c] ? a[c] : b[c]) + v[c];
      o[c] = m > o[c] ? m : o[c];
    }
}

/* For nc cost vectors at once (lane c of every DP state): the largest
 * sum over wrong labels of min(e_l, Q[l * nc + c]) over the h blocks
 * admissible for the class's (k, s).  Per label, e_l perturbed records sit in
 * the h block and j_l same-label pairs form with
 *   max(0, p-e-w, ceil((c+p-e-r-w)/2)) <= j_l <= min(c, p-e)
 * (docs/bounds.md, "H at I5").  DP over labels on (sum e, sum j): for one
 * e_l the admissible j_l form an interval, so a transition is a maximum over
 * a window of sum j of fixed width d, taken for all lanes together by the
 * van Herk / Gil-Werman block prefix and suffix maxima (three passes, no
 * branches per lane).  A label costs O((p_l + 1) (h + 1) (s + 1) nc).
 * Unreachable states hold values below 0 (PB_POLICY__NEG plus at most h).
 * Returns 0, or -1 if (h, s) is unreachable (cannot happen for observed
 * counts) or memory is exhausted. */
static int pb_policy__best_q(struct pb_policy__work *wk, const struct pb_policy__class *cl, int32_t nc,
                             const int32_t *Q, int32_t *best)
{
  const int32_t h = cl->hb, s = cl->s, r = cl->rb, w = cl->w, S1 = s + 1;
  const size_t nst = (size_t)(h + 1) * S1 * nc, nbuf = (size_t)3 * S1 * nc;
  const size_t need = 2 * nst + 2 * nbuf + (size_t)nc + 2 * (size_t)(h + 1);
  if (wk->dp_cap < need) {
    free(wk->dp);
    wk->dp = malloc(need * sizeof *wk->dp);
    wk->dp_cap = wk->dp ? need : 0;
    if (!wk->dp) return -1;
  }
  int32_t *cur = wk->dp, *nxt = cur + nst, *pre = nxt + nst, *suf = pre + nbuf, *ve = suf + nbuf;
  int32_t *jlo = ve + nc, *jhi = jlo + (h + 1);
  for (int32_t c = 0; c < nc; c++) cur[c] = 0;
  int32_t ereach = 0, jreach = 0;   /* a box holding every reachable state */
  for (int32_t li = 0; li < cl->n_lab; li++) {
    const struct pb_policy__label *L = &cl->lab[li];
    if (L->p == 0) continue;   /* fixed: e = j = 0 (c <= r + w holds for observed counts) */
    const int32_t etop = L->p < h ? L->p : h;
    for (int32_t e = 0; e <= etop; e++) {
      const int32_t q0 = L->p - e, x = L->c + q0 - r - w;
      jlo[e] = pb_policy__max3(0, q0 - w, x > 0 ? (x + 1) / 2 : 0);
      jhi[e] = L->c < q0 ? L->c : q0;
      if (jhi[e] > s) jhi[e] = s;
    }
    const int32_t ne = ereach + etop < h ? ereach + etop : h;
    int32_t nj = jreach + (L->c < L->p ? L->c : L->p);
    if (nj > s) nj = s;
    for (int32_t E = 0; E <= ne; E++)
      for (size_t i = 0; i < (size_t)(nj + 1) * nc; i++) nxt[(size_t)E * S1 * nc + i] = PB_POLICY__NEG;
    for (int32_t e = 0; e <= etop; e++) {
      const int32_t lo = jlo[e], hi = jhi[e], d = hi - lo + 1;
      if (d <= 0 || lo > s) continue;
      for (int32_t c = 0; c < nc; c++) ve[c] = e < Q[(size_t)li * nc + c] ? e : Q[(size_t)li * nc + c];
      /* window x covers padded sources [x, x + d - 1] = sum j in [x - d + 1, x]
       * and lands on sum j = x + lo; padded index i holds source i - (d - 1) */
      int32_t xmax = jreach + d - 1;
      if (xmax > s - lo) xmax = s - lo;
      const int32_t len = xmax + d;
      for (int32_t E = 0; E <= ereach && E + e <= h; E++) {
        const int32_t *row = cur + (size_t)E * S1 * nc;
        int32_t *dst = nxt + ((size_t)(E + e) * S1 + lo) * nc;
        for (int32_t i = 0; i < len; i++) {
          const int32_t J = i - (d - 1);
          int32_t *pp = pre + (size_t)i * nc;
          if (J < 0 || J > jreach) {
            if (i % d == 0) pb_policy__fill(pp, nc);
            else memcpy(pp, pp - nc, (size_t)nc * sizeof *pp);
          } else if (i % d == 0) {
            memcpy(pp, row + (size_t)J * nc, (size_t)nc * sizeof *pp);
          } else {
            pb_policy__vmax(pp, pp - nc, row + (size_t)J * nc, nc);
          }
        }
        for (int32_t i = len - 1; i >= 0; i--) {
          const int32_t J = i - (d - 1);
          int32_t *sp = suf + (size_t)i * nc;
          const int first = (i + 1) % d == 0 || i == len - 1;
          if (J < 0 || J > jreach) {
            if (first) pb_policy__fill(sp, nc);
            else memcpy(sp, sp + nc, (size_t)nc * sizeof *sp);
          } else if (first) {
            memcpy(sp, row + (size_t)J * nc, (size_t)nc * sizeof *sp);
          } else {
            pb_policy__vmax(sp, sp + nc, row + (size_t)J * nc, nc);
          }
        }
        for (int32_t x = 0; x <= xmax; x++)
          pb_policy__vput(dst + (size_t)x * nc, suf + (size_t)x * nc, pre + (size_t)(x + d - 1) * nc, ve, nc);
      }
    }
    int32_t *tmp = cur;
    cur = nxt;
    nxt = tmp;
    ereach = ne;
    jreach = nj;
  }
  if (h > ereach || s > jreach) return -1;
  for (int32_t c = 0; c < nc; c++) {
    best[c] = cur[((size_t)h * S1 + s) * nc + c];
    if (best[c] < 0) return -1;
  }
  return 0;
}

/* Q* of every cost vector that the I5 block restriction can change (qstar[c],
 * -1 for the others) and its sign: every policy is a threshold on the one
 * perturbed score, so acceptance sets are nested and a cost vector's
 * wrong-record values lie in {0, 1} (sign 1, Q_l = the label's +1 records) or
 * in {-1, 0} (sign -1, Q_l = its 0 records).  Within a label the records are
 * interchangeable for the block's admissibility, so a block of e_l records
 * holds min(e_l, Q_l) of the label's Q_l best ones, and
 *   W5(g) = min(g, Q*)   or   W5(g) = -max(0, g - Q*),
 * with Q* = max over admissible blocks of sum_l min(e_l, Q_l).
 * Returns 0, or -1 (pb_error_set where the input is at fault). */
static int pb_policy__i5_qstar(struct pb_policy__work *wk, const struct pb_policy__class *cl, int32_t P,
                               const uint8_t sw[PB_POLICY_MAX][PB_POLICY_MAX], int32_t *qstar, int8_t *sign)
{
  const int32_t nl = cl->n_lab;
  int32_t act[PB_POLICY__NCOMBO], best[PB_POLICY__NCOMBO + PB_POLICY__LANES], nc = 0;
  const int32_t stride = (wk->ncombo + PB_POLICY__LANES - 1) / PB_POLICY__LANES * PB_POLICY__LANES;
  int32_t *Q = malloc((size_t)(nl + 1) * stride * sizeof *Q), *Z = malloc((size_t)(nl + 1) * sizeof *Z);
  int status = -1;
  if (!Q || !Z) goto done;
  for (int32_t c = 0; c < wk->ncombo; c++) {
    qstar[c] = -1;
    if (c < P * P && !sw[c / P][c % P]) continue;
    int plus = 0, minus = 0;
    for (int32_t li = 0; li < nl; li++) {
      const struct pb_policy__label *L = &cl->lab[li];
      int32_t cnt[3] = {0, 0, 0};
      for (int32_t i = 0; i < L->p; i++) cnt[pb_policy__val(P, c, L->masks[i], 0) + 1]++;
      plus |= cnt[2] > 0;
      minus |= cnt[0] > 0;
      Q[(size_t)li * stride + nc] = cnt[2];
      Z[li] = cnt[1];
    }
    if (plus && minus) {
      pb_error_set("acceptance masks are not nested thresholds of one score");
      goto done;
    }
    if (!plus && !minus) continue;   /* every wrong value 0: W5 = W = 0 */
    if (minus)
      for (int32_t li = 0; li < nl; li++) Q[(size_t)li * stride + nc] = Z[li];
    sign[c] = plus ? 1 : -1;
    act[nc++] = c;
  }
  if (nc > 0) {
    /* compact the lanes to a multiple of PB_POLICY__LANES (padding lanes 0);
     * ncp <= stride, so rows move down in place */
    const int32_t ncp = (nc + PB_POLICY__LANES - 1) / PB_POLICY__LANES * PB_POLICY__LANES;
    for (int32_t li = 0; li < nl; li++) {
      memmove(Q + (size_t)li * ncp, Q + (size_t)li * stride, (size_t)nc * sizeof *Q);
      for (int32_t q = nc; q < ncp; q++) Q[(size_t)li * ncp + q] = 0;
    }
    if (pb_policy__best_q(wk, cl, ncp, Q, best)) goto done;
    for (int32_t q = 0; q < nc; q++) qstar[act[q]] = best[q];
  }
  status = 0;
done:
  free(Q);
  free(Z);
  return status;
}

/* ---- the cell --------------------------------------------------------------- */

/* side 0: a clean wrong record (obs 1: its partner is correct, 2: a same-label
 * wrong partner); side 1: a perturbed wrong record (obs 1: its partner is correct) */
struct pb_policy__key { int32_t lab, side; uint16_t mask; uint8_t obs; };

static int pb_policy__cmp_key(const void *pa, const void *pb)
{
  const struct pb_policy__key *a = pa, *b = pb;
  if (a->lab != b->lab) return a->lab < b->lab ? -1 : 1;
  if (a->side != b->side) return a->side - b->side;
  return (int)a->mask - (int)b->mask;
}

/* The cost maximisations below choose an integer point x of a range where two
 * integer counts A and B (below 2^31 in size) change by a and b in {-1, 0, 1}
 * per step, a and b falling in x; the computed value lam A + (1 - lam) B is
 * compared in x order and the first largest kept.  Bit 3 (a + 1) + (b + 1)
 * of pb_policy__rising(lam) says lam a + (1 - lam) b > 0 (the sum of two
 * exact products, so its sign is exact).
 *
 * When pb_policy__pieces_exact(lam) holds the first largest value is where
 * the exact slope stops being positive, clamped to the range, so weights with
 * the same rising mask have the same maximisers: the slope is 0 only at
 * a = b = 0, lam = 0 (b = 0), lam = 1 (a = 0) or lam = 1/2 (a = -b), where the
 * computed values are exact (integers times 0, 1 or 1/2) and so equal, and
 * otherwise at least 2^-16 in size, while rounding moves each computed value
 * by at most 2^-20: the computed values rise strictly while the slope is
 * positive, then stay equal, then fall strictly.  Other weights evaluate
 * every point. */
static int pb_policy__pieces_exact(double lam)
{
  const double lam1 = 1 - lam, tiny = 1.0 / 65536;
  return lam == 0 || lam == 1 || lam == 0.5 || (lam >= tiny && lam1 >= tiny && fabs(lam - lam1) >= tiny);
}

static uint16_t pb_policy__rising(double lam)
{
  uint16_t m = 0;
  for (int a = -1; a <= 1; a++)
    for (int b = -1; b <= 1; b++)
      if (lam * a + (1 - lam) * b > 0) m |= (uint16_t)(1u << (3 * (a + 1) + b + 1));
  return m;
}

/* Weight groups: the weights of wk->lam[0..NL) with pieces-exact maximisers
 * and the same rising mask share one; every other weight is a group alone. */
static void pb_policy__groups(struct pb_policy__work *wk)
{
  wk->ngrp = 0;
  for (int32_t li = 0; li < wk->NL; li++) {
    const double lam = wk->lam[li];
    const int scan = !pb_policy__pieces_exact(lam);
    const uint16_t rise = scan ? 0 : pb_policy__rising(lam);
    int32_t g = 0;
    while (g < wk->ngrp && (scan || wk->scan[g] || wk->rise[g] != rise)) g++;
    if (g == wk->ngrp) {
      wk->scan[g] = (uint8_t)scan;
      wk->rise[g] = rise;
      wk->glam[g] = lam;
      wk->ngrp++;
    }
    wk->grp[li] = g;
  }
}

/* Split type at x: 3 (a + 1) + (b + 1) for the step from x to x + 1, C = top(cc)
 * gaining b = 1, 0, -1 below cc[2], below cc[2] + cc[1], after, and W(u - x) =
 * top(cw) gaining a = 1, 0, -1 below u - cw[2] - cw[1], below u - cw[2], after. */
static int32_t pb_policy__split_type(const int32_t cc[3], const int32_t cw[3], int32_t u, int32_t x)
{
  const int32_t b = x < cc[2] ? 2 : x < cc[2] + cc[1] ? 1 : 0;
  const int32_t a = x < u - cw[2] - cw[1] ? 2 : x < u - cw[2] ? 1 : 0;
  return 3 * a + b;
}

/* For every weight group: the split x in [lo, hi] (x correct partners of A,
 * u - x wrong ones) with the first largest computed lam W(u - x) +
 * (1 - lam) C(x), C = pb_policy__top(cc), W = pb_policy__top(cw); its (W, C)
 * is added to tot[g], or to all when lo = hi.  The step types change only at the four breakpoints,
 * so the slope stops being positive at the first of them whose type does not
 * rise. */
static void pb_policy__split(struct pb_policy__work *wk, const int32_t cc[3], const int32_t cw[3], int32_t u,
                             int32_t lo, int32_t hi, int64_t (*tot)[2], int64_t all[2])
{
  const int32_t w0 = pb_policy__top(cw, u - lo), c0 = pb_policy__top(cc, lo);
  if (lo == hi) {
    all[0] += w0;
    all[1] += c0;
    return;
  }
  const int32_t bp[4] = {cc[2], cc[2] + cc[1], u - cw[2] - cw[1], u - cw[2]};
  int32_t type[4];
  for (int k = 0; k < 4; k++) type[k] = pb_policy__split_type(cc, cw, u, bp[k]);
  for (int32_t g = 0; g < wk->ngrp; g++) {
    int32_t bx = lo;
    if (wk->scan[g]) {
      const double lam = wk->glam[g];
      double best = lam * w0 + (1 - lam) * c0;
      for (int32_t x = lo + 1; x <= hi; x++) {
        const double v = lam * pb_policy__top(cw, u - x) + (1 - lam) * pb_policy__top(cc, x);
        if (v > best) best = v, bx = x;
      }
    } else {
      bx = hi;
      for (int k = 0; k < 4; k++)
        if (!((wk->rise[g] >> type[k]) & 1) && bp[k] < bx) bx = bp[k];
      if (bx < lo) bx = lo;
    }
    tot[g][0] += pb_policy__top(cw, u - bx);
    tot[g][1] += pb_policy__top(cc, bx);
  }
}

/* Extremes of every combo's value (D+ pairs, H_j and L_j ends) at every
 * level and weight: the best split x of the accepted correct clean records
 * between correct (C) and wrong (W, W5 at I5) perturbed partners.  hc and hw
 * hold the masks of the correct and the wrong perturbed records. */
static int pb_policy__class_combos(struct pb_policy__work *wk, const struct pb_policy__class *cl, int32_t P,
                                   const struct pb_policy__hist *hc, const struct pb_policy__hist *hw)
{
  const int32_t n = cl->n, a = cl->a, u = cl->u, b = cl->b, k = cl->k, nw = n - b;
  int32_t xlo[PB_POLICY_N_LEVELS], xhi[PB_POLICY_N_LEVELS];
  xlo[0] = u - nw > 0 ? u - nw : 0;
  xhi[0] = u < b ? u : b;
  xlo[1] = xlo[2] = k - (a - u) > 0 ? k - (a - u) : 0;
  xhi[1] = xhi[2] = u < k ? u : k;
  const int32_t g5max = u - xlo[2];   /* <= hb */

  /* does any label restriction bite at I5?  (h block fixed or one label: no) */
  int npos = 0;
  for (int32_t li = 0; li < cl->n_lab; li++) npos += cl->lab[li].p > 0;
  const int i5_free = cl->m == 0 || npos <= 1 || g5max == 0;

  /* pairs that no record of the class switches contribute exactly 0 */
  uint8_t sw[PB_POLICY_MAX][PB_POLICY_MAX] = {{0}};
  for (int32_t q = 0; q < hc->nd + hw->nd; q++) {
    const uint16_t mk = q < hc->nd ? hc->mask[q] : hw->mask[q - hc->nd];
    for (int32_t j = 0; j < P; j++)
      for (int32_t l = 0; l < P; l++) sw[j][l] |= ((mk >> j) & 1) != ((mk >> l) & 1);
  }
  int32_t qstar[PB_POLICY__NCOMBO];
  int8_t sign[PB_POLICY__NCOMBO];
  for (int32_t c = 0; c < wk->ncombo; c++) qstar[c] = -1;
  if (!i5_free && pb_policy__i5_qstar(wk, cl, P, sw, qstar, sign)) return -1;
  for (int32_t c = 0; c < wk->ncombo; c++) {
    if (c < P * P && !sw[c / P][c % P]) continue;   /* D+_jj = 0; non-switching pairs add 0 */
    int32_t cc[3], cw[PB_POLICY_N_LEVELS][3];
    pb_policy__hist_vals(hc, P, c, 1, cc);
    pb_policy__hist_vals(hw, P, c, 0, cw[0]);
    memcpy(cw[1], cw[0], sizeof cw[0]);
    memcpy(cw[2], cw[0], sizeof cw[0]);
    /* W5(g) = min(g, Q*) or -max(0, g - Q*) as a top(): Q* ones then u zeros, or Q* zeros then -1s */
    if (qstar[c] >= 0) {
      cw[2][0] = 0;
      cw[2][1] = sign[c] > 0 ? u : qstar[c];
      cw[2][2] = sign[c] > 0 ? qstar[c] : 0;
    }
    for (int lv = 0; lv < PB_POLICY_N_LEVELS; lv++)
      pb_policy__split(wk, cc, cw[lv], u, xlo[lv], xhi[lv], wk->tot[lv][c], wk->all[lv][c]);
  }
  return 0;
}

/* Lemma 1's maximum of lam h + (1 - lam) l over the count box hl x ll with
 * h + l <= u, for every weight group: the first h (scanning up, l =
 * min(l_hi, u - h), h skipped where l < l_lo) with the largest computed value;
 * (h, l) is added to lem[lv][g][j].  The feasible h are [hl_lo, hi], hi =
 * min(hl_hi, u - l_lo); a step of h gains (1, 0) below u - l_hi, (1, -1)
 * from there (split types 7 and 6). */
static void pb_policy__lemma1_best(struct pb_policy__work *wk, const int64_t hl[2], const int64_t ll[2], int64_t u,
                                   int lv, int32_t j)
{
  const int64_t hi = hl[1] < u - ll[0] ? hl[1] : u - ll[0];
  if (ll[1] < ll[0] || hi < hl[0]) return;   /* no feasible h: (0, 0) */
  for (int32_t g = 0; g < wk->ngrp; g++) {
    int64_t bh = hl[0];
    if (wk->scan[g]) {
      const double lam = wk->glam[g];
      double best = -1;
      for (int64_t hh = hl[0]; hh <= hi; hh++) {
        const int64_t l = ll[1] < u - hh ? ll[1] : u - hh;
        const double val = lam * hh + (1 - lam) * l;
        if (val > best) best = val, bh = hh;
      }
    } else if ((wk->rise[g] >> 7) & 1) {
      bh = (wk->rise[g] >> 6) & 1 ? hi : u - ll[1];
      if (bh < hl[0]) bh = hl[0];
      if (bh > hi) bh = hi;
    }
    wk->lem[lv][g][j][0] += bh;
    wk->lem[lv][g][j][1] += ll[1] < u - bh ? ll[1] : u - bh;
  }
}

/* Lemma 1 (Eq. 8) per policy and the feasible-permutation means at I0 and Ik
 * (and L at I5) from the identification formulas' sharp count bounds; hc and
 * hw hold the masks of the correct and the wrong perturbed records. */
static int pb_policy__class_lemma1(struct pb_policy__work *wk, const struct pb_policy__class *cl, int32_t P,
                                   const struct pb_policy__hist *hc, const struct pb_policy__hist *hw)
{
  const int32_t n = cl->n, a = cl->a, u = cl->u, b = cl->b, k = cl->k, hb = cl->hb, nw = n - b;
  const int32_t m = cl->m;
  for (int32_t j = 0; j < P; j++) {
    const int32_t t = hw->set[j], v = hc->n - hc->set[j];   /* wrong accepted / correct rejected by tau_j */
    int64_t hl[PB_POLICY_N_LEVELS][2], ll[PB_POLICY_N_LEVELS][2];
    hl[0][0] = u + t - n > 0 ? u + t - n : 0;                             /* Eq. 4 */
    hl[0][1] = u < t ? u : t;
    ll[0][0] = u + v - n > 0 ? u + v - n : 0;
    ll[0][1] = u < v ? u : v;
    int32_t x7 = hb - (a - u) - (nw - t);                                 /* Eq. 7 */
    hl[1][0] = x7 > 0 ? x7 : 0;
    hl[1][1] = u < t ? (u < hb ? u : hb) : (t < hb ? t : hb);
    int32_t x5 = k - (a - u) - (b - v);                                   /* Eq. 5 */
    ll[1][0] = ll[2][0] = x5 > 0 ? x5 : 0;
    ll[1][1] = ll[2][1] = u < v ? (u < k ? u : k) : (v < k ? v : k);
    if (hb == 0 || m == 0) {
      hl[2][0] = hl[1][0];
      hl[2][1] = hl[1][1];
    } else if (pb_bounds_class_h_i5(n, cl->label, cl->pred0, cl->z0, cl->pred1, cl->z1 + (size_t)j * n, k, cl->s,
                                    hl[2]) != 0) {
      pb_error_set("observed five-state counts reported infeasible");
      return -1;
    }
    for (int lv = 0; lv < PB_POLICY_N_LEVELS; lv++) pb_policy__lemma1_best(wk, hl[lv], ll[lv], u, lv, j);

    /* feasible-permutation means (docs/policy.md) */
    wk->hmean[0][j] += (double)u * t / n;
    wk->lmean[0][j] += (double)u * v / n;
    if (a > 0 && nw > 0) wk->hmean[1][j] += (double)u * hb * t / ((double)a * nw);
    if (a > 0 && b > 0) {
      wk->lmean[1][j] += (double)u * k * v / ((double)a * b);
      wk->lmean[2][j] += (double)u * k * v / ((double)a * b);
    }
  }
  return 0;
}

/* The exact mean of H_j at I5 over feasible permutations (docs/policy.md);
 * counts a class whose count overflows instead. */
static void pb_policy__class_i5_mean(struct pb_policy__work *wk, const struct pb_policy__class *cl, int32_t P,
                                     double *rho)
{
  const int32_t u = cl->u, a = cl->a;
  if (pb_policy__rho5(cl, rho)) {
    wk->hmean_bad++;
    return;
  }
  for (int32_t j = 0; j < P; j++) {
    double sum = 0;
    for (int32_t li = 0; li < cl->n_lab; li++) {
      int32_t tl = 0;
      for (int32_t i = 0; i < cl->lab[li].p; i++) tl += (cl->lab[li].masks[i] >> j) & 1;
      sum += rho[li] * tl;
    }
    wk->hmean[2][j] += (double)u / a * sum;
  }
}

/* One class's contribution at every level. */
static int pb_policy__class(struct pb_policy__work *wk, const struct pb_policy__class *cl, int32_t P)
{
  if (cl->u == 0) return 0;   /* no event can occur: every cost is 0, as are the means */
  struct pb_policy__hist hc, hw;
  pb_policy__hist_build(&hc, cl->cmask, cl->b, P);
  pb_policy__hist_build(&hw, cl->wmask, cl->n - cl->b, P);
  double *rho = malloc((size_t)(cl->n_lab + 1) * sizeof *rho);
  int status = -1;
  if (rho && pb_policy__class_combos(wk, cl, P, &hc, &hw) == 0 && pb_policy__class_lemma1(wk, cl, P, &hc, &hw) == 0) {
    if (cl->hb > 0) pb_policy__class_i5_mean(wk, cl, P, rho);
    status = 0;
  }
  free(rho);
  return status;
}

int pb_policy_argmin(const double *v, const double *q, int32_t n)
{
  double mn = INFINITY;
  for (int32_t j = 0; j < n; j++)
    if (!isnan(v[j]) && v[j] < mn) mn = v[j];
  if (mn == INFINITY) return -1;
  int best = -1;
  for (int32_t j = 0; j < n; j++) {
    if (isnan(v[j]) || v[j] > mn + PB_POLICY_STRICT) continue;
    if (best < 0) {
      best = j;
      continue;
    }
    if (q) {
      double dj = fabs(q[j] - PB_POLICY_TIE_COVERAGE), db = fabs(q[best] - PB_POLICY_TIE_COVERAGE);
      if (dj < db - 1e-12 || (fabs(dj - db) <= 1e-12 && q[j] < q[best])) best = j;
    }
  }
  return best;
}

/* Inputs a cell must satisfy; returns 0 or -1 with the error set. */
static int pb_policy__check(const struct pb_cell_view *in, const struct pb_policy_setup *ps,
                            const struct pb_policy_result *out)
{
  if (!in || !out || in->n <= 0 || !in->label || !in->pred0 || !in->pred1 || !in->s0 || !in->s1 || !ps || !ps->tau ||
      ps->n_pol < 1 || ps->n_pol > PB_POLICY_MAX || ps->n_lambda < 1 || ps->n_lambda > PB_POLICY_MAX_LAMBDA ||
      !ps->lambda)
    return pb_cell_error(in, -1, "policy: invalid cell input (n = %d, %d policies, %d weights)", in ? in->n : 0,
                         ps ? ps->n_pol : 0, ps ? ps->n_lambda : 0);
  if (isnan(in->tau)) return pb_cell_error(in, -1, "policy: clean threshold is NaN");
  for (int32_t j = 0; j < ps->n_pol; j++)
    if (isnan(ps->tau[j])) return pb_cell_error(in, -1, "policy: threshold %d is NaN", (int)j);
  for (int32_t i = 0; i < ps->n_lambda; i++)
    if (!(ps->lambda[i] >= 0 && ps->lambda[i] <= 1))
      return pb_cell_error(in, -1, "policy: weight %g outside [0, 1]", ps->lambda[i]);
  for (int32_t i = 0; i < in->n; i++)
    if (in->label[i] < 0 || in->pred0[i] < 0 || in->pred1[i] < 0)
      return pb_cell_error(in, in->label[i], "policy: record %d has a negative label or prediction", (int)i);
  return 0;
}

/* Per-record scratch of pb_policy_cell. */
struct pb_policy__bufs {
  int64_t *idx;
  uint16_t *mask, *cm, *wm;
  struct pb_policy__key *keys;
  struct pb_policy__label *labs;
  int32_t *p0, *p1;
  uint8_t *z0, *z1;
};

/* Marginal and observed quantities and the pairwise switching structure;
 * mask[i] receives record i's perturbed acceptance bits. */
static void pb_policy__observed(const struct pb_cell_view *in, const struct pb_policy_setup *ps, uint16_t *mask,
                                struct pb_policy_result *out)
{
  const int32_t n = in->n, P = ps->n_pol;
  int64_t cE[PB_POLICY_MAX] = {0}, cR[PB_POLICY_MAX] = {0}, cH[PB_POLICY_MAX] = {0}, cL[PB_POLICY_MAX] = {0};
  uint8_t sw_c[PB_POLICY_MAX][PB_POLICY_MAX] = {{0}}, sw_w[PB_POLICY_MAX][PB_POLICY_MAX] = {{0}};
  uint8_t seen[2][1 << PB_POLICY_MAX] = {{0}};   /* masks of wrong / correct perturbed records */
  uint16_t dist[2][1 << PB_POLICY_MAX];
  int32_t nd[2] = {0, 0};
  for (int32_t i = 0; i < n; i++) {
    uint16_t mk = 0;
    for (int32_t j = 0; j < P; j++) mk |= (uint16_t)((in->s1[i] >= ps->tau[j]) << j);
    mask[i] = mk;
    const int c1 = in->pred1[i] == in->label[i];
    const int aA = in->pred0[i] == in->label[i] && in->s0[i] >= in->tau;
    for (int32_t j = 0; j < P; j++) {
      int acc = (mk >> j) & 1;
      cE[j] += !c1 && acc;
      cR[j] += c1 && !acc;
      cH[j] += aA && !c1 && acc;
      cL[j] += aA && c1 && !acc;
    }
    if (!seen[c1][mk]) seen[c1][mk] = 1, dist[c1][nd[c1]++] = mk;
  }
  /* a pair switches where some record's mask differs at its two bits */
  for (int side = 0; side < 2; side++)
    for (int32_t q = 0; q < nd[side]; q++)
      for (int32_t j = 0; j < P; j++)
        for (int32_t l = 0; l < P; l++)
          if (((dist[side][q] >> j) & 1) != ((dist[side][q] >> l) & 1)) {
            if (side) sw_c[j][l] = 1;
            else sw_w[j][l] = 1;
          }
  for (int32_t j = 0; j < P; j++) {
    out->E[j] = (double)cE[j] / n;
    out->Rj[j] = (double)cR[j] / n;
    out->H_obs[j] = (double)cH[j] / n;
    out->L_obs[j] = (double)cL[j] / n;
    for (int32_t l = 0; l < P; l++) {
      out->mixed[j][l] = sw_c[j][l] && sw_w[j][l];
      out->same[j][l] = !sw_c[j][l] && !sw_w[j][l];
    }
  }

}

/* Class of the records idx[st..en) (one label y, index order): counts,
 * contiguous copies and the wrong records grouped by label. */
static void pb_policy__build_class(const struct pb_cell_view *in, int32_t P, const struct pb_policy__bufs *bf,
                                   int32_t st, int32_t en, int32_t y, struct pb_policy__class *cl)
{
  const int64_t *idx = bf->idx;
  const uint16_t *mask = bf->mask;
  uint16_t *cm = bf->cm, *wm = bf->wm;
  struct pb_policy__key *keys = bf->keys;
  struct pb_policy__label *labs = bf->labs;
  int32_t *p0 = bf->p0, *p1 = bf->p1;
  uint8_t *z0 = bf->z0, *z1 = bf->z1;
  memset(cl, 0, sizeof *cl);
  cl->n = en - st;
  cl->label = y;
  cl->pred0 = p0;
  cl->pred1 = p1;
  cl->z0 = z0;
  cl->z1 = z1;
  int32_t nk = 0, nb = 0, nwr = 0;
  for (int32_t q = 0; q < cl->n; q++) {
    const int32_t i = idx[st + q];
    const int c0 = in->pred0[i] == y, c1 = in->pred1[i] == y;
    p0[q] = in->pred0[i];
    p1[q] = in->pred1[i];
    z0[q] = in->s0[i] >= in->tau;
    for (int32_t j = 0; j < P; j++) z1[(size_t)j * cl->n + q] = (mask[i] >> j) & 1;
    cl->a += c0;
    cl->u += c0 && z0[q];
    cl->k += c0 && c1;
    cl->s += !c0 && !c1 && in->pred0[i] == in->pred1[i];
    if (c1) cm[nb++] = mask[i];
    else keys[nk++] = (struct pb_policy__key){in->pred1[i], 1, mask[i], (uint8_t)c0};
    if (!c0)
      keys[nk++] = (struct pb_policy__key){in->pred0[i], 0, 0, (uint8_t)(c1 ? 1 : in->pred0[i] == in->pred1[i] ? 2 : 0)};
  }
  cl->b = nb;
  cl->hb = cl->a - cl->k;
  cl->rb = cl->b - cl->k;
  cl->m = cl->n - cl->a - cl->b + cl->k;
  cl->w = cl->m - cl->s;
  cl->cmask = cm;
  cl->wmask = wm;
  qsort(keys, (size_t)nk, sizeof *keys, pb_policy__cmp_key);
  cl->lab = labs;
  for (int32_t q = 0; q < nk;) {
    struct pb_policy__label *L = &labs[cl->n_lab++];
    L->lab = keys[q].lab;
    L->c = L->p = L->e_obs = L->f_obs = L->j_obs = 0;
    L->masks = wm + nwr;
    for (; q < nk && keys[q].lab == L->lab; q++) {
      if (keys[q].side == 0) {
        L->c++;
        L->f_obs += keys[q].obs == 1;
        L->j_obs += keys[q].obs == 2;
      } else {
        wm[nwr++] = keys[q].mask;
        L->p++;
        L->e_obs += keys[q].obs;
      }
    }
  }
}

/* The call's settings and zero accumulators.  Only the slices that the
 * class loop and pb_policy__rates() touch (combos below ncombo, weights below
 * NL, policies below P) are zeroed: the whole struct is 144 KB, and clearing
 * all of it was about a fifth of a call on the small classes that verify
 * passes one at a time. */
static void pb_policy__work_init(struct pb_policy__work *wk, const struct pb_policy_setup *ps)
{
  const int32_t P = ps->n_pol;
  wk->P = P;
  wk->NL = ps->n_lambda + 2;
  wk->ncombo = P * P + 2 * P;
  wk->lam[0] = 0;
  wk->lam[1] = 1;
  for (int32_t i = 0; i < ps->n_lambda; i++) wk->lam[2 + i] = ps->lambda[i];
  pb_policy__groups(wk);
  for (int lv = 0; lv < PB_POLICY_N_LEVELS; lv++) {
    for (int32_t c = 0; c < wk->ncombo; c++) memset(wk->tot[lv][c], 0, (size_t)wk->ngrp * sizeof wk->tot[lv][c][0]);
    memset(wk->all[lv], 0, (size_t)wk->ncombo * sizeof wk->all[lv][0]);
    for (int32_t g = 0; g < wk->ngrp; g++) memset(wk->lem[lv][g], 0, (size_t)P * sizeof wk->lem[lv][g][0]);
    for (int32_t j = 0; j < P; j++) wk->hmean[lv][j] = wk->lmean[lv][j] = 0.0;
  }
  wk->dp = NULL;
  wk->dp_cap = 0;
  wk->hmean_bad = 0;
}

/* Every group's totals with what all groups share added in. */
static void pb_policy__fold(struct pb_policy__work *wk)
{
  for (int lv = 0; lv < PB_POLICY_N_LEVELS; lv++)
    for (int32_t c = 0; c < wk->ncombo; c++)
      for (int32_t g = 0; g < wk->ngrp; g++) {
        wk->tot[lv][c][g][0] += wk->all[lv][c][0];
        wk->tot[lv][c][g][1] += wk->all[lv][c][1];
      }
}

/* Rates from the integer totals: one division by N per value. */
static void pb_policy__rates(const struct pb_policy__work *wk, const struct pb_policy_setup *ps, int32_t n,
                             struct pb_policy_result *out)
{
  const int32_t P = ps->n_pol;
  const double N = n;
  for (int lv = 0; lv < PB_POLICY_N_LEVELS; lv++) {
    for (int32_t j = 0; j < P; j++) {
      const int32_t hi = P * P + j, lo = P * P + P + j;
      out->H[lv][j][0] = -(double)wk->tot[lv][lo][wk->grp[1]][0] / N;
      out->H[lv][j][1] = (double)wk->tot[lv][hi][wk->grp[1]][0] / N;
      out->L[lv][j][0] = -(double)wk->tot[lv][lo][wk->grp[0]][1] / N;
      out->L[lv][j][1] = (double)wk->tot[lv][hi][wk->grp[0]][1] / N;
      out->H_mean[lv][j] = lv == PB_LEVEL_I5 && wk->hmean_bad ? NAN : wk->hmean[lv][j] / N;
      out->L_mean[lv][j] = wk->lmean[lv][j] / N;
    }
    for (int32_t li = 0; li < ps->n_lambda; li++) {
      const int32_t q = wk->grp[li + 2];
      const double lam = wk->lam[li + 2];
      for (int32_t j = 0; j < P; j++) {
        const int64_t *th = wk->tot[lv][P * P + j][q], *tl = wk->tot[lv][P * P + P + j][q];
        out->J[lv][li][j][0] = -(lam * tl[0] + (1 - lam) * tl[1]) / N;
        out->J[lv][li][j][1] = (lam * th[0] + (1 - lam) * th[1]) / N;
        out->J_lemma1[lv][li][j] = (lam * wk->lem[lv][q][j][0] + (1 - lam) * wk->lem[lv][q][j][1]) / N;
        out->Jn[lv][li][j][0] = lam * out->E[j] + (1 - lam) * out->L[lv][j][0];
        out->Jn[lv][li][j][1] = lam * out->E[j] + (1 - lam) * out->L[lv][j][1];
        for (int32_t l = 0; l < P; l++) {
          const int64_t *t = wk->tot[lv][j * P + l][q];
          out->D[lv][li][j][l] = j == l ? 0.0 : (lam * t[0] + (1 - lam) * t[1]) / N;
          /* max of L_j - L_l is the lambda = 0 evaluation of the pair */
          double dl = j == l ? 0.0 : (double)wk->tot[lv][j * P + l][wk->grp[0]][1] / N;
          out->Dn[lv][li][j][l] = j == l ? 0.0 : lam * (out->E[j] - out->E[l]) + (1 - lam) * dl;
        }
      }
    }
  }
}

/* Zero what a call writes: the marginal and interval fields, and of the
 * per-weight arrays only the first nl weights of each level.  The whole
 * struct is 130 KB, and clearing it all was a third of verify --policies,
 * which passes every class on its own (2.9 M calls on the paper store). */
static void pb_policy__out_zero(struct pb_policy_result *out, int32_t nl)
{
  memset(out, 0, offsetof(struct pb_policy_result, J));
  for (int lv = 0; lv < PB_POLICY_N_LEVELS; lv++) {
    memset(out->J[lv], 0, (size_t)nl * sizeof out->J[lv][0]);
    memset(out->J_lemma1[lv], 0, (size_t)nl * sizeof out->J_lemma1[lv][0]);
    memset(out->D[lv], 0, (size_t)nl * sizeof out->D[lv][0]);
    memset(out->Jn[lv], 0, (size_t)nl * sizeof out->Jn[lv][0]);
    memset(out->Dn[lv], 0, (size_t)nl * sizeof out->Dn[lv][0]);
  }
  out->n_mean_unrepresentable = 0;
}

int pb_policy_cell(const struct pb_cell_view *in, const struct pb_policy_setup *ps, struct pb_policy_result *out)
{
  if (pb_policy__check(in, ps, out)) return -1;
  const int32_t n = in->n, P = ps->n_pol;
  pb_error_clear();
  struct pb_policy__work *wk = malloc(sizeof *wk);
  if (wk) pb_policy__work_init(wk, ps);
  struct pb_policy__bufs bf = {
    .idx = malloc((size_t)n * sizeof *bf.idx), .mask = malloc((size_t)n * sizeof *bf.mask),
    .cm = malloc((size_t)n * sizeof *bf.cm), .wm = malloc((size_t)n * sizeof *bf.wm),
    .keys = malloc(2 * (size_t)n * sizeof *bf.keys), .labs = malloc(2 * (size_t)n * sizeof *bf.labs),
    .p0 = malloc((size_t)n * sizeof *bf.p0), .p1 = malloc((size_t)n * sizeof *bf.p1),
    .z0 = malloc((size_t)n), .z1 = malloc((size_t)n * P)};
  int64_t *idx = bf.idx;
  int status = -1;
  if (!wk || !bf.idx || !bf.mask || !bf.cm || !bf.wm || !bf.keys || !bf.labs || !bf.p0 || !bf.p1 || !bf.z0 || !bf.z1) {
    pb_cell_error(in, -1, "policy: out of memory (n = %d)", n);
    goto done;
  }
  pb_policy__out_zero(out, ps->n_lambda);
  out->N = n;
  out->n_pol = P;
  out->n_lambda = ps->n_lambda;

  pb_policy__observed(in, ps, bf.mask, out);

  /* classes in ascending label order, records in index order */
  for (int32_t i = 0; i < n; i++) idx[i] = (int64_t)in->label[i] * 4294967296LL + i; /* (no shift: labels may be < 0) */
  qsort(idx, (size_t)n, sizeof *idx, pb_sort_cmp_i64);
  for (int32_t i = 0; i < n; i++) idx[i] &= 0xffffffff;
  for (int32_t st = 0; st < n;) {
    const int32_t y = in->label[idx[st]];
    int32_t en = st;
    while (en < n && in->label[idx[en]] == y) en++;
    struct pb_policy__class cl;
    pb_policy__build_class(in, P, &bf, st, en, y, &cl);
    if (pb_policy__class(wk, &cl, P)) {
      char why[512];
      snprintf(why, sizeof why, "%s", pb_error_message());
      pb_cell_error(in, y, "policy: %s", why);
      goto done;
    }
    st = en;
  }

  pb_policy__fold(wk);
  pb_policy__rates(wk, ps, n, out);
  out->n_mean_unrepresentable = wk->hmean_bad;
  status = 0;
done:
  if (wk) free(wk->dp);
  free(wk);
  free(bf.idx);
  free(bf.mask);
  free(bf.cm);
  free(bf.wm);
  free(bf.keys);
  free(bf.labs);
  free(bf.p0);
  free(bf.p1);
  free(bf.z0);
  free(bf.z1);
  return status;
}
