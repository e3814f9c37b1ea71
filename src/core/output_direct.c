/* Large outputs written past the page cache (include/pairbound/output.h,
 * "Direct writes").
 *
 * On the virtual machines and clusters pairbound runs on, the kernel's copy
 * into the page cache is what a big write costs: on this project's test
 * machine dd writes 0.16-0.4 GB/s through it and 1.1-1.6 GB/s with O_DIRECT
 * (docs/store.md, "Writing").  O_DIRECT asks for aligned file offsets,
 * lengths and memory; our writes are none of these (a CSV block starts where
 * the previous one ended, a chunk where HDF5 put it).  So a write is cut at
 * the alignment: the whole aligned blocks inside it go through an aligned
 * bounce buffer and the O_DIRECT descriptor, the unaligned head and tail
 * (under one block each) through the ordinary one.  The two never touch the
 * same block, so the kernel keeps them coherent: a direct write flushes and
 * drops cached pages of its own range only, and the blocks a head or tail
 * shares with a neighbouring write (another block of text, another chunk,
 * HDF5's metadata, another rank's part) are only ever written through the
 * cache.  A file system that refuses O_DIRECT at open, or a direct write
 * with EINVAL (an alignment it wants larger), leaves the file to ordinary
 * writes from then on, with the same bytes. */
#define _GNU_SOURCE /* O_DIRECT */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

#include "pairbound/env.h"
#include "pairbound/error.h"
#include "pairbound/output.h"

/* The bounce buffer: the direct part of a write goes out in pieces of this
 * size (dd reaches its full rate from 1 MiB on here). */
#define PB_DIRECT_BOUNCE ((size_t)4 << 20)
/* A write whose aligned part is smaller goes through the cache: the bounce
 * copy and two extra system calls would cost more than they save. */
#define PB_DIRECT_MIN ((size_t)64 << 10)

int pb_output_direct_open(struct pb_output_direct *w, const char *path)
{
  const long page = sysconf(_SC_PAGESIZE);
  int64_t on = 1;
  *w = (struct pb_output_direct){.fd = -1, .dfd = -1, .align = page > 4096 ? (size_t)page : 4096};
  w->fd = open(path, O_WRONLY | O_CLOEXEC);
  if (w->fd < 0) return PB_FAIL;
  if (pb_env_given(PB_ENV_DIRECT_IO)) pb_env_int(PB_ENV_DIRECT_IO, 0, 1, &on);
  if (!on) return PB_OK;
  void *bounce = NULL;
  w->dfd = open(path, O_WRONLY | O_CLOEXEC | O_DIRECT);
  if (w->dfd >= 0 && posix_memalign(&bounce, w->align, PB_DIRECT_BOUNCE) == 0) {
    w->bounce = bounce;
  } else if (w->dfd >= 0) {
    close(w->dfd);
    w->dfd = -1;
  }
  return PB_OK;
}

/* No more direct writes to this file (kept open by nothing). */
static void pb_output__direct_stop(struct pb_output_direct *w)
{
  if (w->dfd >= 0) close(w->dfd);
  w->dfd = -1;
  free(w->bounce);
  w->bounce = NULL;
}

int pb_output_direct_close(struct pb_output_direct *w)
{
  pb_output__direct_stop(w);
  const int bad = w->fd >= 0 && close(w->fd) != 0;
  w->fd = -1;
  return bad ? PB_FAIL : PB_OK;
}

/* Bytes [from, to) of the gather list @p iov (@p n entries) as a list of its
 * own in @p out (room for @p n); returns its length. */
static int pb_output__slice(const struct iovec *iov, int n, size_t from, size_t to, struct iovec *out)
{
  int k = 0;
  size_t at = 0;
  for (int i = 0; i < n && at < to; at += iov[i].iov_len, i++) {
    const size_t a = from > at ? from - at : 0, e = at + iov[i].iov_len;
    const size_t b = (to < e ? to : e) - at;
    if (a < b) out[k++] = (struct iovec){.iov_base = (char *)iov[i].iov_base + a, .iov_len = b - a};
  }
  return k;
}

/* Through the cache: bytes [from, to) of the list at @p off + @p from. */
static int pb_output__cached(struct pb_output_direct *w, const struct iovec *iov, int n, size_t from, size_t to,
                             off_t off, struct iovec *tmp)
{
  if (from >= to) return PB_OK;
  const int k = pb_output__slice(iov, n, from, to, tmp);
  return pb_output_iov_all(w->fd, tmp, k, off + (off_t)from, 1);
}

/* Copy bytes [from, from + len) of the list into @p dst. */
static void pb_output__gather(const struct iovec *iov, int n, size_t from, size_t len, char *dst)
{
  size_t at = 0;
  for (int i = 0; i < n && len > 0; at += iov[i].iov_len, i++) {
    if (from >= at + iov[i].iov_len) continue;
    const size_t a = from - at, b = iov[i].iov_len - a < len ? iov[i].iov_len - a : len;
    memcpy(dst, (const char *)iov[i].iov_base + a, b);
    dst += b;
    from += b;
    len -= b;
  }
}

/* One piece of the aligned part, at @p pos: how many bytes the direct
 * descriptor took (all, or fewer after a short write), or -1 with errno. */
static ssize_t pb_output__direct_piece(const struct pb_output_direct *w, size_t len, off_t pos)
{
  for (;;) {
    const ssize_t got = pwrite(w->dfd, w->bounce, len, pos);
    if (got < 0 && errno == EINTR) continue;
    if (got == 0) errno = ENOSPC;
    return got > 0 ? got : -1;
  }
}

int pb_output_direct_writev(struct pb_output_direct *w, const struct iovec *iov, int n, off_t off)
{
  size_t len = 0;
  for (int i = 0; i < n; i++) len += iov[i].iov_len;
  struct iovec *tmp = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
  const off_t A = (off_t)w->align, a = (off + A - 1) / A * A, b = (off + (off_t)len) / A * A;
  int status = PB_OK;
  if (w->dfd < 0 || b <= a || (size_t)(b - a) < PB_DIRECT_MIN) {
    status = pb_output__cached(w, iov, n, 0, len, off, tmp);
    goto done;
  }
  status = pb_output__cached(w, iov, n, 0, (size_t)(a - off), off, tmp);
  off_t pos = a;
  while (status == PB_OK && pos < b && w->dfd >= 0) {
    const size_t piece = (size_t)(b - pos) < PB_DIRECT_BOUNCE ? (size_t)(b - pos) : PB_DIRECT_BOUNCE;
    pb_output__gather(iov, n, (size_t)(pos - off), piece, w->bounce);
    const ssize_t got = pb_output__direct_piece(w, piece, pos);
    if (got < 0 && errno == EINVAL)
      pb_output__direct_stop(w); /* the rest through the cache */
    else if (got < 0)
      status = PB_FAIL;
    else if ((pos += got / A * A, got < (ssize_t)piece))
      break; /* a short write: the rest through the cache, which says why when it fails too */
  }
  /* what is left of the aligned part (after EINVAL), and the tail */
  if (status == PB_OK) status = pb_output__cached(w, iov, n, (size_t)(pos - off), len, off, tmp);
done:
  free(tmp);
  return status;
}
