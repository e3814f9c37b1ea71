/* Stage outputs: OUTDIR/results.h5 (collective HDF5) and OUTDIR/report/ (TSV tables,
 * markdown, figures).  All of it is built in a staging directory inside OUTDIR
 * (include/pairbound/output.h) and appears at once at pb_results_commit; a
 * stage that fails or is killed leaves OUTDIR as it was. */
#ifndef PAIRBOUND_RESULTS_H
#define PAIRBOUND_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "pairbound/table.h"

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
int pb_results_write_i32(struct pb_results *res, const char *path, int64_t n_total, int64_t offset,
                         int64_t n_local, const int32_t *v);
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
 * Write report/NAME from per-rank text: @p header (rank 0's; ignored on the
 * others) then every rank's @p text in rank order (collective).  Ranks hold
 * contiguous ranges of the rows, so the file is identical for any number of
 * ranks.  Each rank writes its own rows at its offset (MPI-IO); none holds
 * another's.
 */
int pb_results_tsv(struct pb_results *res, const char *name, const char *header, const char *text, size_t len);
/** The same for any file @p path (temporary name, then rename), e.g. a stage's data output. */
int pb_results_tsv_file(MPI_Comm comm, const char *path, const char *header, const char *text, size_t len);

/* The same file written while its rows are computed, a block at a time, so
 * that no rank holds more than a block of text: open (collective), hand over
 * blocks in row order (local, any number per rank, including none), commit
 * (collective: a write that failed on any rank fails it on every rank) or
 * abort (local).  Rank 0 writes its blocks into the output's temporary at
 * once; the other ranks keep theirs in a spill file beside it
 * ("PATH.rankN.tmp.XXXXXX") until the commit places them at their offsets. */
struct pb_tsv;
int pb_tsv_open(MPI_Comm comm, const char *path, const char *header, struct pb_tsv **out);
/** pb_tsv_open for report/NAME of the staged output. */
int pb_results_tsv_open(struct pb_results *res, const char *name, const char *header, struct pb_tsv **out);
/** Append @p len bytes of rows; a failure is kept and reported by the commit. */
void pb_tsv_write(struct pb_tsv *t, const char *text, size_t len);
/** PB_FAIL with the reason when a write of this rank has failed so far (local), e.g. to stop a long loop early. */
int pb_tsv_status(const struct pb_tsv *t);
/** Place every rank's rows and rename the file into place; frees @p t (collective). */
int pb_tsv_commit(struct pb_tsv *t);
/** Remove this rank's temporaries and free @p t (local; NULL is a no-op). */
void pb_tsv_abort(struct pb_tsv *t);
/** For tests: the most bytes one write call carries (default 2 MiB; out of range: the default). */
void pb_tsv_set_chunk(int64_t bytes);

/**
 * Work that goes on beside the stage and must end before its outputs are
 * committed, such as a figure that gnuplot renders (pb_figure_write):
 * pb_results_commit and pb_results_close call @p wait(@p ctx) once for each,
 * in the order deferred.  @p wait waits for the work, releases @p ctx and
 * returns PB_OK, or PB_FAIL with a message: the first failure fails the
 * commit (its message is the commit's).
 */
typedef int (*pb_results_wait_fn)(void *ctx);
void pb_results_defer(struct pb_results *res, pb_results_wait_fn wait, void *ctx);
/** A line (or NULL: none) that every markdown report (NAME ending in .md) written after shows under its title
 *  line: the correctness convention of a store with label sets (pb_stage_open_timed). */
void pb_results_note(struct pb_results *res, const char *text);
/** Write @p len bytes of @p text as report/NAME (temporary name, then rename); rank 0 only. */
int pb_results_write_report(const struct pb_results *res, const char *name, const char *text, size_t len);
/** Write the TSV as report/NAME, append the markdown to @p md, reset the table. */
int pb_table_flush(struct pb_table *t, struct pb_results *res, const char *name, struct pb_text *md);

/* Build description for provenance: version, git revision, configure flags, CFLAGS. */
const char *pb_results_build_info(void);

#endif /* PAIRBOUND_RESULTS_H */
