/* `pairbound verify`: enumerate every small class of the covered cells,
 * combine classes exactly, and compare with the bounds engine per class and
 * per cell (seed 000 A.10, B.3, C.1, Appendix D; docs/verify.md). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <omp.h>
#include <hdf5.h>

#include "pairbound/blocks.h"
#include "pairbound/comm.h"
#include "pairbound/progress.h"
#include "pairbound/bounds.h"
#include "pairbound/cells.h"
#include "pairbound/env.h"
#include "pairbound/error.h"
#include "pairbound/registry.h"
#include "pairbound/error_mpi.h"
#include "pairbound/fields.h"
#include "pairbound/policy.h"
#include "pairbound/stage.h"
#include "pairbound/timer.h"
#include "pairbound/text.h"
#include "pairbound/checksum.h"
#include "pairbound/verify.h"
#include "bounds/bounds_stage_internal.h"
#include "verify_stage_internal.h"

/* The policy engine is the one under test; its limits must cover ours. */
_Static_assert(PB_VERIFY_MAX_POL == PB_POLICY_MAX && PB_VERIFY_MAX_LAMBDA == PB_POLICY_MAX_LAMBDA,
               "verify and policy limits differ");

#define PB_O(member) PB_OPTION_FIELD(struct pb_verify_options, member)
#define PB_POLICIES PB_OPTION_AT(struct pb_verify_options, policies)
const struct pb_option pb_verify_option_table[] = {
  {.name = "cells", .type = PB_OPTION_CHOICE, PB_O(cells), .metavar = "all|panel|sample", .choices = "all|panel|sample",
   .def = "all", .help_default = 1,
   .help = "cells to cover: every cell (default), the frozen panel, or a sample per source"},
  {.name = "sample", .type = PB_OPTION_INT, PB_O(sample), .metavar = "N", .imin = 1, .imax = 1u << 30, .def = "12",
   .help_default = 1,
   .help = "with --cells sample: N cells of each source, first in SHA-256 order of "
           "'verify|SEED|source|model|condition' (default 12: 48 cells on four sources, as C.1)"},
  {.name = "sample-seed", .type = PB_OPTION_INT, PB_O(sample_seed), .metavar = "N", .def = "20260911",
   .help = "SEED of that order (default 20260911; under `pairbound run`: the run seed + 3, docs/run.md)"},
  {.name = "sources", .type = PB_OPTION_STRING, PB_O(sources), .metavar = "LIST",
   .help = "cover only these sources (comma-separated names)"},
  {.name = "max-class", .type = PB_OPTION_INT, PB_O(max_class), .metavar = "N", .imin = 1, .imax = PB_VERIFY_MAX_N,
   .def = "8",
   .help = "enumerate classes of at most N records per side, 1..10; larger classes go to the LP check (--lp-max) "
           "or are skipped and counted, and their cells get no cell-level enumeration"},
  {.name = "cartesian-max", .type = PB_OPTION_INT, PB_O(cartesian_max), .metavar = "P", .imax = 1ull << 40,
   .def = "20000", .help_default = 1,
   .help = "brute-force the whole-cell Cartesian product of all classes' bijections when it has at most P "
           "combinations (default 20000; 0 disables)"},
  {.name = "lp-max", .type = PB_OPTION_INT, PB_O(lp_max), .metavar = "N", .imax = PB_VERIFY_LP_MAX_N, .def = "1000",
   .help_default = 1,
   .help = "check larger classes of at most N records per side (default 1000, at most 2000; 0 disables) by exact "
           "integer programs over record types (GLPK: rational simplex, branch and bound where the LP vertex is "
           "fractional): the I5 H interval against the bounds engine and, with --policies, every I5 policy end "
           "against the policy engine; such cells also get whole-cell I0/Ik checks against the closed forms "
           "(Eq. 4, 5, 7)"},
  {.name = "allow-empty", .type = PB_OPTION_FLAG, PB_O(allow_empty), .flag = 1, .def = "0",
   .help = "exit 0 even when no class was checked (otherwise a run that checks nothing fails)"},
  {.name = "tau", .type = PB_OPTION_DOUBLE, PB_O(tau), .metavar = "X", .max = 1,
   .mark = PB_OPTION_AT(struct pb_verify_options, have_tau),
   .help = "one acceptance threshold for every cell (as `bounds --tau`)"},
  {.name = "against", .type = PB_OPTION_STRING, PB_O(against), .metavar = "FILE",
   .help = "compare with the /bounds/cells columns of a `pairbound bounds` results.h5 made with the same protocol "
           "options, instead of running the bounds engine in-process"},
  {.name = "witnesses", .type = PB_OPTION_STRING, PB_O(witnesses), .metavar = "FILE",
   .help = "also check every witness of a `pairbound bounds --witnesses` results.h5 of this store: each is a "
           "within-class bijection keeping the counts its level fixes (k at Ik, all five at I5) whose H count, "
           "recomputed from the records, is the file's end; a failure names cell, class, level and end (exit 1)"},
  {.name = "policies", .type = PB_OPTION_FLAG, PB_O(policies), .flag = 1, .def = "0",
   .help = "also verify the rejection-policy engine (`pairbound policy`; off by default): per class and bijection "
           "the policy event counts h_j, l_j (Eq. 10) at I0, Ik, I5, their extremes, J_j, D+_jl (Eq. 11), J', D'+, "
           "feasible means, compared with pb_policy_cell per class and per cell (always in-process); Lemma 1 "
           "(Eq. 8) and Corollary 1 checks. Clean threshold as --tau / the protocol's; policies as `pairbound "
           "policy`"},
  {.name = "policy-taus", .type = PB_OPTION_LIST, PB_O(taus), .metavar = "a,b,..", .max = 1,
   .max_n = PB_VERIFY_MAX_POL, .count = PB_OPTION_AT(struct pb_verify_options, n_taus), .mark = PB_POLICIES,
   .help = "perturbed policy thresholds for every cell, 1 to 8 values (default: the development thresholds at "
           "coverages .6 .7 .8 .9 1); implies --policies"},
  {.name = "lambdas", .type = PB_OPTION_LIST, PB_O(lambdas), .metavar = "a,b,..", .max = 1,
   .max_n = PB_VERIFY_MAX_LAMBDA, .count = PB_OPTION_AT(struct pb_verify_options, n_lambdas), .distinct = 1,
   .mark = PB_POLICIES, .def = "0.5", .help_default = 1,
   .help = "cost weights in [0, 1], distinct, 1 to 32 values (default .5, the primary weight of seed 000 "
           "Appendix D; the paper's grid is 0,.1,...,1); implies --policies"},
  {.name = NULL}};
#undef PB_POLICIES
#undef PB_O

/* Covered cells: source filter, then all / panel / a per-source sample in
 * SHA-256 order of names (identical on every rank). */
static uint8_t *pb_verify__select(const struct pb_stage *st, const struct pb_cell_ref *cells,
                                  const struct pb_verify_options *opt)
{
  const struct pb_meta *meta = st->meta;
  uint8_t *cov = pb_calloc((size_t)(st->n_cells > 0 ? st->n_cells : 1), 1);
  uint8_t *src_on = pb_calloc((size_t)meta->n_sources, 1);
  if (!opt->sources) memset(src_on, 1, (size_t)meta->n_sources);
  else {
    char *list = pb_strdup(opt->sources), *save = NULL;
    for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
      int32_t s = pb_meta_find_source(meta, w);
      if (s >= 0) src_on[s] = 1;
    }
    free(list);
  }
  struct pb_verify__key { uint64_t key; int64_t cell; } *keys = NULL;
  for (int32_t s = 0; s < meta->n_sources; s++) {
    if (!src_on[s]) continue;
    const struct pb_source *src = &meta->sources[s];
    int64_t m = 0;
    if (opt->cells == PB_VERIFY_CELLS_SAMPLE)
      keys = pb_realloc(keys, (size_t)(st->n_cells > 0 ? st->n_cells : 1) * sizeof *keys);
    for (int64_t c = 0; c < st->n_cells; c++) {
      if (cells[c].source != s) continue;
      if (opt->cells == PB_VERIFY_CELLS_ALL) cov[c] = 1;
      else if (opt->cells == PB_VERIFY_CELLS_PANEL)
        cov[c] = st->protocol.src[s].panel[cells[c].model * src->n_conditions + cells[c].condition];
      else {
        char text[1024];
        snprintf(text, sizeof text, "verify|%llu|%s|%s|%s", (unsigned long long)opt->sample_seed, src->name,
                 meta->model_ids[cells[c].model], src->conditions[cells[c].condition]);
        keys[m++] = (struct pb_verify__key){pb_checksum_sha256_key(text), c};
      }
    }
    if (opt->cells == PB_VERIFY_CELLS_SAMPLE) {
      /* partial selection of the smallest keys (ties by cell index) */
      for (int64_t i = 0; i < m && i < opt->sample; i++) {
        int64_t best = i;
        for (int64_t j = i + 1; j < m; j++)
          if (keys[j].key < keys[best].key || (keys[j].key == keys[best].key && keys[j].cell < keys[best].cell)) best = j;
        struct pb_verify__key t = keys[i];
        keys[i] = keys[best];
        keys[best] = t;
        cov[keys[i].cell] = 1;
      }
    }
  }
  free(keys);
  free(src_on);
  return cov;
}

/* The --against file's per-cell values for cells [first, last): the bounds
 * stage's columns, read through its field table. */
static int pb_verify__read_against(const char *path, const struct pb_stage *st, struct pb_verify_values *vals,
                                   uint8_t *has_i5, float *tau)
{
  const int64_t n = st->last - st->first;
  double *recs = pb_malloc((size_t)(n > 0 ? n : 1) * PB_IF_N * sizeof *recs);
  int status = pb_fields_read(&pb_bounds_fields, path, st->n_cells, st->first, n, recs);
  if (status != PB_OK) {
    char why[1024];
    snprintf(why, sizeof why, "%s", pb_error_message());
    pb_error_set("%s (not a `pairbound bounds` results file of this store?)", why);
  }
  /* per target: obs, I0, Ik, I5 intervals (the record's order since bounds.tsv's first columns) */
  static const int first[PB_VERIFY_NTARGETS] = {PB_IF_H_OBS, PB_IF_L_OBS, PB_IF_D_OBS};
  for (int64_t c = 0; c < n && status == PB_OK; c++) {
    const double *rec = recs + c * PB_IF_N;
    struct pb_verify_values *v = &vals[c];
    for (int t = 0; t < PB_VERIFY_NTARGETS; t++) {
      double(*x)[2] = t == 0 ? v->H : t == 1 ? v->L : v->dMk;
      *(t == 0 ? &v->H_obs : t == 1 ? &v->L_obs : &v->dMk_obs) = rec[first[t]];
      for (int j = 0; j < 6; j++) x[j / 2][j % 2] = rec[first[t] + 1 + j];
    }
    tau[c] = (float)rec[PB_IF_TAU];
    /* H at I5 is defined in every cell where the bounds run computed I5 */
    has_i5[c] = !isnan(v->H[2][0]) || !isnan(v->H[2][1]);
  }
  free(recs);
  return status;
}

static void pb_verify__tsv(const struct pb_stage *st, const struct pb_cell_block *b, const double *recs,
                           char *const *fail, struct pb_text *t)
{
  for (int64_t c = 0; c < b->n_cells; c++) {
    const double *rec = recs + c * PB_VF_N;
    if (rec[PB_VF_COVERED] != 1) continue;
    const struct pb_cell_view d = pb_cells_view(st->meta, &b->cells[c], NAN);
    pb_text_printf(t, "%s\t%s\t%s", d.model, d.source, d.condition);
    pb_fields_tsv_values(pb_verify_fields(), rec, PB_VF_COVERED + 1, t);
    pb_text_printf(t, "\t%s\n", fail[c][0] ? fail[c] : "-");
  }
}

/* One rank's verification state: per cell its record, failure text, name,
 * thresholds and (--against) the file's values. */
struct pb_verify__work {
  int64_t nc;
  struct pb_cell_ref *all_cells;
  uint8_t *cov;                      /* [global cell] covered by this run */
  double *recs;
  char **fail, **where;
  float *tau, *ftau;
  struct pb_verify_policy_setup *pset;
  struct pb_verify_values *fvals;
  uint8_t *fi5;
  int64_t corrupt_cell;              /* test hook (PAIRBOUND_VERIFY_TEST_CORRUPT) */
  int32_t corrupt_label;
};

/* --sources must name sources of the store. */
static int pb_verify__check_sources(const struct pb_stage *st, const struct pb_verify_options *opt)
{
  if (!opt->sources) return PB_OK;
  char *list = pb_strdup(opt->sources), *save = NULL;
  int status = PB_OK;
  for (char *w = strtok_r(list, ",", &save); w && status == PB_OK; w = strtok_r(NULL, ",", &save))
    if (pb_meta_find_source(st->meta, w) < 0) {
      char names[512];
      pb_error_set("--sources: the store has no source '%s' (%s)", w, pb_meta_source_names(st->meta, names, sizeof names));
      status = PB_FAIL;
    }
  free(list);
  return status;
}

/* Records, names, thresholds and policies of this rank's cells; the
 * --against file's values.  Returns PB_FAIL when a covered cell has no threshold. */
static int pb_verify__setup(const struct pb_stage *st, const struct pb_cell_block *b,
                            const struct pb_verify_options *opt, struct pb_verify__work *w)
{
  const int64_t nc = b->n_cells, nalloc = nc > 0 ? nc : 1;
  int status = PB_OK;
  w->nc = nc;
  pb_dist_cells(st->meta, &w->all_cells);
  w->cov = pb_verify__select(st, w->all_cells, opt);
  w->recs = pb_malloc((size_t)nalloc * PB_VF_N * sizeof *w->recs);
  w->fail = pb_malloc((size_t)nalloc * sizeof *w->fail);
  w->where = pb_malloc((size_t)nalloc * sizeof *w->where);
  w->tau = pb_malloc((size_t)nalloc * sizeof *w->tau);
  w->ftau = pb_malloc((size_t)nalloc * sizeof *w->ftau);
  w->pset = opt->policies ? pb_calloc((size_t)nalloc, sizeof *w->pset) : NULL;
  /* test-only hook: PAIRBOUND_VERIFY_TEST_CORRUPT=CELL[,LABEL] (global cell index, class label) */
  w->corrupt_cell = -1;
  w->corrupt_label = -1;
  int64_t hook[2];
  int n_hook = 0;
  if (pb_env_int_list(PB_ENV_VERIFY_TEST_CORRUPT, 0, INT_MAX, 2, hook, &n_hook) == PB_OK)
    w->corrupt_cell = hook[0], w->corrupt_label = n_hook > 1 ? (int32_t)hook[1] : -1;
  for (int64_t c = 0; c < nc; c++) {
    const struct pb_cell_ref *r = &b->cells[c].ref;
    const struct pb_source *src = &st->meta->sources[r->source];
    double *rec = w->recs + c * PB_VF_N;
    for (int f = 0; f < PB_VF_N; f++) rec[f] = NAN;
    rec[PB_VF_COVERED] = w->cov[st->first + c];
    for (int f = PB_VF_CLASSES; f <= PB_VF_I5_MISSING; f++) rec[f] = 0;
    for (int f = PB_VF_LP_CLASSES; f <= PB_VF_LP_BNB; f++) rec[f] = 0;
    rec[PB_VF_FAILED] = 0;
    rec[PB_VF_FAIL_LABEL] = -1;
    w->fail[c] = pb_calloc(PB_VERIFY__MSG, 1);
    size_t len = strlen(st->meta->model_ids[r->model]) + strlen(src->name) + strlen(src->conditions[r->condition]) + 3;
    w->where[c] = pb_malloc(len);
    snprintf(w->where[c], len, "%s/%s/%s", st->meta->model_ids[r->model], src->name, src->conditions[r->condition]);
    w->tau[c] = opt->have_tau ? opt->tau : st->protocol.src[r->source].tau[r->model];
    if (w->cov[st->first + c] && isnan(w->tau[c]) && status == PB_OK) {
      pb_error_set("source %s, model %s: no development threshold (the source has no development images); give --tau",
                   src->name, st->meta->model_ids[r->model]);
      status = PB_FAIL;
    }
    for (int f = PB_VF_POL_CLASSES; f < PB_VF_POL_RES; f++) rec[f] = 0;
    if (opt->policies) {
      /* policy thresholds as `pairbound policy`: --policy-taus, else the
       * development order statistics at q = .6 .. 1 */
      struct pb_verify_policy_setup *p = &w->pset[c];
      p->n_pol = opt->n_taus > 0 ? opt->n_taus : PB_PROTOCOL_N_Q;
      for (int32_t j = 0; j < p->n_pol; j++) {
        p->tau[j] = opt->n_taus > 0 ? opt->taus[j] : st->protocol.src[r->source].policy_tau[r->model * PB_PROTOCOL_N_Q + j];
        if (w->cov[st->first + c] && isnan(p->tau[j]) && status == PB_OK) {
          pb_error_set("source %s, model %s: no development policy thresholds (the source has no development images); "
                       "give --policy-taus", src->name, st->meta->model_ids[r->model]);
          status = PB_FAIL;
        }
      }
      p->n_lambda = opt->n_lambdas;
      memcpy(p->lambda, opt->lambdas, (size_t)opt->n_lambdas * sizeof p->lambda[0]);
    }
  }
  if (status == PB_OK && opt->against) {
    w->fvals = pb_calloc((size_t)nalloc, sizeof *w->fvals);
    w->fi5 = pb_calloc((size_t)nalloc, 1);
    status = pb_verify__read_against(opt->against, st, w->fvals, w->fi5, w->ftau);
  }
  return status;
}

/* Block checkpoints (pairbound/blocks.h): a block is K consecutive cells in
 * global order, K from the cell count alone (about 256 blocks), so any rank
 * count maps to the same blocks; its payload is each cell's record and
 * failure text. */
#define PB_VERIFY_BLOCKS 256
#define PB_VERIFY__NTOT 7   /* run totals (pb_verify__write) */

/* One covered cell (its record and failure text in w). */
static void pb_verify__one(const struct pb_stage *st, const struct pb_cell_block *b, const struct pb_verify_options *opt,
                           struct pb_verify__work *w, struct pb_verify__scratch *sc, int64_t c, double *t_enum)
{
  struct pb_verify__cellstate cs = {w->recs + c * PB_VF_N, w->fail[c], w->where[c]};
  struct pb_verify__ref ref = {opt->against == NULL, w->fvals ? &w->fvals[c] : NULL, w->fi5 ? w->fi5[c] : 0,
                               st->first + c == w->corrupt_cell, w->corrupt_label};
  if (opt->against && !(w->ftau[c] == w->tau[c])) {
    pb_verify__failf(&cs, -1, "results file threshold %.9g differs from this run's %.9g (other protocol options?)",
                     (double)w->ftau[c], (double)w->tau[c]);
    cs.rec[PB_VF_COVERED] = 1;
    return;
  }
  const struct pb_cell_view d = pb_cells_view(st->meta, &b->cells[c], w->tau[c]);
  pb_verify__cell(&d, opt, w->pset ? &w->pset[c] : NULL, &ref, sc, &cs, t_enum);
}

/* What a block's checkpoint holds of its cells: their records and failure messages in the work. */
struct pb_verify__blockdata {
  const struct pb_stage *st;
  struct pb_verify__work *w;
};

/* The checkpoint of cells [ca, cb) into the work (pb_blocks_resume_round): PB_OK when it has this layout. */
static int pb_verify__block_apply(void *ctx, int64_t ca, int64_t cb, struct pb_bytes *pay)
{
  const struct pb_verify__blockdata *d = ctx;
  const struct pb_stage *st = d->st;
  struct pb_verify__work *w = d->w;
  if (pay->len != (size_t)(cb - ca) * (PB_VF_N * sizeof(double) + PB_VERIFY__MSG)) return PB_FAIL;
  for (int64_t c = ca - st->first; c < cb - st->first; c++) {
    pb_blocks_get(pay, w->recs + c * PB_VF_N, PB_VF_N * sizeof(double));
    pb_blocks_get(pay, w->fail[c], PB_VERIFY__MSG);
    w->fail[c][PB_VERIFY__MSG - 1] = '\0';
  }
  return PB_OK;
}

/* Checkpoint block k from w. */
static int pb_verify__block_save(const struct pb_stage *st, const struct pb_verify__work *w, struct pb_blocks *bl,
                                 int64_t per, int64_t k)
{
  int64_t ca, cb;
  pb_blocks_items(st->n_cells, per, k, &ca, &cb);
  struct pb_bytes pay = {0};
  for (int64_t c = ca - st->first; c < cb - st->first; c++) {
    pb_blocks_put(&pay, w->recs + c * PB_VF_N, PB_VF_N * sizeof(double));
    pb_blocks_put(&pay, w->fail[c], PB_VERIFY__MSG);
  }
  int status = pb_blocks_save(bl, k, &pay);
  pb_blocks_bytes_free(&pay);
  return status;
}

/* Every covered cell of this rank, a round of blocks at a time: the round's
 * intact checkpoints are read, its other cells verified and their blocks
 * checkpointed as each completes; a signal or a failure on any rank ends the
 * loop at the next round.  Returns the enumerating thread-seconds. */
static double pb_verify__compute(const struct pb_stage *st, const struct pb_cell_block *b,
                                 const struct pb_verify_options *opt, struct pb_verify__work *w, struct pb_blocks *bl,
                                 int64_t per, int *status, int64_t memo_counts[2])
{
  double t_enum = 0.0;
  /* one memo per thread, for the whole run (PAIRBOUND_VERIFY_NO_MEMO=1: none,
   * for the test that shows a memo changes no byte) */
  const int nth = omp_get_max_threads();
  const char *no_memo = pb_env_get(PB_ENV_VERIFY_NO_MEMO);
  const int use_memo = opt->policies && !(no_memo && strcmp(no_memo, "1") == 0);
  struct pb_verify_memo **memos = pb_calloc((size_t)nth, sizeof *memos);
  struct pb_progress prog;
  struct pb_error_first fe;
  pb_error_first_init(&fe);
  pb_progress_begin(&prog, "verify", "cells", w->nc);
  uint8_t *todo = pb_calloc((size_t)(w->nc > 0 ? w->nc : 1), 1);
  struct pb_verify__blockdata data = {st, w};
  for (int64_t r = 0; r < bl->rounds; r++) {
    struct pb_blocks_left lf;
    pb_blocks_resume_round(bl, r, st->n_cells, per, st->first, pb_verify__block_apply, &data, todo, &prog, &lf);
    const int64_t b0 = lf.b0, c0 = lf.c0, c1 = lf.c1;
    int64_t *left = lf.n;
    /* cells of the round's other blocks, dynamically (their costs differ widely) */
#pragma omp parallel reduction(+ : t_enum)
    {
      struct pb_verify__scratch sc;
      memset(&sc, 0, sizeof sc);
      if (opt->policies) pb_verify__scratch_policies(&sc, opt, use_memo ? &memos[omp_get_thread_num()] : NULL);
#pragma omp for schedule(dynamic, 4)
      for (int64_t c = c0 - st->first; c < c1 - st->first; c++) {
        if (!todo[c]) continue;
        pb_progress_step(&prog, 1);
        if (w->cov[st->first + c]) pb_verify__one(st, b, opt, w, &sc, c, &t_enum);
        const int64_t k = (st->first + c) / per;
        int64_t rest;
#pragma omp atomic capture seq_cst /* a flush: the block's other cells are visible to the one that saves it */
        rest = --left[k - b0];
        if (rest == 0 && pb_verify__block_save(st, w, bl, per, k) != PB_OK) pb_error_first_record(&fe, k * per);
      }
      pb_verify__scratch_free(&sc);
      pb_verify_lp_release(); /* no-op in a thread that solved no LP */
    }
    free(left);
    if (pb_blocks_poll(bl, pb_error_first_status(&fe))) break; /* no collective call in the loop */
  }
  free(todo);
  memo_counts[0] = memo_counts[1] = 0;
  for (int t = 0; t < nth; t++) {
    int64_t h, m;
    pb_verify_memo_counts(memos[t], &h, &m);
    memo_counts[0] += h, memo_counts[1] += m;
    pb_verify_memo_free(memos[t]);
  }
  free(memos);
  pb_progress_end(&prog);
  *status = pb_error_first_status(&fe);
  return t_enum;
}

/* The label-set enumeration's totals on stdout (rank 0 holds them). */
static void pb_verify__lsets_message(const struct pb_stage *st, const struct pb_verify_options *opt,
                                     const int64_t *lsets)
{
  int64_t t[PB_VLS_N] = {0};
  for (int32_t s = 0; s < st->meta->n_sources && st->rank == 0; s++)
    for (int k = 0; k < PB_VLS_N; k++) t[k] += lsets[(size_t)s * PB_VLS_N + k];
  if (st->rank == 0)
    pb_message("verify: label sets (set correctness, Appendix J): %lld classes in %lld cells; %lld enumerated, of which "
               "%lld with L and dM_k equal at Ik and I5 and %lld with a strictly narrower H at I5; %lld larger than %d "
               "records per side", (long long)t[PB_VLS_CLASSES], (long long)t[PB_VLS_CELLS],
               (long long)t[PB_VLS_ENUMERATED], (long long)t[PB_VLS_AGREE], (long long)t[PB_VLS_NARROWER],
               (long long)t[PB_VLS_SKIPPED], (int)opt->max_class);
}

/* Columns, verify.tsv and REPORT.md (collective); @p lsets: the label-set
 * counts (rank 0; NULL: no sets); @p msg receives the first failure in cell
 * order, @p totals permutations, classes enumerated, failed. */
static int pb_verify__write(struct pb_stage *st, const struct pb_cell_block *b, const struct pb_verify_options *opt,
                            const struct pb_verify__work *w, int status, const int64_t *lsets, char msg[PB_VERIFY__MSG],
                            int64_t *first_fail_out, double totals[PB_VERIFY__NTOT])
{
  const int64_t nc = w->nc;
  MPI_Comm comm = st->comm;
  if (status == PB_OK) status = pb_fields_write(pb_verify_fields(), st->results, st->n_cells, st->first, nc, w->recs);
  /* first failure in cell order, its text from the rank that holds it */
  int64_t my_first = INT64_MAX, first_fail;
  for (int64_t c = 0; c < nc && my_first == INT64_MAX; c++)
    if (w->recs[c * PB_VF_N + PB_VF_FAILED] > 0) my_first = st->first + c;
  MPI_Allreduce(&my_first, &first_fail, 1, MPI_INT64_T, MPI_MIN, comm);
  msg[0] = '\0';
  if (first_fail != INT64_MAX) {
    int holder = my_first == first_fail ? st->rank : st->size, root;
    MPI_Allreduce(&holder, &root, 1, MPI_INT, MPI_MIN, comm);
    if (st->rank == root) snprintf(msg, PB_VERIFY__MSG, "%s", w->fail[first_fail - st->first]);
    MPI_Bcast(msg, PB_VERIFY__MSG, MPI_CHAR, root, comm);
  }
  if (status == PB_OK) {
    struct pb_text t = {0}, head = {0};
    pb_verify__tsv(st, b, w->recs, w->fail, &t);
    /* the covered flag is implied: verify.tsv lists covered cells only */
    pb_fields_tsv_header(pb_verify_fields(), "model\tsource\tcondition", PB_VF_COVERED + 1, &head);
    pb_text_printf(&head, "\tfailure\n");
    status = pb_results_tsv(st->results, "verify.tsv", head.buf, t.buf, t.len);
    pb_text_free(&t);
    pb_text_free(&head);
  }
  /* permutations, classes enumerated, failed, classes, by LP, not checked, covered cells */
  for (int i = 0; i < PB_VERIFY__NTOT; i++) totals[i] = 0;
  for (int64_t c = 0; c < nc; c++) {
    const double *rec = w->recs + c * PB_VF_N;
    if (rec[PB_VF_COVERED] != 1) continue;
    totals[0] += rec[PB_VF_PERMS];
    totals[1] += rec[PB_VF_ENUMERATED];
    totals[2] += rec[PB_VF_FAILED];
    totals[3] += rec[PB_VF_CLASSES];
    totals[4] += rec[PB_VF_LP_CLASSES];
    totals[5] += rec[PB_VF_SKIPPED];
    totals[6] += 1;
  }
  MPI_Allreduce(MPI_IN_PLACE, totals, PB_VERIFY__NTOT, MPI_DOUBLE, MPI_SUM, comm);
  /* coverage first: what was checked by which method, and what not and why */
  const int lim = opt->lp_max > opt->max_class ? opt->lp_max : opt->max_class;
  pb_message("verify: coverage: %.0f classes in %.0f cells: %.0f enumerated (<= %d records per side), %.0f by exact "
             "LP (<= %d), %.0f not checked (larger than %d records per side)",
             totals[3], totals[6], totals[1], (int)opt->max_class, totals[4], (int)opt->lp_max, totals[5], lim);
  if (totals[5] > 0 && totals[1] + totals[4] > 0)
    pb_warning("verify: %.0f of %.0f classes not checked (larger than %d records per side; raise --lp-max, at most %d)",
               totals[5], totals[3], lim, PB_VERIFY_LP_MAX_N);
  if (status == PB_OK) {
    struct pb_verify_sum S;
    status = pb_verify_summarise(st->meta, w->all_cells, w->recs, st->first, nc, comm, &S);
    if (status == PB_OK && st->rank == 0)
      status = pb_verify_report(st->meta, w->all_cells, &S, st->n_cells, opt, msg, lsets, st->results);
    pb_verify_sum_free(&S);
    pb_comm_bcast(&status, 1, MPI_INT, 0, comm);
  }
  *first_fail_out = first_fail;
  return status;
}

static void pb_verify__work_free(struct pb_verify__work *w)
{
  for (int64_t c = 0; c < w->nc; c++) free(w->fail[c]), free(w->where[c]);
  free(w->fail), free(w->where), free(w->recs), free(w->tau), free(w->ftau), free(w->pset), free(w->fvals);
  free(w->fi5), free(w->cov), free(w->all_cells);
}

/* What checking one cell of each source costs, in steps of about 15 ns on
 * one core, from its classes' evaluation records per side n: Heap's
 * enumeration n! bijections plus 40 + 3 n^2 for the class's set-up and
 * levels; an exact LP 10,000 + 70 n (measured: 173 us per class at n = 25,
 * 0.65 ms at n = 500); a class too large to check, its n records.  The
 * blocks' partition over ranks follows it (a cell of the paper store's 1,000-class source,
 * classes of 5, measured 3.4 ms, 17 times one of its other sources),
 * and every rank then runs its blocks at its own pace (pb_blocks_poll). */
static int64_t *pb_verify__source_costs(const struct pb_meta *meta, const struct pb_verify_options *opt)
{
  int64_t *cost = pb_calloc((size_t)(meta->n_sources > 0 ? meta->n_sources : 1), sizeof *cost);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *src = &meta->sources[s];
    int32_t *n = pb_calloc((size_t)(src->n_classes > 0 ? src->n_classes : 1), sizeof *n);
    for (int32_t i = 0; i < src->n_images; i++)
      if (src->split[i] == PB_SPLIT_EVAL && src->labels[i] >= 0 && src->labels[i] < src->n_classes) n[src->labels[i]]++;
    for (int32_t l = 0; l < src->n_classes; l++) {
      const int64_t k = n[l];
      int64_t f = 1;
      for (int64_t j = 2; j <= k && k <= opt->max_class; j++) f *= j;
      cost[s] += k == 0 ? 0 : k <= opt->max_class ? 40 + 3 * k * k + f : k <= opt->lp_max ? 10000 + 70 * k : k;
    }
    free(n);
  }
  return cost;
}

/* `pairbound verify` (the registry's run). */
static int pb_verify__stage_run(const struct pb_stage_call *call, const void *opts)
{
  const struct pb_verify_options *opt = opts;
  struct pb_stage st;
  struct pb_cell_block b;
  if (opt->max_class < 1 || opt->max_class > PB_VERIFY_MAX_N) {
    pb_error_set("--max-class must be in [1, %d]", PB_VERIFY_MAX_N);
    return PB_FAIL;
  }
  if (pb_stage_begin(call, &st)) return PB_FAIL;
  int status = pb_verify__check_sources(&st, opt);
  if (status != PB_OK) return pb_stage_close(&st, status);
  /* blocks of cells in global order, split over ranks by their covered cells */
  struct pb_cell_ref *all;
  pb_dist_cells(st.meta, &all);
  uint8_t *cov = pb_verify__select(&st, all, opt);
  int64_t per, *cost = pb_malloc((size_t)(st.n_cells > 0 ? st.n_cells : 1) * sizeof *cost);
  int64_t *src_cost = pb_verify__source_costs(st.meta, opt);
  for (int64_t c = 0; c < st.n_cells; c++) cost[c] = 1 + cov[c] * src_cost[all[c].source];
  free(src_cost);
  free(cov);
  free(all);
  struct pb_blocks bl;
  status = pb_blocks_open_items(&bl, call->outdir, "verify", st.n_cells, PB_VERIFY_BLOCKS, cost, st.comm, &per,
                                &st.first, &st.last);
  free(cost);
  if (status == PB_OK)
    status = pb_cells_load(st.store, st.first, st.last, PB_FIELD_PRED | PB_FIELD_SMAX | PB_FIELD_PTRUE, &b);
  status = pb_error_agree(st.comm, status);
  if (status != PB_OK) return pb_stage_close(&st, pb_blocks_close(&bl, status));
  struct pb_verify__work w;
  memset(&w, 0, sizeof w);
  status = pb_verify__setup(&st, &b, opt, &w);
  status = pb_error_agree(st.comm, status);
  pb_timer_lap(&st.timer, "load");
  int64_t memo_counts[2] = {0, 0};
  const double t_enum = status == PB_OK ? pb_verify__compute(&st, &b, opt, &w, &bl, per, &status, memo_counts) : 0.0;
  status = pb_blocks_close(&bl, pb_error_agree(st.comm, status));
  pb_timer_lap(&st.timer, "verify");
  struct pb_verify__wsum ws;
  memset(&ws, 0, sizeof ws);
  ws.first_fail = INT64_MAX;
  if (status == PB_OK && opt->witnesses) {
    status = pb_error_agree(st.comm, pb_verify__witnesses(&st, &b, opt->witnesses, &ws));
    pb_verify__witness_reduce(&st, &ws);
    pb_timer_lap(&st.timer, "witnesses");
    if (status == PB_OK)
      pb_message("verify: witnesses of %s: %lld checked (%lld I5 ones absent: cells outside its --i5 scope), "
                 "%lld cells failed; %.3f s", opt->witnesses, (long long)ws.checked, (long long)ws.skipped,
                 (long long)ws.failed, pb_timer_get(&st.timer, "witnesses"));
  }
  /* Appendix J: the set enumeration, before the outputs so that a failing class is in them */
  int64_t *lsets = NULL;
  if (status == PB_OK) status = pb_verify__lsets(&st, opt, &b, w.cov, w.tau, w.recs, w.fail, w.where, &lsets);
  if (lsets) {
    pb_timer_lap(&st.timer, "label_sets");
    pb_verify__lsets_message(&st, opt, lsets);
  }
  char msg[PB_VERIFY__MSG] = "";
  int64_t first_fail;
  double totals[PB_VERIFY__NTOT];
  status = pb_verify__write(&st, &b, opt, &w, status, lsets, msg, &first_fail, totals);
  free(lsets);
  const int empty = status == PB_OK && totals[1] + totals[4] == 0;
  pb_timer_end(&st.timer, "write", st.comm);
  double enum_cpu = t_enum;
  MPI_Allreduce(MPI_IN_PLACE, &enum_cpu, 1, MPI_DOUBLE, MPI_SUM, st.comm);
  const double mx[3] = {pb_timer_get(&st.timer, "load"), pb_timer_get(&st.timer, "verify"),
                        pb_timer_get(&st.timer, "write")};
  /* enumeration CPU seconds over every thread of every rank (not a wall phase) */
  pb_timer_add(&st.timer, "enumeration_cpu", enum_cpu);
  pb_message("verify: %.0f classes enumerated, %.0f permutations; load %.3f s; verify %.3f s (%.3g permutations/s "
             "overall, %.3g per enumerating thread-second); write %.3f s",
             totals[1], totals[0], mx[0], mx[1], mx[1] > 0 ? totals[0] / mx[1] : 0.0,
             enum_cpu > 0 ? totals[0] / enum_cpu : 0.0, mx[2]);
  if (opt->policies) {
    MPI_Allreduce(MPI_IN_PLACE, memo_counts, 2, MPI_INT64_T, MPI_SUM, st.comm);
    pb_message("verify: class policy checks: %lld canonical forms checked, %lld repeats reused (docs/verify.md)",
               (long long)memo_counts[1], (long long)memo_counts[0]);
  }
  pb_verify__work_free(&w);
  pb_cells_free(&b);
  status = pb_stage_end(&st, status);
  if (status == PB_OK && first_fail != INT64_MAX) {
    /* outputs are complete and committed; the verdict is the exit status */
    pb_error_set("verification failed (%.0f failed comparisons or checks; see report/verify.tsv): %s", totals[2], msg);
    return PB_FAIL;
  }
  if (status == PB_OK && ws.first_fail != INT64_MAX) {
    pb_error_set("witness check failed (%lld cells; %lld witnesses checked): %s", (long long)ws.failed,
                 (long long)ws.checked, ws.msg);
    return PB_FAIL;
  }
  if (status == PB_OK && empty && !opt->allow_empty) {
    /* outputs are complete; a check of nothing is not a success */
    pb_error_set("verify checked no class: %.0f classes in %.0f covered cells, all larger than %d records per side "
                 "(raise --lp-max, or give --allow-empty)",
                 totals[3], totals[6], (int)(opt->lp_max > opt->max_class ? opt->lp_max : opt->max_class));
    return PB_FAIL;
  }
  return status;
}

static const struct pb_stage_inherit pb_verify__inherits[] = {
  {"sample_seed", "run.seed", 3}, {"tau", "bounds.tau", 0}, {NULL, NULL, 0}};

const struct pb_stage_desc pb_verify_stage = {
  .name = "verify",
  .store = {.reads = 1, .needs = PB_STAGE_NEEDS_CELLS | PB_STAGE_NEEDS_EVAL},
  .options = {.table = pb_verify_option_table, .size = sizeof(struct pb_verify_options)},
  .run = pb_verify__stage_run,
  .pipeline = {.report = "REPORT.md", .order = 4, .blocks = 1, .inherits = pb_verify__inherits,
               .summary = pb_verify_summary},
  .help = "Independent verification of the identification endpoints (seed 000 A.10, B.3, C.1; docs/verify.md):\n"
          "enumerate every within-class bijection of every small class, classify it by its five-state counts, combine\n"
          "classes exactly and compare H, L and dM_k at I0, Ik, I5 (and observed values) with the bounds engine, per\n"
          "cell and per class; brute-force whole-cell Cartesian products of tiny cells; structural checks (nesting,\n"
          "observed values inside, Theorem 1). Writes OUTDIR/results.h5 (/verify/cells), OUTDIR/report/verify.tsv\n"
          "(one row per covered cell) and OUTDIR/report/REPORT.md. Exit status 1 when any residual exceeds 1e-12 or\n"
          "any check fails, after writing the outputs; the message names the cell and class.\n",
};
