/* `pairbound ingest`, pass 2: the records, a window of the store at a time.
 *
 * A window is a run of the store's rows (store order: sources, then models,
 * then conditions) in whole write units (pb_store_span_rows) holding at most
 * PB_INGEST_WINDOW_BYTES of records and their bitmap; its dense arrays are
 * filled by reading, in every file, only the byte range where pass 1 saw
 * rows of the window's models, then written to the store on a thread of its
 * own (pb_store_writer) while the next window is read into a second buffer.  A
 * record already marked in the bitmap is a duplicate; the earliest one in
 * file order over every window is the one reported (a short read finds its
 * first occurrence), and only when there is none, the first missing record
 * in store order.  Format and messages: docs/csv.md. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/comm.h"
#include "pairbound/error.h"
#include "pairbound/ingest.h"
#include "pairbound/output.h"
#include "pairbound/store.h"
#include "ingest_internal.h"

/* Longest provenance text an append writes: an HDF5 attribute holds less than 64 KiB. */
#define PB_INGEST_PROVENANCE_MAX 60000

/* Rows [r0, r1) of source s: a part of a window. */
struct pb_ingest__seg {
  int32_t s, r0, r1;
  struct pb_rows rows;
  uint8_t *seen;           /* one bit per record */
};

/* Pass 2 over ranks (pb_ingest__pass2_ranks): every window's segments, planned alike on every rank. */
struct pb_ingest__plan {
  struct pb_ingest__seg *seg; /* in window order: window j's are seg[first[j] .. first[j + 1]) */
  int *first;
  int n_win, n_seg, cap_win, cap_seg;
};

struct pb_ingest__win {
  struct pb_ingest__plan *plan; /* while planning: a full window goes here instead of being read */
  struct pb_ingest__seg *seg;
  int n_seg, cap_seg, hint;
  int64_t bytes;           /* of the records and bitmaps of its rows */
  int dup_file;            /* the earliest duplicate so far (file order), -1 = none */
  int64_t dup_line;
  int32_t dup_key[4];
  char *missing;           /* the first missing record's message (store order), or NULL */
  int first_found;         /* pass 3: the duplicate's first occurrence was found ... */
  int64_t first_line;      /* ... at this line */
  /* with a store: the memory of the rows' arrays, kept from window to window, since a fresh page costs a fault
   * at its first touch (without: each row's own, handed on); two, so that one window is written while the next
   * is read into the other (keep[cur]) */
  char *keep[2];
  size_t keep_bytes[2];
  int cur;
  struct pb_store_writer writer; /* the last window's write (its rows in keep[!cur]) */
  struct pb_store **st;    /* the store written, or NULL: none (the rows handed on) */
  const char *open;        /* the store's path until it is opened (pb_ingest__open_now), then NULL */
};

/* The segment of the window that holds row r of source s, or NULL. */
static struct pb_ingest__seg *pb_ingest__seg_of(struct pb_ingest__win *w, int32_t s, int32_t r)
{
  struct pb_ingest__seg *g = &w->seg[w->hint];
  if (g->s == s && r >= g->r0 && r < g->r1) return g;
  for (int k = 0; k < w->n_seg; k++)
    if (w->seg[k].s == s && r >= w->seg[k].r0 && r < w->seg[k].r1) {
      w->hint = k;
      return &w->seg[k];
    }
  return NULL;
}

/* Record @p at of segment @p g takes the row's values. */
static void pb_ingest__put(const struct pb_ingest__ctx *ctx, struct pb_ingest__seg *g, size_t at,
                           const struct pb_ingest__rec *rec)
{
  struct pb_rows *r = &g->rows;
  r->pred[at] = rec->pred;
  r->smax[at] = rec->smax;
  r->ptrue[at] = rec->ptrue;
  for (int32_t k = 0; k < r->topk; k++) {
    r->topk_class[at * (size_t)r->topk + (size_t)k] = ctx->tk_class[k];
    r->topk_prob[at * (size_t)r->topk + (size_t)k] = ctx->tk_prob[k];
  }
  if (r->entropy) r->entropy[at] = rec->sum[0];
  if (r->collision) r->collision[at] = rec->sum[1];
}

static int pb_ingest__window_row(struct pb_ingest__ctx *ctx, char **f, int n, int64_t line)
{
  struct pb_ingest__win *w = ctx->win;
  struct pb_ingest__rec rec;
  int32_t key[4];
  /* rows after the earliest duplicate cannot hold an earlier one */
  if (w->dup_file == ctx->cur && line >= w->dup_line) return PB_INGEST__STOP;
  if (pb_ingest__key(ctx, f, n, line, &rec, key)) return PB_FAIL;
  const struct pb_source *src = &ctx->meta->sources[key[0]];
  struct pb_ingest__seg *g = pb_ingest__seg_of(w, key[0], key[1] * src->n_conditions + key[2]);
  if (!g) return PB_OK; /* another window's */
  if (pb_ingest__check_values(ctx, f, line, key[0], &rec)) return PB_FAIL;
  const size_t at = (size_t)(key[1] * src->n_conditions + key[2] - g->r0) * (size_t)src->n_images + (size_t)key[3];
  if (g->seen[at / 8] & (1u << (at % 8))) {
    w->dup_file = ctx->cur;
    w->dup_line = line;
    memcpy(w->dup_key, key, sizeof w->dup_key);
    return PB_INGEST__STOP;
  }
  g->seen[at / 8] |= (uint8_t)(1u << (at % 8));
  pb_ingest__put(ctx, g, at, &rec);
  return PB_OK;
}

/* The same for a thread's part of a file: records of one window may be
 * marked by several threads at once, so the bit is set atomically, and a
 * duplicate only stops the part (the window is then read again serially,
 * which reports it as above). */
static int pb_ingest__window_row_part(struct pb_ingest__ctx *ctx, char **f, int n, int64_t line)
{
  struct pb_ingest__rec rec;
  int32_t key[4];
  if (pb_ingest__key(ctx, f, n, line, &rec, key)) return PB_FAIL;
  const struct pb_source *src = &ctx->meta->sources[key[0]];
  struct pb_ingest__seg *g = pb_ingest__seg_of(ctx->win, key[0], key[1] * src->n_conditions + key[2]);
  if (!g) return PB_OK;
  if (pb_ingest__check_values(ctx, f, line, key[0], &rec)) return PB_FAIL;
  const size_t at = (size_t)(key[1] * src->n_conditions + key[2] - g->r0) * (size_t)src->n_images + (size_t)key[3];
  const uint8_t bit = (uint8_t)(1u << (at % 8));
  if (__atomic_fetch_or(&g->seen[at / 8], bit, __ATOMIC_RELAXED) & bit) return PB_FAIL;
  pb_ingest__put(ctx, g, at, &rec);
  return PB_OK;
}

/* Whether (s, m) has rows in the window. */
static int pb_ingest__in_window(const struct pb_ingest__ctx *ctx, const struct pb_ingest__win *w, int32_t s,
                                int32_t m)
{
  const int32_t C = ctx->meta->sources[s].n_conditions;
  for (int k = 0; k < w->n_seg; k++)
    if (w->seg[k].s == s && m >= w->seg[k].r0 / C && m <= (w->seg[k].r1 - 1) / C) return 1;
  return 0;
}

/* The byte range of file @p k that can hold the window's rows: from the
 * first row to the end of the last of the window's models; 0 when none. */
static int pb_ingest__file_span(const struct pb_ingest__ctx *ctx, const struct pb_ingest__win *w, int k, off_t *off0,
                                off_t *off1, int64_t *line0)
{
  const struct pb_ingest__file *f = &ctx->files[k];
  *off0 = -1;
  *off1 = 0;
  *line0 = 0;
  for (int64_t e = 0; e < f->n_range; e++) {
    const struct pb_ingest__range *g = &f->range[e];
    if (!pb_ingest__in_window(ctx, w, g->s, g->m)) continue;
    if (*off0 < 0 || g->off0 < *off0) *off0 = g->off0, *line0 = g->line0;
    if (g->off1 > *off1) *off1 = g->off1;
  }
  return *off0 >= 0;
}

/* A thread's part of a file's span. */
struct pb_ingest__part {
  int k;
  off_t off0, off1;
};

/* The window's spans cut into parts at line starts, one per thread and
 * file; NULL when a file is not plain (a line start might lie inside a
 * quoted field) or a part cannot be placed. */
static struct pb_ingest__part *pb_ingest__parts(struct pb_ingest__ctx *ctx, const struct pb_ingest__win *w,
                                                int nt, int *n_part)
{
  struct pb_ingest__part *part = pb_malloc((size_t)ctx->n_files * (size_t)nt * sizeof *part);
  *n_part = 0;
  for (int k = 0; k < ctx->n_files; k++) {
    off_t off0, off1;
    int64_t line0;
    if (!pb_ingest__file_span(ctx, w, k, &off0, &off1, &line0)) continue;
    pb_ingest__use_file(ctx, k);
    if (!ctx->file->plain) goto fail;
    off_t a = off0;
    for (int t = 1; t <= nt; t++) {
      const off_t b = t == nt ? off1 : pb_ingest__line_start(ctx, off0 + (off1 - off0) / nt * t, off1);
      if (b < 0) goto fail;
      if (b > a) part[(*n_part)++] = (struct pb_ingest__part){.k = k, .off0 = a, .off1 = b};
      if (b > a) a = b;
    }
  }
  return part;
fail:
  free(part);
  return NULL;
}

/* Create the store at @p path (--append: begin adding to it) into *st. */
static int pb_ingest__open_store(const struct pb_ingest__ctx *ctx, const char *path, struct pb_store **st)
{
  return ctx->opt && ctx->opt->append ? pb_store_append_begin(path, ctx->meta, st)
                                      : pb_store_create(path, MPI_COMM_SELF, ctx->meta, st);
}

/* The same for the window's store still to open (w->open), once. */
static int pb_ingest__open_now(const struct pb_ingest__ctx *ctx, struct pb_ingest__win *w)
{
  const char *path = w->open;
  w->open = NULL;
  return pb_ingest__open_store(ctx, path, w->st);
}

/* One thread's parts: a copy of the context with its own scratch and
 * lookup hints (the dictionaries are only read).  A store still to open is
 * opened meanwhile by this thread (the one that makes MPI calls), which then
 * joins the others' parts: creating it writes every chunk of the new file,
 * seconds at paper scale.  When that fails (*opened), its message stands and
 * this thread reads no part. */
static int pb_ingest__sweep_parts(const struct pb_ingest__ctx *ctx, struct pb_ingest__win *w,
                                  const struct pb_ingest__part *part, int n_part, int *opened)
{
  int ok = 1;
  const char *open = w->open; /* the threads copy *w: it does not change in the region */
  w->open = NULL;
  *opened = PB_OK;
#pragma omp parallel reduction(&& : ok)
  {
#pragma omp master
    if (open && (*opened = pb_ingest__open_store(ctx, open, w->st)) != PB_OK) ok = 0;
    struct pb_ingest__ctx c = *ctx;
    struct pb_ingest__win cw = *w; /* the segments (the store is the master's) */
    const size_t K = (size_t)ctx->meta->topk + 1;
    c.win = &cw;
    c.tk_class = pb_malloc(K * sizeof *c.tk_class);
    c.tk_prob = pb_malloc(K * sizeof *c.tk_prob);
    c.src = pb_malloc((size_t)ctx->meta->n_sources * sizeof *c.src);
    memcpy(c.src, ctx->src, (size_t)ctx->meta->n_sources * sizeof *c.src);
#pragma omp for schedule(dynamic, 1)
    for (int p = 0; p < n_part; p++) {
      if (!ok) continue;
      pb_ingest__use_file(&c, part[p].k);
      if (pb_ingest__read(&c, pb_ingest__window_row_part, part[p].off0, part[p].off1, 1) != PB_OK)
        ok = 0;
    }
    free(c.tk_class);
    free(c.tk_prob);
    free(c.src);
  }
  return ok;
}

/* Read every file's part that can hold the window's rows: with threads
 * when every file read is plain and no duplicate was seen before, else (or
 * when the threads meet any error or duplicate, which they leave to this
 * read to report) in file order on this thread; a store still to open is
 * opened first, its failure the message. */
static int pb_ingest__sweep(struct pb_ingest__ctx *ctx, struct pb_ingest__win *w)
{
  const int nt = omp_get_max_threads();
  int n_part, opened;
  struct pb_ingest__part *part = nt > 1 && w->dup_file < 0 ? pb_ingest__parts(ctx, w, nt, &n_part) : NULL;
  if (part) {
    const int ok = pb_ingest__sweep_parts(ctx, w, part, n_part, &opened);
    free(part);
    if (opened != PB_OK) return PB_FAIL;
    if (ok) return PB_OK;
    for (int k = 0; k < w->n_seg; k++) {
      const struct pb_ingest__seg *g = &w->seg[k];
      const size_t n_rec = (size_t)(g->r1 - g->r0) * (size_t)ctx->meta->sources[g->s].n_images;
      memset(g->seen, 0, (n_rec + 7) / 8 + 1);
    }
  }
  if (w->open && pb_ingest__open_now(ctx, w) != PB_OK) return PB_FAIL;
  ctx->win = w;
  for (int k = 0; k < ctx->n_files && (w->dup_file < 0 || k <= w->dup_file); k++) {
    off_t off0, off1;
    int64_t line0;
    if (!pb_ingest__file_span(ctx, w, k, &off0, &off1, &line0)) continue;
    pb_ingest__use_file(ctx, k);
    if (pb_ingest__read(ctx, pb_ingest__window_row, off0, off1, line0) != PB_OK) return PB_FAIL;
  }
  return PB_OK;
}

/* The first missing record of the window's rows, in store order. */
static void pb_ingest__find_missing(const struct pb_ingest__ctx *ctx, struct pb_ingest__win *w)
{
  const struct pb_meta *meta = ctx->meta;
  for (int k = 0; k < w->n_seg && !w->missing; k++) {
    const struct pb_ingest__seg *g = &w->seg[k];
    const struct pb_source *src = &meta->sources[g->s];
    size_t at = 0;
    for (int32_t r = g->r0; r < g->r1 && !w->missing; r++)
      for (int32_t i = 0; i < src->n_images; i++, at++)
        if (!(g->seen[at / 8] & (1u << (at % 8)))) {
          pb_error_set("%s: source %s, model %s, condition %s: missing record for image %s", ctx->set_name,
                       src->name, meta->model_ids[r / src->n_conditions], src->conditions[r % src->n_conditions],
                       src->image_ids[i]);
          w->missing = pb_strdup(pb_error_message());
          break;
        }
  }
}

static void pb_ingest__window_clear(struct pb_ingest__win *w)
{
  for (int k = 0; k < w->n_seg; k++) {
    if (!w->st) pb_store_rows_free(&w->seg[k].rows);
    free(w->seg[k].seen);
  }
  w->n_seg = w->hint = 0;
  w->bytes = 0;
}

/* The bytes of the records of rows [r0, r1) of source @p s. */
static size_t pb_ingest__rows_bytes(const struct pb_meta *meta, int32_t s, int32_t r0, int32_t r1)
{
  return pb_store_rows_bytes(r1 - r0, meta->sources[s].n_images, meta->topk, meta->summaries);
}

/* A window's bytes for those rows: the records and their bitmap. */
static int64_t pb_ingest__window_bytes(const struct pb_meta *meta, int32_t s, int32_t r0, int32_t r1)
{
  return (int64_t)pb_ingest__rows_bytes(meta, s, r0, r1) + ((int64_t)(r1 - r0) * meta->sources[s].n_images) / 8;
}

/* The window's rows on: written to the store (on the writer's thread where
 * the store allows, the next window then read into the other buffer), or
 * (none) kept in @p out, one whole source each. */
static int pb_ingest__hand_on(struct pb_ingest__win *w, struct pb_rows *out)
{
  int status = PB_OK;
  if (w->st && pb_store_write_async(*w->st)) {
    struct pb_store_span *span = pb_malloc((size_t)w->n_seg * sizeof *span);
    for (int k = 0; k < w->n_seg; k++)
      span[k] = (struct pb_store_span){.src = w->seg[k].s, .row0 = w->seg[k].r0,
                                       .n_rows = w->seg[k].r1 - w->seg[k].r0, .rows = w->seg[k].rows};
    pb_store_writer_start(&w->writer, *w->st, span, w->n_seg);
    free(span);
    w->cur = !w->cur;
    return PB_OK;
  }
  for (int k = 0; k < w->n_seg && status == PB_OK; k++) {
    struct pb_ingest__seg *g = &w->seg[k];
    if (w->st) {
      status = pb_store_write_span(*w->st, g->s, g->r0, g->r1 - g->r0, &g->rows);
    } else {
      out[g->s] = g->rows;
      memset(&g->rows, 0, sizeof g->rows);
    }
  }
  return status;
}

/* Fill the window's rows: their arrays (a kept buffer with a store), then the files' records. */
static int pb_ingest__window_fill(struct pb_ingest__ctx *ctx, struct pb_ingest__win *w)
{
  const struct pb_meta *meta = ctx->meta;
  const int store = w->st != NULL, b = w->cur;
  size_t need = 0;
  for (int k = 0; k < w->n_seg && store; k++)
    need += pb_ingest__rows_bytes(meta, w->seg[k].s, w->seg[k].r0, w->seg[k].r1);
  if (store && need > w->keep_bytes[b]) { /* grown in place where it can be: its pages stay */
    w->keep[b] = pb_realloc(w->keep[b], need);
    w->keep_bytes[b] = need;
  }
  size_t at = 0;
  for (int k = 0; k < w->n_seg; k++) {
    struct pb_ingest__seg *g = &w->seg[k];
    const struct pb_source *src = &meta->sources[g->s];
    const size_t n_rec = (size_t)(g->r1 - g->r0) * (size_t)src->n_images;
    if (store) {
      pb_store_rows_carve(&g->rows, g->r1 - g->r0, src->n_images, meta->topk, meta->summaries, w->keep[b] + at);
      at += pb_ingest__rows_bytes(meta, g->s, g->r0, g->r1);
    } else {
      pb_store_rows_alloc(&g->rows, g->r1 - g->r0, src->n_images, meta->topk);
      pb_store_rows_summaries(&g->rows, meta->summaries);
    }
    g->seen = pb_calloc((n_rec + 7) / 8 + 1, 1);
  }
  return pb_ingest__sweep(ctx, w);
}

/* Fill the window's rows and, while the input has no error, hand them on. */
static int pb_ingest__window_do(struct pb_ingest__ctx *ctx, struct pb_ingest__win *w, struct pb_rows *out)
{
  const int store = w->st != NULL;
  int status = pb_ingest__window_fill(ctx, w);
  /* the window before's write ended: its failure, which came first, the message (the store is this process's;
   * no store, no write: pb_ingest_parse, which may run without MPI) */
  if (store && pb_store_writer_wait(&w->writer, MPI_COMM_SELF) != PB_OK) status = PB_FAIL;
  if (status == PB_OK && w->dup_file < 0) pb_ingest__find_missing(ctx, w);
  if (status == PB_OK && w->dup_file < 0 && !w->missing) status = pb_ingest__hand_on(w, out);
  pb_ingest__window_clear(w);
  return status;
}

/* The window's segments (no rows read yet) become the plan's next window. */
static void pb_ingest__plan_push(struct pb_ingest__win *w)
{
  struct pb_ingest__plan *p = w->plan;
  if (p->n_win + 2 > p->cap_win) {
    p->cap_win = p->cap_win ? 2 * p->cap_win : 16;
    p->first = pb_realloc(p->first, (size_t)p->cap_win * sizeof *p->first);
  }
  if (p->n_seg + w->n_seg > p->cap_seg) {
    p->cap_seg = p->n_seg + w->n_seg > 2 * p->cap_seg ? p->n_seg + w->n_seg : 2 * p->cap_seg;
    p->seg = pb_realloc(p->seg, (size_t)p->cap_seg * sizeof *p->seg);
  }
  p->first[p->n_win++] = p->n_seg;
  memcpy(p->seg + p->n_seg, w->seg, (size_t)w->n_seg * sizeof *w->seg);
  p->n_seg += w->n_seg;
  p->first[p->n_win] = p->n_seg;
  w->n_seg = w->hint = 0;
  w->bytes = 0;
}

/* Add rows [r0, r1) of source s to the window, doing it first when they would
 * not fit (a window holds at least one unit). */
static int pb_ingest__window_add(struct pb_ingest__ctx *ctx, struct pb_ingest__win *w, int64_t budget, int32_t s,
                                 int32_t r0, int32_t r1, struct pb_rows *out)
{
  const int64_t bytes = pb_ingest__window_bytes(ctx->meta, s, r0, r1);
  if (w->n_seg > 0 && w->bytes + bytes > budget) {
    if (w->plan) pb_ingest__plan_push(w);
    else if (pb_ingest__window_do(ctx, w, out) != PB_OK) return PB_FAIL;
  }
  w->bytes += bytes;
  struct pb_ingest__seg *last = w->n_seg ? &w->seg[w->n_seg - 1] : NULL;
  if (last && last->s == s && last->r1 == r0) {
    last->r1 = r1;
    return PB_OK;
  }
  if (w->n_seg == w->cap_seg) {
    w->cap_seg = w->cap_seg ? 2 * w->cap_seg : 8;
    w->seg = pb_realloc(w->seg, (size_t)w->cap_seg * sizeof *w->seg);
  }
  w->seg[w->n_seg++] = (struct pb_ingest__seg){.s = s, .r0 = r0, .r1 = r1};
  return PB_OK;
}

/* Pass 3, only after a duplicate: the line of the key's first occurrence. */
static int pb_ingest__first_row(struct pb_ingest__ctx *ctx, char **f, int n, int64_t line)
{
  struct pb_ingest__win *w = ctx->win;
  const struct pb_meta *meta = ctx->meta;
  const struct pb_source *src = &meta->sources[w->dup_key[0]];
  if (n != ctx->file->n_fields) return PB_OK;
  if (strcmp(f[ctx->file->col[PB_COL_SOURCE]], src->name) == 0 &&
      strcmp(f[ctx->file->col[PB_COL_MODEL]], meta->model_ids[w->dup_key[1]]) == 0 &&
      strcmp(f[ctx->file->col[PB_COL_CONDITION]], src->conditions[w->dup_key[2]]) == 0 &&
      strcmp(f[ctx->file->col[PB_COL_IMAGE]], src->image_ids[w->dup_key[3]]) == 0) {
    w->first_found = 1;
    w->first_line = line;
    return PB_INGEST__STOP;
  }
  return PB_OK;
}

static int pb_ingest__report_duplicate(struct pb_ingest__ctx *ctx, struct pb_ingest__win *w)
{
  const struct pb_meta *meta = ctx->meta;
  const struct pb_source *src = &meta->sources[w->dup_key[0]];
  int first_file = -1;
  ctx->win = w;
  /* the first occurrence lies in a range of the key's (source, model) in some file up to the duplicate's */
  for (int k = 0; k <= w->dup_file && first_file < 0; k++) {
    const struct pb_ingest__file *f = &ctx->files[k];
    for (int64_t e = 0; e < f->n_range && first_file < 0; e++) {
      const struct pb_ingest__range *g = &f->range[e];
      if (g->s != w->dup_key[0] || g->m != w->dup_key[1]) continue;
      pb_ingest__use_file(ctx, k);
      if (pb_ingest__read(ctx, pb_ingest__first_row, g->off0, g->off1, g->line0) != PB_OK) return PB_FAIL;
      if (w->first_found) first_file = k;
    }
  }
  char at[1100];
  pb_ingest__use_file(ctx, w->dup_file);
  pb_error_set("%s:%lld: duplicate record for source %s, model %s, condition %s, image %s (first %s)", ctx->path,
               (long long)w->dup_line, src->name, meta->model_ids[w->dup_key[1]], src->conditions[w->dup_key[2]],
               src->image_ids[w->dup_key[3]], pb_ingest__where(ctx, first_file, w->first_line, at, sizeof at));
  return PB_FAIL;
}

/* Every window of the store's rows in store order (the last one left in @p w):
 * each done in turn, or with w->plan, planned. */
static int pb_ingest__windows(struct pb_ingest__ctx *ctx, struct pb_ingest__win *w, int64_t budget,
                              struct pb_rows *out)
{
  const struct pb_meta *meta = ctx->meta;
  int status = PB_OK;
  for (int32_t s = 0; s < meta->n_sources && status == PB_OK; s++) {
    const int32_t C = meta->sources[s].n_conditions;
    /* a write unit is the store's (pb_store_span_rows); before the store is open, a whole model's rows (a run of
     * units), as long as one fits a window, else the store is opened now, not while the first window is read */
    if (w->open && pb_ingest__window_bytes(meta, s, 0, C) > budget) status = pb_ingest__open_now(ctx, w);
    const int32_t unit = w->st && !w->open && status == PB_OK ? pb_store_span_rows(*w->st, s) : C;
    for (int32_t m = ctx->base_models; m < meta->n_models && status == PB_OK; m++)
      for (int32_t c = 0; c < C && status == PB_OK; c += unit)
        status = pb_ingest__window_add(ctx, w, budget, s, m * C + c, m * C + (c + unit < C ? c + unit : C), out);
  }
  return status;
}

static void pb_ingest__win_free(struct pb_ingest__win *w)
{
  free(w->missing);
  free(w->seg);
  pb_store_writer_free(&w->writer);
  free(w->keep[0]);
  free(w->keep[1]);
}

int64_t pb_ingest__window_budget(const struct pb_ingest_options *opt)
{
  return opt && opt->window_bytes > 0 ? opt->window_bytes : PB_INGEST_WINDOW_BYTES;
}

/* Pass 2: every window in store order, then the verdict on duplicates and
 * missing records.  @p budget bounds a window's bytes.  With @p path, the
 * store there is opened (*st) while the first window is read, else the rows
 * go to @p out. */
static int pb_ingest__pass2(struct pb_ingest__ctx *ctx, int64_t budget, const char *path, struct pb_store **st,
                            struct pb_rows *out)
{
  struct pb_ingest__win w = {.dup_file = -1, .st = path ? st : NULL, .open = path};
  int status = pb_ingest__windows(ctx, &w, budget, out);
  if (status == PB_OK && w.n_seg > 0) status = pb_ingest__window_do(ctx, &w, out);
  if (w.st && pb_store_writer_wait(&w.writer, MPI_COMM_SELF) != PB_OK) status = PB_FAIL; /* the last window's write */
  if (status == PB_OK && w.open) status = pb_ingest__open_now(ctx, &w); /* no window (no records): still a store */
  pb_ingest__window_clear(&w);
  if (status == PB_OK && w.dup_file >= 0) status = pb_ingest__report_duplicate(ctx, &w);
  else if (status == PB_OK && w.missing) {
    pb_error_set("%s", w.missing);
    status = PB_FAIL;
  }
  pb_ingest__win_free(&w);
  return status;
}

/* Pass 2 over the ranks of @p comm into @p st, created over them with the
 * direct writes (else PB_INGEST__AGAIN at once).  The windows are planned
 * alike on every rank (pb_ingest__windows: the same metadata, ranges and
 * budget); window j is read by rank j % size, with its threads, and written
 * by it; a round of one window per rank ends with the wait for the writes of
 * the round before (collective) and the ranks' agreement that each read its
 * window whole, so a rank reads its next window while its last is written,
 * as on one rank.  Any row refused, duplicate or missing record on any rank
 * returns PB_INGEST__AGAIN on every rank, with no message: the caller reads
 * the input again the serial way on one rank, whose message is the one
 * given.  A failed write returns PB_FAIL with its message, on every rank. */
int pb_ingest__pass2_ranks(struct pb_ingest__ctx *ctx, int64_t budget, struct pb_store *st, MPI_Comm comm)
{
  if (!pb_store_write_async(st)) return PB_INGEST__AGAIN; /* agreed over the ranks when the store was created */
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  struct pb_ingest__plan plan = {0};
  struct pb_ingest__win w = {.dup_file = -1, .st = &st, .plan = &plan};
  int status = pb_ingest__windows(ctx, &w, budget, NULL);
  if (w.n_seg > 0) pb_ingest__plan_push(&w);
  w.plan = NULL;
  int n_mine = 0;
  const double t0 = MPI_Wtime();
  for (int j0 = 0; j0 < plan.n_win && status == PB_OK; j0 += size) {
    const int j = j0 + rank, mine = j < plan.n_win;
    int whole = 1;
    if (mine) {
      n_mine++;
      w.n_seg = plan.first[j + 1] - plan.first[j];
      if (w.n_seg > w.cap_seg) {
        w.cap_seg = w.n_seg;
        w.seg = pb_realloc(w.seg, (size_t)w.cap_seg * sizeof *w.seg);
      }
      memcpy(w.seg, plan.seg + plan.first[j], (size_t)w.n_seg * sizeof *w.seg);
      whole = pb_ingest__window_fill(ctx, &w) == PB_OK && w.dup_file < 0;
      if (whole) pb_ingest__find_missing(ctx, &w);
      whole = whole && !w.missing;
    }
    status = pb_store_writer_wait(&w.writer, comm);
    pb_comm_allreduce(MPI_IN_PLACE, &whole, 1, MPI_INT, MPI_MIN, comm);
    if (status == PB_OK && !whole) status = PB_INGEST__AGAIN;
    if (status == PB_OK && mine) status = pb_ingest__hand_on(&w, NULL); /* starts the write: no MPI call */
    pb_ingest__window_clear(&w);
  }
  /* the last round's writes (a second wait after a failed one finds none) */
  if (pb_store_writer_wait(&w.writer, comm) != PB_OK && status != PB_FAIL) status = PB_FAIL;
  if (pb_log_verbosity() >= 2) /* tests/mpi/ingest_ranks.sh: every rank reads windows */
    pb_message("ingest: this rank read %d of pass 2's %d window%s and wrote them in %.2f s", n_mine, plan.n_win,
               plan.n_win == 1 ? "" : "s", MPI_Wtime() - t0);
  free(plan.seg);
  free(plan.first);
  pb_ingest__win_free(&w);
  return status;
}

/* --append: the store's dictionaries, roles and provenance before pass 1. */
static int pb_ingest__seed_store(struct pb_ingest__ctx *ctx, const char *store_path)
{
  struct pb_store *old = NULL;
  if (pb_store_open(store_path, MPI_COMM_SELF, &old) != PB_OK) return PB_FAIL;
  pb_ingest__seed(ctx, store_path, pb_store_meta(old));
  ctx->old_provenance = pb_strdup(pb_store_meta(old)->provenance);
  pb_store_close(old);
  return PB_OK;
}

/* The store's provenance: the options' text; after --append, the store's
 * text, a line "appended:" and the options' text (the older text alone when
 * that would be too long for the attribute that holds it). */
static void pb_ingest__provenance(struct pb_ingest__ctx *ctx)
{
  const char *now = ctx->opt && ctx->opt->provenance ? ctx->opt->provenance : "";
  if (!ctx->old_provenance) {
    ctx->meta->provenance = pb_strdup(now);
    return;
  }
  const size_t n = strlen(ctx->old_provenance) + strlen(now) + 16;
  ctx->meta->provenance = pb_malloc(n);
  if (n < PB_INGEST_PROVENANCE_MAX) snprintf(ctx->meta->provenance, n, "%s\nappended:\n%s", ctx->old_provenance, now);
  else snprintf(ctx->meta->provenance, n, "%s", ctx->old_provenance);
}

int pb_ingest__metadata(struct pb_ingest__ctx *ctx)
{
  pb_ingest__provenance(ctx);
  if (!pb_meta_validate(ctx->meta)) return PB_OK;
  char why[1024];
  snprintf(why, sizeof why, "%s", pb_error_message());
  pb_error_set("%s: %s", ctx->set_name, why);
  return PB_FAIL;
}

/* Pass 1, the metadata's last checks, then pass 2 into a store or @p out.
 * @p fast: pass 1 in parts (ingest_dict.c), which leaves the rows' names and
 * numbers to pass 2 (pb_ingest__key, pb_ingest__check_values: every row of
 * every window); on any failure PB_INGEST__AGAIN, and *late the message when
 * it came from the store's creation on.  Not fast with *late: when pass 1
 * (which meets a row's error before pass 2 could) and the checks after it
 * find nothing, that message, which pass 2 would give again (the same
 * dictionaries, the same windows). */
static int pb_ingest__once(int n, const char *const *paths, const struct pb_ingest_options *opt, struct pb_meta *meta,
                           const char *store_path, struct pb_rows **out, int fast, char **late)
{
  struct pb_ingest__ctx ctx;
  struct pb_store *st = NULL;
  int status = PB_FAIL, writing = 0;
  pb_ingest__ctx_init(&ctx, n, paths, store_path, opt, meta);
  if (opt && opt->append && pb_ingest__seed_store(&ctx, store_path) != PB_OK) goto done;
  if (pb_ingest__pass1(&ctx, fast ? pb_ingest__dict_file : NULL) != PB_OK || pb_ingest__metadata(&ctx) != PB_OK)
    goto done;
  if (!fast && *late) {
    pb_error_set("%s", *late);
    goto done;
  }
  writing = 1;
  if (out) *out = pb_calloc((size_t)meta->n_sources, sizeof **out);
  const int64_t window = !store_path ? INT64_MAX : pb_ingest__window_budget(opt);
  status = pb_ingest__pass2(&ctx, window, store_path, &st, out ? *out : NULL);
  if (status == PB_OK && st) {
    status = pb_store_commit(st); /* closes the store either way */
    st = NULL;
  }
done:
  if (fast && status != PB_OK) {
    if (writing) *late = pb_strdup(pb_error_message());
    status = PB_INGEST__AGAIN;
  }
  if (st) pb_store_close(st); /* removes the unfinished STORE.tmp */
  if (status != PB_OK && out && *out) {
    for (int32_t s = 0; s < meta->n_sources; s++) pb_store_rows_free(&(*out)[s]);
    free(*out);
    *out = NULL;
  }
  pb_ingest__ctx_free(&ctx);
  return status;
}

void pb_ingest__say_pass1(int again)
{
  /* tests/mpi/ingest_parts.sh asks, so that the fast way cannot vanish unseen */
  if (pb_log_verbosity() >= 2)
    pb_message("ingest: pass 1 %s", again ? "read again in file order (the parts left it a row, conflict or error "
                                            "to report)"
                                          : "in parts with dictionaries of their own");
}

/* The ingest: the fast way where it may apply (no stdin: pass 1 in parts,
 * even on one thread, where the parts skip the probabilities that pass 2
 * reads anyway), else or when it fails the serial way from the start, whose
 * messages count. */
static int pb_ingest__run(int n, const char *const *paths, const struct pb_ingest_options *opt, struct pb_meta *meta,
                          const char *store_path, struct pb_rows **out)
{
  char *late = NULL;
  int status = PB_INGEST__AGAIN, fast = 1;
  for (int k = 0; k < n; k++)
    if (strcmp(paths[k], "-") == 0) fast = 0;
  if (fast) status = pb_ingest__once(n, paths, opt, meta, store_path, out, 1, &late);
  if (fast) pb_ingest__say_pass1(status == PB_INGEST__AGAIN);
  if (status == PB_INGEST__AGAIN) {
    if (fast) pb_meta_free(meta);
    status = pb_ingest__once(n, paths, opt, meta, store_path, out, 0, &late);
  }
  free(late);
  return status;
}

int pb_ingest_parse(const char *csv_path, const struct pb_ingest_options *opt, struct pb_meta *meta,
                    struct pb_rows **rows)
{
  *rows = NULL;
  const int status = pb_ingest__run(1, &csv_path, opt, meta, NULL, rows);
  if (status != PB_OK) pb_meta_free(meta);
  return status;
}

int pb_ingest_files(int n, const char *const *paths, const struct pb_ingest_options *opt, const char *store_path)
{
  struct pb_meta meta;
  int stdin_seen = 0;
  for (int k = 0; k < n; k++)
    if (strcmp(paths[k], "-") == 0 && stdin_seen++) {
      pb_error_set("stdin (-) given more than once");
      return PB_FAIL;
    }
  if (opt && opt->append && (opt->n_roles > 0)) {
    pb_error_set("--role and --append: the store keeps its roles (pairbound roles STORE --set changes them)");
    return PB_FAIL;
  }
  /* before reading anything: the store must never replace an input */
  if (!(opt && opt->append) && pb_output_file_ok(store_path, PB_OUTPUT_STORE, paths, n, pb_output_force()))
    return PB_FAIL;
  const int status = pb_ingest__run(n, paths, opt, &meta, store_path, NULL);
  pb_meta_free(&meta);
  return status;
}

int pb_ingest_csv(const char *csv_path, const struct pb_ingest_options *opt, const char *store_path)
{
  return pb_ingest_files(1, &csv_path, opt, store_path);
}
