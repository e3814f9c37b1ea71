/* A rank's cells: collective reads of the cell rows and the clean rows they
 * need, compacted to evaluation images; all at once (pb_cells_load), or a
 * piece of models at a time through reused buffers (pb_cells_stream_*). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pairbound/cells.h"
#include "pairbound/comm.h"
#include "pairbound/error.h"
#include "pairbound/sort.h"

/* The fields a block holds of those asked for: one float or int per record
 * (no top-k lists; the entropy is not asked for by any cell stage), and the
 * collision column only where the store has one, so a store without it reads
 * and holds nothing more. */
static int pb_cells__fields(const struct pb_meta *meta, int fields)
{
  fields &= ~(PB_FIELD_TOPK | PB_FIELD_ENTROPY);
  if (!(meta->summaries & PB_SUMMARY_COLLISION)) fields &= ~PB_FIELD_COLLISION;
  return fields;
}

/* Free the arrays of fields not in @p fields; the collision array where it is one of them. */
static void pb_cells__keep(struct pb_rows *r, int fields)
{
  if (!(fields & PB_FIELD_PRED)) { free(r->pred); r->pred = NULL; }
  if (!(fields & PB_FIELD_SMAX)) { free(r->smax); r->smax = NULL; }
  if (!(fields & PB_FIELD_PTRUE)) { free(r->ptrue); r->ptrue = NULL; }
  if (fields & PB_FIELD_COLLISION) pb_store_rows_summaries(r, PB_SUMMARY_COLLISION);
}

/* Rows [0, n) of whole-row @p in, evaluation images only (positions ev[0 .. n_eval)),
 * into rows [at, at + n) of @p out. */
static void pb_cells__compact(const struct pb_rows *in, int32_t n, const int32_t *ev, int32_t n_eval,
                              struct pb_rows *out, int32_t at)
{
  for (int32_t j = 0; j < n; j++) {
    const size_t i0 = (size_t)j * in->n_images, o = (size_t)(at + j) * n_eval;
    if (out->pred)
      for (int32_t k = 0; k < n_eval; k++) out->pred[o + k] = in->pred[i0 + ev[k]];
    if (out->smax)
      for (int32_t k = 0; k < n_eval; k++) out->smax[o + k] = in->smax[i0 + ev[k]];
    if (out->ptrue)
      for (int32_t k = 0; k < n_eval; k++) out->ptrue[o + k] = in->ptrue[i0 + ev[k]];
    if (out->collision)
      for (int32_t k = 0; k < n_eval; k++) out->collision[o + k] = in->collision[i0 + ev[k]];
  }
}

/* Whole-row buffer of a read: models are read in batches of consecutive
 * models whose rows of one field fit in this many bytes (at least one model),
 * the size of a record chunk (PB_STORE_CHUNK_BYTES): the paper store's small
 * sources stay one read per field, a source of 100,000 images is read a model
 * at a time.  Small, so the one buffer is touched (page-faulted) once and stays
 * in cache from the read to the compaction: with 32 MB the fresh buffer's page
 * faults were a third of bounds' load on the paper store (docs/store.md,
 * "Reading"). */
#define PB_CELLS_BATCH_BYTES ((size_t)4 << 20)

/* Records of a piece of pb_cells_stream_*: models whose evaluation records of
 * the fields read fit in this many bytes (at least one model).  Large enough
 * that a piece's cells keep the threads busy, small beside a rank's share. */
#define PB_CELLS_PIECE_BYTES ((size_t)64 << 20)

/* Models per read batch of source @p src: their rows of one field fit in
 * PB_CELLS_BATCH_BYTES (at least one model). */
static int32_t pb_cells__per_read(const struct pb_source *src, size_t batch_bytes)
{
  const size_t model_bytes = (size_t)src->n_conditions * (size_t)src->n_images * sizeof(float);
  return model_bytes > 0 && batch_bytes / model_bytes > 1 ? (int32_t)(batch_bytes / model_bytes) : 1;
}

/* Rows rows[0 .. u) (sorted, distinct, all of models [m0, m1)) of source s,
 * compacted to evaluation images in @p out, which holds u rows of n_eval.
 * They are read a batch of models at a time into @p buf (whole rows of
 * pb_cells__per_read models, the fields of @p fields), so the block holds
 * n_eval records per row instead of n_images and no second copy of the
 * cells' rows is ever allocated.  The batches depend on the metadata and
 * [m0, m1) only, so every rank makes the same reads (with no rows where it
 * has none) and the collective calls match; they agree on the status, so all
 * stop together. */
static int pb_cells__read_source(struct pb_store *st, int32_t s, int32_t m0, int32_t m1, int32_t per, int32_t u,
                                 const int32_t *rows, int fields, struct pb_rows *buf, struct pb_rows *out)
{
  const struct pb_source *src = &pb_store_meta(st)->sources[s];
  const int32_t n_eval = out->n_images;
  int32_t *ev = pb_malloc((size_t)(n_eval > 0 ? n_eval : 1) * sizeof *ev);
  for (int32_t i = 0, k = 0; i < src->n_images; i++)
    if (src->split[i] == PB_SPLIT_EVAL) ev[k++] = i;
  int status = PB_OK;
  for (int32_t m = m0, j = 0; m < m1 && status == PB_OK; m += per) {
    int32_t e = j;
    while (e < u && rows[e] / src->n_conditions < m + per) e++;
    status = pb_store_read_fields_into(st, s, e - j, rows + j, fields, buf);
    if (status == PB_OK) pb_cells__compact(buf, e - j, ev, n_eval, out, j);
    j = e;
  }
  free(ev);
  return status;
}

/* Whole-row read buffer for a batch of @p per_read of the @p n_models models of source s, the fields of @p fields. */
static void pb_cells__buf(const struct pb_source *src, int32_t per_read, int32_t n_models, int fields,
                          struct pb_rows *buf)
{
  pb_store_rows_alloc(buf, (per_read < n_models ? per_read : n_models) * src->n_conditions, src->n_images, 0);
  pb_cells__keep(buf, fields);
}

/* The cells c of [first, last) in @p all of source s with models [m0, m1)
 * (and want[c - first] where @p want is given): their rows and the clean rows
 * of their models, sorted and distinct, into @p rows; returns the count. */
static int32_t pb_cells__rows(const struct pb_meta *meta, const struct pb_cell_ref *all, int64_t first, int64_t last,
                              int32_t s, int32_t m0, int32_t m1, const uint8_t *want, int32_t *rows)
{
  const struct pb_source *src = &meta->sources[s];
  int32_t nr = 0;
  for (int64_t c = first; c < last; c++)
    if (all[c].source == s && all[c].model >= m0 && all[c].model < m1 && (!want || want[c - first])) {
      rows[nr++] = all[c].model * src->n_conditions + all[c].condition;
      rows[nr++] = all[c].model * src->n_conditions + src->clean;
    }
  return pb_sort_unique_i32(rows, nr);
}

/* Point cell @p d (of source s, whose u rows @p rows are in @p r) at its records. */
static void pb_cells__point(const struct pb_source *src, const int32_t *rows, int32_t u, const struct pb_rows *r,
                            const int32_t *labels, struct pb_cell_data *d)
{
  const int32_t n_eval = r->n_images;
  size_t a = (size_t)pb_sort_find_i32(rows, u, d->ref.model * src->n_conditions + src->clean) * n_eval;
  size_t b = (size_t)pb_sort_find_i32(rows, u, d->ref.model * src->n_conditions + d->ref.condition) * n_eval;
  d->n = n_eval;
  d->label = labels;
  d->pred0 = r->pred ? r->pred + a : NULL;
  d->pred1 = r->pred ? r->pred + b : NULL;
  d->s0 = r->smax ? r->smax + a : NULL;
  d->s1 = r->smax ? r->smax + b : NULL;
  d->m0 = r->ptrue ? r->ptrue + a : NULL;
  d->m1 = r->ptrue ? r->ptrue + b : NULL;
  d->q0 = r->collision ? r->collision + a : NULL;
  d->q1 = r->collision ? r->collision + b : NULL;
}

/* Evaluation labels of source @p src. */
static int32_t *pb_cells__labels(const struct pb_source *src, int32_t n_eval)
{
  int32_t *l = pb_malloc((size_t)(n_eval > 0 ? n_eval : 1) * sizeof *l);
  for (int32_t i = 0, k = 0; i < src->n_images; i++)
    if (src->split[i] == PB_SPLIT_EVAL) l[k++] = src->labels[i];
  return l;
}

int pb_cells_load(struct pb_store *st, int64_t first, int64_t last, int fields, struct pb_cell_block *out)
{
  return pb_cells_load_selected(st, first, last, fields, NULL, out);
}

int pb_cells_load_selected(struct pb_store *st, int64_t first, int64_t last, int fields, const uint8_t *want,
                           struct pb_cell_block *out)
{
  const struct pb_meta *meta = pb_store_meta(st);
  struct pb_cell_ref *all;
  int64_t n_all = pb_dist_cells(meta, &all);
  int status = PB_OK;
  memset(out, 0, sizeof *out);
  out->first = first;
  out->n_cells = last - first;
  out->cells = pb_calloc((size_t)(out->n_cells > 0 ? out->n_cells : 1), sizeof *out->cells);
  out->n_sources = meta->n_sources;
  out->rows = pb_calloc((size_t)meta->n_sources, sizeof *out->rows);
  out->labels = pb_calloc((size_t)meta->n_sources, sizeof *out->labels);
  fields = pb_cells__fields(meta, fields);
  if (last > n_all) last = n_all;
  /* each rank reads its own sources' rows without waiting for the others' (docs/store.md, "Reading", step 5),
   * unless the caller reads independently already */
  const int alone = pb_store_reads_independent(st, fields);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *src = &meta->sources[s];
    int32_t n_eval = pb_dist_eval_count(src);
    int32_t *rows = pb_malloc((size_t)(2 * out->n_cells + 1) * sizeof *rows);
    int32_t u = pb_cells__rows(meta, all, first, last, s, 0, meta->n_models, want, rows);
    /* pb_store_read_fields agrees on its status across ranks (reading
     * independently: below), so after a failure on any rank every rank skips
     * the remaining sources together */
    pb_store_rows_alloc(&out->rows[s], u, n_eval, 0);
    pb_cells__keep(&out->rows[s], fields);
    if (status == PB_OK) {
      struct pb_rows buf;
      const int32_t per_read = pb_cells__per_read(src, PB_CELLS_BATCH_BYTES);
      pb_cells__buf(src, per_read, meta->n_models, fields, &buf);
      status = pb_cells__read_source(st, s, 0, meta->n_models, per_read, u, rows, fields, &buf, &out->rows[s]);
      pb_store_rows_free(&buf);
    }
    out->labels[s] = pb_cells__labels(src, n_eval);
    if (status == PB_OK)
      for (int64_t c = first; c < last; c++) {
        if (all[c].source != s) continue;
        struct pb_cell_data *d = &out->cells[c - first];
        d->ref = all[c];
        d->index = c;
        if (!want || want[c - first]) pb_cells__point(src, rows, u, &out->rows[s], out->labels[s], d);
      }
    free(rows);
  }
  if (alone) status = pb_store_reads_collective(st, status);
  free(all);
  if (status != PB_OK) pb_cells_free(out);
  return status;
}

void pb_cells_stream_open(struct pb_store *st, MPI_Comm comm, int64_t first, int64_t last, int fields,
                          struct pb_cells_stream *cs)
{
  const struct pb_meta *meta = pb_store_meta(st);
  memset(cs, 0, sizeof *cs);
  cs->st = st;
  cs->comm = comm;
  cs->fields = pb_cells__fields(meta, fields);
  const int64_t n_all = pb_dist_cells(meta, &cs->all);
  cs->first = first;
  cs->last = last < n_all ? last : n_all;
  cs->src = -1;
  cs->piece_bytes = PB_CELLS_PIECE_BYTES;
  cs->batch_bytes = PB_CELLS_BATCH_BYTES;
  cs->rows = pb_malloc((size_t)(2 * (cs->last > first ? cs->last - first : 0) + 1) * sizeof *cs->rows);
  struct pb_cell_block *b = &cs->block;
  b->n_sources = meta->n_sources;
  b->rows = pb_calloc((size_t)meta->n_sources, sizeof *b->rows);
  b->labels = pb_calloc((size_t)meta->n_sources, sizeof *b->labels);
  b->cells = pb_calloc((size_t)(cs->last > first ? cs->last - first : 1), sizeof *b->cells);
}

/* Models per piece of source s: their evaluation records of the fields read
 * fit @p piece_bytes, in whole read batches of @p per_read models (each piece
 * so makes the same number of reads, ceil(per / per_read), on every rank). */
static int32_t pb_cells__per_piece(const struct pb_meta *meta, int32_t s, int fields, size_t piece_bytes,
                                   int32_t per_read)
{
  const struct pb_source *src = &meta->sources[s];
  const int nf = !!(fields & PB_FIELD_PRED) + !!(fields & PB_FIELD_SMAX) + !!(fields & PB_FIELD_PTRUE) +
                 !!(fields & PB_FIELD_COLLISION);
  const size_t model_bytes = (size_t)src->n_conditions * (size_t)pb_dist_eval_count(src) * sizeof(float) * (nf ? nf : 1);
  const int32_t M = meta->n_models > 0 ? meta->n_models : 1, pr = per_read < M ? per_read : M;
  size_t per = model_bytes > 0 ? piece_bytes / model_bytes : (size_t)M;
  if (per > (size_t)M) per = (size_t)M;
  per = per / (size_t)pr * (size_t)pr;
  return per > 0 ? (int32_t)per : pr;
}

int32_t pb_cells_stream_pieces(struct pb_cells_stream *cs, int32_t s)
{
  const struct pb_meta *meta = pb_store_meta(cs->st);
  struct pb_cell_block *b = &cs->block;
  if (s != cs->src) { /* a new source: its labels and read buffer; the records' arrays move to it */
    const struct pb_source *src = &meta->sources[s];
    if (cs->src >= 0) {
      b->rows[s] = b->rows[cs->src];
      memset(&b->rows[cs->src], 0, sizeof b->rows[cs->src]);
      free(b->labels[cs->src]);
      b->labels[cs->src] = NULL;
    }
    pb_store_rows_free(&cs->buf);
    cs->per_read = pb_cells__per_read(src, cs->batch_bytes);
    pb_cells__buf(src, cs->per_read, meta->n_models, cs->fields, &cs->buf);
    b->labels[s] = pb_cells__labels(src, pb_dist_eval_count(src));
    cs->src = s;
  }
  /* this rank's cells of s: consecutive in the cell order, so a range of models */
  cs->c0 = cs->first;
  while (cs->c0 < cs->last && cs->all[cs->c0].source < s) cs->c0++;
  cs->c1 = cs->c0;
  while (cs->c1 < cs->last && cs->all[cs->c1].source == s) cs->c1++;
  cs->per = pb_cells__per_piece(meta, s, cs->fields, cs->piece_bytes, cs->per_read);
  cs->m_lo = cs->c1 > cs->c0 ? cs->all[cs->c0].model : 0;
  int32_t n = cs->c1 > cs->c0 ? (cs->all[cs->c1 - 1].model - cs->m_lo) / cs->per + 1 : 0;
  /* collective reads: every rank makes as many as the rank with the most pieces */
  if (!pb_store_reads_alone(cs->st)) pb_comm_allreduce(MPI_IN_PLACE, &n, 1, MPI_INT32_T, MPI_MAX, cs->comm);
  return n;
}

int pb_cells_stream_load(struct pb_cells_stream *cs, int32_t j)
{
  const struct pb_meta *meta = pb_store_meta(cs->st);
  const int32_t s = cs->src;
  const struct pb_source *src = &meta->sources[s];
  struct pb_cell_block *b = &cs->block;
  const int32_t n_eval = pb_dist_eval_count(src);
  /* piece j: this rank's models [m0, m0 + per) of s; empty past its cells,
   * yet the same per / per_read reads, so the collective calls match */
  const int32_t m0 = cs->m_lo + j * cs->per, m1 = m0 + cs->per;
  const int32_t u = pb_cells__rows(meta, cs->all, cs->c0, cs->c1, s, m0, m1, NULL, cs->rows);
  struct pb_rows *r = &b->rows[s];
  if ((size_t)u * (size_t)n_eval > cs->cap) { /* grow: the arrays are reused by every later piece */
    pb_store_rows_free(r);
    pb_store_rows_alloc(r, u, n_eval, 0);
    pb_cells__keep(r, cs->fields);
    cs->cap = (size_t)u * (size_t)n_eval;
  }
  r->n_rows = u;
  r->n_images = n_eval;
  int status = pb_cells__read_source(cs->st, s, m0, m1, cs->per_read, u, cs->rows, cs->fields, &cs->buf, r);
  int64_t c0 = cs->c0;
  while (c0 < cs->c1 && cs->all[c0].model < m0) c0++;
  int64_t c1 = c0;
  while (c1 < cs->c1 && cs->all[c1].model < m1) c1++;
  b->first = c0;
  b->n_cells = c1 - c0;
  for (int64_t c = c0; c < c1; c++) {
    struct pb_cell_data *d = &b->cells[c - c0];
    memset(d, 0, sizeof *d);
    d->ref = cs->all[c];
    d->index = c;
    if (status == PB_OK) pb_cells__point(src, cs->rows, u, r, b->labels[s], d);
  }
  return status;
}

void pb_cells_stream_close(struct pb_cells_stream *cs)
{
  pb_store_rows_free(&cs->buf);
  pb_cells_free(&cs->block);
  free(cs->all);
  free(cs->rows);
  memset(cs, 0, sizeof *cs);
}

void pb_cells_free(struct pb_cell_block *b)
{
  for (int32_t s = 0; s < b->n_sources; s++) {
    if (b->rows) pb_store_rows_free(&b->rows[s]);
    if (b->labels) free(b->labels[s]);
  }
  free(b->rows);
  free(b->labels);
  free(b->cells);
  memset(b, 0, sizeof *b);
}

struct pb_cell_view pb_cells_view(const struct pb_meta *meta, const struct pb_cell_data *d, float tau)
{
  const struct pb_source *src = &meta->sources[d->ref.source];
  return (struct pb_cell_view){
    .ref = d->ref, .index = d->index,
    .model = meta->model_ids[d->ref.model], .source = src->name, .condition = src->conditions[d->ref.condition],
    .n = d->n, .label = d->label,
    .pred0 = d->pred0, .s0 = d->s0, .m0 = d->m0,
    .pred1 = d->pred1, .s1 = d->s1, .m1 = d->m1,
    .q0 = d->q0, .q1 = d->q1,
    .tau = tau};
}
