/* Rounding and NaN-skipping means (include/pairbound/num.h). */
#include "config.h"

#include <math.h>

#include "pairbound/num.h"

float pb_num_round_half(double x)
{
  if (!(x > 0)) return 0.0f;
  int e;
  frexp(x, &e);                 /* x = f * 2^e, f in [0.5, 1) */
  int q = e - 11;               /* half keeps 11 significant bits ... */
  if (q < -24) q = -24;         /* ... down to its smallest subnormal step */
  return (float)ldexp(nearbyint(ldexp(x, -q)), q);
}

void pb_num_nanmean_add(struct pb_num_nanmean *m, double x)
{
  if (isnan(x)) return;
  m->sum += x;
  m->n++;
}

double pb_num_nanmean_get(const struct pb_num_nanmean *m) { return m->n ? m->sum / (double)m->n : NAN; }

