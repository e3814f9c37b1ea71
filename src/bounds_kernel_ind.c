/* Class-conditional independent counterparts of F, A, Q, k, ds_s and ds_w
 * (seed 000 Table 2 and H.2, Eq. 14's analogues; docs/bounds.md): one
 * class's share, for pb_bounds_cell().  Pure computation. */
#include "config.h"

#include <math.h>
#include <stdint.h>

#include "bounds_internal.h"

void pb_bounds__class_ind(const float *s0, const int32_t *p0, const float *s1, const int32_t *p1, int32_t ny,
                          int32_t y, double mean0, double mean1, struct pb_bounds__ind *t)
{
  int64_t same = 0, a = 0, b = 0, nss = 0, nww = 0;
  double absd = 0.0, m0 = 0.0, m1 = 0.0, ss = 0.0, sw = 0.0;
  for (int32_t i = 0; i < ny; i++) {
    a += p0[i] == y;
    b += p1[i] == y;
    m0 += s0[i];
    m1 += s1[i];
    for (int32_t j = 0; j < ny; j++) {
      same += p0[i] == p1[j];
      absd += fabs((double)s0[i] - (double)s1[j]);
    }
  }
  /* wrong-wrong combinations: same wrong label (s) or different (w) */
  if (a < ny && b < ny)
    for (int32_t i = 0; i < ny; i++) {
      if (p0[i] == y) continue;
      for (int32_t j = 0; j < ny; j++) {
        if (p1[j] == y) continue;
        const double d = (double)s0[i] - (double)s1[j];
        if (p0[i] == p1[j]) {
          nss++;
          ss += d;
        } else {
          nww++;
          sw += d;
        }
      }
    }
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
