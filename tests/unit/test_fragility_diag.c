/* Unit tests of the arms' diagnostics (seed 001 K, U.3, J.2;
 * src/fragility/fragility_kernel_diag.c): images placed so that the fitted
 * partition is known, and every expected value derived by hand here —
 * two-point laws, whose downward optimiser and profile have closed forms,
 * pooled group counts for the merges, and profiles of the merged laws by an
 * enumeration of the chi-square programme's support sets written here. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/cell.h"
#include "pairbound/fragility.h"
#include "testlib.h"
#include "testprofile.h"

#define CAP 256

/* A test's images. */
struct imgs {
  int32_t n;
  double s[CAP], u[CAP];
  uint8_t c[CAP], part[CAP];
};

/* @p count images of confidence s, signal u and part p, the first @p correct of them correct. */
static void put(struct imgs *m, int count, int correct, double s, double u, int p)
{
  for (int i = 0; i < count; i++) {
    ck_assert_int_lt(m->n, CAP);
    m->s[m->n] = s, m->u[m->n] = u, m->c[m->n] = i < correct, m->part[m->n++] = (uint8_t)p;
  }
}

static struct pb_fragility_input input(const struct imgs *m)
{
  return (struct pb_fragility_input){m->n, m->s, m->u, m->c, m->part, 0, {NULL, NULL}};
}

static void opts(struct pb_fragility_options *o, int J, int K)
{
  pb_fragility_options_default(o);
  o->n_bins = J, o->n_groups = K;
  o->n_grid = 3, o->rho_min = 0.25, o->rho_max = 4; /* radii 0.25, 1, 4 */
}

/* Two bins (confidence 0.3 and 0.9) of two groups (U = 0 and 1): part A fits
 * them (edge 0.9, cut 1).  Rate part B: bin 1 rates 10/20 and 18/20 (mass
 * 0.8), bin 0 rates 2/5 and 2/5 (G = 0).  Part E: bin 1 with @p e0 of 10 and
 * @p e1 of 10 correct in groups 0 and 1, or the uneven masses of @p uneven
 * (2 of 5, 15 of 15); bin 0 3/5 and 2/5. */
static void selective_images(struct imgs *m, int uneven)
{
  m->n = 0;
  for (int b = 0; b < 2; b++)
    for (int g = 0; g < 2; g++) put(m, 5, 0, b ? 0.9 : 0.3, g, PB_FRAGILITY_PART_A);
  put(m, 20, 10, 0.9, 0, PB_FRAGILITY_PART_B);
  put(m, 20, 18, 0.9, 1, PB_FRAGILITY_PART_B);
  put(m, 5, 2, 0.3, 0, PB_FRAGILITY_PART_B);
  put(m, 5, 2, 0.3, 1, PB_FRAGILITY_PART_B);
  put(m, uneven ? 5 : 10, uneven ? 2 : 4, 0.9, 0, PB_FRAGILITY_PART_E);
  put(m, uneven ? 15 : 10, uneven ? 15 : 10, 0.9, 1, PB_FRAGILITY_PART_E);
  put(m, 5, 3, 0.3, 0, PB_FRAGILITY_PART_E);
  put(m, 5, 2, 0.3, 1, PB_FRAGILITY_PART_E);
}

/* Bin 1's rate law: eta 0.5, 0.9 with masses 1/2 (mean 0.7, G = 0.04); the
 * downward profile is min(sqrt(0.04 rho), 0.2) (two-point law, saturating at
 * rho = 1), its optimiser r = (1 + sqrt(rho), 1 - sqrt(rho)) up to rho = 1 and
 * (2, 0) from there.  Part E's weights r / sum_g qE r keep bin 1's E mass.
 * Coverage 0.8 accepts bin 1 alone (mass 40/50), 0.9 both bins, where bin 0
 * (G = 0) has r = 1. */
START_TEST(test_selective)
{
  for (int uneven = 0; uneven < 2; uneven++) {
    struct imgs m;
    selective_images(&m, uneven);
    struct pb_fragility_options o;
    opts(&o, 2, 2);
    const struct pb_fragility_input in = input(&m);
    double *rec = malloc(PB_FRAGILITY_DIAG_LEN(3) * sizeof *rec);
    pb_fragility_diag(&in, &o, PB_FRAGILITY_PART_A, rec);
    const double rhos[3] = {0.25, 1, 4};
    const double q0 = uneven ? 0.25 : 0.5, e0 = 0.4, e1 = 1.0; /* E bin 1: group masses and rates */
    const double n1 = 20, k1 = uneven ? 17 : 14, n0 = 10, k0 = 5;
    for (int c = 0; c < 2; c++)
      for (int k = 0; k < 3; k++) {
        const double *x = rec + ((size_t)c * 3 + k) * PB_FK_FIXED, rho = rhos[k];
        const double a = fmin(sqrt(rho), 1), r0 = 1 + a, r1 = 1 - a, sw = q0 * r0 + (1 - q0) * r1;
        const double accq1 = (q0 * r0 * e0 + (1 - q0) * r1 * e1) / sw; /* bin 1's reweighted E accuracy */
        const double phi = fmin(sqrt(0.04 * rho), 0.2);
        ck_assert(fabs(x[PB_FK_RHO] - rho) < 1e-15);
        if (c == 0) {
          ck_assert(fabs(x[PB_FK_COVERAGE] - 0.8) < 1e-15);
          ck_assert(fabs(x[PB_FK_RISK] - 0.3) < 1e-14);
          ck_assert(fabs(x[PB_FK_ENVELOPE] - phi) < 1e-14);
          ck_assert(fabs(x[PB_FK_EVAL_COVERAGE] - n1 / (n1 + n0)) < 1e-15);
          ck_assert(fabs(x[PB_FK_EVAL_RISK] - (1 - k1 / n1)) < 1e-14);
          ck_assert(fabs(x[PB_FK_REALISED] - (k1 / n1 - accq1)) < 1e-14);
        } else {
          ck_assert(fabs(x[PB_FK_COVERAGE] - 1) < 1e-15);
          ck_assert(fabs(x[PB_FK_RISK] - (1 - (0.8 * 0.7 + 0.2 * 0.4))) < 1e-14);
          ck_assert(fabs(x[PB_FK_ENVELOPE] - 0.8 * phi) < 1e-14);
          ck_assert(fabs(x[PB_FK_EVAL_COVERAGE] - 1) < 1e-15);
          ck_assert(fabs(x[PB_FK_EVAL_RISK] - (1 - (k1 + k0) / (n1 + n0))) < 1e-14);
          ck_assert(fabs(x[PB_FK_REALISED] - n1 * (k1 / n1 - accq1) / (n1 + n0)) < 1e-14);
        }
        ck_assert(fabs(x[PB_FK_EXCESS] - (x[PB_FK_REALISED] - x[PB_FK_ENVELOPE])) < 1e-15);
        ck_assert(x[PB_FK_IDENTITY] < 1e-14);
      }
    /* the even case by hand: at rho = 1/4 bin 1's E accuracy 0.7 falls to (1.5 0.4 + 0.5 1) / 2 = 0.55 */
    if (!uneven) ck_assert(fabs(rec[PB_FK_REALISED] - 0.15) < 1e-14 && fabs(rec[PB_FK_EXCESS] - 0.05) < 1e-14);
    /* uneven: weights 2 and 2/3 on masses 1/4, 3/4; accuracy 0.85 -> (0.25 2 0.4 + 0.75 (2/3) 1) = 0.7 */
    if (uneven) ck_assert(fabs(rec[PB_FK_REALISED] - 0.15) < 1e-14);
    free(rec);
  }
}
END_TEST


/* FAUC_up of the law (eta, p) of n atoms over the radii 0.25, 1, 4 (trapezoids in log rho). */
static double fauc(int n, const double *eta, const double *p)
{
  double mean = 0, z[8], f[3];
  for (int i = 0; i < n; i++) mean += p[i] * eta[i];
  for (int i = 0; i < n; i++) z[i] = eta[i] - mean;
  const double rhos[3] = {0.25, 1, 4};
  for (int k = 0; k < 3; k++) f[k] = testprofile_brute(n, z, p, rhos[k]);
  return log(4) * (f[0] + f[1]) / 2 + log(4) * (f[1] + f[2]) / 2;
}

/* One bin of four groups (U = 0..7 on part A: cuts 2, 4, 6); rate counts 2/10,
 * 4/10, 12/20, 9/10.  Merged pairwise: 6/20, 21/30 (G = 0.0384), then one group
 * (G = 0).  G_R corrected subtracts sum q (1 - q) eta (1 - eta) / (n - 1). */
START_TEST(test_merges)
{
  struct imgs m = {0};
  for (int i = 0; i < 8; i++) put(&m, 1, 0, 0.5, i, PB_FRAGILITY_PART_A);
  put(&m, 10, 2, 0.5, 0.5, PB_FRAGILITY_PART_B);
  put(&m, 10, 4, 0.5, 2.5, PB_FRAGILITY_PART_B);
  put(&m, 20, 12, 0.5, 4.5, PB_FRAGILITY_PART_B);
  put(&m, 10, 9, 0.5, 6.5, PB_FRAGILITY_PART_B);
  struct pb_fragility_options o;
  opts(&o, 1, 4);
  const struct pb_fragility_input in = input(&m);
  double *rec = malloc(PB_FRAGILITY_DIAG_LEN(3) * sizeof *rec);
  pb_fragility_diag(&in, &o, PB_FRAGILITY_PART_A, rec);
  const double *x = rec + PB_FRAGILITY_SEL_LEN(3);
  ck_assert_int_eq(pb_fragility_merge_levels(4), 3);
  ck_assert_int_eq(pb_fragility_merge_levels(8), 4);
  ck_assert_int_eq(pb_fragility_merge_levels(3), 3);
  ck_assert_int_eq(pb_fragility_merge_levels(1), 1);
  const double e4[4] = {0.2, 0.4, 0.6, 0.9}, q4[4] = {0.2, 0.2, 0.4, 0.2};
  const double e2[2] = {0.3, 0.7}, q2[2] = {0.4, 0.6}, n4[4] = {10, 10, 20, 10}, n2[2] = {20, 30};
  double noise4 = 0, noise2 = 0;
  for (int g = 0; g < 4; g++) noise4 += q4[g] * (1 - q4[g]) * e4[g] * (1 - e4[g]) / (n4[g] - 1);
  for (int g = 0; g < 2; g++) noise2 += q2[g] * (1 - q2[g]) * e2[g] * (1 - e2[g]) / (n2[g] - 1);
  const double f4 = fauc(4, e4, q4), f2 = fauc(2, e2, q2);
  ck_assert(x[PB_FM_GROUPS] == 4 && x[PB_FM_FIXED + PB_FM_GROUPS] == 2 && x[2 * PB_FM_FIXED + PB_FM_GROUPS] == 1);
  ck_assert(fabs(x[PB_FM_G_R] - 0.0544) < 1e-15 && fabs(x[PB_FM_FIXED + PB_FM_G_R] - 0.0384) < 1e-15);
  ck_assert(fabs(x[2 * PB_FM_FIXED + PB_FM_G_R]) < 1e-15);
  ck_assert(fabs(x[PB_FM_G_R_CORR] - (0.0544 - noise4)) < 1e-15);
  ck_assert(fabs(x[PB_FM_FIXED + PB_FM_G_R_CORR] - (0.0384 - noise2)) < 1e-15);
  ck_assert(fabs(x[PB_FM_FAUC_UP] - f4) < 1e-12 && fabs(x[PB_FM_FIXED + PB_FM_FAUC_UP] - f2) < 1e-12);
  ck_assert(fabs(x[PB_FM_FIXED + PB_FM_FAUC_SHARE] - f2 / f4) < 1e-12 && x[PB_FM_FAUC_SHARE] == 1);
  ck_assert(x[2 * PB_FM_FIXED + PB_FM_FAUC_UP] == 0 && x[2 * PB_FM_FIXED + PB_FM_FAUC_SHARE] == 0);
  /* the two-point merged law by hand: sqrt(0.0384 rho) up to rho_sat = 0.4 / 0.6, then 0.16 */
  ck_assert(fabs(f2 - log(4) * (sqrt(0.0384 * 0.25) + 0.16) / 2 - log(4) * 0.16) < 1e-12);
  for (int j = 3; j < PB_FRAGILITY_MERGES; j++) ck_assert(isnan(rec[PB_FRAGILITY_SEL_LEN(3) + j * PB_FM_FIXED]));
  free(rec);
}
END_TEST

/* A constant group signal gives the readout one group per bin (FAUC 0); the
 * score-only comparator cuts the bin at the median confidence (0.5 on part
 * A), rates 3/10 and 8/10 on part B: G = 0.0625, Phi_up = min(sqrt(G rho),
 * 0.25), FAUC = ln 4 (0.125 + 0.25) / 2 + ln 4 (0.25 + 0.25) / 2. */
START_TEST(test_score_only)
{
  struct imgs m = {0};
  for (int i = 0; i < 8; i++) put(&m, 1, 0, 0.1 * (i + 1), 0.5, PB_FRAGILITY_PART_A);
  put(&m, 10, 3, 0.2, 0.5, PB_FRAGILITY_PART_B);
  put(&m, 10, 8, 0.7, 0.5, PB_FRAGILITY_PART_B);
  struct pb_fragility_options o;
  opts(&o, 1, 2);
  const struct pb_fragility_input in = input(&m);
  double *rec = malloc(PB_FRAGILITY_DIAG_LEN(3) * sizeof *rec);
  pb_fragility_diag(&in, &o, PB_FRAGILITY_PART_A, rec);
  const double *x = rec + PB_FRAGILITY_SEL_LEN(3) + PB_FRAGILITY_MERGES * PB_FM_FIXED;
  ck_assert(x[PB_FJ_GROUPS] == 2);
  ck_assert(fabs(x[PB_FJ_G_R] - 0.0625) < 1e-15);
  ck_assert(fabs(x[PB_FJ_FAUC_UP] - log(4) * (0.375 / 2 + 0.5 / 2)) < 1e-14);
  ck_assert(fabs(x[PB_FJ_FAUC_DOWN] - log(4) * (0.375 / 2 + 0.5 / 2)) < 1e-14); /* symmetric law */
  ck_assert(x[PB_FJ_READOUT_FAUC_UP] == 0 && x[PB_FJ_RATIO] == 0);
  free(rec);
}
END_TEST

/* The flagged-bin check of the drift split, by hand: bins 0.2 | 0.9 (edge
 * 0.5), groups u 0.2 | 0.8 (cut 0.5), every image outside part A.  Bin 1:
 * source 15/30 and 27/30 correct; the target keeps them (12/30, 24/30) and
 * gains 10 images of bin 0's group 0 (4 correct): q' = 4/7, 3/7, eta' = 0.4,
 * 0.8, so delta = 4/7 - 0.7 = -9/70, composition (1/14)(0.5 - 0.9) = -1/35,
 * conditional -1/10.  Bin 0 has a group of 5 images: flagged.  Kept: bin 1,
 * target mass 70/95, norms |delta|, |comp|, |cond| and ratio 2/9. */
START_TEST(test_drift_flagged)
{
  enum { N = 95 };
  static double s0[N], u[N], s1d[N];
  static uint8_t c0[N], c1[N], part[N];
  static float s1[N];
  static int32_t label[N], pred1[N], bin0[N], grp0[N];
  for (int i = 0; i < N; i++) {
    const int j = i < 30 ? i : i < 60 ? i - 30 : i < 90 ? i - 60 : i - 90;
    s0[i] = i < 60 ? 0.9 : 0.2;
    u[i] = i < 30 || (i >= 60 && i < 90) ? 0.2 : 0.8;
    c0[i] = i < 30 ? j < 15 : i < 60 ? j < 27 : i < 90 ? j < 10 : 1;
    c1[i] = i < 30 ? j < 12 : i < 60 ? j < 24 : i < 90 ? j < 4 : 1;
    s1d[i] = i < 60 || (i < 90 && j < 10) ? 0.9 : 0.2;
    s1[i] = (float)s1d[i];
    part[i] = PB_FRAGILITY_PART_B;
    label[i] = i % 3;
    pred1[i] = c1[i] ? label[i] : label[i] + 1;
  }
  double edge[1] = {0.5}, cut[2] = {0.5, 0.5};
  struct pb_fragility_partition p = {2, 2, edge, cut};
  struct pb_fragility_input in = {N, s0, u, c0, part, 0, {NULL, NULL}};
  pb_fragility_assign(&in, &p, PB_FRAGILITY_PART_A, bin0, grp0);
  const struct pb_cell_view v = {.index = -1, .n = N, .label = label, .pred1 = pred1, .s1 = s1};
  double rec[PB_FD_FIXED], flag[PB_FF_FIXED];
  ck_assert_int_eq(pb_fragility_drift_flagged(&v, &in, &p, bin0, grp0, rec, flag), PB_OK);
  ck_assert(fabs(flag[PB_FF_MASS_KEPT] - 70.0 / 95) < 1e-15);
  ck_assert(flag[PB_FF_BINS_KEPT] == 1 && flag[PB_FF_BINS_FLAGGED] == 1);
  ck_assert(fabs(flag[PB_FF_L_TOTAL] - 9.0 / 70) < 1e-14);
  ck_assert(fabs(flag[PB_FF_L_COMP] - 1.0 / 35) < 1e-14);
  ck_assert(fabs(flag[PB_FF_L_COND] - 0.1) < 1e-14);
  ck_assert(fabs(flag[PB_FF_RATIO] - 2.0 / 9) < 1e-14);
  /* the drift record is pb_fragility_drift's */
  double plain[PB_FD_FIXED];
  ck_assert_int_eq(pb_fragility_drift(&v, &in, &p, bin0, grp0, plain), PB_OK);
  for (int f = 0; f < PB_FD_FIXED; f++) ck_assert(plain[f] == rec[f] || (isnan(plain[f]) && isnan(rec[f])));
}
END_TEST

/* Source metrics across models, by hand: ranks of ECE 1 2 3 4, G_R 1 3 2 4, FAUC 4 3 2 1 (a fifth model
 * with a NaN metric left out): Spearman 1 - 6 sum d^2 / (n (n^2 - 1)) = 1 - 12/60, 1 - 120/60, 1 - 108/60.
 * Pairs within 0.005 of ECE: (0, 1), (0, 3), (1, 3), not (0, 2) nor the NaN model. */
START_TEST(test_metrics)
{
  const double ece[5] = {0.1, 0.2, 0.3, 0.4, 0.25}, gr[5] = {1, 3, 2, 4, NAN}, fauc[5] = {4, 3, 2, 1, 0};
  double r[3];
  ck_assert_int_eq(pb_fragility_metric_spearman(5, ece, gr, fauc, r), 4);
  ck_assert(fabs(r[0] - 0.8) < 1e-12 && fabs(r[1] + 1) < 1e-12 && fabs(r[2] + 0.8) < 1e-12);
  ck_assert_int_eq(pb_fragility_metric_spearman(2, ece, gr, fauc, r), 2);
  ck_assert(isnan(r[0]) && isnan(r[1]) && isnan(r[2]));
  const double e2[5] = {0.1, 0.103, 0.2, 0.104, 0.101}, g2[5] = {1, 2, 3, 4, 5}, f2[5] = {1, 2, 3, 4, NAN};
  int32_t pi[10], pj[10];
  ck_assert_int_eq(pb_fragility_ece_pairs(5, e2, g2, f2, 0.005, pi, pj), 3);
  ck_assert(pi[0] == 0 && pj[0] == 1 && pi[1] == 0 && pj[1] == 3 && pi[2] == 1 && pj[2] == 3);
}
END_TEST

/* Random shifts, by hand: two bins of two groups of equal rate-part and part-E masses.  Every centred,
 * scaled direction is +-(1, -1), feasible up to step 1, so r = (1 +- t, 1 -+ t) with t = sqrt(rho) below 1,
 * and the held-out movement is t |etaE_0 - etaE_1| / 2 whichever the sign; the two-sided profile of the
 * two-point rate law is t |eta_0 - eta_1| / 2.  Bin 0: rate gap 0.2, held-out gap 0.4 (ratio 2); bin 1:
 * 0.6 and 0.3 (ratio 1/2).  Radii 0.04, 0.16, 0.64 (t = 0.2, 0.4, 0.8): profiles 0.02 0.04 0.08 | 0.06
 * 0.12 0.24, movements 0.04 0.08 0.16 | 0.03 0.06 0.12 (no ties); ranks 1 2 4 3 5 6 and 2 4 6 1 3 5,
 * Spearman 1 - 6 * 18 / (6 * 35) = 17/35. */
START_TEST(test_random)
{
  struct imgs m = {0};
  for (int b = 0; b < 2; b++)
    for (int g = 0; g < 2; g++) put(&m, 5, 0, b ? 0.9 : 0.3, g, PB_FRAGILITY_PART_A);
  const int rate[2][2] = {{4, 6}, {2, 8}}, eval[2][2] = {{3, 7}, {7, 13}}, ne[2] = {10, 20};
  for (int b = 0; b < 2; b++)
    for (int g = 0; g < 2; g++) {
      put(&m, 10, rate[b][g], b ? 0.9 : 0.3, g, PB_FRAGILITY_PART_B);
      put(&m, ne[b], eval[b][g], b ? 0.9 : 0.3, g, PB_FRAGILITY_PART_E);
    }
  struct pb_fragility_options o;
  opts(&o, 2, 2);
  o.rho_min = 0.04, o.rho_max = 0.64;
  ck_assert(pb_fragility_grid(&o, 1) == 0.16);
  const struct pb_fragility_input in = input(&m);
  double rec[PB_FRAGILITY_RANDOM_LEN(3)];
  pb_fragility_random(&in, &o, PB_FRAGILITY_PART_A, rec);
  ck_assert(rec[PB_FX_CELLS] == 6 && rec[PB_FX_ABOVE] == 3);
  ck_assert(fabs(rec[PB_FX_EXCESS_SUM] - 3) < 1e-12); /* three cells of ratio 2 */
  ck_assert_msg(fabs(rec[PB_FX_SPEARMAN] - 17.0 / 35) < 1e-12, "spearman %g", rec[PB_FX_SPEARMAN]);
  for (int k = 0; k < 3; k++) ck_assert(rec[PB_FX_FIXED + 2 * k] == 2 && rec[PB_FX_FIXED + 2 * k + 1] == 1);
  ck_assert(isnan(rec[PB_FX_NULL_SPEARMAN]) || fabs(rec[PB_FX_NULL_SPEARMAN]) <= 1);
  double again[PB_FRAGILITY_RANDOM_LEN(3)];
  pb_fragility_random(&in, &o, PB_FRAGILITY_PART_A, again); /* counter-based streams: the same record */
  ck_assert(memcmp(rec, again, sizeof rec) == 0);
}
END_TEST

/* Temperature scaling, by hand.  Ten two-class records of top probability 0.8 (full lists: exact), six
 * correct: the mean NLL is minimised where the scaled confidence 1 / (1 + 4^(-1/T)) equals the accuracy
 * 0.6, T = ln 4 / ln 1.5.  With a list of one: the remaining mass split equally over the other classes. */
START_TEST(test_temper)
{
  struct pb_fragility_topk r[10];
  static const int32_t cls01[2] = {0, 1};
  static const float p82[2] = {0.8f, 0.2f};
  for (int i = 0; i < 10; i++) r[i] = (struct pb_fragility_topk){2, 2, cls01, p82, i < 6 ? 0 : 1, i < 6 ? 0.8f : 0.2f};
  const double T = pb_fragility_temper_fit(r, 10), want = log(4) / log(1.5);
  ck_assert_msg(fabs(T - want) < 1e-6, "T %.12g, want %.12g", T, want);
  ck_assert(fabs(pb_fragility_temper_conf(&r[0], want) - 0.6) < 1e-6);
  static const int32_t c0[1] = {0};
  static const float p7[1] = {0.7f};
  const double p = (double)0.7f; /* the stored float */
  const struct pb_fragility_topk one = {1, 4, c0, p7, 0, p}, miss = {1, 4, c0, p7, 2, 0.2};
  /* T = 1/2: Z = p^2 + 3 ((1 - p) / 3)^2 and, missing the label, p^2 + 0.2^2 + 2 ((0.8 - p) / 2)^2 */
  ck_assert(fabs(pb_fragility_temper_conf(&one, 0.5) - p * p / (p * p + (1 - p) * (1 - p) / 3)) < 1e-12);
  const double z = p * p + 0.04 + 2 * ((0.8 - p) / 2) * ((0.8 - p) / 2);
  ck_assert(fabs(pb_fragility_temper_nll(&miss, 0.5) - (-2 * log(0.2) + log(z))) < 1e-12);
  ck_assert(fabs(pb_fragility_temper_conf(&one, 1) - p) < 1e-12); /* T = 1 leaves the record as stored */
  ck_assert(isnan(pb_fragility_temper_fit(r, 0)));
}
END_TEST

static Suite *diag_suite(void)
{
  Suite *s = suite_create("fragility_diag");
  TCase *tc = tcase_create("kernel");
  tcase_set_tags(tc, "serial");
  tcase_add_test(tc, test_selective);
  tcase_add_test(tc, test_merges);
  tcase_add_test(tc, test_score_only);
  tcase_add_test(tc, test_drift_flagged);
  tcase_add_test(tc, test_metrics);
  tcase_add_test(tc, test_random);
  tcase_add_test(tc, test_temper);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(diag_suite()); }
