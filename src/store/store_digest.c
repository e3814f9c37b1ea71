/* The checksums of a store's metadata (schema 2; docs/store.md, "Integrity"):
 * every object that says what the records are -- the root, models/id,
 * models/group, source_names, and per source its group, image_id, label,
 * split and condition -- carries an attribute `xxh3_128`, the XXH3-128 of
 * its values in a canonical form, written with the store and compared when
 * it is opened.  Record chunks have their own checksum (Fletcher32), the
 * roles attribute its structural checks (pb_store__read_roles), so that
 * `pairbound roles --set` rewrites one attribute and no checksum. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "pairbound/checksum.h"
#include "pairbound/error.h"
#include "pairbound/store.h"
#include "core/h5io.h"
#include "store_internal.h"

/* Per source: its group (attributes), image_id, label, split, condition; then label_set_offsets and
 * label_set_ids when it holds label sets. */
#define PB_DIGEST__PER_SOURCE 5
#define PB_DIGEST__LSETS 2
/* Before the sources: the root (attributes), models/id, models/group, source_names. */
#define PB_DIGEST__ROOT 4

static int32_t pb_digest__of_source(const struct pb_source *src)
{
  return PB_DIGEST__PER_SOURCE + (src->lset_off ? PB_DIGEST__LSETS : 0);
}

int32_t pb_store__digests(const struct pb_meta *meta, int32_t s)
{
  int32_t k = PB_DIGEST__ROOT;
  for (int32_t t = 0; t < (s < 0 ? meta->n_sources : s); t++) k += pb_digest__of_source(&meta->sources[t]);
  return k;
}

/* Object @p k (>= PB_DIGEST__ROOT): its source and its part (0 = the group ... 6 = label_set_ids). */
static const struct pb_source *pb_digest__locate(const struct pb_meta *meta, int32_t k, int *part)
{
  int32_t s = 0;
  for (k -= PB_DIGEST__ROOT; k >= pb_digest__of_source(&meta->sources[s]); s++)
    k -= pb_digest__of_source(&meta->sources[s]);
  *part = (int)k;
  return &meta->sources[s];
}

/* Strings as the canonical bytes: each followed by one NUL (what a reader gets, whatever the stored width). */
static char *pb_digest__strings(char *const *v, int32_t n, size_t *len)
{
  size_t total = 0;
  for (int32_t i = 0; i < n; i++) total += strlen(v[i]) + 1;
  char *buf = pb_malloc(total ? total : 1), *p = buf;
  for (int32_t i = 0; i < n; i++) {
    const size_t l = strlen(v[i]) + 1;
    memcpy(p, v[i], l);
    p += l;
  }
  *len = total;
  return buf;
}

/* Attributes as the canonical bytes: "name value\n" lines. */
static char *pb_digest__text(size_t *len, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *pb_digest__text(size_t *len, const char *fmt, ...)
{
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  const int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *buf = pb_malloc((size_t)n + 1);
  vsnprintf(buf, (size_t)n + 1, fmt, aq);
  va_end(aq);
  *len = (size_t)n;
  return buf;
}

/* Little-endian bytes of the labels (the file's type, H5T_STD_I32LE, whatever the machine). */
static char *pb_digest__labels(const int32_t *v, int64_t n, size_t *len)
{
  unsigned char *buf = pb_malloc((size_t)(n > 0 ? n : 1) * 4);
  for (int64_t i = 0; i < n; i++) {
    const uint32_t u = (uint32_t)v[i];
    for (int b = 0; b < 4; b++) buf[4 * i + b] = (unsigned char)(u >> (8 * b));
  }
  *len = (size_t)n * 4;
  return (char *)buf;
}

/* Little-endian bytes of the label set offsets (H5T_STD_I64LE). */
static char *pb_digest__offsets(const int64_t *v, int64_t n, size_t *len)
{
  unsigned char *buf = pb_malloc((size_t)(n > 0 ? n : 1) * 8);
  for (int64_t i = 0; i < n; i++) {
    const uint64_t u = (uint64_t)v[i];
    for (int b = 0; b < 8; b++) buf[8 * i + b] = (unsigned char)(u >> (8 * b));
  }
  *len = (size_t)n * 8;
  return (char *)buf;
}

/* The root's line naming the summaries (PB_SUMMARY_* bits) the store holds. */
static const char *pb_digest__summaries(int summaries)
{
  switch (summaries & (PB_SUMMARY_ENTROPY | PB_SUMMARY_COLLISION)) {
  case PB_SUMMARY_ENTROPY: return "summaries entropy\n";
  case PB_SUMMARY_COLLISION: return "summaries collision\n";
  default: return "summaries entropy collision\n";
  }
}

void pb_store__digest(const struct pb_meta *meta, int32_t schema, int32_t k, char *path, size_t npath,
                      char hex[65])
{
  size_t len = 0;
  char *bytes;
  if (k < PB_DIGEST__ROOT) {
    static const char *const name[PB_DIGEST__ROOT] = {"/", "/models/id", "/models/group", "/source_names"};
    snprintf(path, npath, "%s", name[k]);
    char **names = NULL;
    switch (k) {
    case 0:
      /* from schema 3 on, which optional summaries the store holds: removing their datasets is damage */
      bytes = pb_digest__text(&len, "format pairbound-store\nschema_version %d\ntopk %d\n%s%s%s%s", (int)schema,
                              (int)meta->topk, meta->seed_values ? "seed_values " : "",
                              meta->seed_values ? meta->seed_values : "", meta->seed_values ? "\n" : "",
                              schema >= 3 && meta->summaries ? pb_digest__summaries(meta->summaries) : "");
      break;
    case 1: bytes = pb_digest__strings(meta->model_ids, meta->n_models, &len); break;
    case 2: bytes = pb_digest__strings(meta->model_groups, meta->n_models, &len); break;
    default:
      names = pb_malloc((size_t)(meta->n_sources > 0 ? meta->n_sources : 1) * sizeof *names);
      for (int32_t s = 0; s < meta->n_sources; s++) names[s] = meta->sources[s].name;
      bytes = pb_digest__strings(names, meta->n_sources, &len);
      free(names);
    }
  } else {
    int part;
    const struct pb_source *src = pb_digest__locate(meta, k, &part);
    static const char *const name[PB_DIGEST__PER_SOURCE + PB_DIGEST__LSETS] = {
        "", "/image_id", "/label", "/split", "/condition", "/label_set_offsets", "/label_set_ids"};
    snprintf(path, npath, "/sources/%s%s", src->name, name[part]);
    switch (part) {
    case 0:
      /* from schema 3 on, whether the source holds label sets: removing both their datasets is damage */
      bytes = pb_digest__text(&len, "n_classes %d\nclean_index %d\n%s%s%s%s", (int)src->n_classes, (int)src->clean,
                              src->seed_values ? "seed_values " : "", src->seed_values ? src->seed_values : "",
                              src->seed_values ? "\n" : "", schema >= 3 && src->lset_off ? "label_sets 1\n" : "");
      break;
    case 1: bytes = pb_digest__strings(src->image_ids, src->n_images, &len); break;
    case 2: bytes = pb_digest__labels(src->labels, src->n_images, &len); break;
    case 3:
      bytes = pb_malloc(src->n_images > 0 ? (size_t)src->n_images : 1);
      memcpy(bytes, src->split, (size_t)src->n_images);
      len = (size_t)src->n_images;
      break;
    case 4: bytes = pb_digest__strings(src->conditions, src->n_conditions, &len); break;
    case 5: bytes = pb_digest__offsets(src->lset_off, (int64_t)src->n_images + 1, &len); break;
    default: bytes = pb_digest__labels(src->lset_ids, src->lset_off[src->n_images], &len);
    }
  }
  pb_checksum_xxh128_hex(bytes, len, hex);
  free(bytes);
}

int pb_store__digests_write(hid_t file, const struct pb_meta *meta, int32_t schema)
{
  char path[1024], hex[65];
  for (int32_t k = 0; k < pb_store__digests(meta, -1); k++) {
    pb_store__digest(meta, schema, k, path, sizeof path, hex);
    hid_t obj = H5Oopen(file, path, H5P_DEFAULT);
    /* a store converted from schema 1 by roles --set may carry stale ones (a downgraded schema-2 store) */
    if (obj >= 0 && H5Aexists(obj, PB_STORE_DIGEST_ATTR) > 0) H5Adelete(obj, PB_STORE_DIGEST_ATTR);
    const int bad = obj < 0 || pb_h5_attr_str(obj, PB_STORE_DIGEST_ATTR, hex) != PB_OK;
    if (obj >= 0) H5Oclose(obj);
    if (bad) {
      pb_error_set("HDF5: cannot write the checksum of %s", path);
      return PB_FAIL;
    }
  }
  return PB_OK;
}

int pb_store__digest_check(hid_t file, const struct pb_meta *meta, int32_t schema, int32_t k, char *why,
                           size_t n)
{
  char path[1024], want[65];
  pb_store__digest(meta, schema, k, path, sizeof path, want);
  hid_t obj = H5Oopen(file, path, H5P_DEFAULT);
  char *have = obj >= 0 && H5Aexists(obj, PB_STORE_DIGEST_ATTR) > 0 ? pb_h5_read_attr_str(obj, PB_STORE_DIGEST_ATTR)
                                                                       : NULL;
  if (obj >= 0) H5Oclose(obj);
  /* the root's and a source group's checksums are those of their attributes */
  int part = -1;
  if (k >= PB_DIGEST__ROOT) pb_digest__locate(meta, k, &part);
  const int attrs = k == 0 || part == 0;
  char what[1100];
  snprintf(what, sizeof what, "%s%s", attrs ? "the attributes of " : "", k == 0 ? "the root" : path + 1);
  int status = PB_OK;
  if (!have) {
    snprintf(why, n, "%s: no checksum (attribute " PB_STORE_DIGEST_ATTR ")", what);
    status = PB_FAIL;
  } else if (strcmp(have, want) != 0) {
    snprintf(why, n, "%s: values do not match their checksum (XXH3-128 %.32s, stored %.32s)", what, want, have);
    status = PB_FAIL;
  }
  free(have);
  return status;
}
