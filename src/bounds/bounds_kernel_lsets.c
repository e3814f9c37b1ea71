/* Tables 47 and 48 (seed 000 Section 7 and Appendix J.1): a cell's five
 * states and acceptance events on its matched images under the original
 * labels and under record-attached set correctness, judged here from the
 * stored predictions and the raw sets (not from pb_lsets_pred's map, which
 * the other analyses read), with k split by whether the two correct
 * predictions are equal, and Eq. 15 checked on the cell; and Appendix J.1's
 * candidate-compatible and label-retained splits with dM_k on the k pairs
 * whose original label is in the set. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "pairbound/bounds.h"
#include "pairbound/lsets.h"

/* The state of a pair from its two correctness flags and predictions. */
static int pb_bounds__lsets_state(int c0, int c1, int32_t p0, int32_t p1)
{
  if (c0 && c1) return p0 == p1 ? PB_LSS_KEQ : PB_LSS_KDIFF;
  if (c0) return PB_LSS_H;
  if (c1) return PB_LSS_R;
  return p0 == p1 ? PB_LSS_S : PB_LSS_W;
}

/* A matched image's subgroup counts (J.1): its image, and per convention its perturbed correctness and s. */
static void pb_bounds__lsets_group(int64_t *g, const int st[2], const int c1[2])
{
  g[PB_LSG_IMAGES]++;
  for (int c = 0; c < 2; c++) {
    g[PB_LSG_A1 + c] += c1[c];
    g[PB_LSG_S + c] += st[c] == PB_LSS_S;
  }
}

void pb_bounds_lsets_cell(const struct pb_cell_view *in, const int64_t *off, const int32_t *ids, int32_t n_classes,
                          int64_t out[PB_LS_N_SLOTS], double dmk[2])
{
  double dm[2] = {0, 0};
  int64_t kret[2] = {0, 0};
  memset(out, 0, PB_LS_N_SLOTS * sizeof *out);
  for (int32_t i = 0; i < in->n; i++) {
    const int32_t n = (int32_t)(off[i + 1] - off[i]), *S = ids + off[i];
    if (n == 0) continue;
    const int32_t y = in->label[i], p0 = in->pred0[i], p1 = in->pred1[i];
    const int z0 = in->s0[i] >= in->tau, z1 = in->s1[i] >= in->tau;
    const int retained = pb_lsets_has(S, n, y);
    int st[2], cor1[2];
    for (int c = 0; c < 2; c++) {
      const int c0 = c ? pb_lsets_has(S, n, p0) : p0 == y, c1 = c ? pb_lsets_has(S, n, p1) : p1 == y;
      int64_t *o = out + PB_LS_CONV + c * PB_LS_NSTATE;
      st[c] = pb_bounds__lsets_state(c0, c1, p0, p1);
      cor1[c] = c1;
      o[st[c]]++;
      if (c0 && c1) o[PB_LSS_K]++;
      o[PB_LSS_HACC] += c0 && z0 && !c1 && z1;
      o[PB_LSS_LACC] += c0 && z0 && c1 && !z1;
      /* M is the original label's probability: a true-class probability only where that label is accepted */
      if (c0 && c1 && retained) {
        dm[c] += (double)in->m0[i] - (double)in->m1[i];
        kret[c]++;
      }
    }
    out[PB_LS_N]++;
    out[PB_LS_AGREE] += p0 == p1;
    out[PB_LS_MOVED_H] += st[0] == PB_LSS_H && st[1] != PB_LSS_H;
    out[PB_LS_MOVED_W] += st[0] == PB_LSS_W && st[1] != PB_LSS_W;
    /* ids ascend from 0: the set holds a class the models can predict iff its first does */
    if (S[0] < n_classes) pb_bounds__lsets_group(out + PB_LS_SPLIT + PB_LSG_COMPATIBLE * PB_LSG_N, st, cor1);
    if (retained) pb_bounds__lsets_group(out + PB_LS_SPLIT + PB_LSG_RETAINED * PB_LSG_N, st, cor1);
  }
  out[PB_LS_CELLS] = out[PB_LS_N] > 0;
  for (int c = 0; c < 2; c++) dmk[c] = kret[c] > 0 ? dm[c] / (double)kret[c] : NAN;
  for (int c = 0; c < 2 && out[PB_LS_N] > 0; c++) {
    const int64_t *o = out + PB_LS_CONV + c * PB_LS_NSTATE;
    /* Eq. 15: q_agree - a1 = s - r - k_different, a1 = k + r the perturbed accuracy */
    out[PB_LS_EQ15_FAIL] += out[PB_LS_AGREE] - (o[PB_LSS_K] + o[PB_LSS_R]) != o[PB_LSS_S] - o[PB_LSS_R] - o[PB_LSS_KDIFF];
  }
}
