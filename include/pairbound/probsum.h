/* Per-record summaries of a record's whole class-probability vector: its
 * entropy -sum p log p (natural log) and its collision probability sum p^2
 * over all classes (docs/csv.md, "Per-record summaries"; docs/store.md).
 * Pure: no MPI, no I/O. */
#ifndef PAIRBOUND_PROBSUM_H
#define PAIRBOUND_PROBSUM_H

#include <stddef.h>
#include <stdint.h>

/* Tolerances of the validation rules: the summaries are float32 and the
 * probabilities they are checked against are float32 roundings of a vector
 * that sums to 1 only up to rounding (docs/csv.md). */
#define PB_PROBSUM_TOL_ENTROPY 1e-4
#define PB_PROBSUM_TOL_COLLISION 1e-5

/**
 * Entropy and collision of a vector of @p n listed probabilities @p p
 * (zeros allowed, contributing nothing) and @p n_tail further classes of
 * probability @p q each: summed in index order, then the tail in closed
 * form, n_tail (-q log q) and n_tail q^2.
 */
void pb_probsum_vector(const double *p, int32_t n, int64_t n_tail, double q, double *entropy, double *collision);
/** An entropy's term, -p log p (0 where p <= 0), as pb_probsum_vector computes it. */
double pb_probsum_plogp(double p);
/** t[j] = pb_probsum_plogp(p[j]) for j < n: from a memo where p[j] has 11 significant bits (every probability
 * but 0 of a half-precision store), else computed; the same value either way. */
void pb_probsum_plogp_floats(const float *p, int32_t n, double *t);
/** pb_probsum_vector with the listed terms given, @p t[j] = pb_probsum_plogp(p[j]) (a memo's): the same sums. */
void pb_probsum_vector_terms(const double *p, const double *t, int32_t n, int64_t n_tail, double q, double *entropy,
                             double *collision);

/**
 * What a top-k list allows (docs/csv.md): of every vector whose k most
 * probable classes are @p tk_prob[0..k) and whose other n_classes - k
 * classes each lie in [0, p_k] and together hold at most the mass the list
 * leaves, r = 1 - sum p (at most (n_classes - k) p_k of it), the least and
 * largest entropy and collision.  Without tolerance.
 */
void pb_probsum_topk_bounds(const float *tk_prob, int32_t k, int32_t n_classes, double *h_lo, double *h_hi,
                            double *c_lo, double *c_hi);

/**
 * Whether a record's summaries break the rules (0 <= entropy <= log(classes),
 * max(smax^2, ptrue^2) <= collision <= 1, both within the top-k list's
 * bounds when @p k > 0; each within its tolerance): 0 when not, else
 * PB_SUMMARY_ENTROPY or PB_SUMMARY_COLLISION (pairbound/meta.h) for the
 * first that does, with the rule it breaks ("outside [0, log(20) = ...]")
 * in @p why.  @p entropy or @p collision NULL: that summary is absent.
 */
int pb_probsum_problem(const float *entropy, const float *collision, float smax, float ptrue, const float *tk_prob,
                       int32_t k, int32_t n_classes, char *why, size_t n);

#endif /* PAIRBOUND_PROBSUM_H */
