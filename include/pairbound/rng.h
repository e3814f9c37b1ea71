/* Counter-based random numbers (Random123 Philox4x32-10).  A stream is named
 * by (seed, analysis, item, replicate); draws within it are numbered, so
 * results never depend on rank, thread or call order (docs/resample.md). */
#ifndef PAIRBOUND_RNG_H
#define PAIRBOUND_RNG_H

#include <stdint.h>

struct pb_rng {
  uint32_t key[2];
  uint32_t ctr[4];
  uint32_t out[4];
  int left;
};
void pb_rng_init(struct pb_rng *r, uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate);
uint32_t pb_rng_u32(struct pb_rng *r);
double pb_rng_uniform(struct pb_rng *r);          /* in (0, 1) */
double pb_rng_normal(struct pb_rng *r);           /* standard normal (Box-Muller) */
uint32_t pb_rng_below(struct pb_rng *r, uint32_t n); /* uniform in [0, n), unbiased */
/* Fisher-Yates shuffle of v[0..n): for i = n-1 down to 1, swap v[i] with v[pb_rng_below(r, i + 1)]. */
void pb_rng_shuffle(struct pb_rng *r, int32_t *v, int32_t n);
/* pb_rng_shuffle of v[beg[s] .. beg[s + 1]) for s = 0 .. n_seg - 1 in turn: the same draws as n_seg calls. */
void pb_rng_shuffle_segments(struct pb_rng *r, int32_t *v, int32_t n_seg, const int32_t *beg);

#endif /* PAIRBOUND_RNG_H */
