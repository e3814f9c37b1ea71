/* Witness correspondences: for every class a concrete within-class bijection
 * that attains each end of the H interval at Ik (Eq. 7) and at I5 (the
 * dynamic program of bounds_kernel_i5.c, here kept layer by layer and traced
 * back).  Derivation and layout in docs/bounds.md ("Witnesses"). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/bounds.h"
#include "pairbound/error.h"
#include "pairbound/sort.h"

/* One wrong label of a class: its clean records c, perturbed accepted pa and
 * rejected pr; the block structure chosen for it (e perturbed in the h block,
 * j same-label pairs, f clean in the r block); where its records start in the
 * class's sorted wrong lists. */
struct pb_bw__label {
  int32_t c, pa, pr, e, j, f, c0, p0;
};

/* One class's records (cell indices) by role, and the scratch of its
 * witnesses (pb_bw__alloc). */
struct pb_bw__class {
  int32_t n, a, u, b, k, s;     /* s: observed same-label wrong pairs */
  int32_t *cacc, *crej;         /* clean correct accepted (u) / rejected (a - u) */
  int32_t *pcor;                /* perturbed correct (b) */
  int64_t *cw, *pw;             /* wrong records: label << 32 | index (perturbed: | rejected << 31) */
  int32_t ncw, npw;
  struct pb_bw__label *lab;     /* wrong labels, ascending */
  int32_t nlab;
  int32_t *hc, *hp;             /* the h block's clean and perturbed sides */
  int32_t *rest, *rest_p;       /* records left for the other blocks */
  int32_t *rb, *left, *cidx;    /* I5: the r block's clean side, perturbed and clean leftovers per label */
  int32_t *g, *qq, *gi, *qi;    /* I5: leftovers per label and cursors into them */
  int32_t *dp;                  /* DP layers */
  size_t dp_len;
};

static inline int32_t pb_bw__min(int32_t a, int32_t b) { return a < b ? a : b; }
static inline int32_t pb_bw__max(int32_t a, int32_t b) { return a > b ? a : b; }
static inline int32_t pb_bw__idx(int64_t key) { return (int32_t)(key & 0x7fffffff); }
static inline int32_t pb_bw__acc(int64_t key) { return !((key >> 31) & 1); }

/* The h block's clean side: @p h correct clean records, accepted ones first
 * for the upper end (x = min(u, h) of them meet the accepted perturbed
 * records), rejected ones first for the lower end (x = max(0, h - (a - u))
 * accepted, placed after the a - u rejected).  The perturbed side is always
 * listed accepted first, so the accepted-accepted pairs number min(x, t') or
 * max(0, x + t' - h): the ends of section 1 of docs/bounds.md. */
static void pb_bw__h_clean(const struct pb_bw__class *q, int32_t h, int hi, int32_t *out, int32_t *rest)
{
  const int32_t *first = hi ? q->cacc : q->crej, *second = hi ? q->crej : q->cacc;
  const int32_t n1 = hi ? q->u : q->a - q->u, n2 = q->a - n1;
  int32_t m = 0, r = 0;
  for (int32_t i = 0; i < n1 + n2; i++) {
    const int32_t x = i < n1 ? first[i] : second[i - n1];
    if (m < h) out[m++] = x;
    else rest[r++] = x;
  }
}

/* Ik (Eq. 7): the h block takes h wrong perturbed records, accepted ones
 * first for the upper end (t' = min(t, h)), rejected ones first for the lower
 * (t' = max(0, h - (n - b - t))); the k block pairs the other correct clean
 * records with the first k correct perturbed ones, and every wrong clean
 * record takes one of the perturbed records left, in order.  k is the
 * observed one, so the bijection is consistent with Ik. */
static void pb_bw__ik(const struct pb_bw__class *q, int hi, int32_t *perm)
{
  const int32_t h = q->a - q->k;
  int32_t na = 0, nr = 0, nacc = 0;
  for (int32_t i = 0; i < q->npw; i++) nacc += pb_bw__acc(q->pw[i]);
  const int32_t nrej = q->npw - nacc;
  if (hi) na = pb_bw__min(nacc, h), nr = h - na;
  else nr = pb_bw__min(nrej, h), na = h - nr;
  int32_t m = 0, left = 0, ta = 0, tr = 0;
  for (int32_t i = 0; i < q->npw; i++) /* accepted first in the h block */
    if (pb_bw__acc(q->pw[i]) && ta < na) q->hp[m++] = pb_bw__idx(q->pw[i]), ta++;
  for (int32_t i = 0; i < q->npw; i++) {
    const int acc = pb_bw__acc(q->pw[i]);
    if (acc && ta > 0) { ta--; continue; } /* taken above (the first na accepted ones) */
    if (!acc && tr < nr) q->hp[m++] = pb_bw__idx(q->pw[i]), tr++;
    else q->rest_p[left++] = pb_bw__idx(q->pw[i]);
  }
  pb_bw__h_clean(q, h, hi, q->hc, q->rest);
  for (int32_t i = 0; i < h; i++) perm[q->hc[i]] = q->hp[i];
  for (int32_t i = 0; i < q->k; i++) perm[q->rest[i]] = q->pcor[i];
  int32_t p = 0;
  for (int32_t i = q->k; i < q->b; i++) perm[pb_bw__idx(q->cw[p++])] = q->pcor[i];
  for (int32_t i = 0; i < left; i++) perm[pb_bw__idx(q->cw[p++])] = q->rest_p[i];
}

/* The wrong labels of the class from its sorted wrong lists. */
static void pb_bw__labels(struct pb_bw__class *q)
{
  int32_t i = 0, j = 0;
  q->nlab = 0;
  while (i < q->ncw || j < q->npw) {
    const int64_t li = i < q->ncw ? q->cw[i] >> 32 : INT64_MAX, lj = j < q->npw ? q->pw[j] >> 32 : INT64_MAX;
    const int64_t l = li < lj ? li : lj;
    struct pb_bw__label *L = &q->lab[q->nlab++];
    memset(L, 0, sizeof *L);
    L->c0 = i, L->p0 = j;
    for (; i < q->ncw && (q->cw[i] >> 32) == l; i++) L->c++;
    for (; j < q->npw && (q->pw[j] >> 32) == l; j++) *(pb_bw__acc(q->pw[j]) ? &L->pa : &L->pr) += 1;
  }
}

/* Admissible j of label L for e of its perturbed records in the h block
 * (docs/bounds.md section 3; the same bounds as pb_bounds__h_i5_core). */
static void pb_bw__jrange(const struct pb_bw__label *L, int32_t e, int32_t r, int32_t s, int32_t w, int32_t *lo,
                          int32_t *hi)
{
  const int32_t q0 = L->pa + L->pr - e, x = L->c + q0 - r - w;
  *lo = pb_bw__max(pb_bw__max(0, q0 - w), x > 0 ? (x + 1) / 2 : 0);
  *hi = pb_bw__min(pb_bw__min(L->c, q0), s);
}

/* The I5 program over the labels with perturbed wrong records, every layer
 * kept: layer l holds, per state (sum e, sum j) over the first l such labels,
 * the largest and the smallest t' reachable (-1: unreachable).  Returns 0, 1
 * when (h, s) is not reached, -1 when memory fails. */
static int pb_bw__program(struct pb_bw__class *q, int32_t h, int32_t r, int32_t s, int32_t w)
{
  const size_t S1 = (size_t)s + 1, nst = ((size_t)h + 1) * S1;
  int32_t nl = 0;
  for (int32_t l = 0; l < q->nlab; l++) {
    const struct pb_bw__label *L = &q->lab[l];
    if (L->pa + L->pr > 0) nl++;
    else if (L->c > r + w) return 1; /* e = j = 0: the label's clean records must fit */
  }
  const size_t need = ((size_t)nl + 1) * 2 * nst;
  if (need > q->dp_len) {
    int32_t *nd = realloc(q->dp, need * sizeof *nd);
    if (!nd) return -1;
    q->dp = nd;
    q->dp_len = need;
  }
  for (size_t i = 0; i < need; i++) q->dp[i] = -1;
  q->dp[0] = q->dp[nst] = 0;
  int32_t layer = 0;
  for (int32_t l = 0; l < q->nlab; l++) {
    const struct pb_bw__label *L = &q->lab[l];
    const int32_t p = L->pa + L->pr;
    if (p == 0) continue;
    const int32_t *cmax = q->dp + 2 * (size_t)layer * nst, *cmin = cmax + nst;
    int32_t *nmax = q->dp + 2 * (size_t)(layer + 1) * nst, *nmin = nmax + nst;
    for (int32_t E = 0; E <= h; E++)
      for (int32_t J = 0; J <= s; J++) {
        const size_t src = (size_t)E * S1 + (size_t)J;
        if (cmax[src] < 0) continue;
        for (int32_t e = 0; e <= p && E + e <= h; e++) {
          int32_t lo, hi;
          pb_bw__jrange(L, e, r, s, w, &lo, &hi);
          const int32_t vmax = cmax[src] + pb_bw__min(e, L->pa), vmin = cmin[src] + pb_bw__max(0, e - L->pr);
          for (int32_t j = lo; j <= hi && J + j <= s; j++) {
            const size_t dst = (size_t)(E + e) * S1 + (size_t)(J + j);
            if (nmax[dst] < 0 || vmax > nmax[dst]) nmax[dst] = vmax;
            if (nmin[dst] < 0 || vmin < nmin[dst]) nmin[dst] = vmin;
          }
        }
      }
    layer++;
  }
  return q->dp[2 * (size_t)nl * nst + (size_t)h * S1 + (size_t)s] < 0 ? 1 : 0;
}

/* Trace the program back from (h, s): per label an (e, j) whose predecessor
 * state reaches exactly the value still to be made up (the extreme, hi: the
 * largest t', else the smallest), so the chosen structure attains it. */
static void pb_bw__trace(struct pb_bw__class *q, int32_t h, int32_t r, int32_t s, int32_t w, int hi)
{
  const size_t S1 = (size_t)s + 1, nst = ((size_t)h + 1) * S1;
  int32_t nl = 0;
  for (int32_t l = 0; l < q->nlab; l++) nl += q->lab[l].pa + q->lab[l].pr > 0;
  int32_t E = h, J = s, layer = nl;
  int32_t V = q->dp[2 * (size_t)nl * nst + (hi ? 0 : nst) + (size_t)E * S1 + (size_t)J];
  for (int32_t l = q->nlab - 1; l >= 0; l--) {
    struct pb_bw__label *L = &q->lab[l];
    L->e = L->j = 0;
    const int32_t p = L->pa + L->pr;
    if (p == 0) continue;
    layer--;
    const int32_t *vals = q->dp + 2 * (size_t)layer * nst + (hi ? 0 : nst);
    int found = 0;
    for (int32_t e = 0; e <= p && e <= E && !found; e++) {
      int32_t lo, jhi;
      pb_bw__jrange(L, e, r, s, w, &lo, &jhi);
      const int32_t add = hi ? pb_bw__min(e, L->pa) : pb_bw__max(0, e - L->pr);
      for (int32_t j = lo; j <= jhi && j <= J && !found; j++) {
        const int32_t v = vals[(size_t)(E - e) * S1 + (size_t)(J - j)];
        if (v >= 0 && v + add == V) {
          L->e = e, L->j = j, found = 1;
          E -= e, J -= j, V -= add;
        }
      }
    }
  }
}

/* f per label (clean records in the r block): at least max(0, y - w) so that
 * the leftovers admit a matching without same-label pairs (y = c + p - e - 2j),
 * at most c - j, summing to r; the lower ends sum to at most r (section 3). */
static void pb_bw__fill_f(struct pb_bw__class *q, int32_t r, int32_t w)
{
  int32_t left = r;
  for (int32_t l = 0; l < q->nlab; l++) {
    struct pb_bw__label *L = &q->lab[l];
    L->f = pb_bw__max(0, L->c + L->pa + L->pr - L->e - 2 * L->j - w);
    left -= L->f;
  }
  for (int32_t l = 0; l < q->nlab && left > 0; l++) {
    struct pb_bw__label *L = &q->lab[l];
    const int32_t more = pb_bw__min(left, L->c - L->j - L->f);
    L->f += more;
    left -= more;
  }
}

/* The wrong-wrong leftovers paired with no same-label pair: repeatedly take
 * the label with the most leftover records on both sides (D = g + q) and pair
 * one of them with a record of any other label on the other side.  With
 * D <= w for every label (w the pairs still to make) this keeps D <= w - 1
 * after the step (two labels at D = w are the only ones left, and each takes
 * the other's), so it never gets stuck (Hall lemma, docs/bounds.md section 2).
 * Label l's leftovers: clean cidx[cstart[l]..], perturbed left[pstart[l]..]. */
static void pb_bw__derange(struct pb_bw__class *q, const int32_t *cstart, const int32_t *pstart, int32_t *perm)
{
  int32_t *g = q->g, *qq = q->qq;
  for (int32_t l = 0; l < q->nlab; l++) q->gi[l] = q->qi[l] = 0;
  for (;;) {
    int32_t best = -1;
    for (int32_t l = 0; l < q->nlab; l++)
      if (g[l] + qq[l] > 0 && (best < 0 || g[l] + qq[l] > g[best] + qq[best])) best = l;
    if (best < 0) return;
    int32_t other = -1;
    for (int32_t l = 0; l < q->nlab && other < 0; l++)
      if (l != best && (g[best] > 0 ? qq[l] : g[l]) > 0) other = l;
    const int32_t cl = g[best] > 0 ? best : other, pl = g[best] > 0 ? other : best;
    perm[q->cidx[cstart[cl] + q->gi[cl]++]] = q->left[pstart[pl] + q->qi[pl]++];
    g[cl]--, qq[pl]--;
  }
}

/* I5: the block structure traced from the program, then the records.  Per
 * label the h block takes its e perturbed records (accepted first for the
 * upper end, rejected first for the lower), f clean records go to the r
 * block, j same-label pairs to the s block, and the leftovers are deranged.
 * The k block pairs the correct clean records outside the h block with the
 * first k correct perturbed ones, the r block the rest of those with the f
 * clean records.  The lower end (hi = 0) runs the program, the upper end
 * (hi = 1, next) reuses its layers.  Returns 0, 1 when the observed counts
 * are infeasible (an internal error: they are observed), -1 when memory fails. */
static int pb_bw__i5(struct pb_bw__class *q, int hi, int32_t *perm)
{
  const int32_t h = q->a - q->k, r = q->b - q->k, w = q->n - q->a - q->b + q->k - q->s;
  /* the program's layers serve both ends: made for the lower one, traced again for the upper */
  const int rc = hi ? 0 : pb_bw__program(q, h, r, q->s, w);
  if (rc != 0) return rc;
  pb_bw__trace(q, h, r, q->s, w, hi);
  pb_bw__fill_f(q, r, w);
  /* cstart/pstart: where each label's leftovers start (in gi/qi until the derangement resets them) */
  int32_t *cstart = q->hc, *pstart = q->hp; /* reused before the h block is built */
  int32_t nrb = 0, nleft = 0, ncl = 0, nhacc = 0, nhrej = 0;
  int32_t *hacc = q->rest_p, *hrej = q->rest;
  for (int32_t l = 0; l < q->nlab; l++) {
    const struct pb_bw__label *L = &q->lab[l];
    const int64_t *pw = q->pw + L->p0, *cw = q->cw + L->c0;
    const int32_t na = hi ? pb_bw__min(L->e, L->pa) : pb_bw__max(0, L->e - L->pr), nr = L->e - na;
    /* perturbed (accepted listed first): na accepted and nr rejected to the h block, the others in order */
    const int32_t l0 = nleft;
    for (int32_t i = 0; i < L->pa + L->pr; i++) {
      const int32_t idx = pb_bw__idx(pw[i]);
      if (i < L->pa ? i < na : i - L->pa < nr) *(i < L->pa ? &hacc[nhacc++] : &hrej[nhrej++]) = idx;
      else q->left[nleft++] = idx;
    }
    /* clean: f to the r block, j paired with the first j perturbed leftovers, the other g deranged */
    for (int32_t i = 0; i < L->f; i++) q->rb[nrb++] = pb_bw__idx(cw[i]);
    for (int32_t i = 0; i < L->j; i++) perm[pb_bw__idx(cw[L->f + i])] = q->left[l0 + i];
    pstart[l] = l0 + L->j;
    q->qq[l] = nleft - l0 - L->j;
    cstart[l] = ncl;
    q->g[l] = L->c - L->f - L->j;
    for (int32_t i = L->f + L->j; i < L->c; i++) q->cidx[ncl++] = pb_bw__idx(cw[i]);
  }
  pb_bw__derange(q, cstart, pstart, perm);
  /* the h block, perturbed accepted first; the k block; the r block */
  const int32_t nh = nhacc + nhrej;
  for (int32_t i = 0; i < nhacc; i++) q->hp[i] = hacc[i];
  for (int32_t i = 0; i < nhrej; i++) q->hp[nhacc + i] = hrej[i];
  pb_bw__h_clean(q, nh, hi, q->hc, q->rest_p);
  for (int32_t i = 0; i < nh; i++) perm[q->hc[i]] = q->hp[i];
  for (int32_t i = 0; i < q->k; i++) perm[q->rest_p[i]] = q->pcor[i];
  for (int32_t i = 0; i < nrb; i++) perm[q->rb[i]] = q->pcor[q->k + i];
  return 0;
}

/* Class y's records [beg, end) of @p order (record indices, ascending) by role. */
static void pb_bw__class_records(const struct pb_cell_view *in, const int64_t *order, int32_t beg, int32_t end,
                                 int32_t y, struct pb_bw__class *q)
{
  const float tau = in->tau;
  q->n = end - beg;
  q->a = q->u = q->b = q->k = q->s = q->ncw = q->npw = 0;
  int32_t nrej = 0;
  for (int32_t p = beg; p < end; p++) {
    const int32_t i = (int32_t)(order[p] & 0xffffffff);
    const int c0 = in->pred0[i] == y, c1 = in->pred1[i] == y;
    if (c0) {
      q->a++;
      if (in->s0[i] >= tau) q->cacc[q->u++] = i;
      else q->crej[nrej++] = i;
    } else {
      q->cw[q->ncw++] = (int64_t)in->pred0[i] << 32 | i;
    }
    if (c1) q->pcor[q->b++] = i;
    else q->pw[q->npw++] = (int64_t)in->pred1[i] << 32 | (int64_t)!(in->s1[i] >= tau) << 31 | i;
    q->k += c0 && c1;
    q->s += !c0 && !c1 && in->pred0[i] == in->pred1[i];
  }
  pb_sort_small_i64(q->cw, q->ncw, 48);
  pb_sort_small_i64(q->pw, q->npw, 48);
  pb_bw__labels(q);
}

/* Carve the scratch of classes of up to n records from one block (NULL: out
 * of memory).  A class has up to 2 n wrong labels (clean and perturbed ones
 * may all differ), so the per-label arrays (lab, g, qq, gi, qi and hc, hp,
 * which the I5 construction borrows for per-label starts) have 2 n entries. */
static void *pb_bw__alloc(struct pb_bw__class *q, int32_t n)
{
  const size_t N = (size_t)n;
  char *blk = malloc(N * (2 * sizeof(int64_t) + 2 * sizeof(struct pb_bw__label) + 2 * 14 * sizeof(int32_t)));
  if (!blk) return NULL;
  int64_t *d = (int64_t *)blk;
  q->cw = d, d += N;
  q->pw = d, d += N;
  struct pb_bw__label *L = (struct pb_bw__label *)d;
  q->lab = L;
  int32_t *i = (int32_t *)(L + 2 * N);
  int32_t **arr[] = {&q->cacc, &q->crej, &q->pcor, &q->hc, &q->hp, &q->rest, &q->rest_p, &q->rb, &q->left,
                     &q->cidx, &q->g, &q->qq, &q->gi, &q->qi};
  for (size_t a = 0; a < sizeof arr / sizeof arr[0]; a++) *arr[a] = i, i += 2 * N;
  q->dp = NULL;
  q->dp_len = 0;
  return blk;
}

int pb_bounds_witness_cell(const struct pb_cell_view *in, int want_i5, int32_t *const perm[PB_WITNESS_N])
{
  if (!in || in->n <= 0 || !in->label || !in->pred0 || !in->s0 || !in->pred1 || !in->s1 || !perm)
    return pb_cell_error(in, -1, "bounds witnesses: no records or a missing record field");
  for (int w = 0; w < PB_WITNESS_N; w++)
    if (!perm[w]) return pb_cell_error(in, -1, "bounds witnesses: no output array");
  const int32_t n = in->n;
  for (int32_t i = 0; i < n; i++)
    if (in->label[i] < 0 || in->pred0[i] < 0 || in->pred1[i] < 0)
      return pb_cell_error(in, in->label[i], "bounds witnesses: record %d has a negative label or prediction", (int)i);
  /* classes in ascending label order, records in index order; scratch for
   * the largest class (a cell's whole size would be fresh pages every call) */
  int64_t *order = malloc((size_t)n * sizeof *order);
  if (!order) return pb_cell_error(in, -1, "bounds witnesses: out of memory (n = %d)", n);
  for (int32_t i = 0; i < n; i++) order[i] = (int64_t)in->label[i] << 32 | i;
  qsort(order, (size_t)n, sizeof *order, pb_sort_cmp_i64);
  int32_t big = 1;
  for (int32_t beg = 0, end; beg < n; beg = end) {
    for (end = beg; end < n && (order[end] >> 32) == (order[beg] >> 32); end++) {}
    big = end - beg > big ? end - beg : big;
  }
  struct pb_bw__class q;
  void *blk = pb_bw__alloc(&q, big);
  if (!blk) {
    free(order);
    return pb_cell_error(in, -1, "bounds witnesses: out of memory (class of %d records)", big);
  }
  int rc = 0;
  for (int32_t beg = 0, end; beg < n && rc == 0; beg = end) {
    const int32_t y = (int32_t)(order[beg] >> 32);
    for (end = beg; end < n && (order[end] >> 32) == y; end++) {}
    pb_bw__class_records(in, order, beg, end, y, &q);
    pb_bw__ik(&q, 0, perm[PB_WITNESS_IK_LO]);
    pb_bw__ik(&q, 1, perm[PB_WITNESS_IK_HI]);
    for (int hi = 0; hi < 2 && want_i5 && rc == 0; hi++) {
      rc = pb_bw__i5(&q, hi, perm[hi ? PB_WITNESS_I5_HI : PB_WITNESS_I5_LO]);
      if (rc > 0) /* the observed pairing has these counts: the program must reach them */
        rc = pb_cell_error(in, y, "bounds witnesses: observed five-state counts reported infeasible at I5");
      else if (rc < 0)
        rc = pb_cell_error(in, y, "bounds witnesses: out of memory for the I5 program");
    }
  }
  if (!want_i5)
    for (int32_t i = 0; i < n; i++) perm[PB_WITNESS_I5_LO][i] = perm[PB_WITNESS_I5_HI][i] = -1;
  free(q.dp);
  free(blk);
  free(order);
  return rc;
}
