/* Per-record summaries: entropy and collision of a class-probability vector,
 * and the rules a stored pair must satisfy (include/pairbound/probsum.h). */
#include "config.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pairbound/meta.h"
#include "pairbound/probsum.h"

double pb_probsum_plogp(double p) { return p > 0 ? -p * log(p) : 0.0; }

/* -p log p of every float with 11 significant bits (its 13 low mantissa bits
 * zero) in [2^-24, 2): every probability of a half-precision store
 * (pb_num_round_half) but 0.  Such stores' lists are these 25,600 values
 * again and again (about 70 % of synth's calls to log, 5 % of its time; five
 * of the seven logs of each record ingest checks); each entry is
 * pb_probsum_plogp's own value, so the sums are the same to the bit. */
#define PB_PROBSUM__MEMO_E0 103 /* the float exponent field of 2^-24 */
#define PB_PROBSUM__MEMO_NE 25  /* exponents 2^-24 .. 2^0 */
static double pb_probsum__memo[PB_PROBSUM__MEMO_NE << 10];
static pthread_once_t pb_probsum__memo_once = PTHREAD_ONCE_INIT;

static void pb_probsum__memo_init(void)
{
  for (uint32_t x = 0; x < (PB_PROBSUM__MEMO_NE << 10); x++) {
    const uint32_t bits = ((PB_PROBSUM__MEMO_E0 + (x >> 10)) << 23) | ((x & 1023u) << 13);
    float f;
    memcpy(&f, &bits, sizeof f);
    pb_probsum__memo[x] = pb_probsum_plogp(f);
  }
}

/* pb_probsum_plogp(f), from the memo (initialised) where f is in it. */
static inline double pb_probsum__plogp_memo(float f)
{
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  const uint32_t e = bits >> 23; /* with the sign: a negative f falls outside the memo */
  if ((bits & 0x1FFFu) == 0 && e >= PB_PROBSUM__MEMO_E0 && e < PB_PROBSUM__MEMO_E0 + PB_PROBSUM__MEMO_NE)
    return pb_probsum__memo[((e - PB_PROBSUM__MEMO_E0) << 10) | ((bits >> 13) & 1023u)];
  return pb_probsum_plogp(f);
}

/* One pthread_once a call, not one a value: a call to this function per value
 * was 4.6 % of synth's instructions. */
void pb_probsum_plogp_floats(const float *p, int32_t n, double *t)
{
  pthread_once(&pb_probsum__memo_once, pb_probsum__memo_init);
  for (int32_t j = 0; j < n; j++) t[j] = pb_probsum__plogp_memo(p[j]);
}

void pb_probsum_vector(const double *p, int32_t n, int64_t n_tail, double q, double *entropy, double *collision)
{
  pb_probsum_vector_terms(p, NULL, n, n_tail, q, entropy, collision);
}

void pb_probsum_vector_terms(const double *p, const double *t, int32_t n, int64_t n_tail, double q, double *entropy,
                             double *collision)
{
  double h = 0.0, c = 0.0;
  for (int32_t j = 0; j < n; j++) {
    h += t ? t[j] : pb_probsum_plogp(p[j]);
    c += p[j] * p[j];
  }
  if (n_tail > 0 && q > 0) {
    h += (double)n_tail * pb_probsum_plogp(q);
    c += (double)n_tail * q * q;
  }
  *entropy = h;
  *collision = c;
}

/* The unlisted classes hold t in [0, t_hi], each at most p_k.  Collision and
 * entropy both grow with t (entropy while t < (C - k)/e), so the least of
 * each is the list's own contribution (t = 0), and the largest is at t_hi:
 * for collision, a convex function of the tail, the vertex of the polytope
 * {0 <= q <= p_k, sum q = t} with floor(t / p_k) classes at p_k and the rest
 * on one; for entropy, a concave one, the uniform tail t / (C - k), which
 * is at most p_k. */
void pb_probsum_topk_bounds(const float *tk_prob, int32_t k, int32_t n_classes, double *h_lo, double *h_hi,
                            double *c_lo, double *c_hi)
{
  double h = 0.0, c = 0.0, sum = 0.0;
  pthread_once(&pb_probsum__memo_once, pb_probsum__memo_init);
  for (int32_t j = 0; j < k; j++) {
    h += pb_probsum__plogp_memo(tk_prob[j]);
    c += (double)tk_prob[j] * tk_prob[j];
    sum += tk_prob[j];
  }
  const double rest = (double)(n_classes - k), pk = k > 0 ? tk_prob[k - 1] : 0.0;
  double t = fmin(fmax(1.0 - sum, 0.0), rest * pk);
  *h_lo = h;
  *c_lo = c;
  *h_hi = h;
  *c_hi = c;
  if (!(t > 0) || rest <= 0) return;
  const double th = fmin(t, rest / exp(1.0)), m = floor(t / pk), left = t - m * pk;
  *h_hi = h + th * log(rest / th);
  *c_hi = c + m * pk * pk + left * left;
}

int pb_probsum_problem(const float *entropy, const float *collision, float smax, float ptrue, const float *tk_prob,
                       int32_t k, int32_t n_classes, char *why, size_t n)
{
  const double tol_h = PB_PROBSUM_TOL_ENTROPY, tol_c = PB_PROBSUM_TOL_COLLISION;
  const double floor_c = fmax((double)smax * smax, (double)ptrue * ptrue);
  double h_lo = 0, h_hi = 0, c_lo = 0, c_hi = 0;
  if (k > 0) pb_probsum_topk_bounds(tk_prob, k, n_classes, &h_lo, &h_hi, &c_lo, &c_hi);
  if (entropy) {
    const double h = *entropy;
    /* an entropy at most floor(log2 n_classes) x 0.6931 (0.6931 < ln 2) is below log(n_classes) without
     * computing it: ingest checks every record, and this logarithm was one of its two a record */
    const int log2_floor = n_classes > 1 ? 63 - __builtin_clzll((unsigned long long)n_classes) : 0;
    if (!(h >= -tol_h && (h <= log2_floor * 0.6931 || h <= log((double)n_classes) + tol_h))) {
      snprintf(why, n, "outside [0, log(%d) = %.9g]", (int)n_classes, log((double)n_classes));
      return PB_SUMMARY_ENTROPY;
    }
    if (k > 0 && !(h >= h_lo - tol_h && h <= h_hi + tol_h)) {
      snprintf(why, n, "outside [%.9g, %.9g], what the top-%d list allows", h_lo, h_hi, (int)k);
      return PB_SUMMARY_ENTROPY;
    }
  }
  if (collision) {
    const double c = *collision;
    if (!(c >= floor_c - tol_c && c <= 1.0 + tol_c)) {
      snprintf(why, n, "outside [max(smax^2, ptrue^2) = %.9g, 1]", floor_c);
      return PB_SUMMARY_COLLISION;
    }
    if (k > 0 && !(c >= c_lo - tol_c && c <= c_hi + tol_c)) {
      snprintf(why, n, "outside [%.9g, %.9g], what the top-%d list allows", c_lo, c_hi, (int)k);
      return PB_SUMMARY_COLLISION;
    }
  }
  return 0;
}
