/* Shared helpers: RNG streams, string maps, hashing, formatting, output files. */
#include "config.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nettle/sha2.h>
#include <Random123/philox.h>

#include "pairbound/error.h"
#include "pairbound/output.h"
#include "pairbound/util.h"

/* ------------------------------------------------------------------- RNG */

void pb_rng_init(struct pb_rng *r, uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate)
{
  r->key[0] = (uint32_t)seed;
  r->key[1] = (uint32_t)(seed >> 32) ^ (analysis * 0x9E3779B9u);
  r->ctr[0] = (uint32_t)item;
  r->ctr[1] = (uint32_t)(item >> 32);
  r->ctr[2] = replicate;
  r->ctr[3] = 0;
  r->left = 0;
}

/* The next draw; static inline so that the shuffle's loop does not call out per draw. */
static inline uint32_t pb_rng__next(struct pb_rng *r)
{
  if (r->left == 0) {
    philox4x32_ctr_t c = {{r->ctr[0], r->ctr[1], r->ctr[2], r->ctr[3]}};
    philox4x32_key_t k = {{r->key[0], r->key[1]}};
    philox4x32_ctr_t o = philox4x32(c, k);
    memcpy(r->out, o.v, sizeof r->out);
    r->ctr[3]++;
    r->left = 4;
  }
  return r->out[4 - r->left--];
}

uint32_t pb_rng_u32(struct pb_rng *r)
{
  return pb_rng__next(r);
}

double pb_rng_uniform(struct pb_rng *r)
{
  /* 53 random bits, shifted by half a step so 0 and 1 never occur */
  uint64_t hi = pb_rng_u32(r) >> 5, lo = pb_rng_u32(r) >> 6;
  return ((double)(hi * 67108864u + lo) + 0.5) / 9007199254740992.0;
}

double pb_rng_normal(struct pb_rng *r)
{
  double u = pb_rng_uniform(r), v = pb_rng_uniform(r);
  return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}



/* Philox4x32-10 blocks first, first + 1, .. (the draw counter ctr[3] wraps
 * alone, as in pb_rng__next) of stream r, nb <= PB_RNG__BATCH of them, into
 * out[i][b]: Random123's rounds written out on independent blocks, so that
 * the compiler computes 8 or 16 at once (test_util's bulk shuffle test checks
 * the draws against its own Philox stream). */
#define PB_RNG__BATCH 64
PB_CLONES static void pb_rng__blocks(const struct pb_rng *r, uint32_t first, int nb,
                                     uint32_t out[4][PB_RNG__BATCH])
{
  const uint32_t k0 = r->key[0], k1 = r->key[1], a0 = r->ctr[0], a1 = r->ctr[1], a2 = r->ctr[2];
#pragma omp simd
  for (int b = 0; b < nb; b++) {
    uint32_t c0 = a0, c1 = a1, c2 = a2, c3 = first + (uint32_t)b, x0 = k0, x1 = k1;
    for (int round = 0; round < 10; round++) {
      const uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
      c0 = (uint32_t)(p1 >> 32) ^ c1 ^ x0;
      c1 = (uint32_t)p1;
      c2 = (uint32_t)(p0 >> 32) ^ c3 ^ x1;
      c3 = (uint32_t)p0;
      x0 += 0x9E3779B9u;
      x1 += 0xBB67AE85u;
    }
    out[0][b] = c0, out[1][b] = c1, out[2][b] = c2, out[3][b] = c3;
  }
}

/* pb_rng_shuffle's draws: those left in r's block, then blocks computed a
 * batch at a time; pb_rng__batch_end leaves r as the same draws one by one
 * would have (the last block used, its unused draws left). */
struct pb_rng__batch {
  uint32_t out[4][PB_RNG__BATCH];
  uint32_t first; /* counter of out's first block */
  int have, used; /* draws in out, draws taken */
};

static inline uint32_t pb_rng__batch_next(struct pb_rng *r, struct pb_rng__batch *q, int64_t want)
{
  if (r->left > 0) return r->out[4 - r->left--];
  if (q->used == q->have) {
    /* about one draw per element: blocks for what is still wanted, a batch at most */
    int64_t nb = want / 4 + 2;
    q->first = r->ctr[3];
    q->have = 4 * (int)(nb < PB_RNG__BATCH ? nb : PB_RNG__BATCH);
    q->used = 0;
    pb_rng__blocks(r, q->first, q->have / 4, q->out);
    r->ctr[3] = q->first + (uint32_t)(q->have / 4);
  }
  const int d = q->used++;
  return q->out[d % 4][d / 4];
}

static void pb_rng__batch_end(struct pb_rng *r, const struct pb_rng__batch *q)
{
  if (q->used == q->have) return; /* every block used whole (or none computed): r is as it should be */
  const int b = (q->used - 1) / 4;  /* used > 0: a batch is computed when a draw is wanted */
  for (int i = 0; i < 4; i++) r->out[i] = q->out[i][b];
  r->left = 4 * (b + 1) - q->used;
  r->ctr[3] = q->first + (uint32_t)b + 1;
}

/* Uniform in [0, n), from r's draws one block at a time (q NULL) or from
 * batch q, about @p want draws still to come.  Lemire-style rejection keeps
 * the draw exactly uniform: a draw is rejected when its low word is below
 * 2^32 mod n, which is below n, so that remainder (a division) is needed
 * only for a low word below n */
static inline uint32_t pb_rng__below(struct pb_rng *r, struct pb_rng__batch *q, uint32_t n, int64_t want)
{
  uint64_t m = (uint64_t)(q ? pb_rng__batch_next(r, q, want) : pb_rng__next(r)) * n;
  if ((uint32_t)m < n) {
    const uint32_t limit = (uint32_t)(-n) % n;
    while ((uint32_t)m < limit) m = (uint64_t)(q ? pb_rng__batch_next(r, q, want) : pb_rng__next(r)) * n;
  }
  return (uint32_t)(m >> 32);
}

uint32_t pb_rng_below(struct pb_rng *r, uint32_t n)
{
  return pb_rng__below(r, NULL, n, 0);
}

void pb_rng_shuffle(struct pb_rng *r, int32_t *v, int32_t n)
{
  const int32_t beg[2] = {0, n > 0 ? n : 0};
  pb_rng_shuffle_segments(r, v, 1, beg);
}

void pb_rng_shuffle_segments(struct pb_rng *r, int32_t *v, int32_t n_seg, const int32_t *beg)
{
  /* the draws still to come, about: one per element but each segment's first */
  int64_t want = n_seg > 0 ? (int64_t)beg[n_seg] - beg[0] - n_seg : 0;
  /* under PB_RNG__BATCH draws the few blocks are computed one at a time; above,
   * a batch at a time across segments, so that many small classes (50 records
   * each in the paper's sources) get the vectorised blocks too */
  struct pb_rng__batch batch, *q = want < PB_RNG__BATCH ? NULL : &batch;
  batch.have = batch.used = 0;
  batch.first = 0;
  for (int32_t s = 0; s < n_seg; s++) {
    int32_t *w = v + beg[s];
    for (int32_t i = beg[s + 1] - beg[s] - 1; i > 0; i--, want--) {
      const int32_t j = (int32_t)pb_rng__below(r, q, (uint32_t)i + 1, want), t = w[i];
      w[i] = w[j];
      w[j] = t;
    }
  }
  if (q) pb_rng__batch_end(r, q);
}

/* --------------------------------------------------------------- strmap */

static uint64_t pb__fnv1a(const char *s)
{
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

void pb_strmap_init(struct pb_strmap *m)
{
  m->cap = 64;
  m->count = 0;
  m->keys = pb_calloc(m->cap, sizeof *m->keys);
  m->vals = pb_calloc(m->cap, sizeof *m->vals);
}

void pb_strmap_free(struct pb_strmap *m)
{
  if (!m->keys) return;
  for (size_t i = 0; i < m->cap; i++) free(m->keys[i]);
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

static size_t pb_strmap__slot(const struct pb_strmap *m, const char *key)
{
  size_t i = (size_t)pb__fnv1a(key) & (m->cap - 1);
  while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & (m->cap - 1);
  return i;
}

int32_t pb_strmap_get(const struct pb_strmap *m, const char *key)
{
  size_t i = pb_strmap__slot(m, key);
  return m->keys[i] ? m->vals[i] : -1;
}

int32_t pb_strmap_put(struct pb_strmap *m, const char *key, int32_t value)
{
  size_t i = pb_strmap__slot(m, key);
  if (m->keys[i]) return m->vals[i];
  if (2 * (m->count + 1) > m->cap) {
    struct pb_strmap big = {pb_calloc(2 * m->cap, sizeof(char *)), pb_calloc(2 * m->cap, sizeof(int32_t)),
                            2 * m->cap, m->count};
    for (size_t j = 0; j < m->cap; j++)
      if (m->keys[j]) {
        size_t k = pb_strmap__slot(&big, m->keys[j]);
        big.keys[k] = m->keys[j];
        big.vals[k] = m->vals[j];
      }
    free(m->keys);
    free(m->vals);
    *m = big;
    i = pb_strmap__slot(m, key);
  }
  m->keys[i] = pb_strdup(key);
  m->vals[i] = value;
  m->count++;
  return value;
}

/* ------------------------------------------------------------ int32 sets */

int pb_sort_cmp_i32(const void *a, const void *b)
{
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

#define PB_UTIL__CMP(name, type)                                                                                      \
  int name(const void *a, const void *b)                                                                               \
  {                                                                                                                    \
    type x = *(const type *)a, y = *(const type *)b;                                                                   \
    return (x > y) - (x < y);                                                                                          \
  }
PB_UTIL__CMP(pb_sort_cmp_i64, int64_t)
PB_UTIL__CMP(pb_sort_cmp_double, double)

/* One body for both element types: the sorts differ only in the type.
 * Insertion sort up to the cutoff; above it a bottom-up merge sort with the
 * comparison inlined (qsort's callback cost more than the sort itself at the
 * class sizes of real test sets: 50 ImageNet images, 1,000 CIFAR ones), over
 * insertion-sorted runs of 8, through a stack buffer up to 1,024 elements.
 * Both are stable, like glibc's qsort (a merge sort), so values that compare
 * equal (0.0 and -0.0) keep their order and every sum over the result is the
 * same as before. */
#define PB_UTIL__SORT_STACK 1024
/* Up to PB_UTIL__RANK_MAX entries the sort places each value at its rank,
 * the values below it plus the equal ones before it: the stable order
 * (insertion sort's, ties and 0.0 / -0.0 included), found without a branch
 * on the data by comparing each value with W at a time.  Insertion sort
 * mispredicted its loop exit for nearly every element of the 20-60 element
 * classes of an ImageNet-shaped store, and took 16% of bounds there.  The
 * tail of the last W is padded with PAD, which is below no value (a pad
 * position is never before i).  One version per instruction set, chosen per
 * call: GCC 12 scalarises these vector comparisons in a target_clones clone,
 * but not under a target attribute. */
#define PB_UTIL__RANK_MAX 64
#if defined(__x86_64__)
/* name(v, n, pad): the values v of type T by keys of type K (the values
 * converted, exactly: the caller checks), W keys per vector, I the integer
 * of K's width (comparison masks). */
#define PB_UTIL__RANK_SORT(name, T, K, I, W, isa)                                                                      \
  __attribute__((target(isa))) static void name(T *v, int32_t n, K pad)                                               \
  {                                                                                                                    \
    typedef K vk __attribute__((vector_size(W * sizeof(K))));                                                          \
    typedef I vi_t __attribute__((vector_size(W * sizeof(I))));                                                        \
    K b[PB_UTIL__RANK_MAX + W];                                                                                        \
    T out[PB_UTIL__RANK_MAX];                                                                                          \
    const int32_t nc = (n + W - 1) / W;                                                                                \
    for (int32_t j = 0; j < n; j++) b[j] = (K)v[j];                                                                    \
    for (int32_t j = n; j < W * nc; j++) b[j] = pad;                                                                   \
    vi_t lane;                                                                                                         \
    for (int l = 0; l < W; l++) lane[l] = (I)l;                                                                        \
    for (int32_t i = 0; i < n; i++) {                                                                                  \
      const vk kv = (vk){0} + b[i];                                                                                    \
      const vi_t iv = (vi_t){0} + (I)i;                                                                                \
      vi_t cnt = {0}, jv = lane;                                                                                       \
      for (int32_t c = 0; c < nc; c++, jv += W) {                                                                      \
        vk bc;                                                                                                         \
        memcpy(&bc, b + W * c, sizeof bc);                                                                             \
        const vi_t before = jv < iv;                                                                                   \
        cnt += (before & (vi_t)(bc <= kv)) | (~before & (vi_t)(bc < kv));                                              \
      }                                                                                                                \
      int32_t r = 0;                                                                                                   \
      for (int l = 0; l < W; l++) r -= (int32_t)cnt[l];                                                                \
      out[r] = v[i];                                                                                                   \
    }                                                                                                                  \
    memcpy(v, out, (size_t)n * sizeof *v);                                                                             \
  }
PB_UTIL__RANK_SORT(pb_util__rank_double_v4, double, double, int64_t, 8, "arch=x86-64-v4")
PB_UTIL__RANK_SORT(pb_util__rank_double_v3, double, double, int64_t, 4, "arch=x86-64-v3")
/* doubles that are floats (bounds' margins are): twice the keys per vector */
PB_UTIL__RANK_SORT(pb_util__rank_float_v4, double, float, int32_t, 16, "arch=x86-64-v4")
PB_UTIL__RANK_SORT(pb_util__rank_float_v3, double, float, int32_t, 8, "arch=x86-64-v3")
PB_UTIL__RANK_SORT(pb_util__rank_i64_v4, int64_t, int64_t, int64_t, 8, "arch=x86-64-v4")
PB_UTIL__RANK_SORT(pb_util__rank_i64_v3, int64_t, int64_t, int64_t, 4, "arch=x86-64-v3")

static int pb_util__isa_cap = 2;

/* 2 where the processor runs x86-64-v4 code, 1 where x86-64-v3, else 0 (at
 * most the cap).  clang (the fuzz build) knows no level names in
 * __builtin_cpu_supports, so it asks for the features those versions use. */
static int pb_util__isa(void)
{
#if defined(__clang__)
  const int v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
                 __builtin_cpu_supports("bmi2");
  const int isa = v3 ? 1 + (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                            __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                            __builtin_cpu_supports("avx512cd"))
                     : 0;
#else
  const int isa = __builtin_cpu_supports("x86-64-v4") ? 2 : __builtin_cpu_supports("x86-64-v3") ? 1 : 0;
#endif
  return isa < pb_util__isa_cap ? isa : pb_util__isa_cap;
}

/* The rank sort where the processor has AVX2 at least; 0: use insertion sort. */
static int pb_util__rank_double(double *v, int32_t n)
{
  int nan = 0, wide = 0; /* a NaN equals nothing, so ranks would collide: such arrays keep insertion sort */
  for (int32_t i = 0; i < n; i++) {
    nan |= v[i] != v[i];
    wide |= (double)(float)v[i] != v[i];
  }
  const int isa = pb_util__isa(), v4 = isa == 2;
  if (nan || !isa) return 0;
  if (!wide) (v4 ? pb_util__rank_float_v4 : pb_util__rank_float_v3)(v, n, INFINITY);
  else (v4 ? pb_util__rank_double_v4 : pb_util__rank_double_v3)(v, n, INFINITY);
  return 1;
}
static int pb_util__rank_i64(int64_t *v, int32_t n)
{
  const int isa = pb_util__isa();
  if (isa == 2) pb_util__rank_i64_v4(v, n, INT64_MAX);
  else if (isa == 1) pb_util__rank_i64_v3(v, n, INT64_MAX);
  return isa > 0;
}
#else
/* elsewhere insertion sort serves every small array */
static int pb_util__rank_double(double *v, int32_t n) { return (void)v, (void)n, 0; }
static int pb_util__rank_i64(int64_t *v, int32_t n) { return (void)v, (void)n, 0; }
#endif

#define PB_UTIL__SORT_SMALL(name, type, rankable)                                                                      \
  static void name##__insertion(type *v, int32_t n)                                                                   \
  {                                                                                                                    \
    for (int32_t i = 1; i < n; i++) {                                                                                  \
      type t = v[i];                                                                                                   \
      int32_t j = i;                                                                                                   \
      while (j > 0 && v[j - 1] > t) {                                                                                  \
        v[j] = v[j - 1];                                                                                               \
        j--;                                                                                                           \
      }                                                                                                                \
      v[j] = t;                                                                                                        \
    }                                                                                                                  \
  }                                                                                                                    \
  void name(type *v, int32_t n, int32_t cutoff)                                                                        \
  {                                                                                                                    \
    if (n <= cutoff) {                                                                                                 \
      if (n <= 8 || n > PB_UTIL__RANK_MAX || !rankable(v, n)) name##__insertion(v, n);                               \
      return;                                                                                                          \
    }                                                                                                                  \
    type stack[PB_UTIL__SORT_STACK];                                                                                   \
    type *tmp = n <= PB_UTIL__SORT_STACK ? stack : pb_malloc((size_t)n * sizeof *tmp), *src = v, *dst = tmp;        \
    for (int32_t lo = 0; lo < n; lo += 8) name##__insertion(v + lo, n - lo < 8 ? n - lo : 8);                        \
    for (int32_t w = 8; w < n; w *= 2) {                                                                               \
      for (int32_t lo = 0; lo < n; lo += 2 * w) {                                                                      \
        int32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, i = lo, j = mid, k = lo;          \
        while (i < mid && j < hi) dst[k++] = src[j] < src[i] ? src[j++] : src[i++];                                    \
        while (i < mid) dst[k++] = src[i++];                                                                           \
        while (j < hi) dst[k++] = src[j++];                                                                            \
      }                                                                                                                \
      type *t = src;                                                                                                   \
      src = dst;                                                                                                       \
      dst = t;                                                                                                         \
    }                                                                                                                  \
    if (src != v) memcpy(v, src, (size_t)n * sizeof *v);                                                               \
    if (tmp != stack) free(tmp);                                                                                       \
  }
void pb_sort_small_isa_cap(int cap)
{
#if defined(__x86_64__)
  pb_util__isa_cap = cap;
#else
  (void)cap;
#endif
}

PB_UTIL__SORT_SMALL(pb_sort_small_double, double, pb_util__rank_double)
PB_UTIL__SORT_SMALL(pb_sort_small_i64, int64_t, pb_util__rank_i64)

int32_t pb_sort_unique_i32(int32_t *v, int32_t n)
{
  qsort(v, (size_t)n, sizeof *v, pb_sort_cmp_i32);
  int32_t u = 0;
  for (int32_t j = 0; j < n; j++)
    if (u == 0 || v[j] != v[u - 1]) v[u++] = v[j];
  return u;
}

int32_t pb_sort_find_i32(const int32_t *v, int32_t n, int32_t x)
{
  int32_t lo = 0, hi = n - 1;
  while (lo <= hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (v[mid] == x) return mid;
    if (v[mid] < x) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* --------------------------------------------------------------- SHA-256 */

static void pb__sha256(const void *data, size_t n, uint8_t digest[SHA256_DIGEST_SIZE])
{
  struct sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, n, data);
  sha256_digest(&ctx, SHA256_DIGEST_SIZE, digest);
}

uint64_t pb_checksum_sha256_key(const char *text)
{
  uint8_t d[SHA256_DIGEST_SIZE];
  pb__sha256(text, strlen(text), d);
  uint64_t k = 0;
  for (int i = 0; i < 8; i++) k = (k << 8) | d[i];
  return k;
}

void pb_checksum_sha256_hex(const void *data, size_t n, char hex[65])
{
  uint8_t d[SHA256_DIGEST_SIZE];
  pb__sha256(data, n, d);
  for (int i = 0; i < SHA256_DIGEST_SIZE; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

/* ---------------------------------------------------------------- numbers */

void pb_text_format_float(float x, char buf[32])
{
  if (isnan(x)) { strcpy(buf, "nan"); return; }
  /* Any two distinct 6-digit decimals are distinct floats (FLT_DIG), so when
   * %.6g (which drops trailing zeros) reads back exactly it is the shortest. */
  for (int p = fabsf(x) < FLT_MIN && x != 0 ? 1 : 6; p <= 9; p++) { /* subnormals have fewer digits */
    snprintf(buf, 32, "%.*g", p, (double)x);
    if (strtof(buf, NULL) == x) return;
  }
}

/* Decimal digits of v into b (no terminator); returns their count. */
static int pb_util__digits(uint64_t v, char *b)
{
  char t[20];
  int n = 0;
  do t[n++] = (char)('0' + v % 10); while (v /= 10);
  for (int i = 0; i < n; i++) b[i] = t[n - 1 - i];
  return n;
}

typedef unsigned __int128 pb_util__u128;

/* 10^q for 0 <= q <= 38 (exact). */
static pb_util__u128 pb_util__pow10(int q)
{
  static const uint64_t t[20] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
                                 100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
                                 10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
                                 100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull};
  return q < 20 ? (pb_util__u128)t[q] : (pb_util__u128)t[19] * t[q - 19];
}

/* Sign of d * 2^t - w (exact: w's quotient and remainder by 2^t). */
static int pb_util__cmp_shifted(uint64_t d, int t, pb_util__u128 w)
{
  const pb_util__u128 wq = w >> t, wr = w - (wq << t);
  if (d != wq) return d < wq ? -1 : 1;
  return wr ? -1 : 0;
}

/* |x| = m 2^-s >= 10^e, exactly (m < 2^53, 0 < s <= 73, -8 <= e <= 16). */
static int pb_util__ge_pow10(uint64_t m, int s, int e)
{
  if (e >= 0) return (pb_util__u128)m >= pb_util__pow10(e) << s;
  return (pb_util__u128)m * pb_util__pow10(-e) >= (pb_util__u128)1 << s;
}

/* %.{p}g of the decimal D 10^(X - p + 1) (10^(p-1) <= D < 10^p): trailing
 * zeros dropped, style e when X < -4 or X >= p, exponent of two digits at least. */
static void pb_util__g_text(int neg, uint64_t D, int p, int X, char *buf)
{
  char dg[20];
  pb_util__digits(D, dg);
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
    o += pb_util__digits((uint64_t)ax, o);
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
static int pb_util__format_fast(double x, char buf[40])
{
  const double ax = fabs(x);
  if (!(ax >= 1e-6 && ax < 1e15)) return 0;
  int bexp;
  const uint64_t m = (uint64_t)ldexp(frexp(ax, &bexp), 53);
  const int s = 53 - bexp;
  if (m == (uint64_t)1 << 52 || s < 1 || s > 72) return 0;
  int e10 = (int)floor(log10(ax)); /* made exact below */
  while (e10 > -7 && !pb_util__ge_pow10(m, s, e10)) e10--;
  while (e10 < 15 && pb_util__ge_pow10(m, s, e10 + 1)) e10++;
  for (int p = 15; p <= 17; p++) {
    int X = e10, q = p - 1 - X;
    if (q < 0 || q > 22) return 0;
    const pb_util__u128 N = (pb_util__u128)m * pb_util__pow10(q);
    pb_util__u128 D = N >> s;
    const pb_util__u128 rem = N - (D << s), half = (pb_util__u128)1 << (s - 1);
    if (rem > half || (rem == half && (D & 1))) D++;
    if (D == pb_util__pow10(p)) D = pb_util__pow10(p - 1), X++, q--; /* 9.99.. rounded up to 10 */
    if (q < 0) return 0;
    /* D 10^-q against the midpoints (2m -+ 1) 2^-(s+1) of x's neighbours, scaled by 10^q */
    const pb_util__u128 tq = pb_util__pow10(q);
    const int up = pb_util__cmp_shifted((uint64_t)D, s + 1, (2 * (pb_util__u128)m + 1) * tq);
    const int lo = pb_util__cmp_shifted((uint64_t)D, s + 1, (2 * (pb_util__u128)m - 1) * tq);
    const int even = (m & 1) == 0;
    if ((up < 0 || (up == 0 && even)) && (lo > 0 || (lo == 0 && even))) {
      pb_util__g_text(x < 0, (uint64_t)D, p, X, buf);
      return 1;
    }
  }
  return 0;
}

void pb_text_format_double(double x, char buf[40])
{
  if (isnan(x)) { strcpy(buf, "nan"); return; }
  if (x == floor(x) && fabs(x) < 9007199254740992.0) { /* counts print as integers; no "-0" */
    /* what "%.0f" prints: the exact integer */
    char *o = buf;
    if (x < 0) *o++ = '-';
    o += pb_util__digits((uint64_t)fabs(x), o);
    *o = '\0';
    return;
  }
  if (pb_util__format_fast(x, buf)) return;
  for (int p = fabs(x) < DBL_MIN ? 1 : 15; p <= 17; p++) { /* as for floats (DBL_DIG = 15) */
    snprintf(buf, 40, "%.*g", p, x);
    if (strtod(buf, NULL) == x) return;
  }
}

float pb_num_round_half(double x)
{
  if (!(x > 0)) return 0.0f;
  int e;
  frexp(x, &e);                 /* x = f * 2^e, f in [0.5, 1) */
  int q = e - 11;               /* half keeps 11 significant bits ... */
  if (q < -24) q = -24;         /* ... down to its smallest subnormal step */
  return (float)ldexp(nearbyint(ldexp(x, -q)), q);
}

/* One selection for both widths, of ascending position p = n - k.  Short
 * arrays (and any holding a NaN, which has no place in the order) by Hoare
 * selection; longer ones by radix selection on the order-preserving integer
 * image of each value (sign bit flipped, or every bit of a negative): the
 * range of the images is cut into at most 2^11 buckets, one pass counts
 * them, the elements of the bucket holding position p move to the front, and
 * the selection continues there, each round on a range 2^11 times narrower.
 * Three linear passes a round instead of Hoare's mispredicted comparisons.  -0 and +0 get neighbouring images: a refinement
 * of the order, so the value found compares equal to the exact answer. */
#define PB_KTH_LARGEST(NAME, T, U, TOP)                                                                          \
  static T NAME##__hoare(T *v, int32_t n, int32_t want)                                                         \
  {                                                                                                             \
    int32_t lo = 0, hi = n - 1;                                                                                 \
    while (lo < hi) {                                                                                           \
      const T pivot = v[lo + (hi - lo) / 2];                                                                    \
      int32_t i = lo, j = hi;                                                                                   \
      while (i <= j) {                                                                                          \
        while (v[i] < pivot) i++;                                                                               \
        while (v[j] > pivot) j--;                                                                               \
        if (i <= j) {                                                                                           \
          const T t = v[i];                                                                                     \
          v[i++] = v[j];                                                                                        \
          v[j--] = t;                                                                                           \
        }                                                                                                       \
      }                                                                                                         \
      if (want <= j) hi = j;                                                                                    \
      else if (want >= i) lo = i;                                                                               \
      else break;                                                                                               \
    }                                                                                                           \
    return v[want];                                                                                             \
  }                                                                                                             \
  static inline U NAME##__key(T x)                                                                              \
  {                                                                                                             \
    U u;                                                                                                        \
    memcpy(&u, &x, sizeof u);                                                                                   \
    return u >> TOP ? ~u : u | (U)1 << TOP;                                                                     \
  }                                                                                                             \
  T NAME(T *v, int32_t n, int32_t k)                                                                            \
  {                                                                                                             \
    int32_t want = n - k;                                                                                       \
    while (n > 256) {                                                                                           \
      U lo = ~(U)0, hi = 0;                                                                                     \
      int nan = 0;                                                                                              \
      for (int32_t i = 0; i < n; i++) {                                                                         \
        const U u = NAME##__key(v[i]);                                                                          \
        nan |= v[i] != v[i];                                                                                    \
        lo = u < lo ? u : lo;                                                                                   \
        hi = u > hi ? u : hi;                                                                                   \
      }                                                                                                         \
      if (nan) break;                                                                                           \
      if (lo == hi) return v[0];                                                                                \
      int shift = 0;                                                                                            \
      while (((hi - lo) >> shift) >= 2048) shift++;                                                             \
      int32_t cnt[2048] = {0};                                                                                  \
      for (int32_t i = 0; i < n; i++) cnt[(NAME##__key(v[i]) - lo) >> shift]++;                                 \
      int32_t b = 0, below = 0;                                                                                 \
      while (below + cnt[b] <= want) below += cnt[b++];                                                         \
      int32_t m = 0;                                                                                            \
      for (int32_t i = 0; i < n; i++)                                                                           \
        if ((int32_t)((NAME##__key(v[i]) - lo) >> shift) == b) {                                                \
          const T t = v[m];                                                                                     \
          v[m++] = v[i];                                                                                        \
          v[i] = t;                                                                                             \
        }                                                                                                       \
      n = m;                                                                                                    \
      want -= below;                                                                                            \
    }                                                                                                           \
    return NAME##__hoare(v, n, want);                                                                           \
  }
PB_KTH_LARGEST(pb_sort_kth_largest, double, uint64_t, 63)
PB_KTH_LARGEST(pb_sort_kth_largest_f32, float, uint32_t, 31)
#undef PB_KTH_LARGEST

void pb_num_nanmean_add(struct pb_num_nanmean *m, double x)
{
  if (isnan(x)) return;
  m->sum += x;
  m->n++;
}

double pb_num_nanmean_get(const struct pb_num_nanmean *m) { return m->n ? m->sum / (double)m->n : NAN; }

/* ---------------------------------------------------------- text files */
int pb_output_lines_each(const char *path, const char *what, pb_output_line_fn fn, void *ctx)
{
  FILE *fp = fopen(path, "r");
  if (!fp) {
    pb_error_set("%s: cannot open%s%s: %s", path, what ? " as the " : "", what ? what : "", strerror(errno));
    return PB_FAIL;
  }
  char *buf = NULL;
  size_t cap = 0;
  int64_t line = 0;
  int status = PB_OK;
  errno = 0;
  while (status == PB_OK && getline(&buf, &cap, fp) > 0) status = fn(ctx, path, ++line, buf);
  if (status == PB_OK && ferror(fp)) {
    pb_error_set("%s: read error after line %lld: %s", path, (long long)line, strerror(errno ? errno : EIO));
    status = PB_FAIL;
  }
  free(buf);
  fclose(fp);
  return status;
}

/* ------------------------------------------------------------ output files */

char *pb_output_path_join(const char *dir, const char *name)
{
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = pb_malloc(n);
  snprintf(p, n, "%s/%s", dir, name);
  return p;
}

int pb_output_mkdir_p(const char *dir)
{
  char *p = pb_strdup(dir);
  int status = PB_OK;
  for (char *s = p + 1;; s++) {
    if (*s == '/' || *s == '\0') {
      char c = *s;
      *s = '\0';
      if (mkdir(p, 0777) != 0 && errno != EEXIST) {
        pb_error_set("%s: cannot create directory: %s", p, strerror(errno));
        status = PB_FAIL;
        break;
      }
      *s = c;
      if (c == '\0') break;
    }
  }
  free(p);
  return status;
}

int pb_output_file_open(struct pb_outfile *f, const char *path)
{
  /* a unique temporary: two writers of one path never share it */
  int fd = pb_output_temp(path, &f->tmp);
  if (fd < 0) return PB_FAIL;
  f->fp = fdopen(fd, "w");
  if (!f->fp) {
    pb_error_set("%s: cannot create file: %s", f->tmp, strerror(errno));
    close(fd);
    unlink(f->tmp);
    free(f->tmp);
    return PB_FAIL;
  }
  f->path = pb_strdup(path);
  return PB_OK;
}

int pb_output_file_commit(struct pb_outfile *f)
{
  int bad = ferror(f->fp);
  bad |= fclose(f->fp) != 0;
  if (!bad && rename(f->tmp, f->path) != 0) bad = 1;
  if (bad) {
    pb_error_set("%s: cannot write file: %s", f->path, strerror(errno));
    unlink(f->tmp);
  }
  free(f->path);
  free(f->tmp);
  return bad ? PB_FAIL : PB_OK;
}

void pb_output_file_abort(struct pb_outfile *f)
{
  fclose(f->fp);
  unlink(f->tmp);
  free(f->path);
  free(f->tmp);
}

char *pb_output_text_load(const char *path)
{
  FILE *fp = fopen(path, "r");
  if (!fp) {
    pb_error_set("%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, n = 0, got;
  char *text = pb_malloc(cap);
  while ((got = fread(text + n, 1, cap - n - 1, fp)) > 0) {
    n += got;
    if (n + 1 == cap) text = pb_realloc(text, cap *= 2);
  }
  text[n] = '\0';
  fclose(fp);
  return text;
}
