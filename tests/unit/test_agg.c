/* Partition-free aggregates (src/core/agg.c).  Exact sums and means are checked
 * against a reference built without limbs: a binary number of one byte per
 * bit, added and negated bit by bit, rounded by reading its bits, divided by
 * shift and subtract.  Then: every order and split of the terms gives the
 * same bits; locations equal a scan in cell order; selection equals sorting;
 * and, at 1-3 ranks (tests/mpi/unit_ranks.sh), the reductions over ranks
 * equal one rank holding everything.  The seed is PB_TEST_SEED. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "pairbound/agg.h"
#include "pairbound/resample.h"
#include "testlib.h"

/* ---- the bit-array reference: two's complement, bit j of weight 2^(j + REF_LSB) */
#define REF_LSB (-1100)
#define REF_BITS 1400

struct ref {
  uint8_t b[REF_BITS];
};

/* r += sign * m 2^e (m < 2^53), bit by bit with a carry (subtraction: adding the two's complement). */
static void ref_add(struct ref *r, uint64_t m, int e, int neg)
{
  uint8_t t[REF_BITS] = {0};
  for (int j = 0; j < 64; j++)
    if (m >> j & 1) t[j + e - REF_LSB] = 1;
  if (neg) {
    int carry = 1;
    for (int j = 0; j < REF_BITS; j++) {
      const int s = !t[j] + carry;
      t[j] = s & 1;
      carry = s >> 1;
    }
  }
  int carry = 0;
  for (int j = 0; j < REF_BITS; j++) {
    const int s = r->b[j] + t[j] + carry;
    r->b[j] = s & 1;
    carry = s >> 1;
  }
}

static void ref_add_double(struct ref *r, double x)
{
  int e;
  const double f = frexp(fabs(x), &e); /* |x| = f 2^e, f in [0.5, 1) */
  if (x == 0) return;
  ref_add(r, (uint64_t)ldexp(f, 53), e - 53, x < 0);
}

/* The reference's value, @p div > 0 dividing it (restoring division bit by
 * bit), rounded to the nearest double, ties to even. */
static double ref_value(const struct ref *r0, int64_t div)
{
  struct ref r = *r0;
  const int neg = r.b[REF_BITS - 1];
  if (neg) { /* magnitude: invert, add one */
    int carry = 1;
    for (int j = 0; j < REF_BITS; j++) {
      const int s = !r.b[j] + carry;
      r.b[j] = s & 1;
      carry = s >> 1;
    }
  }
  /* quotient bits, 80 extra below the window so that no bit of the double is lost */
  enum { X = 80 };
  static uint8_t q[REF_BITS + X];
  unsigned __int128 rem = 0;
  for (int j = REF_BITS + X - 1; j >= 0; j--) {
    rem = rem << 1 | (j >= X ? r.b[j - X] : 0);
    q[j] = rem >= (unsigned __int128)div;
    if (q[j]) rem -= (unsigned __int128)div;
  }
  int top = REF_BITS + X - 1;
  while (top >= 0 && !q[top]) top--;
  if (top < 0) return 0.0;
  uint64_t m = 0;
  for (int j = top; j > top - 53; j--) m = m << 1 | q[j];
  const int lowest = top - 52; /* weight of m's last bit */
  int above = 0, below = rem != 0;
  if (lowest >= 1) {
    const int half = q[lowest - 1];
    for (int j = lowest - 2; j >= 0; j--) below |= q[j];
    above = half && (below || (m & 1));
  }
  if (above) m++;
  const double x = ldexp((double)m, lowest + REF_LSB - X);
  return neg ? -x : x;
}

/* ---- random terms: exponents spread over the window, half of them negated
 * copies of earlier ones (cancellation), and runs of equal values */
static double random_term(double *prev, int n_prev)
{
  const int kind = rng_int(0, 9);
  if (kind < 3 && n_prev > 0) return -prev[rng_int(0, n_prev - 1)];
  const uint64_t m = (rng_next() >> 11) | 1ull << 52;
  const int e = kind < 6 ? rng_int(-200, 70) : rng_int(-20, 20);
  const double x = ldexp((double)m, e - 52);
  return rng_int(0, 1) ? -x : x;
}

static double *random_terms(int n)
{
  double *x = malloc((size_t)n * sizeof *x);
  for (int i = 0; i < n; i++) x[i] = random_term(x, i);
  return x;
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

START_TEST(test_sum_hand)
{
  struct pb_agg a;
  pb_agg_init(&a, 8);
  /* 2^100 + 1 - 2^100: a double sum in this order gives 0 */
  pb_agg_add(&a, 0, 0x1p100);
  pb_agg_add(&a, 0, 1.0);
  pb_agg_add(&a, 0, -0x1p100);
  ck_assert(pb_agg_sum(&a, 0) == 1.0 && pb_agg_count(&a, 0) == 3);
  ck_assert(pb_agg_mean(&a, 0) == 1.0 / 3.0);
  /* NaN is neither summed nor counted; an empty slot sums to 0 and has no mean */
  pb_agg_add(&a, 1, NAN);
  ck_assert(pb_agg_count(&a, 1) == 0 && pb_agg_sum(&a, 1) == 0.0 && isnan(pb_agg_mean(&a, 1)));
  /* integers: the mean is S / n, one IEEE division of exact operands */
  pb_agg_add(&a, 2, 1.0);
  pb_agg_add(&a, 2, 2.0);
  pb_agg_add(&a, 2, 2.0);
  ck_assert(pb_agg_mean(&a, 2) == 5.0 / 3.0);
  /* infinities, and terms at 2^128 or beyond, as pb_num_nanmean would treat an infinity */
  pb_agg_add(&a, 3, INFINITY);
  pb_agg_add(&a, 3, 1.0);
  ck_assert(pb_agg_sum(&a, 3) == INFINITY && pb_agg_mean(&a, 3) == INFINITY && pb_agg_count(&a, 3) == 2);
  pb_agg_add(&a, 3, -0x1p200);
  ck_assert(isnan(pb_agg_sum(&a, 3)) && isnan(pb_agg_mean(&a, 3)));
  /* the largest term in range, negative and positive: exact */
  pb_agg_add(&a, 4, -0x1.fffffffffffffp127);
  pb_agg_add(&a, 4, -0x1.fffffffffffffp127);
  ck_assert(pb_agg_sum(&a, 4) == -0x1.fffffffffffffp128);
  /* bits below 2^-256 are dropped from each term: 1.5 2^-256 counts as 2^-256, 2^-300 as 0 */
  pb_agg_add(&a, 5, 0x1.8p-256);
  pb_agg_add(&a, 5, 0x1p-300);
  pb_agg_add(&a, 5, -0x1p-300);
  ck_assert(pb_agg_sum(&a, 5) == 0x1p-256 && pb_agg_count(&a, 5) == 3);
  /* ties to even: 2^53 + 1 lies halfway between 2^53 and 2^53 + 2 */
  pb_agg_add(&a, 6, 0x1p53);
  pb_agg_add(&a, 6, 1.0);
  ck_assert(pb_agg_sum(&a, 6) == 0x1p53);
  pb_agg_add(&a, 6, 0x1p-100); /* now just above halfway: up */
  ck_assert(pb_agg_sum(&a, 6) == 0x1p53 + 2);
  /* zeros of either sign sum to +0, as pb_num_nanmean's running sum from +0 */
  pb_agg_add(&a, 7, -0.0);
  ck_assert(same_bits(pb_agg_sum(&a, 7), 0.0) && same_bits(pb_agg_mean(&a, 7), 0.0));
  pb_agg_free(&a);
}
END_TEST

START_TEST(test_sum_reference)
{
  rng_state = test_seed();
  for (int trial = 0; trial < 40; trial++) {
    const int n = trial < 20 ? rng_int(1, 12) : rng_int(100, 3000);
    double *x = random_terms(n);
    struct pb_agg a;
    pb_agg_init(&a, 1);
    static struct ref r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < n; i++) {
      pb_agg_add(&a, 0, x[i]);
      ref_add_double(&r, x[i]);
    }
    const double s = pb_agg_sum(&a, 0), m = pb_agg_mean(&a, 0);
    const double rs = ref_value(&r, 1), rm = ref_value(&r, n);
    ck_assert_msg(same_bits(s, rs), "trial %d: sum %a, reference %a", trial, s, rs);
    ck_assert_msg(same_bits(m, rm), "trial %d: mean %a, reference %a", trial, m, rm);
    pb_agg_free(&a);
    free(x);
  }
}
END_TEST

/* Integers: any int64, exact; their sums as the int128 sum rounded once. */
START_TEST(test_sum_int)
{
  rng_state = test_seed() + 1;
  struct pb_agg a;
  pb_agg_init(&a, 2);
  __int128 ref = 0;
  const int64_t ends[3] = {INT64_MIN, INT64_MAX, INT64_MAX};
  for (int i = 0; i < 3; i++) pb_agg_add_int(&a, 0, ends[i]), ref += ends[i];
  for (int i = 0; i < 1000; i++) {
    const int64_t k = (int64_t)rng_next();
    pb_agg_add_int(&a, 0, k);
    ref += k;
  }
  ck_assert(pb_agg_sum(&a, 0) == (double)ref);
  /* counts of integers below 2^53: exactly the double sum */
  int64_t tot = 0;
  for (int i = 0; i < 5000; i++) {
    const int k = rng_int(0, 1000);
    pb_agg_add_int(&a, 1, k);
    tot += k;
  }
  ck_assert(pb_agg_sum(&a, 1) == (double)tot && pb_agg_mean(&a, 1) == (double)tot / 5000.0);
  pb_agg_free(&a);
}
END_TEST

/* Any order and any split into parts merged or folded: the same bits.  Also
 * 2^24 equal terms of a full significand: the limbs carry and stay exact. */
START_TEST(test_sum_order)
{
  rng_state = test_seed() + 2;
  const int n = 5000;
  double *x = random_terms(n);
  struct pb_agg whole;
  pb_agg_init(&whole, 1);
  for (int i = 0; i < n; i++) pb_agg_add(&whole, 0, x[i]);
  const double s0 = pb_agg_sum(&whole, 0), m0 = pb_agg_mean(&whole, 0);
  for (int trial = 0; trial < 10; trial++) {
    for (int i = n - 1; i > 0; i--) { /* shuffle */
      const int j = rng_int(0, i);
      const double t = x[i];
      x[i] = x[j], x[j] = t;
    }
    const int parts = rng_int(1, 7);
    struct pb_agg p[7], tot, fold;
    for (int k = 0; k < parts; k++) pb_agg_init(&p[k], 1);
    for (int i = 0; i < n; i++) pb_agg_add(&p[rng_int(0, parts - 1)], 0, x[i]);
    pb_agg_init(&tot, 1);
    pb_agg_init(&fold, parts + 1);
    for (int k = 0; k < parts; k++) {
      pb_agg_merge(&tot, &p[k]);
      pb_agg_fold(&fold, parts, &p[k], 0);
    }
    ck_assert(same_bits(pb_agg_sum(&tot, 0), s0) && same_bits(pb_agg_mean(&tot, 0), m0));
    ck_assert(same_bits(pb_agg_sum(&fold, parts), s0) && pb_agg_count(&fold, parts) == n);
    for (int k = 0; k < parts; k++) pb_agg_free(&p[k]);
    pb_agg_free(&tot);
    pb_agg_free(&fold);
  }
  free(x);
  pb_agg_free(&whole);
  struct pb_agg a;
  pb_agg_init(&a, 1);
  const double big = 0x1.fffffffffffffp60;
  for (int i = 0; i < 1 << 24; i++) pb_agg_add(&a, 0, big);
  ck_assert(pb_agg_sum(&a, 0) == big * 0x1p24 && pb_agg_mean(&a, 0) == big);
  pb_agg_free(&a);
}
END_TEST

/* Locations: chunks scanned in cell order and merged equal one scan; ties to the first cell. */
START_TEST(test_loc)
{
  rng_state = test_seed() + 3;
  const int n = 400;
  double v[400];
  for (int i = 0; i < n; i++) v[i] = rng_int(0, 9) == 0 ? NAN : rng_int(-19, 19) * 0.5;
  v[7] = 10.0, v[300] = 10.0, v[9] = -10.0, v[250] = -10.0; /* ties of the extremes */
  struct pb_loc mx, mn;
  pb_agg_loc_init(&mx, 1, -1.0);
  pb_agg_loc_init(&mn, 1, INFINITY);
  for (int i = 0; i < n; i++) pb_agg_loc_max(&mx, v[i], i, 100 + i), pb_agg_loc_min(&mn, v[i], i, 100 + i);
  ck_assert(mx.v == 10.0 && mx.cell == 7 && mx.tag == 107);
  ck_assert(mn.v == -10.0 && mn.cell == 9 && mn.tag == 109);
  /* nothing above the start: no cell */
  struct pb_loc none;
  pb_agg_loc_init(&none, 1, 11.0);
  for (int i = 0; i < n; i++) pb_agg_loc_max(&none, v[i], i, 0);
  ck_assert(none.cell == -1 && none.v == 11.0);
}
END_TEST

/* This rank's share [*lo, *hi) of n items: uneven shares of weights 1, 2 at 2 ranks, 1, 0, 3, 4, ... at more
 * (rank 1 holds none). */
static void share(int64_t n, int64_t *lo, int64_t *hi)
{
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int64_t w = 0, before = 0;
  for (int r = 0; r < size; r++) {
    const int64_t wr = r == 1 && size > 2 ? 0 : r + 1;
    if (r < rank) before += wr;
    w += wr;
  }
  *lo = n * before / w;
  *hi = rank == size - 1 ? n : n * (before + (rank == 1 && size > 2 ? 0 : rank + 1)) / w;
}

/* Every rank's share of the same terms, reduced to the root and to all: the bits of one rank. */
START_TEST(test_reduce_ranks)
{
  rng_state = test_seed() + 4;
  const int n = 3000;
  double *x = random_terms(n);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  struct pb_agg whole, mine, all;
  pb_agg_init(&whole, 3);
  pb_agg_init(&mine, 3);
  pb_agg_init(&all, 3);
  int64_t lo, hi;
  share(n, &lo, &hi);
  struct pb_loc l[2], lall[2];
  pb_agg_loc_init(l, 2, -INFINITY);
  for (int i = 0; i < n; i++) {
    pb_agg_add(&whole, i % 3, x[i]);
    if (i >= lo && i < hi) {
      pb_agg_add(&mine, i % 3, x[i]);
      pb_agg_add(&all, i % 3, x[i]);
      pb_agg_loc_max(&l[0], x[i], i, -i);
      pb_agg_loc_max(&l[1], fabs(x[i]) > 1 ? 1.0 : 0.0, i, 0); /* many ties */
    }
  }
  memcpy(lall, l, sizeof l);
  ck_assert(pb_agg_reduce(&mine, MPI_COMM_WORLD, 0) == PB_OK);
  ck_assert(pb_agg_reduce(&all, MPI_COMM_WORLD, -1) == PB_OK);
  ck_assert(pb_agg_loc_reduce(l, 2, 1, MPI_COMM_WORLD, 0) == PB_OK);
  ck_assert(pb_agg_loc_reduce(lall, 2, 1, MPI_COMM_WORLD, -1) == PB_OK);
  struct pb_loc want[2];
  pb_agg_loc_init(want, 2, -INFINITY);
  for (int i = 0; i < n; i++) pb_agg_loc_max(&want[0], x[i], i, -i), pb_agg_loc_max(&want[1], fabs(x[i]) > 1, i, 0);
  for (int k = 0; k < 3; k++) {
    ck_assert(same_bits(pb_agg_sum(&all, k), pb_agg_sum(&whole, k)));
    ck_assert(same_bits(pb_agg_mean(&all, k), pb_agg_mean(&whole, k)));
    if (rank == 0) ck_assert(same_bits(pb_agg_sum(&mine, k), pb_agg_sum(&whole, k)));
  }
  for (int j = 0; j < 2; j++) {
    ck_assert(lall[j].cell == want[j].cell && lall[j].tag == want[j].tag && lall[j].v == want[j].v);
    if (rank == 0) ck_assert(l[j].cell == want[j].cell && l[j].v == want[j].v);
  }
  pb_agg_free(&whole), pb_agg_free(&mine), pb_agg_free(&all);
  free(x);
}
END_TEST

static int cmp_double(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Selection over the ranks' shares equals sorting all values (NaN left out),
 * and the quantiles equal pb_resample_percentile_sorted on the sorted values. */
START_TEST(test_select)
{
  rng_state = test_seed() + 5;
  for (int trial = 0; trial < 6; trial++) {
    const int n = trial == 0 ? 1 : trial == 1 ? 2 : rng_int(3, 600);
    double *v = malloc((size_t)n * sizeof *v), *s = malloc((size_t)n * sizeof *s);
    int m = 0;
    for (int i = 0; i < n; i++) {
      const int kind = rng_int(0, 9);
      v[i] = kind == 0 ? NAN : kind == 1 ? -INFINITY : kind < 5 ? rng_int(-3, 3) : ldexp(rng_int(-1000, 1000), rng_int(-60, 60));
      if (trial == 0) v[i] = 2.5;
      if (!isnan(v[i])) s[m++] = v[i];
    }
    qsort(s, (size_t)m, sizeof *s, cmp_double);
    int64_t lo, hi;
    share(n, &lo, &hi);
    ck_assert(pb_agg_select_count(v + lo, hi - lo, MPI_COMM_WORLD) == m);
    int64_t *k = malloc((size_t)(m > 0 ? m : 1) * sizeof *k);
    double *got = malloc((size_t)(m > 0 ? m : 1) * sizeof *got);
    for (int j = 0; j < m; j++) k[j] = m - 1 - j;
    pb_agg_select_kth(v + lo, hi - lo, k, m, MPI_COMM_WORLD, got);
    for (int j = 0; j < m; j++) ck_assert_msg(got[j] == s[m - 1 - j], "trial %d k %d", trial, m - 1 - j);
    const double qs[6] = {0, 0.1, 0.25, 0.5, 0.975, 1};
    for (int j = 0; j < 6; j++) {
      const double want = pb_resample_percentile_sorted(s, m, qs[j]), q = pb_agg_select_quantile(v + lo, hi - lo, qs[j], MPI_COMM_WORLD);
      ck_assert_msg(same_bits(q, want) || (isnan(q) && isnan(want)), "trial %d q %g: %a, want %a", trial, qs[j], q, want);
    }
    free(k), free(got), free(v), free(s);
  }
  /* out of range (one value, on rank 0) and nothing to select */
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const double one = 1.0;
  const int64_t bad = 1;
  double got;
  pb_agg_select_kth(&one, rank == 0, &bad, 1, MPI_COMM_WORLD, &got);
  ck_assert(isnan(got));
  ck_assert(isnan(pb_agg_select_quantile(NULL, 0, 0.5, MPI_COMM_WORLD)));
  /* -0.0 before +0.0 */
  const double z[2] = {0.0, -0.0};
  const int64_t k0 = 0;
  pb_agg_select_kth(z, rank == 0 ? 2 : 0, &k0, 1, MPI_COMM_WORLD, &got);
  ck_assert(same_bits(got, -0.0));
}
END_TEST

/* Fetch: the fields of an item from whichever rank holds it, to the root and to all. */
START_TEST(test_fetch)
{
  const int64_t n = 10;
  const int32_t len = 4;
  int64_t lo, hi;
  share(n, &lo, &hi);
  double recs[40];
  for (int64_t i = lo; i < hi; i++)
    for (int32_t f = 0; f < len; f++) recs[(i - lo) * len + f] = 10.0 * (double)i + f;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int64_t item = 0; item < n; item++) {
    const int32_t fields[2] = {3, 1};
    double out[4] = {-1, -1, -1, -1};
    ck_assert(pb_agg_fetch(MPI_COMM_WORLD, lo, hi - lo, item, recs, len, fields, 2, out, 0) == PB_OK);
    if (rank == 0) ck_assert(out[0] == 10.0 * (double)item + 3 && out[1] == 10.0 * (double)item + 1);
    ck_assert(pb_agg_fetch(MPI_COMM_WORLD, lo, hi - lo, item, recs, len, NULL, 0, out, -1) == PB_OK);
    for (int32_t f = 0; f < len; f++) ck_assert(out[f] == 10.0 * (double)item + f);
  }
  double out[4];
  ck_assert(pb_agg_fetch(MPI_COMM_WORLD, lo, hi - lo, n, recs, len, NULL, 0, out, -1) == PB_FAIL);
  ck_assert(isnan(out[0]));
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("agg");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_sum_hand);
  tcase_add_test(tc, test_sum_reference);
  tcase_add_test(tc, test_sum_int);
  tcase_add_test(tc, test_sum_order);
  tcase_add_test(tc, test_loc);
  tcase_add_test(tc, test_reduce_ranks);
  tcase_add_test(tc, test_select);
  tcase_add_test(tc, test_fetch);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(suite()); }
