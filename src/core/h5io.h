/* HDF5 helpers shared by the store and results writers (internal). */
#ifndef PAIRBOUND_H5IO_H
#define PAIRBOUND_H5IO_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>
#include <hdf5.h>

hid_t pb_h5_dxpl(void);
hid_t pb_h5_strtype(size_t len);
int pb_h5_write_small(hid_t loc, const char *name, hid_t ftype, hid_t mtype, hsize_t n, const void *buf, int rank);
char *pb_h5_pack_strings(char *const *v, int32_t n, size_t *width);
int pb_h5_write_strings(hid_t loc, const char *name, char *const *v, int32_t n, int rank);
int pb_h5_attr_int(hid_t loc, const char *name, int32_t value);
int pb_h5_attr_str(hid_t loc, const char *name, const char *value);
/* A 1-D attribute of @p n fixed-length strings of @p width bytes (NUL included); an existing attribute of that
 * name and size is rewritten in place. */
int pb_h5_attr_strings(hid_t loc, const char *name, char *const *v, int32_t n, size_t width);
/* Such an attribute's strings (caller frees each and the array), their count and width; NULL when absent or not
 * fixed-length strings. */
char **pb_h5_read_attr_strings(hid_t loc, const char *name, int32_t *count, size_t *width);
int pb_h5_read_attr_int(hid_t loc, const char *name, int32_t *value);
char *pb_h5_read_attr_str(hid_t loc, const char *name);
void *pb_h5_read_small(hid_t loc, const char *name, hid_t mtype, size_t esize, hsize_t *n);
char **pb_h5_read_strings(hid_t loc, const char *name, int32_t *count);
/* Close a file this process writes.  @p discard: the file is abandoned; its
 * temporary @p path is emptied first so that the close's metadata flush
 * does not fail on the full disk that may have caused the abandonment.
 * Returns PB_OK, or PB_FAIL with the error set, when HDF5 could not close it. */
int pb_h5_close_file(hid_t file, const char *path, int discard);
/* Whether some file could not be closed: HDF5 1.10 then crashes when it
 * terminates (H5F__close_cb), so the process must exit without terminating
 * HDF5 and MPI (src/cli/main.c). */
int pb_h5_unclosed(void);
/* A collective write (or early allocation) of file @p loc failed on this
 * rank.  With more than one rank the others may be waiting in that same
 * collective call for ever (a full disk: Open MPI's ompio fails on some ranks
 * only), so nothing consistent can follow: print why with the rank, remove
 * the file being written and end every rank (MPI_Abort; rank 0's signal
 * handler removes a stage's staging directory).  Returns on one rank. */
void pb_h5_write_failed(hid_t loc, const char *name);
/* Collective: create (truncate) or open read-only the file @p path for @p comm's ranks; -1 with the message
 * set when it fails (for an open, HDF5's innermost reason: "the file is truncated, damaged or incompletely
 * copied (HDF5: truncated file: eof = ...)" for a file shorter than its superblock says). */
hid_t pb_h5_create(const char *path, MPI_Comm comm);
hid_t pb_h5_open(const char *path, MPI_Comm comm);
/* Collective: open the existing file @p path for writing, as pb_h5_open. */
hid_t pb_h5_open_rw(const char *path, MPI_Comm comm);
/* The group "provenance" of @p file: attribute "build" (unless NULL), then "text"; content comparisons skip it. */
int pb_h5_provenance(hid_t file, const char *build, const char *text);
/* Dataset @p name of @p ndims dimensions @p dims, at most @p maxdims (NULL: fixed), with creation properties
 * @p dcpl (H5P_DEFAULT: contiguous); -1 when it cannot be created. */
hid_t pb_h5_create_dataset(hid_t loc, const char *name, hid_t ftype, int ndims, const hsize_t *dims,
                           const hsize_t *maxdims, hid_t dcpl);
/* Collective: create a 1-D dataset of n_total and write this rank's slice [offset, offset + n_local) of it
 * (an independent transfer: no rank waits for another's data). */
int pb_h5_write_slice(hid_t loc, const char *name, hid_t ftype, hid_t mtype, int64_t n_total, int64_t offset,
                      int64_t n_local, const void *buf);
/* The slice [first, first + n) of the 1-D dataset @p name of @p file (opened from @p path, which messages name) as
 * @p mtype into buf; the dataset holds n_total items (n_total < 0: any number >= first + n). A missing dataset's
 * message ends with @p hint when given (independent transfer). */
int pb_h5_read_slice(hid_t file, const char *path, const char *name, hid_t mtype, int64_t n_total, int64_t first,
                     int64_t n, void *buf, const char *hint);

#endif /* PAIRBOUND_H5IO_H */
