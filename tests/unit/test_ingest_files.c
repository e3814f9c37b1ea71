/* Ingest of many CSV files and of stdin, and pass 2 by windows: the store
 * equals the one ingested from a single CSV holding the same rows, and every
 * error names its file, the first in file order whatever the windows. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/error.h"
#include "pairbound/ingest.h"
#include "pairbound/store.h"
#include "testlib.h"

#define HDR "model,group,source,condition,image,label,split,pred,smax,ptrue\n"

static char *read_all(const char *path)
{
  FILE *fp = fopen(path, "rb");
  ck_assert_msg(fp != NULL, "cannot open %s", path);
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  ck_assert(fread(buf, 1, (size_t)n, fp) == (size_t)n);
  buf[n] = '\0';
  fclose(fp);
  return buf;
}

static char *write_file(const char *name, const char *text)
{
  char *path = strdup(pb_test_path(name));
  FILE *fp = fopen(path, "wb");
  ck_assert(fp != NULL);
  ck_assert(fwrite(text, 1, strlen(text), fp) == strlen(text));
  fclose(fp);
  return path;
}

/* The canonical CSV text of a store (export). */
static char *exported(const char *store)
{
  char out[600];
  snprintf(out, sizeof out, "%s.csv", store);
  ck_assert_msg(pb_export_csv(store, out, MPI_COMM_SELF) == PB_OK, "export: %s", pb_error_message());
  return read_all(out);
}

/* Rows of model m in source s: S (conditions clean, fog, snow; 7 images) or
 * T (clean, blur; 5 images), in store order; labels i % 3, predictions
 * (i + m + c) % 3, smax 0.5 + i / 100, ptrue smax when correct, else half. */
static void model_rows(char *buf, size_t n, int m, int s)
{
  static const char *conds[2][3] = {{"clean", "fog", "snow"}, {"clean", "blur", NULL}};
  static const int nc[2] = {3, 2}, ni[2] = {7, 5};
  size_t len = strlen(buf);
  for (int c = 0; c < nc[s]; c++)
    for (int i = 0; i < ni[s]; i++) {
      const int label = i % 3, pred = (i + m + c) % 3;
      const double smax = 0.5 + i / 100.0, ptrue = pred == label ? smax : smax / 2;
      len += (size_t)snprintf(buf + len, n - len, "m%d,g%d,%s,%s,i%d,%d,%s,%d,%g,%g\n", m, m % 2, s ? "T" : "S",
                              conds[s][c], i, label, i % 2 ? "dev" : "eval", pred, smax, ptrue);
    }
}

/* The canonical CSV of n_models models (sources, then models: export's
 * order) and one file per model holding that model's rows in the same order,
 * as one evaluation job per model writes them. */
static char *make_files(int n_models, char **paths)
{
  static char one[1 << 16];
  char name[64];
  snprintf(one, sizeof one, "%s", HDR);
  for (int s = 0; s < 2; s++)
    for (int m = 0; m < n_models; m++) model_rows(one, sizeof one, m, s);
  for (int m = 0; m < n_models; m++) {
    char buf[1 << 14];
    snprintf(buf, sizeof buf, "%s", HDR);
    model_rows(buf, sizeof buf, m, 0);
    model_rows(buf, sizeof buf, m, 1);
    snprintf(name, sizeof name, "model%d.csv", m);
    paths[m] = write_file(name, buf);
  }
  return write_file("all.csv", one);
}

/* Texts too long for check's message: the first difference is named. */
static void same_text(const char *a, const char *b, const char *what)
{
  size_t k = 0;
  while (a[k] && a[k] == b[k]) k++;
  ck_assert_msg(a[k] == b[k], "%s: differ at byte %zu: '%.40s' vs '%.40s'", what, k, a + k, b + k);
}

static void ingest_ok(int n, char **paths, int64_t window, const char *store)
{
  struct pb_ingest_options opt = {.window_bytes = window};
  ck_assert_msg(pb_ingest_files(n, (const char *const *)paths, &opt, store) == PB_OK, "ingest: %s",
                pb_error_message());
  ck_assert_msg(pb_test_temps(store) == 0, "a temporary of the store left behind");
}

START_TEST(test_files_equal_single)
{
  char *paths[4], *all = make_files(4, paths);
  char a[600], b[600], c[600];
  snprintf(a, sizeof a, "%s", pb_test_path("single.h5"));
  snprintf(b, sizeof b, "%s", pb_test_path("files.h5"));
  snprintf(c, sizeof c, "%s", pb_test_path("small_windows.h5"));
  ingest_ok(1, &all, 0, a);
  ingest_ok(4, paths, 0, b);
  /* one byte: every window is one write unit (a model's rows of a source) */
  ingest_ok(4, paths, 1, c);
  char *ta = exported(a), *tb = exported(b), *tc = exported(c), *src = read_all(all);
  same_text(ta, src, "single CSV and its export"); /* its rows are canonical */
  same_text(tb, ta, "one file per model");
  same_text(tc, ta, "windows of one write unit");
  free(ta), free(tb), free(tc), free(src);
  for (int m = 0; m < 4; m++) free(paths[m]);
  free(all);
}
END_TEST

START_TEST(test_stdin)
{
  char *paths[2], *all = make_files(2, paths);
  char a[600], b[600];
  snprintf(a, sizeof a, "%s", pb_test_path("stdin_a.h5"));
  snprintf(b, sizeof b, "%s", pb_test_path("stdin_b.h5"));
  /* the first file, then the second from stdin */
  ck_assert(freopen(paths[1], "r", stdin) != NULL);
  char *mixed[2] = {paths[0], "-"};
  ingest_ok(2, mixed, 1, a);
  ingest_ok(1, &all, 0, b);
  char *ta = exported(a), *tb = exported(b);
  same_text(ta, tb, "a file and stdin");
  free(ta), free(tb);
  char *twice[2] = {"-", "-"};
  ck_assert_int_eq(pb_ingest_files(2, (const char *const *)twice, NULL, a), PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "stdin (-) given more than once");
  free(paths[0]), free(paths[1]), free(all);
}
END_TEST

/* Ingest of files with these texts (windows of @p window bytes) fails with
 * message "<file k's path><suffix>", followed by the first file's path and
 * @p tail when tail is not NULL, leaving no store and no temporary. */
static void reject_files(int n, const char *const *texts, int64_t window, int k, const char *suffix,
                          const char *tail_file_suffix)
{
  char *paths[4], store[600], want[2048], name[64];
  static int counter;
  for (int j = 0; j < n; j++) {
    snprintf(name, sizeof name, "p%03d_%d.csv", counter, j);
    paths[j] = write_file(name, texts[j]);
  }
  snprintf(name, sizeof name, "p%03d.h5", counter++);
  snprintf(store, sizeof store, "%s", pb_test_path(name));
  struct pb_ingest_options opt = {.window_bytes = window};
  ck_assert_int_eq(pb_ingest_files(n, (const char *const *)paths, &opt, store), PB_FAIL);
  snprintf(want, sizeof want, "%s%s%s%s", paths[k], suffix, tail_file_suffix ? paths[0] : "",
           tail_file_suffix ? tail_file_suffix : "");
  ck_assert_str_eq(pb_error_message(), want);
  ck_assert(!pb_test_exists(store) && pb_test_temps(store) == 0);
  for (int j = 0; j < n; j++) free(paths[j]);
}

START_TEST(test_files_errors)
{
  const char *a = HDR "m1,g1,S,clean,i1,0,eval,0,0.9,0.9\n";
  /* a row error in the second file names it */
  const char *t1[2] = {a, HDR "m2,g1,S,clean,i1,0,eval,0,abc,0.9\n"};
  reject_files(2, t1, 0, 1, ":2: column 'smax': not a number: 'abc'", NULL);
  /* conflicts with an earlier file name where the earlier row was */
  const char *t2[2] = {a, HDR "m1,g2,S,clean,i1,0,eval,0,0.9,0.9\n"};
  reject_files(2, t2, 0, 1, ":2: model m1 has group g2 here but g1 at line 2 of ", "");
  /* every file has its header and its records */
  const char *t3[2] = {a, ""};
  reject_files(2, t3, 0, 1, ": empty file (no header line)", NULL);
  const char *t4[2] = {a, HDR};
  reject_files(2, t4, 0, 1, ": no records", NULL);
  const char *t5[2] = {a, "model,group,source,condition,image,label,split,pred,smax,ptrue,top1_class,top1_prob\n"
                          "m2,g1,S,clean,i1,0,eval,0,0.9,0.9,0,0.9\n"};
  reject_files(2, t5, 0, 1, ":1: 1 top-k column pairs, but ", " has 0: every file needs the same top-k columns");
}
END_TEST

START_TEST(test_files_error_order)
{
  const char *a = HDR "m1,g1,S,clean,i1,0,eval,0,0.9,0.9\nm1,g1,S,clean,i2,0,eval,0,0.9,0.9\n";
  /* the same record in two files: a duplicate, its first occurrence in the first file */
  const char *t1[2] = {a, HDR "m1,g1,S,clean,i2,0,eval,0,0.8,0.8\n"};
  reject_files(2, t1, 0, 1, ":2: duplicate record for source S, model m1, condition clean, image i2 (first at line 3 of ",
                ")");
  reject_files(2, t1, 1, 1, ":2: duplicate record for source S, model m1, condition clean, image i2 (first at line 3 of ",
                ")");
  /* a row error in a later file comes before a duplicate in an earlier one (pass 1 before pass 2) */
  const char *t2[2] = {HDR "m1,g1,S,clean,i1,0,eval,0,0.9,0.9\nm1,g1,S,clean,i1,0,eval,0,0.9,0.9\n",
                       HDR "m2,g1,S,clean,i1,0,eval,0,0.9,x\n"};
  reject_files(2, t2, 0, 1, ":2: column 'ptrue': not a number: 'x'", NULL);
  /* a missing record of the set names the first file and how many more */
  const char *t3[2] = {a, HDR "m2,g1,S,clean,i1,0,eval,0,0.9,0.9\n"};
  reject_files(2, t3, 1, 0, " and 1 more files: source S, model m2, condition clean: missing record for image i2",
                NULL);
}
END_TEST

/* Windows of one write unit each: m1 is the first window (store order), m2
 * the second, but m2's rows come first in the file and its duplicate (line 4)
 * precedes m1's (line 8): the earlier line is the one reported, as when the
 * store is one window. */
START_TEST(test_duplicate_across_windows)
{
  const char *csv = HDR "m1,g1,S,clean,i1,0,eval,0,0.9,0.9\n" /* line 2: m1 first seen (store order: m1, m2) */
                        "m2,g1,S,clean,i1,0,eval,0,0.9,0.9\n" /* 3 */
                        "m2,g1,S,clean,i1,0,eval,0,0.8,0.8\n" /* 4: duplicate of line 3 */
                        "m2,g1,S,clean,i2,1,eval,1,0.7,0.7\n" /* 5 */
                        "m1,g1,S,clean,i2,1,eval,1,0.7,0.7\n" /* 6 */
                        "m1,g1,S,clean,i1,0,eval,0,0.9,0.9\n" /* 7: duplicate of line 2 */
                        "m1,g1,S,clean,i2,1,eval,1,0.6,0.6\n"; /* 8: duplicate of line 6 */
  const char *t[1] = {csv};
  const char *msg = ":4: duplicate record for source S, model m2, condition clean, image i1 (first at line 3)";
  reject_files(1, t, 0, 0, msg, NULL);
  reject_files(1, t, 1, 0, msg, NULL);
}
END_TEST

/* Threads parse parts of the files (pass 1 and pass 2): 1, 2 and 3 threads
 * make the same store as the single CSV's canonical text, with windows of
 * the whole store and of one write unit, and report the same errors (the
 * duplicate reported is the earliest in the file, its line counted from
 * the file's start whatever part holds it). */
START_TEST(test_threads)
{
  char *paths[4], *all = make_files(4, paths), store[600];
  char *src = read_all(all);
  const int saved = omp_get_max_threads();
  for (int nt = 1; nt <= 3; nt++) {
    omp_set_num_threads(nt);
    for (int64_t window = 0; window <= 1; window++) {
      snprintf(store, sizeof store, "%s", pb_test_path("threads.h5"));
      ingest_ok(1, &all, window, store);
      char *t = exported(store);
      same_text(t, src, "the single CSV ingested by threads");
      free(t);
      ingest_ok(4, paths, window, store);
      t = exported(store);
      same_text(t, src, "the files ingested by threads");
      free(t);
    }
    /* source S's rows start at line 2, 21 per model (3 conditions x 7
     * images): m2's record (fog, i2) is line 2 + 2 * 21 + 7 + 2 = 53; a copy
     * appended after the 4 x 21 + 4 x 10 records is line 126 */
    size_t n = strlen(src);
    char *dup = malloc(n + 200);
    memcpy(dup, src, n + 1);
    const char *line = src;
    for (int k = 1; k < 53; k++) line = strchr(line, '\n') + 1;
    const size_t len = (size_t)(strchr(line, '\n') + 1 - line);
    memcpy(dup + n, line, len);
    dup[n + len] = '\0';
    const int last = 1 + 4 * 21 + 4 * 10 + 1;
    char suffix[200];
    snprintf(suffix, sizeof suffix, ":%d: duplicate record for source S, model m2, condition fog, image i2 (first at line %d)",
             last, 53);
    const char *t[1] = {dup};
    reject_files(1, t, 0, 0, suffix, NULL);
    reject_files(1, t, 1, 0, suffix, NULL);
    free(dup);
  }
  omp_set_num_threads(saved);
  free(src);
  for (int m = 0; m < 4; m++) free(paths[m]);
  free(all);
}
END_TEST

/* 30 rows of model m1 (lines 2 to 31), image i<line>, with line @p a's
 * row replaced by @p ra and line @p b's by @p rb (0: none). */
static char *rows30(int a, const char *ra, int b, const char *rb)
{
  char *csv = malloc(4096);
  size_t len = (size_t)sprintf(csv, HDR);
  for (int line = 2; line <= 31; line++)
    len += (size_t)sprintf(csv + len, line == a ? ra : line == b ? rb : "m1,g1,S,clean,i%d,0,eval,0,0.9,0.9\n", line);
  return csv;
}

/* With threads, pass 1 checks a row's own fields apart from the
 * dictionaries (names in order of appearance): whichever kind comes first
 * in the file is the error reported, at its line, and a row with both
 * reports its own fields (checked first), at 1, 2 and 3 threads. */
START_TEST(test_threads_first_error)
{
  const char *bad_group = "m1,g2,S,clean,i%d,0,eval,0,0.9,0.9\n";
  const char *bad_smax = "m1,g1,S,clean,i%d,0,eval,0,abc,0.9\n";
  const char *bad_both = "m1,g2,S,clean,i%d,0,eval,0,abc,0.9\n";
  const char *quoted = "\"m1\",g1,S,clean,\"i%d\",0,eval,0,0.9,0.9\n";
  const char *newline = "m1,g1,S,clean,\"i%d\nx\",0,eval,0,0.9,0.9\n";
  const int saved = omp_get_max_threads();
  for (int nt = 1; nt <= 3; nt++) {
    omp_set_num_threads(nt);
    char *t[6] = {rows30(5, bad_group, 25, bad_smax), rows30(5, bad_smax, 25, bad_group), rows30(5, bad_both, 0, NULL),
                  rows30(3, quoted, 25, bad_smax), rows30(4, newline, 25, bad_smax), rows30(3, quoted, 25, bad_group)};
    reject_files(1, (const char *const *)&t[0], 0, 0, ":5: model m1 has group g2 here but g1 at line 2", NULL);
    reject_files(1, (const char *const *)&t[1], 0, 0, ":5: column 'smax': not a number: 'abc'", NULL);
    reject_files(1, (const char *const *)&t[2], 0, 0, ":5: column 'smax': not a number: 'abc'", NULL);
    reject_files(1, (const char *const *)&t[3], 0, 0, ":25: column 'smax': not a number: 'abc'", NULL);
    reject_files(1, (const char *const *)&t[4], 0, 0,
                 ":4: column 'image': name 'i4\nx' contains a newline, which is not allowed", NULL);
    reject_files(1, (const char *const *)&t[5], 0, 0, ":25: model m1 has group g2 here but g1 at line 2", NULL);
    for (int k = 0; k < 6; k++) free(t[k]);
  }
  omp_set_num_threads(saved);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("ingest_files");
  TCase *tc = tcase_create("files");
  tcase_add_test(tc, test_files_equal_single);
  tcase_add_test(tc, test_stdin);
  tcase_add_test(tc, test_files_errors);
  tcase_add_test(tc, test_files_error_order);
  tcase_add_test(tc, test_duplicate_across_windows);
  tcase_add_test(tc, test_threads);
  tcase_add_test(tc, test_threads_first_error);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(suite()); }
