/* Unit tests for the screening kernels (src/screen/screen_kernel.c).
 *
 * Expected values come from independent computations written here: a direct
 * O(n^2) pair count for the AUROC, enumeration of every tie order for the
 * prorated coverage, an independent Newton solve of the logistic objective on
 * the expanded (one row per image and condition) data, and hand-worked A3,
 * margin and entropy cases.  The seed is PB_TEST_SEED (default 20260908). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "pairbound/resample.h"
#include "pairbound/rng.h"
#include "pairbound/screen.h"
#include "testlib.h"

static struct pb_rng trng;

static void test_rng(uint32_t which) { pb_rng_init(&trng, test_seed(), 0x7e57u, which, 0); }
static int32_t rint_(int32_t lo, int32_t hi) { return lo + (int32_t)pb_rng_below(&trng, (uint32_t)(hi - lo + 1)); }

/* ------------------------------------------------------------ AUROC */

static double brute_auroc(const double *s, const uint8_t *y, int32_t n)
{
  double wins = 0;
  int64_t pos = 0, neg = 0;
  for (int32_t i = 0; i < n; i++) {
    if (isnan(s[i])) continue;
    if (y[i]) pos++;
    else neg++;
  }
  for (int32_t i = 0; i < n; i++)
    for (int32_t j = 0; j < n; j++) {
      if (isnan(s[i]) || isnan(s[j]) || !y[i] || y[j]) continue;
      wins += s[i] > s[j] ? 1.0 : s[i] == s[j] ? 0.5 : 0.0;
    }
  return pos && neg ? wins / ((double)pos * neg) : NAN;
}

START_TEST(test_auroc_pairs)
{
  test_rng(1);
  for (int rep = 0; rep < 400; rep++) {
    int32_t n = rint_(1, 60), levels = rint_(1, 6);
    double s[60];
    uint8_t y[60];
    for (int32_t i = 0; i < n; i++) {
      s[i] = rint_(0, levels - 1) * 0.25;     /* heavy ties */
      if (rint_(0, 9) == 0) s[i] = NAN;       /* undefined scores are skipped */
      y[i] = (uint8_t)(rint_(0, 2) == 0);
    }
    double a = pb_screen_auroc(s, y, n), b = brute_auroc(s, y, n);
    if (isnan(b)) ck_assert_msg(isnan(a), "rep %d: AUROC %g, expected undefined", rep, a);
    else ck_assert_msg(fabs(a - b) <= 1e-12, "rep %d (n %d): AUROC %.17g, pair count %.17g", rep, n, a, b);
  }
  /* hand case: failures {3, 1}, retained {1, 0}: pairs 1 + 1 + 0.5 + 1 = 3.5 of 4 */
  double s[] = {3, 1, 1, 0};
  uint8_t y[] = {1, 1, 0, 0};
  ck_assert_double_eq_tol(pb_screen_auroc(s, y, 4), 0.875, 1e-15);
  uint8_t all[] = {1, 1, 1, 1};
  ck_assert(isnan(pb_screen_auroc(s, all, 4)));
}
END_TEST

/* Seed E.1's Spearman (pb_screen_spearman), by hand: without ties 1 - 6 sum d^2 / (n (n^2 - 1)); with ties the
 * Pearson correlation of mean ranks. */
START_TEST(test_spearman_hand)
{
  const double a[] = {1, 2, 3, 4}, b[] = {10, 30, 20, 40}, c[] = {4, 3, 2, 1};
  ck_assert_double_eq_tol(pb_screen_spearman(a, b, 4), 0.8, 1e-15); /* d = 0, -1, 1, 0: 1 - 12 / 60 */
  ck_assert_double_eq_tol(pb_screen_spearman(a, c, 4), -1.0, 1e-15);
  /* ranks (1.5, 1.5, 3) against (1, 2, 3): covariance 1.5, variances 1.5 and 2: 1.5 / sqrt(3) */
  const double t[] = {5, 5, 7}, u[] = {-1, 0, 1};
  ck_assert_double_eq_tol(pb_screen_spearman(t, u, 3), 1.5 / sqrt(3.0), 1e-15);
  /* a constant column has no rank correlation; nor does one entry */
  const double k[] = {2, 2, 2};
  ck_assert(isnan(pb_screen_spearman(k, u, 3)));
  ck_assert(isnan(pb_screen_spearman(a, b, 1)));
}
END_TEST

/* ------------------------------------------------------------ coverage */

START_TEST(test_budget_rounding)
{
  /* k = max(1, round(q n)) with halves up, in exact integers */
  ck_assert_int_eq(pb_screen_budget(5, 10), 1);    /* 0.5 -> 1 */
  ck_assert_int_eq(pb_screen_budget(4, 10), 1);    /* 0.4 -> 0 -> 1 */
  ck_assert_int_eq(pb_screen_budget(25, 10), 3);   /* 2.5 -> 3 */
  ck_assert_int_eq(pb_screen_budget(15, 30), 5);   /* 4.5 -> 5 */
  ck_assert_int_eq(pb_screen_budget(14, 30), 4);   /* 4.2 -> 4 */
  ck_assert_int_eq(pb_screen_budget(400, 20), 80);
  ck_assert_int_eq(pb_screen_budget(1, 30), 1);
}
END_TEST

/* Average failures among the first k of every ordering that sorts the
 * scores in descending order (all tie orders equally likely). */
static int32_t perm_[12];
static double enum_hits;
static int64_t enum_count;

static void enumerate(const double *s, const uint8_t *y, int32_t n, int32_t depth, uint32_t used, int32_t k)
{
  if (depth == n) {
    int32_t hits = 0;
    for (int32_t j = 0; j < k; j++) hits += y[perm_[j]];
    enum_hits += hits;
    enum_count++;
    return;
  }
  for (int32_t i = 0; i < n; i++) {
    if (used & (1u << i)) continue;
    if (depth > 0 && s[perm_[depth - 1]] < s[i]) continue; /* keep descending */
    perm_[depth] = i;
    enumerate(s, y, n, depth + 1, used | (1u << i), k);
  }
}

START_TEST(test_coverage_tie_orders)
{
  test_rng(2);
  static const int pct[3] = {10, 20, 30};
  for (int rep = 0; rep < 300; rep++) {
    int32_t n = rint_(1, 9), levels = rint_(1, 4), nf = 0;
    double s[12];
    uint8_t y[12];
    for (int32_t i = 0; i < n; i++) {
      s[i] = rint_(0, levels - 1);
      y[i] = (uint8_t)rint_(0, 1);
      nf += y[i];
    }
    for (int b = 0; b < 3; b++) {
      int32_t k = (int32_t)((pct[b] * n + 50) / 100);
      if (k < 1) k = 1;
      enum_hits = 0;
      enum_count = 0;
      enumerate(s, y, n, 0, 0, k);
      double expect = nf ? enum_hits / enum_count / nf : NAN, got = pb_screen_coverage(s, y, n, pct[b]);
      if (isnan(expect)) ck_assert(isnan(got));
      else ck_assert_msg(fabs(got - expect) <= 1e-12, "rep %d n %d q %d%%: coverage %.17g, enumeration %.17g", rep, n,
                         pct[b], got, expect);
    }
  }
  /* hand case: scores 5 > 4 = 4 = 4 > 1, failures at 5 and one of the 4s, n = 5,
   * q = .3 -> k = 2 (1.5 rounds up): 1 + 1/3 of the tied failure = 4/3 of 2 */
  double s[] = {4, 5, 4, 1, 4};
  uint8_t y[] = {0, 1, 1, 0, 0};
  ck_assert_double_eq_tol(pb_screen_coverage(s, y, 5, 30), (4.0 / 3.0) / 2.0, 1e-15);
}
END_TEST

/* pb_screen_order_metrics (a random order, no ties): the AUROC by pair
 * count and each coverage as the failures among the first k of the order,
 * counted here; failures a few, about half, or nearly all (either outcome
 * list is the shorter); and a score undefined everywhere ranks nothing. */
START_TEST(test_order_metrics)
{
  test_rng(11);
  static const int pct[3] = {10, 20, 30};
  for (int rep = 0; rep < 300; rep++) {
    int32_t n = rep < 3 ? rep : rint_(1, 200), order[200], inv[200], nf = 0;
    uint8_t y[200];
    double s[200];
    int32_t rate = rint_(0, 10);
    for (int32_t i = 0; i < n; i++) {
      order[i] = i;
      y[i] = (uint8_t)(rint_(0, 9) < rate);
      nf += y[i];
    }
    for (int32_t i = n - 1; i > 0; i--) { /* a uniformly random order */
      int32_t j = rint_(0, i), t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    for (int32_t a = 0; a < n; a++) inv[order[a]] = a;
    for (int32_t i = 0; i < n; i++) s[i] = n - inv[i]; /* descending along the order */
    struct pb_screen_metric m;
    pb_screen_order_metrics(order, n, y, 7, &m);
    ck_assert_int_eq(m.n, n);
    ck_assert_int_eq(m.n_fail, nf);
    double want = brute_auroc(s, y, n);
    if (isnan(want)) ck_assert_msg(isnan(m.auroc), "rep %d: AUROC %g, expected undefined", rep, m.auroc);
    else ck_assert_msg(m.auroc == want, "rep %d (n %d): AUROC %.17g, pair count %.17g", rep, n, m.auroc, want);
    for (int b = 0; b < 3; b++) {
      int32_t k = n ? (int32_t)((pct[b] * n + 50) / 100) : 0, hits = 0;
      if (n && k < 1) k = 1;
      for (int32_t a = 0; a < k; a++) hits += y[order[a]];
      if (nf == 0) ck_assert_msg(isnan(m.cov[b]), "rep %d: coverage without failures %g", rep, m.cov[b]);
      else ck_assert_msg(m.cov[b] == (double)hits / nf, "rep %d n %d q %d%%: coverage %.17g, counted %d of %d", rep,
                         n, pct[b], m.cov[b], hits, nf);
    }
    pb_screen_order_metrics(order, n, y, 2, &m); /* budgets not asked for stay NaN */
    ck_assert(isnan(m.cov[0]) && isnan(m.cov[2]));
  }
  /* hand case: order 2, 0, 3, 1 with failures 0 and 1: of the four
   * (failure, retained) pairs only image 0 above image 3 is a win, so the
   * AUROC is 1/4; k = 1 at every budget (0.4, 0.8, 1.2 round to 0, 1, 1) and
   * the first image, 2, is retained: coverage 0 */
  const int32_t ord[4] = {2, 0, 3, 1};
  const uint8_t yy[4] = {1, 1, 0, 0};
  struct pb_screen_metric m;
  pb_screen_order_metrics(ord, 4, yy, 7, &m);
  ck_assert_double_eq(m.auroc, 0.25);
  for (int b = 0; b < 3; b++) ck_assert_double_eq(m.cov[b], 0.0);
  /* a score undefined on every image: nothing ranked, every metric undefined */
  double nan4[4] = {NAN, NAN, NAN, NAN};
  struct pb_screen_ranked r;
  struct pb_screen_outcome o = {0, 0, NULL, malloc(4 * sizeof(int32_t)), malloc(4 * sizeof(int32_t))};
  pb_screen_rank(nan4, 4, NULL, 0, &r);
  pb_screen_outcome_set(&o, yy, 4);
  pb_screen_ranked_metrics(&r, &o, 7, &m);
  ck_assert_int_eq(m.n, 0);
  ck_assert_int_eq(m.n_fail, 0);
  ck_assert(isnan(m.auroc) && isnan(m.cov[0]) && isnan(m.cov[1]) && isnan(m.cov[2]));
  pb_screen_ranked_free(&r);
  free(o.fail);
  free(o.keep);
}
END_TEST

/* Ranked once, evaluated on subsets and with either outcome list: the same
 * values as ranking the extracted subset directly. */
START_TEST(test_ranked_subsets)
{
  test_rng(3);
  for (int rep = 0; rep < 300; rep++) {
    int32_t n = rint_(1, 50), sub[50], ns = 0;
    double s[50], t[50];
    uint8_t y[50], yt[50];
    int fail_rate = rint_(1, 9);
    for (int32_t i = 0; i < n; i++) {
      s[i] = rint_(0, 5);
      y[i] = (uint8_t)(rint_(0, 9) < fail_rate);
      if (rint_(0, 2)) sub[ns++] = i;
    }
    for (int32_t j = 0; j < ns; j++) {
      t[j] = s[sub[j]];
      yt[j] = y[sub[j]];
    }
    struct pb_screen_ranked r;
    struct pb_screen_outcome o;
    struct pb_screen_metric m;
    int32_t fail[50], keep[50];
    o.fail = fail;
    o.keep = keep;
    pb_screen_rank(s, n, sub, ns, &r);
    pb_screen_outcome_set(&o, y, n);
    pb_screen_ranked_metrics(&r, &o, 7, &m);
    double a = brute_auroc(t, yt, ns);
    ck_assert_int_eq(m.n, ns);
    if (isnan(a)) ck_assert(isnan(m.auroc));
    else ck_assert_msg(fabs(m.auroc - a) <= 1e-12, "rep %d: %.17g vs %.17g", rep, m.auroc, a);
    static const int pct[3] = {10, 20, 30};
    for (int b = 0; b < 3; b++) {
      double c = ns ? pb_screen_coverage(t, yt, ns, pct[b]) : NAN;
      if (isnan(c)) ck_assert(isnan(m.cov[b]));
      else ck_assert_msg(fabs(m.cov[b] - c) <= 1e-12, "rep %d q %d: %.17g vs %.17g", rep, pct[b], m.cov[b], c);
    }
    pb_screen_ranked_free(&r);
  }
}
END_TEST

/* The ranking from its definition: over the positions with in[q] and a
 * defined score, twice the ascending midrank #{<} + #{<=} + 1, and per budget
 * k = max(1, round(pct n / 100)) code 1 when every image at or above the score
 * fits in the top k, 2 when the score's tie group straddles the k-th place. */
static void check_ranked_def(const struct pb_screen_ranked *r, const double *s, const uint8_t *in, int32_t n,
                             int rep, const char *what)
{
  static const int pct[3] = {10, 20, 30};
  int32_t m = 0;
  for (int32_t q = 0; q < n; q++) m += in[q] && !isnan(s[q]);
  ck_assert_msg(r->n == m && r->n_all == n, "rep %d %s: n %d of %d, expected %d", rep, what, r->n, r->n_all, m);
  for (int b = 0; b < 3; b++) {
    int32_t k = m ? ((int32_t)((pct[b] * (int64_t)m + 50) / 100) > 1 ? (int32_t)((pct[b] * (int64_t)m + 50) / 100) : 1) : 0;
    ck_assert_int_eq(r->k[b], k);
  }
  for (int32_t q = 0; q < n; q++) {
    if (!in[q] || isnan(s[q])) {
      ck_assert_msg(r->mid2[q] == -1 && r->code[q] == 0, "rep %d %s: q %d outside", rep, what, q);
      continue;
    }
    int32_t lt = 0, le = 0, gt = 0, ge = 0;
    for (int32_t j = 0; j < n; j++) {
      if (!in[j] || isnan(s[j])) continue;
      lt += s[j] < s[q];
      le += s[j] <= s[q];
      gt += s[j] > s[q];
      ge += s[j] >= s[q];
    }
    ck_assert_msg(r->mid2[q] == lt + le + 1, "rep %d %s: q %d mid2 %d, expected %d", rep, what, q, r->mid2[q],
                  lt + le + 1);
    for (int b = 0; b < 3; b++) {
      int c = r->code[q] >> (2 * b) & 3, want = ge < r->k[b] ? 1 : gt < r->k[b] ? 2 : 0;
      ck_assert_msg(c == want, "rep %d %s: q %d budget %d code %d, expected %d", rep, what, q, b, c, want);
      if (want == 2) ck_assert_msg(r->A[b] == gt && r->g[b] == ge - gt, "rep %d %s: cutoff group", rep, what);
    }
  }
}

/* pb_screen_rank_keep's order, pb_screen_rank_sorted on a subset of it and on
 * a list whose ties come in random order (a relabelled score), and the
 * metrics against the outcomes of the subset's images only: the ranking from
 * its definition and the AUROC of the pair count. */
START_TEST(test_ranked_sorted)
{
  test_rng(11);
  for (int rep = 0; rep < 400; rep++) {
    int32_t n = rint_(1, 60), order[60], list[60], tie[60], nl = 0;
    double s[60], t[60];
    uint8_t all[60], in[60], y[60], yt[60];
    int levels = rint_(1, 8);
    for (int32_t q = 0; q < n; q++) {
      s[q] = rint_(0, 9) == 0 ? NAN : rint_(0, levels) * 0.25 - 1.0;
      all[q] = 1;
      in[q] = (uint8_t)(rint_(0, 3) > 0);
      y[q] = (uint8_t)rint_(0, 1);
    }
    struct pb_screen_ranked r, rs, rt;
    pb_screen_rank_keep(s, n, NULL, 0, &r, order);
    check_ranked_def(&r, s, all, n, rep, "rank_keep");
    for (int32_t j = 0; j + 1 < r.n; j++)
      ck_assert_msg(s[order[j]] > s[order[j + 1]] || (s[order[j]] == s[order[j + 1]] && order[j] < order[j + 1]),
                    "rep %d: order at %d", rep, j);
    for (int32_t j = 0; j < r.n; j++)
      if (in[order[j]]) list[nl++] = order[j];
    pb_screen_rank_sorted(s, n, list, nl, &rs);
    check_ranked_def(&rs, s, in, n, rep, "rank_sorted subset");
    /* descending values, ties shuffled */
    int32_t nt = 0;
    for (int32_t q = 0; q < n; q++)
      if (!isnan(s[q])) tie[nt++] = q;
    for (int32_t j = nt - 1; j > 0; j--) {
      int32_t k = rint_(0, j), x = tie[j];
      tie[j] = tie[k];
      tie[k] = x;
    }
    for (int32_t j = 1; j < nt; j++) /* insertion sort on the value only: ties stay shuffled */
      for (int32_t i = j; i > 0 && s[tie[i]] > s[tie[i - 1]]; i--) {
        int32_t x = tie[i];
        tie[i] = tie[i - 1];
        tie[i - 1] = x;
      }
    pb_screen_rank_sorted(s, n, tie, nt, &rt);
    check_ranked_def(&rt, s, all, n, rep, "rank_sorted shuffled ties");
    /* the subset's rankings against an outcome that lists only its images */
    struct pb_screen_outcome o = {0, 0, y, (int32_t[60]){0}, (int32_t[60]){0}};
    int32_t m = 0;
    for (int32_t q = 0; q < n; q++) {
      if (!in[q]) continue;
      if (y[q]) o.fail[o.n_fail++] = q;
      else o.keep[o.n - o.n_fail] = q;
      o.n++;
      if (!isnan(s[q])) t[m] = s[q], yt[m++] = y[q];
    }
    double a = brute_auroc(t, yt, m);
    for (int budgets = 0; budgets <= 7; budgets += 7) {
      struct pb_screen_metric mt;
      pb_screen_ranked_metrics(&rs, &o, budgets, &mt);
      ck_assert_int_eq(mt.n, m);
      if (isnan(a)) ck_assert(isnan(mt.auroc));
      else ck_assert_msg(fabs(mt.auroc - a) <= 1e-12, "rep %d: auroc %.17g vs %.17g", rep, mt.auroc, a);
      for (int b = 0; b < 3; b++) {
        double c = budgets && m ? pb_screen_coverage(t, yt, m, b == 0 ? 10 : b == 1 ? 20 : 30) : NAN;
        if (isnan(c)) ck_assert(isnan(mt.cov[b]));
        else ck_assert_msg(fabs(mt.cov[b] - c) <= 1e-12, "rep %d: coverage %.17g vs %.17g", rep, mt.cov[b], c);
      }
    }
    pb_screen_ranked_free(&r);
    pb_screen_ranked_free(&rs);
    pb_screen_ranked_free(&rt);
  }
}
END_TEST

/* Rankings of a few hundred to a few thousand images (pb_screen_rank_keep's
 * radix path): heavy ties, -0 beside +0, NaN, subsets; from the definition. */
START_TEST(test_rank_large)
{
  test_rng(12);
  static const double vals[] = {-0.0, 0.0, 1e-300, -1e-300, 0.5, -0.5, 3.0, -2.0, 1e300, -1e300, 0.25, 0.125};
  for (int rep = 0; rep < 24; rep++) {
    int32_t n = rint_(256, 1500), *order = malloc((size_t)n * sizeof *order), *sub = malloc((size_t)n * sizeof *sub);
    double *s = malloc((size_t)n * sizeof *s);
    uint8_t *in = malloc((size_t)n), *all = malloc((size_t)n);
    int32_t nv = rint_(1, 12), ns = 0;
    for (int32_t q = 0; q < n; q++) {
      s[q] = rint_(0, 30) == 0 ? NAN : rep % 3 == 2 ? (double)rint_(0, 1 << 20) * 1e-3 : vals[rint_(0, nv - 1)];
      all[q] = 1;
      in[q] = (uint8_t)(rep % 2 == 0 || rint_(0, 2) > 0);
      if (in[q]) sub[ns++] = q;
    }
    struct pb_screen_ranked r;
    pb_screen_rank_keep(s, n, rep % 2 ? sub : NULL, ns, &r, order);
    check_ranked_def(&r, s, rep % 2 ? in : all, n, rep, "large");
    for (int32_t j = 0; j + 1 < r.n; j++)
      ck_assert_msg(s[order[j]] > s[order[j + 1]] || (s[order[j]] == s[order[j + 1]] && order[j] < order[j + 1]),
                    "rep %d: order at %d", rep, j);
    pb_screen_ranked_free(&r);
    free(order);
    free(sub);
    free(s);
    free(in);
    free(all);
  }
}
END_TEST

/* ------------------------------------------------------------ derangements */

START_TEST(test_derangement)
{
  int32_t perm[40], again[40];
  int64_t count[2] = {0, 0};
  for (uint32_t rep = 0; rep < 2000; rep++) {
    int32_t n = 2 + (int32_t)(rep % 30);
    struct pb_rng r1, r2;
    pb_rng_init(&r1, test_seed(), PB_RNG_SCREEN_DERANGE, rep, 3);
    pb_rng_init(&r2, test_seed(), PB_RNG_SCREEN_DERANGE, rep, 3);
    pb_resample_perm_derange(&r1, n, perm);
    pb_resample_perm_derange(&r2, n, again);
    uint64_t seen = 0;
    for (int32_t j = 0; j < n; j++) {
      ck_assert_msg(perm[j] != j, "fixed point at %d (n %d)", j, n);
      ck_assert(perm[j] >= 0 && perm[j] < n && !(seen & (1ull << perm[j])));
      seen |= 1ull << perm[j];
      ck_assert_int_eq(perm[j], again[j]);  /* reproducible from the seed */
    }
    if (n == 3) count[perm[0] == 1]++;
  }
  /* n = 3 has two derangements, (1 2 0) and (2 0 1): both must occur, about equally */
  ck_assert_msg(count[0] > 10 && count[1] > 10, "derangements of 3: %lld / %lld", (long long)count[0],
                (long long)count[1]);
  /* n = 2 is the swap */
  struct pb_rng r;
  pb_rng_init(&r, 1, PB_RNG_SCREEN_DERANGE, 0, 0);
  pb_resample_perm_derange(&r, 2, perm);
  ck_assert(perm[0] == 1 && perm[1] == 0);
}
END_TEST

/* ------------------------------------------------------------ logistic */

/* Independent Newton solve of 0.5|w|^2 + C sum_rows [log(1+e^eta) - y eta] on
 * one row per (image, condition), standardised with the population sd. */
static void newton_ref(const double *x, int p, const int32_t *trials, const int32_t *fails, int32_t n, double C,
                       double *theta)
{
  double mean[3] = {0}, sd[3] = {0};
  for (int j = 0; j < p; j++) {
    for (int32_t i = 0; i < n; i++) mean[j] += x[i * p + j] / n;
    for (int32_t i = 0; i < n; i++) sd[j] += (x[i * p + j] - mean[j]) * (x[i * p + j] - mean[j]) / n;
    sd[j] = sqrt(sd[j]);
  }
  int d = p + 1;
  for (int j = 0; j < d; j++) theta[j] = 0;
  for (int it = 0; it < 100; it++) {
    double g[4] = {0}, H[4][4] = {{0}};
    for (int j = 1; j < d; j++) {
      g[j] = theta[j];
      H[j][j] = 1;
    }
    for (int32_t i = 0; i < n; i++)
      for (int32_t r = 0; r < trials[i]; r++) {
        double z[4] = {1};
        for (int j = 0; j < p; j++) z[1 + j] = sd[j] > 0 ? (x[i * p + j] - mean[j]) / sd[j] : 0;
        double eta = 0;
        for (int j = 0; j < d; j++) eta += theta[j] * z[j];
        double pr = 1 / (1 + exp(-eta)), yv = r < fails[i];
        for (int a = 0; a < d; a++) {
          g[a] += C * (pr - yv) * z[a];
          for (int b = 0; b < d; b++) H[a][b] += C * pr * (1 - pr) * z[a] * z[b];
        }
      }
    /* solve H step = g by Gaussian elimination */
    double A[4][5];
    for (int a = 0; a < d; a++) {
      for (int b = 0; b < d; b++) A[a][b] = H[a][b];
      A[a][d] = g[a];
    }
    for (int c = 0; c < d; c++) {
      int piv = c;
      for (int a = c + 1; a < d; a++)
        if (fabs(A[a][c]) > fabs(A[piv][c])) piv = a;
      for (int b = 0; b <= d; b++) {
        double t = A[c][b];
        A[c][b] = A[piv][b];
        A[piv][b] = t;
      }
      for (int a = 0; a < d; a++) {
        if (a == c) continue;
        double f = A[a][c] / A[c][c];
        for (int b = c; b <= d; b++) A[a][b] -= f * A[c][b];
      }
    }
    double step = 0;
    for (int a = 0; a < d; a++) {
      double s = A[a][d] / A[a][a];
      theta[a] -= s;
      step = fmax(step, fabs(s));
    }
    if (step < 1e-14) break;
  }
}

START_TEST(test_logistic)
{
  test_rng(4);
  for (int rep = 0; rep < 12; rep++) {
    int p = 1 + rep % 3;
    int32_t n = 40 + rint_(0, 200), trials[240], fails[240];
    double x[240 * 3];
    for (int32_t i = 0; i < n; i++) {
      double S = 0.3 + 0.7 * pb_rng_uniform(&trng), U = S * pb_rng_uniform(&trng), ret = rint_(0, 18) / 18.0;
      double feats[3] = {S, U, ret};
      for (int j = 0; j < p; j++) x[i * p + j] = feats[j];
      trials[i] = 1 + rint_(0, 20);
      double pr = 1 / (1 + exp(-(1.5 - 3 * U - S)));
      fails[i] = 0;
      for (int32_t r = 0; r < trials[i]; r++) fails[i] += pb_rng_uniform(&trng) < pr;
    }
    struct pb_screen_logit fit;
    ck_assert_int_eq(pb_screen_logit_fit(x, p, trials, fails, n, 1.0, &fit), 0);
    ck_assert(fit.ok);
    double ref[4], g[4];
    newton_ref(x, p, trials, fails, n, 1.0, ref);
    pb_screen_logit_objective(x, p, trials, fails, n, 1.0, &fit, g);
    double gn = 0;
    for (int j = 0; j <= p; j++) gn += g[j] * g[j];
    printf("logit rep %d: p %d, %d images, gradient norm %.3g after %d iterations\n", rep, p, n, sqrt(gn), fit.iterations);
    ck_assert_msg(sqrt(gn) < 1e-8, "rep %d: gradient norm %g at the BFGS optimum", rep, sqrt(gn));
    ck_assert_msg(fabs(fit.b - ref[0]) < 1e-8, "rep %d: intercept %.12g vs Newton %.12g", rep, fit.b, ref[0]);
    for (int j = 0; j < p; j++)
      ck_assert_msg(fabs(fit.w[j] - ref[1 + j]) < 1e-8, "rep %d: w%d %.12g vs Newton %.12g", rep, j, fit.w[j], ref[1 + j]);
  }
  /* hand case: objective at b = 0, w = 0 is C sum n_i log 2 = 3 log 2, gradient b = sum (n/2 - f) */
  double x[] = {0.2, 0.8};
  int32_t tr[] = {2, 1}, fa[] = {2, 0};
  struct pb_screen_logit zero = {1, {0}, {0}, 0, {0}, 0, 0, 1};
  double g[2];
  ck_assert_double_eq_tol(pb_screen_logit_objective(x, 1, tr, fa, 2, 1.0, &zero, g), 3 * log(2.0), 1e-14);
  ck_assert_double_eq_tol(g[0], (1.0 - 2) + (0.5 - 0), 1e-14);
  /* z = (-1, 1): dw = sum (n sigma - f) z = (1 - 2)(-1) + (0.5)(1) = 1.5 */
  ck_assert_double_eq_tol(g[1], 1.5, 1e-14);
  /* one outcome only: undefined */
  int32_t none[] = {0, 0};
  struct pb_screen_logit f2;
  ck_assert_int_eq(pb_screen_logit_fit(x, 1, tr, none, 2, 1.0, &f2), 0);
  ck_assert(!f2.ok && isnan(pb_screen_logit_eta(&f2, x)));
}
END_TEST

/* ------------------------------------------------------------ A3, margin, entropy */

START_TEST(test_a3_hand)
{
  /* clean: p = 0 (correct), v0(0) = .7, list (0 .7) (2 .2) (1 .05) */
  int32_t c0c[] = {0, 2, 1};
  float c0p[] = {0.7f, 0.2f, 0.05f};
  struct pb_screen_probs clean = {0, 0, 0.7f, 0.7f, 3, c0c, c0p, NULL};
  /* probes (K = 4): a1 predicts 0 (.6), a2 predicts 2 (.5, v(0) .3), a3 predicts 2 (.4, v(0) .35),
   * a4 predicts 1 (.45, v(0) .25) -> modal class m = 2 (two votes) != p */
  int32_t l1c[] = {0, 2}, l2c[] = {2, 0}, l3c[] = {2, 0}, l4c[] = {1, 0};
  float l1p[] = {0.6f, 0.3f}, l2p[] = {0.5f, 0.3f}, l3p[] = {0.4f, 0.35f}, l4p[] = {0.45f, 0.25f};
  struct pb_screen_probs pr[4] = {{0, 0, 0.6f, 0.6f, 2, l1c, l1p, NULL}, {2, 0, 0.5f, 0.3f, 2, l2c, l2p, NULL},
                                  {2, 0, 0.4f, 0.35f, 2, l3c, l3p, NULL}, {1, 0, 0.45f, 0.25f, 2, l4c, l4p, NULL}};
  int32_t approx;
  /* Eq. 12: v0(p) = .7; distractor a4: -(.45 - .25); supporter a1: +(.6 - .3);
   * dominators a2, a3: (.3 - .5 + .2 - .7) + (.35 - .4 + .2 - .7) */
  double expect = 0.7 - (0.45 - 0.25) + (0.6 - 0.3) + (0.3 - 0.5 + 0.2 - 0.7) + (0.35 - 0.4 + 0.2 - 0.7);
  ck_assert_double_eq_tol(pb_screen_a3(&clean, pr, 4, 4, &approx), expect, 1e-6);
  ck_assert_int_eq(approx, 0);
  /* p = m: supporter and dominator terms vanish; only distractors count */
  struct pb_screen_probs pr2[3] = {pr[0], pr[0], pr[3]};
  ck_assert_double_eq_tol(pb_screen_a3(&clean, pr2, 3, 4, &approx), 0.7 - (0.45 - 0.25), 1e-6);
  /* modal tie: classes 2 and 1 with one vote each (plus p once): mean max probability decides
   * (a2 .5 > a4 .45) -> m = 2; then a3 alone vs a4: .4 < .45 -> m = 1 */
  struct pb_screen_probs t1[2] = {pr[1], pr[3]}, t2[2] = {pr[2], pr[3]};
  double e1 = 0.7 - (0.45 - 0.25) + (0.3 - 0.5 + 0.2 - 0.7);
  ck_assert_double_eq_tol(pb_screen_a3(&clean, t1, 2, 4, &approx), e1, 1e-6);
  /* m = 1: v0(1) = .05; a3 is a distractor: -(.4 - .35); a4 dominator: .25 - .45 + .05 - .7 */
  double e2 = 0.7 - (0.4 - 0.35) + (0.25 - 0.45 + 0.05 - 0.7);
  ck_assert_double_eq_tol(pb_screen_a3(&clean, t2, 2, 4, &approx), e2, 1e-6);
  /* equal votes and equal mean: the smaller class index wins */
  struct pb_screen_probs q1 = {3, 0, 0.5f, 0.2f, 0, NULL, NULL, NULL}, q2 = {1, 0, 0.5f, 0.2f, 0, NULL, NULL, NULL};
  struct pb_screen_probs t3[2] = {q1, q2};
  /* m = 1: v0(1) = .05 (listed); q1 distractor -(.5 - .2); q2 dominator .2 - .5 + .05 - .7 */
  ck_assert_double_eq_tol(pb_screen_a3(&clean, t3, 2, 4, &approx), 0.7 - 0.3 + (0.2 - 0.5 + 0.05 - 0.7), 1e-6);
}
END_TEST

START_TEST(test_completion_margin_entropy)
{
  int exact;
  /* no list: pred 1 (.5), label 0 (.2); 3 unpinned classes share .3 */
  struct pb_screen_probs r = {1, 0, 0.5f, 0.2f, 0, NULL, NULL, NULL};
  ck_assert_double_eq_tol(pb_screen_prob(&r, 5, 3, &exact), 0.3 / 3, 1e-7);
  ck_assert_int_eq(exact, 0);
  ck_assert_double_eq_tol(pb_screen_prob(&r, 5, 0, &exact), 0.2, 1e-7);
  ck_assert_int_eq(exact, 1);
  ck_assert(isnan(pb_screen_margin(&r)) && isnan(pb_screen_entropy(&r, 5)));
  /* list of 2 on a correct record: margin = .6 - .25; entropy with 2 unpinned classes sharing .15 */
  int32_t lc[] = {2, 1};
  float lp[] = {0.6f, 0.25f};
  struct pb_screen_probs c = {2, 2, 0.6f, 0.6f, 2, lc, lp, NULL};
  ck_assert_double_eq_tol(pb_screen_margin(&c), 0.6 - 0.25, 1e-7);
  double h = -(0.6 * log(0.6) + 0.25 * log(0.25) + 2 * 0.075 * log(0.075));
  ck_assert_double_eq_tol(pb_screen_entropy(&c, 4), h, 1e-7);
  /* exact when the list pins every class */
  int32_t fc[] = {2, 1, 0};
  float fp[] = {0.6f, 0.25f, 0.15f};
  struct pb_screen_probs f = {2, 2, 0.6f, 0.6f, 3, fc, fp, NULL};
  ck_assert_double_eq_tol(pb_screen_entropy(&f, 3), -(0.6 * log(0.6) + 0.25 * log(0.25) + 0.15 * log(0.15)), 1e-7);
  /* the completion never exceeds the smallest listed probability */
  float sp[] = {0.5f, 0.01f};
  struct pb_screen_probs cap = {2, 2, 0.5f, 0.5f, 2, lc, sp, NULL};
  ck_assert_double_eq_tol(pb_screen_prob(&cap, 4, 3, &exact), 0.01, 1e-7);
}
END_TEST

/* The stored entropy (docs/screen.md) ranks records unlike the top-k
 * completion.  K = 4, top-2 lists of two correct records: A lists (.6, .2),
 * whose whole vector is (.6, .2, .2, 0); B lists (.6, .3), whole (.6, .3,
 * .05, .05).  The completion spreads A's .2 over two classes, .1 each:
 * H(A) = -(.6 ln .6 + .2 ln .2 + 2 (.1 ln .1)) = 1.0889 above
 * H(B) = -(.6 ln .6 + .3 ln .3 + 2 (.05 ln .05)) = 0.9673 (exact: B's
 * completion is its vector); the stored entropies put A, at
 * -(.6 ln .6 + 2 (.2 ln .2)) = 0.9503, below B. */
START_TEST(test_stored_entropy_ranks)
{
  int32_t ac[] = {1, 2}, bc[] = {1, 3};
  float ap[] = {0.6f, 0.2f}, bp[] = {0.6f, 0.3f};
  const float ha = (float)-(0.6 * log(0.6) + 2 * 0.2 * log(0.2));
  const float hb = (float)-(0.6 * log(0.6) + 0.3 * log(0.3) + 2 * 0.05 * log(0.05));
  struct pb_screen_probs a = {1, 1, 0.6f, 0.6f, 2, ac, ap, NULL}, b = {1, 1, 0.6f, 0.6f, 2, bc, bp, NULL};
  const double ca = pb_screen_entropy(&a, 4), cb = pb_screen_entropy(&b, 4);
  ck_assert_double_eq_tol(ca, -(0.6 * log(0.6) + 0.2 * log(0.2) + 2 * 0.1 * log(0.1)), 1e-6);
  ck_assert_double_eq_tol(cb, hb, 1e-6);
  ck_assert(ca > cb);
  a.entropy = &ha;
  b.entropy = &hb;
  ck_assert(pb_screen_entropy(&a, 4) == ha && pb_screen_entropy(&b, 4) == hb);
  ck_assert(pb_screen_entropy(&a, 4) < pb_screen_entropy(&b, 4));
  /* the stored entropy needs no list */
  struct pb_screen_probs n = {1, 1, 0.6f, 0.6f, 0, NULL, NULL, &ha};
  ck_assert(pb_screen_entropy(&n, 4) == ha);
}
END_TEST

START_TEST(test_parse_probe)
{
  struct pb_screen_probeset ps;
  ck_assert_int_eq(pb_screen_parse_probe("Syn-B", &ps), 0);
  ck_assert(ps.name == NULL && !strcmp(ps.source, "Syn-B") && ps.n_conditions == 0);
  free(ps.source);
  ck_assert_int_eq(pb_screen_parse_probe("TTA=Nat:flip,zoom-1.1", &ps), 0);
  ck_assert(!strcmp(ps.name, "TTA") && !strcmp(ps.source, "Nat") && ps.n_conditions == 2);
  ck_assert(!strcmp(ps.conditions[1], "zoom-1.1"));
  free(ps.name);
  free(ps.source);
  free(ps.conditions[0]);
  free(ps.conditions[1]);
  free(ps.conditions);
  ck_assert_int_ne(pb_screen_parse_probe("a b=Syn", &ps), 0);
  ck_assert_int_ne(pb_screen_parse_probe("=Syn", &ps), 0);
  ck_assert_int_ne(pb_screen_parse_probe("x=Syn:", &ps), 0);
}
END_TEST

static Suite *screen_suite(void)
{
  Suite *s = suite_create("screen");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_auroc_pairs);
  tcase_add_test(tc, test_spearman_hand);
  tcase_add_test(tc, test_budget_rounding);
  tcase_add_test(tc, test_coverage_tie_orders);
  tcase_add_test(tc, test_order_metrics);
  tcase_add_test(tc, test_ranked_subsets);
  tcase_add_test(tc, test_ranked_sorted);
  tcase_add_test(tc, test_rank_large);
  tcase_add_test(tc, test_derangement);
  tcase_add_test(tc, test_logistic);
  tcase_add_test(tc, test_a3_hand);
  tcase_add_test(tc, test_completion_margin_entropy);
  tcase_add_test(tc, test_stored_entropy_ranks);
  tcase_add_test(tc, test_parse_probe);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(screen_suite()); }
