/* Appendix F's probability-gap groups (seed 000; include/pairbound/calibration.h):
 * per model, terciles of the clean top-1 minus top-2 gap among its
 * misclassified clean development records.  Pure computation. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "pairbound/calibration.h"

static int pb_gap__cmp(const void *pa, const void *pb)
{
  const double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

int pb_bounds_gap_cuts(double *gap, int32_t n, double cut[2])
{
  cut[0] = cut[1] = NAN;
  if (n < PB_GAP_MIN_ERRORS) return -1;
  qsort(gap, (size_t)n, sizeof *gap, pb_gap__cmp);
  for (int j = 1; j <= 2; j++) {
    /* position j (n - 1) / 3 in integers, so a cut that falls on an order
     * statistic is that value exactly and its ties go to the higher group */
    const int64_t pos = (int64_t)j * (n - 1), lo = pos / 3, r = pos % 3;
    cut[j - 1] = r == 0 ? gap[lo] : gap[lo] + (double)r / 3.0 * (gap[lo + 1] - gap[lo]);
  }
  return 0;
}

int pb_bounds_gap_group(double gap, const double cut[2])
{
  return gap >= cut[1] ? PB_GAP_HIGH : gap >= cut[0] ? PB_GAP_MID : PB_GAP_LOW;
}

void pb_bounds_gap_cell(const struct pb_cell_view *in, const int8_t *group,
                        int64_t out[PB_GAP_N_GROUPS][PB_GAP_N_COUNTS])
{
  for (int g = 0; g < PB_GAP_N_GROUPS; g++)
    for (int q = 0; q < PB_GAP_N_COUNTS; q++) out[g][q] = 0;
  for (int32_t i = 0; i < in->n; i++) {
    const int g = group[i];
    if (in->pred0[i] == in->label[i] || g < 0 || g >= PB_GAP_N_GROUPS) continue;
    out[g][PB_GAP_EVENTS]++;
    out[g][PB_GAP_SAME] += in->pred1[i] == in->pred0[i];
    out[g][PB_GAP_CORRECT] += in->pred1[i] == in->label[i];
  }
}
