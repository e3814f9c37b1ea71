/* Restricted fragility from stored records (seed 001 Sections 4 and 6,
 * Appendices L, N, N.1): bins and within-bin groups fitted on one part, the
 * finite law of group rates per bin from another, the exact restricted
 * profile, FAUC, the binomial-noise-corrected grouping variance, the
 * split-sample lower confidence bound, the held-out drift diagnostic with its
 * permutation null, and the composition/conditional split of natural drift.
 * Pure computation: no MPI, no I/O.  Formulas: docs/fragility.md. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "pairbound/cell.h"
#include "pairbound/checksum.h"
#include "pairbound/draws.h"
#include "pairbound/error.h"
#include "pairbound/fragility.h"
#include "pairbound/parse.h"
#include "pairbound/rng.h"
#include "fragility_kernel_internal.h"

void pb_fragility_options_default(struct pb_fragility_options *o)
{
  o->n_bins = PB_FRAGILITY_BINS;
  o->n_groups = PB_FRAGILITY_GROUPS;
  o->n_grid = PB_FRAGILITY_GRID;
  o->rho_min = PB_FRAGILITY_RHO_MIN;
  o->rho_max = PB_FRAGILITY_RHO_MAX;
  o->rho_lcb = PB_FRAGILITY_RHO_LCB;
  o->alpha = PB_FRAGILITY_ALPHA;
  o->seed = PB_FRAGILITY_SEED;
  o->n_null = PB_FRAGILITY_NULL;
}

enum pb_fragility_part pb_fragility_part_of(uint64_t seed, const char *image_id)
{
  struct pb_rng r;
  pb_rng_init(&r, seed, PB_RNG_FRAGILITY_SPLIT, pb_checksum_sha256_key(image_id), 0);
  double x = pb_rng_uniform(&r);
  return x < 0.4 ? PB_FRAGILITY_PART_A : x < 0.8 ? PB_FRAGILITY_PART_B : PB_FRAGILITY_PART_E;
}

/* Interior radii are rounded to 4 significant digits so that column names
 * stay short and name exactly the radius used (spacing in log rho then
 * departs from even by under 0.05%; the trapezoids use the rounded values). */
double pb_fragility_grid(const struct pb_fragility_options *o, int32_t k)
{
  if (o->n_grid == 1 || k == 0) return o->rho_min;
  if (k == o->n_grid - 1) return o->rho_max;
  char buf[32];
  snprintf(buf, sizeof buf, "%.4g", o->rho_min * pow(o->rho_max / o->rho_min, (double)k / (o->n_grid - 1)));
  double rho;
  return pb_parse_real(buf, &rho) == PB_OK ? rho : NAN;
}

/* ------------------------------------------------------------ partition */

/* Order statistic cut points: c_k = x_(floor(k n / m)), k = 1..m-1, of sorted x.
 * Order statistics commute with strictly increasing maps, so a monotone
 * transform of the score moves the edges with it and no image changes bin. */
static void pb_fragility__cuts(const double *sorted, int32_t n, int32_t m, double *c)
{
  for (int32_t k = 1; k < m; k++) c[k - 1] = n > 0 ? sorted[(int64_t)k * n / m] : INFINITY;
}

/* The number of c[i] <= x (c ascending), without a branch on the data: every image of every drift cell
 * is binned and grouped, and a plain binary search mispredicted about every other step.  The window
 * [base, base + n) holds the answer's boundary: what precedes it is <= x and what follows it is > x. */
static int32_t pb_fragility__count_le(const double *c, int32_t m, double x)
{
  const double *base = c;
  int32_t n = m;
  while (n > 1) {
    const int32_t half = n / 2;
    base += (base[half - 1] <= x) * half; /* arithmetic, not ?:, which gcc compiled to a branch */
    n -= half;
  }
  return (int32_t)(base - c) + (n == 1 && base[0] <= x);
}

void pb_fragility_partition_fit(const struct pb_fragility_input *in, enum pb_fragility_part fit, int32_t J, int32_t K,
                                struct pb_fragility_partition *p)
{
  *p = (struct pb_fragility_partition){
    .J = J, .K = K, .s = in->s, .u = in->u, .part = in->part, .n = in->n, .fit = fit};
  p->edge = pb_malloc((size_t)(J > 1 ? J - 1 : 1) * sizeof(double));
  p->cut = pb_malloc((size_t)J * (K > 1 ? K - 1 : 1) * sizeof(double));
  size_t nn = (size_t)(in->n > 0 ? in->n : 1);
  double *x = pb_malloc(nn * sizeof(double)), *ub = pb_malloc(nn * sizeof(double));
  int32_t *bin = pb_malloc(nn * sizeof(int32_t)), *b0 = pb_calloc((size_t)J + 1, sizeof(int32_t)), n = 0;
  for (int32_t i = 0; i < in->n; i++)
    if (in->part[i] == fit && !isnan(in->u[i])) x[n++] = in->s[i];
  gsl_sort(x, 1, (size_t)n);
  pb_fragility__cuts(x, n, J, p->edge);
  /* the fitting images' U grouped by bin (counting sort), then cut per bin */
  for (int32_t i = 0; i < in->n; i++) {
    bin[i] = in->part[i] == fit && !isnan(in->u[i]) ? pb_fragility_bin(p, in->s[i]) : -1;
    if (bin[i] >= 0) b0[bin[i] + 1]++;
  }
  for (int32_t b = 0; b < J; b++) b0[b + 1] += b0[b];
  for (int32_t i = 0; i < in->n; i++)
    if (bin[i] >= 0) ub[b0[bin[i]]++] = in->u[i];
  for (int32_t b = J; b > 0; b--) b0[b] = b0[b - 1]; /* the fill advanced each start to the next bin's */
  b0[0] = 0;
  for (int32_t b = 0; b < J; b++) {
    int32_t nb = b0[b + 1] - b0[b];
    gsl_sort(ub + b0[b], 1, (size_t)nb);
    pb_fragility__cuts(ub + b0[b], nb, K, p->cut + (size_t)b * (K - 1));
  }
  free(x);
  free(ub);
  free(bin);
  free(b0);
}

const struct pb_fragility_partition *pb_fragility__partition(const struct pb_fragility_input *in,
                                                             enum pb_fragility_part fit, int32_t J, int32_t K,
                                                             struct pb_fragility_partition *own)
{
  memset(own, 0, sizeof *own);
  const struct pb_fragility_partition *p = fit <= PB_FRAGILITY_PART_B ? in->fitted[fit] : NULL;
  /* fitted on these very images' scores and signals (a copy with others must not take it) */
  if (p && p->J == J && p->K == K && p->s == in->s && p->u == in->u && p->part == in->part && p->n == in->n &&
      p->fit == (int32_t)fit)
    return p;
  pb_fragility_partition_fit(in, fit, J, K, own);
  return own;
}

void pb_fragility_partition_free(struct pb_fragility_partition *p)
{
  free(p->edge);
  free(p->cut);
  memset(p, 0, sizeof *p);
}

int32_t pb_fragility_bin(const struct pb_fragility_partition *p, double s)
{
  return pb_fragility__count_le(p->edge, p->J - 1, s);
}

int32_t pb_fragility_group(const struct pb_fragility_partition *p, int32_t bin, double u)
{
  return pb_fragility__count_le(p->cut + (size_t)bin * (p->K - 1), p->K - 1, u);
}

/* ------------------------------------------------------------ counts */

void pb_fragility__tally_init(struct pb_fragility__tally *t, int32_t J, int32_t K)
{
  t->J = J;
  t->K = K;
  t->n = pb_malloc((size_t)J * K * sizeof(int64_t));
  t->k = pb_malloc((size_t)J * K * sizeof(int64_t));
  t->nb = pb_malloc((size_t)J * sizeof(int64_t));
  t->ssum = pb_malloc((size_t)J * sizeof(double));
}

void pb_fragility__tally_clear(struct pb_fragility__tally *t)
{
  memset(t->n, 0, (size_t)t->J * t->K * sizeof(int64_t));
  memset(t->k, 0, (size_t)t->J * t->K * sizeof(int64_t));
  memset(t->nb, 0, (size_t)t->J * sizeof(int64_t));
  memset(t->ssum, 0, (size_t)t->J * sizeof(double));
  t->total = 0;
}

void pb_fragility__tally_free(struct pb_fragility__tally *t)
{
  free(t->n);
  free(t->k);
  free(t->nb);
  free(t->ssum);
}

/* The finite law of group rates of bin b (groups with images; masses n_g / n_b).
 * eta[g] is the group rate (NaN for an empty group). */
int pb_fragility__bin_law(const struct pb_fragility__tally *t, int32_t b, struct pb_fragility_law *law,
                          double *eta, double *q)
{
  int32_t K = t->K;
  for (int32_t g = 0; g < K; g++) {
    int64_t n = t->n[(size_t)b * K + g];
    q[g] = t->nb[b] > 0 ? (double)n / (double)t->nb[b] : 0;
    eta[g] = n > 0 ? (double)t->k[(size_t)b * K + g] / (double)n : NAN;
  }
  if (t->nb[b] == 0) return 0;
  double v[PB_FRAGILITY_MAX_GROUPS], m[PB_FRAGILITY_MAX_GROUPS];
  int32_t na = 0;
  for (int32_t g = 0; g < K; g++)
    if (q[g] > 0) v[na] = eta[g], m[na++] = q[g];
  return pb_fragility_law_set(law, v, m, na) == PB_OK;
}

/* r of group g under the law's optimiser (weights per distinct atom); 1 for
 * groups without rate data, which the reweighting cannot address.  The law
 * is built from these rates, so every rate is one of its atoms (NaN, which
 * drops the bin below, would mark a broken invariant). */
double pb_fragility__group_weight(const struct pb_fragility_law *law, const double *r, double eta)
{
  if (isnan(eta)) return 1;
  double z = eta - law->mean;
  for (int32_t i = 0; i < law->n; i++)
    if (law->z[i] == z) return r[i];
  return NAN;
}

/* ------------------------------------------------------------ held-out drift */

/* Agreement of predicted and realised held-out drift at rho: per bin, the
 * upward optimiser fitted on the rate part R (no evaluation labels) predicts
 * Phi_b(rho); applied to part E it realises
 *   sum_g qE r eta_E / sum_g qE r - sum_g qE eta_E.
 * Agreement = Spearman correlation over bins with both parts present (NaN
 * with fewer than 3 such bins or no variation). */
static double pb_fragility__agreement(const struct pb_fragility__tally *R, const struct pb_fragility__tally *E,
                                      double rho, struct pb_fragility_law *law, double *work)
{
  int32_t J = R->J, K = R->K, cnt = 0;
  double *pred = work, *real = work + J, *gsl_work = work + 2 * J;
  double eta[PB_FRAGILITY_MAX_GROUPS], q[PB_FRAGILITY_MAX_GROUPS], r[PB_FRAGILITY_MAX_GROUPS];
  for (int32_t b = 0; b < J; b++) {
    if (R->nb[b] == 0 || E->nb[b] == 0 || !pb_fragility__bin_law(R, b, law, eta, q)) continue;
    pb_fragility_weights(law, PB_FRAGILITY_UP, rho, r);
    double sw = 0, swe = 0, base = 0;
    for (int32_t g = 0; g < K; g++) {
      int64_t ne = E->n[(size_t)b * K + g];
      if (ne == 0) continue;
      double qe = (double)ne / (double)E->nb[b], ee = (double)E->k[(size_t)b * K + g] / (double)ne;
      double w = pb_fragility__group_weight(law, r, eta[g]);
      sw += qe * w;
      swe += qe * w * ee;
      base += qe * ee;
    }
    if (!(sw > 0)) continue;
    pred[cnt] = pb_fragility_profile(law, PB_FRAGILITY_UP, rho);
    real[cnt++] = swe / sw - base;
  }
  if (cnt < 3) return NAN;
  double rs = gsl_stats_spearman(pred, 1, real, 1, (size_t)cnt, gsl_work);
  return isfinite(rs) ? rs : NAN;
}

/* ------------------------------------------------------------ lower bound */

/* The x in (0, 1) with P(Beta(a, b) <= x) = t (lower) or P(Beta(a, b) > x)
 * = t (upper).  gsl_cdf_beta_Pinv fails to converge for large a and b (a few
 * thousand), so: Newton steps on GSL's incomplete beta from the mean, kept
 * inside a shrinking bracket, bisecting whenever a step leaves it. */
static double pb_fragility__beta_quantile(double t, double a, double b, int upper)
{
  double lo = 0, hi = 1, x = a / (a + b);
  for (int it = 0; it < 200; it++) {
    double f = (upper ? t - gsl_cdf_beta_Q(x, a, b) : gsl_cdf_beta_P(x, a, b) - t); /* increasing in x */
    if (f > 0) hi = x;
    else lo = x;
    double d = gsl_ran_beta_pdf(x, a, b), nx = d > 0 ? x - f / d : -1;
    if (!(nx > lo && nx < hi)) nx = 0.5 * (lo + hi);
    if (fabs(nx - x) <= 1e-15 * fmax(x, 1e-300) || hi - lo <= 1e-300) return nx;
    x = nx;
  }
  return x;
}

/* The same quantiles recur: every arm of every unit asks at one Bonferroni level for counts that repeat
 * across bins, arms and units (a few thousand distinct ones on the paper's store, asked for tens of
 * thousands of times), and each costs tens of incomplete-beta evaluations.  So a direct-mapped memo per
 * thread; an entry holds its whole key and the quantile is a function of the key alone, so what the
 * memo holds never changes a result.  The shape parameters are counts >= 1 (the zeroed entries match no
 * key); other shapes (not whole, below 1 or past 2^31) are not memoised. */
#define PB_FRAGILITY_BQ_MEMO 32768
struct pb_fragility__bq {
  uint64_t key;                /* a << 32 | b << 1 | upper */
  double t, x;
};
static _Thread_local struct pb_fragility__bq pb_fragility__bq_memo[PB_FRAGILITY_BQ_MEMO];

static double pb_fragility__beta_quantile_memo(double t, double a, double b, int upper)
{
  /* only whole shapes in [1, 2^31) make a key (anything else, e.g. a caller's x > n + 1, is computed) */
  if (!(a >= 1 && b >= 1 && a < 2147483648.0 && b < 2147483648.0 && a == floor(a) && b == floor(b)))
    return pb_fragility__beta_quantile(t, a, b, upper);
  const uint64_t key = (uint64_t)a << 32 | (uint64_t)b << 1 | (uint64_t)(upper != 0);
  uint64_t h = key; /* splitmix64's finaliser: the keys are small integers in a few bits */
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  struct pb_fragility__bq *e = &pb_fragility__bq_memo[(h ^ (h >> 31)) % PB_FRAGILITY_BQ_MEMO];
  if (e->key != key || e->t != t) *e = (struct pb_fragility__bq){key, t, pb_fragility__beta_quantile(t, a, b, upper)};
  return e->x;
}

/* One-sided Clopper-Pearson limits of x successes in n trials at level a. */
static double pb_fragility__cp_lower(int64_t x, int64_t n, double a)
{
  return x <= 0 || n <= 0 ? 0 : pb_fragility__beta_quantile_memo(a, (double)x, (double)(n - x + 1), 0);
}

static double pb_fragility__cp_upper(int64_t x, int64_t n, double a)
{
  return n <= 0 || x >= n ? 1 : pb_fragility__beta_quantile_memo(a, (double)(x + 1), (double)(n - x), 1);
}

/* Split-sample lower confidence bound of the restricted profile at rho
 * (docs/fragility.md, "Lower confidence bound"): per bin the best feasible
 * transfer of mass delta from a less-correct group i to a more-correct group
 * j, delta = min(q_i, sqrt(rho q_i q_j / (q_i + q_j))), moving reliability by
 * delta (eta_j - eta_i); evaluated at lower limits of the bin and group masses
 * and the rate gap, all J + 2 J K one-sided limits at level alpha / (J + 2JK)
 * (Bonferroni), so the bound holds at every radius at once. */
static double pb_fragility__lcb(const struct pb_fragility__tally *R, double rho, double alpha)
{
  int32_t J = R->J, K = R->K;
  double a = alpha / (J + 2.0 * J * K), lcb = 0;
  double qL[PB_FRAGILITY_MAX_GROUPS], lo[PB_FRAGILITY_MAX_GROUPS], hi[PB_FRAGILITY_MAX_GROUPS];
  for (int32_t b = 0; b < J; b++) {
    if (R->nb[b] == 0) continue;
    for (int32_t g = 0; g < K; g++) {
      int64_t n = R->n[(size_t)b * K + g], k = R->k[(size_t)b * K + g];
      qL[g] = pb_fragility__cp_lower(n, R->nb[b], a);
      lo[g] = pb_fragility__cp_lower(k, n, a);
      hi[g] = pb_fragility__cp_upper(k, n, a);
    }
    double best = 0;
    for (int32_t i = 0; i < K; i++)
      for (int32_t j = 0; j < K; j++) {
        double gap = lo[j] - hi[i];
        if (i == j || !(gap > 0) || !(qL[i] > 0) || !(qL[j] > 0)) continue;
        double step = fmin(qL[i], sqrt(rho * qL[i] * qL[j] / (qL[i] + qL[j])));
        best = fmax(best, step * gap);
      }
    lcb += pb_fragility__cp_lower(R->nb[b], R->total, a) * best;
  }
  return lcb;
}

/* ------------------------------------------------------------ one arm */

/* Binomial-noise correction of one bin's grouping variance: given the group
 * counts, E[G_plug] = G + sum_g q_g (1 - q_g) Var(eta_g), estimated without
 * bias by eta(1 - eta)/(n - 1) (1/4, the largest Bernoulli variance, when
 * n = 1); the corrected value is floored at 0. */
static double pb_fragility__corrected(double G, const double *eta, const double *q, const int64_t *n, int32_t K)
{
  double noise = 0;
  for (int32_t g = 0; g < K; g++) {
    if (n[g] == 0) continue;
    double v = n[g] > 1 ? eta[g] * (1 - eta[g]) / (double)(n[g] - 1) : 0.25;
    noise += q[g] * (1 - q[g]) * v;
  }
  return G > noise ? G - noise : 0;
}

/* Selective-risk transport at bin-boundary thresholds (Proposition 3,
 * Appendix K): accept the top bins by confidence until their rate-part mass
 * first reaches coverage c.  A score-preserving shift keeps that mass, so
 * coverage is unchanged, while the accepted set's accuracy can fall by at most
 * sum_acc w_b Phi_down_b(rho) / W: risk envelope = source risk + that;
 * relative increase = that / source risk (NaN when the risk is 0). */
static void pb_fragility__selective(int32_t J, const double *w, const double *rel, const double *down, double c,
                                    double *out)
{
  double W = 0, acc = 0, mv = 0;
  for (int32_t b = J - 1; b >= 0 && W < c; b--) {
    W += w[b];
    acc += w[b] * rel[b];
    mv += w[b] * down[b];
  }
  double risk = W > 0 ? 1 - acc / W : NAN, inc = W > 0 ? mv / W : NAN;
  out[0] = W;
  out[1] = risk;
  out[2] = risk + inc;
  out[3] = risk > 0 ? inc / risk : NAN;
}

/* Plug-in summaries of the rate part: G_R, corrected G_R, profiles and the
 * variance laws on the grid, FAUC, rho_plus, ECE, bins and groups present. */
void pb_fragility__summaries(const struct pb_fragility__tally *R, const struct pb_fragility_options *o,
                             struct pb_fragility_law *law, double *rec)
{
  int32_t J = R->J, K = R->K, G = o->n_grid;
  double *up = rec + PB_FA_FIXED, *down = up + G, *var = down + G, *cap = var + G;
  double eta[PB_FRAGILITY_MAX_GROUPS], q[PB_FRAGILITY_MAX_GROUPS];
  memset(up, 0, 4 * (size_t)G * sizeof(double));
  double gr = 0, grc = 0, rho_plus = INFINITY, at_lcb = 0, ece = 0;
  double *wv = pb_calloc((size_t)J * 3, sizeof(double)), *rel = wv + J, *dn = rel + J, rhos[PB_FRAGILITY_MAX_GRID];
  int32_t bins = 0, groups = 0;
  for (int32_t k = 0; k < G; k++) rhos[k] = pb_fragility_grid(o, k); /* once: each is formatted and parsed */
  for (int32_t b = 0; b < J; b++) {
    if (!pb_fragility__bin_law(R, b, law, eta, q)) continue;
    double w = (double)R->nb[b] / (double)R->total;
    wv[b] = w;
    rel[b] = law->mean;
    dn[b] = pb_fragility_profile(law, PB_FRAGILITY_DOWN, o->rho_lcb);
    bins++;
    for (int32_t g = 0; g < K; g++) groups += q[g] > 0;
    gr += w * law->G;
    grc += w * pb_fragility__corrected(law->G, eta, q, R->n + (size_t)b * K, K);
    if (law->G > 0) rho_plus = fmin(rho_plus, law->up.rho_plus);
    at_lcb += w * pb_fragility_profile(law, PB_FRAGILITY_UP, o->rho_lcb);
    ece += w * fabs(law->mean - R->ssum[b] / (double)R->nb[b]);
    for (int32_t k = 0; k < G; k++) {
      double rho = rhos[k], v = sqrt(rho * law->G);
      up[k] += w * pb_fragility_profile(law, PB_FRAGILITY_UP, rho);
      down[k] += w * pb_fragility_profile(law, PB_FRAGILITY_DOWN, rho);
      var[k] += w * v;
      cap[k] += w * fmin(v, law->up.top);
    }
  }
  double fu = 0, fd = 0; /* trapezoids in log rho */
  for (int32_t k = 1; k < G; k++) {
    double h = log(rhos[k] / rhos[k - 1]);
    fu += h * (up[k] + up[k - 1]) / 2;
    fd += h * (down[k] + down[k - 1]) / 2;
  }
  rec[PB_FA_BINS] = bins;
  rec[PB_FA_GROUPS] = groups;
  rec[PB_FA_G_R] = gr;
  rec[PB_FA_G_R_CORR] = grc;
  rec[PB_FA_FAUC_UP] = fu;
  rec[PB_FA_FAUC_DOWN] = fd;
  rec[PB_FA_RHO_PLUS] = rho_plus;
  rec[PB_FA_PLUGIN_LCB_RHO] = at_lcb;
  rec[PB_FA_ECE] = ece;
  pb_fragility__selective(J, wv, rel, dn, 0.8, rec + PB_FA_SR_COV80);
  pb_fragility__selective(J, wv, rel, dn, 0.9, rec + PB_FA_SR_COV90);
  free(wv);
}

static int pb_fragility__cmp_dbl(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Signed-drift permutation null: correctness shuffled within bins of the
 * rate part (one uniform permutation per bin from the resampling engine,
 * keyed by seed, unit x arm x bin and replicate), the optimiser refitted, the
 * agreement recomputed; median over replicates.  The rate items arrive
 * grouped by bin: bin b holds items [b0[b], b0[b + 1]) with groups grp[] and
 * correctness cor[]. */
static void pb_fragility__null(const struct pb_fragility_options *o, uint64_t item, const int32_t *b0,
                               const int32_t *grp, const uint8_t *cor, const struct pb_fragility__tally *E,
                               struct pb_fragility__tally *R, struct pb_fragility_law *law, double *work, double *rec)
{
  int32_t J = R->J, nr = b0[J];
  int32_t *perm = pb_malloc((size_t)(nr > 0 ? nr : 1) * sizeof(int32_t));
  double *vals = pb_malloc((size_t)(o->n_null > 0 ? o->n_null : 1) * sizeof(double));
  int32_t nv = 0;
  for (int32_t rep = 0; rep < o->n_null; rep++) {
    pb_fragility__tally_clear(R);
    for (int32_t b = 0; b < J; b++) {
      int32_t nb = b0[b + 1] - b0[b];
      pb_resample_perm_uniform(o->seed, PB_RNG_FRAGILITY_NULL, item * PB_FRAGILITY_MAX_BINS + (uint64_t)b, (uint32_t)rep, nb,
                               perm);
      for (int32_t j = 0; j < nb; j++) pb_fragility__add(R, b, grp[b0[b] + j], cor[b0[b] + perm[j]], 0);
    }
    double a = pb_fragility__agreement(R, E, o->rho_lcb, law, work);
    if (!isnan(a)) vals[nv++] = a;
  }
  qsort(vals, (size_t)nv, sizeof *vals, pb_fragility__cmp_dbl);
  rec[PB_FA_NULL_MEDIAN] = pb_resample_percentile_sorted(vals, nv, 0.5);
  rec[PB_FA_NULL_DEFINED] = nv;
  free(perm);
  free(vals);
}

void pb_fragility_arm(const struct pb_fragility_input *in, const struct pb_fragility_options *o,
                      enum pb_fragility_part fit, double *rec)
{
  int32_t J = o->n_bins, K = o->n_groups, n = in->n;
  enum pb_fragility_part rate = fit == PB_FRAGILITY_PART_A ? PB_FRAGILITY_PART_B : PB_FRAGILITY_PART_A;
  struct pb_fragility_partition own;
  const struct pb_fragility_partition *p = pb_fragility__partition(in, fit, J, K, &own);
  struct pb_fragility__tally R, E;
  pb_fragility__tally_init(&R, J, K);
  pb_fragility__tally_init(&E, J, K);
  pb_fragility__tally_clear(&R);
  pb_fragility__tally_clear(&E);
  /* rate items grouped by bin (counting sort, image order within a bin) for the null */
  int32_t *b0 = pb_calloc((size_t)J + 1, sizeof(int32_t)), *fill = pb_malloc((size_t)J * sizeof(int32_t));
  int32_t *bin = pb_malloc((size_t)(n > 0 ? n : 1) * 2 * sizeof(int32_t)), *grp = bin + n, *gs = NULL;
  uint8_t *cs = NULL;
  int32_t n_fit = 0;
  for (int32_t i = 0; i < n; i++) {
    bin[i] = -1;
    if (isnan(in->u[i])) continue;
    n_fit += in->part[i] == fit;
    if (in->part[i] != rate && in->part[i] != PB_FRAGILITY_PART_E) continue;
    int32_t b = pb_fragility_bin(p, in->s[i]), g = pb_fragility_group(p, b, in->u[i]);
    if (in->part[i] == PB_FRAGILITY_PART_E) {
      pb_fragility__add(&E, b, g, in->correct[i], in->s[i]);
      continue;
    }
    pb_fragility__add(&R, b, g, in->correct[i], in->s[i]);
    bin[i] = b, grp[i] = g;
    b0[b + 1]++;
  }
  for (int32_t b = 0; b < J; b++) b0[b + 1] += b0[b], fill[b] = b0[b];
  gs = pb_malloc((size_t)(b0[J] > 0 ? b0[J] : 1) * sizeof(int32_t));
  cs = pb_malloc((size_t)(b0[J] > 0 ? b0[J] : 1));
  for (int32_t i = 0; i < n; i++)
    if (bin[i] >= 0) gs[fill[bin[i]]] = grp[i], cs[fill[bin[i]]++] = in->correct[i];
  struct pb_fragility_law law;
  pb_fragility_law_init(&law);
  double *work = pb_malloc((size_t)4 * J * sizeof(double));
  memset(rec, 0, PB_FRAGILITY_ARM_LEN(o->n_grid) * sizeof(double));
  rec[PB_FA_N_FIT] = n_fit;
  rec[PB_FA_N_RATE] = (double)R.total;
  rec[PB_FA_N_EVAL] = (double)E.total;
  if (R.total > 0) {
    pb_fragility__summaries(&R, o, &law, rec);
    rec[PB_FA_LCB] = pb_fragility__lcb(&R, o->rho_lcb, o->alpha);
  } else {
    for (int f = PB_FA_G_R; f < PB_FRAGILITY_ARM_LEN(o->n_grid); f++) rec[f] = NAN;
  }
  rec[PB_FA_AGREE] = R.total > 0 ? pb_fragility__agreement(&R, &E, o->rho_lcb, &law, work) : NAN;
  uint64_t item = in->item * 2 + (fit == PB_FRAGILITY_PART_A ? 0 : 1);
  pb_fragility__null(o, item, b0, gs, cs, &E, &R, &law, work, rec);
  free(work);
  free(b0);
  free(fill);
  free(bin);
  free(gs);
  free(cs);
  pb_fragility_law_free(&law);
  pb_fragility__tally_free(&R);
  pb_fragility__tally_free(&E);
  pb_fragility_partition_free(&own);
}

/* ------------------------------------------------------------ natural drift */

/* The clean side of a unit's drift cells, the same for each of its perturbed conditions: the counts of
 * the images with a clean assignment and each bin's law of group rates (eta, q; the law set where the bin
 * has images). */
struct pb_fragility__drift_src {
  struct pb_fragility__tally S;
  struct pb_fragility_law *law; /* [J] */
  double *eta, *q;              /* [J][K] */
};

static void pb_fragility__drift_src_init(const struct pb_fragility_input *in, const struct pb_fragility_partition *p,
                                         const int32_t *bin0, const int32_t *grp0, struct pb_fragility__drift_src *D)
{
  const int32_t J = p->J, K = p->K;
  pb_fragility__tally_init(&D->S, J, K);
  pb_fragility__tally_clear(&D->S);
  for (int32_t i = 0; i < in->n; i++)
    if (bin0[i] >= 0) pb_fragility__add(&D->S, bin0[i], grp0[i], in->correct[i], in->s[i]);
  D->law = pb_malloc((size_t)J * sizeof *D->law);
  D->eta = pb_malloc((size_t)J * K * 2 * sizeof(double));
  D->q = D->eta + (size_t)J * K;
  for (int32_t b = 0; b < J; b++) {
    pb_fragility_law_init(&D->law[b]);
    pb_fragility__bin_law(&D->S, b, &D->law[b], D->eta + (size_t)b * K, D->q + (size_t)b * K);
  }
}

static void pb_fragility__drift_src_free(struct pb_fragility__drift_src *D)
{
  for (int32_t b = 0; b < D->S.J; b++) pb_fragility_law_free(&D->law[b]);
  free(D->law);
  free(D->eta);
  pb_fragility__tally_free(&D->S);
}

/* Binwise split of one bin (Proposition 8): with source masses/rates q, eta
 * and target q', eta' of the groups,
 *   delta = sum q' eta' - sum q eta = sum (q' - q) eta~ + sum q' (eta' - eta~),
 * composition + conditional, exact for any eta~ that equals eta where q > 0;
 * a target group without source images takes eta~ = the source bin's
 * reliability, which leaves the composition term unchanged by it (sum (q'-q)
 * times a constant is 0) and counts the bin as unsupported.  Returns the
 * utilisation |comp| / Phi_b(rho_b) of the source envelope at the chi-square
 * distance rho_b = sum (q' - q)^2 / q of the target masses, NaN when a target
 * group lacks source mass or the envelope is 0. */
static double pb_fragility__drift_bin(const struct pb_fragility__drift_src *D, const struct pb_fragility__tally *T,
                                      int32_t b, double *x, int *unsupported)
{
  const struct pb_fragility__tally *S = &D->S;
  int32_t K = S->K;
  const double *eta = D->eta + (size_t)b * K, *q = D->q + (size_t)b * K;
  double r0 = 0, r1 = 0, comp = 0, cond = 0, rho = 0;
  for (int32_t g = 0; g < K; g++)
    if (q[g] > 0) r0 += q[g] * eta[g];
  *unsupported = 0;
  for (int32_t g = 0; g < K; g++) {
    int64_t nt = T->n[(size_t)b * K + g];
    double qt = (double)nt / (double)T->nb[b], et = nt > 0 ? (double)T->k[(size_t)b * K + g] / (double)nt : 0;
    double es = q[g] > 0 ? eta[g] : r0;
    if (nt > 0 && !(q[g] > 0)) *unsupported = 1;
    r1 += qt * et;
    comp += (qt - q[g]) * es;
    cond += qt * (et - es);
    if (q[g] > 0) rho += (qt - q[g]) * (qt - q[g]) / q[g];
  }
  x[0] = r1 - r0;
  x[1] = comp;
  x[2] = cond;
  if (*unsupported) return NAN;
  double env = pb_fragility_profile(&D->law[b], comp >= 0 ? PB_FRAGILITY_UP : PB_FRAGILITY_DOWN, rho);
  return env > 0 ? fabs(comp) / env : NAN;
}

void pb_fragility_assign(const struct pb_fragility_input *in, const struct pb_fragility_partition *p,
                         enum pb_fragility_part fit, int32_t *bin, int32_t *grp)
{
  for (int32_t i = 0; i < in->n; i++) {
    bin[i] = grp[i] = -1;
    if (isnan(in->u[i]) || in->part[i] == fit) continue;
    bin[i] = pb_fragility_bin(p, in->s[i]);
    grp[i] = pb_fragility_group(p, bin[i], in->u[i]);
  }
}

/* The post-hoc higher-count-bin check (Appendix L): bin b is flagged when one
 * of its groups with images on either side has fewer than
 * PB_FRAGILITY_FLAG_MIN images on the source or on the target side. */
static int pb_fragility__flagged(const struct pb_fragility__tally *S, const struct pb_fragility__tally *T, int32_t b)
{
  for (int32_t g = 0; g < S->K; g++) {
    int64_t ns = S->n[(size_t)b * S->K + g], nt = T->n[(size_t)b * T->K + g];
    if ((ns > 0 || nt > 0) && (ns < PB_FRAGILITY_FLAG_MIN || nt < PB_FRAGILITY_FLAG_MIN)) return 1;
  }
  return 0;
}

/* The flagged-bin record: kept target mass, kept and flagged bins, and the norms over the kept bins with
 * their target masses renormalised (k[0] mass, k[1..3] sums of w x^2). */
static void pb_fragility__flag_rec(const double *k, int32_t kept, int32_t flagged, double *flag)
{
  flag[PB_FF_MASS_KEPT] = k[0];
  flag[PB_FF_BINS_KEPT] = kept;
  flag[PB_FF_BINS_FLAGGED] = flagged;
  flag[PB_FF_L_TOTAL] = k[0] > 0 ? sqrt(k[1] / k[0]) : NAN;
  flag[PB_FF_L_COMP] = k[0] > 0 ? sqrt(k[2] / k[0]) : NAN;
  flag[PB_FF_L_COND] = k[0] > 0 ? sqrt(k[3] / k[0]) : NAN;
  flag[PB_FF_RATIO] = k[1] > 0 ? sqrt(k[2] / k[1]) : NAN;
}

int pb_fragility_drift(const struct pb_cell_view *cell, const struct pb_fragility_input *in,
                       const struct pb_fragility_partition *p, const int32_t *bin0, const int32_t *grp0, double *rec)
{
  return pb_fragility_drift_flagged(cell, in, p, bin0, grp0, rec, NULL);
}

/* One drift cell against the clean side @p D: its target counts into @p T (cleared here), the bins'
 * utilisations into @p util ([J] scratch). */
static void pb_fragility__drift_cell(const struct pb_cell_view *cell, const struct pb_fragility_input *in,
                                     const struct pb_fragility_partition *p, const int32_t *bin0,
                                     const struct pb_fragility__drift_src *D, struct pb_fragility__tally *T,
                                     double *util, double *rec, double *flag)
{
  const int32_t J = p->J;
  const struct pb_fragility__tally *S = &D->S;
  pb_fragility__tally_clear(T);
  for (int32_t i = 0; i < in->n; i++) {
    if (bin0[i] < 0) continue;
    double s1 = cell->s1[i];
    int32_t b1 = pb_fragility_bin(p, s1);
    pb_fragility__add(T, b1, pb_fragility_group(p, b1, in->u[i]), cell->pred1[i] == cell->label[i], s1);
  }
  double tot = 0, sc = 0, sd = 0, resid = 0, k[4] = {0, 0, 0, 0};
  int32_t nu = 0, n_undef = 0, n_unsup = 0, n_kept = 0;
  for (int32_t b = 0; b < J; b++) {
    if (T->nb[b] == 0) continue;
    if (S->nb[b] == 0) { /* target mass in a bin the source never reaches: no binwise drift */
      n_unsup++;
      n_undef++;
      continue;
    }
    double x[3], w = (double)T->nb[b] / (double)T->total;
    int unsup;
    double u = pb_fragility__drift_bin(D, T, b, x, &unsup);
    tot += w * x[0] * x[0];
    sc += w * x[1] * x[1];
    sd += w * x[2] * x[2];
    resid = fmax(resid, fabs(x[0] - x[1] - x[2]));
    if (!pb_fragility__flagged(S, T, b)) {
      k[0] += w, k[1] += w * x[0] * x[0], k[2] += w * x[1] * x[1], k[3] += w * x[2] * x[2];
      n_kept++;
    }
    n_unsup += unsup;
    if (isnan(u)) n_undef++;
    else util[nu++] = u;
  }
  qsort(util, (size_t)nu, sizeof *util, pb_fragility__cmp_dbl);
  rec[PB_FD_N] = (double)T->total;
  rec[PB_FD_L_TOTAL] = sqrt(tot);
  rec[PB_FD_L_COMP] = sqrt(sc);
  rec[PB_FD_L_COND] = sqrt(sd);
  rec[PB_FD_RATIO] = tot > 0 ? sqrt(sc) / sqrt(tot) : NAN;
  rec[PB_FD_UTIL] = pb_resample_percentile_sorted(util, nu, 0.5);
  rec[PB_FD_N_UTIL] = nu;
  rec[PB_FD_N_UNDEF] = n_undef;
  rec[PB_FD_N_UNSUPPORTED] = n_unsup;
  rec[PB_FD_RESIDUAL] = resid;
  int32_t n_target = 0; /* bins with target mass: the kept ones and the flagged ones (unsupported included) */
  for (int32_t b = 0; b < J; b++) n_target += T->nb[b] > 0;
  if (flag) pb_fragility__flag_rec(k, n_kept, n_target - n_kept, flag);
}

int pb_fragility_drift_cells(const struct pb_cell_view *cells, int32_t n_cells, const struct pb_fragility_input *in,
                             const struct pb_fragility_partition *p, const int32_t *bin0, const int32_t *grp0,
                             double *rec, double *flag)
{
  struct pb_fragility__drift_src D;
  pb_fragility__drift_src_init(in, p, bin0, grp0, &D);
  struct pb_fragility__tally T;
  pb_fragility__tally_init(&T, p->J, p->K);
  double *util = pb_malloc((size_t)p->J * sizeof(double));
  int status = PB_OK;
  for (int32_t c = 0; c < n_cells && status == PB_OK; c++) {
    if (cells[c].n != in->n)
      status = pb_cell_error(&cells[c], -1, "fragility: %d perturbed records for %d clean images", (int)cells[c].n,
                             (int)in->n);
    else
      pb_fragility__drift_cell(&cells[c], in, p, bin0, &D, &T, util, rec + (size_t)c * PB_FD_FIXED,
                               flag ? flag + (size_t)c * PB_FF_FIXED : NULL);
  }
  free(util);
  pb_fragility__tally_free(&T);
  pb_fragility__drift_src_free(&D);
  return status;
}

int pb_fragility_drift_flagged(const struct pb_cell_view *cell, const struct pb_fragility_input *in,
                               const struct pb_fragility_partition *p, const int32_t *bin0, const int32_t *grp0,
                               double *rec, double *flag)
{
  return pb_fragility_drift_cells(cell, 1, in, p, bin0, grp0, rec, flag);
}

double pb_fragility_lcb(int32_t J, int32_t K, const int64_t *n, const int64_t *k, double rho, double alpha)
{
  struct pb_fragility__tally t;
  pb_fragility__tally_init(&t, J, K);
  pb_fragility__tally_clear(&t);
  for (int32_t b = 0; b < J; b++)
    for (int32_t g = 0; g < K; g++) {
      t.n[(size_t)b * K + g] = n[(size_t)b * K + g];
      t.k[(size_t)b * K + g] = k[(size_t)b * K + g];
      t.nb[b] += n[(size_t)b * K + g];
      t.total += n[(size_t)b * K + g];
    }
  double v = pb_fragility__lcb(&t, rho, alpha);
  pb_fragility__tally_free(&t);
  return v;
}
