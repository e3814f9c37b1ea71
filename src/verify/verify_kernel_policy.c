/* Policy side of `pairbound verify`: per-class policy event counts of every
 * enumerated bijection (seed 000 Eq. 10), their extremes, the classwise pieces
 * of D+ (Eq. 11), feasible means, Lemma 1 (Eq. 8) from the enumerated count
 * intervals, Corollary 1 (attainable (L_j)_j vectors at Ik and I5), the exact
 * combination of classes and a whole-cell Cartesian brute force.
 *
 * Independent of src/policy/policy_kernel.c: no closed forms, no prefix sums over
 * sorted record values, no dynamic program over wrong labels, no counting of
 * bijections by formula.  Every number here comes from the bijections that
 * src/verify/verify_kernel.c enumerated, through the tally of their partner sets pi(A):
 * the events of Eq. 10 are h_j(pi) = |pi(A) ∩ W_j|, l_j(pi) = |pi(A) ∩ R_j|
 * (the definition summed over i in A), so every count of a bijection is a
 * function of its partner set and the tally loses nothing. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/verify.h"

/* Bits set in m.  Written out: without -mpopcnt __builtin_popcount is a libgcc
 * call (__popcountdi2), and this runs for every policy of every partner set. */
static inline int32_t pb_verify__pop(uint32_t m)
{
  m = m - ((m >> 1) & 0x55555555u);
  m = (m & 0x33333333u) + ((m >> 2) & 0x33333333u);
  m = (m + (m >> 4)) & 0x0f0f0f0fu;
  return (int32_t)((m * 0x01010101u) >> 24);
}

/* Valid policy setup. */
static int pb_verify__setup_ok(const struct pb_verify_policy_setup *ps)
{
  if (!ps || ps->n_pol < 1 || ps->n_pol > PB_VERIFY_MAX_POL || ps->n_lambda < 1 || ps->n_lambda > PB_VERIFY_MAX_LAMBDA)
    return 0;
  for (int32_t j = 0; j < ps->n_pol; j++)
    if (isnan(ps->tau[j])) return 0;
  for (int32_t i = 0; i < ps->n_lambda; i++)
    if (!(ps->lambda[i] >= 0 && ps->lambda[i] <= 1)) return 0;
  return 1;
}

static int pb_verify__cmp_u32(const void *pa, const void *pb)
{
  const uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  return (a > b) - (a < b);
}

/* The class's masks (A, W_j, R_j), marginal counts and observed values. */
static void pb_verify__pmasks(const struct pb_verify_records *r, const struct pb_verify_policy_setup *ps,
                              struct pb_verify_pclass *out)
{
  const int32_t n = r->n, P = ps->n_pol;
  out->n = n;
  out->u = 0;
  out->A = 0;
  for (int32_t i = 0; i < n; i++)
    if (r->c0[i] && r->z0[i]) out->A |= (uint16_t)(1u << i), out->u++;
  pb_verify_policy_masks(r, ps, out->W, out->R);
  for (int32_t j = 0; j < P; j++) {
    const uint16_t w = out->W[j], c = out->R[j];
    out->e[j] = pb_verify__pop(w);
    out->rj[j] = pb_verify__pop(c);
    /* the observed correspondence is the identity: pi(A) = A */
    out->h_obs[j] = pb_verify__pop(out->A & w);
    out->l_obs[j] = pb_verify__pop(out->A & c);
  }
}

void pb_verify_policy_masks(const struct pb_verify_records *r, const struct pb_verify_policy_setup *ps,
                            uint16_t W[PB_VERIFY_MAX_POL], uint16_t R[PB_VERIFY_MAX_POL])
{
  for (int32_t j = 0; j < ps->n_pol; j++) {
    uint16_t w = 0, c = 0;
    for (int32_t i = 0; i < r->n; i++) {
      const int acc = r->s1[i] >= ps->tau[j];
      if (!r->c1[i] && acc) w |= (uint16_t)(1u << i);
      if (r->c1[i] && !acc) c |= (uint16_t)(1u << i);
    }
    W[j] = w, R[j] = c;
  }
}

/* Bijection counts per partner set and level (I0: every key, Ik: observed k,
 * I5: observed (k, s)). */
static void pb_verify__pcounts(const struct pb_verify_class *q, const uint32_t *tally, int32_t n,
                               uint64_t cnt[PB_VERIFY_NLEVELS][1u << PB_VERIFY_MAX_N])
{
  const uint32_t nm = 1u << n;
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++) memset(cnt[lv], 0, nm * sizeof cnt[lv][0]);
  for (int32_t k = 0; k <= n; k++)
    for (int32_t s = 0; s <= n; s++) {
      const uint32_t *t = tally + ((size_t)(k * (n + 1) + s) << n);
      const int ik = k == q->k, i5 = ik && s == q->s;
      for (uint32_t m = 0; m < nm; m++) {
        if (!t[m]) continue;
        cnt[PB_VERIFY_I0][m] += t[m];
        if (ik) cnt[PB_VERIFY_IK][m] += t[m];
        if (i5) cnt[PB_VERIFY_I5][m] += t[m];
      }
    }

}

/* Level lv: extremes of h_j, l_j, c_j and c_j - c_l, the means over feasible
 * bijections, and (lv > 0) the distinct attainable (l_j)_j vectors, sorted,
 * into lv_out. */
static void pb_verify__plevel(const uint64_t *cnt, int32_t n, int lv, const struct pb_verify_policy_setup *ps,
                              struct pb_verify_pclass *out, uint32_t *lv_out)
{
  const int32_t P = ps->n_pol, NL = ps->n_lambda;
  const uint32_t nm = 1u << n;
  int64_t perms = 0, hs[PB_VERIFY_MAX_POL] = {0}, ls[PB_VERIFY_MAX_POL] = {0};
  double jv[PB_VERIFY_MAX_LAMBDA][PB_VERIFY_MAX_POL][2], dv[PB_VERIFY_MAX_LAMBDA][PB_VERIFY_MAX_POL][PB_VERIFY_MAX_POL];
  uint64_t seen[1u << PB_VERIFY_MAX_N];   /* distinct (h, l) vectors already evaluated */
  int32_t nseen = 0, nl = 0;
  for (uint32_t m = 0; m < nm; m++) {
    const uint64_t c = cnt[m];
    if (!c) continue;
    int32_t h[PB_VERIFY_MAX_POL], l[PB_VERIFY_MAX_POL];
    uint64_t key = 0;
    uint32_t lk = 0;
    for (int32_t j = 0; j < P; j++) {
      h[j] = pb_verify__pop(m & out->W[j]);
      l[j] = pb_verify__pop(m & out->R[j]);
      hs[j] += (int64_t)c * h[j];
      ls[j] += (int64_t)c * l[j];
      key |= (uint64_t)(h[j] | l[j] << 4) << (8 * j);
      lk |= (uint32_t)l[j] << (4 * j);
    }
    const int first = perms == 0;
    perms += (int64_t)c;
    if (lv > 0) lv_out[nl++] = lk;
    int dup = 0;
    for (int32_t i = 0; i < nseen && !dup; i++) dup = seen[i] == key;
    if (dup) continue;
    seen[nseen++] = key;
    for (int32_t j = 0; j < P; j++) {
      if (first || h[j] < out->h[lv][j][0]) out->h[lv][j][0] = h[j];
      if (first || h[j] > out->h[lv][j][1]) out->h[lv][j][1] = h[j];
      if (first || l[j] < out->l[lv][j][0]) out->l[lv][j][0] = l[j];
      if (first || l[j] > out->l[lv][j][1]) out->l[lv][j][1] = l[j];
      for (int32_t o = 0; o < P; o++) {
        if (o == j) continue;
        const int32_t d = l[j] - l[o];
        if (first || d > out->DL[lv][j][o]) out->DL[lv][j][o] = d;
      }
    }
    for (int32_t li = 0; li < NL; li++) {
      const double lam = ps->lambda[li];
      for (int32_t j = 0; j < P; j++) {
        const double v = lam * h[j] + (1 - lam) * l[j];
        if (first || v < jv[li][j][0]) {
          jv[li][j][0] = v;
          out->J[lv][li][j][0][0] = h[j], out->J[lv][li][j][0][1] = l[j];
        }
        if (first || v > jv[li][j][1]) {
          jv[li][j][1] = v;
          out->J[lv][li][j][1][0] = h[j], out->J[lv][li][j][1][1] = l[j];
        }
        for (int32_t o = 0; o < P; o++) {
          if (o == j) continue;
          const int32_t dh = h[j] - h[o], dl = l[j] - l[o];
          const double d = lam * dh + (1 - lam) * dl;
          if (first || d > dv[li][j][o]) {
            dv[li][j][o] = d;
            out->D[lv][li][j][o][0] = dh, out->D[lv][li][j][o][1] = dl;
          }
        }
      }
    }
  }
  out->perms[lv] = perms;   /* >= 1: the identity is feasible at every level */
  for (int32_t j = 0; j < P; j++) {
    out->hmean[lv][j] = (double)hs[j] / (double)perms;
    out->lmean[lv][j] = (double)ls[j] / (double)perms;
    out->DL[lv][j][j] = 0;
    for (int32_t li = 0; li < NL; li++) out->D[lv][li][j][j][0] = out->D[lv][li][j][j][1] = 0;
  }
  if (lv > 0) {
    qsort(lv_out, (size_t)nl, sizeof *lv_out, pb_verify__cmp_u32);
    int32_t u = 0;
    for (int32_t i = 0; i < nl; i++)
      if (i == 0 || lv_out[i] != lv_out[u - 1]) lv_out[u++] = lv_out[i];
    out->n_lvec[lv - 1] = u;
  }
}

/* Lemma 1 (Eq. 8) at level lv from the enumerated intervals alone:
 * max lambda h + (1 - lambda) l over the box with h + l <= u. */
static void pb_verify__plemma1(int lv, const struct pb_verify_policy_setup *ps, struct pb_verify_pclass *out)
{
  const int32_t P = ps->n_pol, NL = ps->n_lambda;
  for (int32_t li = 0; li < NL; li++) {
    const double lam = ps->lambda[li];
    for (int32_t j = 0; j < P; j++) {
      int32_t bh = -1, bl = -1;
      double best = -INFINITY;
      for (int32_t hh = out->h[lv][j][0]; hh <= out->h[lv][j][1]; hh++) {
        int32_t ll = out->l[lv][j][1] < out->u - hh ? out->l[lv][j][1] : out->u - hh;
        if (ll < out->l[lv][j][0]) continue;
        const double v = lam * hh + (1 - lam) * ll;
        if (v > best) best = v, bh = hh, bl = ll;
      }
      out->lemma1[lv][li][j][0] = bh, out->lemma1[lv][li][j][1] = bl;
    }
  }
}

int pb_verify_class_policies(const struct pb_verify_records *r, const struct pb_verify_class *q,
                             const uint32_t *tally, const struct pb_verify_policy_setup *ps,
                             struct pb_verify_pclass *out)
{
  if (!r || !q || !tally || !out || !r->s1 || !pb_verify__setup_ok(ps) || r->n != q->n || r->n < 1 ||
      r->n > PB_VERIFY_MAX_N)
    return -1;
  /* Only the used parts of the (large) arrays are written: callers read
   * entries below n_pol / n_lambda only. */
  pb_verify__pmasks(r, ps, out);
  uint64_t cnt[PB_VERIFY_NLEVELS][1u << PB_VERIFY_MAX_N];
  pb_verify__pcounts(q, tally, r->n, cnt);
  uint32_t lvec[2][1u << PB_VERIFY_MAX_N];   /* (l_j)_j vectors at Ik and I5, 4 bits per policy */
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++) {
    pb_verify__plevel(cnt[lv], r->n, lv, ps, out, lv > 0 ? lvec[lv - 1] : NULL);
    pb_verify__plemma1(lv, ps, out);
  }
  out->corollary1 = out->n_lvec[0] == out->n_lvec[1] &&
                    memcmp(lvec[0], lvec[1], (size_t)out->n_lvec[0] * sizeof lvec[0][0]) == 0;
  return 0;
}

/* Integer accumulators of a combination (only the used parts are touched). */
struct pb_verify_pacc {
  int64_t N, e[PB_VERIFY_MAX_POL], hobs[PB_VERIFY_MAX_POL], lobs[PB_VERIFY_MAX_POL];
  int64_t h[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL][2], l[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL][2];
  double hmean[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL], lmean[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL];
  int64_t J[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_LAMBDA][PB_VERIFY_MAX_POL][2][2];
  int64_t D[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_LAMBDA][PB_VERIFY_MAX_POL][PB_VERIFY_MAX_POL][2];
  int64_t DL[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL][PB_VERIFY_MAX_POL];
  int64_t lem[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_LAMBDA][PB_VERIFY_MAX_POL][2];
  uint8_t lem_bad[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_LAMBDA][PB_VERIFY_MAX_POL];
};

/* Rates of the natural cost and D'+ from E, L and max (L_j - L_l) counts. */
static void pb_verify__natural(const struct pb_verify_policy_setup *ps, const int64_t *e,
                               const int64_t (*DL)[PB_VERIFY_MAX_POL][PB_VERIFY_MAX_POL], struct pb_verify_pvalues *out)
{
  const int32_t P = ps->n_pol, NL = ps->n_lambda;
  const double N = (double)out->n;
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++)
    for (int32_t li = 0; li < NL; li++) {
      const double lam = ps->lambda[li];
      for (int32_t j = 0; j < P; j++) {
        for (int x = 0; x < 2; x++) out->Jn[lv][li][j][x] = lam * ((double)e[j] / N) + (1 - lam) * out->L[lv][j][x];
        for (int32_t o = 0; o < P; o++)
          out->Dn[lv][li][j][o] =
              j == o ? 0.0 : lam * ((double)e[j] / N - (double)e[o] / N) + (1 - lam) * ((double)DL[lv][j][o] / N);
      }
    }
}

struct pb_verify_pacc *pb_verify_pacc_new(void) { return malloc(sizeof(struct pb_verify_pacc)); }

void pb_verify_pacc_free(struct pb_verify_pacc *a) { free(a); }

void pb_verify_pacc_reset(struct pb_verify_pacc *a, const struct pb_verify_policy_setup *ps)
{
  const int32_t P = ps->n_pol, NL = ps->n_lambda;
  a->N = 0;
  for (int32_t j = 0; j < P; j++) a->e[j] = a->hobs[j] = a->lobs[j] = 0;
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++) {
    for (int32_t j = 0; j < P; j++) {
      a->h[lv][j][0] = a->h[lv][j][1] = a->l[lv][j][0] = a->l[lv][j][1] = 0;
      a->hmean[lv][j] = a->lmean[lv][j] = 0.0;
      for (int32_t o = 0; o < P; o++) a->DL[lv][j][o] = 0;
    }
    for (int32_t li = 0; li < NL; li++)
      for (int32_t j = 0; j < P; j++) {
        memset(a->J[lv][li][j], 0, sizeof a->J[lv][li][j]);
        memset(a->lem[lv][li][j], 0, sizeof a->lem[lv][li][j]);
        a->lem_bad[lv][li][j] = 0;
        for (int32_t o = 0; o < P; o++) a->D[lv][li][j][o][0] = a->D[lv][li][j][o][1] = 0;
      }
  }
}

void pb_verify_pacc_add(struct pb_verify_pacc *a, const struct pb_verify_pclass *q, const struct pb_verify_policy_setup *ps)
{
  const int32_t P = ps->n_pol, NL = ps->n_lambda;
  a->N += q->n;
  for (int32_t j = 0; j < P; j++) a->e[j] += q->e[j], a->hobs[j] += q->h_obs[j], a->lobs[j] += q->l_obs[j];
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++) {
    for (int32_t j = 0; j < P; j++) {
      for (int x = 0; x < 2; x++) a->h[lv][j][x] += q->h[lv][j][x], a->l[lv][j][x] += q->l[lv][j][x];
      a->hmean[lv][j] += q->hmean[lv][j];
      a->lmean[lv][j] += q->lmean[lv][j];
      for (int32_t o = 0; o < P; o++) a->DL[lv][j][o] += q->DL[lv][j][o];
    }
    for (int32_t li = 0; li < NL; li++)
      for (int32_t j = 0; j < P; j++) {
        for (int x = 0; x < 2; x++)
          for (int y = 0; y < 2; y++) a->J[lv][li][j][x][y] += q->J[lv][li][j][x][y];
        if (q->lemma1[lv][li][j][0] < 0) a->lem_bad[lv][li][j] = 1;
        a->lem[lv][li][j][0] += q->lemma1[lv][li][j][0];
        a->lem[lv][li][j][1] += q->lemma1[lv][li][j][1];
        for (int32_t o = 0; o < P; o++)
          for (int y = 0; y < 2; y++) a->D[lv][li][j][o][y] += q->D[lv][li][j][o][y];
      }
  }
}

/* One walk over what pb_verify_pacc_add() reads, in both directions: every
 * count of a class is at most n <= PB_VERIFY_MAX_N in magnitude (Lemma 1's
 * "empty" marker is -1), so one signed byte holds it; the two means are
 * doubles and travel bit for bit. */
size_t pb_verify_pclass_packed_size(const struct pb_verify_policy_setup *ps)
{
  const size_t P = (size_t)ps->n_pol, NL = (size_t)ps->n_lambda;
  return 1 + 3 * P + PB_VERIFY_NLEVELS * (4 * P + P * P + NL * P * (4 + 2 + 2 * P)) +
         PB_VERIFY_NLEVELS * 2 * P * sizeof(double);
}

void pb_verify_pclass_pack(struct pb_verify_pclass *q, const struct pb_verify_policy_setup *ps, unsigned char *buf,
                           int pack)
{
  const int32_t P = ps->n_pol, NL = ps->n_lambda;
  signed char *b = (signed char *)buf;
#define PB_VERIFY__IO(x)             \
  do {                               \
    if (pack) *b++ = (signed char)(x); \
    else (x) = *b++;                 \
  } while (0)
#define PB_VERIFY__IOD(x)                   \
  do {                                      \
    if (pack) memcpy(b, &(x), sizeof(x));   \
    else memcpy(&(x), b, sizeof(x));        \
    b += sizeof(x);                         \
  } while (0)
  PB_VERIFY__IO(q->n);
  for (int32_t j = 0; j < P; j++) {
    PB_VERIFY__IO(q->e[j]);
    PB_VERIFY__IO(q->h_obs[j]);
    PB_VERIFY__IO(q->l_obs[j]);
  }
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++) {
    for (int32_t j = 0; j < P; j++) {
      for (int x = 0; x < 2; x++) {
        PB_VERIFY__IO(q->h[lv][j][x]);
        PB_VERIFY__IO(q->l[lv][j][x]);
      }
      PB_VERIFY__IOD(q->hmean[lv][j]);
      PB_VERIFY__IOD(q->lmean[lv][j]);
      for (int32_t o = 0; o < P; o++) PB_VERIFY__IO(q->DL[lv][j][o]);
    }
    for (int32_t li = 0; li < NL; li++)
      for (int32_t j = 0; j < P; j++) {
        for (int x = 0; x < 2; x++)
          for (int y = 0; y < 2; y++) PB_VERIFY__IO(q->J[lv][li][j][x][y]);
        PB_VERIFY__IO(q->lemma1[lv][li][j][0]);
        PB_VERIFY__IO(q->lemma1[lv][li][j][1]);
        for (int32_t o = 0; o < P; o++)
          for (int y = 0; y < 2; y++) PB_VERIFY__IO(q->D[lv][li][j][o][y]);
      }
  }
#undef PB_VERIFY__IO
#undef PB_VERIFY__IOD
}

void pb_verify_pacc_values(const struct pb_verify_pacc *a, const struct pb_verify_policy_setup *ps,
                           struct pb_verify_pvalues *out)
{
  const int32_t P = ps->n_pol, NL = ps->n_lambda;
  const double N = (double)a->N;
  out->n = a->N;
  out->n_pol = P;
  out->n_lambda = NL;
  for (int32_t j = 0; j < P; j++) {
    out->E[j] = (double)a->e[j] / N;
    out->H_obs[j] = (double)a->hobs[j] / N;
    out->L_obs[j] = (double)a->lobs[j] / N;
  }
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++) {
    for (int32_t j = 0; j < P; j++) {
      for (int x = 0; x < 2; x++) out->H[lv][j][x] = (double)a->h[lv][j][x] / N, out->L[lv][j][x] = (double)a->l[lv][j][x] / N;
      out->H_mean[lv][j] = a->hmean[lv][j] / N;
      out->L_mean[lv][j] = a->lmean[lv][j] / N;
    }
    for (int32_t li = 0; li < NL; li++) {
      const double lam = ps->lambda[li];
      for (int32_t j = 0; j < P; j++) {
        for (int x = 0; x < 2; x++)
          out->J[lv][li][j][x] = (lam * (double)a->J[lv][li][j][x][0] + (1 - lam) * (double)a->J[lv][li][j][x][1]) / N;
        out->J_lemma1[lv][li][j] =
            a->lem_bad[lv][li][j] ? NAN : (lam * (double)a->lem[lv][li][j][0] + (1 - lam) * (double)a->lem[lv][li][j][1]) / N;
        for (int32_t o = 0; o < P; o++)
          out->D[lv][li][j][o] =
              j == o ? 0.0 : (lam * (double)a->D[lv][li][j][o][0] + (1 - lam) * (double)a->D[lv][li][j][o][1]) / N;
      }
    }
  }
  pb_verify__natural(ps, a->e, (const int64_t(*)[PB_VERIFY_MAX_POL][PB_VERIFY_MAX_POL])a->DL, out);
}

int pb_verify_combine_policies(const struct pb_verify_pclass *pc, int32_t ncls, const struct pb_verify_policy_setup *ps,
                               struct pb_verify_pvalues *out)
{
  if (!pc || ncls < 1 || !out || !pb_verify__setup_ok(ps)) return -1;
  struct pb_verify_pacc *a = pb_verify_pacc_new();
  if (!a) return -1;
  pb_verify_pacc_reset(a, ps);
  for (int32_t c = 0; c < ncls; c++) pb_verify_pacc_add(a, &pc[c], ps);
  pb_verify_pacc_values(a, ps, out);
  pb_verify_pacc_free(a);
  return 0;
}

/* Cartesian brute force: running extremes per level over whole-cell totals. */
struct pb_verify__pcart {
  int seen[PB_VERIFY_NLEVELS];
  int64_t count[PB_VERIFY_NLEVELS];
  int64_t h[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL][2], l[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL][2];
  int64_t hs[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL], ls[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL];
  double J[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_LAMBDA][PB_VERIFY_MAX_POL][2];
  double D[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_LAMBDA][PB_VERIFY_MAX_POL][PB_VERIFY_MAX_POL];
  int64_t DL[PB_VERIFY_NLEVELS][PB_VERIFY_MAX_POL][PB_VERIFY_MAX_POL];
};

static void pb_verify__pcart_add(struct pb_verify__pcart *x, int lv, const int64_t *h, const int64_t *l,
                                 const struct pb_verify_policy_setup *ps)
{
  const int32_t P = ps->n_pol, NL = ps->n_lambda;
  const int first = !x->seen[lv];
  x->seen[lv] = 1;
  x->count[lv]++;
  for (int32_t j = 0; j < P; j++) {
    x->hs[lv][j] += h[j], x->ls[lv][j] += l[j];
    if (first || h[j] < x->h[lv][j][0]) x->h[lv][j][0] = h[j];
    if (first || h[j] > x->h[lv][j][1]) x->h[lv][j][1] = h[j];
    if (first || l[j] < x->l[lv][j][0]) x->l[lv][j][0] = l[j];
    if (first || l[j] > x->l[lv][j][1]) x->l[lv][j][1] = l[j];
    for (int32_t o = 0; o < P; o++)
      if (first || l[j] - l[o] > x->DL[lv][j][o]) x->DL[lv][j][o] = l[j] - l[o];
  }
  for (int32_t li = 0; li < NL; li++) {
    const double lam = ps->lambda[li];
    for (int32_t j = 0; j < P; j++) {
      const double v = lam * (double)h[j] + (1 - lam) * (double)l[j];
      if (first || v < x->J[lv][li][j][0]) x->J[lv][li][j][0] = v;
      if (first || v > x->J[lv][li][j][1]) x->J[lv][li][j][1] = v;
      for (int32_t o = 0; o < P; o++) {
        const double d = lam * (double)(h[j] - h[o]) + (1 - lam) * (double)(l[j] - l[o]);
        if (first || d > x->D[lv][li][j][o]) x->D[lv][li][j][o] = d;
      }
    }
  }
}

int pb_verify_cartesian_policies(const struct pb_verify_class *cls, struct pb_verify_perm *const *lists,
                                 const uint16_t (*W)[PB_VERIFY_MAX_POL], const uint16_t (*R)[PB_VERIFY_MAX_POL],
                                 int32_t ncls, const struct pb_verify_policy_setup *ps, struct pb_verify_pvalues *out)
{
  if (!cls || !lists || !W || !R || ncls < 1 || !out || !pb_verify__setup_ok(ps)) return -1;
  const int32_t P = ps->n_pol, NL = ps->n_lambda;
  struct pb_verify__pcart *x = calloc(1, sizeof *x);
  int64_t *idx = calloc((size_t)ncls, sizeof *idx);
  if (!x || !idx) {
    free(x), free(idx);
    return -1;
  }
  int64_t N = 0, e[PB_VERIFY_MAX_POL] = {0}, hobs[PB_VERIFY_MAX_POL] = {0}, lobs[PB_VERIFY_MAX_POL] = {0};
  for (int32_t c = 0; c < ncls; c++) {
    N += cls[c].n;
    for (int32_t j = 0; j < P; j++) e[j] += pb_verify__pop(W[c][j]);
  }
  for (;;) {
    int64_t h[PB_VERIFY_MAX_POL] = {0}, l[PB_VERIFY_MAX_POL] = {0};
    int ik = 1, i5 = 1, obs = 1;
    for (int32_t c = 0; c < ncls; c++) {
      const struct pb_verify_perm *p = &lists[c][idx[c]];
      for (int32_t j = 0; j < P; j++) {
        h[j] += pb_verify__pop(p->am & W[c][j]);
        l[j] += pb_verify__pop(p->am & R[c][j]);
      }
      ik &= p->k == cls[c].k;
      i5 &= p->k == cls[c].k && p->s == cls[c].s;
      obs &= idx[c] == 0; /* the first bijection of every class is the identity */
    }
    pb_verify__pcart_add(x, PB_VERIFY_I0, h, l, ps);
    if (ik) pb_verify__pcart_add(x, PB_VERIFY_IK, h, l, ps);
    if (i5) pb_verify__pcart_add(x, PB_VERIFY_I5, h, l, ps);
    if (obs)
      for (int32_t j = 0; j < P; j++) hobs[j] = h[j], lobs[j] = l[j];
    int32_t c = 0;
    while (c < ncls && ++idx[c] == cls[c].perms) idx[c++] = 0;
    if (c == ncls) break;
  }
  const double dN = (double)N;
  out->n = N;
  out->n_pol = P;
  out->n_lambda = NL;
  for (int32_t j = 0; j < P; j++) {
    out->E[j] = (double)e[j] / dN;
    out->H_obs[j] = (double)hobs[j] / dN;
    out->L_obs[j] = (double)lobs[j] / dN;
  }
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++) {
    for (int32_t j = 0; j < P; j++) {
      for (int b = 0; b < 2; b++) out->H[lv][j][b] = (double)x->h[lv][j][b] / dN, out->L[lv][j][b] = (double)x->l[lv][j][b] / dN;
      /* the mean over the product's feasible combinations, each counted once */
      out->H_mean[lv][j] = (double)x->hs[lv][j] / (double)x->count[lv] / dN;
      out->L_mean[lv][j] = (double)x->ls[lv][j] / (double)x->count[lv] / dN;
    }
    for (int32_t li = 0; li < NL; li++)
      for (int32_t j = 0; j < P; j++) {
        for (int b = 0; b < 2; b++) out->J[lv][li][j][b] = x->J[lv][li][j][b] / dN;
        out->J_lemma1[lv][li][j] = NAN;
        for (int32_t o = 0; o < P; o++) out->D[lv][li][j][o] = j == o ? 0.0 : x->D[lv][li][j][o] / dN;
      }
  }
  pb_verify__natural(ps, e, (const int64_t(*)[PB_VERIFY_MAX_POL][PB_VERIFY_MAX_POL])x->DL, out);
  free(x);
  free(idx);
  return 0;
}
