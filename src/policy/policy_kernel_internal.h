/* Between src/policy/policy_kernel.c and src/policy/policy_kernel_mean.c: one
 * class of a cell as the policy kernels see it (pure: no MPI). */
#ifndef PAIRBOUND_POLICY_KERNEL_INTERNAL_H
#define PAIRBOUND_POLICY_KERNEL_INTERNAL_H

#include <stdint.h>

/* One wrong label of a class: c clean and p perturbed wrong records predicting
 * it; the perturbed ones' acceptance masks are masks[0..p). */
struct pb_policy__label {
  int32_t lab, c, p;
  int32_t e_obs, f_obs, j_obs;   /* observed: in the h block, in the r block, same-label pairs */
  const uint16_t *masks;
};

/* A class: counts and per-record acceptance masks (bit j = accepted by tau_j). */
struct pb_policy__class {
  int32_t n, a, u, b, k, s;      /* observed k and s */
  int32_t hb, rb, m, w;          /* block sizes h, r, s + w, w */
  uint16_t *cmask;               /* [b] correct perturbed */
  uint16_t *wmask;               /* [n - b] wrong perturbed, grouped by label */
  struct pb_policy__label *lab;  /* wrong labels with c > 0 or p > 0, ascending */
  int32_t n_lab;
  /* contiguous copies for pb_bounds_class_h_i5 */
  int32_t *pred0, *pred1, label;
  uint8_t *z0, *z1;              /* z1 is [n_pol][n] */
};

/* rho[li] = E[e_l] / p_l at I5 for every wrong label li of @p cl (policy_kernel_mean.c);
 * 1 when the exact counts are out of reach (the class's mean is then not exact). */
int pb_policy__rho5(const struct pb_policy__class *cl, double *rho);

#endif /* PAIRBOUND_POLICY_KERNEL_INTERNAL_H */
