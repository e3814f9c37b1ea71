/* Between src/ingest/ingest.c and src/ingest/ingest_read.c: the state of an
 * ingest and the row handlers that the CSV reader calls. */
#ifndef PB_INGEST_INTERNAL_H
#define PB_INGEST_INTERNAL_H

#include <stdint.h>

#include "pairbound/ingest.h"
#include "pairbound/store.h"
#include "pairbound/strmap.h"

/* Row handlers return PB_OK, PB_FAIL, or this to end the read early. */
#define PB_INGEST__STOP 1

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
  int32_t given_classes;   /* from the options, 0 = infer */
  int32_t max_class;       /* largest label, pred or top-k class seen */
  uint8_t *seen;           /* pass 2: bitmap over [row][image] */
  int32_t hint_condition, hint_image;   /* last looked up (pb_ingest__lookup) */
};

struct pb_ingest__ctx {
  const char *path;
  const struct pb_ingest_options *opt;
  struct pb_meta *meta;
  int have_header;
  int n_fields;
  int col[PB_N_COLS];
  int *topk_class_col, *topk_prob_col;
  int32_t *tk_class;       /* scratch [topk] */
  float *tk_prob;
  struct pb_strmap sources, models;
  int32_t cap_sources, cap_models;
  int64_t *model_line;
  struct pb_ingest__src *src;
  int64_t n_records;
  struct pb_rows *rows;    /* pass 2 output [n_sources] */
  int32_t hint_source, hint_model;      /* last looked up (pb_ingest__lookup) */
  int32_t dup_s, dup_m, dup_c, dup_i;
  int64_t dup_line, first_line;
};

typedef int (*pb_ingest__row_fn)(struct pb_ingest__ctx *ctx, char **f, int n, int64_t line);

/* Read the whole CSV, calling on_row for every row (the header included) with
 * the line where the row began (ingest_read.c). */
int pb_ingest__read(struct pb_ingest__ctx *ctx, pb_ingest__row_fn on_row);

#endif
