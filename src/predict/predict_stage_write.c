/* The predict stage's own outputs: the model-level inputs
 * (report/predict_features.tsv, predict_sets.tsv), every out-of-fold
 * prediction (predict_oof.tsv, predict_deletion_oof.tsv) and results.h5
 * /predict. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <omp.h>

#include "pairbound/error.h"
#include "pairbound/table.h"
#include "predict_internal.h"

/* A row of the input and out-of-fold tables: its names, an integer and its
 * values.  A column's .arg says which (PB_PREDICT__W_KEY: name .slot, ...). */
struct pb_predict__wrow {
  const char *key[7];
  int64_t n[2];
  const double *v[2];
  char *buf;
};
enum { PB_PREDICT__W_KEY, PB_PREDICT__W_INT, PB_PREDICT__W_V0, PB_PREDICT__W_V1, PB_PREDICT__W_COLS };

static union pb_cell pb_predict__wcell(const void *ctx, const struct pb_column *c)
{
  const struct pb_predict__wrow *r = ctx;
  switch (c->arg) {
  case PB_PREDICT__W_KEY: return (union pb_cell){.s = r->key[c->slot]};
  case PB_PREDICT__W_INT: return (union pb_cell){.i = r->n[c->slot]};
  case PB_PREDICT__W_V0: return (union pb_cell){.x = r->v[0][c->slot]};
  case PB_PREDICT__W_V1: return (union pb_cell){.x = r->v[1][c->slot]};
  }
  return (union pb_cell){.s = r->buf};
}

/* A set's feature columns, comma-separated (shuffle replicates of a paired summary suffixed _shuf). */
static void pb_predict__set_features(const struct pb_predict__set *s, char *buf, size_t len)
{
  size_t m = 0;
  buf[0] = '\0';
  for (int32_t j = 0; j < s->n_cols && m < len; j++)
    m += (size_t)snprintf(buf + m, len - m, "%s%s%s", j ? "," : "",
                          s->cols[j] >= PB_PREDICT__SHUF_COL ? pb_predict__feat_names[PB_PREDICT__PAIRED0 + s->cols[j] - PB_PREDICT__SHUF_COL]
                                                              : pb_predict__feat_names[s->cols[j]],
                          s->cols[j] >= PB_PREDICT__SHUF_COL ? "_shuf" : "");
}

/* report/predict_sets.tsv (rank 0's rows). */
static int pb_predict__write_sets(const struct pb_predict__data *d, int rank, struct pb_results *res)
{
  static const struct pb_column cols[] = {
    {"target", PB_COL_STR, .slot = 0, .arg = PB_PREDICT__W_KEY},
    {"feature_set", PB_COL_STR, .slot = 1, .arg = PB_PREDICT__W_KEY},
    {"shuffle", PB_COL_INT, .slot = 0, .arg = PB_PREDICT__W_INT},
    {"deletion", PB_COL_INT, .slot = 1, .arg = PB_PREDICT__W_INT},
    {"features", PB_COL_STR, .arg = PB_PREDICT__W_COLS},
    {NULL}};
  static const struct pb_table_spec spec = {NULL, NULL, cols};
  struct pb_text h = {0}, t = {0};
  char buf[PB_PREDICT__MAX_COLS * 32];
  pb_table_tsv_open(&h, &spec);
  for (int tg = 0; tg < PB_PREDICT__N_TARGETS && rank == 0; tg++)
    for (int32_t k = 0; k < d->n_sets; k++) {
      const struct pb_predict__set *s = &d->sets[tg * d->n_sets + k];
      const struct pb_predict__wrow row = {{pb_predict__target_names[tg], s->name}, {s->shuffle, s->deletion}, {NULL}, buf};
      pb_predict__set_features(s, buf, sizeof buf);
      pb_table_tsv_row(&t, &spec, pb_predict__wcell, &row);
    }
  int status = pb_results_tsv(res, "predict_sets.tsv", h.buf, t.buf, t.len);
  pb_text_free(&h), pb_text_free(&t);
  return status;
}

/* report/predict_features.tsv and predict_sets.tsv (rank 0 text). */
int pb_predict__write_inputs(const struct pb_predict__data *d, int rank, struct pb_results *res)
{
  static const char *const keys[4] = {"model", "group", "feature_source", "target_source"};
  const int32_t M = d->n_models, nc = 4 + PB_PREDICT__N_FEAT + PB_PREDICT__N_TARGETS;
  struct pb_column *cols = pb_table_cols_new(nc);
  for (int32_t j = 0; j < nc; j++) {
    struct pb_column *c = &cols[j];
    if (j < 4) pb_table_col_name(c, "%s", keys[j]), c->fmt = PB_COL_STR, c->slot = j, c->arg = PB_PREDICT__W_KEY;
    else if (j < 4 + PB_PREDICT__N_FEAT)
      pb_table_col_name(c, "%s", pb_predict__feat_names[j - 4]), c->fmt = PB_COL_NUM, c->slot = j - 4, c->arg = PB_PREDICT__W_V0;
    else
      pb_table_col_name(c, "%s", pb_predict__target_names[j - 4 - PB_PREDICT__N_FEAT]), c->fmt = PB_COL_NUM,
          c->slot = j - 4 - PB_PREDICT__N_FEAT, c->arg = PB_PREDICT__W_V1;
  }
  const struct pb_table_spec spec = {NULL, NULL, cols};
  struct pb_text h = {0}, t = {0};
  pb_table_tsv_open(&h, &spec);
  for (int32_t f = 0; f < d->n_fs && rank == 0; f++)
    for (int32_t s = 0; s < d->n_ts; s++)
      for (int32_t m = 0; m < M; m++) {
        const struct pb_predict__wrow row = {
          {d->meta->model_ids[m], d->group_names[d->group[m]], d->meta->sources[d->fs[f]].name,
           d->meta->sources[d->ts[s]].name},
          {0},
          {d->feat + (((size_t)f * d->n_ts + s) * M + m) * PB_PREDICT__N_FEAT,
           d->target + ((size_t)s * M + m) * PB_PREDICT__N_TARGETS},
          NULL};
        pb_table_tsv_row(&t, &spec, pb_predict__wcell, &row);
      }
  pb_table_cols_free(cols);
  int status = pb_results_tsv(res, "predict_features.tsv", h.buf, t.buf, t.len);
  if (status == PB_OK) status = pb_predict__write_sets(d, rank, res);
  pb_text_free(&h), pb_text_free(&t);
  return status;
}

/* The out-of-fold tables: the fits without deletion, and the deletion refits with the removed group. */
#define PB_PREDICT__OOF_KEYS                                                                                         \
  {"model", PB_COL_STR, .slot = 0, .arg = PB_PREDICT__W_KEY},                                                     \
    {"group", PB_COL_STR, .slot = 1, .arg = PB_PREDICT__W_KEY},                                                   \
    {"feature_source", PB_COL_STR, .slot = 2, .arg = PB_PREDICT__W_KEY},                                          \
    {"target_source", PB_COL_STR, .slot = 3, .arg = PB_PREDICT__W_KEY},                                           \
    {"target", PB_COL_STR, .slot = 4, .arg = PB_PREDICT__W_KEY},                                                  \
    {"feature_set", PB_COL_STR, .slot = 5, .arg = PB_PREDICT__W_KEY},                                             \
    {"replicate", PB_COL_INT, .slot = 0, .arg = PB_PREDICT__W_INT}
#define PB_PREDICT__OOF_VALUES                                                                                       \
  {"lambda", PB_COL_NUM, .slot = 0, .arg = PB_PREDICT__W_V0}, {"prediction", PB_COL_NUM, .slot = 1, .arg = PB_PREDICT__W_V0}, \
    {"truth", PB_COL_NUM, .slot = 2, .arg = PB_PREDICT__W_V0}, {NULL}
static const struct pb_column pb_predict__oof_cols[] = {PB_PREDICT__OOF_KEYS, PB_PREDICT__OOF_VALUES};
static const struct pb_column pb_predict__del_oof_cols[] = {
  PB_PREDICT__OOF_KEYS, {"removed_group", PB_COL_STR, .slot = 6, .arg = PB_PREDICT__W_KEY}, PB_PREDICT__OOF_VALUES};
static const struct pb_table_spec pb_predict__oof[2] = {{NULL, NULL, pb_predict__oof_cols},
                                                        {NULL, NULL, pb_predict__del_oof_cols}};

/* The rows of unit u (one per predicted model) onto t[0] (fits without
 * deletion) or t[1] (deletion refits). */
static void pb_predict__oof_rows(const struct pb_predict__data *d, int64_t u, struct pb_text t[2])
{
  const int32_t M = d->n_models, c = d->u_combo[u], tg = c % PB_PREDICT__N_TARGETS;
  const int32_t s = (c / PB_PREDICT__N_TARGETS) % d->n_ts, f = c / (PB_PREDICT__N_TARGETS * d->n_ts), del = d->u_del[u];
  for (int32_t m = 0; m < M; m++) {
    if (isnan(d->pred[u * M + m])) continue;
    const double v[3] = {pb_predict_lambda[(int)d->lam[u * M + m]], d->pred[u * M + m],
                         d->target[((size_t)s * M + m) * PB_PREDICT__N_TARGETS + tg]};
    const struct pb_predict__wrow row = {
      {d->meta->model_ids[m], d->group_names[d->group[m]], d->meta->sources[d->fs[f]].name,
       d->meta->sources[d->ts[s]].name, pb_predict__target_names[tg], d->sets[tg * d->n_sets + d->u_set[u]].name,
       del >= 0 ? d->group_names[del] : NULL},
      {d->u_rep[u]},
      {v},
      NULL};
    pb_table_tsv_row(&t[del >= 0], &pb_predict__oof[del >= 0], pb_predict__wcell, &row);
  }
}

/* report/predict_oof.tsv and predict_deletion_oof.tsv, one row per predicted
 * model: each rank formats a contiguous block of units (its threads
 * contiguous sub-blocks, joined in order), and the files take the blocks in
 * rank order, so they are the same for any number of ranks and threads. */
int pb_predict__write_oof(const struct pb_predict__data *d, int rank, int size, struct pb_results *res)
{
  const int64_t lo = d->n_units * rank / size, hi = d->n_units * (rank + 1) / size;
  const int nt = omp_get_max_threads();
  struct pb_text *part = pb_calloc(2 * (size_t)nt, sizeof *part), t[2] = {{0}, {0}}, h[2] = {{0}, {0}};
#pragma omp parallel num_threads(nt)
  {
    struct pb_text *o = &part[2 * omp_get_thread_num()];
#pragma omp for schedule(static)
    for (int64_t u = lo; u < hi; u++) pb_predict__oof_rows(d, u, o);
  }
  for (int i = 0; i < 2 * nt; i++) {
    if (part[i].len) pb_text_printf(&t[i % 2], "%.*s", (int)part[i].len, part[i].buf);
    pb_text_free(&part[i]);
  }
  free(part);
  pb_table_tsv_open(&h[0], &pb_predict__oof[0]);
  pb_table_tsv_open(&h[1], &pb_predict__oof[1]);
  int status = pb_results_tsv(res, "predict_oof.tsv", h[0].buf, t[0].buf, t[0].len);
  if (status == PB_OK) status = pb_results_tsv(res, "predict_deletion_oof.tsv", h[1].buf, t[1].buf, t[1].len);
  pb_text_free(&t[0]), pb_text_free(&t[1]), pb_text_free(&h[0]), pb_text_free(&h[1]);
  return status;
}

/* results.h5 /predict: features, targets and every unit's predictions. */
int pb_predict__write_h5(const struct pb_predict__data *d, int rank, struct pb_results *res)
{
  const int64_t M = d->n_models, nf = (int64_t)d->n_fs * d->n_ts * M * PB_PREDICT__N_FEAT;
  const int64_t nt = (int64_t)d->n_ts * M * PB_PREDICT__N_TARGETS, nu = d->n_units;
  int64_t *uc = pb_malloc((size_t)(nu > 0 ? nu : 1) * 4 * sizeof *uc);
  for (int64_t u = 0; u < nu; u++) {
    uc[u] = d->u_combo[u];
    uc[nu + u] = d->u_set[u];
    uc[2 * nu + u] = d->u_rep[u];
    uc[3 * nu + u] = d->u_del[u];
  }
  const int mine = rank == 0;
  int status = pb_results_group(res, "/predict/oof");
  if (status == PB_OK) status = pb_results_write_f64(res, "/predict/features", nf, 0, mine ? nf : 0, d->feat);
  if (status == PB_OK) status = pb_results_write_f64(res, "/predict/targets", nt, 0, mine ? nt : 0, d->target);
  if (status == PB_OK) status = pb_results_write_f64(res, "/predict/oof/prediction", nu * M, 0, mine ? nu * M : 0, d->pred);
  if (status == PB_OK) status = pb_results_write_f64(res, "/predict/oof/lambda_index", nu * M, 0, mine ? nu * M : 0, d->lam);
  if (status == PB_OK) status = pb_results_write_i64(res, "/predict/oof/combination", nu, 0, mine ? nu : 0, uc);
  if (status == PB_OK) status = pb_results_write_i64(res, "/predict/oof/set", nu, 0, mine ? nu : 0, uc + nu);
  if (status == PB_OK) status = pb_results_write_i64(res, "/predict/oof/replicate", nu, 0, mine ? nu : 0, uc + 2 * nu);
  if (status == PB_OK) status = pb_results_write_i64(res, "/predict/oof/removed_group", nu, 0, mine ? nu : 0, uc + 3 * nu);
  free(uc);
  return status;
}

