/* Small shared helpers (src/core/: rng.c, num.c, text.c, checksum.c,
 * strmap.c, sort.c, output.c): the Philox stream against Random123's
 * published known-answer vectors and an independent Philox4x32-10 written
 * here from the Random123 paper, half-precision rounding against a table of
 * every positive half value built from its bit patterns, shortest float text,
 * SHA-256 against FIPS 180-2 test vectors, the string map and atomic output
 * files.  The seed is PB_TEST_SEED (default 20260908) and is always printed. */
#include "config.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mpi.h>

#include "pairbound/checksum.h"
#include "pairbound/clones.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/fields.h"
#include "pairbound/num.h"
#include "pairbound/output.h"
#include "pairbound/platform.h"
#include "pairbound/results.h"
#include "pairbound/rng.h"
#include "pairbound/signals.h"
#include "pairbound/sort.h"
#include "pairbound/strmap.h"
#include "pairbound/text.h"
#include "pairbound/timer.h"
#include "testlib.h"

/* ------------------------------------------------- reference Philox4x32-10
 * Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC11):
 * multipliers 0xD2511F53 and 0xCD9E8D57, key increments 0x9E3779B9 and
 * 0xBB67AE85, ten rounds. */
static void ref_philox(const uint32_t ctr_in[4], const uint32_t key_in[2], uint32_t out[4])
{
  uint32_t c[4] = {ctr_in[0], ctr_in[1], ctr_in[2], ctr_in[3]}, k[2] = {key_in[0], key_in[1]};
  for (int round = 0; round < 10; round++) {
    if (round > 0) {
      k[0] += 0x9E3779B9u;
      k[1] += 0xBB67AE85u;
    }
    uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
    uint32_t n[4] = {(uint32_t)(p1 >> 32) ^ c[1] ^ k[0], (uint32_t)p1, (uint32_t)(p0 >> 32) ^ c[3] ^ k[1],
                     (uint32_t)p0};
    memcpy(c, n, sizeof c);
  }
  memcpy(out, c, sizeof c);
}

/* Random123 tests/kat_vectors, "philox4x32 10" lines: ctr[4] key[2] -> out[4]. */
static const uint32_t kat[3][10] = {
    {0, 0, 0, 0, 0, 0, 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u},
    {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0x408f276du, 0x41c83b0eu,
     0xa20bc7c6u, 0x6d5451fdu},
    {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u, 0xd16cfe09u, 0x94fdccebu,
     0x5001e420u, 0x24126ea1u},
};

START_TEST(test_reference_philox_kat)
{
  /* the reference itself must reproduce the published vectors */
  for (int v = 0; v < 3; v++) {
    uint32_t out[4];
    ref_philox(kat[v], kat[v] + 4, out);
    for (int j = 0; j < 4; j++) ck_assert_msg(out[j] == kat[v][6 + j], "vector %d word %d", v, j);
  }
}
END_TEST

START_TEST(test_rng_kat_zero)
{
  struct pb_rng r;
  pb_rng_init(&r, 0, 0, 0, 0);
  ck_assert_uint_eq(pb_rng_u32(&r), 0x6627e8d5u);
  ck_assert_uint_eq(pb_rng_u32(&r), 0xe169c58du);
  ck_assert_uint_eq(pb_rng_u32(&r), 0xbc57ac4cu);
  ck_assert_uint_eq(pb_rng_u32(&r), 0x9b00dbd8u);
  /* the next four words come from the next counter (0, 0, 0, 1) */
  uint32_t ctr[4] = {0, 0, 0, 1}, key[2] = {0, 0}, out[4];
  ref_philox(ctr, key, out);
  for (int j = 0; j < 4; j++) ck_assert_uint_eq(pb_rng_u32(&r), out[j]);
  ctr[3] = 2;
  ref_philox(ctr, key, out);
  ck_assert_uint_eq(pb_rng_u32(&r), out[0]);
}
END_TEST

/* The all-ones vector: seed = key, item = ctr[0..1], replicate = ctr[2]; the
 * draw counter (ctr[3]) starts at 0 in pb_rng_init, so set it as the vector needs. */
START_TEST(test_rng_kat_ones)
{
  struct pb_rng r;
  pb_rng_init(&r, UINT64_MAX, 0, UINT64_MAX, UINT32_MAX);
  r.ctr[3] = 0xffffffffu;
  for (int j = 0; j < 4; j++) ck_assert_uint_eq(pb_rng_u32(&r), kat[1][6 + j]);
  /* and the pi-digits vector */
  pb_rng_init(&r, 0x299f31d0a4093822ull, 0, 0x85a308d3243f6a88ull, 0x13198a2eu);
  r.ctr[3] = 0x03707344u;
  for (int j = 0; j < 4; j++) ck_assert_uint_eq(pb_rng_u32(&r), kat[2][6 + j]);
}
END_TEST

START_TEST(test_rng_streams)
{
  struct pb_rng a, b;
  uint32_t x[64], y[64];
  /* same key: identical sequences */
  pb_rng_init(&a, 12345, 3, 77, 5);
  pb_rng_init(&b, 12345, 3, 77, 5);
  for (int i = 0; i < 64; i++) ck_assert_uint_eq(pb_rng_u32(&a), pb_rng_u32(&b));
  /* every single change of the stream name gives a different sequence */
  const uint64_t seeds[] = {12345, 12346, 12345, 12345, 12345, 12345};
  const uint32_t analyses[] = {3, 3, 4, 3, 3, 3};
  const uint64_t items[] = {77, 77, 77, 78, 77, 77ull | (1ull << 32)};
  const uint32_t reps[] = {5, 5, 5, 5, 6, 5};
  int n = (int)(sizeof seeds / sizeof seeds[0]);
  for (int s = 0; s < n; s++)
    for (int t = s + 1; t < n; t++) {
      pb_rng_init(&a, seeds[s], analyses[s], items[s], reps[s]);
      pb_rng_init(&b, seeds[t], analyses[t], items[t], reps[t]);
      int same = 0;
      for (int i = 0; i < 64; i++) {
        x[i] = pb_rng_u32(&a);
        y[i] = pb_rng_u32(&b);
        same += x[i] == y[i];
      }
      ck_assert_msg(same < 4, "streams %d and %d share %d of 64 words", s, t, same);
    }
  /* interleaving draws of two streams does not change either */
  pb_rng_init(&a, 9, 1, 2, 3);
  for (int i = 0; i < 64; i++) x[i] = pb_rng_u32(&a);
  pb_rng_init(&a, 9, 1, 2, 3);
  pb_rng_init(&b, 9, 1, 2, 4);
  for (int i = 0; i < 64; i++) {
    ck_assert_uint_eq(pb_rng_u32(&a), x[i]);
    (void)pb_rng_u32(&b);
  }
}
END_TEST

START_TEST(test_rng_uniform)
{
  struct pb_rng r;
  /* the zero-key stream's first two words give the uniform through the
   * standard 53-bit construction (a >> 5, b >> 6) of genrand_res53, up to
   * the half-step offset that keeps 0 out */
  pb_rng_init(&r, 0, 0, 0, 0);
  double u = pb_rng_uniform(&r);
  double res53 = ((0x6627e8d5u >> 5) * 67108864.0 + (0xe169c58du >> 6)) / 9007199254740992.0;
  ck_assert_msg(fabs(u - res53) <= 1.0 / 9007199254740992.0, "u = %.17g, res53 = %.17g", u, res53);

  pb_rng_init(&r, test_seed(), 7, 0, 0);
  double sum = 0, lo = 1, hi = 0;
  const int n = 200000;
  for (int i = 0; i < n; i++) {
    double v = pb_rng_uniform(&r);
    ck_assert_msg(v > 0 && v < 1, "draw %d = %.17g", i, v);
    sum += v;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  /* mean within 6 standard errors (sd of U(0,1) is 0.2887) */
  ck_assert_msg(fabs(sum / n - 0.5) < 6 * 0.2887 / sqrt(n), "mean %.6f", sum / n);
  ck_assert(lo < 1e-4 && hi > 1 - 1e-4);

  /* standard normal: mean 0, variance 1 */
  double s1 = 0, s2 = 0;
  for (int i = 0; i < n; i++) {
    double z = pb_rng_normal(&r);
    ck_assert(isfinite(z));
    s1 += z;
    s2 += z * z;
  }
  ck_assert_msg(fabs(s1 / n) < 6 / sqrt(n), "normal mean %.5f", s1 / n);
  ck_assert_msg(fabs(s2 / n - 1) < 6 * sqrt(2.0 / n), "normal variance %.5f", s2 / n);
}
END_TEST

START_TEST(test_rng_below)
{
  struct pb_rng r;
  pb_rng_init(&r, test_seed(), 11, 42, 0);
  /* n = 1 always gives 0; the range is exact for small n */
  for (int i = 0; i < 100; i++) ck_assert_uint_eq(pb_rng_below(&r, 1), 0);
  int seen[7] = {0};
  for (int i = 0; i < 1000; i++) {
    uint32_t v = pb_rng_below(&r, 7);
    ck_assert_uint_lt(v, 7);
    seen[v] = 1;
  }
  for (int v = 0; v < 7; v++) ck_assert_msg(seen[v], "value %d never drawn", v);

  /* chi-square on bins; the 99.99% point of chi2(k - 1) is below 2 (k - 1) + 30
   * for these k, a generous bound that a biased generator still exceeds */
  const uint32_t ns[] = {2, 3, 10, 17, 1000};
  for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
    uint32_t k = ns[t];
    const int draws = 100000;
    int *count = calloc(k, sizeof *count);
    for (int i = 0; i < draws; i++) {
      uint32_t v = pb_rng_below(&r, k);
      ck_assert_uint_lt(v, k);
      count[v]++;
    }
    double e = (double)draws / k, chi2 = 0;
    for (uint32_t v = 0; v < k; v++) chi2 += (count[v] - e) * (count[v] - e) / e;
    ck_assert_msg(chi2 < 2.0 * (k - 1) + 30 + 4 * sqrt(2.0 * (k - 1)), "n = %u: chi2 = %.1f", k, chi2);
    free(count);
  }

  /* n = 3 * 2^30 is where a plain modulo (u32 % n) is most biased: values
   * below 2^30 would come twice as often; Lemire's rejection must not be */
  uint32_t big = 3u << 30;
  int low = 0;
  const int draws = 60000;
  for (int i = 0; i < draws; i++) {
    uint32_t v = pb_rng_below(&r, big);
    ck_assert_uint_lt(v, big);
    low += v < (1u << 30);
  }
  /* expected one third (sd ~ 0.0019); modulo bias would give one half */
  ck_assert_msg(fabs((double)low / draws - 1.0 / 3) < 0.012, "fraction below 2^30: %.4f", (double)low / draws);
  /* the top of a huge range is reachable */
  uint32_t maxv = 0;
  for (int i = 0; i < 20000; i++) {
    uint32_t v = pb_rng_below(&r, UINT32_MAX);
    if (v > maxv) maxv = v;
  }
  ck_assert(maxv > UINT32_MAX - (UINT32_MAX / 1000));
}
END_TEST

/* pb_rng_below is the rejection rule on the stream's words, one word per try:
 * accept the word u when (u n mod 2^32) >= 2^32 mod n, answer floor(u n / 2^32);
 * checked draw by draw against a twin stream read with pb_rng_u32, for ranges
 * where rejection is frequent (n = 3 * 2^30 rejects a quarter of the words).
 * pb_rng_shuffle is Fisher-Yates with those draws. */
START_TEST(test_rng_below_rule)
{
  const uint32_t ns[] = {1, 2, 3, 5, 7, 1000, 3u << 30, (1u << 31) + 1, UINT32_MAX};
  struct pb_rng r, twin;
  pb_rng_init(&r, test_seed(), 12, 7, 3);
  pb_rng_init(&twin, test_seed(), 12, 7, 3);
  int64_t rejected = 0;
  for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++)
    for (int i = 0; i < 20000; i++) {
      const uint64_t n = ns[t], limit = ((uint64_t)1 << 32) % n;
      uint64_t m;
      while (((m = (uint64_t)pb_rng_u32(&twin) * n) & 0xffffffffu) < limit) rejected++;
      ck_assert_uint_eq(pb_rng_below(&r, ns[t]), (uint32_t)(m >> 32));
    }
  ck_assert_int_gt(rejected, 1000);
  int32_t v[9], w[9];
  for (int k = 0; k < 9; k++) v[k] = w[k] = 10 * k;
  pb_rng_shuffle(&r, v, 9);
  for (int k = 8; k > 0; k--) {
    const int32_t j = (int32_t)pb_rng_below(&twin, (uint32_t)k + 1), x = w[k];
    w[k] = w[j];
    w[j] = x;
  }
  for (int k = 0; k < 9; k++) ck_assert_int_eq(v[k], w[k]);
}
END_TEST

/* The stream's words from the test's own Philox (ref_philox), block after block. */
struct ref_stream {
  uint32_t key[2], ctr[4], out[4];
  int left;
};

static uint32_t ref_next(struct ref_stream *q)
{
  if (q->left == 0) {
    ref_philox(q->ctr, q->key, q->out);
    q->ctr[3]++;
    q->left = 4;
  }
  return q->out[4 - q->left--];
}

static uint32_t ref_below(struct ref_stream *q, uint32_t n)
{
  const uint64_t limit = ((uint64_t)1 << 32) % n;
  uint64_t m;
  while (((m = (uint64_t)ref_next(q) * n) & 0xffffffffu) < limit) continue;
  return (uint32_t)(m >> 32);
}

/* The reference stream of @p r as it stands (no draw taken from its block yet). */
static struct ref_stream ref_stream_of(const struct pb_rng *r)
{
  return (struct ref_stream){{r->key[0], r->key[1]}, {r->ctr[0], r->ctr[1], r->ctr[2], r->ctr[3]}, {0}, 0};
}

/* Fisher-Yates on w[0..n) from the reference stream: highest position first, ref_below(i + 1). */
static void ref_shuffle(struct ref_stream *q, int32_t *w, int32_t n)
{
  for (int32_t k = n - 1; k > 0; k--) {
    const int32_t j = (int32_t)ref_below(q, (uint32_t)k + 1), x = w[k];
    w[k] = w[j];
    w[j] = x;
  }
}

/* pb_rng_ahead leaves the stream as it was: against the test's own Philox, four
 * blocks computed at once from any point (a block's start, or mid-block, where
 * it must do nothing), across the draw counter's wrap, and followed by uniform
 * draws, a shuffle (whose batches take the draws ahead first) and more words. */
START_TEST(test_rng_ahead)
{
  int32_t v[40], w[40];
  for (int lead = 0; lead < 21; lead++)
    for (int wrap = 0; wrap < 2; wrap++) {
      struct pb_rng r;
      pb_rng_init(&r, test_seed(), 9, (uint64_t)lead * 977, 3);
      if (wrap) r.ctr[3] = 0xfffffffeu;
      struct ref_stream q = ref_stream_of(&r);
      for (int k = 0; k < lead; k++) {
        pb_rng_ahead(&r);
        ck_assert_uint_eq(pb_rng_u32(&r), ref_next(&q));
      }
      pb_rng_ahead(&r);
      for (int k = 0; k < 5; k++) { /* uniform: two words, 27 and 26 of their high bits */
        const uint64_t hi = ref_next(&q) >> 5, lo = ref_next(&q) >> 6;
        ck_assert(pb_rng_uniform(&r) == ((double)(hi * 67108864u + lo) + 0.5) / 9007199254740992.0);
      }
      for (int32_t k = 0; k < 40; k++) v[k] = w[k] = k;
      pb_rng_shuffle(&r, v, 40);
      ref_shuffle(&q, w, 40);
      for (int32_t k = 0; k < 40; k++) ck_assert_int_eq(v[k], w[k]);
      for (int k = 0; k < 70; k++) {
        if (k % 7 == 0) pb_rng_ahead(&r);
        ck_assert_msg(pb_rng_u32(&r) == ref_next(&q), "lead %d wrap %d word %d", lead, wrap, k);
      }
    }
}
END_TEST

/* pb_rng_shuffle against the test's own stream: the shuffles (Fisher-Yates on
 * Lemire's rule, drawn from the reference stream) and the words after them
 * are the reference's, for shuffles from 2 to 3 x 2^20 entries (where a draw
 * is rejected about a thousand times per shuffle), three in a row, after 0-5
 * draws already taken, and across the block counter's wrap. */
START_TEST(test_rng_shuffle_bulk)
{
  const int32_t ns[] = {2, 9, 33, 64, 65, 100, 257, 5000, 3 << 20};
  int32_t *v = malloc((size_t)(3 << 20) * sizeof *v), *w = malloc((size_t)(3 << 20) * sizeof *w);
  for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++)
    for (int lead = 0; lead < 6; lead++)
      for (int wrap = 0; wrap < 2; wrap++) {
        const int32_t n = ns[t];
        if (n == 3 << 20 && (lead > 1 || wrap)) continue;
        struct pb_rng r;
        pb_rng_init(&r, test_seed(), 5, (uint64_t)t, (uint32_t)lead);
        if (wrap) r.ctr[3] = 0xfffffff3u;
        struct ref_stream q = ref_stream_of(&r);
        for (int k = 0; k < lead; k++) ck_assert_uint_eq(pb_rng_u32(&r), ref_next(&q));
        for (int rep = 0; rep < 3; rep++) {
          for (int32_t k = 0; k < n; k++) v[k] = w[k] = k;
          pb_rng_shuffle(&r, v, n);
          ref_shuffle(&q, w, n);
          for (int32_t k = 0; k < n; k++)
            ck_assert_msg(v[k] == w[k], "n %d lead %d wrap %d shuffle %d: [%d] %d, want %d", n, lead, wrap, rep, k,
                          v[k], w[k]);
          if (n == 3 << 20) break;
        }
        for (int k = 0; k < 200; k++) ck_assert_uint_eq(pb_rng_u32(&r), ref_next(&q));
      }
  free(v);
  free(w);
}
END_TEST

/* pb_rng_shuffle_segments against the test's own stream: segment after
 * segment, Fisher-Yates on Lemire's rule from one reference stream, for runs
 * of small segments (their draws together span several batches), a single
 * segment, segments of one element (no draw) and none; the words after are the
 * reference's too, so a batch left part-used hands back the right state. */
START_TEST(test_rng_shuffle_segments)
{
  static const int32_t sizes[][12] = {
    {50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 0}, {1, 2, 1, 63, 64, 65, 1, 1, 129, 3, 0}, {5, 5, 5, 5, 5, 0},
    {1, 1, 1, 0}, {700, 0}, {0}};
  int32_t v[1000], w[1000], beg[13];
  for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++)
    for (int lead = 0; lead < 3; lead++) {
      int32_t ns = 0;
      beg[0] = 0;
      while (sizes[t][ns]) {
        beg[ns + 1] = beg[ns] + sizes[t][ns];
        ns++;
      }
      struct pb_rng r;
      pb_rng_init(&r, test_seed(), 9, (uint64_t)t, (uint32_t)lead);
      struct ref_stream q = ref_stream_of(&r);
      for (int k = 0; k < lead; k++) ck_assert_uint_eq(pb_rng_u32(&r), ref_next(&q));
      for (int32_t k = 0; k < beg[ns]; k++) v[k] = w[k] = 3 * k + 1;
      pb_rng_shuffle_segments(&r, v, ns, beg);
      for (int32_t g = 0; g < ns; g++) ref_shuffle(&q, w + beg[g], beg[g + 1] - beg[g]);
      for (int32_t k = 0; k < beg[ns]; k++)
        ck_assert_msg(v[k] == w[k], "sizes %zu lead %d: [%d] %d, want %d", t, lead, k, v[k], w[k]);
      for (int k = 0; k < 50; k++) ck_assert_uint_eq(pb_rng_u32(&r), ref_next(&q));
    }
}
END_TEST

/* ------------------------------------------------------------ half rounding */

/* Every positive finite IEEE binary16 value, ascending, with its bit pattern:
 * subnormals m * 2^-24 (m = 1..1023), normals (1024 + m) * 2^(e - 25). */
#define N_HALF 31743
static double half_value[N_HALF];
static uint16_t half_bits[N_HALF];

static void half_table(void)
{
  int k = 0;
  for (int e = 0; e < 31; e++)
    for (int m = 0; m < 1024; m++) {
      if (e == 0 && m == 0) continue;
      half_value[k] = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
      half_bits[k] = (uint16_t)((e << 10) | m);
      k++;
    }
  ck_assert_int_eq(k, N_HALF);
  ck_assert(half_value[N_HALF - 1] == 65504.0);
}

/* Nearest half (ties to the even bit pattern) for 0 <= x <= 65504, by search. */
static double ref_round_half(double x)
{
  if (x <= 0) return 0.0;
  int lo = 0, hi = N_HALF - 1;
  while (lo < hi) { /* first value >= x */
    int mid = (lo + hi) / 2;
    if (half_value[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  double above = half_value[lo], below = lo > 0 ? half_value[lo - 1] : 0.0;
  int below_even = lo > 0 ? (half_bits[lo - 1] & 1) == 0 : 1;
  if (above == x) return x;
  double da = above - x, db = x - below;
  if (db < da) return below;
  if (da < db) return above;
  return below_even ? below : above;
}

START_TEST(test_round_half_hand)
{
  ck_assert(pb_num_round_half(0.1) == 0.0999755859375f);       /* 1638 / 16384 */
  ck_assert(pb_num_round_half(1.0 / 3) == 0.333251953125f);    /* 1365 / 4096 */
  ck_assert(pb_num_round_half(0.5) == 0.5f);
  ck_assert(pb_num_round_half(1.0) == 1.0f);
  ck_assert(pb_num_round_half(0.0) == 0.0f);
  /* 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties to even gives 1 */
  ck_assert(pb_num_round_half(2049.0 / 2048) == 1.0f);
  /* 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even) */
  ck_assert(pb_num_round_half(2051.0 / 2048) == 1026.0f / 1024);
  /* subnormal range, step 2^-24 = 5.96e-8: 1e-7 is 1.68 steps, so it rounds
   * to 2 steps = 2^-23; 3e-8 is 0.50 steps and rounds up to 2^-24 */
  ck_assert(pb_num_round_half(1e-7) == ldexpf(1.0f, -23));
  ck_assert(pb_num_round_half(3e-8) == ldexpf(1.0f, -24));
  ck_assert(pb_num_round_half(ldexp(1.0, -25)) == 0.0f);          /* tie between 0 and 2^-24: even */
  ck_assert(pb_num_round_half(3 * ldexp(1.0, -25)) == ldexpf(1.0f, -23)); /* 1.5 steps: even is 2 */
  ck_assert(pb_num_round_half(ldexp(1.0, -26)) == 0.0f);
  /* smallest normal 2^-14 and the subnormal just below it */
  ck_assert(pb_num_round_half(ldexp(1.0, -14)) == ldexpf(1.0f, -14));
  ck_assert(pb_num_round_half(ldexp(1023.0, -24)) == ldexpf(1023.0f, -24));
  /* 0.96 rounds to 983 / 1024 = 0.9599609375 (0.96 * 1024 = 983.04) */
  ck_assert(pb_num_round_half(0.96) == 0.9599609375f);
}
END_TEST

START_TEST(test_round_half_exhaustive)
{
  half_table();
  /* every half value is a fixed point, and every midpoint between two
   * neighbours rounds to the one with the even bit pattern */
  for (int k = 0; k < N_HALF; k++) {
    ck_assert_msg(pb_num_round_half(half_value[k]) == (float)half_value[k], "half %d = %.17g", k, half_value[k]);
    if (k + 1 < N_HALF) {
      double mid = 0.5 * (half_value[k] + half_value[k + 1]);
      double want = (half_bits[k] & 1) == 0 ? half_value[k] : half_value[k + 1];
      ck_assert_msg(pb_num_round_half(mid) == (float)want, "midpoint %.17g", mid);
      /* just off the midpoint the nearest wins */
      ck_assert(pb_num_round_half(nextafter(mid, 0)) == (float)half_value[k]);
      ck_assert(pb_num_round_half(nextafter(mid, 1e9)) == (float)half_value[k + 1]);
    }
  }
  /* random probabilities, spread over many binades */
  struct pb_rng r;
  pb_rng_init(&r, test_seed(), 99, 0, 0);
  for (int i = 0; i < 200000; i++) {
    double x = pb_rng_uniform(&r);
    if (i % 2) x = pow(x, 8);
    float got = pb_num_round_half(x);
    ck_assert_msg(got == (float)ref_round_half(x), "x = %.17g: got %.17g, want %.17g", x, (double)got,
                  ref_round_half(x));
  }
}
END_TEST

/* --------------------------------------------------------------- formatting */

/* pb_num_round_half_away against hand-worked halves and the C library's llround on
 * random doubles of every magnitude the class bootstrap scales (|x| <= 2^41)
 * and beyond (integers past 2^53, where x - t must be 0). */
/* pb_num_log_n and the others: without near, glibc's scalar values to the
 * bit; with near, within 8 units in the last place of them (libmvec claims
 * 4), the lanes past the last multiple of four the scalar values to the bit;
 * pow with the exponent it is given (1.7 and 0.7 as synth's, and 3). */
static double ulps_apart(double a, double b)
{
  return a == b ? 0.0 : fabs(a - b) / (nextafter(fabs(b), INFINITY) - fabs(b));
}

START_TEST(test_near_math)
{
  enum { N = 203 };
  double x[4][N], y[N], want[N];
  const double pw[3] = {1.7, 0.7, 3.0};
  for (int j = 0; j < N; j++) {
    const double t = (j + 0.5) / N;
    x[0][j] = 2.0 * t * t;            /* log: (0, 2) */
    x[1][j] = 2.0 * M_PI * t;         /* cos: a turn */
    x[2][j] = -30.0 + 35.0 * t;       /* exp */
    x[3][j] = 0.06 + 0.94 * t;        /* pow's base: 1 - s of synth */
  }
  for (int f = 0; f < 6; f++) {
    const double *in = x[f < 3 ? f : 3], p = f < 3 ? 0.0 : pw[f - 3];
    for (int j = 0; j < N; j++)
      want[j] = f == 0 ? log(in[j]) : f == 1 ? cos(in[j]) : f == 2 ? exp(in[j]) : pow(in[j], p);
    for (int near = 0; near < 2; near++)
      for (int n = N - 3; n <= N; n++) {
        for (int j = 0; j < N; j++) y[j] = -1.0;
        if (f == 0) pb_num_log_n(in, y, n, near);
        else if (f == 1) pb_num_cos_n(in, y, n, near);
        else if (f == 2) pb_num_exp_n(in, y, n, near);
        else pb_num_pow_n(in, p, y, n, near);
        for (int j = 0; j < N; j++) {
          const int exact = !near || !pb_num_near() || j >= n / 4 * 4;
          if (j >= n) ck_assert(y[j] == -1.0);
          else if (exact) ck_assert_msg(memcmp(&y[j], &want[j], sizeof y[j]) == 0, "f %d lane %d of %d", f, j, n);
          else ck_assert_msg(ulps_apart(y[j], want[j]) <= 8.0, "f %d x %a: %a against %a", f, in[j], y[j], want[j]);
        }
      }
  }
}
END_TEST

START_TEST(test_round_half_away)
{
  const double x[] = {0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, -0.49999999999999994, 0.0, -0.0,
                      1e-300, 4503599627370495.5, -4503599627370495.5, 9007199254740993.0, 1099511627776.0 * 0.75};
  const int64_t want[] = {1, -1, 2, -2, 3, -3, 0, 0, 0, 0, 0, 4503599627370496, -4503599627370496, 9007199254740992,
                          824633720832};
  for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
    ck_assert_msg(pb_num_round_half_away(x[i]) == want[i], "%.17g: %lld, want %lld", x[i],
                  (long long)pb_num_round_half_away(x[i]), (long long)want[i]);
  struct pb_rng r;
  pb_rng_init(&r, test_seed(), 91, 0, 0);
  for (int i = 0; i < 200000; i++) {
    double v = (pb_rng_uniform(&r) * 2 - 1) * ldexp(1.0, (int)pb_rng_below(&r, 62));
    if (i % 4 == 0) v = floor(v) + 0.5; /* exact halves */
    ck_assert_msg(pb_num_round_half_away(v) == llround(v), "%.17g", v);
  }
}
END_TEST

START_TEST(test_format_float_hand)
{
  char buf[32];
  pb_text_format_float(0.1f, buf);
  ck_assert_str_eq(buf, "0.1");
  pb_text_format_float(0.333251953125f, buf);
  ck_assert_str_eq(buf, "0.33325195");
  pb_text_format_float(1.0f, buf);
  ck_assert_str_eq(buf, "1");
  pb_text_format_float(0.0f, buf);
  ck_assert_str_eq(buf, "0");
  pb_text_format_float(0.5f, buf);
  ck_assert_str_eq(buf, "0.5");
  pb_text_format_float(0.0999755859375f, buf);
  ck_assert_str_eq(buf, "0.099975586");
  pb_text_format_float(1.0f / 3, buf);
  ck_assert_str_eq(buf, "0.33333334");
  pb_text_format_float(16777216.0f, buf);
  ck_assert_str_eq(buf, "16777216");
  pb_text_format_float(FLT_MAX, buf);
  ck_assert_str_eq(buf, "3.4028235e+38");
  pb_text_format_float(1e-10f, buf);
  ck_assert_str_eq(buf, "1e-10");
  pb_text_format_float(NAN, buf);
  ck_assert_str_eq(buf, "nan");

  char dbuf[40];
  pb_text_format_double(0.1, dbuf);
  ck_assert_str_eq(dbuf, "0.1");
  pb_text_format_double(1.0 / 3, dbuf);
  ck_assert_str_eq(dbuf, "0.3333333333333333");
  pb_text_format_double(0.1 + 0.2, dbuf);
  ck_assert_str_eq(dbuf, "0.30000000000000004");
  pb_text_format_double(2.0, dbuf);
  ck_assert_str_eq(dbuf, "2");
  pb_text_format_double(-1.5, dbuf);
  ck_assert_str_eq(dbuf, "-1.5");
  pb_text_format_double(NAN, dbuf);
  ck_assert_str_eq(dbuf, "nan");
  /* subnormals read back exactly (shortness: test_format_subnormal_shortest) */
  pb_text_format_double(5e-324, dbuf);
  ck_assert(strtod(dbuf, NULL) == 5e-324);
  pb_text_format_float(ldexpf(1.0f, -149), buf);
  ck_assert(strtof(buf, NULL) == ldexpf(1.0f, -149));
}
END_TEST

/* FLT_DIG / DBL_DIG digits suffice to tell normal numbers apart, but
 * subnormals have fewer significant bits: their shortest text is searched
 * from one digit. */
START_TEST(test_format_subnormal_shortest)
{
  char buf[32], dbuf[40];
  pb_text_format_double(5e-324, dbuf); /* the smallest subnormal double */
  ck_assert_str_eq(dbuf, "5e-324");
  /* subnormal float step 1.4e-45: 4 digits (step 1e-44) are too few, 5 suffice */
  float x = strtof("3.4356e-41", NULL);
  pb_text_format_float(x, buf);
  ck_assert_str_eq(buf, "3.4356e-41");
  pb_text_format_float(ldexpf(1.0f, -149), buf); /* 1.4012985e-45: "1e-45" reads back */
  ck_assert_str_eq(buf, "1e-45");
}
END_TEST

/* Significant digits of a %g text, trailing zeros excluded ("725400" and
 * "7.254e+05" both carry the 4 digits 7254). */
static int sig_digits(const char *s)
{
  char digits[64];
  int n = 0, started = 0;
  for (; *s && *s != 'e' && n < 63; s++) {
    if (*s >= '1' && *s <= '9') started = 1;
    if (started && *s >= '0' && *s <= '9') digits[n++] = *s;
  }
  while (n > 0 && digits[n - 1] == '0') n--;
  return n;
}

START_TEST(test_format_round_trip)
{
  struct pb_rng r;
  pb_rng_init(&r, test_seed(), 5, 1, 0);
  char buf[32], shorter[32];
  for (int i = 0; i < 100000; i++) {
    uint32_t bits = pb_rng_u32(&r);
    float x;
    memcpy(&x, &bits, sizeof x);
    if (isnan(x) || isinf(x)) continue;
    if (i % 3 == 0) x = (float)pb_rng_uniform(&r); /* probabilities */
    pb_text_format_float(x, buf);
    ck_assert_msg(strtof(buf, NULL) == x, "%.9g -> '%s'", (double)x, buf);
    /* shortest: the nearest decimal with one digit fewer does not read back
     * (if the nearest does not, no other decimal of that length does) */
    if (x == 0) continue;
    int p = sig_digits(buf);
    ck_assert_msg(p >= 1 && p <= 9, "'%s'", buf);
    if (p > 1) {
      snprintf(shorter, sizeof shorter, "%.*g", p - 1, (double)x);
      ck_assert_msg(strtof(shorter, NULL) != x, "%s is shorter than %s", shorter, buf);
    }
  }
  char dbuf[40];
  for (int i = 0; i < 50000; i++) {
    uint64_t bits = ((uint64_t)pb_rng_u32(&r) << 32) | pb_rng_u32(&r);
    double x;
    memcpy(&x, &bits, sizeof x);
    if (isnan(x) || isinf(x)) continue;
    pb_text_format_double(x, dbuf);
    ck_assert_msg(strtod(dbuf, NULL) == x, "%.17g -> '%s'", x, dbuf);
  }
}
END_TEST

/* pb_text_format_double's definition, by the C library: "nan"; integers below
 * 2^53 as "%.0f" (no "-0"); else the first of %.15g, %.16g, %.17g (from %.1g
 * below DBL_MIN) that strtod reads back exactly. */
static void format_double_ref(double x, char buf[40])
{
  if (isnan(x)) { strcpy(buf, "nan"); return; }
  if (x == floor(x) && fabs(x) < 9007199254740992.0) {
    snprintf(buf, 40, "%.0f", x == 0 ? 0.0 : x);
    return;
  }
  for (int p = fabs(x) < DBL_MIN ? 1 : 15; p <= 17; p++) {
    snprintf(buf, 40, "%.*g", p, x);
    if (strtod(buf, NULL) == x) return;
  }
}

static void check_format_double(double x, const char *kind)
{
  char got[40], want[40];
  pb_text_format_double(x, got);
  format_double_ref(x, want);
  if (strcmp(got, want) != 0) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    ck_abort_msg("%s: %.17g (bits %016llx, seed %llu): '%s', C library '%s'", kind, x, (unsigned long long)bits,
                 (unsigned long long)test_seed(), got, want);
  }
}

static uint64_t rng_u64(struct pb_rng *r) { return ((uint64_t)pb_rng_u32(r) << 32) | pb_rng_u32(r); }

/* The exact integer path of pb_text_format_double against the snprintf / strtod
 * definition: special values, neighbours of the fast path's limits and of
 * powers of two and ten, random bit patterns, rates k / N, short decimals
 * at every scale, and exact ties at 15, 16 and 17 digits (a 13- to
 * 15-digit integer plus j / 2^k), each also negated. */
START_TEST(test_format_double_exact)
{
  const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 5e-324, DBL_MIN, DBL_MAX, 1e-6, 1e15,
                            9007199254740992.0, 9007199254740991.0, 0.1, 0.5, 1.5, 2.5, 1e-5, 0.30000000000000004,
                            999999999999999.9, 99999999999999.99, 0.99999999999999989, 9.9999999999999995e-7};
  for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
    for (int sg = 0; sg < 2; sg++) check_format_double(sg ? -special[i] : special[i], "special");
  for (int e = -1074; e <= 1023; e++) {
    const double x = ldexp(1.0, e);
    check_format_double(x, "power of two");
    check_format_double(nextafter(x, 0), "below a power of two");
    check_format_double(nextafter(x, INFINITY), "above a power of two");
  }
  for (int e = -20; e <= 20; e++) {
    const double x = pow(10.0, e);
    double y = x;
    for (int k = 0; k < 4; k++, y = nextafter(y, 0)) check_format_double(y, "below a power of ten");
    y = x;
    for (int k = 0; k < 4; k++, y = nextafter(y, INFINITY)) check_format_double(y, "above a power of ten");
  }
  struct pb_rng r;
  pb_rng_init(&r, test_seed(), 6, 0, 0);
  for (int i = 0; i < 300000; i++) {
    const uint64_t bits = rng_u64(&r);
    double x;
    memcpy(&x, &bits, sizeof x);
    check_format_double(x, "bit pattern");
    /* the fast path's range: exponents of 1e-7 to 1e16 */
    const uint64_t b2 = (bits & 0x800fffffffffffffull) | ((uint64_t)(1000 + pb_rng_below(&r, 80)) << 52);
    memcpy(&x, &b2, sizeof x);
    check_format_double(x, "bit pattern, fast range");
  }
  for (int i = 0; i < 300000; i++) {
    const int32_t N = 1 + (int32_t)pb_rng_below(&r, 100000), k = (int32_t)pb_rng_below(&r, (uint64_t)N + 1);
    check_format_double((double)k / N, "rate");
    check_format_double(-(double)k / N, "rate");
  }
  for (int i = 0; i < 300000; i++) {
    /* a decimal of 1 to 17 digits at scale 10^-8 .. 10^16 */
    const int d = 1 + (int)pb_rng_below(&r, 17), e = -8 - d + (int)pb_rng_below(&r, 25);
    char txt[64];
    snprintf(txt, sizeof txt, "%llue%d", (unsigned long long)(rng_u64(&r) % (uint64_t)pow(10.0, d)), e);
    check_format_double(strtod(txt, NULL), "short decimal");
  }
  for (int i = 0; i < 300000; i++) {
    const int k = 1 + (int)pb_rng_below(&r, 8), id = 13 + (int)pb_rng_below(&r, 3);
    const uint64_t I = (uint64_t)pow(10.0, id - 1) + rng_u64(&r) % (uint64_t)(9 * pow(10.0, id - 1));
    const uint64_t j = 1 + 2 * pb_rng_below(&r, (uint64_t)1 << (k - 1));
    const uint64_t v = I << k | j; /* exact below 2^53 */
    if (v < (uint64_t)1 << 53) check_format_double(ldexp((double)v, -k), "tie");
  }
}
END_TEST

/* pb_text_format_float's definition, by the C library: "nan"; else the first
 * of %.6g .. %.9g (from %.1g below FLT_MIN) that strtof reads back exactly. */
static void format_float_ref(float x, char buf[32])
{
  if (isnan(x)) { strcpy(buf, "nan"); return; }
  for (int p = fabsf(x) < FLT_MIN ? 1 : 6; p <= 9; p++) {
    snprintf(buf, 32, "%.*g", p, (double)x);
    if (strtof(buf, NULL) == x) return;
  }
}

static void check_format_float(float x, const char *kind)
{
  char got[32], want[32];
  pb_text_format_float(x, got);
  format_float_ref(x, want);
  if (strcmp(got, want) != 0) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    ck_abort_msg("%s: %.9g (bits %08x, seed %llu): '%s', C library '%s'", kind, (double)x, bits,
                 (unsigned long long)test_seed(), got, want);
  }
}

/* The exact integer path of pb_text_format_float (export's seven numbers per
 * record) against the snprintf / strtof definition: special values, every
 * 7th float of [1/4, 1), every float within 4096 of the fast path's ends
 * (1e-20, 1e5), neighbours of every power of two and of ten, every half-precision
 * value (the synthetic stores' probabilities), random bit patterns and
 * short decimals, each also negated. */
START_TEST(test_format_float_exact)
{
  const float special[] = {0.0f, INFINITY, NAN, FLT_MIN, FLT_MAX, 1e-20f, 1e5f, 0.1f, 0.5f, 1.0f,
                           0.33333334f, 0.099975586f, 16777216.0f, 99999.99f, 1e-5f, 0x1p-149f};
  for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
    for (int sg = 0; sg < 2; sg++) check_format_float(sg ? -special[i] : special[i], "special");
  const uint32_t from[3] = {0x3e800000u, 0x1e3ce508u - 4096, 0x47c35000u - 4096};
  const uint32_t to[3] = {0x3f800000u, 0x1e3ce508u + 4096, 0x47c35000u + 4096};
  for (int b = 0; b < 3; b++)
    for (uint32_t bits = from[b]; bits < to[b]; bits += b == 0 ? 7 : 1) {
      float x;
      memcpy(&x, &bits, sizeof x);
      check_format_float(x, "binade");
    }
  for (int e = -149; e <= 127; e++) {
    const float x = ldexpf(1.0f, e);
    check_format_float(x, "power of two");
    check_format_float(nextafterf(x, 0), "below a power of two");
    check_format_float(nextafterf(x, INFINITY), "above a power of two");
  }
  for (int e = -38; e <= 38; e++) {
    float y = powf(10.0f, (float)e);
    for (int k = 0; k < 4; k++, y = nextafterf(y, 0)) check_format_float(y, "below a power of ten");
  }
  for (uint32_t h = 0; h < 0x7c00u; h++) { /* every finite half-precision value, as a float */
    const int e = (int)(h >> 10), f = (int)(h & 0x3ffu);
    const float x = e ? ldexpf((float)(1024 + f), e - 25) : ldexpf((float)f, -24);
    check_format_float(x, "half precision");
    check_format_float(-x, "half precision");
  }
  struct pb_rng r;
  pb_rng_init(&r, test_seed(), 8, 0, 0);
  for (int i = 0; i < 300000; i++) {
    uint32_t bits = pb_rng_u32(&r);
    float x;
    memcpy(&x, &bits, sizeof x);
    check_format_float(x, "bit pattern");
    bits = (bits & 0x807fffffu) | (uint32_t)(60 + pb_rng_below(&r, 90)) << 23; /* about the fast range */
    memcpy(&x, &bits, sizeof x);
    check_format_float(x, "bit pattern, fast range");
    char txt[32];
    const int d = 1 + (int)pb_rng_below(&r, 9), e = -4 - d - (int)pb_rng_below(&r, 20);
    snprintf(txt, sizeof txt, "%ue%d", (unsigned)(pb_rng_u32(&r) % (uint32_t)pow(10.0, d)), e);
    check_format_float(strtof(txt, NULL), "short decimal");
  }
}
END_TEST

/* pb_text_int and pb_text_num append what "\t%lld" and "\t" + pb_text_format_double
 * give, after text already in the buffer. */
START_TEST(test_text_int_num)
{
  struct pb_rng r;
  pb_rng_init(&r, test_seed(), 7, 0, 0);
  struct pb_text t = {0};
  char want[64];
  size_t at = 0;
  const long long fixed[] = {0, 1, -1, 9, 10, -10, 999, 1000, LLONG_MAX, LLONG_MIN, LLONG_MIN + 1};
  for (int i = 0; i < 200000; i++) {
    long long v = (long long)(rng_u64(&r) >> (1 + pb_rng_below(&r, 63))); /* 0 .. LLONG_MAX */
    if (pb_rng_below(&r, 2)) v = -v;
    if (i < (int)(sizeof fixed / sizeof fixed[0])) v = fixed[i];
    pb_text_int(&t, v);
    snprintf(want, sizeof want, "\t%lld", v);
    ck_assert_msg(t.len == at + strlen(want) && strcmp(t.buf + at, want) == 0, "%lld: '%s' (seed %llu)", v,
                  t.buf + at, (unsigned long long)test_seed());
    at = t.len;
    const double x = (double)(int32_t)pb_rng_below(&r, 1000) / (1 + pb_rng_below(&r, 999));
    pb_text_num(&t, x);
    want[0] = '\t';
    pb_text_format_double(x, want + 1);
    ck_assert_str_eq(t.buf + at, want);
    at = t.len;
  }
  pb_text_free(&t);
}
END_TEST

/* ---------------------------------------------------------------- SHA-256 */

START_TEST(test_sha256)
{
  char hex[65];
  /* FIPS 180-2 Appendix B test vectors */
  pb_checksum_sha256_hex("abc", 3, hex);
  ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  pb_checksum_sha256_hex("", 0, hex);
  ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  pb_checksum_sha256_hex(two, strlen(two), hex);
  ck_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  /* one million 'a' */
  char *million = malloc(1000000);
  memset(million, 'a', 1000000);
  pb_checksum_sha256_hex(million, 1000000, hex);
  ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  free(million);
  /* the key is the digest's first 8 bytes, big-endian */
  ck_assert(pb_checksum_sha256_key("abc") == 0xba7816bf8f01cfeaull);
  ck_assert(pb_checksum_sha256_key("") == 0xe3b0c44298fc1c14ull);
}
END_TEST

/* ----------------------------------------------------------------- strmap */

START_TEST(test_strmap)
{
  struct pb_strmap m;
  pb_strmap_init(&m);
  ck_assert_int_eq(pb_strmap_get(&m, "absent"), -1);
  const int n = 5000;
  char key[32];
  for (int i = 0; i < n; i++) {
    snprintf(key, sizeof key, "key-%d", i * 7919 % 100003);
    ck_assert_int_eq(pb_strmap_put(&m, key, i), i);
    /* every earlier key survives each growth */
    if ((i & (i - 1)) == 0)
      for (int j = 0; j <= i; j++) {
        snprintf(key, sizeof key, "key-%d", j * 7919 % 100003);
        ck_assert_int_eq(pb_strmap_get(&m, key), j);
      }
  }
  ck_assert_uint_eq(m.count, (size_t)n);
  for (int i = 0; i < n; i++) {
    snprintf(key, sizeof key, "key-%d", i * 7919 % 100003);
    ck_assert_int_eq(pb_strmap_get(&m, key), i);
    /* put of an existing key keeps the first value */
    ck_assert_int_eq(pb_strmap_put(&m, key, -5), i);
  }
  ck_assert_uint_eq(m.count, (size_t)n);
  ck_assert_int_eq(pb_strmap_get(&m, "key-100004"), -1);
  ck_assert_int_eq(pb_strmap_get(&m, ""), -1);
  ck_assert_int_eq(pb_strmap_put(&m, "", 77), 77);
  ck_assert_int_eq(pb_strmap_get(&m, ""), 77);
  pb_strmap_free(&m);
  pb_strmap_free(&m); /* freeing twice is harmless */
}
END_TEST

/* ----------------------------------------------------------- output files */

static char *slurp(const char *path)
{
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  char *buf = calloc(1, 4096);
  size_t n = fread(buf, 1, 4095, fp);
  buf[n] = '\0';
  fclose(fp);
  return buf;
}

/* pb_output_lines_each: every line with its number, a stop from the callback, the last line without a newline,
 * and open and directory errors that name the file, what it was for and the system's reason. */
struct lines_seen {
  int n, stop_at;
  char text[4][16];
  int64_t num[4];
};

static int lines_cb(void *ctx, const char *path, int64_t line, char *text)
{
  struct lines_seen *s = ctx;
  (void)path;
  if (line == s->stop_at) {
    pb_error_set("stopped at %lld", (long long)line);
    return PB_FAIL;
  }
  snprintf(s->text[s->n], sizeof s->text[0], "%s", text);
  s->num[s->n++] = line;
  return PB_OK;
}

START_TEST(test_lines_each)
{
  char path[512];
  snprintf(path, sizeof path, "%s", pb_test_path("lines.txt"));
  FILE *fp = fopen(path, "w");
  fputs("a\n\nthird", fp);
  fclose(fp);
  struct lines_seen s = {0};
  ck_assert_int_eq(pb_output_lines_each(path, NULL, lines_cb, &s), PB_OK);
  ck_assert_int_eq(s.n, 3);
  ck_assert_str_eq(s.text[0], "a\n");
  ck_assert_str_eq(s.text[1], "\n");
  ck_assert_str_eq(s.text[2], "third");
  ck_assert(s.num[0] == 1 && s.num[1] == 2 && s.num[2] == 3);

  struct lines_seen t = {.stop_at = 2};
  ck_assert_int_eq(pb_output_lines_each(path, NULL, lines_cb, &t), PB_FAIL);
  ck_assert_int_eq(t.n, 1);
  ck_assert_str_eq(pb_error_message(), "stopped at 2");

  char missing[600];
  snprintf(missing, sizeof missing, "%s.none", path);
  ck_assert_int_eq(pb_output_lines_each(missing, "CASES file", lines_cb, &s), PB_FAIL);
  char want[700];
  snprintf(want, sizeof want, "%s: cannot open as the CASES file: %s", missing, strerror(ENOENT));
  ck_assert_str_eq(pb_error_message(), want);

  /* a directory opens but cannot be read: a read error, not an empty file */
  char dir[600];
  snprintf(dir, sizeof dir, "%s", pb_test_path("linesdir"));
  ck_assert(mkdir(dir, 0700) == 0);
  struct lines_seen u = {0};
  ck_assert_int_eq(pb_output_lines_each(dir, NULL, lines_cb, &u), PB_FAIL);
  ck_assert_int_eq(u.n, 0);
  snprintf(want, sizeof want, "%s: read error after line 0: %s", dir, strerror(EISDIR));
  ck_assert_str_eq(pb_error_message(), want);
}
END_TEST

static int kth_desc(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x < y) - (x > y);
}

/* pb_sort_kth_largest (both widths) against a full descending sort, with many ties and every k */
START_TEST(test_kth_largest)
{
  uint64_t x = 88172645463325252ull;
  for (int rep = 0; rep < 200; rep++) {
    int32_t n = 1 + rep % 37;
    double v[37], sorted[37], w[37];
    float f[37];
    for (int32_t i = 0; i < n; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      v[i] = (double)(x % 6) / 4.0; /* six levels: ties everywhere */
    }
    memcpy(sorted, v, sizeof sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, kth_desc);
    for (int32_t k = 1; k <= n; k++) {
      memcpy(w, v, sizeof w);
      for (int32_t i = 0; i < n; i++) f[i] = (float)v[i];
      ck_assert(pb_sort_kth_largest(w, n, k) == sorted[k - 1]);
      ck_assert(pb_sort_kth_largest_f32(f, n, k) == (float)sorted[k - 1]);
    }
  }
  /* long arrays (the radix path): both signs, both zeros, subnormals, infinities, ties, narrow and wide
   * ranges; every k of some, spot k of others */
  enum { NL = 5000 };
  static double lv[NL], ls[NL], lw[NL];
  static float lf[NL], lfs[NL];
  for (int rep = 0; rep < 24; rep++) {
    const int32_t n = 257 + rep * 197;
    for (int32_t i = 0; i < n; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      const double u = (double)(x >> 11) / 9007199254740992.0;
      switch (rep % 4) {
      case 0: lv[i] = (double)(x % 9) - 4.0; break;                    /* nine levels, -0 and +0 among them */
      case 1: lv[i] = 0.5 + u * 1e-9; break;                           /* a narrow range */
      case 2: lv[i] = (x % 2 ? -1 : 1) * ldexp(u, (int)(x % 200) - 100); break; /* a wide one */
      default: lv[i] = x % 50 == 0 ? (x % 3 ? INFINITY : -INFINITY) : x % 7 == 0 ? -0.0 : x % 11 == 0 ? 4.9e-324 : u - 0.5;
      }
      if (rep % 4 == 0 && lv[i] == 0 && x % 2) lv[i] = -0.0;
      lf[i] = (float)lv[i];
    }
    memcpy(ls, lv, (size_t)n * sizeof *ls);
    qsort(ls, (size_t)n, sizeof *ls, kth_desc);
    for (int32_t i = 0; i < n; i++) lfs[i] = (float)ls[i]; /* float rounding keeps the order */
    for (int32_t k = 1; k <= n; k += rep < 4 ? 1 : 37) {
      memcpy(lw, lv, (size_t)n * sizeof *lw);
      ck_assert(pb_sort_kth_largest(lw, n, k) == ls[k - 1]);
      float g[NL];
      memcpy(g, lf, (size_t)n * sizeof *g);
      ck_assert(pb_sort_kth_largest_f32(g, n, k) == lfs[k - 1]);
    }
  }
  /* a NaN among them: Hoare's selection, as before (no order holds a NaN, so the value is one of the
   * array's, and the other 299 are still there) */
  for (int32_t i = 0; i < 300; i++) lw[i] = i % 10;
  lw[17] = NAN;
  const double r = pb_sort_kth_largest(lw, 300, 100);
  ck_assert(isnan(r) || (r >= 0 && r <= 9 && r == floor(r)));
  int nans = 0, sum = 0;
  for (int32_t i = 0; i < 300; i++) {
    if (isnan(lw[i])) nans++;
    else sum += (int)lw[i];
  }
  ck_assert_int_eq(nans, 1);
  ck_assert_int_eq(sum, 30 * 45 - 7); /* the NaN replaced one 7 */
}
END_TEST

START_TEST(test_outfile)
{
  char path[512];
  snprintf(path, sizeof path, "%s", pb_test_path("out.tsv"));
  struct pb_outfile f;
  ck_assert(pb_output_file_open(&f, path) == PB_OK);
  ck_assert(pb_test_exists(f.tmp) && pb_test_temps(path) == 1); /* PATH.tmp.XXXXXX */
  ck_assert(strncmp(f.tmp, path, strlen(path)) == 0);            /* beside the target */
  ck_assert(!pb_test_exists(path)); /* nothing under the final name while writing */
  fprintf(f.fp, "a\tb\n1\t2\n");
  ck_assert(pb_output_file_commit(&f) == PB_OK);
  ck_assert(pb_test_exists(path));
  ck_assert(pb_test_temps(path) == 0);
  char *text = slurp(path);
  ck_assert_str_eq(text, "a\tb\n1\t2\n");
  free(text);

  /* a second write replaces the file atomically; an aborted one leaves the old */
  ck_assert(pb_output_file_open(&f, path) == PB_OK);
  fprintf(f.fp, "new\n");
  ck_assert(pb_output_file_commit(&f) == PB_OK);
  text = slurp(path);
  ck_assert_str_eq(text, "new\n");
  free(text);
  ck_assert(pb_output_file_open(&f, path) == PB_OK);
  fprintf(f.fp, "partial");
  pb_output_file_abort(&f);
  ck_assert(pb_test_temps(path) == 0);
  text = slurp(path);
  ck_assert_str_eq(text, "new\n");
  free(text);

  /* abort of a new file leaves nothing at all */
  char path2[512];
  snprintf(path2, sizeof path2, "%s", pb_test_path("aborted.tsv"));
  ck_assert(pb_output_file_open(&f, path2) == PB_OK);
  fprintf(f.fp, "x\n");
  pb_output_file_abort(&f);
  ck_assert(!pb_test_exists(path2) && pb_test_temps(path2) == 0);

  /* a file in a missing directory cannot be opened, with the reason */
  char path3[512];
  snprintf(path3, sizeof path3, "%s", pb_test_path("no/such/dir/x.tsv"));
  pb_error_clear();
  ck_assert(pb_output_file_open(&f, path3) == PB_FAIL);
  char want[700];
  snprintf(want, sizeof want, "%s: cannot create file: No such file or directory", path3);
  ck_assert_str_eq(pb_error_message(), want);
}
END_TEST

START_TEST(test_mkdir_join)
{
  char *dir = pb_output_path_join(pb_test_dir(), "a/b/c");
  ck_assert(pb_output_mkdir_p(dir) == PB_OK);
  ck_assert(pb_output_mkdir_p(dir) == PB_OK); /* existing is fine */
  struct stat sb;
  ck_assert(stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode));
  char *f = pb_output_path_join(dir, "x.txt");
  char want[600];
  snprintf(want, sizeof want, "%s/a/b/c/x.txt", pb_test_dir());
  ck_assert_str_eq(f, want);
  free(f);
  free(dir);
}
END_TEST

static void put_file(const char *dir, const char *name, const char *text)
{
  char *p = pb_output_path_join(dir, name);
  FILE *fp = fopen(p, "w");
  ck_assert(fp != NULL);
  fputs(text, fp);
  fclose(fp);
  free(p);
}

static int file_is(const char *dir, const char *name, const char *text)
{
  char *p = pb_output_path_join(dir, name), buf[64] = "";
  FILE *fp = fopen(p, "r");
  free(p);
  if (!fp) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, fp);
  fclose(fp);
  buf[n] = '\0';
  return strcmp(buf, text) == 0;
}

/* A staged output replaces OUTDIR's report/ and results.h5 together; when
 * results.h5 cannot be renamed into place (a directory holds its name), the
 * report swap is undone and OUTDIR keeps the previous pair. */
START_TEST(test_staging_commit)
{
  char *out = pb_output_path_join(pb_test_dir(), "staged"), *rep = pb_output_path_join(out, "report"), *stg = NULL;
  ck_assert(pb_output_mkdir_p(rep) == PB_OK);
  put_file(rep, "a.tsv", "old\n");
  put_file(out, "results.h5", "old results\n");
  ck_assert(pb_output_staging_make(out, MPI_COMM_SELF, &stg) == PB_OK);
  ck_assert(strncmp(stg + strlen(out), "/" PB_OUTPUT_STAGING, strlen(PB_OUTPUT_STAGING) + 1) == 0);
  char *srep = pb_output_path_join(stg, "report");
  ck_assert(pb_test_exists(srep)); /* made empty, for the stage to fill */
  put_file(srep, "a.tsv", "new\n");
  put_file(srep, "b.tsv", "only new\n");
  put_file(stg, "results.h5", "new results\n");
  ck_assert(pb_output_staging_commit(stg, out) == PB_OK);
  ck_assert(file_is(rep, "a.tsv", "new\n") && file_is(rep, "b.tsv", "only new\n"));
  ck_assert(file_is(out, "results.h5", "new results\n"));
  ck_assert(file_is(srep, "a.tsv", "old\n")); /* the previous report/, exchanged into the staging dir */
  pb_output_remove_tree(stg);
  ck_assert(!pb_test_exists(stg));
  free(stg);
  free(srep);

  ck_assert(pb_output_staging_make(out, MPI_COMM_SELF, &stg) == PB_OK);
  srep = pb_output_path_join(stg, "report");
  put_file(srep, "a.tsv", "newer\n");
  put_file(stg, "results.h5", "newer results\n");
  char *res = pb_output_path_join(out, "results.h5");
  ck_assert(unlink(res) == 0 && pb_output_mkdir_p(res) == PB_OK);
  put_file(res, "keep", "x"); /* a non-empty directory: rename() cannot replace it */
  ck_assert(pb_output_staging_commit(stg, out) == PB_FAIL);
  ck_assert_msg(strstr(pb_error_message(), "is unchanged") != NULL, "%s", pb_error_message());
  ck_assert(file_is(rep, "a.tsv", "new\n") && file_is(rep, "b.tsv", "only new\n"));
  ck_assert(file_is(srep, "a.tsv", "newer\n") && file_is(stg, "results.h5", "newer results\n"));
  ck_assert(file_is(res, "keep", "x"));
  /* removal takes links, never what they point to */
  char *link = pb_output_path_join(srep, "link");
  ck_assert(symlink(res, link) == 0);
  pb_output_remove_tree(stg);
  ck_assert(!pb_test_exists(stg) && file_is(res, "keep", "x"));
  free(link);
  free(res);
  free(stg);
  free(srep);
  free(rep);
  free(out);
}
END_TEST

/* A rank ending every rank after a failed write removes the staging
 * directory around the file it wrote (rank 0 may be killed before it can);
 * a path outside any staging directory removes nothing. */
START_TEST(test_remove_staging_of)
{
  char *out = pb_output_path_join(pb_test_dir(), "abort"), *stg = NULL;
  ck_assert(pb_output_mkdir_p(out) == PB_OK);
  put_file(out, "results.h5", "old results\n");
  ck_assert(pb_output_staging_make(out, MPI_COMM_SELF, &stg) == PB_OK);
  char *srep = pb_output_path_join(stg, "report"), *res = pb_output_path_join(stg, "results.h5");
  put_file(srep, "a.tsv", "partial\n");
  pb_output_remove_staging_of(res); /* results.h5 itself already unlinked, as pb_h5_write_failed does */
  ck_assert(!pb_test_exists(stg));
  ck_assert(file_is(out, "results.h5", "old results\n")); /* the output around it is untouched */
  char *kept = pb_output_path_join(out, "results.h5");
  pb_output_remove_staging_of(kept); /* not inside a staging directory */
  pb_output_remove_staging_of("results.h5");
  ck_assert(file_is(out, "results.h5", "old results\n") && pb_test_exists(out));
  free(kept);
  free(res);
  free(srep);
  free(stg);
  free(out);
}
END_TEST

/* A message longer than the buffer keeps its reason: the long name loses its
 * middle to "…", keeping its start and end; short messages are untouched. */
START_TEST(test_error_long_name)
{
  size_t n = 3 * PB_ERROR_MAX;
  char *name = malloc(n + 1);
  for (size_t i = 0; i < n; i++) name[i] = (char)('a' + i % 26);
  memcpy(name, "/start/", 7);
  memcpy(name + n - 8, "/end.csv", 8);
  name[n] = '\0';
  pb_error_set("%s:12: column 'label': negative class -3", name);
  const char *m = pb_error_message();
  ck_assert_uint_eq(strlen(m), PB_ERROR_MAX - 1); /* the buffer is used to the last byte, no more */
  ck_assert_msg(strstr(m, "/end.csv:12: column 'label': negative class -3") != NULL, "reason lost: ...%s",
                m + strlen(m) - 80);
  ck_assert(strncmp(m, "/start/", 7) == 0);
  ck_assert(strstr(m, "\xe2\x80\xa6") != NULL);
  /* two long names: both shortened, the reason between and after them kept */
  pb_error_set("cannot rename %s to %s: No space left on device", name, name);
  m = pb_error_message();
  ck_assert(strlen(m) < PB_ERROR_MAX);
  ck_assert(strstr(m, "/end.csv to /start/") != NULL);
  ck_assert(strstr(m, "/end.csv: No space left on device") != NULL);
  pb_error_set("short: %s", "kept as is");
  ck_assert_str_eq(pb_error_message(), "short: kept as is");
  free(name);
}
END_TEST

/* The lowest failing item wins whatever the thread schedule: items failing
 * are i % 7 == 3 with i >= 200, so the first is 206 (206 = 29 * 7 + 3). */
START_TEST(test_first_error)
{
  for (int rep = 0; rep < 20; rep++) {
    struct pb_error_first fe;
    pb_error_first_init(&fe);
#pragma omp parallel for schedule(dynamic, 1) num_threads(4)
    for (int i = 0; i < 1000; i++) {
      if (i % 7 == 3 && i >= 200) {
        pb_error_set("item %d failed", i);
        pb_error_first_record(&fe, i);
      }
    }
    ck_assert(pb_error_first_any(&fe));
    pb_error_clear();
    ck_assert_int_eq(pb_error_first_status(&fe), PB_FAIL);
    ck_assert_str_eq(pb_error_message(), "item 206 failed");
    ck_assert_int_eq(fe.item, 206);
  }
  struct pb_error_first ok;
  pb_error_first_init(&ok);
  ck_assert(!pb_error_first_any(&ok));
  ck_assert_int_eq(pb_error_first_status(&ok), PB_OK);
}
END_TEST

/* A field table generates the TSV header and rows, the results.h5 columns
 * and their reader; /timings holds the timer's phases. */
START_TEST(test_fields_timer)
{
  static const struct pb_field f[3] = {{"a", PB_FMT_NUM}, {"tier", PB_FMT_TIER}, {"b", PB_FMT_NUM}};
  const struct pb_fields fs = pb_fields_static("/x/cells", 3, f);
  ck_assert_int_eq(pb_fields_find(&fs, "b"), 2);
  ck_assert_int_eq(pb_fields_find(&fs, "c"), -1);
  struct pb_text t = {0};
  pb_fields_tsv_header(&fs, "model", 0, &t);
  ck_assert_str_eq(t.buf, "model\ta\ttier\tb");
  pb_text_free(&t);
  pb_fields_tsv_header(&fs, "", 1, &t);
  ck_assert_str_eq(t.buf, "tier\tb");
  pb_text_free(&t);
  const double recs[6] = {0.5, 1, NAN, -2, 2, 0.1};
  pb_fields_tsv_values(&fs, recs, 0, &t);
  pb_fields_tsv_values(&fs, recs + 3, 0, &t);
  ck_assert_str_eq(t.buf, "\t0.5\tsevere\tnan\t-2\textreme\t0.1");
  pb_text_free(&t);
  struct pb_fields dyn;
  pb_fields_alloc(&dyn, "/y", 2);
  pb_fields_setf(&dyn, 0, PB_FMT_NUM, "m%d_H", 1);
  pb_fields_setf(&dyn, 1, PB_FMT_NUM, "m%d_L", 2);
  pb_fields_tsv_header(&dyn, "", 0, &t);
  ck_assert_str_eq(t.buf, "m1_H\tm2_L");
  pb_text_free(&t);
  pb_fields_free(&dyn);

  char *out = pb_output_path_join(pb_test_dir(), "fields");
  struct pb_results *res;
  ck_assert_int_eq(pb_results_create(out, MPI_COMM_WORLD, "test", &res), PB_OK);
  ck_assert_int_eq(pb_fields_write(&fs, res, 2, 0, 2, recs), PB_OK);
  struct pb_timer tm;
  pb_timer_start(&tm, "test");
  pb_timer_add(&tm, "load", 1.5);
  pb_timer_add(&tm, "compute", 2.0);
  pb_timer_add(&tm, "load", 0.25);
  ck_assert(pb_timer_get(&tm, "load") == 1.75 && pb_timer_get(&tm, "none") == 0.0);
  pb_timer_reduce(&tm, MPI_COMM_WORLD);
  ck_assert_int_eq(pb_timer_write(&tm, res), PB_OK);
  ck_assert_int_eq(pb_results_commit(res), PB_OK);
  char *h5 = pb_output_path_join(out, "results.h5");
  double back[6], one[3];
  ck_assert_int_eq(pb_fields_read(&fs, h5, 2, 0, 2, back), PB_OK);
  for (int i = 0; i < 6; i++) ck_assert(back[i] == recs[i] || (isnan(back[i]) && isnan(recs[i])));
  ck_assert_int_eq(pb_fields_read(&fs, h5, 2, 1, 1, one), PB_OK);
  ck_assert(one[0] == -2 && one[1] == 2 && one[2] == 0.1);
  ck_assert_int_eq(pb_fields_read(&fs, h5, 3, 0, 2, back), PB_FAIL); /* another item count */
  ck_assert_msg(strstr(pb_error_message(), "/x/cells/a has 2 items but 3") != NULL, "%s", pb_error_message());
  static const struct pb_field g[1] = {{"missing", PB_FMT_NUM}};
  const struct pb_fields gs = pb_fields_static("/x/cells", 1, g);
  ck_assert_int_eq(pb_fields_read(&gs, h5, 2, 0, 2, back), PB_FAIL);
  ck_assert_msg(strstr(pb_error_message(), "no dataset /x/cells/missing") != NULL, "%s", pb_error_message());
  static const struct pb_field tl[2] = {{"load", PB_FMT_NUM}, {"compute", PB_FMT_NUM}};
  const struct pb_fields ts = pb_fields_static("/timings/test", 2, tl);
  ck_assert_int_eq(pb_fields_read(&ts, h5, 1, 0, 1, one), PB_OK);
  ck_assert(one[0] == 1.75 && one[1] == 2.0);
  free(h5);
  free(out);
}
END_TEST

/* pb_sort_small_*: against a quadratic reference (each value placed by
 * counting the values below it and the equal ones before it), at sizes across
 * the cutoff, the rank sort's 64, the runs of 8 and the stack buffer (1,024), with many ties; and
 * stability: 0.0 and -0.0 compare equal and keep their input order. */
START_TEST(test_sort_small)
{
  static const int32_t sizes[] = {0, 1, 7, 8, 9, 31, 32, 33, 50, 64, 100, 257, 1000, 1024, 1025, 3001};
  uint64_t st = 12345;
  /* every size twice: doubles, then doubles that are floats (the rank sort compares those as floats) */
  for (size_t t = 0; t < 2 * (sizeof sizes / sizeof *sizes); t++) {
    const int32_t n = sizes[t % (sizeof sizes / sizeof *sizes)];
    const int as_float = t >= sizeof sizes / sizeof *sizes;
    double *v = malloc((size_t)(n + 1) * sizeof *v), *ref = malloc((size_t)(n + 1) * sizeof *ref);
    int64_t *w = malloc((size_t)(n + 1) * sizeof *w), *wref = malloc((size_t)(n + 1) * sizeof *wref);
    for (int32_t i = 0; i < n; i++) {
      st = st * 6364136223846793005ull + 1442695040888963407ull;
      int32_t q = (int32_t)(st >> 33) % 97; /* ties */
      v[i] = q == 0 ? ((st >> 20) & 1 ? -0.0 : 0.0) : (double)q / 7.0 - 3.0;
      if (as_float) v[i] = (float)v[i];
      w[i] = (int64_t)(st >> 13) % 1000 - 500;
    }
    for (int32_t i = 0; i < n; i++) {
      int32_t r = 0, rw = 0;
      for (int32_t j = 0; j < n; j++) {
        r += v[j] < v[i] || (v[j] == v[i] && j < i);
        rw += w[j] < w[i] || (w[j] == w[i] && j < i);
      }
      ref[r] = v[i];
      wref[rw] = w[i];
    }
    /* 64: bounds' cutoff, ranks up to 64; every instruction-set version the machine has */
    for (int32_t k = 0; k < 9; k++) {
      const int32_t cutoff = 32 * (k % 3), isa = k / 3;
      pb_clones_isa_cap(isa);
      double *a = malloc((size_t)(n + 1) * sizeof *a);
      int64_t *b = malloc((size_t)(n + 1) * sizeof *b);
      memcpy(a, v, (size_t)n * sizeof *a);
      memcpy(b, w, (size_t)n * sizeof *b);
      pb_sort_small_double(a, n, cutoff);
      pb_sort_small_i64(b, n, cutoff);
      for (int32_t i = 0; i < n; i++) {
        ck_assert_msg(a[i] == ref[i] && signbit(a[i]) == signbit(ref[i]), "n %d cutoff %d isa %d: [%d] = %g, want %g",
                      n, cutoff, isa, i, a[i], ref[i]);
        ck_assert_msg(b[i] == wref[i], "n %d cutoff %d isa %d: [%d] = %lld, want %lld", n, cutoff, isa, i,
                      (long long)b[i], (long long)wref[i]);
      }
      free(a);
      free(b);
    }
    pb_clones_isa_cap(2);
    free(v), free(ref), free(w), free(wref);
  }
}
END_TEST

/* A SIGTERM to a forked child with the handler installed (hint "stopped"), after pb_signal_finished(3) or not:
 * its exit status and what it wrote to stderr. */
static int signal_child(int finished, char *err, size_t len)
{
  int fd[2];
  ck_assert_int_eq(pipe(fd), 0);
  const pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    dup2(fd[1], STDERR_FILENO);
    close(fd[0]);
    pb_signal_install("stopped", 0, MPI_COMM_SELF);
    if (finished) pb_signal_finished(3);
    raise(SIGTERM);
    _exit(99);
  }
  close(fd[1]);
  size_t n = 0;
  for (ssize_t r; n + 1 < len && (r = read(fd[0], err + n, len - 1 - n)) > 0;) n += (size_t)r;
  err[n] = 0;
  close(fd[0]);
  int st = 0;
  ck_assert_int_eq(waitpid(pid, &st, 0), pid);
  ck_assert(WIFEXITED(st));
  return WEXITSTATUS(st);
}

/* Under mpirun a rank that leaves with an error makes the launcher SIGTERM the ranks still on their way out: once
 * the command has ended they leave with their own status and say nothing (before, rank 0 said it was stopped). */
START_TEST(test_signal_after_finish)
{
  char err[256];
  ck_assert_int_eq(signal_child(0, err, sizeof err), 128 + SIGTERM);
  ck_assert_str_eq(err, "stopped (signal 15)\n");
  ck_assert_int_eq(signal_child(1, err, sizeof err), 3);
  ck_assert_str_eq(err, "");
}
END_TEST

/* pb_platform_keep_freed: a block larger than glibc's largest dynamic mmap
 * threshold (32 MiB) is a mapping of its own by default, which free hands
 * back to the kernel; once a stage keeps what it frees, it comes from the
 * heap and stays there after free (docs/run.md, "MPI start-up").  Not under
 * AddressSanitizer or valgrind, whose allocators replace glibc's. */
START_TEST(test_keep_freed)
{
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
  const char *pre = getenv("LD_PRELOAD");
  if (pre && strstr(pre, "vgpreload")) return;
  const size_t big = (size_t)64 << 20;
  ck_assert_int_eq(setenv("PB_MALLOC_KEEP", "0", 1), 0);
  pb_platform_keep_freed(); /* the opt-out: glibc's default stays */
  const size_t maps0 = mallinfo2().hblks;
  char *a = malloc(big);
  ck_assert_ptr_nonnull(a);
  ck_assert_uint_eq(mallinfo2().hblks, maps0 + 1);
  free(a);
  ck_assert_int_eq(unsetenv("PB_MALLOC_KEEP"), 0);
  pb_platform_keep_freed();
  a = malloc(big);
  ck_assert_ptr_nonnull(a);
  memset(a, 1, big);
  ck_assert_uint_eq(mallinfo2().hblks, maps0);
  free(a);
  ck_assert_uint_ge(mallinfo2().fordblks, big); /* kept, not trimmed */
#endif
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("util");
  TCase *tc = tcase_create("rng");
  tcase_add_test(tc, test_reference_philox_kat);
  tcase_add_test(tc, test_rng_kat_zero);
  tcase_add_test(tc, test_rng_kat_ones);
  tcase_add_test(tc, test_rng_streams);
  tcase_add_test(tc, test_rng_uniform);
  tcase_add_test(tc, test_rng_below);
  tcase_add_test(tc, test_rng_below_rule);
  tcase_add_test(tc, test_rng_ahead);
  tcase_add_test(tc, test_rng_shuffle_bulk);
  tcase_add_test(tc, test_rng_shuffle_segments);
  suite_add_tcase(s, tc);
  tc = tcase_create("numbers");
  tcase_add_test(tc, test_round_half_hand);
  tcase_add_test(tc, test_round_half_exhaustive);
  tcase_add_test(tc, test_round_half_away);
  tcase_add_test(tc, test_near_math);
  tcase_add_test(tc, test_keep_freed);
  tcase_add_test(tc, test_format_float_hand);
  tcase_add_test(tc, test_format_round_trip);
  tcase_add_test(tc, test_format_subnormal_shortest);
  tcase_add_test(tc, test_format_double_exact);
  tcase_add_test(tc, test_format_float_exact);
  tcase_add_test(tc, test_text_int_num);
  tcase_add_test(tc, test_sha256);
  tcase_add_test(tc, test_sort_small);
  suite_add_tcase(s, tc);
  tc = tcase_create("containers_files");
  tcase_add_test(tc, test_strmap);
  tcase_add_test(tc, test_outfile);
  tcase_add_test(tc, test_lines_each);
  tcase_add_test(tc, test_kth_largest);
  tcase_add_test(tc, test_mkdir_join);
  tcase_add_test(tc, test_staging_commit);
  tcase_add_test(tc, test_remove_staging_of);
  tcase_add_test(tc, test_error_long_name);
  suite_add_tcase(s, tc);
  tc = tcase_create("shape");
  tcase_add_test(tc, test_first_error);
  tcase_add_test(tc, test_fields_timer);
  tcase_add_test(tc, test_signal_after_finish);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(suite()); }
