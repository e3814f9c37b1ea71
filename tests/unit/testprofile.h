/* The fragility tests' independent solver (test_fragility_study, test_fragility_diag): the upward profile of a
 * law of n atoms by enumeration of support sets, not by the kernel's method. */
#ifndef PAIRBOUND_TESTPROFILE_H
#define PAIRBOUND_TESTPROFILE_H

#include <math.h>

/* max E[r z] over r >= 0, E[r] = 1, E[r^2] <= 1 + rho for n atoms z with probabilities p (E[z] = 0): on a support
 * set S the optimum is r = a + b z there (its Lagrange conditions), kept when r >= 0 on S. */
static inline double testprofile_brute(int n, const double *z, const double *p, double rho)
{
  double best = 0; /* r = 1 */
  for (int S = 1; S < (1 << n); S++) {
    double P = 0, M1 = 0, M2 = 0;
    for (int i = 0; i < n; i++)
      if (S >> i & 1) P += p[i], M1 += p[i] * z[i], M2 += p[i] * z[i] * z[i];
    const double curv = M2 - M1 * M1 / P, need = 1 + rho - 1 / P;
    if (curv > 1e-15 && need >= 0) {
      const double b = sqrt(need / curv), a = (1 - b * M1) / P;
      int ok = 1;
      for (int i = 0; i < n; i++) ok &= !(S >> i & 1) || a + b * z[i] >= -1e-12;
      if (ok) best = fmax(best, a * M1 + b * M2);
    }
    /* S of one value (an atom, or atoms of equal value): r = 1 / P on S, costing 1 / P - 1 */
    if (curv <= 1e-15 && 1 / P - 1 <= rho) best = fmax(best, M1 / P);
  }
  return best;
}

#endif /* PAIRBOUND_TESTPROFILE_H */
