/* `pairbound ingest`, pass 1 of a regular file in parts with dictionaries of
 * their own.
 *
 * The dictionaries grow in order of first appearance, which one reader in
 * file order follows at the cost of reading the whole file alone
 * (ingest_parts.c).  Here each part of the file (cut at line starts after
 * the header) is read by one task with dictionaries of its own: the names
 * that the global dictionaries (earlier files', with --append the store's;
 * only read meanwhile) lack, in the order the part first meets them, with
 * the line of that row counted in the part, and every check the serial
 * reader makes of a row but those of its names and numbers (pass 2 checks
 * them on every row: pb_ingest__once), against the global entry where there
 * is one and the part's own where not.  The parts are then merged in file order by the
 * serial reader's own functions: a name still new to the global
 * dictionaries when its part is merged first appears in that part, so every
 * entry, line, range, label set and count is the one the serial reader
 * builds, and any conflict between parts is refused there.
 *
 * Only the success path is new: a refused row, a conflict, a line that is
 * not plain (a part might begin inside a quoted field, and a part's lines
 * are counted as its rows) or a file that is not regular make
 * pb_ingest__dict_file fail, and pb_ingest__run then ingests the files again
 * the serial way, whose messages the user gets.
 *
 * Under mpirun (pb_ingest_files_comm) the parts are the ranks' too: rank 0
 * sends each file's span to the other ranks (pb_ingest__dict_help), every
 * rank reads its run of the parts and merges them in file order as above
 * (into a context of its own), and rank 0 gathers one dictionary per rank
 * (packed: names, no record) and merges its own parts and those in file
 * order.  A helping rank's global dictionaries stay empty, so its
 * parts hold every name they meet as new; the merge finds each by name
 * (a conflict with an earlier file is then refused at the merge instead). */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/comm.h"
#include "pairbound/error.h"
#include "pairbound/lsets.h"
#include "pairbound/pack.h"
#include "pairbound/strmap.h"
#include "ingest_internal.h"

/* Parts of a file per thread, taken in turn: a thread that other work slows
 * down leaves more of them to the others. */
#define PB_INGEST__DICT_PARTS_PER_THREAD 2

/* A source as a part met it: beside its global index, what the part's rows
 * add to it (names the global source lacked, in order of first appearance). */
struct pb_ingest__dsrc {
  int32_t g;                           /* the global source, or -1: new */
  int32_t max_class;
  int32_t hint_condition, hint_image;  /* lookups in the global source */
  struct pb_strmap conditions, images;
  char **condition, **image;
  int32_t n_conditions, cap_conditions, n_images, cap_images;
  int32_t hint_lcondition, hint_limage;
  int32_t *label;
  uint8_t *split;
  int64_t *line;                       /* the image's first row in the part */
  int64_t *set_off, cap_ids;           /* the images' label sets (CSR) */
  int32_t *set_ids;
};

struct pb_ingest__dict {
  off_t off0, off1;
  int status;
  int *failed;                         /* shared: a part failed, so the others stop */
  int64_t rows;                        /* a plain part's lines: one row each */
  struct pb_ingest__ctx c;             /* the part's copy of the context: its scratch, file and slot table */
  struct pb_ingest__file file;         /* its ranges (source and model: the part's indices) */
  struct pb_strmap sources, models;
  char **source, **model, **group;
  struct pb_ingest__dsrc *src;
  int32_t *model_g;                    /* the global model, or -1: new */
  int64_t *model_line;
  int32_t n_sources, cap_sources, hint_source, n_models, cap_models, hint_model;
};

static int32_t pb_ingest__dict_source(const struct pb_ingest__ctx *ctx, struct pb_ingest__dict *d, const char *name)
{
  int32_t s = pb_ingest__lookup(&d->sources, d->source, d->n_sources, &d->hint_source, name);
  if (s >= 0) return s;
  if (d->n_sources == d->cap_sources) {
    d->cap_sources = d->cap_sources ? 2 * d->cap_sources : 4;
    d->source = pb_realloc(d->source, (size_t)d->cap_sources * sizeof *d->source);
    d->src = pb_realloc(d->src, (size_t)d->cap_sources * sizeof *d->src);
  }
  s = d->n_sources++;
  struct pb_ingest__dsrc *x = &d->src[s];
  memset(x, 0, sizeof *x);
  d->source[s] = pb_strdup(name);
  x->g = pb_strmap_get(&ctx->sources, name);
  x->max_class = -1;
  pb_strmap_init(&x->conditions);
  pb_strmap_init(&x->images);
  pb_strmap_put(&d->sources, name, s);
  d->hint_source = s;
  return s;
}

/* The part's index of @p model, or -1 when its group differs or --append has it already. */
static int32_t pb_ingest__dict_model(const struct pb_ingest__ctx *ctx, struct pb_ingest__dict *d, const char *model,
                                     const char *group, int64_t line)
{
  int32_t m = pb_ingest__lookup(&d->models, d->model, d->n_models, &d->hint_model, model);
  if (m >= 0) return strcmp(d->group[m], group) == 0 ? m : -1;
  const int32_t g = pb_strmap_get(&ctx->models, model);
  if (g >= 0 && (g < ctx->base_models || strcmp(ctx->meta->model_groups[g], group) != 0)) return -1;
  if (d->n_models == d->cap_models) {
    d->cap_models = d->cap_models ? 2 * d->cap_models : 16;
    d->model = pb_realloc(d->model, (size_t)d->cap_models * sizeof *d->model);
    d->group = pb_realloc(d->group, (size_t)d->cap_models * sizeof *d->group);
    d->model_g = pb_realloc(d->model_g, (size_t)d->cap_models * sizeof *d->model_g);
    d->model_line = pb_realloc(d->model_line, (size_t)d->cap_models * sizeof *d->model_line);
  }
  m = d->n_models++;
  d->model[m] = pb_strdup(model);
  d->group[m] = pb_strdup(group);
  d->model_g[m] = g;
  d->model_line[m] = line;
  pb_strmap_put(&d->models, model, m);
  d->hint_model = m;
  return m;
}

static int pb_ingest__dict_condition(const struct pb_ingest__ctx *ctx, struct pb_ingest__dsrc *x, const char *cond)
{
  if (x->g >= 0) {
    const struct pb_source *gs = &ctx->meta->sources[x->g];
    if (pb_ingest__lookup(&ctx->src[x->g].conditions, gs->conditions, gs->n_conditions, &x->hint_condition, cond) >= 0)
      return PB_OK;
  }
  if (pb_ingest__lookup(&x->conditions, x->condition, x->n_conditions, &x->hint_lcondition, cond) >= 0) return PB_OK;
  if (ctx->store_name) return PB_FAIL; /* --append adds no conditions */
  if (x->n_conditions == x->cap_conditions) {
    x->cap_conditions = x->cap_conditions ? 2 * x->cap_conditions : 8;
    x->condition = pb_realloc(x->condition, (size_t)x->cap_conditions * sizeof *x->condition);
  }
  x->condition[x->n_conditions] = pb_strdup(cond);
  pb_strmap_put(&x->conditions, cond, x->n_conditions++);
  return PB_OK;
}

static int pb_ingest__same(int32_t label, uint8_t split, const int32_t *set, int32_t n_set,
                           const struct pb_ingest__rec *rec, const int32_t *ids, int32_t n_ids)
{
  return label == rec->label && split == rec->split && n_set == n_ids &&
         (n_ids == 0 || memcmp(set, ids, (size_t)n_ids * sizeof *ids) == 0);
}

/* The row's image with its label, split and label set (ctx->lset_ids, @p n_ids): the same as before, or new. */
static int pb_ingest__dict_image(const struct pb_ingest__ctx *ctx, struct pb_ingest__dsrc *x,
                                 const struct pb_ingest__rec *rec, int32_t n_ids, int64_t line)
{
  const char *image = rec->name[PB_COL_IMAGE];
  const int32_t *ids = ctx->lset_ids;
  int32_t i, n_set;
  if (x->g >= 0) {
    const struct pb_source *gs = &ctx->meta->sources[x->g];
    i = pb_ingest__lookup_next(&ctx->src[x->g].images, gs->image_ids, gs->n_images, &x->hint_image, image);
    if (i >= 0) {
      const int32_t *set = pb_lsets_of(gs, i, &n_set);
      return pb_ingest__same(gs->labels[i], gs->split[i], set, n_set, rec, ids, n_ids) ? PB_OK : PB_FAIL;
    }
  }
  i = pb_ingest__lookup_next(&x->images, x->image, x->n_images, &x->hint_limage, image);
  if (i >= 0) {
    n_set = (int32_t)(x->set_off[i + 1] - x->set_off[i]);
    const int32_t *set = n_set > 0 ? x->set_ids + x->set_off[i] : NULL;
    return pb_ingest__same(x->label[i], x->split[i], set, n_set, rec, ids, n_ids) ? PB_OK : PB_FAIL;
  }
  if (ctx->store_name || x->n_images == INT32_MAX / 2) return PB_FAIL; /* --append adds no images */
  if (x->n_images == x->cap_images) {
    x->cap_images = x->cap_images ? 2 * x->cap_images : 64;
    x->image = pb_realloc(x->image, (size_t)x->cap_images * sizeof *x->image);
    x->label = pb_realloc(x->label, (size_t)x->cap_images * sizeof *x->label);
    x->split = pb_realloc(x->split, (size_t)x->cap_images);
    x->line = pb_realloc(x->line, (size_t)x->cap_images * sizeof *x->line);
    x->set_off = pb_realloc(x->set_off, ((size_t)x->cap_images + 1) * sizeof *x->set_off);
    if (x->n_images == 0) x->set_off[0] = 0;
  }
  i = x->n_images++;
  if (x->set_off[i] + n_ids > x->cap_ids) {
    x->cap_ids = 2 * (x->set_off[i] + n_ids) + 64;
    x->set_ids = pb_realloc(x->set_ids, (size_t)x->cap_ids * sizeof *x->set_ids);
  }
  if (n_ids > 0) memcpy(x->set_ids + x->set_off[i], ids, (size_t)n_ids * sizeof *ids);
  x->set_off[i + 1] = x->set_off[i] + n_ids;
  x->image[i] = pb_strdup(image);
  x->label[i] = rec->label;
  x->split[i] = rec->split;
  x->line[i] = line;
  pb_strmap_put(&x->images, image, i);
  x->hint_limage = i;
  return PB_OK;
}

/* A row of a part: what pb_ingest__pass1_row checks and adds, into the part's dictionaries. */
static int pb_ingest__dict_add(struct pb_ingest__ctx *ctx, struct pb_ingest__dict *d, char **f, int n, int64_t line)
{
  struct pb_ingest__rec rec;
  int32_t n_ids;
  if (pb_ingest__check_fields(ctx, f, n, line, &rec)) return PB_FAIL;
  const int32_t s = pb_ingest__dict_source(ctx, d, rec.name[PB_COL_SOURCE]);
  struct pb_ingest__dsrc *x = &d->src[s];
  const int32_t m = pb_ingest__dict_model(ctx, d, rec.name[PB_COL_MODEL], rec.name[PB_COL_GROUP], line);
  /* ctx->part_classes: the classes given for the row's source (pb_ingest__check_fields) */
  if (m < 0 || pb_ingest__dict_condition(ctx, x, rec.name[PB_COL_CONDITION]) ||
      pb_ingest__lsets_ids(ctx, f, line, ctx->part_classes, d->source[s], &n_ids, &x->max_class) ||
      pb_ingest__dict_image(ctx, x, &rec, n_ids, line))
    return PB_FAIL;
  if (rec.label > x->max_class) x->max_class = rec.label;
  if (rec.pred > x->max_class) x->max_class = rec.pred;
  for (int32_t k = 0; k < ctx->meta->topk; k++)
    if (ctx->tk_class[k] > x->max_class) x->max_class = ctx->tk_class[k];
  pb_ingest__range(ctx, s, m, ctx->row_off, ctx->row_end, line);
  return PB_OK;
}

static int pb_ingest__dict_row(struct pb_ingest__ctx *ctx, char **f, int n, int64_t line)
{
  struct pb_ingest__dict *d = ctx->dict;
  d->rows++;
  /* a line libcsv had to read (ctx->csv_lines) already fails the part */
  if (!__atomic_load_n(d->failed, __ATOMIC_RELAXED) && ctx->csv_lines == 0 &&
      pb_ingest__dict_add(ctx, d, f, n, line) == PB_OK)
    return PB_OK;
  __atomic_store_n(d->failed, 1, __ATOMIC_RELAXED);
  return PB_FAIL;
}

/* Part @p d of the current file, empty, from @p off0 to @p off1. */
static void pb_ingest__dict_init(const struct pb_ingest__ctx *ctx, struct pb_ingest__dict *d, off_t off0, off_t off1,
                                 int *failed)
{
  const size_t K = (size_t)ctx->meta->topk + 1;
  memset(d, 0, sizeof *d);
  d->off0 = off0;
  d->off1 = off1;
  d->failed = failed;
  d->c = *ctx;
  d->c.ints_only = 1; /* names and numbers: pass 2 checks them (pb_ingest__once) */
  d->c.part_source = NULL;
  d->c.csv_lines = 0;
  d->c.tk_class = pb_malloc(K * sizeof *d->c.tk_class);
  d->c.tk_prob = pb_malloc(K * sizeof *d->c.tk_prob);
  d->c.lset_ids = NULL;
  d->c.slot = NULL;
  d->c.slot_cs = d->c.slot_cm = 0;
  d->c.dict = d;
  d->file = *ctx->file;
  d->file.range = NULL;
  d->file.n_range = d->file.cap_range = 0;
  d->c.file = &d->file;
  pb_strmap_init(&d->sources);
  pb_strmap_init(&d->models);
}

static void pb_ingest__dict_free(struct pb_ingest__dict *d)
{
  for (int32_t s = 0; s < d->n_sources; s++) {
    struct pb_ingest__dsrc *x = &d->src[s];
    for (int32_t c = 0; c < x->n_conditions; c++) free(x->condition[c]);
    for (int32_t i = 0; i < x->n_images; i++) free(x->image[i]);
    pb_strmap_free(&x->conditions);
    pb_strmap_free(&x->images);
    free(x->condition);
    free(x->image);
    free(x->label);
    free(x->split);
    free(x->line);
    free(x->set_off);
    free(x->set_ids);
    free(d->source[s]);
  }
  for (int32_t m = 0; m < d->n_models; m++) {
    free(d->model[m]);
    free(d->group[m]);
  }
  pb_strmap_free(&d->sources);
  pb_strmap_free(&d->models);
  free(d->source);
  free(d->src);
  free(d->model);
  free(d->group);
  free(d->model_g);
  free(d->model_line);
  free(d->file.range);
  free(d->c.slot);
  free(d->c.tk_class);
  free(d->c.tk_prob);
  free(d->c.lset_ids);
  free(d->c.part_source);
}

/* What source @p x of a part adds to global source @p s; the part's line L is the file's line @p at + L. */
static int pb_ingest__dict_merge_source(struct pb_ingest__ctx *ctx, const struct pb_ingest__dsrc *x, int32_t s,
                                        int64_t at)
{
  struct pb_ingest__src *gx = &ctx->src[s];
  for (int32_t c = 0; c < x->n_conditions; c++)
    if (pb_ingest__add_condition(ctx, s, x->condition[c], at + 1) != PB_OK) return PB_FAIL;
  for (int32_t i = 0; i < x->n_images; i++) {
    struct pb_ingest__rec rec = {.label = x->label[i], .split = x->split[i]};
    const int32_t n_ids = (int32_t)(x->set_off[i + 1] - x->set_off[i]);
    rec.name[PB_COL_IMAGE] = x->image[i];
    if (pb_ingest__add_image(ctx, s, &rec, at + x->line[i]) != PB_OK ||
        pb_ingest__lsets_put(ctx, s, gx->hint_image, n_ids > 0 ? x->set_ids + x->set_off[i] : NULL, n_ids,
                             at + x->line[i]) != PB_OK)
      return PB_FAIL;
  }
  if (x->max_class > gx->max_class) gx->max_class = x->max_class;
  return PB_OK;
}

/* Part @p d into the global dictionaries, its first line the file's line @p line0. */
static int pb_ingest__dict_merge(struct pb_ingest__ctx *ctx, const struct pb_ingest__dict *d, int64_t line0)
{
  const int64_t at = line0 - 1;
  int32_t *gs = pb_malloc(((size_t)d->n_sources + 1) * sizeof *gs), *gm = pb_malloc(((size_t)d->n_models + 1) * sizeof *gm);
  int status = PB_FAIL;
  for (int32_t s = 0; s < d->n_sources; s++) {
    gs[s] = d->src[s].g >= 0 ? d->src[s].g : pb_strmap_get(&ctx->sources, d->source[s]);
    if (gs[s] < 0) gs[s] = pb_ingest__add_source(ctx, d->source[s]);
  }
  for (int32_t m = 0; m < d->n_models; m++) {
    if (d->model_g[m] < 0 && pb_ingest__add_model(ctx, d->model[m], d->group[m], at + d->model_line[m]) != PB_OK)
      goto done;
    gm[m] = d->model_g[m] >= 0 ? d->model_g[m] : ctx->hint_model;
  }
  for (int32_t s = 0; s < d->n_sources; s++)
    if (pb_ingest__dict_merge_source(ctx, &d->src[s], gs[s], at) != PB_OK) goto done;
  for (int64_t r = 0; r < d->file.n_range; r++) {
    const struct pb_ingest__range *g = &d->file.range[r];
    pb_ingest__range(ctx, gs[g->s], gm[g->m], g->off0, g->off1, at + g->line0);
  }
  ctx->n_records += d->rows;
  ctx->file_records += d->rows;
  status = PB_OK;
done:
  free(gs);
  free(gm);
  return status;
}

/* Parts [p0, p1) of the @p n parts of the current file's rows from @p data to
 * @p size (cut at line starts, alike on every rank), read with this rank's
 * threads; PB_FAIL when a part could not be placed or failed. */
static int pb_ingest__dict_read(struct pb_ingest__ctx *ctx, struct pb_ingest__dict *d, int n, int p0, int p1,
                                off_t data, off_t size)
{
  int status = PB_OK, failed = 0;
  off_t a = data;
  for (int p = 0; p < p1; p++) {
    const off_t b = p + 1 == n ? size : pb_ingest__line_start(ctx, data + (size - data) / n * (p + 1), size);
    if (b < 0) status = PB_FAIL;
    if (p >= p0) pb_ingest__dict_init(ctx, &d[p], a, b > a ? b : a, &failed);
    a = b > a ? b : a;
  }
#pragma omp parallel for schedule(dynamic, 1)
  for (int p = p0; p < p1; p++)
    if (status == PB_OK && !__atomic_load_n(&failed, __ATOMIC_RELAXED) && d[p].off1 > d[p].off0)
      d[p].status = pb_ingest__read(&d[p].c, pb_ingest__dict_row, d[p].off0, d[p].off1, 1);
  for (int p = p0; p < p1; p++)
    if (failed || d[p].status != PB_OK || d[p].c.csv_lines > 0) status = PB_FAIL;
  return status;
}

/* Rank r's run of the @p n parts over @p size ranks. */
static int pb_ingest__dict_first(int n, int size, int r) { return (int)((int64_t)n * r / size); }

/* ------------------------------------------------ parts over the ranks */

/* A part as another rank packed it (pb_ingest__pack_run): its names, labels, splits and label sets as a store's
 * metadata (pairbound/pack.h), which become the part's own; every name new (no global index: the merge looks
 * each up by name). */
static int pb_ingest__dict_unpack(struct pb_pack *p, struct pb_ingest__dict *d)
{
  struct pb_meta m;
  d->status = pb_pack_get_i32(p) ? PB_FAIL : PB_OK;
  d->rows = pb_pack_get_i64(p);
  if (pb_pack_get_meta(p, &m) != PB_OK) return PB_FAIL;
  d->n_sources = d->cap_sources = m.n_sources;
  d->source = pb_calloc((size_t)m.n_sources + 1, sizeof *d->source);
  d->src = pb_calloc((size_t)m.n_sources + 1, sizeof *d->src);
  for (int32_t s = 0; s < m.n_sources; s++) {
    struct pb_source *so = &m.sources[s];
    struct pb_ingest__dsrc *x = &d->src[s];
    d->source[s] = so->name;
    *x = (struct pb_ingest__dsrc){.g = -1, .n_conditions = so->n_conditions, .cap_conditions = so->n_conditions,
                                  .condition = so->conditions, .n_images = so->n_images,
                                  .cap_images = so->n_images, .image = so->image_ids, .label = so->labels,
                                  .split = so->split, .set_off = so->lset_off, .set_ids = so->lset_ids};
    so->name = NULL, so->conditions = so->image_ids = NULL, so->labels = NULL, so->split = NULL;
    so->lset_off = NULL, so->lset_ids = NULL, so->n_conditions = so->n_images = 0; /* the part's now */
    x->max_class = pb_pack_get_i32(p);
    x->line = pb_pack_get_block(p, (size_t)x->n_images * sizeof *x->line);
    if (x->n_images > 0 && !x->set_off) p->short_read = 1; /* every image of a run has its set */
  }
  d->n_models = d->cap_models = m.n_models;
  d->model = m.model_ids;
  d->group = m.model_groups;
  m.model_ids = m.model_groups = NULL;
  m.n_models = 0;
  d->model_line = pb_pack_get_block(p, (size_t)d->n_models * sizeof *d->model_line);
  d->model_g = pb_malloc(((size_t)d->n_models + 1) * sizeof *d->model_g);
  for (int32_t k = 0; k < d->n_models; k++) d->model_g[k] = -1;
  d->file.n_range = d->file.cap_range = pb_pack_get_count(p, sizeof *d->file.range);
  d->file.range = pb_pack_get_block(p, (size_t)d->file.n_range * sizeof *d->file.range);
  pb_meta_free(&m);
  return p->short_read ? PB_FAIL : PB_OK;
}

/* Rank 0: each other rank's run of the parts, merged there (pb_ingest__dict_help), into @p d[0..helpers). */
static int pb_ingest__dict_gather(struct pb_ingest__ctx *ctx, struct pb_ingest__dict *d)
{
  const int ranks = ctx->helpers + 1;
  struct pb_pack p = {0};
  int *count = pb_calloc((size_t)ranks, sizeof *count), *displ = pb_calloc((size_t)ranks, sizeof *displ);
  int status = PB_OK, zero = 0;
  MPI_Gather(&zero, 1, MPI_INT, count, 1, MPI_INT, 0, ctx->comm);
  int64_t total = 0;
  for (int r = 0; r < ranks; r++) {
    displ[r] = (int)total;
    total += count[r] < 0 ? 0 : count[r];
    if (count[r] < 0 || total > INT32_MAX) status = PB_FAIL; /* a rank's parts too large to send: read serially */
  }
  p.buf = pb_malloc(total > 0 && status == PB_OK ? (size_t)total : 1);
  p.n = p.cap = status == PB_OK ? (size_t)total : 0;
  if (status != PB_OK) memset(count, 0, (size_t)ranks * sizeof *count);
  MPI_Gatherv(NULL, 0, MPI_BYTE, p.buf, count, displ, MPI_BYTE, 0, ctx->comm);
  for (int q = 0; q < ctx->helpers && status == PB_OK; q++) status = pb_ingest__dict_unpack(&p, &d[q]);
  pb_pack_free(&p);
  free(count);
  free(displ);
  return status;
}

/* A helper's run of parts merged into @p run (a context of its own, the current file's), packed as one part:
 * the run's metadata (pb_pack_meta: its sources with their conditions, images, labels, splits and label sets,
 * its models and groups), then what the merge needs beside it, each source's largest class and images' first
 * lines, the models' first lines and the ranges (in the run's indices, lines from 1); when @p bad, a failed part
 * with nothing in it. */
static void pb_ingest__pack_run(struct pb_pack *p, const struct pb_ingest__ctx *run, int64_t rows, int bad)
{
  static const struct pb_meta none;
  const struct pb_meta *meta = bad ? &none : run->meta;
  pb_pack_i32(p, bad);
  pb_pack_i64(p, rows);
  pb_pack_meta(p, meta);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    pb_pack_i32(p, run->src[s].max_class);
    pb_pack_put(p, run->src[s].image_line, (size_t)meta->sources[s].n_images * sizeof *run->src[s].image_line);
  }
  pb_pack_put(p, run->model_line, (size_t)meta->n_models * sizeof *run->model_line);
  const int64_t n_range = bad ? 0 : run->file->n_range;
  pb_pack_i64(p, n_range);
  pb_pack_put(p, run->file->range, (size_t)n_range * sizeof *run->file->range);
}

int pb_ingest__dict_help(struct pb_ingest__ctx *ctx, const int64_t order[4], MPI_Comm comm)
{
  int rank, ranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  const int n = (int)order[3], p0 = pb_ingest__dict_first(n, ranks, rank), p1 = pb_ingest__dict_first(n, ranks, rank + 1);
  struct pb_ingest__dict *d = pb_calloc((size_t)n, sizeof *d);
  struct pb_pack p = {0};
  /* the file's header, as rank 0 read it: its columns for the parts' rows */
  pb_ingest__use_file(ctx, (int)order[0]);
  ctx->have_header = 0;
  ctx->csv_lines = 0;
  const int header = pb_ingest__read(ctx, pb_ingest__pass1_row, 0, 1, 1) == PB_OK && ctx->have_header;
  int status = header ? pb_ingest__dict_read(ctx, d, n, p0, p1, (off_t)order[1], (off_t)order[2]) : PB_FAIL;
  /* the run merged here, in file order, as rank 0 would merge it: rank 0 then gathers one dictionary per rank,
   * each name once, not one per part */
  struct pb_ingest__ctx run;
  struct pb_meta run_meta;
  const char **paths = pb_malloc((size_t)ctx->n_files * sizeof *paths);
  for (int k = 0; k < ctx->n_files; k++) paths[k] = ctx->files[k].path;
  pb_ingest__ctx_init(&run, ctx->n_files, paths, ctx->spool_base, ctx->opt, &run_meta);
  pb_ingest__use_file(&run, (int)order[0]);
  int64_t line = 1, rows = 0;
  for (int q = p0; q < p1 && status == PB_OK; q++) {
    if (pb_ingest__dict_merge(&run, &d[q], line) != PB_OK) status = PB_FAIL; /* (a failed part: status already) */
    line += d[q].rows;
  }
  for (int q = p0; q < p1; q++) rows += d[q].rows;
  pb_ingest__pack_run(&p, &run, rows, status != PB_OK);
  pb_ingest__ctx_free(&run);
  pb_meta_free(&run_meta);
  free(paths);
  if (pb_log_verbosity() >= 2) /* tests/mpi/ingest_ranks.sh: every rank reads parts */
    pb_message("ingest: this rank read %d of pass 1's %d parts of %s", p1 - p0, n, ctx->path);
  int count = p.n <= INT32_MAX ? (int)p.n : -1;
  MPI_Gather(&count, 1, MPI_INT, NULL, 0, MPI_INT, 0, comm);
  MPI_Gatherv(p.buf, count < 0 ? 0 : count, MPI_BYTE, NULL, NULL, NULL, MPI_BYTE, 0, comm);
  pb_pack_free(&p);
  for (int q = 0; q < n; q++) pb_ingest__dict_free(&d[q]);
  free(d);
  return status;
}

/* The rows from @p data (the file's line @p line0) to @p size in parts (with
 * ctx->helpers, rank 0's run of them here, the others' gathered), then merged
 * in file order. */
static int pb_ingest__dict_parts(struct pb_ingest__ctx *ctx, off_t data, off_t size, int64_t line0)
{
  const int ranks = ctx->helpers + 1, n = ranks * PB_INGEST__DICT_PARTS_PER_THREAD * omp_get_max_threads();
  if (ranks > 1) { /* the helpers read this span too (pb_ingest__dict_help) */
    int64_t order[4] = {ctx->cur, data, size, n};
    pb_comm_bcast(order, 4, MPI_INT64_T, 0, ctx->comm);
  }
  /* rank 0's own parts, then one merged run of parts per helper */
  const int mine = pb_ingest__dict_first(n, ranks, 1), all = mine + ranks - 1;
  struct pb_ingest__dict *d = pb_calloc((size_t)all, sizeof *d);
  int status = pb_ingest__dict_read(ctx, d, n, 0, mine, data, size);
  if (ranks > 1 && pb_ingest__dict_gather(ctx, d + mine) != PB_OK) status = PB_FAIL;
  for (int p = 0; p < all && status == PB_OK; p++) {
    if (d[p].status != PB_OK || pb_ingest__dict_merge(ctx, &d[p], line0) != PB_OK) status = PB_FAIL;
    line0 += d[p].rows;
  }
  for (int p = 0; p < all; p++) pb_ingest__dict_free(&d[p]);
  free(d);
  return status;
}

/* Whether the file's last byte ends a line: the last row of one that does not goes to libcsv, which the parts
 * leave to the serial pass, so such a file takes that pass at once instead of after the parts. */
static int pb_ingest__ends_line(const char *path, off_t size)
{
  char last = 0;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const int ok = size > 0 && pread(fd, &last, 1, size - 1) == 1 && last == '\n';
  close(fd);
  return ok;
}

int pb_ingest__dict_file(struct pb_ingest__ctx *ctx, pb_ingest__row_fn header)
{
  struct stat st;
  if (strcmp(ctx->file->path, "-") == 0 || stat(ctx->file->path, &st) != 0 ||
      !S_ISREG(st.st_mode) || !pb_ingest__ends_line(ctx->file->path, st.st_size))
    return PB_FAIL;
  /* the header: the row that begins at offset 0 (blank lines before it are not plain) */
  if (pb_ingest__read(ctx, header, 0, 1, 1) != PB_OK || !ctx->have_header || ctx->csv_lines > 0) return PB_FAIL;
  const off_t data = ctx->row_end;
  const int64_t head_lines = pb_ingest__count_lines(ctx, 0, data);
  return head_lines < 0 ? PB_FAIL : pb_ingest__dict_parts(ctx, data, st.st_size, 1 + head_lines);
}
