/* Observed statistics and sharp identification intervals of one cell
 * (seed Sections 3.1-3.2, 4.1, Appendix A, B.4, H.2; docs/bounds.md). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/bounds.h"
#include "pairbound/error.h"
#include "pairbound/sort.h"
#include "bounds_internal.h"

/* Scratch of one pb_bounds_cell() call, carved from a single allocation so
 * the full grid does not hammer the allocator. */
struct pb_bounds__scratch {
  int32_t *idx, *tmp;          /* record indices grouped by label (stable) */
  float *gs0, *gs1;            /* S, S' and the predicted labels in grouped order */
  int32_t *gp0, *gp1;
  int32_t *cbeg;               /* class c occupies idx[cbeg[c] .. cbeg[c+1]) */
  double *x, *z;               /* correct M (clean) / M' (perturbed), per class ascending */
  uint8_t *xacc, *zrej;        /* acceptance of x, rejection of z, same positions */
  int32_t *ca, *cb, *ck, *ckl, *ckh; /* per class a, b, observed k, feasible k range */
  double *cnum, *ckt, *cbm;    /* per class observed dM_k numerator, a b / n, mu - mu' */
  void *indw;                  /* pb_bounds__class_ind's scratch */
  /* want_i5 only: */
  double *pxa, *sxd, *pza, *szd; /* per class (offset cbeg[c] + c) prefix sums, see below */
  int64_t *keys;               /* wrong records of one class for the I5 DP */
  int32_t *dp;                 /* I5 DP table, grown on demand */
  size_t dp_len;
  int dp_heap;                 /* dp is malloc'd (else the caller's stack table) */
};

/* A cell of few records (verify passes every class alone: 2.85 M calls on
 * the paper store, of at most 8 records a side) gets its scratch, its label
 * counts and its I5 table on the stack instead of from malloc, whose calls
 * cost more than such a cell's arithmetic: bytes of scratch, label range and
 * I5 table entries that fit. */
#define PB_BOUNDS__STACK_BYTES 16384
#define PB_BOUNDS__SMALL_RANGE 254
#define PB_BOUNDS__STACK_DP 1024

/* Stable grouping by label with one counting/radix sort: O(n + range), and
 * index order inside a class fixes the order of every floating sum. */
static int pb_bounds__group(const int32_t *label, int32_t n, int32_t maxlab, int32_t *idx,
                            int32_t *tmp)
{
  /* counting sort over the labels' range (one class alone, as verify passes
   * them, is a range of one whatever its label) */
  int32_t minlab = maxlab;
  for (int32_t i = 0; i < n; i++) minlab = label[i] < minlab ? label[i] : minlab;
  if (maxlab - minlab < 65536) {
    const int32_t range = maxlab - minlab;
    int32_t small[PB_BOUNDS__SMALL_RANGE + 2];
    int32_t *cnt = range <= PB_BOUNDS__SMALL_RANGE ? small : malloc(((size_t)range + 2) * sizeof *cnt);
    if (!cnt) return -1;
    memset(cnt, 0, ((size_t)range + 2) * sizeof *cnt);
    for (int32_t i = 0; i < n; i++) cnt[label[i] - minlab + 1]++;
    for (int32_t l = 0; l <= range; l++) cnt[l + 1] += cnt[l];
    for (int32_t i = 0; i < n; i++) idx[cnt[label[i] - minlab]++] = i;
    if (cnt != small) free(cnt);
    return 0;
  }
  int32_t *cnt = malloc(65537 * sizeof *cnt);
  if (!cnt) return -1;
  for (int32_t i = 0; i < n; i++) tmp[i] = i;
  int32_t *src = tmp, *dst = idx;
  for (int pass = 0; pass < 2; pass++) {
    const int shift = 16 * pass;
    memset(cnt, 0, 65537 * sizeof *cnt);
    for (int32_t i = 0; i < n; i++) cnt[((label[src[i]] >> shift) & 0xffff) + 1]++;
    for (int32_t d = 0; d < 65536; d++) cnt[d + 1] += cnt[d];
    for (int32_t i = 0; i < n; i++) dst[cnt[(label[src[i]] >> shift) & 0xffff]++] = src[i];
    int32_t *t = src; src = dst; dst = t;
  }
  /* after two passes the result is back in tmp's original role (src) */
  if (src != idx) memcpy(idx, src, (size_t)n * sizeof *idx);
  free(cnt);
  return 0;
}

/* Sum of the k smallest (ascending accumulation) and of the k largest
 * (descending accumulation) entries of an ascending array.  Every dM_k
 * numerator in this file uses exactly these orders so that the Ik, I5 and
 * A.10 endpoints agree bit for bit where the theory says they are equal. */
static inline double pb_bounds__low_sum(const double *v, int32_t k)
{
  double acc = 0.0;
  for (int32_t i = 0; i < k; i++) acc += v[i];
  return acc;
}

static inline double pb_bounds__high_sum(const double *v, int32_t n, int32_t k)
{
  double acc = 0.0;
  for (int32_t i = n - 1; i >= n - k; i--) acc += v[i];
  return acc;
}

static inline int64_t pb_bounds__min64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t pb_bounds__max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Appendix A.10: extreme of sum_y D_y(k_y) / sum_y k_y over all feasible
 * per-class overlaps with positive total, by Dinkelbach's method (exact: each
 * iterate is the ratio of an attained choice and the iteration stops only when
 * no choice has a smaller ratio).  D_y(k) = sgn (P[o+k] - Q[o+k]); the minimum
 * of sgn * ratio is returned multiplied back by sgn, so sgn = -1 with the
 * maximising prefix arrays yields the upper endpoint. */
static double pb_bounds__ratio_extreme(int32_t ncls, const int32_t *kl, const int32_t *kh,
                                       const int32_t *cbeg, const double *P, const double *Q,
                                       double sgn)
{
  double num = 0.0;
  int64_t K = 0;
  for (int32_t c = 0; c < ncls; c++) {
    const int32_t o = cbeg[c] + c;
    num += sgn * (P[o + kh[c]] - Q[o + kh[c]]);
    K += kh[c];
  }
  if (K == 0) return NAN;
  double r = num / (double)K;
  for (int iter = 0; iter < 512; iter++) {
    double nnum = 0.0, pen_best = INFINITY, pen_val = 0.0;
    int64_t nK = 0, pen_k = 0;
    for (int32_t c = 0; c < ncls; c++) {
      const int32_t o = cbeg[c] + c;
      double bv = INFINITY, bvp = INFINITY, gb = 0.0, gbp = 0.0;
      int32_t bk = kl[c], bkp = -1;
      for (int32_t k = kl[c]; k <= kh[c]; k++) {
        const double g = sgn * (P[o + k] - Q[o + k]);
        const double val = g - r * (double)k;
        if (val < bv) { bv = val; bk = k; gb = g; }
        if (k >= 1 && val < bvp) { bvp = val; bkp = k; gbp = g; }
      }
      nnum += gb;
      nK += bk;
      if (bkp >= 0 && bvp - bv < pen_best) {
        pen_best = bvp - bv;
        pen_k = bkp;
        pen_val = gbp;
      }
    }
    if (nK == 0) {
      /* All classes chose k = 0 (numerator 0): force the cheapest class to
       * positive support, which is optimal among positive-support choices. */
      nnum = pen_val;
      nK = pen_k;
    }
    const double rn = nnum / (double)nK;
    if (!(rn < r)) break;
    r = rn;
  }
  return sgn * r;
}

static void pb_bounds__fill_nan(struct pb_cell_bounds *o)
{
  const double q = NAN;
  o->acc0 = o->acc1 = o->F = o->A = o->Q = o->E = o->U = o->V1 = q;
  o->H_obs = o->L_obs = o->dMk_obs = q;
  o->H_I0[0] = o->H_I0[1] = o->H_Ik[0] = o->H_Ik[1] = o->H_I5[0] = o->H_I5[1] = o->H_ind = q;
  o->L_I0[0] = o->L_I0[1] = o->L_Ik[0] = o->L_Ik[1] = o->L_I5[0] = o->L_I5[1] = o->L_ind = q;
  o->dMk_I0[0] = o->dMk_I0[1] = o->dMk_Ik[0] = o->dMk_Ik[1] = q;
  o->dMk_I5[0] = o->dMk_I5[1] = o->dMk_ind = q;
  o->W = o->V = q;
  o->K_width_class = o->K_width_global = q;
  o->ds_s = o->ds_w = o->F_ind = o->A_ind = o->Q_ind = o->k_ind = o->ds_s_ind = o->ds_w_ind = q;
}

/* Carve the scratch from @p stack (@p stack_bytes, 16-byte aligned) when it
 * fits, else from one malloc returned in *block (NULL for the stack). */
static int pb_bounds__alloc(struct pb_bounds__scratch *sc, int32_t n, int want_i5, void *stack, size_t stack_bytes,
                            void **block)
{
  const size_t N = (size_t)n;
  size_t bytes = 0;
  /* doubles first, then int64, int32, bytes: keeps every array aligned */
  const size_t nd = 2 * N + 3 * N + pb_bounds__ind_work_len(n) / sizeof(double) + (want_i5 ? 4 * (2 * N) : 0);
  const size_t n64 = want_i5 ? 2 * N : 0;
  const size_t n32 = 2 * N + (N + 1) + 5 * N + 4 * N;
  const size_t n8 = 2 * N;
  bytes = nd * sizeof(double) + n64 * sizeof(int64_t) + n32 * sizeof(int32_t) + n8;
  char *p = bytes <= stack_bytes ? stack : malloc(bytes);
  if (!p) return -1;
  *block = p == stack ? NULL : p;
  double *d = (double *)p;
  sc->x = d; d += N;
  sc->z = d; d += N;
  sc->cnum = d; d += N;
  sc->ckt = d; d += N;
  sc->cbm = d; d += N;
  sc->indw = d; d += pb_bounds__ind_work_len(n) / sizeof(double);
  if (want_i5) {
    sc->pxa = d; d += 2 * N;
    sc->sxd = d; d += 2 * N;
    sc->pza = d; d += 2 * N;
    sc->szd = d; d += 2 * N;
  } else {
    sc->pxa = sc->sxd = sc->pza = sc->szd = NULL;
  }
  int64_t *q = (int64_t *)d;
  sc->keys = want_i5 ? q : NULL;
  q += n64;
  int32_t *i = (int32_t *)q;
  sc->idx = i; i += N;
  sc->tmp = i; i += N;
  sc->cbeg = i; i += N + 1;
  sc->ca = i; i += N;
  sc->cb = i; i += N;
  sc->ck = i; i += N;
  sc->ckl = i; i += N;
  sc->ckh = i; i += N;
  sc->gp0 = i; i += N;
  sc->gp1 = i; i += N;
  sc->gs0 = (float *)i; i += N;
  sc->gs1 = (float *)i; i += N;
  uint8_t *b = (uint8_t *)i;
  sc->xacc = b; b += N;
  sc->zrej = b;
  sc->dp = NULL; /* the caller's stack table, or grown from the heap */
  sc->dp_len = 0;
  return 0;
}

/* Per-class quantities that the closed forms need. */
struct pb_bounds__cls {
  int32_t ny, a, b, u, t, v;    /* u: correct accepted clean; t: wrong accepted
                                   perturbed; v: correct rejected perturbed */
  int32_t k, h, r, s, w;        /* observed five-state counts */
  int32_t hobs, lobs, flips;
  double num;                   /* observed sum of M - M' over k pairs */
  double dss, dsw;              /* observed sums of S - S' over s and w pairs */
};

/* Cell totals, accumulated class by class in ascending label order: integer
 * counts exactly, floating sums in that fixed order. */
struct pb_bounds__tot {
  int64_t a, b, E, U, V1, hobs, lobs, flips;
  int64_t H0lo, H0hi, Hklo, Hkhi, H5lo, H5hi, L0lo, L0hi, Lklo, Lkhi, L5lo, L5hi, kwidth, pinned;
  double Hind, Lind, absd, sxx, syy, sxy, Dklo, Dkhi, D5lo, D5hi, numobs, ind_num, ind_den, dss, dsw;
  struct pb_bounds__ind ind;    /* Table 2's independent counterparts */
};

/* Labels and predictions must be >= 0; returns the largest label, or -1 with the error set. */
static int32_t pb_bounds__check(const struct pb_cell_view *in)
{
  if (!in || in->n <= 0 || !in->label || !in->pred0 || !in->s0 || !in->m0 || !in->pred1 || !in->s1 || !in->m1)
    return pb_cell_error(in, -1, "bounds: no records (n = %d) or a missing record field", in ? in->n : 0);
  if (isnan(in->tau)) return pb_cell_error(in, -1, "bounds: threshold is NaN");
  int32_t maxlab = 0;
  for (int32_t i = 0; i < in->n; i++) {
    if (in->label[i] < 0 || in->pred0[i] < 0 || in->pred1[i] < 0)
      return pb_cell_error(in, in->label[i], "bounds: record %d has a negative label or prediction", (int)i);
    if (in->label[i] > maxlab) maxlab = in->label[i];
  }
  return maxlab;
}

/* One class's records [beg, end) in index order: the five-state counts, the
 * sorted M of correct records with their acceptance flags (x/xacc clean,
 * z/zrej perturbed), the wrong-record DP keys (want_i5), and the class's
 * share of the observed totals and of the S moments about the cell means. */
static void pb_bounds__class_records(const struct pb_cell_view *in, struct pb_bounds__scratch *sc, int32_t beg,
                                     int32_t end, int32_t y, int want_i5, double mean0, double mean1,
                                     struct pb_bounds__cls *q, int32_t *nkeys, struct pb_bounds__tot *T)
{
  const float tau = in->tau;
  double cabs = 0.0, cxx = 0.0, cyy = 0.0, cxy = 0.0;
  double *x = sc->x + beg, *z = sc->z + beg;
  uint8_t *xacc = sc->xacc + beg, *zrej = sc->zrej + beg;
  /* counts in a local: the byte arrays written below may alias *q */
  struct pb_bounds__cls cl;
  memset(&cl, 0, sizeof cl);
  cl.ny = end - beg;
  int32_t nk = 0;
  for (int32_t p = beg; p < end; p++) {
    const int32_t i = sc->idx[p];
    const int c0 = in->pred0[i] == y, c1 = in->pred1[i] == y;
    const int z0 = in->s0[i] >= tau, z1 = in->s1[i] >= tau;
    sc->gs0[p] = in->s0[i], sc->gs1[p] = in->s1[i], sc->gp0[p] = in->pred0[i], sc->gp1[p] = in->pred1[i];
    if (c0) {
      x[cl.a] = in->m0[i];
      xacc[cl.a] = (uint8_t)z0;
      cl.a++;
      cl.u += z0;
    } else if (want_i5) {
      sc->keys[nk++] = pb_bounds__key(in->pred0[i], PB_BOUNDS__CLEAN_WRONG);
    }
    if (c1) {
      z[cl.b] = in->m1[i];
      zrej[cl.b] = (uint8_t)!z1;
      cl.b++;
      cl.v += !z1;
    } else {
      cl.t += z1;
      if (want_i5)
        sc->keys[nk++] = pb_bounds__key(in->pred1[i], z1 ? PB_BOUNDS__PERT_WRONG_ACC : PB_BOUNDS__PERT_WRONG_REJ);
    }
    if (c0 && c1) {
      cl.k++;
      cl.num += (double)in->m0[i] - (double)in->m1[i];
      cl.lobs += z0 && !z1;
    } else if (c0) {
      cl.h++;
      cl.hobs += z0 && z1;
    } else if (c1) {
      cl.r++;
    } else if (in->pred0[i] == in->pred1[i]) {
      cl.s++;
      cl.dss += (double)in->s0[i] - (double)in->s1[i];
    } else {
      cl.w++;
      cl.dsw += (double)in->s0[i] - (double)in->s1[i];
    }
    cl.flips += in->pred0[i] != in->pred1[i];
    const double d0 = (double)in->s0[i] - mean0, d1 = (double)in->s1[i] - mean1;
    cabs += fabs((double)in->s0[i] - (double)in->s1[i]);
    cxx += d0 * d0;
    cyy += d1 * d1;
    cxy += d0 * d1;
  }
  *q = cl;
  *nkeys = nk;
  T->absd += cabs;
  T->sxx += cxx;
  T->syy += cyy;
  T->sxy += cxy;
  T->a += q->a;
  T->b += q->b;
  T->E += q->t;
  T->U += q->u;
  T->V1 += q->v;
  T->hobs += q->hobs;
  T->lobs += q->lobs;
  T->flips += q->flips;
  T->numobs += q->num;
  T->dss += q->dss;
  T->dsw += q->dsw;
  pb_bounds__class_ind(sc->gs0 + beg, sc->gp0 + beg, sc->gs1 + beg, sc->gp1 + beg, cl.ny, y, mean0, mean1, sc->indw,
                       &T->ind);
  pb_sort_small_double(x, q->a, 64);
  pb_sort_small_double(z, q->b, 64);
}

/* Class c's closed forms at I0 and Ik (Eq. 4-7), the Eq. 14 / Eq. 9
 * ingredients and the accuracy-only overlap range (Eq. 3, Table 11). */
static void pb_bounds__class_closed(struct pb_bounds__scratch *sc, int32_t c, int32_t beg,
                                    const struct pb_bounds__cls *q, struct pb_bounds__tot *T)
{
  const double *x = sc->x + beg, *z = sc->z + beg;
  const int64_t ny = q->ny, a = q->a, b = q->b, u = q->u, t = q->t, v = q->v, k = q->k;
  /* Eq. 4: intersection bounds and independent values at I0. */
  T->H0lo += pb_bounds__max64(0, u + t - ny);
  T->H0hi += pb_bounds__min64(u, t);
  T->L0lo += pb_bounds__max64(0, u + v - ny);
  T->L0hi += pb_bounds__min64(u, v);
  T->Hind += (double)(u * t) / (double)ny;
  T->Lind += (double)(u * v) / (double)ny;
  /* Eq. 7: H within the correct-wrong block of size h = a - k. */
  T->Hklo += pb_bounds__max64(0, q->h - (a - u) - ((ny - b) - t));
  T->Hkhi += pb_bounds__min64(pb_bounds__min64(u, t), q->h);
  /* Eq. 5: L within the correct-correct block. */
  T->Lklo += pb_bounds__max64(0, k - (a - u) - (b - v));
  T->Lkhi += pb_bounds__min64(pb_bounds__min64(u, v), k);
  /* Eq. 6 numerators. */
  if (k > 0) {
    T->Dklo += pb_bounds__low_sum(x, q->k) - pb_bounds__high_sum(z, q->b, q->k);
    T->Dkhi += pb_bounds__high_sum(x, q->a, q->k) - pb_bounds__low_sum(z, q->k);
  }
  /* Eq. 14 and Eq. 9 ingredients. */
  sc->cnum[c] = q->num;
  sc->ck[c] = q->k;
  sc->ca[c] = q->a;
  sc->cb[c] = q->b;
  if (a > 0 && b > 0) {
    const double wt = (double)(a * b) / (double)ny;
    const double bm = pb_bounds__low_sum(x, q->a) / (double)a - pb_bounds__low_sum(z, q->b) / (double)b;
    sc->ckt[c] = wt;
    sc->cbm[c] = bm;
    T->ind_num += wt * bm;
    T->ind_den += wt;
  } else {
    sc->ckt[c] = 0.0;
    sc->cbm[c] = 0.0;
  }
  /* Eq. 3 / Table 11: feasible overlaps from accuracies only. */
  sc->ckl[c] = (int32_t)pb_bounds__max64(0, a + b - ny);
  sc->ckh[c] = (int32_t)pb_bounds__min64(a, b);
  T->kwidth += sc->ckh[c] - sc->ckl[c];
  T->pinned += sc->ckh[c] == sc->ckl[c];
}

/* Class c at I5: exact H from the DP over wrong labels, L and dM_k through
 * the I5 block structure, and the prefix sums of the variable-support ratio
 * (A.10).  Returns 0, or -1 with the error set. */
static int pb_bounds__class_i5(const struct pb_cell_view *in, struct pb_bounds__scratch *sc, int32_t c, int32_t beg,
                               int32_t y, const struct pb_bounds__cls *q, int32_t nkeys, struct pb_bounds__tot *T)
{
  const double *x = sc->x + beg, *z = sc->z + beg;
  const size_t need = pb_bounds__h_i5_dp_len(q->h, q->s);
  if (need > sc->dp_len) { /* the table is filled afresh for every class: nothing to keep */
    int32_t *nd = malloc(need * sizeof *nd);
    if (!nd) return pb_cell_error(in, y, "bounds: out of memory for the I5 program");
    if (sc->dp_heap) free(sc->dp);
    sc->dp = nd;
    sc->dp_len = need;
    sc->dp_heap = 1;
  }
  int32_t tp[2];
  if (pb_bounds__h_i5_core(sc->keys, nkeys, q->h, q->r, q->s, q->w, sc->dp, tp) != 0)
    /* the observed pairing is always feasible: internal error */
    return pb_cell_error(in, y, "bounds: observed five-state counts reported infeasible at I5");
  int64_t hc[2], lc[2];
  pb_bounds__h_from_tprime(q->a, q->u, q->h, tp, hc);
  T->H5lo += hc[0];
  T->H5hi += hc[1];
  /* L and dM_k through the I5 block structure: clean correct records not
   * in the h block form the correct-correct block. */
  double dn[2];
  pb_bounds__class_l_dmk_i5(q->a, x, sc->xacc + beg, q->b, z, sc->zrej + beg, q->a - q->h, lc, dn);
  T->L5lo += lc[0];
  T->L5hi += lc[1];
  if (q->a - q->h > 0) {
    T->D5lo += dn[0];
    T->D5hi += dn[1];
  }
  /* Prefix sums for the variable-support ratio (A.10), in the same
   * accumulation orders as low_sum / high_sum. */
  const int32_t o = beg + c;
  sc->pxa[o] = sc->sxd[o] = sc->pza[o] = sc->szd[o] = 0.0;
  for (int32_t j = 1; j <= q->a; j++) {
    sc->pxa[o + j] = sc->pxa[o + j - 1] + x[j - 1];
    sc->sxd[o + j] = sc->sxd[o + j - 1] + x[q->a - j];
  }
  for (int32_t j = 1; j <= q->b; j++) {
    sc->pza[o + j] = sc->pza[o + j - 1] + z[j - 1];
    sc->szd[o + j] = sc->szd[o + j - 1] + z[q->b - j];
  }
  return 0;
}

/* Rates from the totals: one division by N (or K) per value. */
static void pb_bounds__finish(const struct pb_bounds__tot *T, const struct pb_bounds__scratch *sc, int32_t ncls,
                              int32_t n, int want_i5, struct pb_cell_bounds *out)
{
  const double N = (double)n;
  const int64_t K = out->k;
  out->n = n;
  out->n_classes = ncls;
  out->acc0 = T->a / N;
  out->acc1 = T->b / N;
  out->F = T->flips / N;
  out->A = T->absd / N;
  out->Q = (T->sxx > 0.0 && T->syy > 0.0) ? T->sxy / sqrt(T->sxx * T->syy) : NAN;
  out->E = T->E / N;
  out->U = T->U / N;
  out->V1 = T->V1 / N;
  out->H_obs = T->hobs / N;
  out->L_obs = T->lobs / N;
  out->dMk_obs = K > 0 ? T->numobs / (double)K : NAN;
  out->H_I0[0] = T->H0lo / N;
  out->H_I0[1] = T->H0hi / N;
  out->H_Ik[0] = T->Hklo / N;
  out->H_Ik[1] = T->Hkhi / N;
  out->H_ind = T->Hind / N;
  out->L_I0[0] = T->L0lo / N;
  out->L_I0[1] = T->L0hi / N;
  out->L_Ik[0] = T->Lklo / N;
  out->L_Ik[1] = T->Lkhi / N;
  out->L_ind = T->Lind / N;
  if (K > 0) {
    out->dMk_Ik[0] = T->Dklo / (double)K;
    out->dMk_Ik[1] = T->Dkhi / (double)K;
  }
  out->dMk_ind = T->ind_den > 0.0 ? T->ind_num / T->ind_den : NAN;
  if (K > 0) {
    /* Eq. 9: composition term W and within-class selection term V. */
    double W = 0.0, V = 0.0;
    for (int32_t c = 0; c < ncls; c++) {
      W += ((double)sc->ck[c] / (double)K - sc->ckt[c] / T->ind_den) * sc->cbm[c];
      if (sc->ck[c] > 0)
        V += (double)sc->ck[c] / (double)K * (sc->cnum[c] / (double)sc->ck[c] - sc->cbm[c]);
    }
    out->W = W;
    out->V = V;
  }
  out->ds_s = out->s > 0 ? T->dss / (double)out->s : NAN;
  out->ds_w = out->w > 0 ? T->dsw / (double)out->w : NAN;
  out->F_ind = T->ind.flips / N;
  out->A_ind = T->ind.absd / N;
  out->Q_ind = (T->sxx > 0.0 && T->syy > 0.0) ? T->ind.cov / sqrt(T->sxx * T->syy) : NAN;
  out->k_ind = T->ind.k / N;
  out->ds_s_ind = T->ind.dss_den > 0.0 ? T->ind.dss_num / T->ind.dss_den : NAN;
  out->ds_w_ind = T->ind.dsw_den > 0.0 ? T->ind.dsw_num / T->ind.dsw_den : NAN;
  out->K_width_class = T->kwidth / N;
  out->K_width_global = (double)(pb_bounds__min64(T->a, T->b) - pb_bounds__max64(0, T->a + T->b - n)) / N;
  out->n_pinned = T->pinned;
  if (want_i5) {
    out->H_I5[0] = T->H5lo / N;
    out->H_I5[1] = T->H5hi / N;
    out->L_I5[0] = T->L5lo / N;
    out->L_I5[1] = T->L5hi / N;
    if (K > 0) {
      out->dMk_I5[0] = T->D5lo / (double)K;
      out->dMk_I5[1] = T->D5hi / (double)K;
    }
    out->dMk_I0[0] = pb_bounds__ratio_extreme(ncls, sc->ckl, sc->ckh, sc->cbeg, sc->pxa, sc->szd, 1.0);
    out->dMk_I0[1] = pb_bounds__ratio_extreme(ncls, sc->ckl, sc->ckh, sc->cbeg, sc->sxd, sc->pza, -1.0);
  }
}

/* Observed quantities, Eq. 4/5/6/7/9/14 and (want_i5) the exact I5 and A.10
 * intervals for one cell.  Intersection counts are exact integers summed over
 * classes before the single division by N (or K). */
int pb_bounds_cell(const struct pb_cell_view *in, int want_i5, struct pb_cell_bounds *out)
{
  if (!out) return pb_cell_error(in, -1, "bounds: no output");
  memset(out, 0, sizeof *out);
  pb_bounds__fill_nan(out);
  const int32_t maxlab = pb_bounds__check(in);
  if (maxlab < 0) return -1;
  const int32_t n = in->n;
  struct pb_bounds__scratch sc;
  void *block = NULL;
  _Alignas(64) char stack[PB_BOUNDS__STACK_BYTES];
  int32_t dp_stack[PB_BOUNDS__STACK_DP];
  if (pb_bounds__alloc(&sc, n, want_i5, stack, sizeof stack, &block) != 0)
    return pb_cell_error(in, -1, "bounds: out of memory (n = %d)", n);
  sc.dp = dp_stack;
  sc.dp_len = PB_BOUNDS__STACK_DP;
  sc.dp_heap = 0;
  if (pb_bounds__group(in->label, n, maxlab, sc.idx, sc.tmp) != 0) {
    free(block);
    return pb_cell_error(in, -1, "bounds: out of memory grouping %d labels", maxlab + 1);
  }
  int32_t ncls = 0;
  for (int32_t p = 0; p < n; p++)
    if (p == 0 || in->label[sc.idx[p]] != in->label[sc.idx[p - 1]]) sc.cbeg[ncls++] = p;
  sc.cbeg[ncls] = n;

  /* Means of S and S' for Q (first pass, same summation order as below). */
  double sum0 = 0.0, sum1 = 0.0;
  for (int32_t c = 0; c < ncls; c++) {
    double c0 = 0.0, c1 = 0.0;
    for (int32_t p = sc.cbeg[c]; p < sc.cbeg[c + 1]; p++) {
      c0 += in->s0[sc.idx[p]];
      c1 += in->s1[sc.idx[p]];
    }
    sum0 += c0;
    sum1 += c1;
  }
  const double mean0 = sum0 / n, mean1 = sum1 / n;

  struct pb_bounds__tot T;
  memset(&T, 0, sizeof T);
  int rc = 0;
  for (int32_t c = 0; c < ncls && rc == 0; c++) {
    const int32_t beg = sc.cbeg[c], end = sc.cbeg[c + 1], y = in->label[sc.idx[beg]];
    struct pb_bounds__cls q;
    int32_t nkeys;
    pb_bounds__class_records(in, &sc, beg, end, y, want_i5, mean0, mean1, &q, &nkeys, &T);
    out->h += q.h;
    out->r += q.r;
    out->s += q.s;
    out->w += q.w;
    out->k += q.k;
    pb_bounds__class_closed(&sc, c, beg, &q, &T);
    if (want_i5) rc = pb_bounds__class_i5(in, &sc, c, beg, y, &q, nkeys, &T);
  }
  if (rc == 0) pb_bounds__finish(&T, &sc, ncls, n, want_i5, out);
  else pb_bounds__fill_nan(out);
  if (sc.dp_heap) free(sc.dp);
  free(block);
  return rc;
}
