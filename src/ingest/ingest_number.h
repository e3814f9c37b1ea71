/* Reading a field's number in `pairbound ingest`: the common plain decimal
 * inline, where every record's nine numbers are read (ingest.c,
 * ingest_summary.c), anything else and every message out of line
 * (ingest_read.c): inline a number takes 97 instructions, through the two
 * calls it took 161 (callgrind, the one-model CSV). */
#ifndef PB_INGEST_NUMBER_H
#define PB_INGEST_NUMBER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pairbound/error.h"
#include "ingest_internal.h"

/* The digits from @p p appended to *m, two at a time (half the loop's
 * branches); where they end. */
static inline const char *pb_ingest__digits(const char *p, uint64_t *m)
{
  uint64_t v = *m;
  while ((unsigned)(p[0] - '0') < 10 && (unsigned)(p[1] - '0') < 10) {
    v = 100 * v + (uint64_t)(10 * (p[0] - '0') + (p[1] - '0'));
    p += 2;
  }
  if ((unsigned)(p[0] - '0') < 10) v = 10 * v + (uint64_t)(*p++ - '0');
  *m = v;
  return p;
}

/* strtof's result for the common plain decimal "DIGITS[.DIGITS]" with at most
 * 19 digits whose value m (the digits as one integer) is below 2^53, or that
 * followed by a decimal exponent "e-5" ("E", "+", at most 3 digits; shortest
 * float text writes small probabilities so) when the fraction digits less the
 * exponent, k, lie in [0, 22]; returns 0 for anything else, and the caller
 * uses strtof.  m is exact as a double and 10^-k is correctly rounded, so
 * their product d is within 2 units in its last place of m / 10^k (two
 * roundings of at most half a unit each, a unit at most doubling across a
 * power of two); rounding d to float then gives strtof's float unless a point
 * halfway between two floats lies within those 2 units, where the two could
 * round apart: that case (4 units, to spare) is strtof's too.  The product
 * takes a tenth less time than the division m / 10^k, which would be exact,
 * and every nonzero value is at least 10^-22, far above the float subnormals. */
static inline __attribute__((always_inline)) int pb_ingest__decimal_in(const char *s, float *out)
{
  static const double p10inv[23] = {1e0,   1e-1,  1e-2,  1e-3,  1e-4,  1e-5,  1e-6,  1e-7,
                                    1e-8,  1e-9,  1e-10, 1e-11, 1e-12, 1e-13, 1e-14, 1e-15,
                                    1e-16, 1e-17, 1e-18, 1e-19, 1e-20, 1e-21, 1e-22};
  /* m may wrap while more than 19 digits come: those are refused below */
  uint64_t m = 0;
  const char *p = pb_ingest__digits(s, &m);
  const ptrdiff_t n_int = p - s;
  ptrdiff_t k = 0;
  if (n_int == 0) return 0;
  if (*p == '.') {
    const char *frac = ++p;
    p = pb_ingest__digits(p, &m);
    k = p - frac;
  }
  if (n_int + k > 19 || m >= (1ull << 53)) return 0;
  if (*p == 'e' || *p == 'E') {
    const int neg = p[1] == '-';
    const char *e0 = p + 1 + (p[1] == '-' || p[1] == '+');
    int e = 0;
    for (p = e0; (unsigned)(*p - '0') < 10 && p - e0 < 3; p++) e = 10 * e + (*p - '0');
    if (p == e0) return 0;
    k += neg ? e : -e;
  }
  if (*p != '\0' || k < 0 || k > 22) return 0;
  const double d = (double)m * p10inv[k];
  /* a normal float keeps 24 of the double's 53 significant bits: d lies
   * halfway between two floats when the 29 bits dropped are 1000...0 */
  uint64_t bits;
  memcpy(&bits, &d, sizeof bits);
  const uint64_t low = bits & 0x1FFFFFFFu;
  if (low + 4 >= 0x10000000u && low <= 0x10000000u + 4) return 0;
  *out = (float)d;
  return 1;
}

/* A plain decimal as strtof reads it, 1, or 0 when strtof must read it (ingest_read.c; tests/unit/test_ingest_fast.c). */
int pb_ingest__decimal(const char *s, float *out);
/* pb_ingest__number for what its inline part does not take: strtof, and the messages. */
int pb_ingest__number_slow(const struct pb_ingest__ctx *ctx, int64_t line, const char *col, const char *s, int prob,
                           float *out);

/* A finite decimal number of column @p col, kept as the float32 it is stored as (docs/csv.md, "Format": no
 * hexadecimal, nan or inf, no nonzero value that underflows to 0, -0 as 0); with @p prob a probability, in [0, 1]. */
static inline __attribute__((always_inline)) int
pb_ingest__number(const struct pb_ingest__ctx *ctx, int64_t line, const char *col, const char *s, int prob, float *out)
{
  float v;
  /* a plain decimal (in [0, 1] for a probability) read exactly: none of the checks of the slow path can refuse it */
  if (pb_ingest__decimal_in(s, &v) && (!prob || v <= 1.0f) && (v > 0.0f || !strpbrk(s, "123456789"))) {
    *out = v;
    return PB_OK;
  }
  return pb_ingest__number_slow(ctx, line, col, s, prob, out);
}

#endif
