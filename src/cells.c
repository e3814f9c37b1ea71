/* A rank's cells: one collective read per source of the cell rows and the
 * clean rows they need, compacted to evaluation images. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pairbound/cells.h"
#include "pairbound/error.h"
#include "pairbound/util.h"

/* Free the arrays of fields not in @p fields. */
static void pb_cells__keep(struct pb_rows *r, int fields)
{
  if (!(fields & PB_FIELD_PRED)) { free(r->pred); r->pred = NULL; }
  if (!(fields & PB_FIELD_SMAX)) { free(r->smax); r->smax = NULL; }
  if (!(fields & PB_FIELD_PTRUE)) { free(r->ptrue); r->ptrue = NULL; }
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

/* Source s's rows (sorted, distinct) compacted to evaluation images in @p out.
 * They are read a batch of models at a time into one buffer of whole rows, so
 * the block holds n_eval records per row instead of n_images and no second
 * copy of the cells' rows is ever allocated.  The batches depend on the
 * metadata only, so every rank makes the same reads (with no rows where it
 * has none) and the collective calls match; they agree on the status, so all
 * stop together. */
static int pb_cells__read_source(struct pb_store *st, int32_t s, int32_t n_eval, int32_t u, const int32_t *rows,
                                 int fields, struct pb_rows *out)
{
  const struct pb_meta *meta = pb_store_meta(st);
  const struct pb_source *src = &meta->sources[s];
  const size_t model_bytes = (size_t)src->n_conditions * (size_t)src->n_images * sizeof(float);
  const int32_t per = model_bytes > 0 && PB_CELLS_BATCH_BYTES / model_bytes > 1
                        ? (int32_t)(PB_CELLS_BATCH_BYTES / model_bytes) : 1;
  int32_t most = 1, *ev = pb_malloc((size_t)(n_eval > 0 ? n_eval : 1) * sizeof *ev);
  for (int32_t i = 0, k = 0; i < src->n_images; i++)
    if (src->split[i] == PB_SPLIT_EVAL) ev[k++] = i;
  for (int32_t j = 0, e = 0; j < u; j = e) {
    while (e < u && rows[e] / src->n_conditions / per == rows[j] / src->n_conditions / per) e++;
    most = e - j > most ? e - j : most;
  }
  struct pb_rows buf;
  pb_rows_alloc(&buf, most, src->n_images, 0);
  pb_rows_alloc(out, u, n_eval, 0);
  pb_cells__keep(&buf, fields);
  pb_cells__keep(out, fields);
  int status = PB_OK;
  for (int32_t m = 0, j = 0; m < meta->n_models && status == PB_OK; m += per) {
    int32_t e = j;
    while (e < u && rows[e] / src->n_conditions < m + per) e++;
    status = pb_store_read_fields_into(st, s, e - j, rows + j, fields, &buf);
    if (status == PB_OK) pb_cells__compact(&buf, e - j, ev, n_eval, out, j);
    j = e;
  }
  pb_rows_free(&buf);
  free(ev);
  return status;
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
  fields &= ~PB_FIELD_TOPK;
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *src = &meta->sources[s];
    int32_t n_eval = pb_dist_eval_count(src), nr = 0;
    int32_t *rows = pb_malloc((size_t)(2 * out->n_cells + 1) * sizeof *rows);
    for (int64_t c = first; c < last && c < n_all; c++)
      if (all[c].source == s && (!want || want[c - first])) {
        rows[nr++] = all[c].model * src->n_conditions + all[c].condition;
        rows[nr++] = all[c].model * src->n_conditions + src->clean;
      }
    int32_t u = pb_sorted_unique_i32(rows, nr);
    /* pb_store_read_fields agrees on its status across ranks, so after a
     * failure on any rank every rank skips the remaining sources together */
    if (status == PB_OK) status = pb_cells__read_source(st, s, n_eval, u, rows, fields, &out->rows[s]);
    out->labels[s] = pb_malloc((size_t)(n_eval > 0 ? n_eval : 1) * sizeof(int32_t));
    for (int32_t i = 0, k = 0; i < src->n_images; i++)
      if (src->split[i] == PB_SPLIT_EVAL) out->labels[s][k++] = src->labels[i];
    if (status == PB_OK) {
      struct pb_rows *r = &out->rows[s];
      for (int64_t c = first; c < last; c++) {
        if (all[c].source != s) continue;
        struct pb_cell_data *d = &out->cells[c - first];
        d->ref = all[c];
        d->index = c;
        if (want && !want[c - first]) continue;
        size_t a = (size_t)pb_sorted_find_i32(rows, u, all[c].model * src->n_conditions + src->clean) * n_eval;
        size_t b = (size_t)pb_sorted_find_i32(rows, u, all[c].model * src->n_conditions + all[c].condition) * n_eval;
        d->n = n_eval;
        d->label = out->labels[s];
        d->pred0 = r->pred ? r->pred + a : NULL;
        d->pred1 = r->pred ? r->pred + b : NULL;
        d->s0 = r->smax ? r->smax + a : NULL;
        d->s1 = r->smax ? r->smax + b : NULL;
        d->m0 = r->ptrue ? r->ptrue + a : NULL;
        d->m1 = r->ptrue ? r->ptrue + b : NULL;
      }
    }
    free(rows);
  }
  free(all);
  if (status != PB_OK) pb_cells_free(out);
  return status;
}

void pb_cells_free(struct pb_cell_block *b)
{
  for (int32_t s = 0; s < b->n_sources; s++) {
    if (b->rows) pb_rows_free(&b->rows[s]);
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
    .tau = tau};
}
