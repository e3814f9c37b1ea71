/* Exact five-state (I5) bounds for one class without enumeration or LP.
 * Derivation in docs/bounds.md ("H at I5"). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/bounds.h"
#include "pairbound/sort.h"
#include "bounds_internal.h"

static inline int32_t pb_bounds__max3(int32_t a, int32_t b, int32_t c)
{
  int32_t m = a > b ? a : b;
  return m > c ? m : c;
}

/* Exact t' range at I5 (seed A.6 / Table 5 generalised; docs/bounds.md).
 *
 * Per wrong label l with c_l clean and p_l = pA_l + pR_l perturbed wrong
 * records, a bijection with block sizes (h, r, s, w) is a choice of
 * e_l (perturbed l in the h block), f_l (clean l in the r block) and j_l
 * (same-label l pairs) with sums h, r, s, whose leftovers g_l = c_l-f_l-j_l,
 * q_l = p_l-e_l-j_l admit a zero-diagonal transport: g_l + q_l <= w (Hall).
 * Eliminating f exactly leaves, per label, an interval of j_l for each e_l:
 *   max(0, p_l-e_l-w, ceil((c_l+p_l-e_l-r-w)/2)) <= j_l <= min(c_l, p_l-e_l),
 * so a DP over labels on (sum e, sum j) is exact.  Within a label, accepted and
 * rejected records are interchangeable, so t' ranges over
 * [sum max(0, e_l-pR_l), sum min(e_l, pA_l)] and only its extremes are kept. */
int pb_bounds__h_i5_core(int64_t *keys, int32_t nkeys, int32_t h, int32_t r, int32_t s,
                         int32_t w, int32_t *dp, int32_t tp[2])
{
  tp[0] = tp[1] = -1;
  if (h < 0 || r < 0 || s < 0 || w < 0) return 1;
  /* <= 2 n_y wrong records: insertion sort beats qsort's call overhead */
  pb_sort_small_i64(keys, nkeys, 48);

  const int32_t S1 = s + 1;
  const size_t nst = (size_t)(h + 1) * (size_t)S1;
  /* max t' (or -1 if unreachable) and min t' per state (sum e, sum j). */
  int32_t *cmax = dp, *cmin = dp + nst, *nmax = dp + 2 * nst, *nmin = dp + 3 * nst;
  for (size_t i = 0; i < nst; i++) cmax[i] = -1;
  cmax[0] = 0;
  cmin[0] = 0;
  int32_t emax_reach = 0, jmax_reach = 0; /* bounding box of reachable states */
  int32_t *jlo = dp + 4 * nst, *jhi = jlo + (h + 1); /* per-e window of j (no VLA: huge classes) */

  int32_t i = 0;
  while (i < nkeys) {
    const int64_t lab = keys[i] >> 2;
    int32_t c = 0, pa = 0, pr = 0;
    for (; i < nkeys && (keys[i] >> 2) == lab; i++) {
      int kind = (int)(keys[i] & 3);
      if (kind == PB_BOUNDS__CLEAN_WRONG) c++;
      else if (kind == PB_BOUNDS__PERT_WRONG_ACC) pa++;
      else pr++;
    }
    const int32_t p = pa + pr;
    if (p == 0) {
      /* e = j = 0 is the only choice; the label's clean records must fit. */
      if (c > r + w) return 1;
      continue;
    }
    const int32_t etop = p < h ? p : h;
    int any = 0;
    for (int32_t e = 0; e <= etop; e++) {
      const int32_t q0 = p - e;
      const int32_t x = c + q0 - r - w;
      jlo[e] = pb_bounds__max3(0, q0 - w, x > 0 ? (x + 1) / 2 : 0);
      jhi[e] = c < q0 ? c : q0;
      if (jhi[e] > s) jhi[e] = s;
      if (jlo[e] <= jhi[e]) any = 1;
    }
    if (!any) return 1;

    const int32_t ne_reach = emax_reach + etop < h ? emax_reach + etop : h;
    int32_t nj_reach = jmax_reach + (c < p ? c : p);
    if (nj_reach > s) nj_reach = s;
    for (int32_t E = 0; E <= ne_reach; E++)
      for (int32_t J = 0; J <= nj_reach; J++) nmax[(size_t)E * S1 + J] = -1;
    int32_t ereach = -1, jreach = -1;
    for (int32_t E = 0; E <= emax_reach; E++) {
      for (int32_t J = 0; J <= jmax_reach; J++) {
        const size_t src = (size_t)E * S1 + J;
        if (cmax[src] < 0) continue;
        const int32_t vmax0 = cmax[src], vmin0 = cmin[src];
        for (int32_t e = 0; e <= etop && E + e <= h; e++) {
          int32_t lo = jlo[e], hi = jhi[e];
          if (hi > s - J) hi = s - J;
          if (lo > hi) continue;
          const int32_t vmax = vmax0 + (e < pa ? e : pa);
          const int32_t vmin = vmin0 + (e > pr ? e - pr : 0);
          int32_t *pmax = nmax + (size_t)(E + e) * S1 + J;
          int32_t *pmin = nmin + (size_t)(E + e) * S1 + J;
          for (int32_t j = lo; j <= hi; j++) {
            if (pmax[j] < 0) {
              pmax[j] = vmax;
              pmin[j] = vmin;
            } else {
              if (vmax > pmax[j]) pmax[j] = vmax;
              if (vmin < pmin[j]) pmin[j] = vmin;
            }
          }
          if (E + e > ereach) ereach = E + e;
          if (J + hi > jreach) jreach = J + hi;
        }
      }
    }
    if (ereach < 0) return 1;
    int32_t *t = cmax; cmax = nmax; nmax = t;
    t = cmin; cmin = nmin; nmin = t;
    emax_reach = ereach;
    jmax_reach = jreach;
  }
  const size_t fin = (size_t)h * S1 + s;
  if (h > emax_reach || s > jmax_reach || cmax[fin] < 0) return 1;
  tp[0] = cmin[fin];
  tp[1] = cmax[fin];
  return 0;
}

/* Public per-class wrapper: counts a, u, b from the records, then the DP. */
int pb_bounds_class_h_i5(int32_t n, int32_t label, const int32_t *pred0, const uint8_t *z0,
                         const int32_t *pred1, const uint8_t *z1, int32_t k, int32_t s,
                         int64_t out[2])
{
  if (n <= 0 || !pred0 || !z0 || !pred1 || !z1 || !out) return -1;
  out[0] = out[1] = -1;
  int32_t a = 0, u = 0, b = 0, nk = 0;
  int64_t *keys = malloc(2 * (size_t)n * sizeof *keys);
  if (!keys) return -1;
  for (int32_t i = 0; i < n; i++) {
    if (pred0[i] == label) {
      a++;
      u += z0[i] != 0;
    } else {
      keys[nk++] = pb_bounds__key(pred0[i], PB_BOUNDS__CLEAN_WRONG);
    }
    if (pred1[i] == label) b++;
    else keys[nk++] = pb_bounds__key(pred1[i], z1[i] ? PB_BOUNDS__PERT_WRONG_ACC
                                                      : PB_BOUNDS__PERT_WRONG_REJ);
  }
  const int32_t h = a - k, r = b - k, w = n - a - b + k - s;
  if (k < 0 || h < 0 || r < 0 || s < 0 || w < 0) {
    free(keys);
    return 1;
  }
  int32_t *dp = malloc(pb_bounds__h_i5_dp_len(h, s) * sizeof *dp);
  if (!dp) {
    free(keys);
    return -1;
  }
  int32_t tp[2];
  int rc = pb_bounds__h_i5_core(keys, nk, h, r, s, w, dp, tp);
  free(dp);
  free(keys);
  if (rc != 0) return 1;
  pb_bounds__h_from_tprime(a, u, h, tp, out);
  return 0;
}

/* L (Eq. 5) and dM_k numerator (Eq. 6) extremes, derived from the I5 block
 * structure rather than from the Ik formulas: the DP fixes only wrong records,
 * so by the correct-record symmetry (A.3) the k block takes any kblock correct
 * records per side.  L is extremised over the numbers x of accepted clean and
 * z of rejected perturbed records that the block can hold, and the numerator
 * over which M values enter; Theorem 1 says the result must equal Ik. */
void pb_bounds__class_l_dmk_i5(int32_t a, const double *x, const uint8_t *xacc, int32_t b,
                               const double *z, const uint8_t *zrej, int32_t kblock,
                               int64_t lcount[2], double dnum[2])
{
  int32_t u = 0, v = 0;
  for (int32_t i = 0; i < a; i++) u += xacc[i] != 0;
  for (int32_t i = 0; i < b; i++) v += zrej[i] != 0;
  int64_t lmin = INT64_MAX, lmax = -1;
  for (int32_t xa = 0; xa <= kblock; xa++) {
    if (xa > u || kblock - xa > a - u) continue;
    for (int32_t zr = 0; zr <= kblock; zr++) {
      if (zr > v || kblock - zr > b - v) continue;
      int32_t ovmin = xa + zr - kblock, ovmax = xa < zr ? xa : zr;
      if (ovmin < 0) ovmin = 0;
      if (ovmin < lmin) lmin = ovmin;
      if (ovmax > lmax) lmax = ovmax;
    }
  }
  lcount[0] = lmin;
  lcount[1] = lmax;

  /* Smallest clean with largest perturbed minimises sum(M) - sum(M'); the
   * block's internal matching does not change the sum. */
  double xs = 0.0, zl = 0.0, xl = 0.0, zs = 0.0;
  for (int32_t i = 0; i < kblock; i++) xs += x[i];
  for (int32_t i = b - 1; i >= b - kblock; i--) zl += z[i];
  for (int32_t i = a - 1; i >= a - kblock; i--) xl += x[i];
  for (int32_t i = 0; i < kblock; i++) zs += z[i];
  double lo = xs - zl, hi = xl - zs;
  dnum[0] = lo;
  dnum[1] = hi;
}
