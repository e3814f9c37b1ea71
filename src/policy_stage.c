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

#include "pairbound/progress.h"
#include "pairbound/bounds.h"
#include "pairbound/cells.h"
#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/policy.h"
#include "pairbound/stage.h"
#include "pairbound/util.h"
#include "policy_internal.h"

const char *const pb_policy_cfield_names[PB_PC_NBASE] = {
  "scope", "tau0", "n", "K", "H_I0_width",
  "H_I0_lo", "H_I0_hi", "H_Ik_lo", "H_Ik_hi", "H_I5_lo", "H_I5_hi", "H_obs",
  "L_I0_lo", "L_I0_hi", "L_Ik_lo", "L_Ik_hi", "L_I5_lo", "L_I5_hi", "L_obs",
  "dMk_I0_lo", "dMk_I0_hi", "dMk_Ik_lo", "dMk_Ik_hi", "dMk_I5_lo", "dMk_I5_hi", "dMk_obs",
  "mean_unrepresentable", "lemma1_residual", "corollary1_violations",
  "d1_j", "d1_l", "d1_tau_j", "d1_tau_l", "d1_q_j", "d1_q_l", "d1_Jj_lo", "d1_Jj_hi", "d1_Jl_lo", "d1_Jl_hi",
  "d1_separate_gap", "d1_Dplus_I5", "d1_Dplus_I0"};

const char *const pb_policy_lfield_names[PB_PL_N] = {
  "certified_I0", "certified_Ik", "certified_I5", "added_I0_Ik", "added_Ik_I5",
  "actions_I0", "actions_Ik", "actions_I5", "minimax_I0", "minimax_Ik", "minimax_I5",
  "mean_rule_I0", "mean_rule_Ik", "mean_rule_I5", "minimax_regret_I0", "minimax_regret_Ik", "minimax_regret_I5",
  "mean_rule_regret_I0", "mean_rule_regret_Ik", "mean_rule_regret_I5", "fixed80", "proxy", "fixed80_regret",
  "proxy_regret"};

void pb_policy_options_default(struct pb_policy_options *opt)
{
  memset(opt, 0, sizeof *opt);
  opt->n_lambdas = 11;
  for (int i = 0; i <= 10; i++) opt->lambdas[i] = i / 10.0;
}

static int pb_policy__strict(double d) { return d < -PB_POLICY_STRICT; }

/* pb_text_double with a per-thread memo: the rows repeat few distinct values
 * (counts over N), and shortest round-trip formatting dominates the output
 * cost.  The memo only caches a pure function, so output bytes are unchanged. */
#define PB_POLICY__MEMO 4096
static __thread struct pb_policy__memo { uint64_t bits; char txt[40]; uint8_t used; } pb_policy__memo[PB_POLICY__MEMO];

static void pb_policy__num(struct pb_text *t, double x)
{
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  uint64_t h = (bits ^ (bits >> 29)) * 0x9e3779b97f4a7c15ull;
  struct pb_policy__memo *m = &pb_policy__memo[h >> 52 & (PB_POLICY__MEMO - 1)];
  if (!m->used || m->bits != bits) {
    pb_format_double(x, m->txt);
    m->bits = bits;
    m->used = 1;
  }
  pb_text_printf(t, "\t%s", m->txt);
}

/* Everything of one cell: kernel, Table 15 bounds, record fields, TSV rows. */
static int pb_policy__cell(const struct pb_stage *st, const struct pb_cell_data *d, float tau0, const float *taus,
                           const double *q, const struct pb_policy_options *opt, int32_t primary, double *rec,
                           struct pb_text *tb, struct pb_text *tp)
{
  const int32_t P = opt->n_taus > 0 ? opt->n_taus : PB_PROTOCOL_N_Q, NL = opt->n_lambdas;
  struct pb_policy_input in = {d->n, d->label, d->pred0, d->pred1, d->s0, d->s1, tau0, P, taus, NL, opt->lambdas};
  struct pb_policy_result *r = malloc(sizeof *r);
  if (!r) return PB_FAIL;
  if (pb_policy_cell(&in, r)) {
    free(r);
    return PB_FAIL;
  }
  struct pb_cell_input bi = {d->n, d->label, d->pred0, d->s0, d->m0, d->pred1, d->s1, d->m1, tau0};
  struct pb_cell_bounds cb;
  if (pb_bounds_cell(&bi, 1, &cb)) {
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

  const struct pb_meta *meta = st->meta;
  const struct pb_source *src = &meta->sources[d->ref.source];
  const char *mname = meta->model_ids[d->ref.model], *sname = src->name, *cname = src->conditions[d->ref.condition];
  double resid = 0, viol = 0;
  for (int32_t li = 0; li < NL; li++) {
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
        if (res > resid) resid = res;
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
          pb_text_printf(tp, "%s\t%s\t%s\t%s", mname, sname, cname, pb_policy_level_names[lv]);
          pb_policy__num(tp, lam);
          pb_text_printf(tp, "\t%d\t%d", j, l);
          pb_policy__num(tp, D);
          pb_policy__num(tp, gap);
          pb_text_printf(tp, "\t%d\t%d\n", c, r->mixed[j][l]);
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
        pb_text_printf(tb, "%s\t%s\t%s\t%s", mname, sname, cname, pb_policy_level_names[lv]);
        pb_policy__num(tb, lam);
        pb_text_printf(tb, "\t%d", j);
        const double v[] = {taus[j], r->J[lv][li][j][0], r->J[lv][li][j][1], r->H[lv][j][0], r->H[lv][j][1],
                            r->L[lv][j][0], r->L[lv][j][1], r->J_lemma1[lv][li][j], reg[j], mean[j], jobs[j]};
        for (size_t f = 0; f < sizeof v / sizeof v[0]; f++) pb_policy__num(tb, v[f]);
        pb_text_printf(tb, "\n");
      }
    }
    int inck = 0, inc5 = 0;
    for (int32_t j = 0; j < P; j++)
      for (int32_t l = 0; l < P; l++) {
        if (j == l || !r->mixed[j][l]) continue;
        inck += pb_policy__strict(r->D[PB_LEVEL_IK][li][j][l]) && !pb_policy__strict(r->D[PB_LEVEL_I0][li][j][l]);
        inc5 += pb_policy__strict(r->D[PB_LEVEL_I5][li][j][l]) && !pb_policy__strict(r->D[PB_LEVEL_IK][li][j][l]);
        viol += r->Dn[PB_LEVEL_IK][li][j][l] != r->Dn[PB_LEVEL_I5][li][j][l];
      }
    for (int32_t j = 0; j < P; j++)
      viol += (r->Jn[PB_LEVEL_IK][li][j][0] != r->Jn[PB_LEVEL_I5][li][j][0]) +
              (r->Jn[PB_LEVEL_IK][li][j][1] != r->Jn[PB_LEVEL_I5][li][j][1]);
    lr[PB_PL_INCK] = inck;
    lr[PB_PL_INC5] = inc5;
  }
  rec[PB_PC_LEMMA1] = resid;
  rec[PB_PC_COR1] = viol;
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

static int pb_policy__compute(const struct pb_stage *st, const struct pb_cell_block *b,
                              const struct pb_policy_options *opt, int32_t rec_len, double *recs,
                              struct pb_text *tb_all, struct pb_text *tp_all)
{
  const int32_t P = opt->n_taus > 0 ? opt->n_taus : PB_PROTOCOL_N_Q, primary = pb_policy__primary(opt);
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
  int bad = 0;
  int64_t bad_cell = -1;
  const int64_t nrun = status == PB_OK ? nc : 0;
  struct pb_progress prog;
  pb_progress_begin(&prog, "policy", "cells", nrun);
#pragma omp parallel for schedule(dynamic, 2) reduction(| : bad)
  for (int64_t c = 0; c < nrun; c++) {
    double *rec = recs + c * rec_len;
    pb_progress_step(&prog, 1);
    if (rec[PB_PC_SCOPE] != 1) continue;
    const struct pb_cell_data *d = &b->cells[c];
    const struct pb_protocol_source *ps = &st->protocol.src[d->ref.source];
    const float *taus = opt->n_taus > 0 ? opt->taus : ps->policy_tau + (size_t)d->ref.model * PB_PROTOCOL_N_Q;
    const double *q = opt->n_taus > 0 ? NULL : pb_protocol_q;
    if (pb_policy__cell(st, d, (float)rec[PB_PC_TAU0], taus, q, opt, primary, rec, &tb[c], &tp[c]) != PB_OK) {
      bad = 1;
#pragma omp critical(pb_policy_bad)
      if (bad_cell < 0 || c < bad_cell) bad_cell = c;
    }
  }
  pb_progress_end(&prog);
  if (bad_cell >= 0) { /* error messages are per thread: name the cell here */
    const struct pb_cell_ref *ref = &b->cells[bad_cell].ref;
    pb_error_set("policy: cell %s / %s / %s: invalid records (negative label or prediction?)",
                 st->meta->sources[ref->source].name, st->meta->model_ids[ref->model],
                 st->meta->sources[ref->source].conditions[ref->condition]);
  }
  if (bad) status = PB_FAIL;
  for (int64_t c = 0; c < nc; c++) {
    if (status == PB_OK && tb[c].len) {
      pb_text_printf(tb_all, "%s", tb[c].buf);
      pb_text_printf(tp_all, "%s", tp[c].buf);
    }
    pb_text_free(&tb[c]);
    pb_text_free(&tp[c]);
  }
  free(tb);
  free(tp);
  return status;
}

static int pb_policy__write(struct pb_stage *st, const struct pb_cell_block *b, const struct pb_policy_options *opt,
                            int32_t rec_len, const double *recs, const struct pb_text *tb, const struct pb_text *tp)
{
  int64_t n = b->n_cells;
  double *col = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *col);
  int status = pb_results_group(st->results, "/policy/cells");
  for (int32_t f = 0; f < rec_len && status == PB_OK; f++) {
    char path[160];
    if (f < PB_PC_NBASE) snprintf(path, sizeof path, "/policy/cells/%s", pb_policy_cfield_names[f]);
    else
      snprintf(path, sizeof path, "/policy/cells/%s_lambda%d", pb_policy_lfield_names[(f - PB_PC_NBASE) % PB_PL_N],
               (f - PB_PC_NBASE) / PB_PL_N);
    for (int64_t c = 0; c < n; c++) col[c] = recs[c * rec_len + f];
    status = pb_results_write_f64(st->results, path, st->n_cells, b->first, n, col);
  }
  free(col);
  if (status == PB_OK) {
    struct pb_text lam = {0};
    for (int32_t i = 0; i < opt->n_lambdas; i++) pb_text_printf(&lam, "%s%.17g", i ? "," : "", opt->lambdas[i]);
    status = pb_results_attr_str(st->results, "/policy", "lambdas", lam.buf);
    pb_text_free(&lam);
  }
  if (status != PB_OK) return status;
  status = pb_results_tsv(st->results, "policy_bounds.tsv",
                         "model\tsource\tcondition\tlevel\tlambda\tj\ttau_j\tJ_lo\tJ_hi\tH_lo\tH_hi\tL_lo\tL_hi\t"
                         "J_upper_lemma1\tregret\tfeasible_mean\trealized_cost\n",
                         tb->buf, tb->len);
  if (status != PB_OK) return status;
  status = pb_results_tsv(st->results, "policy_pairs.tsv",
                         "model\tsource\tcondition\tlevel\tlambda\tj\tl\tDplus\tseparate_gap\tcertified\tmixed_switch\n",
                         tp->buf, tp->len);
  return status;
}

int pb_policy_run(const char *store_path, const char *outdir, MPI_Comm comm,
                  const struct pb_protocol_options *popt, const struct pb_policy_options *opt,
                  const char *provenance)
{
  struct pb_stage st;
  struct pb_cell_block b;
  double t0 = MPI_Wtime();
  if (pb_stage_open(store_path, outdir, comm, popt, provenance, &st)) return PB_FAIL;
  /* read only the cells in scope: the panel is 450 of 11,088 */
  struct pb_cell_ref *all;
  pb_dist_cells(st.meta, &all);
  uint8_t *want = pb_malloc((size_t)(st.last > st.first ? st.last - st.first : 1));
  for (int64_t c = st.first; c < st.last; c++) {
    const struct pb_source *src = &st.meta->sources[all[c].source];
    want[c - st.first] = opt->all || st.protocol.src[all[c].source].panel[all[c].model * src->n_conditions + all[c].condition];
  }
  free(all);
  int status = pb_cells_load_selected(st.store, st.first, st.last, PB_FIELD_PRED | PB_FIELD_SMAX | PB_FIELD_PTRUE,
                                      want, &b);
  free(want);
  MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MIN, comm);
  if (status != PB_OK) return pb_stage_close(&st, status);
  double t_load = MPI_Wtime() - t0, t1 = MPI_Wtime();
  const int32_t rec_len = PB_PC_NBASE + opt->n_lambdas * PB_PL_N;
  double *recs = pb_malloc((size_t)(b.n_cells > 0 ? b.n_cells : 1) * rec_len * sizeof *recs);
  struct pb_text tb = {0}, tp = {0};
  status = pb_policy__compute(&st, &b, opt, rec_len, recs, &tb, &tp);
  MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MIN, comm);
  double t_comp = MPI_Wtime() - t1;
  t1 = MPI_Wtime();
  if (status == PB_OK) status = pb_policy__write(&st, &b, opt, rec_len, recs, &tb, &tp);
  pb_text_free(&tb);
  pb_text_free(&tp);
  if (status == PB_OK) {
    double *all = pb_stage_gather(&st, b.n_cells, st.n_cells, rec_len, recs, 0);
    if (st.rank == 0) status = pb_policy_report(st.meta, all, st.n_cells, rec_len, opt, pb_policy__primary(opt), st.results);
    MPI_Bcast(&status, 1, MPI_INT, 0, comm);
    free(all);
  }
  double mx[3] = {t_load, t_comp, MPI_Wtime() - t1};
  MPI_Allreduce(MPI_IN_PLACE, mx, 3, MPI_DOUBLE, MPI_MAX, comm);
  pb_message("policy: load %.3f s; compute %.3f s; write %.3f s", mx[0], mx[1], mx[2]);
  free(recs);
  pb_cells_free(&b);
  return pb_stage_close(&st, status);
}
