/* Nested leave-one-group-out ridge regression of model-level targets
 * (seed 000 Appendix H.4; docs/predict.md).  Pure computation. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "pairbound/error.h"
#include "pairbound/predict.h"

const double pb_predict_lambda[PB_PREDICT_N_LAMBDA] = {0.1, 0.3, 1, 3, 10, 30, 100};

double pb_predict_probit(double pct)
{
  double p = pct / 100.0;
  if (p < PB_PREDICT_CLIP) p = PB_PREDICT_CLIP;
  if (p > 1.0 - PB_PREDICT_CLIP) p = 1.0 - PB_PREDICT_CLIP;
  return gsl_cdf_ugaussian_Pinv(p);
}

double pb_predict_unprobit(double z)
{
  return gsl_cdf_ugaussian_P(z) * 100.0;
}

static int pb_predict__cmp_double(const void *pa, const void *pb)
{
  const double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

double pb_predict_median(double *v, int32_t n)
{
  if (n <= 0) return NAN;
  qsort(v, (size_t)n, sizeof *v, pb_predict__cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Training-fold preprocessing of one problem (H.4): per column the training
 * median used for imputation, the training mean and the scale (population
 * standard deviation, 1 for a column constant over the training rows). */
struct pb_predict__prep {
  double *med, *ctr, *scl;
};

/* The preprocessing from the train rows; vt [train rows][p] receives their
 * imputed values.  Rows are the outer loop so that the columns' sums, each
 * still over the rows in order, are independent chains; first and constant
 * are scratch of p entries. */
static void pb_predict__prepare(const struct pb_predict_problem *pr, const uint8_t *train, const uint8_t *colnan,
                                double *buf, double *vt, double *first, uint8_t *constant, struct pb_predict__prep *pp)
{
  const int32_t p = pr->p;
  for (int32_t j = 0; j < p; j++) {
    int32_t m = 0;
    /* the median only matters for a column with a missing value */
    for (int32_t r = 0; r < pr->n && colnan[j]; r++)
      if (train[r] && isfinite(pr->x[(size_t)r * p + j])) buf[m++] = pr->x[(size_t)r * p + j];
    pp->med[j] = m > 0 ? pb_predict_median(buf, m) : 0.0;
    pp->ctr[j] = 0.0;
    pp->scl[j] = 0.0;
    constant[j] = 1;
  }
  int32_t nt = 0;
  for (int32_t r = 0; r < pr->n; r++) {
    if (!train[r]) continue;
    const double *x = pr->x + (size_t)r * p;
    double *v = vt + (size_t)nt * p;
    for (int32_t j = 0; j < p; j++) {
      v[j] = isfinite(x[j]) ? x[j] : pp->med[j];
      if (nt == 0) first[j] = v[j];
      constant[j] &= v[j] == first[j];
      pp->ctr[j] += v[j];
    }
    nt++;
  }
  for (int32_t j = 0; j < p; j++) pp->ctr[j] /= nt;
  for (int32_t t = 0; t < nt; t++)
    for (int32_t j = 0; j < p; j++) {
      const double d = vt[(size_t)t * p + j] - pp->ctr[j];
      pp->scl[j] += d * d;
    }
  for (int32_t j = 0; j < p; j++) pp->scl[j] = constant[j] ? 1.0 : sqrt(pp->scl[j] / nt);
}

/* Standardised feature j of row r under the training preprocessing. */
static inline double pb_predict__z(const struct pb_predict_problem *pr, const struct pb_predict__prep *pp,
                                   int32_t r, int32_t j)
{
  const double v = pr->x[(size_t)r * pr->p + j];
  return ((isfinite(v) ? v : pp->med[j]) - pp->ctr[j]) / pp->scl[j];
}

/* The Gram matrix g = Zc'Zc (p x p, row-major in g, both triangles) and
 * rhs = Zc'yc of the centred design zc (nt x p) and targets yc. */
static void pb_predict__gram(const gsl_matrix *zc, const gsl_vector *yc, double *g, double *rhs)
{
  const size_t p = zc->size2;
  gsl_matrix_view gv = gsl_matrix_view_array(g, p, p);
  gsl_vector_view rv = gsl_vector_view_array(rhs, p);
  gsl_blas_dsyrk(CblasLower, CblasTrans, 1.0, zc, 0.0, &gv.matrix);
  for (size_t i = 0; i < p; i++)
    for (size_t j = i + 1; j < p; j++) g[i * p + j] = g[j * p + i];
  gsl_blas_dgemv(CblasTrans, 1.0, zc, yc, 0.0, &rv.vector);
}

/* beta of one penalty: (Zc'Zc + lambda I) beta = Zc'yc by Cholesky, the
 * cheapest single solve (the outer fits, at the chosen penalty). */
static int pb_predict__solve_chol(gsl_matrix *zc, gsl_vector *yc, double lambda, gsl_matrix *beta, double *scratch)
{
  const size_t p = zc->size2;
  gsl_matrix_view av = gsl_matrix_view_array(scratch, p, p);
  gsl_vector_view rv = gsl_vector_view_array(scratch + p * p, p);
  gsl_vector_view b = gsl_matrix_row(beta, 0);
  pb_predict__gram(zc, yc, scratch, scratch + p * p);
  for (size_t j = 0; j < p; j++) scratch[j * p + j] += lambda;
  if (gsl_linalg_cholesky_decomp1(&av.matrix) != GSL_SUCCESS ||
      gsl_linalg_cholesky_solve(&av.matrix, &rv.vector, &b.vector) != GSL_SUCCESS) {
    pb_error_set("predict: ridge Cholesky factorisation failed (lambda %g)", lambda);
    return PB_FAIL;
  }
  return PB_OK;
}

/* beta for every penalty of a grid from one decomposition (the ridge path):
 * Zc'Zc = Q T Q' with T symmetric tridiagonal (Householder reduction), so
 * beta(lambda) = Q (T + lambda I)^-1 Q'Zc'yc costs one O(p) tridiagonal
 * solve and one p x p product per penalty instead of a factorisation.  The
 * rounding differs from a Cholesky solve per penalty in the last bits
 * (docs/predict.md, "Fitting"; test_path_vs_normal_equations). */
static int pb_predict__solve_path(gsl_matrix *zc, gsl_vector *yc, int32_t nl, const double *lambda,
                                  gsl_matrix *beta, double *scratch)
{
  const size_t p = zc->size2;
  double *g = scratch, *q = g + p * p, *rhs = q + p * p, *c = rhs + p, *diag = c + p, *sub = diag + p;
  double *dl = sub + p, *x = dl + p;
  gsl_matrix_view gv = gsl_matrix_view_array(g, p, p), qv = gsl_matrix_view_array(q, p, p);
  gsl_vector_view rv = gsl_vector_view_array(rhs, p), cv = gsl_vector_view_array(c, p);
  gsl_vector_view xv = gsl_vector_view_array(x, p), dlv = gsl_vector_view_array(dl, p);
  pb_predict__gram(zc, yc, g, rhs);
  int rc = GSL_SUCCESS;
  if (p == 1) { /* T = Zc'Zc, Q = 1 (GSL's reduction needs p >= 2) */
    diag[0] = g[0];
    q[0] = 1.0;
  } else {
    gsl_vector_view tau = gsl_vector_view_array(x, p - 1), dv = gsl_vector_view_array(diag, p);
    gsl_vector_view sv = gsl_vector_view_array(sub, p - 1);
    rc = gsl_linalg_symmtd_decomp(&gv.matrix, &tau.vector);
    if (rc == GSL_SUCCESS) rc = gsl_linalg_symmtd_unpack(&gv.matrix, &tau.vector, &qv.matrix, &dv.vector, &sv.vector);
  }
  if (rc == GSL_SUCCESS) rc = gsl_blas_dgemv(CblasTrans, 1.0, &qv.matrix, &rv.vector, 0.0, &cv.vector);
  for (int32_t l = 0; l < nl && rc == GSL_SUCCESS; l++) {
    for (size_t j = 0; j < p; j++) dl[j] = diag[j] + lambda[l];
    if (p == 1) x[0] = c[0] / dl[0];
    else {
      gsl_vector_view sv = gsl_vector_view_array(sub, p - 1);
      rc = gsl_linalg_solve_symm_tridiag(&dlv.vector, &sv.vector, &cv.vector, &xv.vector);
    }
    gsl_vector_view b = gsl_matrix_row(beta, (size_t)l);
    if (rc == GSL_SUCCESS) rc = gsl_blas_dgemv(CblasNoTrans, 1.0, &qv.matrix, &xv.vector, 0.0, &b.vector);
  }
  if (rc != GSL_SUCCESS) {
    pb_error_set("predict: ridge path (tridiagonal reduction) failed");
    return PB_FAIL;
  }
  return PB_OK;
}

/* The same betas from the thin SVD of Zc (of Zc' when it has more columns
 * than rows, as GSL needs rows >= columns): beta = V diag(s / (s^2 + lambda)) U'yc. */
static int pb_predict__solve_svd(gsl_matrix *zc, gsl_vector *yc, int32_t nl, const double *lambda,
                                 gsl_matrix *beta)
{
  const size_t nt = zc->size1, p = zc->size2;
  const int tall = nt >= p;
  const size_t m = tall ? nt : p, k = tall ? p : nt;
  gsl_matrix *u = gsl_matrix_alloc(m, k), *v = gsl_matrix_alloc(k, k);
  gsl_vector *s = gsl_vector_alloc(k), *work = gsl_vector_alloc(k), *uty = gsl_vector_alloc(k);
  if (tall) gsl_matrix_memcpy(u, zc);
  else gsl_matrix_transpose_memcpy(u, zc);
  int rc = gsl_linalg_SV_decomp(u, v, s, work) == GSL_SUCCESS ? PB_OK : PB_FAIL;
  if (rc != PB_OK) {
    pb_error_set("predict: ridge SVD failed");
    goto done;
  }
  /* Zc = L diag(s) R' with L (nt x k), R (p x k): tall L = u, R = v; wide L = v, R = u. */
  const gsl_matrix *lm = tall ? u : v, *rm = tall ? v : u;
  gsl_blas_dgemv(CblasTrans, 1.0, lm, yc, 0.0, uty);
  /* the vectors are GSL-allocated (unit stride) */
  const double *sv = s->data, *uv = uty->data;
  for (int32_t l = 0; l < nl; l++) {
    for (size_t j = 0; j < p; j++) {
      const double *rj = rm->data + j * rm->tda;
      double acc = 0.0;
      for (size_t q = 0; q < k; q++) acc += rj[q] * sv[q] / (sv[q] * sv[q] + lambda[l]) * uv[q];
      beta->data[(size_t)l * beta->tda + j] = acc;
    }
  }
done:
  gsl_matrix_free(u);
  gsl_matrix_free(v);
  gsl_vector_free(s);
  gsl_vector_free(work);
  gsl_vector_free(uty);
  return rc;
}

/* The training design, standardised and then centred exactly (its mean is
 * zero only up to rounding), its column means, and the centred probit
 * targets; zc [train rows][p] holds the imputed values on entry and the
 * centred design on return, yc [train rows]. */
static void pb_predict__design(const struct pb_predict_problem *pr, const double *tyall, const uint8_t *train,
                               const struct pb_predict__prep *pp, double *zc, double *zbar, double *yc, double *ybar)
{
  const int32_t p = pr->p;
  size_t t = 0;
  double ysum = 0.0;
  for (int32_t j = 0; j < p; j++) zbar[j] = 0.0;
  for (int32_t r = 0; r < pr->n; r++) {
    if (!train[r]) continue;
    double *z = zc + t * (size_t)p;
    for (int32_t j = 0; j < p; j++) {
      z[j] = (z[j] - pp->ctr[j]) / pp->scl[j];
      zbar[j] += z[j];
    }
    yc[t] = tyall[r];
    ysum += tyall[r];
    t++;
  }
  *ybar = ysum / (double)t;
  for (int32_t j = 0; j < p; j++) zbar[j] /= (double)t;
  for (size_t i = 0; i < t; i++) {
    for (int32_t j = 0; j < p; j++) zc[i * (size_t)p + (size_t)j] -= zbar[j];
    yc[i] -= *ybar;
  }
}

/* Workspace of repeated fits of one problem: probit targets, which columns
 * have missing values, and buffers for the design and the solver. */
struct pb_predict__ws {
  double *ty, *buf, *zc, *yc, *beta, *solve, *first, *fit;
  struct pb_predict__prep pp;
  double *zbar;
  uint8_t *colnan, *constant;
};

static void pb_predict__ws_init(struct pb_predict__ws *w, const struct pb_predict_problem *pr, int32_t n_lambda)
{
  const size_t n = (size_t)pr->n, p = (size_t)pr->p, nl = (size_t)n_lambda;
  w->ty = pb_malloc((n * (p + 3) + p * (12 + nl) + 2 * p * p + nl) * sizeof(double));
  w->buf = w->ty + n;
  w->zc = w->buf + n;
  w->yc = w->zc + n * p;
  w->pp.med = w->yc + n;
  w->pp.ctr = w->pp.med + p;
  w->pp.scl = w->pp.ctr + p;
  w->zbar = w->pp.scl + p;
  w->first = w->zbar + p;
  w->beta = w->first + p;
  w->solve = w->beta + p * nl;
  w->fit = w->solve + 2 * p * p + 6 * p;
  w->colnan = pb_calloc(2 * p, 1);
  w->constant = w->colnan + p;
  for (size_t r = 0; r < n; r++) {
    w->ty[r] = pb_predict_probit(pr->y[r]);
    for (size_t j = 0; j < p; j++) w->colnan[j] |= !isfinite(pr->x[r * p + j]);
  }
}

static void pb_predict__ws_free(struct pb_predict__ws *w)
{
  free(w->ty);
  free(w->colnan);
}

/* Ridge fit on the train rows (at least one), predictions (percentage
 * points) of the want rows for every penalty: pred[l * n + r]. */
static int pb_predict__fit(const struct pb_predict_problem *pr, struct pb_predict__ws *w, const uint8_t *train,
                           const uint8_t *want, int32_t n_lambda, const double *lambda, enum pb_predict_solver solver,
                           double *pred)
{
  const int32_t p = pr->p;
  size_t nt = 0;
  for (int32_t r = 0; r < pr->n; r++) nt += train[r] != 0;
  gsl_matrix_view zc = gsl_matrix_view_array(w->zc, nt, (size_t)p);
  gsl_matrix_view beta = gsl_matrix_view_array(w->beta, (size_t)n_lambda, (size_t)p);
  gsl_vector_view yc = gsl_vector_view_array(w->yc, nt);
  double ybar = 0.0;
  pb_predict__prepare(pr, train, w->colnan, w->buf, w->zc, w->first, w->constant, &w->pp);
  pb_predict__design(pr, w->ty, train, &w->pp, w->zc, w->zbar, w->yc, &ybar);
  int rc;
  if (solver == PB_PREDICT_SVD) rc = pb_predict__solve_svd(&zc.matrix, &yc.vector, n_lambda, lambda, &beta.matrix);
  else if (n_lambda == 1) rc = pb_predict__solve_chol(&zc.matrix, &yc.vector, lambda[0], &beta.matrix, w->solve);
  else rc = pb_predict__solve_path(&zc.matrix, &yc.vector, n_lambda, lambda, &beta.matrix, w->solve);
  if (rc != PB_OK) return rc;
  for (int32_t r = 0; r < pr->n; r++) {
    if (!want[r]) continue;
    /* intercept: the fitted value at the training mean of Z is the mean
     * target; each penalty's sum runs over the features in order, the
     * penalties side by side */
    for (int32_t l = 0; l < n_lambda; l++) w->fit[l] = ybar;
    for (int32_t j = 0; j < p; j++) {
      const double zj = pb_predict__z(pr, &w->pp, r, j) - w->zbar[j];
      for (int32_t l = 0; l < n_lambda; l++) w->fit[l] += w->beta[(size_t)l * p + j] * zj;
    }
    for (int32_t l = 0; l < n_lambda; l++) pred[(size_t)l * pr->n + r] = pb_predict_unprobit(w->fit[l]);
  }
  return PB_OK;
}

int pb_predict_ridge(const struct pb_predict_problem *pr, const uint8_t *train, int32_t n_lambda,
                     const double *lambda, enum pb_predict_solver solver, double *pred)
{
  int32_t nt = 0;
  for (int32_t r = 0; r < pr->n; r++) nt += train[r] != 0;
  if (nt < 1 || pr->p < 1 || n_lambda < 1) {
    pb_error_set("predict: ridge fit needs training rows and features (%d rows, %d features)", nt, pr->p);
    return PB_FAIL;
  }
  struct pb_predict__ws w;
  pb_predict__ws_init(&w, pr, n_lambda);
  uint8_t *all = pb_malloc((size_t)pr->n);
  memset(all, 1, (size_t)pr->n);
  const int rc = pb_predict__fit(pr, &w, train, all, n_lambda, lambda, solver, pred);
  free(all);
  pb_predict__ws_free(&w);
  return rc;
}

/* Sum of |pred - y| over the rows of group g, in row order. */
static double pb_predict__abs_err(const struct pb_predict_problem *pr, const double *pred, int32_t g)
{
  double acc = 0.0;
  for (int32_t r = 0; r < pr->n; r++)
    if (pr->group[r] == g) acc += fabs(pred[r] - pr->y[r]);
  return acc;
}

/* Inner MAEs within this (percentage points) of the smallest are tied: the
 * tolerance to which the ridge path's predictions agree with a Cholesky
 * solve per penalty (test_path_vs_normal_equations), so that MAEs equal in
 * exact arithmetic (degenerate folds) are not told apart by rounding.  A
 * band only moves the boundary: two MAEs about 1e-9 pp apart could still
 * fall either side of it under another solver (none of the paper store's
 * choices is near it, docs/predict.md). */
#define PB_PREDICT__TIE_PP 1e-9

/* Penalty index chosen from the inner MAEs of the grid (ascending): the
 * smallest MAE, ties (within PB_PREDICT__TIE_PP of the smallest) to the
 * larger penalty (docs/predict.md, "Fitting"). */
static int32_t pb_predict__pick(const double *mae)
{
  double lo = INFINITY;
  for (int32_t l = 0; l < PB_PREDICT_N_LAMBDA; l++) lo = mae[l] < lo ? mae[l] : lo;
  int32_t best = 0;
  for (int32_t l = 0; l < PB_PREDICT_N_LAMBDA; l++)
    if (mae[l] <= lo + PB_PREDICT__TIE_PP) best = l;
  return best;
}

/* Training mask: rows of active groups other than g1 and g2 (-1 = none);
 * want: the rows of g1 and g2. */
static void pb_predict__mask(const struct pb_predict_problem *pr, const uint8_t *active, int32_t g1, int32_t g2,
                             uint8_t *train, uint8_t *want)
{
  for (int32_t r = 0; r < pr->n; r++) {
    const int32_t g = pr->group[r];
    train[r] = active[g] && g != g1 && g != g2;
    want[r] = g == g1 || g == g2;
  }
}

/* Inner errors: the fit without groups a and b serves as the inner fold b of
 * outer fold a and the inner fold a of outer fold b (its training rows are the
 * same), so each unordered pair is fitted once.  err[(o * G + i) * L + l] is
 * the absolute error sum of inner group i within outer fold o at penalty l. */
static int pb_predict__inner(const struct pb_predict_problem *pr, struct pb_predict__ws *w, const uint8_t *active,
                             enum pb_predict_solver solver, uint8_t *train, double *pl, double *err)
{
  const int32_t G = pr->n_groups, L = PB_PREDICT_N_LAMBDA;
  for (int32_t a = 0; a < G; a++) {
    if (!active[a]) continue;
    for (int32_t b = a + 1; b < G; b++) {
      if (!active[b]) continue;
      pb_predict__mask(pr, active, a, b, train, train + pr->n);
      if (pb_predict__fit(pr, w, train, train + pr->n, L, pb_predict_lambda, solver, pl) != PB_OK) return PB_FAIL;
      for (int32_t l = 0; l < L; l++) {
        err[((size_t)a * G + b) * L + l] = pb_predict__abs_err(pr, pl + (size_t)l * pr->n, b);
        err[((size_t)b * G + a) * L + l] = pb_predict__abs_err(pr, pl + (size_t)l * pr->n, a);
      }
    }
  }
  return PB_OK;
}

int pb_predict_nested(const struct pb_predict_problem *pr, int32_t deleted, enum pb_predict_solver solver,
                      double *pred, int32_t *lam_idx)
{
  const int32_t G = pr->n_groups, L = PB_PREDICT_N_LAMBDA;
  int rc = PB_FAIL;
  uint8_t *active = pb_calloc((size_t)G, 1), *train = pb_malloc(2 * (size_t)pr->n);
  struct pb_predict__ws w;
  pb_predict__ws_init(&w, pr, L);
  int32_t *rows = pb_calloc((size_t)G, sizeof *rows);
  double *pl = pb_malloc((size_t)L * pr->n * sizeof *pl);
  double *err = pb_calloc((size_t)G * G * L, sizeof *err);
  for (int32_t r = 0; r < pr->n; r++) {
    pred[r] = NAN;
    lam_idx[r] = -1;
    if (pr->group[r] < 0 || pr->group[r] >= G) {
      pb_error_set("predict: row %d has group %d outside [0, %d)", r, pr->group[r], G);
      goto done;
    }
    rows[pr->group[r]]++;
  }
  int32_t na = 0;
  for (int32_t g = 0; g < G; g++) {
    active[g] = rows[g] > 0 && g != deleted;
    na += active[g];
  }
  if (na < 3) {
    pb_error_set("predict: nested leave-one-group-out needs at least 3 groups with models, found %d", na);
    goto done;
  }
  if (pb_predict__inner(pr, &w, active, solver, train, pl, err) != PB_OK) goto done;
  for (int32_t o = 0; o < G; o++) {
    if (!active[o]) continue;
    int32_t ntr = 0;
    for (int32_t g = 0; g < G; g++)
      if (active[g] && g != o) ntr += rows[g];
    double mae[PB_PREDICT_N_LAMBDA];
    for (int32_t l = 0; l < L; l++) {
      double s = 0.0;
      for (int32_t i = 0; i < G; i++)
        if (active[i] && i != o) s += err[((size_t)o * G + i) * L + l];
      mae[l] = s / ntr;
    }
    const int32_t best = pb_predict__pick(mae);
    pb_predict__mask(pr, active, o, -1, train, train + pr->n);
    if (pb_predict__fit(pr, &w, train, train + pr->n, 1, &pb_predict_lambda[best], solver, pl) != PB_OK) goto done;
    for (int32_t r = 0; r < pr->n; r++)
      if (pr->group[r] == o) {
        pred[r] = pl[r];
        lam_idx[r] = best;
      }
  }
  rc = PB_OK;
done:
  pb_predict__ws_free(&w);
  free(active);
  free(train);
  free(rows);
  free(pl);
  free(err);
  return rc;
}

/* Inner errors shared by the full-pool nested run and every deletion refit,
 * keyed by the excluded groups (these fits use every penalty of the grid):
 * e2[x][y][l]: absolute error sum of group x in the fit without {x, y};
 * e3[x][y][z][l] (y < z): absolute error sum of group x in the fit without
 * {x, y, z}.  The outer fits (without o, or without o and the deleted group)
 * need only the chosen penalty and are made after the choice. */
struct pb_predict__cache {
  int32_t G;
  double *e2, *e3;
};

#define PB_PREDICT__L PB_PREDICT_N_LAMBDA
#define PB_PREDICT__E2(c, x, y) ((c)->e2 + ((size_t)(x) * (c)->G + (y)) * PB_PREDICT__L)
#define PB_PREDICT__E3(c, x, y, z) ((c)->e3 + (((size_t)(x) * (c)->G + (y)) * (c)->G + (z)) * PB_PREDICT__L)

/* Training mask without groups e[0..ne) (and inactive ones); want: their rows. */
static void pb_predict__mask_n(const struct pb_predict_problem *pr, const uint8_t *active, const int32_t *e, int ne,
                               uint8_t *train, uint8_t *want)
{
  for (int32_t r = 0; r < pr->n; r++) {
    int out = 0;
    for (int i = 0; i < ne; i++) out |= pr->group[r] == e[i];
    train[r] = active[pr->group[r]] && !out;
    want[r] = (uint8_t)out;
  }
}

/* One fit without the groups e[0..ne) (ascending, ne = 2 or 3), filed into the cache. */
static int pb_predict__cache_fit(const struct pb_predict_problem *pr, struct pb_predict__ws *w, const uint8_t *active,
                                 enum pb_predict_solver solver, const int32_t *e, int ne, uint8_t *mask, double *pl,
                                 struct pb_predict__cache *c)
{
  pb_predict__mask_n(pr, active, e, ne, mask, mask + pr->n);
  if (pb_predict__fit(pr, w, mask, mask + pr->n, PB_PREDICT__L, pb_predict_lambda, solver, pl) != PB_OK)
    return PB_FAIL;
  for (int i = 0; i < ne; i++) {
    const int32_t x = e[i], y = e[i == 0], z = ne == 3 ? e[i == 2 ? 1 : 2] : -1;
    double *e = ne == 2 ? PB_PREDICT__E2(c, x, y) : PB_PREDICT__E3(c, x, y, z);
    for (int32_t l = 0; l < PB_PREDICT__L; l++) e[l] = pb_predict__abs_err(pr, pl + (size_t)l * pr->n, x);
  }
  return PB_OK;
}

/* Every fit of the cache over the active groups: pairs and (for the
 * deletion refits) triples. */
static int pb_predict__cache_fill(const struct pb_predict_problem *pr, struct pb_predict__ws *w, const uint8_t *active,
                                  int triples, enum pb_predict_solver solver, uint8_t *mask, double *pl,
                                  struct pb_predict__cache *c)
{
  const int32_t G = pr->n_groups;
  int rc = PB_OK;
  for (int32_t a = 0; a < G && rc == PB_OK; a++) {
    if (!active[a]) continue;
    int32_t e[3] = {a, -1, -1};
    for (e[1] = a + 1; e[1] < G && rc == PB_OK; e[1]++) {
      if (!active[e[1]]) continue;
      rc = pb_predict__cache_fit(pr, w, active, solver, e, 2, mask, pl, c);
      for (e[2] = e[1] + 1; e[2] < G && rc == PB_OK && triples; e[2]++)
        if (active[e[2]]) rc = pb_predict__cache_fit(pr, w, active, solver, e, 3, mask, pl, c);
    }
  }
  return rc;
}

/* Penalty of outer fold o in the nested run without group d (-1: none):
 * the same sums in the same order as pb_predict_nested. */
static int32_t pb_predict__choose(const struct pb_predict_problem *pr, const uint8_t *active, const int32_t *rows,
                                  int32_t d, int32_t o, const struct pb_predict__cache *c)
{
  const int32_t G = pr->n_groups;
  int32_t ntr = 0;
  for (int32_t g = 0; g < G; g++)
    if (active[g] && g != o && g != d) ntr += rows[g];
  double mae[PB_PREDICT__L];
  for (int32_t l = 0; l < PB_PREDICT__L; l++) {
    double s = 0.0;
    for (int32_t i = 0; i < G; i++) {
      if (!active[i] || i == o || i == d) continue;
      s += d < 0 ? PB_PREDICT__E2(c, i, o)[l] : PB_PREDICT__E3(c, i, o < d ? o : d, o < d ? d : o)[l];
    }
    mae[l] = s / ntr;
  }
  return pb_predict__pick(mae);
}

/* Out-of-fold predictions of one nested run: the outer fit without o (and
 * without the deleted group d, -1: none) at its chosen penalty, made here
 * with the single-penalty solve as pb_predict_nested makes it. */
static int pb_predict__from_cache(const struct pb_predict_problem *pr, struct pb_predict__ws *w, const uint8_t *active,
                                  const int32_t *rows, int32_t d, enum pb_predict_solver solver,
                                  const struct pb_predict__cache *c, uint8_t *mask, double *pl, double *pred,
                                  int32_t *lam_idx)
{
  for (int32_t r = 0; r < pr->n; r++) {
    pred[r] = NAN;
    lam_idx[r] = -1;
  }
  for (int32_t o = 0; o < pr->n_groups; o++) {
    if (!active[o] || o == d) continue;
    const int32_t best = pb_predict__choose(pr, active, rows, d, o, c);
    const int32_t e[2] = {o, d};
    pb_predict__mask_n(pr, active, e, d < 0 ? 1 : 2, mask, mask + pr->n);
    if (pb_predict__fit(pr, w, mask, mask + pr->n, 1, &pb_predict_lambda[best], solver, pl) != PB_OK) return PB_FAIL;
    for (int32_t r = 0; r < pr->n; r++)
      if (pr->group[r] == o) {
        pred[r] = pl[r];
        lam_idx[r] = best;
      }
  }
  return PB_OK;
}

int pb_predict_nested_all(const struct pb_predict_problem *pr, int deletions, enum pb_predict_solver solver,
                          double *pred, int32_t *lam_idx)
{
  const int32_t G = pr->n_groups, n = pr->n;
  int rc = PB_FAIL;
  uint8_t *active = pb_calloc((size_t)G, 1), *mask = pb_malloc(2 * (size_t)n);
  int32_t *rows = pb_calloc((size_t)G, sizeof *rows), na = 0;
  double *pl = pb_malloc((size_t)PB_PREDICT__L * n * sizeof *pl);
  struct pb_predict__cache c = {G, NULL, NULL};
  struct pb_predict__ws w;
  pb_predict__ws_init(&w, pr, PB_PREDICT__L);
  for (int32_t r = 0; r < n; r++) {
    if (pr->group[r] < 0 || pr->group[r] >= G) {
      pb_error_set("predict: row %d has group %d outside [0, %d)", r, pr->group[r], G);
      goto done;
    }
    rows[pr->group[r]]++;
  }
  for (int32_t g = 0; g < G; g++) {
    active[g] = rows[g] > 0;
    na += active[g];
  }
  if (na < 3 + (deletions != 0)) {
    pb_error_set("predict: nested leave-one-group-out needs at least %d groups with models%s, found %d",
                 3 + (deletions != 0), deletions ? " for deletion refits" : "", na);
    goto done;
  }
  c.e2 = pb_malloc((size_t)G * G * PB_PREDICT__L * sizeof *c.e2);
  c.e3 = deletions ? pb_malloc((size_t)G * G * G * PB_PREDICT__L * sizeof *c.e3) : NULL;
  if (pb_predict__cache_fill(pr, &w, active, deletions, solver, mask, pl, &c) != PB_OK) goto done;
  if (pb_predict__from_cache(pr, &w, active, rows, -1, solver, &c, mask, pl, pred, lam_idx) != PB_OK) goto done;
  for (int32_t g = 0; g < G && deletions; g++) {
    double *pg = pred + (size_t)(1 + g) * n;
    int32_t *lg = lam_idx + (size_t)(1 + g) * n;
    if (!active[g]) { /* a group without rows: the block-0 result */
      memcpy(pg, pred, (size_t)n * sizeof *pred);
      memcpy(lg, lam_idx, (size_t)n * sizeof *lam_idx);
    } else if (pb_predict__from_cache(pr, &w, active, rows, g, solver, &c, mask, pl, pg, lg) != PB_OK) {
      goto done;
    }
  }
  rc = PB_OK;
done:
  pb_predict__ws_free(&w);
  free(active), free(mask), free(rows), free(pl);
  free(c.e2), free(c.e3);
  return rc;
}
