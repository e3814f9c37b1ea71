/* Cross-model support for a clean wrong answer (seed 000 Appendix J.2,
 * Table 49): how many other models give the same wrong answer on the clean
 * image, and whether the model keeps that answer after perturbation.  Pure
 * computation. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/bounds.h"
#include "pairbound/error.h"

void pb_bounds_clean_support(int32_t n_models, int32_t n_groups, const int32_t *group, int32_t n_images,
                             const int32_t *label, const int32_t *clean, double *out)
{
  const size_t plane = (size_t)n_models * (size_t)n_images;
  int32_t *gsize = pb_calloc((size_t)n_groups, sizeof *gsize), *gcnt = pb_calloc((size_t)n_groups, sizeof *gcnt);
  for (int32_t m = 0; m < n_models; m++) gsize[group[m]]++;
  for (int32_t i = 0; i < n_images; i++)
    for (int32_t m = 0; m < n_models; m++) {
      const size_t at = (size_t)m * n_images + i;
      const int32_t w = clean[at];
      for (int v = 0; v < PB_SUPPORT_N; v++) out[v * plane + at] = NAN;
      if (w == label[i]) continue;
      /* agreeing models: all others, those outside m's group, and per group */
      int32_t others = 0, outside = 0;
      memset(gcnt, 0, (size_t)n_groups * sizeof *gcnt);
      for (int32_t o = 0; o < n_models; o++) {
        if (o == m || clean[(size_t)o * n_images + i] != w) continue;
        others++;
        outside += group[o] != group[m];
        gcnt[group[o]]++;
      }
      const int32_t n_outside = n_models - gsize[group[m]];
      if (n_models > 1) out[PB_SUPPORT_XMODEL * plane + at] = (double)others / (n_models - 1);
      if (n_outside > 0) out[PB_SUPPORT_XGROUP * plane + at] = (double)outside / n_outside;
      /* every other group weighs the same: the mean of the groups' shares, groups in index order */
      double sum = 0.0;
      int32_t ng = 0;
      for (int32_t g = 0; g < n_groups; g++)
        if (g != group[m] && gsize[g] > 0) {
          sum += (double)gcnt[g] / gsize[g];
          ng++;
        }
      if (ng > 0) out[PB_SUPPORT_GROUPS_EQUAL * plane + at] = sum / ng;
    }
  free(gsize);
  free(gcnt);
}

int pb_bounds_support_stratum(double v)
{
  if (v <= PB_SUPPORT_LOW_MAX + PB_SUPPORT_TOL) return PB_SUPPORT_LOW;
  if (v >= PB_SUPPORT_HIGH_MIN - PB_SUPPORT_TOL) return PB_SUPPORT_HIGH;
  return PB_SUPPORT_MID;
}

void pb_bounds_support_cell(const struct pb_cell_view *in, const double *const support[PB_SUPPORT_N],
                            int64_t counts[PB_SUPPORT_N][PB_SUPPORT_N_STRATA][2])
{
  memset(counts, 0, sizeof(int64_t) * PB_SUPPORT_N * PB_SUPPORT_N_STRATA * 2);
  for (int32_t i = 0; i < in->n; i++) {
    if (in->pred0[i] == in->label[i]) continue;
    const int same = in->pred1[i] == in->pred0[i];
    for (int v = 0; v < PB_SUPPORT_N; v++) {
      if (isnan(support[v][i])) continue;
      int64_t *c = counts[v][pb_bounds_support_stratum(support[v][i])];
      c[0]++;
      c[1] += same;
    }
  }
}
