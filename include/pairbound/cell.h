/* One model x perturbed-condition cell as every analysis kernel sees it: a
 * read-only view with named fields, built in one place (pb_cells_view() in
 * include/pairbound/cells.h) so that no kernel fills a struct by position. */
#ifndef PAIRBOUND_CELL_H
#define PAIRBOUND_CELL_H

#include <stddef.h>
#include <stdint.h>

/* A model x perturbed-condition cell; global cell order is source, model, condition. */
struct pb_cell_ref {
  int32_t source, model, condition;
};

/* Evaluation records of one cell: image i's clean record pairs with image i's
 * perturbed record (the observed correspondence).  Arrays have n entries and
 * are only read; s0/s1/m0/m1/q0/q1 may be NULL when the stage did not load them and
 * its kernel does not read them.  The names are for error messages only (NULL
 * in cells that do not come from a store, e.g. unit tests or subsamples). */
struct pb_cell_view {
  struct pb_cell_ref ref;      /* indices in the store's metadata */
  int64_t index;               /* global cell index (-1: not a store cell) */
  const char *model, *source, *condition;
  int32_t n;                   /* images (> 0 for every kernel) */
  const int32_t *label;        /* true labels (>= 0) */
  const int32_t *pred0;        /* clean predicted label (== label: correct) */
  const float *s0;             /* clean maximum probability S */
  const float *m0;             /* clean true-class probability M */
  const int32_t *pred1;        /* perturbed predicted label */
  const float *s1;             /* perturbed S' */
  const float *m1;             /* perturbed M' */
  const float *q0, *q1;        /* clean / perturbed collision probability sum p^2 (NULL: not loaded, or the store
                                  has no collision column) */
  float tau;                   /* acceptance threshold: Z = [S >= tau] in float32, both sides */
};

/**
 * "model M, source S, condition C" (or "cell I" / "cell" without names) into
 * @p buf for error messages; returns @p buf.
 */
const char *pb_cell_view_name(const struct pb_cell_view *v, char *buf, size_t len);

/** Kernel error: pb_error_set("CELL NAME[, class Y]: MESSAGE"); y < 0 omits the class.  Returns -1. */
int pb_cell_error(const struct pb_cell_view *v, int32_t y, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* One cell, evaluation images only, in store image order (image i pairs with image i). */
struct pb_cell_data {
  struct pb_cell_ref ref;
  int64_t index;                 /* global cell index */
  int32_t n;                     /* evaluation images */
  const int32_t *label;          /* [n] true labels */
  const int32_t *pred0, *pred1;  /* clean / perturbed predicted labels */
  const float *s0, *s1;          /* max probabilities (NULL unless loaded) */
  const float *m0, *m1;          /* true-class probabilities (NULL unless loaded) */
  const float *q0, *q1;          /* collision probabilities (NULL unless loaded) */
};

#endif /* PAIRBOUND_CELL_H */
