/* Between the files of src/ingest: the state of an ingest, the row handlers
 * that the CSV reader calls (ingest.c: validation and pass 1), the reader
 * (ingest_read.c) and pass 2 by windows of the store (ingest_window.c). */
#ifndef PB_INGEST_INTERNAL_H
#define PB_INGEST_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "pairbound/ingest.h"
#include "pairbound/lsets.h"
#include "pairbound/store.h"
#include "pairbound/strmap.h"

/* Row handlers return PB_OK, PB_FAIL, or this to end the read early. */
#define PB_INGEST__STOP 1
/* The fast way (threads, ranks) failed, and the input must be read again the serial way, whose message counts. */
#define PB_INGEST__AGAIN 2

enum {
  PB_COL_MODEL, PB_COL_GROUP, PB_COL_SOURCE, PB_COL_CONDITION, PB_COL_IMAGE,
  PB_COL_LABEL, PB_COL_SPLIT, PB_COL_PRED, PB_COL_SMAX, PB_COL_PTRUE, PB_N_COLS
};

/* Per-source dictionaries beside the pb_source being built. */
struct pb_ingest__src {
  struct pb_strmap conditions;
  struct pb_strmap images;
  int32_t cap_conditions, cap_images;
  int64_t *image_line;     /* line where each image first appeared */
  int32_t *image_file;     /* and in which file */
  int32_t given_classes;   /* from the options, 0 = infer */
  int32_t store_classes;   /* --append: the store's class count, else 0 */
  int32_t max_class;       /* largest label, pred or top-k class seen */
  int32_t hint_condition, hint_image;   /* last looked up (pb_ingest__lookup) */
  int32_t lset_images;     /* images whose label set is known (ingest_lsets.c) */
  int64_t lset_cap_off, lset_cap_ids;   /* room of the source's lset_off, lset_ids */
  int lset_any;            /* some image has a nonempty set */
};

/* Where the rows of one (source, model) lie in one file: pass 2 reads a
 * window's models from the first such row to the end of the last. */
struct pb_ingest__range {
  int32_t s, m;
  off_t off0, off1;        /* offset of the first row, end of the last */
  int64_t line0;           /* line of the first row */
};

/* One input file, with its own header. */
struct pb_ingest__file {
  const char *path;        /* as given; "-" is stdin */
  const char *name;        /* in messages: the path, or "stdin" */
  char *spool;             /* stdin: the copy that later passes read (removed at the end), else NULL */
  int spool_sig;           /* its slot for a signal's immediate exit (pb_signal_cleanup_file), 0: none */
  int n_fields;
  int plain;               /* pass 1 split every line in place (no libcsv): any line start is a row start */
  int col[PB_N_COLS];
  int *topk_class_col, *topk_prob_col;
  int sum_col[2];          /* columns of the summaries entropy, collision, or -1 (ingest_summary.c) */
  int labels_col;          /* the optional column `labels`, or -1 */
  struct pb_ingest__range *range;
  int64_t n_range, cap_range;
};

struct pb_ingest__win;
struct pb_ingest__dict;

struct pb_ingest__ctx {
  const char *path;        /* the current file's name in messages */
  char *set_name;          /* the whole input's, for errors of the set */
  const char *spool_base;  /* stdin is copied beside this path */
  const struct pb_ingest_options *opt;
  struct pb_meta *meta;
  struct pb_ingest__file *files, *file;  /* every input, the one being read */
  const char *store_name;  /* --append: the store the dictionaries come from (file -1 in messages), else NULL */
  int32_t base_models;     /* --append: its models, which the files must not hold */
  char *old_provenance;    /* --append: its provenance text */
  int n_files, cur;
  int have_header;
  int32_t *tk_class;       /* scratch [topk] */
  float *tk_prob;
  char (*tk_name)[2][24];  /* [topk] "topK_class", "topK_prob" */
  struct pb_strmap sources, models;
  int32_t cap_sources, cap_models;
  int64_t *model_line;
  int32_t *model_file;
  struct pb_ingest__src *src;
  int64_t n_records, file_records;
  int32_t *slot;           /* pass 1: [s * slot_cm + m] the current file's range of (s, m), or -1 */
  int32_t slot_cs, slot_cm;
  off_t row_off, row_end;  /* set by the reader: where the row being handled begins and ends */
  int64_t csv_lines;       /* set by the reader: lines it gave libcsv */
  int ints_only;           /* pass 1: rows checked for their classes alone (names, probabilities: ingest_parts.c's
                            * parts, or after ingest_dict.c's pass 2) */
  struct pb_ingest__dict *dict;         /* pass 1 in parts (ingest_dict.c): the part being read */
  int64_t last_line;       /* pass 1: the line of the last row handled */
  char *part_source;       /* pb_ingest__check_row: the last row's source, its --classes ... */
  int32_t part_classes;
  off_t fail_off;          /* ... and where the row it refused begins (-1: none), at which line */
  int64_t fail_line;
  struct pb_ingest__win *win;           /* pass 2: the window being filled (ingest_window.c) */
  int32_t hint_source, hint_model;      /* last looked up (pb_ingest__lookup) */
  int32_t *lset_ids;                    /* scratch of ingest_lsets.c: one row's set */
  int helpers;             /* rank 0 of an ingest over ranks: the other ranks of comm, which read pass 1's parts */
  MPI_Comm comm;
};

/* One parsed record (names point into the reader's field buffers). */
struct pb_ingest__rec {
  const char *name[PB_COL_IMAGE + 1];
  int32_t label, pred;
  uint8_t split;
  float smax, ptrue;
  float sum[2];            /* entropy, collision, where the files have them */
};

typedef int (*pb_ingest__row_fn)(struct pb_ingest__ctx *ctx, char **f, int n, int64_t line);

/* Read ctx->file, calling on_row for every row (the header included) with the
 * line where the row began (ingest_read.c): the whole file (off0 = 0), or the
 * rows that begin in [off0, off1), the first of them at line @p line0.  Pass
 * 1 of stdin copies what it reads to the file's spool. */
int pb_ingest__read(struct pb_ingest__ctx *ctx, pb_ingest__row_fn on_row, off_t off0, off_t off1, int64_t line0);

/* The first line start at or after @p at (0 stays 0) in ctx->file, or
 * @p end when none comes before it; -1 on a read error. */
off_t pb_ingest__line_start(const struct pb_ingest__ctx *ctx, off_t at, off_t end);

/* ingest.c: the context, pass 1 over every file (dictionaries, every row
 * validated) and the checks of the whole set after it. */
void pb_ingest__ctx_init(struct pb_ingest__ctx *ctx, int n, const char *const *paths, const char *spool_base,
                         const struct pb_ingest_options *opt, struct pb_meta *meta);
void pb_ingest__ctx_free(struct pb_ingest__ctx *ctx);
void pb_ingest__use_file(struct pb_ingest__ctx *ctx, int k);
/* --append: the dictionaries, roles and top-k length of the store @p name
 * holding @p old, before pass 1; the files may add models only. */
void pb_ingest__seed(struct pb_ingest__ctx *ctx, const char *name, const struct pb_meta *old);
/* Pass 1 of ctx->file given the header's handler: pb_ingest__dict_file. */
typedef int (*pb_ingest__file_fn)(struct pb_ingest__ctx *ctx, pb_ingest__row_fn header);
/* Pass 1 and the checks of the set: every file read by @p parts, or (NULL) the serial reader (ingest_parts.c). */
int pb_ingest__pass1(struct pb_ingest__ctx *ctx, pb_ingest__file_fn parts);
/* The checks of a row that need no dictionary: names, fields,
 * classes against --classes and probabilities (a part of the file); */
int pb_ingest__check_row(struct pb_ingest__ctx *ctx, char **f, int n, int64_t line);
/* the same, the row's fields into @p rec (top-k classes into ctx->tk_class). */
int pb_ingest__check_fields(struct pb_ingest__ctx *ctx, char **f, int n, int64_t line, struct pb_ingest__rec *rec);
/* Index of @p key in a dictionary whose names are names[0..n), or -1 (*hint: the last index found). */
int32_t pb_ingest__lookup(const struct pb_strmap *m, char *const *names, int32_t n, int32_t *hint, const char *key);
/* The same with the index after *hint tried first: images, which rows mostly take in turn. */
int32_t pb_ingest__lookup_next(const struct pb_strmap *m, char *const *names, int32_t n, int32_t *hint,
                               const char *key);
/* Pass 1's dictionaries grow as a row in the current file at @p line adds: a source (its index), a model
 * (ctx->hint_model its index), a condition, an image (x->hint_image its index), each refused as that row. */
int32_t pb_ingest__add_source(struct pb_ingest__ctx *ctx, const char *name);
int pb_ingest__add_model(struct pb_ingest__ctx *ctx, const char *model, const char *group, int64_t line);
int pb_ingest__add_condition(struct pb_ingest__ctx *ctx, int32_t s, const char *cond, int64_t line);
int pb_ingest__add_image(struct pb_ingest__ctx *ctx, int32_t s, const struct pb_ingest__rec *rec, int64_t line);
/* The entry [s][m] of a table of *cs x *cm entries, grown (new entries -1) to hold it. */
int32_t *pb_ingest__slot(int32_t **slot, int32_t *cs, int32_t *cm, int32_t s, int32_t m);
/* The current file's range of (s, m) (ctx->slot finds it) begins at @p off0, line @p line0, when it is new,
 * and ends at @p off1. */
void pb_ingest__range(struct pb_ingest__ctx *ctx, int32_t s, int32_t m, off_t off0, off_t off1, int64_t line0);
/* ingest_dict.c: pass 1's rows of ctx->file (@p header: the header's handler) in parts with dictionaries of
 * their own, merged; PB_FAIL, with no message that counts, whenever the serial pass must read it. */
int pb_ingest__dict_file(struct pb_ingest__ctx *ctx, pb_ingest__row_fn header);
/* Rank 0's order @p order = {file, first row's offset, end, parts} read on a helping rank of @p comm: its run
 * of the parts, sent to rank 0 (pb_ingest__dict_file with ctx->helpers; docs/csv.md, "Ranks"). */
int pb_ingest__dict_help(struct pb_ingest__ctx *ctx, const int64_t order[4], MPI_Comm comm);
/* ingest.c: pass 1's handler of a row (the header first). */
int pb_ingest__pass1_row(struct pb_ingest__ctx *ctx, char **f, int n, int64_t line);
/* ingest_parts.c: pass 1's rows of ctx->file (handler @p row, the header
 * first), with threads where it can (@p check: pb_ingest__check_row). */
int pb_ingest__pass1_rows(struct pb_ingest__ctx *ctx, pb_ingest__row_fn row, pb_ingest__row_fn check);
/* The number of line ends in [off0, off1) of ctx->file; -1 on a read error. */
int64_t pb_ingest__count_lines(const struct pb_ingest__ctx *ctx, off_t off0, off_t off1);
/* Pass 2's view of a row: its names looked up in pass 1's dictionaries,
 * key = {source, model, condition, image} ... */
int pb_ingest__key(struct pb_ingest__ctx *ctx, char **f, int n, int64_t line, struct pb_ingest__rec *rec,
                   int32_t key[4]);
/* ... and its values validated again with the final class counts (top-k into ctx->tk_*). */
int pb_ingest__check_values(struct pb_ingest__ctx *ctx, char **f, int64_t line, int32_t s, struct pb_ingest__rec *rec);
/* ingest_window.c: at -v 2, which way pass 1 went with threads: in parts, or (@p again) read again serially. */
void pb_ingest__say_pass1(int again);
/* ingest_window.c: after pass 1, the store's provenance text (the options', after --append the store's too) and
 * the metadata's last checks, refused in the name of the whole input. */
int pb_ingest__metadata(struct pb_ingest__ctx *ctx);
/* ingest_window.c: the bytes of one window of pass 2 into a store (opt->window_bytes, else PB_INGEST_WINDOW_BYTES). */
int64_t pb_ingest__window_budget(const struct pb_ingest_options *opt);
/* Pass 2 over the ranks of @p comm into @p st, created over them: PB_OK, PB_FAIL (a write; its message) or
 * PB_INGEST__AGAIN (any row refused, duplicate or missing record on any rank; no message). */
int pb_ingest__pass2_ranks(struct pb_ingest__ctx *ctx, int64_t budget, struct pb_store *st, MPI_Comm comm);
/* ingest.c: the store's top-k length K, a row's scratch for its lists and their column names. */
void pb_ingest__topk_alloc(struct pb_ingest__ctx *ctx, int32_t K);
/* "at line N", "at line N of FILE" when @p file is not the current one, or "in STORE" (file -1: --append)
 * (ingest_read.c). */
const char *pb_ingest__where(const struct pb_ingest__ctx *ctx, int32_t file, int64_t line, char *buf, size_t n);

/* ingest_summary.c: the optional summary columns (docs/csv.md, "Per-record summaries").  The header's
 * slot for column @p name when it is one of them, else NULL; */
int *pb_ingest__summary_slot(struct pb_ingest__file *file, const char *name);
/* after the header: the store's summaries from the first file (@p earlier 0), or the same as those; */
int pb_ingest__summary_header(struct pb_ingest__ctx *ctx, int64_t line, int earlier);
/* a row's summaries into rec->sum, checked against its smax, ptrue and top-k list (ctx->tk_prob). */
int pb_ingest__summary_values(struct pb_ingest__ctx *ctx, char **f, int64_t line, int32_t n_classes,
                              struct pb_ingest__rec *rec);
/* ingest_lsets.c: the column `labels` (docs/csv.md, "Label sets"). */
#define PB_INGEST_LSETS_COL PB_LSETS_COLUMN
#define PB_INGEST_LSETS_MAX 4096 /* ids in one set at most */
/* Header field @p name at @p j: 1 when it is the column `labels` (noted), 0 when not, -1 (error set) twice. */
int pb_ingest__lsets_header(struct pb_ingest__ctx *ctx, const char *name, int j, int64_t line);
/* Pass 1's row of source @p s, its image just added or looked up: its set, the first or the same again; */
int pb_ingest__lsets_row(struct pb_ingest__ctx *ctx, int32_t s, char **f, int64_t line);
/* that row's set alone: into ctx->lset_ids (*n ids), checked against @p given classes (0: none), *max_class raised; */
int pb_ingest__lsets_ids(struct pb_ingest__ctx *ctx, char **f, int64_t line, int32_t given, const char *source,
                         int32_t *n, int32_t *max_class);
/* and image @p i of source @p s with set ids[0..n): the first or the same again. */
int pb_ingest__lsets_put(struct pb_ingest__ctx *ctx, int32_t s, int32_t i, const int32_t *ids, int32_t n, int64_t line);
/* --append: source @p s's sets are the store's (@p old). */
void pb_ingest__lsets_seed(struct pb_ingest__ctx *ctx, int32_t s, const struct pb_source *old);
/* After pass 1: a source with no nonempty set holds none. */
void pb_ingest__lsets_finish(struct pb_ingest__ctx *ctx);

#endif
