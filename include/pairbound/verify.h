/* Independent verification of the identification endpoints by permutation
 * enumeration (seed 000 Appendix A.10 "finite verification", B.3, C.1,
 * Appendix D "Numerical verification", J.1).  See docs/verify.md.
 *
 * Nothing here shares code with the bounds engine (src/bounds/bounds_kernel.c,
 * src/bounds/bounds_kernel_i5.c): classes are grouped, states classified, extrema collected
 * and classes combined by this module alone.  The bounds engine is only
 * called by the stage (src/verify/verify_stage.c) to be compared against. */
#ifndef PAIRBOUND_VERIFY_H
#define PAIRBOUND_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "pairbound/cell.h"
#include "pairbound/protocol.h"

/* Largest class (records per side) that may be enumerated: 10! = 3,628,800
 * bijections, and 2^10 subset sums per side. */
#define PB_VERIFY_MAX_N 10
/* A residual above this (probability units) or a structural check violated by
 * more than this fails the verification. */
#define PB_VERIFY_TOL 1e-12

/* Information levels (Definition 1). */
enum pb_verify_level { PB_VERIFY_I0 = 0, PB_VERIFY_IK = 1, PB_VERIFY_I5 = 2, PB_VERIFY_NLEVELS = 3 };

/* One true class: n clean and n perturbed records (class order = store order).
 * c: correct, z: accepted (S >= tau in float32), p: predicted label,
 * m: true-class probability M (float32, converted to double once). */
struct pb_verify_records {
  int32_t n;
  const uint8_t *c0, *z0, *c1, *z1;
  const int32_t *p0, *p1;
  const float *m0, *m1;
  const float *s1;            /* perturbed scores S' (policy thresholds); may be NULL without policies */
};

/* Everything enumeration finds in one class.  Counts are integers; the dM_k
 * numerator of a bijection is (sum of M over the clean correct records matched
 * to a correct record) - (sum of M' over the perturbed correct records matched
 * to a correct record), each side summed in record order, so it depends only
 * on the two selected subsets (which is what Theorem 1 is about). */
struct pb_verify_class {
  int32_t n, a, b;            /* records per side, clean / perturbed correct counts */
  int32_t k, s;               /* observed correct-correct and persistent-wrong counts */
  int64_t perms;              /* bijections enumerated (n!) */
  int32_t H[PB_VERIFY_NLEVELS][2], L[PB_VERIFY_NLEVELS][2]; /* count {min, max} per level */
  double D[PB_VERIFY_NLEVELS][2]; /* dM_k numerator {min, max} at Ik and I5 (NaN when k = 0);
                                     at I0 the ratio extremes over bijections with k >= 1
                                     (NaN when none), i.e. the class's own A.10 interval */
  int32_t H_obs, L_obs;       /* under the observed (identity) correspondence */
  double D_obs;
  /* Attainable overlaps over all bijections and the numerator extremes of each
   * (the class's input to the variable-support knapsack). */
  uint8_t k_seen[PB_VERIFY_MAX_N + 1];
  double Dk[PB_VERIFY_MAX_N + 1][2];
  /* Policy counts: pb_verify_class_enumerate_sets() tallies, per (k, s), the
   * set pi(A) of perturbed partners of the correct accepted clean records A
   * (every event count of Eq. 10 is a function of that set); see
   * pb_verify_class_policies(). */
  int32_t u;                  /* |A|: clean records correct and accepted */
};

/* One bijection's contribution, kept only for whole-cell Cartesian products. */
struct pb_verify_perm {
  int8_t k, s, H, L;
  uint16_t am;                /* pi(A): perturbed partners of the correct accepted clean records (bit mask) */
  double X, Z;                /* the two subset sums of the dM_k numerator */
};

/**
 * Enumerate every bijection of one class (Heap's algorithm, no pruning) and
 * collect the extrema of the H, L and dM_k numerators at I0, Ik and I5.
 *
 * @param r     the class's records, 1 <= r->n <= PB_VERIFY_MAX_N
 * @param out   filled on success
 * @param list  NULL, or room for n! entries receiving every bijection's
 *              (k, s, H, L, X, Z) in enumeration order (Cartesian products)
 * @return 0, or -1 on invalid input (n out of range, NULL arrays).
 */
int pb_verify_class_enumerate(const struct pb_verify_records *r, struct pb_verify_class *out,
                              struct pb_verify_perm *list);

/** Entries of the per-(k, s) partner-set tally of a class of n records: (n+1)^2 2^n. */
static inline int64_t pb_verify_tally_len(int32_t n) { return (int64_t)(n + 1) * (n + 1) << n; }

/**
 * pb_verify_class_enumerate() that also tallies every bijection's partner set:
 * tally[((k (n+1) + s) << n) | m] = number of bijections with counts (k, s)
 * whose correct accepted clean records A are matched to the perturbed records
 * of bit mask m.  @p tally has pb_verify_tally_len(n) entries (zeroed here).
 */
int pb_verify_class_enumerate_sets(const struct pb_verify_records *r, struct pb_verify_class *out,
                                   struct pb_verify_perm *list, uint32_t *tally);

/* ---- rejection policies (seed 000 Section 4.2, Eq. 8, 10, 11, Corollary 1) ---- */

#define PB_VERIFY_MAX_POL 8       /* perturbed thresholds per cell */
#define PB_VERIFY_MAX_LAMBDA 32   /* cost weights */

/* The policies compared: clean threshold tau0 is the records' z0; perturbed
 * policy j accepts S' >= tau[j]. */
struct pb_verify_policy_setup {
  int32_t n_pol;
  float tau[PB_VERIFY_MAX_POL];
  int32_t n_lambda;
  double lambda[PB_VERIFY_MAX_LAMBDA];
};

/* Everything enumeration finds about the policies in one class, as integer
 * event counts (c_j = lambda h_j + (1 - lambda) l_j, Eq. 10).  Extremes of
 * weighted costs are kept as the attaining (h, l) integer pair so that classes
 * combine exactly. */
struct pb_verify_pclass {
  int32_t n, u;
  uint16_t A;                 /* clean records correct and accepted (bit mask) */
  uint16_t W[PB_VERIFY_MAX_POL], R[PB_VERIFY_MAX_POL];   /* perturbed: wrong accepted by tau_j / correct rejected */
  int64_t perms[PB_VERIFY_NLEVELS];                       /* feasible bijections per level */
  int32_t e[PB_VERIFY_MAX_POL], rj[PB_VERIFY_MAX_POL];   /* wrong accepted / correct rejected perturbed records */
  int32_t h_obs[PB_VERIFY_MAX_POL], l_obs[PB_VERIFY_MAX_POL];
  int32_t h[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL][2], l[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL][2];
  double hmean[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL], lmean[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL];
  /* [level][lambda][j][min, max][h, l]: (h_j, l_j) attaining the extremes of c_j */
  int32_t J[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_LAMBDA][PB_VERIFY_MAX_POL][2][2];
  /* [level][lambda][j][l][dh, dl]: (h_j - h_l, l_j - l_l) attaining the max of c_j - c_l */
  int32_t D[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_LAMBDA][PB_VERIFY_MAX_POL][PB_VERIFY_MAX_POL][2];
  int32_t DL[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL][PB_VERIFY_MAX_POL];   /* max of l_j - l_l */
  /* Lemma 1 (Eq. 8) from the enumerated count intervals: the attaining (h, l),
   * -1 when the region is empty (cannot happen: the intervals come from bijections) */
  int32_t lemma1[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_LAMBDA][PB_VERIFY_MAX_POL][2];
  int32_t n_lvec[2];          /* distinct attainable (l_j)_j vectors at Ik and I5 */
  int corollary1;             /* 1: the attainable (l_j)_j sets are identical at Ik and I5 */
};

/**
 * Policy event counts of every bijection of one class, from the partner-set
 * tally of pb_verify_class_enumerate_sets(): per level (I0 all bijections, Ik
 * the observed k, I5 the observed (k, s)) the extremes of h_j and l_j (Eq. 10),
 * of c_j for each weight, of c_j - c_l for every ordered pair (the classwise
 * pieces of D+_jl, Eq. 11) and of l_j - l_l, the exact means over feasible
 * bijections, the Lemma 1 maximum (Eq. 8) computed from the enumerated count
 * intervals, and whether the attainable (l_j)_j vectors agree at Ik and I5.
 * @p r must carry s1.  @return 0, or -1 on invalid input.
 */
int pb_verify_class_policies(const struct pb_verify_records *r, const struct pb_verify_class *q,
                             const uint32_t *tally, const struct pb_verify_policy_setup *ps,
                             struct pb_verify_pclass *out);

/** Perturbed-side masks of a class (record order): W[j] the wrong records
 * accepted by tau_j, R[j] the correct ones rejected (@p r must carry s1). */
void pb_verify_policy_masks(const struct pb_verify_records *r, const struct pb_verify_policy_setup *ps,
                            uint16_t W[PB_VERIFY_MAX_POL], uint16_t R[PB_VERIFY_MAX_POL]);

/* Policy values of a cell or class, as rates: the layout of the policy
 * engine's result (include/pairbound/policy.h) for the compared fields. */
struct pb_verify_pvalues {
  int64_t n;
  int32_t n_pol, n_lambda;
  double E[PB_VERIFY_MAX_POL], H_obs[PB_VERIFY_MAX_POL], L_obs[PB_VERIFY_MAX_POL];
  double H[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL][2], L[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL][2];
  double H_mean[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL], L_mean[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL];
  double J[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_LAMBDA][PB_VERIFY_MAX_POL][2];
  double J_lemma1[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_LAMBDA][PB_VERIFY_MAX_POL];
  double D[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_LAMBDA][PB_VERIFY_MAX_POL][PB_VERIFY_MAX_POL];
  double Jn[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_LAMBDA][PB_VERIFY_MAX_POL][2];
  double Dn[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_LAMBDA][PB_VERIFY_MAX_POL][PB_VERIFY_MAX_POL];
};

/**
 * Combine classes' policy counts exactly (the feasible set is a product over
 * classes): integer sums of the classwise extremes (for D+_jl the classwise
 * maxima of c_j - c_l with l fixed, Eq. 11), sums of class means, one final
 * division by N.  Natural cost (Corollary 1): J'_j = lambda E_j + (1 - lambda)
 * L_j and D'+_jl = lambda (E_j - E_l) + (1 - lambda) max (L_j - L_l).
 * @return 0, or -1 when ncls < 1.
 */
int pb_verify_combine_policies(const struct pb_verify_pclass *pc, int32_t ncls, const struct pb_verify_policy_setup *ps,
                               struct pb_verify_pvalues *out);

/* Incremental form of pb_verify_combine_policies() (classes added one at a
 * time, in ascending label order; an accumulator is reused across cells). */
struct pb_verify_pacc;
struct pb_verify_pacc *pb_verify_pacc_new(void);
void pb_verify_pacc_free(struct pb_verify_pacc *a);
void pb_verify_pacc_reset(struct pb_verify_pacc *a, const struct pb_verify_policy_setup *ps);
/** Bytes of pb_verify_pclass_pack()'s image of a class under @p ps. */
size_t pb_verify_pclass_packed_size(const struct pb_verify_policy_setup *ps);
/** Copy the fields of @p q that pb_verify_pacc_add() reads into @p buf
 * (pack = 1) or back from it (pack = 0); byte for byte the same accumulation. */
void pb_verify_pclass_pack(struct pb_verify_pclass *q, const struct pb_verify_policy_setup *ps, unsigned char *buf,
                           int pack);
void pb_verify_pacc_add(struct pb_verify_pacc *a, const struct pb_verify_pclass *q, const struct pb_verify_policy_setup *ps);
void pb_verify_pacc_values(const struct pb_verify_pacc *a, const struct pb_verify_policy_setup *ps,
                           struct pb_verify_pvalues *out);

/**
 * Brute force over the Cartesian product of the classes' bijection lists:
 * each bijection's partner set (pb_verify_perm.am) evaluated with the class's
 * masks W[c] / R[c] (pb_verify_pclass.W / R): H, L, J, D+, the natural cost,
 * observed values and the feasible means (over the product's feasible
 * combinations, each counted once) of pb_verify_combine_policies(), computed
 * without additivity.  J_lemma1 is NaN (not a brute-force quantity).  The
 * caller bounds the product size.
 */
int pb_verify_cartesian_policies(const struct pb_verify_class *cls, struct pb_verify_perm *const *lists,
                                 const uint16_t (*W)[PB_VERIFY_MAX_POL], const uint16_t (*R)[PB_VERIFY_MAX_POL],
                                 int32_t ncls, const struct pb_verify_policy_setup *ps, struct pb_verify_pvalues *out);

/* Verified endpoints of a cell (or of a set of classes), as rates. */
struct pb_verify_values {
  int64_t n, K;               /* records, observed total overlap */
  double H[PB_VERIFY_NLEVELS][2], L[PB_VERIFY_NLEVELS][2], dMk[PB_VERIFY_NLEVELS][2];
  double H_obs, L_obs, dMk_obs;
};

/**
 * Combine enumerated classes exactly (Cartesian-product argument of
 * Section 3.2): H and L count extrema are summed and divided by N; dM_k
 * numerator extrema at Ik and I5 are summed in class order and divided by the
 * observed K; the variable-support dM_k range at I0 (A.10) comes from a
 * knapsack over classes on the total overlap K: for each reachable K the
 * smallest and largest numerator sums, then min / max of numerator / K over
 * K > 0.  NaN where undefined (K = 0, or no positive support at I0).
 * @return 0, or -1 when ncls < 1.
 */
int pb_verify_combine(const struct pb_verify_class *cls, int32_t ncls, struct pb_verify_values *out);

/**
 * Brute force over the Cartesian product of the classes' bijection lists
 * (every combination of one bijection per class): the same values as
 * pb_verify_combine() computed without using additivity.  @p lists[c] holds
 * cls[c].perms entries from pb_verify_class_enumerate().  The caller bounds
 * the product size.
 */
int pb_verify_cartesian(const struct pb_verify_class *cls, struct pb_verify_perm *const *lists, int32_t ncls,
                        struct pb_verify_values *out);

/* ---- classes too large to enumerate: exact integer programs (GLPK) ---- */

/* Largest class the LP check accepts (records per side), and the default --lp-max. */
#define PB_VERIFY_LP_MAX_N 2000
#define PB_VERIFY_DEFAULT_LP_MAX 1000

/* I5 endpoints of one class as integer event counts (pb_verify_lp_class). */
struct pb_verify_lp_class {
  int32_t n, u;               /* records per side; |A| (clean correct and accepted) */
  int32_t H[2];               /* H count {min, max} at the records' z1 */
  int32_t n_lp, n_mip;        /* programs solved; of which by branch and bound */
  /* with policies (as struct pb_verify_pclass at I5): H_j, L_j count ends,
   * (h_j, l_j) attaining J_j {min, max} per weight, (h_j - h_l, l_j - l_l)
   * attaining D+_jl */
  int32_t pol_h[PB_VERIFY_MAX_POL][2], pol_l[PB_VERIFY_MAX_POL][2];
  int32_t J[PB_VERIFY_MAX_LAMBDA][PB_VERIFY_MAX_POL][2][2];
  int32_t D[PB_VERIFY_MAX_LAMBDA][PB_VERIFY_MAX_POL][PB_VERIFY_MAX_POL][2];
};

/**
 * Exact I5 endpoints of one class by integer programming over record types
 * (a transportation polytope with the observed correct-correct and
 * same-label wrong pair counts as side constraints): the H count at the
 * records' acceptance z1 and, with @p ps, every policy count end, J_j end and
 * D+_jl of the setup.  Each program is solved by the rational simplex
 * (glp_exact); where its optimal vertex is fractional, branch and bound
 * (glp_intopt) gives the integer optimum.  Every reported count comes from an
 * integer solution checked exactly against all constraints.  Thread-safe
 * (GLPK keeps its environment per thread).
 * @return 0, or -1 on invalid input (n outside 1..PB_VERIFY_LP_MAX_N) or a solver failure.
 */
int pb_verify_lp_class(const struct pb_verify_records *r, const struct pb_verify_policy_setup *ps,
                       struct pb_verify_lp_class *out);

/** Release the calling thread's GLPK environment (GLPK keeps one per thread,
 *  allocated by its first call, until the thread frees it). */
void pb_verify_lp_release(void);

/**
 * Closed-form count intervals of one class at I0 and Ik (seed 000 Eq. 4, 5,
 * 7), from its counts alone: H[lv] and L[lv] {min, max} for lv = I0, Ik.
 * Used for whole-cell checks of cells whose classes are too large to
 * enumerate.
 */
void pb_verify_closed_forms(const struct pb_verify_records *r, int64_t H[2][2], int64_t L[2][2]);

/* Stage options (`pairbound verify`). */
#define PB_VERIFY_CELLS_ALL 0
#define PB_VERIFY_CELLS_PANEL 1
#define PB_VERIFY_CELLS_SAMPLE 2

/* Witness checks (verify_kernel_witness.c; docs/verify.md, "Witnesses"):
 * one grouping of a cell's records by class, then each witness in O(n). */
struct pb_verify_wgroup {
  int32_t n, ncls;
  int32_t *cid;               /* [n] class of each record (classes in ascending label order) */
  int32_t *label;             /* [ncls] */
  int64_t (*obs)[2];          /* [ncls] observed k, s */
  int64_t (*cnt)[3];          /* [ncls] the last checked witness's k, s and H count */
  uint8_t *used;              /* [n] scratch */
};
/** Group @p d's records by class; 0, or -1 when memory fails. */
int pb_verify_witness_group(const struct pb_cell_view *d, struct pb_verify_wgroup *g);
void pb_verify_witness_group_free(struct pb_verify_wgroup *g);
/**
 * Check the correspondence @p perm (clean record i with perturbed record
 * perm[i]) of the grouped cell: a bijection within classes that keeps every
 * class's observed k (and with @p keep_s its s: the five counts at I5).
 * @return 0 with *H its H count (clean correct accepted with perturbed wrong
 *         accepted) and g->cnt per class; 1 when it is not such a
 *         correspondence, with the class in *bad_label and the reason in @p why.
 */
int pb_verify_witness_check(const struct pb_cell_view *d, struct pb_verify_wgroup *g, const int32_t *perm, int keep_s,
                            int64_t *H, int32_t *bad_label, char *why, size_t len);

struct pb_verify_options {
  int cells;                  /* PB_VERIFY_CELLS_* */
  int32_t sample;             /* --sample: cells per source for PB_VERIFY_CELLS_SAMPLE */
  uint64_t sample_seed;
  char *sources;              /* comma-separated source names to cover, or NULL for all */
  int32_t max_class;          /* classes with more records per side are skipped (default 8: 8! = 40,320 bijections) */
  int64_t cartesian_max;      /* whole-cell Cartesian products up to this many combinations (default 20000) */
  int32_t lp_max;             /* larger classes up to this many records per side: exact LP check (0: off) */
  int allow_empty;            /* --allow-empty: a run that checks no class still succeeds */
  int have_tau;
  float tau;                  /* one threshold for every cell (as `bounds --tau`) */
  char *against;              /* compare with this bounds results.h5 instead of recomputing */
  char *witnesses;            /* check the witnesses of this `bounds --witnesses` results.h5 */
  int policies;               /* also verify the rejection-policy engine (--policies) */
  int32_t n_taus;             /* > 0: perturbed thresholds for every cell (--policy-taus) */
  float taus[PB_VERIFY_MAX_POL];
  int32_t n_lambdas;          /* cost weights (--lambdas; default the primary 0.5) */
  double lambdas[PB_VERIFY_MAX_LAMBDA];
};

/** Options of `pairbound verify` and [verify] (include/pairbound/options.h). */
extern const struct pb_option pb_verify_option_table[];


#endif /* PAIRBOUND_VERIFY_H */
