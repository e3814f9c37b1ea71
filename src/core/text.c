/* Growable text (include/pairbound/text.h). */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/text.h"

void pb_text_printf(struct pb_text *t, const char *fmt, ...)
{
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (t->buf && (size_t)n < t->cap - t->len) {
      t->len += (size_t)n;
      return;
    }
    t->cap = 2 * (t->cap + (size_t)n + 64);
    t->buf = pb_realloc(t->buf, t->cap);
  }
}

void pb_text_append(struct pb_text *t, const char *s, size_t n)
{
  if (t->len + n + 1 > t->cap) {
    t->cap = 2 * (t->len + n + 64);
    t->buf = pb_realloc(t->buf, t->cap);
  }
  memcpy(t->buf + t->len, s, n);
  t->len += n;
  t->buf[t->len] = '\0';
}

void pb_text_double(struct pb_text *t, double x)
{
  char b[40];
  pb_text_format_double(x, b);
  pb_text_printf(t, "\t%s", b);
}

#define PB_TEXT__MEMO 4096
static _Thread_local struct pb_text__memo {
  uint64_t bits;
  uint8_t used, len;
  char txt[40];
} pb_text__memo[PB_TEXT__MEMO];

void pb_text_num(struct pb_text *t, double x)
{
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  struct pb_text__memo *m = &pb_text__memo[((bits ^ (bits >> 29)) * 0x9e3779b97f4a7c15ull) >> 52 & (PB_TEXT__MEMO - 1)];
  if (!m->used || m->bits != bits) {
    pb_text_format_double(x, m->txt);
    m->bits = bits;
    m->used = 1;
    m->len = (uint8_t)strlen(m->txt);
  }
  if (t->len + m->len + 2 > t->cap) {
    t->cap = 2 * (t->len + m->len + 2) + 4096;
    t->buf = pb_realloc(t->buf, t->cap);
  }
  t->buf[t->len++] = '\t';
  memcpy(t->buf + t->len, m->txt, (size_t)m->len + 1);
  t->len += m->len;
}

void pb_text_int(struct pb_text *t, long long v)
{
  /* what "\t%lld" prints, without the printf machinery: count columns
   * (two in every row of screen_cells.tsv) */
  char d[24];
  int n = 0;
  unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
  do d[n++] = (char)('0' + u % 10); while (u /= 10);
  if (v < 0) d[n++] = '-';
  if (t->len + (size_t)n + 2 > t->cap) {
    t->cap = 2 * (t->len + (size_t)n + 2) + 4096;
    t->buf = pb_realloc(t->buf, t->cap);
  }
  t->buf[t->len++] = '\t';
  while (n > 0) t->buf[t->len++] = d[--n];
  t->buf[t->len] = '\0';
}

void pb_text_free(struct pb_text *t)
{
  free(t->buf);
  memset(t, 0, sizeof *t);
}

/* ---------------------------------------------------------------- numbers */

/* Decimal digits of v into b (no terminator); returns their count. */
static int pb_text__digits(uint64_t v, char *b)
{
  char t[20];
  int n = 0;
  /* two digits per division: formatting is most of export's cost */
  while (v >= 100) {
    const unsigned r = (unsigned)(v % 100);
    v /= 100;
    t[n++] = (char)('0' + r % 10);
    t[n++] = (char)('0' + r / 10);
  }
  do t[n++] = (char)('0' + v % 10); while (v /= 10);
  for (int i = 0; i < n; i++) b[i] = t[n - 1 - i];
  return n;
}

typedef unsigned __int128 pb_text__u128;

/* 10^q for 0 <= q <= 38 (exact). */
static pb_text__u128 pb_text__pow10(int q)
{
  static const uint64_t t[20] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
                                 100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
                                 10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
                                 100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull};
  return q < 20 ? (pb_text__u128)t[q] : (pb_text__u128)t[19] * t[q - 19];
}

/* Sign of d * 2^t - w (exact: w's quotient and remainder by 2^t). */
static int pb_text__cmp_shifted(uint64_t d, int t, pb_text__u128 w)
{
  const pb_text__u128 wq = w >> t, wr = w - (wq << t);
  if (d != wq) return d < wq ? -1 : 1;
  return wr ? -1 : 0;
}

/* |x| = m 2^-s >= 10^e, exactly (doubles: m < 2^53, 0 < s <= 73, -8 <= e <= 16;
 * floats: m < 2^24, 0 < s <= 90, -21 <= e <= 7). */
static int pb_text__ge_pow10(uint64_t m, int s, int e)
{
  if (e >= 0) return (pb_text__u128)m >= pb_text__pow10(e) << s;
  return (pb_text__u128)m * pb_text__pow10(-e) >= (pb_text__u128)1 << s;
}

/* %.{p}g of the decimal D 10^(X - p + 1) (10^(p-1) <= D < 10^p): trailing
 * zeros dropped, style e when X < -4 or X >= p, exponent of two digits at least. */
static void pb_text__g_text(int neg, uint64_t D, int p, int X, char *buf)
{
  char dg[20];
  pb_text__digits(D, dg);
  int nd = p;
  while (nd > 1 && dg[nd - 1] == '0') nd--;
  char *o = buf;
  if (neg) *o++ = '-';
  if (X < -4 || X >= p) {
    *o++ = dg[0];
    if (nd > 1) *o++ = '.', memcpy(o, dg + 1, (size_t)nd - 1), o += nd - 1;
    *o++ = 'e', *o++ = X < 0 ? '-' : '+';
    const int ax = X < 0 ? -X : X;
    if (ax < 10) *o++ = '0';
    o += pb_text__digits((uint64_t)ax, o);
  } else if (X >= 0) {
    memcpy(o, dg, (size_t)X + 1), o += X + 1;
    if (nd > X + 1) *o++ = '.', memcpy(o, dg + X + 1, (size_t)(nd - X - 1)), o += nd - X - 1;
  } else {
    *o++ = '0', *o++ = '.';
    for (int i = 0; i < -X - 1; i++) *o++ = '0';
    memcpy(o, dg, (size_t)nd), o += nd;
  }
  *o = '\0';
}

/* pb_text_format_double's text of a finite non-integer x with 1e-6 <= |x| < 1e15,
 * computed exactly in 128-bit integers instead of by snprintf and strtod:
 * for p = 15, 16, 17 the correctly rounded p-digit decimal (ties to even, as
 * glibc's printf) and whether it reads back as x (strictly inside x's
 * rounding interval, or on its edge with x's significand even: strtod's
 * ties-to-even).  Returns 0 (caller takes the snprintf path) for powers of
 * two, whose interval is not symmetric, and where no width fits the
 * integers.  Bounds: |x| = m 2^-s with 2^52 <= m < 2^53 and 3 <= s <= 72;
 * p - 1 - X <= 22, so m 10^22 < 2^127 and (2m + 1) 10^22 < 2^128. */
static int pb_text__format_fast(double x, char buf[40])
{
  const double ax = fabs(x);
  if (!(ax >= 1e-6 && ax < 1e15)) return 0;
  int bexp;
  const uint64_t m = (uint64_t)ldexp(frexp(ax, &bexp), 53);
  const int s = 53 - bexp;
  if (m == (uint64_t)1 << 52 || s < 1 || s > 72) return 0;
  int e10 = (int)floor(log10(ax)); /* made exact below */
  while (e10 > -7 && !pb_text__ge_pow10(m, s, e10)) e10--;
  while (e10 < 15 && pb_text__ge_pow10(m, s, e10 + 1)) e10++;
  for (int p = 15; p <= 17; p++) {
    int X = e10, q = p - 1 - X;
    if (q < 0 || q > 22) return 0;
    const pb_text__u128 N = (pb_text__u128)m * pb_text__pow10(q);
    pb_text__u128 D = N >> s;
    const pb_text__u128 rem = N - (D << s), half = (pb_text__u128)1 << (s - 1);
    if (rem > half || (rem == half && (D & 1))) D++;
    if (D == pb_text__pow10(p)) D = pb_text__pow10(p - 1), X++, q--; /* 9.99.. rounded up to 10 */
    if (q < 0) return 0;
    /* D 10^-q against the midpoints (2m -+ 1) 2^-(s+1) of x's neighbours, scaled by 10^q */
    const pb_text__u128 tq = pb_text__pow10(q);
    const int up = pb_text__cmp_shifted((uint64_t)D, s + 1, (2 * (pb_text__u128)m + 1) * tq);
    const int lo = pb_text__cmp_shifted((uint64_t)D, s + 1, (2 * (pb_text__u128)m - 1) * tq);
    const int even = (m & 1) == 0;
    if ((up < 0 || (up == 0 && even)) && (lo > 0 || (lo == 0 && even))) {
      pb_text__g_text(x < 0, (uint64_t)D, p, X, buf);
      return 1;
    }
  }
  return 0;
}

/* The nine leading digits A of x 10^q9 = A + f (0 <= f < 1) rounded to the
 * quotient by @p d = 10^(9-p), to nearest with ties to even, as glibc's
 * printf rounds the exact binary value.  Constant divisors (inlined). */
static inline uint64_t pb_text__round_digits(uint64_t A, uint64_t d, int frac_nonzero)
{
  const uint64_t Q = A / d, R = A % d, h = d / 2;
  return R > h || (R == h && (frac_nonzero || (Q & 1))) ? Q + 1 : Q;
}

/* Sign of V 2^t - w for the w = wq 2^t + wr of pb_text__split (wr: whether
 * the remainder is nonzero). */
static inline int pb_text__cmp_split(uint64_t V, uint64_t wq, int wr)
{
  if (V != wq) return V < wq ? -1 : 1;
  return wr ? -1 : 0;
}

/* pb_text_format_float's text of a finite x with 1e-20 <= |x| < 1e5, exactly
 * in integers instead of by snprintf and strtof (export writes seven of these
 * per record): for p = 6, 7, 8, 9 the correctly rounded p-digit decimal (ties
 * to even, as glibc's printf) and whether strtof reads it back: strictly
 * inside x's rounding interval, or on its edge with x's significand even.  A
 * power of two's neighbour below is half as far, so its interval is
 * narrower below.  The nine leading digits A of x 10^q9 come from one 128-bit
 * product, and so do the interval's ends at that scale; each p rounds A and
 * compares.  Bounds: |x| = m 2^-s with 2^23 <= m < 2^24 and 1 <= s <= 90;
 * X >= -20, so q9 = 8 - X <= 28 and (4m + 1) 10^28 < 2^120: every product
 * and shift fits. */
static int pb_text__format_float_fast(float x, char buf[32])
{
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  const int e = (int)(bits >> 23 & 0xff);
  /* 1e-20 <= |x| < 1e5: biased exponents 61 (2^-66 > 1e-20 ...) to 143 (2^16 < 1e5) */
  if (e < 61 || e > 143) return 0;
  const float ax = fabsf(x);
  if (!(ax >= 1e-20f && ax < 1e5f)) return 0;
  const uint64_t m = (bits & 0x7fffffu) | 0x800000u;
  const int s = 150 - e; /* |x| = m 2^-s */
  /* X = floor(log10 |x|): an estimate off by at most one, then exact from A */
  int X = (int)floor((e - 127) * 0.30102999566398120);
  pb_text__u128 N, t9;
  uint64_t A;
  for (;;) {
    t9 = pb_text__pow10(8 - X);
    N = (pb_text__u128)m * t9;
    A = (uint64_t)(N >> s);
    if (A >= 1000000000ull) X++;
    else if (A < 100000000ull) X--;
    else break;
  }
  const pb_text__u128 mask = ((pb_text__u128)1 << s) - 1, frac = N & mask, half = (pb_text__u128)1 << (s - 1);
  const int even = (m & 1) == 0, pow2 = m == (uint64_t)1 << 23;
  /* the midpoints between x and its neighbours, times 10^q9 2^(s+1) (below a power of two: 2^(s+2)) */
  const pb_text__u128 hi = (2 * (pb_text__u128)m + 1) * t9, lo = ((pow2 ? 4 : 2) * (pb_text__u128)m - 1) * t9;
  const int th = s + 1, tl = s + 1 + pow2;
  const uint64_t hq = (uint64_t)(hi >> th), lq = (uint64_t)(lo >> tl);
  const int hr = (hi & (((pb_text__u128)1 << th) - 1)) != 0, lr = (lo & (((pb_text__u128)1 << tl) - 1)) != 0;
  for (int p = 6; p <= 9; p++) {
    const uint64_t d = p == 6 ? 1000 : p == 7 ? 100 : p == 8 ? 10 : 1; /* 10^(9-p) */
    uint64_t D = p == 6 ? pb_text__round_digits(A, 1000, frac != 0)
               : p == 7 ? pb_text__round_digits(A, 100, frac != 0)
               : p == 8 ? pb_text__round_digits(A, 10, frac != 0)
                        : A + (frac > half || (frac == half && (A & 1)));
    const uint64_t V = D * d; /* D 10^(9-p), at x 10^q9's scale */
    const int up = pb_text__cmp_split(V, hq, hr), low = pb_text__cmp_split(V, lq, lr);
    if ((up < 0 || (up == 0 && even)) && (low > 0 || (low == 0 && even))) {
      int Xp = X;
      if (D == pb_text__pow10(p)) D /= 10, Xp++; /* 9.99.. rounded up to 10 */
      pb_text__g_text(x < 0, D, p, Xp, buf);
      return 1;
    }
  }
  return 0;
}

void pb_text_format_float(float x, char buf[32])
{
  if (isnan(x)) { strcpy(buf, "nan"); return; }
  if (x == 0) { strcpy(buf, signbit(x) ? "-0" : "0"); return; } /* what %.6g prints */
  if (pb_text__format_float_fast(x, buf)) return;
  /* Any two distinct 6-digit decimals are distinct floats (FLT_DIG), so when
   * %.6g (which drops trailing zeros) reads back exactly it is the shortest. */
  for (int p = fabsf(x) < FLT_MIN ? 1 : 6; p <= 9; p++) { /* subnormals have fewer digits */
    snprintf(buf, 32, "%.*g", p, (double)x);
    if (strtof(buf, NULL) == x) return;
  }
}

void pb_text_format_double(double x, char buf[40])
{
  if (isnan(x)) { strcpy(buf, "nan"); return; }
  if (x == floor(x) && fabs(x) < 9007199254740992.0) { /* counts print as integers; no "-0" */
    /* what "%.0f" prints: the exact integer */
    char *o = buf;
    if (x < 0) *o++ = '-';
    o += pb_text__digits((uint64_t)fabs(x), o);
    *o = '\0';
    return;
  }
  if (pb_text__format_fast(x, buf)) return;
  for (int p = fabs(x) < DBL_MIN ? 1 : 15; p <= 17; p++) { /* as for floats (DBL_DIG = 15) */
    snprintf(buf, 40, "%.*g", p, x);
    if (strtod(buf, NULL) == x) return;
  }
}
