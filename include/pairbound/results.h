/* Stage outputs: OUTDIR/results.h5 (collective HDF5) and OUTDIR/report/ (TSV tables,
 * markdown, figures).  All of it is built in a staging directory inside OUTDIR
 * (include/pairbound/output.h) and appears at once at pb_results_commit; a
 * stage that fails or is killed leaves OUTDIR as it was. */
#ifndef PAIRBOUND_RESULTS_H
#define PAIRBOUND_RESULTS_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

struct pb_results;

/**
 * Create OUTDIR, take its lock, and start the staged output: results.h5 with
 * its provenance and an empty report/ in OUTDIR/.pairbound-stage.XXXXXX,
 * which the immediate exit on SIGTERM/SIGINT removes (collective).
 */
int pb_results_create(const char *outdir, MPI_Comm comm, const char *provenance, struct pb_results **out);
/** Communicator the results were created on. */
MPI_Comm pb_results_comm(const struct pb_results *res);
/** Create a group (and its parents) such as "/states" unless it exists (collective). */
int pb_results_group(struct pb_results *res, const char *path);
/** Collective writes of one 1-D column, each rank supplying [offset, offset + n_local). */
int pb_results_write_f64(struct pb_results *res, const char *path, int64_t n_total, int64_t offset,
                         int64_t n_local, const double *v);
int pb_results_write_i64(struct pb_results *res, const char *path, int64_t n_total, int64_t offset,
                         int64_t n_local, const int64_t *v);
/** A string column whose whole content rank 0 supplies (collective). */
int pb_results_write_strings(struct pb_results *res, const char *path, int64_t n, char *const *v);
int pb_results_attr_str(struct pb_results *res, const char *path, const char *name, const char *value);
/** Path to write report file NAME at: in the staging directory's report/ (caller frees). */
char *pb_results_report_path(const struct pb_results *res, const char *name);
/**
 * Close results.h5 and move the staged report/ and results.h5 into OUTDIR
 * (report/ swapped in one step), remove an earlier checkpoint, which
 * described the outputs replaced, and the staging directory (collective).
 * Signals wait until it is done.
 */
int pb_results_commit(struct pb_results *res);
/** Discard an uncommitted output: the staging directory goes, OUTDIR is untouched. */
void pb_results_close(struct pb_results *res);

/**
 * Write report/NAME on rank 0 from per-rank text: @p header then every rank's
 * @p text in rank order (collective).  Ranks hold contiguous ranges of the
 * rows, so the file is identical for any number of ranks.
 */
int pb_results_tsv(struct pb_results *res, const char *name, const char *header, const char *text, size_t len);
/** The same for any file @p path (temporary name, then rename), e.g. a stage's data output. */
int pb_results_tsv_file(MPI_Comm comm, const char *path, const char *header, const char *text, size_t len);

/* Growable text buffer for building TSV rows. */
struct pb_text {
  char *buf;
  size_t len, cap;
};
void pb_text_printf(struct pb_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pb_text_double(struct pb_text *t, double x);  /* tab + shortest round-trip text or nan */
/* pb_text_double through a per-thread memo of recent values: the same text,
 * faster where rows repeat few distinct values (counts over N) and the
 * shortest round-trip formatting would dominate the output cost. */
void pb_text_num(struct pb_text *t, double x);
void pb_text_free(struct pb_text *t);

/* A report table built as TSV and markdown side by side: rows start with
 * pb_table_str(t, s, 1), continue with cells, end with pb_table_end_row(). */
struct pb_table {
  struct pb_text tsv, md;
};
/** Title, note and header; @p md_cols (NULL = @p cols) when markdown shows other columns. */
void pb_table_begin(struct pb_table *t, const char *title, const char *note, const char *cols, const char *md_cols);
void pb_table_str(struct pb_table *t, const char *s, int first);
void pb_table_int(struct pb_table *t, int64_t v);
/* TSV: full precision; markdown: digits decimals (negative: -digits decimals with a sign) */
void pb_table_num(struct pb_table *t, double x, int digits);
void pb_table_end_row(struct pb_table *t);
/** Write @p len bytes of @p text as report/NAME (temporary name, then rename); rank 0 only. */
int pb_results_write_report(const struct pb_results *res, const char *name, const char *text, size_t len);
/** Write the TSV as report/NAME, append the markdown to @p md, reset the table. */
int pb_table_flush(struct pb_table *t, struct pb_results *res, const char *name, struct pb_text *md);

/* Build description for provenance: version, git revision, configure flags, CFLAGS. */
const char *pb_build_info(void);

#endif /* PAIRBOUND_RESULTS_H */
