/* `pairbound policy`: rejection-policy comparisons under a shared
 * correspondence (seed 000 Section 4.2-4.3, Appendix D) over the frozen
 * panel or the full grid: per-cell policy bounds, pairwise certificates,
 * selections, and the outputs.  The kernel is src/policy_kernel.c. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/blocks.h"
#include "pairbound/bounds.h"
#include "pairbound/cells.h"
#include "pairbound/comm.h"
#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/fields.h"
#include "pairbound/figure.h"
#include "pairbound/policy.h"
#include "pairbound/progress.h"
#include "pairbound/registry.h"
#include "pairbound/stage.h"
#include "pairbound/timer.h"
#include "policy_internal.h"

/* /policy/cells: the cell fields, then per weight i the PB_PL_N fields suffixed _lambda<i>. */
static const struct pb_field pb_policy__cfields[PB_PC_NBASE] = {
  [PB_PC_SCOPE] = {"scope", PB_FMT_NUM},
  [PB_PC_TAU0] = {"tau0", PB_FMT_NUM},
  [PB_PC_N] = {"n", PB_FMT_NUM},
  [PB_PC_K] = {"K", PB_FMT_NUM},
  [PB_PC_HW_I0] = {"H_I0_width", PB_FMT_NUM},
  PB_FIELDS_LEVEL_ENDS(PB_PC_T15 + 0, "H"),
  [PB_PC_T15 + 6] = {"H_obs", PB_FMT_NUM},
  PB_FIELDS_LEVEL_ENDS(PB_PC_T15 + 7, "L"),
  [PB_PC_T15 + 13] = {"L_obs", PB_FMT_NUM},
  PB_FIELDS_LEVEL_ENDS(PB_PC_T15 + 14, "dMk"),
  [PB_PC_T15 + 20] = {"dMk_obs", PB_FMT_NUM},
  [PB_PC_MEAN_BAD] = {"mean_unrepresentable", PB_FMT_NUM},
  [PB_PC_LEMMA1] = {"lemma1_residual", PB_FMT_NUM},
  [PB_PC_COR1] = {"corollary1_violations", PB_FMT_NUM},
  /* D.1: the pair (j, l), its thresholds, quantiles and J intervals; the separate gap and D+ at I5, I0 */
  [PB_PC_D1 + 0] = {"d1_j", PB_FMT_NUM}, [PB_PC_D1 + 1] = {"d1_l", PB_FMT_NUM},
  [PB_PC_D1 + 2] = {"d1_tau_j", PB_FMT_NUM}, [PB_PC_D1 + 3] = {"d1_tau_l", PB_FMT_NUM},
  [PB_PC_D1 + 4] = {"d1_q_j", PB_FMT_NUM}, [PB_PC_D1 + 5] = {"d1_q_l", PB_FMT_NUM},
  [PB_PC_D1 + 6] = {"d1_Jj_lo", PB_FMT_NUM}, [PB_PC_D1 + 7] = {"d1_Jj_hi", PB_FMT_NUM},
  [PB_PC_D1 + 8] = {"d1_Jl_lo", PB_FMT_NUM}, [PB_PC_D1 + 9] = {"d1_Jl_hi", PB_FMT_NUM},
  [PB_PC_D1 + 10] = {"d1_separate_gap", PB_FMT_NUM},
  [PB_PC_D1 + 11] = {"d1_Dplus_I5", PB_FMT_NUM},
  [PB_PC_D1 + 12] = {"d1_Dplus_I0", PB_FMT_NUM},
};

static const struct pb_field pb_policy__lfields[PB_PL_N] = {
  PB_FIELDS_LEVELS(PB_PL_CERT, "certified"),
  [PB_PL_INCK] = {"added_I0_Ik", PB_FMT_NUM},
  [PB_PL_INC5] = {"added_Ik_I5", PB_FMT_NUM},
  PB_FIELDS_LEVELS(PB_PL_NACT, "actions"),
  PB_FIELDS_LEVELS(PB_PL_SEL_MM, "minimax"),
  PB_FIELDS_LEVELS(PB_PL_SEL_MEAN, "mean_rule"),
  PB_FIELDS_LEVELS(PB_PL_REG_MM, "minimax_regret"),
  PB_FIELDS_LEVELS(PB_PL_REG_MEAN, "mean_rule_regret"),
  [PB_PL_SEL_FIX] = {"fixed80", PB_FMT_NUM},
  [PB_PL_SEL_PROXY] = {"proxy", PB_FMT_NUM},
  [PB_PL_REG_FIX] = {"fixed80_regret", PB_FMT_NUM},
  [PB_PL_REG_PROXY] = {"proxy_regret", PB_FMT_NUM},
};

/* policy_bounds.tsv, after model, source, condition, level: one row per (weight, policy j). */
enum { PB_PB_LAMBDA, PB_PB_J, PB_PB_TAU, PB_PB_J_LO, PB_PB_J_HI, PB_PB_H_LO, PB_PB_H_HI, PB_PB_L_LO, PB_PB_L_HI,
       PB_PB_LEMMA1, PB_PB_REGRET, PB_PB_MEAN, PB_PB_COST, PB_PB_N };
static const struct pb_field pb_policy__bcols[PB_PB_N] = {
  [PB_PB_LAMBDA] = {"lambda", PB_FMT_NUM}, [PB_PB_J] = {"j", PB_FMT_INT}, [PB_PB_TAU] = {"tau_j", PB_FMT_NUM},
  [PB_PB_J_LO] = {"J_lo", PB_FMT_NUM}, [PB_PB_J_HI] = {"J_hi", PB_FMT_NUM}, [PB_PB_H_LO] = {"H_lo", PB_FMT_NUM},
  [PB_PB_H_HI] = {"H_hi", PB_FMT_NUM}, [PB_PB_L_LO] = {"L_lo", PB_FMT_NUM}, [PB_PB_L_HI] = {"L_hi", PB_FMT_NUM},
  [PB_PB_LEMMA1] = {"J_upper_lemma1", PB_FMT_NUM}, [PB_PB_REGRET] = {"regret", PB_FMT_NUM},
  [PB_PB_MEAN] = {"feasible_mean", PB_FMT_NUM}, [PB_PB_COST] = {"realized_cost", PB_FMT_NUM}};

/* policy_pairs.tsv, after model, source, condition, level: one row per (weight, ordered pair j != l). */
enum { PB_PP_LAMBDA, PB_PP_J, PB_PP_L, PB_PP_DPLUS, PB_PP_GAP, PB_PP_CERT, PB_PP_MIXED, PB_PP_N };
static const struct pb_field pb_policy__pcols[PB_PP_N] = {
  [PB_PP_LAMBDA] = {"lambda", PB_FMT_NUM}, [PB_PP_J] = {"j", PB_FMT_INT}, [PB_PP_L] = {"l", PB_FMT_INT},
  [PB_PP_DPLUS] = {"Dplus", PB_FMT_NUM}, [PB_PP_GAP] = {"separate_gap", PB_FMT_NUM},
  [PB_PP_CERT] = {"certified", PB_FMT_INT}, [PB_PP_MIXED] = {"mixed_switch", PB_FMT_INT}};

#define PB_POLICY__ROW_KEYS "model\tsource\tcondition\tlevel"

#define PB_O(member) PB_OPTION_FIELD(struct pb_policy_options, member)
const struct pb_option pb_policy_option_table[] = {
  {.name = "all", .type = PB_OPTION_FLAG, PB_O(all), .flag = 1, .def = "0",
   .help = "every model x condition cell instead of the frozen panel"},
  {.name = "tau", .type = PB_OPTION_DOUBLE, PB_O(tau), .metavar = "X", .max = 1,
   .mark = PB_OPTION_AT(struct pb_policy_options, have_tau),
   .help = "clean threshold tau0 for every cell (default: the 80% development threshold)"},
  {.name = "policy-taus", .type = PB_OPTION_LIST, PB_O(taus), .metavar = "a,b,..", .max = 1, .max_n = PB_POLICY_MAX,
   .count = PB_OPTION_AT(struct pb_policy_options, n_taus),
   .help = "perturbed thresholds for every cell, 1 to 8 values (default: the development thresholds at coverages "
           ".6 .7 .8 .9 1); with it, ties in the selection rules go to the lower index and there is no fixed-80% "
           "control. --tau and --policy-taus together make a store without development images valid"},
  {.name = "lambdas", .type = PB_OPTION_LIST, PB_O(lambdas), .metavar = "a,b,..", .max = 1,
   .max_n = PB_POLICY_MAX_LAMBDA, .count = PB_OPTION_AT(struct pb_policy_options, n_lambdas), .distinct = 1,
   .def = "0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1", .help_default = 1,
   .help = "cost weights in [0, 1], distinct, 1 to 32 values (default 0, .1, ..., 1; the primary weight is .5 "
           "when listed, else the first)"},
  {.name = NULL}};
#undef PB_O

static int pb_policy__strict(double d) { return d < -PB_POLICY_STRICT; }

static const struct pb_fields pb_policy__bounds_tsv = {.group = NULL, .n = PB_PB_N, .f = pb_policy__bcols};
static const struct pb_fields pb_policy__pairs_tsv = {.group = NULL, .n = PB_PP_N, .f = pb_policy__pcols};

/* The /policy/cells table for the weights of @p opt (caller frees with pb_fields_free). */
static void pb_policy__cell_fields(const struct pb_policy_options *opt, struct pb_fields *fs)
{
  pb_fields_alloc(fs, "/policy/cells", PB_PC_NBASE + opt->n_lambdas * PB_PL_N);
  for (int32_t f = 0; f < PB_PC_NBASE; f++) pb_fields_setf(fs, f, PB_FMT_NUM, "%s", pb_policy__cfields[f].name);
  for (int32_t li = 0; li < opt->n_lambdas; li++)
    for (int32_t f = 0; f < PB_PL_N; f++)
      pb_fields_setf(fs, PB_PC_NBASE + li * PB_PL_N + f, PB_FMT_NUM, "%s_lambda%d", pb_policy__lfields[f].name, (int)li);
}

/* Everything of one cell: kernel, Table 15 bounds, record fields, TSV rows. */
/* Weight li of one cell: selections and regrets, certified and dominated
 * pairs, the D.1 example (primary weight), policy_bounds / policy_pairs rows;
 * *resid and *viol collect the Lemma 1 residual and Corollary 1 violations. */
static void pb_policy__weight(const struct pb_policy_result *r, const float *taus, const double *q,
                              const struct pb_policy_options *opt, int32_t li, int32_t primary, double *rec,
                              const struct pb_text keys[PB_POLICY_N_LEVELS], struct pb_text *tb, struct pb_text *tp,
                              double *resid, double *viol)
{
  const int32_t P = opt->n_taus > 0 ? opt->n_taus : PB_PROTOCOL_N_Q;
  const double lam = opt->lambdas[li];
  double *lr = rec + PB_PC_NBASE + (size_t)li * PB_PL_N;
  double jobs[PB_POLICY_MAX], proxy[PB_POLICY_MAX], omin = INFINITY;
  for (int32_t j = 0; j < P; j++) {
    jobs[j] = lam * r->H_obs[j] + (1 - lam) * r->L_obs[j];
    proxy[j] = lam * r->E[j] + (1 - lam) * r->Rj[j];
    if (jobs[j] < omin) omin = jobs[j];
  }
  int fix = -1;
  for (int32_t j = 0; q && j < P; j++)
    if (fabs(q[j] - PB_PROTOCOL_COVERAGE) < 1e-9) fix = j;
  int prox = pb_policy_argmin(proxy, q, P);
  lr[PB_PL_SEL_FIX] = fix >= 0 ? fix : NAN;
  lr[PB_PL_REG_FIX] = fix >= 0 ? jobs[fix] - omin : NAN;
  lr[PB_PL_SEL_PROXY] = prox;
  lr[PB_PL_REG_PROXY] = jobs[prox] - omin;
  for (int lv = 0; lv < PB_POLICY_N_LEVELS; lv++) {
    double reg[PB_POLICY_MAX], mean[PB_POLICY_MAX];
    for (int32_t j = 0; j < P; j++) {
      reg[j] = -INFINITY;
      for (int32_t l = 0; l < P; l++) reg[j] = fmax(reg[j], r->D[lv][li][j][l]);
      mean[j] = lam * r->H_mean[lv][j] + (1 - lam) * r->L_mean[lv][j];
      double res = fabs(r->J_lemma1[lv][li][j] - r->J[lv][li][j][1]);
      if (res > *resid) *resid = res;
    }
    int mm = pb_policy_argmin(reg, q, P), me = pb_policy_argmin(mean, q, P);
    lr[PB_PL_SEL_MM + lv] = mm;
    lr[PB_PL_SEL_MEAN + lv] = me >= 0 ? me : NAN;
    lr[PB_PL_REG_MM + lv] = jobs[mm] - omin;
    lr[PB_PL_REG_MEAN + lv] = me >= 0 ? jobs[me] - omin : NAN;
    /* certified orderings, dominated policies, distinct actions */
    int cert = 0;
    uint8_t dominated[PB_POLICY_MAX] = {0};
    for (int32_t j = 0; j < P; j++)
      for (int32_t l = 0; l < P; l++) {
        if (j == l) continue;
        double D = r->D[lv][li][j][l], gap = r->J[lv][li][j][1] - r->J[lv][li][l][0];
        int c = pb_policy__strict(D) && !pb_policy__strict(gap) && r->mixed[j][l];
        cert += c;
        if (pb_policy__strict(D)) dominated[l] = 1;
        const double prow[PB_PP_N] = {[PB_PP_LAMBDA] = lam, [PB_PP_J] = j, [PB_PP_L] = l, [PB_PP_DPLUS] = D,
                                      [PB_PP_GAP] = gap, [PB_PP_CERT] = c, [PB_PP_MIXED] = r->mixed[j][l]};
        pb_text_append(tp, keys[lv].buf, keys[lv].len);
        pb_fields_tsv_values(&pb_policy__pairs_tsv, prow, 0, tp);
        pb_text_append(tp, "\n", 1);
        if (lv == PB_LEVEL_I5 && li == primary && c && isnan(rec[PB_PC_D1])) {
          const double v[13] = {j, l, taus[j], taus[l], q ? q[j] : NAN, q ? q[l] : NAN,
                                r->J[lv][li][j][0], r->J[lv][li][j][1], r->J[lv][li][l][0], r->J[lv][li][l][1],
                                gap, D, r->D[PB_LEVEL_I0][li][j][l]};
          memcpy(rec + PB_PC_D1, v, sizeof v);
        }
      }
    lr[PB_PL_CERT + lv] = cert;
    int nact = 0;
    for (int32_t j = 0; j < P; j++) {
      if (dominated[j]) continue;
      int dup = 0;
      for (int32_t l = 0; l < j && !dup; l++) dup = !dominated[l] && r->same[j][l];
      nact += !dup;
    }
    lr[PB_PL_NACT + lv] = nact;
    for (int32_t j = 0; j < P; j++) {
      const double brow[PB_PB_N] = {
        [PB_PB_LAMBDA] = lam, [PB_PB_J] = j, [PB_PB_TAU] = taus[j],
        [PB_PB_J_LO] = r->J[lv][li][j][0], [PB_PB_J_HI] = r->J[lv][li][j][1],
        [PB_PB_H_LO] = r->H[lv][j][0], [PB_PB_H_HI] = r->H[lv][j][1],
        [PB_PB_L_LO] = r->L[lv][j][0], [PB_PB_L_HI] = r->L[lv][j][1],
        [PB_PB_LEMMA1] = r->J_lemma1[lv][li][j], [PB_PB_REGRET] = reg[j], [PB_PB_MEAN] = mean[j],
        [PB_PB_COST] = jobs[j]};
      pb_text_append(tb, keys[lv].buf, keys[lv].len);
      pb_fields_tsv_values(&pb_policy__bounds_tsv, brow, 0, tb);
      pb_text_append(tb, "\n", 1);
    }
  }
  int inck = 0, inc5 = 0;
  for (int32_t j = 0; j < P; j++)
    for (int32_t l = 0; l < P; l++) {
      if (j == l || !r->mixed[j][l]) continue;
      inck += pb_policy__strict(r->D[PB_LEVEL_IK][li][j][l]) && !pb_policy__strict(r->D[PB_LEVEL_I0][li][j][l]);
      inc5 += pb_policy__strict(r->D[PB_LEVEL_I5][li][j][l]) && !pb_policy__strict(r->D[PB_LEVEL_IK][li][j][l]);
      *viol += r->Dn[PB_LEVEL_IK][li][j][l] != r->Dn[PB_LEVEL_I5][li][j][l];
    }
  for (int32_t j = 0; j < P; j++)
    *viol += (r->Jn[PB_LEVEL_IK][li][j][0] != r->Jn[PB_LEVEL_I5][li][j][0]) +
            (r->Jn[PB_LEVEL_IK][li][j][1] != r->Jn[PB_LEVEL_I5][li][j][1]);
  lr[PB_PL_INCK] = inck;
  lr[PB_PL_INC5] = inc5;
}

static int pb_policy__cell(const struct pb_cell_view *d, const float *taus, const double *q,
                           const struct pb_policy_options *opt, int32_t primary, double *rec, struct pb_text *tb,
                           struct pb_text *tp)
{
  const int32_t P = opt->n_taus > 0 ? opt->n_taus : PB_PROTOCOL_N_Q, NL = opt->n_lambdas;
  const float tau0 = d->tau;
  const struct pb_policy_setup ps = {.n_pol = P, .tau = taus, .n_lambda = NL, .lambda = opt->lambdas};
  struct pb_policy_result *r = malloc(sizeof *r);
  if (!r) return pb_cell_error(d, -1, "policy: out of memory");
  if (pb_policy_cell(d, &ps, r)) {
    free(r);
    return PB_FAIL;
  }
  struct pb_cell_bounds cb;
  if (pb_bounds_cell(d, 1, &cb)) {
    free(r);
    return PB_FAIL;
  }
  rec[PB_PC_SCOPE] = 1;
  rec[PB_PC_TAU0] = tau0;
  rec[PB_PC_N] = d->n;
  rec[PB_PC_K] = (double)cb.k;
  rec[PB_PC_HW_I0] = cb.H_I0[1] - cb.H_I0[0];
  const double t15[21] = {cb.H_I0[0], cb.H_I0[1], cb.H_Ik[0], cb.H_Ik[1], cb.H_I5[0], cb.H_I5[1], cb.H_obs,
                          cb.L_I0[0], cb.L_I0[1], cb.L_Ik[0], cb.L_Ik[1], cb.L_I5[0], cb.L_I5[1], cb.L_obs,
                          cb.dMk_I0[0], cb.dMk_I0[1], cb.dMk_Ik[0], cb.dMk_Ik[1], cb.dMk_I5[0], cb.dMk_I5[1],
                          cb.dMk_obs};
  memcpy(rec + PB_PC_T15, t15, sizeof t15);
  rec[PB_PC_MEAN_BAD] = (double)r->n_mean_unrepresentable;

  /* every row of the cell opens with its keys and level */
  struct pb_text keys[PB_POLICY_N_LEVELS] = {{0}};
  for (int lv = 0; lv < PB_POLICY_N_LEVELS; lv++)
    pb_text_printf(&keys[lv], "%s\t%s\t%s\t%s", d->model, d->source, d->condition, pb_policy_level_names[lv]);
  double resid = 0, viol = 0;
  for (int32_t li = 0; li < NL; li++) pb_policy__weight(r, taus, q, opt, li, primary, rec, keys, tb, tp, &resid, &viol);
  rec[PB_PC_LEMMA1] = resid;
  rec[PB_PC_COR1] = viol;
  for (int lv = 0; lv < PB_POLICY_N_LEVELS; lv++) pb_text_free(&keys[lv]);
  free(r);
  return PB_OK;
}

/* Weights must be distinct so that report rows are unambiguous; the primary
 * weight is 0.5 when present, else the first. */
static int32_t pb_policy__primary(const struct pb_policy_options *opt)
{
  for (int32_t i = 0; i < opt->n_lambdas; i++)
    if (opt->lambdas[i] == PB_POLICY_PRIMARY_LAMBDA) return i;
  return 0;
}

/* Block checkpoints (pairbound/blocks.h): a block is K consecutive cells in
 * global order, K from the cell count alone (about 256 blocks), so any rank
 * count maps to the same blocks; its payload is each cell's record and its
 * policy_bounds and policy_pairs rows. */
#define PB_POLICY_BLOCKS 256

static void pb_policy__put_text(struct pb_bytes *pay, const struct pb_text *t)
{
  uint64_t n = t->len;
  pb_blocks_put(pay, &n, sizeof n);
  pb_blocks_put(pay, t->buf, t->len);
}

static int pb_policy__get_text(struct pb_bytes *pay, struct pb_text *t)
{
  uint64_t n;
  if (pb_blocks_get(pay, &n, sizeof n) != PB_OK || n > pay->len - pay->pos) return PB_FAIL;
  pb_text_free(t);
  pb_text_printf(t, "%.*s", (int)n, (const char *)pay->buf + pay->pos);
  pay->pos += n;
  return t->len == n ? PB_OK : PB_FAIL;
}

/* What a block's payload holds of its cells (local index from b->first): records and table rows. */
struct pb_policy__blockdata {
  const struct pb_cell_block *b;
  int32_t rec_len;
  double *recs;
  struct pb_text *tb, *tp;
};

/* A payload into the records and rows of cells [ca, cb) (pb_blocks_resume_round). */
static int pb_policy__block_apply(void *ctx, int64_t ca, int64_t cb, struct pb_bytes *pay)
{
  const struct pb_policy__blockdata *d = ctx;
  int status = PB_OK;
  pay->pos = 0;
  for (int64_t c = ca - d->b->first; c < cb - d->b->first && status == PB_OK; c++) {
    status = pb_blocks_get(pay, d->recs + c * d->rec_len, (size_t)d->rec_len * sizeof *d->recs);
    if (status == PB_OK) status = pb_policy__get_text(pay, &d->tb[c]);
    if (status == PB_OK) status = pb_policy__get_text(pay, &d->tp[c]);
  }
  return status == PB_OK && pay->pos == pay->len ? PB_OK : PB_FAIL;
}

/* Append the records and rows of cells [ca, cb) to a payload. */
static void pb_policy__block_put(const struct pb_policy__blockdata *d, int64_t ca, int64_t cb, struct pb_bytes *pay)
{
  pay->len = pay->pos = 0;
  for (int64_t c = ca - d->b->first; c < cb - d->b->first; c++) {
    pb_blocks_put(pay, d->recs + c * d->rec_len, (size_t)d->rec_len * sizeof *d->recs);
    pb_policy__put_text(pay, &d->tb[c]);
    pb_policy__put_text(pay, &d->tp[c]);
  }
}

/* Every cell of this rank's blocks, a round of blocks at a time: the round's
 * intact checkpoints are read, its other cells computed and their blocks
 * checkpointed as each completes; a signal or a failure on any rank ends the
 * loop at the next round. */
static int pb_policy__blocks_run(const struct pb_stage *st, const struct pb_cell_block *b, struct pb_blocks *bl,
                                 int64_t per, const struct pb_policy_options *opt, int32_t rec_len, double *recs,
                                 struct pb_text *tb, struct pb_text *tp, struct pb_tsv *out_b, struct pb_tsv *out_p)
{
  const int32_t primary = pb_policy__primary(opt);
  struct pb_error_first fe;
  pb_error_first_init(&fe);
  struct pb_progress prog;
  pb_progress_begin(&prog, "policy", "cells", b->n_cells);
  uint8_t *todo = pb_calloc((size_t)(b->n_cells > 0 ? b->n_cells : 1), 1);
  struct pb_policy__blockdata data = {b, rec_len, recs, tb, tp};
  int written = PB_OK;
  for (int64_t r = 0; r < bl->rounds; r++) {
    struct pb_blocks_left lf;
    pb_blocks_resume_round(bl, r, st->n_cells, per, b->first, pb_policy__block_apply, &data, todo, &prog, &lf);
    const int64_t b0 = lf.b0, c0 = lf.c0, c1 = lf.c1;
    int64_t *left = lf.n;
    /* cells of the round's other blocks, dynamically (their costs differ widely) */
#pragma omp parallel for schedule(dynamic, 2)
    for (int64_t c = c0 - b->first; c < c1 - b->first; c++) {
      if (!todo[c]) continue;
      pb_progress_step(&prog, 1);
      double *rec = recs + c * rec_len;
      int ok = 1;
      if (rec[PB_PC_SCOPE] == 1) {
        const struct pb_cell_view d = pb_cells_view(st->meta, &b->cells[c], (float)rec[PB_PC_TAU0]);
        const struct pb_protocol_source *ps = &st->protocol.src[d.ref.source];
        const float *taus = opt->n_taus > 0 ? opt->taus : ps->policy_tau + (size_t)d.ref.model * PB_PROTOCOL_N_Q;
        const double *q = opt->n_taus > 0 ? NULL : pb_protocol_q;
        pb_text_free(&tb[c]);
        pb_text_free(&tp[c]);
        ok = pb_policy__cell(&d, taus, q, opt, primary, rec, &tb[c], &tp[c]) == PB_OK;
      }
      const int64_t k = (b->first + c) / per;
      int64_t rest;
      if (!ok) {
        pb_error_first_record(&fe, b->first + c);
#pragma omp atomic
        left[k - b0] += 1 << 30; /* a failed block is never checkpointed */
      }
#pragma omp atomic capture seq_cst /* a flush: the block's other cells are visible to the one that saves it */
      rest = --left[k - b0];
      if (rest == 0) {
        int64_t ca, cb;
        struct pb_bytes pay = {0};
        pb_blocks_items(st->n_cells, per, k, &ca, &cb);
        pb_policy__block_put(&data, ca, cb, &pay);
        if (pb_blocks_save(bl, k, &pay) != PB_OK) pb_error_first_record(&fe, ca);
        pb_blocks_bytes_free(&pay);
      }
    }
    free(left);
    /* the round's rows, in cell order, go to the tables now: a rank holds
     * one round of text, not its whole share (policy --all writes 1 GB) */
    for (int64_t c = c0 - b->first; c < c1 - b->first; c++) {
      pb_tsv_write(out_b, tb[c].buf, tb[c].len);
      pb_tsv_write(out_p, tp[c].buf, tp[c].len);
      pb_text_free(&tb[c]);
      pb_text_free(&tp[c]);
    }
    /* a table that cannot be written (a full disk) stops the loop too */
    if (written == PB_OK && (written = pb_tsv_status(out_b)) == PB_OK) written = pb_tsv_status(out_p);
    if (pb_blocks_poll(bl, pb_error_first_status(&fe) == PB_OK ? written : PB_FAIL)) break; /* no collective call in the loop */
  }
  free(todo);
  pb_progress_end(&prog);
  return pb_error_first_status(&fe) == PB_OK ? written : PB_FAIL;
}

static int pb_policy__compute(const struct pb_stage *st, const struct pb_cell_block *b, struct pb_blocks *bl,
                              int64_t per, const struct pb_policy_options *opt, int32_t rec_len, double *recs,
                              struct pb_tsv *out_b, struct pb_tsv *out_p)
{
  const int32_t P = opt->n_taus > 0 ? opt->n_taus : PB_PROTOCOL_N_Q;
  const int64_t nc = b->n_cells;
  struct pb_text *tb = calloc((size_t)(nc > 0 ? nc : 1), sizeof *tb), *tp = calloc((size_t)(nc > 0 ? nc : 1), sizeof *tp);
  int status = PB_OK;
  /* thresholds first (serial): clear errors naming the cell */
  for (int64_t c = 0; c < nc && status == PB_OK; c++) {
    const struct pb_cell_ref *ref = &b->cells[c].ref;
    const struct pb_protocol_source *ps = &st->protocol.src[ref->source];
    const struct pb_source *src = &st->meta->sources[ref->source];
    double *rec = recs + c * rec_len;
    for (int32_t f = 0; f < rec_len; f++) rec[f] = NAN;
    int in_scope = opt->all || ps->panel[ref->model * src->n_conditions + ref->condition];
    rec[PB_PC_SCOPE] = in_scope ? 1 : 0;
    if (!in_scope) continue;
    float tau0 = opt->have_tau ? opt->tau : ps->tau[ref->model];
    int bad = isnan(tau0);
    for (int32_t j = 0; j < P && !bad; j++)
      bad = isnan(opt->n_taus > 0 ? opt->taus[j] : ps->policy_tau[ref->model * PB_PROTOCOL_N_Q + j]);
    if (bad) {
      pb_error_set("source %s, model %s, condition %s: no development threshold (the source has no development "
                   "images); give --tau and --policy-taus",
                   src->name, st->meta->model_ids[ref->model], src->conditions[ref->condition]);
      status = PB_FAIL;
    }
    rec[PB_PC_TAU0] = tau0;
  }
  status = pb_error_agree(st->comm, status);
  if (status == PB_OK) status = pb_policy__blocks_run(st, b, bl, per, opt, rec_len, recs, tb, tp, out_b, out_p);
  for (int64_t c = 0; c < nc; c++) { /* what a stopped loop left */
    pb_text_free(&tb[c]);
    pb_text_free(&tp[c]);
  }
  free(tb);
  free(tp);
  return status;
}

/* Collective: open policy_bounds.tsv and policy_pairs.tsv, filled as the cells are computed. */
static int pb_policy__tables_open(struct pb_stage *st, struct pb_tsv **out_b, struct pb_tsv **out_p)
{
  struct pb_text head = {0};
  pb_fields_tsv_header(&pb_policy__bounds_tsv, PB_POLICY__ROW_KEYS, 0, &head);
  pb_text_printf(&head, "\n");
  *out_p = NULL;
  int status = pb_results_tsv_open(st->results, "policy_bounds.tsv", head.buf, out_b);
  pb_text_free(&head);
  if (status != PB_OK) return status;
  pb_fields_tsv_header(&pb_policy__pairs_tsv, PB_POLICY__ROW_KEYS, 0, &head);
  pb_text_printf(&head, "\n");
  status = pb_results_tsv_open(st->results, "policy_pairs.tsv", head.buf, out_p);
  pb_text_free(&head);
  if (status != PB_OK) {
    pb_tsv_abort(*out_b);
    *out_b = NULL;
  }
  return status;
}

/* The cell records into results.h5, then the two tables' commits (collective; the tables are freed). */
static int pb_policy__write(struct pb_stage *st, const struct pb_cell_block *b, const struct pb_policy_options *opt,
                            const double *recs, struct pb_tsv *out_b, struct pb_tsv *out_p)
{
  struct pb_fields fs; /* rec_len fields: PB_PC_NBASE + n_lambdas * PB_PL_N */
  pb_policy__cell_fields(opt, &fs);
  int status = pb_fields_write(&fs, st->results, st->n_cells, b->first, b->n_cells, recs);
  pb_fields_free(&fs);
  if (status == PB_OK) {
    struct pb_text lam = {0};
    for (int32_t i = 0; i < opt->n_lambdas; i++) pb_text_printf(&lam, "%s%.17g", i ? "," : "", opt->lambdas[i]);
    status = pb_results_attr_str(st->results, "/policy", "lambdas", lam.buf);
    pb_text_free(&lam);
  }
  if (status != PB_OK) {
    pb_tsv_abort(out_b);
    pb_tsv_abort(out_p);
    return status;
  }
  status = pb_tsv_commit(out_b);
  if (status == PB_OK) status = pb_tsv_commit(out_p);
  else pb_tsv_abort(out_p);
  return status;
}

/* `pairbound policy` (the registry's run). */
static int pb_policy__stage_run(const struct pb_stage_call *call, const void *opts)
{
  const struct pb_policy_options *opt = opts;
  struct pb_stage st;
  struct pb_cell_block b;
  if (pb_stage_begin(call, &st)) return PB_FAIL;
  /* read only the cells in scope: the panel is 450 of 11,088 */
  struct pb_cell_ref *all;
  pb_dist_cells(st.meta, &all);
  uint8_t *in = pb_malloc((size_t)(st.n_cells > 0 ? st.n_cells : 1));
  int64_t per, *cost = pb_malloc((size_t)(st.n_cells > 0 ? st.n_cells : 1) * sizeof *cost);
  /* blocks of cells in global order, split over ranks by the cost of their
   * cells in scope: 170 + the evaluation records per side, as measured on the
   * paper store (a cell of its largest source, 5,000 records, 5.3 ms; the others, 500 records,
   * 0.69 ms); each rank then runs its blocks at its own pace (pb_blocks_poll) */
  for (int64_t c = 0; c < st.n_cells; c++) {
    const struct pb_source *src = &st.meta->sources[all[c].source];
    in[c] = opt->all || st.protocol.src[all[c].source].panel[all[c].model * src->n_conditions + all[c].condition];
    cost[c] = 1 + in[c] * (170 + (int64_t)pb_dist_eval_count(src));
  }
  free(all);
  struct pb_blocks bl;
  int status = pb_blocks_open_items(&bl, call->outdir, "policy", st.n_cells, PB_POLICY_BLOCKS, cost, st.comm, &per,
                                    &st.first, &st.last);
  free(cost);
  if (status == PB_OK) /* a rank without blocks has st.first >= st.last and reads nothing */
    status = pb_cells_load_selected(st.store, st.first, st.last, PB_FIELD_PRED | PB_FIELD_SMAX | PB_FIELD_PTRUE,
                                    st.first < st.last ? in + st.first : in, &b);
  free(in);
  status = pb_error_agree(st.comm, status);
  if (status != PB_OK) return pb_stage_close(&st, pb_blocks_close(&bl, status));
  pb_timer_lap(&st.timer, "load");
  const int32_t rec_len = PB_PC_NBASE + opt->n_lambdas * PB_PL_N;
  double *recs = pb_malloc((size_t)(b.n_cells > 0 ? b.n_cells : 1) * rec_len * sizeof *recs);
  struct pb_tsv *out_b = NULL, *out_p = NULL;
  status = pb_policy__tables_open(&st, &out_b, &out_p);
  if (status == PB_OK) status = pb_policy__compute(&st, &b, &bl, per, opt, rec_len, recs, out_b, out_p);
  status = pb_blocks_close(&bl, pb_error_agree(st.comm, status));
  pb_timer_lap(&st.timer, "compute");
  if (status == PB_OK) status = pb_policy__write(&st, &b, opt, recs, out_b, out_p);
  else {
    pb_tsv_abort(out_b);
    pb_tsv_abort(out_p);
  }
  if (status == PB_OK) {
    struct pb_policy_sum S;
    status = pb_policy_summarise(st.meta, recs, b.first, b.n_cells, rec_len, opt, pb_policy__primary(opt), st.comm, &S);
    if (status == PB_OK && st.rank == 0) status = pb_policy_report(st.meta, opt, &S, st.results);
    pb_policy_sum_free(&S);
    pb_comm_bcast(&status, 1, MPI_INT, 0, st.comm);
  }
  pb_timer_end(&st.timer, "write", st.comm);
  pb_message("policy: load %.3f s; compute %.3f s; write %.3f s", pb_timer_get(&st.timer, "load"),
             pb_timer_get(&st.timer, "compute"), pb_timer_get(&st.timer, "write"));
  free(recs);
  pb_cells_free(&b);
  return pb_stage_end(&st, status);
}

static const struct pb_stage_inherit pb_policy__inherits[] = {{"tau", "bounds.tau", 0}, {NULL, NULL, 0}};

const struct pb_stage_desc pb_policy_stage = {
  .name = "policy",
  .store = {.reads = 1, .needs = PB_STAGE_NEEDS_CELLS | PB_STAGE_NEEDS_EVAL, .figures = 1},
  .options = {.table = pb_policy_option_table, .size = sizeof(struct pb_policy_options)},
  .run = pb_policy__stage_run,
  .pipeline = {.report = "policy.md", .order = 1, .blocks = 1, .inherits = pb_policy__inherits,
               .summary = pb_policy_summary},
  .help = "Rejection-policy comparisons under a shared correspondence (seed 000 Section 4.2, Appendix A.7-A.8, D;\n"
          "docs/policy.md): for each cell, clean threshold tau0 and perturbed policies tau_j, at I0, Ik and I5 the sharp\n"
          "H_j, L_j, J_j = lambda H_j + (1 - lambda) L_j intervals, the Lemma 1 upper bound, D+_jl for every ordered\n"
          "pair, minimax regret, the feasible-permutation mean, observed costs; certified orderings, information\n"
          "increments, merged actions, selection tables and the D.1 illustration. Writes OUTDIR/results.h5 (/policy),\n"
          "OUTDIR/report/policy_bounds.tsv, policy_pairs.tsv, policy_*.tsv and policy.md.\n",
};
