/* Between the files of src/store: the open store, and the rows memo of `pairbound run`. */
#ifndef PB_STORE_INTERNAL_H
#define PB_STORE_INTERNAL_H

#include <stdio.h>

#include <mpi.h>
#include <hdf5.h>

#include "pairbound/output.h"
#include "pairbound/store.h"

/* Record checks (and the label-set map) run over threads from this many records of one read on. */
#define PB_STORE_CHECK_THREADS ((int64_t)1 << 23)

/* Record datasets per source: pred, smax, ptrue, topk_class, topk_prob and
 * the optional summaries entropy, collision (store_summary.c). */
#define PB_STORE_DSETS 7
extern const char *const pb_store__dset_names[PB_STORE_DSETS];
/* Whether record dataset @p f (of pb_store__dset_names) is in a store of metadata @p meta. */
int pb_store__dset_in(const struct pb_meta *meta, int f);
/* Which summaries the open store holds, into st->meta.summaries; PB_FAIL when its sources disagree. */
int pb_store__summaries_find(struct pb_store *st, hid_t sources);

/* Where one record dataset's chunks are: for the direct writes (store_write.c) and the independent reads
 * (store_read.c, pb_store_reads_independent). */
struct pb_store__chunkmap {
  int32_t rows;      /* conditions per chunk, C' (0: no such dataset) */
  int32_t per_model; /* chunks per model, ceil(C / C') */
  size_t row_bytes;  /* bytes of one row [I](+[K]) */
  off_t *addr;       /* file offset of chunk m * per_model + k (reads: -1, HDF5 reads it) */
};

struct pb_store {
  struct pb_meta meta;
  hid_t file;
  int fd;           /* the same file for the direct chunk reads, or -1 */
  MPI_Comm comm;
  int rank;
  int writable;
  int32_t schema;   /* the file's schema_version */
  int checksummed;  /* its metadata carry checksums: schema 2, or a root checksum (a damaged schema_version) */
  double read_bytes, read_seconds; /* records this rank has read, pb_store_read_stats */
  char *path;       /* final name */
  char *tmp_path;   /* name while being written (NULL: written in place, an append) */
  int xfd;          /* an append: the store, holding its exclusive flock (pb_store__write_lock), else -1 */
  struct pb_output_lock lock; /* rank 0, while being written: STORE.lock */
  int sig_lock, sig_tmp;      /* their slots for a signal's immediate exit (pb_signal_cleanup_file), 0: none */
  /* pairbound check: every metadata object that fails its checksum is listed here, one line each, and the
   * open goes on as far as it can (else the first one ends it) */
  FILE *damage;
  int64_t n_damage;
  struct pb_output_direct wfd; /* being written: the file for the direct chunk writes (fd -1: none) */
  int wdirect;      /* whether they are used (else HDF5's writes; alike on every rank) */
  struct pb_store__chunkmap *wmap; /* [n_sources * PB_STORE_DSETS] */
  /* independent reads (pb_store_reads_independent): the chunks of every dataset asked for, of every source,
   * [n_sources * PB_STORE_DSETS] (addr NULL: not asked for); NULL: reads are collective */
  struct pb_store__chunkmap *rmap;
  int lsets;        /* reads map predictions to set correctness (pb_store_labels) */
};

/* store_chunks.c.  Whether this HDF5 can say where a chunk lies (H5Dget_chunk_info_by_coord, 1.10.5 on):
 * without it every record goes through HDF5. */
#if defined(H5_VERSION_GE)
#if H5_VERSION_GE(1, 10, 5)
#define PB_STORE_DIRECT 1
#endif
#endif
#ifndef PB_STORE_DIRECT
#define PB_STORE_DIRECT 0
#endif
/* The memory type of record dataset f of pb_store__dset_names. */
hid_t pb_store__dset_mtype(int f);
/* Whether the direct path can reach dataset @p dset at all: chunks of whole rows [1][C'][I](+[K]) with
 * Fletcher32 as their only filter, stored in the memory type itself; its chunk shape into @p chunk.  From the
 * file alone, so the same on every rank. */
int pb_store__direct_fits(hid_t dset, hid_t mtype, int ndims, const hsize_t *dims, hsize_t *chunk);
/* Fill @p ck for dataset @p dset (source @p s, chunk shape @p chunk): the file offset of each chunk with want[x]
 * (@p want NULL: every chunk), -1 where HDF5 cannot place it or it is unfiltered or of another size.  Every rank
 * that calls it for the same chunks makes the same metadata reads, collective with H5Pset_all_coll_metadata_ops. */
void pb_store__chunkmap_fill(const struct pb_store *st, const struct pb_source *s, hid_t dset, hid_t mtype,
                             int ndims, const hsize_t *dims, const hsize_t *chunk, const unsigned char *want,
                             struct pb_store__chunkmap *ck);
/* Collective: map every chunk of record dataset f of source s into @p ck, for the direct reads and writes;
 * 0 when the direct path cannot reach all of them (nothing kept then). */
int pb_store__chunkmap_dset(struct pb_store *st, int32_t s, int f, struct pb_store__chunkmap *ck);
/* Free a map of the store's [n_sources * PB_STORE_DSETS] datasets. */
void pb_store__chunkmap_free(const struct pb_store *st, struct pb_store__chunkmap **map);

/* The undo journal of an append, STORE.undo (store_undo.c; docs/store.md, "Appending").  One process each.
 * Save every byte of the open store @p st (also open on @p fd) but its record chunks into STORE.undo. */
int pb_store__undo_save(struct pb_store *st, int fd);
/* Put the journal's bytes back into @p path and cut it to its old size (a journal of a file since replaced is
 * only removed); then remove the journal. */
int pb_store__undo_apply(const char *path);
/* The append is complete: remove the journal. */
int pb_store__undo_drop(const char *path);
/* A writer that has just taken STORE.lock: an interrupted append is undone, and the temporaries a killed writer
 * of the store left (STORE.tmp.XXXXXX, STORE.undo.tmp.XXXXXX) are removed. */
int pb_store__take_over(const char *path);
/* Undo an interrupted append if STORE.undo exists, under STORE.lock (taken here unless @p locked). */
int pb_store__undo_settle(const char *path, int locked);
/* A reader's start: pb_store__undo_settle, then a shared flock on the store open on @p fd (-1: none), which
 * an append's exclusive one excludes. */
int pb_store__read_begin(const char *path, int fd);
/* Test hook PAIRBOUND_TEST_APPEND_KILL=N: the process kills itself (SIGKILL) at an append's step @p step = N. */
void pb_store__append_test_kill(int step);
/* An append's exclusive flock on the store open on @p fd: refused while a reader holds it. */
int pb_store__write_lock(const char *path, int fd);

/* A store object for @p path on @p comm, nothing open yet (store.c). */
struct pb_store *pb_store__new(const char *path, MPI_Comm comm);
/* Deep copy of @p src into @p dst, so a store owns its metadata (store.c). */
void pb_store__meta_copy(struct pb_meta *dst, const struct pb_meta *src);

/* Open a store (pb_store_open), listing damaged metadata into @p damage when not NULL (store.c). */
int pb_store__open(const char *path, MPI_Comm comm, FILE *damage, int64_t *n_damage, struct pb_store **out);

/* The metadata checksums (store_digest.c; docs/store.md, "Integrity"): attribute PB_STORE_DIGEST_ATTR of every
 * metadata object, the XXH3-128 of its canonical bytes, 32 hexadecimal digits. */
#define PB_STORE_DIGEST_ATTR "xxh3_128"
/* How many metadata objects come before source @p s (every one when @p s < 0): the root, models/id,
 * models/group and source_names, then five per source (its group, image_id, label, split, condition) and two
 * more for a source with label sets (label_set_offsets, label_set_ids). */
int32_t pb_store__digests(const struct pb_meta *meta, int32_t s);
/* Object @p k's HDF5 path and the checksum of its values in @p meta, for a store of schema @p schema. */
void pb_store__digest(const struct pb_meta *meta, int32_t schema, int32_t k, char *path, size_t npath,
                      char hex[65]);
/* Write every object's checksum attribute (collective when @p file is open on several ranks). */
int pb_store__digests_write(hid_t file, const struct pb_meta *meta, int32_t schema);
/* Whether object @p k of @p file carries the checksum of its values in @p meta: PB_OK, else PB_FAIL with the
 * object and what is wrong in @p why. */
int pb_store__digest_check(hid_t file, const struct pb_meta *meta, int32_t schema, int32_t k, char *why,
                           size_t n);

/* Label sets (store_lsets.c; docs/store.md, "Label sets"): the two datasets of a source that holds them. */
#define PB_STORE_LSETS_OFF "label_set_offsets"
#define PB_STORE_LSETS_IDS "label_set_ids"
/* @p src's sets into @p dst (NULL when it has none). */
void pb_store__lsets_copy(struct pb_source *dst, const struct pb_source *src);
/* Whether two sources hold the same sets (or both none). */
int pb_store__lsets_same(const struct pb_source *a, const struct pb_source *b);
/* Write the source's datasets into its group @p grp when it holds sets; read them when the store has them. */
int pb_store__lsets_write(hid_t grp, const struct pb_source *src, int rank);
int pb_store__lsets_read(const struct pb_store *st, hid_t grp, struct pb_source *src);

/* Under pb_store_labels' set correctness, the predictions of @p d (rows of source @p src) mapped in place. */
void pb_store__lsets_map(const struct pb_store *st, int32_t src, struct pb_rows *d);
/* The memo's key for @p fields: the set-correctness reads are other rows than the stored ones. */
int pb_store__lsets_key(const struct pb_store *st, int fields);

/* Direct chunk writes (store_write.c): the chunk map of every source, made
 * once the record datasets exist, or of one source after it grew (collective);
 * released with the store. */
int pb_store__wmap_all(struct pb_store *st);
/* pb_store_write_span's direct writes, for a store whose layout allows them (st->wdirect). */
int pb_store__write_span_direct(struct pb_store *st, int32_t src, int32_t row0, int32_t n_rows,
                                const struct pb_rows *data);
void pb_store__wmap_free(struct pb_store *st);

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

/* store_skeleton.c: rank 0 creates a new store's file through a driver that
 * leaves out raw-data writes while pb_store__fill_skipped(1) holds (HDF5's
 * fill of the record chunks it allocates); everything else is written. */
hid_t pb_store__skeleton_create(const char *path);
hid_t pb_store__skeleton_open(const char *path); /* for writing, the same way (an append's copy) */
void pb_store__fill_skipped(int on);

#endif
