/* Between the files of the screen stage: screen_stage.c (options, set-up,
 * selection, pb_screen_run), screen_stage_blocks.c (rows read, block loop)
 * and screen_stage_write.c (reports, columns, TSV files). */
#ifndef PAIRBOUND_SCREEN_STAGE_INTERNAL_H
#define PAIRBOUND_SCREEN_STAGE_INTERNAL_H

#include <stdint.h>
#include <mpi.h>

#include "screen_internal.h"

struct pb_blocks;
struct pb_progress;
struct pb_stage;
struct pb_timer;

/* Target and model of unit u (units are target-major). */
static inline void pb_screen__cell_names(const struct pb_screen__ctx *X, int64_t u, int32_t *t, int32_t *m)
{
  *t = (int32_t)(u / X->meta->n_models);
  *m = (int32_t)(u % X->meta->n_models);
}

/* Block checkpoints (pairbound/blocks.h): a block is K consecutive units, K
 * from the unit count alone (about 64 blocks), so any rank count maps to the
 * same blocks.  Its payload is what the writers and the interval tables
 * consume: per unit the images, the written score rows, the fits, the cell
 * records and outcome bits, then the block's class-bootstrap sums. */
#define PB_SCREEN_BLOCKS 64

/* ---- screen_stage_blocks.c */

/* Read the rows units [u0, u1) need, into arrays kept from piece to piece when @p stream (collective). */
int pb_screen__load(struct pb_stage *st, struct pb_screen__ctx *X, int64_t u0, int64_t u1, int stream);
/* Rounds of the block loop per piece of rows read (collective). */
int64_t pb_screen__piece_rounds(const struct pb_screen__ctx *X, const struct pb_blocks *bl, int64_t per,
                                MPI_Comm comm);
/* Every unit of this rank's blocks into units, recs, bits and n_words (from unit u0) and the class-bootstrap
 * sums; the streamed pieces' read seconds added to @p load_sec. */
int pb_screen__blocks_run(struct pb_stage *st, struct pb_screen__ctx *X, struct pb_blocks *bl, int64_t per,
                          int64_t q, int64_t u0, struct pb_screen__unit *units, double *recs, uint64_t **bits,
                          int32_t *n_words, struct pb_screen_boot *boot, struct pb_progress *prog,
                          double *load_sec);

/* ---- screen_stage_write.c */

/* Whether score row r is written per image (/screen/images). */
int pb_screen__image_row(int32_t r);
/* Every report table from this rank's units [u0, u1) (collective). */
int pb_screen__report_all(struct pb_stage *st, const struct pb_screen__ctx *X, int64_t u0, int64_t u1,
                          const double *recs, const struct pb_screen__unit *units, struct pb_screen_boot *boot,
                          const char *store_path);
/* Every output of this rank's units [u0, u1) (collective). */
int pb_screen__write(struct pb_stage *st, const struct pb_screen__ctx *X, int64_t u0, int64_t u1,
                     const double *recs, struct pb_screen__unit *units, uint64_t *const *bits,
                     const int32_t *n_words, struct pb_timer *tm);

#endif /* PAIRBOUND_SCREEN_STAGE_INTERNAL_H */
