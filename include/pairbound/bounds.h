/* Sharp identification bounds for one model x condition cell when the
 * clean/perturbed correspondence is varied within true classes (seed
 * Sections 3.1-3.2, 4.1, Appendix A, B.4, H.2).  See docs/bounds.md. */
#ifndef PAIRBOUND_BOUNDS_H
#define PAIRBOUND_BOUNDS_H

#include <stdint.h>

#include "pairbound/cell.h"

/* Everything that pb_bounds_cell() derives for a cell.  Rates are counts / n;
 * an interval is {lower, upper}.  NaN marks an undefined value (dM_k with
 * empty support) or one that was not requested (want_i5 == 0). */
struct pb_cell_bounds {
  int64_t n, h, r, s, w, k;     /* observed five-state totals (Table 1) */
  int64_t n_classes;            /* distinct true labels */
  double acc0, acc1;            /* clean / perturbed accuracy */
  double F;                     /* predicted-label change rate h + r + w */
  double A;                     /* mean |S - S'| */
  double Q;                     /* Pearson corr(S, S'); NaN if either side is constant */
  double E;                     /* P(C' = 0, Z' = 1), correspondence-free */
  double U, V1;                 /* P(C = 1, Z = 1) and P(C' = 1, Z' = 0): the one-sided event masses
                                   that H and L intersect (Appendix B.2 event fractions) */
  double H_obs, L_obs, dMk_obs; /* values under the observed correspondence */

  double H_I0[2], H_Ik[2], H_I5[2], H_ind;     /* Eq. 4, Eq. 7, exact I5 (DP), Eq. 4 */
  double L_I0[2], L_Ik[2], L_I5[2], L_ind;     /* Eq. 4, Eq. 5, via I5 blocks, Eq. 4 */
  double dMk_I0[2], dMk_Ik[2], dMk_I5[2], dMk_ind; /* A.10, Eq. 6, via I5 blocks, Eq. 14 */
  double W, V;                  /* Eq. 9: dMk_obs - dMk_ind = W + V (NaN when K = 0) */

  /* Table 2's score changes in the wrong-answer states, E[S - S' | T = j]
   * (NaN when the state is empty), and the class-conditional independent
   * counterparts (H.2) of the paired summaries: every clean record with every
   * perturbed record of its class, weight 1/n_y; ds_*_ind are ratios of the
   * expected numerator and denominator, as Eq. 14. */
  double ds_s, ds_w;
  double F_ind, A_ind, Q_ind, k_ind, ds_s_ind, ds_w_ind;

  /* Appendix C.3 / Table 11: width of the total overlap K / n from accuracies
   * only, classwise (sum of per-class Frechet widths) and global (A, B, N). */
  double K_width_class, K_width_global;
  int64_t n_pinned;             /* classes whose k_y interval is a single value */
};

/**
 * Compute observed statistics and all identification intervals of one cell.
 *
 * Classes are processed in ascending label order and records within a class
 * in index order, so floating sums (and therefore the output) are
 * deterministic and independent of the input order of classes.  Thread-safe:
 * no global mutable state; a few scratch buffers are allocated per call.
 *
 * @param in       the cell's records (n > 0; label, pred0/s0/m0, pred1/s1/m1
 *                 all present with n entries; labels and predictions >= 0, a
 *                 prediction equal to the true label is correct) and its
 *                 threshold tau (Z = [S >= tau] in float32, both sides).
 * @param want_i5  non-zero to also compute the exact five-state H interval
 *                 (dynamic program per class), L and dM_k through the
 *                 five-state block structure, and the variable-support dM_k
 *                 interval at I0 (Appendix A.10); zero fills them with NaN and
 *                 keeps the call O(n log n).
 * @param out      filled on success.
 * @return 0 on success, -1 on invalid input (n <= 0, NULL arrays, negative
 *         labels or predictions, NaN tau) or allocation failure, with
 *         pb_error_set() naming the cell (and the class where one is at fault).
 */
int pb_bounds_cell(const struct pb_cell_view *in, int want_i5, struct pb_cell_bounds *out);

/* Cross-model support for a clean wrong answer (seed 000 J.2, Table 49). */
enum pb_support_variant {
  PB_SUPPORT_XMODEL,        /* share of every other model */
  PB_SUPPORT_XGROUP,        /* share of the models outside the evaluated model's group (Table 49) */
  PB_SUPPORT_GROUPS_EQUAL,  /* mean over the other groups of each group's share */
  PB_SUPPORT_N
};
enum pb_support_stratum { PB_SUPPORT_LOW, PB_SUPPORT_MID, PB_SUPPORT_HIGH, PB_SUPPORT_N_STRATA };
#define PB_SUPPORT_LOW_MAX 0.25   /* low support: at most this share */
#define PB_SUPPORT_HIGH_MIN 0.75  /* high support: at least this share */
#define PB_SUPPORT_TOL 1e-12      /* rounding of a mean of group shares must not move a boundary value */

/**
 * Support of every clean wrong answer of one source: for model m wrong on
 * image i with answer w, the share of other models whose clean prediction on
 * i is also w, in the three variants of enum pb_support_variant.
 *
 * @param group   [n_models] group index of each model, in [0, n_groups)
 * @param label   [n_images] true labels
 * @param clean   [n_models][n_images] clean predicted labels
 * @param out     [PB_SUPPORT_N][n_models][n_images]; NaN where m is correct
 *                on i, or the variant has no other model or group
 */
void pb_bounds_clean_support(int32_t n_models, int32_t n_groups, const int32_t *group, int32_t n_images,
                             const int32_t *label, const int32_t *clean, double *out);

/** Stratum of a support value: low (<= 0.25), high (>= 0.75) or middle, within PB_SUPPORT_TOL. */
int pb_bounds_support_stratum(double v);

/**
 * One cell's J.2 events: its clean-wrong records by support stratum
 * (counts[v][stratum][0]) and how many of them keep the same wrong answer
 * after perturbation (counts[v][stratum][1]), i.e. persistent errors s.
 * support[v][i]: the support of the cell's model on the cell's image i.
 */
void pb_bounds_support_cell(const struct pb_cell_view *in, const double *const support[PB_SUPPORT_N],
                            int64_t counts[PB_SUPPORT_N][PB_SUPPORT_N_STRATA][2]);

/**
 * Exact count bounds for H in one class at information level I5.
 *
 * The five observed state counts of the class are given by the records
 * themselves (correct counts a, b) together with the correct-correct count k
 * and the persistent-wrong count s; then h = a - k, r = b - k and
 * w = n - a - b + k - s.  The bounds are the minimum and maximum, over all
 * within-class bijections with exactly these five counts, of the number of
 * pairs whose clean record is correct and accepted and whose perturbed record
 * is wrong and accepted.  Cost O((P + L) (h + 1) (s + 1) c) for P wrong
 * perturbed records, L distinct wrong labels and c the largest per-label
 * clean multiplicity; no enumeration and no LP.
 *
 * @param n      records per side in the class (>= 1)
 * @param label  the class's true label y
 * @param pred0  [n] clean predicted labels (== label means correct)
 * @param z0     [n] clean acceptance flags (0/1)
 * @param pred1  [n] perturbed predicted labels
 * @param z1     [n] perturbed acceptance flags (0/1)
 * @param k      correct-correct count to condition on
 * @param s      persistent-wrong (same wrong label) count to condition on
 * @param out    [2] receives {min, max} H count when the return value is 0
 * @return 0 when some bijection has the requested counts, 1 when none does
 *         (out is then {-1, -1}), -1 on invalid arguments or allocation failure.
 */
int pb_bounds_class_h_i5(int32_t n, int32_t label, const int32_t *pred0, const uint8_t *z0,
                         const int32_t *pred1, const uint8_t *z1, int32_t k, int32_t s,
                         int64_t out[2]);

/* The witness correspondences of pb_bounds_witness_cell: H's lower and upper
 * end at Ik, then at I5. */
enum pb_witness { PB_WITNESS_IK_LO, PB_WITNESS_IK_HI, PB_WITNESS_I5_LO, PB_WITNESS_I5_HI, PB_WITNESS_N };

/**
 * Witnesses of one cell's H endpoints (docs/bounds.md, "Witnesses"): for each
 * of the four ends a within-class bijection perm[w] (clean record i is paired
 * with perturbed record perm[w][i], both of class label[i]) whose H count,
 * summed over the classes, is the end's count: every class attains its own
 * end.  The Ik bijections keep each class's observed correct-correct count k,
 * the I5 ones also its observed same-label wrong count s (so all five
 * counts).  Thread-safe, no I/O.
 *
 * @param in       the cell (as pb_bounds_cell; m0, m1 are not read)
 * @param want_i5  zero: perm[PB_WITNESS_I5_*] are filled with -1
 * @param perm     [PB_WITNESS_N] arrays of in->n entries
 * @return 0, or -1 with pb_error_set() naming the cell (and class).
 */
int pb_bounds_witness_cell(const struct pb_cell_view *in, int want_i5, int32_t *const perm[PB_WITNESS_N]);

/* Tables 47 and 48 (seed 000 Section 7 and Appendix J.1): one cell's counts on its matched images (those
 * with a nonempty label set) under the original labels (convention 0) and record-attached set correctness
 * (convention 1), from the stored predictions.  Per convention c the states start at PB_LS_CONV + c *
 * PB_LS_NSTATE. */
enum pb_bounds_lsets_state {
  PB_LSS_H, PB_LSS_R, PB_LSS_K, PB_LSS_KEQ, PB_LSS_KDIFF, PB_LSS_S, PB_LSS_W,
  PB_LSS_HACC, /* H event: clean correct and accepted, perturbed wrong and accepted */
  PB_LSS_LACC, /* L event: clean correct and accepted, perturbed correct and rejected */
  PB_LS_NSTATE
};
/* Appendix J.1's two splits of the matched images, each as its first subgroup (the second is the rest):
 * candidate-compatible (the set holds a class the models can predict, one in [0, n_classes)) and
 * label-retained (the set holds the original label).  Per subgroup PB_LSG_N slots from PB_LS_SPLIT + g *
 * PB_LSG_N: its images, then per convention c its perturbed correct records (a1) and its s pairs. */
enum pb_bounds_lsets_split { PB_LSG_COMPATIBLE, PB_LSG_RETAINED, PB_LSG_N_SPLITS };
enum pb_bounds_lsets_group { PB_LSG_IMAGES, PB_LSG_A1, PB_LSG_S = PB_LSG_A1 + 2, PB_LSG_N = PB_LSG_S + 2 };
enum pb_bounds_lsets_slot {
  PB_LS_N,        /* matched images */
  PB_LS_CELLS,    /* 1 when the cell has matched images */
  PB_LS_AGREE,    /* q_agree's count: matched images whose two predictions are equal */
  PB_LS_CONV,     /* the two conventions' states */
  PB_LS_MOVED_H = PB_LS_CONV + 2 * PB_LS_NSTATE, /* original h records whose state differs under sets */
  PB_LS_MOVED_W,  /* original w records whose state differs under sets */
  PB_LS_EQ15_FAIL, /* conventions (0, 1 or 2) in which Eq. 15 fails on the cell: q_agree - a1 != s - r - k_diff */
  PB_LS_SPLIT,    /* the subgroups of the splits */
  PB_LS_N_SLOTS = PB_LS_SPLIT + PB_LSG_N_SPLITS * PB_LSG_N
};

/**
 * The Table 47/48 and J.1 split counts of one cell into @p out (PB_LS_N_SLOTS, zeroed first).  @p in's pred0
 * and pred1 are the stored predictions (not pb_lsets_pred's map), s0, s1 the maximum probabilities, accepted
 * at in->tau, and m0, m1 the probabilities of the original label; image i's set is ids[off[i] .. off[i + 1])
 * (ascending, nonnegative), and images with an empty set are left out.  A record is correct under convention
 * 0 iff pred == label, under 1 iff pred is in its image's set.  dmk[c]: the cell's dM_k (mean M - M') under
 * convention c over its k pairs whose original label is in the set, NaN when there is none.
 */
void pb_bounds_lsets_cell(const struct pb_cell_view *in, const int64_t *off, const int32_t *ids, int32_t n_classes,
                          int64_t out[PB_LS_N_SLOTS], double dmk[2]);

#endif /* PAIRBOUND_BOUNDS_H */
