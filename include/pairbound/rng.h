/* Counter-based random numbers (Random123 Philox4x32-10).  A stream is named
 * by (seed, analysis, item, replicate); draws within it are numbered, so
 * results never depend on rank, thread or call order (docs/resample.md). */
#ifndef PAIRBOUND_RNG_H
#define PAIRBOUND_RNG_H

#include <math.h>
#include <stdint.h>

struct pb_rng {
  uint32_t key[2];
  uint32_t ctr[4];
  uint32_t out[16]; /* draws of up to four blocks (pb_rng_ahead); one block otherwise */
  int have, left;   /* draws in out, and of them not yet taken */
};
void pb_rng_init(struct pb_rng *r, uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate);
/* When r has no draw left, its next four blocks computed at once: the same
 * draws as one block at a time, for a stream known to take several (synth's
 * records take four or more on the paper's panel), since one block's ten
 * rounds are a chain of dependent multiplications that leaves the multiplier
 * mostly idle. */
void pb_rng_ahead(struct pb_rng *r);
/* r's next block, when its draws are all taken (pb_rng_u32). */
void pb_rng_refill(struct pb_rng *r);

/* The draws, inline: synth takes about ten a record, and calls were a tenth of its time. */
static inline uint32_t pb_rng_u32(struct pb_rng *r)
{
  if (r->left == 0) pb_rng_refill(r);
  return r->out[r->have - r->left--];
}

/* In (0, 1): 53 random bits, shifted by half a step so 0 and 1 never occur. */
static inline double pb_rng_uniform(struct pb_rng *r)
{
  const uint64_t hi = pb_rng_u32(r) >> 5, lo = pb_rng_u32(r) >> 6;
  return ((double)(hi * 67108864u + lo) + 0.5) / 9007199254740992.0;
}

/* Standard normal (Box-Muller). */
static inline double pb_rng_normal(struct pb_rng *r)
{
  const double u = pb_rng_uniform(r), v = pb_rng_uniform(r);
  return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

uint32_t pb_rng_below(struct pb_rng *r, uint32_t n); /* uniform in [0, n), unbiased */
/* Fisher-Yates shuffle of v[0..n): for i = n-1 down to 1, swap v[i] with v[pb_rng_below(r, i + 1)]. */
void pb_rng_shuffle(struct pb_rng *r, int32_t *v, int32_t n);
/* pb_rng_shuffle of v[beg[s] .. beg[s + 1]) for s = 0 .. n_seg - 1 in turn: the same draws as n_seg calls. */
void pb_rng_shuffle_segments(struct pb_rng *r, int32_t *v, int32_t n_seg, const int32_t *beg);

#endif /* PAIRBOUND_RNG_H */
