/* The predict stage: per-cell synthetic summaries and real target counts,
 * model-level features and targets, every nested leave-one-group-out fit of
 * seed 000 Appendices H-I, distributed over ranks and threads
 * (docs/predict.md). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/cells.h"
#include "pairbound/comm.h"
#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/registry.h"
#include "pairbound/error_mpi.h"
#include "pairbound/figure.h"
#include "pairbound/options.h"
#include "pairbound/predict.h"
#include "pairbound/resample.h"
#include "pairbound/stage.h"
#include "pairbound/timer.h"
#include "predict_internal.h"

/* Cell summary column behind each feature; -1 for the two real development features. */
static const int pb_predict__feat_src[PB_PREDICT__N_FEAT] = {
  PB_PC_ACC0, -1, PB_PC_A1, PB_PC_S0, PB_PC_S1, PB_PC_M0, PB_PC_M1, PB_PC_LOGLOSS, -1, PB_PC_R80, PB_PC_E, PB_PC_CR,
  PB_PC_F, PB_PC_A, PB_PC_Q, PB_PC_K, PB_PC_DMK, PB_PC_DSS, PB_PC_DSW, PB_PC_L,
  PB_PC_IND + 0, PB_PC_IND + 1, PB_PC_IND + 2, PB_PC_IND + 3, PB_PC_IND + 4, PB_PC_IND + 5, PB_PC_IND + 6,
  PB_PC_IND + 7};
#define PB_PREDICT__IND0 20     /* feature column of F_ind */
#define PB_PREDICT__REAL_ACC0 1
#define PB_PREDICT__REAL_A1 8
/* B1's target-matched synthetic risk (H.3): none for a1, R80, E_tau, and for
 * L_k the perturbed correct-and-rejected mass. */
static const int pb_predict__risk_col[PB_PREDICT__N_TARGETS] = {-1, 9, 10, 11};
/* Paired summaries (offsets from F) each step adds, and their names. */
static const int pb_predict__step_n[PB_PREDICT__N_STEPS] = {3, 1, 1, 2, 1};
static const int pb_predict__step_q[PB_PREDICT__N_STEPS][3] = {{0, 1, 2}, {3, 0, 0}, {4, 0, 0}, {5, 6, 0}, {7, 0, 0}};
static const char *const pb_predict__step_q_names[PB_PREDICT__N_STEPS] = {"FAQ", "k", "dMk", "ds", "Lsyn"};
static const char *const pb_predict__prefix_names[PB_PREDICT__N_STEPS] = {"B1", "C1", "C2", "C3a", "C3b"};

/* Per-cell record: summary, shuffle replicates, then the target counts and
 * the identification engine's observed L of the cell (I.3 cross-check). */
#define PB_PREDICT__N_COUNTS 8

/* A comma-separated list of 1 to PB_PREDICT_MAX_SOURCES source names into
 * @p names (blanks around a name are not part of it: "A, B" in a run
 * configuration); @p label names the option in the message. */
static int pb_predict__parse_sources(const char *label, const char *list, int32_t *n, char names[][64])
{
  *n = 0;
  for (const char *p = list;;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    while (len > 0 && (*p == ' ' || *p == '\t')) p++, len--;
    while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t')) len--;
    if (len == 0 || len >= 64 || *n == PB_PREDICT_MAX_SOURCES) {
      pb_error_set("%s: expected 1 to %d comma-separated source names, got '%s'", label, PB_PREDICT_MAX_SOURCES, list);
      return PB_FAIL;
    }
    memcpy(names[*n], p, len);
    names[(*n)++][len] = '\0';
    if (!e) return PB_OK;
    p = e + 1;
  }
}

/* --features SRC,... / --targets SRC,... (each replaces its list) */
static int pb_predict__opt_features(void *opts, const char *label, const char *v)
{
  struct pb_predict_options *o = opts;
  return pb_predict__parse_sources(label, v, &o->n_features, o->features);
}

static int pb_predict__opt_targets(void *opts, const char *label, const char *v)
{
  struct pb_predict_options *o = opts;
  return pb_predict__parse_sources(label, v, &o->n_targets, o->targets);
}

#define PB_O(member) PB_OPTION_FIELD(struct pb_predict_options, member)
const struct pb_option pb_predict_option_table[] = {
  {.name = "features", .type = PB_OPTION_CUSTOM, .parse = pb_predict__opt_features, .metavar = "SRC,...",
   .help = "feature sources (default: the store's synthetic sources with cells; docs/store.md, \"Roles\")"},
  {.name = "targets", .type = PB_OPTION_CUSTOM, .parse = pb_predict__opt_targets, .metavar = "SRC,...",
   .help = "target sources, whose mild conditions give the targets (default: the store's real sources with cells "
           "and a mild condition)"},
  {.name = "group-draws", .type = PB_OPTION_INT, PB_O(group_draws), .metavar = "N", .imax = PB_BOOT_MAX_DRAWS, .def = "2000",
   .help_default = 1, .help = "group-reweighting draws of the stored out-of-fold errors (default 2000; 0 = none)"},
  {.name = "shuffles", .type = PB_OPTION_INT, PB_O(shuffles), .metavar = "R", .imax = 1000, .def = "20",
   .help_default = 1,
   .help = "within-class shuffle replicates of the dimension-matched control (default 20; 0 = none)"},
  {.name = "no-deletion", .type = PB_OPTION_FLAG, PB_O(deletion), .flag = 0, .ini = "deletion", .def = "1",
   .help = "skip the whole-group deletion refits (I.2)"},
  {.name = "seed", .type = PB_OPTION_INT, PB_O(seed), .metavar = "N", .def = "20260913",
   .help = "seed of the shuffles and the intervals"},
  {.name = NULL}};
#undef PB_O

/* ------------------------------------------------------------ feature sets */

static void pb_predict__add(struct pb_predict__set *s, int32_t col)
{
  s->cols[s->n_cols++] = col;
}

static void pb_predict__add_step(struct pb_predict__set *s, int step, int32_t offset)
{
  for (int i = 0; i < pb_predict__step_n[step]; i++) pb_predict__add(s, offset + pb_predict__step_q[step][i]);
}

static int32_t pb_predict__push(struct pb_predict__set *sets, int32_t *n, const struct pb_predict__set *s,
                                const char *name, int shuffle, int deletion)
{
  sets[*n] = *s;
  snprintf(sets[*n].name, sizeof sets[*n].name, "%s", name);
  sets[*n].shuffle = shuffle;
  sets[*n].deletion = deletion;
  return (*n)++;
}

static void pb_predict__cmp_add(struct pb_predict__cmp *cmp, int32_t *n, const char *name, int32_t base, int32_t alt)
{
  snprintf(cmp[*n].name, sizeof cmp[*n].name, "%s", name);
  cmp[*n].base = base;
  cmp[*n].alt = alt;
  (*n)++;
}

/* Table 42 and the comparisons of H.3 / I.1 for target t: B0, B1, B_ind,
 * C1..C4, per step the controls B + q_ind and B + q_ind + q and the shuffle
 * B + q_shuf, then B_ind + (F,A,Q) and B_ind + dM_k.  The seven sets of
 * Tables 43-45 get the deletion refits.  Returns the number of sets. */
static int32_t pb_predict__build_sets(int t, int shuffles, struct pb_predict__set *sets, struct pb_predict__cmp *cmp,
                                      int32_t *n_cmp)
{
  int32_t n = 0, prefix[PB_PREDICT__N_STEPS + 1], ctl[PB_PREDICT__N_STEPS], full[PB_PREDICT__N_STEPS];
  int32_t shuf[PB_PREDICT__N_STEPS];
  struct pb_predict__set s = {{0}, 0, {0}, 0, 0}, bind;
  char name[48];
  pb_predict__add(&s, 0);
  pb_predict__add(&s, PB_PREDICT__REAL_ACC0);
  const int32_t b0 = pb_predict__push(sets, &n, &s, "B0", 0, 0);
  for (int32_t c = 2; c <= 8; c++) pb_predict__add(&s, c);
  if (pb_predict__risk_col[t] >= 0) pb_predict__add(&s, pb_predict__risk_col[t]);
  prefix[0] = pb_predict__push(sets, &n, &s, "B1", 0, 0);
  bind = s;
  for (int32_t j = 0; j < PB_PREDICT_N_PAIRED; j++) pb_predict__add(&bind, PB_PREDICT__IND0 + j);
  const int32_t b_ind = pb_predict__push(sets, &n, &bind, "B_ind", 0, 1);
  for (int st = 0; st < PB_PREDICT__N_STEPS; st++) {
    pb_predict__add_step(&s, st, PB_PREDICT__PAIRED0);
    prefix[st + 1] = pb_predict__push(sets, &n, &s, pb_predict__step_names[st], 0, 0);
  }
  for (int st = 0; st < PB_PREDICT__N_STEPS; st++) {
    struct pb_predict__set c = sets[prefix[st]];
    pb_predict__add_step(&c, st, PB_PREDICT__IND0);
    snprintf(name, sizeof name, "%s+%s_ind", pb_predict__prefix_names[st], pb_predict__step_q_names[st]);
    ctl[st] = pb_predict__push(sets, &n, &c, name, 0, st == 0 || st == 2);
    pb_predict__add_step(&c, st, PB_PREDICT__PAIRED0);
    snprintf(name, sizeof name, "%s+%s_ind+%s", pb_predict__prefix_names[st], pb_predict__step_q_names[st],
             pb_predict__step_q_names[st]);
    full[st] = pb_predict__push(sets, &n, &c, name, 0, st == 0 || st == 2);
    if (shuffles > 0) {
      c = sets[prefix[st]];
      pb_predict__add_step(&c, st, PB_PREDICT__SHUF_COL);
      snprintf(name, sizeof name, "%s+%s_shuf", pb_predict__prefix_names[st], pb_predict__step_q_names[st]);
      shuf[st] = pb_predict__push(sets, &n, &c, name, 1, 0);
    }
  }
  struct pb_predict__set c = bind;
  pb_predict__add_step(&c, 0, PB_PREDICT__PAIRED0);
  const int32_t bind_faq = pb_predict__push(sets, &n, &c, "B_ind+FAQ", 0, 1);
  c = bind;
  pb_predict__add_step(&c, 2, PB_PREDICT__PAIRED0);
  const int32_t bind_dmk = pb_predict__push(sets, &n, &c, "B_ind+dMk", 0, 1);

  *n_cmp = 0;
  pb_predict__cmp_add(cmp, n_cmp, "unpaired:B0->B1", b0, prefix[0]);
  for (int st = 0; st < PB_PREDICT__N_STEPS; st++) {
    snprintf(name, sizeof name, "total:%s", pb_predict__step_names[st]);
    pb_predict__cmp_add(cmp, n_cmp, name, prefix[st], prefix[st + 1]);
    snprintf(name, sizeof name, "controlled:%s", pb_predict__step_names[st]);
    pb_predict__cmp_add(cmp, n_cmp, name, ctl[st], full[st]);
    if (shuffles > 0) {
      snprintf(name, sizeof name, "shuffle:%s", pb_predict__step_names[st]);
      pb_predict__cmp_add(cmp, n_cmp, name, shuf[st], prefix[st + 1]);
    }
  }
  pb_predict__cmp_add(cmp, n_cmp, "B_ind:FAQ", b_ind, bind_faq);
  pb_predict__cmp_add(cmp, n_cmp, "B_ind:dMk", b_ind, bind_dmk);
  return n;
}

/* ------------------------------------------------------------ cells */

static int32_t pb_predict__find(const int32_t *v, int32_t n, int32_t x)
{
  for (int32_t i = 0; i < n; i++)
    if (v[i] == x) return i;
  return -1;
}

/* Role of a global cell: 1 feature cell (every perturbed condition of a
 * feature source), 2 target cell (mild condition of a target source), 0 none. */
static int pb_predict__role(const struct pb_stage *st, const struct pb_predict__data *d, const struct pb_cell_ref *r)
{
  if (pb_predict__find(d->fs, d->n_fs, r->source) >= 0) return 1;
  if (pb_predict__find(d->ts, d->n_ts, r->source) >= 0 && st->protocol.src[r->source].tier[r->condition] == PB_TIER_MILD)
    return 2;
  return 0;
}

/* One cell's record: the synthetic summary and its shuffle replicates
 * (feature cells) or the target counts (target cells). */
static int pb_predict__cell_record(const struct pb_stage *st, const struct pb_predict__data *d,
                                   const struct pb_predict_options *opt, const struct pb_cell_data *c, int role,
                                   double *rec)
{
  const float tau = st->protocol.src[c->ref.source].tau[c->ref.model];
  const struct pb_cell_view in = pb_cells_view(st->meta, c, tau);
  if (role == 1) {
    if (pb_predict_cell_summary(&in, rec) != PB_OK) return PB_FAIL;
    pb_predict_cell_shuffles(&in, opt->seed, PB_RNG_PERM_WITHIN, (uint64_t)c->index, d->n_shuf, rec + PB_PC_N);
    return PB_OK;
  }
  struct pb_predict_counts k;
  struct pb_cell_bounds b;
  if (pb_predict_cell_counts(&in, &k) != PB_OK || pb_bounds_cell(&in, 0, &b) != 0) return PB_FAIL;
  double *o = rec + PB_PC_N + (size_t)d->n_shuf * PB_PREDICT_N_PAIRED;
  const int64_t v[PB_PREDICT__N_COUNTS - 1] = {k.n, k.correct, k.selected, k.selected_wrong, k.accepted_wrong, k.lost,
                                               k.correct_rejected};
  for (int i = 0; i < PB_PREDICT__N_COUNTS - 1; i++) o[i] = (double)v[i];
  o[PB_PREDICT__N_COUNTS - 1] = b.L_obs * k.n;
  return PB_OK;
}

/* Relative cost of a cell of @p role with @p n_eval records: reading, the
 * summary or the counts, and the bounds engine's pass cost about
 * PB_PREDICT__COST_BASE shuffle replicates' passes per record (perf on the
 * paper store), and a feature cell adds its replicates. */
#define PB_PREDICT__COST_BASE 10
static int64_t pb_predict__cell_cost(const struct pb_predict__data *d, int role, int32_t n_eval)
{
  return role == 0 ? 0 : (int64_t)n_eval * (PB_PREDICT__COST_BASE + (role == 1 ? d->n_shuf : 0));
}

/* This rank's cells [d->first, d->last): contiguous in global order and
 * balanced by this stage's cost (the stage's own range balances every
 * cell's records, but predict reads only feature and mild target cells, and
 * a feature cell with its shuffle replicates costs several target cells). */
static void pb_predict__my_cells(const struct pb_stage *st, struct pb_predict__data *d, const struct pb_cell_ref *all,
                                 int64_t n)
{
  int64_t *cost = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *cost), *bnd = pb_malloc(((size_t)st->size + 1) * sizeof *bnd);
  int32_t *n_eval = pb_malloc((size_t)(st->meta->n_sources > 0 ? st->meta->n_sources : 1) * sizeof *n_eval);
  for (int32_t s = 0; s < st->meta->n_sources; s++) n_eval[s] = pb_dist_eval_count(&st->meta->sources[s]);
  for (int64_t c = 0; c < n; c++)
    cost[c] = pb_predict__cell_cost(d, pb_predict__role(st, d, &all[c]), n_eval[all[c].source]);
  pb_dist_partition_bcast(n, cost, st->comm, bnd);
  d->first = bnd[st->rank];
  d->last = bnd[st->rank + 1];
  free(cost), free(bnd), free(n_eval);
}

/* The record of local cell c of a loaded block (error named by the cell). */
static void pb_predict__cell_task(struct pb_stage *st, const struct pb_predict__data *d,
                                  const struct pb_predict_options *opt, const struct pb_cell_ref *all,
                                  const struct pb_cell_data *cell, int64_t c, int role, double *rec,
                                  struct pb_error_first *fe)
{
  if (pb_predict__cell_record(st, d, opt, cell, role, rec) == PB_OK) return;
  const struct pb_cell_ref *r = &all[d->first + c];
  const struct pb_source *s = &st->meta->sources[r->source];
  pb_error_set("predict: cell (%s, %s, %s): invalid records", s->name, st->meta->model_ids[r->model],
               s->conditions[r->condition]);
  pb_error_first_record(fe, c);
}

#define PB_PREDICT__LOAD_CHUNKS 8

/* Records of this rank's cells (*out: d->last - d->first rows), the first
 * failing cell (lowest index) naming the error.  The cells are read in PB_PREDICT__LOAD_CHUNKS contiguous chunks
 * of about equal size (by records) on the main thread, which calls MPI and
 * HDF5; each cell of a chunk becomes a task as soon as the chunk is in, so
 * the other threads compute while the rest is read. */
static int pb_predict__cells(struct pb_stage *st, const struct pb_predict__data *d, const struct pb_predict_options *opt,
                             const struct pb_cell_ref *all, int32_t rec_len, double **out)
{
  const int64_t nl = d->last - d->first, K = PB_PREDICT__LOAD_CHUNKS;
  uint8_t *want = pb_malloc((size_t)(nl > 0 ? nl : 1));
  int64_t total = 0, *cb = pb_malloc((size_t)(K + 1) * sizeof *cb), *cost = pb_malloc((size_t)(nl + 1) * sizeof *cost);
  cost[0] = 0;
  /* evaluation images per source, counted once rather than once per cell */
  int32_t *n_eval = pb_malloc((size_t)(st->meta->n_sources > 0 ? st->meta->n_sources : 1) * sizeof *n_eval);
  for (int32_t s = 0; s < st->meta->n_sources; s++) n_eval[s] = pb_dist_eval_count(&st->meta->sources[s]);
  for (int64_t c = 0; c < nl; c++) {
    want[c] = (uint8_t)pb_predict__role(st, d, &all[d->first + c]);
    total += pb_predict__cell_cost(d, want[c], n_eval[all[d->first + c].source]);
    cost[c + 1] = total;
  }
  free(n_eval);
  for (int64_t k = 0, c = 0; k <= K; k++) {
    while (c < nl && cost[c] < total * k / K) c++;
    cb[k] = k == K ? nl : c;
  }
  struct pb_cell_block *blk = pb_calloc((size_t)K, sizeof *blk);
  int64_t *left = pb_calloc((size_t)K, sizeof *left); /* tasks of a chunk still running: its last frees it */
  uint8_t *go = pb_calloc((size_t)(nl > 0 ? nl : 1), 1);  /* cell c is a task */
  double *rec = pb_malloc((size_t)(nl > 0 ? nl : 1) * rec_len * sizeof *rec);
  for (int64_t i = 0; i < (nl > 0 ? nl : 1) * rec_len; i++) rec[i] = NAN;
  struct pb_error_first fe;
  pb_error_first_init(&fe);
  int status = PB_OK;
#pragma omp parallel
#pragma omp master
  for (int64_t k = 0; k < K && status == PB_OK; k++) {
    status = pb_cells_load_selected(st->store, d->first + cb[k], d->first + cb[k + 1],
                                    PB_FIELD_PRED | PB_FIELD_SMAX | PB_FIELD_PTRUE, want + cb[k], &blk[k]);
    status = pb_error_agree(st->comm, status);
    /* the chunk's tasks counted before the first starts, and nothing of
     * the block read here after it (its last task may free it meanwhile) */
    const struct pb_cell_data *cells = blk[k].cells;
    for (int64_t c = cb[k]; c < cb[k + 1] && status == PB_OK; c++) {
      go[c] = want[c] && cells[c - cb[k]].n > 0;
      left[k] += go[c];
    }
    if (left[k] == 0) pb_cells_free(&blk[k]);
    for (int64_t c = cb[k]; c < cb[k + 1] && status == PB_OK; c++)
      if (go[c]) {
#pragma omp task firstprivate(c, k, cells)
        {
          pb_predict__cell_task(st, d, opt, all, &cells[c - cb[k]], c, want[c], rec + c * rec_len, &fe);
          int64_t now;
#pragma omp atomic capture seq_cst
          now = --left[k];
          if (now == 0) pb_cells_free(&blk[k]);
        }
      }
  }
  if (status == PB_OK) status = pb_error_first_status(&fe);
  status = pb_error_agree(st->comm, status);
  if (status == PB_OK) *out = rec, rec = NULL;
  for (int64_t k = 0; k < K; k++) pb_cells_free(&blk[k]); /* chunks not read to the end after a failure */
  free(blk), free(left), free(go), free(rec), free(want), free(cb), free(cost);
  return status;
}

/* ------------------------------------------------------------ model level */

/* [*g0, *g1): the cells of the (source, model) run holding global cell g
 * (a model's perturbed conditions of one source, contiguous in cell order). */
static void pb_predict__run(const struct pb_meta *meta, int64_t g, int64_t *g0, int64_t *g1)
{
  const struct pb_cell_ref r = pb_dist_cell_at(meta, g);
  const struct pb_source *src = &meta->sources[r.source];
  *g0 = g - (r.condition - (r.condition > src->clean));
  *g1 = *g0 + src->n_conditions - 1;
}

/* The records of the runs that start on this rank, whole: this rank's rows
 * followed by the rows of the later ranks that continue the run of its last
 * cell (*ext: rows first .. *ext_last - 1).  Every rank sends the part of the
 * run at its start that began on an earlier rank to that rank: at most one
 * run's rows, fewer than a source's conditions, per rank (collective). */
static void pb_predict__halo(const struct pb_stage *st, const struct pb_predict__data *d, const double *rec,
                             int32_t rec_len, double **ext, int64_t *ext_last)
{
  const int size = st->size, rank = st->rank;
  int64_t *bnd = pb_malloc((size_t)size * 2 * sizeof *bnd), mine[2] = {d->first, d->last}, g0, g1;
  MPI_Allgather(mine, 2, MPI_INT64_T, bnd, 2, MPI_INT64_T, st->comm);
  int64_t e = d->last;
  if (d->last > d->first) {
    pb_predict__run(st->meta, d->last - 1, &g0, &g1);
    if (g0 >= d->first) e = g1; /* the run of the last cell starts here: this rank sums it */
  }
  MPI_Request req = MPI_REQUEST_NULL;
  if (d->last > d->first) {
    pb_predict__run(st->meta, d->first, &g0, &g1);
    int to = 0;
    while (to < size && !(bnd[2 * to] <= g0 && g0 < bnd[2 * to + 1])) to++;
    if (g0 < d->first && to < rank) {
      const int64_t n = (g1 < d->last ? g1 : d->last) - d->first;
      MPI_Isend(rec, (int)(n * rec_len), MPI_DOUBLE, to, 0, st->comm, &req);
    }
  }
  double *x = pb_malloc((size_t)(e > d->first ? e - d->first : 1) * rec_len * sizeof *x);
  memcpy(x, rec, (size_t)(d->last - d->first) * rec_len * sizeof *x);
  for (int r = rank + 1; r < size && e > d->last; r++) {
    const int64_t lo = bnd[2 * r], hi = bnd[2 * r + 1] < e ? bnd[2 * r + 1] : e;
    if (hi > lo && lo < e)
      MPI_Recv(x + (lo - d->first) * rec_len, (int)((hi - lo) * rec_len), MPI_DOUBLE, r, 0, st->comm,
               MPI_STATUS_IGNORE);
  }
  pb_comm_wait(&req);
  free(bnd);
  *ext = x;
  *ext_last = e;
}

/* Per (feature source, model) the mean over the source's perturbed conditions
 * of every summary and shuffle replicate (each over the conditions where it
 * is defined), syn[f][m][W]; per (target source, model) the target counts
 * pooled over its mild conditions, kt[t][m][N_COUNTS].  Each run is summed
 * in cell order by the rank its first cell is on, as one rank holding every
 * cell would; the others contribute zero bits to an MPI_BOR, so every rank
 * gets the same bits (collective). */
static void pb_predict__key_sums(const struct pb_stage *st, const struct pb_predict__data *d, const double *rec,
                                 int32_t rec_len, double *syn, double *kt)
{
  const int32_t M = d->n_models, W = PB_PC_N + d->n_shuf * PB_PREDICT_N_PAIRED, NK = PB_PREDICT__N_COUNTS;
  const size_t n_syn = (size_t)d->n_fs * M * W, n_kt = (size_t)d->n_ts * M * NK;
  memset(syn, 0, n_syn * sizeof *syn);
  memset(kt, 0, n_kt * sizeof *kt);
  double *x;
  int64_t e, g0, g1;
  pb_predict__halo(st, d, rec, rec_len, &x, &e);
  for (int64_t g = d->first; g < d->last; g = g1) {
    pb_predict__run(st->meta, g, &g0, &g1);
    if (g0 < d->first) continue; /* summed by the rank it starts on */
    const struct pb_cell_ref r = pb_dist_cell_at(st->meta, g0);
    const int32_t f = pb_predict__find(d->fs, d->n_fs, r.source), t = pb_predict__find(d->ts, d->n_ts, r.source);
    if (f >= 0) {
      double *sm = &syn[((size_t)f * M + r.model) * W], *cnt = pb_calloc((size_t)W, sizeof *cnt);
      for (int64_t c = g0; c < g1; c++)
        for (int32_t j = 0; j < W; j++) {
          const double v = x[(c - d->first) * rec_len + j];
          if (!isnan(v)) sm[j] += v, cnt[j] += 1;
        }
      for (int32_t j = 0; j < W; j++) sm[j] = cnt[j] > 0 ? sm[j] / cnt[j] : NAN;
      free(cnt);
    }
    if (t >= 0) {
      const int32_t off = PB_PC_N + d->n_shuf * PB_PREDICT_N_PAIRED;
      double *k = &kt[((size_t)t * M + r.model) * NK];
      for (int64_t c = g0; c < g1; c++) {
        const double *v = &x[(c - d->first) * rec_len + off];
        if (!isnan(v[0]))
          for (int i = 0; i < NK; i++) k[i] += v[i];
      }
    }
  }
  free(x);
  pb_comm_allreduce(MPI_IN_PLACE, syn, (int)n_syn, MPI_UINT64_T, MPI_BOR, st->comm);
  pb_comm_allreduce(MPI_IN_PLACE, kt, (int)n_kt, MPI_UINT64_T, MPI_BOR, st->comm);
  /* a feature source with no perturbed condition has no run: nothing defined */
  for (int32_t f = 0; f < d->n_fs; f++)
    if (st->meta->sources[d->fs[f]].n_conditions < 2)
      for (size_t i = 0; i < (size_t)M * W; i++) syn[(size_t)f * M * W + i] = NAN;
}

/* Targets from evaluation counts pooled over the mild conditions of target
 * source t (H.4: pooled counts, not averaged ratios), in percentage points. */
static void pb_predict__targets(struct pb_predict__data *d, const double *kt, int32_t t)
{
  const int32_t M = d->n_models;
  const double *k = &kt[(size_t)t * M * PB_PREDICT__N_COUNTS];
  for (int32_t m = 0; m < M; m++) {
    const double *q = &k[(size_t)m * PB_PREDICT__N_COUNTS];
    double *y = &d->target[((size_t)t * M + m) * PB_PREDICT__N_TARGETS];
    y[0] = q[0] > 0 ? 100.0 * q[1] / q[0] : NAN;
    y[1] = q[2] > 0 ? 100.0 * q[3] / q[2] : NAN;
    y[2] = q[0] > 0 ? 100.0 * q[4] / q[0] : NAN;
    y[3] = q[0] > 0 ? 100.0 * q[5] / q[0] : NAN;
    /* I.3: the same L from the identification engine's per-cell rates */
    const double lb = q[0] > 0 ? 100.0 * q[7] / q[0] : NAN;
    if (q[0] > 0) {
      d->lk_max_diff = fmax(d->lk_max_diff, fabs(lb - y[3]));
      d->lk_checked++;
    }
  }
  for (int j = 0; j < PB_PREDICT__N_TARGETS; j++) {
    double *v = pb_malloc((size_t)M * sizeof *v);
    int32_t n = 0;
    for (int32_t m = 0; m < M; m++) {
      const double y = d->target[((size_t)t * M + m) * PB_PREDICT__N_TARGETS + j];
      if (!isnan(y)) v[n++] = y;
    }
    pb_predict_median(v, n); /* sorts */
    d->iqr[t * PB_PREDICT__N_TARGETS + j] = pb_resample_percentile_sorted(v, n, 0.75) - pb_resample_percentile_sorted(v, n, 0.25);
    free(v);
  }
}

/* Development accuracy of target source s for model m: clean, and pooled
 * over the mild conditions (the labelled real development records). */
static void pb_predict__dev(const struct pb_stage *st, int32_t s, int32_t m, double out[2])
{
  const struct pb_source *src = &st->meta->sources[s];
  const struct pb_protocol_source *p = &st->protocol.src[s];
  const int32_t C = src->n_conditions;
  int64_t correct = 0, n_mild = 0;
  for (int32_t c = 0; c < C; c++)
    if (p->tier[c] == PB_TIER_MILD) {
      correct += p->dev_correct[(size_t)m * C + c];
      n_mild++;
    }
  out[0] = p->n_dev > 0 ? (double)p->dev_correct[(size_t)m * C + src->clean] / p->n_dev : NAN;
  out[1] = p->n_dev > 0 && n_mild > 0 ? (double)correct / ((double)p->n_dev * n_mild) : NAN;
}

/* Features and targets of every model from this rank's records rec (collective). */
static void pb_predict__model_level(const struct pb_stage *st, struct pb_predict__data *d, const double *rec,
                                    int32_t rec_len)
{
  const int32_t M = d->n_models, W = PB_PC_N + d->n_shuf * PB_PREDICT_N_PAIRED;
  double *syn = pb_malloc((size_t)(d->n_fs > 0 ? d->n_fs : 1) * M * W * sizeof *syn);
  double *kt = pb_malloc((size_t)(d->n_ts > 0 ? d->n_ts : 1) * M * PB_PREDICT__N_COUNTS * sizeof *kt);
  pb_predict__key_sums(st, d, rec, rec_len, syn, kt);
  for (int32_t t = 0; t < d->n_ts; t++) pb_predict__targets(d, kt, t);
  for (int32_t f = 0; f < d->n_fs; f++) {
    const double *sf = &syn[(size_t)f * M * W];
    for (int32_t m = 0; m < M; m++)
      memcpy(&d->shuf[((size_t)f * M + m) * d->n_shuf * PB_PREDICT_N_PAIRED], &sf[(size_t)m * W + PB_PC_N],
             (size_t)d->n_shuf * PB_PREDICT_N_PAIRED * sizeof(double));
    for (int32_t t = 0; t < d->n_ts; t++)
      for (int32_t m = 0; m < M; m++) {
        double *x = &d->feat[(((size_t)f * d->n_ts + t) * M + m) * PB_PREDICT__N_FEAT], dev[2];
        pb_predict__dev(st, d->ts[t], m, dev);
        for (int j = 0; j < PB_PREDICT__N_FEAT; j++)
          x[j] = pb_predict__feat_src[j] >= 0 ? sf[(size_t)m * W + pb_predict__feat_src[j]] : NAN;
        x[PB_PREDICT__REAL_ACC0] = dev[0];
        x[PB_PREDICT__REAL_A1] = dev[1];
      }
  }
  free(kt);
  free(syn);
}

/* ------------------------------------------------------------ set-up and outputs */

/* Sources, groups (distinct names in order of first appearance) and checks
 * that every feature source has thresholds and every target source mild conditions. */
/* The feature (@p k 0) or target (1) sources: as given, else by role (the
 * synthetic or the real sources with cells, pb_meta_role_sources). */
static int pb_predict__sources(const struct pb_meta *meta, const struct pb_predict_options *opt, int k,
                               const char **name)
{
  int32_t n = k ? opt->n_targets : opt->n_features;
  for (int32_t i = 0; i < n; i++) name[i] = k ? opt->targets[i] : opt->features[i];
  if (n > 0) return n;
  int32_t *s = pb_malloc((size_t)(meta->n_sources > 0 ? meta->n_sources : 1) * sizeof *s);
  n = pb_meta_role_sources(meta, k ? PB_ROLE_REAL : PB_ROLE_SYNTHETIC, s);
  if (n == 0 || n > PB_PREDICT_MAX_SOURCES)
    pb_error_set("predict: the store has %d %s sources with cells (docs/store.md, \"Roles\"); it needs 1 to %d "
                 "(give --%s SRC,... or declare roles: pairbound roles STORE --set SRC=%s)", n,
                 k ? "real" : "synthetic", PB_PREDICT_MAX_SOURCES, k ? "targets" : "features", k ? "real" : "synthetic");
  for (int32_t i = 0; i < n && i < PB_PREDICT_MAX_SOURCES; i++) name[i] = meta->sources[s[i]].name;
  free(s);
  return n == 0 || n > PB_PREDICT_MAX_SOURCES ? -1 : n;
}

static int pb_predict__setup(const struct pb_stage *st, const struct pb_predict_options *opt, struct pb_predict__data *d)
{
  const struct pb_meta *meta = st->meta;
  const char *fname[PB_PREDICT_MAX_SOURCES], *tname[PB_PREDICT_MAX_SOURCES];
  d->meta = meta;
  d->n_models = meta->n_models;
  d->n_fs = pb_predict__sources(meta, opt, 0, fname);
  if (d->n_fs < 0) return PB_FAIL;
  d->n_ts = pb_predict__sources(meta, opt, 1, tname);
  if (d->n_ts < 0) return PB_FAIL;
  d->n_shuf = opt->shuffles;
  const int32_t n_listed = d->n_fs + d->n_ts;
  d->n_ts = 0;
  for (int32_t i = 0; i < n_listed; i++) {
    const char *name = i < d->n_fs ? fname[i] : tname[i - d->n_fs];
    const int32_t s = pb_meta_find_source(meta, name);
    if (s < 0) {
      char names[512];
      pb_error_set("predict: the store has no source '%s' (%s)", name, pb_meta_source_names(meta, names, sizeof names));
      return PB_FAIL;
    }
    for (int32_t j = 0; j < d->n_fs + d->n_ts && j < i; j++)
      if (s == (j < d->n_fs ? d->fs[j] : d->ts[j - d->n_fs])) {
        pb_error_set("predict: source '%s' is listed twice (a source is either a feature or a target source)", name);
        return PB_FAIL;
      }
    for (int32_t m = 0; m < meta->n_models && i < d->n_fs; m++)
      if (isnan(st->protocol.src[s].tau[m])) {
        pb_error_set("predict: feature source '%s' has no development threshold for model '%s'", name, meta->model_ids[m]);
        return PB_FAIL;
      }
    int32_t mild = 0;
    for (int32_t c = 0; c < meta->sources[s].n_conditions; c++) mild += st->protocol.src[s].tier[c] == PB_TIER_MILD;
    if (i >= d->n_fs && mild == 0 && opt->n_targets) {
      pb_error_set("predict: target source '%s' has no mild condition (development accuracy >= 0.40)", name);
      return PB_FAIL;
    }
    /* a real source by role without a mild condition has no target to give (Section 6): the others are */
    if (i >= d->n_fs && mild == 0)
      pb_warning("predict: real source '%s' has no mild condition (development accuracy >= 0.40): not a target", name);
    else if (i < d->n_fs) d->fs[i] = s;
    else d->ts[d->n_ts++] = s;
  }
  if (d->n_ts == 0) {
    pb_error_set("predict: no real source has a mild condition (development accuracy >= 0.40), so there is no target; "
                 "give --targets SRC,... or set targets in [predict]");
    return PB_FAIL;
  }
  d->group = pb_malloc((size_t)meta->n_models * sizeof *d->group);
  d->group_names = pb_malloc((size_t)meta->n_models * sizeof *d->group_names);
  for (int32_t m = 0; m < meta->n_models; m++) {
    int32_t g = 0;
    while (g < d->n_groups && strcmp(d->group_names[g], meta->model_groups[m])) g++;
    if (g == d->n_groups) d->group_names[d->n_groups++] = meta->model_groups[m];
    d->group[m] = g;
  }
  if (d->n_groups < 3) {
    pb_error_set("predict: nested leave-one-group-out needs at least 3 model groups, the store has %d", d->n_groups);
    return PB_FAIL;
  }
  return PB_OK;
}

static void pb_predict__data_free(struct pb_predict__data *d)
{
  free(d->group), free(d->group_names), free(d->feat), free(d->shuf), free(d->target), free(d->iqr);
  free(d->sets), free(d->cmp), free(d->u_combo), free(d->u_set), free(d->u_rep), free(d->u_del);
  free(d->pred), free(d->lam), free(d->first_unit);
}

static int pb_predict__compute(struct pb_stage *st, const struct pb_predict_options *opt, struct pb_predict__data *d,
                               struct pb_timer *tm)
{
  struct pb_cell_ref *all;
  const int64_t n_cells = pb_dist_cells(st->meta, &all);
  pb_predict__my_cells(st, d, all, n_cells);
  const int32_t rec_len = PB_PC_N + d->n_shuf * PB_PREDICT_N_PAIRED + PB_PREDICT__N_COUNTS;
  double *rec = NULL;
  pb_timer_skip(tm);
  int status = pb_predict__cells(st, d, opt, all, rec_len, &rec);
  pb_timer_lap(tm, "cells");
  if (status == PB_OK) {
    const int32_t M = d->n_models;
    d->feat = pb_malloc((size_t)d->n_fs * d->n_ts * M * PB_PREDICT__N_FEAT * sizeof *d->feat);
    d->shuf = pb_malloc((size_t)d->n_fs * M * (d->n_shuf > 0 ? d->n_shuf : 1) * PB_PREDICT_N_PAIRED * sizeof *d->shuf);
    d->target = pb_malloc((size_t)d->n_ts * M * PB_PREDICT__N_TARGETS * sizeof *d->target);
    d->iqr = pb_malloc((size_t)d->n_ts * PB_PREDICT__N_TARGETS * sizeof *d->iqr);
    pb_predict__model_level(st, d, rec, rec_len);
    d->sets = pb_malloc(PB_PREDICT__N_TARGETS * 64 * sizeof *d->sets);
    d->cmp = pb_malloc(64 * sizeof *d->cmp);
    for (int t = 0; t < PB_PREDICT__N_TARGETS; t++)
      d->n_sets = pb_predict__build_sets(t, d->n_shuf, d->sets + t * 64, d->cmp, &d->n_cmp);
    /* sets were built with stride 64; compact to stride n_sets */
    for (int t = 1; t < PB_PREDICT__N_TARGETS; t++)
      memmove(d->sets + t * d->n_sets, d->sets + t * 64, (size_t)d->n_sets * sizeof *d->sets);
    pb_predict__units(d, opt->deletion && d->n_groups >= 4);
    pb_timer_skip(tm);
    status = pb_predict__fit_all(st, d);
    pb_timer_lap(tm, "fits");
  }
  if (status == PB_OK) pb_predict__svd_check(st, d);
  free(rec);
  free(all);
  return status;
}

/* `pairbound predict` (the registry's run). */
static int pb_predict__stage_run(const struct pb_stage_call *call, const void *opts)
{
  const struct pb_predict_options *opt = opts;
  struct pb_stage st;
  struct pb_predict__data d = {0};
  if (pb_stage_begin(call, &st)) return PB_FAIL;
  int status = pb_predict__setup(&st, opt, &d);
  if (status == PB_OK) status = pb_predict__compute(&st, opt, &d, &st.timer);
  pb_timer_skip(&st.timer);
  if (status == PB_OK) status = pb_predict__write_inputs(&d, st.rank, st.results);
  if (status == PB_OK) status = pb_predict__write_oof(&d, st.rank, st.size, st.results);
  if (status == PB_OK) status = pb_predict__write_h5(&d, st.rank, st.results);
  if (status == PB_OK) status = pb_predict__gains_run(&d, opt->group_draws, opt->seed, st.comm, st.results);
  pb_timer_end(&st.timer, "report", st.comm);
  pb_message("predict: cells %.3f s; fits %.3f s (%lld nested fits); report %.3f s (intervals, tables, figure)",
             pb_timer_get(&st.timer, "cells"), pb_timer_get(&st.timer, "fits"), (long long)d.n_units,
             pb_timer_get(&st.timer, "report"));
  pb_predict__data_free(&d);
  return pb_stage_end(&st, status);
}

/* Under `pairbound run`: prediction needs feature and target sources (given or by role) and at least 3 model
 * groups (nested leave-one-group-out). */
static int pb_predict__applies(const struct pb_meta *meta, const void *opts, char *why, size_t n)
{
  const char *name[PB_PREDICT_MAX_SOURCES];
  int32_t *g = pb_malloc((size_t)(meta->n_models > 0 ? meta->n_models : 1) * sizeof *g);
  const int32_t groups = pb_meta_model_groups(meta, g);
  free(g);
  if (pb_predict__sources(meta, opts, 0, name) < 0 || pb_predict__sources(meta, opts, 1, name) < 0) {
    snprintf(why, n, "%s", pb_error_message() + strlen("predict: "));
    pb_error_clear();
    return 0;
  }
  if (groups < 3) {
    snprintf(why, n, "nested leave-one-group-out needs at least 3 model groups, the store has %d", groups);
    return 0;
  }
  return 1;
}

static const struct pb_stage_inherit pb_predict__inherits[] = {
  {"seed", "run.seed", 5}, {"group_draws", "run.group_draws", 0}, {NULL, NULL, 0}};

const struct pb_stage_desc pb_predict_stage = {
  .name = "predict",
  .store = {.reads = 1, .needs = PB_STAGE_NEEDS_CELLS | PB_STAGE_NEEDS_EVAL, .figures = 1},
  .options = {.table = pb_predict_option_table, .size = sizeof(struct pb_predict_options)},
  .run = pb_predict__stage_run,
  .pipeline = {.report = "predict.md", .order = 3, .inherits = pb_predict__inherits, .applies = pb_predict__applies},
  .help = "Model-level prediction (seed 000 Section 6, Appendices H-I; docs/predict.md): per-model summaries of the\n"
          "feature sources (per condition, averaged equally: clean and perturbed accuracy, confidence, log loss, matched\n"
          "synthetic risk, the paired F, A, Q, k, dM_k, ds_s, ds_w, L and their class-conditional independent\n"
          "counterparts, Eq. 14, and within-class shuffles) predict the mild real targets a1, R80, E_tau, L_k of each\n"
          "target source by nested leave-one-group-out ridge (grid .1 .3 1 3 10 30 100, probit targets, training-fold\n"
          "imputation and scaling); gains with group-reweighting intervals of stored out-of-fold errors and whole-group\n"
          "deletion refits. Writes OUTDIR/results.h5 (/predict), report/predict_*.tsv, predict.md and Figure 8.\n",
};
