/* `pairbound exact worlds` and the `exact` stage of `pairbound run`: every
 * built-in predictor scored in every world x level on cases drawn directly
 * (seed 002 Section 5, Fig. 1/7 shapes): one results.h5 with
 * /exact/WORLD/LEVEL/PREDICTOR groups, and the combined report
 * (exact_report_worlds.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "pairbound/error.h"
#include "pairbound/registry.h"
#include "pairbound/exact.h"
#include "pairbound/figure.h"
#include "pairbound/results.h"
#include "pairbound/world.h"
#include "exact_internal.h"

static int pb_exact__split(char *list, char **item, int *n)
{
  char *save = NULL;
  *n = 0;
  for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (*n == PB_EXACT_MAXL) return PB_FAIL;
    item[(*n)++] = t;
  }
  return PB_OK;
}

/* Score every predictor of one world x level; the kNN sweep runs once per world x level. */
static int pb_exact__cell(MPI_Comm comm, const struct pb_exact_options *o, struct pb_exact_grid *g, int wi, int li,
                          struct pb_exact_cuts *cuts, struct pb_results *res, struct pb_timer *timer)
{
  struct pb_world *w;
  struct pb_world_cases c;
  struct pb_exact_groups groups;
  struct pb_exact_nn knn[PB_EXACT_MAX_SIZES][PB_EXACT_NSEEDS], rel[PB_EXACT_NSEEDS];
  int have_knn = 0, status = PB_OK;
  if (pb_world_open(g->w[wi], g->l[li], 1.0, &w)) return PB_FAIL;
  pb_world_cases_draw(w, o->seed, o->first, o->n_cases, &c);
  if (li == 0) pb_exact_quartiles(c.world, c.seed, cuts);   /* a world's levels share their irrelevant fields */
  pb_exact_groups_build(c.world, cuts, &groups);
  for (int pi = 0; pi < g->np && status == PB_OK; pi++) {
    struct pb_exact_entry *en = pb_exact_at(g, wi, li, pi);
    struct pb_exact_eval e;
    snprintf(en->world, sizeof en->world, "%s", g->w[wi]);
    snprintf(en->level, sizeof en->level, "%s", g->l[li]);
    snprintf(en->pred, sizeof en->pred, "%s", g->p[pi]);
    /* logistic regression has no structured signal in covert transfer (A.1) */
    if (!strncmp(g->p[pi], "logistic:", 9) && pb_world_kind(w) == PB_WORLD_COVERT) continue;
    status = pb_exact_evaluate(comm, &c, &groups, g->p[pi], NULL, o, !have_knn, &e);
    if (status != PB_OK) {
      pb_exact_eval_free(&e);
      break;
    }
    for (int i = 0; i < e.timer.n; i++) pb_timer_add(timer, e.timer.phase[i], e.timer.sec[i]);
    if (e.r.have_knn) {
      memcpy(knn, e.r.knn, sizeof knn);
      memcpy(rel, e.r.knn_relevant, sizeof rel);
      have_knn = 1;
    }
    char prefix[160], name[64];
    snprintf(name, sizeof name, "%s", g->p[pi]);
    for (char *s = name; *s; s++)
      if (*s == ':' || *s == '=' || *s == '/') *s = '_';
    snprintf(prefix, sizeof prefix, "/exact/%s/%s/%s", g->w[wi], g->l[li], name);
    status = pb_exact_write_h5(res, prefix, &e.r);
    en->r = e.r;
    en->have = 1;
    e.r.emp_mc = NULL;  /* now the entry's */
    pb_exact_eval_free(&e);
    pb_message("exact: %s %s %s scored", g->w[wi], g->l[li], g->p[pi]);
  }
  for (int pi = 0; pi < g->np && have_knn; pi++) {
    struct pb_exact_entry *en = pb_exact_at(g, wi, li, pi);
    memcpy(en->r.knn, knn, sizeof knn);
    memcpy(en->r.knn_relevant, rel, sizeof rel);
    en->r.have_knn = 1;
    en->r.knn_bound = o->knn_bound;
  }
  pb_exact_groups_free(&groups);
  pb_world_cases_free(&c);
  return status;
}

static void pb_exact__grid_free(struct pb_exact_grid *g)
{
  for (int i = 0; g->e && i < g->nw * g->nl * g->np; i++) free(g->e[i].r.emp_mc);
  free(g->e);
  for (int i = 0; i < 3; i++) free(g->buf[i]);
}

int pb_exact_worlds_run(const struct pb_exact_options *o, const char *outdir, MPI_Comm comm, const char *provenance)
{
  struct pb_exact_grid g = {0};
  struct pb_results *res = NULL;
  struct pb_timer timer;
  int rank, status = PB_FAIL;
  MPI_Comm_rank(comm, &rank);
  pb_timer_start(&timer, "exact");
  g.buf[0] = pb_strdup(o->worlds);
  g.buf[1] = pb_strdup(o->levels);
  g.buf[2] = pb_strdup(o->predictors);
  if (pb_exact__split(g.buf[0], g.w, &g.nw) || pb_exact__split(g.buf[1], g.l, &g.nl) ||
      pb_exact__split(g.buf[2], g.p, &g.np) || g.nw == 0 || g.nl == 0 || g.np == 0) {
    pb_error_set("exact worlds: 1 to %d worlds, levels and predictors each", PB_EXACT_MAXL);
    goto done;
  }
  for (int p = 0; p < g.np; p++)
    if (strcmp(g.p[p], "pstar") && strcmp(g.p[p], "prior") && strncmp(g.p[p], "logistic:n=", 11)) {
      pb_error_set("exact worlds: predictor '%s' is not built in (pstar, prior, logistic:n=N)", g.p[p]);
      goto done;
    }
  g.e = pb_calloc((size_t)(g.nw * g.nl * g.np), sizeof *g.e);
  if (pb_results_create(outdir, comm, provenance, &res)) goto done;
  pb_figure_prepare(res); /* its gnuplot starts while the worlds are computed */
  for (int w = 0; w < g.nw; w++) {
    struct pb_exact_cuts cuts;
    for (int l = 0; l < g.nl; l++)
      if (pb_exact__cell(comm, o, &g, w, l, &cuts, res, &timer)) goto done;
  }
  pb_timer_skip(&timer);
  status = rank == 0 ? pb_exact_report_worlds(res, &g, o) : PB_OK;
  MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  pb_timer_lap(&timer, "write");
  int64_t scored = 0;
  for (int i = 0; i < g.nw * g.nl * g.np; i++) scored += g.e[i].have;
  if (status == PB_OK) status = pb_exact_timings(&timer, comm, res, o->reference * scored);
  if (status == PB_OK) status = pb_results_commit(res);
  res = NULL;
done:
  if (res) pb_results_close(res);
  pb_exact__grid_free(&g);
  return status;
}

/* `exact worlds` under `pairbound run` and on the command line. */
static int pb_exact__stage_run(const struct pb_stage_call *call, const void *opts)
{
  return pb_exact_worlds_run(opts, call->outdir, call->comm, call->provenance);
}

/* `exact score CASES PREDICTIONS` scores one CASES file; `exact worlds` is the stage itself. */
static int pb_exact__command(const struct pb_stage_call *call, const struct pb_stage_args *args, const void *opts)
{
  int score = !strcmp(args->operand, "score");
  if (!score && strcmp(args->operand, "worlds")) pb_error_set("expected score or worlds, got '%s'", args->operand);
  else if (score && args->n_more != 2) pb_error_set("score takes CASES and PREDICTIONS");
  else if (!score && args->n_more) pb_error_set("unexpected argument '%s'", args->more[0]);
  else if (!score) return PB_STAGE_RUN;
  else return pb_exact_score_run(args->more[0], args->more[1], call->outdir, opts, call->comm, call->provenance);
  return PB_STAGE_USAGE;
}

/* "-20258876": the default run seed 20260908 gives exact the seed paper's first seed, 2032 (C.3). */
static const struct pb_stage_inherit pb_exact__inherits[] = {{"seed", "run.seed", -20258876}, {NULL, NULL, 0}};

const struct pb_stage_desc pb_exact_stage = {
  .name = "exact",
  .operand = "score CASES PREDICTIONS|worlds",
  .options = {.table = pb_exact_option_table, .size = sizeof(struct pb_exact_options),
              .release = pb_exact__options_release},
  .run = pb_exact__stage_run,
  .command = pb_exact__command,
  .pipeline = {.report = "exact.md", .order = 6, .inherits = pb_exact__inherits, .joins = "worlds",
               .summary = pb_exact_run_summary},
  .help = PB_EXACT_HELP,
};
