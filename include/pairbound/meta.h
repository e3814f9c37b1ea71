/* The store's metadata and row blocks in memory: sources, models, groups and
 * records as the stages and kernels read them (no MPI, no HDF5; the store
 * file itself is pairbound/store.h). */
#ifndef PAIRBOUND_META_H
#define PAIRBOUND_META_H

#include <stddef.h>
#include <stdint.h>

#define PB_SPLIT_DEV 0
#define PB_SPLIT_EVAL 1
/* In memory only, never stored: an image outside the analysis, neither development nor evaluation (an image
 * with an empty label set under --labels set: pb_store_labels, docs/protocol.md "Label sets"). */
#define PB_SPLIT_NONE 2
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
  uint8_t *split;        /* [n_images] PB_SPLIT_DEV or PB_SPLIT_EVAL (PB_SPLIT_NONE: pb_store_labels) */
  int32_t n_conditions;
  char **conditions;     /* [n_conditions] */
  int32_t clean;         /* index of PB_CLEAN_CONDITION in conditions */
  /* What the source is for the analyses (docs/store.md, "Roles"): every
   * stage takes its defaults from the roles, never from a source's name. */
  int role;              /* enum pb_role */
  int role_declared;     /* 1: the store declares it; 0: inferred (PB_ROLE_REAL) */
  int32_t role_fixed;    /* natural: its first role_fixed perturbed conditions are the fixed TTA set (0: all) */
  char *role_of;         /* extra: the probe source whose selection candidates it adds, else NULL */
  /* The seed paper's published values for the source this one stands for,
   * "key:value, ...", as a synthetic panel's configuration declares them
   * (reports print them beside ours; docs/synth.md), else NULL. */
  char *seed_values;
  /* Label sets (include/pairbound/lsets.h; docs/store.md, "Label sets"), CSR:
   * image i's acceptable labels are lset_ids[lset_off[i] .. lset_off[i + 1]),
   * ascending, possibly none; both NULL when the source holds no sets. */
  int64_t *lset_off;     /* [n_images + 1] or NULL */
  int32_t *lset_ids;     /* [lset_off[n_images]] */
};

/* Roles of a source (its `role` text in parentheses). */
enum pb_role {
  PB_ROLE_REAL = 0,      /* "real": physical or natural captures; screening and prediction targets */
  PB_ROLE_SYNTHETIC,     /* "synthetic": a digital corruption or probe suite, regenerable; screening probes,
                            prediction features */
  PB_ROLE_NATURAL,       /* "natural[:N]": natural-transformation (TTA) probes; no cells */
  PB_ROLE_EXTRA          /* "extra:SRC": further selection candidates of probe source SRC; no cells */
};
/* Longest role text a source of a store with names up to @p max_name characters can have, with its NUL. */
#define PB_ROLE_TEXT(max_name) ((max_name) + 16)

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
  int32_t schema_version; /* of the store it was read from (pairbound/store.h) */
  /* The seed paper's published values for the whole panel ("key:value, ...",
   * e.g. Table 4's certified-ordering shares), as a synthetic panel's
   * configuration declares them in [panel] (docs/synth.md), else NULL. */
  char *seed_values;
  /* Optional per-record summaries the store holds for every record
   * (PB_SUMMARY_* bits; docs/store.md): datasets `entropy`, `collision`. */
  int32_t summaries;
};

/* Bits of pb_meta.summaries. */
#define PB_SUMMARY_ENTROPY 1   /* -sum p log p over all classes, natural log */
#define PB_SUMMARY_COLLISION 2 /* sum p^2 over all classes */

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
  float *entropy;        /* [n_rows][n_images] or NULL: the optional summaries (pb_store_rows_summaries) */
  float *collision;      /* [n_rows][n_images] or NULL */
  int32_t *pred_orig;    /* [n_rows][n_images]: the stored predictions where pred holds the label-set map
                          * (pb_store_labels: a class identity, not correctness), else NULL */
};

/* Roles (src/store/store.c).  Parse "synthetic", "real", "natural[:N]" or
 * "extra:SRC" into @p src (role, role_fixed, role_of; declared): PB_FAIL
 * with "source NAME: ..." when the text is no role.  Whether it fits the
 * store (SRC a source, N at most its conditions) is pb_meta_validate's. */
int pb_meta_role_parse(struct pb_source *src, const char *text);
/** The role's text, as the store and `pairbound roles` write it ("natural:18"; "natural" for N = 0). */
void pb_meta_role_text(const struct pb_source *src, char *buf, size_t n);
/** The role of every source the store does not declare one for (docs/store.md, "Roles"): synthetic when
 *  another source's role is extra:SRC naming it (a probe suite), else real. */
void pb_meta_infer_roles(struct pb_meta *meta);
/** Whether every source's role fits the store (extra:SRC names a synthetic source, natural:N at most its
 *  perturbed conditions); else PB_FAIL with "source NAME: ...". */
int pb_meta_validate_roles(const struct pb_meta *meta);
/** A probe source (natural or extra) has no cells: the analyses read it only as a probe. */
int pb_meta_is_probe(const struct pb_source *src);

/* Defaults from roles (docs/store.md, "Roles"; never from names).  The
 * sources of @p role that have cells (perturbed conditions, not probe
 * sources), in store order, into @p out (room for n_sources); their number. */
int32_t pb_meta_role_sources(const struct pb_meta *meta, int role, int32_t *out);
/** Image ids of @p b that @p a has too (the same id in two sources is the same base image). */
int64_t pb_meta_shared_images(const struct pb_source *a, const struct pb_source *b);
/** The default probe source: the synthetic source with cells that shares the most images with the real
 *  sources (the first in store order on a tie); -1 when no synthetic source shares an image with one. */
int32_t pb_meta_role_probe(const struct pb_meta *meta);
/** The default screening targets: the real sources with cells that share images with @p probe (every real
 *  source with cells when @p probe < 0), in store order; their number. */
int32_t pb_meta_role_targets(const struct pb_meta *meta, int32_t probe, int32_t *out);

/** The seed value @p key of @p src (its seed_values), NaN when it declares none. */
double pb_meta_seed_value(const struct pb_source *src, const char *key);
/** The value of @p key in a "key:value, ..." text @p values (a source's or the panel's seed_values; NULL: none),
 *  NaN when it has none. */
double pb_meta_seed_find(const char *values, const char *key);

/* Metadata helpers. */
int pb_meta_validate(const struct pb_meta *meta);
/* The first source >= s that has cells (is not a probe source), or n_sources: loops over the analysed sources
 * read `for (s = pb_meta_target(meta, 0); s < meta->n_sources; s = pb_meta_target(meta, s + 1))`. */
int32_t pb_meta_target(const struct pb_meta *meta, int32_t s);
/* Model group index of every model (group[model]), groups numbered in order of first appearance; returns their number. */
int32_t pb_meta_model_groups(const struct pb_meta *meta, int32_t *group);
int64_t pb_meta_cells(const struct pb_meta *meta);          /* model x perturbed-condition cells (probe sources have none) */
int64_t pb_meta_paired_records(const struct pb_meta *meta); /* evaluation records over all cells */
int32_t pb_meta_find_source(const struct pb_meta *meta, const char *name);
/** The store's source names for an error about one it lacks: "the store's
 * sources: A, B, C" in @p buf (cut with "..." to fit @p n); returns @p buf. */
const char *pb_meta_source_names(const struct pb_meta *meta, char *buf, size_t n);
void pb_meta_free(struct pb_meta *meta);

void pb_store_rows_alloc(struct pb_rows *rows, int32_t n_rows, int32_t n_images, int32_t topk);
void pb_store_rows_free(struct pb_rows *rows);
/* Allocate the summary arrays of @p rows (pb_store_rows_alloc'ed) named by PB_SUMMARY_* bits @p summaries. */
void pb_store_rows_summaries(struct pb_rows *rows, int32_t summaries);
/* The bytes of the arrays pb_store_rows_alloc and pb_store_rows_summaries would allocate. */
size_t pb_store_rows_bytes(int32_t n_rows, int32_t n_images, int32_t topk, int32_t summaries);
/* Those arrays carved instead from @p block (pb_store_rows_bytes of them), which the caller owns and keeps
 * from use to use (a fresh page costs a fault at its first touch; never pass @p rows to pb_store_rows_free). */
void pb_store_rows_carve(struct pb_rows *rows, int32_t n_rows, int32_t n_images, int32_t topk, int32_t summaries,
                         char *block);

#endif /* PAIRBOUND_META_H */
