/* Rounding and NaN-skipping means (include/pairbound/num.h). */
#include "config.h"

#include <math.h>
#include <stdint.h>

#include "pairbound/num.h"

float pb_num__round_half_rare(double x)
{
  int e;
  frexp(x, &e);
  const int q = e - 11 < -24 ? -24 : e - 11;
  return (float)ldexp(nearbyint(ldexp(x, -q)), q);
}

void pb_num_nanmean_add(struct pb_num_nanmean *m, double x)
{
  if (isnan(x)) return;
  m->sum += x;
  m->n++;
}

double pb_num_nanmean_get(const struct pb_num_nanmean *m) { return m->n ? m->sum / (double)m->n : NAN; }

