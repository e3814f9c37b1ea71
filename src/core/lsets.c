/* Label sets: parsing and canonical text of the CSV column `labels`, and the
 * one map that turns set correctness into every kernel's pred == label test
 * (include/pairbound/lsets.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/lsets.h"
#include "pairbound/meta.h"
#include "pairbound/parse.h"

static int pb_lsets__cmp(const void *a, const void *b)
{
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* The common id, 1 to 7 plain digits, into *@p v: what strtoll reads from it, without the copy and the call
 * (every set of every row is parsed, at ingest twice); 0 for anything else, which pb_parse_int then reads. */
static int pb_lsets__digits(const char *p, size_t len, int64_t *v)
{
  int64_t x = 0;
  if (len == 0 || len > 7) return 0;
  for (size_t i = 0; i < len; i++) {
    const unsigned d = (unsigned)(p[i] - '0');
    if (d > 9) return 0;
    x = 10 * x + d;
  }
  *v = x;
  return 1;
}

/* Ascending: a set holds a few ids, which an insertion sort orders without qsort's calls. */
static void pb_lsets__sort(int32_t *ids, int32_t n)
{
  if (n > 16) {
    qsort(ids, (size_t)n, sizeof *ids, pb_lsets__cmp);
    return;
  }
  for (int32_t k = 1; k < n; k++) {
    const int32_t x = ids[k];
    int32_t j = k;
    for (; j > 0 && ids[j - 1] > x; j--) ids[j] = ids[j - 1];
    ids[j] = x;
  }
}

int pb_lsets_parse(const char *text, int32_t *ids, int32_t cap, int32_t *n)
{
  *n = 0;
  if (text[0] == '\0') return PB_OK;
  char buf[32];
  for (const char *p = text;;) {
    const char *e = strchr(p, PB_LSETS_SEP);
    const size_t len = e ? (size_t)(e - p) : strlen(p);
    int64_t v = 0;
    if (!pb_lsets__digits(p, len, &v) || v > PB_MAX_CLASSES - 1) {
      if (len == 0 || len >= sizeof buf) {
        pb_error_set(len == 0 ? "empty class id in label set '%s'" : "class id too long in label set '%s'", text);
        return PB_FAIL;
      }
      memcpy(buf, p, len);
      buf[len] = '\0';
      if (pb_parse_int(buf, 0, PB_MAX_CLASSES - 1, &v) != PB_OK) {
        pb_error_set("'%s' in label set '%s' is no class id (an integer in [0, %d))", buf, text, PB_MAX_CLASSES);
        return PB_FAIL;
      }
    }
    if (*n == cap) {
      pb_error_set("label set '%s' has more than %d ids", text, (int)cap);
      return PB_FAIL;
    }
    ids[(*n)++] = (int32_t)v;
    if (!e) break;
    p = e + 1;
  }
  pb_lsets__sort(ids, *n);
  for (int32_t k = 1; k < *n; k++)
    if (ids[k] == ids[k - 1]) {
      pb_error_set("class %d twice in label set '%s'", (int)ids[k], text);
      return PB_FAIL;
    }
  return PB_OK;
}

size_t pb_lsets_text(const int32_t *ids, int32_t n, char *buf, size_t cap)
{
  size_t len = 0;
  if (cap > 0) buf[0] = '\0';
  for (int32_t k = 0; k < n; k++) {
    const int w = snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0, "%s%d", k ? ";" : "", (int)ids[k]);
    len += (size_t)w;
  }
  return len;
}

int pb_lsets_source_has(const struct pb_source *src) { return src->lset_off != NULL; }

int pb_lsets_validate(const struct pb_source *src)
{
  if (!src->lset_off) return PB_OK;
  if (src->lset_off[0] != 0) {
    pb_error_set("source %s: label set offsets do not start at 0", src->name);
    return PB_FAIL;
  }
  for (int32_t i = 0; i < src->n_images; i++) {
    const int64_t a = src->lset_off[i], b = src->lset_off[i + 1];
    if (b < a) {
      pb_error_set("source %s image %s: label set offsets decrease", src->name, src->image_ids[i]);
      return PB_FAIL;
    }
    for (int64_t k = a; k < b; k++)
      if (src->lset_ids[k] < 0 || src->lset_ids[k] >= src->n_classes || (k > a && src->lset_ids[k] <= src->lset_ids[k - 1])) {
        pb_error_set("source %s image %s: label set class %d outside [0, %d) or not ascending", src->name,
                     src->image_ids[i], (int)src->lset_ids[k], (int)src->n_classes);
        return PB_FAIL;
      }
  }
  return PB_OK;
}

void pb_lsets_eval(const struct pb_source *src, int64_t **off, int32_t **ids)
{
  int32_t ne = 0;
  for (int32_t i = 0; i < src->n_images; i++) ne += src->split[i] == PB_SPLIT_EVAL;
  *off = pb_malloc(((size_t)ne + 1) * sizeof **off);
  *ids = pb_malloc(((size_t)src->lset_off[src->n_images] + 1) * sizeof **ids);
  int64_t k = 0;
  (*off)[0] = 0;
  for (int32_t i = 0, e = 0; i < src->n_images; i++) {
    if (src->split[i] != PB_SPLIT_EVAL) continue;
    int32_t n;
    const int32_t *s = pb_lsets_of(src, i, &n);
    memcpy(*ids + k, s, (size_t)n * sizeof *s);
    (*off)[++e] = k += n;
  }
}
