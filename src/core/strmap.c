/* String -> index map (include/pairbound/strmap.h). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/strmap.h"

static uint64_t pb_strmap__fnv1a(const char *s)
{
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

void pb_strmap_init(struct pb_strmap *m)
{
  m->cap = 64;
  m->count = 0;
  m->keys = pb_calloc(m->cap, sizeof *m->keys);
  m->vals = pb_calloc(m->cap, sizeof *m->vals);
}

void pb_strmap_free(struct pb_strmap *m)
{
  if (!m->keys) return;
  for (size_t i = 0; i < m->cap; i++) free(m->keys[i]);
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

static size_t pb_strmap__slot(const struct pb_strmap *m, const char *key)
{
  size_t i = (size_t)pb_strmap__fnv1a(key) & (m->cap - 1);
  while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & (m->cap - 1);
  return i;
}

int32_t pb_strmap_get(const struct pb_strmap *m, const char *key)
{
  size_t i = pb_strmap__slot(m, key);
  return m->keys[i] ? m->vals[i] : -1;
}

int32_t pb_strmap_put(struct pb_strmap *m, const char *key, int32_t value)
{
  size_t i = pb_strmap__slot(m, key);
  if (m->keys[i]) return m->vals[i];
  if (2 * (m->count + 1) > m->cap) {
    struct pb_strmap big = {pb_calloc(2 * m->cap, sizeof(char *)), pb_calloc(2 * m->cap, sizeof(int32_t)),
                            2 * m->cap, m->count};
    for (size_t j = 0; j < m->cap; j++)
      if (m->keys[j]) {
        size_t k = pb_strmap__slot(&big, m->keys[j]);
        big.keys[k] = m->keys[j];
        big.vals[k] = m->vals[j];
      }
    free(m->keys);
    free(m->vals);
    *m = big;
    i = pb_strmap__slot(m, key);
  }
  m->keys[i] = pb_strdup(key);
  m->vals[i] = value;
  m->count++;
  return value;
}
