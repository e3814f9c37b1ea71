/* The class bootstrap's weighted screening metrics (seed 000 Appendix E.1):
 * AUROC and prorated failure coverage of one score under PB_WM_LANES class
 * weightings at once, in one pass over the score's packed images per group
 * of GCC vector lanes.  docs/resample.md, "Class bootstrap of the screening
 * metrics". */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/clones.h"
#include "pairbound/error.h"
#include "pairbound/screen_kernel.h"

void pb_screen_weighted_codes(const double *score, const uint8_t *y, const int32_t *label, const int32_t *order, int32_t n,
                       uint32_t *words, struct pb_wm_codes *out)
{
  uint32_t *code = words, *ret = words + n, *fail, *ra, *rae;
  int32_t n_fail = 0;
  for (int32_t i = 0; i < n; i++) n_fail += y[order[i]] != 0;
  fail = ret + (n - n_fail), ra = fail + n_fail, rae = ra + n_fail;
  /* r: retained images so far; gs: retained images above the current tie group; gf: its first failure */
  int32_t r = 0, f = 0, gs = 0, gf = 0;
  for (int32_t i = 0; i < n; i++) {
    int32_t q = order[n - 1 - i];
    uint32_t first = i == 0 || score[q] != score[order[n - i]];
    code[i] = (uint32_t)label[q] << 2 | first << 1 | (y[q] ? 1u : 0u);
    if (first) {
      for (; gf < f; gf++) rae[gf] = (uint32_t)r; /* the previous group's failures */
      gs = r;
    }
    if (y[q]) {
      fail[f] = (uint32_t)label[q];
      ra[f++] = (uint32_t)gs;
    } else {
      ret[r++] = (uint32_t)label[q];
    }
  }
  for (; gf < f; gf++) rae[gf] = (uint32_t)r;
  *out = (struct pb_wm_codes){code, ret, fail, ra, rae, n, n_fail};
}

/* Budgets k = max(1, round(pct W / 100)) (halves up, in integers, as
 * pb_screen_budget) of one weighting; cov NaN and nothing open without failures. */
static int64_t pb_wm__budgets(int64_t pos, int64_t total, const int *pcts, int n_pct, int64_t *k, double *cov,
                              unsigned *open)
{
  int64_t next = INT64_MAX;
  *open = 0;
  for (int b = 0; b < n_pct; b++) {
    k[b] = (pcts[b] * total + 50) / 100;
    if (k[b] < 1) k[b] = 1;
    cov[b] = NAN;
    if (pos > 0) {
      *open |= 1u << b;
      if (k[b] < next) next = k[b];
    }
  }
  return next;
}

/* The tie group [above, above + size) with gp failure weight reaches budgets
 * of one weighting: each of its images is selected with probability
 * (k - above) / size (the coverage definition's expression, term for term).
 * Returns the smallest budget still open. */
static int64_t pb_wm__reach(int64_t covered, int64_t gp, int64_t above, int64_t size, int64_t pos, const int64_t *k,
                            int n_pct, unsigned *open, double *cov)
{
  int64_t next = INT64_MAX;
  for (int b = 0; b < n_pct; b++)
    if (*open >> b & 1) {
      if (above + size >= k[b]) {
        cov[b] = ((double)covered + (double)gp * (double)(k[b] - above) / (double)size) / (double)pos;
        *open &= ~(1u << b);
      } else if (k[b] < next) {
        next = k[b];
      }
    }
  return next;
}

/* After the last image: budgets beyond every image, and the AUROC of lane l. */
static void pb_wm__finish(int64_t covered, double pairs, int64_t pos, int64_t total, unsigned open, int n_pct,
                          double *auroc, double *cov)
{
  for (int b = 0; b < n_pct; b++)
    if (open >> b & 1) cov[b] = (double)covered / (double)pos;
  int64_t neg = total - pos;
  *auroc = pos > 0 && neg > 0 ? pairs / (2.0 * (double)pos * (double)neg) : NAN;
}

/* Every lane at once, without a branch on a lane's weights.  AUROC: 2 x
 * (concordant pairs) + tied pairs = sum over failures i of w_i (2 RB_i + RT_i)
 * (RB, RT: the retained weight strictly below and tied with i's group) =
 * sum of w_i ((N - RA_i) + (N - RAE_i)) (N the retained total, RA and RAE
 * the retained weight strictly above and above or in i's group), so the
 * pair count adds the retained weights in order and multiplies only at the
 * failures, from the lists of pb_screen_weighted_codes (one vector add per retained
 * image; a former pass over the codes blended and multiplied at every image).
 * Coverage: the budget k falls in the last group whose weight above (ab) is
 * below k; pb_wm__close needs that group's weight and failure weight above
 * it and its own weight and failure weight.  The pass does not follow the
 * budgets image by image: every PB_WM__SNAP images it keeps each lane's
 * failure and retained weight above (ap, rn), the last group start so far,
 * and per budget the last such point still below it, until every lane's
 * weight reaches its largest budget; each budget is then followed over the
 * few images between its lanes' points.  V is the lane vector: 16-bit lanes
 * when every total is at most 65,535 (every weight sum fits; the pair count,
 * at most total^2 / 2, is summed in 32-bit lanes), else 64-bit lanes (totals
 * below 2^31, the products of two 31-bit numbers).  A pass serves LV of the
 * PB_WM_LANES weightings, from lane `off` on, with GCC vectors as wide as the
 * processor's registers and no wider (pairbound/clones.h): 16-bit lanes 32 at
 * a time with AVX-512, 16 with AVX2, else 8 (16 bytes: SSE2, or NEON
 * elsewhere); 64-bit lanes 4 at a time with AVX2, else 2. */
#define PB_WM__VEC(name, E, n) typedef E name __attribute__((vector_size(sizeof(E) * (n))))
PB_WM__VEC(pb_wm__h32, uint16_t, 32);
PB_WM__VEC(pb_wm__n16, uint32_t, 16);
PB_WM__VEC(pb_wm__h16, uint16_t, 16);
PB_WM__VEC(pb_wm__n8, uint32_t, 8);
PB_WM__VEC(pb_wm__h8, uint16_t, 8);
PB_WM__VEC(pb_wm__n4, uint32_t, 4);
PB_WM__VEC(pb_wm__w4, uint64_t, 4);
PB_WM__VEC(pb_wm__i32x4, int32_t, 4);
PB_WM__VEC(pb_wm__w2, uint64_t, 2);
PB_WM__VEC(pb_wm__i32x2, int32_t, 2);

/* The state a pass leaves for pb_wm__close, per lane. */
struct pb_wm__state {
  int64_t num2[PB_WM_LANES], ap[PB_WM_LANES];
  /* per budget: the weight and failure weight above its group, the group's weight and failure weight */
  int64_t lo_ab[PB_WM_MAX_PCT][PB_WM_LANES], lo_ap[PB_WM_MAX_PCT][PB_WM_LANES];
  int64_t lo_size[PB_WM_MAX_PCT][PB_WM_LANES], lo_gp[PB_WM_MAX_PCT][PB_WM_LANES];
};

/* Snapshot points of a pass: image at[c] (c * PB_WM__SNAP, or n last), each
 * lane's failure and retained weight above it (ap, rn: one lane vector per
 * point, stored as bytes), and lf[c], the last group start before it. */
#define PB_WM__SNAP 8
struct pb_wm__snaps {
  int32_t *at, *lf;
  unsigned char *ap, *rn;
};

/* One image of code u: the failure and retained weight so far. */
#define PB_WM__STEP(V, E, LOADW, u)                                                                                    \
  do {                                                                                                                 \
    V w, f = (V){0} + (E)(0 - (E)((u) & 1u));                                                                          \
    LOADW(w, (u) >> 2);                                                                                                \
    ap += w & f;                                                                                                       \
    rn += w & ~f;                                                                                                      \
  } while (0)

/* The pair count and the failure weight from the lists: the retained
 * weight so far (rs) is taken at each failure's group start (RA, kept for
 * the further failures of that group, which start before rs's point) and
 * end (RAE); each failure adds w (N - RA) + w (N - RAE), both factors at
 * most N.  ADD(w, x, y) adds w (x + y) to the pair count. */
#define PB_WM__PAIRS(V, LOADW, ADD)                                                                                    \
  do {                                                                                                                 \
    V rs = {0}, ra = {0};                                                                                              \
    int32_t p = 0;                                                                                                     \
    for (int32_t f = 0; f < C->n_fail; f++) {                                                                          \
      const int32_t a = (int32_t)C->ra[f], e = (int32_t)C->rae[f];                                                     \
      V w;                                                                                                             \
      if (a >= p) {                                                                                                    \
        for (; p < a; p++) {                                                                                           \
          LOADW(w, C->ret[p]);                                                                                         \
          rs += w;                                                                                                     \
        }                                                                                                              \
        ra = rs;                                                                                                       \
      }                                                                                                                \
      for (; p < e; p++) {                                                                                             \
        LOADW(w, C->ret[p]);                                                                                           \
        rs += w;                                                                                                       \
      }                                                                                                                \
      LOADW(w, C->fail[f]);                                                                                            \
      ADD(w, nret - ra, nret - rs);                                                                                    \
      apt += w;                                                                                                        \
    }                                                                                                                  \
  } while (0)

/* Each budget b of a pass, from its snapshots P and each lane's last
 * snapshot below the budget (cst): every lane's last group start below it
 * lies after lf[c] for the lowest lane's last point c below the budget, so
 * the images from that point to the highest lane's next point are followed
 * as the budget's definition says (weight above a group start below k), from
 * the start lf[c] with its weights summed from its own point; these few
 * images replace following every budget over the whole first part of the
 * pass.  Leaves in S, per budget and lane, the group that holds the budget. */
#define PB_WM__GROUPS(V, E, LOADW)                                                                                     \
  do {                                                                                                                 \
    for (int b = 0; b < n_pct; b++) {                                                                                  \
      int32_t clo = INT32_MAX, chi = -1;                                                                               \
      for (int l = 0; l < L; l++)                                                                                      \
        if (k[b][off + l] > 0) {                                                                                       \
          clo = (int32_t)cst[b][l] < clo ? (int32_t)cst[b][l] : clo;                                                   \
          chi = (int32_t)cst[b][l] > chi ? (int32_t)cst[b][l] : chi;                                                   \
        }                                                                                                              \
      V lab = {0}, lap = {0}, gsz = {0}, ggp = {0}, a, r;                                                              \
      if (chi >= 0) {                                                                                                  \
        const int32_t g = P->lf[clo], c2 = g / PB_WM__SNAP;                                                            \
        memcpy(&a, P->ap + (size_t)c2 * sizeof(V), sizeof(V));                                                         \
        memcpy(&r, P->rn + (size_t)c2 * sizeof(V), sizeof(V));                                                         \
        for (i = P->at[c2]; i < g; i++) {                                                                              \
          uint32_t u = code[i];                                                                                        \
          V w, f = (V){0} + (E)(0 - (E)(u & 1u));                                                                      \
          LOADW(w, u >> 2);                                                                                            \
          a += w & f;                                                                                                  \
          r += w & ~f;                                                                                                 \
        }                                                                                                              \
        /* from the group start g on: the latest group start below the budget, and the size and failure weight of      \
         * its group (until the next start), past the last lane's point while some lane's group goes on */             \
        const int32_t end = n - P->at[chi] > PB_WM__SNAP ? P->at[chi] + PB_WM__SNAP : n;                               \
        V in = {0};                                                                                                    \
        for (i = g; i < n; i++) {                                                                                      \
          if (i >= end) {                                                                                              \
            int more = 0;                                                                                              \
            for (int l = 0; l < L; l++) more |= in[l] != 0;                                                            \
            if (!more) break;                                                                                          \
          }                                                                                                            \
          uint32_t u = code[i];                                                                                        \
          V w, first = (V){0} + (E)(0 - (E)(u >> 1 & 1u)), f = (V){0} + (E)(0 - (E)(u & 1u));                          \
          LOADW(w, u >> 2);                                                                                            \
          V ab = a + r, m = (V)(ab < kb[b]) & first, cont = in & ~first;                                               \
          lab = (ab & m) | (lab & ~m);                                                                                 \
          lap = (a & m) | (lap & ~m);                                                                                  \
          gsz = (w & m) | ((gsz + (w & cont)) & ~m);                                                                   \
          ggp = (w & f & m) | ((ggp + (w & f & cont)) & ~m);                                                           \
          in = m | cont;                                                                                               \
          a += w & f;                                                                                                  \
          r += w & ~f;                                                                                                 \
        }                                                                                                              \
      }                                                                                                                \
      for (int l = 0; l < L; l++) {                                                                                    \
        const int on = k[b][off + l] > 0;                                                                              \
        S->lo_ab[b][off + l] = on ? (int64_t)lab[l] : 0;                                                               \
        S->lo_ap[b][off + l] = on ? (int64_t)lap[l] : 0;                                                               \
        S->lo_size[b][off + l] = on ? (int64_t)gsz[l] : 0;                                                             \
        S->lo_gp[b][off + l] = on ? (int64_t)ggp[l] : 0;                                                               \
      }                                                                                                                \
    }                                                                                                                  \
  } while (0)                                                                                                          \

/* One pass of lane type V (element E, LV lanes) over the weightings off ..
 * off + LV - 1, compiled with ATTR; LOADW(label) the weights of a label;
 * NUM declares the pair count, ADD adds to it (PB_WM__PAIRS), NUM_GET(l)
 * reads lane l of it.
 * P has room for n / PB_WM__SNAP + 2 snapshots, from which the budgets are
 * then found (PB_WM__GROUPS). */
#define PB_WM__PASS(NAME, ATTR, V, E, LV, LOADW, NUM, ADD, NUM_GET)                                                    \
  ATTR static void NAME(const struct pb_wm_codes *C, const void *mult, int off, const int64_t *pos,                    \
                        const int64_t *total, const int64_t (*k)[PB_WM_LANES], int n_pct,                              \
                        const struct pb_wm__snaps *P, struct pb_wm__state *S)                                          \
  {                                                                                                                    \
    enum { L = LV };                                                                                                   \
    const uint32_t *code = C->code;                                                                                    \
    const int32_t n = C->n;                                                                                            \
    V ap = {0}, rn = {0}, apt = {0}, nret, kmax = {0}, kb[PB_WM_MAX_PCT], cst[PB_WM_MAX_PCT];                          \
    NUM;                                                                                                               \
    for (int l = 0; l < L; l++) nret[l] = (E)(total[off + l] - pos[off + l]);                                          \
    for (int b = 0; b < n_pct; b++) {                                                                                  \
      for (int l = 0; l < L; l++) {                                                                                    \
        kb[b][l] = (E)k[b][off + l];                                                                                   \
        if (kb[b][l] > kmax[l]) kmax[l] = kb[b][l];                                                                    \
      }                                                                                                                \
      cst[b] = (V){0};                                                                                                 \
    }                                                                                                                  \
    PB_WM__PAIRS(V, LOADW, ADD);                                                                                       \
    int32_t i = 0, lf = 0;                                                                                             \
    for (int32_t c = 0; n_pct > 0; c++) {                                                                              \
      V ab = ap + rn, cv = (V){0} + (E)c, short_ = (V)(ab < kmax);                                                     \
      P->at[c] = i, P->lf[c] = lf;                                                                                     \
      memcpy(P->ap + (size_t)c * sizeof(V), &ap, sizeof(V));                                                           \
      memcpy(P->rn + (size_t)c * sizeof(V), &rn, sizeof(V));                                                           \
      for (int b = 0; b < n_pct; b++) {                                                                                \
        V m = (V)(ab < kb[b]);                                                                                         \
        cst[b] = (cv & m) | (cst[b] & ~m);                                                                             \
      }                                                                                                                \
      int open = 0;                                                                                                    \
      for (int l = 0; l < L; l++) open |= short_[l] != 0;                                                              \
      if (!open || i >= n) break;                                                                                      \
      for (int32_t end = n - i > PB_WM__SNAP ? i + PB_WM__SNAP : n; i < end; i++) {                                    \
        const uint32_t u = code[i];                                                                                    \
        lf = u & 2u ? i : lf;                                                                                          \
        PB_WM__STEP(V, E, LOADW, u);                                                                                   \
      }                                                                                                                \
    }                                                                                                                  \
    for (int l = 0; l < L; l++) {                                                                                      \
      S->num2[off + l] = (int64_t)NUM_GET(l);                                                                          \
      S->ap[off + l] = (int64_t)apt[l];                                                                                \
    }                                                                                                                  \
    PB_WM__GROUPS(V, E, LOADW);                                                                                        \
  }

/* The weights of a label for lanes off.. of the pass: 16-bit lanes from
 * their 16-bit copy, or the 32-bit ones widened to 64 bits (W, from I). */
#define PB_WM__LOAD_H(w, lab) memcpy(&(w), (const uint16_t *)mult + (size_t)(lab) * PB_WM_LANES + off, sizeof(w))
#define PB_WM__LOAD_W(W, I, w, lab)                                                                                    \
  do {                                                                                                                 \
    I w32_;                                                                                                            \
    memcpy(&w32_, (const int32_t *)mult + (size_t)(lab) * PB_WM_LANES + off, sizeof w32_);                             \
    (w) = __builtin_convertvector(w32_, W);                                                                            \
  } while (0)
#define PB_WM__LOAD_W4(w, lab) PB_WM__LOAD_W(pb_wm__w4, pb_wm__i32x4, w, lab)
#define PB_WM__LOAD_W2(w, lab) PB_WM__LOAD_W(pb_wm__w2, pb_wm__i32x2, w, lab)
/* The 16-bit passes keep their pair count in 32-bit lanes, as two vectors
 * of half the lanes each (N), so that none is wider than V: the lanes listed
 * last of w (x + y). */
#define PB_WM__MULADD(N, w, x, y, ...)                                                                                 \
  (__builtin_convertvector(__builtin_shufflevector((w), (w), __VA_ARGS__), N) *                                        \
   (__builtin_convertvector(__builtin_shufflevector((x), (x), __VA_ARGS__), N) +                                       \
    __builtin_convertvector(__builtin_shufflevector((y), (y), __VA_ARGS__), N)))
#define PB_WM__LO4 0, 1, 2, 3
#define PB_WM__HI4 4, 5, 6, 7
#define PB_WM__LO8 PB_WM__LO4, PB_WM__HI4
#define PB_WM__HI8 8, 9, 10, 11, 12, 13, 14, 15
#define PB_WM__LO16 PB_WM__LO8, PB_WM__HI8
#define PB_WM__HI16 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
#define PB_WM__NUM_H(N) N num_lo = {0}, num_hi = {0}
#define PB_WM__ADD_H(N, LO, HI, w, x, y)                                                                               \
  (num_lo += PB_WM__MULADD(N, w, x, y, LO), num_hi += PB_WM__MULADD(N, w, x, y, HI))
#define PB_WM__NUM_H32 PB_WM__NUM_H(pb_wm__n16)
#define PB_WM__ADD_H32(w, x, y) PB_WM__ADD_H(pb_wm__n16, PB_WM__LO16, PB_WM__HI16, w, x, y)
#define PB_WM__GET_H32(l) ((l) < 16 ? num_lo[(l)] : num_hi[(l)-16])
#define PB_WM__NUM_H16 PB_WM__NUM_H(pb_wm__n8)
#define PB_WM__ADD_H16(w, x, y) PB_WM__ADD_H(pb_wm__n8, PB_WM__LO8, PB_WM__HI8, w, x, y)
#define PB_WM__GET_H16(l) ((l) < 8 ? num_lo[(l)] : num_hi[(l)-8])
#define PB_WM__NUM_H8 PB_WM__NUM_H(pb_wm__n4)
#define PB_WM__ADD_H8(w, x, y) PB_WM__ADD_H(pb_wm__n4, PB_WM__LO4, PB_WM__HI4, w, x, y)
#define PB_WM__GET_H8(l) ((l) < 4 ? num_lo[(l)] : num_hi[(l)-4])
#define PB_WM__NUM_W4 pb_wm__w4 num_ = {0}
#define PB_WM__NUM_W2 pb_wm__w2 num_ = {0}
#define PB_WM__ADD_W(w, x, y) (num_ += (w) * ((x) + (y)))
#define PB_WM__GET_W(l) num_[l]
#if defined(__x86_64__)
#define PB_WM__V4 __attribute__((target("arch=x86-64-v4")))
#define PB_WM__V3 __attribute__((target("arch=x86-64-v3")))
PB_WM__PASS(pb_wm__pass_h32, PB_WM__V4, pb_wm__h32, uint16_t, 32, PB_WM__LOAD_H, PB_WM__NUM_H32, PB_WM__ADD_H32,
            PB_WM__GET_H32)
PB_WM__PASS(pb_wm__pass_h16, PB_WM__V3, pb_wm__h16, uint16_t, 16, PB_WM__LOAD_H, PB_WM__NUM_H16, PB_WM__ADD_H16,
            PB_WM__GET_H16)
PB_WM__PASS(pb_wm__pass_w4, PB_WM__V3, pb_wm__w4, uint64_t, 4, PB_WM__LOAD_W4, PB_WM__NUM_W4, PB_WM__ADD_W,
            PB_WM__GET_W)
#endif
PB_WM__PASS(pb_wm__pass_h8, , pb_wm__h8, uint16_t, 8, PB_WM__LOAD_H, PB_WM__NUM_H8, PB_WM__ADD_H8, PB_WM__GET_H8)
PB_WM__PASS(pb_wm__pass_w2, , pb_wm__w2, uint64_t, 2, PB_WM__LOAD_W2, PB_WM__NUM_W2, PB_WM__ADD_W, PB_WM__GET_W)

/* Every lane's pass: 16-bit lanes (every total at most 65,535 and their
 * copy given) 32, 16 or 8 at a time (pb_clones_isa 2, 1, 0), else 64-bit lanes 4 or 2 at a time. */
static void pb_wm__passes(const struct pb_wm_codes *C, const int32_t *mult, const uint16_t *mult16, int64_t most,
                          const int64_t *pos, const int64_t *total, const int64_t (*k)[PB_WM_LANES], int n_pct,
                          const struct pb_wm__snaps *P, struct pb_wm__state *S)
{
  const int isa = pb_clones_isa();
  const int h = most <= 65535 && mult16;
#if defined(__x86_64__)
  if (isa == 2 && h) {
    pb_wm__pass_h32(C, mult16, 0, pos, total, k, n_pct, P, S);
    return;
  }
  if (isa >= 1) {
    if (h)
      for (int off = 0; off < PB_WM_LANES; off += 16) pb_wm__pass_h16(C, mult16, off, pos, total, k, n_pct, P, S);
    else
      for (int off = 0; off < PB_WM_LANES; off += 4) pb_wm__pass_w4(C, mult, off, pos, total, k, n_pct, P, S);
    return;
  }
#else
  (void)isa;
#endif
  if (h)
    for (int off = 0; off < PB_WM_LANES; off += 8) pb_wm__pass_h8(C, mult16, off, pos, total, k, n_pct, P, S);
  else
    for (int off = 0; off < PB_WM_LANES; off += 2) pb_wm__pass_w2(C, mult, off, pos, total, k, n_pct, P, S);
}

/* The budgets' coverage from a pass's state: the group that holds budget b
 * has lo_ab weight and lo_ap failures above it, lo_size weight and lo_gp
 * failures, and each of its images is selected with probability
 * (k - above) / size (the coverage definition's expression, term for term).
 * Then the AUROC. */
static void pb_wm__close(const int64_t *pos, const int64_t *total, const int64_t (*k)[PB_WM_LANES], int n_pct,
                         const struct pb_wm__state *S, double *auroc, double *cov)
{
  for (int l = 0; l < PB_WM_LANES; l++) {
    for (int b = 0; b < n_pct; b++) {
      double *out = cov + l * n_pct + b;
      const int64_t above = S->lo_ab[b][l], covered = S->lo_ap[b][l], size = S->lo_size[b][l], gp = S->lo_gp[b][l];
      if (pos[l] <= 0)
        *out = NAN;
      else if (above + size >= k[b][l])
        *out = ((double)covered + (double)gp * (double)(k[b][l] - above) / (double)size) / (double)pos[l];
      else /* beyond every image */
        *out = (double)S->ap[l] / (double)pos[l];
    }
    int64_t neg = total[l] - pos[l];
    auroc[l] = pos[l] > 0 && neg > 0 ? (double)S->num2[l] / (2.0 * (double)pos[l] * (double)neg) : NAN;
  }
}

/* pb_wm__pass one lane at a time, the pair count in 128 bits: a weighting of 2^31 images or more. */
static void pb_wm__pass_wide(const uint32_t *code, int32_t n, const int32_t *mult, const int64_t *pos,
                             const int64_t *total, const int *pcts, int n_pct, double *auroc, double *cov)
{
  for (int l = 0; l < PB_WM_LANES; l++) {
    int64_t k[PB_WM_MAX_PCT], gp = 0, gn = 0, ap = 0, ab = 0;
    unsigned open;
    __int128 num2 = 0;
    int64_t next = pb_wm__budgets(pos[l], total[l], pcts, n_pct, k, cov + l * n_pct, &open);
    for (int32_t i = 0; i <= n; i++) {
      uint32_t c = i < n ? code[i] : 2u;
      if (c & 2u && i > 0) {
        num2 += (__int128)gn * (2 * ap + gp);
        if (ab + gp + gn >= next) next = pb_wm__reach(ap, gp, ab, gp + gn, pos[l], k, n_pct, &open, cov + l * n_pct);
        ab += gp + gn;
        ap += gp;
        gp = gn = 0;
      }
      if (i == n) break;
      *(c & 1u ? &gp : &gn) += mult[(size_t)(c >> 2) * PB_WM_LANES + l];
    }
    pb_wm__finish(ap, (double)num2, pos[l], total[l], open, n_pct, &auroc[l], cov + l * n_pct);
  }
}

void pb_screen_weighted_metrics(const struct pb_wm_codes *C, const int32_t *mult, const uint16_t *mult16, const int64_t *pos,
                         const int64_t *total, const int *pcts, int n_pct, double *auroc, double *cov)
{
  const int32_t n = C->n;
  int64_t most = 0;
  for (int l = 0; l < PB_WM_LANES; l++) most = total[l] > most ? total[l] : most;
  if (most > INT32_MAX) {
    pb_wm__pass_wide(C->code, n, mult, pos, total, pcts, n_pct, auroc, cov);
    return;
  }
  /* budgets as pb_wm__budgets; none for a lane without failures (its coverage is NaN) */
  int64_t k[PB_WM_MAX_PCT][PB_WM_LANES];
  for (int b = 0; b < n_pct; b++)
    for (int l = 0; l < PB_WM_LANES; l++) {
      int64_t kb = (pcts[b] * total[l] + 50) / 100;
      k[b][l] = pos[l] > 0 ? (kb < 1 ? 1 : kb) : 0;
    }
  struct pb_wm__state S;
  /* snapshots on the stack for the usual few hundred images, else on the heap */
  enum { ON_STACK = 130, VBYTES = sizeof(pb_wm__h32) }; /* the widest lane vector's bytes */
  int32_t at_s[ON_STACK], lf_s[ON_STACK];
  unsigned char ap_s[ON_STACK * VBYTES], rn_s[ON_STACK * VBYTES];
  const size_t room = (size_t)(n > 0 ? n : 0) / PB_WM__SNAP + 2;
  struct pb_wm__snaps P = {at_s, lf_s, ap_s, rn_s};
  if (room > ON_STACK) {
    P.at = pb_malloc(2 * room * sizeof *P.at);
    P.lf = P.at + room;
    P.ap = pb_malloc(2 * room * VBYTES);
    P.rn = P.ap + room * VBYTES;
  }
  pb_wm__passes(C, mult, mult16, most, pos, total, (const int64_t(*)[PB_WM_LANES])k, n_pct, &P, &S);
  if (room > ON_STACK) free(P.at), free(P.ap);
  pb_wm__close(pos, total, (const int64_t(*)[PB_WM_LANES])k, n_pct, &S, auroc, cov);
}

