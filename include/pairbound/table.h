/* Report tables, described once.  A table is its title, its note and an
 * array of columns, each with its TSV name, its markdown name, its format
 * and the slot its value comes from; one function prints a whole row by
 * asking the report's getter for each column's slot, so a column's name and
 * its value cannot drift apart.  The TSV (every digit: the shortest text
 * that reads back exactly) and the markdown (rounded for reading) are built
 * side by side from that one description.
 *
 *   enum { COL_SOURCE, COL_TIER, COL_AUROC };
 *   static const struct pb_column cols[] = {
 *     {"source", PB_COL_STR, .slot = COL_SOURCE},
 *     {"tier", PB_COL_STR, .slot = COL_TIER},
 *     {"auroc_U", PB_COL_NUM, 3, .slot = COL_AUROC, .arg = SCORE_U, .md = "AUROC U"},
 *     {NULL}};
 *   static const struct pb_table_spec spec = {"Title (seed Table 16)", "What a row is.", cols};
 *   static union pb_cell get(const void *ctx, const struct pb_column *c) { ... switch (c->slot) ... }
 *
 *   pb_table_open(&t, &spec);
 *   for (each row) pb_table_row(&t, &spec, get, &row_context);
 *   pb_table_flush(&t, res, "screen_auroc.tsv", md);     (pairbound/results.h)
 *
 * A column's .side = PB_COL_TSV_ONLY or PB_COL_MD_ONLY keeps it to one text; a table
 * without markdown (a figure's data) is written by pb_table_tsv_open and
 * pb_table_tsv_row.
 *
 * Pure: no MPI, no I/O. */
#ifndef PAIRBOUND_TABLE_H
#define PAIRBOUND_TABLE_H

#include <stdint.h>

#include "pairbound/text.h"

enum pb_col_fmt {
  PB_COL_STR, /* text as given */
  PB_COL_INT, /* an integer */
  PB_COL_NUM  /* a double: TSV every digit ("nan"); markdown .digits decimals ("n/a"), negative: -digits with a sign */
};

/* Where a column shows: both texts, or one only (an interval's TSV columns
 * est, lo, hi beside one markdown column "est [lo, hi]" that the getter writes). */
enum pb_col_side {
  PB_COL_BOTH,
  PB_COL_TSV_ONLY,
  PB_COL_MD_ONLY      /* its header is md if given, else name */
};

struct pb_column {
  const char *name;     /* TSV header; NULL ends the columns */
  enum pb_col_fmt fmt;
  int digits;           /* PB_COL_NUM: markdown decimals (negative: that many, signed) */
  int slot, arg;        /* what the table's getter returns for this column (the report's own enums) */
  const char *md;       /* markdown header when it differs from name, else NULL */
  enum pb_col_side side; /* both texts unless one only */
};

struct pb_table_spec {
  const char *title, *note;
  const struct pb_column *cols;
};

union pb_cell {
  const char *s;
  int64_t i;
  double x;
};

/* The value of column @p c in the row described by @p ctx (its member as c->fmt says). */
typedef union pb_cell (*pb_table_get_fn)(const void *ctx, const struct pb_column *c);

/* A table's TSV and markdown text as they are built. */
struct pb_table {
  struct pb_text tsv, md;
};

/** Title, note and the header row of @p spec (TSV names; markdown names). */
void pb_table_open(struct pb_table *t, const struct pb_table_spec *spec);
/** One row: every column of @p spec, its value from @p get(@p ctx, column). */
void pb_table_row(struct pb_table *t, const struct pb_table_spec *spec, pb_table_get_fn get, const void *ctx);
/** Getter of rows that are structs: column slot = offsetof the row's member, of type const char * (PB_COL_STR),
 *  int64_t (PB_COL_INT) or double (PB_COL_NUM). */
union pb_cell pb_table_member(const void *row, const struct pb_column *c);
/** Number of columns of @p spec. */
int pb_table_n_cols(const struct pb_table_spec *spec);

/* A table that is a TSV only (a figure's data, a file without a markdown
 * table): its header row and rows, as pb_table_open and pb_table_row write
 * them on the TSV side (title and note unused). */
void pb_table_tsv_open(struct pb_text *tsv, const struct pb_table_spec *spec);
void pb_table_tsv_row(struct pb_text *tsv, const struct pb_table_spec *spec, pb_table_get_fn get, const void *ctx);

/* Columns built at run time (one per budget, condition, level, ...): room for
 * @p n columns and the terminator, all zero; pb_table_col_name gives a column
 * a name of its own, and pb_table_cols_free frees those names and the array. */
struct pb_column *pb_table_cols_new(int n);
void pb_table_col_name(struct pb_column *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pb_table_cols_free(struct pb_column *cols);


#endif /* PAIRBOUND_TABLE_H */
