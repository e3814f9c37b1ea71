/* A byte buffer filled on one rank and read back on every rank
 * (include/pairbound/pack.h), and a store's metadata through it. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "pairbound/comm.h"
#include "pairbound/error.h"
#include "pairbound/pack.h"

/* MPI counts are int: a large buffer travels in pieces of at most this */
#define PB_PACK__PIECE ((size_t)1 << 30)

void pb_pack_put(struct pb_pack *p, const void *v, size_t n)
{
  if (n == 0) return;
  if (p->n + n > p->cap) {
    p->cap = p->n + n > 2 * p->cap ? p->n + n + 256 : 2 * p->cap;
    p->buf = pb_realloc(p->buf, p->cap);
  }
  memcpy(p->buf + p->n, v, n);
  p->n += n;
}

void pb_pack_i32(struct pb_pack *p, int32_t v) { pb_pack_put(p, &v, sizeof v); }
void pb_pack_i64(struct pb_pack *p, int64_t v) { pb_pack_put(p, &v, sizeof v); }

void pb_pack_str(struct pb_pack *p, const char *s)
{
  const int64_t len = s ? (int64_t)strlen(s) : -1;
  pb_pack_i64(p, len);
  if (s) pb_pack_put(p, s, (size_t)len);
}

void pb_pack_strs(struct pb_pack *p, char *const *v, int32_t n)
{
  for (int32_t i = 0; i < n; i++) pb_pack_str(p, v[i]);
}

void pb_pack_get(struct pb_pack *p, void *v, size_t n)
{
  if (p->short_read || n > p->n - p->at) {
    p->short_read = 1;
    memset(v, 0, n);
    return;
  }
  memcpy(v, p->buf + p->at, n);
  p->at += n;
}

int32_t pb_pack_get_i32(struct pb_pack *p)
{
  int32_t v;
  pb_pack_get(p, &v, sizeof v);
  return v;
}

int64_t pb_pack_get_i64(struct pb_pack *p)
{
  int64_t v;
  pb_pack_get(p, &v, sizeof v);
  return v;
}

char *pb_pack_get_str(struct pb_pack *p)
{
  const int64_t len = pb_pack_get_i64(p);
  if (len < 0 || (uint64_t)len > p->n - p->at) {
    if (len >= 0) p->short_read = 1;
    return NULL;
  }
  char *s = pb_malloc((size_t)len + 1);
  pb_pack_get(p, s, (size_t)len);
  s[len] = '\0';
  return s;
}

char **pb_pack_get_strs(struct pb_pack *p, int32_t n)
{
  char **v = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  for (int32_t i = 0; i < n; i++) {
    v[i] = pb_pack_get_str(p);
    if (!v[i]) v[i] = pb_strdup(""); /* a short buffer (refused by the caller): every entry still a string */
  }
  return v;
}

int64_t pb_pack_get_count(struct pb_pack *p, size_t unit)
{
  const int64_t n = pb_pack_get_i64(p);
  if (!p->short_read && n >= 0 && (uint64_t)n <= (p->n - p->at) / (unit ? unit : 1)) return n;
  p->short_read = 1;
  return 0;
}

void *pb_pack_get_block(struct pb_pack *p, size_t n)
{
  if (n == 0) return NULL;
  void *v = pb_malloc(n);
  pb_pack_get(p, v, n);
  return v;
}

int pb_pack_bcast(struct pb_pack *p, int root, MPI_Comm comm)
{
  int rank;
  MPI_Comm_rank(comm, &rank);
  int64_t n = (int64_t)p->n;
  int rc = pb_comm_bcast(&n, 1, MPI_INT64_T, root, comm);
  if (rc != MPI_SUCCESS) return rc;
  if (rank != root) {
    p->buf = pb_realloc(p->buf, n > 0 ? (size_t)n : 1);
    p->n = p->cap = (size_t)n;
  }
  for (size_t at = 0; at < (size_t)n && rc == MPI_SUCCESS; at += PB_PACK__PIECE) {
    const size_t piece = (size_t)n - at < PB_PACK__PIECE ? (size_t)n - at : PB_PACK__PIECE;
    rc = pb_comm_bcast(p->buf + at, (int)piece, MPI_BYTE, root, comm);
  }
  p->at = 0;
  p->short_read = 0;
  return rc;
}

void pb_pack_free(struct pb_pack *p)
{
  free(p->buf);
  memset(p, 0, sizeof *p);
}

/* ------------------------------------------------------------- metadata */

static void pb_pack__source(struct pb_pack *p, const struct pb_source *s)
{
  pb_pack_str(p, s->name);
  pb_pack_i32(p, s->n_classes);
  pb_pack_i32(p, s->n_images);
  pb_pack_strs(p, s->image_ids, s->n_images);
  pb_pack_put(p, s->labels, (size_t)s->n_images * sizeof *s->labels);
  pb_pack_put(p, s->split, (size_t)s->n_images * sizeof *s->split);
  pb_pack_i32(p, s->n_conditions);
  pb_pack_strs(p, s->conditions, s->n_conditions);
  pb_pack_i32(p, s->clean);
  pb_pack_i32(p, s->role);
  pb_pack_i32(p, s->role_declared);
  pb_pack_i32(p, s->role_fixed);
  pb_pack_str(p, s->role_of);
  pb_pack_str(p, s->seed_values);
  pb_pack_i32(p, s->lset_off != NULL);
  if (s->lset_off) {
    pb_pack_put(p, s->lset_off, (size_t)(s->n_images + 1) * sizeof *s->lset_off);
    pb_pack_put(p, s->lset_ids, (size_t)s->lset_off[s->n_images] * sizeof *s->lset_ids);
  }
}

static void pb_pack__get_source(struct pb_pack *p, struct pb_source *s)
{
  s->name = pb_pack_get_str(p);
  s->n_classes = pb_pack_get_i32(p);
  s->n_images = pb_pack_get_i32(p);
  if (s->n_images < 0 || (size_t)s->n_images > p->n - p->at) s->n_images = 0, p->short_read = 1;
  s->image_ids = pb_pack_get_strs(p, s->n_images);
  s->labels = pb_pack_get_block(p, (size_t)s->n_images * sizeof *s->labels);
  s->split = pb_pack_get_block(p, (size_t)s->n_images * sizeof *s->split);
  s->n_conditions = pb_pack_get_i32(p);
  if (s->n_conditions < 0 || (size_t)s->n_conditions > p->n - p->at) s->n_conditions = 0, p->short_read = 1;
  s->conditions = pb_pack_get_strs(p, s->n_conditions);
  s->clean = pb_pack_get_i32(p);
  s->role = pb_pack_get_i32(p);
  s->role_declared = pb_pack_get_i32(p);
  s->role_fixed = pb_pack_get_i32(p);
  s->role_of = pb_pack_get_str(p);
  s->seed_values = pb_pack_get_str(p);
  if (pb_pack_get_i32(p)) {
    s->lset_off = pb_pack_get_block(p, (size_t)(s->n_images + 1) * sizeof *s->lset_off);
    const int64_t n_ids = p->short_read ? 0 : s->lset_off[s->n_images];
    if (n_ids < 0 || (uint64_t)n_ids > p->n - p->at) p->short_read = 1;
    else s->lset_ids = pb_pack_get_block(p, (size_t)n_ids * sizeof *s->lset_ids);
  }
}

void pb_pack_meta(struct pb_pack *p, const struct pb_meta *meta)
{
  pb_pack_i32(p, meta->n_models);
  pb_pack_strs(p, meta->model_ids, meta->n_models);
  pb_pack_strs(p, meta->model_groups, meta->n_models);
  pb_pack_i32(p, meta->n_sources);
  for (int32_t s = 0; s < meta->n_sources; s++) pb_pack__source(p, &meta->sources[s]);
  pb_pack_i32(p, meta->topk);
  pb_pack_str(p, meta->provenance);
  pb_pack_i32(p, meta->schema_version);
  pb_pack_str(p, meta->seed_values);
  pb_pack_i32(p, meta->summaries);
}

int pb_pack_get_meta(struct pb_pack *p, struct pb_meta *meta)
{
  memset(meta, 0, sizeof *meta);
  meta->n_models = pb_pack_get_i32(p);
  if (meta->n_models < 0 || (size_t)meta->n_models > p->n - p->at) meta->n_models = 0, p->short_read = 1;
  meta->model_ids = pb_pack_get_strs(p, meta->n_models);
  meta->model_groups = pb_pack_get_strs(p, meta->n_models);
  const int32_t n_sources = pb_pack_get_i32(p);
  if (n_sources > 0 && (size_t)n_sources <= p->n - p->at) {
    meta->sources = pb_calloc((size_t)n_sources, sizeof *meta->sources);
    for (; meta->n_sources < n_sources && !p->short_read; meta->n_sources++)
      pb_pack__get_source(p, &meta->sources[meta->n_sources]);
  } else if (n_sources != 0) {
    p->short_read = 1;
  }
  meta->topk = pb_pack_get_i32(p);
  meta->provenance = pb_pack_get_str(p);
  meta->schema_version = pb_pack_get_i32(p);
  meta->seed_values = pb_pack_get_str(p);
  meta->summaries = pb_pack_get_i32(p);
  if (!p->short_read) return PB_OK;
  pb_meta_free(meta);
  pb_error_set("metadata from another rank: buffer too short");
  return PB_FAIL;
}
