/* Exact fragility profiles of finite laws (seed 001 Section 3.1, Appendix
 * E.1-E.2).  Pure computation: no MPI, no I/O.  docs/fragility.md derives
 * every formula used here. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/fragility.h"

struct pb_fragility__atom {
  double value, mass;
};

/* Ascending by value, equal values in input order (stable), so that the merged masses are summed in the
 * order the law was given in whatever the C library: insertion sorts of runs of up to
 * PB_FRAGILITY_MAX_GROUPS atoms (a bin's law has no more, and is set hundreds of times per unit, where a
 * library sort's call overhead dominated), merged pairwise for larger laws (--law files) through @p tmp
 * (m atoms; unused below that).  qsort is not used: glibc's is stable only up to 2.36. */
static void pb_fragility__sort_atoms(struct pb_fragility__atom *a, int32_t m, struct pb_fragility__atom *tmp)
{
  const int32_t run = PB_FRAGILITY_MAX_GROUPS;
  for (int32_t r0 = 0; r0 < m; r0 += run) {
    const int32_t r1 = r0 + run < m ? r0 + run : m;
    for (int32_t i = r0 + 1; i < r1; i++) {
      const struct pb_fragility__atom x = a[i];
      int32_t j = i;
      for (; j > r0 && a[j - 1].value > x.value; j--) a[j] = a[j - 1];
      a[j] = x;
    }
  }
  for (int32_t w = run; w < m; w *= 2) { /* runs of w merged into runs of 2w, the left run first on ties */
    for (int32_t lo = 0; lo < m; lo += 2 * w) {
      const int32_t mid = lo + w < m ? lo + w : m, hi = lo + 2 * w < m ? lo + 2 * w : m;
      int32_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = a[j].value < a[i].value ? a[j++] : a[i++];
      while (i < mid) tmp[k++] = a[i++];
      while (j < hi) tmp[k++] = a[j++];
    }
    memcpy(a, tmp, (size_t)m * sizeof *a);
  }
}

/* s + x, the rounding error of the addition added to *c (Neumaier's compensated summation). */
static inline double pb_fragility__neumaier(double s, double x, double *c)
{
  const double t = s + x;
  *c += fabs(s) >= fabs(x) ? (s - t) + x : (x - t) + s;
  return t;
}

void pb_fragility_law_init(struct pb_fragility_law *law)
{
  memset(law, 0, sizeof *law);
}

static void pb_fragility__side_free(struct pb_fragility_side *s)
{
  free(s->P);
  free(s->mu);
  free(s->V);
  free(s->brk);
}

void pb_fragility_law_free(struct pb_fragility_law *law)
{
  free(law->z);
  free(law->p);
  free(law->scratch);
  pb_fragility__side_free(&law->up);
  pb_fragility__side_free(&law->down);
  memset(law, 0, sizeof *law);
}

static void pb_fragility__grow(struct pb_fragility_law *law, int32_t n)
{
  if (n <= law->cap) return;
  size_t b = (size_t)n * sizeof(double);
  law->z = pb_realloc(law->z, b);
  law->p = pb_realloc(law->p, b);
  law->scratch = pb_realloc(law->scratch, 2 * (size_t)n * sizeof(struct pb_fragility__atom)); /* atoms, merge space */
  struct pb_fragility_side *sides[2] = {&law->up, &law->down};
  for (int d = 0; d < 2; d++) {
    sides[d]->P = pb_realloc(sides[d]->P, b);
    sides[d]->mu = pb_realloc(sides[d]->mu, b);
    sides[d]->V = pb_realloc(sides[d]->V, b);
    sides[d]->brk = pb_realloc(sides[d]->brk, b);
  }
  law->cap = n;
}

/* Atom k of direction dir in ascending order: x_k = z_k (up) or -z_{n-1-k} (down). */
static inline double pb_fragility__x(const struct pb_fragility_law *law, int dir, int32_t k)
{
  return dir == PB_FRAGILITY_UP ? law->z[k] : -law->z[law->n - 1 - k];
}

static inline double pb_fragility__q(const struct pb_fragility_law *law, int dir, int32_t k)
{
  return dir == PB_FRAGILITY_UP ? law->p[k] : law->p[law->n - 1 - k];
}

/* The sweep tables of one direction.  Walking the threshold down from the top
 * atom, the atoms above x_k are merged one at a time (Chan's pairwise update
 * of mass, mean and centred second moment, which avoids the cancellation of
 * E[X^2] - E[X]^2).  The budget at t = x_k is
 *   rho(x_k) = (V + u^2 / P) / u^2 - 1,  u = P (mu - x_k) = E[(X - x_k)+]. */
static void pb_fragility__side(struct pb_fragility_law *law, int dir)
{
  struct pb_fragility_side *s = dir == PB_FRAGILITY_UP ? &law->up : &law->down;
  int32_t n = law->n;
  if (law->G == 0) { /* one atom: r = 1 is optimal at every budget, Phi = 0 */
    s->rho_plus = INFINITY;
    s->rho_sat = 0;
    s->top = 0;
    return;
  }
  double x0 = pb_fragility__x(law, dir, 0);
  s->rho_plus = law->G / (x0 * x0);
  s->top = pb_fragility__x(law, dir, n - 1);
  s->rho_sat = 1.0 / pb_fragility__q(law, dir, n - 1) - 1.0;
  double P = 0, mu = 0, V = 0;
  for (int32_t k = n - 2; k >= 0; k--) {
    double q = pb_fragility__q(law, dir, k + 1), x = pb_fragility__x(law, dir, k + 1);
    double Pn = P + q, d = x - mu;
    mu += d * q / Pn;
    V += d * d * P * q / Pn;
    P = Pn;
    double u = P * (mu - pb_fragility__x(law, dir, k));
    s->P[k] = P;
    s->mu[k] = mu;
    s->V[k] = V;
    s->brk[k] = V / (u * u) + 1.0 / P - 1.0;
  }
}

int pb_fragility_law_set(struct pb_fragility_law *law, const double *value, const double *mass, int32_t n)
{
  pb_fragility__grow(law, n > 1 ? n : 1);
  struct pb_fragility__atom *a = law->scratch;
  int32_t m = 0;
  double total = 0;
  for (int32_t i = 0; i < n; i++) {
    if (!isfinite(value[i])) {
      pb_error_set("atom %d: value %g is not finite", (int)i + 1, value[i]);
      return PB_FAIL;
    }
    if (!isfinite(mass[i]) || mass[i] < 0) {
      pb_error_set("atom %d: mass %g is not a non-negative number", (int)i + 1, mass[i]);
      return PB_FAIL;
    }
    if (mass[i] > 0) a[m++] = (struct pb_fragility__atom){value[i], mass[i]};
  }
  pb_fragility__sort_atoms(a, m, a + n);
  /* compensated sums (Neumaier), in ascending value order so the result does not depend on input order: the
   * masses' rounding errors do not add up (100,000 atoms of 1e-5 sum to 1, naively 1 - 1.9e-12) */
  double c = 0;
  for (int32_t i = 0; i < m; i++) total = pb_fragility__neumaier(total, a[i].mass, &c);
  total += c;
  if (!(total > 0)) {
    pb_error_set("the law has no positive mass");
    return PB_FAIL;
  }
  int32_t k = 0;
  for (int32_t i = 0; i < m;) { /* equal values merged: their masses summed, then divided once */
    double sum = 0;
    c = 0;
    law->z[k] = a[i].value;
    for (; i < m && a[i].value == law->z[k]; i++) sum = pb_fragility__neumaier(sum, a[i].mass, &c);
    law->p[k++] = (sum + c) / total;
  }
  law->n = k;
  double mean = 0, G = 0;
  for (int32_t i = 0; i < k; i++) mean += law->p[i] * law->z[i];
  double fix = 0; /* one refinement pass: the rounding of the first sum, measured exactly enough */
  for (int32_t i = 0; i < k; i++) fix += law->p[i] * (law->z[i] - mean);
  mean += fix;
  for (int32_t i = 0; i < k; i++) {
    law->z[i] -= mean;
    G += law->p[i] * law->z[i] * law->z[i];
  }
  law->mean = mean;
  law->G = k > 1 ? G : 0;
  pb_fragility__side(law, PB_FRAGILITY_UP);
  pb_fragility__side(law, PB_FRAGILITY_DOWN);
  return PB_OK;
}

/* The piece of the sweep whose budget range holds rho: the largest k with
 * brk[k] <= rho (brk increases strictly in k, docs/fragility.md). */
static int32_t pb_fragility__piece(const struct pb_fragility_side *s, int32_t n, double rho)
{
  int32_t lo = 0, hi = n - 2; /* brk[0] = rho_plus <= rho here */
  while (lo < hi) {
    int32_t mid = (lo + hi + 1) / 2;
    if (s->brk[mid] <= rho) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* Phi(rho) = mu + sqrt(V (rho + 1 - 1/P)) on the piece of the atoms above t
 * (docs/fragility.md, "Between atoms"). */
double pb_fragility_profile(const struct pb_fragility_law *law, enum pb_fragility_dir dir, double rho)
{
  const struct pb_fragility_side *s = dir == PB_FRAGILITY_UP ? &law->up : &law->down;
  if (law->G == 0) return 0;
  if (rho <= s->rho_plus) return sqrt(rho * law->G);
  if (rho >= s->rho_sat) return s->top;
  int32_t k = pb_fragility__piece(s, law->n, rho);
  double c = rho + 1.0 - 1.0 / s->P[k];
  return s->mu[k] + sqrt(s->V[k] * (c > 0 ? c : 0));
}

void pb_fragility_weights(const struct pb_fragility_law *law, enum pb_fragility_dir dir, double rho, double *r)
{
  const struct pb_fragility_side *s = dir == PB_FRAGILITY_UP ? &law->up : &law->down;
  int32_t n = law->n;
  int regime = law->G == 0 ? 0 : rho <= s->rho_plus ? 1 : rho >= s->rho_sat ? 3 : 2;
  double t = 0, u = 1;
  if (regime == 2) {
    int32_t j = pb_fragility__piece(s, n, rho);
    double c = rho + 1.0 - 1.0 / s->P[j];
    if (s->V[j] > 0 && c > 0) {
      u = sqrt(s->V[j] / c); /* u = E[(X - t)+] */
      t = s->mu[j] - u / s->P[j];
    } else {
      regime = 3; /* only the top atom lies above t: rounding put rho a hair below rho_sat */
    }
  }
  for (int32_t k = 0; k < n; k++) {
    int32_t i = dir == PB_FRAGILITY_UP ? k : n - 1 - k; /* atom index of x_k */
    double x = pb_fragility__x(law, dir, k);
    switch (regime) {
    case 0: r[i] = 1; break;
    case 1: r[i] = 1 + x * sqrt(rho / law->G); break;
    case 2: r[i] = x > t ? (x - t) / u : 0; break;
    default: r[i] = k == n - 1 ? 1.0 / pb_fragility__q(law, dir, k) : 0; break;
    }
  }
}
