/* One description per output: the field table of a per-item record (one
 * double per field, field i at rec[i]) from which the results.h5 columns
 * (GROUP/NAME, one 1-D dataset per field over all items), the report TSV
 * header and rows, and readers of those columns (verify --against) are all
 * generated.  A stage declares its fields once, in the order of its record
 * enum (designated initialisers [PB_XX] = {"name", fmt} make a swapped pair a
 * visible diff rather than a silent one); nothing else spells a column name. */
#ifndef PAIRBOUND_FIELDS_H
#define PAIRBOUND_FIELDS_H

#include <stdint.h>

#include "pairbound/results.h"

/* How a field's double is printed in the TSV (results.h5 always stores the double). */
enum pb_field_fmt {
  PB_FMT_NUM = 0,    /* shortest round-trip text, "nan" for NaN (pb_text_num) */
  PB_FMT_TIER,       /* a tier index printed by name (pb_protocol_tier_name) */
  PB_FMT_INT         /* an integer-valued double printed as an integer, "nan" for NaN */
};

struct pb_field {
  const char *name;
  enum pb_field_fmt fmt;
};

struct pb_fields {
  const char *group;             /* results.h5 group of the columns, e.g. "/bounds/cells" */
  int32_t n;                     /* fields per record */
  const struct pb_field *f;      /* [n] */
  struct pb_field *own;          /* names built at run time (pb_fields_alloc), else NULL */
};

/* Groups of designated initialisers for the fields that several stages
 * record per information level (seed 000 Section 3): from index @p first,
 * Q_I0, Q_Ik, Q_I5 (PB_FIELDS_LEVELS), and the ends of Q's intervals
 * Q_I0_lo, Q_I0_hi, Q_Ik_lo, Q_Ik_hi, Q_I5_lo, Q_I5_hi (PB_FIELDS_LEVEL_ENDS),
 * for Q the string literal @p q. */
#define PB_FIELDS_LEVELS(first, q) \
  [(first) + 0] = {q "_I0", PB_FMT_NUM}, [(first) + 1] = {q "_Ik", PB_FMT_NUM}, [(first) + 2] = {q "_I5", PB_FMT_NUM}
#define PB_FIELDS_LEVEL_ENDS(first, q)                                                     \
  [(first) + 0] = {q "_I0_lo", PB_FMT_NUM}, [(first) + 1] = {q "_I0_hi", PB_FMT_NUM},     \
  [(first) + 2] = {q "_Ik_lo", PB_FMT_NUM}, [(first) + 3] = {q "_Ik_hi", PB_FMT_NUM},     \
  [(first) + 4] = {q "_I5_lo", PB_FMT_NUM}, [(first) + 5] = {q "_I5_hi", PB_FMT_NUM}

/** A table over a static array of @p n fields. */
struct pb_fields pb_fields_static(const char *group, int32_t n, const struct pb_field *f);
/** A table of @p n fields whose names are set with pb_fields_setf (repeated blocks, generated names). */
void pb_fields_alloc(struct pb_fields *fs, const char *group, int32_t n);
void pb_fields_setf(struct pb_fields *fs, int32_t i, enum pb_field_fmt fmt, const char *name_fmt, ...)
    __attribute__((format(printf, 4, 5)));
void pb_fields_free(struct pb_fields *fs);
/** Index of the field called @p name, or -1. */
int32_t pb_fields_find(const struct pb_fields *fs, const char *name);

/**
 * Write every field as the column GROUP/NAME of @p n_total items, this rank
 * supplying items [first, first + n_local) whose records (fs->n doubles each)
 * are @p recs (collective).
 */
int pb_fields_write(const struct pb_fields *fs, struct pb_results *res, int64_t n_total, int64_t first,
                    int64_t n_local, const double *recs);
/**
 * As pb_fields_write for a table that is a block of a longer record: field f
 * of item c is recs[c * stride + f] (@p recs points at the block's first field).
 */
int pb_fields_write_at(const struct pb_fields *fs, struct pb_results *res, int64_t n_total, int64_t first,
                       int64_t n_local, const double *recs, int64_t stride);
/** TSV header: @p keys (leading key columns, tab-separated, may be "") then fields [from, n), tab-separated, no newline. */
void pb_fields_tsv_header(const struct pb_fields *fs, const char *keys, int32_t from, struct pb_text *t);
/** A row's values for fields [from, n), each preceded by a tab, no newline. */
void pb_fields_tsv_values(const struct pb_fields *fs, const double *rec, int32_t from, struct pb_text *t);

/**
 * Read every field's column GROUP/NAME of results file @p path (independent
 * serial HDF5, any rank) for items [first, first + n) into @p recs (n records
 * of fs->n doubles).  Fails with a message naming the file and column when a
 * column is missing or does not hold @p n_total items.
 */
int pb_fields_read(const struct pb_fields *fs, const char *path, int64_t n_total, int64_t first, int64_t n,
                   double *recs);

#endif /* PAIRBOUND_FIELDS_H */
