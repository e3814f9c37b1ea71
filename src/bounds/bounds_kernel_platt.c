/* Platt scaling and the acceptance protocols of Table 40 (seed 000 F.1;
 * include/pairbound/calibration.h).  Pure computation. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <gsl/gsl_linalg.h>

#include "pairbound/calibration.h"
#include "pairbound/protocol.h"

static double pb_platt__x(float s)
{
  const double p = fmin(fmax((double)s, PB_PLATT_CLIP), 1.0 - PB_PLATT_CLIP);
  return log(p / (1.0 - p));
}

/* Negative log-likelihood of (a, b) with targets t[i] (summed in index order). */
static double pb_platt__nll(const double *x, const double *t, int32_t n, double a, double b)
{
  double f = 0.0;
  for (int32_t i = 0; i < n; i++) {
    const double z = a * x[i] + b;
    /* log(1 + e^z) - t z, stable for either sign of z */
    f += (z > 0 ? z + log1p(exp(-z)) : log1p(exp(z))) - t[i] * z;
  }
  return f;
}

int pb_bounds_platt_fit(const float *s, const uint8_t *correct, int32_t n, double ab[2])
{
  ab[0] = ab[1] = NAN;
  if (n <= 0) return -1;
  double *x = malloc(2 * (size_t)n * sizeof *x), *t = x + n;
  int64_t np = 0;
  for (int32_t i = 0; i < n; i++) np += correct[i] != 0;
  const double tp = (np + 1.0) / (np + 2.0), tn = 1.0 / ((n - np) + 2.0);
  for (int32_t i = 0; i < n; i++) {
    x[i] = pb_platt__x(s[i]);
    t[i] = correct[i] ? tp : tn;
  }
  double a = 0.0, b = log((np + 1.0) / ((n - np) + 1.0)), f = pb_platt__nll(x, t, n, a, b);
  for (int it = 0; it < 100; it++) {
    double g[2] = {0, 0}, h[4] = {0, 0, 0, 0};
    for (int32_t i = 0; i < n; i++) {
      const double p = 1.0 / (1.0 + exp(-(a * x[i] + b))), d = p - t[i], w = p * (1.0 - p);
      g[0] += d * x[i];
      g[1] += d;
      h[0] += w * x[i] * x[i];
      h[1] += w * x[i];
      h[3] += w;
    }
    h[2] = h[1];
    if (fabs(g[0]) + fabs(g[1]) < 1e-12 * n) break;
    /* a tiny ridge keeps the 2 x 2 Hessian positive definite when every x is equal */
    h[0] += 1e-12;
    h[3] += 1e-12;
    gsl_matrix_view H = gsl_matrix_view_array(h, 2, 2);
    gsl_vector_view G = gsl_vector_view_array(g, 2);
    double step[2];
    gsl_vector_view D = gsl_vector_view_array(step, 2);
    if (gsl_linalg_cholesky_decomp1(&H.matrix) || gsl_linalg_cholesky_solve(&H.matrix, &G.vector, &D.vector)) break;
    double lambda = 1.0, fn = f;
    for (int k = 0; k < 50; k++, lambda *= 0.5) {
      fn = pb_platt__nll(x, t, n, a - lambda * step[0], b - lambda * step[1]);
      if (fn <= f) break;
    }
    if (!(fn <= f)) break;
    a -= lambda * step[0];
    b -= lambda * step[1];
    const double df = f - fn;
    f = fn;
    if (df <= 1e-15 * (1.0 + fabs(f))) break;
  }
  ab[0] = a;
  ab[1] = b;
  free(x);
  return 0;
}

double pb_bounds_platt_apply(const double ab[2], float s)
{
  return 1.0 / (1.0 + exp(-(ab[0] * pb_platt__x(s) + ab[1])));
}

static int pb_f1__cmp_desc(const void *pa, const void *pb)
{
  const double *a = pa, *b = pb;
  return a[0] > b[0] ? -1 : a[0] < b[0] ? 1 : (a[1] < b[1]) - (a[1] > b[1]);
}

void pb_bounds_f1_thresholds(const double *v, const uint8_t *c, int32_t n, double thr[PB_F1_N_PROTOCOLS])
{
  thr[PB_F1_A90] = 0.9, thr[PB_F1_A70] = 0.7, thr[PB_F1_A50] = 0.5;
  thr[PB_F1_Q80] = thr[PB_F1_R5] = NAN;
  if (n <= 0) return;
  /* (score, wrong) pairs descending by score, wrong ones first among ties,
   * so a prefix never counts a tie's correct records before its errors */
  double *pair = malloc(2 * (size_t)n * sizeof *pair);
  for (int32_t i = 0; i < n; i++) pair[2 * i] = v[i], pair[2 * i + 1] = !c[i];
  qsort(pair, (size_t)n, 2 * sizeof *pair, pb_f1__cmp_desc);
  thr[PB_F1_Q80] = pair[2 * (pb_protocol_rank(n, 0.8) - 1)];
  thr[PB_F1_R5] = INFINITY;
  int64_t err = 0;
  for (int32_t k = 1; k <= n; k++) {
    err += pair[2 * (k - 1) + 1] != 0;
    if ((double)err <= PB_F1_RISK * k) thr[PB_F1_R5] = pair[2 * (k - 1)];
  }
  free(pair);
}

void pb_bounds_f1_cell(const struct pb_cell_view *in, const double *x0, const double *x1, const double *thr,
                       int64_t out[PB_F1_N_PROTOCOLS][PB_F1_N_COUNTS])
{
  /* one pass per protocol with the four counts in registers, branch-free */
  for (int p = 0; p < PB_F1_N_PROTOCOLS; p++) {
    const double t = thr[p];
    int64_t h = 0, l = 0, acc = 0, err = 0;
    for (int32_t i = 0; i < in->n; i++) {
      const int c0 = in->pred0[i] == in->label[i], c1 = in->pred1[i] == in->label[i];
      const int z0 = x0[i] >= t, z1 = x1[i] >= t;
      h += c0 & z0 & !c1 & z1;
      l += c0 & c1 & z0 & !z1;
      acc += z1;
      err += z1 & !c1;
    }
    out[p][PB_F1_H] = h, out[p][PB_F1_L] = l, out[p][PB_F1_ACC] = acc, out[p][PB_F1_ACC_ERR] = err;
  }
}

double pb_bounds_brier_multiclass(float ptrue, float collision) { return 1.0 - 2.0 * (double)ptrue + (double)collision; }

void pb_bounds_brier_multiclass_cell(const struct pb_cell_view *in, double out[2])
{
  double b0 = 0.0, b1 = 0.0;
  for (int32_t i = 0; i < in->n; i++) {
    b0 += pb_bounds_brier_multiclass(in->m0[i], in->q0[i]);
    b1 += pb_bounds_brier_multiclass(in->m1[i], in->q1[i]);
  }
  out[0] = b0 / in->n;
  out[1] = b1 / in->n;
}
