/* `pairbound ingest`: validate prediction CSV files and write them as a
 * record store.
 *
 * The files are read twice so that memory stays bounded by the dictionaries,
 * not by the records: pass 1 (here) validates every row of every file in
 * order and builds the dictionaries (sources, models, conditions, images, in
 * order of first appearance) and, per file, where each (source, model) lies;
 * pass 2 (ingest_window.c) fills the store window by window.  The reading
 * itself is in src/ingest/ingest_read.c.  Format and messages: docs/csv.md. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "pairbound/error.h"
#include "pairbound/ingest.h"
#include "pairbound/options.h"
#include "pairbound/output.h"
#include "pairbound/parse.h"
#include "pairbound/signals.h"
#include "pairbound/store.h"
#include "pairbound/strmap.h"
#include "ingest_internal.h"
#include "ingest_number.h"

/* Tolerance of the probability consistency checks (ptrue <= smax, ...). */
#define PB_INGEST_TOL 1e-6

static const char *const pb_ingest__colname[PB_N_COLS] = {
  "model", "group", "source", "condition", "image", "label", "split", "pred", "smax", "ptrue"};

/* ------------------------------------------------------------------- header */

/* "top<k>_class" / "top<k>_prob" with k >= 1 written without leading zeros:
 * returns k and sets *is_prob, or 0 when the name is something else. */
static long pb_ingest__topk_column(const char *name, int *is_prob)
{
  if (strncmp(name, "top", 3) != 0 || name[3] < '1' || name[3] > '9') return 0;
  const char *end;
  int64_t k;
  if (pb_parse_int_prefix(name + 3, 1, INT32_MAX, &k, &end) != PB_OK) return 0;
  if (strcmp(end, "_class") == 0) *is_prob = 0;
  else if (strcmp(end, "_prob") == 0) *is_prob = 1;
  else return 0;
  return k;
}

/* The store's top-k length, the scratch of a row's lists and their column
 * names (for messages; formatted once, not per row). */
void pb_ingest__topk_alloc(struct pb_ingest__ctx *ctx, int32_t K)
{
  ctx->meta->topk = K;
  ctx->tk_class = pb_malloc((size_t)(K + 1) * sizeof *ctx->tk_class);
  ctx->tk_prob = pb_malloc((size_t)(K + 1) * sizeof *ctx->tk_prob);
  ctx->tk_name = pb_malloc((size_t)(K + 1) * sizeof *ctx->tk_name);
  for (int32_t k = 0; k < K; k++) {
    snprintf(ctx->tk_name[k][0], sizeof ctx->tk_name[k][0], "top%d_class", k + 1);
    snprintf(ctx->tk_name[k][1], sizeof ctx->tk_name[k][1], "top%d_prob", k + 1);
  }
}

static int pb_ingest__header(struct pb_ingest__ctx *ctx, char **f, int n, int64_t line)
{
  const char *path = ctx->path;
  ctx->file->n_fields = n;
  for (int c = 0; c < PB_N_COLS; c++) ctx->file->col[c] = -1;
  ctx->file->sum_col[0] = ctx->file->sum_col[1] = -1;
  ctx->file->labels_col = -1;
  /* at most n top-k pairs can be complete, so k > n is certainly incomplete */
  ctx->file->topk_class_col = pb_malloc((size_t)(n + 1) * sizeof(int));
  ctx->file->topk_prob_col = pb_malloc((size_t)(n + 1) * sizeof(int));
  for (int k = 0; k <= n; k++) ctx->file->topk_class_col[k] = ctx->file->topk_prob_col[k] = -1;
  long kmax = 0;
  for (int j = 0; j < n; j++) {
    int c, is_prob, *slot = NULL, ls = pb_ingest__lsets_header(ctx, f[j], j, line);
    if (ls) {
      if (ls < 0) return PB_FAIL;
      continue;
    }
    for (c = 0; c < PB_N_COLS && strcmp(f[j], pb_ingest__colname[c]) != 0; c++) continue;
    int *sum = c < PB_N_COLS ? NULL : pb_ingest__summary_slot(ctx->file, f[j]);
    long k = c < PB_N_COLS || sum ? 0 : pb_ingest__topk_column(f[j], &is_prob);
    if (c < PB_N_COLS) slot = &ctx->file->col[c];
    else if (sum) slot = sum;
    else if (k > 0 && k <= n) slot = is_prob ? &ctx->file->topk_prob_col[k - 1] : &ctx->file->topk_class_col[k - 1];
    else if (k == 0) {
      pb_error_set("%s:%lld: unknown column '%s'", path, (long long)line, f[j]);
      return PB_FAIL;
    }
    if (slot && *slot >= 0) {
      pb_error_set("%s:%lld: duplicate column '%s'", path, (long long)line, f[j]);
      return PB_FAIL;
    }
    if (slot) *slot = j;
    if (k > kmax) kmax = k;
  }
  for (int c = 0; c < PB_N_COLS; c++)
    if (ctx->file->col[c] < 0) {
      pb_error_set("%s:%lld: missing column '%s'", path, (long long)line, pb_ingest__colname[c]);
      return PB_FAIL;
    }
  for (long k = 1; k <= kmax; k++) {
    int has_class = k <= n && ctx->file->topk_class_col[k - 1] >= 0;
    int has_prob = k <= n && ctx->file->topk_prob_col[k - 1] >= 0;
    if (!has_class || !has_prob) {
      pb_error_set("%s:%lld: missing column 'top%ld_%s'", path, (long long)line, k, has_class ? "prob" : "class");
      return PB_FAIL;
    }
  }
  if (pb_ingest__summary_header(ctx, line, ctx->tk_class != NULL)) return PB_FAIL;
  if (ctx->tk_class && kmax != ctx->meta->topk) { /* an earlier file set the store's topk */
    pb_error_set("%s:%lld: %ld top-k column pairs, but %s has %d: every file needs the same top-k columns", path,
                 (long long)line, kmax, ctx->store_name ? ctx->store_name : ctx->files[0].name, ctx->meta->topk);
    return PB_FAIL;
  }
  if (ctx->tk_class) return PB_OK;
  pb_ingest__topk_alloc(ctx, (int32_t)kmax);
  return PB_OK;
}

/* ------------------------------------------------------------------- fields */

/* Names become HDF5 link names and CSV fields (same rule as pb_meta_validate). */
static int pb_ingest__name(const struct pb_ingest__ctx *ctx, int64_t line, int col, const char *s)
{
  const char *what = NULL;
  if (s[0] == '\0') {
    pb_error_set("%s:%lld: column '%s': empty name", ctx->path, (long long)line, pb_ingest__colname[col]);
    return PB_FAIL;
  }
  if (strcmp(s, ".") == 0) {
    pb_error_set("%s:%lld: column '%s': name '.' is not allowed", ctx->path, (long long)line,
                 pb_ingest__colname[col]);
    return PB_FAIL;
  }
  const char *bad = strpbrk(s, "/,\"\n\r");
  if (!bad) return PB_OK;
  switch (*bad) {
  case '/': what = "'/'"; break;
  case ',': what = "','"; break;
  case '"': what = "'\"'"; break;
  case '\n': what = "a newline"; break;
  default: what = "a carriage return"; break;
  }
  pb_error_set("%s:%lld: column '%s': name '%s' contains %s, which is not allowed", ctx->path, (long long)line,
               pb_ingest__colname[col], s, what);
  return PB_FAIL;
}

static int pb_ingest__int(const struct pb_ingest__ctx *ctx, int64_t line, const char *col, const char *s,
                          int32_t *out)
{
  /* one to four digits, nearly every class: read here as pb_parse_csv_int reads them, without its call (seven
   * classes a row, twice) */
  if ((unsigned)(s[0] - '0') < 10) {
    int32_t d = s[0] - '0';
    int k = 1;
    for (; k < 4 && (unsigned)(s[k] - '0') < 10; k++) d = 10 * d + (s[k] - '0');
    if (s[k] == '\0') {
      *out = d;
      return PB_OK;
    }
  }
  int64_t v;
  const int status = pb_parse_csv_int(s, INT32_MIN, INT32_MAX, &v);
  if (status == PB_FAIL) {
    pb_error_set("%s:%lld: column '%s': not an integer: '%s'", ctx->path, (long long)line, col, s);
    return PB_FAIL;
  }
  if (status == PB_PARSE_RANGE) {
    pb_error_set("%s:%lld: column '%s': integer out of range: '%s'", ctx->path, (long long)line, col, s);
    return PB_FAIL;
  }
  *out = (int32_t)v;
  return PB_OK;
}

/* pb_ingest__class for every class but the common one (its messages). */
static int pb_ingest__class_slow(const struct pb_ingest__ctx *ctx, int64_t line, const char *col, const char *s,
                                 int32_t n_classes, const char *source, int32_t *out)
{
  if (pb_ingest__int(ctx, line, col, s, out)) return PB_FAIL;
  if (*out < 0) {
    pb_error_set("%s:%lld: column '%s': negative class %d", ctx->path, (long long)line, col, *out);
    return PB_FAIL;
  }
  if (*out >= PB_MAX_CLASSES) {
    pb_error_set("%s:%lld: column '%s': class %d of source %s exceeds the limit of %d classes per source "
                 "(classes are 0, 1, ..., n-1; docs/csv.md)",
                 ctx->path, (long long)line, col, *out, source, PB_MAX_CLASSES);
    return PB_FAIL;
  }
  if (n_classes > 0 && *out >= n_classes) {
    pb_error_set("%s:%lld: column '%s': class %d outside [0, %d) of source %s", ctx->path, (long long)line, col,
                 *out, n_classes, source);
    return PB_FAIL;
  }
  return PB_OK;
}

_Static_assert(PB_MAX_CLASSES > 999, "the inline path of pb_ingest__class reads classes below 1000 unchecked");

/* A class index: non-negative, and below n_classes when that is known.  The common one, one to three digits
 * within the limits, is read here, inline (seven a row, in each pass); anything else by pb_ingest__class_slow. */
static inline int pb_ingest__class(const struct pb_ingest__ctx *ctx, int64_t line, const char *col, const char *s,
                                   int32_t n_classes, const char *source, int32_t *out)
{
  const unsigned d0 = (unsigned)(s[0] - '0');
  if (d0 < 10) {
    int32_t d = (int32_t)d0;
    int k = 1;
    for (; k < 3 && (unsigned)(s[k] - '0') < 10; k++) d = 10 * d + (s[k] - '0');
    if (s[k] == '\0' && (n_classes <= 0 || d < n_classes)) { /* below 1000 < PB_MAX_CLASSES */
      *out = d;
      return PB_OK;
    }
  }
  return pb_ingest__class_slow(ctx, line, col, s, n_classes, source, out);
}

/* Names of a row, checked in column order when @p check. */
static int pb_ingest__names(const struct pb_ingest__ctx *ctx, char **f, int n, int64_t line,
                            struct pb_ingest__rec *rec, int check)
{
  if (n != ctx->file->n_fields) {
    pb_error_set("%s:%lld: expected %d fields, found %d", ctx->path, (long long)line, ctx->file->n_fields, n);
    return PB_FAIL;
  }
  for (int c = PB_COL_MODEL; c <= PB_COL_IMAGE; c++) {
    rec->name[c] = f[ctx->file->col[c]];
    if (check && pb_ingest__name(ctx, line, c, rec->name[c])) return PB_FAIL;
  }
  return PB_OK;
}

/* Numbers of a row and their consistency (top-k into ctx->tk_*). */
static int pb_ingest__values(struct pb_ingest__ctx *ctx, char **f, int64_t line, int32_t n_classes,
                             struct pb_ingest__rec *rec)
{
  const char *path = ctx->path, *source = rec->name[PB_COL_SOURCE];
  const char *smax_s = f[ctx->file->col[PB_COL_SMAX]], *ptrue_s = f[ctx->file->col[PB_COL_PTRUE]];
  const char *split = f[ctx->file->col[PB_COL_SPLIT]];
  int32_t K = ctx->meta->topk;
  if (pb_ingest__class(ctx, line, "label", f[ctx->file->col[PB_COL_LABEL]], n_classes, source, &rec->label))
    return PB_FAIL;
  /* byte by byte up to the first that differs: no call per row */
  if (split[0] == 'd' && split[1] == 'e' && split[2] == 'v' && split[3] == '\0') rec->split = PB_SPLIT_DEV;
  else if (split[0] == 'e' && split[1] == 'v' && split[2] == 'a' && split[3] == 'l' && split[4] == '\0')
    rec->split = PB_SPLIT_EVAL;
  else {
    pb_error_set("%s:%lld: column 'split': expected 'dev' or 'eval', found '%s'", path, (long long)line, split);
    return PB_FAIL;
  }
  if (pb_ingest__class(ctx, line, "pred", f[ctx->file->col[PB_COL_PRED]], n_classes, source, &rec->pred))
    return PB_FAIL;
  if (ctx->ints_only) { /* the classes alone (pb_ingest__pass1_parts, pb_ingest__dict_row) */
    for (int32_t k = 0; k < K; k++)
      if (pb_ingest__class(ctx, line, ctx->tk_name[k][0], f[ctx->file->topk_class_col[k]], n_classes, source,
                           &ctx->tk_class[k]))
        return PB_FAIL;
    return PB_OK;
  }
  if (pb_ingest__number(ctx, line, "smax", smax_s, 1, &rec->smax) ||
      pb_ingest__number(ctx, line, "ptrue", ptrue_s, 1, &rec->ptrue))
    return PB_FAIL;
  for (int32_t k = 0; k < K; k++)
    if (pb_ingest__class(ctx, line, ctx->tk_name[k][0], f[ctx->file->topk_class_col[k]], n_classes, source,
                         &ctx->tk_class[k]) ||
        pb_ingest__number(ctx, line, ctx->tk_name[k][1], f[ctx->file->topk_prob_col[k]], 1, &ctx->tk_prob[k]))
      return PB_FAIL;
  /* S is the largest probability and M the true class's, so M <= S, and M = S
   * when the prediction is correct (seed 000 Section 2). */
  if ((double)rec->ptrue > (double)rec->smax + PB_INGEST_TOL) {
    pb_error_set("%s:%lld: ptrue %s exceeds smax %s", path, (long long)line, ptrue_s, smax_s);
    return PB_FAIL;
  }
  if (rec->pred == rec->label && fabs((double)rec->ptrue - (double)rec->smax) > PB_INGEST_TOL) {
    pb_error_set("%s:%lld: pred equals label %d but ptrue %s differs from smax %s", path, (long long)line,
                 rec->label, ptrue_s, smax_s);
    return PB_FAIL;
  }
  if (K == 0) return pb_ingest__summary_values(ctx, f, line, n_classes, rec);
  /* the top-k list is the head of the same probability vector */
  if (ctx->tk_class[0] != rec->pred) {
    pb_error_set("%s:%lld: top1_class %d differs from pred %d", path, (long long)line, ctx->tk_class[0], rec->pred);
    return PB_FAIL;
  }
  if (fabs((double)ctx->tk_prob[0] - (double)rec->smax) > PB_INGEST_TOL) {
    pb_error_set("%s:%lld: top1_prob %s differs from smax %s", path, (long long)line, f[ctx->file->topk_prob_col[0]],
                 smax_s);
    return PB_FAIL;
  }
  int label_in = 0;
  for (int32_t k = 0; k < K; k++) {
    const char *pname = ctx->tk_name[k][1];
    if (k > 0 && ctx->tk_prob[k] > ctx->tk_prob[k - 1]) {
      pb_error_set("%s:%lld: %s %s exceeds %s %s (top-k probabilities must not increase)", path, (long long)line,
                   pname, f[ctx->file->topk_prob_col[k]], ctx->tk_name[k - 1][1], f[ctx->file->topk_prob_col[k - 1]]);
      return PB_FAIL;
    }
    for (int32_t j = 0; j < k; j++)
      if (ctx->tk_class[j] == ctx->tk_class[k]) {
        pb_error_set("%s:%lld: top%d_class %d repeats top%d_class", path, (long long)line, k + 1,
                     ctx->tk_class[k], j + 1);
        return PB_FAIL;
      }
    if (ctx->tk_class[k] == rec->label) {
      label_in = 1;
      if (fabs((double)ctx->tk_prob[k] - (double)rec->ptrue) > PB_INGEST_TOL) {
        pb_error_set("%s:%lld: top%d_class is the label %d but %s %s differs from ptrue %s", path,
                     (long long)line, k + 1, rec->label, pname, f[ctx->file->topk_prob_col[k]], ptrue_s);
        return PB_FAIL;
      }
    }
  }
  /* a class outside the top k has at most the k-th probability */
  if (!label_in && (double)rec->ptrue > (double)ctx->tk_prob[K - 1] + PB_INGEST_TOL) {
    pb_error_set("%s:%lld: ptrue %s exceeds top%d_prob %s but the label %d is not in the top %d", path,
                 (long long)line, ptrue_s, K, f[ctx->file->topk_prob_col[K - 1]], rec->label, K);
    return PB_FAIL;
  }
  return pb_ingest__summary_values(ctx, f, line, n_classes, rec);
}

/* Rows mostly repeat the previous row's names or, for images, take the next
 * one, so the last index (*hint) and its successor are tried before the hash. */
int32_t pb_ingest__lookup(const struct pb_strmap *m, char *const *names, int32_t n, int32_t *hint, const char *key)
{
  const int32_t h = *hint;
  if (h >= 0 && h < n && strcmp(names[h], key) == 0) return h;
  if (h + 1 >= 0 && h + 1 < n && strcmp(names[h + 1], key) == 0) return *hint = h + 1;
  const int32_t v = pb_strmap_get(m, key);
  if (v >= 0) *hint = v;
  return v;
}

int32_t pb_ingest__lookup_next(const struct pb_strmap *m, char *const *names, int32_t n, int32_t *hint,
                               const char *key)
{
  const int32_t h = *hint;
  if (h + 1 >= 0 && h + 1 < n && strcmp(names[h + 1], key) == 0) return *hint = h + 1;
  if (h >= 0 && h < n && strcmp(names[h], key) == 0) return h;
  const int32_t v = pb_strmap_get(m, key);
  if (v >= 0) *hint = v;
  return v;
}

static int32_t pb_ingest__source_index(struct pb_ingest__ctx *ctx, const char *name)
{
  const int32_t h = ctx->hint_source;
  if (h >= 0 && h < ctx->meta->n_sources && strcmp(ctx->meta->sources[h].name, name) == 0) return h;
  const int32_t v = pb_strmap_get(&ctx->sources, name);
  if (v >= 0) ctx->hint_source = v;
  return v;
}

/* ------------------------------------------------------------------ pass 1 */

static int32_t pb_ingest__given_classes(const struct pb_ingest_options *opt, const char *source)
{
  if (!opt) return 0;
  for (int i = opt->n_source_classes - 1; i >= 0; i--)
    if (strcmp(opt->class_source[i], source) == 0) return opt->class_count[i];
  return opt->default_classes > 0 ? opt->default_classes : 0;
}

int32_t pb_ingest__add_source(struct pb_ingest__ctx *ctx, const char *name)
{
  struct pb_meta *meta = ctx->meta;
  int32_t s = meta->n_sources;
  if (s == ctx->cap_sources) {
    ctx->cap_sources = ctx->cap_sources ? 2 * ctx->cap_sources : 4;
    meta->sources = pb_realloc(meta->sources, (size_t)ctx->cap_sources * sizeof *meta->sources);
    ctx->src = pb_realloc(ctx->src, (size_t)ctx->cap_sources * sizeof *ctx->src);
  }
  memset(&meta->sources[s], 0, sizeof meta->sources[s]);
  memset(&ctx->src[s], 0, sizeof ctx->src[s]);
  meta->sources[s].name = pb_strdup(name);
  meta->sources[s].clean = -1;
  pb_strmap_init(&ctx->src[s].conditions);
  pb_strmap_init(&ctx->src[s].images);
  ctx->src[s].given_classes = pb_ingest__given_classes(ctx->opt, name);
  ctx->src[s].max_class = -1;
  meta->n_sources++;
  return pb_strmap_put(&ctx->sources, name, s);
}

int pb_ingest__add_model(struct pb_ingest__ctx *ctx, const char *model, const char *group, int64_t line)
{
  struct pb_meta *meta = ctx->meta;
  char at[1100];
  int32_t m = pb_ingest__lookup(&ctx->models, meta->model_ids, meta->n_models, &ctx->hint_model, model);
  if (m >= 0 && m < ctx->base_models) {
    pb_error_set("%s:%lld: model %s is already in %s (--append adds models)", ctx->path, (long long)line, model,
                 ctx->store_name);
    return PB_FAIL;
  }
  if (m >= 0) {
    if (strcmp(meta->model_groups[m], group) == 0) return PB_OK;
    pb_error_set("%s:%lld: model %s has group %s here but %s %s", ctx->path, (long long)line, model, group,
                 meta->model_groups[m], pb_ingest__where(ctx, ctx->model_file[m], ctx->model_line[m], at, sizeof at));
    return PB_FAIL;
  }
  m = meta->n_models;
  if (m == ctx->cap_models) {
    ctx->cap_models = ctx->cap_models ? 2 * ctx->cap_models : 16;
    meta->model_ids = pb_realloc(meta->model_ids, (size_t)ctx->cap_models * sizeof(char *));
    meta->model_groups = pb_realloc(meta->model_groups, (size_t)ctx->cap_models * sizeof(char *));
    ctx->model_line = pb_realloc(ctx->model_line, (size_t)ctx->cap_models * sizeof(int64_t));
    ctx->model_file = pb_realloc(ctx->model_file, (size_t)ctx->cap_models * sizeof(int32_t));
  }
  meta->model_ids[m] = pb_strdup(model);
  meta->model_groups[m] = pb_strdup(group);
  ctx->model_line[m] = line;
  ctx->model_file[m] = ctx->cur;
  meta->n_models++;
  pb_strmap_put(&ctx->models, model, m);
  ctx->hint_model = m;
  return PB_OK;
}

int pb_ingest__add_condition(struct pb_ingest__ctx *ctx, int32_t s, const char *cond, int64_t line)
{
  struct pb_source *src = &ctx->meta->sources[s];
  struct pb_ingest__src *x = &ctx->src[s];
  if (pb_ingest__lookup(&x->conditions, src->conditions, src->n_conditions, &x->hint_condition, cond) >= 0)
    return PB_OK;
  if (ctx->store_name && line > 0) {
    pb_error_set("%s:%lld: condition %s of source %s is not in %s (--append adds models, not conditions)",
                 ctx->path, (long long)line, cond, src->name, ctx->store_name);
    return PB_FAIL;
  }
  if (src->n_conditions == x->cap_conditions) {
    x->cap_conditions = x->cap_conditions ? 2 * x->cap_conditions : 8;
    src->conditions = pb_realloc(src->conditions, (size_t)x->cap_conditions * sizeof(char *));
  }
  src->conditions[src->n_conditions] = pb_strdup(cond);
  pb_strmap_put(&x->conditions, cond, src->n_conditions++);
  return PB_OK;
}

int pb_ingest__add_image(struct pb_ingest__ctx *ctx, int32_t s, const struct pb_ingest__rec *rec, int64_t line)
{
  static const char *const split_name[2] = {"dev", "eval"};
  struct pb_source *src = &ctx->meta->sources[s];
  struct pb_ingest__src *x = &ctx->src[s];
  const char *image = rec->name[PB_COL_IMAGE];
  char at[1100];
  int32_t i = pb_ingest__lookup_next(&x->images, src->image_ids, src->n_images, &x->hint_image, image);
  if (i >= 0) {
    if (src->labels[i] != rec->label) {
      pb_error_set("%s:%lld: image %s of source %s has label %d here but %d %s", ctx->path, (long long)line,
                   image, src->name, rec->label, src->labels[i],
                   pb_ingest__where(ctx, x->image_file[i], x->image_line[i], at, sizeof at));
      return PB_FAIL;
    }
    if (src->split[i] != rec->split) {
      pb_error_set("%s:%lld: image %s of source %s has split %s here but %s %s", ctx->path, (long long)line,
                   image, src->name, split_name[rec->split], split_name[src->split[i]],
                   pb_ingest__where(ctx, x->image_file[i], x->image_line[i], at, sizeof at));
      return PB_FAIL;
    }
    return PB_OK;
  }
  if (ctx->store_name && line > 0) {
    pb_error_set("%s:%lld: image %s of source %s is not in %s (--append adds models, not images)", ctx->path,
                 (long long)line, image, src->name, ctx->store_name);
    return PB_FAIL;
  }
  if (src->n_images == INT32_MAX) {
    pb_error_set("%s:%lld: source %s has too many images", ctx->path, (long long)line, src->name);
    return PB_FAIL;
  }
  i = src->n_images;
  if (i == x->cap_images) {
    x->cap_images = x->cap_images ? (x->cap_images > INT32_MAX / 2 ? INT32_MAX : 2 * x->cap_images) : 64;
    src->image_ids = pb_realloc(src->image_ids, (size_t)x->cap_images * sizeof(char *));
    src->labels = pb_realloc(src->labels, (size_t)x->cap_images * sizeof(int32_t));
    src->split = pb_realloc(src->split, (size_t)x->cap_images);
    x->image_line = pb_realloc(x->image_line, (size_t)x->cap_images * sizeof(int64_t));
    x->image_file = pb_realloc(x->image_file, (size_t)x->cap_images * sizeof(int32_t));
  }
  src->image_ids[i] = pb_strdup(image);
  src->labels[i] = rec->label;
  src->split[i] = rec->split;
  x->image_line[i] = line;
  x->image_file[i] = ctx->cur;
  src->n_images++;
  pb_strmap_put(&x->images, image, i);
  x->hint_image = i;
  return PB_OK;
}

int32_t *pb_ingest__slot(int32_t **slot, int32_t *cs, int32_t *cm, int32_t s, int32_t m)
{
  if (s >= *cs || m >= *cm) { /* a new source or model: the table grows */
    const int32_t ns = s >= *cs ? 2 * s + 4 : *cs, nm = m >= *cm ? 2 * m + 16 : *cm;
    int32_t *t = pb_malloc((size_t)ns * (size_t)nm * sizeof *t);
    for (int64_t k = 0; k < (int64_t)ns * nm; k++) t[k] = -1;
    for (int32_t a = 0; a < *cs; a++)
      memcpy(t + (size_t)a * (size_t)nm, *slot + (size_t)a * (size_t)*cm, (size_t)*cm * sizeof *t);
    free(*slot);
    *slot = t;
    *cs = ns;
    *cm = nm;
  }
  return &(*slot)[(size_t)s * (size_t)*cm + (size_t)m];
}

void pb_ingest__range(struct pb_ingest__ctx *ctx, int32_t s, int32_t m, off_t off0, off_t off1, int64_t line0)
{
  struct pb_ingest__file *f = ctx->file;
  int32_t *k = pb_ingest__slot(&ctx->slot, &ctx->slot_cs, &ctx->slot_cm, s, m);
  if (*k < 0) {
    if (f->n_range == f->cap_range) {
      f->cap_range = f->cap_range ? 2 * f->cap_range : 16;
      f->range = pb_realloc(f->range, (size_t)f->cap_range * sizeof *f->range);
    }
    *k = (int32_t)f->n_range++;
    f->range[*k] = (struct pb_ingest__range){.s = s, .m = m, .off0 = off0, .line0 = line0};
  }
  f->range[*k].off1 = off1;
}

static int pb_ingest__not_in_store(const struct pb_ingest__ctx *ctx, int64_t line, const char *source)
{
  pb_error_set("%s:%lld: source %s is not in %s (--append adds models, not sources)", ctx->path, (long long)line,
               source, ctx->store_name);
  return PB_FAIL;
}

int pb_ingest__check_fields(struct pb_ingest__ctx *ctx, char **f, int n, int64_t line, struct pb_ingest__rec *rec)
{
  if (pb_ingest__names(ctx, f, n, line, rec, !ctx->ints_only)) return PB_FAIL;
  const char *source = rec->name[PB_COL_SOURCE];
  /* --append: the store's sources, which pass 1 does not change then */
  if (ctx->store_name && pb_strmap_get(&ctx->sources, source) < 0) return pb_ingest__not_in_store(ctx, line, source);
  if (!ctx->part_source || strcmp(ctx->part_source, source) != 0) {
    free(ctx->part_source);
    ctx->part_source = pb_strdup(source);
    ctx->part_classes = pb_ingest__given_classes(ctx->opt, source);
  }
  return pb_ingest__values(ctx, f, line, ctx->part_classes, rec);
}

int pb_ingest__check_row(struct pb_ingest__ctx *ctx, char **f, int n, int64_t line)
{
  struct pb_ingest__rec rec;
  ctx->fail_off = ctx->row_off;
  ctx->fail_line = line;
  if (pb_ingest__check_fields(ctx, f, n, line, &rec)) return PB_FAIL;
  ctx->fail_off = -1;
  return PB_OK;
}

int pb_ingest__pass1_row(struct pb_ingest__ctx *ctx, char **f, int n, int64_t line)
{
  struct pb_ingest__rec rec;
  if (!ctx->have_header) {
    ctx->have_header = 1;
    return pb_ingest__header(ctx, f, n, line);
  }
  ctx->last_line = line;
  if (pb_ingest__names(ctx, f, n, line, &rec, !ctx->ints_only)) return PB_FAIL;
  int32_t s = pb_ingest__source_index(ctx, rec.name[PB_COL_SOURCE]);
  if (s < 0 && ctx->store_name) return pb_ingest__not_in_store(ctx, line, rec.name[PB_COL_SOURCE]);
  if (s < 0) s = pb_ingest__add_source(ctx, rec.name[PB_COL_SOURCE]);
  struct pb_ingest__src *x = &ctx->src[s];
  if (pb_ingest__values(ctx, f, line, x->given_classes, &rec)) return PB_FAIL;
  if (pb_ingest__add_model(ctx, rec.name[PB_COL_MODEL], rec.name[PB_COL_GROUP], line)) return PB_FAIL;
  if (pb_ingest__add_condition(ctx, s, rec.name[PB_COL_CONDITION], line)) return PB_FAIL;
  if (pb_ingest__add_image(ctx, s, &rec, line) || pb_ingest__lsets_row(ctx, s, f, line)) return PB_FAIL;
  if (rec.label > x->max_class) x->max_class = rec.label;
  if (rec.pred > x->max_class) x->max_class = rec.pred;
  for (int32_t k = 0; k < ctx->meta->topk; k++)
    if (ctx->tk_class[k] > x->max_class) x->max_class = ctx->tk_class[k];
  pb_ingest__range(ctx, s, ctx->hint_model, ctx->row_off, ctx->row_end, line);
  ctx->n_records++;
  ctx->file_records++;
  return PB_OK;
}

/* Checks on the whole set after pass 1. */
static int pb_ingest__finish_pass1(struct pb_ingest__ctx *ctx)
{
  struct pb_meta *meta = ctx->meta;
  const struct pb_ingest_options *opt = ctx->opt;
  const char *set = ctx->set_name;
  for (int i = 0; opt && i < opt->n_source_classes; i++)
    if (pb_strmap_get(&ctx->sources, opt->class_source[i]) < 0) {
      pb_error_set("%s: classes given for source %s, which has no records", set, opt->class_source[i]);
      return PB_FAIL;
    }
  for (int i = 0; opt && i < opt->n_roles; i++) {
    int32_t s = pb_strmap_get(&ctx->sources, opt->role_source[i]);
    if (s < 0) {
      pb_error_set("%s: role given for source %s, which has no records", set, opt->role_source[i]);
      return PB_FAIL;
    }
    if (pb_meta_role_parse(&meta->sources[s], opt->role[i]) != PB_OK) return PB_FAIL;
  }
  for (int32_t s = 0; s < meta->n_sources; s++) {
    struct pb_source *src = &meta->sources[s];
    struct pb_ingest__src *x = &ctx->src[s];
    src->clean = pb_strmap_get(&x->conditions, PB_CLEAN_CONDITION);
    if (src->clean < 0) {
      pb_error_set("%s: source %s has no '%s' condition", set, src->name, PB_CLEAN_CONDITION);
      return PB_FAIL;
    }
    if (x->given_classes > 0 && x->given_classes < x->store_classes) {
      pb_error_set("%s: classes given for source %s (%d) are fewer than %s holds (%d)", set, src->name,
                   x->given_classes, ctx->store_name, x->store_classes);
      return PB_FAIL;
    }
    src->n_classes = x->given_classes > 0 ? x->given_classes : x->max_class + 1;
    int64_t n_rows = (int64_t)meta->n_models * src->n_conditions;
    if (n_rows > INT32_MAX || (uint64_t)n_rows * (uint64_t)src->n_images > SIZE_MAX / 64) {
      pb_error_set("%s: source %s is too large (%d models x %d conditions x %d images)", set, src->name,
                   meta->n_models, src->n_conditions, src->n_images);
      return PB_FAIL;
    }
  }
  pb_ingest__lsets_finish(ctx);
  pb_meta_infer_roles(meta);
  if (pb_meta_validate_roles(meta) != PB_OK) { /* the roles given fit the sources read */
    char why[1024];
    snprintf(why, sizeof why, "%s", pb_error_message());
    pb_error_set("%s: %s", set, why);
    return PB_FAIL;
  }
  return PB_OK;
}

/* One file of pass 1: its header, every row validated, its ranges noted. */
static int pb_ingest__pass1_file(struct pb_ingest__ctx *ctx, int k, pb_ingest__file_fn parts)
{
  pb_ingest__use_file(ctx, k);
  struct pb_ingest__file *f = ctx->file;
  ctx->have_header = 0;
  ctx->file_records = 0;
  ctx->csv_lines = 0;
  int status = parts ? parts(ctx, pb_ingest__pass1_row)
                     : pb_ingest__pass1_rows(ctx, pb_ingest__pass1_row, pb_ingest__check_row);
  f->plain = ctx->csv_lines == 0;
  for (int64_t r = 0; r < f->n_range; r++) /* the slot table is the current file's */
    ctx->slot[(size_t)f->range[r].s * (size_t)ctx->slot_cm + (size_t)f->range[r].m] = -1;
  if (status != PB_OK) return PB_FAIL;
  if (!ctx->have_header) {
    pb_error_set("%s: empty file (no header line)", ctx->path);
    return PB_FAIL;
  }
  if (ctx->file_records == 0) {
    pb_error_set("%s: no records", ctx->path);
    return PB_FAIL;
  }
  return PB_OK;
}

int pb_ingest__pass1(struct pb_ingest__ctx *ctx, pb_ingest__file_fn parts)
{
  for (int k = 0; k < ctx->n_files; k++)
    if (pb_ingest__pass1_file(ctx, k, parts) != PB_OK) return PB_FAIL;
  return pb_ingest__finish_pass1(ctx);
}

int pb_ingest__key(struct pb_ingest__ctx *ctx, char **f, int n, int64_t line, struct pb_ingest__rec *rec,
                   int32_t key[4])
{
  /* not the names' rule again: every name in the dictionaries passed pb_meta_validate after pass 1 (the same
   * rule, pb_ingest__once), a name found below is one of them, and one not found is refused */
  if (pb_ingest__names(ctx, f, n, line, rec, 0)) return PB_FAIL;
  const struct pb_meta *meta = ctx->meta;
  const int32_t s = pb_ingest__source_index(ctx, rec->name[PB_COL_SOURCE]);
  struct pb_ingest__src *x = s >= 0 ? &ctx->src[s] : NULL;
  const struct pb_source *so = s >= 0 ? &meta->sources[s] : NULL;
  key[0] = s;
  key[1] = pb_ingest__lookup(&ctx->models, meta->model_ids, meta->n_models, &ctx->hint_model, rec->name[PB_COL_MODEL]);
  key[2] = x ? pb_ingest__lookup(&x->conditions, so->conditions, so->n_conditions, &x->hint_condition,
                                 rec->name[PB_COL_CONDITION]) : -1;
  key[3] = x ? pb_ingest__lookup_next(&x->images, so->image_ids, so->n_images, &x->hint_image,
                                      rec->name[PB_COL_IMAGE])
             : -1;
  if (key[1] < 0 || key[2] < 0 || key[3] < 0) {
    /* pass 1 saw every name, so only a file rewritten meanwhile gets here */
    pb_error_set("%s:%lld: file changed while it was being read", ctx->path, (long long)line);
    return PB_FAIL;
  }
  return PB_OK;
}

int pb_ingest__check_values(struct pb_ingest__ctx *ctx, char **f, int64_t line, int32_t s, struct pb_ingest__rec *rec)
{
  return pb_ingest__values(ctx, f, line, ctx->meta->sources[s].n_classes, rec);
}

void pb_ingest__seed(struct pb_ingest__ctx *ctx, const char *name, const struct pb_meta *old)
{
  struct pb_meta *meta = ctx->meta;
  ctx->store_name = name;
  pb_ingest__topk_alloc(ctx, old->topk);
  meta->summaries = old->summaries; /* the files need the store's summary columns */
  for (int32_t m = 0; m < old->n_models; m++) {
    pb_ingest__add_model(ctx, old->model_ids[m], old->model_groups[m], 0);
    ctx->model_file[m] = -1;
  }
  ctx->base_models = old->n_models;
  for (int32_t s = 0; s < old->n_sources; s++) {
    const struct pb_source *a = &old->sources[s];
    pb_ingest__add_source(ctx, a->name);
    struct pb_source *b = &meta->sources[s];
    struct pb_ingest__src *x = &ctx->src[s];
    b->role = a->role;
    b->role_declared = a->role_declared;
    b->role_fixed = a->role_fixed;
    b->role_of = a->role_of ? pb_strdup(a->role_of) : NULL;
    b->seed_values = a->seed_values ? pb_strdup(a->seed_values) : NULL;
    for (int32_t c = 0; c < a->n_conditions; c++) pb_ingest__add_condition(ctx, s, a->conditions[c], 0);
    for (int32_t i = 0; i < a->n_images; i++) {
      struct pb_ingest__rec rec = {.label = a->labels[i], .split = a->split[i]};
      rec.name[PB_COL_IMAGE] = a->image_ids[i];
      pb_ingest__add_image(ctx, s, &rec, 0);
      x->image_file[i] = -1;
    }
    pb_ingest__lsets_seed(ctx, s, a);
    x->store_classes = a->n_classes;
    x->max_class = a->n_classes - 1;
  }
}

/* ------------------------------------------------------------------ context */

void pb_ingest__ctx_init(struct pb_ingest__ctx *ctx, int n, const char *const *paths, const char *spool_base,
                         const struct pb_ingest_options *opt, struct pb_meta *meta)
{
  memset(ctx, 0, sizeof *ctx);
  memset(meta, 0, sizeof *meta);
  ctx->opt = opt;
  ctx->meta = meta;
  ctx->spool_base = spool_base;
  ctx->n_files = n;
  ctx->files = pb_calloc((size_t)(n > 0 ? n : 1), sizeof *ctx->files);
  for (int k = 0; k < n; k++) {
    ctx->files[k].path = paths[k];
    ctx->files[k].name = strcmp(paths[k], "-") == 0 ? "stdin" : paths[k];
  }
  /* errors of the whole set name the file, or the first and how many more */
  if (n == 1) {
    ctx->set_name = pb_strdup(ctx->files[0].name);
  } else {
    const size_t len = strlen(ctx->files[0].name) + 64;
    ctx->set_name = pb_malloc(len);
    snprintf(ctx->set_name, len, "%s and %d more files", ctx->files[0].name, n - 1);
  }
  pb_strmap_init(&ctx->sources);
  pb_strmap_init(&ctx->models);
  pb_ingest__use_file(ctx, 0);
}

void pb_ingest__use_file(struct pb_ingest__ctx *ctx, int k)
{
  ctx->cur = k;
  ctx->file = &ctx->files[k];
  ctx->path = ctx->file->name;
}

void pb_ingest__ctx_free(struct pb_ingest__ctx *ctx)
{
  for (int32_t s = 0; ctx->src && s < ctx->meta->n_sources; s++) {
    pb_strmap_free(&ctx->src[s].conditions);
    pb_strmap_free(&ctx->src[s].images);
    free(ctx->src[s].image_line);
    free(ctx->src[s].image_file);
  }
  for (int k = 0; k < ctx->n_files; k++) {
    struct pb_ingest__file *f = &ctx->files[k];
    if (f->spool) unlink(f->spool);
    pb_signal_forget_file(f->spool_sig);
    free(f->spool);
    free(f->topk_class_col);
    free(f->topk_prob_col);
    free(f->range);
  }
  free(ctx->files);
  free(ctx->src);
  pb_strmap_free(&ctx->sources);
  pb_strmap_free(&ctx->models);
  free(ctx->model_line);
  free(ctx->model_file);
  free(ctx->slot);
  free(ctx->tk_class);
  free(ctx->tk_prob);
  free(ctx->lset_ids);
  free(ctx->tk_name);
  free(ctx->set_name);
  free(ctx->old_provenance);
  free(ctx->part_source);
}

int pb_ingest_add_classes(struct pb_ingest_options *opt, const char *arg)
{
  const char *eq = strrchr(arg, '=');
  int64_t n;
  if (pb_parse_int(eq ? eq + 1 : arg, 1, PB_MAX_CLASSES, &n) || (eq && eq == arg)) {
    pb_error_set("--classes: expected N or SOURCE=N with 1 <= N <= %d (the limit of classes per source), found '%s'",
                 PB_MAX_CLASSES, arg);
    return PB_FAIL;
  }
  if (!eq) {
    opt->default_classes = (int32_t)n;
    return PB_OK;
  }
  size_t len = (size_t)(eq - arg);
  char *name = pb_malloc(len + 1);
  memcpy(name, arg, len);
  name[len] = '\0';
  for (int i = 0; i < opt->n_source_classes; i++)
    if (strcmp(opt->class_source[i], name) == 0) {
      opt->class_count[i] = (int32_t)n;
      free(name);
      return PB_OK;
    }
  int i = opt->n_source_classes++;
  opt->class_source = pb_realloc(opt->class_source, (size_t)opt->n_source_classes * sizeof(char *));
  opt->class_count = pb_realloc(opt->class_count, (size_t)opt->n_source_classes * sizeof(int32_t));
  opt->class_source[i] = name;
  opt->class_count[i] = (int32_t)n;
  return PB_OK;
}

int pb_ingest_add_role(struct pb_ingest_options *opt, const char *label, const char *arg)
{
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg) {
    pb_error_set("%s: expected SRC=ROLE (ROLE: synthetic, real, natural[:N] or extra:SRC), found '%s'", label, arg);
    return PB_FAIL;
  }
  size_t len = (size_t)(eq - arg);
  char *name = pb_malloc(len + 1);
  memcpy(name, arg, len);
  name[len] = '\0';
  struct pb_source probe = {.name = name}; /* the text must be a role; whether it fits the store, ingest says */
  if (pb_meta_role_parse(&probe, eq + 1) != PB_OK) {
    char why[1024];
    snprintf(why, sizeof why, "%s", pb_error_message());
    pb_error_set("%s %s: %s", label, arg, why);
    free(name);
    return PB_FAIL;
  }
  free(probe.role_of);
  int i = 0;
  while (i < opt->n_roles && strcmp(opt->role_source[i], name)) i++;
  if (i == opt->n_roles) {
    opt->n_roles++;
    opt->role_source = pb_realloc(opt->role_source, (size_t)opt->n_roles * sizeof(char *));
    opt->role = pb_realloc(opt->role, (size_t)opt->n_roles * sizeof(char *));
    opt->role_source[i] = name;
  } else {
    free(name);
    free(opt->role[i]);
  }
  opt->role[i] = pb_strdup(eq + 1);
  return PB_OK;
}

void pb_ingest_options_free(struct pb_ingest_options *opt)
{
  for (int i = 0; i < opt->n_roles; i++) {
    free(opt->role_source[i]);
    free(opt->role[i]);
  }
  free(opt->role_source);
  free(opt->role);
  opt->role_source = opt->role = NULL;
  opt->n_roles = 0;
  for (int i = 0; i < opt->n_source_classes; i++) free(opt->class_source[i]);
  free(opt->class_source);
  free(opt->class_count);
  opt->class_source = NULL;
  opt->class_count = NULL;
  opt->n_source_classes = 0;
}
