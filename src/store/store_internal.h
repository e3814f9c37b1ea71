/* Between the files of src/store: the open store, and the rows memo of `pairbound run`. */
#ifndef PB_STORE_INTERNAL_H
#define PB_STORE_INTERNAL_H

#include <mpi.h>
#include <hdf5.h>

#include "pairbound/output.h"
#include "pairbound/store.h"

/* Record datasets per source: pred, smax, ptrue, topk_class, topk_prob. */
#define PB_STORE_DSETS 5

/* Where one record dataset's chunks are, for the direct writes (store_write.c). */
struct pb_store__wdset {
  int32_t rows;      /* conditions per chunk, C' (0: no such dataset) */
  int32_t per_model; /* chunks per model, ceil(C / C') */
  size_t row_bytes;  /* bytes of one row [I](+[K]) */
  off_t *addr;       /* file offset of chunk m * per_model + k */
};

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
  int wfd;          /* being written: the file for the direct chunk writes, or -1 */
  int wdirect;      /* whether they are used (else HDF5's writes; alike on every rank) */
  off_t wbase;      /* file offset of HDF5's address 0 */
  struct pb_store__wdset *wmap; /* [n_sources * PB_STORE_DSETS] */
};

/* Direct chunk writes (store_write.c): the chunk map of every source, made
 * once the record datasets exist, or of one source after it grew (collective);
 * released with the store. */
int pb_store__wmap_all(struct pb_store *st);
int pb_store__wmap_source(struct pb_store *st, int32_t s);
void pb_store__wmap_free(struct pb_store *st);

/* The root attribute `roles` of @p meta's sources (store.c). */
int pb_store__write_roles(hid_t file, const struct pb_meta *meta);
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
