/* The whole class-probability vector a synthetic record stands for, and its
 * entropy and collision (docs/synth.md, "Per-record summaries"). */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "pairbound/probsum.h"
#include "pairbound/synth.h"

/* -p log p of every float with 11 significant bits (its 13 low mantissa bits
 * zero) in [2^-24, 2): every probability of a half-precision panel
 * (pb_num_round_half) but 0.  A panel's lists are such values, so most of
 * synth's logarithms were these 25,600 again and again (about 70 % of its
 * calls to log, 5 % of its time); each entry is pb_probsum_plogp's own
 * value, so the sums are the same to the bit. */
#define PB_SYNTH__MEMO_E0 103 /* the float exponent field of 2^-24 */
#define PB_SYNTH__MEMO_NE 25  /* exponents 2^-24 .. 2^0 */
static double pb_synth__memo[PB_SYNTH__MEMO_NE << 10];
static pthread_once_t pb_synth__memo_once = PTHREAD_ONCE_INIT;

static void pb_synth__memo_init(void)
{
  for (uint32_t x = 0; x < (PB_SYNTH__MEMO_NE << 10); x++) {
    const uint32_t bits = ((PB_SYNTH__MEMO_E0 + (x >> 10)) << 23) | ((x & 1023u) << 13);
    float f;
    memcpy(&f, &bits, sizeof f);
    pb_synth__memo[x] = pb_probsum_plogp(f);
  }
}

/* pb_probsum_plogp(f), from the memo where f is in it. */
static double pb_synth__plogp(float f)
{
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  const uint32_t e = bits >> 23; /* with the sign: a negative f falls outside the memo */
  if ((bits & 0x1FFFu) == 0 && e >= PB_SYNTH__MEMO_E0 && e < PB_SYNTH__MEMO_E0 + PB_SYNTH__MEMO_NE)
    return pb_synth__memo[((e - PB_SYNTH__MEMO_E0) << 10) | ((bits >> 13) & 1023u)];
  return pb_probsum_plogp(f);
}

/* The generator pins n classes (the predicted class, the true class when it
 * differs, and the runner-ups it drew, the top-k list being the first k of
 * them) and says nothing of the other n_classes - n: they share what the
 * pinned ones leave, R = 1 - sum p, evenly, each at most @p cap (the list's
 * last probability, so that the list stays the vector's top k; S without a
 * list).  Where R would put more than cap on each, the vector sums to less
 * than 1: the generator's lists can leave more mass than the classes below
 * them can hold (docs/synth.md). */
void pb_synth_summaries(const float *p, int32_t n, int32_t n_classes, float cap, float *entropy, float *collision)
{
  double v[2 + 64], t[2 + 64], sum = 0.0, h, c;
  pthread_once(&pb_synth__memo_once, pb_synth__memo_init);
  for (int32_t j = 0; j < n; j++) {
    v[j] = p[j];
    t[j] = pb_synth__plogp(p[j]);
    sum += v[j];
  }
  const int64_t n_tail = n_classes > n ? n_classes - n : 0;
  const double q = n_tail > 0 ? fmin(fmax(1.0 - sum, 0.0) / (double)n_tail, (double)cap) : 0.0;
  pb_probsum_vector_terms(v, t, n, n_tail, q, &h, &c);
  *entropy = (float)h;
  *collision = (float)c;
}
