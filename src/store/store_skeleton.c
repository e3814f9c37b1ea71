/* A new store's skeleton, written by rank 0 alone with a file driver of our
 * own that leaves out HDF5's fill of the record chunks (docs/store.md,
 * "Writing"); an append's copy grows through it too (store_append.c).
 *
 * HDF5 writes every chunk of a dataset with a filter when it allocates it,
 * even under H5D_FILL_TIME_NEVER (its H5D__chunk_allocate fills whenever the
 * pipeline is not empty), so a store created through MPI-IO had its records
 * written twice: 1.2 GB of zeros and then 1.2 GB of records, for the paper's
 * store.  Here rank 0 creates the whole file -- groups, attributes, the small
 * datasets, the record datasets with their chunks allocated (and so placed)
 * -- through this driver, which is POSIX I/O on one descriptor like HDF5's
 * sec2, except that while pb_store__fill_skipped is set it does not write
 * raw data: the only raw data written then is the fill of the record
 * datasets being created.  The chunks stay holes in a sparse file (zeros,
 * whose Fletcher32 sum is 0, so even a chunk never written reads back as
 * valid zeros) until the ranks, having reopened the file through MPI-IO,
 * write the records into them once. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <hdf5.h>

#include "pairbound/error.h"
#include "store_internal.h"

/* Whether raw-data writes are left out (set only around the creation of a
 * record dataset, on the one thread that creates the store). */
static int pb_store__skip_raw;

void pb_store__fill_skipped(int on) { pb_store__skip_raw = on; }

struct pb_store__vfd {
  H5FD_t pub; /* first: HDF5 sees this */
  int fd;
  haddr_t eoa, eof;
  dev_t dev;
  ino_t ino;
};

/* The largest address: what an off_t can reach. */
#define PB_STORE__VFD_MAXADDR ((haddr_t)INT64_MAX)

static H5FD_t *pb_store__vfd_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
  (void)fapl;
  if (maxaddr == 0 || maxaddr > PB_STORE__VFD_MAXADDR) return NULL;
  int o = (flags & H5F_ACC_RDWR) ? O_RDWR : O_RDONLY;
  if (flags & H5F_ACC_TRUNC) o |= O_TRUNC;
  if (flags & H5F_ACC_CREAT) o |= O_CREAT;
  if (flags & H5F_ACC_EXCL) o |= O_EXCL;
  const int fd = open(name, o | O_CLOEXEC, 0666);
  struct stat sb;
  if (fd < 0) return NULL;
  if (fstat(fd, &sb) != 0) {
    close(fd);
    return NULL;
  }
  struct pb_store__vfd *f = calloc(1, sizeof *f);
  if (!f) {
    close(fd);
    return NULL;
  }
  f->fd = fd;
  f->eof = (haddr_t)sb.st_size;
  f->dev = sb.st_dev;
  f->ino = sb.st_ino;
  return &f->pub;
}

static herr_t pb_store__vfd_close(H5FD_t *file)
{
  struct pb_store__vfd *f = (struct pb_store__vfd *)file;
  const int bad = close(f->fd) != 0;
  free(f);
  return bad ? -1 : 0;
}

static int pb_store__vfd_cmp(const H5FD_t *a, const H5FD_t *b)
{
  const struct pb_store__vfd *x = (const struct pb_store__vfd *)a, *y = (const struct pb_store__vfd *)b;
  if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
  if (x->ino != y->ino) return x->ino < y->ino ? -1 : 1;
  return 0;
}

static herr_t pb_store__vfd_query(const H5FD_t *file, unsigned long *flags)
{
  (void)file;
  /* sec2's, less data sieving: raw data goes to write() as HDF5 writes it */
  *flags = H5FD_FEAT_AGGREGATE_METADATA | H5FD_FEAT_ACCUMULATE_METADATA | H5FD_FEAT_AGGREGATE_SMALLDATA;
  return 0;
}

static haddr_t pb_store__vfd_get_eoa(const H5FD_t *file, H5FD_mem_t type)
{
  (void)type;
  return ((const struct pb_store__vfd *)file)->eoa;
}

static herr_t pb_store__vfd_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr)
{
  (void)type;
  ((struct pb_store__vfd *)file)->eoa = addr;
  return 0;
}

static haddr_t pb_store__vfd_get_eof(const H5FD_t *file, H5FD_mem_t type)
{
  (void)type;
  return ((const struct pb_store__vfd *)file)->eof;
}

static herr_t pb_store__vfd_get_handle(H5FD_t *file, hid_t fapl, void **handle)
{
  (void)fapl;
  *handle = &((struct pb_store__vfd *)file)->fd;
  return 0;
}

/* Bytes past the end of the file read as zeros, as sec2's do. */
static herr_t pb_store__vfd_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
  (void)type, (void)dxpl;
  const struct pb_store__vfd *f = (const struct pb_store__vfd *)file;
  char *p = buf;
  while (size > 0) {
    const ssize_t n = pread(f->fd, p, size, (off_t)addr);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) {
      memset(p, 0, size);
      break;
    }
    p += n, addr += (haddr_t)n, size -= (size_t)n;
  }
  return 0;
}

static herr_t pb_store__vfd_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size,
                                  const void *buf)
{
  (void)dxpl;
  struct pb_store__vfd *f = (struct pb_store__vfd *)file;
  if (type == H5FD_MEM_DRAW && pb_store__skip_raw) return 0; /* a record chunk's fill: the records come later */
  const char *p = buf;
  for (haddr_t at = addr; size > 0;) {
    const ssize_t n = pwrite(f->fd, p, size, (off_t)at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return -1;
    }
    p += n, at += (haddr_t)n, size -= (size_t)n;
    if (at > f->eof) f->eof = at;
  }
  return 0;
}

/* The file ends where HDF5's address space does (holes included). */
static herr_t pb_store__vfd_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
  (void)dxpl, (void)closing;
  struct pb_store__vfd *f = (struct pb_store__vfd *)file;
  if (f->eoa == f->eof) return 0;
  if (ftruncate(f->fd, (off_t)f->eoa) != 0) return -1;
  f->eof = f->eoa;
  return 0;
}

static const H5FD_class_t pb_store__vfd_class = {
    .name = "pairbound_skeleton",
    .maxaddr = PB_STORE__VFD_MAXADDR,
    .fc_degree = H5F_CLOSE_STRONG,
    .open = pb_store__vfd_open,
    .close = pb_store__vfd_close,
    .cmp = pb_store__vfd_cmp,
    .query = pb_store__vfd_query,
    .get_eoa = pb_store__vfd_get_eoa,
    .set_eoa = pb_store__vfd_set_eoa,
    .get_eof = pb_store__vfd_get_eof,
    .get_handle = pb_store__vfd_get_handle,
    .read = pb_store__vfd_read,
    .write = pb_store__vfd_write,
    .truncate = pb_store__vfd_truncate,
    .fl_map = H5FD_FLMAP_DICHOTOMY,
};

/* Create (@p create) or open for writing the file @p path through the driver. */
static hid_t pb_store__skeleton_file(const char *path, int create)
{
  static hid_t driver = -1;
  if (driver < 0 || H5Iis_valid(driver) <= 0) driver = H5FDregister(&pb_store__vfd_class);
  hid_t fapl = driver < 0 ? -1 : H5Pcreate(H5P_FILE_ACCESS), file = -1;
  errno = 0;
  if (fapl >= 0 && H5Pset_driver(fapl, driver, NULL) >= 0 && H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) >= 0)
    file = create ? H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl) : H5Fopen(path, H5F_ACC_RDWR, fapl);
  if (fapl >= 0) H5Pclose(fapl);
  if (file < 0)
    pb_error_set("%s: cannot %s file: %s", path, create ? "create" : "open", errno ? strerror(errno) : "HDF5 error");
  return file;
}

hid_t pb_store__skeleton_create(const char *path) { return pb_store__skeleton_file(path, 1); }
hid_t pb_store__skeleton_open(const char *path) { return pb_store__skeleton_file(path, 0); }
