/* A rank's cells: one collective read per source of the cell rows and the
 * clean rows they need, compacted to evaluation images. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pairbound/cells.h"
#include "pairbound/error.h"
#include "pairbound/util.h"

/* Keep only evaluation images of every row, in place. */
static void pb_cells__compact(const struct pb_source *src, struct pb_rows *r, int32_t n_eval)
{
  for (int32_t j = 0; j < r->n_rows; j++) {
    size_t in = (size_t)j * src->n_images, out = (size_t)j * n_eval;
    for (int32_t i = 0; i < src->n_images; i++, in++) {
      if (src->split[i] != PB_SPLIT_EVAL) continue;
      if (r->pred) r->pred[out] = r->pred[in];
      if (r->smax) r->smax[out] = r->smax[in];
      if (r->ptrue) r->ptrue[out] = r->ptrue[in];
      out++;
    }
  }
  r->n_images = n_eval;
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
    if (status == PB_OK) status = pb_store_read_fields(st, s, u, rows, fields, &out->rows[s]);
    out->labels[s] = pb_malloc((size_t)(n_eval > 0 ? n_eval : 1) * sizeof(int32_t));
    for (int32_t i = 0, k = 0; i < src->n_images; i++)
      if (src->split[i] == PB_SPLIT_EVAL) out->labels[s][k++] = src->labels[i];
    if (status == PB_OK) {
      struct pb_rows *r = &out->rows[s];
      pb_cells__compact(src, r, n_eval);
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
