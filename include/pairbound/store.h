/* Record store: one HDF5 file holding prediction records for every
 * (source, model, condition, image).  Schema: docs/store.md. */
#ifndef PAIRBOUND_STORE_H
#define PAIRBOUND_STORE_H

#include <stdint.h>
#include <stdio.h>
#include <mpi.h>

#include "pairbound/job.h"
#include "pairbound/meta.h"

/* Schema version written; stores of PB_STORE_SCHEMA_OLDEST and later are read (docs/store.md). */
#define PB_STORE_SCHEMA_VERSION 3
#define PB_STORE_SCHEMA_OLDEST 1

struct pb_store;         /* open store file */

/**
 * The rows memo of `pairbound run` (on = 1; off by default): rows that
 * pb_store_read_fields read are kept when freed and handed to a later
 * identical read of the same store file (path, device, inode, size and
 * modification time) on the same communicator, instead of being read again;
 * such rows are read-only.  Each call drops the rows nobody holds.
 */
void pb_store_rows_memo(int on);
struct stat;
/**
 * Whether @p path, opened on @p comm, is still the file @p known_path was
 * when @p id was taken from it on @p known_comm: same name, device, inode,
 * size and modification time, and a congruent communicator.  The test of
 * the run's memos (protocol, rows) before they reuse anything.
 */
int pb_store_file_unchanged(const char *path, MPI_Comm comm, const char *known_path, MPI_Comm known_comm,
                            const struct stat *id);

/**
 * Create a store at a temporary name beside @p path and write its metadata.
 * Collective over @p comm; every rank passes identical metadata.
 * @return PB_OK or PB_FAIL (pb_error_message() says why).
 */
int pb_store_create(const char *path, MPI_Comm comm, const struct pb_meta *meta,
                    struct pb_store **out);

/**
 * Write rows of source @p src.  Collective: every rank calls once per source
 * with its own sorted, distinct row indices (possibly none).
 */
int pb_store_write_rows(struct pb_store *st, int32_t src, int32_t n_rows,
                        const int32_t *rows, const struct pb_rows *data);

/**
 * Rows per write unit of source @p src: pb_store_write_span() takes runs of
 * whole units (a unit holds whole chunks of every record dataset: a model's
 * rows, or fewer where its chunks hold fewer conditions).
 */
int32_t pb_store_span_rows(const struct pb_store *st, int32_t src);

/**
 * Write rows [row0, row0 + n_rows) of source @p src from @p data: whole
 * write units (pb_store_span_rows) of one or more models, the last unit of a
 * model ending at its last condition.  The chunks are written directly
 * (their Fletcher32 checksum computed here, pwrite at their address), so the
 * ranks' writes are independent; every rank calls it the same number of
 * times, with its own rows or none, and all return the same status (a store
 * whose layout does not allow direct writes takes HDF5's collective writes).
 */
int pb_store_write_span(struct pb_store *st, int32_t src, int32_t row0, int32_t n_rows, const struct pb_rows *data);

/**
 * Writing spans on a thread of its own while the caller computes the next
 * rows (synth, ingest): a direct write of a span's chunks costs a good part
 * of what computing or reading its rows does, and the caller's threads would
 * be idle meanwhile.  For a store whose layout takes the direct chunk writes
 * (pb_store_write_async()); the rows must stay as they are until the wait.
 */
struct pb_store_span {
  int32_t src, row0, n_rows; /* as pb_store_write_span's */
  struct pb_rows rows;       /* the rows' arrays (not copied) */
};
struct pb_store_writer {
  struct pb_job job;
  struct pb_store *st;
  struct pb_store_span *span;
  int n_span, cap_span;
  int status;
  char *why;                 /* a failure's message, from the writer's thread */
};

/** Whether @p st takes pb_store_writer_start(): it is being written, with the direct chunk writes. */
int pb_store_write_async(const struct pb_store *st);

/**
 * Start writing @p span[0..n_span) (whole write units each, as
 * pb_store_write_span() takes them) of @p st on the writer's thread; the
 * last start must have been waited for.  Makes no MPI call.
 */
void pb_store_writer_start(struct pb_store_writer *w, struct pb_store *st, const struct pb_store_span *span,
                           int n_span);

/**
 * Collective over the store's ranks, each calling it as often: the end of
 * the writes started last on this rank (none: PB_OK), the status agreed over
 * the ranks (a failure on one fails every rank's, with its message).
 */
int pb_store_writer_wait(struct pb_store_writer *w, MPI_Comm comm);

/** Release @p w, after its last wait. */
void pb_store_writer_free(struct pb_store_writer *w);

/**
 * `pairbound ingest --append` (one process): begin adding models to the
 * store at @p path, whose metadata @p meta extends with models (the same
 * sources, conditions, images, roles and top-k length; a source's class
 * count may grow).  Under the store's lock, every byte of it but its record
 * chunks is saved in its undo journal STORE.undo, and then, in place, its
 * record datasets are grown and its metadata and checksums rewritten; write
 * the new models' rows with pb_store_write_span and finish with
 * pb_store_commit, which removes the journal (pb_store_close undoes the
 * append from it; so does the next open after a kill).  docs/store.md,
 * "Appending".
 */
int pb_store_append_begin(const char *path, const struct pb_meta *meta, struct pb_store **out);

/** Close a created store and rename it to its final name (collective). */
int pb_store_commit(struct pb_store *st);

/** Open an existing store; refuses unknown schema versions (collective).  An append a kill interrupted is
 * undone first; rank 0 holds a shared flock on the store until pb_store_close, so no append changes it
 * meanwhile (docs/store.md, "Appending"). */
int pb_store_open(const char *path, MPI_Comm comm, struct pb_store **out);

/** Metadata of an open store (owned by the store). */
const struct pb_meta *pb_store_meta(const struct pb_store *st);

/**
 * Read rows of source @p src into @p out (allocated here).  Collective: every
 * rank calls once per request with its own sorted, distinct row indices.
 */
int pb_store_read_rows(struct pb_store *st, int32_t src, int32_t n_rows,
                       const int32_t *rows, struct pb_rows *out);

/* Field masks for pb_store_read_fields. */
#define PB_FIELD_PRED 1
#define PB_FIELD_SMAX 2
#define PB_FIELD_PTRUE 4
#define PB_FIELD_TOPK 8
#define PB_FIELD_ALL 15       /* the four record fields; the summaries are asked for by name */
#define PB_FIELD_UNCHECKED 16 /* skip the range checks of every record read (pairbound check lists them itself) */
#define PB_FIELD_ENTROPY 32   /* the optional summaries (docs/store.md): read when the store has them, else left NULL */
#define PB_FIELD_COLLISION 64
#define PB_FIELD_EVERY (PB_FIELD_ALL | PB_FIELD_ENTROPY | PB_FIELD_COLLISION) /* every record dataset of the store */
#define PB_FIELD_ORIGINAL 128 /* the stored predictions, whatever pb_store_labels chose (label-set tables) */

/**
 * Which correctness the reads give (docs/protocol.md, "Label sets"): under
 * PB_LABELS_SET (PB_LABELS_AUTO on a store with label sets) every prediction
 * read of a source with sets is mapped by pb_lsets_pred, so that pred ==
 * label iff the prediction is in the image's set, and its images with an
 * empty set get split PB_SPLIT_NONE in the store's metadata (in memory): the
 * matched cohort.  PB_FAIL when @p mode is PB_LABELS_SET and the store has no
 * sets.  Collective only in that every rank calls it alike; no I/O.
 */
int pb_store_labels(struct pb_store *st, int mode);
/** The correctness pb_store_labels chose: PB_LABELS_SINGLE (also before any call) or PB_LABELS_SET. */
int pb_store_labels_mode(const struct pb_store *st);
/** Whether any source of @p meta holds label sets. */
int pb_store_has_lsets(const struct pb_meta *meta);

/** Like pb_store_read_rows, reading only the fields in @p fields (others left NULL). */
int pb_store_read_fields(struct pb_store *st, int32_t src, int32_t n_rows, const int32_t *rows, int fields,
                         struct pb_rows *out);

/**
 * pb_store_read_fields into arrays the caller owns: @p buf's arrays of the
 * fields in @p fields hold at least @p n_rows rows of the source's n_images
 * records (buf->topk as allocated); buf->n_rows and n_images are set.  So a
 * reader of many requests keeps one buffer.  Collective, like
 * pb_store_read_fields; every rank returns the same status.
 */
int pb_store_read_fields_into(struct pb_store *st, int32_t src, int32_t n_rows, const int32_t *rows, int fields,
                              struct pb_rows *buf);

/**
 * Collective: from now on every read of the fields in @p fields (of any
 * source) is independent, each rank reading its own rows with no call that
 * waits for another rank; the ranks' statuses are then agreed only by
 * pb_store_reads_collective (pb_store_agree in between agrees nothing).  So
 * ranks whose work lies in different sources do not wait for each other at
 * every read.  Returns 1 when it is so, the same on every rank; 0 when a
 * dataset of those fields cannot be read the direct way (older layouts,
 * PAIRBOUND_STORE_READ=hdf5, the read-failure hook), reads then staying
 * collective, and 0 without any collective call when reads are independent
 * already (the caller that began them ends them).  A read of another field in
 * between fails.
 */
int pb_store_reads_independent(struct pb_store *st, int fields);

/** Collective: reads are collective again; returns @p status agreed over the ranks (pb_error_agree). */
int pb_store_reads_collective(struct pb_store *st, int status);

/** @p status agreed over the ranks (pb_error_agree), or @p status itself while reads are independent. */
int pb_store_agree(const struct pb_store *st, int status);

/** Whether reads are independent now (pb_store_reads_independent). */
int pb_store_reads_alone(const struct pb_store *st);

/**
 * Record bytes this rank has read from @p st so far (pb_store_read_rows,
 * pb_store_read_fields*) and the seconds those reads took, checks included:
 * the store's load rate of a stage's -v 2 line.
 */
void pb_store_read_stats(const struct pb_store *st, double *bytes, double *seconds);

/**
 * Why record @p k (image @p i) of a block read from source @p s breaks the
 * rules that ingest and synth guarantee (docs/store.md, "Integrity"), or NULL.
 * The reason is written into @p why.
 */
const char *pb_store_record_problem(const struct pb_source *s, const struct pb_rows *d, int64_t k, int32_t i,
                                    char *why, size_t n);

/**
 * `pairbound check`: read every record of the store at @p path (each rank its
 * share of the rows, one row at a time so a damaged chunk is named), verify the
 * Fletcher32 checksums and the record rules, and print on rank 0, in store
 * order, one line per damaged row or record (at most @p max_lines) and a
 * summary.  @p n_bad receives the number of damaged rows and records.
 * Collective.  Returns PB_FAIL only when the store cannot be checked at all.
 */
int pb_store_check(const char *path, MPI_Comm comm, int64_t max_lines, FILE *out, int64_t *n_bad);

/** Close a store; a created, uncommitted store is removed. */
void pb_store_close(struct pb_store *st);

/**
 * `pairbound roles STORE --set SRC=ROLE...` (one process): give the sources
 * their roles (docs/store.md, "Roles") under the store's lock, changing no
 * record: a store of this schema has its one `roles` attribute rewritten in
 * place; an older one is copied, given it and renamed over itself.
 */
int pb_store_roles_set(const char *path, int n, char *const *assign);
/** One "SRC ROLE (declared|inferred: not declared)" line per source. */
void pb_store_roles_print(FILE *fp, const struct pb_meta *meta);

#endif /* PAIRBOUND_STORE_H */
