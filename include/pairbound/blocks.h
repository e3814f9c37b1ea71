/* Block checkpoints inside long stages (issue 11): the work of a stage's
 * long loop is cut into blocks defined by the work itself (K units in global
 * order), so a different rank count maps to the same blocks.  The rank that
 * completes a block writes what the stage's reduction and writers consume
 * from it to OUTDIR/.pairbound-blocks/LOOP/BLOCK.blk (temporary name, then
 * renamed), headed by the hash of the stage's checkpoint key, the block id,
 * the payload length and the payload's SHA-256.  With --resume a rank loads
 * its intact, matching blocks and recomputes the rest, so a kill loses at
 * most the blocks in progress (each is saved as soon as it is complete).
 *
 * The driver (`pairbound STAGE --resume`, `pairbound run`) says what the
 * stage's output belongs to with pb_blocks_context(); without a context
 * (a plain single-stage command) nothing is written and every block runs.
 * Block loops poll SIGTERM/SIGINT at block boundaries (pairbound/signals.h)
 * and stop there with the resume hint of the context. */
#ifndef PAIRBOUND_BLOCKS_H
#define PAIRBOUND_BLOCKS_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#include "pairbound/checkpoint.h"

#define PB_BLOCKS_DIR ".pairbound-blocks"
#define PB_BLOCKS_PER_THREAD 4 /* blocks per thread in one round of a loop */

/**
 * What the next stage's blocks belong to (@p key, copied; NULL: no blocks),
 * whether to reuse blocks already there (@p resume), and what to tell the
 * user when a signal stops the stage (@p hint, e.g. "resume with: ...").
 */
void pb_blocks_context(const struct pb_checkpoint_key *key, int resume, const char *hint);

/** "resume with: COMMAND --resume" for the command line of a provenance text (caller frees). */
char *pb_blocks_resume_hint(const char *provenance);

/** A growing byte buffer (block payloads): put appends, get reads from pos. */
struct pb_bytes {
  uint8_t *buf;
  size_t len, cap, pos;
};
void pb_blocks_put(struct pb_bytes *b, const void *p, size_t n);
/** PB_FAIL when fewer than @p n bytes remain (a payload of another layout). */
int pb_blocks_get(struct pb_bytes *b, void *p, size_t n);
void pb_blocks_bytes_free(struct pb_bytes *b);

/* One block loop of a stage. */
struct pb_blocks {
  char *dir;             /* OUTDIR/.pairbound-blocks/LOOP; NULL without a context */
  char keyhash[65];      /* SHA-256 of the checkpoint key's text */
  int resume;
  MPI_Comm comm;
  int rank;
  int64_t n_blocks;
  int64_t first, last;   /* this rank's blocks [first, last) */
  int64_t rounds;        /* loop rounds every rank makes (pb_blocks_round) */
  int64_t per_round;     /* blocks a rank runs in one round (PB_BLOCKS_PER_THREAD x its threads) */
  int64_t loaded, computed, damaged;
  int signal;            /* the signal the ranks agreed to stop at, 0 when none */
  /* stop notices of pb_blocks_poll: a dedicated communicator, the receive
   * posted at open, what this rank sent and saw */
  MPI_Comm notice_comm;
  MPI_Request notice_in, *notice_out;
  int notice_val, notice_sent, notice_told, notice_heard, notice_seen;
};

/** The items of block @p k, [*a, *b), for blocks of @p per consecutive items. */
void pb_blocks_items(int64_t n_items, int64_t per, int64_t k, int64_t *a, int64_t *b);

/**
 * Collective: set up loop @p loop of the stage writing @p outdir over
 * @p n_blocks blocks with costs @p cost (NULL: equal), partitioned over the
 * ranks of @p comm in contiguous runs.  With --resume, PB_FAIL on every rank
 * when the blocks there were made for another build, store or setting (the
 * message names what differs); otherwise stale blocks are removed.  Signals
 * are deferred until pb_blocks_close.
 */
int pb_blocks_open(struct pb_blocks *bl, const char *outdir, const char *loop, int64_t n_blocks, const int64_t *cost,
                   MPI_Comm comm);

/** This rank's blocks of round @p r: [*b0, *b1), possibly empty. */
void pb_blocks_round(const struct pb_blocks *bl, int64_t r, int64_t *b0, int64_t *b1);

/**
 * Collective: pb_blocks_open of loop @p loop over blocks of *@p per
 * consecutive items out of @p n_items, as many per block as make about
 * @p target blocks (at least 1 item each), a block costing the sum of its
 * items' @p cost; this rank's items are [*first, *last).
 */
int pb_blocks_open_items(struct pb_blocks *bl, const char *outdir, const char *loop, int64_t n_items, int64_t target,
                         const int64_t *cost, MPI_Comm comm, int64_t *per, int64_t *first, int64_t *last);

/* What a round of a loop over single items leaves to compute (pb_blocks_resume_round). */
struct pb_blocks_left {
  int64_t b0, b1; /* this rank's blocks of the round */
  int64_t c0, c1; /* the items they hold (empty when the round is) */
  int64_t *n;     /* n[k - b0]: items of block k still to compute (caller frees) */
};

struct pb_progress;

/**
 * Start round @p r of a loop whose items are computed one at a time, over
 * blocks of @p per consecutive items out of @p n_items: each of the round's
 * blocks whose checkpoint loads and that @p apply (@p ctx, the block's items
 * [a, b), its payload) takes back (PB_OK) is done and counted in @p prog;
 * the items of the others are marked in @p todo (this rank's items, the
 * first at index 0 being item @p first) and counted in @p left.  The blocks
 * load in parallel (OpenMP): @p apply must be thread-safe for distinct
 * blocks.  The caller then computes the items left, and the thread that
 * completes a block's last item checkpoints the block.
 */
void pb_blocks_resume_round(struct pb_blocks *bl, int64_t r, int64_t n_items, int64_t per, int64_t first,
                            int (*apply)(void *ctx, int64_t a, int64_t b, struct pb_bytes *pay), void *ctx,
                            uint8_t *todo, struct pb_progress *prog, struct pb_blocks_left *left);

/**
 * With --resume: 1 and the payload of block @p id in @p out when its file is
 * intact and made for this key; 0 (the block must be computed) when it is
 * missing, or damaged (truncated, checksum or header wrong: said at -v 1).
 * Thread-safe for distinct blocks.
 */
int pb_blocks_load(struct pb_blocks *bl, int64_t id, struct pb_bytes *out);

/** Write block @p id's payload (atomically); a no-op without a context.  Thread-safe for distinct blocks. */
int pb_blocks_save(struct pb_blocks *bl, int64_t id, const struct pb_bytes *payload);

/**
 * Collective, at the end of each round: 1 when the loop must stop, because
 * a rank received SIGTERM/SIGINT (bl->signal) or @p status failed on a rank;
 * 0 to go on.  For loops with collective calls inside a round (every rank
 * then stops at the same boundary).
 */
int pb_blocks_boundary(struct pb_blocks *bl, int status);

/**
 * Local, at the end of each round of a loop with no collective call inside:
 * 1 when this rank must stop, because it received SIGTERM/SIGINT, @p status
 * failed here, or another rank stopped for either reason and its notice has
 * arrived (point to point, through rank 0); 0 to go on.  Ranks so run their
 * rounds at their own pace instead of waiting for the slowest at every
 * boundary; a stopping rank's notice reaches the others at their next poll
 * (once rank 0, which passes notices on, has left its loop, the others run
 * theirs to the end: the stop is then only later, never lost).
 * pb_blocks_close agrees on the signal, so every rank reports the same stop.
 * A loop calls either this or pb_blocks_boundary, never both.
 */
int pb_blocks_poll(struct pb_blocks *bl, int status);

/**
 * Collective: end the loop.  Says on rank 0 how many blocks were resumed and
 * recomputed; when a signal stopped it, returns PB_FAIL with the resume hint
 * as the message (the process then exits with pb_signal_exit_status).
 */
int pb_blocks_close(struct pb_blocks *bl, int status);

/** Rank 0: remove OUTDIR/.pairbound-blocks (the stage's output is committed). */
void pb_blocks_remove(const char *outdir);

#endif /* PAIRBOUND_BLOCKS_H */
