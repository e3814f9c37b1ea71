/* Numbers: rounding as the stores and kernels need it, and means that skip
 * undefined (NaN) values. */
#ifndef PAIRBOUND_NUM_H
#define PAIRBOUND_NUM_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* llround(x) (halves away from zero) for |x| < 2^63, without the library call: the
 * truncation and the remainder x - t are exact. */
static inline int64_t pb_num_round_half_away(double x)
{
  int64_t t = (int64_t)x;
  double r = x - (double)t;
  return t + (r >= 0.5) - (r <= -0.5);
}

/* pb_num_round_half of a subnormal or infinite x: the library's frexp and ldexp. */
float pb_num__round_half_rare(double x);

/* A power of two 2^k as a double, -1022 <= k <= 1023. */
static inline double pb_num__pow2(int k)
{
  const uint64_t b = (uint64_t)(1023 + k) << 52;
  double d;
  memcpy(&d, &b, sizeof d);
  return d;
}

/* Round to the nearest IEEE half-precision value (ties to even), as float.
 * Inline: synth rounds seven or eight probabilities a record, and a call
 * made the compiler save its live values around each (a tenth of synth). */
static inline float pb_num_round_half(double x)
{
  if (!(x > 0)) return 0.0f;
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  const int be = (int)(b >> 52);
  if (be == 0 || be == 0x7ff) return pb_num__round_half_rare(x);
  /* x = f 2^e with f in [0.5, 1): half keeps 11 significant bits, down to
   * its smallest subnormal step 2^-24.  The scalings by 2^-q and 2^q are
   * exact, so they equal ldexp's (whose library calls were a tenth of synth);
   * rint rounds as nearbyint (to nearest, ties to even). */
  const int e = be - 1022, q = e - 11 < -24 ? -24 : e - 11;
  return (float)(rint(x * pb_num__pow2(-q)) * pb_num__pow2(q));
}

/* Mean of the defined values added (NaN = undefined, skipped), summed in the order added; NaN when none. */
struct pb_num_nanmean {
  double sum;
  int64_t n;
};
/* Near vector math: y[j] = log, cos, exp of x[j], or pow(x[j], p), for
 * j < n.  With @p near, and where the machine has them (pb_num_near), four
 * lanes at a time with glibc's vector functions (libmvec, AVX2): within 4
 * units in the last place of the scalar functions' values, not equal to
 * them, so a caller that must give what the scalar functions would checks
 * what the difference can change (synth does).  Otherwise, and for lanes
 * past the last multiple of four, glibc's scalar log, cos, exp and pow. */
int pb_num_near(void); /* whether the vector functions are there */
void pb_num_log_n(const double *x, double *y, int n, int near);
void pb_num_cos_n(const double *x, double *y, int n, int near);
void pb_num_exp_n(const double *x, double *y, int n, int near);
void pb_num_pow_n(const double *x, double p, double *y, int n, int near);

void pb_num_nanmean_add(struct pb_num_nanmean *m, double x);
double pb_num_nanmean_get(const struct pb_num_nanmean *m);

#endif /* PAIRBOUND_NUM_H */
