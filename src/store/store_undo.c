/* The undo journal of an append (docs/store.md, "Appending"): models are
 * added to a store in place, after the bytes an append may overwrite have
 * been saved in STORE.undo.  Those are every byte of the store but its
 * existing record chunks: HDF5 rewrites metadata wherever it lies (chunk
 * indexes, object headers, the superblock) and may place new chunks in
 * space it freed, but it never moves or rewrites a record chunk, and the
 * records an append writes go into new chunks only.  While STORE.undo
 * exists the store may be half-written; putting the saved bytes back and
 * cutting the file to its old size makes it the old store again, byte for
 * byte.  Whoever opens the store next does that (pb_store__undo_settle), so
 * a kill at any moment leaves the old store or, once the journal is gone,
 * the new one.  Readers hold a shared flock on the store while it is open,
 * an append an exclusive one, so none reads a store being changed. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <xxhash.h>

#include "pairbound/env.h"
#include "pairbound/error.h"
#include "pairbound/output.h"
#include "pairbound/signals.h"
#include "store_internal.h"

#define PB_UNDO__MAGIC "PBUNDO01"
/* magic, device, inode, old size, region count */
#define PB_UNDO__HEAD (8 + 4 * 8)

struct pb_undo__span {
  uint64_t off, len;
};

static void pb_undo__put64(unsigned char *p, uint64_t v)
{
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t pb_undo__get64(const unsigned char *p)
{
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static char *pb_undo__path(const char *store)
{
  const size_t n = strlen(store) + 6;
  char *p = pb_malloc(n);
  snprintf(p, n, "%s.undo", store);
  return p;
}

static int pb_undo__cmp(const void *a, const void *b)
{
  const struct pb_undo__span *x = a, *y = b;
  return x->off < y->off ? -1 : x->off > y->off;
}

/* Every allocated chunk of dataset @p dset, at file offsets (HDF5's addresses + @p base), appended to *@p v.
 * An HDF5 that cannot say where chunks lie (before 1.10.5) gives none: the journal then saves the whole file. */
static int pb_undo__chunks(hid_t dset, uint64_t base, struct pb_undo__span **v, size_t *n, size_t *cap)
{
#if !PB_STORE_DIRECT
  (void)dset, (void)base, (void)v, (void)n, (void)cap;
  return PB_OK;
#else
  hid_t space = H5Dget_space(dset), dcpl = H5Dget_create_plist(dset);
  hsize_t dims[4] = {0}, chunk[4] = {0};
  const int nd = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
  int status = PB_FAIL;
  if (nd < 1 || nd > 4 || dcpl < 0 || H5Sget_simple_extent_dims(space, dims, NULL) < 0 ||
      H5Pget_chunk(dcpl, nd, chunk) != nd)
    goto done;
  hsize_t at[4] = {0};
  for (int k = 0; k < nd; k++)
    if (dims[k] == 0) goto empty;
  for (;;) {
    unsigned mask;
    haddr_t addr = HADDR_UNDEF;
    hsize_t size = 0;
    /* a chunk HDF5 cannot place is left out of the kept bytes, so the journal saves its bytes too */
    if (H5Dget_chunk_info_by_coord(dset, at, &mask, &addr, &size) >= 0 && addr != HADDR_UNDEF && size > 0) {
      if (*n == *cap) *v = pb_realloc(*v, (*cap = *cap ? 2 * *cap : 256) * sizeof **v);
      (*v)[(*n)++] = (struct pb_undo__span){base + addr, size};
    }
    int k = nd - 1;
    for (; k >= 0 && (at[k] += chunk[k]) >= dims[k]; k--) at[k] = 0;
    if (k < 0) break;
  }
empty:
  status = PB_OK;
done:
  if (space >= 0) H5Sclose(space);
  if (dcpl >= 0) H5Pclose(dcpl);
  return status;
#endif
}

/* The record chunks of the open store, sorted: the bytes no append writes. */
static int pb_undo__kept(struct pb_store *st, struct pb_undo__span **v, size_t *n)
{
  size_t cap = 0;
  hsize_t ub = 0;
  hid_t fcpl = H5Fget_create_plist(st->file), grp = -1, sg = -1, dset = -1;
  *v = NULL;
  *n = 0;
  if (fcpl < 0 || H5Pget_userblock(fcpl, &ub) < 0) goto fail;
  if ((grp = H5Gopen2(st->file, "sources", H5P_DEFAULT)) < 0) goto fail;
  for (int32_t s = 0; s < st->meta.n_sources; s++) {
    if ((sg = H5Gopen2(grp, st->meta.sources[s].name, H5P_DEFAULT)) < 0) goto fail;
    for (int f = 0; f < PB_STORE_DSETS; f++) {
      if (!pb_store__dset_in(&st->meta, f)) continue;
      if ((dset = H5Dopen2(sg, pb_store__dset_names[f], H5P_DEFAULT)) < 0 ||
          pb_undo__chunks(dset, ub, v, n, &cap) != PB_OK)
        goto fail;
      H5Dclose(dset);
      dset = -1;
    }
    H5Gclose(sg);
    sg = -1;
  }
  H5Gclose(grp);
  H5Pclose(fcpl);
  if (*n) qsort(*v, *n, sizeof **v, pb_undo__cmp);
  return PB_OK;
fail:
  if (dset >= 0) H5Dclose(dset);
  if (sg >= 0) H5Gclose(sg);
  if (grp >= 0) H5Gclose(grp);
  if (fcpl >= 0) H5Pclose(fcpl);
  free(*v);
  *v = NULL;
  pb_error_set("%s: cannot list where its records lie (for the undo journal of the append)", st->path);
  return PB_FAIL;
}

/* [0, size) less the sorted spans @p kept: the regions an append may overwrite. */
static struct pb_undo__span *pb_undo__saved(const struct pb_undo__span *kept, size_t n_kept, uint64_t size,
                                            size_t *n)
{
  struct pb_undo__span *v = pb_malloc((n_kept + 1) * sizeof *v);
  uint64_t at = 0;
  *n = 0;
  for (size_t k = 0; k <= n_kept; k++) {
    const uint64_t end = k < n_kept ? (kept[k].off < size ? kept[k].off : size) : size;
    if (end > at) v[(*n)++] = (struct pb_undo__span){at, end - at};
    if (k < n_kept && kept[k].off + kept[k].len > at) at = kept[k].off + kept[k].len;
  }
  return v;
}

/* @p n bytes at offset @p off of @p fd, read into or written from @p buf (pb_output_iov_all): 0, else -1 with
 * errno (EIO for a read past the end of the file). */
static int pb_undo__io(int fd, void *buf, size_t n, off_t off, int write)
{
  struct iovec iov = {buf, n};
  errno = 0;
  if (pb_output_iov_all(fd, &iov, 1, off, write) == PB_OK) return 0;
  if (!errno) errno = EIO;
  return -1;
}

/* The journal's bytes: head, regions, their bytes read from @p fd, the XXH3-128 of all that. */
static unsigned char *pb_undo__encode(int fd, const struct stat *sb, const struct pb_undo__span *v, size_t n,
                                      size_t *len)
{
  size_t data = 0;
  for (size_t k = 0; k < n; k++) data += v[k].len;
  *len = PB_UNDO__HEAD + 16 * n + data + 16;
  unsigned char *b = pb_malloc(*len), *p = b + PB_UNDO__HEAD;
  memcpy(b, PB_UNDO__MAGIC, 8);
  pb_undo__put64(b + 8, (uint64_t)sb->st_dev);
  pb_undo__put64(b + 16, (uint64_t)sb->st_ino);
  pb_undo__put64(b + 24, (uint64_t)sb->st_size);
  pb_undo__put64(b + 32, n);
  for (size_t k = 0; k < n; k++, p += 16) {
    pb_undo__put64(p, v[k].off);
    pb_undo__put64(p + 8, v[k].len);
  }
  for (size_t k = 0; k < n; p += v[k].len, k++)
    if (pb_undo__io(fd, p, v[k].len, (off_t)v[k].off, 0) != 0) {
      free(b);
      return NULL;
    }
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(b, *len - 16));
  memcpy(p, c.digest, 16);
  return b;
}

int pb_store__undo_save(struct pb_store *st, int fd)
{
  struct pb_undo__span *kept = NULL, *saved = NULL;
  size_t n_kept, n_saved, len = 0;
  unsigned char *buf = NULL;
  char *undo = pb_undo__path(st->path), *tmp = NULL;
  int status = PB_FAIL, tfd = -1, sig = 0;
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    pb_error_set("%s: cannot stat: %s", st->path, strerror(errno));
    goto done;
  }
  if (pb_undo__kept(st, &kept, &n_kept) != PB_OK) goto done;
  saved = pb_undo__saved(kept, n_kept, (uint64_t)sb.st_size, &n_saved);
  if (!(buf = pb_undo__encode(fd, &sb, saved, n_saved, &len))) {
    pb_error_set("%s: cannot read it for its undo journal: %s", st->path, strerror(errno));
    goto done;
  }
  /* complete under a temporary name, then renamed: a STORE.undo is always whole */
  if ((tfd = pb_output_temp(undo, &tmp)) < 0) goto done;
  sig = pb_signal_cleanup_file(tmp);
  const int bad = pb_undo__io(tfd, buf, len, 0, 1) != 0 || fsync(tfd) != 0;
  int why = bad ? errno : 0;
  if (close(tfd) != 0 && !why) why = errno;
  tfd = -1;
  if (why) {
    pb_error_set("%s: cannot write the undo journal: %s", tmp, strerror(why));
    goto done;
  }
  if (rename(tmp, undo) != 0) {
    pb_error_set("cannot rename %s to %s: %s", tmp, undo, strerror(errno));
    goto done;
  }
  status = PB_OK;
done:
  if (tfd >= 0) close(tfd);
  if (tmp && status != PB_OK) unlink(tmp);
  pb_signal_forget_file(sig);
  free(tmp);
  free(undo);
  free(buf);
  free(kept);
  free(saved);
  return status;
}

/* Read and check the journal @p undo of @p path (whose stat is @p sb): *@p stale when it belongs to
 * another file (the store was replaced since); its bytes into *@p buf. */
static int pb_undo__load(const char *path, const char *undo, const struct stat *sb, unsigned char **buf, size_t *len,
                         int *stale)
{
  int ufd = open(undo, O_RDONLY | O_CLOEXEC);
  struct stat ub;
  *buf = NULL;
  *stale = 0;
  if (ufd < 0 || fstat(ufd, &ub) != 0) goto unreadable;
  *len = (size_t)ub.st_size;
  *buf = pb_malloc(*len ? *len : 1);
  if (pb_undo__io(ufd, *buf, *len, 0, 0) != 0) goto unreadable;
  close(ufd);
  const unsigned char *b = *buf;
  XXH128_canonical_t c;
  if (*len >= PB_UNDO__HEAD + 16) XXH128_canonicalFromHash(&c, XXH3_128bits(b, *len - 16));
  const uint64_t n = *len >= PB_UNDO__HEAD ? pb_undo__get64(b + 32) : 0;
  if (*len < PB_UNDO__HEAD + 16 || memcmp(b, PB_UNDO__MAGIC, 8) != 0 || n > (*len - PB_UNDO__HEAD) / 16 ||
      memcmp(c.digest, b + *len - 16, 16) != 0) {
    pb_error_set("%s: the undo journal of an interrupted append is damaged, so %s may be half-written and cannot "
                 "be restored; restore the store from a copy, then remove %s",
                 undo, path, undo);
    return PB_FAIL;
  }
  *stale = pb_undo__get64(b + 8) != (uint64_t)sb->st_dev || pb_undo__get64(b + 16) != (uint64_t)sb->st_ino;
  if (!*stale && (uint64_t)sb->st_size < pb_undo__get64(b + 24)) {
    pb_error_set("%s: shorter than before the interrupted append that %s would undo; restore the store from a copy",
                 path, undo);
    return PB_FAIL;
  }
  return PB_OK;
unreadable:
  if (ufd >= 0) close(ufd);
  pb_error_set("%s: cannot read the undo journal of an interrupted append: %s", undo, strerror(errno));
  return PB_FAIL;
}

/* The saved bytes back into @p fd, the file cut to its old size. */
static int pb_undo__restore(int fd, const unsigned char *b, size_t len)
{
  const uint64_t n = pb_undo__get64(b + 32), size = pb_undo__get64(b + 24);
  const unsigned char *reg = b + PB_UNDO__HEAD, *data = reg + 16 * n;
  for (uint64_t k = 0; k < n; k++) {
    const uint64_t off = pb_undo__get64(reg + 16 * k), l = pb_undo__get64(reg + 16 * k + 8);
    if (l > (size_t)(b + len - 16 - data) || off + l > size || pb_undo__io(fd, (void *)data, l, (off_t)off, 1) != 0)
      return PB_FAIL;
    data += l;
  }
  return ftruncate(fd, (off_t)size) == 0 && fsync(fd) == 0 ? PB_OK : PB_FAIL;
}

int pb_store__undo_apply(const char *path)
{
  char *undo = pb_undo__path(path);
  unsigned char *buf = NULL;
  size_t len = 0;
  int status = PB_FAIL, stale = 0;
  struct stat sb;
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &sb) != 0) {
    pb_error_set("%s: cannot open to undo an interrupted append (%s): %s", path, undo, strerror(errno));
    goto done;
  }
  if (pb_undo__load(path, undo, &sb, &buf, &len, &stale) != PB_OK) goto done;
  if (!stale && pb_undo__restore(fd, buf, len) != PB_OK) {
    pb_error_set("%s: cannot undo the interrupted append (%s stays, and the next open tries again): %s", path, undo,
                 strerror(errno));
    goto done;
  }
  /* restored (or the journal of a file since replaced): the store is whole */
  if (unlink(undo) != 0) {
    pb_error_set("%s: cannot remove %s: %s", path, undo, strerror(errno));
    goto done;
  }
  status = PB_OK;
done:
  if (fd >= 0) close(fd);
  free(buf);
  free(undo);
  return status;
}

int pb_store__undo_drop(const char *path)
{
  char *undo = pb_undo__path(path);
  const int status = unlink(undo) == 0 || errno == ENOENT ? PB_OK : PB_FAIL;
  if (status != PB_OK) pb_error_set("%s: cannot remove %s: %s", path, undo, strerror(errno));
  free(undo);
  return status;
}

/* The temporaries a killed writer of the store left: STORE.tmp.XXXXXX (a store being written),
 * STORE.undo.tmp.XXXXXX (a journal being written). */
static void pb_undo__sweep(const char *path)
{
  char *dir = pb_strdup(path), *slash = strrchr(dir, '/'), *undo = pb_undo__path(path);
  const size_t at = slash ? (size_t)(slash + 1 - dir) : 0; /* where the base name begins, in path and undo */
  if (slash) *slash = '\0';
  const char *in = slash ? (dir[0] ? dir : "/") : ".";
  pb_output_sweep(in, path + at);
  pb_output_sweep(in, undo + at); /* BASE.undo.tmp.XXXXXX: a journal whose writing a kill cut short */
  free(undo);
  free(dir);
}

int pb_store__take_over(const char *path)
{
  if (pb_store__undo_settle(path, 1) != PB_OK) return PB_FAIL;
  pb_undo__sweep(path);
  return PB_OK;
}

int pb_store__undo_settle(const char *path, int locked)
{
  char *undo = pb_undo__path(path);
  struct stat sb;
  int status = PB_OK;
  if (lstat(undo, &sb) == 0) {
    struct pb_output_lock lk = {.fd = -1};
    char *lockfile = pb_malloc(strlen(path) + 6);
    sprintf(lockfile, "%s.lock", path);
    /* an append holding the lock is still running; one that holds it no more was killed */
    status = locked ? PB_OK : pb_output_lock_take(&lk, lockfile, path);
    if (status == PB_OK) status = pb_store__undo_apply(path);
    pb_output_lock_release(&lk);
    free(lockfile);
  }
  free(undo);
  return status;
}

/* A shared flock on the store open on @p fd: 0, or -1 (an append holds it exclusively), or 1 when an undo
 * journal appeared after pb_store__undo_settle looked (an append began and was killed since). */
static int pb_undo__share(const char *path, int fd)
{
  char *undo = pb_undo__path(path);
  int status = 0;
  struct stat sb;
  if (flock(fd, LOCK_SH | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      pb_error_set("%s: models are being added to it (pairbound ingest --append, lock %s.lock); wait for that run "
                   "to end", path, path);
      status = -1;
    } /* else a file system without flock (some network mounts): no readers' lock there */
  } else if (lstat(undo, &sb) == 0) {
    flock(fd, LOCK_UN);
    status = 1;
  }
  free(undo);
  return status;
}

int pb_store__read_begin(const char *path, int fd)
{
  for (int tries = 0;; tries++) {
    if (pb_store__undo_settle(path, 0) != PB_OK) return PB_FAIL;
    const int r = fd >= 0 ? pb_undo__share(path, fd) : 0;
    if (r <= 0) return r == 0 ? PB_OK : PB_FAIL;
    if (tries == 2) {
      pb_error_set("%s: models keep being added to it (pairbound ingest --append); wait for that run to end", path);
      return PB_FAIL;
    }
  }
}

void pb_store__append_test_kill(int step)
{
  int64_t at;
  if (pb_env_given(PB_ENV_TEST_APPEND_KILL) && pb_env_int(PB_ENV_TEST_APPEND_KILL, 1, 3, &at) == PB_OK && at == step)
    raise(SIGKILL);
}

int pb_store__write_lock(const char *path, int fd)
{
  if (flock(fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK) return PB_OK;
  pb_error_set("%s: open in another process (a pairbound run reading it?); models are added to a store nothing "
               "reads: wait for that run to end", path);
  return PB_FAIL;
}
