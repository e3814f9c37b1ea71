/* Files and what is already on disk: text files read whole or by lines,
 * paths, files written under a temporary name and renamed when complete;
 * which paths an output may take, unique temporary names beside the target,
 * and an advisory lock per output so two runs never write the same STORE or
 * OUTDIR.  docs/store.md ("Outputs"). */
#ifndef PAIRBOUND_OUTPUT_H
#define PAIRBOUND_OUTPUT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <mpi.h>

/* ---- text files */
/** Whole file as a string (caller frees), NULL with a message on failure. */
char *pb_output_text_load(const char *path);
/** The same for a file pairbound wrote itself: read only when it is a regular file (pb_output_open_regular),
 * so a link or FIFO put in its place is refused, naming it, and never waited on. */
char *pb_output_text_load_regular(const char *path);

/** A text file line by line: @p fn gets each line (newline kept, writable) and its 1-based number, and
 * stops the walk by returning non-zero (with a message set). Open and read errors are named with @p what,
 * the path and the system's reason. Returns PB_OK when every line was accepted. */
typedef int (*pb_output_line_fn)(void *ctx, const char *path, int64_t line, char *text);
int pb_output_lines_each(const char *path, const char *what, pb_output_line_fn fn, void *ctx);

/* ---- paths */
/** "DIR/NAME" (caller frees). */
char *pb_output_path_join(const char *dir, const char *name);
/** Create @p dir and its missing parents (mkdir -p). */
int pb_output_mkdir_p(const char *dir);

/* ---- files written under a temporary name and renamed when complete */
struct pb_outfile {
  FILE *fp;
  char *path;
  char *tmp;
};
/** Open a unique temporary beside @p path (pb_output_temp) for writing into f->fp. */
int pb_output_file_open(struct pb_outfile *f, const char *path);
int pb_output_file_commit(struct pb_outfile *f);   /* closes and renames; PB_FAIL on I/O error */
void pb_output_file_abort(struct pb_outfile *f);   /* closes and removes the temporary */

/* ---- outputs that never destroy data */

/* What kind of file an existing output path holds (pb_output_file_ok). */
enum pb_output_kind {
  PB_OUTPUT_STORE, /* a pairbound record store (HDF5, format attribute "pairbound-store") */
  PB_OUTPUT_CSV    /* a pairbound CSV export (its header line) */
};

/**
 * May @p path receive a new file of @p kind?  Refused, with a message naming
 * the path: an empty path; a name pb_output_name_ok refuses; a path that is,
 * or resolves to, one of the @p n_inputs @p inputs; an existing path that is
 * not a regular file (a directory, a symbolic link, a device, a FIFO, a
 * socket); an existing regular file that is not of our @p kind, unless
 * @p force.  An existing file of our kind is replaced (a re-run replaces its
 * own output).
 */
int pb_output_file_ok(const char *path, enum pb_output_kind kind, const char *const *inputs, int n_inputs,
                      int force);

/**
 * May @p dir receive a stage's output (results.h5, report/)?  Refused: an
 * empty path; a name pb_output_name_ok refuses; an existing path that is not
 * a directory or is a symbolic link; a DIR/results.h5 that is not a regular
 * file or a DIR/report that is not a directory (a symbolic link there
 * included, which the commit would replace); a directory that holds one of
 * the @p inputs as results.h5 or inside report/; a non-empty directory
 * without a previous pairbound results.h5 or report/, unless @p force.
 */
int pb_output_dir_ok(const char *dir, const char *const *inputs, int n_inputs, int force);

/**
 * Create a unique temporary file beside @p path ("PATH.tmp.XXXXXX", in the
 * same directory so the final rename is atomic) and return it open for
 * writing, its name in *@p tmp (caller frees), or -1 with a message.
 */
int pb_output_temp(const char *path, char **tmp);

/**
 * Collective: rank 0 makes a unique temporary beside @p path (as
 * pb_output_temp) and every rank receives its name in *@p tmp (caller frees),
 * for files that all ranks then open together (HDF5 with MPI-IO).
 */
int pb_output_temp_shared(const char *path, MPI_Comm comm, char **tmp);

/* --force of the command line: replace what pb_output_*_ok would refuse as
 * not ours (never an input, a link or a special file).  Process-wide. */
void pb_output_set_force(int force);
int pb_output_force(void);

/* An advisory lock (flock) held on LOCKFILE while an output is written; the
 * file holds the writer's pid so a second writer can say who holds it, and
 * is removed when the writer releases it. */
struct pb_output_lock {
  int fd;
  char *path;
};

/**
 * Take the lock of output @p what at @p lockfile, without waiting: a second
 * writer fails at once with "WHAT is in use by pid N (lock LOCKFILE)".  The
 * lock file is opened as pb_output_open_regular does: a symbolic link
 * (dangling or not) or anything else that is not a regular file there is
 * refused, naming it, and whatever it points to is never touched.
 */
int pb_output_lock_take(struct pb_output_lock *lk, const char *lockfile, const char *what);
/** Release the lock and remove its file. */
void pb_output_lock_release(struct pb_output_lock *lk);

/**
 * Open @p path (open(2) @p flags and @p mode) only if it is a regular file:
 * never through a symbolic link (O_NOFOLLOW) and without waiting on a FIFO
 * or device (O_NONBLOCK, cleared once fstat says it is a regular file).
 * Returns the descriptor (close-on-exec), or -1 with errno set and, when
 * something other than a regular file sits at @p path, *@p what saying what
 * ("a symbolic link", "a FIFO", ...; otherwise NULL).  Sets no message.
 */
int pb_output_open_regular(const char *path, int flags, mode_t mode, const char **what);

/**
 * May @p path name an output?  Refused, with a message showing the name
 * escaped: a name holding a control character (a byte below 0x20, newline
 * and tab among them, or 0x7f), which no output is ever given, so a name can
 * never break a line of a file or script that quotes it.
 * pb_output_file_ok and pb_output_dir_ok apply it; the command line applies
 * it to every -o.
 */
int pb_output_name_ok(const char *path);

/**
 * Remove the temporaries that killed writers left in @p dir: regular files
 * named "PREFIX.tmp.XXXXXX" (any PREFIX when @p prefix is NULL, and then
 * also staging directories, PB_OUTPUT_STAGING "XXXXXX").  Call it only
 * while holding the output's lock, when no live writer can own them.
 */
void pb_output_sweep(const char *dir, const char *prefix);

/* Name prefix of a stage's staging directory inside OUTDIR. */
#define PB_OUTPUT_STAGING ".pairbound-stage."

/**
 * Collective: rank 0 creates OUTDIR/.pairbound-stage.XXXXXX with an empty
 * report/ inside; every rank receives its path in *@p staging (caller
 * frees).  A stage builds its whole output there (results.h5, report/) and
 * OUTDIR changes only at pb_output_staging_commit.  Call it only while
 * holding OUTDIR's lock.
 */
int pb_output_staging_make(const char *outdir, MPI_Comm comm, char **staging);

/**
 * Rank 0: move a complete staged output into OUTDIR: STAGING/report is
 * swapped with OUTDIR/report in one step (renameat2 RENAME_EXCHANGE; on a
 * file system without it, the old report/ is moved aside into STAGING
 * first), then STAGING/results.h5 is renamed over OUTDIR/results.h5.  When
 * the second step fails the first is undone, so OUTDIR is left as it was.
 * The previous report/ ends in STAGING, which the caller removes.
 */
int pb_output_staging_commit(const char *staging, const char *outdir);

/**
 * Remove @p path and everything under it (a staging directory).  Uses only
 * system calls, so a signal handler may call it; symbolic links are removed,
 * never followed.
 */
void pb_output_remove_tree(const char *path);

/**
 * Remove the staging directory that holds @p path (its nearest ancestor named
 * PB_OUTPUT_STAGING "XXXXXX"), if any.  For a rank about to end every rank
 * (MPI_Abort) after a failed write into a stage's output: rank 0, which made
 * the directory, may be killed before it can remove it itself (its launcher's
 * SIGTERM can find it inside a block loop that defers signals, waiting on the
 * aborted ranks, and the SIGKILL follows within the launcher's grace).
 */
void pb_output_remove_staging_of(const char *path);

/**
 * preadv(2) (@p write 0) or pwritev(2) of every byte of @p iov (@p n entries, which it advances) at offset
 * @p off of @p fd, resuming after short transfers and EINTR: PB_OK, else PB_FAIL with errno saying why
 * (ENOSPC for a write that wrote nothing; a read past the end of the file fails and leaves errno).
 */
int pb_output_iov_all(int fd, struct iovec *iov, int n, off_t off, int write);

/*
 * Direct writes: a large output file written at offsets past the page cache
 * (O_DIRECT) where its file system allows, through the cache where not, the
 * same bytes either way (src/core/output_direct.c says how).
 * PAIRBOUND_DIRECT_IO=0 writes through the cache.  One writer per object
 * at a time (it owns one bounce buffer).
 */
struct pb_output_direct {
  int fd;       /* the ordinary descriptor: heads, tails, small writes, everything when dfd < 0 */
  int dfd;      /* O_DIRECT, or -1 */
  size_t align; /* of the direct writes' offsets, lengths and memory */
  char *bounce; /* aligned, for the direct writes */
};

/** Open the existing file @p path for writing: PB_OK, else PB_FAIL with errno (no direct descriptor is no failure). */
int pb_output_direct_open(struct pb_output_direct *w, const char *path);

/** pwritev(2) of every byte of @p iov (@p n entries, left as they are) at @p off: PB_OK, else PB_FAIL with errno. */
int pb_output_direct_writev(struct pb_output_direct *w, const struct iovec *iov, int n, off_t off);

/** Close both descriptors: PB_FAIL with errno when closing the ordinary one reports a failed write. */
int pb_output_direct_close(struct pb_output_direct *w);

#endif /* PAIRBOUND_OUTPUT_H */
