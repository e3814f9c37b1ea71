/* Direct writes (pb_output_direct_*, src/core/output_direct.c): whatever the
 * offsets, lengths and gather lists, the file holds exactly the bytes a
 * plain in-memory copy says it must, past the page cache and through it. */
#define _GNU_SOURCE /* O_DIRECT */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

#include "pairbound/output.h"
#include "pairbound/rng.h"
#include "testlib.h"

#define FILE_BYTES ((size_t)24 << 20)

/* Whether the test directory's file system takes O_DIRECT at all. */
static int direct_possible(const char *path)
{
  const int fd = open(path, O_WRONLY | O_DIRECT);
  if (fd >= 0) close(fd);
  return fd >= 0;
}

/* The whole file against @p want (@p n bytes). */
static void assert_file(const char *path, const unsigned char *want, size_t n)
{
  unsigned char *got = pb_malloc(n + 1);
  const int fd = open(path, O_RDONLY);
  ck_assert_int_ge(fd, 0);
  size_t have = 0;
  for (ssize_t r; have <= n && (r = pread(fd, got + have, n + 1 - have, (off_t)have)) > 0;) have += (size_t)r;
  close(fd);
  ck_assert_uint_eq(have, n);
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i]) ck_abort_msg("%s: byte %zu is %u, not %u", path, i, got[i], want[i]);
  free(got);
}

/* One write: a gather list of up to 5 pieces (some empty) of @p src of @p len
 * bytes in all, at @p off, into the file and into @p ref. */
static size_t file_end; /* the end of the furthest write */

static void one_write(struct pb_output_direct *w, unsigned char *ref, const unsigned char *src, size_t len, off_t off,
                      struct pb_rng *r)
{
  struct iovec iov[5];
  const int n = 1 + (int)pb_rng_below(r, 5);
  size_t at = 0;
  for (int i = 0; i < n; i++) {
    const size_t left = len - at, take = i == n - 1 ? left : (size_t)pb_rng_below(r, (uint32_t)left + 1);
    iov[i] = (struct iovec){.iov_base = (void *)(src + at), .iov_len = take};
    at += take;
  }
  ck_assert_msg(pb_output_direct_writev(w, iov, n, off) == PB_OK, "write of %zu bytes at %lld", len, (long long)off);
  memcpy(ref + off, src, len);
  if (len > 0 && (size_t)off + len > file_end) file_end = (size_t)off + len;
}

/* Writes of every shape into one file: whole blocks, heads and tails inside
 * one block, pieces larger than the bounce buffer, neighbours sharing a block,
 * overwrites of earlier writes (direct over cached and the other way). */
static void write_shapes(const char *name, int direct)
{
  char *path = pb_test_path(name);
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ck_assert_int_ge(fd, 0);
  close(fd);
  unsigned char *ref = pb_calloc(FILE_BYTES, 1), *src = pb_malloc(FILE_BYTES);
  struct pb_rng r;
  pb_rng_init(&r, test_seed(), 41, (uint64_t)direct, 0);
  file_end = 0;
  for (size_t i = 0; i < FILE_BYTES; i++) src[i] = (unsigned char)pb_rng_below(&r, 256);
  struct pb_output_direct w;
  ck_assert_int_eq(pb_output_direct_open(&w, path), PB_OK);
  if (direct && direct_possible(path)) ck_assert_msg(w.dfd >= 0, "%s: no O_DIRECT descriptor", path);
  if (!direct) ck_assert_int_lt(w.dfd, 0);
  /* the file front to back in pieces that end anywhere (a CSV export) */
  size_t end = 0;
  while (end < FILE_BYTES / 2) {
    size_t len = (size_t)pb_rng_below(&r, 3 << 20);
    if (end + len > FILE_BYTES / 2) len = FILE_BYTES / 2 - end;
    one_write(&w, ref, src + end, len, (off_t)end, &r);
    end += len;
  }
  /* hand-picked shapes past the middle: within one block, exactly aligned,
   * one byte short of a block at each end, longer than the 4 MiB bounce */
  const size_t h = FILE_BYTES / 2;
  one_write(&w, ref, src + 7, 100, (off_t)(h + 5), &r);
  one_write(&w, ref, src + 4096, 1 << 20, (off_t)(h + 8192), &r);
  one_write(&w, ref, src + 1, (1 << 20) - 2, (off_t)(h + (2 << 20) + 1), &r);
  one_write(&w, ref, src + 3, (5 << 20) + 77, (off_t)(h + (3 << 20) + 4093), &r);
  /* overwrites anywhere, of any length */
  for (int k = 0; k < 40; k++) {
    const size_t len = (size_t)pb_rng_below(&r, 1 << 20), off = (size_t)pb_rng_below(&r, (uint32_t)(FILE_BYTES - len));
    one_write(&w, ref, src + pb_rng_below(&r, (uint32_t)(FILE_BYTES - len)), len, (off_t)off, &r);
  }
  ck_assert_int_eq(pb_output_direct_close(&w), PB_OK);
  assert_file(path, ref, file_end); /* the file ends at the furthest byte written */
  free(ref);
  free(src);
}

START_TEST(test_direct_shapes)
{
  unsetenv("PAIRBOUND_DIRECT_IO");
  write_shapes("direct.bin", 1);
}
END_TEST

START_TEST(test_cached_shapes)
{
  setenv("PAIRBOUND_DIRECT_IO", "0", 1);
  write_shapes("cached.bin", 0);
  unsetenv("PAIRBOUND_DIRECT_IO");
}
END_TEST

/* A file that is not there: a failure with errno, nothing created. */
START_TEST(test_direct_missing)
{
  struct pb_output_direct w;
  char *path = pb_test_path("no/such/file");
  ck_assert_int_eq(pb_output_direct_open(&w, path), PB_FAIL);
  ck_assert_int_eq(errno, ENOENT);
  ck_assert_int_lt(w.fd, 0);
  ck_assert_int_lt(w.dfd, 0);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("output");
  TCase *tc = tcase_create("direct");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_direct_shapes);
  tcase_add_test(tc, test_cached_shapes);
  tcase_add_test(tc, test_direct_missing);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(suite()); }
