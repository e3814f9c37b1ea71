/* Fragility profiles of finite propensity laws (seed 001 Section 3,
 * Appendix E; derivations in docs/fragility.md).
 *
 * A law is a finite set of propensity values eta_i with masses p_i.  With
 * Z = eta - E[eta] and G = Var(Z), the upward profile is
 *   Phi_up(rho) = sup { E[(r - 1) Z] : r >= 0, E[r] = 1, E[(r - 1)^2] <= rho }
 * and the downward profile is the same for -Z.  Both are computed exactly:
 * the square-root law sqrt(rho G) on [0, rho_plus], the truncated-affine
 * optimiser r = (Z - t)+ / E[(Z - t)+] between rho_plus and rho_sat with t
 * solved in closed form on the piece between two atoms, and max Z beyond. */
#ifndef PAIRBOUND_FRAGILITY_H
#define PAIRBOUND_FRAGILITY_H

#include <stdint.h>
#include <stdio.h>

#include "pairbound/cell.h"
#include "pairbound/options.h"
#include "pairbound/protocol.h"

/* One direction of a law: the atoms x_0 < ... < x_{n-1} of Z (up) or -Z (down). */
struct pb_fragility_side {
  double rho_plus;  /* end of the square-root regime, G / x_0^2 (inf when G = 0) */
  double rho_sat;   /* start of saturation, 1 / P(x_{n-1}) - 1 (0 when G = 0) */
  double top;       /* the saturation value x_{n-1} */
  /* For k = 0 .. n-2, the atoms above x_k: mass P[k], mean mu[k], centred
   * second moment V[k] = sum p (x - mu)^2, and the budget brk[k] = rho(t = x_k). */
  double *P, *mu, *V, *brk;
};

struct pb_fragility_law {
  int32_t n;        /* distinct atoms with positive mass */
  int32_t cap;      /* allocated length of every array */
  double mean;      /* E[eta] */
  double G;         /* Var(eta) */
  double *z;        /* centred atoms ascending (z = eta - mean) */
  double *p;        /* their probabilities (masses divided by the total) */
  struct pb_fragility_side up, down;
  void *scratch;    /* sorting workspace: 2 cap (value, mass) pairs (the atoms, merge space) */
};

enum pb_fragility_dir { PB_FRAGILITY_UP = 0, PB_FRAGILITY_DOWN = 1 };

/** Empty law; buffers grow on demand in pb_fragility_law_set. */
void pb_fragility_law_init(struct pb_fragility_law *law);
void pb_fragility_law_free(struct pb_fragility_law *law);

/**
 * Set the law of n values with non-negative masses (normalised by their
 * total; zero masses are dropped and equal values merged).
 * @return PB_OK, or PB_FAIL (pb_error_set) for a non-finite value, a negative
 *         or non-finite mass, or a zero total mass.
 */
int pb_fragility_law_set(struct pb_fragility_law *law, const double *value, const double *mass, int32_t n);

/** Phi(rho) in direction dir for rho >= 0 (rho = inf gives the saturation value). */
double pb_fragility_profile(const struct pb_fragility_law *law, enum pb_fragility_dir dir, double rho);

/**
 * The optimal reweighting at rho in direction dir: r[i] for atom law->z[i]
 * (r >= 0, E[r] = 1, E[(r-1)^2] <= rho, E[(r-1) Z] = +-Phi(rho)).  Beyond
 * saturation the cheapest optimiser (all mass on the top atom) is returned.
 */
void pb_fragility_weights(const struct pb_fragility_law *law, enum pb_fragility_dir dir, double rho, double *r);

/* ------------------------------------------------------------ restricted profile */

/* Defaults (docs/fragility.md, "Restricted profile from stored records"). */
#define PB_FRAGILITY_BINS 20
#define PB_FRAGILITY_GROUPS 8
#define PB_FRAGILITY_GRID 13
#define PB_FRAGILITY_RHO_MIN 0.01
#define PB_FRAGILITY_RHO_MAX 3.0
#define PB_FRAGILITY_RHO_LCB 0.3
#define PB_FRAGILITY_ALPHA 0.05
#define PB_FRAGILITY_SEED 20260914ull
#define PB_FRAGILITY_NULL 200
#define PB_FRAGILITY_MAX_GRID 64
#define PB_FRAGILITY_MAX_BINS 1000
#define PB_FRAGILITY_MAX_GROUPS 64
/* RNG analysis ids (pb_rng_init): role split and permutation null. */
#define PB_RNG_FRAGILITY_SPLIT 0x46520001u
#define PB_RNG_FRAGILITY_NULL 0x46520002u

/* Roles of an image (seeded by its id, docs/fragility.md): two halves of the
 * labelled data swap the fitting and rate roles between the arms; the
 * evaluation part serves the held-out diagnostic in both. */
enum pb_fragility_part { PB_FRAGILITY_PART_A = 0, PB_FRAGILITY_PART_B = 1, PB_FRAGILITY_PART_E = 2 };

struct pb_fragility_options {
  int32_t n_bins, n_groups;    /* confidence bins, groups per bin */
  int32_t n_grid;              /* log-spaced radii from rho_min to rho_max */
  double rho_min, rho_max;
  double rho_lcb;              /* radius of the lower confidence bound and the held-out diagnostic */
  double alpha;                /* one-sided level of the bound (0.05: 95%) */
  uint64_t seed;               /* role split and permutation null */
  int32_t n_null;              /* permutation-null replicates */
};
void pb_fragility_options_default(struct pb_fragility_options *o);

/** Role of an image from its id: A with probability 0.4, B 0.4, E 0.2. */
enum pb_fragility_part pb_fragility_part_of(uint64_t seed, const char *image_id);

/** Radius k of the grid (log-spaced, exact endpoints, interior radii to 4 significant digits). */
double pb_fragility_grid(const struct pb_fragility_options *o, int32_t k);

struct pb_fragility_partition;

/* The images of one (model, source). */
struct pb_fragility_input {
  int32_t n;
  const double *s;             /* clean confidence (max probability) */
  const double *u;             /* within-bin group signal; NaN leaves the image out */
  const uint8_t *correct;      /* clean correctness */
  const uint8_t *part;         /* enum pb_fragility_part */
  uint64_t item;               /* RNG item of the permutation null (unit index) */
  /* Optional: the partitions pb_fragility_partition_fit gives on parts A and B with the options' bins and
   * groups, fitted once by a caller that runs several kernels on the same images (each kernel would fit
   * them again); NULL: fitted where needed.  A kernel takes one only when it was fitted on this input's
   * scores, signals and parts (the same arrays) with the bins and groups it wants, so a copy with other
   * scores or signals fits its own. */
  const struct pb_fragility_partition *fitted[2];
};

/* Bins (edges) and within-bin groups (cuts) fitted on one part. */
struct pb_fragility_partition {
  int32_t J, K;
  double *edge;                /* [J-1] */
  double *cut;                 /* [J][K-1] */
  /* what pb_fragility_partition_fit fitted it on (a kernel reuses it only on the same arrays and part) */
  const double *s, *u;
  const uint8_t *part;
  int32_t n, fit;
};
void pb_fragility_partition_fit(const struct pb_fragility_input *in, enum pb_fragility_part fit, int32_t J, int32_t K,
                                struct pb_fragility_partition *p);
void pb_fragility_partition_free(struct pb_fragility_partition *p);
int32_t pb_fragility_bin(const struct pb_fragility_partition *p, double s);
int32_t pb_fragility_group(const struct pb_fragility_partition *p, int32_t bin, double u);

/* Fields of one arm's record (then 4 x n_grid: up, down, variance law, capped law). */
enum {
  PB_FA_N_FIT, PB_FA_N_RATE, PB_FA_N_EVAL, PB_FA_BINS, PB_FA_GROUPS, PB_FA_G_R, PB_FA_G_R_CORR, PB_FA_FAUC_UP,
  PB_FA_FAUC_DOWN, PB_FA_RHO_PLUS, PB_FA_PLUGIN_LCB_RHO, PB_FA_LCB, PB_FA_ECE, PB_FA_AGREE, PB_FA_NULL_MEDIAN,
  PB_FA_NULL_DEFINED, PB_FA_SR_COV80, PB_FA_SR_RISK80, PB_FA_SR_ENV80, PB_FA_SR_REL80, PB_FA_SR_COV90,
  PB_FA_SR_RISK90, PB_FA_SR_ENV90, PB_FA_SR_REL90, PB_FA_FIXED
};
#define PB_FRAGILITY_ARM_LEN(n_grid) (PB_FA_FIXED + 4 * (n_grid))

/**
 * One arm of one (model, source): partition fitted on part @p fit, group rates
 * from the other half, held-out drift on part E.  Fills @p rec
 * (PB_FRAGILITY_ARM_LEN doubles).  Pure and thread-safe.
 */
void pb_fragility_arm(const struct pb_fragility_input *in, const struct pb_fragility_options *o,
                      enum pb_fragility_part fit, double *rec);

/* Diagnostics of one arm beside its record (docs/fragility.md, "Selective
 * risk realised", "Nested merges", "Score-only comparator"): selective-risk
 * transport realised on part E (seed 001 K), the readout's groups merged
 * pairwise into coarser partitions (U.3) and the score-only readout (J.2). */
#define PB_FRAGILITY_COVERAGES 2       /* thresholds at coverage 0.8 and 0.9 */
#define PB_FRAGILITY_MERGES 7          /* K, ceil(K / 2), ..., 1 groups: at most 7 levels for K <= 64 */
extern const double pb_fragility_coverage[PB_FRAGILITY_COVERAGES];
/* Selective risk per coverage and grid radius: the rate part's attained coverage, risk and envelope
 * increase sum_acc w Phi_down / W; part E's coverage of the accepted bins, risk, the accepted-set risk
 * increase realised by the downward optimisers fitted on the rate part, realised - envelope, and the
 * transport identity's error (the realised increase against sum of bin-mass times E[(r - 1) Z]). */
enum {
  PB_FK_COVERAGE, PB_FK_RHO, PB_FK_RISK, PB_FK_ENVELOPE, PB_FK_EVAL_COVERAGE, PB_FK_EVAL_RISK, PB_FK_REALISED,
  PB_FK_EXCESS, PB_FK_IDENTITY, PB_FK_FIXED
};
/* One merge level: groups per bin, G_R, G_R corrected, FAUC_up, FAUC_up over the unmerged readout's. */
enum { PB_FM_GROUPS, PB_FM_G_R, PB_FM_G_R_CORR, PB_FM_FAUC_UP, PB_FM_FAUC_SHARE, PB_FM_FIXED };
/* The score-only comparator: its groups, G_R, FAUC up and down, the readout's FAUC_up and readout / score-only. */
enum { PB_FJ_GROUPS, PB_FJ_G_R, PB_FJ_FAUC_UP, PB_FJ_FAUC_DOWN, PB_FJ_READOUT_FAUC_UP, PB_FJ_RATIO, PB_FJ_FIXED };
#define PB_FRAGILITY_SEL_LEN(n_grid) (PB_FRAGILITY_COVERAGES * (n_grid) * PB_FK_FIXED)
#define PB_FRAGILITY_DIAG_LEN(n_grid) (PB_FRAGILITY_SEL_LEN(n_grid) + PB_FRAGILITY_MERGES * PB_FM_FIXED + PB_FJ_FIXED)
/** Merge levels of a readout of K groups: 1 + ceil(log2 K). */
int32_t pb_fragility_merge_levels(int32_t K);

/**
 * The diagnostics of the arm fitted on part @p fit: rec[(c n_grid + k) PB_FK_FIXED + f] for coverage c
 * and grid radius k, then PB_FRAGILITY_MERGES merge levels (level j: groups g >> j; levels past
 * pb_fragility_merge_levels are NaN), then the score-only record (PB_FRAGILITY_DIAG_LEN doubles).
 * Pure and thread-safe.
 */
void pb_fragility_diag(const struct pb_fragility_input *in, const struct pb_fragility_options *o,
                       enum pb_fragility_part fit, double *rec);

/* Source metrics across models (seed 001 S Table 13, T Table 16; docs/fragility.md): the Spearman
 * correlations of ECE, G_R and FAUC_up over a source's models, and the model pairs of similar ECE
 * (|difference| <= PB_FRAGILITY_ECE_TOL, our tolerance: the seed names none). */
#define PB_FRAGILITY_ECE_TOL 0.005
/**
 * Spearman correlations over the models whose three metrics are finite: out[0] ECE-G_R, out[1]
 * ECE-FAUC, out[2] G_R-FAUC (NaN with fewer than 3 such models); returns their number.
 */
int32_t pb_fragility_metric_spearman(int32_t n, const double *ece, const double *gr, const double *fauc, double *out);
/**
 * The pairs i < j (lexicographic) of models with finite metrics and |ece_i - ece_j| <= @p tol into
 * pi[], pj[] (room for n (n - 1) / 2); returns their number.
 */
int64_t pb_fragility_ece_pairs(int32_t n, const double *ece, const double *gr, const double *fauc, double tol,
                               int32_t *pi, int32_t *pj);

/* Random score-preserving shifts (seed 001 R.1) and their two-role
 * permutation null (T; docs/fragility.md, "Random score-preserving shifts"):
 * per bin with rate and evaluation images, PB_FRAGILITY_RANDOM_DRAWS random
 * directions d of the rate part's groups (standard normal, centred and
 * scaled to E_q[d] = 0, E_q[d^2] = 1), each stepped at every grid radius to
 * r = 1 + t d (t = sqrt(rho), or less where r >= 0 needs it) and applied to
 * part E; per radius the median held-out |movement| against the two-sided
 * plug-in profile. */
#define PB_FRAGILITY_RANDOM_DRAWS 20
#define PB_FRAGILITY_RANDOM_NULL 5
#define PB_RNG_FRAGILITY_RANDOM 0x46520005u
#define PB_RNG_FRAGILITY_RANDOM_NULL 0x46520006u
/* cells (bin x radius with a positive profile and part-E images), Spearman of profile and median movement
 * over them, the median of that Spearman over the null's permutations, cells whose ratio movement /
 * profile exceeds 1 and the sum of their ratio - 1; then per grid radius [cells, above]. */
enum { PB_FX_CELLS, PB_FX_SPEARMAN, PB_FX_NULL_SPEARMAN, PB_FX_ABOVE, PB_FX_EXCESS_SUM, PB_FX_FIXED };
#define PB_FRAGILITY_RANDOM_LEN(n_grid) (PB_FX_FIXED + 2 * (n_grid))
/** The random shifts of the arm fitted on part @p fit into @p rec (PB_FRAGILITY_RANDOM_LEN doubles).  Pure. */
void pb_fragility_random(const struct pb_fragility_input *in, const struct pb_fragility_options *o,
                         enum pb_fragility_part fit, double *rec);

/* Variance-law integrals (seed 001 T Table 18) and the random shifts by
 * restricted-heterogeneity quartile (R.1 Table 9), from the arm records. */
/** The trapezoid integral over log rho of @p y[k] at grid radius k of @p o: FAUC's rule (not normalised). */
double pb_fragility_log_auc(const struct pb_fragility_options *o, const double *y);
/**
 * Quartiles of @p x across models: the finite values ranked ascending (equal values in index order),
 * rank r of m going to quartile floor(4 r / m), q[i] in 0..3 (-1 for a value that is not finite).
 * @return m.
 */
int32_t pb_fragility_quartiles(int32_t n, const double *x, int32_t *q);

/* Monotone score reparameterisation (seed 001 Appendix Q; docs/fragility.md,
 * "Monotone score maps"): per arm three strictly increasing maps of the
 * confidence S, applied in double precision to every image of the arm — the
 * fitted map (Platt's logistic on logit S fitted on the arm's fitting part,
 * the part that fixes its partition) and two fixed stress maps.  The
 * partition's bin edges are pushed forward through the map, the readout's
 * within-bin cuts are kept, and the assignments, the structural quantities
 * and calibration are compared with the raw scores'. */
#define PB_FRAGILITY_QMAPS 3
enum { PB_FRAGILITY_QMAP_FITTED, PB_FRAGILITY_QMAP_SHARP, PB_FRAGILITY_QMAP_POWER };
#define PB_FRAGILITY_QMAP_SHARP_SLOPE 8.0 /* the sharp stress map sigma(8 logit S) */
#define PB_FRAGILITY_QMAP_POWER_EXP 4.0   /* the power stress map S^4 */
struct pb_fragility_qmap {
  int32_t power;               /* 0: sigma(a + b logit s), 0 at s <= 0 and 1 at s >= 1; 1: s^b (a unused) */
  double a, b;
};
/** The map at @p s, in double precision (non-decreasing; distinct scores may meet in one double). */
double pb_fragility_qmap_apply(const struct pb_fragility_qmap *m, double s);
/** The fixed stress map PB_FRAGILITY_QMAP_SHARP or PB_FRAGILITY_QMAP_POWER. */
void pb_fragility_qmap_stress(int32_t which, struct pb_fragility_qmap *m);
/**
 * Platt's fit of sigma(a + b logit s) to correctness: @p n scores s[j] held by @p n_correct[j] correct
 * and @p n_wrong[j] wrong records, those with 0 < s < 1 taking part (a record at 0 or 1 is sent there
 * by every such map): the log-loss against Platt's targets (N+ + 1) / (N+ + 2) for a correct record and
 * 1 / (N- + 2) for a wrong one, which has a unique minimum whenever two scores differ, by Newton steps
 * with backtracking from the identity map.
 * @return 1 when both classes are present (with one, the targets are constant and the minimum is the
 *         constant map b = 0) and it converged with b > 0 (a strictly increasing map), else 0 (m->a, m->b
 *         NaN).
 */
int pb_fragility_qmap_fit(int32_t n, const double *s, const double *n_correct, const double *n_wrong,
                          struct pb_fragility_qmap *m);
/* One arm and map: whether the map is defined, its a and b (NaN for the power map's a), the fitting
 * part's images and those whose bin and whose readout cell (bin, group) change, the same of the held-out
 * images (rate part and part E), the largest absolute difference of the structural quantities (the
 * values of the arm record the rate part's counts on the partition determine: G_R, FAUC, rho_plus,
 * selective coverage and risk, the profiles and variance laws), the distinct raw scores of the arm's
 * images and how many of them the map merges, ECE and binary NLL (correct vs wrong; records with
 * 0 < S < 1) of the rate part before and after, and the readout refitted on the mapped scores: its edges
 * that differ from the pushed-forward ones, the largest change of its upward profile on the grid and the
 * relative change of its FAUC_up. */
enum {
  PB_FQ_DEFINED, PB_FQ_INTERCEPT, PB_FQ_SLOPE, PB_FQ_N_TRAIN, PB_FQ_TRAIN_BIN, PB_FQ_TRAIN_READOUT, PB_FQ_N_EVAL,
  PB_FQ_EVAL_BIN, PB_FQ_EVAL_READOUT, PB_FQ_STRUCT_DIFF, PB_FQ_DISTINCT, PB_FQ_MERGED, PB_FQ_ECE_RAW, PB_FQ_ECE_MAP,
  PB_FQ_NLL_RAW, PB_FQ_NLL_MAP, PB_FQ_REFIT_EDGES, PB_FQ_REFIT_PROFILE, PB_FQ_REFIT_FAUC, PB_FQ_FIXED
};
/* Pooled ties of the fitted maps (Q.5): the images of parts A and B (the folds), each scored by the map
 * fitted on the other part (its held-out fold's map).  A tie group is a value held by two or more
 * images: of the pooled raw scores, those within one fold and those spanning both; summed over the two
 * folds, each fold's tie groups of its raw scores and of its mapped scores (a map is a function, so a
 * fold keeps every raw tie; it can only merge distinct scores); and the tie groups of the pooled mapped
 * scores.  The last two NaN unless both fitted maps are defined. */
enum {
  PB_FT_IMAGES, PB_FT_RAW_GROUPS, PB_FT_WITHIN, PB_FT_SPANNING, PB_FT_FOLD_RAW, PB_FT_FOLD_MAPPED, PB_FT_MAPPED,
  PB_FT_FIXED
};
#define PB_FRAGILITY_QMAP_LEN (2 * PB_FRAGILITY_QMAPS * PB_FQ_FIXED + PB_FT_FIXED)
/**
 * The monotone maps of one (model, source): rec[(arm * PB_FRAGILITY_QMAPS + map) * PB_FQ_FIXED + f] for
 * arm A (fitted on part A) then B, then the pooled ties (PB_FRAGILITY_QMAP_LEN doubles).  Pure and
 * thread-safe.
 */
void pb_fragility_qmap(const struct pb_fragility_input *in, const struct pb_fragility_options *o, double *rec);

/* Temperature-scaled states (seed 001: checkpoints x {as released,
 * temperature-scaled}; docs/fragility.md, "Temperature-scaled state"): a
 * record's scaled probabilities p_j^(1/T) / Z_T from its top-k list, its
 * true-class probability and, for the classes the list does not hold, their
 * remaining mass split equally (exact when the list holds every class or the
 * rest is uniform; an approximation otherwise). */
struct pb_fragility_topk {
  int32_t k, n_classes;        /* list length, classes */
  const int32_t *cls;          /* [k] classes, most probable first */
  const float *prob;           /* [k] their probabilities */
  int32_t label;
  double ptrue;                /* probability of the label */
};
/** -log of the label's scaled probability at temperature @p T. */
double pb_fragility_temper_nll(const struct pb_fragility_topk *r, double T);
/** The scaled top probability (the confidence) at temperature @p T. */
double pb_fragility_temper_conf(const struct pb_fragility_topk *r, double T);
/** The T in [0.05, 20] minimising the mean of pb_fragility_temper_nll over @p n records (safeguarded
 *  Newton steps on 1/T, where the mean is convex); NaN for n = 0. */
double pb_fragility_temper_fit(const struct pb_fragility_topk *r, int64_t n);

/**
 * The split-sample lower confidence bound at @p rho from the rate part's
 * counts: n[b K + g] images and k[b K + g] correct ones in bin b, group g
 * (docs/fragility.md, "Lower confidence bound").
 */
double pb_fragility_lcb(int32_t J, int32_t K, const int64_t *n, const int64_t *k, double rho, double alpha);

/* Fields of one drift record (model x perturbed condition). */
enum {
  PB_FD_N, PB_FD_L_TOTAL, PB_FD_L_COMP, PB_FD_L_COND, PB_FD_RATIO, PB_FD_UTIL, PB_FD_N_UTIL, PB_FD_N_UNDEF,
  PB_FD_N_UNSUPPORTED, PB_FD_RESIDUAL, PB_FD_FIXED
};

/**
 * Clean bin and group of every image of part != @p fit with a signal
 * (bin[i] = -1 for the others): the source side of pb_fragility_drift,
 * computed once for all perturbed conditions of a unit.
 */
void pb_fragility_assign(const struct pb_fragility_input *in, const struct pb_fragility_partition *p,
                         enum pb_fragility_part fit, int32_t *bin, int32_t *grp);

/**
 * Composition/conditional split of clean -> perturbed binwise drift
 * (Proposition 8) of one model x perturbed-condition @p cell on the partition
 * @p p over the images with bin0[i] >= 0 (from pb_fragility_assign): clean
 * bins/groups @p bin0, @p grp0 and correctness from @p in (the cell's clean
 * side, computed once per unit), perturbed confidence and correctness from the
 * cell's s1, pred1 and label (the target group is the image's U group in its
 * perturbed bin).  Fills @p rec (PB_FD_FIXED doubles).
 * @return PB_OK, or PB_FAIL (pb_cell_error) when the cell's images are not
 *         the unit's.
 */
int pb_fragility_drift(const struct pb_cell_view *cell, const struct pb_fragility_input *in,
                       const struct pb_fragility_partition *p, const int32_t *bin0, const int32_t *grp0, double *rec);

/* The post-hoc higher-count-bin check of the drift split (seed 001 Appendix L;
 * docs/fragility.md): a bin is flagged when a group with images on either side
 * has fewer than PB_FRAGILITY_FLAG_MIN on the source or the target side (our
 * threshold: the seed names none).  The
 * record: target mass in the kept bins, kept and flagged bins (of those with
 * target mass; a bin the source never reaches is flagged), and L_total,
 * L_comp, L_cond and their ratio over the kept bins (target masses
 * renormalised over them; NaN when none is kept). */
#define PB_FRAGILITY_FLAG_MIN 10
enum {
  PB_FF_MASS_KEPT, PB_FF_BINS_KEPT, PB_FF_BINS_FLAGGED, PB_FF_L_TOTAL, PB_FF_L_COMP, PB_FF_L_COND, PB_FF_RATIO,
  PB_FF_FIXED
};
/** pb_fragility_drift, and the flagged-bin record into @p flag (PB_FF_FIXED doubles) unless NULL. */
int pb_fragility_drift_flagged(const struct pb_cell_view *cell, const struct pb_fragility_input *in,
                               const struct pb_fragility_partition *p, const int32_t *bin0, const int32_t *grp0,
                               double *rec, double *flag);
/**
 * pb_fragility_drift_flagged of @p n_cells cells of the same clean images (a unit's perturbed conditions),
 * cell c into rec[c PB_FD_FIXED ...] and, unless NULL, flag[c PB_FF_FIXED ...]: the clean side's counts
 * and bin laws are the same for every cell, so they are made once.  Stops at the first cell with an error
 * and returns its status.
 */
int pb_fragility_drift_cells(const struct pb_cell_view *cells, int32_t n_cells, const struct pb_fragility_input *in,
                             const struct pb_fragility_partition *p, const int32_t *bin0, const int32_t *grp0,
                             double *rec, double *flag);

/* ------------------------------------------------------------ known-propensity study (seed 001 U.1) */

/* `pairbound fragility --study known-propensity` (docs/fragility.md,
 * "Known-propensity study"): four-cell laws with known masses, stratified
 * rate labels per cell, plug-in profile and capped variance law against the
 * exact profile of the true law.  Designs draw their labels from samples
 * (law x n); the 30-label arm reuses its primary design's sample, so the two
 * arms compare the same labels. */
#define PB_FRAGILITY_STUDY_CELLS 4
#define PB_FRAGILITY_STUDY_LAWS 4       /* A, B, C, B/16 */
#define PB_FRAGILITY_STUDY_SAMPLES 8    /* law x n in {250, 5000} */
#define PB_FRAGILITY_STUDY_DESIGNS 10
#define PB_FRAGILITY_STUDY_RHOS 7
#define PB_FRAGILITY_STUDY_REPLICATES 2000
#define PB_FRAGILITY_STUDY_MIN_LABELS 30
/* Values per replicate and design: [rho][dir][plug-in, capped variance law]. */
#define PB_FRAGILITY_STUDY_EST (PB_FRAGILITY_STUDY_RHOS * 2 * 2)
#define PB_RNG_FRAGILITY_STUDY 0x46520003u

struct pb_fragility_study_law {
  const char *name;
  double eta[PB_FRAGILITY_STUDY_CELLS], q[PB_FRAGILITY_STUDY_CELLS];
};
struct pb_fragility_study_design {
  const char *arm;             /* "primary", "weak" (law B/16) or "min30" */
  int32_t law, n, min_labels;  /* cells with fewer labels than min_labels are left out */
  int32_t sample;              /* whose label draws it uses (law x n) */
};
extern const double pb_fragility_study_rho[PB_FRAGILITY_STUDY_RHOS];
extern const struct pb_fragility_study_design pb_fragility_study_designs[PB_FRAGILITY_STUDY_DESIGNS];

/** Law @p i (0..3): A, B, C as tabled, B/16 = B's atoms shrunk to its mean by 1/4 (variance / 16). */
void pb_fragility_study_law(int32_t i, struct pb_fragility_study_law *out);
/** Law and n of sample @p s (law s / 2, n 250 or 5000 for s even or odd). */
void pb_fragility_study_sample(int32_t s, int32_t *law, int32_t *n);
/** Labels per cell: m_g = max(1, round(n q_g)) (proportional stratified, at least one per cell). */
void pb_fragility_study_labels(const double *q, int32_t n, int64_t *m);
/**
 * Correct labels of one replicate: k_g = #{j < m_g : u_j < eta_g}, the
 * uniforms of the stream pb_rng_init(seed, PB_RNG_FRAGILITY_STUDY, sample,
 * replicate) taken cell by cell in order.
 */
void pb_fragility_study_draw(uint64_t seed, int32_t sample, uint32_t replicate, const double *eta, const int64_t *m,
                             int64_t *k);
/**
 * Plug-in profile and capped variance law of the estimated law: rates k_g/m_g
 * with the known masses q_g over the cells with m_g >= @p min_labels
 * (renormalised).  est[(r * 2 + dir) * 2 + e], e = 0 the plug-in profile
 * Phi_dir(rho_r), e = 1 min(sqrt(rho_r G), saturation value of dir).
 * @return cells kept; with none every estimate is NaN.
 */
int32_t pb_fragility_study_estimate(const double *q, const int64_t *m, const int64_t *k, int32_t min_labels,
                                    struct pb_fragility_law *work, double *est);
/** The same of the true law of @p design (exact profile, population capped law). */
void pb_fragility_study_truth(int32_t design, struct pb_fragility_law *work, double *est);
/* The witness pair of Proposition 4 (seed 001 Appendix M; docs/fragility.md):
 * two two-point laws with mean 1/2 and G = 0.08 whose profiles agree on
 * [0, 1.125] and differ by 0.1 for rho >= 2. */
#define PB_FRAGILITY_WITNESS_RHOS 8
extern const double pb_fragility_witness_rho[PB_FRAGILITY_WITNESS_RHOS];
/** Witness law @p i (0: A, 1: B) as values and masses of its 2 atoms. */
void pb_fragility_study_witness(int32_t i, double *eta, double *q);

/* Nested readouts on known atoms (seed 001 U.2; docs/fragility.md): one
 * confidence level of 32 equal-mass atoms ordered by a feature, readouts of
 * K = 1, 2, 4, 8, 16 contiguous cells (nested), the restricted profile of
 * the cell means against the oracle profile of the atoms. */
#define PB_FRAGILITY_NESTED_ATOMS 32
#define PB_FRAGILITY_NESTED_LAWS 3      /* smooth, rare, wave */
#define PB_FRAGILITY_NESTED_SIZES 5     /* K = 1, 2, 4, 8, 16 */
#define PB_FRAGILITY_NESTED_RHOS 4
extern const double pb_fragility_nested_rho[PB_FRAGILITY_NESTED_RHOS];
/* One readout at one radius: oracle and restricted grouping variance and upward profile, the gap
 * Phi_P - Phi_R, the excess sqrt(rho (G_P - G_R)) of Proposition 6's bound over Phi_R, excess / gap
 * (NaN for a gap below 1e-12). */
enum { PB_FN_G_P, PB_FN_G_R, PB_FN_PHI_P, PB_FN_PHI_R, PB_FN_GAP, PB_FN_EXCESS, PB_FN_RATIO, PB_FN_FIXED };
/** Law @p i of the atoms in feature order: its propensities (32) and its name. */
const char *pb_fragility_study_nested_law(int32_t i, double *eta);
/**
 * The readout of @p K contiguous cells of the atoms @p eta taken in feature
 * order, or, with @p oracle, in increasing propensity (the oracle
 * diagnostic), at radius @p rho: fills @p rec (PB_FN_FIXED doubles).
 */
void pb_fragility_study_nested(const double *eta, int32_t K, int oracle, double rho, struct pb_fragility_law *work,
                               double *rec);

/* The finite-sample part of U.2: stratified labels on the 16 finest cells
 * (two atoms each), m = max(1, round(n / 16)) per cell at n = 250 and 5,000,
 * correct with the cell's mean propensity; a readout of K cells pools its
 * fine cells' labels; the plug-in restricted profile and grouping variance
 * against the population ones (pb_fragility_study_nested). */
#define PB_FRAGILITY_NESTED_FINE 16
#define PB_FRAGILITY_NESTED_NS 2        /* n = 250, 5000 */
/* Values per replicate: [law][n][size][rho] plug-in Phi_R, then [law][n][size] plug-in G_R. */
#define PB_FRAGILITY_NESTED_ROWS (PB_FRAGILITY_NESTED_LAWS * PB_FRAGILITY_NESTED_NS * PB_FRAGILITY_NESTED_SIZES)
#define PB_FRAGILITY_NESTED_EST (PB_FRAGILITY_NESTED_ROWS * (PB_FRAGILITY_NESTED_RHOS + 1))
#define PB_RNG_FRAGILITY_NESTED 0x46520004u
extern const int32_t pb_fragility_nested_size[PB_FRAGILITY_NESTED_SIZES];
extern const int32_t pb_fragility_nested_n[PB_FRAGILITY_NESTED_NS];
/**
 * Correct labels of the fine cells of law @p law at n index @p ni in one
 * replicate: k[c] = #{j < m : u_j < (eta[2c] + eta[2c + 1]) / 2}, the uniforms
 * of the stream pb_rng_init(seed, PB_RNG_FRAGILITY_NESTED, law * 2 + ni,
 * replicate) taken cell by cell in order; returns m.
 */
int64_t pb_fragility_study_nested_draw(uint64_t seed, int32_t law, int32_t ni, uint32_t replicate, int64_t *k);
/** One replicate's plug-in estimates est[PB_FRAGILITY_NESTED_EST] (layout above).  Pure and thread-safe. */
void pb_fragility_study_nested_replicate(uint64_t seed, uint32_t replicate, struct pb_fragility_law *work, double *est);

/**
 * Every design's estimates of one replicate: est[d * PB_FRAGILITY_STUDY_EST + ...]
 * as pb_fragility_study_estimate, kept[d] its cells kept.  Pure and thread-safe.
 */
void pb_fragility_study_replicate(uint64_t seed, uint32_t replicate, struct pb_fragility_law *work, double *est,
                                  int32_t *kept);

/* ------------------------------------------------------------ the store stage */

/* Options of `pairbound fragility` (pb_fragility_option_table): the store
 * stage's, --law/--rho, which select the exact profile of a law file
 * instead, and --study/--replicates, which select the known-propensity study
 * (command line only). */
struct pb_fragility_stage_options {
  struct pb_fragility_options k;
  char *probe;                 /* source whose perturbed conditions define U; "self"; NULL: Syn-B when present */
  char *group_file;            /* `source image_id value` lines replacing U, or NULL */
  int store_given;             /* a store-stage option was given (not allowed with --law) */
  int seed_given;              /* --seed was given (a store option that --study takes too) */
  char *law;                   /* --law FILE, or NULL (store stage) */
  double *rho;                 /* --rho radii [n_rho] */
  int32_t n_rho;
  char *study;                 /* --study known-propensity, or NULL */
  int32_t replicates;          /* --replicates of the study */
  int replicates_given;
};
extern const struct pb_option pb_fragility_option_table[];


/* ------------------------------------------------------------ law files */

/**
 * Read a law file: one `value mass` line per atom (value in [0, 1], mass
 * >= 0, masses summing to 1 within 1e-12; blank and `#` lines ignored).
 * On success *value and *mass are malloc'd arrays of *n atoms in file order.
 * @return PB_OK, or PB_FAIL with a message naming the file and line.
 */
int pb_fragility_read_law(const char *path, double **value, double **mass, int32_t *n);

/**
 * `pairbound fragility --law FILE --rho r1,r2,...`: read the law of @p o->law
 * and write G, rho_plus and rho_sat of the upward profile, then `rho up down`
 * per radius of @p o->rho, to @p out (NULL: compute and check only; ranks
 * other than 0 pass NULL).  PB_OK, or PB_FAIL with a message naming the file
 * and line.
 */
int pb_fragility_law_print(const struct pb_fragility_stage_options *o, FILE *out);

#endif /* PAIRBOUND_FRAGILITY_H */
