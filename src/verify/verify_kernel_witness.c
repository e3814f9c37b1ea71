/* Checks of a witness correspondence written by `pairbound bounds
 * --witnesses` (docs/verify.md, "Witnesses"): that it is a within-class
 * bijection keeping the counts its level fixes, and its H count, class by
 * class, straight from the records. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/sort.h"
#include "pairbound/verify.h"

int pb_verify_witness_group(const struct pb_cell_view *d, struct pb_verify_wgroup *g)
{
  const int32_t n = d->n;
  memset(g, 0, sizeof *g);
  int64_t *key = malloc((size_t)(n > 0 ? n : 1) * sizeof *key);
  g->cid = malloc((size_t)(n > 0 ? n : 1) * sizeof *g->cid);
  g->label = malloc((size_t)(n > 0 ? n : 1) * sizeof *g->label);
  g->obs = calloc((size_t)(n > 0 ? n : 1), sizeof *g->obs);
  g->used = malloc((size_t)(n > 0 ? n : 1));
  g->cnt = malloc((size_t)(n > 0 ? n : 1) * sizeof *g->cnt);
  if (!key || !g->cid || !g->label || !g->obs || !g->used || !g->cnt) {
    free(key);
    pb_verify_witness_group_free(g);
    return -1;
  }
  for (int32_t i = 0; i < n; i++) key[i] = (int64_t)d->label[i] << 32 | i;
  qsort(key, (size_t)n, sizeof *key, pb_sort_cmp_i64);
  g->n = n;
  for (int32_t p = 0; p < n; p++) {
    const int32_t i = (int32_t)(key[p] & 0xffffffff), y = d->label[i];
    if (p == 0 || y != g->label[g->ncls - 1]) g->label[g->ncls++] = y;
    const int32_t c = g->ncls - 1;
    g->cid[i] = c;
    /* the observed (identity) correspondence's k and s */
    const int c0 = d->pred0[i] == y, c1 = d->pred1[i] == y;
    g->obs[c][0] += c0 && c1;
    g->obs[c][1] += !c0 && !c1 && d->pred0[i] == d->pred1[i];
  }
  free(key);
  return 0;
}

void pb_verify_witness_group_free(struct pb_verify_wgroup *g)
{
  free(g->cid), free(g->label), free(g->obs), free(g->used), free(g->cnt);
  memset(g, 0, sizeof *g);
}

int pb_verify_witness_check(const struct pb_cell_view *d, struct pb_verify_wgroup *g, const int32_t *perm, int keep_s,
                            int64_t *H, int32_t *bad_label, char *why, size_t len)
{
  const int32_t n = d->n;
  const float tau = d->tau;
  memset(g->used, 0, (size_t)n);
  memset(g->cnt, 0, (size_t)g->ncls * sizeof *g->cnt);
  *H = 0;
  for (int32_t i = 0; i < n; i++) {
    const int32_t j = perm[i], y = d->label[i];
    *bad_label = y;
    if (j < 0 || j >= n) {
      snprintf(why, len, "clean record %d is paired with %d, not a record of the cell", (int)i, (int)j);
      return 1;
    }
    if (g->used[j]) {
      snprintf(why, len, "perturbed record %d is paired twice (the second time with clean record %d)", (int)j, (int)i);
      return 1;
    }
    if (d->label[j] != y) {
      snprintf(why, len, "clean record %d is paired with perturbed record %d of class %d", (int)i, (int)j,
               (int)d->label[j]);
      return 1;
    }
    g->used[j] = 1;
    int64_t *c = g->cnt[g->cid[i]];
    const int c0 = d->pred0[i] == y, c1 = d->pred1[j] == y;
    c[0] += c0 && c1;
    c[1] += !c0 && !c1 && d->pred0[i] == d->pred1[j];
    c[2] += c0 && d->s0[i] >= tau && !c1 && d->s1[j] >= tau;
  }
  /* n distinct partners in [0, n): a bijection; within classes, so a, b per class are kept */
  for (int32_t c = 0; c < g->ncls; c++) {
    *bad_label = g->label[c];
    if (g->cnt[c][0] != g->obs[c][0] || (keep_s && g->cnt[c][1] != g->obs[c][1])) {
      snprintf(why, len, "correct-correct count k = %lld and same-label wrong count s = %lld in the witness, "
               "k = %lld and s = %lld observed (the level fixes k%s)", (long long)g->cnt[c][0],
               (long long)g->cnt[c][1], (long long)g->obs[c][0], (long long)g->obs[c][1], keep_s ? " and s" : "");
      return 1;
    }
    *H += g->cnt[c][2];
  }
  *bad_label = -1;
  return 0;
}
