/* Unit tests for isotonic calibration and the probability-gap groups of
 * seed 000 Appendix F (src/bounds/bounds_kernel_iso.c,
 * src/bounds/bounds_kernel_gap.c) and for F.1's observation on the quantile
 * protocol.  Expected values are worked by hand in the comments; scores are
 * dyadic (multiples of 1/16 or 1/8) so every comparison is exact.  The
 * random checks use the seed PB_TEST_SEED (default 20260908), printed. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pairbound/calibration.h"
#include "pairbound/probsum.h"

#include "testrng.h"

#define TOL 1e-12

/* Six development records, ascending scores 1/8 .. 6/8, correct 1 0 0 1 0 1:
 * two violations.  PAV: (1/8: 1) then (2/8: 0) violates, pooled 1/2; 3/8 (0)
 * violates 1/2, pooled 1/3 over three records; 4/8 (1) fine; 5/8 (0)
 * violates, pooled with 4/8 to 1/2, which 1/3 does not violate; 6/8 (1)
 * fine.  Blocks: from 1/8 value 1/3, from 4/8 value 1/2, from 6/8 value 1. */
START_TEST(test_pav_hand)
{
  const float s[6] = {0.375f, 0.125f, 0.75f, 0.5f, 0.25f, 0.625f}; /* unsorted on purpose */
  const uint8_t c[6] = {0, 1, 1, 1, 0, 0};
  struct pb_iso f;
  ck_assert_int_eq(pb_bounds_iso_fit(s, c, 6, &f), 0);
  ck_assert_int_eq(f.n, 3);
  const double x[3] = {0.125, 0.5, 0.75}, v[3] = {1.0 / 3.0, 0.5, 1.0};
  for (int b = 0; b < 3; b++) {
    ck_assert(f.x[b] == x[b]);
    ck_assert_msg(fabs(f.v[b] - v[b]) < TOL, "block %d value %g, expected %g", b, f.v[b], v[b]);
  }
  /* the step function: a block's value from its lowest score up to the next block's;
   * below the lowest development score the first block's */
  const float at[7] = {0.0625f, 0.125f, 0.4375f, 0.5f, 0.6875f, 0.75f, 0.9375f};
  const double want[7] = {1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 0.5, 0.5, 1.0, 1.0};
  for (int i = 0; i < 7; i++) ck_assert(fabs(pb_bounds_iso_apply(&f, at[i]) - want[i]) < TOL);
  pb_bounds_iso_free(&f);

  /* tied scores are pooled first: (2/8: 1), (4/8: 1, 0) -> 1 then 1/2 violates,
   * one block 2/3 from 2/8 */
  const float t[3] = {0.5f, 0.5f, 0.25f};
  const uint8_t tc[3] = {1, 0, 1};
  ck_assert_int_eq(pb_bounds_iso_fit(t, tc, 3, &f), 0);
  ck_assert_int_eq(f.n, 1);
  ck_assert(f.x[0] == 0.25 && fabs(f.v[0] - 2.0 / 3.0) < TOL);
  pb_bounds_iso_free(&f);

  /* equal shares are pooled too (the values stay; each block is one step):
   * two all-correct scores are one block of value 1 */
  const float e[2] = {0.25f, 0.5f};
  const uint8_t ec[2] = {1, 1};
  ck_assert_int_eq(pb_bounds_iso_fit(e, ec, 2, &f), 0);
  ck_assert_int_eq(f.n, 1);
  ck_assert(f.x[0] == 0.25 && f.v[0] == 1.0);
  pb_bounds_iso_free(&f);
  ck_assert_int_eq(pb_bounds_iso_fit(e, ec, 0, &f), -1);
  ck_assert_int_eq(f.n, 0);
  ck_assert(isnan(pb_bounds_iso_apply(&f, 0.5f)));
}
END_TEST

/* Q80 decisions of scores x under threshold t. */
static void decisions(const double *x, int n, double t, uint8_t *z)
{
  for (int i = 0; i < n; i++) z[i] = x[i] >= t;
}

/* F.1: under the quantile protocol a strictly increasing calibrator (Platt
 * with a > 0) changes no decision, on development or new scores. */
START_TEST(test_q80_strictly_increasing)
{
  rng_state = test_seed() ^ 0xf1f1u;
  enum { N = 200, NE = 300 };
  for (int rep = 0; rep < 50; rep++) {
    float s[N], se[NE];
    uint8_t c[N], z0[NE], z1[NE];
    double raw[N], cal[N], xe[NE], ce[NE], t0[PB_F1_N_PROTOCOLS], t1[PB_F1_N_PROTOCOLS];
    for (int i = 0; i < N; i++) s[i] = (float)rng_int(1, 15) / 16.0f, c[i] = rng_int(0, 3) != 0;
    for (int i = 0; i < NE; i++) se[i] = (float)rng_int(1, 15) / 16.0f;
    const double ab[2] = {0.5 + rng_int(0, 8) / 4.0, rng_int(-8, 8) / 4.0};
    for (int i = 0; i < N; i++) raw[i] = s[i], cal[i] = pb_bounds_platt_apply(ab, s[i]);
    for (int i = 0; i < NE; i++) xe[i] = se[i], ce[i] = pb_bounds_platt_apply(ab, se[i]);
    pb_bounds_f1_thresholds(raw, c, N, t0);
    pb_bounds_f1_thresholds(cal, c, N, t1);
    decisions(xe, NE, t0[PB_F1_Q80], z0);
    decisions(ce, NE, t1[PB_F1_Q80], z1);
    for (int i = 0; i < NE; i++) ck_assert_msg(z0[i] == z1[i], "rep %d record %d: decision changed", rep, i);
  }
}
END_TEST

/* Isotonic regression is only non-decreasing: under Q80 pooling can tie
 * scores below the raw threshold with it.  Ten development scores 0.5,
 * 0.55, ..., 0.95 (ascending), wrong at 0.55 and 0.65.  Raw Q80: the 8th
 * largest, 0.6.  PAV: (0.5, 0.55) pool to 1/2, (0.6, 0.65) pool to 1/2 and
 * then with the first block (equal shares), the rest pool to 1: two steps.
 * The isotonic threshold is iso(0.6) = 1/2, so 0.5 and 0.55 (rejected raw) are
 * accepted: clean-development coverage 10/10, not 8/10; a new score 0.52 is
 * accepted too, and so is 0.45, below every development score. */
START_TEST(test_q80_isotonic_ties)
{
  float s[10];
  uint8_t c[10];
  double raw[10], iso[10], t0[PB_F1_N_PROTOCOLS], t1[PB_F1_N_PROTOCOLS];
  for (int i = 0; i < 10; i++) s[i] = 0.5f + 0.05f * (float)i, c[i] = !(i == 1 || i == 3);
  struct pb_iso f;
  ck_assert_int_eq(pb_bounds_iso_fit(s, c, 10, &f), 0);
  ck_assert_int_eq(f.n, 2);
  ck_assert(f.x[0] == (double)s[0] && f.v[0] == 0.5 && f.x[1] == (double)s[4] && f.v[1] == 1.0);
  for (int i = 0; i < 10; i++) raw[i] = s[i], iso[i] = pb_bounds_iso_apply(&f, s[i]);
  pb_bounds_f1_thresholds(raw, c, 10, t0);
  pb_bounds_f1_thresholds(iso, c, 10, t1);
  ck_assert(t0[PB_F1_Q80] == (double)s[2]);
  ck_assert(t1[PB_F1_Q80] == 0.5);
  int acc0 = 0, acc1 = 0;
  for (int i = 0; i < 10; i++) acc0 += raw[i] >= t0[PB_F1_Q80], acc1 += iso[i] >= t1[PB_F1_Q80];
  ck_assert_int_eq(acc0, 8);
  ck_assert_int_eq(acc1, 10);
  ck_assert(!(0.52 >= t0[PB_F1_Q80]) && pb_bounds_iso_apply(&f, 0.52f) >= t1[PB_F1_Q80]);
  ck_assert(pb_bounds_iso_apply(&f, 0.45f) >= t1[PB_F1_Q80]);
  pb_bounds_iso_free(&f);
}
END_TEST

/* What does hold for isotonic regression under Q80: it never rejects a
 * score that the raw threshold accepts (every change is an added acceptance),
 * on random development records and new scores. */
START_TEST(test_q80_isotonic_only_adds)
{
  rng_state = test_seed() ^ 0x150u;
  enum { N = 120, NE = 200 };
  int changed = 0;
  for (int rep = 0; rep < 200; rep++) {
    float s[N], se[NE];
    uint8_t c[N];
    double raw[N], iso[N], t0[PB_F1_N_PROTOCOLS], t1[PB_F1_N_PROTOCOLS];
    for (int i = 0; i < N; i++) {
      const int k = rng_int(1, 15); /* correct more often at higher scores */
      s[i] = (float)k / 16.0f;
      c[i] = rng_int(0, 15) < k + 2;
    }
    for (int i = 0; i < NE; i++) se[i] = (float)rng_int(0, 16) / 16.0f;
    struct pb_iso f;
    pb_bounds_iso_fit(s, c, N, &f);
    for (int i = 0; i < N; i++) raw[i] = s[i], iso[i] = pb_bounds_iso_apply(&f, s[i]);
    pb_bounds_f1_thresholds(raw, c, N, t0);
    pb_bounds_f1_thresholds(iso, c, N, t1);
    for (int i = 0; i < NE; i++) {
      const int z0 = se[i] >= t0[PB_F1_Q80], z1 = pb_bounds_iso_apply(&f, se[i]) >= t1[PB_F1_Q80];
      ck_assert_msg(!(z0 && !z1), "rep %d: isotonic rejects %g, accepted raw", rep, (double)se[i]);
      changed += z1 != z0;
    }
    pb_bounds_iso_free(&f);
  }
  ck_assert_msg(changed > 0, "no decision changed: the check would not see a removal either");
}
END_TEST

/* Terciles of seven development-error gaps with ties on both boundaries:
 * sorted 1/8, 2/8, 2/8, 2/8, 4/8, 4/8, 6/8.  Positions (n - 1) / 3 = 2 and
 * 2 (n - 1) / 3 = 4 (0-based) are order statistics: cuts 2/8 and 4/8.  The
 * three gaps of 2/8 go to the middle group, the two of 4/8 to the high one. */
START_TEST(test_gap_terciles_ties)
{
  double g[7] = {0.5, 0.25, 0.75, 0.25, 0.125, 0.5, 0.25};
  double cut[2];
  ck_assert_int_eq(pb_bounds_gap_cuts(g, 7, cut), 0);
  ck_assert(cut[0] == 0.25 && cut[1] == 0.5);
  const double x[7] = {0.125, 0.25, 0.25, 0.25, 0.5, 0.5, 0.75};
  const int want[7] = {PB_GAP_LOW, PB_GAP_MID, PB_GAP_MID, PB_GAP_MID, PB_GAP_HIGH, PB_GAP_HIGH, PB_GAP_HIGH};
  for (int i = 0; i < 7; i++) ck_assert_int_eq(pb_bounds_gap_group(x[i], cut), want[i]);
  /* six distinct gaps 1/8 .. 6/8: positions 5/3 and 10/3, linear interpolation:
   * 2/8 + (2/3)(1/8) = 1/3 and 4/8 + (1/3)(1/8) = 13/24; two gaps per group */
  double h[6] = {0.75, 0.625, 0.5, 0.375, 0.25, 0.125};
  ck_assert_int_eq(pb_bounds_gap_cuts(h, 6, cut), 0);
  ck_assert(fabs(cut[0] - 1.0 / 3.0) < TOL && fabs(cut[1] - 13.0 / 24.0) < TOL);
  int n[PB_GAP_N_GROUPS] = {0, 0, 0};
  for (int i = 0; i < 6; i++) n[pb_bounds_gap_group(h[i], cut)]++;
  ck_assert(n[0] == 2 && n[1] == 2 && n[2] == 2);
  /* five errors: the model is excluded */
  double e[5] = {0.1, 0.2, 0.3, 0.4, 0.5};
  ck_assert_int_eq(pb_bounds_gap_cuts(e, 5, cut), -1);
  ck_assert(isnan(cut[0]) && isnan(cut[1]));
}
END_TEST

/* One cell's gap counts: five images of label 1; clean predictions 1 2 3 4 2
 * (image 0 correct: no event); groups low, mid, mid, high, low; perturbed
 * predictions 2 2 1 4 3: image 1 keeps its wrong answer (mid, same), image 2
 * turns correct (mid, correct), image 3 keeps it (high, same), image 4
 * changes to another wrong answer (low, neither). */
START_TEST(test_gap_cell_hand)
{
  const int32_t label[5] = {1, 1, 1, 1, 1}, p0[5] = {1, 2, 3, 4, 2}, p1[5] = {2, 2, 1, 4, 3};
  const int8_t group[5] = {PB_GAP_LOW, PB_GAP_MID, PB_GAP_MID, PB_GAP_HIGH, PB_GAP_LOW};
  struct pb_cell_view in = {.index = -1, .n = 5, .label = label, .pred0 = p0, .pred1 = p1};
  int64_t o[PB_GAP_N_GROUPS][PB_GAP_N_COUNTS];
  pb_bounds_gap_cell(&in, group, o);
  const int64_t want[3][3] = {{1, 0, 0}, {2, 1, 1}, {1, 1, 0}};
  for (int g = 0; g < 3; g++)
    for (int q = 0; q < 3; q++) ck_assert_msg(o[g][q] == want[g][q], "group %d count %d: %lld", g, q, (long long)o[g][q]);
}
END_TEST

/* Per-record summaries and the multiclass Brier score (Appendix F.1) of
 * (0.5, 0.25, 0.25) by hand: entropy 0.5 ln 2 + 2 (0.25 ln 4) = 1.5 ln 2,
 * collision 0.25 + 2 (1/16) = 0.375; with the true class at 0.25 the Brier
 * score is (0.5)^2 + (0.75)^2 + (0.25)^2 = 0.875 = 1 - 2 (0.25) + 0.375.
 * The same vector as one listed class and a tail of two at 0.25. */
START_TEST(test_summaries_hand)
{
  const double p[3] = {0.5, 0.25, 0.25};
  double h, c;
  pb_probsum_vector(p, 3, 0, 0.0, &h, &c);
  ck_assert_msg(fabs(h - 1.5 * log(2.0)) < TOL, "entropy %.17g", h);
  ck_assert(c == 0.375);
  pb_probsum_vector(p, 1, 2, 0.25, &h, &c);
  ck_assert_msg(fabs(h - 1.5 * log(2.0)) < TOL, "entropy %.17g", h);
  ck_assert(c == 0.375);
  ck_assert(pb_bounds_brier_multiclass(0.25f, 0.375f) == 0.875);
  ck_assert(pb_bounds_brier_multiclass(1.0f, 1.0f) == 0.0); /* a sure, correct prediction */
  /* top-1 list (0.5) of 3 classes: t = 0.5 over two classes of at most 0.5: collision in [0.25, 0.25 + 0.25],
   * entropy in [0.5 ln 2, 0.5 ln 2 + 0.5 ln(2 / 0.5)] = [0.5 ln 2, 1.5 ln 2] */
  const float tk[1] = {0.5f};
  double hl, hh, cl, ch;
  pb_probsum_topk_bounds(tk, 1, 3, &hl, &hh, &cl, &ch);
  ck_assert(fabs(hl - 0.5 * log(2.0)) < TOL && fabs(hh - 1.5 * log(2.0)) < TOL);
  ck_assert(cl == 0.25 && ch == 0.5);
}
END_TEST

static Suite *calibration_suite(void)
{
  Suite *s = suite_create("calibration");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_pav_hand);
  tcase_add_test(tc, test_summaries_hand);
  tcase_add_test(tc, test_q80_strictly_increasing);
  tcase_add_test(tc, test_q80_isotonic_ties);
  tcase_add_test(tc, test_q80_isotonic_only_adds);
  tcase_add_test(tc, test_gap_terciles_ties);
  tcase_add_test(tc, test_gap_cell_hand);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_forked(calibration_suite()); }
