/* Helpers shared by bounds_kernel.c and bounds_kernel_i5.c; not part of the public API. */
#ifndef PAIRBOUND_BOUNDS_INTERNAL_H
#define PAIRBOUND_BOUNDS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Kinds of wrong records in the five-state DP key: key = label * 4 + kind. */
#define PB_BOUNDS__CLEAN_WRONG 0
#define PB_BOUNDS__PERT_WRONG_REJ 1
#define PB_BOUNDS__PERT_WRONG_ACC 2

static inline int64_t pb_bounds__key(int32_t label, int kind)
{
  return (int64_t)label * 4 + kind;
}

/* int32 entries of DP scratch that pb_bounds__h_i5_core() needs. */
static inline size_t pb_bounds__h_i5_dp_len(int32_t h, int32_t s)
{
  return 4 * (size_t)(h + 1) * (size_t)(s + 1) + 2 * (size_t)(h + 1);
}

/* Range of t' (accepted wrong perturbed records in the correct-clean/wrong-
 * perturbed block) over all bijections with block sizes h, r, s, w.
 * keys: the class's wrong records (sorted in place); dp: scratch of
 * pb_bounds__h_i5_dp_len(h, s) entries.  Returns 0 and tp = {min, max} when
 * feasible, 1 when no bijection has these counts. */
int pb_bounds__h_i5_core(int64_t *keys, int32_t nkeys, int32_t h, int32_t r, int32_t s,
                         int32_t w, int32_t *dp, int32_t tp[2]);

/* H count interval from the t' range (correct clean records are free, A.3). */
static inline void pb_bounds__h_from_tprime(int32_t a, int32_t u, int32_t h, const int32_t tp[2],
                                            int64_t out[2])
{
  int32_t lo = tp[0] - (a - u), hi = tp[1];
  if (lo < 0) lo = 0;
  if (hi > u) hi = u;
  if (hi > h) hi = h;
  out[0] = lo;
  out[1] = hi;
}

/* L count and dM_k numerator extremes at I5, from the I5 block structure.
 * x: clean correct M ascending (a entries), xacc: their acceptance flags in
 * the same order; z: perturbed correct M' ascending (b entries), zrej: their
 * rejection flags.  kblock: size of the correct-correct block. */
void pb_bounds__class_l_dmk_i5(int32_t a, const double *x, const uint8_t *xacc, int32_t b,
                               const double *z, const uint8_t *zrej, int32_t kblock,
                               int64_t lcount[2], double dnum[2]);

/* Sums of the class-conditional independent combination (H.2): every clean
 * record of a class with every perturbed record of it, weight 1/n_y, added
 * class by class in ascending label order. */
struct pb_bounds__ind {
  double flips, absd, cov, k, dss_num, dss_den, dsw_num, dsw_den;
};

/* Bytes of scratch that pb_bounds__class_ind needs for a class of ny records
 * (a multiple of 8; 8-byte aligned). */
size_t pb_bounds__ind_work_len(int32_t ny);

/* Add class y's independent sums to *t.  s0/p0 and s1/p1: the class's ny
 * clean and perturbed S and predicted labels in index order; mean0/mean1:
 * the cell means of S and S'; work: pb_bounds__ind_work_len(ny) bytes.
 * O(ny log ny) when the sums are provably exact (the same doubles as the
 * definition's index-order loop), else that O(ny^2) loop. */
void pb_bounds__class_ind(const float *s0, const int32_t *p0, const float *s1, const int32_t *p1, int32_t ny,
                          int32_t y, double mean0, double mean1, void *work, struct pb_bounds__ind *t);

#endif /* PAIRBOUND_BOUNDS_INTERNAL_H */
