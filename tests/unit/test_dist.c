/* Work distribution (src/core/dist.c): hand-worked partitions under the midpoint
 * rule documented in include/pairbound/dist.h, properties of partitions of
 * random costs checked against their definition, and the global cell order.
 * The seed is PB_TEST_SEED (default 20260908) and is always printed. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/rng.h"
#include "pairbound/store.h"
#include "testlib.h"

static void expect_partition(int64_t n, const int64_t *cost, int nparts, const int64_t *want)
{
  int64_t first[64];
  for (int p = 0; p <= nparts; p++) first[p] = -99;
  pb_dist_partition(n, cost, nparts, first);
  for (int p = 0; p <= nparts; p++)
    ck_assert_msg(first[p] == want[p], "n = %lld, %d parts: first[%d] = %lld, expected %lld", (long long)n, nparts,
                  p, (long long)first[p], (long long)want[p]);
}

/* Worked by hand: item i with cost c starting at cumulative cost b goes to
 * part floor((b + c/2) * P / total), capped at P - 1. */
START_TEST(test_partition_hand)
{
  /* 4 unit items, 2 parts: midpoints .5 1.5 | 2.5 3.5, boundary at 2 */
  expect_partition(4, NULL, 2, (int64_t[]){0, 2, 4});
  const int64_t four[4] = {3, 3, 3, 3};
  expect_partition(4, four, 2, (int64_t[]){0, 2, 4});
  /* {10, 1 x 10}, 2 parts, total 20: the big item's midpoint 5 < 10 (part 0),
   * the next one's 10.5 >= 10 (part 1): 10 | 10 */
  const int64_t heavy[11] = {10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  expect_partition(11, heavy, 2, (int64_t[]){0, 1, 11});
  /* 3 parts of the same, boundaries 6.67 and 13.33: midpoints 5 | 10.5 .. 12.5 | 13.5 .. 19.5 */
  expect_partition(11, heavy, 3, (int64_t[]){0, 1, 4, 11});
  /* 5 unit items, 2 parts: the middle item's midpoint 2.5 is exactly the
   * boundary and goes to the upper part */
  expect_partition(5, NULL, 2, (int64_t[]){0, 2, 5});
  /* 7 unit items, 3 parts: boundaries 2.33 and 4.67 */
  expect_partition(7, NULL, 3, (int64_t[]){0, 2, 5, 7});
  /* zero-cost items follow their neighbours' midpoints: {0,0,5,0,0}, total 5,
   * midpoints 0 0 2.5 5 5 -> parts 0 0 1 1(capped) 1 */
  const int64_t zeros[5] = {0, 0, 5, 0, 0};
  expect_partition(5, zeros, 2, (int64_t[]){0, 2, 5});
  /* all costs zero: everything in part 0 */
  const int64_t none[3] = {0, 0, 0};
  expect_partition(3, none, 3, (int64_t[]){0, 3, 3, 3});
  /* more parts than items: 2 unit items in 5 parts, midpoints .5 and 1.5 of
   * total 2 -> parts floor(1.25) = 1 and floor(3.75) = 3 */
  expect_partition(2, NULL, 5, (int64_t[]){0, 0, 1, 1, 2, 2});
  /* no items */
  expect_partition(0, NULL, 3, (int64_t[]){0, 0, 0, 0});
  /* one part takes everything */
  expect_partition(6, NULL, 1, (int64_t[]){0, 6});
  /* huge costs: (2 * before + c) * P exceeds 2^63, so the rule needs wide
   * arithmetic.  Four items of 2^58 in 32 parts: midpoints (2i + 1) 2^57 of
   * total 2^60 fall in parts (2i + 1) * 4 = 4, 12, 20, 28 */
  const int64_t huge[4] = {INT64_C(1) << 58, INT64_C(1) << 58, INT64_C(1) << 58, INT64_C(1) << 58};
  int64_t want[33];
  for (int p = 0; p <= 32; p++) want[p] = (p > 4) + (p > 12) + (p > 20) + (p > 28);
  expect_partition(4, huge, 32, want);
}
END_TEST

/* Partition properties from the definition, for random costs. */
START_TEST(test_partition_random)
{
  struct pb_rng r;
  pb_rng_init(&r, test_seed(), 21, 0, 0);
  int64_t cost[400], first[40];
  for (int trial = 0; trial < 3000; trial++) {
    int64_t n = pb_rng_below(&r, 400);
    int P = 1 + (int)pb_rng_below(&r, 37);
    int kind = trial % 4;
    int64_t total = 0, cmax = 0;
    for (int64_t i = 0; i < n; i++) {
      cost[i] = kind == 0   ? 1
                : kind == 1 ? pb_rng_below(&r, 1000)
                : kind == 2 ? (pb_rng_below(&r, 10) == 0 ? 100000 : pb_rng_below(&r, 3))
                            : 500 + pb_rng_below(&r, 2);
      total += cost[i];
      if (cost[i] > cmax) cmax = cost[i];
    }
    pb_dist_partition(n, kind == 0 ? NULL : cost, P, first);
    ck_assert_int_eq(first[0], 0);
    ck_assert_int_eq(first[P], n);
    for (int p = 0; p < P; p++) {
      ck_assert_msg(first[p] <= first[p + 1], "trial %d: part %d decreasing", trial, p);
      int64_t part = 0;
      for (int64_t i = first[p]; i < first[p + 1]; i++) part += cost[i];
      /* |part * P - total| <= cmax * P, i.e. within cmax of total / P, in integers */
      int64_t dev = part * P - total;
      if (dev < 0) dev = -dev;
      ck_assert_msg(dev <= cmax * P, "trial %d (n %lld, P %d): part %d costs %lld, total %lld, max item %lld",
                    trial, (long long)n, P, p, (long long)part, (long long)total, (long long)cmax);
    }
    /* the midpoint rule, checked item by item */
    int64_t before = 0;
    for (int p = 0, i = 0; i < n; i++) {
      while (first[p + 1] <= i) p++;
      if (total > 0) {
        int64_t twice_mid = 2 * before + cost[i];
        int64_t want = twice_mid * P / (2 * total);
        if (want > P - 1) want = P - 1;
        ck_assert_msg(p == want, "trial %d: item %d in part %d, midpoint says %lld", trial, i, p, (long long)want);
      }
      before += cost[i];
    }
    /* equal costs and n divisible by P: exactly n / P each */
    if (kind == 0 && n % P == 0)
      for (int p = 0; p < P; p++) ck_assert_int_eq(first[p + 1] - first[p], n / P);
  }
}
END_TEST

START_TEST(test_partition_bcast)
{
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int64_t cost[6] = {5, 1, 1, 1, 1, 1};
  int64_t a[64], b[64];
  pb_dist_partition(6, cost, size, a);
  pb_dist_partition_bcast(6, cost, MPI_COMM_WORLD, b);
  for (int p = 0; p <= size; p++) ck_assert_int_eq(a[p], b[p]);
}
END_TEST

/* ----------------------------------------------------------------- cells */

/* Two sources: A with conditions {fog, clean, snow} and 5 images (3 eval),
 * B with {clean, blur} and 2 images (2 eval); 3 models. */
static void hand_meta(struct pb_meta *m)
{
  static char *models[3] = {"m0", "m1", "m2"}, *groups[3] = {"g", "g", "h"};
  static char *condA[3] = {"fog", "clean", "snow"}, *condB[2] = {"clean", "blur"};
  static char *imgA[5] = {"a1", "a2", "a3", "a4", "a5"}, *imgB[2] = {"b1", "b2"};
  static int32_t labA[5] = {0, 1, 0, 1, 2}, labB[2] = {1, 0};
  static uint8_t splA[5] = {1, 0, 1, 0, 1}, splB[2] = {1, 1};
  static struct pb_source src[2];
  src[0] = (struct pb_source){"A", 3, 5, imgA, labA, splA, 3, condA, 1, PB_ROLE_REAL, 0, 0, NULL, NULL};
  src[1] = (struct pb_source){"B", 2, 2, imgB, labB, splB, 2, condB, 0, PB_ROLE_REAL, 0, 0, NULL, NULL};
  *m = (struct pb_meta){3, models, groups, 2, src, 0, NULL};
}

START_TEST(test_cells_order)
{
  struct pb_meta meta;
  hand_meta(&meta);
  ck_assert(pb_meta_validate(&meta) == PB_OK);
  struct pb_cell_ref *cells;
  int64_t n = pb_dist_cells(&meta, &cells);
  /* source-major, then model, then condition, clean skipped */
  const struct pb_cell_ref want[9] = {{0, 0, 0}, {0, 0, 2}, {0, 1, 0}, {0, 1, 2}, {0, 2, 0},
                                      {0, 2, 2}, {1, 0, 1}, {1, 1, 1}, {1, 2, 1}};
  ck_assert_int_eq(n, 9);
  ck_assert_int_eq(pb_meta_cells(&meta), 9);
  for (int i = 0; i < 9; i++)
    ck_assert_msg(cells[i].source == want[i].source && cells[i].model == want[i].model &&
                      cells[i].condition == want[i].condition,
                  "cell %d = (%d, %d, %d)", i, cells[i].source, cells[i].model, cells[i].condition);
  for (int i = 0; i < 9; i++) {
    const struct pb_cell_ref r = pb_dist_cell_at(&meta, i);
    ck_assert_msg(r.source == want[i].source && r.model == want[i].model && r.condition == want[i].condition,
                  "cell_at %d = (%d, %d, %d)", i, r.source, r.model, r.condition);
  }
  ck_assert_int_eq(pb_dist_cell_at(&meta, 9).source, -1);
  free(cells);
  /* a probe source (natural or extra) has no cells: B's come first */
  meta.sources[0].role = PB_ROLE_NATURAL;
  n = pb_dist_cells(&meta, &cells);
  ck_assert_int_eq(n, 3);
  for (int i = 0; i < 3; i++) {
    const struct pb_cell_ref r = pb_dist_cell_at(&meta, i);
    ck_assert(r.source == 1 && r.model == i && r.condition == 1 && cells[i].model == i);
  }
  free(cells);
  meta.sources[0].role = PB_ROLE_EXTRA;
  ck_assert_int_eq(pb_dist_cells(&meta, &cells), 3);
  free(cells);
  meta.sources[0].role = PB_ROLE_REAL;
  ck_assert_int_eq(pb_dist_eval_count(&meta.sources[0]), 3);
  ck_assert_int_eq(pb_dist_eval_count(&meta.sources[1]), 2);
}
END_TEST

/* On one rank (or each rank of a larger job) the ranges tile the work. */
START_TEST(test_my_cells_rows)
{
  struct pb_meta meta;
  hand_meta(&meta);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int64_t first, last;
  pb_dist_my_cells(&meta, MPI_COMM_SELF, &first, &last);
  ck_assert_int_eq(first, 0);
  ck_assert_int_eq(last, 9);
  int32_t lo[2], hi[2];
  pb_dist_my_rows(&meta, MPI_COMM_SELF, lo, hi);
  ck_assert_int_eq(lo[0], 0);
  ck_assert_int_eq(hi[0], 9); /* 3 models x 3 conditions */
  ck_assert_int_eq(lo[1], 0);
  ck_assert_int_eq(hi[1], 6);
  /* over the world: ranges are contiguous and cover each list once */
  int64_t f = 0, l = 0, *all = malloc(2 * (size_t)size * sizeof *all);
  pb_dist_my_cells(&meta, MPI_COMM_WORLD, &f, &l);
  int64_t mine[2] = {f, l};
  MPI_Allgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, MPI_COMM_WORLD);
  ck_assert_int_eq(all[0], 0);
  ck_assert_int_eq(all[2 * size - 1], 9);
  for (int p = 1; p < size; p++) ck_assert_int_eq(all[2 * p], all[2 * p - 1]);
  free(all);
}
END_TEST

/* Rows are balanced by records: with costs = images, the hand meta's source A
 * (9 rows of 5 images, 45) and source B (6 rows of 2, 12) split over 2 parts
 * at 28.5. */
START_TEST(test_rows_cost_hand)
{
  int64_t cost[15], first[3];
  for (int i = 0; i < 15; i++) cost[i] = i < 9 ? 5 : 2;
  pb_dist_partition(15, cost, 2, first);
  /* midpoints 2.5, 7.5, ..., 27.5 (row 5), 32.5 (row 6): rows 0-5 | 6-14 */
  ck_assert_int_eq(first[1], 6);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("dist");
  TCase *tc = tcase_create("partition");
  tcase_add_test(tc, test_partition_hand);
  tcase_add_test(tc, test_partition_bcast);
  tcase_add_test(tc, test_rows_cost_hand);
  suite_add_tcase(s, tc);
  /* no MPI call: left out at 2 and 3 ranks (tests/mpi/unit_ranks.sh) */
  tc = tcase_create("kernels");
  tcase_set_tags(tc, "serial");
  tcase_add_test(tc, test_partition_random);
  suite_add_tcase(s, tc);
  tc = tcase_create("cells");
  tcase_add_test(tc, test_cells_order);
  tcase_add_test(tc, test_my_cells_rows);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(suite()); }
