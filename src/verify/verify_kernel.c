/* Enumeration kernel of `pairbound verify`: every within-class bijection,
 * classified by its five-state counts, and the exact combination of classes
 * (seed 000 Appendix A.10, B.3, C.1).  Deliberately independent of
 * src/bounds/bounds_kernel.c and src/bounds/bounds_kernel_i5.c: no closed forms, no dynamic program over
 * wrong labels, no Dinkelbach iteration. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/verify.h"

/* Statistics of the bijections sharing one (k, s) pair; since a and b are
 * fixed, (k, s) determines all five state counts (h = a - k, r = b - k,
 * w = n - a - b + k - s).  The H and L counts seen are kept as sets, bit H
 * and bit 16 + L of hl (counts are at most PB_VERIFY_MAX_N), so adding a
 * bijection is one OR and two branch-free extremes; no bit set: none seen. */
struct pb_verify__key {
  uint32_t hl;
  double dmin, dmax;
};

/* Keys start empty: the extremes of no bijection. */
static void pb_verify__key_empty(struct pb_verify__key *e)
{
  e->hl = 0;
  e->dmin = INFINITY;
  e->dmax = -INFINITY;
}

/* A level's H and L extremes from the union of its keys' sets. */
static void pb_verify__extremes(uint32_t hl, int32_t H[2], int32_t L[2])
{
  const uint32_t h = hl & 0xFFFFu, l = hl >> 16;
  H[0] = __builtin_ctz(h), H[1] = 31 - __builtin_clz(h);
  L[0] = __builtin_ctz(l), L[1] = 31 - __builtin_clz(l);
}

/* The class's extrema at each level from the per-(k, s) key statistics: I0
 * all keys, Ik the observed k, I5 the observed (k, s); and the per-overlap
 * numerator extremes (variable support).  Every level holds the observed
 * correspondence, so none is empty; a key nothing reached adds no bit and
 * its infinite extremes change no minimum or maximum. */
static void pb_verify__levels(const struct pb_verify__key *keys, int32_t n, struct pb_verify_class *out)
{
  uint32_t all = 0;
  for (int32_t k = 0; k <= n; k++) {
    uint32_t row = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (int32_t s = 0; s <= n; s++) {
      const struct pb_verify__key *e = &keys[k * (n + 1) + s];
      row |= e->hl;
      lo = e->dmin < lo ? e->dmin : lo;
      hi = e->dmax > hi ? e->dmax : hi;
    }
    all |= row;
    out->k_seen[k] = row != 0;
    if (!row) continue;
    out->Dk[k][0] = lo, out->Dk[k][1] = hi;
    if (k != out->k) continue;
    pb_verify__extremes(row, out->H[PB_VERIFY_IK], out->L[PB_VERIFY_IK]);
    out->D[PB_VERIFY_IK][0] = lo, out->D[PB_VERIFY_IK][1] = hi;
    const struct pb_verify__key *e = &keys[k * (n + 1) + out->s];
    pb_verify__extremes(e->hl, out->H[PB_VERIFY_I5], out->L[PB_VERIFY_I5]);
    out->D[PB_VERIFY_I5][0] = e->dmin, out->D[PB_VERIFY_I5][1] = e->dmax;
  }
  pb_verify__extremes(all, out->H[PB_VERIFY_I0], out->L[PB_VERIFY_I0]);
  if (out->k == 0)
    for (int lv = PB_VERIFY_IK; lv <= PB_VERIFY_I5; lv++) out->D[lv][0] = out->D[lv][1] = NAN;
  /* Per-overlap numerator extremes over all bijections (variable support). */
  out->D[PB_VERIFY_I0][0] = out->D[PB_VERIFY_I0][1] = NAN;
  for (int32_t k = 1; k <= n; k++) {
    if (!out->k_seen[k]) continue;
    const double lo = out->Dk[k][0] / (double)k, hi = out->Dk[k][1] / (double)k;
    if (isnan(out->D[PB_VERIFY_I0][0]) || lo < out->D[PB_VERIFY_I0][0]) out->D[PB_VERIFY_I0][0] = lo;
    if (isnan(out->D[PB_VERIFY_I0][1]) || hi > out->D[PB_VERIFY_I0][1]) out->D[PB_VERIFY_I0][1] = hi;
  }
}

static int pb_verify__enumerate(const struct pb_verify_records *r, struct pb_verify_class *out,
                                struct pb_verify_perm *list, uint32_t *tally)
{
  if (!r || !out || r->n < 1 || r->n > PB_VERIFY_MAX_N || !r->c0 || !r->z0 || !r->c1 || !r->z1 || !r->p0 ||
      !r->p1 || !r->m0 || !r->m1)
    return -1;
  const int32_t n = r->n;
  memset(out, 0, sizeof *out);
  out->n = n;
  uint32_t amask = 0; /* A: correct and accepted clean records */
  for (int32_t i = 0; i < n; i++) {
    out->a += r->c0[i] != 0;
    out->b += r->c1[i] != 0;
    if (r->c0[i] && r->z0[i]) amask |= 1u << i, out->u++;
  }
  if (tally) memset(tally, 0, (size_t)pb_verify_tally_len(n) * sizeof *tally);

  /* What a (clean i, perturbed j) pair adds to the running counts, one
   * word in four 16-bit lanes: the key index k (n + 1) + s (correct on both
   * sides: retained correctness k; wrong on both sides with the same label:
   * persistent error s), H (clean correct accepted, perturbed wrong
   * accepted), L (clean correct accepted, perturbed correct rejected) and k.
   * A sum of such words never carries out of a lane (each lane's total is at
   * most (n + 1) n), and taking a pair's word out again never borrows. */
  const uint64_t KEY_K = (uint64_t)(n + 1), LANE_H = 1ull << 16, LANE_L = 1ull << 32, LANE_K = 1ull << 48;
  uint64_t word[PB_VERIFY_MAX_N * PB_VERIFY_MAX_N];
  for (int32_t i = 0; i < n; i++)
    for (int32_t j = 0; j < n; j++) {
      const int c0 = r->c0[i] != 0, c1 = r->c1[j] != 0, z0 = r->z0[i] != 0, z1 = r->z1[j] != 0;
      const int both = c0 && c1, same_wrong = !c0 && !c1 && r->p0[i] == r->p1[j];
      word[i * n + j] = (both ? KEY_K + LANE_K : 0) + (same_wrong ? 1 : 0) + (c0 && z0 && !c1 && z1 ? LANE_H : 0) +
                        (c0 && z0 && c1 && !z1 ? LANE_L : 0);
    }
  /* Subset sums of M (clean) and M' (perturbed), each in record order: a
   * mask's sum is its lower records' sum plus its highest record, which is
   * the left-to-right sum over ascending records term for term. */
  const uint32_t nmask = 1u << n;
  double sx[1u << PB_VERIFY_MAX_N], sz[1u << PB_VERIFY_MAX_N];
  sx[0] = sz[0] = 0.0;
  for (uint32_t mask = 1; mask < nmask; mask++) {
    const int32_t top = 31 - __builtin_clz(mask);
    sx[mask] = sx[mask ^ 1u << top] + (double)r->m0[top];
    sz[mask] = sz[mask ^ 1u << top] + (double)r->m1[top];
  }

  struct pb_verify__key keys[(PB_VERIFY_MAX_N + 1) * (PB_VERIFY_MAX_N + 1)];
  for (int32_t i = 0; i < (n + 1) * (n + 1); i++) pb_verify__key_empty(&keys[i]);
  int32_t perm[PB_VERIFY_MAX_N], ctr[PB_VERIFY_MAX_N];
  for (int32_t i = 0; i < n; i++) perm[i] = i, ctr[i] = 0;
  int64_t count = 0;
  /* Heap's algorithm (iterative): each step swaps two entries, so the
   * counts and masks are updated for those two positions only; the first
   * permutation is the identity, i.e. the observed correspondence.  mi / mj:
   * the clean / perturbed records of the correct-correct pairs; am: the
   * partners of the correct accepted clean records. */
  uint64_t sum = 0;
  uint32_t mi = 0, mj = 0, am = 0;
#define PB_VERIFY__PAIR(i, op)                                    \
  do {                                                            \
    const int32_t pj = perm[i];                                   \
    const uint64_t w = word[(i) * n + pj];                        \
    const uint32_t b = (uint32_t)(w >> 48); /* its k: 0 or 1 */   \
    sum op w;                                                     \
    am ^= (amask >> (i) & 1u) << pj;                              \
    mi ^= b << (i);                                               \
    mj ^= b << pj;                                                \
  } while (0)
  for (int32_t i = 0; i < n; i++) PB_VERIFY__PAIR(i, +=);
  {
    const int32_t k = (int32_t)(sum >> 48), key = (int32_t)(sum & 0xFFFF);
    out->k = k, out->s = key - k * (n + 1);
    out->H_obs = (int32_t)(sum >> 16 & 0xFFFF), out->L_obs = (int32_t)(sum >> 32 & 0xFFFF);
    out->D_obs = k > 0 ? sx[mi] - sz[mj] : NAN;
  }
  for (int32_t lvl = 1;;) {
    const uint32_t key = (uint32_t)(sum & 0xFFFF), H = (uint32_t)(sum >> 16 & 0xFFFF), L = (uint32_t)(sum >> 32 & 0xFFFF);
    const double D = sx[mi] - sz[mj];
    struct pb_verify__key *e = &keys[key];
    e->hl |= 1u << H | 1u << (16 + L);
    e->dmin = D < e->dmin ? D : e->dmin;
    e->dmax = D > e->dmax ? D : e->dmax;
    if (tally) tally[key << n | am]++;
    if (list) {
      const int32_t k = (int32_t)(sum >> 48);
      list[count] = (struct pb_verify_perm){(int8_t)k, (int8_t)((int32_t)key - k * (n + 1)), (int8_t)H, (int8_t)L,
                                            (uint16_t)am, sx[mi], sz[mj]};
    }
    count++;
    while (lvl < n && ctr[lvl] >= lvl) ctr[lvl++] = 0;
    if (lvl >= n) break;
    const int32_t other = lvl % 2 == 0 ? 0 : ctr[lvl];
    PB_VERIFY__PAIR(other, -=);
    PB_VERIFY__PAIR(lvl, -=);
    const int32_t t = perm[other];
    perm[other] = perm[lvl];
    perm[lvl] = t;
    PB_VERIFY__PAIR(other, +=);
    PB_VERIFY__PAIR(lvl, +=);
    ctr[lvl]++;
    lvl = 1;
  }
#undef PB_VERIFY__PAIR
  out->perms = count;
  pb_verify__levels(keys, n, out);
  return 0;
}

int pb_verify_class_enumerate(const struct pb_verify_records *r, struct pb_verify_class *out,
                              struct pb_verify_perm *list)
{
  return pb_verify__enumerate(r, out, list, NULL);
}

int pb_verify_class_enumerate_sets(const struct pb_verify_records *r, struct pb_verify_class *out,
                                   struct pb_verify_perm *list, uint32_t *tally)
{
  if (!tally) return -1;
  return pb_verify__enumerate(r, out, list, tally);
}

static void pb_verify__nan_values(struct pb_verify_values *v)
{
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++)
    for (int e = 0; e < 2; e++) v->H[lv][e] = v->L[lv][e] = v->dMk[lv][e] = NAN;
  v->H_obs = v->L_obs = v->dMk_obs = NAN;
}

/* dM_k at I0 of a cell from its classes (@p width: the sum over classes of
 * their attainable overlap ranges): the extreme ratio over every choice of
 * one attainable overlap per class.  -1 when out of memory. */
static int pb_verify__combine_dmk_i0(const struct pb_verify_class *cls, int32_t ncls, int32_t width,
                                     struct pb_verify_values *out)
{
  /* Knapsack on the total overlap (offset by the smallest attainable total):
   * lo[t] / hi[t] = smallest / largest numerator sum over class choices with
   * total sum(kmin) + t, accumulated in class order; an unreachable total
   * holds +inf / -inf, which no candidate sum replaces, so every step is a
   * branch-free minimum or maximum over the class's overlaps (exact: a
   * minimum picks one of its candidates). */
  double *lo = malloc((size_t)(width + 1) * sizeof *lo), *hi = malloc((size_t)(width + 1) * sizeof *hi);
  double *nlo = malloc((size_t)(width + 1) * sizeof *nlo), *nhi = malloc((size_t)(width + 1) * sizeof *nhi);
  if (!lo || !hi || !nlo || !nhi) {
    free(lo), free(hi), free(nlo), free(nhi);
    return -1;
  }
  int64_t base = 0;
  int32_t cur = 0; /* offsets 0..cur may be reachable */
  lo[0] = hi[0] = 0.0;
  for (int32_t c = 0; c < ncls; c++) {
    const struct pb_verify_class *q = &cls[c];
    int32_t kmin = -1, kmax = -1;
    for (int32_t k = 0; k <= q->n; k++)
      if (q->k_seen[k]) {
        if (kmin < 0) kmin = k;
        kmax = k;
      }
    base += kmin;
    const int32_t ncur = cur + kmax - kmin;
    /* k = kmin (always seen) sets offsets 0..cur; the rest start unreachable */
    for (int32_t u = cur + 1; u <= ncur; u++) nlo[u] = INFINITY, nhi[u] = -INFINITY;
    for (int32_t k = kmin; k <= kmax; k++) {
      if (!q->k_seen[k]) continue;
      double *restrict dlo = nlo + (k - kmin), *restrict dhi = nhi + (k - kmin);
      /* k = 0: an empty correct-correct block, numerator exactly 0 (no term added) */
      const double alo = k > 0 ? q->Dk[k][0] : 0.0, ahi = k > 0 ? q->Dk[k][1] : 0.0;
      if (k == kmin && k == 0) {
        memcpy(dlo, lo, (size_t)(cur + 1) * sizeof *lo);
        memcpy(dhi, hi, (size_t)(cur + 1) * sizeof *hi);
      } else if (k == kmin) {
#pragma omp simd
        for (int32_t t = 0; t <= cur; t++) dlo[t] = lo[t] + alo, dhi[t] = hi[t] + ahi;
      } else {
#pragma omp simd
        for (int32_t t = 0; t <= cur; t++) {
          const double vlo = lo[t] + alo, vhi = hi[t] + ahi;
          dlo[t] = vlo < dlo[t] ? vlo : dlo[t];
          dhi[t] = vhi > dhi[t] ? vhi : dhi[t];
        }
      }
    }
    cur = ncur;
    double *t1 = lo; lo = nlo; nlo = t1;
    double *t2 = hi; hi = nhi; nhi = t2;
  }
  /* For a fixed K > 0 the ratio is monotone in the numerator, so the extreme
   * ratio over all choices is the extreme over K of the extreme sums / K. */
  for (int32_t t = 0; t <= cur; t++) {
    const int64_t Kt = base + t;
    if (lo[t] == INFINITY || Kt <= 0) continue;
    const double rlo = lo[t] / (double)Kt, rhi = hi[t] / (double)Kt;
    if (isnan(out->dMk[PB_VERIFY_I0][0]) || rlo < out->dMk[PB_VERIFY_I0][0]) out->dMk[PB_VERIFY_I0][0] = rlo;
    if (isnan(out->dMk[PB_VERIFY_I0][1]) || rhi > out->dMk[PB_VERIFY_I0][1]) out->dMk[PB_VERIFY_I0][1] = rhi;
  }
  free(lo), free(hi), free(nlo), free(nhi);
  return 0;
}

int pb_verify_combine(const struct pb_verify_class *cls, int32_t ncls, struct pb_verify_values *out)
{
  if (!out) return -1;
  memset(out, 0, sizeof *out);
  pb_verify__nan_values(out);
  if (!cls || ncls < 1) return -1;
  int64_t N = 0, K = 0, H[PB_VERIFY_NLEVELS][2] = {{0}}, L[PB_VERIFY_NLEVELS][2] = {{0}}, Hobs = 0, Lobs = 0;
  double D[PB_VERIFY_NLEVELS][2] = {{0}}, Dobs = 0.0;
  int32_t width = 0;
  for (int32_t c = 0; c < ncls; c++) {
    const struct pb_verify_class *q = &cls[c];
    N += q->n;
    K += q->k;
    Hobs += q->H_obs;
    Lobs += q->L_obs;
    for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++)
      for (int e = 0; e < 2; e++) {
        H[lv][e] += q->H[lv][e];
        L[lv][e] += q->L[lv][e];
      }
    if (q->k > 0) {
      for (int lv = PB_VERIFY_IK; lv <= PB_VERIFY_I5; lv++)
        for (int e = 0; e < 2; e++) D[lv][e] += q->D[lv][e];
      Dobs += q->D_obs;
    }
    int32_t kmin = -1, kmax = -1;
    for (int32_t k = 0; k <= q->n; k++)
      if (q->k_seen[k]) {
        if (kmin < 0) kmin = k;
        kmax = k;
      }
    width += kmax - kmin;
  }
  const double dN = (double)N;
  out->n = N;
  out->K = K;
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++)
    for (int e = 0; e < 2; e++) {
      out->H[lv][e] = (double)H[lv][e] / dN;
      out->L[lv][e] = (double)L[lv][e] / dN;
    }
  out->H_obs = (double)Hobs / dN;
  out->L_obs = (double)Lobs / dN;
  if (K > 0) {
    for (int lv = PB_VERIFY_IK; lv <= PB_VERIFY_I5; lv++)
      for (int e = 0; e < 2; e++) out->dMk[lv][e] = D[lv][e] / (double)K;
    out->dMk_obs = Dobs / (double)K;
  }

  return pb_verify__combine_dmk_i0(cls, ncls, width, out);
}

/* Running extrema over the combinations of a Cartesian product. */
static void pb_verify__ext(double v[2], double x)
{
  if (isnan(v[0]) || x < v[0]) v[0] = x;
  if (isnan(v[1]) || x > v[1]) v[1] = x;
}

int pb_verify_cartesian(const struct pb_verify_class *cls, struct pb_verify_perm *const *lists, int32_t ncls,
                        struct pb_verify_values *out)
{
  if (!out) return -1;
  memset(out, 0, sizeof *out);
  pb_verify__nan_values(out);
  if (!cls || !lists || ncls < 1) return -1;
  int64_t *idx = calloc((size_t)ncls, sizeof *idx);
  if (!idx) return -1;
  int64_t N = 0, Kobs = 0;
  for (int32_t c = 0; c < ncls; c++) N += cls[c].n, Kobs += cls[c].k;
  double Hx[PB_VERIFY_NLEVELS][2], Lx[PB_VERIFY_NLEVELS][2], Dx[PB_VERIFY_NLEVELS][2];
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++)
    for (int e = 0; e < 2; e++) Hx[lv][e] = Lx[lv][e] = Dx[lv][e] = NAN;
  for (;;) {
    int64_t H = 0, L = 0, K = 0;
    double num = 0.0;
    int ik = 1, i5 = 1, obs = 1;
    for (int32_t c = 0; c < ncls; c++) {
      const struct pb_verify_perm *p = &lists[c][idx[c]];
      H += p->H;
      L += p->L;
      K += p->k;
      if (p->k > 0) num += p->X - p->Z;
      ik &= p->k == cls[c].k;
      i5 &= p->k == cls[c].k && p->s == cls[c].s;
      obs &= idx[c] == 0; /* the first bijection of every class is the identity */
    }
    pb_verify__ext(Hx[PB_VERIFY_I0], (double)H);
    pb_verify__ext(Lx[PB_VERIFY_I0], (double)L);
    if (K > 0) pb_verify__ext(Dx[PB_VERIFY_I0], num / (double)K);
    if (ik) {
      pb_verify__ext(Hx[PB_VERIFY_IK], (double)H);
      pb_verify__ext(Lx[PB_VERIFY_IK], (double)L);
      if (K > 0) pb_verify__ext(Dx[PB_VERIFY_IK], num / (double)K);
    }
    if (i5) {
      pb_verify__ext(Hx[PB_VERIFY_I5], (double)H);
      pb_verify__ext(Lx[PB_VERIFY_I5], (double)L);
      if (K > 0) pb_verify__ext(Dx[PB_VERIFY_I5], num / (double)K);
    }
    if (obs) {
      out->H_obs = (double)H / (double)N;
      out->L_obs = (double)L / (double)N;
      out->dMk_obs = K > 0 ? num / (double)K : NAN;
    }
    int32_t c = 0;
    while (c < ncls && ++idx[c] == cls[c].perms) idx[c++] = 0;
    if (c == ncls) break;
  }
  free(idx);
  out->n = N;
  out->K = Kobs;
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++)
    for (int e = 0; e < 2; e++) {
      out->H[lv][e] = Hx[lv][e] / (double)N;
      out->L[lv][e] = Lx[lv][e] / (double)N;
      out->dMk[lv][e] = Dx[lv][e];
    }
  return 0;
}
