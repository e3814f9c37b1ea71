/* Natural-probe scores (src/screen/screen_kernel_tta.c): the +0 variant, TTA agreement and
 * the greedy development selection, against hand-worked values and an
 * independent greedy search with a coverage computed from its definition. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/screen.h"
#include "testlib.h"
#include "pairbound/resample.h"
#include "../../src/screen/screen_internal.h"

START_TEST(test_u0_agreement_hand)
{
  /* three probes of two images: image 1 has M' = .25, .75, .5 */
  const float a[2] = {0.5f, 0.25f}, b[2] = {0.5f, 0.75f}, c[2] = {0.5f, 0.5f};
  const float *m[3] = {a, b, c};
  /* TTA mean (1/3)(.25 + .75 + .5) = .5; +0 with the clean M = 1: (1 + 1.5) / 4 = .625 */
  ck_assert_double_eq_tol(pb_screen_u(m, 3, 1), 0.5, 1e-15);
  ck_assert_double_eq_tol(pb_screen_u0(1.0, m, 3, 1), 0.625, 1e-15);
  ck_assert_double_eq_tol(pb_screen_u0(0.25, m, 3, 0), (0.25 + 1.5) / 4, 1e-15);
  /* predictions 3, 1, 3 of image 0 against the clean prediction 3: 2/3; against 1: 1/3; against 7: 0 */
  const int32_t p0[1] = {3}, p1[1] = {1}, p2[1] = {3};
  const int32_t *pred[3] = {p0, p1, p2};
  ck_assert_double_eq_tol(pb_screen_agreement(pred, 3, 0, 3), 2.0 / 3, 1e-15);
  ck_assert_double_eq_tol(pb_screen_agreement(pred, 3, 0, 1), 1.0 / 3, 1e-15);
  ck_assert_double_eq(pb_screen_agreement(pred, 3, 0, 7), 0.0);
}
END_TEST

/* Five images, budget 20 %: k = 1, so a score covers a cell's failures by
 * its single riskiest image (lowest mean M'), a tie of g images prorated 1/g. */
START_TEST(test_greedy_hand)
{
  const float m[4 * 5] = {
      0.9f, 0.8f, 0.7f, 0.6f, 0.5f,    /* c0: riskiest image 4 */
      0.1f, 0.9f, 0.9f, 0.9f, 0.9f,    /* c1: image 0 */
      0.95f, 0.5f, 0.5f, 0.5f, 0.05f,  /* c2: image 4 */
      0.5f, 0.5f, 0.5f, 0.5f, 0.5f,    /* c3: all tied */
  };
  const uint8_t fail[4 * 5] = {
      1, 0, 0, 0, 0,  /* A */
      1, 1, 0, 0, 0,  /* B */
      0, 0, 0, 0, 1,  /* C */
      0, 0, 0, 0, 0,  /* D: no failure, no coverage */
  };
  struct pb_screen_sel_unit u = {5, 4, 4, m, fail, NULL, NULL};
  double sum[4];
  int64_t cnt[4];
  /* step 1: c0 covers C only (0 + 0 + 1), c1 A and half of B (1 + 1/2 + 0),
   * c2 as c0, c3 a fifth of every failure (3 x 1/5) */
  pb_screen_sel_step(&u, NULL, 0, 1, sum, cnt);
  ck_assert_double_eq_tol(sum[0], 1.0, 1e-15);
  ck_assert_double_eq_tol(sum[1], 1.5, 1e-15);
  ck_assert_double_eq_tol(sum[2], 1.0, 1e-15);
  ck_assert_double_eq_tol(sum[3], 0.6, 1e-15);
  for (int a = 0; a < 4; a++) ck_assert_int_eq(cnt[a], 3);
  int32_t chosen[4] = {-1, -1, -1, -1};
  ck_assert_int_eq(pb_screen_sel_pick(sum, cnt, chosen, 0, 4), 1);
  /* step 2 with c1: {c1,c0} means .5 .85 .8 .75 .7 -> image 0 (1.5);
   * {c1,c2} .525 .7 .7 .7 .475 -> image 4 (1); {c1,c3} .3 .7 ... -> image 0 (1.5):
   * a tie of c0 and c3 goes to the smaller index */
  chosen[0] = 1;
  pb_screen_sel_step(&u, chosen, 1, 1, sum, cnt);
  ck_assert_int_eq(cnt[1], 0);
  ck_assert_double_eq_tol(sum[0], 1.5, 1e-15);
  ck_assert_double_eq_tol(sum[2], 1.0, 1e-15);
  ck_assert_double_eq_tol(sum[3], 1.5, 1e-15);
  ck_assert_int_eq(pb_screen_sel_pick(sum, cnt, chosen, 1, 4), 0);
  /* step 3 with c1, c0: + c2 -> (.1+.9+.95)/3 = .65, (.9+.8+.5)/3 = .733.., (.9+.7+.5)/3,
   * (.9+.6+.5)/3 = .667, (.9+.5+.05)/3 = .483 -> image 4 (1); + c3 -> (.1+.9+.5)/3 = .5 lowest
   * -> image 0 (1.5): c3 */
  int32_t got[4];
  ck_assert_int_eq(pb_screen_sel_greedy(&u, 1, 4, 1, got), 4);
  ck_assert_int_eq(got[0], 1);
  ck_assert_int_eq(got[1], 0);
  ck_assert_int_eq(got[2], 3);
  ck_assert_int_eq(got[3], 2);
  /* a unit with no failure anywhere gives no value: nothing is chosen */
  const uint8_t none[5] = {0, 0, 0, 0, 0};
  struct pb_screen_sel_unit z = {5, 4, 1, m, none, NULL, NULL};
  ck_assert_int_eq(pb_screen_sel_greedy(&z, 1, 2, 1, got), 0);
}
END_TEST

/* Coverage at budget pct from its definition: k = max(1, round(pct n / 100))
 * (halves up); images sorted by descending score; the tie group straddling
 * position k contributes (k - above) / g of its failures. */
static double ref_coverage(const double *score, const uint8_t *y, int n, int pct)
{
  int k = (int)((pct * n + 50) / 100), nf = 0;
  if (k < 1) k = 1;
  for (int i = 0; i < n; i++) nf += y[i];
  if (nf == 0) return NAN;
  /* the k-th largest value */
  double *v = malloc((size_t)n * sizeof *v);
  for (int i = 0; i < n; i++) v[i] = score[i];
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (v[j] > v[i]) { double t = v[i]; v[i] = v[j]; v[j] = t; }
  double cut = v[k - 1];
  free(v);
  int above = 0, g = 0, fa = 0, fg = 0;
  for (int i = 0; i < n; i++) {
    if (score[i] > cut) { above++; fa += y[i]; }
    else if (score[i] == cut) { g++; fg += y[i]; }
  }
  /* the documented single division (docs/screen.md), so equal values tie exactly */
  return ((double)fa * g + (double)(k - above) * fg) / ((double)g * nf);
}

/* Independent greedy: mean over all (unit, cell) coverages with a failure
 * (summed per unit, then over units, as the stage documents), the set mean
 * summed in selection order, ties to the smaller index. */
static void ref_greedy(const struct pb_screen_sel_unit *u, int nu, int n_pick, int pct, int32_t *out)
{
  for (int k = 0; k < n_pick; k++) {
    int best = -1;
    double best_v = -1;
    for (int c = 0; c < u[0].n_cand; c++) {
      int used = 0;
      for (int j = 0; j < k; j++) used |= out[j] == c;
      if (used) continue;
      double tot = 0;
      int cells = 0;
      for (int x = 0; x < nu; x++) {
        double *s = malloc((size_t)u[x].n * sizeof *s);
        for (int i = 0; i < u[x].n; i++) {
          double acc = 0;
          for (int j = 0; j < k; j++) acc += u[x].m[(size_t)out[j] * u[x].n + i];
          acc += u[x].m[(size_t)c * u[x].n + i];
          s[i] = -acc / (k + 1);
        }
        double unit = 0;
        for (int e = 0; e < u[x].n_cells; e++) {
          double cv = ref_coverage(s, u[x].fail + (size_t)e * u[x].n, u[x].n, pct);
          if (!isnan(cv)) { unit += cv; cells++; }
        }
        tot += unit;
        free(s);
      }
      if (cells && tot / cells > best_v) { best_v = tot / cells; best = c; }
    }
    out[k] = best;
  }
}

START_TEST(test_greedy_reference)
{
  rng_state = test_seed();
  for (int rep = 0; rep < 30; rep++) {
    enum { NU = 3, NC = 7 };
    struct pb_screen_sel_unit u[NU];
    float *m[NU];
    uint8_t *f[NU];
    for (int x = 0; x < NU; x++) {
      int n = rng_int(3, 25), cells = rng_int(1, 4);
      m[x] = malloc((size_t)NC * n * sizeof(float));
      f[x] = malloc((size_t)cells * n);
      /* a coarse grid of probabilities, so ties at the cutoff are common */
      for (int j = 0; j < NC * n; j++) m[x][j] = (float)rng_int(0, 8) / 8.0f;
      for (int j = 0; j < cells * n; j++) f[x][j] = rng_int(0, 3) == 0;
      u[x] = (struct pb_screen_sel_unit){n, NC, cells, m[x], f[x], NULL, NULL};
    }
    int pct = (rep % 3 + 1) * 10, b = rep % 3;
    int32_t want[5], got[5];
    ref_greedy(u, NU, 5, pct, want);
    int32_t k = pb_screen_sel_greedy(u, NU, 5, b, got);
    if (want[0] < 0) ck_assert_int_eq(k, 0);
    else {
      ck_assert_int_eq(k, 5);
      for (int j = 0; j < 5; j++) ck_assert_int_eq(got[j], want[j]);
    }
    for (int x = 0; x < NU; x++) {
      free(m[x]);
      free(f[x]);
    }
  }
}
END_TEST

/* Class bootstrap of U - U_TTA, U - A3_TTA, U - agree_TTA (Tables 31, 34, 37, 38): one
 * cell of four images in two classes, two hand-set class draws, every sum
 * worked by hand from the definitions (higher score = riskier, AUROC with
 * ties 1/2, coverage of the top k = max(1, round(q W)) = 1 weighted image). */
START_TEST(test_class_boot_tta_hand)
{
  struct pb_source src = {0};
  src.n_classes = 2;
  struct pb_meta meta = {0};
  meta.n_sources = 1;
  meta.sources = &src;
  struct pb_screen_layout L;
  memset(&L, 0, sizeof L);
  L.n_extra = 1;
  L.tta_rows = -1;
  const int32_t targets[1] = {0};
  struct pb_screen_boot B;
  /* without a set named TTA nothing is added: the fixed statistics only */
  pb_screen_boot_init(&B, &meta, &L, targets, 1, 7, 2);
  ck_assert_int_eq(B.n_scores, PB_SB_NSCORES);
  ck_assert_int_eq(B.n_stat, PB_SB_NSTAT);
  ck_assert_int_eq(pb_screen_boot_class_contrast(&B, PB_SR_U, PB_SR_FIXED), -1);
  pb_screen_boot_free(&B);
  L.is_tta[0] = 1;
  L.tta_rows = PB_SR_FIXED + 2; /* the natural rows follow U_TTA, A3_TTA */
  pb_screen_boot_init(&B, &meta, &L, targets, 1, 7, 2);
  ck_assert_int_eq(B.n_scores, PB_SB_NSCORES + 3);
  const int cg = pb_screen_boot_class_contrast(&B, PB_SR_U, L.tta_rows + PB_SN_AGREE);
  ck_assert_int_eq(cg, PB_SB_NCON + 2);
  const int ct = pb_screen_boot_class_contrast(&B, PB_SR_U, PB_SR_FIXED);
  const int ca = pb_screen_boot_class_contrast(&B, PB_SR_U, PB_SR_FIXED + 1);
  ck_assert_int_eq(ct, PB_SB_NCON);
  ck_assert_int_eq(ca, PB_SB_NCON + 1);
  ck_assert_int_eq(pb_screen_boot_class_contrast(&B, PB_SR_U, PB_SR_S), 0);
  /* draw 0 keeps both classes once, draw 1 class 0 twice and class 1 not at all */
  /* [draw][class], into B.mult's interleaved layout and its 16-bit copy */
  const int32_t mult[2][2] = {{1, 1}, {2, 0}};
  for (int b = 0; b < 2; b++)
    for (int c = 0; c < 2; c++) {
      B.mult[0][c * PB_WM_LANES + b] = mult[b][c];
      B.mult16[0][c * PB_WM_LANES + b] = (uint16_t)mult[b][c];
    }
  const int32_t label[4] = {0, 0, 1, 1};
  const uint8_t y[4] = {1, 0, 0, 1}; /* images 0 and 3 fail */
  const double u[4] = {4, 1, 2, 3}, tta[4] = {1, 4, 3, 2}, a3t[4] = {4, 1, 2, 2};
  const double *score[PB_SB_NSCORES + 3];
  for (int j = 0; j < PB_SB_NSCORES; j++) score[j] = u; /* the fixed contrasts all 0 */
  score[PB_SB_NSCORES] = tta;
  score[PB_SB_NSCORES + 1] = a3t;
  score[PB_SB_NSCORES + 2] = tta; /* agreement ranked as U_TTA: U - agree_TTA = U - U_TTA on mild cells */
  int32_t *order[PB_SB_NSCORES + 3], n_order[PB_SB_NSCORES + 3];
  pb_screen_boot_orders(score, B.n_scores, 4, order, n_order);
  pb_screen_boot_cell(&B, 0, PB_TIER_MILD, 4, label, y, score, order, n_order);
  /* draw 0: U ranks both failures first (AUROC 1, top image a failure: coverage 1/2), U_TTA both last (0, 0),
   * A3_TTA 4 of the pairs but one tie, 3.5/4 (top image a failure: 1/2).
   * draw 1 (images 0 and 1, weight 2 each): U 1 and 1/2, U_TTA 0 and 0, A3_TTA 1 and 1/2. */
  const double want_t[2][PB_SB_NMET] = {{1, .5, .5, .5}, {1, .5, .5, .5}};
  const double want_a[2][PB_SB_NMET] = {{.125, 0, 0, 0}, {0, 0, 0, 0}};
  for (int row = 0; row < 2; row++) /* all tiers, then the mild tier */
    for (int b = 0; b < 2; b++) {
      const int64_t *sum = B.sum + ((size_t)row * 2 + (size_t)b) * (size_t)B.n_stat;
      const int64_t *cnt = B.cnt + ((size_t)row * 2 + (size_t)b) * (size_t)B.n_stat;
      for (int k = 0; k < PB_SB_NMET; k++) {
        ck_assert_int_eq(cnt[ct * PB_SB_NMET + k], 1);
        ck_assert_double_eq_tol((double)sum[ct * PB_SB_NMET + k] / 1099511627776.0, want_t[b][k], 1e-12);
        /* U - A3_TTA (Table 34) is summed for mild cells in the mild row only */
        ck_assert_int_eq(cnt[ca * PB_SB_NMET + k], row == 1);
        ck_assert_int_eq(cnt[cg * PB_SB_NMET + k], row == 1);
        if (row == 1) {
          ck_assert_double_eq_tol((double)sum[ca * PB_SB_NMET + k] / 1099511627776.0, want_a[b][k], 1e-12);
          ck_assert_double_eq_tol((double)sum[cg * PB_SB_NMET + k] / 1099511627776.0, want_t[b][k], 1e-12);
        }
        ck_assert_int_eq(sum[k], 0); /* U - S with S = U */
      }
    }
  struct pb_interval iv;
  pb_screen_boot_class_interval(&B, 1, ct * PB_SB_NMET, &iv);
  ck_assert_int_eq(iv.n_draws, 2);
  ck_assert_double_eq_tol(iv.lo, 1, 1e-12);
  ck_assert_double_eq_tol(iv.hi, 1, 1e-12);
  /* a severe cell: U - TTA in both rows, U - A3_TTA and U - agree_TTA nowhere */
  memset(B.sum, 0, 2 * (size_t)B.n_stat * PB_SB_NROWS_PER_TARGET * sizeof *B.sum);
  memset(B.cnt, 0, 2 * (size_t)B.n_stat * PB_SB_NROWS_PER_TARGET * sizeof *B.cnt);
  pb_screen_boot_cell(&B, 0, PB_TIER_MILD + 1, 4, label, y, score, order, n_order);
  for (int row = 0; row < PB_SB_NROWS_PER_TARGET; row++)
    for (int k = 0; k < PB_SB_NMET; k++) {
      const int64_t *cnt = B.cnt + (size_t)row * 2 * (size_t)B.n_stat;
      ck_assert_int_eq(cnt[ct * PB_SB_NMET + k], row == 0 || row == PB_TIER_MILD + 2);
      ck_assert_int_eq(cnt[ca * PB_SB_NMET + k], 0);
      ck_assert_int_eq(cnt[cg * PB_SB_NMET + k], 0);
    }
  for (int j = 0; j < B.n_scores; j++) free(order[j]);
  pb_screen_boot_free(&B);
}
END_TEST

static Suite *tta_suite(void)
{
  Suite *s = suite_create("screen_tta");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_u0_agreement_hand);
  tcase_add_test(tc, test_greedy_hand);
  tcase_add_test(tc, test_greedy_reference);
  tcase_add_test(tc, test_class_boot_tta_hand);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(tta_suite()); }
