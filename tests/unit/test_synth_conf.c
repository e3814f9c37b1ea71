/* Synthetic panel: the confidence keys that calibrate it to seed 000
 * (docs/synth.md, "Confidence power" and "Per-source behaviour"), each against
 * its documented effect recomputed here from the records of the same store
 * without the key: `[panel] confidence_power` maps 1 - S to (1 - S)^g and
 * scales the other classes by (1 - S)^(g - 1), a monotone map of S;
 * `wrong_confidence = d, sd` shifts the logit of perturbed wrong records' S law
 * by d plus a class factor of spread sd; `correct_confidence = w` shifts the
 * logit of perturbed correct records' S by w.  None of them moves a
 * prediction, and the shifts leave clean records alone.  `persistence = p`
 * gives model m's perturbed record the noise rho eps_clean + sqrt(1 - rho^2)
 * eps, rho = p Phi(u_m): at accuracy 1/2 and no severity the chance that
 * both records of a pair are correct is the bivariate-normal orthant
 * 1/4 + asin(r) / (2 pi); `persistence_gain = g` adds s_c g u_m to perturbed
 * margins.  Half-precision rounding is off, so the closed forms hold to
 * double rounding of floats. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "pairbound/error.h"
#include "pairbound/store.h"
#include "pairbound/synth.h"
#include "pairbound/synth_config.h"
#include "testlib.h"

/* 3 models, one source of 30 classes x 20 images, 3 perturbed conditions; no rounding, so the closed forms below
 * are exact up to float storage.  KEYS go to [source S], PANEL to [panel]. */
#define CONF_INI                                                                                           \
  "[groups]\ng = 0\n[models]\nm1 = g\nm2 = g\nm3 = g\n"                                                    \
  "[source S]\nbase = b\nimage_prefix = im\nclasses = 30\nimages_per_class = 20\ndev_per_class = 10\n"     \
  "clean_accuracy = 0.85\nconditions = c1:0.7, c2:0.5, c3:0.3\n"

struct conf_rows {
  struct pb_meta meta;
  struct pb_rows r;
  int nc, ni, nr;
};

static void conf_rows(const char *keys, const char *panel, struct conf_rows *out)
{
  char text[2048];
  snprintf(text, sizeof text, "[panel]\nseed = 5\nhalf_precision = 0\ntopk = 3\n%s\n" CONF_INI "%s\n", panel, keys);
  struct pb_synth_config cfg;
  ck_assert_msg(pb_synth_config_parse(text, "test.ini", &cfg) == PB_OK, "%s", pb_error_message());
  ck_assert(pb_synth_meta(&cfg, &out->meta) == PB_OK);
  out->nc = out->meta.sources[0].n_conditions;
  out->ni = out->meta.sources[0].n_images;
  out->nr = out->meta.n_models * out->nc;
  pb_synth_rows(&cfg, &out->meta, 0, 0, out->nr, &out->r);
  pb_synth_config_free(&cfg);
}

static void conf_free(struct conf_rows *x)
{
  pb_store_rows_free(&x->r);
  pb_meta_free(&x->meta);
}

static double logit(double p) { return log(p / (1.0 - p)); }

/* Correct records: S' = 1 - (1 - S)^g; wrong ones also M' = M (1 - S)^(g - 1) and every runner-up scaled alike;
 * predictions unchanged; S' orders records as S does (so does every threshold on S). */
START_TEST(test_confidence_power)
{
  struct conf_rows a, b;
  const double g = 2.0;
  conf_rows("", "", &a);
  conf_rows("", "confidence_power = 2", &b);
  const long n = (long)a.nr * a.ni;
  long wrong = 0, inversions = 0;
  double spread_a = 0, spread_b = 0;
  for (long x = 0; x < n; x++) {
    ck_assert_int_eq(a.r.pred[x], b.r.pred[x]);
    const double s = a.r.smax[x], rest = pow(1.0 - s, g - 1.0);
    ck_assert_msg(fabs(b.r.smax[x] - (1.0 - pow(1.0 - s, g))) < 1e-6, "S %g -> %g", s, b.r.smax[x]);
    const int correct = a.r.ptrue[x] == a.r.smax[x];
    if (correct) ck_assert(b.r.ptrue[x] == b.r.smax[x]);
    else if (a.r.ptrue[x] < 0.89 * a.r.smax[x] && b.r.ptrue[x] < 0.89 * b.r.smax[x]) /* M below its cap 0.9 S */
      ck_assert_msg(fabs(b.r.ptrue[x] - a.r.ptrue[x] * rest) < 1e-6, "M %g -> %g", a.r.ptrue[x], b.r.ptrue[x]);
    for (int j = 1; j < 3 && correct && s > 0.5; j++) /* runner-ups keep their share of the rest */
      ck_assert(fabs(b.r.topk_prob[x * 3 + j] - a.r.topk_prob[x * 3 + j] * rest) < 1e-6);
    wrong += a.r.ptrue[x] != a.r.smax[x];
    if (x > 0 && a.r.smax[x - 1] < a.r.smax[x] && !(b.r.smax[x - 1] <= b.r.smax[x])) inversions++;
    if (a.r.ptrue[x] == a.r.smax[x] && x > 0 && a.r.ptrue[x - 1] == a.r.smax[x - 1]) {
      spread_a += fabs(a.r.smax[x] - a.r.smax[x - 1]);
      spread_b += fabs(b.r.smax[x] - b.r.smax[x - 1]);
    }
  }
  ck_assert_int_gt(wrong, 0);
  ck_assert_int_eq(inversions, 0);
  /* the documented effect: correct records' S drawn together (neighbouring correct records differ less) */
  ck_assert_msg(spread_b < 0.7 * spread_a, "spread %g against %g", spread_b, spread_a);
  conf_free(&a);
  conf_free(&b);
}
END_TEST

/* Wrong perturbed records: logit((S - 0.04) / 0.9) moves by d + sd * kappa_y, kappa_y one value per class (the
 * same in every condition and model), spread about sd over the 30 classes; clean records and predictions stay. */
START_TEST(test_wrong_confidence)
{
  struct conf_rows a, b, c;
  conf_rows("", "", &a);
  conf_rows("wrong_confidence = 0.7", "", &b);
  conf_rows("wrong_confidence = 0.7, 1.5", "", &c);
  const int K = a.meta.sources[0].n_classes;
  double *kappa = malloc((size_t)K * sizeof *kappa);
  for (int y = 0; y < K; y++) kappa[y] = NAN;
  long wrong = 0;
  for (long x = 0; x < (long)a.nr * a.ni; x++) {
    const int cond = (int)(x / a.ni) % a.nc, i = (int)(x % a.ni), y = a.meta.sources[0].labels[i];
    ck_assert(a.r.pred[x] == b.r.pred[x] && a.r.pred[x] == c.r.pred[x]);
    const int is_wrong = a.r.pred[x] != y;
    if (cond == a.meta.sources[0].clean || !is_wrong) {
      ck_assert(a.r.smax[x] == b.r.smax[x] && a.r.smax[x] == c.r.smax[x]);
      continue;
    }
    const double l0 = logit((a.r.smax[x] - 0.04) / 0.9), l1 = logit((b.r.smax[x] - 0.04) / 0.9),
                 l2 = logit((c.r.smax[x] - 0.04) / 0.9);
    if (fabs(l0) > 6 || fabs(l2) > 6) continue; /* float storage: the logit is exact only away from 0 and 1 */
    ck_assert_msg(fabs(l1 - l0 - 0.7) < 1e-3, "shift %g", l1 - l0);
    const double k = (l2 - l0 - 0.7) / 1.5;
    if (isnan(kappa[y])) kappa[y] = k;
    ck_assert_msg(fabs(k - kappa[y]) < 1e-3, "class %d: factor %g and %g", y, k, kappa[y]);
    wrong++;
  }
  ck_assert_int_gt(wrong, 100);
  double m = 0, v = 0;
  int n = 0;
  for (int y = 0; y < K; y++)
    if (!isnan(kappa[y])) m += kappa[y], n++;
  m /= n;
  for (int y = 0; y < K; y++)
    if (!isnan(kappa[y])) v += (kappa[y] - m) * (kappa[y] - m);
  /* a standard normal factor: over ~30 classes its sample sd lies well within [0.5, 1.6] */
  ck_assert_msg(n > 20 && sqrt(v / (n - 1)) > 0.5 && sqrt(v / (n - 1)) < 1.6, "%d classes, sd %g", n,
                sqrt(v / (n - 1)));
  free(kappa);
  conf_free(&a);
  conf_free(&b);
  conf_free(&c);
}
END_TEST

/* Correct perturbed records: logit(S) moves by w (where the 2 / K floor does not hold S); clean records and
 * predictions stay. */
START_TEST(test_correct_confidence)
{
  struct conf_rows a, b;
  conf_rows("", "", &a);
  conf_rows("correct_confidence = -0.6", "", &b);
  long moved = 0;
  for (long x = 0; x < (long)a.nr * a.ni; x++) {
    const int cond = (int)(x / a.ni) % a.nc, i = (int)(x % a.ni), y = a.meta.sources[0].labels[i];
    ck_assert_int_eq(a.r.pred[x], b.r.pred[x]);
    if (cond == a.meta.sources[0].clean || a.r.pred[x] != y) {
      ck_assert(a.r.smax[x] == b.r.smax[x] && a.r.ptrue[x] == b.r.ptrue[x]);
      continue;
    }
    if (fmin(a.r.smax[x], b.r.smax[x]) <= 2.0 / 30 * 1.001 || a.r.smax[x] > 0.999) continue; /* the floor, float */
    ck_assert_msg(fabs(logit(b.r.smax[x]) - logit(a.r.smax[x]) + 0.6) < 1e-3, "S %g -> %g", a.r.smax[x],
                  b.r.smax[x]);
    moved++;
  }
  ck_assert_int_gt(moved, 100);
  conf_free(&a);
  conf_free(&b);
}
END_TEST

/* Rows of every model of source 0 of configuration @p text (no [panel] keys but these). */
static void persist_rows(const char *text, struct pb_synth_config *cfg, struct conf_rows *out)
{
  ck_assert_msg(pb_synth_config_parse(text, "test.ini", cfg) == PB_OK, "%s", pb_error_message());
  ck_assert(pb_synth_meta(cfg, &out->meta) == PB_OK);
  out->nc = out->meta.sources[0].n_conditions;
  out->ni = out->meta.sources[0].n_images;
  out->nr = out->meta.n_models * out->nc;
  pb_synth_rows(cfg, &out->meta, 0, 0, out->nr, &out->r);
}

/* One model, clean and 4 conditions at accuracy 1/2 (no severity): eta = beta + 0.55 eps on both sides, so
 * P(both correct) = 1/4 + asin(r) / (2 pi), r = (1 + rho 0.55^2) / (1 + 0.55^2), rho = p Phi(u_m); clean records
 * and each side's accuracy stay what they are without the key. */
START_TEST(test_persistence)
{
  const char *fmt = "[panel]\nseed = 11\nhalf_precision = 0\n[groups]\ng = 0\n[models]\nm1 = g\n"
                    "[source S]\nbase = b\nimage_prefix = im\nclasses = 200\nimages_per_class = 100\n"
                    "dev_per_class = 50\nclean_accuracy = 0.5\nconditions = c1:0.5, c2:0.5, c3:0.5, c4:0.5\n%s\n";
  const double p[2] = {0.0, 1.0}, s2 = 0.55 * 0.55;
  struct conf_rows a[2];
  struct pb_synth_config cfg[2];
  for (int j = 0; j < 2; j++) {
    char text[1024], key[64];
    snprintf(key, sizeof key, "persistence = %g", p[j]);
    snprintf(text, sizeof text, fmt, key);
    persist_rows(text, &cfg[j], &a[j]);
  }
  const int ni = a[0].ni, clean = a[0].meta.sources[0].clean;
  const int32_t *y = a[0].meta.sources[0].labels;
  for (long x = 0; x < ni; x++) /* the clean row is the same */
    ck_assert(a[0].r.pred[clean * ni + x] == a[1].r.pred[clean * ni + x] &&
              a[0].r.smax[clean * ni + x] == a[1].r.smax[clean * ni + x]);
  for (int j = 0; j < 2; j++) {
    const double rho = p[j] * gsl_cdf_ugaussian_P(pb_synth_persistence_factor(&cfg[j], 0));
    const double r = (1.0 + rho * s2) / (1.0 + s2), want = 0.25 + asin(r) / (2.0 * M_PI);
    long both = 0, correct = 0, pairs = 0;
    for (int c = 0; c < a[j].nc; c++) {
      if (c == clean) continue;
      for (int i = 0; i < ni; i++) {
        const int c0 = a[j].r.pred[clean * ni + i] == y[i], c1 = a[j].r.pred[c * ni + i] == y[i];
        both += c0 && c1, correct += c1, pairs++;
      }
    }
    /* 20,000 images: each share's standard error is below 0.004 */
    ck_assert_msg(fabs((double)both / pairs - want) < 0.012, "p %g rho %g: both correct %g, closed form %g", p[j],
                  rho, (double)both / pairs, want);
    ck_assert_msg(fabs((double)correct / pairs - 0.5) < 0.012, "perturbed accuracy %g", (double)correct / pairs);
  }
  for (int j = 0; j < 2; j++) conf_free(&a[j]), pb_synth_config_free(&cfg[j]);
}
END_TEST

/* persistence_gain = g: a correct perturbed record's logit(S) = 0.2 + 1.7 eta + 0.6 zeta moves by 1.7 (s_c g u_m
 * + d_c), d_c the same for every model (mu_c keeps the target accuracy), s_c = 0.9 (Phi^-1(0.85) - Phi^-1(a_c)). */
START_TEST(test_persistence_gain)
{
  struct conf_rows a, b;
  struct pb_synth_config cfg;
  conf_rows("", "", &a);
  conf_rows("persistence_gain = 0.8", "", &b);
  ck_assert(pb_synth_config_parse("[panel]\nseed = 5\n" CONF_INI, "test.ini", &cfg) == PB_OK); /* conf_rows' seed */
  const double acc[4] = {0.85, 0.7, 0.5, 0.3};
  long moved = 0;
  for (int c = 1; c < a.nc; c++) {
    const double sev = 0.9 * (gsl_cdf_ugaussian_Pinv(0.85) - gsl_cdf_ugaussian_Pinv(acc[c]));
    double d0 = NAN;
    for (int m = 0; m < a.meta.n_models; m++)
      for (int i = 0; i < a.ni; i++) {
        const long x = ((long)m * a.nc + c) * a.ni + i;
        const int32_t y = a.meta.sources[0].labels[i];
        if (a.r.pred[x] != y || b.r.pred[x] != y || fmin(a.r.smax[x], b.r.smax[x]) <= 2.0 / 30 * 1.001 ||
            fmax(a.r.smax[x], b.r.smax[x]) > 0.999)
          continue; /* the 2 / K floor; float storage near 1 */
        const double d = (logit(b.r.smax[x]) - logit(a.r.smax[x])) / 1.7 - sev * 0.8 * pb_synth_persistence_factor(&cfg, m);
        if (isnan(d0)) d0 = d;
        ck_assert_msg(fabs(d - d0) < 1e-3, "condition %d model %d: shift %g against %g", c, m, d, d0);
        moved++;
      }
  }
  ck_assert_int_gt(moved, 100);
  pb_synth_config_free(&cfg);
  conf_free(&a);
  conf_free(&b);
}
END_TEST

START_TEST(test_confidence_keys_invalid)
{
  const char *bad[] = {"[panel]\nconfidence_power = 0.5\n", "[panel]\nconfidence_power = 11\n",
                       "[source S]\nwrong_confidence = 0.5, -1\n", "[source S]\nwrong_confidence = 1, 2, 3\n",
                       "[source S]\ncorrect_confidence = x\n",
                       "[source S]\npersistence = 1.5\n", "[source S]\npersistence_gain = 11\n"};
  for (size_t j = 0; j < sizeof bad / sizeof *bad; j++) {
    char text[2048];
    snprintf(text, sizeof text, CONF_INI "%s", bad[j]);
    struct pb_synth_config cfg;
    ck_assert_msg(pb_synth_config_parse(text, "test.ini", &cfg) == PB_FAIL, "accepted: %s", bad[j]);
  }
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("synth_conf");
  TCase *tc = tcase_create("confidence");
  tcase_add_test(tc, test_confidence_power);
  tcase_add_test(tc, test_wrong_confidence);
  tcase_add_test(tc, test_correct_confidence);
  tcase_add_test(tc, test_persistence);
  tcase_add_test(tc, test_persistence_gain);
  tcase_add_test(tc, test_confidence_keys_invalid);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(suite()); }
