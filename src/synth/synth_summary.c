/* The whole class-probability vector a synthetic record stands for, and its
 * entropy and collision (docs/synth.md, "Per-record summaries"). */
#include "config.h"

#include <math.h>
#include <stdint.h>

#include "pairbound/probsum.h"
#include "pairbound/synth.h"

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
  pb_probsum_plogp_floats(p, n, t);
  for (int32_t j = 0; j < n; j++) {
    v[j] = p[j];
    sum += v[j];
  }
  const int64_t n_tail = n_classes > n ? n_classes - n : 0;
  const double q = n_tail > 0 ? fmin(fmax(1.0 - sum, 0.0) / (double)n_tail, (double)cap) : 0.0;
  pb_probsum_vector_terms(v, t, n, n_tail, q, &h, &c);
  *entropy = (float)h;
  *collision = (float)c;
}
