/* Stage checkpoints of `pairbound run --resume`: what a completed stage's
 * output belongs to (program build, store checksum, analysis settings) and
 * checksums of the output itself, so a resumed run skips exactly the stages
 * whose committed output is intact and was made for the same inputs. */
#ifndef PAIRBOUND_CHECKPOINT_H
#define PAIRBOUND_CHECKPOINT_H

#include <stddef.h>

#include <mpi.h>

/* What a stage's output is made from. */
struct pb_checkpoint_key {
  const char *stage;        /* stage name */
  const char *build;        /* pb_results_build_info(): version, git revision, configure flags */
  const char *store_digest; /* pb_checksum_xxh128_file of the store file */
  const char *settings;     /* the stage's effective settings, one "key = value" per line */
};

/** The key as checkpoint lines (stage, build, store_xxh128, one "setting" line per setting; caller frees). */
char *pb_checkpoint_key_text(const struct pb_checkpoint_key *key);

/**
 * PB_OK when @p text (lines as pb_checkpoint_key_text writes them) records
 * @p key; otherwise PB_FAIL with a message naming @p where, what was made
 * (@p done, e.g. "the completed output was") and the first field that differs, with
 * both values.
 */
int pb_checkpoint_key_same(const char *where, const char *done, const char *text, const struct pb_checkpoint_key *key);

/**
 * Rank 0 only: record that OUTDIR holds the complete output of @p key:
 * OUTDIR/checkpoint.txt (written under a temporary name, then renamed) with
 * the key and the pb_checksum_xxh128_file of OUTDIR/results.h5 and of every file in
 * OUTDIR/report/ (name order).
 */
int pb_checkpoint_commit(const char *outdir, const struct pb_checkpoint_key *key);

/** Rank 0 only: remove OUTDIR's checkpoint (a stage about to be recomputed). */
void pb_checkpoint_remove(const char *outdir);

enum pb_checkpoint_state {
  PB_CHECKPOINT_NONE,     /* no checkpoint: the stage runs */
  PB_CHECKPOINT_DAMAGED,  /* checkpoint or output truncated/corrupt: the stage runs again */
  PB_CHECKPOINT_COMPLETE  /* intact output made for the same key: the stage is skipped */
};

/**
 * Rank 0 only: the state of OUTDIR's checkpoint for @p key.  PB_FAIL (with a
 * message naming what differs: build, store checksum or a setting, with both
 * values) when an intact checkpoint was made for something else, since
 * resuming it would mix outputs of two different analyses.  @p why receives
 * a short reason for NONE/DAMAGED.
 */
int pb_checkpoint_check(const char *outdir, const struct pb_checkpoint_key *key, enum pb_checkpoint_state *state,
                        char *why, size_t why_len);

/**
 * Collective: 1 when OUTDIR already holds the complete output of @p key (the
 * stage can be skipped), 0 when it must run (any damaged or foreign-free
 * checkpoint is removed first, with a message when damaged), PB_FAIL on
 * every rank when resuming is refused (rank 0 holds the message).
 */
int pb_checkpoint_resumable(const char *outdir, const struct pb_checkpoint_key *key, MPI_Comm comm);

/** Collective: pb_checkpoint_commit on rank 0, its status on every rank. */
int pb_checkpoint_commit_all(const char *outdir, const struct pb_checkpoint_key *key, MPI_Comm comm);

/**
 * The key settings of a single-stage command: its arguments, one per line,
 * without --resume (caller frees).  Resuming needs the same command.
 */
char *pb_checkpoint_args(int argc, char **argv);

#endif /* PAIRBOUND_CHECKPOINT_H */
