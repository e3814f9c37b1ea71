/* Record store: one HDF5 file holding prediction records for every
 * (source, model, condition, image).  Schema: docs/store.md. */
#ifndef PAIRBOUND_STORE_H
#define PAIRBOUND_STORE_H

#include <stdint.h>
#include <stdio.h>
#include <mpi.h>

#define PB_STORE_SCHEMA_VERSION 1
#define PB_SPLIT_DEV 0
#define PB_SPLIT_EVAL 1
#define PB_CLEAN_CONDITION "clean"
/* Classes per source at most (2^20): every stage sizes per-class tables by
 * n_classes, so a stray huge label would cost time and memory for nothing.
 * Checked at ingest (labels, predictions, top-k classes, --classes) and at
 * store open.  docs/csv.md, docs/store.md. */
#define PB_MAX_CLASSES (1 << 20)

/* One source: its images, conditions and (optionally) records in memory. */
struct pb_source {
  char *name;
  int32_t n_classes;     /* labels and predictions lie in [0, n_classes) */
  int32_t n_images;
  char **image_ids;      /* [n_images] */
  int32_t *labels;       /* [n_images] true labels */
  uint8_t *split;        /* [n_images] PB_SPLIT_DEV or PB_SPLIT_EVAL */
  int32_t n_conditions;
  char **conditions;     /* [n_conditions] */
  int32_t clean;         /* index of PB_CLEAN_CONDITION in conditions */
  /* Probe role (optional source attributes, docs/store.md): NULL for an
   * ordinary source; "natural" for a natural-transformation (TTA) probe source
   * whose first probe_fixed perturbed conditions are the fixed set and the rest
   * a candidate pool; "extra:SRC" for further candidate conditions of probe
   * source SRC that only probe selection (U^sel) uses. */
  char *probe_role;
  int32_t probe_fixed;
};

/* Store metadata: models, their groups, sources.  topk is the length of the
 * optional (class, probability) lists kept per record (0 = none). */
struct pb_meta {
  int32_t n_models;
  char **model_ids;      /* [n_models] */
  char **model_groups;   /* [n_models] statistical group of each model */
  int32_t n_sources;
  struct pb_source *sources;
  int32_t topk;
  char *provenance;      /* free text written as the file's provenance attribute */
};

/* A block of rows read from or written to one source.  A row is one
 * (model, condition) pair of a source: row index = model * n_conditions + condition;
 * each row holds n_images records in image order. */
struct pb_rows {
  int32_t n_rows;
  int32_t n_images;
  int32_t topk;
  int32_t *pred;         /* [n_rows][n_images] */
  float *smax;           /* [n_rows][n_images] */
  float *ptrue;          /* [n_rows][n_images] */
  int32_t *topk_class;   /* [n_rows][n_images][topk] or NULL */
  float *topk_prob;      /* [n_rows][n_images][topk] or NULL */
};

struct pb_store;         /* open store file */

/* Metadata helpers. */
int pb_store_meta_validate(const struct pb_meta *meta);
/* The first source >= s that has cells (is not probe-role), or n_sources: loops over the analysed sources
 * read `for (s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1))`. */
int32_t pb_store_meta_target(const struct pb_meta *meta, int32_t s);
/* Model group index of every model (group[model]), groups numbered in order of first appearance; returns their number. */
int32_t pb_store_meta_model_groups(const struct pb_meta *meta, int32_t *group);
int64_t pb_store_meta_cells(const struct pb_meta *meta);          /* model x perturbed-condition cells (probe-role sources have none) */
int64_t pb_store_meta_paired_records(const struct pb_meta *meta); /* evaluation records over all cells */
int32_t pb_store_meta_find_source(const struct pb_meta *meta, const char *name);
void pb_store_meta_free(struct pb_meta *meta);

void pb_store_rows_alloc(struct pb_rows *rows, int32_t n_rows, int32_t n_images, int32_t topk);
void pb_store_rows_free(struct pb_rows *rows);
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

/** Close a created store and rename it to its final name (collective). */
int pb_store_commit(struct pb_store *st);

/** Open an existing store; refuses unknown schema versions (collective). */
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
#define PB_FIELD_ALL 15
#define PB_FIELD_UNCHECKED 16 /* skip the range checks of every record read (pairbound check lists them itself) */

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

#endif /* PAIRBOUND_STORE_H */
