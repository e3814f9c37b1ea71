/* A store's metadata in memory (include/pairbound/meta.h): lookups, counts,
 * roles and the checks every store passes, written or read.  Pure: no
 * MPI, no HDF5 (the file is src/store/). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/lsets.h"
#include "pairbound/meta.h"
#include "pairbound/parse.h"
#include "pairbound/strmap.h"

int32_t pb_meta_find_source(const struct pb_meta *meta, const char *name)
{
  for (int32_t s = 0; s < meta->n_sources; s++)
    if (strcmp(meta->sources[s].name, name) == 0) return s;
  return -1;
}

const char *pb_meta_source_names(const struct pb_meta *meta, char *buf, size_t n)
{
  size_t len = (size_t)snprintf(buf, n, "the store's sources:");
  for (int32_t s = 0; s < meta->n_sources && len < n; s++)
    len += (size_t)snprintf(buf + len, n - len, "%s %s", s ? "," : "", meta->sources[s].name);
  if (len >= n && n > 4) memcpy(buf + n - 4, "...", 4);
  return buf;
}

int pb_meta_is_probe(const struct pb_source *src)
{
  return src->role == PB_ROLE_NATURAL || src->role == PB_ROLE_EXTRA;
}

int32_t pb_meta_target(const struct pb_meta *meta, int32_t s)
{
  while (s < meta->n_sources && pb_meta_is_probe(&meta->sources[s])) s++;
  return s;
}

int pb_meta_role_parse(struct pb_source *src, const char *text)
{
  int64_t fixed = 0;
  free(src->role_of);
  src->role_of = NULL;
  src->role_fixed = 0;
  if (!strcmp(text, "synthetic")) src->role = PB_ROLE_SYNTHETIC;
  else if (!strcmp(text, "real")) src->role = PB_ROLE_REAL;
  else if (!strcmp(text, "natural")) src->role = PB_ROLE_NATURAL;
  else if (!strncmp(text, "natural:", 8) && pb_parse_int(text + 8, 0, INT32_MAX, &fixed) == PB_OK) {
    src->role = PB_ROLE_NATURAL;
    src->role_fixed = (int32_t)fixed;
  } else if (!strncmp(text, "extra:", 6) && text[6]) {
    src->role = PB_ROLE_EXTRA;
    src->role_of = pb_strdup(text + 6);
  } else {
    pb_error_set("source %s: unknown role '%s' (synthetic, real, natural[:N] or extra:SRC; docs/store.md, \"Roles\")",
                 src->name, text);
    return PB_FAIL;
  }
  src->role_declared = 1;
  return PB_OK;
}

void pb_meta_role_text(const struct pb_source *src, char *buf, size_t n)
{
  switch (src->role) {
  case PB_ROLE_SYNTHETIC: snprintf(buf, n, "synthetic"); break;
  case PB_ROLE_NATURAL:
    if (src->role_fixed) snprintf(buf, n, "natural:%d", src->role_fixed);
    else snprintf(buf, n, "natural");
    break;
  case PB_ROLE_EXTRA: snprintf(buf, n, "extra:%s", src->role_of ? src->role_of : ""); break;
  default: snprintf(buf, n, "real"); break;
  }
}

/* Whether a probe source answers for some images of a source with cells: a
 * probe role (no cells of its own) on a source that shares no image with one
 * would take its records out of every analysis and probe nothing, which is a
 * role given to the wrong source. */
static int pb_meta__probes_something(const struct pb_meta *meta, const struct pb_source *src)
{
  for (int32_t s = pb_meta_target(meta, 0); s < meta->n_sources; s = pb_meta_target(meta, s + 1))
    if (pb_meta_shared_images(src, &meta->sources[s]) > 0) return 1;
  return 0;
}

/* What a source's role asks of the store: an extra source adds candidates to
 * another source that is a probe suite (synthetic) of the store, on its
 * images; a natural source's fixed set is at most its perturbed conditions,
 * and it probes images of a source with cells. */
static int pb_meta__check_role(const struct pb_meta *meta, const struct pb_source *src)
{
  if (src->role < PB_ROLE_REAL || src->role > PB_ROLE_EXTRA) {
    pb_error_set("source %s: bad role code %d", src->name, src->role);
    return PB_FAIL;
  }
  if (src->role == PB_ROLE_NATURAL && (src->role_fixed < 0 || src->role_fixed > src->n_conditions - 1)) {
    pb_error_set("source %s: role natural:%d, but it has %d perturbed conditions", src->name, src->role_fixed,
                 src->n_conditions - 1);
    return PB_FAIL;
  }
  if (src->role == PB_ROLE_NATURAL && !pb_meta__probes_something(meta, src)) {
    char role[64];
    pb_meta_role_text(src, role, sizeof role);
    pb_error_set("source %s: role %s, but it shares no image with a source that has cells (a probe source has "
                 "none: its records answer for other sources' images)", src->name, role);
    return PB_FAIL;
  }
  if (src->role != PB_ROLE_EXTRA) return PB_OK;
  const int32_t of = src->role_of ? pb_meta_find_source(meta, src->role_of) : -1;
  if (of < 0) {
    pb_error_set("source %s: role extra:%s names no source of the store", src->name, src->role_of ? src->role_of : "");
    return PB_FAIL;
  }
  if (meta->sources[of].role != PB_ROLE_SYNTHETIC) {
    pb_error_set("source %s: role extra:%s, but %s is not a synthetic probe source (its role: %s)", src->name,
                 src->role_of, src->role_of, pb_meta_is_probe(&meta->sources[of]) ? "a probe itself" : "real");
    return PB_FAIL;
  }
  if (pb_meta_shared_images(src, &meta->sources[of]) == 0) {
    pb_error_set("source %s: role extra:%s, but it shares no image with %s (its conditions are further candidates "
                 "on %s's images)", src->name, src->role_of, src->role_of, src->role_of);
    return PB_FAIL;
  }
  return PB_OK;
}

int32_t pb_meta_model_groups(const struct pb_meta *meta, int32_t *group)
{
  int32_t ng = 0;
  for (int32_t m = 0; m < meta->n_models; m++) {
    group[m] = -1;
    for (int32_t j = 0; j < m && group[m] < 0; j++)
      if (strcmp(meta->model_groups[j], meta->model_groups[m]) == 0) group[m] = group[j];
    if (group[m] < 0) group[m] = ng++;
  }
  return ng;
}

int64_t pb_meta_cells(const struct pb_meta *meta)
{
  int64_t cells = 0;
  for (int32_t s = pb_meta_target(meta, 0); s < meta->n_sources; s = pb_meta_target(meta, s + 1))
    cells += (int64_t)meta->n_models * (meta->sources[s].n_conditions - 1);
  return cells;
}

int64_t pb_meta_paired_records(const struct pb_meta *meta)
{
  int64_t recs = 0;
  for (int32_t s = pb_meta_target(meta, 0); s < meta->n_sources; s = pb_meta_target(meta, s + 1)) {
    const struct pb_source *src = &meta->sources[s];
    int64_t n_eval = 0;
    for (int32_t i = 0; i < src->n_images; i++) n_eval += src->split[i] == PB_SPLIT_EVAL;
    recs += (int64_t)meta->n_models * (src->n_conditions - 1) * n_eval;
  }
  return recs;
}

/* A name must be usable as an HDF5 link name and as a CSV field. */
static int pb_meta__check_name(const char *what, const char *name)
{
  if (name[0] == '\0') { pb_error_set("empty %s name", what); return PB_FAIL; }
  if (strcmp(name, ".") == 0 || strpbrk(name, "/,\"\n\r")) {
    pb_error_set("%s name '%s' contains a character that is not allowed ('/', ',', '\"' or a newline)", what, name);
    return PB_FAIL;
  }
  return PB_OK;
}

/* Names that identify something (model ids, source names, a source's condition names and image ids) are
 * unique: PB_FAIL naming the first repeated one and where it occurs (@p where: "" or "source S: "). */
static int pb_meta__unique(const char *where, const char *what, char *const *v, int32_t n)
{
  struct pb_strmap m;
  pb_strmap_init(&m);
  int status = PB_OK;
  for (int32_t i = 0; i < n && status == PB_OK; i++) {
    const int32_t first = pb_strmap_put(&m, v[i], i);
    if (first == i) continue;
    if (!strcmp(what, "condition") && !strcmp(v[i], PB_CLEAN_CONDITION))
      pb_error_set("%sa second condition named '%s' (conditions %d and %d): a source has exactly one", where,
                   v[i], (int)first, (int)i);
    else
      pb_error_set("%s%s '%s' twice (%ss %d and %d)", where, what, v[i], what, (int)first, (int)i);
    status = PB_FAIL;
  }
  pb_strmap_free(&m);
  return status;
}

/* The checks of one source's own metadata (its role is pb_meta__check_role's). */
static int pb_meta__check_source(const struct pb_source *src)
{
  if (pb_meta__check_name("source", src->name)) return PB_FAIL;
  if (src->n_images <= 0 || src->n_conditions <= 0 || src->n_classes <= 0) {
    pb_error_set("source %s: needs images, conditions and classes", src->name);
    return PB_FAIL;
  }
  if (src->n_classes > PB_MAX_CLASSES) {
    pb_error_set("source %s: %d classes, more than the limit of %d per source", src->name, src->n_classes,
                 PB_MAX_CLASSES);
    return PB_FAIL;
  }
  if (src->clean < 0 || src->clean >= src->n_conditions ||
      strcmp(src->conditions[src->clean], PB_CLEAN_CONDITION) != 0) {
    pb_error_set("source %s has no '%s' condition", src->name, PB_CLEAN_CONDITION);
    return PB_FAIL;
  }
  for (int32_t c = 0; c < src->n_conditions; c++)
    if (pb_meta__check_name("condition", src->conditions[c])) return PB_FAIL;
  char where[600];
  snprintf(where, sizeof where, "source %s: ", src->name);
  if (pb_meta__unique(where, "condition", src->conditions, src->n_conditions)) return PB_FAIL;
  for (int32_t i = 0; i < src->n_images; i++) {
    if (pb_meta__check_name("image", src->image_ids[i])) return PB_FAIL;
    if (src->labels[i] < 0 || src->labels[i] >= src->n_classes) {
      pb_error_set("source %s image %s: label %d outside [0, %d)", src->name, src->image_ids[i], src->labels[i],
                   src->n_classes);
      return PB_FAIL;
    }
    if (src->split[i] != PB_SPLIT_DEV && src->split[i] != PB_SPLIT_EVAL) {
      pb_error_set("source %s image %s: bad split code %d", src->name, src->image_ids[i], src->split[i]);
      return PB_FAIL;
    }
  }
  if (pb_lsets_validate(src)) return PB_FAIL;
  return pb_meta__unique(where, "image id", src->image_ids, src->n_images);
}

int pb_meta_validate(const struct pb_meta *meta)
{
  if (meta->n_models <= 0) { pb_error_set("store has no models"); return PB_FAIL; }
  if (meta->n_sources <= 0) { pb_error_set("store has no sources"); return PB_FAIL; }
  if (meta->topk < 0) { pb_error_set("negative top-k length"); return PB_FAIL; }
  for (int32_t m = 0; m < meta->n_models; m++)
    if (pb_meta__check_name("model", meta->model_ids[m]) || pb_meta__check_name("group", meta->model_groups[m]))
      return PB_FAIL;
  if (pb_meta__unique("", "model id", meta->model_ids, meta->n_models)) return PB_FAIL;
  char **names = pb_malloc((size_t)meta->n_sources * sizeof *names);
  for (int32_t s = 0; s < meta->n_sources; s++) names[s] = meta->sources[s].name;
  const int dup = pb_meta__unique("", "source name", names, meta->n_sources);
  free(names);
  if (dup) return PB_FAIL;
  for (int32_t s = 0; s < meta->n_sources; s++)
    if (pb_meta__check_source(&meta->sources[s]) || pb_meta__check_role(meta, &meta->sources[s])) return PB_FAIL;
  return PB_OK;
}

static void pb__free_strings(char **v, int32_t n)
{
  if (!v) return;
  for (int32_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

void pb_meta_free(struct pb_meta *meta)
{
  if (!meta) return;
  pb__free_strings(meta->model_ids, meta->n_models);
  pb__free_strings(meta->model_groups, meta->n_models);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    struct pb_source *src = &meta->sources[s];
    free(src->name);
    pb__free_strings(src->image_ids, src->n_images);
    free(src->labels);
    free(src->split);
    pb__free_strings(src->conditions, src->n_conditions);
    free(src->role_of);
    free(src->seed_values);
    free(src->lset_off);
    free(src->lset_ids);
  }
  free(meta->sources);
  free(meta->provenance);
  free(meta->seed_values);
  memset(meta, 0, sizeof *meta);
}

int pb_meta_validate_roles(const struct pb_meta *meta)
{
  for (int32_t s = 0; s < meta->n_sources; s++)
    if (pb_meta__check_role(meta, &meta->sources[s])) return PB_FAIL;
  return PB_OK;
}

/* ------------------------------------------------------------ defaults from roles */

int32_t pb_meta_role_sources(const struct pb_meta *meta, int role, int32_t *out)
{
  int32_t n = 0;
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *src = &meta->sources[s];
    if (src->role == role && !pb_meta_is_probe(src) && src->n_conditions > 1) out[n++] = s;
  }
  return n;
}

int64_t pb_meta_shared_images(const struct pb_source *a, const struct pb_source *b)
{
  struct pb_strmap m;
  pb_strmap_init(&m);
  for (int32_t i = 0; i < a->n_images; i++) pb_strmap_put(&m, a->image_ids[i], i);
  int64_t n = 0;
  for (int32_t i = 0; i < b->n_images; i++) n += pb_strmap_get(&m, b->image_ids[i]) >= 0;
  pb_strmap_free(&m);
  return n;
}

int32_t pb_meta_role_probe(const struct pb_meta *meta)
{
  int32_t best = -1;
  int64_t most = 0;
  for (int32_t p = 0; p < meta->n_sources; p++) {
    const struct pb_source *P = &meta->sources[p];
    if (P->role != PB_ROLE_SYNTHETIC || P->n_conditions < 2) continue;
    int64_t shared = 0;
    for (int32_t s = 0; s < meta->n_sources; s++)
      if (meta->sources[s].role == PB_ROLE_REAL && !pb_meta_is_probe(&meta->sources[s]))
        shared += pb_meta_shared_images(P, &meta->sources[s]);
    if (shared > most) best = p, most = shared;
  }
  return best;
}

int32_t pb_meta_role_targets(const struct pb_meta *meta, int32_t probe, int32_t *out)
{
  int32_t n = 0;
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *src = &meta->sources[s];
    if (src->role == PB_ROLE_REAL && !pb_meta_is_probe(src) && src->n_conditions > 1 &&
        (probe < 0 || pb_meta_shared_images(&meta->sources[probe], src) > 0))
      out[n++] = s;
  }
  return n;
}

double pb_meta_seed_value(const struct pb_source *src, const char *key)
{
  return pb_meta_seed_find(src->seed_values, key);
}

double pb_meta_seed_find(const char *values, const char *key)
{
  const size_t n = strlen(key);
  for (const char *p = values; p && *p;) {
    p += strspn(p, " ,");
    if (!strncmp(p, key, n) && p[n] == ':') {
      char buf[64];
      snprintf(buf, sizeof buf, "%.*s", (int)strcspn(p + n + 1, ","), p + n + 1);
      double x;
      return pb_parse_real(buf, &x) == PB_OK ? x : NAN;
    }
    p += strcspn(p, ",");
  }
  return NAN;
}

void pb_meta_infer_roles(struct pb_meta *meta)
{
  for (int32_t s = 0; s < meta->n_sources; s++)
    if (!meta->sources[s].role_declared) meta->sources[s].role = PB_ROLE_REAL;
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *src = &meta->sources[s];
    const int32_t of = src->role == PB_ROLE_EXTRA && src->role_of ? pb_meta_find_source(meta, src->role_of) : -1;
    if (of >= 0 && !meta->sources[of].role_declared) meta->sources[of].role = PB_ROLE_SYNTHETIC;
  }
}
