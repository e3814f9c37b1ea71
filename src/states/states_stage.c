/* `pairbound states`: five-state counts per cell, distributed over ranks and
 * threads (the demo stage of the work distribution). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pairbound/cells.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/registry.h"
#include "pairbound/results.h"
#include "pairbound/stage.h"
#include "pairbound/states.h"
#include "pairbound/timer.h"

/* Columns of the per-cell table, in output order. */
static const char *const pb_states__cols[] = {"n", "h", "r", "s", "w", "k"};
#define PB_STATES_NCOL 6

static int64_t pb_states__field(const struct pb_states *c, int j)
{
  const int64_t v[PB_STATES_NCOL] = {c->n, c->h, c->r, c->s, c->w, c->k};
  return v[j];
}

static void pb_states__row(const struct pb_stage *st, const struct pb_cell_data *d, const struct pb_states *c,
                           struct pb_text *t)
{
  const struct pb_meta *meta = st->meta;
  const struct pb_source *src = &meta->sources[d->ref.source];
  int tier = st->protocol.src[d->ref.source].tier[d->ref.condition];
  pb_text_printf(t, "%s\t%s\t%s\t%s\t%lld", meta->model_ids[d->ref.model], src->name,
                 src->conditions[d->ref.condition], pb_protocol_tier_name(tier), (long long)c->n);
  pb_text_double(t, c->n ? (double)(c->h + c->k) / c->n : 0.0 / 0.0);
  pb_text_double(t, c->n ? (double)(c->r + c->k) / c->n : 0.0 / 0.0);
  pb_text_printf(t, "\t%lld\t%lld\t%lld\t%lld\t%lld\n", (long long)c->h, (long long)c->r, (long long)c->s,
                 (long long)c->w, (long long)c->k);
}

static int pb_states__write(struct pb_stage *st, const struct pb_cell_block *b, const struct pb_states *cnt)
{
  int64_t n = b->n_cells;
  int64_t *col = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *col);
  int status = pb_results_group(st->results, "/states");
  for (int j = 0; j < PB_STATES_NCOL && status == PB_OK; j++) {
    for (int64_t c = 0; c < n; c++) col[c] = pb_states__field(&cnt[c], j);
    char path[64];
    snprintf(path, sizeof path, "/states/%s", pb_states__cols[j]);
    status = pb_results_write_i64(st->results, path, st->n_cells, b->first, n, col);
  }
  int32_t ids[3];
  for (int j = 0; j < 3 && status == PB_OK; j++) {
    for (int64_t c = 0; c < n; c++) {
      const struct pb_cell_ref *r = &b->cells[c].ref;
      ids[0] = r->source, ids[1] = r->model, ids[2] = r->condition;
      col[c] = ids[j];
    }
    static const char *const names[] = {"/states/source_index", "/states/model_index", "/states/condition_index"};
    status = pb_results_write_i64(st->results, names[j], st->n_cells, b->first, n, col);
  }
  free(col);
  if (status != PB_OK) return status;
  struct pb_text t = {0};
  for (int64_t c = 0; c < n; c++) pb_states__row(st, &b->cells[c], &cnt[c], &t);
  status = pb_results_tsv(st->results, "states.tsv", "model\tsource\tcondition\ttier\tn\tacc_clean\tacc_perturbed\th\tr\ts\tw\tk\n",
                         t.buf, t.len);
  pb_text_free(&t);
  return status;
}

/* `pairbound states` (the registry's run). */
static int pb_states__stage_run(const struct pb_stage_call *call, const void *opts)
{
  (void)opts;
  struct pb_stage st;
  struct pb_cell_block b;
  if (pb_stage_begin(call, &st)) return PB_FAIL;
  int status = pb_cells_load(st.store, st.first, st.last, PB_FIELD_PRED, &b);
  status = pb_error_agree(st.comm, status);
  if (status != PB_OK) return pb_stage_close(&st, status);
  pb_timer_lap(&st.timer, "load");
  struct pb_states *cnt = pb_calloc((size_t)(b.n_cells > 0 ? b.n_cells : 1), sizeof *cnt);
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t c = 0; c < b.n_cells; c++) pb_states_count(&b.cells[c], &cnt[c]);
  pb_timer_lap(&st.timer, "compute");
  status = pb_states__write(&st, &b, cnt);
  pb_timer_end(&st.timer, "write", st.comm);
  pb_timer_message(&st.timer);
  free(cnt);
  pb_cells_free(&b);
  return pb_stage_end(&st, status);
}

const struct pb_stage_desc pb_states_stage = {
  .name = "states",
  .store = {.reads = 1, .needs = PB_STAGE_NEEDS_CELLS},
  .run = pb_states__stage_run,
  .help = "Per-cell accuracies and five-state counts (h, r, s, w, k) of every model x condition cell;\n"
          "write OUTDIR/results.h5 (/states) and OUTDIR/report/states.tsv.\n",
};
