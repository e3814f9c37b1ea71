/* Report tables described once (src/core/table.c): the TSV and markdown of
 * one description, columns kept to one side, TSV-only tables and columns
 * built at run time, against text written out here by hand. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pairbound/table.h"

#include "testlib.h"

struct row {
  const char *name;
  int64_t n;
  double x[2];
};

static union pb_cell get(const void *ctx, const struct pb_column *c)
{
  const struct row *r = ctx;
  switch (c->slot) {
  case 0: return (union pb_cell){.s = r->name};
  case 1: return (union pb_cell){.i = r->n};
  default: return (union pb_cell){.x = r->x[c->slot - 2]};
  }
}

START_TEST(test_both_sides)
{
  static const struct pb_column cols[] = {{"name", PB_COL_STR, .slot = 0},
                                          {"n", PB_COL_INT, .slot = 1},
                                          {"x", PB_COL_NUM, 2, .slot = 2, .md = "X"},
                                          {"d", PB_COL_NUM, -1, .slot = 3},
                                          {NULL}};
  static const struct pb_table_spec spec = {"T", "Note.", cols};
  struct pb_table t = {{0}, {0}};
  ck_assert_int_eq(pb_table_n_cols(&spec), 4);
  pb_table_open(&t, &spec);
  pb_table_row(&t, &spec, get, &(struct row){"a", 3, {0.125, 0.25}});
  pb_table_row(&t, &spec, get, &(struct row){"b", -2, {NAN, -0.25}});
  ck_assert_str_eq(t.tsv.buf, "name\tn\tx\td\na\t3\t0.125\t0.25\nb\t-2\tnan\t-0.25\n");
  ck_assert_str_eq(t.md.buf, "\n### T\n\nNote.\n\n| name | n | X | d |\n|---|---|---|---|\n"
                             "| a | 3 | 0.12 | +0.2 |\n| b | -2 | n/a | -0.2 |\n");
  pb_text_free(&t.tsv);
  pb_text_free(&t.md);
}
END_TEST

/* A number that opens a row, columns on one side only (the first TSV and the
 * first markdown column differ), and the same rows as a TSV-only table. */
START_TEST(test_one_side)
{
  static const struct pb_column cols[] = {{"x", PB_COL_NUM, .slot = 2, .side = PB_COL_TSV_ONLY},
                                          {"name", PB_COL_STR, .slot = 0, .side = PB_COL_MD_ONLY},
                                          {"n", PB_COL_INT, .slot = 1},
                                          {"y", PB_COL_NUM, 1, .slot = 3, .side = PB_COL_MD_ONLY},
                                          {NULL}};
  static const struct pb_table_spec spec = {"T", "Note.", cols};
  const struct row r = {"a", 7, {1.5, 0.25}};
  struct pb_table t = {{0}, {0}};
  struct pb_text tsv = {0};
  pb_table_open(&t, &spec);
  pb_table_row(&t, &spec, get, &r);
  pb_table_tsv_open(&tsv, &spec);
  pb_table_tsv_row(&tsv, &spec, get, &r);
  ck_assert_str_eq(t.tsv.buf, "x\tn\n1.5\t7\n");
  ck_assert_str_eq(t.md.buf, "\n### T\n\nNote.\n\n| name | n | y |\n|---|---|---|\n| a | 7 | 0.2 |\n");
  ck_assert_str_eq(tsv.buf, t.tsv.buf);
  pb_text_free(&t.tsv);
  pb_text_free(&t.md);
  pb_text_free(&tsv);
}
END_TEST

START_TEST(test_built_columns)
{
  struct pb_column *cols = pb_table_cols_new(3);
  pb_table_col_name(&cols[0], "name");
  for (int j = 1; j < 3; j++) {
    pb_table_col_name(&cols[j], "col %d", j);
    cols[j].fmt = PB_COL_NUM, cols[j].slot = 1 + j;
  }
  const struct pb_table_spec spec = {NULL, NULL, cols};
  ck_assert_int_eq(pb_table_n_cols(&spec), 3);
  struct pb_text tsv = {0};
  pb_table_tsv_open(&tsv, &spec);
  pb_table_tsv_row(&tsv, &spec, get, &(struct row){"a", 0, {1e-300, 2}});
  ck_assert_str_eq(tsv.buf, "name\tcol 1\tcol 2\na\t1e-300\t2\n");
  pb_table_cols_free(cols);
  pb_text_free(&tsv);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("table");
  TCase *tc = tcase_create("table");
  tcase_add_test(tc, test_both_sides);
  tcase_add_test(tc, test_one_side);
  tcase_add_test(tc, test_built_columns);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(suite()); }
