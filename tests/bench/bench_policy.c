/* Per-class cost of the exact policy kernel (pb_policy_cell on a one-class
 * cell: every level, 5 policies, 11 weights) at real class sizes, beside the
 * bounds engine's exact I5 H program (pb_bounds_class_h_i5) on the same
 * classes.  Usage: bench_policy [n ...] (default 25 75 150 500 1000). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pairbound/bounds.h"
#include "pairbound/policy.h"

#define BENCH_SEED 20261130u
#include "benchutil.h"

/* Confusions concentrate on a few of the 9 other classes (CIFAR-like). */
static int32_t wrong_label(void)
{
  int l = 1;
  while (l < 9 && unif() < 0.5) l++;
  return l;
}

int main(int argc, char **argv)
{
  int sizes[16] = {25, 75, 150, 500, 1000}, ns = 5;
  if (argc > 1) {
    ns = argc - 1 < 16 ? argc - 1 : 16;
    for (int i = 0; i < ns; i++) sizes[i] = atoi(argv[i + 1]);
  }
  const float taus[5] = {0.3f, 0.45f, 0.6f, 0.75f, 0.9f};
  double lams[11];
  for (int i = 0; i < 11; i++) lams[i] = i / 10.0;
  printf("== exact policy kernel per class (one class, 5 policies, 11 weights, 3 levels; acc .8/.6, 9 wrong labels) ==\n");
  for (int q = 0; q < ns; q++) {
    const int n = sizes[q];
    int32_t *lab = calloc((size_t)n, sizeof *lab), *p0 = malloc((size_t)n * sizeof *p0),
            *p1 = malloc((size_t)n * sizeof *p1);
    float *s0 = malloc((size_t)n * sizeof *s0), *s1 = malloc((size_t)n * sizeof *s1);
    uint8_t *z0 = malloc((size_t)n), *z1 = malloc((size_t)n);
    const int reps = n <= 150 ? 20 : 3;
    double tpol = 0, tpol_worst = 0, tb = 0;
    long unrep = 0;
    for (int r = 0; r < reps; r++) {
      for (int i = 0; i < n; i++) {
        int c0 = unif() < 0.8, c1 = c0 ? unif() < 0.72 : unif() < 0.2;
        p0[i] = c0 ? 0 : wrong_label();
        p1[i] = c1 ? 0 : (!c0 && unif() < 0.5 ? p0[i] : wrong_label());
        s0[i] = (float)(c0 ? 0.3 + 0.7 * unif() : unif());
        s1[i] = (float)(c1 ? 0.3 + 0.7 * unif() : unif());
      }
      const struct pb_cell_view in = {.index = -1, .n = n, .label = lab, .pred0 = p0, .s0 = s0, .m0 = s0,
                                      .pred1 = p1, .s1 = s1, .m1 = s1, .tau = 0.5f};
      const struct pb_policy_setup ps = {.n_pol = 5, .tau = taus, .n_lambda = 11, .lambda = lams};
      static struct pb_policy_result out;
      double t0 = now();
      if (pb_policy_cell(&in, &ps, &out) != 0) {
        fprintf(stderr, "pb_policy_cell failed at n = %d\n", n);
        return 1;
      }
      double dt = now() - t0;
      tpol += dt;
      if (dt > tpol_worst) tpol_worst = dt;
      unrep += out.n_mean_unrepresentable;
      int k = 0, s = 0;
      for (int i = 0; i < n; i++) {
        k += p0[i] == 0 && p1[i] == 0;
        s += p0[i] != 0 && p1[i] != 0 && p0[i] == p1[i];
        z0[i] = s0[i] >= 0.5f;
        z1[i] = s1[i] >= 0.6f;
      }
      int64_t o[2];
      t0 = now();
      if (pb_bounds_class_h_i5(n, 0, p0, z0, p1, z1, k, s, o) != 0) {
        fprintf(stderr, "observed counts infeasible at n = %d\n", n);
        return 1;
      }
      tb += now() - t0;
    }
    printf("  n = %4d per side: policy %9.3f ms/class (worst %9.3f ms), I5 H means unrepresentable %ld/%d;"
           " bounds I5 H %8.3f ms/class\n",
           n, 1e3 * tpol / reps, 1e3 * tpol_worst, unrep, reps, 1e3 * tb / reps);
    fflush(stdout);
    free(lab); free(p0); free(p1); free(s0); free(s1); free(z0); free(z1);
  }
  return 0;
}
