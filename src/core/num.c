/* Rounding and NaN-skipping means (include/pairbound/num.h). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pairbound/num.h"

/* A power of two 2^k as a double, -1022 <= k <= 1023. */
static double pb_num__pow2(int k)
{
  const uint64_t b = (uint64_t)(1023 + k) << 52;
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

float pb_num_round_half(double x)
{
  if (!(x > 0)) return 0.0f;
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  const int be = (int)(b >> 52);
  int e, q;
  if (be == 0 || be == 0x7ff) { /* subnormal or infinite: the library's frexp and ldexp */
    frexp(x, &e);
    q = e - 11 < -24 ? -24 : e - 11;
    return (float)ldexp(nearbyint(ldexp(x, -q)), q);
  }
  /* x = f 2^e with f in [0.5, 1): half keeps 11 significant bits, down to
   * its smallest subnormal step 2^-24.  The scalings by 2^-q and 2^q are
   * exact, so they equal ldexp's (whose library calls were a tenth of synth);
   * rint rounds as nearbyint (to nearest, ties to even). */
  e = be - 1022;
  q = e - 11 < -24 ? -24 : e - 11;
  return (float)(rint(x * pb_num__pow2(-q)) * pb_num__pow2(q));
}

void pb_num_nanmean_add(struct pb_num_nanmean *m, double x)
{
  if (isnan(x)) return;
  m->sum += x;
  m->n++;
}

double pb_num_nanmean_get(const struct pb_num_nanmean *m) { return m->n ? m->sum / (double)m->n : NAN; }

