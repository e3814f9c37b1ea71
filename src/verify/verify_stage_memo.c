/* Memo of `pairbound verify --policies`' class checks (docs/verify.md).
 *
 * Every policy quantity of a class, on the enumeration side and in the
 * policy engine, is a function of the class's records through these facts
 * only: per record correct clean / accepted clean / correct perturbed, which
 * perturbed thresholds accept it, and the equality pattern of its wrong
 * labels.  The set of bijections is the same whatever order the records
 * come in.  So each class is checked in a canonical form (records sorted by
 * those facts, wrong labels replaced by their rank) whose outcome depends on
 * the key alone; a repeated key reuses the stored outcome, and a hit and a
 * miss give the same bits (tests/verify_memo.sh runs both ways and diffs). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "verify_internal.h"

struct pb_verify_memo {
  uint32_t cap;         /* slots, a power of two; direct mapped, the newest key wins */
  size_t esz;           /* payload bytes per slot */
  unsigned char *keys;  /* cap x PB_VERIFY_MEMO_KEY; key[0] = n, 0 = empty */
  unsigned char *data;  /* cap x esz */
  int64_t hits, misses;
};

struct pb_verify_memo *pb_verify_memo_new(size_t payload, size_t budget)
{
  struct pb_verify_memo *m = pb_calloc(1, sizeof *m);
  m->esz = payload;
  m->cap = 1024;
  while (m->cap < (1u << 20) && (size_t)m->cap * 2 * (payload + PB_VERIFY_MEMO_KEY) <= budget) m->cap *= 2;
  m->keys = pb_calloc(m->cap, PB_VERIFY_MEMO_KEY);
  m->data = pb_malloc((size_t)m->cap * payload);
  return m;
}

void pb_verify_memo_free(struct pb_verify_memo *m)
{
  if (!m) return;
  free(m->keys), free(m->data), free(m);
}

void pb_verify_memo_counts(const struct pb_verify_memo *m, int64_t *hits, int64_t *misses)
{
  *hits = m ? m->hits : 0;
  *misses = m ? m->misses : 0;
}

static uint32_t pb_verify__memo_slot(const struct pb_verify_memo *m, const unsigned char *key)
{
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (int i = 0; i < 1 + 4 * key[0]; i++) h = (h ^ key[i]) * 1099511628211ull;
  return (uint32_t)(h ^ h >> 32) & (m->cap - 1);
}

unsigned char *pb_verify_memo_find(struct pb_verify_memo *m, const unsigned char *key)
{
  const uint32_t s = pb_verify__memo_slot(m, key);
  if (memcmp(m->keys + (size_t)s * PB_VERIFY_MEMO_KEY, key, 1 + 4 * (size_t)key[0]) == 0) {
    m->hits++;
    return m->data + (size_t)s * m->esz;
  }
  m->misses++;
  return NULL;
}

unsigned char *pb_verify_memo_put(struct pb_verify_memo *m, const unsigned char *key)
{
  const uint32_t s = pb_verify__memo_slot(m, key);
  memcpy(m->keys + (size_t)s * PB_VERIFY_MEMO_KEY, key, 1 + 4 * (size_t)key[0]);
  return m->data + (size_t)s * m->esz;
}

void pb_verify_memo_canon(const struct pb_verify_records *r, const struct pb_verify_policy_setup *ps,
                          unsigned char key[PB_VERIFY_MEMO_KEY], int32_t order[PB_VERIFY_MAX_N],
                          int32_t q0[PB_VERIFY_MAX_N], int32_t q1[PB_VERIFY_MAX_N])
{
  const int32_t n = r->n;
  /* distinct wrong labels of either side, ascending: a label's code is 1 + its rank */
  int32_t wl[2 * PB_VERIFY_MAX_N], nw = 0;
  for (int32_t i = 0; i < n; i++) {
    if (!r->c0[i]) wl[nw++] = r->p0[i];
    if (!r->c1[i]) wl[nw++] = r->p1[i];
  }
  for (int32_t a = 1; a < nw; a++)
    for (int32_t b = a; b > 0 && wl[b - 1] > wl[b]; b--) {
      const int32_t t = wl[b];
      wl[b] = wl[b - 1], wl[b - 1] = t;
    }
  int32_t u = 0;
  for (int32_t a = 0; a < nw; a++)
    if (a == 0 || wl[a] != wl[u - 1]) wl[u++] = wl[a];
  uint32_t code[PB_VERIFY_MAX_N];
  for (int32_t i = 0; i < n; i++) {
    q0[i] = q1[i] = 0;
    for (int32_t a = 0; a < u; a++) {
      if (!r->c0[i] && wl[a] == r->p0[i]) q0[i] = 1 + a;
      if (!r->c1[i] && wl[a] == r->p1[i]) q1[i] = 1 + a;
    }
    uint32_t acc = 0;
    for (int32_t j = 0; j < ps->n_pol; j++) acc |= (uint32_t)(r->s1[i] >= ps->tau[j]) << j;
    code[i] = (uint32_t)((r->c0[i] != 0) | (r->z0[i] != 0) << 1 | (r->c1[i] != 0) << 2) << 24 | acc << 16 | (uint32_t)q0[i] << 8 |
              (uint32_t)q1[i];
    order[i] = i;
  }
  /* stable insertion sort by code: equal codes are interchangeable records */
  for (int32_t a = 1; a < n; a++)
    for (int32_t b = a; b > 0 && code[order[b - 1]] > code[order[b]]; b--) {
      const int32_t t = order[b];
      order[b] = order[b - 1], order[b - 1] = t;
    }
  key[0] = (unsigned char)n;
  for (int32_t a = 0; a < n; a++) {
    const uint32_t c = code[order[a]];
    for (int k = 0; k < 4; k++) key[1 + 4 * a + k] = (unsigned char)(c >> (24 - 8 * k));
  }
}
