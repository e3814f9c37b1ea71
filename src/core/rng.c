/* Counter-based random numbers: Philox4x32-10 streams (include/pairbound/rng.h). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <Random123/philox.h>

#include "pairbound/clones.h"
#include "pairbound/rng.h"

void pb_rng_init(struct pb_rng *r, uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate)
{
  r->key[0] = (uint32_t)seed;
  r->key[1] = (uint32_t)(seed >> 32) ^ (analysis * 0x9E3779B9u);
  r->ctr[0] = (uint32_t)item;
  r->ctr[1] = (uint32_t)(item >> 32);
  r->ctr[2] = replicate;
  r->ctr[3] = 0;
  r->have = r->left = 0;
}

/* One Philox4x32-10 round on the counter (c0, c1, c2, c3) with key (x0, x1),
 * as Random123's philox4x32round. */
#define PB_RNG__ROUND(c0, c1, c2, c3, x0, x1)                                    \
  do {                                                                           \
    const uint64_t p0_ = (uint64_t)0xD2511F53u * (c0), p1_ = (uint64_t)0xCD9E8D57u * (c2); \
    (c0) = (uint32_t)(p1_ >> 32) ^ (c1) ^ (x0);                                  \
    (c1) = (uint32_t)p1_;                                                        \
    (c2) = (uint32_t)(p0_ >> 32) ^ (c3) ^ (x1);                                  \
    (c3) = (uint32_t)p0_;                                                        \
  } while (0)
#define PB_RNG__BUMP0 0x9E3779B9u
#define PB_RNG__BUMP1 0xBB67AE85u

void pb_rng_refill(struct pb_rng *r)
{
  philox4x32_ctr_t c = {{r->ctr[0], r->ctr[1], r->ctr[2], r->ctr[3]}};
  philox4x32_key_t k = {{r->key[0], r->key[1]}};
  philox4x32_ctr_t o = philox4x32(c, k);
  memcpy(r->out, o.v, sizeof o.v);
  r->ctr[3]++;
  r->have = r->left = 4;
}

/* Four blocks' rounds side by side, which the compiler vectorises (four
 * 32 x 32 -> 64-bit products of a round in one AVX2 instruction). */
PB_CLONES void pb_rng_ahead(struct pb_rng *r)
{
  if (r->left > 0) return;
  uint32_t c0[4], c1[4], c2[4], c3[4], x0 = r->key[0], x1 = r->key[1];
  for (int b = 0; b < 4; b++) c0[b] = r->ctr[0], c1[b] = r->ctr[1], c2[b] = r->ctr[2], c3[b] = r->ctr[3] + (uint32_t)b;
  for (int round = 0; round < 10; round++, x0 += PB_RNG__BUMP0, x1 += PB_RNG__BUMP1)
    for (int b = 0; b < 4; b++) PB_RNG__ROUND(c0[b], c1[b], c2[b], c3[b], x0, x1);
  for (int b = 0; b < 4; b++) {
    r->out[4 * b] = c0[b], r->out[4 * b + 1] = c1[b];
    r->out[4 * b + 2] = c2[b], r->out[4 * b + 3] = c3[b];
  }
  r->ctr[3] += 4;
  r->have = r->left = 16;
}

/* Philox4x32-10 blocks first, first + 1, .. (the draw counter ctr[3] wraps
 * alone, as in pb_rng_refill) of stream r, nb <= PB_RNG__BATCH of them, into
 * out[i][b]: Random123's rounds written out on independent blocks, so that
 * the compiler computes 8 or 16 at once (test_util's bulk shuffle test checks
 * the draws against its own Philox stream). */
#define PB_RNG__BATCH 64
PB_CLONES static void pb_rng__blocks(const struct pb_rng *r, uint32_t first, int nb,
                                     uint32_t out[4][PB_RNG__BATCH])
{
  const uint32_t k0 = r->key[0], k1 = r->key[1], a0 = r->ctr[0], a1 = r->ctr[1], a2 = r->ctr[2];
#pragma omp simd
  for (int b = 0; b < nb; b++) {
    uint32_t c0 = a0, c1 = a1, c2 = a2, c3 = first + (uint32_t)b, x0 = k0, x1 = k1;
    for (int round = 0; round < 10; round++, x0 += PB_RNG__BUMP0, x1 += PB_RNG__BUMP1)
      PB_RNG__ROUND(c0, c1, c2, c3, x0, x1);
    out[0][b] = c0, out[1][b] = c1, out[2][b] = c2, out[3][b] = c3;
  }
}

/* pb_rng_shuffle's draws: those left in r's block, then blocks computed a
 * batch at a time; pb_rng__batch_end leaves r as the same draws one by one
 * would have (the last block used, its unused draws left). */
struct pb_rng__batch {
  uint32_t out[4][PB_RNG__BATCH];
  uint32_t first; /* counter of out's first block */
  int have, used; /* draws in out, draws taken */
};

static inline uint32_t pb_rng__batch_next(struct pb_rng *r, struct pb_rng__batch *q, int64_t want)
{
  if (r->left > 0) return r->out[r->have - r->left--];
  if (q->used == q->have) {
    /* about one draw per element: blocks for what is still wanted, a batch at most */
    int64_t nb = want / 4 + 2;
    q->first = r->ctr[3];
    q->have = 4 * (int)(nb < PB_RNG__BATCH ? nb : PB_RNG__BATCH);
    q->used = 0;
    pb_rng__blocks(r, q->first, q->have / 4, q->out);
    r->ctr[3] = q->first + (uint32_t)(q->have / 4);
  }
  const int d = q->used++;
  return q->out[d % 4][d / 4];
}

static void pb_rng__batch_end(struct pb_rng *r, const struct pb_rng__batch *q)
{
  if (q->used == q->have) return; /* every block used whole (or none computed): r is as it should be */
  const int b = (q->used - 1) / 4;  /* used > 0: a batch is computed when a draw is wanted */
  for (int i = 0; i < 4; i++) r->out[i] = q->out[i][b];
  r->have = 4;
  r->left = 4 * (b + 1) - q->used;
  r->ctr[3] = q->first + (uint32_t)b + 1;
}

/* Uniform in [0, n), from r's draws one block at a time (q NULL) or from
 * batch q, about @p want draws still to come.  Lemire-style rejection keeps
 * the draw exactly uniform: a draw is rejected when its low word is below
 * 2^32 mod n, which is below n, so that remainder (a division) is needed
 * only for a low word below n */
static inline uint32_t pb_rng__below(struct pb_rng *r, struct pb_rng__batch *q, uint32_t n, int64_t want)
{
  uint64_t m = (uint64_t)(q ? pb_rng__batch_next(r, q, want) : pb_rng_u32(r)) * n;
  if ((uint32_t)m < n) {
    const uint32_t limit = (uint32_t)(-n) % n;
    while ((uint32_t)m < limit) m = (uint64_t)(q ? pb_rng__batch_next(r, q, want) : pb_rng_u32(r)) * n;
  }
  return (uint32_t)(m >> 32);
}

uint32_t pb_rng_below(struct pb_rng *r, uint32_t n)
{
  return pb_rng__below(r, NULL, n, 0);
}

void pb_rng_shuffle(struct pb_rng *r, int32_t *v, int32_t n)
{
  const int32_t beg[2] = {0, n > 0 ? n : 0};
  pb_rng_shuffle_segments(r, v, 1, beg);
}

void pb_rng_shuffle_segments(struct pb_rng *r, int32_t *v, int32_t n_seg, const int32_t *beg)
{
  /* the draws still to come, about: one per element but each segment's first */
  int64_t want = n_seg > 0 ? (int64_t)beg[n_seg] - beg[0] - n_seg : 0;
  /* under PB_RNG__BATCH draws the few blocks are computed one at a time; above,
   * a batch at a time across segments, so that many small classes (50 records
   * each in the paper's sources) get the vectorised blocks too */
  struct pb_rng__batch batch, *q = want < PB_RNG__BATCH ? NULL : &batch;
  batch.have = batch.used = 0;
  batch.first = 0;
  for (int32_t s = 0; s < n_seg; s++) {
    int32_t *w = v + beg[s];
    for (int32_t i = beg[s + 1] - beg[s] - 1; i > 0; i--, want--) {
      const int32_t j = (int32_t)pb_rng__below(r, q, (uint32_t)i + 1, want), t = w[i];
      w[i] = w[j];
      w[j] = t;
    }
  }
  if (q) pb_rng__batch_end(r, q);
}
