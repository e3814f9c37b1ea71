/* HDF5 helpers shared by the store and results writers. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/statvfs.h>

#include <mpi.h>
#include <hdf5.h>

#include "pairbound/comm.h"
#include "pairbound/error.h"
#include "pairbound/output.h"
#include "pairbound/signals.h"
#include "h5io.h"

/* Parallel access on @p comm, collective metadata, strong close. */
static hid_t pb_h5__fapl(MPI_Comm comm)
{
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl < 0) return -1;
  /* STRONG: closing the file after a failed write also closes the objects
   * the failure left open, so the file never outlives the stage (an open
   * file is closed by HDF5 inside MPI_Finalize, where it crashes) */
  if (H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL) < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0 ||
      H5Pset_all_coll_metadata_ops(fapl, 1) < 0 || H5Pset_coll_metadata_write(fapl, 1) < 0) {
    H5Pclose(fapl);
    return -1;
  }
  return fapl;
}

static int pb_h5__unclosed;

int pb_h5_close_file(hid_t file, const char *path, int discard)
{
  if (file < 0) return PB_OK;
  /* every rank may empty it: the content is dropped, writes after this
   * only extend a file that is unlinked next */
  if (discard && path) {
    int ignored = truncate(path, 0); /* best effort: the close below runs anyway */
    (void)ignored;
  }
  if (H5Fclose(file) >= 0) return PB_OK;
  pb_h5__unclosed = 1;
  /* when discarding, the reason that caused it is the message to keep */
  if (!discard) pb_error_set("%s: cannot close file (disk full?)", path ? path : "HDF5 file");
  return PB_FAIL;
}

int pb_h5_unclosed(void) { return pb_h5__unclosed; }

/* H5Ewalk2 callback: keep the first description, the innermost error's (walking upward). */
static herr_t pb_h5__innermost(unsigned n, const H5E_error2_t *e, void *out)
{
  if (n == 0 && e->desc) snprintf(out, 512, "%s", e->desc);
  return 0;
}

/* H5Fopen of @p path failed: the message names it and says why as HDF5's
 * innermost error does ("truncated file: eof = ..., stored_eof = ..." for a
 * file shorter than its superblock says). */
static void pb_h5__open_failed(const char *path)
{
  char why[512] = "";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, pb_h5__innermost, why);
  if (strstr(why, "truncated file"))
    pb_error_set("%s: cannot open: the file is truncated, damaged or incompletely copied (HDF5: %s)", path, why);
  else if (why[0]) pb_error_set("%s: cannot open (HDF5: %s)", path, why);
  else pb_error_set("%s: cannot open", path);
}

hid_t pb_h5_dxpl(void)
{
  hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  if (dxpl >= 0 && H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE) < 0) {
    H5Pclose(dxpl);
    return -1;
  }
  return dxpl;
}

hid_t pb_h5_strtype(size_t len)
{
  hid_t t = H5Tcopy(H5T_C_S1);
  if (t < 0) return -1;
  if (H5Tset_size(t, len) < 0 || H5Tset_strpad(t, H5T_STR_NULLTERM) < 0) {
    H5Tclose(t);
    return -1;
  }
  return t;
}

/* Collective write of a whole small 1-D dataset whose contents rank 0 supplies: rank 0's slice is all of it. */
int pb_h5_write_small(hid_t loc, const char *name, hid_t ftype, hid_t mtype, hsize_t n, const void *buf, int rank)
{
  return pb_h5_write_slice(loc, name, ftype, mtype, (int64_t)n, 0, rank == 0 ? (int64_t)n : 0, buf);
}

/* Pack strings into one fixed-width buffer (width = longest + 1). */
char *pb_h5_pack_strings(char *const *v, int32_t n, size_t *width)
{
  size_t w = 1;
  for (int32_t i = 0; i < n; i++) {
    size_t l = strlen(v[i]) + 1;
    if (l > w) w = l;
  }
  char *buf = pb_calloc((size_t)(n > 0 ? n : 1), w);
  for (int32_t i = 0; i < n; i++) memcpy(buf + (size_t)i * w, v[i], strlen(v[i]));
  *width = w;
  return buf;
}

int pb_h5_write_strings(hid_t loc, const char *name, char *const *v, int32_t n, int rank)
{
  size_t w;
  char *buf = pb_h5_pack_strings(v, n, &w);
  hid_t t = pb_h5_strtype(w);
  int status = t < 0 ? PB_FAIL : pb_h5_write_small(loc, name, t, t, (hsize_t)n, buf, rank);
  if (t >= 0) H5Tclose(t);
  free(buf);
  return status;
}

/* A scalar attribute @p name of file type @p ftype, @p value in memory type @p mtype. */
static int pb_h5__attr(hid_t loc, const char *name, hid_t ftype, hid_t mtype, const void *value)
{
  int status = PB_FAIL;
  hid_t space = H5Screate(H5S_SCALAR), attr = -1;
  if (space < 0 || ftype < 0) goto done;
  if ((attr = H5Acreate2(loc, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT)) < 0) goto done;
  if (H5Awrite(attr, mtype, value) < 0) goto done;
  status = PB_OK;
done:
  if (status != PB_OK) pb_error_set("HDF5: cannot write attribute '%s'", name);
  if (attr >= 0) H5Aclose(attr);
  if (space >= 0) H5Sclose(space);
  return status;
}

int pb_h5_attr_int(hid_t loc, const char *name, int32_t value)
{
  return pb_h5__attr(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, &value);
}

int pb_h5_attr_str(hid_t loc, const char *name, const char *value)
{
  hid_t t = pb_h5_strtype(strlen(value) + 1);
  int status = pb_h5__attr(loc, name, t, t, value);
  if (t >= 0) H5Tclose(t);
  return status;
}

int pb_h5_attr_strings(hid_t loc, const char *name, char *const *v, int32_t n, size_t width)
{
  int status = PB_FAIL;
  hsize_t dim = (hsize_t)n;
  char *buf = pb_calloc((size_t)(n > 0 ? n : 1), width);
  for (int32_t i = 0; i < n; i++) snprintf(buf + (size_t)i * width, width, "%s", v[i]);
  hid_t space = H5Screate_simple(1, &dim, NULL), attr = -1, t = pb_h5_strtype(width);
  if (space < 0 || t < 0) goto done;
  if (H5Aexists(loc, name) > 0) attr = H5Aopen(loc, name, H5P_DEFAULT); /* rewritten in place */
  else attr = H5Acreate2(loc, name, t, space, H5P_DEFAULT, H5P_DEFAULT);
  if (attr < 0 || H5Awrite(attr, t, buf) < 0) goto done;
  status = PB_OK;
done:
  if (status != PB_OK) pb_error_set("HDF5: cannot write attribute '%s'", name);
  if (attr >= 0) H5Aclose(attr);
  if (t >= 0) H5Tclose(t);
  if (space >= 0) H5Sclose(space);
  free(buf);
  return status;
}

char **pb_h5_read_attr_strings(hid_t loc, const char *name, int32_t *count, size_t *width)
{
  char **v = NULL, *buf = NULL;
  hsize_t dim = 0;
  hid_t attr = H5Aopen(loc, name, H5P_DEFAULT), ft = -1, mt = -1, space = -1;
  if (attr < 0) return NULL;
  if ((ft = H5Aget_type(attr)) < 0 || H5Tget_class(ft) != H5T_STRING || H5Tis_variable_str(ft)) goto done;
  if ((space = H5Aget_space(attr)) < 0 || H5Sget_simple_extent_ndims(space) != 1) goto done;
  H5Sget_simple_extent_dims(space, &dim, NULL);
  const size_t w = H5Tget_size(ft);
  if ((mt = pb_h5_strtype(w)) < 0) goto done;
  buf = pb_calloc((size_t)(dim > 0 ? dim : 1), w);
  if (H5Aread(attr, mt, buf) < 0) goto done;
  v = pb_malloc((size_t)(dim > 0 ? dim : 1) * sizeof *v);
  for (hsize_t i = 0; i < dim; i++) {
    v[i] = pb_calloc(w + 1, 1);
    memcpy(v[i], buf + i * w, w);
  }
  *count = (int32_t)dim;
  if (width) *width = w;
done:
  free(buf);
  if (space >= 0) H5Sclose(space);
  if (mt >= 0) H5Tclose(mt);
  if (ft >= 0) H5Tclose(ft);
  H5Aclose(attr);
  return v;
}

int pb_h5_read_attr_int(hid_t loc, const char *name, int32_t *value)
{
  hid_t attr = H5Aopen(loc, name, H5P_DEFAULT);
  if (attr < 0) return PB_FAIL;
  herr_t e = H5Aread(attr, H5T_NATIVE_INT32, value);
  H5Aclose(attr);
  return e < 0 ? PB_FAIL : PB_OK;
}

char *pb_h5_read_attr_str(hid_t loc, const char *name)
{
  char *value = NULL;
  hid_t attr = H5Aopen(loc, name, H5P_DEFAULT), ft = -1, mt = -1;
  if (attr < 0) return NULL;
  if ((ft = H5Aget_type(attr)) < 0 || H5Tget_class(ft) != H5T_STRING || H5Tis_variable_str(ft)) goto done;
  size_t len = H5Tget_size(ft);
  if ((mt = pb_h5_strtype(len + 1)) < 0) goto done;
  value = pb_calloc(len + 1, 1);
  if (H5Aread(attr, mt, value) < 0) { free(value); value = NULL; }
done:
  if (mt >= 0) H5Tclose(mt);
  if (ft >= 0) H5Tclose(ft);
  H5Aclose(attr);
  return value;
}

/* Read a whole 1-D dataset; returns its length through *n (-1 on failure).
 * An independent transfer (the default property list): every rank reads the
 * same few bytes (image ids, labels, names) by itself, where a collective
 * read made each such dataset rounds of synchronisation between the ranks
 * (docs/scaling.md, "Ranks and threads"). */
void *pb_h5_read_small(hid_t loc, const char *name, hid_t mtype, size_t esize, hsize_t *n)
{
  void *buf = NULL;
  hid_t dset = H5Dopen2(loc, name, H5P_DEFAULT), space = -1;
  if (dset < 0 || (space = H5Dget_space(dset)) < 0 || H5Sget_simple_extent_ndims(space) != 1) goto done;
  H5Sget_simple_extent_dims(space, n, NULL);
  buf = pb_calloc(*n > 0 ? *n : 1, esize);
  if (H5Dread(dset, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
    free(buf);
    buf = NULL;
  }
done:
  if (space >= 0) H5Sclose(space);
  if (dset >= 0) H5Dclose(dset);
  return buf;
}

char **pb_h5_read_strings(hid_t loc, const char *name, int32_t *count)
{
  hid_t dset = H5Dopen2(loc, name, H5P_DEFAULT), ft = -1, mt = -1;
  char **v = NULL, *buf = NULL;
  if (dset < 0 || (ft = H5Dget_type(dset)) < 0 || H5Tget_class(ft) != H5T_STRING || H5Tis_variable_str(ft))
    goto done;
  size_t w = H5Tget_size(ft) + 1;
  if ((mt = pb_h5_strtype(w)) < 0) goto done;
  H5Dclose(dset);
  dset = -1;
  hsize_t n = 0;
  if (!(buf = pb_h5_read_small(loc, name, mt, w, &n))) goto done;
  v = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  for (hsize_t i = 0; i < n; i++) v[i] = pb_strdup(buf + i * w);
  *count = (int32_t)n;
done:
  free(buf);
  if (mt >= 0) H5Tclose(mt);
  if (ft >= 0) H5Tclose(ft);
  if (dset >= 0) H5Dclose(dset);
  return v;
}


/* Why a write to @p path failed, as far as the system can say: @p err when
 * a write gives it (a full disk, a quota, an I/O error), else a full disk
 * when the file system has no block left for us (MPI-IO and HDF5 may have
 * set errno again since the write failed); NULL when neither. */
static const char *pb_h5__why(const char *path, int err)
{
  if (err == ENOSPC || err == EDQUOT || err == EIO || err == EFBIG) return strerror(err);
  struct statvfs fs;
  if (path[0] && statvfs(path, &fs) == 0 && fs.f_bavail == 0) return strerror(ENOSPC);
  return NULL;
}

/* "HDF5: cannot write dataset 'NAME' of FILE (REASON)", the reason pb_h5__why
 * gives for @p err (left out when none); the file's name in @p path. */
static void pb_h5__failed(hid_t loc, const char *name, int err, char path[4096])
{
  path[0] = '\0';
  hid_t file = H5Iget_file_id(loc);
  if (file >= 0) {
    H5Fget_name(file, path, 4096);
    H5Fclose(file);
  }
  const char *why = pb_h5__why(path, err);
  pb_error_set("HDF5: cannot write dataset '%s' of %s%s%s%s", name, path[0] ? path : "the file", why ? " (" : "",
               why ? why : "", why ? ")" : "");
}

/* Create (truncate, @p how 'c'), open read-only ('r') or open for writing ('w') the file @p path for @p comm's
 * ranks. */
static hid_t pb_h5__file(const char *path, MPI_Comm comm, char how)
{
  /* opening is collective inside HDF5 and MPI-IO, whose waits poll without
   * pause: the ranks meet first where waiting sleeps (pairbound/comm.h) */
  pb_comm_barrier(comm);
  hid_t fapl = pb_h5__fapl(comm), file = -1;
  if (fapl >= 0 && how == 'c') file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  else if (fapl >= 0) file = H5Fopen(path, how == 'w' ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl);
  /* HDF5's reason is read before the next call clears its error stack */
  if (file < 0 && how == 'c') pb_error_set("%s: cannot create file", path);
  else if (file < 0) pb_h5__open_failed(path);
  if (fapl >= 0) H5Pclose(fapl);
  return file;
}

hid_t pb_h5_create(const char *path, MPI_Comm comm) { return pb_h5__file(path, comm, 'c'); }
hid_t pb_h5_open(const char *path, MPI_Comm comm) { return pb_h5__file(path, comm, 'r'); }
hid_t pb_h5_open_rw(const char *path, MPI_Comm comm) { return pb_h5__file(path, comm, 'w'); }

int pb_h5_provenance(hid_t file, const char *build, const char *text)
{
  hid_t grp = H5Gcreate2(file, "provenance", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  int status = grp < 0 || (build && pb_h5_attr_str(grp, "build", build)) || pb_h5_attr_str(grp, "text", text);
  if (grp >= 0) H5Gclose(grp);
  return status ? PB_FAIL : PB_OK;
}

hid_t pb_h5_create_dataset(hid_t loc, const char *name, hid_t ftype, int ndims, const hsize_t *dims,
                           const hsize_t *maxdims, hid_t dcpl)
{
  hid_t space = H5Screate_simple(ndims, dims, maxdims), dset = -1;
  if (space >= 0) dset = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (space >= 0) H5Sclose(space);
  return dset;
}

int pb_h5_write_slice(hid_t loc, const char *name, hid_t ftype, hid_t mtype, int64_t n_total, int64_t offset,
                      int64_t n_local, const void *buf)
{
  int status = PB_FAIL, said = 0;
  hsize_t dim = (hsize_t)n_total, start = (hsize_t)offset, count = (hsize_t)n_local, mdim = count ? count : 1;
  hid_t space = -1, dset = -1, mspace = -1;
  if ((dset = pb_h5_create_dataset(loc, name, ftype, 1, &dim, NULL, H5P_DEFAULT)) < 0) goto done;
  if ((space = H5Dget_space(dset)) < 0) goto done;
  if (n_total == 0) { /* an empty column: nothing to write (HDF5 rejects a write to it) */
    status = PB_OK;
    goto done;
  }
  if ((mspace = H5Screate_simple(1, &mdim, NULL)) < 0) goto done;
  if (count == 0) {
    if (H5Sselect_none(space) < 0 || H5Sselect_none(mspace) < 0) goto done;
  } else if (H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0) {
    goto done;
  }
  /* independent transfer (the default property list): each rank writes its
   * contiguous slice without waiting for the others, whose slices touch
   * other bytes; a collective one made every column a round of
   * synchronisation between the ranks (docs/scaling.md, "Ranks and threads") */
  if (H5Dwrite(dset, mtype, mspace, space, H5P_DEFAULT, buf) < 0) {
    pb_h5_write_failed(loc, name); /* says why, naming the file */
    said = 1;
    goto done;
  }
  status = PB_OK;
done:
  if (status != PB_OK && !said) {
    char path[4096];
    pb_h5__failed(loc, name, errno, path);
  }
  if (mspace >= 0) H5Sclose(mspace);
  if (dset >= 0) H5Dclose(dset);
  if (space >= 0) H5Sclose(space);
  return status;
}

void pb_h5_write_failed(hid_t loc, const char *name)
{
  /* Only local calls here: the other ranks may already be in the next
   * collective call, so asking HDF5 for the file's communicator (which
   * duplicates it, a collective) would wait for them for ever.  The MPI-IO
   * handle's group is local information. */
  int err = errno, size = 1, rank = 0;
  hid_t file = H5Iget_file_id(loc);
  void *handle = NULL;
  MPI_Group group = MPI_GROUP_NULL;
  hbool_t atomic = 0;
  /* a file of one process (a new store's skeleton, rank 0's: store_skeleton.c) has no MPI-IO handle; asking
   * for the atomicity is local, and fails for a driver without MPI */
  if (file >= 0 && H5Fget_mpi_atomicity(file, &atomic) >= 0 && H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) >= 0 &&
      handle &&
      MPI_File_get_group(*(MPI_File *)handle, &group) == MPI_SUCCESS) {
    MPI_Group_size(group, &size);
    MPI_Group_rank(group, &rank);
    MPI_Group_free(&group);
  }
  char path[4096];
  pb_h5__failed(loc, name, err, path); /* one rank: the stage fails with this message */
  if (size > 1) {
    fprintf(stderr, "pairbound: error on rank %d: %s; stopping every rank\n", rank, pb_error_message());
    if (path[0]) unlink(path);
    pb_signal_cleanup_now(); /* a stage's staging directory, on the rank that made it */
    pb_output_remove_staging_of(path); /* and on any other: rank 0 may not get to it (pairbound/output.h) */
    fflush(NULL);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (file >= 0) H5Fclose(file);
}

int pb_h5_read_slice(hid_t file, const char *path, const char *name, hid_t mtype, int64_t n_total, int64_t first,
                     int64_t n, void *buf, const char *hint)
{
  hid_t ds = H5Dopen2(file, name, H5P_DEFAULT), sp = -1, ms = -1;
  int status = PB_FAIL;
  if (ds < 0) {
    pb_error_set("%s: no dataset %s%s%s", path, name, hint ? " " : "", hint ? hint : "");
    return PB_FAIL;
  }
  hsize_t len = 0;
  if ((sp = H5Dget_space(ds)) < 0 || H5Sget_simple_extent_ndims(sp) != 1 ||
      H5Sget_simple_extent_dims(sp, &len, NULL) != 1 ||
      (n_total >= 0 ? (int64_t)len != n_total : (int64_t)len < first + n)) {
    pb_error_set("%s: %s has %llu items but %lld are expected (results of another store?)", path, name,
                 (unsigned long long)len, (long long)(n_total >= 0 ? n_total : first + n));
    goto done;
  }
  if (n > 0) {
    hsize_t off = (hsize_t)first, cnt = (hsize_t)n;
    if (H5Sselect_hyperslab(sp, H5S_SELECT_SET, &off, NULL, &cnt, NULL) < 0 ||
        (ms = H5Screate_simple(1, &cnt, NULL)) < 0 || H5Dread(ds, mtype, ms, sp, H5P_DEFAULT, buf) < 0) {
      pb_error_set("%s: cannot read %s", path, name);
      goto done;
    }
  }
  status = PB_OK;
done:
  if (ms >= 0) H5Sclose(ms);
  if (sp >= 0) H5Sclose(sp);
  H5Dclose(ds);
  return status;
}
