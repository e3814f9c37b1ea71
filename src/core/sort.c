/* Numbers in order: comparators, sorted sets, small sorts and selection (include/pairbound/sort.h). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/clones.h"
#include "pairbound/error.h"
#include "pairbound/sort.h"

/* ------------------------------------------------------------ comparators */

int pb_sort_cmp_i32(const void *a, const void *b)
{
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

#define PB_SORT__CMP(name, type)                                                                                      \
  int name(const void *a, const void *b)                                                                               \
  {                                                                                                                    \
    type x = *(const type *)a, y = *(const type *)b;                                                                   \
    return (x > y) - (x < y);                                                                                          \
  }
PB_SORT__CMP(pb_sort_cmp_i64, int64_t)
PB_SORT__CMP(pb_sort_cmp_double, double)

/* One body for both element types: the sorts differ only in the type.
 * Insertion sort up to the cutoff; above it a bottom-up merge sort with the
 * comparison inlined (qsort's callback cost more than the sort itself at the
 * class sizes of real test sets: 50 ImageNet images, 1,000 CIFAR ones), over
 * insertion-sorted runs of 8, through a stack buffer up to 1,024 elements.
 * Both are stable, like glibc's qsort (a merge sort), so values that compare
 * equal (0.0 and -0.0) keep their order and every sum over the result is the
 * same as before. */
#define PB_SORT__SORT_STACK 1024
/* Up to PB_SORT__RANK_MAX entries the sort places each value at its rank,
 * the values below it plus the equal ones before it: the stable order
 * (insertion sort's, ties and 0.0 / -0.0 included), found without a branch
 * on the data by comparing each value with W at a time.  Insertion sort
 * mispredicted its loop exit for nearly every element of the 20-60 element
 * classes of an ImageNet-shaped store, and took 16% of bounds there.  The
 * tail of the last W is padded with PAD, which is below no value (a pad
 * position is never before i).  One version per instruction set, chosen per
 * call: GCC 12 scalarises these vector comparisons in a target_clones clone,
 * but not under a target attribute. */
#define PB_SORT__RANK_MAX 64
#if defined(__x86_64__)
/* name(v, n, pad): the values v of type T by keys of type K (the values
 * converted, exactly: the caller checks), W keys per vector, I the integer
 * of K's width (comparison masks). */
#define PB_SORT__RANK_SORT(name, T, K, I, W, isa)                                                                      \
  __attribute__((target(isa))) static void name(T *v, int32_t n, K pad)                                               \
  {                                                                                                                    \
    typedef K vk __attribute__((vector_size(W * sizeof(K))));                                                          \
    typedef I vi_t __attribute__((vector_size(W * sizeof(I))));                                                        \
    K b[PB_SORT__RANK_MAX + W];                                                                                        \
    T out[PB_SORT__RANK_MAX];                                                                                          \
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
PB_SORT__RANK_SORT(pb_sort__rank_double_v4, double, double, int64_t, 8, "arch=x86-64-v4")
PB_SORT__RANK_SORT(pb_sort__rank_double_v3, double, double, int64_t, 4, "arch=x86-64-v3")
/* doubles that are floats (bounds' margins are): twice the keys per vector */
PB_SORT__RANK_SORT(pb_sort__rank_float_v4, double, float, int32_t, 16, "arch=x86-64-v4")
PB_SORT__RANK_SORT(pb_sort__rank_float_v3, double, float, int32_t, 8, "arch=x86-64-v3")
PB_SORT__RANK_SORT(pb_sort__rank_i64_v4, int64_t, int64_t, int64_t, 8, "arch=x86-64-v4")
PB_SORT__RANK_SORT(pb_sort__rank_i64_v3, int64_t, int64_t, int64_t, 4, "arch=x86-64-v3")


/* The rank sort where the processor has AVX2 at least; 0: use insertion sort. */
static int pb_sort__rank_double(double *v, int32_t n)
{
  int nan = 0, wide = 0; /* a NaN equals nothing, so ranks would collide: such arrays keep insertion sort */
  for (int32_t i = 0; i < n; i++) {
    nan |= v[i] != v[i];
    wide |= (double)(float)v[i] != v[i];
  }
  const int isa = pb_clones_isa(), v4 = isa == 2;
  if (nan || !isa) return 0;
  if (!wide) (v4 ? pb_sort__rank_float_v4 : pb_sort__rank_float_v3)(v, n, INFINITY);
  else (v4 ? pb_sort__rank_double_v4 : pb_sort__rank_double_v3)(v, n, INFINITY);
  return 1;
}
static int pb_sort__rank_i64(int64_t *v, int32_t n)
{
  const int isa = pb_clones_isa();
  if (isa == 2) pb_sort__rank_i64_v4(v, n, INT64_MAX);
  else if (isa == 1) pb_sort__rank_i64_v3(v, n, INT64_MAX);
  return isa > 0;
}
#else
/* elsewhere insertion sort serves every small array */
static int pb_sort__rank_double(double *v, int32_t n) { return (void)v, (void)n, 0; }
static int pb_sort__rank_i64(int64_t *v, int32_t n) { return (void)v, (void)n, 0; }
#endif

#define PB_SORT__SORT_SMALL(name, type, rankable)                                                                      \
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
      if (n <= 8 || n > PB_SORT__RANK_MAX || !rankable(v, n)) name##__insertion(v, n);                               \
      return;                                                                                                          \
    }                                                                                                                  \
    type stack[PB_SORT__SORT_STACK];                                                                                   \
    type *tmp = n <= PB_SORT__SORT_STACK ? stack : pb_malloc((size_t)n * sizeof *tmp), *src = v, *dst = tmp;        \
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

PB_SORT__SORT_SMALL(pb_sort_small_double, double, pb_sort__rank_double)
PB_SORT__SORT_SMALL(pb_sort_small_i64, int64_t, pb_sort__rank_i64)

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

/* -------------------------------------------------------------- selection */

/* One selection for both widths, of ascending position p = n - k.  Short
 * arrays (and any holding a NaN, which has no place in the order) by Hoare
 * selection; longer ones by radix selection on the order-preserving integer
 * image of each value (sign bit flipped, or every bit of a negative): the
 * range of the images is cut into at most 2^11 buckets, one pass counts
 * them, the elements of the bucket holding position p move to the front, and
 * the selection continues there, each round on a range 2^11 times narrower.
 * Three linear passes a round instead of Hoare's mispredicted comparisons.  -0 and +0 get neighbouring images: a refinement
 * of the order, so the value found compares equal to the exact answer. */
#define PB_SORT__KTH_LARGEST(NAME, T, U, TOP)                                                                   \
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
PB_SORT__KTH_LARGEST(pb_sort_kth_largest, double, uint64_t, 63)
PB_SORT__KTH_LARGEST(pb_sort_kth_largest_f32, float, uint32_t, 31)
#undef PB_SORT__KTH_LARGEST
