/* Per-cell synthetic summaries, their class-conditional independent
 * counterparts and real target counts (seed 000 H.1-H.3, Table 42, Eq. 14;
 * docs/predict.md).  Pure computation. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/draws.h"
#include "pairbound/error.h"
#include "pairbound/predict.h"
#include "pairbound/protocol.h"
#include "pairbound/sort.h"

int pb_predict_cell_counts(const struct pb_cell_view *in, struct pb_predict_counts *out)
{
  memset(out, 0, sizeof *out);
  if (!in || in->n <= 0 || isnan(in->tau)) {
    pb_error_set("predict: a target cell needs records and a threshold");
    return PB_FAIL;
  }
  /* the top-80% cutoff follows the protocol's rank rule: ties at the cutoff
   * are selected, so the selected count can exceed 80% and is the denominator */
  float *v = pb_malloc((size_t)in->n * sizeof *v);
  memcpy(v, in->s1, (size_t)in->n * sizeof *v);
  const float cut = pb_sort_kth_largest_f32(v, in->n, pb_protocol_rank(in->n, PB_PREDICT_R80_COVERAGE));
  free(v);
  out->n = in->n;
  for (int32_t i = 0; i < in->n; i++) {
    const int c0 = in->pred0[i] == in->label[i], c1 = in->pred1[i] == in->label[i];
    const int z0 = in->s0[i] >= in->tau, z1 = in->s1[i] >= in->tau;
    out->correct += c1;
    if (in->s1[i] >= cut) {
      out->selected++;
      out->selected_wrong += !c1;
    }
    out->accepted_wrong += !c1 && z1;
    out->correct_rejected += c1 && !z1;
    out->lost += c0 && c1 && z0 && !z1;
  }
  return PB_OK;
}

void pb_predict_cell_paired(const struct pb_cell_view *in, const int32_t *perm, double *out)
{
  const int32_t n = in->n;
  double sum0 = 0.0, sum1 = 0.0;
  for (int32_t i = 0; i < n; i++) {
    sum0 += in->s0[i];
    sum1 += in->s1[i];
  }
  const double mean0 = sum0 / n, mean1 = sum1 / n;
  int64_t flips = 0, K = 0, ns = 0, nw = 0, lost = 0;
  double absd = 0.0, sxx = 0.0, syy = 0.0, sxy = 0.0, dm = 0.0, dss = 0.0, dsw = 0.0;
  for (int32_t i = 0; i < n; i++) {
    const int32_t j = perm ? perm[i] : i;
    const int32_t y = in->label[i];
    const int c0 = in->pred0[i] == y, c1 = in->pred1[j] == y;
    const double d = (double)in->s0[i] - (double)in->s1[j];
    const double d0 = (double)in->s0[i] - mean0, d1 = (double)in->s1[j] - mean1;
    flips += in->pred0[i] != in->pred1[j];
    absd += fabs(d);
    sxx += d0 * d0;
    syy += d1 * d1;
    sxy += d0 * d1;
    if (c0 && c1) {
      K++;
      dm += (double)in->m0[i] - (double)in->m1[j];
      lost += in->s0[i] >= in->tau && in->s1[j] < in->tau;
    } else if (!c0 && !c1) {
      if (in->pred0[i] == in->pred1[j]) {
        ns++;
        dss += d;
      } else {
        nw++;
        dsw += d;
      }
    }
  }
  out[0] = (double)flips / n;
  out[1] = absd / n;
  out[2] = sxx > 0.0 && syy > 0.0 ? sxy / sqrt(sxx * syy) : NAN;
  out[3] = (double)K / n;
  out[4] = K > 0 ? dm / K : NAN;
  out[5] = ns > 0 ? dss / ns : NAN;
  out[6] = nw > 0 ? dsw / nw : NAN;
  out[7] = (double)lost / n;
}

/* What a shuffle pass reads of a perturbed record, in one 32-byte slot: the
 * pass reads the perturbed side in permuted order, so each record costs one
 * cache line instead of one per field. */
struct pb_predict__side1 {
  double d1, d1sq;  /* S' - mean S', and its square */
  float s1, m1;
  int32_t pred1;
  uint8_t f1;       /* bit 0: correct; bit 1: rejected */
};

/* Sums of one shuffle replicate's pass. */
struct pb_predict__pass {
  int64_t flips, K, ns, nw, lost;
  double absd, syy, sxy, dm, dss, dsw;
};
#define PB_PREDICT__REP_BLOCK 4

void pb_predict_cell_shuffles(const struct pb_cell_view *in, uint64_t seed, uint32_t analysis, uint64_t item,
                              int32_t n_rep, double *out)
{
  const int32_t n = in->n;
  int32_t *order = pb_malloc(((2 + PB_PREDICT__REP_BLOCK) * (size_t)n + 1) * sizeof *order), *cbeg = order + n;
  int32_t *perm = cbeg + n + 1;
  double *d0 = pb_malloc((size_t)n * sizeof *d0);
  struct pb_predict__side1 *p1 = pb_malloc((size_t)n * sizeof *p1);
  uint8_t *f0 = pb_malloc((size_t)n);
  const int32_t nc = pb_resample_perm_classes(n, in->label, order, cbeg);
  /* everything that does not depend on the pairing, in the same arithmetic
   * as pb_predict_cell_paired so that the results are identical */
  double sum0 = 0.0, sum1 = 0.0, sxx = 0.0;
  for (int32_t i = 0; i < n; i++) {
    sum0 += in->s0[i];
    sum1 += in->s1[i];
  }
  const double mean0 = sum0 / n, mean1 = sum1 / n;
  for (int32_t i = 0; i < n; i++) {
    d0[i] = (double)in->s0[i] - mean0;
    sxx += d0[i] * d0[i];
    p1[i].d1 = (double)in->s1[i] - mean1;
    p1[i].d1sq = p1[i].d1 * p1[i].d1;
    p1[i].s1 = in->s1[i], p1[i].m1 = in->m1[i], p1[i].pred1 = in->pred1[i];
    /* bit 0: correct; bit 1: accepted clean (f0) / rejected perturbed (f1) */
    f0[i] = (uint8_t)((in->pred0[i] == in->label[i]) | (in->s0[i] >= in->tau) << 1);
    p1[i].f1 = (uint8_t)((in->pred1[i] == in->label[i]) | (in->s1[i] < in->tau) << 1);
  }
  for (int32_t r0 = 0; r0 < n_rep; r0 += PB_PREDICT__REP_BLOCK) {
    const int32_t nb = n_rep - r0 < PB_PREDICT__REP_BLOCK ? n_rep - r0 : PB_PREDICT__REP_BLOCK;
    for (int32_t b = 0; b < nb; b++)
      pb_resample_perm_within_grouped(seed, analysis, item, (uint32_t)(r0 + b), nc, order, cbeg, perm + (size_t)b * n);
    for (int32_t b = nb; b < PB_PREDICT__REP_BLOCK; b++) memcpy(perm + (size_t)b * n, perm, (size_t)n * sizeof *perm);
    struct pb_predict__pass acc[PB_PREDICT__REP_BLOCK];
    memset(acc, 0, sizeof acc);
    /* the replicates of a block in one sweep: each replicate's sums still
     * run over the records in order, but the block's sums are independent
     * chains, so their additions overlap instead of waiting on each other */
    for (int32_t i = 0; i < n; i++)
#pragma GCC unroll 4
      for (int32_t b = 0; b < PB_PREDICT__REP_BLOCK; b++) {
        const struct pb_predict__side1 *q = &p1[perm[(size_t)b * n + i]];
        struct pb_predict__pass *t = &acc[b];
        const int a = f0[i], c = q->f1;
        const double d = (double)in->s0[i] - (double)q->s1;
        t->flips += in->pred0[i] != q->pred1;
        t->absd += fabs(d);
        t->syy += q->d1sq;
        t->sxy += d0[i] * q->d1;
        if (a & c & 1) {
          t->K++;
          t->dm += (double)in->m0[i] - (double)q->m1;
          t->lost += (a & c) >> 1;
        } else if (!((a | c) & 1)) {
          if (in->pred0[i] == q->pred1) {
            t->ns++;
            t->dss += d;
          } else {
            t->nw++;
            t->dsw += d;
          }
        }
      }
    for (int32_t b = 0; b < nb; b++) {
      const struct pb_predict__pass *t = &acc[b];
      double *o = out + (size_t)(r0 + b) * PB_PREDICT_N_PAIRED;
      o[0] = (double)t->flips / n;
      o[1] = t->absd / n;
      o[2] = sxx > 0.0 && t->syy > 0.0 ? t->sxy / sqrt(sxx * t->syy) : NAN;
      o[3] = (double)t->K / n;
      o[4] = t->K > 0 ? t->dm / t->K : NAN;
      o[5] = t->ns > 0 ? t->dss / t->ns : NAN;
      o[6] = t->nw > 0 ? t->dsw / t->nw : NAN;
      o[7] = (double)t->lost / n;
    }
  }
  free(order);
  free(d0);
  free(p1);
  free(f0);
}

int pb_predict_cell_summary(const struct pb_cell_view *in, double *out)
{
  struct pb_cell_bounds b;
  struct pb_predict_counts c;
  for (int j = 0; j < PB_PC_N; j++) out[j] = NAN;
  if (pb_bounds_cell(in, 0, &b) != 0 || pb_predict_cell_counts(in, &c) != PB_OK) {
    pb_error_set("predict: invalid cell records");
    return PB_FAIL;
  }
  const int32_t n = in->n;
  double s0 = 0.0, s1 = 0.0, m0 = 0.0, m1 = 0.0, ll = 0.0;
  int64_t a = 0;
  for (int32_t i = 0; i < n; i++) {
    s0 += in->s0[i];
    s1 += in->s1[i];
    a += in->pred0[i] == in->label[i];
    if (in->pred0[i] == in->label[i]) m0 += in->m0[i];
    if (in->pred1[i] == in->label[i]) m1 += in->m1[i];
    ll -= log(fmax((double)in->m1[i], PB_PREDICT_LOGLOSS_FLOOR));
  }
  const int64_t a1 = c.correct;
  out[PB_PC_ACC0] = b.acc0;
  out[PB_PC_A1] = b.acc1;
  out[PB_PC_S0] = s0 / n;
  out[PB_PC_S1] = s1 / n;
  out[PB_PC_M0] = a > 0 ? m0 / a : NAN;
  out[PB_PC_M1] = a1 > 0 ? m1 / a1 : NAN;
  out[PB_PC_LOGLOSS] = ll / n;
  out[PB_PC_R80] = (double)c.selected_wrong / c.selected;
  out[PB_PC_E] = b.E;
  out[PB_PC_CR] = (double)c.correct_rejected / n;
  /* paired summaries and their independent counterparts: the bounds
   * engine's values (Table 2 and H.2) */
  out[PB_PC_F] = b.F;
  out[PB_PC_A] = b.A;
  out[PB_PC_Q] = b.Q;
  out[PB_PC_K] = (double)b.k / n;
  out[PB_PC_DMK] = b.dMk_obs;
  out[PB_PC_DSS] = b.ds_s;
  out[PB_PC_DSW] = b.ds_w;
  out[PB_PC_L] = b.L_obs;
  double *ind = out + PB_PC_IND - PB_PC_F;
  ind[PB_PC_F] = b.F_ind;
  ind[PB_PC_A] = b.A_ind;
  ind[PB_PC_Q] = b.Q_ind;
  ind[PB_PC_K] = b.k_ind;
  ind[PB_PC_DSS] = b.ds_s_ind;
  ind[PB_PC_DSW] = b.ds_w_ind;
  out[PB_PC_IND + PB_PC_DMK - PB_PC_F] = b.dMk_ind;
  out[PB_PC_IND + PB_PC_L - PB_PC_F] = b.L_ind;
  return PB_OK;
}
