/* `pairbound ingest`: the optional column `labels`, each image's set of
 * acceptable labels (docs/csv.md, "Label sets").  Pass 1's dictionary reader
 * hands every row here after its image is known: the first row of an image
 * gives its set (appended to the source's CSR arrays, as images are added in
 * order), every later row of it must give the same set.  Pass 1 in parts
 * (ingest_dict.c) parses the sets alone and puts them when it merges. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/lsets.h"
#include "ingest_internal.h"

int pb_ingest__lsets_header(struct pb_ingest__ctx *ctx, const char *name, int j, int64_t line)
{
  if (strcmp(name, PB_INGEST_LSETS_COL) != 0) return 0;
  if (ctx->file->labels_col >= 0) {
    pb_error_set("%s:%lld: duplicate column '%s'", ctx->path, (long long)line, name);
    return -1;
  }
  ctx->file->labels_col = j;
  return 1;
}

/* Room for image @p i's set of @p n ids in the source's arrays (growing by doubling). */
static void pb_ingest__lsets_room(struct pb_source *src, struct pb_ingest__src *x, int32_t i, int32_t n)
{
  if (i + 2 > x->lset_cap_off) {
    x->lset_cap_off = 2 * (int64_t)(i + 2) + 64;
    src->lset_off = pb_realloc(src->lset_off, (size_t)x->lset_cap_off * sizeof *src->lset_off);
    if (i == 0) src->lset_off[0] = 0;
  }
  const int64_t need = src->lset_off[i] + n;
  if (need > x->lset_cap_ids) {
    x->lset_cap_ids = 2 * need + 64;
    src->lset_ids = pb_realloc(src->lset_ids, (size_t)x->lset_cap_ids * sizeof *src->lset_ids);
  }
}

static int pb_ingest__lsets_conflict(struct pb_ingest__ctx *ctx, const struct pb_source *src, int32_t s, int32_t i,
                                     const int32_t *ids, int32_t n, int64_t line)
{
  const struct pb_ingest__src *x = &ctx->src[s];
  int32_t m;
  const int32_t *had = pb_lsets_of(src, i, &m);
  char a[256], b[256], at[1100];
  if (pb_lsets_text(ids, n, a, sizeof a) >= sizeof a) strcpy(a + sizeof a - 4, "...");
  if (pb_lsets_text(had, m, b, sizeof b) >= sizeof b) strcpy(b + sizeof b - 4, "...");
  pb_error_set("%s:%lld: image %s of source %s has label set '%s' here but '%s' %s", ctx->path, (long long)line,
               src->image_ids[i], src->name, a, b,
               pb_ingest__where(ctx, x->image_file[i], x->image_line[i], at, sizeof at));
  return PB_FAIL;
}

int pb_ingest__lsets_ids(struct pb_ingest__ctx *ctx, char **f, int64_t line, int32_t given, const char *source,
                         int32_t *n, int32_t *max_class)
{
  const char *text = ctx->file->labels_col >= 0 ? f[ctx->file->labels_col] : "";
  *n = 0;
  if (!ctx->lset_ids) ctx->lset_ids = pb_malloc(PB_INGEST_LSETS_MAX * sizeof *ctx->lset_ids);
  if (pb_lsets_parse(text, ctx->lset_ids, PB_INGEST_LSETS_MAX, n) != PB_OK) {
    char why[600];
    snprintf(why, sizeof why, "%s", pb_error_message());
    pb_error_set("%s:%lld: column '%s': %s", ctx->path, (long long)line, PB_INGEST_LSETS_COL, why);
    return PB_FAIL;
  }
  for (int32_t k = 0; k < *n; k++) {
    const int32_t c = ctx->lset_ids[k];
    if (given > 0 && c >= given) {
      pb_error_set("%s:%lld: column '%s': class %d outside [0, %d) of source %s", ctx->path, (long long)line,
                   PB_INGEST_LSETS_COL, c, given, source);
      return PB_FAIL;
    }
    if (c > *max_class) *max_class = c;
  }
  return PB_OK;
}

int pb_ingest__lsets_put(struct pb_ingest__ctx *ctx, int32_t s, int32_t i, const int32_t *ids, int32_t n,
                         int64_t line)
{
  struct pb_source *src = &ctx->meta->sources[s];
  struct pb_ingest__src *x = &ctx->src[s];
  if (i < x->lset_images) { /* seen before: the same set */
    int32_t m;
    const int32_t *had = pb_lsets_of(src, i, &m);
    if (m != n || (n > 0 && memcmp(had, ids, (size_t)n * sizeof *had) != 0))
      return pb_ingest__lsets_conflict(ctx, src, s, i, ids, n, line);
    return PB_OK;
  }
  pb_ingest__lsets_room(src, x, i, n);
  if (n > 0) /* no ids yet: lset_ids may still be NULL, which memcpy must not get even for 0 bytes */
    memcpy(src->lset_ids + src->lset_off[i], ids, (size_t)n * sizeof *src->lset_ids);
  src->lset_off[i + 1] = src->lset_off[i] + n;
  x->lset_images = i + 1;
  x->lset_any |= n > 0;
  return PB_OK;
}

int pb_ingest__lsets_row(struct pb_ingest__ctx *ctx, int32_t s, char **f, int64_t line)
{
  struct pb_ingest__src *x = &ctx->src[s];
  int32_t n;
  if (pb_ingest__lsets_ids(ctx, f, line, x->given_classes, ctx->meta->sources[s].name, &n, &x->max_class))
    return PB_FAIL;
  /* the row's image: pb_ingest__add_image has just looked it up or added it */
  return pb_ingest__lsets_put(ctx, s, x->hint_image, ctx->lset_ids, n, line);
}

void pb_ingest__lsets_seed(struct pb_ingest__ctx *ctx, int32_t s, const struct pb_source *old)
{
  struct pb_source *src = &ctx->meta->sources[s];
  struct pb_ingest__src *x = &ctx->src[s];
  for (int32_t i = 0; i < old->n_images; i++) {
    int32_t n = 0;
    const int32_t *ids = old->lset_off ? pb_lsets_of(old, i, &n) : NULL;
    pb_ingest__lsets_room(src, x, i, n);
    if (n > 0) memcpy(src->lset_ids + src->lset_off[i], ids, (size_t)n * sizeof *ids);
    src->lset_off[i + 1] = src->lset_off[i] + n;
  }
  x->lset_images = old->n_images;
  x->lset_any = old->lset_off != NULL;
}

void pb_ingest__lsets_finish(struct pb_ingest__ctx *ctx)
{
  for (int32_t s = 0; s < ctx->meta->n_sources; s++) {
    struct pb_source *src = &ctx->meta->sources[s];
    if (ctx->src[s].lset_any) continue;
    /* a source whose every set is empty holds none (docs/csv.md) */
    free(src->lset_off);
    free(src->lset_ids);
    src->lset_off = NULL;
    src->lset_ids = NULL;
  }
}
