/* Screening kernels (seed 000 Section 5, Appendix E): AUROC with half ties,
 * prorated failure coverage, the penalised logistic fit and
 * the adapted A3 score (Eq. 12).  docs/screen.md states every rule. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_vector.h>

#include "pairbound/clones.h"
#include "pairbound/error.h"
#include "pairbound/screen.h"
#include "pairbound/screen_kernel.h"
#include "pairbound/sort.h"

const int pb_screen_budget_pct[PB_SCREEN_N_BUDGETS] = {10, 20, 30};

int32_t pb_screen_budget(int32_t n, int pct)
{
  /* round(pct n / 100) with halves up, in integers: no 0.1 * n surprises */
  int64_t k = ((int64_t)pct * n + 50) / 100;
  return k < 1 ? 1 : (int32_t)k;
}

/* ------------------------------------------------------------ ranking */

struct pb_screen__key { double s; int32_t pos; };

/* descending score, then ascending position */
static inline int pb_screen__before(const struct pb_screen__key *x, const struct pb_screen__key *y)
{
  return x->s > y->s || (x->s == y->s && x->pos < y->pos);
}

/* Bottom-up merge sort with the comparison inlined (qsort's callback costs
 * more than the sort itself at a few hundred keys). */
static void pb_screen__sort(struct pb_screen__key *a, struct pb_screen__key *tmp, int32_t n)
{
  for (int32_t lo = 0; lo < n; lo += 8) { /* insertion-sorted runs of 8 */
    int32_t hi = lo + 8 < n ? lo + 8 : n;
    for (int32_t i = lo + 1; i < hi; i++) {
      struct pb_screen__key k = a[i];
      int32_t j = i;
      for (; j > lo && pb_screen__before(&k, &a[j - 1]); j--) a[j] = a[j - 1];
      a[j] = k;
    }
  }
  struct pb_screen__key *src = a, *dst = tmp;
  for (int32_t w = 8; w < n; w *= 2) {
    for (int32_t lo = 0; lo < n; lo += 2 * w) {
      int32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, i = lo, j = mid, k = lo;
      while (i < mid && j < hi) dst[k++] = pb_screen__before(&src[j], &src[i]) ? src[j++] : src[i++];
      while (i < mid) dst[k++] = src[i++];
      while (j < hi) dst[k++] = src[j++];
    }
    struct pb_screen__key *t = src;
    src = dst;
    dst = t;
  }
  if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
}

static void pb_screen__ranked_alloc(struct pb_screen_ranked *r, int32_t n_all)
{
  r->n_all = n_all;
  r->mid2 = pb_malloc((size_t)(n_all > 0 ? n_all : 1) * sizeof *r->mid2);
  r->code = pb_calloc((size_t)(n_all > 0 ? n_all : 1), 1);
  for (int32_t q = 0; q < n_all; q++) r->mid2[q] = -1;
  r->cut = NULL;
  r->n_cut = 0;
}

/* The cutoff groups' positions ascending, the order of a tie-break's draws. */
static void pb_screen__ranked_finish(struct pb_screen_ranked *r)
{
  if (r->n_cut > 1) qsort(r->cut, (size_t)r->n_cut, sizeof *r->cut, pb_sort_cmp_i32); /* r->cut is NULL when empty */
}

/* Tie group [a, a+g) of the descending order holding positions pos[]. */
static void pb_screen__group(struct pb_screen_ranked *r, int32_t a, int32_t g, const struct pb_screen__key *key,
                             const int32_t *order)
{
  int32_t n = r->n, mid2 = 2 * n - 2 * a - g + 1; /* ascending ranks n-a-g+1 .. n-a */
  uint8_t code = 0;
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) {
    /* the cutoff group is the first whose end reaches k */
    if (a + g < r->k[b]) code |= (uint8_t)(1 << (2 * b));
    else if (a < r->k[b]) {
      code |= (uint8_t)(2 << (2 * b));
      r->A[b] = a;
      r->g[b] = g;
    }
  }
  int cutoff = (code & 0x2a) != 0; /* code 2 at some budget */
  if (cutoff) r->cut = pb_realloc(r->cut, (size_t)(r->n_cut + g) * sizeof *r->cut);
  for (int32_t j = a; j < a + g; j++) {
    int32_t pos = key ? key[j].pos : order[j];
    r->mid2[pos] = mid2;
    r->code[pos] = code;
    if (cutoff) r->cut[r->n_cut++] = pos;
  }
}

static void pb_screen__budgets(struct pb_screen_ranked *r)
{
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) {
    r->k[b] = r->n > 0 ? pb_screen_budget(r->n, pb_screen_budget_pct[b]) : 0;
    r->A[b] = r->g[b] = 0;
  }
}

/* Tie groups of the descending order held by key[0..k) (positions key[j].pos) or order[0..k). */
static void pb_screen__groups(struct pb_screen_ranked *r, const double *score, const struct pb_screen__key *key,
                              const int32_t *order, int32_t k)
{
  for (int32_t a = 0; a < k;) {
    int32_t g = 1;
    if (key)
      while (a + g < k && key[a + g].s == key[a].s) g++;
    else
      while (a + g < k && score[order[a + g]] == score[order[a]]) g++;
    pb_screen__group(r, a, g, key, order);
    a += g;
  }
}

/* Key of an LSD radix sort: ascending keys are descending scores, and -0 is
 * +0, so equal scores get equal keys (NaN never reaches it). */
static uint64_t pb_screen__radix_key(double s)
{
  uint64_t u;
  s = s == 0 ? 0.0 : s;
  memcpy(&u, &s, sizeof u);
  u = u >> 63 ? ~u : u | 0x8000000000000000ull; /* ascending in s */
  return ~u;
}

/* The order of pb_screen__sort by 11-bit digits: a stable LSD radix sort of
 * keys entered in ascending position keeps equal scores in position order.
 * The scores come back from their positions in @p score.
 * Digits that every key shares are skipped.  O(n) per digit. */
static void pb_screen__radix(struct pb_screen__key *a, int32_t n, const double *score)
{
  struct pb_screen__rkey { uint64_t k; int32_t pos; } *x = pb_malloc((size_t)(2 * n) * sizeof *x), *y = x + n;
  int32_t *cnt = pb_malloc(2048 * sizeof *cnt);
  for (int32_t j = 0; j < n; j++) x[j] = (struct pb_screen__rkey){pb_screen__radix_key(a[j].s), a[j].pos};
  for (int shift = 0; shift < 64; shift += 11) {
    memset(cnt, 0, 2048 * sizeof *cnt);
    for (int32_t j = 0; j < n; j++) cnt[x[j].k >> shift & 2047]++;
    if (cnt[x[0].k >> shift & 2047] == n) continue;
    for (int32_t d = 0, sum = 0; d < 2048; d++) {
      int32_t c = cnt[d];
      cnt[d] = sum;
      sum += c;
    }
    for (int32_t j = 0; j < n; j++) y[cnt[x[j].k >> shift & 2047]++] = x[j];
    struct pb_screen__rkey *t = x;
    x = y;
    y = t;
  }
  for (int32_t j = 0; j < n; j++) a[j] = (struct pb_screen__key){score[x[j].pos], x[j].pos};
  free(x < y ? x : y);
  free(cnt);
}

void pb_screen_rank_keep(const double *score, int32_t n, const int32_t *sub, int32_t n_sub,
                         struct pb_screen_ranked *r, int32_t *order)
{
  int32_t m = sub ? n_sub : n, k = 0;
  struct pb_screen__key *key = pb_malloc((size_t)(2 * m + 2) * sizeof *key);
  for (int32_t j = 0; j < m; j++) {
    int32_t pos = sub ? sub[j] : j;
    if (!isnan(score[pos])) key[k++] = (struct pb_screen__key){score[pos], pos};
  }
  int ascending = 1; /* radix needs the keys in position order */
  for (int32_t j = 1; j < k && ascending; j++) ascending = key[j].pos > key[j - 1].pos;
  if (ascending && k >= 256) pb_screen__radix(key, k, score);
  else pb_screen__sort(key, key + m + 1, k);
  pb_screen__ranked_alloc(r, n);
  r->n = k;
  pb_screen__budgets(r);
  pb_screen__groups(r, score, key, NULL, k);
  pb_screen__ranked_finish(r);
  for (int32_t j = 0; j < k && order; j++) order[j] = key[j].pos;
  free(key);
}

void pb_screen_rank(const double *score, int32_t n, const int32_t *sub, int32_t n_sub, struct pb_screen_ranked *r)
{
  pb_screen_rank_keep(score, n, sub, n_sub, r, NULL);
}

void pb_screen_rank_sorted(const double *score, int32_t n, const int32_t *list, int32_t n_list,
                           struct pb_screen_ranked *r)
{
  /* a tie group's images share their midrank and codes, so the order inside
   * a run of equal scores does not matter */
  pb_screen__ranked_alloc(r, n);
  r->n = n_list;
  pb_screen__budgets(r);
  pb_screen__groups(r, score, NULL, list, n_list);
  pb_screen__ranked_finish(r);
}

PB_CLONES
void pb_screen_order_metrics(const int32_t *order, int32_t n, const uint8_t *y, int budgets,
                             struct pb_screen_metric *m)
{
  /* without ties the a-th image of the order has twice its ascending midrank
   * 2 (n - a), and the top k are whole: the coverage at a budget is the
   * failures among the first k over all failures (the cutoff group of
   * pb_screen_ranked_metrics is one image, so its proration is exact) */
  int32_t k[PB_SCREEN_N_BUDGETS];
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) k[b] = n > 0 ? pb_screen_budget(n, pb_screen_budget_pct[b]) : 0;
  _Static_assert(PB_SCREEN_N_BUDGETS == 3, "one counter per budget below");
  const int32_t k0 = k[0], k1 = k[1], k2 = k[2];
  int64_t npos = 0, r2 = 0, t0 = 0, t1 = 0, t2 = 0;
#pragma omp simd reduction(+ : npos, r2, t0, t1, t2)
  for (int32_t a = 0; a < n; a++) {
    const int64_t f = y[order[a]] != 0;
    npos += f;
    r2 += f * 2 * (int64_t)(n - a);
    t0 += f & (a < k0);
    t1 += f & (a < k1);
    t2 += f & (a < k2);
  }
  const int64_t top[PB_SCREEN_N_BUDGETS] = {t0, t1, t2}, nneg = n - npos;
  m->n = n;
  m->n_fail = (int32_t)npos;
  m->auroc = npos > 0 && nneg > 0 ? (double)(r2 - npos * (npos + 1)) / (2.0 * (double)npos * (double)nneg) : NAN;
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++)
    m->cov[b] = npos > 0 && (budgets >> b) & 1 ? (double)top[b] / (double)npos : NAN;
}

void pb_screen_ranked_free(struct pb_screen_ranked *r)
{
  free(r->mid2);
  free(r->code);
  free(r->cut);
  memset(r, 0, sizeof *r);
}

void pb_screen_outcome_set(struct pb_screen_outcome *o, const uint8_t *y, int32_t n)
{
  o->n = n;
  o->y = y;
  o->n_fail = 0;
  int32_t nk = 0, nf = 0;
  for (int32_t q = 0; q < n; q++) { /* both lists written, one advanced: no branch on the outcome */
    const int32_t f = y[q] != 0;
    o->fail[nf] = q;
    o->keep[nk] = q;
    nf += f;
    nk += 1 - f;
  }
  o->n_fail = nf;
}

PB_CLONES
void pb_screen_ranked_metrics(const struct pb_screen_ranked *r, const struct pb_screen_outcome *o, int budgets,
                              struct pb_screen_metric *m)
{
  /* walk the shorter of the failing and retained lists; the other side's
   * sums follow from the totals: sum of 2 midranks n (n + 1), A images wholly
   * above and g in the cutoff group */
  if (r->n == 0) { /* nothing ranked (a score undefined on every image): what the walk would give */
    *m = (struct pb_screen_metric){0, 0, NAN, {NAN, NAN, NAN}};
    return;
  }
  int use_fail = o->n_fail <= o->n - o->n_fail;
  const int32_t *list = use_fail ? o->fail : o->keep;
  int32_t len = use_fail ? o->n_fail : o->n - o->n_fail;
  int64_t cnt = 0, r2 = 0, full[PB_SCREEN_N_BUDGETS] = {0, 0, 0}, cut[PB_SCREEN_N_BUDGETS] = {0, 0, 0};
  const int32_t *mid2 = r->mid2;
  if (budgets == 0) { /* the AUROC alone: no budget counts */
#pragma omp simd reduction(+ : cnt, r2)
    for (int32_t j = 0; j < len; j++) {
      const int32_t v = mid2[list[j]];
      cnt += v >= 0;
      r2 += v >= 0 ? v : 0;
    }
  } else {
    /* twice the midrank falls from group to group: the groups wholly inside
     * the top k are those above the cutoff group's value M, which it holds
     * (M >= 1, so an unranked image, -1, is in neither count).  The three
     * budgets in named integers, not arrays, so the loop is one gather and
     * compares in vector registers (integer sums: any order) */
    _Static_assert(PB_SCREEN_N_BUDGETS == 3, "one counter pair per budget below");
    const int32_t M0 = 2 * r->n - 2 * r->A[0] - r->g[0] + 1, M1 = 2 * r->n - 2 * r->A[1] - r->g[1] + 1,
                  M2 = 2 * r->n - 2 * r->A[2] - r->g[2] + 1;
    int64_t f0 = 0, f1 = 0, f2 = 0, c0 = 0, c1 = 0, c2 = 0;
#pragma omp simd reduction(+ : cnt, r2, f0, f1, f2, c0, c1, c2)
    for (int32_t j = 0; j < len; j++) {
      const int32_t v = mid2[list[j]];
      cnt += v >= 0;
      r2 += v >= 0 ? v : 0;
      f0 += v > M0;
      f1 += v > M1;
      f2 += v > M2;
      c0 += v == M0;
      c1 += v == M1;
      c2 += v == M2;
    }
    full[0] = f0, full[1] = f1, full[2] = f2;
    cut[0] = c0, cut[1] = c1, cut[2] = c2;
  }
  int64_t n = r->n, npos = cnt;
  if (!use_fail) {
    npos = n - cnt;
    r2 = n * (n + 1) - r2;
    for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) {
      full[b] = r->A[b] - full[b];
      cut[b] = r->g[b] - cut[b];
    }
  }
  int64_t nneg = n - npos;
  m->n = (int32_t)n;
  m->n_fail = (int32_t)npos;
  /* 2U = 2 R - npos (npos + 1): integer, so the AUROC is one exact division */
  m->auroc = npos > 0 && nneg > 0 ? (double)(r2 - npos * (npos + 1)) / (2.0 * (double)npos * (double)nneg) : NAN;
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) {
    m->cov[b] = NAN;
    if (npos == 0 || n == 0 || !((budgets >> b) & 1)) continue;
    /* expected failures: all of those wholly above, (k - A) / g of the cutoff group's */
    int64_t g = r->g[b];
    m->cov[b] = (double)(full[b] * g + (r->k[b] - r->A[b]) * cut[b]) / ((double)g * (double)npos);
  }
}

static double pb_screen__one(const double *score, const uint8_t *y, int32_t n, int b, int want_auroc)
{
  struct pb_screen_ranked r;
  struct pb_screen_metric m;
  struct pb_screen_outcome o;
  pb_screen_rank(score, n, NULL, 0, &r);
  o.fail = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof(int32_t));
  o.keep = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof(int32_t));
  pb_screen_outcome_set(&o, y, n);
  pb_screen_ranked_metrics(&r, &o, want_auroc ? 0 : 1 << b, &m);
  free(o.fail);
  free(o.keep);
  pb_screen_ranked_free(&r);
  return want_auroc ? m.auroc : m.cov[b];
}

double pb_screen_auroc(const double *score, const uint8_t *y, int32_t n) { return pb_screen__one(score, y, n, 0, 1); }

double pb_screen_spearman(const double *a, const double *b, int32_t n)
{
  if (n < 2) return NAN;
  double *work = pb_malloc((size_t)2 * (size_t)n * sizeof *work);
  const double r = gsl_stats_spearman(a, 1, b, 1, (size_t)n, work);
  free(work);
  return isfinite(r) ? r : NAN;
}

double pb_screen_coverage(const double *score, const uint8_t *y, int32_t n, int pct)
{
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++)
    if (pb_screen_budget_pct[b] == pct) return pb_screen__one(score, y, n, b, 0);
  pb_error_set("coverage budget %d%% is not one of 10, 20, 30", pct);
  return NAN;
}

/* ------------------------------------------------------------ logistic g */

struct pb_screen__logit_data {
  int p;
  int32_t n;
  const double *z;          /* [n][p] standardised */
  const int32_t *trials, *fails;
  double C;
  /* NULL, or per row the first row with the same features (pb_screen__reps):
   * such a row reuses that row's exp and log1p, which its equal eta would
   * give again, so every sum keeps its terms and order */
  const int32_t *rep;
  double *ce, *cl; /* [n]: exp(-|eta|) and log(1 + exp(eta)) of the first rows */
  /* the gradient an objective-only call formed too: BFGS's line search asks
   * for the gradient at the point whose objective it just took (a third of
   * the calls), and gets these sums, the same terms in the same order */
  int g_ok;
  double g_theta[4], g_sum[4];
};

/* d->rep, d->ce, d->cl when at most half the rows have features of their own
 * (the one-feature fit on scores stored at half precision: 1,700 distinct
 * values among 37,700 rows of an ImageNet-shaped unit); a hash table over the
 * rows' bytes.  Returns the block to free, or NULL (no reuse). */
static void *pb_screen__reps(struct pb_screen__logit_data *d)
{
  const int p = d->p;
  const int32_t n = d->n;
  if (n < 64) return NULL;
  size_t cap = 1;
  while (cap < 2 * (size_t)n) cap <<= 1;
  int32_t *slot = pb_malloc(cap * sizeof *slot), *rep = pb_malloc((size_t)n * sizeof *rep), distinct = 0;
  for (size_t h = 0; h < cap; h++) slot[h] = -1;
  for (int32_t i = 0; i < n; i++) {
    const double *z = d->z + (size_t)i * p;
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (int j = 0; j < p; j++) {
      uint64_t u;
      memcpy(&u, &z[j], sizeof u);
      h = (h ^ u) * 0xff51afd7ed558ccdull;
      h ^= h >> 32;
    }
    size_t at = (size_t)h & (cap - 1);
    while (slot[at] >= 0 && memcmp(d->z + (size_t)slot[at] * p, z, (size_t)p * sizeof *z) != 0) at = (at + 1) & (cap - 1);
    if (slot[at] < 0) slot[at] = i, distinct++;
    rep[i] = slot[at];
  }
  free(slot);
  if (2 * (int64_t)distinct > n) {
    free(rep);
    return NULL;
  }
  double *block = pb_malloc(2 * (size_t)n * sizeof *block);
  d->rep = rep;
  d->ce = block;
  d->cl = block + n;
  return block;
}

/* log(1 + exp(eta)) without overflow, given e = exp(-|eta|) */
static double pb_screen__log1pexp(double eta, double e) { return eta > 0 ? eta + log1p(e) : log1p(e); }

/* 1 / (1 + exp(-eta)), given e = exp(-|eta|) */
static double pb_screen__sigmoid(double eta, double e) { return eta >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e); }

/* objective (when want_f) and gradient (when grad) at theta = (b, w_1..w_p);
 * sums in image order.  BFGS asks for one, the other or both: each is the
 * same sum whether or not the other is formed, and one exp serves both. */
static double pb_screen__logit_eval(struct pb_screen__logit_data *d, const double *theta, int want_f, double *grad)
{
  int p = d->p;
  double f = 0, g[4] = {0, 0, 0, 0};
  const int cached = !want_f && d->g_ok && memcmp(theta, d->g_theta, (size_t)(p + 1) * sizeof *theta) == 0;
  if (cached) memcpy(g, d->g_sum, sizeof g);
  if (want_f && !grad) { /* form the gradient too, for the call that follows */
    grad = d->g_sum;
    memcpy(d->g_theta, theta, (size_t)(p + 1) * sizeof *theta);
    d->g_ok = 1;
  }
  for (int32_t i = 0; i < d->n && !cached; i++) {
    const double *z = d->z + (size_t)i * p;
    double eta = theta[0];
    for (int j = 0; j < p; j++) eta += theta[1 + j] * z[j];
    double e, l = 0.0;
    if (!d->rep || d->rep[i] == i) {
      e = exp(-fabs(eta));
      if (want_f) l = pb_screen__log1pexp(eta, e);
      if (d->rep) d->ce[i] = e, d->cl[i] = l;
    } else {
      e = d->ce[d->rep[i]];
      l = d->cl[d->rep[i]];
    }
    if (want_f) f += d->trials[i] * l - d->fails[i] * eta;
    if (!grad) continue;
    double r = d->trials[i] * pb_screen__sigmoid(eta, e) - d->fails[i];
    g[0] += r;
    for (int j = 0; j < p; j++) g[1 + j] += r * z[j];
  }
  if (grad == d->g_sum) memcpy(d->g_sum, g, sizeof g);
  f *= d->C;
  double pen = 0;
  for (int j = 0; j < p; j++) pen += theta[1 + j] * theta[1 + j];
  f += 0.5 * pen;
  if (grad && grad != d->g_sum) {
    grad[0] = d->C * g[0];
    for (int j = 0; j < p; j++) grad[1 + j] = d->C * g[1 + j] + theta[1 + j];
  }
  return f;
}

/* Hessian of the objective at theta: diag(0, 1, .., 1) + C sum n_i s_i (1 - s_i) z_i z_i' */
static void pb_screen__logit_hess(struct pb_screen__logit_data *d, const double *theta, double H[4][4])
{
  int p = d->p;
  memset(H, 0, 16 * sizeof(double));
  for (int32_t i = 0; i < d->n; i++) {
    double z[4] = {1, 0, 0, 0};
    for (int j = 0; j < p; j++) z[1 + j] = d->z[(size_t)i * p + j];
    double eta = 0;
    for (int j = 0; j <= p; j++) eta += theta[j] * z[j];
    double e;
    if (!d->rep || d->rep[i] == i) {
      e = exp(-fabs(eta));
      if (d->rep) d->ce[i] = e;
    } else {
      e = d->ce[d->rep[i]];
    }
    double s = pb_screen__sigmoid(eta, e), w = d->C * d->trials[i] * s * (1 - s);
    for (int a = 0; a <= p; a++)
      for (int b = 0; b <= p; b++) H[a][b] += w * z[a] * z[b];
  }
  for (int j = 1; j <= p; j++) H[j][j] += 1.0;
}

static double pb_screen__norm(const double *g, int n)
{
  double s = 0;
  for (int j = 0; j < n; j++) s += g[j] * g[j];
  return sqrt(s);
}

static double pb_screen__gsl_f(const gsl_vector *v, void *params)
{
  return pb_screen__logit_eval(params, v->data, 1, NULL);
}

static void pb_screen__gsl_df(const gsl_vector *v, void *params, gsl_vector *df)
{
  double g[4];
  struct pb_screen__logit_data *d = params;
  pb_screen__logit_eval(d, v->data, 0, g);
  for (int j = 0; j <= d->p; j++) gsl_vector_set(df, (size_t)j, g[j]);
}

static void pb_screen__gsl_fdf(const gsl_vector *v, void *params, double *f, gsl_vector *df)
{
  double g[4];
  struct pb_screen__logit_data *d = params;
  *f = pb_screen__logit_eval(d, v->data, 1, g);
  for (int j = 0; j <= d->p; j++) gsl_vector_set(df, (size_t)j, g[j]);
}

static double *pb_screen__standardise(const double *x, int p, int32_t n, struct pb_screen_logit *fit)
{
  double *z = pb_malloc((size_t)(n > 0 ? n : 1) * (size_t)p * sizeof *z);
  for (int j = 0; j < p; j++) {
    double mean = 0, var = 0;
    for (int32_t i = 0; i < n; i++) mean += x[(size_t)i * p + j];
    mean = n > 0 ? mean / n : 0;
    for (int32_t i = 0; i < n; i++) var += (x[(size_t)i * p + j] - mean) * (x[(size_t)i * p + j] - mean);
    var = n > 0 ? var / n : 0;
    fit->mean[j] = mean;
    fit->sd[j] = var > 0 ? sqrt(var) : 0;
    for (int32_t i = 0; i < n; i++)
      z[(size_t)i * p + j] = fit->sd[j] > 0 ? (x[(size_t)i * p + j] - mean) / fit->sd[j] : 0.0;
  }
  return z;
}

double pb_screen_logit_objective(const double *x, int p, const int32_t *n_trials, const int32_t *n_fail, int32_t n,
                                 double C, const struct pb_screen_logit *fit, double *grad)
{
  struct pb_screen_logit tmp = *fit;
  double *z = pb_screen__standardise(x, p, n, &tmp);
  struct pb_screen__logit_data d = {.p = p, .n = n, .z = z, .trials = n_trials, .fails = n_fail, .C = C};
  double theta[4] = {fit->b, fit->w[0], fit->w[1], fit->w[2]};
  double f = pb_screen__logit_eval(&d, theta, 1, grad);
  free(z);
  return f;
}

int pb_screen_logit_fit(const double *x, int p, const int32_t *n_trials, const int32_t *n_fail, int32_t n,
                        double C, struct pb_screen_logit *fit)
{
  memset(fit, 0, sizeof *fit);
  fit->p = p;
  if (p < 1 || p > 3) {
    pb_error_set("logistic fit: %d features (1 to 3 supported)", p);
    return PB_FAIL;
  }
  int64_t trials = 0, fails = 0;
  for (int32_t i = 0; i < n; i++) {
    trials += n_trials[i];
    fails += n_fail[i];
  }
  double *z = pb_screen__standardise(x, p, n, fit);
  /* with one outcome only the unpenalised intercept runs off to infinity */
  if (n == 0 || fails == 0 || fails == trials) {
    free(z);
    fit->b = NAN;
    for (int j = 0; j < 3; j++) fit->w[j] = NAN;
    fit->grad_norm = NAN;
    return PB_OK;
  }
  struct pb_screen__logit_data d = {.p = p, .n = n, .z = z, .trials = n_trials, .fails = n_fail, .C = C};
  void *reuse = pb_screen__reps(&d);
  gsl_multimin_function_fdf fn = {pb_screen__gsl_f, pb_screen__gsl_df, pb_screen__gsl_fdf, (size_t)p + 1, &d};
  gsl_vector *x0 = gsl_vector_alloc((size_t)p + 1);
  /* start at the intercept-only optimum logit(fails / trials), slopes 0 */
  gsl_vector_set_zero(x0);
  gsl_vector_set(x0, 0, log((double)fails / (double)(trials - fails)));
  gsl_multimin_fdfminimizer *mz = gsl_multimin_fdfminimizer_alloc(gsl_multimin_fdfminimizer_vector_bfgs2, (size_t)p + 1);
  gsl_multimin_fdfminimizer_set(mz, &fn, x0, 0.1, 0.1);
  /* the objective grows with the pooled observations: ask for a gradient
   * small against that scale, then take what BFGS can still improve */
  double tol = 1e-10 * (1.0 + (double)trials);
  int it = 0, rc = GSL_CONTINUE;
  for (; it < 1000 && rc == GSL_CONTINUE; it++) {
    if (gsl_multimin_fdfminimizer_iterate(mz) != GSL_SUCCESS) break;
    rc = gsl_multimin_test_gradient(mz->gradient, tol);
  }
  const gsl_vector *xm = gsl_multimin_fdfminimizer_x(mz);
  double theta[4] = {0, 0, 0, 0}, g[4];
  for (int j = 0; j <= p; j++) theta[j] = gsl_vector_get(xm, (size_t)j);
  pb_screen__logit_eval(&d, theta, 0, g);
  /* BFGS stops where the objective stops resolving decreases (its line
   * search compares function values); Newton steps on the gradient, solved
   * by Cholesky of the penalised Hessian, finish the job while the gradient
   * norm keeps falling */
  double gn = pb_screen__norm(g, p + 1);
  for (int newton = 0; newton < 8 && gn > 0; newton++) {
    double H[4][4], cand[4], gc[4];
    pb_screen__logit_hess(&d, theta, H);
    gsl_matrix_view Hm = gsl_matrix_view_array(&H[0][0], 4, 4);
    gsl_matrix_view Hs = gsl_matrix_submatrix(&Hm.matrix, 0, 0, (size_t)p + 1, (size_t)p + 1);
    gsl_matrix *Hc = gsl_matrix_alloc((size_t)p + 1, (size_t)p + 1);
    gsl_matrix_memcpy(Hc, &Hs.matrix);
    gsl_vector_view gv = gsl_vector_view_array(g, (size_t)p + 1);
    gsl_vector *step = gsl_vector_alloc((size_t)p + 1);
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int rc2 = gsl_linalg_cholesky_decomp1(Hc);
    if (rc2 == GSL_SUCCESS) rc2 = gsl_linalg_cholesky_solve(Hc, &gv.vector, step);
    gsl_set_error_handler(old);
    for (int j = 0; j <= p; j++) cand[j] = theta[j] - (rc2 == GSL_SUCCESS ? gsl_vector_get(step, (size_t)j) : 0.0);
    gsl_vector_free(step);
    gsl_matrix_free(Hc);
    if (rc2 != GSL_SUCCESS) break;
    pb_screen__logit_eval(&d, cand, 0, gc);
    double gcn = pb_screen__norm(gc, p + 1);
    if (!(gcn < gn)) break;
    memcpy(theta, cand, sizeof theta);
    memcpy(g, gc, sizeof g);
    gn = gcn;
  }
  fit->b = theta[0];
  for (int j = 0; j < 3; j++) fit->w[j] = j < p ? theta[1 + j] : 0.0;
  fit->grad_norm = gn;
  fit->iterations = it;
  fit->ok = 1;
  gsl_multimin_fdfminimizer_free(mz);
  gsl_vector_free(x0);
  free(z);
  free((void *)d.rep);
  free(reuse);
  if (!(fit->grad_norm <= 1e-6 * (1.0 + (double)trials))) {
    pb_error_set("logistic fit did not converge: gradient norm %.3g after %d BFGS iterations", fit->grad_norm, it);
    return PB_FAIL;
  }
  return PB_OK;
}

double pb_screen_logit_eta(const struct pb_screen_logit *fit, const double *x)
{
  if (!fit->ok) return NAN;
  double eta = fit->b;
  for (int j = 0; j < fit->p; j++)
    if (fit->sd[j] > 0) eta += fit->w[j] * (x[j] - fit->mean[j]) / fit->sd[j];
  return eta;
}

/* ------------------------------------------------------------ probabilities */

double pb_screen_prob(const struct pb_screen_probs *r, int32_t n_classes, int32_t c, int *exact)
{
  *exact = 1;
  if (c == r->pred) return r->s;
  if (c == r->label) return r->m;
  for (int32_t j = 0; j < r->k; j++)
    if (r->tk_class[j] == c) return r->tk_prob[j];
  /* uniform completion: the unexplained mass spread over the classes that
   * no stored value pins, capped by the smallest listed probability */
  *exact = 0;
  double mass = r->s + (r->label != r->pred ? r->m : 0.0), low = INFINITY;
  int32_t known = 1 + (r->label != r->pred);
  for (int32_t j = 0; j < r->k; j++) {
    int32_t cj = r->tk_class[j];
    if (cj < 0) continue;
    low = fmin(low, r->tk_prob[j]);
    if (cj == r->pred || cj == r->label) continue;
    mass += r->tk_prob[j];
    known++;
  }
  if (known >= n_classes) return 0.0;
  double v = fmax(0.0, 1.0 - mass) / (double)(n_classes - known);
  return fmin(v, low);
}

double pb_screen_margin(const struct pb_screen_probs *r)
{
  if (r->k < 2) return NAN;
  double second = r->label != r->pred ? r->m : 0.0;
  for (int32_t j = 0; j < r->k; j++)
    if (r->tk_class[j] >= 0 && r->tk_class[j] != r->pred) second = fmax(second, r->tk_prob[j]);
  return (double)r->s - second;
}

static double pb_screen__plogp(double p) { return p > 0 ? -p * log(p) : 0.0; }

double pb_screen_entropy(const struct pb_screen_probs *r, int32_t n_classes)
{
  if (r->entropy) return *r->entropy;
  if (r->k < 1) return NAN;
  double h = pb_screen__plogp(r->s) + (r->label != r->pred ? pb_screen__plogp(r->m) : 0.0);
  int32_t known = 1 + (r->label != r->pred);
  for (int32_t j = 0; j < r->k; j++) {
    int32_t cj = r->tk_class[j];
    if (cj < 0 || cj == r->pred || cj == r->label) continue;
    h += pb_screen__plogp(r->tk_prob[j]);
    known++;
  }
  if (known < n_classes) {
    int exact;
    /* any class outside the known set gets the completion value */
    int32_t c = 0;
    for (;; c++) {
      int hit = c == r->pred || c == r->label;
      for (int32_t j = 0; j < r->k && !hit; j++) hit = r->tk_class[j] == c;
      if (!hit) break;
    }
    h += (double)(n_classes - known) * pb_screen__plogp(pb_screen_prob(r, n_classes, c, &exact));
  }
  return h;
}

/* ------------------------------------------------------------ A3 */

double pb_screen_a3(const struct pb_screen_probs *clean, const struct pb_screen_probs *probes, int32_t n_probes,
                    int32_t n_classes, int32_t *approx)
{
  int32_t p = clean->pred, m = -1, best_count = 0;
  double best_mean = -1;
  int ex;
  *approx = 0;
  /* modal probe prediction: votes, then mean max probability, then index */
  for (int32_t a = 0; a < n_probes; a++) {
    int32_t c = probes[a].pred, count = 0, seen = 0;
    for (int32_t b = 0; b < a && !seen; b++) seen = probes[b].pred == c;
    if (seen) continue;
    double sum = 0;
    for (int32_t b = a; b < n_probes; b++)
      if (probes[b].pred == c) {
        count++;
        sum += probes[b].s;
      }
    double mean = sum / count;
    if (count > best_count || (count == best_count && (mean > best_mean || (mean == best_mean && c < m)))) {
      m = c;
      best_count = count;
      best_mean = mean;
    }
  }
  double v0p = pb_screen_prob(clean, n_classes, p, &ex), v0m = 0;
  *approx += !ex;
  if (m != p && m >= 0) {
    v0m = pb_screen_prob(clean, n_classes, m, &ex);
    *approx += !ex;
  }
  double a3 = v0p;
  for (int32_t a = 0; a < n_probes; a++) {
    const struct pb_screen_probs *r = &probes[a];
    double vap = pb_screen_prob(r, n_classes, p, &ex);
    *approx += !ex;
    if (r->pred != p && r->pred != m) {
      a3 -= r->s - vap;                        /* distractor */
    } else if (p != m) {
      double vam = pb_screen_prob(r, n_classes, m, &ex);
      *approx += !ex;
      if (r->pred == p) a3 += vap - vam;       /* supporter */
      else a3 += vap - vam + v0m - v0p;        /* dominator */
    }
  }
  return a3;
}

double pb_screen_u(const float *const *m, int32_t n_probes, int32_t j)
{
  double sum = 0;
  for (int32_t a = 0; a < n_probes; a++) sum += m[a][j];
  return sum / n_probes;
}
