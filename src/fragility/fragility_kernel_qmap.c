/* Monotone score reparameterisation (seed 001 Appendix Q; docs/fragility.md,
 * "Monotone score maps"): a strictly increasing map of the confidence keeps
 * its order, so the order-statistic edges of the partition move with the
 * scores, no image changes bin or readout cell, and every structural
 * quantity stays, while calibration changes.  Per arm: the fitted map
 * (Platt's logistic on logit S, fitted on the arm's fitting part) and two
 * fixed stress maps, applied in double precision, where distinct scores can
 * meet; the assignments, structural quantities, ECE and NLL before and
 * after, the readout refitted on the mapped scores, and the pooled ties of
 * the two arms' fitted maps.  Pure computation: no MPI, no I/O. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>

#include "pairbound/error.h"
#include "pairbound/fragility.h"
#include "fragility_kernel_internal.h"

double pb_fragility_qmap_apply(const struct pb_fragility_qmap *m, double s)
{
  if (m->power) return pow(s, m->b);
  if (!(s > 0)) return 0;
  if (!(s < 1)) return 1;
  return 1 / (1 + exp(-(m->a + m->b * (log(s) - log1p(-s)))));
}

void pb_fragility_qmap_stress(int32_t which, struct pb_fragility_qmap *m)
{
  if (which == PB_FRAGILITY_QMAP_POWER) *m = (struct pb_fragility_qmap){1, NAN, PB_FRAGILITY_QMAP_POWER_EXP};
  else *m = (struct pb_fragility_qmap){0, 0, PB_FRAGILITY_QMAP_SHARP_SLOPE};
}

/* log(1 + e^-z) without overflow. */
static double pb_fragility__softplus_neg(double z)
{
  return z >= 0 ? log1p(exp(-z)) : -z + log1p(exp(z));
}

/* Platt's log-loss of scores x (logits) held by w records with target sum t: sum_j w_j log(1 + e^-z_j) +
 * (w_j - t_j) z_j at z_j = a + b x_j (the form of -sum [t log sigma(z) + (1 - t) log(1 - sigma(z))] that
 * neither overflows nor cancels). */
static double pb_fragility__platt_loss(int32_t n, const double *x, const double *w, const double *t, double a,
                                       double b)
{
  double L = 0;
  for (int32_t j = 0; j < n; j++) {
    const double z = a + b * x[j];
    L += w[j] * pb_fragility__softplus_neg(z) + (w[j] - t[j]) * z;
  }
  return L;
}

/* Newton steps from the identity map (a, b) = (0, 1), halved until the loss falls while the predicted
 * decrease exceeds 1e-10 (1 + |loss|), taken whole below that (near the minimum, where the loss's rounding
 * hides the decrease and Newton converges quadratically), until a step moves neither a nor b beyond 1e-14
 * relative.  Returns 1 when converged. */
static int pb_fragility__platt_newton(int32_t n, const double *x, const double *w, const double *t, double *a,
                                      double *b)
{
  double L = pb_fragility__platt_loss(n, x, w, t, *a, *b), dec = INFINITY;
  for (int it = 0; it < 100; it++) {
    double g0 = 0, g1 = 0, h00 = 0, h01 = 0, h11 = 0;
    for (int32_t j = 0; j < n; j++) {
      const double p = 1 / (1 + exp(-(*a + *b * x[j]))), h = w[j] * p * (1 - p), r = w[j] * p - t[j];
      g0 += r, g1 += r * x[j], h00 += h, h01 += h * x[j], h11 += h * x[j] * x[j];
    }
    const double det = h00 * h11 - h01 * h01;
    if (!(det > 0)) return 0;
    const double da = -(h11 * g0 - h01 * g1) / det, db = -(h00 * g1 - h01 * g0) / det;
    dec = -(g0 * da + g1 * db); /* twice the predicted decrease of the loss */
    if (fabs(da) <= 1e-14 * (1 + fabs(*a)) && fabs(db) <= 1e-14 * (1 + fabs(*b))) {
      *a += da, *b += db;
      return 1;
    }
    double step = 1;
    if (dec > 1e-10 * (1 + fabs(L)))
      for (; step > 1e-12; step /= 2)
        if (pb_fragility__platt_loss(n, x, w, t, *a + step * da, *b + step * db) < L) break;
    if (!(step > 1e-12)) return 0;
    *a += step * da, *b += step * db;
    L = pb_fragility__platt_loss(n, x, w, t, *a, *b);
  }
  return dec <= 1e-10 * (1 + fabs(L)); /* rounding kept the last steps just above the tolerance */
}

int pb_fragility_qmap_fit(int32_t n, const double *s, const double *n_correct, const double *n_wrong,
                          struct pb_fragility_qmap *m)
{
  double *x = pb_malloc((size_t)(n > 0 ? n : 1) * 3 * sizeof(double)), *w = x + n, *t = w + n;
  double n_pos = 0, n_neg = 0;
  int32_t k = 0;
  for (int32_t j = 0; j < n; j++)
    if (s[j] > 0 && s[j] < 1) n_pos += n_correct[j], n_neg += n_wrong[j];
  const double tp = (n_pos + 1) / (n_pos + 2), tn = 1 / (n_neg + 2);
  for (int32_t j = 0; j < n; j++)
    if (s[j] > 0 && s[j] < 1 && n_correct[j] + n_wrong[j] > 0)
      x[k] = log(s[j]) - log1p(-s[j]), w[k] = n_correct[j] + n_wrong[j], t[k++] = n_correct[j] * tp + n_wrong[j] * tn;
  double a = 0, b = 1;
  /* with one class the targets are constant and the minimum is the constant map b = 0 */
  const int ok = n_pos > 0 && n_neg > 0 && pb_fragility__platt_newton(k, x, w, t, &a, &b) && b > 0 && isfinite(a)
                 && isfinite(b);
  *m = (struct pb_fragility_qmap){0, ok ? a : NAN, ok ? b : NAN};
  free(x);
  return ok;
}

/* What both arms share: the images with a group signal (every part of either arm) by their distinct raw
 * scores, and per score the correct and wrong images of parts A and B. */
struct pb_fragility__qunit {
  int32_t d;                   /* distinct raw scores */
  double *v;                   /* [d] ascending */
  int32_t *rank;               /* [n] image i's score v[rank[i]] (-1 without a signal) */
  double *cnt;                 /* [4][d]: part A correct, part A wrong, part B correct, part B wrong */
};

static void pb_fragility__qunit_init(const struct pb_fragility_input *in, struct pb_fragility__qunit *U)
{
  const size_t nn = (size_t)(in->n > 0 ? in->n : 1);
  U->v = pb_malloc(nn * sizeof(double));
  U->rank = pb_malloc(nn * sizeof(int32_t));
  int32_t m = 0;
  for (int32_t i = 0; i < in->n; i++)
    if (!isnan(in->u[i])) U->v[m++] = in->s[i];
  gsl_sort(U->v, 1, (size_t)m);
  U->d = 0;
  for (int32_t i = 0; i < m; i++)
    if (i == 0 || U->v[i] != U->v[i - 1]) U->v[U->d++] = U->v[i];
  U->cnt = pb_calloc((size_t)(U->d > 0 ? U->d : 1) * 4, sizeof(double));
  for (int32_t i = 0; i < in->n; i++) {
    U->rank[i] = -1;
    if (isnan(in->u[i])) continue;
    int32_t lo = 0, hi = U->d - 1; /* the one j with v[j] = s */
    while (lo < hi) {
      const int32_t mid = (lo + hi) / 2;
      if (U->v[mid] < in->s[i]) lo = mid + 1;
      else hi = mid;
    }
    U->rank[i] = lo;
    if (in->part[i] != PB_FRAGILITY_PART_E) U->cnt[(size_t)(2 * in->part[i] + !in->correct[i]) * U->d + lo]++;
  }
}

static void pb_fragility__qunit_free(struct pb_fragility__qunit *U)
{
  free(U->v), free(U->rank), free(U->cnt);
}

/* ------------------------------------------------------------ one arm */

/* Values of sorted @p v that differ from their predecessor, the first included. */
static int64_t pb_fragility__distinct(const double *v, int64_t n)
{
  int64_t d = n > 0;
  for (int64_t i = 1; i < n; i++) d += v[i] != v[i - 1];
  return d;
}

/* |x - y| of two fields of arm records: 0 when they are the same value (inf, or NaN on both sides), inf
 * when only one is NaN. */
static double pb_fragility__field_diff(double x, double y)
{
  if (x == y || (isnan(x) && isnan(y))) return 0;
  return isnan(x) || isnan(y) ? INFINITY : fabs(x - y);
}

/* The largest difference of the structural quantities of two arm records: the values the rate part's
 * counts on the partition determine (G_R, FAUC, rho_plus, the profile at the bound's radius, selective
 * coverage, risk, envelope and relative increase, and the profile and variance-law blocks); not ECE, which
 * reads the scores, nor the counts of bins and groups, which the assignment changes already show. */
static double pb_fragility__struct_diff(const double *x, const double *y, int32_t len)
{
  static const int f[] = {PB_FA_G_R, PB_FA_G_R_CORR, PB_FA_FAUC_UP, PB_FA_FAUC_DOWN,
                          PB_FA_RHO_PLUS, PB_FA_PLUGIN_LCB_RHO, PB_FA_SR_COV80, PB_FA_SR_RISK80, PB_FA_SR_ENV80,
                          PB_FA_SR_REL80, PB_FA_SR_COV90, PB_FA_SR_RISK90, PB_FA_SR_ENV90, PB_FA_SR_REL90};
  double d = 0;
  for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) d = fmax(d, pb_fragility__field_diff(x[f[k]], y[f[k]]));
  for (int32_t k = PB_FA_FIXED; k < len; k++) d = fmax(d, pb_fragility__field_diff(x[k], y[k]));
  return d;
}

/* A value held by @p w images. */
struct pb_fragility__held {
  double v, w;
};

static int pb_fragility__cmp_held(const void *a, const void *b)
{
  const double x = ((const struct pb_fragility__held *)a)->v, y = ((const struct pb_fragility__held *)b)->v;
  return (x > y) - (x < y);
}

/* What one arm's maps share: the unit's scores, its partition, rate part, raw assignments and summaries. */
struct pb_fragility__qarm {
  const struct pb_fragility_input *in;
  const struct pb_fragility_options *o;
  const struct pb_fragility__qunit *U;
  enum pb_fragility_part fit, rate;
  const struct pb_fragility_partition *p;
  struct pb_fragility_partition own; /* p when the input did not bring it */
  int32_t *bin, *grp;          /* [n] raw bin and group of the images with a signal (-1 for the others) */
  int32_t *mbin, *mgrp;        /* [n] the same under a map */
  double *ms;                  /* [n] mapped scores (NaN without a signal) */
  double *mv;                  /* [d] the map at each distinct raw score */
  int32_t *vbin;               /* [d] the bin of each mapped distinct score */
  double *raw, *map;           /* arm records of the rate part: raw scores, then a map's */
  struct pb_fragility__tally R;
  struct pb_fragility_law law;
};

/* The rate part's tally with scores @p s on partition @p p into the arm record @p rec (NaN when the rate
 * part has no image); @p bin / @p grp, when given, the assignments to use instead of p's. */
static void pb_fragility__qsummary(struct pb_fragility__qarm *A, const struct pb_fragility_partition *p,
                                   const double *s, const int32_t *bin, const int32_t *grp, double *rec)
{
  const struct pb_fragility_input *in = A->in;
  pb_fragility__tally_clear(&A->R);
  for (int32_t i = 0; i < in->n; i++) {
    if (in->part[i] != A->rate || isnan(in->u[i])) continue;
    const int32_t b = bin ? bin[i] : pb_fragility_bin(p, s[i]), g = grp ? grp[i] : pb_fragility_group(p, b, in->u[i]);
    pb_fragility__add(&A->R, b, g, in->correct[i], s[i]);
  }
  const int32_t len = PB_FRAGILITY_ARM_LEN(A->o->n_grid);
  memset(rec, 0, (size_t)len * sizeof(double));
  if (A->R.total > 0) pb_fragility__summaries(&A->R, A->o, &A->law, rec);
  else
    for (int32_t f = 0; f < len; f++) rec[f] = NAN;
}

/* Mean binary negative log-likelihood of correctness under probability p[j] at distinct raw score j over
 * the rate part's images whose raw score lies in (0, 1) (at 0 or 1 every logistic map agrees with the raw
 * score). */
static double pb_fragility__nll(const struct pb_fragility__qarm *A, const double *p)
{
  const int32_t d = A->U->d;
  const double *c = A->U->cnt + (size_t)2 * A->rate * d, *w = c + d, *v = A->U->v;
  double sum = 0, n = 0;
  for (int32_t j = 0; j < d; j++) {
    if (!(v[j] > 0 && v[j] < 1) || c[j] + w[j] == 0) continue;
    sum -= (c[j] > 0 ? c[j] * log(p[j]) : 0) + (w[j] > 0 ? w[j] * log1p(-p[j]) : 0);
    n += c[j] + w[j];
  }
  return n > 0 ? sum / n : NAN;
}

/* The edges of the readout refitted on the mapped scores: the order statistics of the fitting part's
 * mapped scores (pb_fragility_partition_fit's), from the distinct scores and their images. */
static void pb_fragility__qrefit_edges(const struct pb_fragility__qarm *A, double *edge)
{
  const int32_t d = A->U->d, J = A->p->J;
  const double *c = A->U->cnt + (size_t)2 * A->fit * d, *w = c + d;
  struct pb_fragility__held *h = pb_malloc((size_t)(d > 0 ? d : 1) * sizeof *h);
  int32_t nh = 0;
  int64_t n = 0;
  for (int32_t j = 0; j < d; j++)
    if (c[j] + w[j] > 0) h[nh++] = (struct pb_fragility__held){A->mv[j], c[j] + w[j]}, n += (int64_t)(c[j] + w[j]);
  qsort(h, (size_t)nh, sizeof *h, pb_fragility__cmp_held);
  int64_t below = 0; /* images before h[j] */
  for (int32_t k = 1, j = 0; k < J; k++) {
    const int64_t pos = (int64_t)k * n / J;
    while (j < nh && below + (int64_t)h[j].w <= pos) below += (int64_t)h[j++].w;
    edge[k - 1] = j < nh ? h[j].v : INFINITY;
  }
  free(h);
}

/* The readout refitted on the mapped scores (Q.7) against the raw one: refit edges unlike the
 * pushed-forward @p pp's, the largest change of the upward profile on the grid and the relative change of
 * FAUC_up (NaN when the raw FAUC_up is 0).  When its edges are pp's and no fitting image changed bin, the
 * refit is pp itself (each bin holds the same fitting images, so the same quantile cuts of U) and A->map
 * (pp's record) is its record; otherwise it is fitted and summarised anew. */
static void pb_fragility__qrefit(struct pb_fragility__qarm *A, const struct pb_fragility_partition *pp, double *x)
{
  const int32_t J = pp->J;
  double *edge = pb_malloc((size_t)(J > 1 ? J - 1 : 1) * sizeof(double));
  pb_fragility__qrefit_edges(A, edge);
  int64_t edges = 0;
  for (int32_t k = 0; k + 1 < J; k++) edges += memcmp(&edge[k], &pp->edge[k], sizeof(double)) != 0;
  free(edge);
  if (edges > 0 || x[PB_FQ_TRAIN_BIN] > 0) {
    struct pb_fragility_input min = *A->in;
    min.s = A->ms;
    struct pb_fragility_partition pr;
    pb_fragility_partition_fit(&min, A->fit, J, pp->K, &pr);
    pb_fragility__qsummary(A, &pr, A->ms, NULL, NULL, A->map);
    pb_fragility_partition_free(&pr);
  }
  double dp = 0;
  for (int32_t k = 0; k < A->o->n_grid; k++)
    dp = fmax(dp, pb_fragility__field_diff(A->map[PB_FA_FIXED + k], A->raw[PB_FA_FIXED + k]));
  x[PB_FQ_REFIT_EDGES] = (double)edges;
  x[PB_FQ_REFIT_PROFILE] = dp;
  x[PB_FQ_REFIT_FAUC] = A->raw[PB_FA_FAUC_UP] != 0
                        ? (A->map[PB_FA_FAUC_UP] - A->raw[PB_FA_FAUC_UP]) / A->raw[PB_FA_FAUC_UP] : NAN;
}

/* Whether @p x is ascending already, as the image of the ascending raw scores under each of our maps is
 * (a heap sort of an ascending array still costs n log n; six per unit).  Only where a sort could not
 * change a bit: no NaN (the comparisons fail) and no -0, which a sort may swap with an equal +0. */
static int pb_fragility__ascending(const double *x, int32_t n)
{
  for (int32_t j = 0; j < n; j++)
    if ((j > 0 && !(x[j - 1] <= x[j])) || (x[j] == 0 && signbit(x[j]))) return 0;
  return 1;
}

/* One map of the arm into @p x (PB_FQ_FIXED doubles).  The map is evaluated once per distinct raw score
 * and so is the bin of the mapped score; an image's group is looked up again only where its bin moved (the
 * pushed-forward partition keeps the cuts). */
static void pb_fragility__qmap_one(struct pb_fragility__qarm *A, const struct pb_fragility_qmap *m, int defined,
                                   double *x)
{
  const struct pb_fragility_input *in = A->in;
  const int32_t J = A->p->J, d = A->U->d;
  for (int f = 0; f < PB_FQ_FIXED; f++) x[f] = NAN;
  x[PB_FQ_DEFINED] = defined;
  x[PB_FQ_INTERCEPT] = m->power ? NAN : m->a;
  x[PB_FQ_SLOPE] = m->b;
  if (!defined) return;
  /* the fixed partition pushed forward: edges m(e_k), the readout's cuts as fitted */
  struct pb_fragility_partition pp = *A->p;
  pp.edge = pb_malloc((size_t)(J > 1 ? J - 1 : 1) * sizeof(double));
  for (int32_t k = 0; k + 1 < J; k++) pp.edge[k] = pb_fragility_qmap_apply(m, A->p->edge[k]);
  for (int32_t j = 0; j < d; j++) {
    A->mv[j] = pb_fragility_qmap_apply(m, A->U->v[j]);
    A->vbin[j] = pb_fragility_bin(&pp, A->mv[j]);
  }
  int64_t c[6] = {0, 0, 0, 0, 0, 0}; /* train: images, bin, readout changes; held-out the same */
  for (int32_t i = 0; i < in->n; i++) {
    const int32_t r = A->U->rank[i];
    A->ms[i] = r >= 0 ? A->mv[r] : NAN;
    if (r < 0) continue;
    const int32_t b = A->vbin[r], g = b == A->bin[i] ? A->grp[i] : pb_fragility_group(&pp, b, in->u[i]);
    int64_t *k = c + (in->part[i] == A->fit ? 0 : 3);
    k[0]++, k[1] += b != A->bin[i], k[2] += b != A->bin[i] || g != A->grp[i];
    A->mbin[i] = b, A->mgrp[i] = g;
  }
  pb_fragility__qsummary(A, &pp, A->ms, A->mbin, A->mgrp, A->map);
  x[PB_FQ_N_TRAIN] = (double)c[0], x[PB_FQ_TRAIN_BIN] = (double)c[1], x[PB_FQ_TRAIN_READOUT] = (double)c[2];
  x[PB_FQ_N_EVAL] = (double)c[3], x[PB_FQ_EVAL_BIN] = (double)c[4], x[PB_FQ_EVAL_READOUT] = (double)c[5];
  x[PB_FQ_STRUCT_DIFF] = pb_fragility__struct_diff(A->raw, A->map, PB_FRAGILITY_ARM_LEN(A->o->n_grid));
  x[PB_FQ_ECE_RAW] = A->raw[PB_FA_ECE];
  x[PB_FQ_ECE_MAP] = A->map[PB_FA_ECE];
  x[PB_FQ_NLL_RAW] = pb_fragility__nll(A, A->U->v);
  x[PB_FQ_NLL_MAP] = pb_fragility__nll(A, A->mv);
  pb_fragility__qrefit(A, &pp, x);
  if (!pb_fragility__ascending(A->mv, d)) /* the distinct mapped values, sorted: no order of the map assumed */
    gsl_sort(A->mv, 1, (size_t)d);
  x[PB_FQ_DISTINCT] = d;
  x[PB_FQ_MERGED] = (double)(d - pb_fragility__distinct(A->mv, d));
  free(pp.edge);
}

/* The arm fitted on part @p fit: its partition, raw assignments and summaries, then each map's record. */
static void pb_fragility__qmap_arm(const struct pb_fragility_input *in, const struct pb_fragility_options *o,
                                   const struct pb_fragility__qunit *U, enum pb_fragility_part fit,
                                   const struct pb_fragility_qmap *fitted, int ok, double *rec)
{
  const int32_t n = in->n, len = PB_FRAGILITY_ARM_LEN(o->n_grid);
  const size_t nn = (size_t)(n > 0 ? n : 1), nd = (size_t)(U->d > 0 ? U->d : 1);
  struct pb_fragility__qarm A = {.in = in, .o = o, .U = U, .fit = fit};
  A.rate = fit == PB_FRAGILITY_PART_A ? PB_FRAGILITY_PART_B : PB_FRAGILITY_PART_A;
  A.p = pb_fragility__partition(in, fit, o->n_bins, o->n_groups, &A.own);
  A.bin = pb_malloc((nn * 4 + nd) * sizeof(int32_t)), A.grp = A.bin + nn, A.mbin = A.grp + nn, A.mgrp = A.mbin + nn;
  A.vbin = A.mgrp + nn;
  A.ms = pb_malloc((nn + nd) * sizeof(double)), A.mv = A.ms + nn;
  A.raw = pb_malloc((size_t)len * 2 * sizeof(double)), A.map = A.raw + len;
  pb_fragility__tally_init(&A.R, o->n_bins, o->n_groups);
  pb_fragility_law_init(&A.law);
  for (int32_t j = 0; j < U->d; j++) A.vbin[j] = pb_fragility_bin(A.p, U->v[j]); /* once per distinct score */
  int64_t n_fit = 0;
  for (int32_t i = 0; i < n; i++) {
    A.bin[i] = A.grp[i] = A.mbin[i] = A.mgrp[i] = -1;
    if (U->rank[i] < 0) continue;
    A.bin[i] = A.vbin[U->rank[i]];
    A.grp[i] = pb_fragility_group(A.p, A.bin[i], in->u[i]);
    n_fit += in->part[i] == fit;
  }
  pb_fragility__qsummary(&A, A.p, in->s, A.bin, A.grp, A.raw);
  const int usable = n_fit > 0 && A.R.total > 0; /* a partition and a rate part to compare */
  for (int32_t k = 0; k < PB_FRAGILITY_QMAPS; k++) {
    struct pb_fragility_qmap m = *fitted;
    if (k != PB_FRAGILITY_QMAP_FITTED) pb_fragility_qmap_stress(k, &m);
    pb_fragility__qmap_one(&A, &m, usable && (k != PB_FRAGILITY_QMAP_FITTED || ok), rec + (size_t)k * PB_FQ_FIXED);
  }
  pb_fragility_law_free(&A.law);
  pb_fragility__tally_free(&A.R);
  pb_fragility_partition_free(&A.own);
  free(A.bin), free(A.ms), free(A.raw);
}

/* ------------------------------------------------------------ pooled ties (Q.5) */

/* Tie groups of @p n values with their images (sorted here): values whose images add up to two or more. */
static int64_t pb_fragility__tie_groups(struct pb_fragility__held *h, int32_t n)
{
  qsort(h, (size_t)n, sizeof *h, pb_fragility__cmp_held);
  int64_t g = 0;
  for (int32_t i = 0, j; i < n; i = j) {
    double w = 0;
    for (j = i; j < n && h[j].v == h[i].v; j++) w += h[j].w;
    g += w >= 2;
  }
  return g;
}

/* Parts A and B each scored by the map fitted on the other part (maps[0] was fitted on part A). */
static void pb_fragility__qties(const struct pb_fragility__qunit *U, const struct pb_fragility_qmap *maps,
                                const int *ok, double *x)
{
  const int32_t d = U->d;
  struct pb_fragility__held *h = pb_malloc((size_t)(d > 0 ? d : 1) * 2 * sizeof *h);
  const int both = ok[0] && ok[1];
  int64_t images = 0, raw = 0, within = 0, spanning = 0, fold_raw = 0, fold_mapped = 0;
  int32_t nh = 0;
  for (int f = 0; f < 2; f++) {
    const double *c = U->cnt + (size_t)2 * f * d, *w = c + d;
    int32_t n0 = nh;
    for (int32_t j = 0; j < d; j++) {
      if (c[j] + w[j] == 0) continue;
      images += (int64_t)(c[j] + w[j]);
      fold_raw += c[j] + w[j] >= 2;
      if (both) h[nh++] = (struct pb_fragility__held){pb_fragility_qmap_apply(&maps[1 - f], U->v[j]), c[j] + w[j]};
    }
    fold_mapped += pb_fragility__tie_groups(h + n0, nh - n0);
  }
  for (int32_t j = 0; j < d; j++) {
    const double na = U->cnt[j] + U->cnt[(size_t)d + j], nb = U->cnt[(size_t)2 * d + j] + U->cnt[(size_t)3 * d + j];
    if (na + nb < 2) continue;
    raw++, within += na == 0 || nb == 0, spanning += na > 0 && nb > 0;
  }
  x[PB_FT_IMAGES] = (double)images;
  x[PB_FT_RAW_GROUPS] = (double)raw;
  x[PB_FT_WITHIN] = (double)within;
  x[PB_FT_SPANNING] = (double)spanning;
  x[PB_FT_FOLD_RAW] = (double)fold_raw;
  x[PB_FT_FOLD_MAPPED] = both ? (double)fold_mapped : NAN;
  x[PB_FT_MAPPED] = both ? (double)pb_fragility__tie_groups(h, nh) : NAN;
  free(h);
}

void pb_fragility_qmap(const struct pb_fragility_input *in, const struct pb_fragility_options *o, double *rec)
{
  struct pb_fragility__qunit U;
  pb_fragility__qunit_init(in, &U);
  struct pb_fragility_qmap fitted[2];
  int ok[2];
  for (int arm = 0; arm < 2; arm++) /* the map of arm A on part A's images, where its partition is fitted */
    ok[arm] = pb_fragility_qmap_fit(U.d, U.v, U.cnt + (size_t)2 * arm * U.d, U.cnt + (size_t)(2 * arm + 1) * U.d,
                                    &fitted[arm]);
  for (int arm = 0; arm < 2; arm++)
    pb_fragility__qmap_arm(in, o, &U, arm ? PB_FRAGILITY_PART_B : PB_FRAGILITY_PART_A, &fitted[arm], ok[arm],
                           rec + (size_t)arm * PB_FRAGILITY_QMAPS * PB_FQ_FIXED);
  pb_fragility__qties(&U, fitted, ok, rec + 2 * PB_FRAGILITY_QMAPS * PB_FQ_FIXED);
  pb_fragility__qunit_free(&U);
}
