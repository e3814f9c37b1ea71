/* Label sets (src/core/lsets.c): the `labels` field's parsing and canonical
 * text, and correctness under sets through the one prediction map
 * (pb_lsets_pred) that every kernel's pred == label test reads.  The hand
 * example's states are worked out below from record-attached correctness
 * (a record is correct iff its prediction is in its image's set), not from
 * the code. */
#include "config.h"

#include <string.h>

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
    m0[i] = pb_lsets_pred(ids + off[i], off[i + 1] - off[i], label[i], pred0[i]);
    m1[i] = pb_lsets_pred(ids + off[i], off[i + 1] - off[i], label[i], pred1[i]);
    ck_assert(m0[i] >= 0 && m0[i] < 3 && m1[i] >= 0 && m1[i] < 3); /* still classes of the source */
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

static Suite *suite(void)
{
  Suite *s = suite_create("lsets");
  TCase *tc = tcase_create("lsets");
  tcase_add_test(tc, test_parse);
  tcase_add_test(tc, test_hand_example);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(suite()); }
