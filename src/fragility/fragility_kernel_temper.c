/* Temperature scaling from stored top-k lists (seed 001's temperature-scaled
 * state; docs/fragility.md): the scaled probabilities of a record, their
 * negative log-likelihood and the temperature that minimises it.  Pure
 * computation: no MPI, no I/O. */
#include "config.h"

#include <float.h>
#include <math.h>

#include "pairbound/error.h"
#include "pairbound/fragility.h"

#define PB_FRAGILITY_T_MIN 0.05
#define PB_FRAGILITY_T_MAX 20.0

/* log Z at beta = 1/T: the listed probabilities, the label's when the list
 * misses it, and the remaining mass split equally over the other classes. */
static double pb_fragility__log_z(const struct pb_fragility_topk *r, double beta)
{
  double known = 0, z = 0;
  int32_t listed = 0, in = 0;
  for (int32_t j = 0; j < r->k; j++) {
    if (!(r->prob[j] > 0)) continue;
    known += r->prob[j];
    z += pow(r->prob[j], beta);
    listed++;
    in |= r->cls[j] == r->label;
  }
  if (!in && r->ptrue > 0) known += r->ptrue, z += pow(r->ptrue, beta), listed++;
  const int32_t m = r->n_classes - listed;
  const double rest = 1 - known;
  if (m > 0 && rest > 0) z += m * pow(rest / m, beta);
  return log(z);
}

double pb_fragility_temper_nll(const struct pb_fragility_topk *r, double T)
{
  const double beta = 1 / T;
  return -beta * log(fmax(r->ptrue, DBL_MIN)) + pb_fragility__log_z(r, beta);
}

double pb_fragility_temper_conf(const struct pb_fragility_topk *r, double T)
{
  const double beta = 1 / T;
  return exp(beta * log(fmax((double)r->prob[0], DBL_MIN)) - pb_fragility__log_z(r, beta));
}

/* A record's terms for the fit: log p of each listed class (and of the label when the list misses it)
 * with weight 1, log(rest / m) with weight m for the others; @return the count (at most k + 2). */
static int32_t pb_fragility__terms(const struct pb_fragility_topk *r, double *l, double *w)
{
  double known = 0;
  int32_t n = 0, in = 0;
  for (int32_t j = 0; j < r->k; j++) {
    if (!(r->prob[j] > 0)) continue;
    known += r->prob[j];
    l[n] = log(r->prob[j]), w[n++] = 1;
    in |= r->cls[j] == r->label;
  }
  if (!in && r->ptrue > 0) known += r->ptrue, l[n] = log(r->ptrue), w[n++] = 1;
  const int32_t m = r->n_classes - n;
  if (m > 0 && 1 - known > 0) l[n] = log((1 - known) / m), w[n++] = m;
  return n;
}

/* The mean NLL's first and second derivatives in beta = 1/T over the records' terms: per record
 * -log p_y + E_beta[l] and Var_beta[l] under the weights w e^(beta l) / Z (shifted by the largest l). */
static void pb_fragility__derivs(int64_t n, const int32_t *cnt, const double *l, const double *w, const double *ly,
                                 int32_t stride, double beta, double *d1, double *d2)
{
  double s1 = 0, s2 = 0;
  for (int64_t i = 0; i < n; i++) {
    const double *li = l + (size_t)i * stride, *wi = w + (size_t)i * stride;
    double top = -INFINITY, z = 0, m1 = 0, m2 = 0;
    for (int32_t j = 0; j < cnt[i]; j++) top = fmax(top, li[j]);
    for (int32_t j = 0; j < cnt[i]; j++) {
      const double e = wi[j] * exp(beta * (li[j] - top));
      z += e, m1 += e * li[j], m2 += e * li[j] * li[j];
    }
    if (!(z > 0)) continue;
    m1 /= z, m2 /= z;
    s1 += m1 - ly[i];
    s2 += fmax(m2 - m1 * m1, 0);
  }
  *d1 = s1 / (double)n;
  *d2 = s2 / (double)n;
}

/* Newton steps on beta = 1/T inside a shrinking bracket [1/20, 1/0.05]
 * (bisecting whenever a step leaves it): the mean NLL is log-sum-exp in beta
 * minus a linear term, so convex, and its derivative's sign says on which
 * side the minimum lies; a minimum beyond the bracket gives its end. */
double pb_fragility_temper_fit(const struct pb_fragility_topk *r, int64_t n)
{
  if (n <= 0) return NAN;
  int32_t stride = 0;
  for (int64_t i = 0; i < n; i++) stride = r[i].k + 2 > stride ? r[i].k + 2 : stride;
  double *l = pb_malloc((size_t)n * (size_t)stride * 2 * sizeof(double)), *w = l + (size_t)n * stride;
  double *ly = pb_malloc((size_t)n * sizeof(double));
  int32_t *cnt = pb_malloc((size_t)n * sizeof(int32_t));
  for (int64_t i = 0; i < n; i++) {
    cnt[i] = pb_fragility__terms(&r[i], l + (size_t)i * stride, w + (size_t)i * stride);
    ly[i] = log(fmax(r[i].ptrue, DBL_MIN));
  }
  double a = 1 / PB_FRAGILITY_T_MAX, b = 1 / PB_FRAGILITY_T_MIN, beta = 1;
  for (int it = 0; it < 100; it++) {
    double d1, d2;
    pb_fragility__derivs(n, cnt, l, w, ly, stride, beta, &d1, &d2);
    if (d1 > 0) b = beta;
    else a = beta;
    double nb = d2 > 0 ? beta - d1 / d2 : -1;
    if (!(nb > a && nb < b)) nb = 0.5 * (a + b);
    if (fabs(nb - beta) <= 1e-13 * beta || b - a <= 1e-13 * b) {
      beta = nb;
      break;
    }
    beta = nb;
  }
  free(l);
  free(ly);
  free(cnt);
  return 1 / beta;
}
