/* Numbers: rounding as the stores and kernels need it, and means that skip
 * undefined (NaN) values. */
#ifndef PAIRBOUND_NUM_H
#define PAIRBOUND_NUM_H

#include <stdint.h>

/* llround(x) (halves away from zero) for |x| < 2^63, without the library call: the
 * truncation and the remainder x - t are exact. */
static inline int64_t pb_num_round_half_away(double x)
{
  int64_t t = (int64_t)x;
  double r = x - (double)t;
  return t + (r >= 0.5) - (r <= -0.5);
}

/* Round to the nearest IEEE half-precision value (ties to even), as float. */
float pb_num_round_half(double x);

/* Mean of the defined values added (NaN = undefined, skipped), summed in the order added; NaN when none. */
struct pb_num_nanmean {
  double sum;
  int64_t n;
};
void pb_num_nanmean_add(struct pb_num_nanmean *m, double x);
double pb_num_nanmean_get(const struct pb_num_nanmean *m);

#endif /* PAIRBOUND_NUM_H */
