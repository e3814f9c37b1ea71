/* Report figures (src/core/figure.c): the data TSV is written verbatim beside the
 * PNG, the PNG is a real PNG file, a missing gnuplot leaves a complete report
 * that says the figure was skipped, a gnuplot error names the figure and
 * leaves no PNG or temporary behind, figures sharing one gnuplot fail and
 * render independently of each other, and a gnuplot started ahead of its
 * figures draws them as a cold one and ends with its stage. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "pairbound/error.h"
#include "pairbound/figure.h"
#include "pairbound/results.h"
#include "testlib.h"

static const char data[] = "rho\tup\tdown\n0.1\t0.2\t0.1\n1\t0.5\t0.4\n3\t0.7\t0.6\n";

static const struct pb_figure fig = {
    .name = "profile",
    .title = "Fragility profile",
    .xlabel = "chi-square radius rho",
    .ylabel = "drift (fraction of inputs)",
    .script = "plot DATA using 1:2 with linespoints, DATA using 1:3 with linespoints",
};

static struct pb_results *make_results(const char *sub)
{
  struct pb_results *res = NULL;
  ck_assert_int_eq(pb_results_create(pb_test_path(sub), MPI_COMM_WORLD, "test", &res), PB_OK);
  return res;
}

static char *slurp(const char *path, size_t *len)
{
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  char *buf = malloc(1 << 20);
  *len = fread(buf, 1, 1 << 20, fp);
  fclose(fp);
  return buf;
}

START_TEST(test_figure_rendered)
{
  unsetenv("PAIRBOUND_GNUPLOT");
  if (!pb_figure_available()) {
    printf("gnuplot with pngcairo is not installed: rendering not tested here\n");
    return;
  }
  struct pb_results *res = make_results("fig1");
  struct pb_text md = {0};
  ck_assert_int_eq(pb_figure_write(res, &fig, data, strlen(data), &md), PB_OK);
  ck_assert_int_eq(pb_results_commit(res), PB_OK); /* the report appears in OUTDIR at the commit */
  size_t n;
  char *tsv = slurp(pb_test_path("fig1/report/profile.tsv"), &n);
  ck_assert_ptr_nonnull(tsv);
  ck_assert_uint_eq(n, strlen(data));
  ck_assert(memcmp(tsv, data, n) == 0);
  char *png = slurp(pb_test_path("fig1/report/profile.png"), &n);
  ck_assert_ptr_nonnull(png);
  ck_assert_uint_gt(n, 1000);
  ck_assert(memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0);
  ck_assert(!pb_test_exists(pb_test_path("fig1/report/profile.png.tmp")));
  ck_assert_ptr_nonnull(strstr(md.buf, "![Fragility profile](profile.png)"));
  /* started and finished around other work: the same PNG and markdown */
  struct pb_results *res2 = make_results("fig4");
  struct pb_figure_job job;
  struct pb_text md2 = {0};
  ck_assert_int_eq(pb_figure_start(res2, &fig, data, strlen(data), &job), PB_OK);
  pb_text_printf(&md2, "%s", "");
  ck_assert_int_eq(pb_figure_finish(&job, &md2), PB_OK);
  ck_assert_int_eq(pb_results_commit(res2), PB_OK);
  size_t n2;
  char *png2 = slurp(pb_test_path("fig4/report/profile.png"), &n2);
  ck_assert_ptr_nonnull(png2);
  ck_assert_uint_eq(n2, n);
  ck_assert(memcmp(png, png2, n) == 0);
  ck_assert_str_eq(md.buf, md2.buf);
  ck_assert(!pb_test_exists(pb_test_path("fig4/report/profile.png.tmp")));
  free(png2);
  pb_text_free(&md2); /* (the commit closed res2) */
  free(tsv);
  free(png);
  pb_text_free(&md);
}
END_TEST

START_TEST(test_figure_skipped_without_gnuplot)
{
  setenv("PAIRBOUND_GNUPLOT", "none", 1);
  ck_assert_int_eq(pb_figure_available(), 0);
  struct pb_results *res = make_results("fig2");
  struct pb_text md = {0};
  ck_assert_int_eq(pb_figure_write(res, &fig, data, strlen(data), &md), PB_OK);
  ck_assert_int_eq(pb_results_commit(res), PB_OK);
  ck_assert(pb_test_exists(pb_test_path("fig2/report/profile.tsv")));
  ck_assert(!pb_test_exists(pb_test_path("fig2/report/profile.png")));
  ck_assert_ptr_nonnull(strstr(md.buf, "skipped"));
  ck_assert_ptr_nonnull(strstr(md.buf, "profile.tsv"));
  /* a program that does not exist is the same as none */
  setenv("PAIRBOUND_GNUPLOT", "/nonexistent/gnuplot", 1);
  ck_assert_int_eq(pb_figure_available(), 0);
  unsetenv("PAIRBOUND_GNUPLOT");
  pb_text_free(&md);
}
END_TEST

/* Every value undefined (nan, or no row): nothing to plot, which gnuplot would call an error; the TSV is written
 * and the report says why there is no figure.  One finite value anywhere outside the labels draws it. */
START_TEST(test_figure_no_values)
{
  unsetenv("PAIRBOUND_GNUPLOT");
  const char *empty[] = {"x\ty\tz\n", "x\ty\tz\na\tnan\tnan\n1\t-nan\tinf\n", "x\ty\n7\tn/a\n"};
  for (int k = 0; k < 3; k++) {
    char dir[16], tsv[64], png[64];
    snprintf(dir, sizeof dir, "fig5%c", 'a' + k);
    snprintf(tsv, sizeof tsv, "%s/report/profile.tsv", dir);
    snprintf(png, sizeof png, "%s/report/profile.png", dir);
    struct pb_results *res = make_results(dir);
    struct pb_text md = {0};
    ck_assert_int_eq(pb_figure_write(res, &fig, empty[k], strlen(empty[k]), &md), PB_OK);
    ck_assert_int_eq(pb_results_commit(res), PB_OK);
    ck_assert(pb_test_exists(pb_test_path(tsv)));
    ck_assert(!pb_test_exists(pb_test_path(png)));
    ck_assert_ptr_nonnull(strstr(md.buf, "not drawn: every value is undefined"));
    pb_text_free(&md);
  }
  if (!pb_figure_available()) return;
  const char *one = "x\ty\tz\n0.1\tnan\tnan\n0.2\tnan\t0.25\n0.3\tnan\t0.5\n";
  struct pb_results *res = make_results("fig6");
  struct pb_text md = {0};
  ck_assert_int_eq(pb_figure_write(res, &fig, one, strlen(one), &md), PB_OK);
  ck_assert_int_eq(pb_results_commit(res), PB_OK);
  ck_assert(pb_test_exists(pb_test_path("fig6/report/profile.png")));
  pb_text_free(&md);
}
END_TEST

START_TEST(test_figure_gnuplot_error)
{
  unsetenv("PAIRBOUND_GNUPLOT");
  if (!pb_figure_available()) return;
  struct pb_figure bad = fig;
  bad.script = "plot DATA using 1:2 with nosuchstyle";
  struct pb_results *res = make_results("fig3");
  struct pb_text md = {0};
  /* gnuplot runs beside the caller: its failure fails the commit, which publishes nothing */
  ck_assert_int_eq(pb_figure_write(res, &bad, data, strlen(data), &md), PB_OK);
  ck_assert_int_eq(pb_results_commit(res), PB_FAIL);
  ck_assert_ptr_nonnull(strstr(pb_error_message(), "figure profile: gnuplot failed"));
  ck_assert(!pb_test_exists(pb_test_path("fig3/report/profile.png")));
  ck_assert(!pb_test_exists(pb_test_path("fig3/report/profile.tsv")));
  ck_assert(!pb_test_exists(pb_test_path("fig3/results.h5")));
  pb_text_free(&md);
}
END_TEST

/* Figures started together share one gnuplot (src/core/figure.c), which goes on
 * after an error: the failing one in the middle is named with gnuplot's
 * words, the ones before and after it are rendered, and the one after it,
 * as a figure started later in a new gnuplot, is byte for byte the figure
 * rendered alone (the first one's log scale was reset in between). */
static void check_png(struct pb_results *res, const char *name, int same_as_alone)
{
  char *png = pb_results_report_path(res, name);
  size_t n, n1;
  char *bytes = slurp(png, &n), *alone = slurp(pb_test_path("fig1/report/profile.png"), &n1);
  ck_assert_ptr_nonnull(bytes);
  ck_assert(memcmp(bytes, "\x89PNG\r\n\x1a\n", 8) == 0);
  if (same_as_alone && alone) { /* test_figure_rendered ran first in this process */
    ck_assert_uint_eq(n, n1);
    ck_assert(memcmp(bytes, alone, n) == 0);
  }
  free(alone);
  free(bytes);
  free(png);
}

START_TEST(test_figure_shared_session)
{
  unsetenv("PAIRBOUND_GNUPLOT");
  if (!pb_figure_available()) return;
  struct pb_figure first = fig, bad = fig, after = fig, later = fig;
  first.name = "first";
  first.script = "set logscale y\nplot DATA using 1:2 with linespoints";
  bad.name = "bad";
  bad.script = "plot DATA using 1:2 with nosuchstyle";
  after.name = "after";
  later.name = "later";
  struct pb_results *res = make_results("fig5");
  struct pb_figure_job j[4];
  ck_assert_int_eq(pb_figure_start(res, &first, data, strlen(data), &j[0]), PB_OK);
  ck_assert_int_eq(pb_figure_start(res, &bad, data, strlen(data), &j[1]), PB_OK);
  ck_assert_int_eq(pb_figure_start(res, &after, data, strlen(data), &j[2]), PB_OK);
  ck_assert_int_eq(pb_figure_finish(&j[1], NULL), PB_FAIL);
  ck_assert_ptr_nonnull(strstr(pb_error_message(), "figure bad: gnuplot failed: "));
  ck_assert_ptr_nonnull(strstr(pb_error_message(), "unrecognized plot type"));
  ck_assert_int_eq(pb_figure_finish(&j[2], NULL), PB_OK);
  ck_assert_int_eq(pb_figure_finish(&j[0], NULL), PB_OK);
  check_png(res, "first.png", 0);
  check_png(res, "after.png", 1);
  char *path = pb_results_report_path(res, "bad.png");
  ck_assert(!pb_test_exists(path));
  free(path);
  path = pb_results_report_path(res, "bad.png.tmp");
  ck_assert(!pb_test_exists(path));
  free(path);
  path = pb_results_report_path(res, "first.png.log");
  ck_assert(!pb_test_exists(path));
  free(path);
  path = pb_results_report_path(res, ".figures.log"); /* the ended session's log */
  ck_assert(!pb_test_exists(path));
  free(path);
  ck_assert_int_eq(pb_figure_start(res, &later, data, strlen(data), &j[3]), PB_OK);
  ck_assert_int_eq(pb_figure_finish(&j[3], NULL), PB_OK);
  check_png(res, "later.png", 1);
  pb_results_close(res);
}
END_TEST

/* The child processes of this thread, as the kernel lists them; NULL when
 * it cannot say (a kernel without CONFIG_PROC_CHILDREN). */
static char *children(void)
{
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
  FILE *fp = fopen(path, "r");
  if (!fp) return NULL;
  char *text = calloc(1, 4096);
  if (!fgets(text, 4096, fp)) text[0] = '\0';
  fclose(fp);
  return text;
}

/* A gnuplot started ahead (pb_figure_prepare) draws the figure byte for
 * byte as a cold one (its warm-up plot leaves nothing behind); one that gets
 * no figure ends at the commit; an OUTDIR with a single quote in its name
 * renders too (gnuplot is given no path: it runs in the report directory). */
START_TEST(test_figure_prepared)
{
  unsetenv("PAIRBOUND_GNUPLOT");
  if (!pb_figure_available()) return;
  struct pb_results *res = make_results("fig'6");
  pb_figure_prepare(res);
  struct pb_text md = {0};
  ck_assert_int_eq(pb_figure_write(res, &fig, data, strlen(data), &md), PB_OK);
  ck_assert_int_eq(pb_results_commit(res), PB_OK);
  size_t n, n1;
  char *png = slurp(pb_test_path("fig'6/report/profile.png"), &n), *alone = slurp(pb_test_path("fig1/report/profile.png"), &n1);
  ck_assert_ptr_nonnull(png);
  ck_assert_ptr_nonnull(alone); /* test_figure_rendered ran first in this process */
  ck_assert_uint_eq(n, n1);
  ck_assert(memcmp(png, alone, n) == 0);
  ck_assert(!pb_test_exists(pb_test_path("fig'6/report/.figures.log")));
  ck_assert_ptr_nonnull(strstr(md.buf, "![Fragility profile](profile.png)"));
  free(png);
  free(alone);
  pb_text_free(&md);

  char *before = children();
  res = make_results("fig7");
  pb_figure_prepare(res);
  char *during = children();
  ck_assert_int_eq(pb_results_commit(res), PB_OK);
  char *after = children();
  if (before && during && after) {
    ck_assert_str_ne(during, before); /* gnuplot runs ... */
    ck_assert_str_eq(after, before);  /* ... and is gone with the stage */
  }
  free(before);
  free(during);
  free(after);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("figure");
  TCase *tc = tcase_create("figure");
  tcase_add_test(tc, test_figure_rendered);
  tcase_add_test(tc, test_figure_skipped_without_gnuplot);
  tcase_add_test(tc, test_figure_no_values);
  tcase_add_test(tc, test_figure_gnuplot_error);
  tcase_add_test(tc, test_figure_shared_session);
  tcase_add_test(tc, test_figure_prepared);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(suite()); }
