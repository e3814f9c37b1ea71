/* CSV interchange: `pairbound ingest` (CSV -> record store) and
 * `pairbound export` (record store -> CSV).  Format: docs/csv.md. */
#ifndef PAIRBOUND_INGEST_H
#define PAIRBOUND_INGEST_H

#include <stdint.h>

#include "pairbound/store.h"

/**
 * Bytes of records (and their one bit each) of one window of an ingest into
 * a store: pass 2 fills the store a window of at most this many bytes (or
 * one write unit, if larger) at a time, while the window before is written;
 * so it holds twice this at once (docs/csv.md, "Memory").
 */
#define PB_INGEST_WINDOW_BYTES ((int64_t)16 << 20)

/* Options of an ingest.  A zero-initialised struct means: infer every
 * source's number of classes from the data, empty provenance. */
struct pb_ingest_options {
  int32_t default_classes;  /* classes of every source (0 = infer from data) */
  int n_source_classes;     /* per-source overrides ... */
  char **class_source;      /* [n_source_classes] source names */
  int32_t *class_count;     /* [n_source_classes] their class counts */
  const char *provenance;   /* stored as the store's provenance text (NULL = "") */
  int n_roles;              /* --role: sources whose role the store declares (docs/store.md, "Roles") */
  char **role_source;       /* [n_roles] */
  char **role;              /* [n_roles] the role's text */
  int64_t window_bytes;     /* pass 2's window into a store (0 = PB_INGEST_WINDOW_BYTES; tests make it small) */
  int append;               /* --append: add the files' models to the existing store (docs/csv.md, "Appending") */
};

/**
 * Add one `--classes` argument to @p opt: "N" sets default_classes, "SRC=N"
 * sets the count of source SRC (a later value for the same source replaces an
 * earlier one).  Strings are copied; release them with pb_ingest_options_free().
 * @return PB_OK, or PB_FAIL when the argument is malformed or N < 1.
 */
int pb_ingest_add_classes(struct pb_ingest_options *opt, const char *arg);

/**
 * Add one `--role` argument "SRC=ROLE" (docs/store.md, "Roles": synthetic,
 * real, natural[:N], extra:PSRC); a later value for SRC replaces an earlier
 * one.  @p label names the option in the message.  Whether the role fits
 * the store (PSRC a synthetic source of it, N at most its conditions) is
 * checked once the CSV is read.  @return PB_OK, or PB_FAIL when malformed.
 */
int pb_ingest_add_role(struct pb_ingest_options *opt, const char *label, const char *arg);

/** Release what pb_ingest_add_classes() and pb_ingest_add_role() allocated (provenance is not owned). */
void pb_ingest_options_free(struct pb_ingest_options *opt);

/**
 * Read and validate a prediction CSV into metadata and dense rows.  The file
 * is read twice (dictionaries, then records); memory is the size of the
 * resulting store (a library call for small inputs: pb_ingest_files bounds it).
 * @param csv_path  input CSV
 * @param opt       options (may be NULL)
 * @param meta      filled on success (release with pb_meta_free())
 * @param rows      on success *rows is an array [meta->n_sources], row index
 *                  model * n_conditions + condition (release each with
 *                  pb_store_rows_free(), then free() the array)
 * @return PB_OK, or PB_FAIL with pb_error_message() = "FILE:LINE: reason"
 *         (or "FILE: reason" for errors about the whole set).
 */
int pb_ingest_parse(const char *csv_path, const struct pb_ingest_options *opt, struct pb_meta *meta,
                    struct pb_rows **rows);

/**
 * Ingest CSV files @p paths[0..n) ("-": stdin, at most once) into a new store
 * at @p store_path on MPI_COMM_SELF (call it on one rank), as if they were
 * one CSV whose rows are theirs in that order, each file with its own
 * header.  Memory: twice PB_INGEST_WINDOW_BYTES plus the dictionaries (images,
 * models, conditions) and, per file, one range per (source, model) it holds,
 * whatever the number of rows.  stdin is copied beside the store
 * (STORE.tmp.XXXXXX, removed at the end) to be read twice.  The store is
 * written as STORE.tmp.XXXXXX and renamed when complete; on any error neither
 * STORE nor a temporary is left behind.  The OpenMP threads parse parts of
 * each file (docs/csv.md); the store and every message are the same for any
 * number of threads.
 * @return PB_OK or PB_FAIL (pb_error_message() says why).
 */
int pb_ingest_files(int n, const char *const *paths, const struct pb_ingest_options *opt, const char *store_path);

/*
 * With opt->append, the files hold new models of the existing store at
 * @p store_path: its sources, conditions and images (with their labels and
 * splits), every cell complete; they are added (pb_store_append_begin) and
 * the store is changed in place under its undo journal, so a failure or a kill leaves it as it was
 * (docs/store.md, "Appending").
 */

/**
 * Collective over @p comm (`pairbound ingest` under mpirun): pb_ingest_files
 * with both passes shared by the ranks.  Pass 1: every rank reads and merges
 * its run of each file's parts, and rank 0 merges the ranks' dictionaries in
 * file order
 * (where any part fails, rank 0 reads pass 1 again alone, with the threads of
 * its node, whose message is given); the dictionaries and each file's row
 * ranges reach every rank; the store is created over the ranks, and each
 * rank reads the files' spans of its own windows of the store (window j:
 * rank j % size, with its threads) and writes them itself.  Where pass 2
 * meets a refused row, duplicate or missing record on any rank, the
 * unfinished store is removed and rank 0 runs pb_ingest_files alone, so
 * store, messages and exit status are those of one rank.  With --append or
 * stdin, and on one rank, rank 0 runs pb_ingest_files alone.  Returns the
 * same status on every rank; the message is on rank 0, or for a failed write
 * on the first rank that failed (docs/csv.md, "Ranks").
 */
int pb_ingest_files_comm(int n, const char *const *paths, const struct pb_ingest_options *opt,
                         const char *store_path, MPI_Comm comm);

/** pb_ingest_files of one CSV. */
int pb_ingest_csv(const char *csv_path, const struct pb_ingest_options *opt, const char *store_path);

/**
 * Write every record of a store as CSV in canonical order (sources, then
 * models, conditions and images, each in store order).  Collective over
 * @p comm: the ranks format and write blocks of records in turn, each at its
 * offset; the file is the same for any number of ranks and threads.  It is
 * written under a temporary name and renamed when complete.  A canonical CSV
 * round-trips through ingest and export byte for byte.
 * @return PB_OK or PB_FAIL (pb_error_message() says why), alike on every rank.
 */
int pb_export_csv(const char *store_path, const char *csv_path, MPI_Comm comm);

#endif /* PAIRBOUND_INGEST_H */
