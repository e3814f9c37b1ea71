/* The store's metadata and row blocks in memory: sources, models, groups and
 * records as the stages and kernels read them (no MPI, no HDF5; the store
 * file itself is pairbound/store.h). */
#ifndef PAIRBOUND_META_H
#define PAIRBOUND_META_H

#include <stdint.h>

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

#endif /* PAIRBOUND_META_H */
