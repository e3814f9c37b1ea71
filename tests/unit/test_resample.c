/* Resampling engine: bootstrap draws, percentile intervals against a serial
 * reference and closed forms, permutation and derangement nulls. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "pairbound/clones.h"
#include "pairbound/resample.h"
#include "pairbound/rng.h"
#include "pairbound/screen.h"
#include "testlib.h"

START_TEST(test_multiplicities)
{
  struct pb_boot_spec spec = {test_seed(), PB_RNG_GROUP_BOOT, 0, 0, 0.95};
  int32_t m[10], m2[10];
  pb_resample_boot_multiplicities(&spec, -1, 10, m);
  for (int u = 0; u < 10; u++) ck_assert_int_eq(m[u], 1);
  for (int64_t d = 0; d < 500; d++) {
    pb_resample_boot_multiplicities(&spec, d, 10, m);
    pb_resample_boot_multiplicities(&spec, d, 10, m2);
    int sum = 0;
    for (int u = 0; u < 10; u++) {
      sum += m[u];
      ck_assert_int_eq(m[u], m2[u]);
    }
    ck_assert_int_eq(sum, 10);
  }
  /* two units: (2,0), (1,1), (0,2) with probabilities 1/4, 1/2, 1/4 */
  int64_t seen[3] = {0, 0, 0}, N = 40000;
  for (int64_t d = 0; d < N; d++) {
    pb_resample_boot_multiplicities(&spec, d, 2, m);
    seen[m[0]]++;
  }
  double chi = 0, p[3] = {0.25, 0.5, 0.25};
  for (int k = 0; k < 3; k++) chi += (seen[k] - N * p[k]) * (seen[k] - N * p[k]) / (N * p[k]);
  ck_assert_msg(chi < 20, "chi-square %g (2 df)", chi); /* p < 5e-5 under the null */
  /* another stream gives other draws */
  struct pb_boot_spec other = spec;
  other.stream = 1;
  int differ = 0;
  for (int64_t d = 0; d < 50; d++) {
    pb_resample_boot_multiplicities(&spec, d, 10, m);
    pb_resample_boot_multiplicities(&other, d, 10, m2);
    for (int u = 0; u < 10; u++) differ |= m[u] != m2[u];
  }
  ck_assert(differ);
}
END_TEST

/* pb_resample_percentile_select: GSL's quantile of the sorted copy (gsl_sort, then
 * gsl_stats_quantile_from_sorted_data; pb_resample_percentile_sorted where two equal
 * order statistics meet), bit for bit, on shuffled data with many ties, at
 * sizes around the selection's short-array cutoff and at the bootstrap's
 * 200 and 2,000 draws, for the quantiles the intervals and tables use. */
START_TEST(test_percentile_select)
{
  static const int64_t ns[] = {1, 2, 3, 7, 31, 32, 33, 64, 65, 200, 1000, 2000, 2001};
  static const double qs[] = {0.0, 0.025, 0.25, 0.5, 0.75, 0.975, 1.0};
  uint64_t st = 99;
  double *v = malloc(2001 * sizeof *v), *sorted = malloc(2001 * sizeof *sorted), *work = malloc(2001 * sizeof *work);
  for (size_t t = 0; t < sizeof ns / sizeof *ns; t++)
    for (int ties = 0; ties < 2; ties++) {
      const int64_t n = ns[t];
      for (int64_t i = 0; i < n; i++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = ties ? (double)((st >> 33) % 9) / 8.0 : (double)(st >> 11) / 9007199254740992.0 - 0.5;
      }
      memcpy(sorted, v, (size_t)n * sizeof *v);
      gsl_sort(sorted, 1, (size_t)n);
      for (size_t j = 0; j < sizeof qs / sizeof *qs; j++) {
        memcpy(work, v, (size_t)n * sizeof *v);
        const int64_t lhs = (int64_t)(qs[j] * (double)(n - 1));
        const double want = lhs + 1 < n && sorted[lhs] == sorted[lhs + 1]
                                ? sorted[lhs] : gsl_stats_quantile_from_sorted_data(sorted, 1, (size_t)n, qs[j]);
        const double got = pb_resample_percentile_select(work, n, qs[j]);
        ck_assert_msg(got == want, "n %lld ties %d q %g: %.17g, want %.17g", (long long)n, ties, qs[j], got, want);
      }
    }
  ck_assert(isnan(pb_resample_percentile_select(v, 0, 0.5)));
  free(v);
  free(sorted);
  free(work);
}
END_TEST

START_TEST(test_percentile)
{
  const double v[4] = {1, 2, 3, 4};
  ck_assert(fabs(pb_resample_percentile_sorted(v, 4, 0.5) - 2.5) < 1e-15);
  ck_assert(fabs(pb_resample_percentile_sorted(v, 4, 0.025) - 1.075) < 1e-15);
  ck_assert(fabs(pb_resample_percentile_sorted(v, 4, 0.975) - 3.925) < 1e-15);
  ck_assert(isnan(pb_resample_percentile_sorted(v, 0, 0.5)));
  /* 200 equal draws: the 97.5th percentile is that value exactly; the
   * interpolation (1 - d) a + d a with d = 0.025000000000005684 rounds this
   * a one unit down (checked by hand in binary64) */
  double same[200];
  for (int i = 0; i < 200; i++) same[i] = 0.65020338682778;
  ck_assert(pb_resample_percentile_sorted(same, 200, 0.975) == 0.65020338682778);
  ck_assert(pb_resample_percentile_sorted(same, 200, 0.025) == 0.65020338682778);
}
END_TEST

/* Closed forms: one cell per group.  Values {0, 0, 1}: the resampled mean is
 * k/3 with k ~ Bin(3, 1/3): P(0) = 8/27 > 2.5% and P(1) = 1/27 > 2.5%, so the
 * 95% interval is exactly [0, 1]; values {0, 1}: mean in {0, 1/2, 1} with
 * P(0) = P(1) = 1/4, again [0, 1]; a constant gives a degenerate interval. */
START_TEST(test_known_distribution)
{
  struct pb_boot_spec spec = {test_seed(), PB_RNG_GROUP_BOOT, 0, 20000, 0.95};
  const double x3[3] = {0, 0, 1}, x2[2] = {0, 1}, xc[4] = {0.25, 0.25, 0.25, 0.25};
  const int32_t g[4] = {0, 1, 2, 3};
  struct pb_interval iv;
  ck_assert_int_eq(pb_resample_boot_group_means(x3, 3, 1, g, 3, &spec, MPI_COMM_WORLD, &iv), PB_OK);
  ck_assert(fabs(iv.est - 1.0 / 3) < 1e-15);
  ck_assert(iv.lo == 0 && iv.hi == 1);
  ck_assert_int_eq(iv.n_draws, 20000);
  ck_assert_int_eq(pb_resample_boot_group_means(x2, 2, 1, g, 2, &spec, MPI_COMM_WORLD, &iv), PB_OK);
  ck_assert(iv.est == 0.5 && iv.lo == 0 && iv.hi == 1);
  ck_assert_int_eq(pb_resample_boot_group_means(xc, 4, 1, g, 4, &spec, MPI_COMM_WORLD, &iv), PB_OK);
  ck_assert(iv.est == 0.25 && iv.lo == 0.25 && iv.hi == 0.25);
}
END_TEST

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Type-7 quantile written out by hand. */
static double ref_quantile(const double *s, int64_t n, double q)
{
  double h = (n - 1) * q;
  int64_t lo = (int64_t)floor(h);
  return lo + 1 < n ? s[lo] + (h - lo) * (s[lo + 1] - s[lo]) : s[n - 1];
}

/* Serial reference: the same draws, each statistic summed over cells (not
 * groups), NaN cells skipped, draws where a statistic is undefined dropped. */
START_TEST(test_against_reference)
{
  struct pb_rng r;
  pb_rng_init(&r, test_seed(), 99, 0, 0);
  enum { C = 60, G = 7, S = 3, D = 999 };
  double x[C * S];
  int32_t g[C];
  for (int c = 0; c < C; c++) {
    g[c] = (int32_t)pb_rng_below(&r, G);
    for (int k = 0; k < S; k++)
      x[c * S + k] = (k == 2 && g[c] != 3) ? NAN : pb_rng_uniform(&r) * (k + 1); /* stat 2 lives in group 3 only */
  }
  struct pb_boot_spec spec = {test_seed(), PB_RNG_GROUP_BOOT, 5, D, 0.9};
  struct pb_interval iv[S];
  ck_assert_int_eq(pb_resample_boot_group_means(x, C, S, g, G, &spec, MPI_COMM_WORLD, iv), PB_OK);
  for (int k = 0; k < S; k++) {
    double vals[D], est_num = 0, est_den = 0;
    int64_t n = 0;
    int32_t m[G];
    for (int c = 0; c < C; c++)
      if (!isnan(x[c * S + k])) est_num += x[c * S + k], est_den += 1;
    for (int64_t d = 0; d < D; d++) {
      pb_resample_boot_multiplicities(&spec, d, G, m);
      double num = 0, den = 0;
      for (int c = 0; c < C; c++)
        if (!isnan(x[c * S + k])) num += m[g[c]] * x[c * S + k], den += m[g[c]];
      if (den > 0) vals[n++] = num / den;
    }
    qsort(vals, (size_t)n, sizeof *vals, cmp_double);
    ck_assert_int_eq(iv[k].n_draws, n);
    ck_assert(fabs(iv[k].est - est_num / est_den) < 1e-12);
    ck_assert_msg(fabs(iv[k].lo - ref_quantile(vals, n, 0.05)) < 1e-12, "stat %d lo %.17g vs %.17g", k, iv[k].lo,
                  ref_quantile(vals, n, 0.05));
    ck_assert(fabs(iv[k].hi - ref_quantile(vals, n, 0.95)) < 1e-12);
  }
  ck_assert(iv[2].n_draws < D); /* group 3 is absent from some draws */
  /* from the groups' sums and counts alone (what a rank gets from an exact reduction): the same intervals */
  double sum[G * S] = {0}, cnt[G * S] = {0};
  for (int c = 0; c < C; c++)
    for (int k = 0; k < S; k++)
      if (!isnan(x[c * S + k])) sum[g[c] * S + k] += x[c * S + k], cnt[g[c] * S + k] += 1;
  struct pb_interval iv2[S];
  ck_assert_int_eq(pb_resample_boot_group_sums(sum, cnt, NULL, G, S, &spec, MPI_COMM_WORLD, iv2), PB_OK);
  for (int k = 0; k < S; k++)
    ck_assert(iv2[k].est == iv[k].est && iv2[k].lo == iv[k].lo && iv2[k].hi == iv[k].hi &&
              iv2[k].n_draws == iv[k].n_draws);
  /* one group: every draw is the sample, so with the sample's statistic given
   * every draw takes it, exactly (sum / count would round 1/3 differently
   * from the sentinel 0.25 here) and the interval has zero width */
  const double one_sum[2] = {1, 7}, one_cnt[2] = {3, 2}, full[2] = {0.25, NAN};
  struct pb_interval iv1[2];
  ck_assert_int_eq(pb_resample_boot_group_sums(one_sum, one_cnt, full, 1, 2, &spec, MPI_COMM_WORLD, iv1), PB_OK);
  ck_assert(iv1[0].lo == 0.25 && iv1[0].hi == 0.25 && iv1[0].n_draws == D);
  ck_assert(iv1[1].n_draws == 0); /* an undefined sample statistic stays undefined in every draw */
  ck_assert_int_eq(pb_resample_boot_group_sums(one_sum, one_cnt, NULL, 1, 2, &spec, MPI_COMM_WORLD, iv1), PB_OK);
  ck_assert(iv1[0].lo == 1.0 / 3 && iv1[0].hi == 1.0 / 3 && iv1[1].lo == 3.5);
}
END_TEST

/* Lexicographic index of a permutation of 0..m-1 (m <= 4). */
static int perm_index(const int32_t *p, int m)
{
  int idx = 0;
  for (int i = 0; i < m; i++) {
    int smaller = 0;
    for (int j = i + 1; j < m; j++) smaller += p[j] < p[i];
    idx = idx * (m - i) + smaller;
  }
  return idx;
}

START_TEST(test_permutations)
{
  /* classes: label 5 x3 (items 0, 3, 5), label 2 x4 (1, 2, 6, 7), label 9 x1 (4) */
  const int32_t label[8] = {5, 2, 2, 5, 9, 5, 2, 2};
  const int32_t c3[3] = {0, 3, 5}, c4[4] = {1, 2, 6, 7};
  int32_t perm[8], again[8];
  int64_t f3[6] = {0}, f4[24] = {0}, d4[24] = {0};
  const int N = 24000;
  /* classes grouped once (pb_resample_perm_classes) give the same draws as grouping per call */
  int32_t order[8], cbeg[9];
  const int32_t nc = pb_resample_perm_classes(8, label, order, cbeg);
  ck_assert_int_eq(nc, 3);
  for (int rep = 0; rep < N; rep++) {
    pb_resample_perm_within_class(7, PB_RNG_PERM_WITHIN, 3, (uint32_t)rep, 8, label, perm);
    pb_resample_perm_within_grouped(7, PB_RNG_PERM_WITHIN, 3, (uint32_t)rep, nc, order, cbeg, again);
    int used[8] = {0};
    for (int i = 0; i < 8; i++) {
      ck_assert_int_eq(label[perm[i]], label[i]);
      ck_assert_int_eq(perm[i], again[i]);
      used[perm[i]]++;
    }
    for (int i = 0; i < 8; i++) ck_assert_int_eq(used[i], 1);
    int32_t p3[3], p4[4];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) if (perm[c3[i]] == c3[j]) p3[i] = j;
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++) if (perm[c4[i]] == c4[j]) p4[i] = j;
    f3[perm_index(p3, 3)]++;
    f4[perm_index(p4, 4)]++;
    ck_assert_int_eq(pb_resample_derange_within_class(7, PB_RNG_DERANGE, 3, (uint32_t)rep, 8, label, perm), 1);
    for (int i = 0; i < 8; i++) {
      ck_assert_int_eq(label[perm[i]], label[i]);
      if (i != 4) ck_assert_int_ne(perm[i], i);
    }
    ck_assert_int_eq(perm[4], 4);
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++) if (perm[c4[i]] == c4[j]) p4[i] = j;
    d4[perm_index(p4, 4)]++;
  }
  /* uniform over the 6 and 24 permutations, and over the 9 derangements of 4 */
  double chi3 = 0, chi4 = 0, chid = 0;
  for (int k = 0; k < 6; k++) chi3 += (f3[k] - N / 6.0) * (f3[k] - N / 6.0) / (N / 6.0);
  for (int k = 0; k < 24; k++) chi4 += (f4[k] - N / 24.0) * (f4[k] - N / 24.0) / (N / 24.0);
  int nder = 0;
  for (int k = 0; k < 24; k++)
    if (d4[k]) nder++, chid += (d4[k] - N / 9.0) * (d4[k] - N / 9.0) / (N / 9.0);
  ck_assert_int_eq(nder, 9);
  ck_assert_msg(chi3 < 30 && chi4 < 65 && chid < 40, "chi-square %g %g %g", chi3, chi4, chid);
  /* uniform label permutation is a bijection and reproducible */
  pb_resample_perm_uniform(1, PB_RNG_LABEL_PERM, 0, 0, 8, perm);
  pb_resample_perm_uniform(1, PB_RNG_LABEL_PERM, 0, 0, 8, again);
  int used[8] = {0};
  for (int i = 0; i < 8; i++) {
    used[perm[i]]++;
    ck_assert_int_eq(perm[i], again[i]);
  }
  for (int i = 0; i < 8; i++) ck_assert_int_eq(used[i], 1);
}
END_TEST

/* pb_resample_perm_classes by hand: classes in ascending label, items in index order,
 * whether the labels are narrow (counting sort) or spread over a range much
 * wider than the item count (sorted keys), negative labels included. */
START_TEST(test_classes)
{
  const int32_t label[8] = {5, 2, 2, 5, 9, 5, 2, 2};
  const int32_t want_order[8] = {1, 2, 6, 7, 0, 3, 5, 4}, want_cbeg[4] = {0, 4, 7, 8};
  const int32_t scale[3] = {1, -1, 100000000}, shift[3] = {0, 0, -900000000};
  for (int v = 0; v < 3; v++) {
    int32_t lab[8], order[8], cbeg[9];
    for (int i = 0; i < 8; i++) lab[i] = label[i] * scale[v] + shift[v];
    ck_assert_int_eq(pb_resample_perm_classes(8, lab, order, cbeg), 3);
    /* scale -1 reverses the class order: labels -9 (item 4), -5 (0, 3, 5), -2 (1, 2, 6, 7) */
    const int32_t rev_order[8] = {4, 0, 3, 5, 1, 2, 6, 7}, rev_cbeg[4] = {0, 1, 4, 8};
    for (int i = 0; i < 8; i++) ck_assert_int_eq(order[i], scale[v] < 0 ? rev_order[i] : want_order[i]);
    for (int c = 0; c <= 3; c++) ck_assert_int_eq(cbeg[c], scale[v] < 0 ? rev_cbeg[c] : want_cbeg[c]);
  }
}
END_TEST

static const double *g_score;

static int by_score(const void *a, const void *b)
{
  double x = g_score[*(const int32_t *)a], y = g_score[*(const int32_t *)b];
  return (x > y) - (x < y);
}

/* pb_screen_weighted_metrics with the 16-bit copy of the weights (where they fit)
 * and without it, in every version the processor runs (passes of 32, 16 and 8
 * 16-bit lanes, of 4 and 2 64-bit ones: pb_clones_isa_cap): all
 * must give the same bytes.  Before each call the lanes rotated by one go
 * through, so that a lane a version left out would hold another lane's
 * values, not its own from the call before. */
static void wm_both(const struct pb_wm_codes *codes, const int32_t *mult, size_t n_mult, const int64_t *pos,
                    const int64_t *total, const int *pcts, double *auroc, double *cov)
{
  enum { L = PB_WM_LANES };
  uint16_t *m16 = malloc(n_mult * sizeof *m16), *r16 = malloc(n_mult * sizeof *r16);
  int32_t *rot = malloc(n_mult * sizeof *rot);
  int64_t rpos[L], rtotal[L];
  int fits = 1;
  for (size_t i = 0; i < n_mult; i++) {
    fits &= mult[i] >= 0 && mult[i] <= 65535, m16[i] = (uint16_t)mult[i];
    rot[i] = mult[i - i % L + (i + 1) % L], r16[i] = (uint16_t)rot[i];
  }
  for (int l = 0; l < L; l++) rpos[l] = pos[(l + 1) % L], rtotal[l] = total[(l + 1) % L];
  double a2[L], c2[L * 3];
  int first = 1;
  for (int level = 2; level >= 0; level--) /* passes of at most 8 << level 16-bit lanes */
    for (int h = fits; h >= 0; h--) {
      const int cap = 8 << level;
      double *a = first ? auroc : a2, *c = first ? cov : c2;
      pb_screen_weighted_metrics(codes, rot, h ? r16 : NULL, rpos, rtotal, pcts, 3, a, c);
      pb_clones_isa_cap(level);
      pb_screen_weighted_metrics(codes, mult, h ? m16 : NULL, pos, total, pcts, 3, a, c);
      pb_clones_isa_cap(2);
      for (int l = 0; l < L && !first; l++)
        ck_assert_msg(memcmp(&auroc[l], &a2[l], sizeof a2[l]) == 0 &&
                          memcmp(&cov[3 * l], &c2[3 * l], 3 * sizeof *c2) == 0,
                      "lane %d, passes of at most %d lanes, %d-bit: auroc %.17g, first %.17g", l, cap, h ? 16 : 64,
                      a2[l], auroc[l]);
      first = 0;
    }
  free(m16), free(r16), free(rot);
}

/* Every image its own class: lane l's weights w[l][i] become mult[i * LANES + l]; the
 * weighted totals as the caller sums them. */
static void wm_run_pcts(const double *score, const uint8_t *y, const int32_t *order, int32_t k, int32_t n,
                        int32_t (*w)[40], const int *pcts, double *auroc, double *cov)
{
  enum { NMAX = 40 };
  int32_t label[NMAX], mult[NMAX * PB_WM_LANES];
  uint32_t words[PB_WM_CODE_WORDS(NMAX)];
  struct pb_wm_codes codes;
  int64_t pos[PB_WM_LANES] = {0}, total[PB_WM_LANES] = {0};
  for (int32_t i = 0; i < n; i++) label[i] = i;
  for (int l = 0; l < PB_WM_LANES; l++) {
    for (int32_t i = 0; i < n; i++) mult[i * PB_WM_LANES + l] = w[l][i];
    for (int32_t j = 0; j < k; j++) {
      total[l] += w[l][order[j]];
      pos[l] += y[order[j]] ? w[l][order[j]] : 0;
    }
  }
  pb_screen_weighted_codes(score, y, label, order, k, words, &codes);
  wm_both(&codes, mult, (size_t)n * PB_WM_LANES, pos, total, pcts, auroc, cov);
}

static void wm_run(const double *score, const uint8_t *y, const int32_t *order, int32_t k, int32_t n,
                   int32_t (*w)[40], double *auroc, double *cov)
{
  const int pcts[3] = {10, 20, 30};
  wm_run_pcts(score, y, order, k, n, w, pcts, auroc, cov);
}

/* Class weights act as replication: each lane's weighted metrics equal the
 * unweighted ones (pb_screen_auroc, pb_screen_coverage) on the explicitly
 * replicated data, whatever the other lanes hold. */
START_TEST(test_weighted_equals_replicated)
{
  struct pb_rng r;
  pb_rng_init(&r, test_seed(), 77, 0, 0);
  enum { NMAX = 40 };
  double score[NMAX], rep_s[NMAX * 4];
  uint8_t y[NMAX], rep_y[NMAX * 4];
  int32_t w[PB_WM_LANES][NMAX], order[NMAX];
  int checked = 0;
  for (int trial = 0; trial < 3000; trial++) {
    int32_t n = 1 + (int32_t)pb_rng_below(&r, NMAX), levels = 1 + (int32_t)pb_rng_below(&r, 6), k = 0;
    for (int32_t i = 0; i < n; i++) {
      score[i] = pb_rng_below(&r, 8) == 0 ? NAN : (double)pb_rng_below(&r, (uint32_t)levels) / 4.0; /* heavy ties */
      y[i] = (uint8_t)pb_rng_below(&r, 2);
      for (int l = 0; l < PB_WM_LANES; l++) w[l][i] = (int32_t)pb_rng_below(&r, 4); /* 0..3 copies */
      if (!isnan(score[i])) order[k++] = i;
    }
    g_score = score;
    qsort(order, (size_t)k, sizeof *order, by_score);
    double auroc[PB_WM_LANES], cov[PB_WM_LANES * 3];
    wm_run(score, y, order, k, n, w, auroc, cov);
    for (int l = 0; l < PB_WM_LANES; l++) {
      int32_t m = 0;
      for (int32_t i = 0; i < n; i++)
        for (int32_t c = 0; c < w[l][i] && !isnan(score[i]); c++) rep_s[m] = score[i], rep_y[m++] = y[i];
      double b = m ? pb_screen_auroc(rep_s, rep_y, m) : NAN;
      ck_assert_msg(isnan(auroc[l]) == isnan(b) && (isnan(b) || fabs(auroc[l] - b) < 1e-12),
                    "trial %d lane %d auroc %.17g vs %.17g", trial, l, auroc[l], b);
      for (int q = 0; q < 3; q++) {
        double d = m ? pb_screen_coverage(rep_s, rep_y, m, 10 * (q + 1)) : NAN;
        ck_assert_msg(isnan(cov[l * 3 + q]) == isnan(d) && (isnan(d) || fabs(cov[l * 3 + q] - d) < 1e-12),
                      "trial %d lane %d coverage %d%%: %.17g vs %.17g", trial, l, 10 * (q + 1), cov[l * 3 + q], d);
      }
      checked += !isnan(b);
    }
  }
  ck_assert(checked > 4000);
  /* hand case: scores 3 (fail), 2 (keep) x2 weight, 2 (fail), 1 (keep); AUROC pairs: fail3 beats 3 keeps
   * (weight 3), fail2 ties two keeps (weight 2, 1/2 each) and beats one: (3 + 1 + 1) / (2 * 3) = 5/6.
   * W = 5, k = round(.3 * 5) = 2 (1.5 rounds up): the fail at 3, then 1 of the 3 weight units tied at 2, one
   * of which is a failure: covered = 1 + 1/3, over 2 failures = 2/3 */
  const double hs[4] = {3, 2, 2, 1};
  const uint8_t hy[4] = {1, 0, 1, 0};
  const int32_t ho[4] = {3, 1, 2, 0};
  int32_t hw[PB_WM_LANES][NMAX] = {{0}};
  for (int l = 0; l < PB_WM_LANES; l++) hw[l][0] = 1, hw[l][1] = 2, hw[l][2] = 1, hw[l][3] = 1;
  double auroc[PB_WM_LANES], cov[PB_WM_LANES * 3];
  wm_run(hs, hy, ho, 4, 4, hw, auroc, cov);
  ck_assert(fabs(auroc[0] - 5.0 / 6) < 1e-15);
  ck_assert(fabs(cov[2] - 2.0 / 3) < 1e-15);
}
END_TEST

/* Long weightings: a few thousand images in long tie groups and runs of
 * zero weight, so the budgets fall far into the pass, lanes reach them many
 * snapshots apart and groups span snapshots; each lane against the
 * replicated data as above. */
START_TEST(test_weighted_long)
{
  struct pb_rng r;
  pb_rng_init(&r, test_seed(), 78, 0, 0);
  enum { N = 3000 };
  double *score = malloc(N * sizeof *score), *rep_s = malloc(4 * N * sizeof *rep_s);
  uint8_t *y = malloc(N), *rep_y = malloc(4 * N);
  int32_t *order = malloc(N * sizeof *order), *label = malloc(N * sizeof *label);
  int32_t *mult = malloc((size_t)N * PB_WM_LANES * sizeof *mult);
  uint32_t *words = malloc(PB_WM_CODE_WORDS(N) * sizeof *words);
  struct pb_wm_codes codes;
  for (int trial = 0; trial < 40; trial++) {
    int32_t n = 200 + (int32_t)pb_rng_below(&r, N - 199), levels = 1 + (int32_t)pb_rng_below(&r, trial % 2 ? 40 : n);
    int64_t pos[PB_WM_LANES] = {0}, total[PB_WM_LANES] = {0};
    for (int32_t i = 0; i < n; i++) {
      score[i] = (double)pb_rng_below(&r, (uint32_t)levels);
      y[i] = pb_rng_below(&r, 4) == 0;
      label[i] = i;
      order[i] = i;
      for (int l = 0; l < PB_WM_LANES; l++) /* lane l drops a stretch of images */
        mult[i * PB_WM_LANES + l] = i > l * n / 20 && i < l * n / 10 ? 0 : (int32_t)pb_rng_below(&r, 4);
    }
    g_score = score;
    qsort(order, (size_t)n, sizeof *order, by_score);
    for (int l = 0; l < PB_WM_LANES; l++)
      for (int32_t i = 0; i < n; i++) {
        total[l] += mult[i * PB_WM_LANES + l];
        pos[l] += y[i] ? mult[i * PB_WM_LANES + l] : 0;
      }
    const int pcts[3] = {10, 20, 30};
    double auroc[PB_WM_LANES], cov[PB_WM_LANES * 3];
    pb_screen_weighted_codes(score, y, label, order, n, words, &codes);
    wm_both(&codes, mult, (size_t)n * PB_WM_LANES, pos, total, pcts, auroc, cov);
    for (int l = 0; l < PB_WM_LANES; l++) {
      int32_t m = 0;
      for (int32_t i = 0; i < n; i++)
        for (int32_t c = 0; c < mult[i * PB_WM_LANES + l]; c++) rep_s[m] = score[i], rep_y[m++] = y[i];
      double b = pb_screen_auroc(rep_s, rep_y, m);
      ck_assert_msg(isnan(auroc[l]) == isnan(b) && (isnan(b) || fabs(auroc[l] - b) < 1e-12),
                    "trial %d lane %d auroc %.17g vs %.17g", trial, l, auroc[l], b);
      for (int q = 0; q < 3; q++) {
        double d = pb_screen_coverage(rep_s, rep_y, m, pcts[q]);
        ck_assert_msg(isnan(cov[l * 3 + q]) == isnan(d) && (isnan(d) || fabs(cov[l * 3 + q] - d) < 1e-12),
                      "trial %d lane %d coverage %d%%: %.17g vs %.17g", trial, l, pcts[q], cov[l * 3 + q], d);
      }
    }
  }
  free(score), free(rep_s), free(y), free(rep_y), free(order), free(label), free(mult), free(words);
}
END_TEST

/* n images with scores of `levels` tied values and random outcomes, and
 * their order by score. */
static void wm_tied_images(struct pb_rng *r, int32_t n, uint32_t levels, double *score, uint8_t *y, int32_t *order)
{
  for (int32_t i = 0; i < n; i++) {
    score[i] = (double)pb_rng_below(r, levels);
    y[i] = (uint8_t)pb_rng_below(r, 2);
    order[i] = i;
  }
  g_score = score;
  qsort(order, (size_t)n, sizeof *order, by_score);
}

/* n weights lo .. lo + span - 1, the first raised by up to 9 so that their
 * total (returned) is a multiple of 10: every budget of a multiple of 10 %
 * then scales exactly with the weights. */
static int64_t wm_weights10(struct pb_rng *r, int32_t n, int32_t lo, uint32_t span, int32_t *w)
{
  int64_t sum = 0;
  for (int32_t i = 0; i < n; i++) sum += w[i] = lo + (int32_t)pb_rng_below(r, span);
  w[0] += (int32_t)((10 - sum % 10) % 10);
  return sum + (10 - sum % 10) % 10;
}

/* Totals above 65,535 take the 64-bit lanes, totals of 2^31 or more the
 * 128-bit pass: weights scaled by 2^12 or 2^26 (totals a multiple of 10, so
 * every budget scales exactly) give exactly the unscaled lane's AUROC and
 * coverage (32-bit lanes), both being ratios of weights. */
START_TEST(test_weighted_wide)
{
  struct pb_rng r;
  pb_rng_init(&r, test_seed(), 78, 0, 0);
  enum { NMAX = 40 };
  double score[NMAX];
  uint8_t y[NMAX];
  int32_t w[PB_WM_LANES][NMAX], order[NMAX];
  for (int trial = 0; trial < 1000; trial++) {
    int shift = trial % 2 ? 12 : 26; /* totals 40 x 2^12 .. 320 x 2^12 < 2^31, or at least 40 x 2^26 > 2^31 */
    const int32_t n = 20;
    wm_tied_images(&r, n, 1 + pb_rng_below(&r, 10), score, y, order);
    wm_weights10(&r, n, 2, 6, w[0]); /* 2..7, at most 16 after the adjustment */
    for (int l = 1; l < PB_WM_LANES; l++)
      for (int32_t i = 0; i < n; i++) w[l][i] = w[0][i] << shift; /* each below 2^31 */
    double small[PB_WM_LANES], csmall[PB_WM_LANES * 3], wide[PB_WM_LANES], cwide[PB_WM_LANES * 3];
    int32_t w0[PB_WM_LANES][NMAX];
    for (int l = 0; l < PB_WM_LANES; l++) memcpy(w0[l], w[0], sizeof w0[l]);
    wm_run(score, y, order, n, n, w0, small, csmall); /* every lane unscaled: the 64-bit pass */
    wm_run(score, y, order, n, n, w, wide, cwide);
    for (int l = 0; l < PB_WM_LANES; l++) {
      ck_assert_msg(isnan(wide[l]) == isnan(small[0]) && (isnan(small[0]) || wide[l] == small[0]),
                    "trial %d lane %d auroc %.17g vs %.17g", trial, l, wide[l], small[0]);
      for (int q = 0; q < 3; q++)
        ck_assert_msg(isnan(cwide[l * 3 + q]) == isnan(csmall[q]) && (isnan(csmall[q]) || cwide[l * 3 + q] == csmall[q]),
                      "trial %d lane %d coverage %d: %.17g vs %.17g", trial, l, q, cwide[l * 3 + q], csmall[q]);
    }
  }
}
END_TEST

/* 16-bit lanes over their whole range: every weight of a lane scaled so
 * that its total lies in (65,535 - 150, 65,535], and budgets of 10, 50 and
 * 90 % (totals a multiple of 10, so each scales exactly), so that a lane's
 * weight so far and a budget differ by 2^15 or more, where a 16-bit
 * comparison taken as signed would order them wrongly; each lane gives
 * the AUROC (a ratio of integers, both scaled by scale^2: exactly) and
 * coverage (rounded differently: to 1e-12) of its unscaled weights, the
 * lanes with the 16-bit copy as without it (wm_both). */
START_TEST(test_weighted_full16)
{
  struct pb_rng r;
  pb_rng_init(&r, test_seed(), 79, 0, 0);
  enum { NMAX = 40 };
  double score[NMAX];
  uint8_t y[NMAX];
  int32_t w[PB_WM_LANES][NMAX], w1[PB_WM_LANES][NMAX], order[NMAX];
  const int pcts[3] = {10, 50, 90};
  for (int trial = 0; trial < 1000; trial++) {
    const int32_t n = 20;
    wm_tied_images(&r, n, 1 + pb_rng_below(&r, 12), score, y, order);
    for (int l = 0; l < PB_WM_LANES; l++) {
      const int64_t sum = wm_weights10(&r, n, 1, 7, w[l]); /* 1..7: at most 150 */
      const int32_t scale = (int32_t)(65535 / sum);          /* total x scale above 65,535 - 150 */
      for (int32_t i = 0; i < n; i++) w1[l][i] = w[l][i] * scale;
    }
    double a[PB_WM_LANES], c[PB_WM_LANES * 3], a1[PB_WM_LANES], c1[PB_WM_LANES * 3];
    wm_run_pcts(score, y, order, n, n, w, pcts, a, c);
    wm_run_pcts(score, y, order, n, n, w1, pcts, a1, c1);
    for (int l = 0; l < PB_WM_LANES; l++) {
      ck_assert_msg(isnan(a1[l]) == isnan(a[l]) && (isnan(a[l]) || a1[l] == a[l]),
                    "trial %d lane %d auroc %.17g vs %.17g", trial, l, a1[l], a[l]);
      for (int q = 0; q < 3; q++) {
        const double x = c1[l * 3 + q], want = c[l * 3 + q];
        ck_assert_msg(isnan(x) == isnan(want) && (isnan(want) || fabs(x - want) < 1e-12),
                      "trial %d lane %d coverage %d%%: %.17g vs %.17g", trial, l, pcts[q], x, want);
      }
    }
  }
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("resample");
  TCase *tc = tcase_create("bootstrap");
  tcase_add_test(tc, test_multiplicities);
  tcase_add_test(tc, test_percentile);
  tcase_add_test(tc, test_percentile_select);
  tcase_add_test(tc, test_known_distribution);
  tcase_add_test(tc, test_against_reference);
  suite_add_tcase(s, tc);
  tc = tcase_create("nulls");
  tcase_add_test(tc, test_classes);
  suite_add_tcase(s, tc);
  /* kernels that make no MPI call: tests/mpi/unit_ranks.sh leaves them out
   * at 2 and 3 ranks (CK_EXCLUDE_TAGS=serial), where they would only repeat */
  tc = tcase_create("kernels");
  tcase_set_tags(tc, "serial");
  tcase_add_test(tc, test_weighted_equals_replicated);
  tcase_add_test(tc, test_weighted_wide);
  tcase_add_test(tc, test_weighted_full16);
  tcase_add_test(tc, test_weighted_long);
  tcase_add_test(tc, test_permutations);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(suite()); }
