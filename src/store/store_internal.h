/* Between the files of src/store: the open store, and the rows memo of `pairbound run`. */
#ifndef PB_STORE_INTERNAL_H
#define PB_STORE_INTERNAL_H

#include <mpi.h>
#include <hdf5.h>

#include "pairbound/output.h"
#include "pairbound/store.h"

struct pb_store {
  struct pb_meta meta;
  hid_t file;
  int fd;           /* the same file for the direct chunk reads, or -1 */
  MPI_Comm comm;
  int rank;
  int writable;
  int32_t schema;   /* the file's schema_version */
  double read_bytes, read_seconds; /* records this rank has read, pb_store_read_stats */
  char *path;       /* final name */
  char *tmp_path;   /* name while being written */
  struct pb_output_lock lock; /* rank 0, while being written: STORE.lock */
};

/* The root attribute `roles` of @p meta's sources (store.c). */
int pb_store__write_roles(hid_t file, const struct pb_meta *meta);
/* The width of its strings: wide enough for any role of @p meta's sources (store.c). */
size_t pb_store__roles_width(const struct pb_meta *meta);
/* Whether a record dataset has the shape the metadata promises (store.c); PB_FAIL with the reason set. */
int pb_store__shape_ok(const struct pb_store *st, const struct pb_source *s, const char *name, int ndims,
                       const hsize_t *dims);

/* The entry holding these rows of source @p src of the store at @p path
 * (opened on @p comm), or -1; this rank's view only (callers agree). */
int pb_store_memo_find(const char *path, MPI_Comm comm, int32_t src, int fields, int32_t n_rows, const int32_t *rows);
/* Entry @p i's rows into @p out, held until pb_store_rows_free. */
void pb_store_memo_take(int i, struct pb_rows *out);
/* Some rank missed: the entries nobody holds are dropped before the read. */
void pb_store_memo_miss(void);
/* Rows just read (held by the caller) become an entry, when the memo is on. */
void pb_store_memo_put(const char *path, MPI_Comm comm, int32_t src, int fields, int32_t n_rows, const int32_t *rows,
                       const struct pb_rows *d);
/* 1 if @p r holds an entry's rows (now let go and cleared), else 0. */
int pb_store_memo_release(struct pb_rows *r);
/* Whether the memo is on (the same on every rank: `pairbound run` sets it between stages). */
int pb_store_memo_on(void);
/* pb_store_rows_free's release of the arrays, for rows the caller owns (the memo's own entries; store_memo.c). */
void pb_store_rows_free_owned(struct pb_rows *rows);

#endif
