/* Label sets (src/core/lsets.c): the `labels` field's parsing and canonical
 * text, and correctness under sets through the one prediction map
 * (pb_lsets_pred) that every kernel's pred == label test reads.  The hand
 * example's states are worked out below from record-attached correctness
 * (a record is correct iff its prediction is in its image's set), not from
 * the code. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "pairbound/bounds.h"
#include "pairbound/cell.h"
#include "pairbound/error.h"
#include "pairbound/lsets.h"
#include "pairbound/states.h"

#include "testlib.h"

START_TEST(test_parse)
{
  int32_t ids[8], n = -1;
  char buf[64];
  ck_assert_int_eq(pb_lsets_parse("", ids, 8, &n), PB_OK);
  ck_assert_int_eq(n, 0);
  ck_assert_int_eq(pb_lsets_parse("250;3;17", ids, 8, &n), PB_OK); /* unsorted input is accepted ... */
  ck_assert_int_eq(n, 3);
  ck_assert_int_eq(ids[0], 3);
  ck_assert_int_eq(ids[1], 17);
  ck_assert_int_eq(ids[2], 250);
  pb_lsets_text(ids, n, buf, sizeof buf); /* ... and written ascending */
  ck_assert_str_eq(buf, "3;17;250");
  ck_assert_int_eq(pb_lsets_parse("3;3", ids, 8, &n), PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "class 3 twice in label set '3;3'");
  ck_assert_int_eq(pb_lsets_parse("3;;4", ids, 8, &n), PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "empty class id in label set '3;;4'");
  ck_assert_int_eq(pb_lsets_parse("-1", ids, 8, &n), PB_FAIL);
  ck_assert_int_eq(pb_lsets_parse("1;2;3", ids, 2, &n), PB_FAIL);
  ck_assert(pb_lsets_has((int32_t[]){3, 17, 250}, 3, 17));
  ck_assert(!pb_lsets_has((int32_t[]){3, 17, 250}, 3, 18));
}
END_TEST

/* Membership in sets of 0 to 20 classes (scanned up to 8, searched above),
 * every class from -1 to 3n + 2 asked, against the definition: some id equals
 * it; and pb_lsets_pred's three cases on each. */
START_TEST(test_has_every_size)
{
  int32_t ids[20];
  for (int32_t n = 0; n <= 20; n++) {
    for (int32_t j = 0; j < n; j++) ids[j] = 3 * j + (j % 2); /* ascending, gaps of 2 to 4 */
    for (int32_t c = -1; c <= 3 * n + 2; c++) {
      int want = 0;
      for (int32_t j = 0; j < n; j++) want |= ids[j] == c;
      ck_assert_msg(pb_lsets_has(ids, n, c) == want, "n %d class %d", n, c);
      const int32_t label = 1, K = 100;
      const int32_t expect = want ? label : c == label ? K : c;
      ck_assert_int_eq(pb_lsets_pred(ids, n, label, c, K), expect);
    }
  }
}
END_TEST

/* Eight images of three classes, one cell (clean pred0, perturbed pred1):
 *
 *  img label set    pred0 pred1  single          set (record-attached)
 *  1   0     {0,1}  1     0      r               k (two different correct answers: k_different)
 *  2   1     {1}    1     2      h               h
 *  3   2     {0}    2     2      k               s (the label is not in the set: both wrong, same answer)
 *  4   0     {0,2}  2     1      w               h
 *  5   1     {0}    1     0      h               r
 *  6   2     {2}    0     0      s               s
 *  7   1     {0}    1     2      h               w (1 and 2 both wrong and different: the map must keep them apart)
 *  8   1     {0}    2     1      r               w
 *
 * single: k 1, h 3, r 2, s 1, w 1;  set: k 2-1 = 1 (k_equal 0, k_different 1), h 2, r 1, s 2, w 2.
 * Eq. 15 under sets: q_agree = #(pred0 == pred1) = 2 (images 3, 6), a1 = k + r = 2, so q_agree - a1 = 0 =
 * s - r - k_different = 2 - 1 - 1. */
START_TEST(test_hand_example)
{
  static const int32_t label[8] = {0, 1, 2, 0, 1, 2, 1, 1}, pred0[8] = {1, 1, 2, 2, 1, 0, 1, 2},
                       pred1[8] = {0, 2, 2, 1, 0, 0, 2, 1};
  static const int32_t off[9] = {0, 2, 3, 4, 6, 7, 8, 9, 10}, ids[10] = {0, 1, 1, 0, 0, 2, 0, 2, 0, 0};
  int32_t m0[8], m1[8];
  for (int i = 0; i < 8; i++) {
    m0[i] = pb_lsets_pred(ids + off[i], off[i + 1] - off[i], label[i], pred0[i], 3);
    m1[i] = pb_lsets_pred(ids + off[i], off[i + 1] - off[i], label[i], pred1[i], 3);
    ck_assert(m0[i] >= 0 && m0[i] <= 3 && m1[i] >= 0 && m1[i] <= 3); /* a class, or 3 = n_classes: "the label, not in the set" */
  }
  struct pb_cell_data single = {.n = 8, .label = label, .pred0 = pred0, .pred1 = pred1};
  struct pb_cell_data set = {.n = 8, .label = label, .pred0 = m0, .pred1 = m1};
  struct pb_states a, b;
  pb_states_count(&single, &a);
  pb_states_count(&set, &b);
  ck_assert_int_eq(a.k, 1);
  ck_assert_int_eq(a.h, 3);
  ck_assert_int_eq(a.r, 2);
  ck_assert_int_eq(a.s, 1);
  ck_assert_int_eq(a.w, 1);
  ck_assert_int_eq(b.k, 1);
  ck_assert_int_eq(b.h, 2);
  ck_assert_int_eq(b.r, 1);
  ck_assert_int_eq(b.s, 2);
  ck_assert_int_eq(b.w, 2);
  int64_t agree = 0, k_diff = 0;
  for (int i = 0; i < 8; i++) {
    agree += pred0[i] == pred1[i];
    k_diff += m0[i] == label[i] && m1[i] == label[i] && pred0[i] != pred1[i];
  }
  ck_assert_int_eq(k_diff, 1);
  ck_assert_int_eq(agree - (b.k + b.r), b.s - b.r - k_diff); /* Eq. 15 */
}
END_TEST

/* The prediction map's one value per class for "predicted the original label y, y not in the set": the
 * analyses pair records of different images of a class (within-class reassignment), so that value must be
 * the same for every image of the class and taken by no real prediction.  One class y = 0 of 4 classes:
 *
 *  img set    pred0 pred1
 *  A   {1}    0     1       clean wrong (predicts y), perturbed correct
 *  B   {2}    0     0       both wrong, both predict y
 *  C   {0,3}  3     1       clean correct, perturbed wrong with 1 = min(S_A), 1 not in S_C
 *
 * Pairing 1 (clean A-pert B, clean B-pert C, clean C-pert A): (0,0) both wrong, same label: s; (0,1) both wrong,
 * different labels: w; (3,1) both correct: k.  k 1, s 1, w 1.
 * Pairing 2 (clean A-pert C, clean B-pert A, clean C-pert B): (0,1) wrong, wrong, different: w; (0,1) wrong then
 * correct: r; (3,0) correct then wrong: h.  h 1, r 1, w 1. */
static int32_t map(const int32_t *ids, int32_t n, int32_t y, int32_t p, int32_t K)
{
  return pb_lsets_pred(ids, n, y, p, K);
}

static void count_pairing(const int32_t *off, const int32_t *ids, const int32_t *label, const int32_t *pred0,
                          const int32_t *pred1, const int *perm, int32_t n, int32_t K, struct pb_states *out)
{
  int32_t m0[8], m1[8];
  for (int32_t i = 0; i < n; i++) {
    const int32_t j = perm[i];
    m0[i] = map(ids + off[i], off[i + 1] - off[i], label[i], pred0[i], K);
    m1[i] = map(ids + off[j], off[j + 1] - off[j], label[j], pred1[j], K);
  }
  struct pb_cell_data c = {.n = n, .label = label, .pred0 = m0, .pred1 = m1};
  pb_states_count(&c, out);
}

START_TEST(test_across_images)
{
  static const int32_t off[4] = {0, 1, 2, 4}, ids[4] = {1, 2, 0, 3}, label[3] = {0, 0, 0};
  static const int32_t pred0[3] = {0, 0, 3}, pred1[3] = {1, 0, 1};
  static const int perm1[3] = {1, 2, 0}, perm2[3] = {2, 0, 1};
  struct pb_states a, b;
  count_pairing(off, ids, label, pred0, pred1, perm1, 3, 4, &a);
  ck_assert_int_eq(a.k, 1);
  ck_assert_int_eq(a.h, 0);
  ck_assert_int_eq(a.r, 0);
  ck_assert_int_eq(a.s, 1);
  ck_assert_int_eq(a.w, 1);
  count_pairing(off, ids, label, pred0, pred1, perm2, 3, 4, &b);
  ck_assert_int_eq(b.k, 0);
  ck_assert_int_eq(b.h, 1);
  ck_assert_int_eq(b.r, 1);
  ck_assert_int_eq(b.s, 0);
  ck_assert_int_eq(b.w, 1);
}
END_TEST

/* Brute force: random classes of up to 5 images over 4 classes, random sets (some without the label) and
 * predictions; for every within-class pairing, the five states judged per record from the raw sets and the
 * original predictions (s: both wrong with the same original prediction) equal pb_states_count's on the
 * mapped predictions. */
START_TEST(test_brute_force)
{
  enum { K = 4, NMAX = 5 };
  for (int rep = 0; rep < 400; rep++) {
    const int32_t n = rng_int(1, NMAX), y = rng_int(0, K - 1);
    int32_t off[NMAX + 1] = {0}, ids[NMAX * K], label[NMAX], pred0[NMAX], pred1[NMAX];
    for (int32_t i = 0; i < n; i++) {
      off[i + 1] = off[i];
      for (int32_t c = 0; c < K; c++)
        if (rng_int(0, 2) == 0) ids[off[i + 1]++] = c;
      if (off[i + 1] == off[i]) ids[off[i + 1]++] = rng_int(0, K - 1); /* nonempty: the matched cohort */
      label[i] = y, pred0[i] = rng_int(0, K - 1), pred1[i] = rng_int(0, K - 1);
    }
    int perm[NMAX];
    for (int32_t i = 0; i < n; i++) perm[i] = i;
    for (;;) { /* every permutation, in lexicographic order */
      int64_t ref[5] = {0}; /* k h r s w */
      for (int32_t i = 0; i < n; i++) {
        const int j = perm[i];
        const int c0 = pb_lsets_has(ids + off[i], off[i + 1] - off[i], pred0[i]);
        const int c1 = pb_lsets_has(ids + off[j], off[j + 1] - off[j], pred1[j]);
        ref[c0 && c1 ? 0 : c0 ? 1 : c1 ? 2 : pred0[i] == pred1[j] ? 3 : 4]++;
      }
      struct pb_states st;
      count_pairing(off, ids, label, pred0, pred1, perm, n, K, &st);
      ck_assert_int_eq(st.k, ref[0]);
      ck_assert_int_eq(st.h, ref[1]);
      ck_assert_int_eq(st.r, ref[2]);
      ck_assert_int_eq(st.s, ref[3]);
      ck_assert_int_eq(st.w, ref[4]);
      int a = n - 2;
      while (a >= 0 && perm[a] > perm[a + 1]) a--;
      if (a < 0) break;
      int b = n - 1;
      while (perm[b] < perm[a]) b--;
      int t = perm[a];
      perm[a] = perm[b], perm[b] = t;
      for (int l = a + 1, r = n - 1; l < r; l++, r--) t = perm[l], perm[l] = perm[r], perm[r] = t;
    }
  }
}
END_TEST

/* Tables 47 and 48 on the hand example above (one cell), plus a ninth image with an empty set (left out:
 * it would be s under both conventions).  Thresholds tau = 0.5, every max probability 0.9 but image 1's and
 * image 2's perturbed 0.1 (rejected).
 *  original: k 1 (k_equal 1), h 3 (images 2, 5, 7), r 2, s 1, w 1; a1 = k + r = 3.
 *    H (clean correct accepted, perturbed wrong accepted): h images with the perturbed accepted: 5, 7 -> 2.
 *    L (clean correct accepted, perturbed correct rejected): k image 3 is accepted -> 0.
 *  set: k 1 (k_different 1: image 1), h 2 (2, 4), r 1 (5), s 2 (3, 6), w 2 (7, 8); a1 = 2.
 *    H: image 4 (image 2's perturbed is rejected) -> 1.  L: image 1 (k, perturbed rejected) -> 1.
 *  moved: original h images 2, 5, 7 -> h, r, w: 2 moved; original w image 4 -> h: 1 moved.
 *  q_agree = 2 (images 3, 6); Eq. 15 holds in both conventions: original 2 - 3 = 1 - 2 - 0, set 2 - 2 = 2 - 1 - 1. */
START_TEST(test_tables_47_48)
{
  static const int32_t label[9] = {0, 1, 2, 0, 1, 2, 1, 1, 0}, pred0[9] = {1, 1, 2, 2, 1, 0, 1, 2, 1},
                       pred1[9] = {0, 2, 2, 1, 0, 0, 2, 1, 1};
  static const int64_t off[10] = {0, 2, 3, 4, 6, 7, 8, 9, 10, 10};
  static const int32_t ids[10] = {0, 1, 1, 0, 0, 2, 0, 2, 0, 0};
  static const float s0[9] = {0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f},
                     s1[9] = {0.1f, 0.1f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f};
  static const float m[9] = {0};
  const struct pb_cell_view v = {.n = 9, .label = label, .pred0 = pred0, .s0 = s0, .m0 = m, .pred1 = pred1, .s1 = s1,
                                 .m1 = m, .tau = 0.5f};
  int64_t o[PB_LS_N_SLOTS];
  double dmk[2];
  pb_bounds_lsets_cell(&v, off, ids, 3, o, dmk);
  const int64_t *a = o + PB_LS_CONV, *b = a + PB_LS_NSTATE;
  ck_assert_int_eq(o[PB_LS_N], 8);
  ck_assert_int_eq(o[PB_LS_CELLS], 1);
  ck_assert_int_eq(o[PB_LS_AGREE], 2);
  const int64_t want_a[PB_LS_NSTATE] = {[PB_LSS_H] = 3, [PB_LSS_R] = 2, [PB_LSS_K] = 1, [PB_LSS_KEQ] = 1,
                                        [PB_LSS_KDIFF] = 0, [PB_LSS_S] = 1, [PB_LSS_W] = 1, [PB_LSS_HACC] = 2,
                                        [PB_LSS_LACC] = 0};
  const int64_t want_b[PB_LS_NSTATE] = {[PB_LSS_H] = 2, [PB_LSS_R] = 1, [PB_LSS_K] = 1, [PB_LSS_KEQ] = 0,
                                        [PB_LSS_KDIFF] = 1, [PB_LSS_S] = 2, [PB_LSS_W] = 2, [PB_LSS_HACC] = 1,
                                        [PB_LSS_LACC] = 1};
  for (int k = 0; k < PB_LS_NSTATE; k++) {
    ck_assert_int_eq(a[k], want_a[k]);
    ck_assert_int_eq(b[k], want_b[k]);
  }
  ck_assert_int_eq(o[PB_LS_MOVED_H], 2);
  ck_assert_int_eq(o[PB_LS_MOVED_W], 1);
  ck_assert_int_eq(o[PB_LS_EQ15_FAIL], 0);
}
END_TEST

/* Appendix J.1's splits and restricted dM_k on one cell of 4 classes (0..3), every max probability 0.9 at
 * tau = 0.5.  Images (label y, set S, clean / perturbed prediction, M, M'):
 *   1: y 0, {0,1}, 0 / 0, .9 / .6   original k (k_equal), set k; retained
 *   2: y 1, {1,2}, 1 / 2, .8 / .3   original h, set k (k_different); retained
 *   3: y 2, {0,3}, 0 / 3, .1 / .2   original w, set k (k_different); removed: its k pair is left out of dM_k
 *   4: y 3, {3},   1 / 1, .2 / .1   original s, set s; retained
 *   5: y 1, {5},   1 / 0, .7 / .4   original h, set w (5 is no class: incompatible); removed
 *   6: y 2, {},    2 / 2, .5 / .5   empty set: left out (it would be an original k)
 *   7: y 0, {1,2}, 0 / 0, .6 / .2   original k (k_equal), left out of dM_k (0 not in S); set s; removed
 * Matched 6.  compatible {1,2,3,4,7}: 5 images; perturbed correct original 1, 7 -> 2, set 1, 2, 3 -> 3;
 * s original 4 -> 1, set 4, 7 -> 2.  retained {1,2,4}: 3 images; perturbed correct original 1 -> 1, set 1, 2
 * -> 2; s original 4 -> 1, set 4 -> 1.  dM_k on retained k pairs: original image 1: .9 - .6 = .3; set images
 * 1, 2: (.3 + .5) / 2 = .4 (all k pairs would give .35 and (.3 + .5 - .1) / 3). */
START_TEST(test_j1_splits)
{
  static const int32_t label[7] = {0, 1, 2, 3, 1, 2, 0}, pred0[7] = {0, 1, 0, 1, 1, 2, 0},
                       pred1[7] = {0, 2, 3, 1, 0, 2, 0};
  static const int64_t off[8] = {0, 2, 4, 6, 7, 8, 8, 10};
  static const int32_t ids[10] = {0, 1, 1, 2, 0, 3, 3, 5, 1, 2};
  static const float s[7] = {0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f},
                     m0[7] = {0.9f, 0.8f, 0.1f, 0.2f, 0.7f, 0.5f, 0.6f}, m1[7] = {0.6f, 0.3f, 0.2f, 0.1f, 0.4f, 0.5f, 0.2f};
  const struct pb_cell_view v = {.n = 7, .label = label, .pred0 = pred0, .s0 = s, .m0 = m0, .pred1 = pred1, .s1 = s,
                                 .m1 = m1, .tau = 0.5f};
  int64_t o[PB_LS_N_SLOTS];
  double dmk[2];
  pb_bounds_lsets_cell(&v, off, ids, 4, o, dmk);
  ck_assert_int_eq(o[PB_LS_N], 6);
  const int64_t *cp = o + PB_LS_SPLIT + PB_LSG_COMPATIBLE * PB_LSG_N, *rt = o + PB_LS_SPLIT + PB_LSG_RETAINED * PB_LSG_N;
  const int64_t want_cp[PB_LSG_N] = {[PB_LSG_IMAGES] = 5, [PB_LSG_A1] = 2, [PB_LSG_A1 + 1] = 3, [PB_LSG_S] = 1,
                                     [PB_LSG_S + 1] = 2};
  const int64_t want_rt[PB_LSG_N] = {[PB_LSG_IMAGES] = 3, [PB_LSG_A1] = 1, [PB_LSG_A1 + 1] = 2, [PB_LSG_S] = 1,
                                     [PB_LSG_S + 1] = 1};
  for (int k = 0; k < PB_LSG_N; k++) {
    ck_assert_int_eq(cp[k], want_cp[k]);
    ck_assert_int_eq(rt[k], want_rt[k]);
  }
  ck_assert_double_eq_tol(dmk[0], 0.3, 1e-6);
  ck_assert_double_eq_tol(dmk[1], 0.4, 1e-6);
  /* no retained k pair: undefined */
  static const int32_t only_removed[7] = {0, 0, 0, 0, 0, 0, 0};
  const int64_t off7[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  const int32_t ids7[7] = {3, 3, 3, 3, 3, 3, 3};
  const struct pb_cell_view u = {.n = 7, .label = only_removed, .pred0 = only_removed, .s0 = s, .m0 = m0,
                                 .pred1 = only_removed, .s1 = s, .m1 = m1, .tau = 0.5f};
  pb_bounds_lsets_cell(&u, off7, ids7, 4, o, dmk);
  ck_assert(isnan(dmk[0]) && isnan(dmk[1]));
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("lsets");
  TCase *tc = tcase_create("lsets");
  tcase_add_test(tc, test_parse);
  tcase_add_test(tc, test_has_every_size);
  tcase_add_test(tc, test_hand_example);
  tcase_add_test(tc, test_across_images);
  tcase_add_test(tc, test_brute_force);
  tcase_add_test(tc, test_tables_47_48);
  tcase_add_test(tc, test_j1_splits);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(suite()); }
