/* `pairbound predict`: the nested fits of every unit (combination, feature
 * set, shuffle replicate or deletion refit) over ranks and threads, and the
 * SVD solver's cross-check of them (seed 000 Appendix H, I.2, I.4).
 * docs/predict.md. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/comm.h"
#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/predict.h"
#include "pairbound/stage.h"
#include "predict_internal.h"

/* Units in fixed order: per combination and set, one fit (or one per shuffle
 * replicate), then the deletion refits of that set, one per group. */
void pb_predict__units(struct pb_predict__data *d, int deletion)
{
  const int32_t nc = pb_predict__n_combos(d), G = d->n_groups;
  int64_t n = 0;
  d->first_unit = pb_malloc((size_t)nc * d->n_sets * sizeof *d->first_unit);
  for (int pass = 0; pass < 2; pass++) {
    n = 0;
    for (int32_t c = 0; c < nc; c++)
      for (int32_t k = 0; k < d->n_sets; k++) {
        const struct pb_predict__set *s = &d->sets[(c % PB_PREDICT__N_TARGETS) * d->n_sets + k];
        const int32_t reps = s->shuffle ? d->n_shuf : 1, dels = s->deletion && deletion ? G : 0;
        if (pass) d->first_unit[c * d->n_sets + k] = n;
        for (int32_t u = 0; u < reps + dels; u++, n++)
          if (pass) {
            d->u_combo[n] = c;
            d->u_set[n] = k;
            d->u_rep[n] = u < reps && s->shuffle ? u : 0;
            d->u_del[n] = u < reps ? -1 : u - reps;
          }
      }
    if (!pass) {
      d->u_combo = pb_malloc((size_t)n * sizeof *d->u_combo);
      d->u_set = pb_malloc((size_t)n * sizeof *d->u_set);
      d->u_rep = pb_malloc((size_t)n * sizeof *d->u_rep);
      d->u_del = pb_malloc((size_t)n * sizeof *d->u_del);
    }
  }
  d->n_units = n;
  d->deletion_run = deletion;
}

/* Scratch of one thread's fits. */
struct pb_predict__scratch {
  double *x, *y, *pred;
  int32_t *group, *model, *lam;
};

/* One fit unit and, with @p deletions, the deletion units that follow it:
 * the problem of the models with a defined target, the nested fits (shared
 * by pb_predict_nested_all), predictions scattered back to model order (NaN
 * elsewhere) as out[block][pred M | lam M]. */
static int pb_predict__unit(const struct pb_predict__data *d, int64_t u, enum pb_predict_solver solver, int deletions,
                            struct pb_predict__scratch *w, double *out)
{
  const int32_t M = d->n_models, c = d->u_combo[u], tg = c % PB_PREDICT__N_TARGETS;
  const int32_t t = (c / PB_PREDICT__N_TARGETS) % d->n_ts, f = c / (PB_PREDICT__N_TARGETS * d->n_ts);
  const struct pb_predict__set *s = &d->sets[tg * d->n_sets + d->u_set[u]];
  const int32_t blocks = deletions ? 1 + d->n_groups : 1;
  int32_t n = 0;
  for (int32_t m = 0; m < M; m++) {
    const double y = d->target[((size_t)t * M + m) * PB_PREDICT__N_TARGETS + tg];
    if (isnan(y)) continue;
    const double *x = &d->feat[(((size_t)f * d->n_ts + t) * M + m) * PB_PREDICT__N_FEAT];
    const double *q = &d->shuf[(((size_t)f * M + m) * d->n_shuf + d->u_rep[u]) * PB_PREDICT_N_PAIRED];
    for (int32_t j = 0; j < s->n_cols; j++)
      w->x[(size_t)n * s->n_cols + j] = s->cols[j] >= PB_PREDICT__SHUF_COL ? q[s->cols[j] - PB_PREDICT__SHUF_COL] : x[s->cols[j]];
    w->y[n] = y;
    w->group[n] = d->group[m];
    w->model[n++] = m;
  }
  const struct pb_predict_problem pr = {n, s->n_cols, d->n_groups, w->x, w->y, w->group};
  if (pb_predict_nested_all(&pr, deletions, solver, w->pred, w->lam) != PB_OK) return PB_FAIL;
  for (int32_t b = 0; b < blocks; b++) {
    double *pred = out + (size_t)b * 2 * M, *lam = pred + M;
    for (int32_t m = 0; m < M; m++) pred[m] = lam[m] = NAN;
    for (int32_t r = 0; r < n; r++) {
      pred[w->model[r]] = w->pred[(size_t)b * n + r];
      lam[w->model[r]] = w->lam[(size_t)b * n + r] >= 0 ? w->lam[(size_t)b * n + r] : NAN;
    }
  }
  return PB_OK;
}

static void pb_predict__scratch_alloc(struct pb_predict__scratch *w, int32_t M, int32_t G)
{
  w->x = pb_malloc((size_t)M * PB_PREDICT__MAX_COLS * sizeof *w->x);
  w->y = pb_malloc((size_t)M * sizeof *w->y);
  w->pred = pb_malloc((size_t)M * (1 + G) * sizeof *w->pred);
  w->group = pb_malloc((size_t)M * sizeof *w->group);
  w->model = pb_malloc((size_t)M * sizeof *w->model);
  w->lam = pb_malloc((size_t)M * (1 + G) * sizeof *w->lam);
}

static void pb_predict__scratch_free(struct pb_predict__scratch *w)
{
  free(w->x), free(w->y), free(w->pred), free(w->group), free(w->model), free(w->lam);
}

/* Units a fit computes: a set with deletion refits computes its own unit
 * and the G deletion units after it. */
static int32_t pb_predict__span(const struct pb_predict__data *d, int64_t u)
{
  const struct pb_predict__set *s = &d->sets[(d->u_combo[u] % PB_PREDICT__N_TARGETS) * d->n_sets + d->u_set[u]];
  return s->deletion && d->deletion_run ? 1 + d->n_groups : 1;
}

/* Every unit: the fits (units without deletion, each with its deletion
 * units) in contiguous blocks per rank, balanced by ridge fits, and threads
 * within a rank; predictions gathered on every rank in unit order, so the
 * result does not depend on the partition. */
int pb_predict__fit_all(struct pb_stage *st, struct pb_predict__data *d)
{
  const int32_t M = d->n_models, G = d->n_groups;
  int64_t nf = 0;
  int64_t *fit = pb_malloc((size_t)(d->n_units + 1) * sizeof *fit), *cost = pb_malloc((size_t)(d->n_units + 1) * sizeof *cost);
  for (int64_t u = 0; u < d->n_units; u++)
    if (d->u_del[u] < 0) {
      const int64_t pairs = (int64_t)G * (G - 1) / 2;
      cost[nf] = G + pairs + (pb_predict__span(d, u) > 1 ? pairs * (G - 2) / 3 : 0);
      fit[nf++] = u;
    }
  fit[nf] = d->n_units;
  int64_t *first = pb_malloc(((size_t)st->size + 1) * sizeof *first);
  pb_dist_partition(nf, cost, st->size, first);
  const int64_t f0 = first[st->rank], f1 = first[st->rank + 1], lo = fit[f0], hi = fit[f1];
  double *mine = pb_malloc((size_t)(hi > lo ? hi - lo : 1) * 2 * M * sizeof *mine);
  struct pb_error_first fe;
  pb_error_first_init(&fe);
#pragma omp parallel
  {
    struct pb_predict__scratch w;
    pb_predict__scratch_alloc(&w, M, G);
#pragma omp for schedule(dynamic, 1)
    for (int64_t i = f0; i < f1; i++) {
      const int64_t u = fit[i];
      if (pb_predict__unit(d, u, PB_PREDICT_CHOLESKY, pb_predict__span(d, u) > 1, &w, mine + (u - lo) * 2 * M) != PB_OK) {
        char msg[2048];
        snprintf(msg, sizeof msg, "%s", pb_error_message());
        pb_error_set("predict: fit %lld (set %s): %s", (long long)u, d->sets[d->u_set[u]].name, msg);
        pb_error_first_record(&fe, u);
      }
    }
    pb_predict__scratch_free(&w);
  }
  int status = pb_error_first_status(&fe);
  status = pb_error_agree(st->comm, status);
  if (status == PB_OK) {
    /* every rank needs every fit's predictions (the report's errors, gains and
     * intervals); a unit is a fit, 2 M doubles, and there are combinations x
     * (sets + shuffles + deletions) of them: bounded by models and groups, not
     * by cells or images (2.1 MB on the paper store) */
    double *all = pb_stage_gather(st, hi - lo, d->n_units, 2 * M, mine, 1);
    d->pred = pb_malloc((size_t)(d->n_units > 0 ? d->n_units : 1) * M * sizeof *d->pred);
    d->lam = pb_malloc((size_t)(d->n_units > 0 ? d->n_units : 1) * M * sizeof *d->lam);
    for (int64_t u = 0; u < d->n_units; u++) {
      memcpy(&d->pred[u * M], &all[u * 2 * M], (size_t)M * sizeof(double));
      memcpy(&d->lam[u * M], &all[u * 2 * M + M], (size_t)M * sizeof(double));
    }
    free(all);
  }
  free(mine);
  free(fit);
  free(cost);
  free(first);
  return status;
}

/* Larger of two differences, NaN (a failed comparison) winning: the order
 * in which threads combine their maxima cannot change the result. */
static double pb_predict__worse(double a, double b)
{
  return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
}

/* I.4: the SVD solver refits the first unit of every (combination, set) that
 * has deletion refits, spread over ranks and threads; the largest difference
 * is reduced. */
void pb_predict__svd_check(struct pb_stage *st, struct pb_predict__data *d)
{
  const int32_t M = d->n_models, nc = pb_predict__n_combos(d);
  double worst = 0.0;
  int64_t checked = 0;
#pragma omp parallel
  {
    struct pb_predict__scratch w;
    pb_predict__scratch_alloc(&w, M, d->n_groups);
    double *p = pb_malloc(2 * (size_t)M * sizeof *p), mine = 0.0;
    int64_t count = 0;
#pragma omp for schedule(dynamic, 1) nowait
    for (int64_t i = st->rank; i < (int64_t)nc * d->n_sets; i += st->size) {
      const int32_t c = (int32_t)(i / d->n_sets), k = (int32_t)(i % d->n_sets);
      if (!d->sets[(c % PB_PREDICT__N_TARGETS) * d->n_sets + k].deletion) continue;
      const int64_t u = d->first_unit[i];
      if (pb_predict__unit(d, u, PB_PREDICT_SVD, 0, &w, p) != PB_OK) {
        mine = pb_predict__worse(mine, INFINITY);
        continue;
      }
      for (int32_t m = 0; m < M; m++)
        if (!isnan(d->pred[u * M + m])) {
          mine = pb_predict__worse(mine, fabs(p[m] - d->pred[u * M + m]));
          count++;
        }
    }
#pragma omp critical(pb_predict__svd)
    {
      worst = pb_predict__worse(worst, mine);
      checked += count;
    }
    free(p);
    pb_predict__scratch_free(&w);
  }
  pb_comm_allreduce(&worst, &d->svd_max_diff, 1, MPI_DOUBLE, MPI_MAX, st->comm);
  pb_comm_allreduce(&checked, &d->svd_checked, 1, MPI_INT64_T, MPI_SUM, st->comm);
}

