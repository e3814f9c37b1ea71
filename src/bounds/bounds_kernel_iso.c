/* Isotonic calibration of Table 40 (seed 000 F.1; include/pairbound/calibration.h):
 * pool-adjacent-violators on clean development correctness.  Pure computation. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "pairbound/calibration.h"
#include "pairbound/error.h"

/* (score, correct) ascending by score. */
static int pb_iso__cmp(const void *pa, const void *pb)
{
  const double *a = pa, *b = pb;
  return (a[0] > b[0]) - (a[0] < b[0]);
}

int pb_bounds_iso_fit(const float *s, const uint8_t *correct, int32_t n, struct pb_iso *fit)
{
  fit->n = 0;
  fit->x = fit->v = NULL;
  if (n <= 0) return -1;
  double *pair = pb_malloc(2 * (size_t)n * sizeof *pair);
  for (int32_t i = 0; i < n; i++) pair[2 * i] = s[i], pair[2 * i + 1] = correct[i] != 0;
  qsort(pair, (size_t)n, 2 * sizeof *pair, pb_iso__cmp);
  /* a stack of blocks: lowest score, records, correct records */
  int64_t *w = pb_malloc(2 * (size_t)n * sizeof *w), *k = w + n;
  fit->x = pb_malloc((size_t)n * sizeof *fit->x);
  int32_t top = 0;
  for (int32_t i = 0; i < n;) {
    int32_t j = i;
    int64_t kk = 0;
    for (; j < n && pair[2 * j] == pair[2 * i]; j++) kk += pair[2 * j + 1] != 0;
    fit->x[top] = pair[2 * i], w[top] = j - i, k[top] = kk;
    top++;
    /* merge while the left block's share k/w is at least the right one's
     * (exact in integers): a violation, or an equal share, which merging
     * leaves the fitted values as they are but makes every block a step */
    while (top > 1 && k[top - 2] * w[top - 1] >= k[top - 1] * w[top - 2]) {
      w[top - 2] += w[top - 1];
      k[top - 2] += k[top - 1];
      top--;
    }
    i = j;
  }
  fit->n = top;
  fit->v = pb_malloc((size_t)top * sizeof *fit->v);
  for (int32_t b = 0; b < top; b++) fit->v[b] = (double)k[b] / (double)w[b];
  free(w);
  free(pair);
  return 0;
}

double pb_bounds_iso_apply(const struct pb_iso *fit, float s)
{
  if (fit->n == 0) return NAN;
  /* the last block whose lowest score is <= s */
  int32_t lo = 0, hi = fit->n;
  while (hi - lo > 1) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (fit->x[mid] <= (double)s) lo = mid;
    else hi = mid;
  }
  return fit->v[lo];
}

void pb_bounds_iso_free(struct pb_iso *fit)
{
  free(fit->x);
  free(fit->v);
  fit->n = 0;
  fit->x = fit->v = NULL;
}
