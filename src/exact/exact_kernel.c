/* Scoring kernels for exact class probabilities (seed 002 Eq. 1-5, 7-9,
 * Appendix A.1-A.2, C.3-C.5).  Pure computation: every sum runs in input
 * order so results do not depend on how callers distribute the inputs. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>

#include "pairbound/error.h"
#include "pairbound/exact.h"
#include "pairbound/sort.h"

const int pb_exact_snapshot_k[PB_EXACT_NK] = {1, 2, 3, 5, 10, 20, 50};

double pb_exact_clip(double q)
{
  if (q < PB_EXACT_CLIP) return PB_EXACT_CLIP;
  if (q > 1.0 - PB_EXACT_CLIP) return 1.0 - PB_EXACT_CLIP;
  return q;
}

/* p log(p / q) with 0 log 0 = 0. */
static double pb_exact__xlogratio(double p, double q)
{
  return p > 0.0 ? p * log(p / q) : 0.0;
}

double pb_exact_kl_term(double pstar, double q)
{
  double c = pb_exact_clip(q);
  return pb_exact__xlogratio(pstar, c) + pb_exact__xlogratio(1.0 - pstar, 1.0 - c);
}

double pb_exact_logloss(double pstar, double q)
{
  double c = pb_exact_clip(q);
  return -(pstar * log(c) + (1.0 - pstar) * log(1.0 - c));
}

int pb_exact_decide(double q)
{
  return q >= 0.5;
}

int pb_exact_bin(double q, int nbins)
{
  int j = (int)floor(q * nbins);
  if (j < 0) j = 0;
  if (j >= nbins) j = nbins - 1;
  return j;
}

/* Entropy of a Bernoulli(p) in nats: the expected log loss of p itself. */
static double pb_exact__entropy(double p)
{
  double h = 0.0;
  if (p > 0.0) h -= p * log(p);
  if (p < 1.0) h -= (1.0 - p) * log(1.0 - p);
  return h;
}

/* Eq. 1 and Eq. 2 averaged over the inputs.  An unknown forecast (NaN, a
 * model's invalid reply) counts as incorrect and contributes zero expected
 * accuracy (Section 5, C.2); the log-loss quantities average the valid ones. */
void pb_exact_score(int64_t n, const double *pstar, const double *q, const int *y, struct pb_exact_accuracy *out)
{
  double se = 0.0, sb = 0.0, sr = 0.0, sk = 0.0, slq = 0.0, slp = 0.0;
  int64_t clipped = 0, unknown = 0;
  for (int64_t i = 0; i < n; i++) {
    sb += pstar[i] >= 0.5 ? pstar[i] : 1.0 - pstar[i];
    if (isnan(q[i])) {
      unknown++;
      continue;
    }
    clipped += pb_exact_clip(q[i]) != q[i];
    int f = pb_exact_decide(q[i]);
    se += f ? pstar[i] : 1.0 - pstar[i];
    if (y) sr += f == y[i];
    sk += pb_exact_kl_term(pstar[i], q[i]);
    slq += pb_exact_logloss(pstar[i], q[i]);
    slp += pb_exact__entropy(pstar[i]);
  }
  double dn = n > 0 ? (double)n : NAN, dv = n > unknown ? (double)(n - unknown) : NAN;
  out->n = n;
  out->expected = se / dn;
  out->bayes = sb / dn;
  out->realised = y ? sr / dn : NAN;
  out->kl = sk / dv;
  out->logloss_q = slq / dv;
  out->logloss_p = slp / dv;
  out->clipped = clipped;
  out->unknown = unknown;
}

/* ---- Eq. 3 moments */
void pb_exact_moments_init(struct pb_exact_moments *m, int ngroups, int nbins)
{
  m->ngroups = ngroups;
  m->nbins = nbins;
  m->n = 0;
  m->count = pb_calloc((size_t)ngroups * nbins, sizeof *m->count);
  m->sum = pb_calloc((size_t)ngroups * nbins, sizeof *m->sum);
}

void pb_exact_moments_free(struct pb_exact_moments *m)
{
  free(m->count);
  free(m->sum);
  m->count = NULL;
  m->sum = NULL;
}

void pb_exact_moments_clear(struct pb_exact_moments *m)
{
  size_t cells = (size_t)m->ngroups * m->nbins;
  m->n = 0;
  memset(m->count, 0, cells * sizeof *m->count);
  memset(m->sum, 0, cells * sizeof *m->sum);
}

void pb_exact_moments_add(struct pb_exact_moments *m, const unsigned char *member, double q, double target)
{
  int j = pb_exact_bin(q, m->nbins);
  m->n++;
  for (int g = 0; g < m->ngroups; g++) {
    if (!member[g]) continue;
    m->count[(size_t)g * m->nbins + j]++;
    m->sum[(size_t)g * m->nbins + j] += target - q;
  }
}

void pb_exact_moments_merge(struct pb_exact_moments *into, const struct pb_exact_moments *from)
{
  size_t cells = (size_t)into->ngroups * into->nbins;
  into->n += from->n;
  for (size_t c = 0; c < cells; c++) {
    into->count[c] += from->count[c];
    into->sum[c] += from->sum[c];
  }
}

double pb_exact_mc(const struct pb_exact_moments *m, int *g, int *j)
{
  double best = 0.0;
  int bg = 0, bj = 0;
  if (m->n == 0) return NAN;
  for (int a = 0; a < m->ngroups; a++)
    for (int b = 0; b < m->nbins; b++) {
      double v = fabs(m->sum[(size_t)a * m->nbins + b]) / (double)m->n;
      if (v > best) {
        best = v;
        bg = a;
        bj = b;
      }
    }
  if (g) *g = bg;
  if (j) *j = bj;
  return best;
}

double pb_exact_ece(const struct pb_exact_moments *m, int g)
{
  double s = 0.0;
  if (m->n == 0) return NAN;
  for (int b = 0; b < m->nbins; b++) s += fabs(m->sum[(size_t)g * m->nbins + b]);
  return s / (double)m->n;
}

/* Hoeffding: P(|mean - E| >= t) <= 2 exp(-2 n t^2 / width^2) for one moment;
 * a union bound over the cells gives the simultaneous level.  Within bin j,
 * q lies in [j/m, (j+1)/m], so p* - q lies in an interval of width 1 + 1/m
 * (and 0 outside the cell lies inside it). */
double pb_exact_hoeffding(int64_t n, int ncells, int nbins, double alpha)
{
  double width = 1.0 + 1.0 / nbins;
  return width * sqrt(log(2.0 * ncells / alpha) / (2.0 * (double)n));
}

/* ---- Eq. 4-9 laws */
void pb_exact_law_free(struct pb_exact_law *l)
{
  free(l->x);
  free(l->w);
  l->x = l->w = NULL;
  l->n = 0;
}

/* Integral of |F_a - F_b| over [0, 1], sweeping the merged supports; both
 * CDFs are right-continuous step functions, constant between support points. */
double pb_exact_w1(const struct pb_exact_law *a, const struct pb_exact_law *b)
{
  int i = 0, j = 0;
  double fa = 0.0, fb = 0.0, w1 = 0.0;
  double x = 0.0;
  while (i < a->n || j < b->n) {
    double next = i < a->n ? a->x[i] : INFINITY;
    if (j < b->n && b->x[j] < next) next = b->x[j];
    w1 += fabs(fa - fb) * (next - x);
    x = next;
    while (i < a->n && a->x[i] == x) fa += a->w[i++];
    while (j < b->n && b->x[j] == x) fb += b->w[j++];
  }
  if (x < 1.0) w1 += fabs(fa - fb) * (1.0 - x);
  return w1;
}

void pb_exact_law_empirical(int64_t n, const double *v, struct pb_exact_law *out)
{
  double *s = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *s);
  memcpy(s, v, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, pb_sort_cmp_double);
  out->x = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *out->x);
  out->w = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *out->w);
  out->n = 0;
  for (int64_t i = 0; i < n;) {
    int64_t r = i;
    while (r < n && s[r] == s[i]) r++;
    out->x[out->n] = s[i];
    out->w[out->n] = (double)(r - i) / (double)n;
    out->n++;
    i = r;
  }
  free(s);
}

/* Support {0, 1/k, ..., 1} in ascending order. */
static void pb_exact__grid_law(int k, struct pb_exact_law *out)
{
  out->n = k + 1;
  out->x = pb_malloc((size_t)(k + 1) * sizeof *out->x);
  out->w = pb_calloc((size_t)(k + 1), sizeof *out->w);
  for (int s = 0; s <= k; s++) out->x[s] = (double)s / k;
}

void pb_exact_law_snapshot(int k, int n, const double *v, const double *c, struct pb_exact_law *out)
{
  double total = 0.0;
  pb_exact__grid_law(k, out);
  for (int i = 0; i < n; i++) total += c[i];
  for (int i = 0; i < n; i++)
    for (int s = 0; s <= k; s++) out->w[s] += c[i] / total * gsl_ran_binomial_pdf((unsigned)s, v[i], (unsigned)k);
}

void pb_exact_law_fractions(int k, int64_t n, const int *s, struct pb_exact_law *out)
{
  pb_exact__grid_law(k, out);
  for (int64_t i = 0; i < n; i++) out->w[s[i]] += 1.0;
  for (int t = 0; t <= k; t++) out->w[t] /= (double)n;
}

/* ---- C.3 nearest neighbours */

/* Squared Euclidean distance between two encoded rows. */
static double pb_exact__dist2(int d, const double *a, const double *b)
{
  double s = 0.0;
  for (int t = 0; t < d; t++) s += (a[t] - b[t]) * (a[t] - b[t]);
  return s;
}

/* Majority label among the k training rows nearest to @p row (k odd, so no
 * vote ties); equal distances keep the lower row index, scanning in order. */
static int pb_exact__knn_vote(int64_t ntrain, int d, const double *x, const int *y, const double *row, int k,
                              double *bd, int *bl, int *first_label)
{
  int have = 0;
  for (int64_t r = 0; r < ntrain; r++) {
    double dist = pb_exact__dist2(d, x + r * d, row);
    if (have == k && dist >= bd[k - 1]) continue;
    int pos = have < k ? have++ : k - 1;
    while (pos > 0 && bd[pos - 1] > dist) {
      bd[pos] = bd[pos - 1];
      bl[pos] = bl[pos - 1];
      pos--;
    }
    bd[pos] = dist;
    bl[pos] = y[r];
  }
  int ones = 0;
  for (int t = 0; t < have; t++) ones += bl[t];
  *first_label = bl[0];
  return 2 * ones > have;
}

/* Cover and Hart (1967): R_1NN <= 2 R*(1 - R*) asymptotically, so
 * R* >= (1 - sqrt(1 - 2 R_1NN)) / 2 (an error above 1/2 counts as 1/2). */
static double pb_exact__cover_hart(double r1)
{
  double r = r1 < 0.5 ? r1 : 0.5;
  return (1.0 - sqrt(1.0 - 2.0 * r)) / 2.0;
}

/* Devroye's (1981) binary refinement, R_k <= R* (1 + c / sqrt(k)), solved for
 * R*; k = 1 has only Cover and Hart's bound.  The two forms of c are
 * docs/exact.md's, "Nearest-neighbour Bayes-error estimators". */
double pb_exact_devroye_lower(double rk, int k, enum pb_exact_knn_bound form)
{
  if (k == 1) return pb_exact__cover_hart(rk);
  return rk / (1.0 + (form == PB_EXACT_KNN_SQRT2 ? sqrt(2.0 / k) : 1.0 / sqrt((double)k)));
}

/* Both bounds also give R* <= R_NN. */
int pb_exact_nn_estimate(int64_t n, int d, const double *x, const int *y, int k, enum pb_exact_knn_bound form,
                         struct pb_exact_nn *out)
{
  int64_t ntrain = n / 2, ntest = n - ntrain;
  int64_t e1 = 0, ek = 0;
  if (k < 1 || k > 63 || k % 2 == 0) {
    pb_error_set("nearest-neighbour estimator: k = %d must be odd and below 64", k);
    return PB_FAIL;
  }
#pragma omp parallel for schedule(static) reduction(+ : e1, ek)
  for (int64_t i = ntrain; i < n; i++) {
    double bd[64];
    int bl[64], first;
    int vote = pb_exact__knn_vote(ntrain, d, x, y, x + i * d, k, bd, bl, &first);
    e1 += first != y[i];
    ek += vote != y[i];
  }
  out->err_1nn = (double)e1 / (double)ntest;
  out->err_knn = (double)ek / (double)ntest;
  out->ch_lower = pb_exact__cover_hart(out->err_1nn);
  out->ch_upper = out->err_1nn;
  out->dv_lower = pb_exact_devroye_lower(out->err_knn, k, form);
  out->dv_upper = out->err_knn;
  return PB_OK;
}

/* ---- A.1 logistic regression */
double pb_exact_logistic_predict(int d, const double *beta, const double *x)
{
  double eta = beta[0];
  for (int t = 0; t < d; t++) eta += beta[t + 1] * x[t];
  return 1.0 / (1.0 + exp(-eta));
}

/* Penalised negative log likelihood; log(1 + e^eta) - y eta in a form that
 * does not overflow. */
static double pb_exact__objective(int64_t n, int d, const double *x, const int *y, double lambda, const double *beta)
{
  double f = 0.0;
  for (int64_t i = 0; i < n; i++) {
    double eta = beta[0];
    for (int t = 0; t < d; t++) eta += beta[t + 1] * x[i * d + t];
    f += (eta > 0 ? eta + log1p(exp(-eta)) : log1p(exp(eta))) - y[i] * eta;
  }
  for (int t = 1; t <= d; t++) f += 0.5 * lambda * beta[t] * beta[t];
  return f;
}

/* Gradient and Hessian of the penalised objective at beta (design with a
 * leading column of ones). */
static void pb_exact__newton_system(int64_t n, int d, const double *x, const int *y, double lambda,
                                    const double *beta, gsl_vector *g, gsl_matrix *h)
{
  int p = d + 1;
  double *row = pb_malloc((size_t)p * sizeof *row);
  gsl_vector_set_zero(g);
  gsl_matrix_set_zero(h);
  for (int64_t i = 0; i < n; i++) {
    row[0] = 1.0;
    memcpy(row + 1, x + i * d, (size_t)d * sizeof *row);
    double mu = pb_exact_logistic_predict(d, beta, x + i * d);
    double wgt = mu * (1.0 - mu);
    for (int a = 0; a < p; a++) {
      *gsl_vector_ptr(g, a) += (mu - y[i]) * row[a];
      for (int b = 0; b <= a; b++) *gsl_matrix_ptr(h, a, b) += wgt * row[a] * row[b];
    }
  }
  for (int a = 1; a < p; a++) {
    *gsl_vector_ptr(g, a) += lambda * beta[a];
    *gsl_matrix_ptr(h, a, a) += lambda;
  }
  for (int a = 0; a < p; a++)
    for (int b = a + 1; b < p; b++) gsl_matrix_set(h, a, b, gsl_matrix_get(h, b, a));
  free(row);
}

/* Newton's method with step halving on the convex penalised objective; the
 * Cholesky factorisation of the Hessian (GSL) solves each step. */
int pb_exact_logistic_fit(int64_t n, int d, const double *x, const int *y, double lambda, double *beta)
{
  int p = d + 1, status = PB_FAIL;
  gsl_vector *g = gsl_vector_alloc((size_t)p), *step = gsl_vector_alloc((size_t)p);
  gsl_matrix *h = gsl_matrix_alloc((size_t)p, (size_t)p);
  double *trial = pb_malloc((size_t)p * sizeof *trial);
  memset(beta, 0, (size_t)p * sizeof *beta);
  double f = pb_exact__objective(n, d, x, y, lambda, beta);
  for (int it = 0; it < 100; it++) {
    pb_exact__newton_system(n, d, x, y, lambda, beta, g, h);
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int rc = gsl_linalg_cholesky_decomp1(h);
    if (rc == 0) rc = gsl_linalg_cholesky_solve(h, g, step);
    gsl_set_error_handler(old);
    if (rc != 0) {
      pb_error_set("logistic regression: singular Hessian at Newton step %d (n = %lld, %d features; use lambda > 0)",
                   it, (long long)n, d);
      goto done;
    }
    double t = 1.0, ft = f, maxstep = 0.0;
    for (int half = 0; half < 40; half++, t *= 0.5) {
      for (int a = 0; a < p; a++) trial[a] = beta[a] - t * gsl_vector_get(step, a);
      ft = pb_exact__objective(n, d, x, y, lambda, trial);
      if (ft <= f) break;
    }
    for (int a = 0; a < p; a++) {
      double s = fabs(trial[a] - beta[a]);
      if (s > maxstep) maxstep = s;
      beta[a] = trial[a];
    }
    f = ft;
    if (maxstep < 1e-10) {
      status = PB_OK;
      goto done;
    }
  }
  pb_error_set("logistic regression: Newton did not converge in 100 steps (n = %lld, %d features)", (long long)n, d);
done:
  gsl_vector_free(g);
  gsl_vector_free(step);
  gsl_matrix_free(h);
  free(trial);
  return status;
}
