/* `pairbound bounds`: per-cell identification (pb_bounds_cell) over a rank's
 * cells, the matched-support subsamples (Appendix B.2), and the outputs. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/progress.h"
#include "pairbound/cells.h"
#include "pairbound/config.h"
#include "pairbound/error.h"
#include "pairbound/identify.h"
#include "pairbound/stage.h"
#include "pairbound/util.h"
#include "bounds_stage_internal.h"

const char *const pb_identify_field_names[PB_IF_N] = {
  "n", "E", "H_obs", "H_I0_lo", "H_I0_hi", "H_Ik_lo", "H_Ik_hi", "H_I5_lo", "H_I5_hi", "H_ind",
  "L_obs", "L_I0_lo", "L_I0_hi", "L_Ik_lo", "L_Ik_hi", "L_I5_lo", "L_I5_hi", "L_ind",
  "dMk_obs", "dMk_I0_lo", "dMk_I0_hi", "dMk_Ik_lo", "dMk_Ik_hi", "dMk_I5_lo", "dMk_I5_hi", "dMk_ind",
  "tier", "panel", "tau", "h", "r", "s", "w", "k", "acc_clean", "acc_perturbed", "F", "A", "Q", "W", "V",
  "K_width_class", "K_width_global", "n_classes", "n_pinned", "vr_C", "vr_S", "vr_M", "H_perm", "L_perm",
  "dMk_perm",
  "match1_H", "match1_L", "match1_dMk", "match1_Hmax", "match2_H", "match2_L", "match2_dMk", "match2_Hmax",
  "match3_H", "match3_L", "match3_dMk", "match3_Hmax", "match4_H", "match4_L", "match4_dMk", "match4_Hmax",
  "match5_H", "match5_L", "match5_dMk", "match5_Hmax"
};

void pb_identify_options_default(struct pb_identify_options *opt)
{
  memset(opt, 0, sizeof *opt);
  opt->i5_scope = PB_IDENTIFY_I5_PANEL;
  opt->matched = 1;
  opt->seed = 20260908;
}

double pb_identify_variance_ratio(const double *x, const double *y, int32_t n)
{
  if (n <= 0) return NAN;
  double mx = 0, my = 0, md = 0, vx = 0, vy = 0, vd = 0;
  for (int32_t i = 0; i < n; i++) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  md = mx - my;
  for (int32_t i = 0; i < n; i++) {
    vx += (x[i] - mx) * (x[i] - mx);
    vy += (y[i] - my) * (y[i] - my);
    vd += (x[i] - y[i] - md) * (x[i] - y[i] - md);
  }
  return vx + vy > 0 ? vd / (vx + vy) : NAN;
}

/* Table 10 ratios for correctness, max probability and true-class probability. */
static void pb_identify__ratios(const struct pb_cell_data *d, double *scratch, double out[3])
{
  double *x = scratch, *y = scratch + d->n;
  for (int j = 0; j < 3; j++) {
    for (int32_t i = 0; i < d->n; i++) {
      x[i] = j == 0 ? d->pred0[i] == d->label[i] : j == 1 ? d->s0[i] : d->m0[i];
      y[i] = j == 0 ? d->pred1[i] == d->label[i] : j == 1 ? d->s1[i] : d->m1[i];
    }
    out[j] = pb_identify_variance_ratio(x, y, d->n);
  }
}

static void pb_identify__pack(const struct pb_cell_bounds *b, double *r)
{
  const double v[] = {
    (double)b->n, b->E, b->H_obs, b->H_I0[0], b->H_I0[1], b->H_Ik[0], b->H_Ik[1], b->H_I5[0], b->H_I5[1], b->H_ind,
    b->L_obs, b->L_I0[0], b->L_I0[1], b->L_Ik[0], b->L_Ik[1], b->L_I5[0], b->L_I5[1], b->L_ind,
    b->dMk_obs, b->dMk_I0[0], b->dMk_I0[1], b->dMk_Ik[0], b->dMk_Ik[1], b->dMk_I5[0], b->dMk_I5[1], b->dMk_ind};
  memcpy(r, v, sizeof v);
  r[PB_IF_H] = (double)b->h;
  r[PB_IF_R] = (double)b->r;
  r[PB_IF_S] = (double)b->s;
  r[PB_IF_W] = (double)b->w;
  r[PB_IF_K] = (double)b->k;
  r[PB_IF_ACC0] = b->acc0;
  r[PB_IF_ACC1] = b->acc1;
  r[PB_IF_F] = b->F;
  r[PB_IF_A] = b->A;
  r[PB_IF_Q] = b->Q;
  r[PB_IF_WCOMP] = b->W;
  r[PB_IF_VCOMP] = b->V;
  r[PB_IF_KWC] = b->K_width_class;
  r[PB_IF_KWG] = b->K_width_global;
  r[PB_IF_NCLASSES] = (double)b->n_classes;
  r[PB_IF_NPINNED] = (double)b->n_pinned;
}

/* Matched-support subsample of a source for one seed (B.2): in each class
 * common to every source, the two evaluation images that come first in the
 * SHA-256 order of "match|SEED|SOURCE|CLASS|IMAGE".  Returns evaluation
 * positions, ascending; identical for every model. */
static int32_t pb_identify__match_sample(const struct pb_meta *meta, int32_t s, uint64_t seed,
                                         const uint8_t *common, int32_t *pos)
{
  const struct pb_source *src = &meta->sources[s];
  int32_t n_eval = 0, n = 0;
  struct pb_identify__ranked { uint64_t key; int32_t label, pos; } *r = pb_malloc((size_t)src->n_images * sizeof *r);
  for (int32_t i = 0; i < src->n_images; i++) {
    if (src->split[i] != PB_SPLIT_EVAL) continue;
    if (common[src->labels[i]]) {
      char text[512];
      snprintf(text, sizeof text, "match|%llu|%s|%d|%s", (unsigned long long)seed, src->name, src->labels[i],
               src->image_ids[i]);
      r[n++] = (struct pb_identify__ranked){pb_sha256_key(text), src->labels[i], n_eval};
    }
    n_eval++;
  }
  /* insertion by (label, key): classes are small */
  for (int32_t i = 1; i < n; i++)
    for (int32_t j = i; j > 0 && (r[j - 1].label > r[j].label || (r[j - 1].label == r[j].label && r[j - 1].key > r[j].key)); j--) {
      struct pb_identify__ranked t = r[j];
      r[j] = r[j - 1];
      r[j - 1] = t;
    }
  int32_t m = 0;
  for (int32_t i = 0, taken = 0; i < n; i++) {
    taken = i > 0 && r[i].label == r[i - 1].label ? taken + 1 : 0;
    if (taken < PB_IDENTIFY_MATCH_PER_CLASS) pos[m++] = r[i].pos;
  }
  free(r);
  for (int32_t i = 1; i < m; i++) /* ascending evaluation positions */
    for (int32_t j = i; j > 0 && pos[j - 1] > pos[j]; j--) {
      int32_t t = pos[j];
      pos[j] = pos[j - 1];
      pos[j - 1] = t;
    }
  return m;
}

/* Labels present among the evaluation images of every source (B.2's common classes). */
static uint8_t *pb_identify__common(const struct pb_meta *meta, int32_t *max_classes)
{
  int32_t K = 0;
  for (int32_t s = 0; s < meta->n_sources; s++) K = meta->sources[s].n_classes > K ? meta->sources[s].n_classes : K;
  int32_t *seen = pb_calloc((size_t)K, sizeof *seen);
  uint8_t *common = pb_calloc((size_t)K, 1);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *src = &meta->sources[s];
    for (int32_t i = 0; i < src->n_images; i++)
      if (src->split[i] == PB_SPLIT_EVAL && seen[src->labels[i]] == s) seen[src->labels[i]] = s + 1;
  }
  for (int32_t y = 0; y < K; y++) common[y] = seen[y] == meta->n_sources;
  free(seen);
  *max_classes = K;
  return common;
}

struct pb_identify__subset {
  int32_t *label, *pred0, *pred1;
  float *s0, *s1, *m0, *m1;
};

static void pb_identify__matched_cell(const struct pb_cell_data *d, float tau, const int32_t *pos, int32_t m,
                                      double *out)
{
  struct pb_identify__subset u = {pb_malloc((size_t)m * sizeof(int32_t)), pb_malloc((size_t)m * sizeof(int32_t)),
                                  pb_malloc((size_t)m * sizeof(int32_t)), pb_malloc((size_t)m * sizeof(float)),
                                  pb_malloc((size_t)m * sizeof(float)), pb_malloc((size_t)m * sizeof(float)),
                                  pb_malloc((size_t)m * sizeof(float))};
  for (int32_t i = 0; i < m; i++) {
    int32_t p = pos[i];
    u.label[i] = d->label[p], u.pred0[i] = d->pred0[p], u.pred1[i] = d->pred1[p];
    u.s0[i] = d->s0[p], u.s1[i] = d->s1[p], u.m0[i] = d->m0[p], u.m1[i] = d->m1[p];
  }
  struct pb_cell_input in = {m, u.label, u.pred0, u.s0, u.m0, u.pred1, u.s1, u.m1, tau};
  struct pb_cell_bounds b;
  if (m > 0 && pb_bounds_cell(&in, 1, &b) == 0) {
    out[0] = b.H_I5[1] - b.H_I5[0];
    out[1] = b.L_I5[1] - b.L_I5[0];
    out[2] = b.dMk_I5[1] - b.dMk_I5[0];
    out[3] = b.H_I0[1];
  } else {
    out[0] = out[1] = out[2] = out[3] = NAN;
  }
  free(u.label), free(u.pred0), free(u.pred1), free(u.s0), free(u.s1), free(u.m0), free(u.m1);
}

/* H.2's empirical control: H, L and dM_k under uniform within-class
 * permutations of the perturbed records, averaged over the replicates (dM_k
 * over replicates with K > 0). */
static void pb_identify__perm_control(const struct pb_cell_data *d, float tau, const struct pb_identify_options *opt,
                                      int32_t *perm, double out[3])
{
  double h = 0, l = 0, dm = 0;
  int32_t nd = 0;
  for (int32_t r = 0; r < opt->perm_replicates; r++) {
    pb_perm_within_class(opt->seed, PB_RNG_PERM_WITHIN, (uint64_t)d->index, (uint32_t)r, d->n, d->label, perm);
    int64_t H = 0, L = 0, K = 0;
    double num = 0;
    for (int32_t i = 0; i < d->n; i++) {
      int32_t j = perm[i];
      int c0 = d->pred0[i] == d->label[i], c1 = d->pred1[j] == d->label[j];
      int z0 = d->s0[i] >= tau, z1 = d->s1[j] >= tau;
      H += c0 && z0 && !c1 && z1;
      L += c0 && z0 && c1 && !z1;
      if (c0 && c1) {
        K++;
        num += (double)d->m0[i] - (double)d->m1[j];
      }
    }
    h += (double)H / d->n;
    l += (double)L / d->n;
    if (K > 0) {
      dm += num / K;
      nd++;
    }
  }
  out[0] = h / opt->perm_replicates;
  out[1] = l / opt->perm_replicates;
  out[2] = nd ? dm / nd : NAN;
}

/* Threshold of each cell: --tau, or the protocol's development threshold. */
static int pb_identify__taus(const struct pb_stage *st, const struct pb_cell_block *b,
                             const struct pb_identify_options *opt, float *tau)
{
  for (int64_t c = 0; c < b->n_cells; c++) {
    const struct pb_cell_ref *r = &b->cells[c].ref;
    tau[c] = opt->have_tau ? opt->tau : st->protocol.src[r->source].tau[r->model];
    if (isnan(tau[c])) {
      pb_error_set("source %s, model %s: no development threshold (the source has no development images); "
                   "give --tau", st->meta->sources[r->source].name, st->meta->model_ids[r->model]);
      return PB_FAIL;
    }
  }
  return PB_OK;
}

/* All cells of this rank: the grid pass, then the I5 pass, then matched support. */
static int pb_identify__compute(const struct pb_stage *st, const struct pb_cell_block *b,
                                const struct pb_identify_options *opt, double *recs, double times[3])
{
  float *tau = pb_malloc((size_t)(b->n_cells > 0 ? b->n_cells : 1) * sizeof *tau);
  uint8_t *i5 = pb_calloc((size_t)(b->n_cells > 0 ? b->n_cells : 1), 1);
  int status = pb_identify__taus(st, b, opt, tau);
  for (int64_t c = 0; c < b->n_cells; c++) {
    const struct pb_cell_ref *r = &b->cells[c].ref;
    int panel = st->protocol.src[r->source].panel[r->model * st->meta->sources[r->source].n_conditions + r->condition];
    i5[c] = opt->i5_scope == PB_IDENTIFY_I5_ALL || (opt->i5_scope == PB_IDENTIFY_I5_PANEL && panel);
    double *rec = recs + c * PB_IF_N;
    for (int f = 0; f < PB_IF_N; f++) rec[f] = NAN;
    rec[PB_IF_TIER] = st->protocol.src[r->source].tier[r->condition];
    rec[PB_IF_PANEL] = panel;
    rec[PB_IF_TAU] = tau[c];
  }
  int32_t nmax = 1;
  for (int64_t c = 0; c < b->n_cells; c++) nmax = b->cells[c].n > nmax ? b->cells[c].n : nmax;
  struct pb_progress prog;
  pb_progress_begin(&prog, "bounds", "cells", b->n_cells);
  for (int pass = 0; pass < 2 && status == PB_OK; pass++) {
    double t0 = MPI_Wtime();
    int bad = 0;
#pragma omp parallel reduction(| : bad)
    {
      double *scratch = NULL;
      int32_t cap = 0, *perm = pb_malloc((size_t)nmax * sizeof *perm);
#pragma omp for schedule(dynamic, 8)
      for (int64_t c = 0; c < b->n_cells; c++) {
        if (i5[c] != pass) continue;
        const struct pb_cell_data *d = &b->cells[c];
        struct pb_cell_input in = {d->n, d->label, d->pred0, d->s0, d->m0, d->pred1, d->s1, d->m1, tau[c]};
        struct pb_cell_bounds cb;
        double *rec = recs + c * PB_IF_N;
        bad |= pb_bounds_cell(&in, pass, &cb) != 0;
        pb_identify__pack(&cb, rec);
        if (d->n > cap) {
          cap = d->n;
          scratch = pb_realloc(scratch, 2 * (size_t)cap * sizeof *scratch);
        }
        pb_identify__ratios(d, scratch, rec + PB_IF_VR_C);
        if (opt->perm_replicates > 0) pb_identify__perm_control(d, tau[c], opt, perm, rec + PB_IF_H_PERM);
        pb_progress_step(&prog, 1);
      }
      free(scratch);
      free(perm);
    }
    if (bad) {
      pb_error_set("identification failed on a cell with invalid records");
      status = PB_FAIL;
    }
    times[pass] = MPI_Wtime() - t0;
  }
  pb_progress_end(&prog);
  double t0 = MPI_Wtime();
  if (status == PB_OK && opt->matched) {
    int32_t K;
    uint8_t *common = pb_identify__common(st->meta, &K);
    for (int j = 0; j < PB_IDENTIFY_N_MATCH_SEEDS; j++) {
      uint64_t seed = PB_IDENTIFY_MATCH_SEED0 + (uint64_t)j;
      for (int32_t s = 0; s < st->meta->n_sources; s++) {
        int32_t *pos = pb_malloc((size_t)st->meta->sources[s].n_images * sizeof *pos);
        int32_t m = pb_identify__match_sample(st->meta, s, seed, common, pos);
#pragma omp parallel for schedule(dynamic, 4)
        for (int64_t c = 0; c < b->n_cells; c++)
          if (b->cells[c].ref.source == s && recs[c * PB_IF_N + PB_IF_PANEL] == 1)
            pb_identify__matched_cell(&b->cells[c], tau[c], pos, m, recs + c * PB_IF_N + PB_IF_MATCH + 4 * j);
        free(pos);
      }
    }
    free(common);
  }
  times[2] = MPI_Wtime() - t0;
  free(tau);
  free(i5);
  return status;
}

static void pb_identify__tsv_rows(const struct pb_stage *st, const struct pb_cell_block *b, const double *recs,
                                  struct pb_text *t)
{
  for (int64_t c = 0; c < b->n_cells; c++) {
    const struct pb_cell_ref *r = &b->cells[c].ref;
    const struct pb_source *src = &st->meta->sources[r->source];
    const double *rec = recs + c * PB_IF_N;
    pb_text_printf(t, "%s\t%s\t%s", st->meta->model_ids[r->model], src->name, src->conditions[r->condition]);
    for (int f = 0; f < PB_IF_N; f++) {
      if (f == PB_IF_TIER) pb_text_printf(t, "\t%s", pb_tier_name((int)rec[f]));
      else pb_text_double(t, rec[f]);
    }
    pb_text_printf(t, "\n");
  }
}

static int pb_identify__write_cells(struct pb_stage *st, const struct pb_cell_block *b, const double *recs)
{
  int64_t n = b->n_cells;
  double *col = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *col);
  int status = pb_results_group(st->results, "/bounds/cells");
  for (int f = 0; f < PB_IF_N && status == PB_OK; f++) {
    char path[128];
    for (int64_t c = 0; c < n; c++) col[c] = recs[c * PB_IF_N + f];
    snprintf(path, sizeof path, "/bounds/cells/%s", pb_identify_field_names[f]);
    status = pb_results_write_f64(st->results, path, st->n_cells, b->first, n, col);
  }
  free(col);
  if (status != PB_OK) return status;
  struct pb_text t = {0};
  pb_identify__tsv_rows(st, b, recs, &t);
  struct pb_text head = {0};
  pb_text_printf(&head, "model\tsource\tcondition");
  for (int f = 0; f < PB_IF_N; f++) pb_text_printf(&head, "\t%s", pb_identify_field_names[f]);
  pb_text_printf(&head, "\n");
  status = pb_results_tsv(st->results, "bounds.tsv", head.buf, t.buf, t.len);
  pb_text_free(&t);
  pb_text_free(&head);
  return status;
}

int pb_identify_run(const char *store_path, const char *outdir, MPI_Comm comm,
                    const struct pb_protocol_options *popt, const struct pb_identify_options *opt,
                    const char *provenance)
{
  struct pb_stage st;
  struct pb_cell_block b;
  double t0 = MPI_Wtime(), times[3] = {0, 0, 0};
  if (pb_stage_open(store_path, outdir, comm, popt, provenance, &st)) return PB_FAIL;
  int status = pb_cells_load(st.store, st.first, st.last, PB_FIELD_PRED | PB_FIELD_SMAX | PB_FIELD_PTRUE, &b);
  MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MIN, comm);
  if (status != PB_OK) return pb_stage_close(&st, status);
  double t_load = MPI_Wtime() - t0;
  double *recs = pb_malloc((size_t)(b.n_cells > 0 ? b.n_cells : 1) * PB_IF_N * sizeof *recs);
  status = pb_identify__compute(&st, &b, opt, recs, times);
  MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MIN, comm);
  double t1 = MPI_Wtime();
  if (status == PB_OK) status = pb_identify__write_cells(&st, &b, recs);
  if (status == PB_OK) {
    /* every rank: the resampling runs on all of them */
    double *all = pb_stage_gather(&st, b.n_cells, st.n_cells, PB_IF_N, recs, 1);
    struct pb_identify_intervals iv;
    status = pb_identify_intervals(st.meta, all, st.n_cells, opt, comm, &iv);
    if (status == PB_OK && st.rank == 0)
      status = pb_identify_report(st.meta, &st.protocol, all, st.n_cells, st.results, opt, &iv);
    MPI_Bcast(&status, 1, MPI_INT, 0, comm);
    free(iv.vr);
    free(all);
  }
  double t_write = MPI_Wtime() - t1;
  /* slowest rank's phase times: what a user waits for */
  double mx[5] = {t_load, times[0], times[1], times[2], t_write};
  MPI_Allreduce(MPI_IN_PLACE, mx, 5, MPI_DOUBLE, MPI_MAX, comm);
  int64_t recs_total = pb_meta_paired_records(st.meta);
  pb_message("bounds: load %.3f s; grid pass %.3f s (%.1f M paired records/s); I5 + variable-support pass %.3f s; "
             "matched support %.3f s; write %.3f s",
             mx[0], mx[1], mx[1] > 0 ? recs_total / mx[1] / 1e6 : 0.0, mx[2], mx[3], mx[4]);
  free(recs);
  pb_cells_free(&b);
  return pb_stage_close(&st, status);
}
