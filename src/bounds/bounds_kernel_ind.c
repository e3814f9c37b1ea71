/* Class-conditional independent counterparts of F, A, Q, k, ds_s and ds_w
 * (seed 000 Table 2 and H.2, Eq. 14's analogues; docs/bounds.md): one
 * class's share, for pb_bounds_cell().  Pure computation.
 *
 * The definition sums over all n_y^2 (clean, perturbed) combinations of the
 * class in index order.  At ImageNet's 50 images per class that quadratic
 * loop was most of the grid pass, so the sums are taken in whatever order
 * vectorises best (lanes of 8 doubles, four clean records per pass) whenever
 * that is provably the same double: when every score is a multiple of one
 * power of two G and every partial sum of any order stays below 2^53 G, every
 * order is exact, hence equal to the definition's.  Otherwise (scores spread
 * over too many binary orders for the class size) the definition's loop runs
 * as written.  Grid pass of bounds on the ImageNet-shaped store (1 rank x 2
 * threads, median of 5): 3.20 s with one "omp simd" reduction per clean
 * record, 2.65 s with the lanes kept across records. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pairbound/clones.h"
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
#define PB_IND_LANES 8
PB_CLONES
static void pb_bounds__ind_fast(const float *s0, const int32_t *p0, const float *s1, const int32_t *p1, int32_t ny,
                                int32_t y, int64_t a, int64_t b, void *w, int64_t *same, int64_t *nss, double *absd,
                                double *ss, double *sw)
{
  /* labels as doubles (exact below 2^53): the paired loop is then one lane type */
  double *v1 = w, *d0 = v1 + ny, *d1 = d0 + ny, *l0 = d1 + ny, *l1 = l0 + ny;
  double t0 = 0.0, t1 = 0.0, ad = 0.0, s = 0.0; /* t0, t1: wrong clean S, wrong perturbed S' */
  int32_t n0 = 0, n1 = 0;
  for (int32_t i = 0; i < ny; i++) {
    v1[i] = s1[i];
    if (p0[i] != y) t0 += s0[i], d0[n0] = s0[i], l0[n0++] = p0[i];
    if (p1[i] != y) t1 += s1[i], d1[n1] = s1[i], l1[n1++] = p1[i];
  }
  /* PB_IND_LANES partial sums that live across the outer loop: a reduction
   * per outer record (what "omp simd reduction" compiled to) was a serial
   * chain of adds that cost as much as the differences themselves */
  double acc[PB_IND_LANES] = {0.0}, sacc[PB_IND_LANES] = {0.0}, nacc[PB_IND_LANES] = {0.0};
  const int32_t nv = ny / PB_IND_LANES * PB_IND_LANES, nv1 = n1 / PB_IND_LANES * PB_IND_LANES;
  int32_t i = 0;
  for (; i + 4 <= ny; i += 4) { /* four records per pass over v1: four independent chains */
    const double x0 = s0[i], x1 = s0[i + 1], x2 = s0[i + 2], x3 = s0[i + 3];
    double a0[PB_IND_LANES] = {0.0}, a1[PB_IND_LANES] = {0.0}, a2[PB_IND_LANES] = {0.0}, a3[PB_IND_LANES] = {0.0};
    for (int32_t j = 0; j < nv; j += PB_IND_LANES)
#pragma omp simd
      for (int l = 0; l < PB_IND_LANES; l++) {
        const double v = v1[j + l];
        a0[l] += fabs(x0 - v);
        a1[l] += fabs(x1 - v);
        a2[l] += fabs(x2 - v);
        a3[l] += fabs(x3 - v);
      }
    for (int l = 0; l < PB_IND_LANES; l++) acc[l] += (a0[l] + a1[l]) + (a2[l] + a3[l]);
    for (int32_t j = nv; j < ny; j++) acc[0] += fabs(x0 - v1[j]) + fabs(x1 - v1[j]) + fabs(x2 - v1[j]) + fabs(x3 - v1[j]);
  }
  for (; i < ny; i++) {
    const double x = s0[i];
    for (int32_t j = 0; j < nv; j += PB_IND_LANES)
#pragma omp simd
      for (int l = 0; l < PB_IND_LANES; l++) acc[l] += fabs(x - v1[j + l]);
    for (int32_t j = nv; j < ny; j++) acc[0] += fabs(x - v1[j]);
  }
  /* same-label pairs: a count and a difference per lane, times 0 or 1 (exact) */
  for (int32_t i = 0; i < n0; i++) {
    const double x = d0[i], lab = l0[i];
    for (int32_t j = 0; j < nv1; j += PB_IND_LANES)
#pragma omp simd
      for (int l = 0; l < PB_IND_LANES; l++) {
        const double eq = l1[j + l] == lab ? 1.0 : 0.0;
        nacc[l] += eq;
        sacc[l] += eq * (x - d1[j + l]);
      }
    for (int32_t j = nv1; j < n1; j++) {
      const double eq = l1[j] == lab ? 1.0 : 0.0;
      nacc[0] += eq;
      sacc[0] += eq * (x - d1[j]);
    }
  }
  double nsd = 0.0;
  for (int l = 0; l < PB_IND_LANES; l++) ad += acc[l], s += sacc[l], nsd += nacc[l];
  const int64_t ns = (int64_t)nsd;
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
  return 5 * (size_t)ny * sizeof(double);
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
