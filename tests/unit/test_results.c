/* The parallel TSV writer (src/core/results_tsv.c): the file is the header and
 * every rank's rows in rank order, byte for byte the file one rank writes,
 * for any split of the rows over the ranks (a rank with none included), any
 * size of collective write and rows handed over in blocks; a write that
 * fails on one rank fails on every rank and leaves nothing behind.  Ranks
 * that wait for a late one sleep instead of polling (src/core/comm.c), in an
 * agreement and across results.h5 column writes.  Run at 1 rank by make check
 * and at 2 and 3 by tests/mpi/unit_ranks.sh. */
#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <sys/resource.h>
#include <time.h>

#include <hdf5.h>

#include "pairbound/comm.h"
#include "pairbound/results.h"
#include "pairbound/timer.h"
#include "testlib.h"

#define N_ROWS 23

static const char *header = "name\tvalue\tpad\n";

/* Row i: rows of different lengths, so offsets are uneven too. */
static size_t row(int i, char *buf)
{
  int n = sprintf(buf, "row%d\t%d\t", i, i * i);
  for (int k = 0; k < (i * 7) % 13; k++) buf[n++] = 'x';
  buf[n++] = '\n';
  buf[n] = '\0';
  return (size_t)n;
}

/* The file the writer must produce, built without it: header, rows 0..n-1. */
static char *expected(int n)
{
  struct pb_text t = {0};
  char buf[64];
  pb_text_printf(&t, "%s", header);
  for (int i = 0; i < n; i++) {
    row(i, buf);
    pb_text_printf(&t, "%s", buf);
  }
  return t.buf;
}

/* This rank's rows [*lo, *hi) of @p n in split @p layout:
 * 0: rank 1 holds none, rank 0 the first 9, the others the rest unevenly;
 * 1: rank 0 holds none, rank r the r-th share of weights r*r. */
static void rows_of(int layout, int n, int *lo, int *hi)
{
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int cut[8] = {0}, w = 0, acc = 0;
  for (int r = 0; r < size; r++) w += layout == 0 ? (r == 0 ? 9 : r == 1 ? 0 : r * 5) : r * r;
  for (int r = 0; r < size; r++) {
    cut[r] = w ? acc * n / w : 0;
    acc += layout == 0 ? (r == 0 ? 9 : r == 1 ? 0 : r * 5) : r * r;
  }
  cut[size] = n;
  if (size == 1) cut[0] = 0;
  *lo = cut[rank];
  *hi = cut[rank + 1];
}

static int temporaries(const char *path)
{
  char pat[600];
  glob_t g;
  snprintf(pat, sizeof pat, "%s.*tmp.*", path); /* PATH.tmp.X and the spills PATH.rankN.tmp.X */
  int n = glob(pat, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
  globfree(&g);
  return n;
}

static char *slurp(const char *path)
{
  FILE *fp = fopen(path, "rb");
  ck_assert_msg(fp != NULL, "%s missing", path);
  struct pb_text t = {0};
  char buf[4096];
  for (size_t got; (got = fread(buf, 1, sizeof buf, fp)) > 0;) pb_text_printf(&t, "%.*s", (int)got, buf);
  fclose(fp);
  return t.buf ? t.buf : pb_strdup("");
}

/* Write @p n rows split by @p layout, all at once or (@p stream) a row at a time. */
static int write_rows(const char *path, int layout, int n, int stream)
{
  int lo, hi;
  rows_of(layout, n, &lo, &hi);
  char buf[64];
  if (stream) {
    struct pb_tsv *t;
    if (pb_tsv_open(MPI_COMM_WORLD, path, header, &t) != PB_OK) return PB_FAIL;
    for (int i = lo; i < hi; i++) {
      size_t len = row(i, buf);
      pb_tsv_write(t, buf, len);
      pb_tsv_write(t, buf, 0); /* an empty block is no row */
    }
    return pb_tsv_commit(t);
  }
  struct pb_text t = {0};
  for (int i = lo; i < hi; i++) {
    row(i, buf);
    pb_text_printf(&t, "%s", buf);
  }
  int status = pb_results_tsv_file(MPI_COMM_WORLD, path, header, t.buf, t.len);
  pb_text_free(&t);
  return status;
}

START_TEST(test_tsv_rank_order)
{
  const int64_t chunks[] = {0, 13}; /* default; rows (8-25 bytes) straddling calls */
  for (int ci = 0; ci < 2; ci++)
    for (int layout = 0; layout < 2; layout++)
      for (int stream = 0; stream < 2; stream++)
        for (int n = 0; n <= N_ROWS; n += N_ROWS) {
          pb_tsv_set_chunk(chunks[ci]);
          char name[64];
          snprintf(name, sizeof name, "t_%d_%d_%d_%d.tsv", ci, layout, stream, n);
          const char *path = pb_test_path(name);
          ck_assert_msg(write_rows(path, layout, n, stream) == PB_OK, "%s: %s", name, pb_error_message());
          char *got = slurp(path), *want = expected(n);
          ck_assert_msg(strcmp(got, want) == 0, "%s: got\n%s\nwant\n%s", name, got, want);
          ck_assert_int_eq(temporaries(path), 0);
          free(got);
          free(want);
          MPI_Barrier(MPI_COMM_WORLD); /* every rank has read it before the next test */
        }
  pb_tsv_set_chunk(0);
}
END_TEST

/* A write into a file system that refuses it: no file, no temporary, on every rank. */
START_TEST(test_tsv_failures)
{
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *missing = pb_test_path("no/such/dir/x.tsv");
  for (int stream = 0; stream < 2; stream++) {
    pb_error_clear();
    ck_assert(write_rows(missing, 1, N_ROWS, stream) == PB_FAIL);
    ck_assert_msg(strstr(pb_error_message(), "no/such/dir/x.tsv") != NULL, "%s", pb_error_message());
    ck_assert(!pb_test_exists(missing));
  }
  /* the last rank's writes fail (as on a full disk, EFBIG here): its rows
   * are lost, so the commit fails on every rank and removes everything */
  const char *path = pb_test_path("fails.tsv");
  struct pb_tsv *t;
  ck_assert(pb_tsv_open(MPI_COMM_WORLD, path, header, &t) == PB_OK);
  struct rlimit old, small;
  void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
  getrlimit(RLIMIT_FSIZE, &old);
  small = old;
  small.rlim_cur = 40;
  if (rank == size - 1) setrlimit(RLIMIT_FSIZE, &small);
  char buf[64];
  for (int i = 0; i < N_ROWS; i++) pb_tsv_write(t, buf, row(i, buf));
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, was);
  pb_error_clear();
  ck_assert(pb_tsv_commit(t) == PB_FAIL);
  ck_assert_msg(strstr(pb_error_message(), strerror(EFBIG)) != NULL, "%s", pb_error_message());
  MPI_Barrier(MPI_COMM_WORLD);
  ck_assert(!pb_test_exists(path));
  ck_assert_int_eq(temporaries(path), 0);
  MPI_Barrier(MPI_COMM_WORLD); /* every rank has looked before rank 0 makes the next temporary */
  /* an abort leaves nothing either */
  ck_assert(pb_tsv_open(MPI_COMM_WORLD, path, header, &t) == PB_OK);
  pb_tsv_write(t, buf, row(1, buf));
  pb_tsv_abort(t);
  MPI_Barrier(MPI_COMM_WORLD);
  ck_assert(!pb_test_exists(path));
  ck_assert_int_eq(temporaries(path), 0);
}
END_TEST

/* CPU seconds this thread has used (the thread that waits in MPI calls). */
static double thread_cpu(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define LATE_SECONDS 2.0
#define WAIT_CPU_MAX 0.2

/* The last rank arrives LATE_SECONDS after the others (asleep meanwhile, so
 * the others have the cores to themselves); returns the CPU seconds the
 * others spend in @p step, 0 on the last rank.  A wait that polls without
 * pause costs up to LATE_SECONDS of CPU (0.13 s a second measured where
 * other work kept both cores busy); one that sleeps between polls,
 * 0.015-0.03 s a second (a poll every 0.5 ms at most). */
static double late_rank_cost(void (*step)(int rank, int size))
{
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == size - 1) {
    struct timespec late = {(time_t)LATE_SECONDS, 0};
    if (size > 1) nanosleep(&late, NULL); /* at 1 rank no one waits */
    step(rank, size);
    return 0;
  }
  const double t0 = thread_cpu();
  step(rank, size);
  return thread_cpu() - t0;
}

static void agree_step(int rank, int size)
{
  (void)rank;
  ck_assert(pb_error_agree(MPI_COMM_WORLD, PB_OK) == PB_OK);
  /* the collectives give MPI's answers: sums, minima, broadcasts, reductions */
  int64_t v[2] = {rank + 1, rank};
  ck_assert(pb_comm_allreduce(MPI_IN_PLACE, v, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  ck_assert_int_eq(v[0], (int64_t)size * (size + 1) / 2);
  ck_assert_int_eq(v[1], (int64_t)size * (size - 1) / 2);
  int lo = 7 - rank, from = rank == size - 1 ? 42 : -1, sum = 0;
  ck_assert(pb_comm_allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) == MPI_SUCCESS);
  ck_assert_int_eq(lo, 7 - (size - 1));
  ck_assert(pb_comm_bcast(&from, 1, MPI_INT, size - 1, MPI_COMM_WORLD) == MPI_SUCCESS);
  ck_assert_int_eq(from, 42);
  const int one = 1;
  ck_assert(pb_comm_reduce(&one, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  if (rank == 0) ck_assert_int_eq(sum, size);
  ck_assert(pb_comm_barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
}

/* Ranks that reach an agreement before the last rank wait for it asleep. */
START_TEST(test_wait_agree)
{
  const double cpu = late_rank_cost(agree_step);
  printf("# waited %.1f s for the last rank: %.3f s of CPU\n", LATE_SECONDS, cpu);
  ck_assert_msg(cpu < WAIT_CPU_MAX, "waiting %.1f s for the last rank took %.3f s of CPU", LATE_SECONDS, cpu);
}
END_TEST

static struct pb_results *late_res;

/* Each rank writes its slice of a column (rank r: values 10 r, 10 r + 1),
 * then all agree. */
static void column_step(int rank, int size)
{
  const double v[2] = {10.0 * rank, 10.0 * rank + 1};
  ck_assert(pb_results_write_f64(late_res, "column", 2 * (int64_t)size, 2 * (int64_t)rank, 2, v) == PB_OK);
  ck_assert(pb_error_agree(MPI_COMM_WORLD, PB_OK) == PB_OK);
}

/* A results.h5 column written while one rank is late: the others write their
 * slices without waiting for it (independent transfers) and wait for it
 * asleep in the agreement after; the column holds every rank's values. */
START_TEST(test_wait_columns)
{
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *dir = pb_test_path("late");
  ck_assert(pb_results_create(dir, MPI_COMM_WORLD, "test", &late_res) == PB_OK);
  const double cpu = late_rank_cost(column_step);
  ck_assert(pb_results_commit(late_res) == PB_OK);
  char file[600];
  snprintf(file, sizeof file, "%s/results.h5", dir);
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT), d = f < 0 ? -1 : H5Dopen2(f, "column", H5P_DEFAULT);
  ck_assert(d >= 0);
  double got[6] = {0};
  ck_assert(size <= 3 && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
  for (int r = 0; r < size; r++) {
    ck_assert(got[2 * r] == 10.0 * r);
    ck_assert(got[2 * r + 1] == 10.0 * r + 1);
  }
  H5Dclose(d);
  H5Fclose(f);
  MPI_Barrier(MPI_COMM_WORLD);
  /* last: a rank that fails here has made every collective call */
  printf("# waited %.1f s for the last rank: %.3f s of CPU\n", LATE_SECONDS, cpu);
  ck_assert_msg(cpu < WAIT_CPU_MAX, "waiting %.1f s for the last rank took %.3f s of CPU", LATE_SECONDS, cpu);
}
END_TEST

/* Timers of ranks that met different phases, in other orders: every rank
 * meets "load" (rank r takes r + 1 s in each phase it meets), rank 0 "a" then
 * "b", rank 1 "b" alone, later ranks "c".  The union in rank 0's order and
 * then the later ranks' new ones, each phase the slowest rank's time. */
START_TEST(test_timer_union)
{
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  struct pb_timer t;
  pb_timer_start(&t, "test");
  const double mine = rank + 1;
  if (rank == 1) pb_timer_add(&t, "b", mine);
  pb_timer_add(&t, "load", mine);
  if (rank == 0) pb_timer_add(&t, "a", mine), pb_timer_add(&t, "b", mine);
  if (rank >= 2) pb_timer_add(&t, "c", mine);
  pb_timer_reduce(&t, MPI_COMM_WORLD);
  const char *want[4] = {"load", "a", "b", "c"};
  const double sec[4] = {size, 1, size >= 2 ? 2 : 1, size};
  ck_assert_int_eq(t.n, size >= 3 ? 4 : 3);
  for (int i = 0; i < t.n; i++) {
    ck_assert_str_eq(t.phase[i], want[i]);
    ck_assert(t.sec[i] == sec[i]);
  }
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("results");
  TCase *tc = tcase_create("tsv");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_tsv_rank_order);
  tcase_add_test(tc, test_tsv_failures);
  suite_add_tcase(s, tc);
  tc = tcase_create("waits");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_wait_agree);
  tcase_add_test(tc, test_wait_columns);
  tcase_add_test(tc, test_timer_union);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(suite()); }
