/* Class-conditional independent counterparts of F, A, Q, k, ds_s and ds_w
 * (seed 000 Table 2 and H.2, Eq. 14's analogues; docs/bounds.md): one
 * class's share, for pb_bounds_cell().  Pure computation.
 *
 * The definition sums over all n_y^2 (clean, perturbed) combinations of the
 * class in index order.  At ImageNet's 50 images per class that quadratic
 * loop was most of the grid pass, so the sums are taken in O(n_y log n_y)
 * from sorted scores and label groups whenever that is provably the same
 * double: when every score is a multiple of one power of two G and every
 * partial sum of either method stays below 2^53 G, both are exact, hence
 * equal.  Otherwise (scores spread over too many binary orders for the
 * class size) the definition's loop runs as before. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bounds_internal.h"

/* Nonzero when the sums of the class's n_y^2 score differences are exact in
 * double in any order: every nonzero finite score is m 2^e with m < 2^24;
 * with G = 2^glog the smallest such unit and every |score| < 2^hlog, every
 * quantity summed below is a multiple of G below n_y^2 2^(hlog+1) (a sum of
 * at most n_y^2 differences, or a count times a sum of at most n_y scores),
 * representable exactly when n_y^2 2^(hlog+1) <= 2^53 G. */
static int pb_bounds__ind_exact(const float *s0, const float *s1, int32_t ny)
{
  int glog = 1 << 30, hlog = -(1 << 30);
  for (int32_t i = 0; i < 2 * ny; i++) {
    const float f = i < ny ? s0[i] : s1[i - ny];
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    const uint32_t ex = (u >> 23) & 0xffu, m = u & 0x7fffffu;
    if (ex == 0xffu) return 0; /* Inf or NaN */
    if (ex == 0 && m == 0) continue;
    const uint32_t m24 = ex ? m | 0x800000u : m;
    const int e = ex ? (int)ex - 150 : -149; /* |f| = m24 2^e */
    const int lo = e + __builtin_ctz(m24), hi = e + 32 - __builtin_clz(m24);
    glog = lo < glog ? lo : glog;
    hlog = hi > hlog ? hi : hlog;
  }
  if (glog > hlog) return 1; /* every score is zero */
  const uint64_t nn = (uint64_t)ny * (uint64_t)ny;
  const int b = 64 - __builtin_clzll(nn); /* n_y^2 < 2^b */
  return hlog + 1 + b - glog <= 53;
}

/* The combinations' sums with the order of additions free, which lets the
 * compiler vectorise them: exact under pb_bounds__ind_exact, hence the
 * definition's doubles.  Equal predictions are either both correct (a b
 * pairs) or an equal wrong label, so only the wrong predictions are paired
 * by label.  w: scratch of pb_bounds__ind_work_len(n_y) bytes. */
static void pb_bounds__ind_fast(const float *s0, const int32_t *p0, const float *s1, const int32_t *p1, int32_t ny,
                                int32_t y, int64_t a, int64_t b, void *w, int64_t *same, int64_t *nss, double *absd,
                                double *ss, double *sw)
{
  double *v1 = w, *d0 = v1 + ny, *d1 = d0 + ny;
  int32_t *l0 = (int32_t *)(d1 + ny), *l1 = l0 + ny;
  double t0 = 0.0, t1 = 0.0, ad = 0.0, s = 0.0; /* t0, t1: wrong clean S, wrong perturbed S' */
  int32_t n0 = 0, n1 = 0;
  for (int32_t i = 0; i < ny; i++) {
    v1[i] = s1[i];
    if (p0[i] != y) t0 += s0[i], d0[n0] = s0[i], l0[n0++] = p0[i];
    if (p1[i] != y) t1 += s1[i], d1[n1] = s1[i], l1[n1++] = p1[i];
  }
  for (int32_t i = 0; i < ny; i++) {
    const double x = s0[i];
#pragma omp simd reduction(+ : ad)
    for (int32_t j = 0; j < ny; j++) ad += fabs(x - v1[j]);
  }
  int64_t ns = 0;
  for (int32_t i = 0; i < n0; i++) {
    const double x = d0[i];
    const int32_t l = l0[i];
#pragma omp simd reduction(+ : ns, s)
    for (int32_t j = 0; j < n1; j++) {
      const int eq = l1[j] == l;
      ns += eq;
      s += eq ? x - d1[j] : 0.0;
    }
  }
  *same = a * b + ns;
  *nss = ns;
  *absd = ad;
  *ss = s;
  /* every wrong-wrong combination minus the same-label ones */
  *sw = n0 > 0 && n1 > 0 ? ((double)n1 * t0 - (double)n0 * t1) - s : 0.0;
}

/* The definition: every combination in index order, O(n_y^2). */
static void pb_bounds__ind_direct(const float *s0, const int32_t *p0, const float *s1, const int32_t *p1, int32_t ny,
                                  int32_t y, int64_t a, int64_t b, int64_t *same, int64_t *nss, double *absd,
                                  double *ss, double *sw)
{
  int64_t sm = 0, ns = 0;
  double ad = 0.0, s = 0.0, d_sw = 0.0;
  for (int32_t i = 0; i < ny; i++)
    for (int32_t j = 0; j < ny; j++) {
      sm += p0[i] == p1[j];
      ad += fabs((double)s0[i] - (double)s1[j]);
    }
  /* wrong-wrong combinations: same wrong label (s) or different (w) */
  if (a < ny && b < ny)
    for (int32_t i = 0; i < ny; i++) {
      if (p0[i] == y) continue;
      for (int32_t j = 0; j < ny; j++) {
        if (p1[j] == y) continue;
        const double d = (double)s0[i] - (double)s1[j];
        if (p0[i] == p1[j]) {
          ns++;
          s += d;
        } else {
          d_sw += d;
        }
      }
    }
  *same = sm, *nss = ns, *absd = ad, *ss = s, *sw = d_sw;
}

size_t pb_bounds__ind_work_len(int32_t ny)
{
  return 3 * (size_t)ny * sizeof(double) + (2 * (size_t)ny + 1) / 2 * sizeof(double);
}

void pb_bounds__class_ind(const float *s0, const int32_t *p0, const float *s1, const int32_t *p1, int32_t ny,
                          int32_t y, double mean0, double mean1, void *work, struct pb_bounds__ind *t)
{
  int64_t same, nss, a = 0, b = 0;
  double absd, m0 = 0.0, m1 = 0.0, ss, sw;
  for (int32_t i = 0; i < ny; i++) {
    a += p0[i] == y;
    b += p1[i] == y;
    m0 += s0[i];
    m1 += s1[i];
  }
  if (pb_bounds__ind_exact(s0, s1, ny))
    pb_bounds__ind_fast(s0, p0, s1, p1, ny, y, a, b, work, &same, &nss, &absd, &ss, &sw);
  else
    pb_bounds__ind_direct(s0, p0, s1, p1, ny, y, a, b, &same, &nss, &absd, &ss, &sw);
  /* wrong-wrong combinations with different labels */
  const int64_t nww = (a < ny && b < ny) ? ((int64_t)ny - a) * ((int64_t)ny - b) - nss : 0;
  const double w = 1.0 / ny;
  t->flips += (double)((int64_t)ny * ny - same) * w;
  t->absd += absd * w;
  /* sum over i, j of (S_i - mean0)(S'_j - mean1) / n_y = n_y (mu_y - mean0)(mu'_y - mean1) */
  t->cov += ny * (m0 / ny - mean0) * (m1 / ny - mean1);
  t->k += (double)(a * b) * w;
  t->dss_num += ss * w;
  t->dss_den += (double)nss * w;
  t->dsw_num += sw * w;
  t->dsw_den += (double)nww * w;
}
