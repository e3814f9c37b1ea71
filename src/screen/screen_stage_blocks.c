/* `pairbound screen`: the compute phase.  This rank's rows read from the
 * store (all at once, or a piece of units at a time when streamed), and the
 * block loop: each block of units read back from its checkpoint when intact,
 * else computed (src/screen/screen_kernel_unit.c) and checkpointed.
 * docs/screen.md, "Memory". */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/blocks.h"
#include "pairbound/comm.h"
#include "pairbound/env.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/progress.h"
#include "pairbound/sort.h"
#include "pairbound/stage.h"
#include "pairbound/store.h"
#include "screen_internal.h"
#include "screen_stage_internal.h"

/* ------------------------------------------------------------ loading */

/* Two collective reads per source: the rows of this rank's units, i.e. every
 * condition of the target source and the probe conditions of each probe
 * source, for the unit's model; whole records for the clean and probe rows,
 * predictions alone for the rest (struct pb_screen__rows). */
/* Grow a streamed source's arrays to hold n rows of n_img records of the
 * fields read into them (pred alone for d; every field for tk).  The arrays
 * are kept from piece to piece: the next piece's rows land in memory already
 * touched (fresh memory costs more to touch on a virtual machine than the
 * read itself: docs/scaling.md, "Page faults and huge pages") */
static void pb_screen__rows_grow(struct pb_rows *d, int32_t *cap, int32_t n, int32_t n_img, int32_t topk, int whole,
                                 int entropy)
{
  if (n <= *cap) return;
  const size_t k = (size_t)n * (size_t)n_img;
  d->pred = pb_realloc(d->pred, k * sizeof *d->pred);
  if (whole) {
    d->smax = pb_realloc(d->smax, k * sizeof *d->smax);
    d->ptrue = pb_realloc(d->ptrue, k * sizeof *d->ptrue);
    if (topk > 0) {
      d->topk_class = pb_realloc(d->topk_class, k * (size_t)topk * sizeof *d->topk_class);
      d->topk_prob = pb_realloc(d->topk_prob, k * (size_t)topk * sizeof *d->topk_prob);
    }
    if (entropy) d->entropy = pb_realloc(d->entropy, k * sizeof *d->entropy);
  }
  d->topk = whole ? topk : 0;
  *cap = n;
}

/* The rows units [u0, u1) read, per source: every condition of a target
 * source, the probe rows of each probe source.  Streamed (one piece of
 * units at a time, pb_screen__piece_rounds), they are read into arrays kept for
 * the next piece; otherwise through pb_store_read_fields, whose rows the
 * later screen stages of a `pairbound run` share.  Collective; each rank
 * reads its own rows independently where the store allows, else every rank
 * makes the same reads, with no rows where it has none. */
int pb_screen__load(struct pb_stage *st, struct pb_screen__ctx *X, int64_t u0, int64_t u1, int stream)
{
  const struct pb_meta *meta = X->meta;
  int status = PB_OK;
  const int entropy = (meta->summaries & PB_SUMMARY_ENTROPY) != 0;
  const int tk_fields = PB_FIELD_PRED | PB_FIELD_SMAX | PB_FIELD_PTRUE | (meta->topk > 0 ? PB_FIELD_TOPK : 0) |
                        (entropy ? PB_FIELD_ENTROPY : 0);
  /* each rank reads its own units' rows without waiting for the others source by source (docs/store.md,
   * "Reading", step 5); the statuses are agreed at the end */
  const int alone = pb_store_reads_independent(st->store, tk_fields);
  if (!X->rows) X->rows = pb_calloc((size_t)meta->n_sources, sizeof *X->rows);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *src = &meta->sources[s];
    struct pb_screen__rows *R = &X->rows[s];
    int32_t cap = 16, ctk = 16;
    free(R->rows);
    free(R->tk_rows);
    R->n = R->n_tk = 0;
    R->rows = pb_malloc((size_t)cap * sizeof(int32_t));
    R->tk_rows = pb_malloc((size_t)ctk * sizeof(int32_t));
    for (int64_t u = u0; u < u1; u++) {
      int32_t t = (int32_t)(u / meta->n_models), m = (int32_t)(u % meta->n_models);
      int32_t need = (X->targets[t] == s ? src->n_conditions : 0);
      for (int32_t p = 0; p < X->n_ps; p++) need += X->ps[p].src == s ? X->ps[p].n : 0;
      while (R->n + need > cap) R->rows = pb_realloc(R->rows, (size_t)(cap *= 2) * sizeof(int32_t));
      while (R->n_tk + need + 1 > ctk) R->tk_rows = pb_realloc(R->tk_rows, (size_t)(ctk *= 2) * sizeof(int32_t));
      if (X->targets[t] == s) {
        for (int32_t c = 0; c < src->n_conditions; c++) R->rows[R->n++] = m * src->n_conditions + c;
        R->tk_rows[R->n_tk++] = m * src->n_conditions + src->clean;
      }
      for (int32_t p = 0; p < X->n_ps; p++)
        if (X->ps[p].src == s)
          for (int32_t k = 0; k < X->ps[p].n; k++) {
            R->rows[R->n++] = m * src->n_conditions + X->ps[p].cond[k];
            R->tk_rows[R->n_tk++] = m * src->n_conditions + X->ps[p].cond[k];
          }
    }
    R->n = pb_sort_unique_i32(R->rows, R->n);
    R->n_tk = pb_sort_unique_i32(R->tk_rows, R->n_tk);
    int32_t kept = 0; /* rows without a whole record */
    for (int32_t j = 0; j < R->n; j++)
      if (pb_sort_find_i32(R->tk_rows, R->n_tk, R->rows[j]) < 0) R->rows[kept++] = R->rows[j];
    R->n = kept;
    int rc;
    if (stream) {
      pb_screen__rows_grow(&R->d, &R->cap_d, R->n, src->n_images, 0, 0, 0);
      pb_screen__rows_grow(&R->tk, &R->cap_tk, R->n_tk, src->n_images, meta->topk, 1, entropy);
      rc = pb_store_read_fields_into(st->store, s, status == PB_OK ? R->n : 0, R->rows, PB_FIELD_PRED, &R->d);
      if (status == PB_OK) status = rc;
      rc = pb_store_read_fields_into(st->store, s, status == PB_OK ? R->n_tk : 0, R->tk_rows, tk_fields, &R->tk);
    } else {
      rc = pb_store_read_fields(st->store, s, status == PB_OK ? R->n : 0, R->rows, PB_FIELD_PRED, &R->d);
      if (status == PB_OK) status = rc;
      rc = pb_store_read_fields(st->store, s, status == PB_OK ? R->n_tk : 0, R->tk_rows, tk_fields, &R->tk);
    }
    if (status == PB_OK) status = rc;
  }
  return alone ? pb_store_reads_collective(st->store, status) : status;
}

/* Append unit u's outputs (its cells' records and outcome bits given). */
static void pb_screen__unit_put(const struct pb_screen__ctx *X, int64_t u, const struct pb_screen__unit *U,
                                const double *recs, const uint64_t *bits, int32_t n_words, struct pb_bytes *b)
{
  int64_t ncell = X->unit_cell0[u + 1] - X->unit_cell0[u];
  int32_t head[5] = {U->n, n_words, U->n_fit, U->n_fit_trials, U->n_fit_fails};
  pb_blocks_put(b, head, sizeof head);
  for (int g = 0; g < 3; g++) {
    double f[6] = {U->fit[g].ok, U->fit[g].b, U->fit[g].w[0], U->fit[g].w[1], U->fit[g].w[2], U->fit[g].grad_norm};
    pb_blocks_put(b, f, sizeof f);
  }
  pb_blocks_put(b, U->dev_err, (size_t)(1 + X->L.n_extra) * sizeof *U->dev_err);
  pb_blocks_put(b, U->img, (size_t)U->n * sizeof *U->img);
  pb_blocks_put(b, U->label, (size_t)U->n * sizeof *U->label);
  for (int32_t r = 0; r < X->L.n_rows; r++)
    if (pb_screen__image_row(r)) pb_blocks_put(b, U->score[r], (size_t)U->n * sizeof(double));
  for (int32_t d = 0; d < X->opt->n_derange; d++) pb_blocks_put(b, U->der_score[d], (size_t)U->n * sizeof(double));
  pb_blocks_put(b, recs, (size_t)ncell * X->L.rec_len * sizeof *recs);
  pb_blocks_put(b, bits, (size_t)(ncell * n_words) * sizeof *bits);
}

/* Read unit u back: what the writers use of it (the rankings are not kept). */
static int pb_screen__unit_get(const struct pb_screen__ctx *X, int64_t u, struct pb_bytes *b, struct pb_screen__unit *U,
                               double *recs, uint64_t **bits, int32_t *n_words)
{
  int64_t ncell = X->unit_cell0[u + 1] - X->unit_cell0[u];
  int32_t nd = X->opt->n_derange, head[5];
  memset(U, 0, sizeof *U);
  U->score = pb_calloc((size_t)X->L.n_rows, sizeof *U->score);
  U->rk = pb_calloc((size_t)X->L.n_rows, sizeof *U->rk);
  U->der = pb_calloc((size_t)(nd > 0 ? nd : 1), sizeof *U->der);
  U->der_score = pb_calloc((size_t)(nd > 0 ? nd : 1), sizeof *U->der_score);
  U->der_delta = pb_calloc((size_t)(nd > 0 ? nd : 1), sizeof *U->der_delta);
  U->st_der = pb_calloc((size_t)(PB_SCREEN_STRATA * nd > 0 ? PB_SCREEN_STRATA * nd : 1), sizeof *U->st_der);
  U->sub = pb_calloc((size_t)(X->n_subsets > 0 ? X->n_subsets : 1), sizeof *U->sub);
  *bits = NULL;
  if (pb_blocks_get(b, head, sizeof head) != PB_OK || head[0] < 0 || head[1] < 0) return PB_FAIL;
  U->n = head[0], *n_words = head[1], U->n_fit = head[2], U->n_fit_trials = head[3], U->n_fit_fails = head[4];
  for (int g = 0; g < 3; g++) {
    double f[6];
    if (pb_blocks_get(b, f, sizeof f) != PB_OK) return PB_FAIL;
    U->fit[g].ok = (int)f[0], U->fit[g].b = f[1], U->fit[g].grad_norm = f[5];
    for (int j = 0; j < 3; j++) U->fit[g].w[j] = f[2 + j];
  }
  if (pb_blocks_get(b, U->dev_err, (size_t)(1 + X->L.n_extra) * sizeof *U->dev_err) != PB_OK) return PB_FAIL;
  size_t nn = (size_t)(U->n > 0 ? U->n : 1);
  U->img = pb_malloc(nn * sizeof *U->img);
  U->label = pb_malloc(nn * sizeof *U->label);
  int status = pb_blocks_get(b, U->img, (size_t)U->n * sizeof *U->img);
  if (status == PB_OK) status = pb_blocks_get(b, U->label, (size_t)U->n * sizeof *U->label);
  for (int32_t r = 0; r < X->L.n_rows && status == PB_OK; r++)
    if (pb_screen__image_row(r)) {
      U->score[r] = pb_malloc(nn * sizeof(double));
      status = pb_blocks_get(b, U->score[r], (size_t)U->n * sizeof(double));
    }
  for (int32_t d = 0; d < nd && status == PB_OK; d++) {
    U->der_score[d] = pb_malloc(nn * sizeof(double));
    status = pb_blocks_get(b, U->der_score[d], (size_t)U->n * sizeof(double));
  }
  if (status == PB_OK) status = pb_blocks_get(b, recs, (size_t)ncell * X->L.rec_len * sizeof *recs);
  *bits = pb_malloc((size_t)(ncell * *n_words + 1) * sizeof **bits);
  if (status == PB_OK) status = pb_blocks_get(b, *bits, (size_t)(ncell * *n_words) * sizeof **bits);
  return status;
}

/* Compute units [ua, ub) into a payload; PB_FAIL (recorded in fe) when a unit fails. */
static int pb_screen__block_compute(const struct pb_screen__ctx *X, int64_t ua, int64_t ub,
                                    const struct pb_screen_boot *boot, struct pb_error_first *fe, struct pb_bytes *pay)
{
  struct pb_screen_boot local;
  pb_screen_boot_local(boot, &local);
  int status = PB_OK;
  pay->len = pay->pos = 0;
  for (int64_t u = ua; u < ub; u++) {
    int32_t t, m, n_words;
    char msg[1024];
    struct pb_screen__unit U;
    pb_screen__cell_names(X, u, &t, &m);
    if (pb_screen__unit_prepare(X, t, m, &U, msg, sizeof msg) != PB_OK) {
      pb_error_set("%s", msg);
      pb_error_first_record(fe, u);
      status = PB_FAIL;
    }
    int64_t ncell = X->unit_cell0[u + 1] - X->unit_cell0[u];
    n_words = (U.n + 63) / 64;
    double *recs = pb_malloc((size_t)(ncell > 0 ? ncell : 1) * X->L.rec_len * sizeof *recs);
    uint64_t *bits = pb_malloc((size_t)(ncell * n_words + 1) * sizeof *bits);
    pb_screen__unit_cells(X, t, m, &U, recs, bits, n_words, &local);
    pb_screen__unit_put(X, u, &U, recs, bits, n_words, pay);
    pb_screen__unit_free(&U, X);
    free(recs);
    free(bits);
  }
  int32_t tt[2] = {(int32_t)(ua / X->meta->n_models), (int32_t)((ub - 1) / X->meta->n_models)};
  pb_blocks_put(pay, tt, sizeof tt);
  pb_screen_boot_put(&local, tt[0], tt[1], pay);
  pb_screen_boot_free(&local);
  return status;
}

/* A payload into this rank's units, records and bits (from u0) and the
 * class-bootstrap sums; the sums are added only once the rest has read back
 * and the payload's length is exactly what they need. */
static int pb_screen__block_apply(const struct pb_screen__ctx *X, int64_t u0, int64_t ua, int64_t ub,
                                  struct pb_bytes *pay, struct pb_screen__unit *units, double *recs, uint64_t **bits,
                                  int32_t *n_words, struct pb_screen_boot *boot)
{
  int status = PB_OK;
  pay->pos = 0;
  for (int64_t u = ua; u < ub && status == PB_OK; u++)
    status = pb_screen__unit_get(X, u, pay, &units[u - u0],
                                 recs + (X->unit_cell0[u] - X->unit_cell0[u0]) * X->L.rec_len, &bits[u - u0],
                                 &n_words[u - u0]);
  int32_t tt[2];
  if (status == PB_OK) status = pb_blocks_get(pay, tt, sizeof tt);
  if (status == PB_OK && (tt[0] != (int32_t)(ua / X->meta->n_models) || tt[1] != (int32_t)((ub - 1) / X->meta->n_models) ||
                          pay->len - pay->pos != pb_screen_boot_bytes(boot, tt[0], tt[1])))
    status = PB_FAIL;
  if (status == PB_OK) status = pb_screen_boot_add(boot, tt[0], tt[1], pay);
  return status;
}

/* Undo a partial pb_screen__block_apply of units [ua, ub). */
static void pb_screen__block_drop(const struct pb_screen__ctx *X, int64_t u0, int64_t ua, int64_t ub,
                                  struct pb_screen__unit *units, uint64_t **bits)
{
  for (int64_t u = ua; u < ub; u++) {
    if (units[u - u0].score) pb_screen__unit_free(&units[u - u0], X);
    memset(&units[u - u0], 0, sizeof units[u - u0]);
    free(bits[u - u0]);
    bits[u - u0] = NULL;
  }
}

/* One block: its checkpoint when intact, else computed (and checkpointed). */
static int pb_screen__block(const struct pb_screen__ctx *X, struct pb_blocks *bl, int64_t per, int64_t k, int64_t u0,
                            struct pb_screen__unit *units, double *recs, uint64_t **bits, int32_t *n_words,
                            struct pb_screen_boot *boot, struct pb_error_first *fe)
{
  int64_t ua, ub;
  pb_blocks_items(X->n_units, per, k, &ua, &ub);
  struct pb_bytes pay = {0};
  int status = PB_OK;
  if (pb_blocks_load(bl, k, &pay)) {
    /* an intact block of this key has this layout; anything else is recomputed */
    status = pb_screen__block_apply(X, u0, ua, ub, &pay, units, recs, bits, n_words, boot);
    if (status != PB_OK) {
      pb_screen__block_drop(X, u0, ua, ub, units, bits);
      pb_warning("screen: block %lld does not read back: recomputing it", (long long)k);
    }
  } else {
    status = PB_FAIL;
  }
  if (status != PB_OK) {
    status = pb_screen__block_compute(X, ua, ub, boot, fe, &pay);
    if (status == PB_OK) status = pb_blocks_save(bl, k, &pay);
    if (status == PB_OK) status = pb_screen__block_apply(X, u0, ua, ub, &pay, units, recs, bits, n_words, boot);
    if (status != PB_OK) pb_error_first_record(fe, ua);
  }
  pb_blocks_bytes_free(&pay);
  return status;
}

/* Every unit of this rank's blocks, a round of blocks (dynamically over threads) at a
 * time; a signal or a failure on any rank ends the loop at the next round. */
/* Streaming (docs/screen.md, "Memory"): rounds of the block loop per piece
 * of rows, the same on every rank (they read together); every round at once
 * (one piece, read before the probe selection) when the rows of the most
 * loaded round of any rank times the rounds fit PB_SCREEN_PIECE_BYTES
 * (PAIRBOUND_SCREEN_PIECE_BYTES overrides it, for the tests), or when a
 * development selection needs every unit's rows before any unit is scored.
 * Collective. */
#define PB_SCREEN_PIECE_BYTES ((int64_t)256 << 20)
int64_t pb_screen__piece_rounds(const struct pb_screen__ctx *X, const struct pb_blocks *bl, int64_t per,
                                MPI_Comm comm)
{
  const struct pb_meta *meta = X->meta;
  int64_t budget = PB_SCREEN_PIECE_BYTES, most = 0;
  pb_env_int(PB_ENV_SCREEN_PIECE_BYTES, 0, INT64_MAX, &budget); /* unset: the default stays */
  for (int64_t r = 0; r < bl->rounds; r++) {
    int64_t b0, b1, bytes = 0;
    pb_blocks_round(bl, r, &b0, &b1);
    for (int64_t u = b0 * per; u < b1 * per && u < X->n_units; u++) {
      const struct pb_source *T = &meta->sources[X->targets[u / meta->n_models]];
      bytes += (int64_t)T->n_conditions * T->n_images * 4; /* predictions */
      for (int32_t p = 0; p < X->n_ps; p++) /* whole records */
        bytes += (int64_t)X->ps[p].n * meta->sources[X->ps[p].src].n_images * (12 + 8 * (int64_t)meta->topk);
    }
    most = bytes > most ? bytes : most;
  }
  pb_comm_allreduce(MPI_IN_PLACE, &most, 1, MPI_INT64_T, MPI_MAX, comm);
  if (X->pool[0].n > 0 || X->pool[1].n > 0 || most * bl->rounds <= budget) return bl->rounds > 0 ? bl->rounds : 1;
  const int64_t q = most > 0 ? budget / most : bl->rounds;
  return q < 1 ? 1 : q;
}

int pb_screen__blocks_run(struct pb_stage *st, struct pb_screen__ctx *X, struct pb_blocks *bl, int64_t per,
                          int64_t q, int64_t u0, struct pb_screen__unit *units, double *recs, uint64_t **bits,
                          int32_t *n_words, struct pb_screen_boot *boot, struct pb_progress *prog,
                          double *load_sec)
{
  struct pb_error_first fe;
  pb_error_first_init(&fe);
  for (int64_t r = 0; r < bl->rounds; r++) {
    int64_t b0, b1;
    if (q < bl->rounds && r % q == 0) {
      /* the next piece: this rank's units of rounds r .. r + q - 1 */
      int64_t e0, e1;
      pb_blocks_round(bl, r, &b0, &e0);
      pb_blocks_round(bl, r + q - 1 < bl->rounds ? r + q - 1 : bl->rounds - 1, &e1, &b1);
      const int64_t ua = b0 * per < X->n_units ? b0 * per : X->n_units, ub = b1 * per < X->n_units ? b1 * per : X->n_units;
      const double t0 = MPI_Wtime();
      const int status = pb_error_agree(bl->comm, pb_screen__load(st, X, ua, ub > ua ? ub : ua, 1));
      *load_sec += MPI_Wtime() - t0;
      if (status != PB_OK) {
        pb_error_first_record(&fe, ua);
        break;
      }
    }
    pb_blocks_round(bl, r, &b0, &b1);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t k = b0; k < b1; k++) {
      int64_t ua, ub;
      pb_blocks_items(X->n_units, per, k, &ua, &ub);
      if (pb_screen__block(X, bl, per, k, u0, units, recs, bits, n_words, boot, &fe) == PB_OK)
        pb_progress_step(prog, ub - ua);
    }
    /* rounds that read a piece of the store (collective) end together; otherwise each rank runs at its own pace */
    const int stop = q < bl->rounds ? pb_blocks_boundary(bl, pb_error_first_status(&fe))
                                    : pb_blocks_poll(bl, pb_error_first_status(&fe));
    if (stop) break;
  }
  return pb_error_first_status(&fe);
}

