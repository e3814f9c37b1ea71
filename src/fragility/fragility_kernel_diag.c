/* Diagnostics of one arm of the restricted profile (seed 001 Appendices K,
 * U.3 and J.2; docs/fragility.md): the accepted-set risk increase that the
 * downward optimisers fitted on the rate part realise on part E, against the
 * envelope of Proposition 3; the readout's groups merged pairwise into nested
 * coarser partitions on the same frozen bins, counts and masses; and the
 * score-only comparator, whose within-bin groups are quantiles of the score
 * itself; and the helpers of the report's variance-law integrals (T Table 18)
 * and heterogeneity quartiles (R.1 Table 9).  Pure computation: no MPI, no I/O. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#include "pairbound/error.h"
#include "pairbound/fragility.h"
#include "fragility_kernel_internal.h"

const double pb_fragility_coverage[PB_FRAGILITY_COVERAGES] = {0.8, 0.9};

int32_t pb_fragility_merge_levels(int32_t K)
{
  int32_t n = 1;
  for (int32_t k = K; k > 1; k = (k + 1) / 2) n++;
  return n;
}

/* The rate part's (the half that did not fit @p fit) and part E's counts on partition @p p. */
static void pb_fragility__diag_tally(const struct pb_fragility_input *in, const struct pb_fragility_partition *p,
                                     enum pb_fragility_part fit, struct pb_fragility__tally *R,
                                     struct pb_fragility__tally *E)
{
  enum pb_fragility_part rate = fit == PB_FRAGILITY_PART_A ? PB_FRAGILITY_PART_B : PB_FRAGILITY_PART_A;
  pb_fragility__tally_init(R, p->J, p->K);
  pb_fragility__tally_clear(R);
  if (E) {
    pb_fragility__tally_init(E, p->J, p->K);
    pb_fragility__tally_clear(E);
  }
  for (int32_t i = 0; i < in->n; i++) {
    if (isnan(in->u[i]) || (in->part[i] != rate && in->part[i] != PB_FRAGILITY_PART_E)) continue;
    if (in->part[i] == PB_FRAGILITY_PART_E && !E) continue;
    int32_t b = pb_fragility_bin(p, in->s[i]), g = pb_fragility_group(p, b, in->u[i]);
    pb_fragility__add(in->part[i] == rate ? R : E, b, g, in->correct[i], in->s[i]);
  }
}

/* Part E's side of one accepted bin b at rho: the downward optimiser r of
 * the rate part's law, normalised on E's group masses (r~ = r / sum qE r, so
 * the bin keeps its E mass; r~ = 1 where that sum is 0), added into
 * num = sum nE r~ etaE, den = sum nE r~ and tr = sum nE (r~ - 1)(etaE - mean etaE). */
static void pb_fragility__diag_eval_bin(const struct pb_fragility__tally *E, int32_t b,
                                        const struct pb_fragility_law *law, const double *eta, const double *r,
                                        double *num, double *den, double *tr)
{
  int32_t K = E->K;
  double sw = 0, wt[PB_FRAGILITY_MAX_GROUPS];
  for (int32_t g = 0; g < K; g++) {
    wt[g] = pb_fragility__group_weight(law, r, eta[g]);
    sw += (double)E->n[(size_t)b * K + g] / (double)E->nb[b] * wt[g];
  }
  double mean = 0;
  for (int32_t g = 0; g < K; g++) mean += (double)E->k[(size_t)b * K + g];
  mean /= (double)E->nb[b];
  for (int32_t g = 0; g < K; g++) {
    int64_t ne = E->n[(size_t)b * K + g];
    if (ne == 0) continue;
    double rt = sw > 0 ? wt[g] / sw : 1, ee = (double)E->k[(size_t)b * K + g] / (double)ne;
    *num += (double)ne * rt * ee;
    *den += (double)ne * rt;
    *tr += (double)ne * (rt - 1) * (ee - mean);
  }
}

/* Selective-risk transport realised (Appendix K) at coverage @p cov and
 * radius @p rho into x (PB_FK_FIXED): the accepted bins are the top bins by
 * confidence until their rate-part mass first reaches cov (as the arm
 * record's envelope); part E's accepted-set risk under the reweighting
 * minus its risk without, and the same by the transport identity,
 * -sum_b nE_b E_E[(r~ - 1)(etaE - mean)] / nE. */
static void pb_fragility__diag_selective(const struct pb_fragility__tally *R, const struct pb_fragility__tally *E,
                                         double cov, double rho, struct pb_fragility_law *law, double *x)
{
  double eta[PB_FRAGILITY_MAX_GROUPS], q[PB_FRAGILITY_MAX_GROUPS], r[PB_FRAGILITY_MAX_GROUPS];
  double W = 0, acc = 0, mv = 0, num = 0, den = 0, tr = 0;
  int64_t ne = 0, ke = 0;
  for (int32_t b = R->J - 1; b >= 0 && W < cov; b--) {
    if (!pb_fragility__bin_law(R, b, law, eta, q)) continue;
    double w = (double)R->nb[b] / (double)R->total;
    W += w;
    acc += w * law->mean;
    mv += w * pb_fragility_profile(law, PB_FRAGILITY_DOWN, rho);
    if (E->nb[b] == 0) continue;
    pb_fragility_weights(law, PB_FRAGILITY_DOWN, rho, r);
    pb_fragility__diag_eval_bin(E, b, law, eta, r, &num, &den, &tr);
    ne += E->nb[b];
    for (int32_t g = 0; g < E->K; g++) ke += E->k[(size_t)b * E->K + g];
  }
  x[PB_FK_COVERAGE] = W;
  x[PB_FK_RHO] = rho;
  x[PB_FK_RISK] = W > 0 ? 1 - acc / W : NAN;
  x[PB_FK_ENVELOPE] = W > 0 ? mv / W : NAN;
  x[PB_FK_EVAL_COVERAGE] = E->total > 0 ? (double)ne / (double)E->total : NAN;
  x[PB_FK_EVAL_RISK] = ne > 0 ? 1 - (double)ke / (double)ne : NAN;
  x[PB_FK_REALISED] = ne > 0 ? (double)ke / (double)ne - num / den : NAN;
  x[PB_FK_EXCESS] = x[PB_FK_REALISED] - x[PB_FK_ENVELOPE];
  x[PB_FK_IDENTITY] = ne > 0 ? fabs(x[PB_FK_REALISED] + tr / (double)ne) : NAN;
}

/* Nested merges (U.3): level j joins groups g >> j of every bin, on the
 * same bins and rate counts (a merged group's rate is its groups' pooled
 * rate, their mass-weighted mean), so the levels are nested partitions. */
static void pb_fragility__diag_merges(const struct pb_fragility__tally *R, const struct pb_fragility_options *o,
                                      struct pb_fragility_law *law, double *arm, double *rec)
{
  int32_t J = R->J, K = R->K, levels = pb_fragility_merge_levels(K);
  for (int32_t j = 0; j < PB_FRAGILITY_MERGES; j++) {
    double *x = rec + (size_t)j * PB_FM_FIXED;
    for (int f = 0; f < PB_FM_FIXED; f++) x[f] = NAN;
    if (j >= levels) continue;
    int32_t Kj = ((K - 1) >> j) + 1;
    x[PB_FM_GROUPS] = Kj;
    if (R->total == 0) continue;
    struct pb_fragility__tally M;
    pb_fragility__tally_init(&M, J, Kj);
    pb_fragility__tally_clear(&M);
    for (int32_t b = 0; b < J; b++) {
      for (int32_t g = 0; g < K; g++) {
        M.n[(size_t)b * Kj + (g >> j)] += R->n[(size_t)b * K + g];
        M.k[(size_t)b * Kj + (g >> j)] += R->k[(size_t)b * K + g];
      }
      M.nb[b] = R->nb[b];
      M.ssum[b] = R->ssum[b];
    }
    M.total = R->total;
    pb_fragility__summaries(&M, o, law, arm);
    x[PB_FM_G_R] = arm[PB_FA_G_R];
    x[PB_FM_G_R_CORR] = arm[PB_FA_G_R_CORR];
    x[PB_FM_FAUC_UP] = arm[PB_FA_FAUC_UP];
    x[PB_FM_FAUC_SHARE] = rec[PB_FM_FAUC_UP] > 0 ? x[PB_FM_FAUC_UP] / rec[PB_FM_FAUC_UP] : NAN;
    pb_fragility__tally_free(&M);
  }
}

/* The score-only comparator (J.2): the same images, bins and rate part, but
 * within each bin K quantile groups of the confidence instead of the group
 * signal (fitted on the same part).  Its partition is not nested with the
 * readout's, so neither profile bounds the other. */
static void pb_fragility__diag_score(const struct pb_fragility_input *in, const struct pb_fragility_options *o,
                                     enum pb_fragility_part fit, struct pb_fragility_law *law, double *arm,
                                     double readout_fauc, double *x)
{
  double *su = pb_malloc((size_t)(in->n > 0 ? in->n : 1) * sizeof(double));
  for (int32_t i = 0; i < in->n; i++) su[i] = isnan(in->u[i]) ? NAN : in->s[i];
  struct pb_fragility_input sin = *in;
  sin.u = su;
  struct pb_fragility_partition p;
  pb_fragility_partition_fit(&sin, fit, o->n_bins, o->n_groups, &p);
  struct pb_fragility__tally R;
  pb_fragility__diag_tally(&sin, &p, fit, &R, NULL);
  x[PB_FJ_GROUPS] = NAN;
  for (int f = PB_FJ_G_R; f < PB_FJ_FIXED; f++) x[f] = NAN;
  if (R.total > 0) {
    pb_fragility__summaries(&R, o, law, arm);
    x[PB_FJ_GROUPS] = arm[PB_FA_GROUPS];
    x[PB_FJ_G_R] = arm[PB_FA_G_R];
    x[PB_FJ_FAUC_UP] = arm[PB_FA_FAUC_UP];
    x[PB_FJ_FAUC_DOWN] = arm[PB_FA_FAUC_DOWN];
    x[PB_FJ_READOUT_FAUC_UP] = readout_fauc;
    x[PB_FJ_RATIO] = x[PB_FJ_FAUC_UP] > 0 ? readout_fauc / x[PB_FJ_FAUC_UP] : NAN;
  }
  pb_fragility__tally_free(&R);
  pb_fragility_partition_free(&p);
  free(su);
}

void pb_fragility_diag(const struct pb_fragility_input *in, const struct pb_fragility_options *o,
                       enum pb_fragility_part fit, double *rec)
{
  struct pb_fragility_partition own;
  const struct pb_fragility_partition *p = pb_fragility__partition(in, fit, o->n_bins, o->n_groups, &own);
  struct pb_fragility__tally R, E;
  pb_fragility__diag_tally(in, p, fit, &R, &E);
  struct pb_fragility_law law;
  pb_fragility_law_init(&law);
  double *arm = pb_malloc((size_t)PB_FRAGILITY_ARM_LEN(o->n_grid) * sizeof(double));
  for (int32_t c = 0; c < PB_FRAGILITY_COVERAGES; c++)
    for (int32_t k = 0; k < o->n_grid; k++) {
      double *x = rec + ((size_t)c * o->n_grid + k) * PB_FK_FIXED;
      if (R.total > 0) pb_fragility__diag_selective(&R, &E, pb_fragility_coverage[c], pb_fragility_grid(o, k), &law, x);
      else
        for (int f = 0; f < PB_FK_FIXED; f++) x[f] = NAN;
    }
  double *merge = rec + PB_FRAGILITY_SEL_LEN(o->n_grid);
  pb_fragility__diag_merges(&R, o, &law, arm, merge);
  pb_fragility__diag_score(in, o, fit, &law, arm, merge[PB_FM_FAUC_UP], merge + PB_FRAGILITY_MERGES * PB_FM_FIXED);
  free(arm);
  pb_fragility_law_free(&law);
  pb_fragility__tally_free(&R);
  pb_fragility__tally_free(&E);
  pb_fragility_partition_free(&own);
}

int32_t pb_fragility_metric_spearman(int32_t n, const double *ece, const double *gr, const double *fauc, double *out)
{
  double *x = pb_malloc((size_t)(n > 0 ? n : 1) * 5 * sizeof(double)), *y = x + n, *z = y + n, *w = z + n;
  int32_t m = 0;
  for (int32_t i = 0; i < n; i++)
    if (isfinite(ece[i]) && isfinite(gr[i]) && isfinite(fauc[i])) x[m] = ece[i], y[m] = gr[i], z[m++] = fauc[i];
  const double *a[3] = {x, x, y}, *b[3] = {y, z, z};
  for (int c = 0; c < 3; c++) {
    double r = m >= 3 ? gsl_stats_spearman(a[c], 1, b[c], 1, (size_t)m, w) : NAN;
    out[c] = isfinite(r) ? r : NAN; /* a constant metric has no ranking */
  }
  free(x);
  return m;
}

int64_t pb_fragility_ece_pairs(int32_t n, const double *ece, const double *gr, const double *fauc, double tol,
                               int32_t *pi, int32_t *pj)
{
  int64_t k = 0;
  for (int32_t i = 0; i < n; i++)
    for (int32_t j = i + 1; j < n; j++) {
      if (!isfinite(ece[i]) || !isfinite(gr[i]) || !isfinite(fauc[i])) break;
      if (!isfinite(ece[j]) || !isfinite(gr[j]) || !isfinite(fauc[j]) || !(fabs(ece[i] - ece[j]) <= tol)) continue;
      pi[k] = i, pj[k++] = j;
    }
  return k;
}

/* The same trapezoids as FAUC's (pb_fragility__summaries), in the same order, so the integral of the
 * profile_up block is FAUC_up to the last bit. */
double pb_fragility_log_auc(const struct pb_fragility_options *o, const double *y)
{
  double a = 0, prev = pb_fragility_grid(o, 0);
  for (int32_t k = 1; k < o->n_grid; k++) {
    const double rho = pb_fragility_grid(o, k);
    a += log(rho / prev) * (y[k] + y[k - 1]) / 2;
    prev = rho;
  }
  return a;
}

/* Ranks by counting (a source has tens of models): r_i = #{x_j < x_i} + #{j < i : x_j = x_i}. */
int32_t pb_fragility_quartiles(int32_t n, const double *x, int32_t *q)
{
  int32_t m = 0;
  for (int32_t i = 0; i < n; i++) m += isfinite(x[i]) != 0;
  for (int32_t i = 0; i < n; i++) {
    q[i] = -1;
    if (!isfinite(x[i])) continue;
    int64_t r = 0;
    for (int32_t j = 0; j < n; j++) r += isfinite(x[j]) && (x[j] < x[i] || (x[j] == x[i] && j < i));
    q[i] = (int32_t)(4 * r / m);
  }
  return m;
}
