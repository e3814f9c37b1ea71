/* Unit tests of the monotone score maps (seed 001 Appendix Q,
 * src/fragility/fragility_kernel_qmap.c) and of the helpers of Tables 18
 * and 9 (src/fragility/fragility_kernel_diag.c).  Images are placed so that
 * the fitted partition is known; every expected value is worked out here by
 * hand: Platt's fit on two scores (where it fits both target means exactly),
 * bins, merges, ECE and NLL of a few images, trapezoids on a three-radius
 * grid, quartile ranks.  The random unit draws from PB_TEST_SEED (default
 * 20260908), printed. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/fragility.h"
#include "testrng.h"

#define CAP 4000

struct imgs {
  int32_t n;
  double s[CAP], u[CAP];
  uint8_t c[CAP], part[CAP];
};

static double rng_unif(void) { return ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0; }

static void put(struct imgs *m, double s, double u, int correct, int part)
{
  ck_assert_int_lt(m->n, CAP);
  m->s[m->n] = s, m->u[m->n] = u, m->c[m->n] = (uint8_t)correct, m->part[m->n++] = (uint8_t)part;
}

static struct pb_fragility_input input(const struct imgs *m)
{
  return (struct pb_fragility_input){m->n, m->s, m->u, m->c, m->part, 0, {NULL, NULL}};
}

/* J bins, K groups, the grid 0.25, 1, 4 (4^(1/2) = 1 exactly at 4 digits), no permutation null. */
static void opts(struct pb_fragility_options *o, int J, int K)
{
  pb_fragility_options_default(o);
  o->n_bins = J, o->n_groups = K, o->n_null = 0;
  o->n_grid = 3, o->rho_min = 0.25, o->rho_max = 4;
}

/* Map k of arm a in a unit record. */
static const double *qrec(const double *rec, int a, int k)
{
  return rec + ((size_t)a * PB_FRAGILITY_QMAPS + (size_t)k) * PB_FQ_FIXED;
}

/* sigma(8 logit x) written as odds: x^8 / (x^8 + (1 - x)^8). */
static double sharp(double x) { return pow(x, 8) / (pow(x, 8) + pow(1 - x, 8)); }

START_TEST(test_qmap_apply)
{
  const struct pb_fragility_qmap two = {0, 0, 2}, shift = {0, log(2), 1}, pw = {1, NAN, 4};
  ck_assert(fabs(pb_fragility_qmap_apply(&two, 0.75) - 0.9) < 1e-15);        /* odds 3 squared: 9 / 10 */
  ck_assert(fabs(pb_fragility_qmap_apply(&shift, 0.5) - 2.0 / 3) < 1e-15);   /* odds 1 doubled */
  ck_assert(pb_fragility_qmap_apply(&two, 0) == 0 && pb_fragility_qmap_apply(&two, 1) == 1);
  ck_assert(pb_fragility_qmap_apply(&pw, 0.5) == 0.0625);
  struct pb_fragility_qmap m;
  pb_fragility_qmap_stress(PB_FRAGILITY_QMAP_SHARP, &m);
  ck_assert(m.power == 0 && m.a == 0 && m.b == 8);
  ck_assert(fabs(pb_fragility_qmap_apply(&m, 0.6) - sharp(0.6)) < 1e-15);
  pb_fragility_qmap_stress(PB_FRAGILITY_QMAP_POWER, &m);
  ck_assert(m.power == 1 && m.b == 4);
}
END_TEST

/* Two scores: with two parameters the fit matches each score's mean target exactly.  Scores 0.5 (logit 0;
 * 1 correct, 1 wrong) and 0.75 (logit ln 3; 3 correct, 1 wrong): N+ = 4, N- = 2, targets 5/6 and 1/4, mean
 * targets 13/24 and 11/16, so a = logit(13/24) = ln(13/11) and a + b ln 3 = logit(11/16) = ln(11/5). */
START_TEST(test_qmap_fit)
{
  const double s[3] = {0.5, 0.75, 1.0}, nc[3] = {1, 3, 3}, nw[3] = {1, 1, 2};
  struct pb_fragility_qmap m, m1;
  ck_assert_int_eq(pb_fragility_qmap_fit(2, s, nc, nw, &m), 1);
  const double a = log(13.0 / 11), b = (log(11.0 / 5) - a) / log(3.0);
  ck_assert_msg(fabs(m.a - a) < 1e-9 && fabs(m.b - b) < 1e-9, "a %.17g b %.17g, want %.17g %.17g", m.a, m.b, a, b);
  ck_assert(m.power == 0);
  /* records at S = 1 take no part: every such map sends them to 1 */
  ck_assert_int_eq(pb_fragility_qmap_fit(3, s, nc, nw, &m1), 1);
  ck_assert(m1.a == m.a && m1.b == m.b);
  /* one class: the targets are constant, the minimum is b = 0, not a strictly increasing map */
  const double all[2] = {2, 4}, none[2] = {0, 0};
  ck_assert_int_eq(pb_fragility_qmap_fit(2, s, all, none, &m), 0);
  ck_assert(isnan(m.a) && isnan(m.b));
  /* accuracy falling with the score: mean targets (3 tp + tn) / 4 = 11/16 > (tp + tn) / 2 = 13/24, b < 0 */
  const double fc[2] = {3, 1}, fw[2] = {1, 1};
  ck_assert_int_eq(pb_fragility_qmap_fit(2, s, fc, fw, &m), 0);
}
END_TEST

/* Two bins (J = 2), one group (K = 1).  Part A {0.2 w, 0.3 c, 0.6 w, 0.7 c} fixes arm A's edge at its
 * sorted[2] = 0.6; the rate part B {0.25 c, 0.35 w, 0.65 c, 0.8 c} has bins {0, 0, 1, 1}; part E {0.45}. */
static void hand_unit(struct imgs *m)
{
  m->n = 0;
  const double a[4] = {0.2, 0.3, 0.6, 0.7}, b[4] = {0.25, 0.35, 0.65, 0.8};
  const int ca[4] = {0, 1, 0, 1}, cb[4] = {1, 0, 1, 1};
  for (int i = 0; i < 4; i++) put(m, a[i], 0, ca[i], PB_FRAGILITY_PART_A);
  for (int i = 0; i < 4; i++) put(m, b[i], 0, cb[i], PB_FRAGILITY_PART_B);
  put(m, 0.45, 0, 1, PB_FRAGILITY_PART_E);
}

START_TEST(test_qmap_hand)
{
  static struct imgs m;
  hand_unit(&m);
  struct pb_fragility_options o;
  opts(&o, 2, 1);
  const struct pb_fragility_input in = input(&m);
  double rec[PB_FRAGILITY_QMAP_LEN];
  pb_fragility_qmap(&in, &o, rec);
  /* the power map S^4 keeps every order: nothing moves, nothing merges */
  const double *x = qrec(rec, 0, PB_FRAGILITY_QMAP_POWER);
  ck_assert(x[PB_FQ_DEFINED] == 1 && isnan(x[PB_FQ_INTERCEPT]) && x[PB_FQ_SLOPE] == 4);
  ck_assert(x[PB_FQ_N_TRAIN] == 4 && x[PB_FQ_N_EVAL] == 5);
  ck_assert(x[PB_FQ_TRAIN_BIN] == 0 && x[PB_FQ_TRAIN_READOUT] == 0);
  ck_assert(x[PB_FQ_EVAL_BIN] == 0 && x[PB_FQ_EVAL_READOUT] == 0);
  ck_assert(x[PB_FQ_STRUCT_DIFF] == 0 && x[PB_FQ_DISTINCT] == 9 && x[PB_FQ_MERGED] == 0);
  /* ECE on part B: bin 0 accuracy 1/2, mean S 0.3; bin 1 accuracy 1, mean 0.725; masses 1/2 */
  ck_assert(fabs(x[PB_FQ_ECE_RAW] - (0.5 * 0.2 + 0.5 * 0.275)) < 1e-15);
  const double m0 = (pow(0.25, 4) + pow(0.35, 4)) / 2, m1 = (pow(0.65, 4) + pow(0.8, 4)) / 2;
  ck_assert(fabs(x[PB_FQ_ECE_MAP] - (0.5 * fabs(0.5 - m0) + 0.5 * fabs(1 - m1))) < 1e-15);
  const double nll = -(log(0.25) + log(0.65) + log(0.65) + log(0.8)) / 4;
  const double nll4 = -(4 * log(0.25) + log(1 - pow(0.35, 4)) + 4 * log(0.65) + 4 * log(0.8)) / 4;
  ck_assert(fabs(x[PB_FQ_NLL_RAW] - nll) < 1e-14 && fabs(x[PB_FQ_NLL_MAP] - nll4) < 1e-14);
  /* one group per bin: G = 0, the profiles vanish and the relative FAUC change is undefined */
  ck_assert(x[PB_FQ_REFIT_EDGES] == 0 && x[PB_FQ_REFIT_PROFILE] == 0 && isnan(x[PB_FQ_REFIT_FAUC]));
  /* the fitted map of arm A (part A: accuracy rises with the score) moves and merges nothing either */
  for (int a = 0; a < 2; a++) {
    const double *f = qrec(rec, a, PB_FRAGILITY_QMAP_FITTED);
    ck_assert(f[PB_FQ_DEFINED] == 1 && f[PB_FQ_SLOPE] > 0);
    ck_assert(f[PB_FQ_TRAIN_BIN] == 0 && f[PB_FQ_EVAL_BIN] == 0 && f[PB_FQ_EVAL_READOUT] == 0);
    ck_assert(f[PB_FQ_STRUCT_DIFF] == 0 && f[PB_FQ_MERGED] == 0);
  }
}
END_TEST

/* The sharp map sigma(8 logit S) sends every score above 1 - 1e-5 to 1.0: there 8 logit S > 92 and
 * e^-92 < 2^-53, so 1 + e^-z rounds to 1.  Part A {0.5 w, 0.6 c, 0.999999 w, 0.9999999 c} puts arm A's edge
 * at 0.999999 (mapped to 1.0); part B {0.55 c, 0.99999 c, 0.9 w, 0.9999999 c}, part E {0.95}.  Of the 8
 * distinct scores, 0.99999, 0.999999 and 0.9999999 meet at 1.0: 2 merged.  0.99999 lies below the edge but
 * meets it: the one held-out image that changes bin (0 -> 1); the fitting images keep theirs. */
START_TEST(test_qmap_stress)
{
  static struct imgs m;
  m.n = 0;
  const double a[4] = {0.5, 0.6, 0.999999, 0.9999999}, b[4] = {0.55, 0.99999, 0.9, 0.9999999};
  const int ca[4] = {0, 1, 0, 1}, cb[4] = {1, 1, 0, 1};
  for (int i = 0; i < 4; i++) put(&m, a[i], 0, ca[i], PB_FRAGILITY_PART_A);
  for (int i = 0; i < 4; i++) put(&m, b[i], 0, cb[i], PB_FRAGILITY_PART_B);
  put(&m, 0.95, 0, 1, PB_FRAGILITY_PART_E);
  struct pb_fragility_options o;
  opts(&o, 2, 1);
  const struct pb_fragility_input in = input(&m);
  double rec[PB_FRAGILITY_QMAP_LEN];
  pb_fragility_qmap(&in, &o, rec);
  const double *x = qrec(rec, 0, PB_FRAGILITY_QMAP_SHARP);
  ck_assert(x[PB_FQ_DEFINED] == 1 && x[PB_FQ_INTERCEPT] == 0 && x[PB_FQ_SLOPE] == 8);
  ck_assert(x[PB_FQ_N_TRAIN] == 4 && x[PB_FQ_TRAIN_BIN] == 0 && x[PB_FQ_TRAIN_READOUT] == 0);
  ck_assert(x[PB_FQ_N_EVAL] == 5 && x[PB_FQ_EVAL_BIN] == 1 && x[PB_FQ_EVAL_READOUT] == 1);
  ck_assert(x[PB_FQ_DISTINCT] == 8 && x[PB_FQ_MERGED] == 2);
  /* ECE: raw bins {0.55 c, 0.99999 c, 0.9 w} (3/4) and {0.9999999 c}; mapped {0.55 c, 0.9 w} and the two
   * at 1.0 (1/2 each) */
  const double e0 = 0.75 * fabs(2.0 / 3 - (0.55 + 0.99999 + 0.9) / 3) + 0.25 * (1 - 0.9999999);
  ck_assert(fabs(x[PB_FQ_ECE_RAW] - e0) < 1e-15);
  ck_assert(fabs(x[PB_FQ_ECE_MAP] - 0.5 * fabs(0.5 - (sharp(0.55) + sharp(0.9)) / 2)) < 1e-12);
  /* both states accept the whole rate part at coverage 0.8 and 0.9 with accuracy 3/4, one group per bin
   * has no profile: no structural quantity differs although a bin changed */
  ck_assert(x[PB_FQ_STRUCT_DIFF] == 0);
  const double nll = -(log(0.55) + log(0.99999) + log(0.1) + log(0.9999999)) / 4;
  ck_assert(fabs(x[PB_FQ_NLL_RAW] - nll) < 1e-14);
  /* 1 - m(0.9) = 2.3e-8 is known to the rounding of m(0.9) only: a relative 5e-9 */
  ck_assert(fabs(x[PB_FQ_NLL_MAP] - -(log(sharp(0.55)) + log(1 - sharp(0.9))) / 4) < 1e-8);
  /* refit: the mapped fitting scores {0.5, m(0.6), 1, 1} give the edge 1.0, the pushed-forward one */
  ck_assert(x[PB_FQ_REFIT_EDGES] == 0 && x[PB_FQ_REFIT_PROFILE] == 0);
  /* the power map S^4 keeps all 8 apart */
  ck_assert(qrec(rec, 0, PB_FRAGILITY_QMAP_POWER)[PB_FQ_MERGED] == 0);
}
END_TEST

/* A random unit of 4,000 float scores: the fitted maps of both arms move no image and change no structural
 * quantity by a single bit (Table 4), and merge nothing (float scores differ by far more than the map can
 * close in double precision). */
START_TEST(test_qmap_random)
{
  rng_state = test_seed() + 11;
  static struct imgs m;
  m.n = 0;
  for (int i = 0; i < CAP; i++) {
    const double s = (float)(0.3 + 0.7 * rng_unif()), u = rng_unif(), r = rng_unif();
    const int part = r < 0.4 ? PB_FRAGILITY_PART_A : r < 0.8 ? PB_FRAGILITY_PART_B : PB_FRAGILITY_PART_E;
    put(&m, s, u, rng_unif() < 0.1 + 0.8 * s, part);
  }
  struct pb_fragility_options o;
  pb_fragility_options_default(&o);
  o.n_null = 0;
  const struct pb_fragility_input in = input(&m);
  static double rec[PB_FRAGILITY_QMAP_LEN], arm[PB_FRAGILITY_ARM_LEN(PB_FRAGILITY_GRID)];
  pb_fragility_qmap(&in, &o, rec);
  for (int a = 0; a < 2; a++) {
    const double *x = qrec(rec, a, PB_FRAGILITY_QMAP_FITTED);
    ck_assert(x[PB_FQ_DEFINED] == 1 && x[PB_FQ_SLOPE] > 0);
    ck_assert(x[PB_FQ_N_TRAIN] + x[PB_FQ_N_EVAL] == CAP);
    ck_assert(x[PB_FQ_TRAIN_BIN] == 0 && x[PB_FQ_TRAIN_READOUT] == 0);
    ck_assert(x[PB_FQ_EVAL_BIN] == 0 && x[PB_FQ_EVAL_READOUT] == 0);
    ck_assert(x[PB_FQ_STRUCT_DIFF] == 0 && x[PB_FQ_MERGED] == 0);
    ck_assert(x[PB_FQ_REFIT_EDGES] == 0 && x[PB_FQ_REFIT_PROFILE] == 0 && x[PB_FQ_REFIT_FAUC] == 0);
    pb_fragility_arm(&in, &o, a ? PB_FRAGILITY_PART_B : PB_FRAGILITY_PART_A, arm);
    ck_assert(x[PB_FQ_ECE_RAW] == arm[PB_FA_ECE]); /* the arm's ECE, on the same rate part */
  }
}
END_TEST

/* Pooled ties.  Part A {0.3 w, 0.3 w, 0.6 c, 0.7 c}, part B {0.3 w, 0.6 c, 0.8 w, 0.8 c}: raw ties 0.3
 * (both folds), 0.6 (both) and 0.8 (B only); per fold one tie each (A's 0.3, B's 0.8); after the maps
 * (A's images by B's map and B's by A's) those two stay tied and the spanning ones part. */
START_TEST(test_qmap_ties)
{
  static struct imgs m;
  m.n = 0;
  const double a[4] = {0.3, 0.3, 0.6, 0.7}, b[4] = {0.3, 0.6, 0.8, 0.8};
  const int ca[4] = {0, 0, 1, 1}, cb[4] = {0, 1, 0, 1};
  for (int i = 0; i < 4; i++) put(&m, a[i], 0, ca[i], PB_FRAGILITY_PART_A);
  for (int i = 0; i < 4; i++) put(&m, b[i], 0, cb[i], PB_FRAGILITY_PART_B);
  struct pb_fragility_options o;
  opts(&o, 2, 1);
  const struct pb_fragility_input in = input(&m);
  double rec[PB_FRAGILITY_QMAP_LEN];
  pb_fragility_qmap(&in, &o, rec);
  const double *fa = qrec(rec, 0, PB_FRAGILITY_QMAP_FITTED), *fb = qrec(rec, 1, PB_FRAGILITY_QMAP_FITTED);
  ck_assert(fa[PB_FQ_DEFINED] == 1 && fb[PB_FQ_DEFINED] == 1);
  /* no accidental equality between the two maps' values */
  const struct pb_fragility_qmap ma = {0, fa[PB_FQ_INTERCEPT], fa[PB_FQ_SLOPE]};
  const struct pb_fragility_qmap mb = {0, fb[PB_FQ_INTERCEPT], fb[PB_FQ_SLOPE]};
  const double v[6] = {pb_fragility_qmap_apply(&mb, 0.3), pb_fragility_qmap_apply(&mb, 0.6),
                       pb_fragility_qmap_apply(&mb, 0.7), pb_fragility_qmap_apply(&ma, 0.3),
                       pb_fragility_qmap_apply(&ma, 0.6), pb_fragility_qmap_apply(&ma, 0.8)};
  for (int i = 0; i < 6; i++)
    for (int j = i + 1; j < 6; j++) ck_assert(v[i] != v[j]);
  const double *t = rec + 2 * PB_FRAGILITY_QMAPS * PB_FQ_FIXED;
  ck_assert(t[PB_FT_IMAGES] == 8 && t[PB_FT_RAW_GROUPS] == 3 && t[PB_FT_WITHIN] == 1 && t[PB_FT_SPANNING] == 2);
  ck_assert(t[PB_FT_FOLD_RAW] == 2 && t[PB_FT_FOLD_MAPPED] == 2 && t[PB_FT_MAPPED] == 2);
}
END_TEST

/* Table 18's integrals: trapezoids in log rho on 0.25, 1, 4 (steps ln 4).  sqrt(rho): ln 4 (0.5 + 1) / 2 +
 * ln 4 (1 + 2) / 2 = 2.25 ln 4; ln rho, linear in log rho: exact, 0.  One bin of two groups with rates
 * 0.2 and 0.8 at mass 1/2 (G = 0.09, top 0.3, a two-point law saturating at rho = 1): variance law 0.3
 * sqrt(rho) = {0.15, 0.3, 0.6}, capped law and profile {0.15, 0.3, 0.3}. */
START_TEST(test_log_auc)
{
  struct pb_fragility_options o;
  opts(&o, 1, 2);
  const double y[3] = {0.5, 1, 2}, l[3] = {log(0.25), 0, log(4)};
  ck_assert(fabs(pb_fragility_log_auc(&o, y) - 2.25 * log(4)) < 1e-14);
  ck_assert(fabs(pb_fragility_log_auc(&o, l)) < 1e-15);
  static struct imgs m;
  m.n = 0;
  for (int g = 0; g < 2; g++)
    for (int i = 0; i < 10; i++) {
      put(&m, 0.5, g, 0, PB_FRAGILITY_PART_A);
      put(&m, 0.5, g, i < (g ? 8 : 2), PB_FRAGILITY_PART_B);
    }
  const struct pb_fragility_input in = input(&m);
  double rec[PB_FRAGILITY_ARM_LEN(3)];
  pb_fragility_arm(&in, &o, PB_FRAGILITY_PART_A, rec);
  const double *up = rec + PB_FA_FIXED, *var = up + 6, *cap = var + 3;
  ck_assert(fabs(pb_fragility_log_auc(&o, var) - 0.675 * log(4)) < 1e-14);
  ck_assert(fabs(pb_fragility_log_auc(&o, cap) - 0.525 * log(4)) < 1e-14);
  ck_assert(fabs(pb_fragility_log_auc(&o, up) - 0.525 * log(4)) < 1e-14);
  ck_assert(pb_fragility_log_auc(&o, up) == rec[PB_FA_FAUC_UP]); /* FAUC's own trapezoids, to the bit */
}
END_TEST

/* Quartiles: the 8 finite values ranked 0.1 (i2), 0.2 (i6), 0.3 (i3), 0.3 (i4, after i3), 0.4 (i8), 0.5
 * (i0), 0.7 (i7), 0.9 (i5); rank r in quartile floor(4 r / 8). */
START_TEST(test_quartiles)
{
  const double x[9] = {0.5, NAN, 0.1, 0.3, 0.3, 0.9, 0.2, 0.7, 0.4};
  const int32_t want[9] = {2, -1, 0, 1, 1, 3, 0, 3, 2};
  int32_t q[9];
  ck_assert_int_eq(pb_fragility_quartiles(9, x, q), 8);
  for (int i = 0; i < 9; i++) ck_assert_int_eq(q[i], want[i]);
}
END_TEST

static Suite *qmap_suite(void)
{
  Suite *s = suite_create("fragility_qmap");
  TCase *tc = tcase_create("kernel");
  tcase_add_test(tc, test_qmap_apply);
  tcase_add_test(tc, test_qmap_fit);
  tcase_add_test(tc, test_qmap_hand);
  tcase_add_test(tc, test_qmap_stress);
  tcase_add_test(tc, test_qmap_random);
  tcase_add_test(tc, test_qmap_ties);
  tcase_add_test(tc, test_log_auc);
  tcase_add_test(tc, test_quartiles);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return test_run_forked(qmap_suite()); }
