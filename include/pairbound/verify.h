/* Independent verification of the identification endpoints by permutation
 * enumeration (seed 000 Appendix A.10 "finite verification", B.3, C.1,
 * Appendix D "Numerical verification", J.1).  See docs/verify.md.
 *
 * Nothing here shares code with the bounds engine (src/bounds.c,
 * src/bounds_i5.c): classes are grouped, states classified, extrema collected
 * and classes combined by this module alone.  The bounds engine is only
 * called by the stage (src/verify_stage.c) to be compared against. */
#ifndef PAIRBOUND_VERIFY_H
#define PAIRBOUND_VERIFY_H

#include <stdint.h>
#include <mpi.h>

#include "pairbound/protocol.h"

/* Largest class (records per side) that may be enumerated: 10! = 3,628,800
 * bijections, and 2^10 subset sums per side. */
#define PB_VERIFY_MAX_N 10
/* Default --max-class (8! = 40,320 bijections per class). */
#define PB_VERIFY_DEFAULT_MAX_CLASS 8
/* Default --cartesian-max: whole-cell products of at most this many bijections. */
#define PB_VERIFY_DEFAULT_CARTESIAN_MAX 20000
/* A residual above this (probability units) or a structural check violated by
 * more than this fails the verification. */
#define PB_VERIFY_TOL 1e-12
/* Default seed of the SHA-256 cell ordering used by --cells sample. */
#define PB_VERIFY_SAMPLE_SEED 20260911ull

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
  /* Hook for the policy stage: per-policy H_j / L_j count extrema and Lemma 1 /
   * Corollary 1 checks classify the same bijections (docs/verify.md). */
};

/* One bijection's contribution, kept only for whole-cell Cartesian products. */
struct pb_verify_perm {
  int8_t k, s, H, L;
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

/* Stage options (`pairbound verify`). */
#define PB_VERIFY_CELLS_ALL 0
#define PB_VERIFY_CELLS_PANEL 1
#define PB_VERIFY_CELLS_SAMPLE 2

struct pb_verify_options {
  int cells;                  /* PB_VERIFY_CELLS_* */
  int32_t sample;             /* --sample: cells per source for PB_VERIFY_CELLS_SAMPLE */
  uint64_t sample_seed;
  char *sources;              /* comma-separated source names to cover, or NULL for all */
  int32_t max_class;          /* classes with more records per side are skipped */
  int64_t cartesian_max;      /* whole-cell Cartesian products up to this many combinations */
  int have_tau;
  float tau;                  /* one threshold for every cell (as `bounds --tau`) */
  const char *against;        /* compare with this bounds results.h5 instead of recomputing */
};

void pb_verify_options_default(struct pb_verify_options *opt);

/**
 * Run `pairbound verify` on STORE, writing OUTDIR (collective).  Outputs are
 * written and committed even when a check fails; the return value is then
 * PB_FAIL with pb_error_message() naming the first failing cell and class.
 */
int pb_verify_run(const char *store_path, const char *outdir, MPI_Comm comm,
                  const struct pb_protocol_options *popt, const struct pb_verify_options *opt,
                  const char *provenance);

#endif /* PAIRBOUND_VERIFY_H */
