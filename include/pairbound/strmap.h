/* String -> index map (open addressing; the caller keeps insertion order). */
#ifndef PAIRBOUND_STRMAP_H
#define PAIRBOUND_STRMAP_H

#include <stddef.h>
#include <stdint.h>

struct pb_strmap {
  char **keys;
  int32_t *vals;
  size_t cap;
  size_t count;
};
void pb_strmap_init(struct pb_strmap *m);
void pb_strmap_free(struct pb_strmap *m);
/* Value of key, or -1. */
int32_t pb_strmap_get(const struct pb_strmap *m, const char *key);
/* Insert key with value if absent; returns the stored value. */
int32_t pb_strmap_put(struct pb_strmap *m, const char *key, int32_t value);

#endif /* PAIRBOUND_STRMAP_H */
