/* The comparisons of the predict stage (docs/predict.md, Appendix I): MAEs
 * and gains of stored out-of-fold errors, the deletion refits' gains and
 * the group-reweighting intervals (collective), results.h5 /predict/gains;
 * then the report from them. */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include <mpi.h>

#include "pairbound/comm.h"
#include "pairbound/error.h"
#include "pairbound/figure.h"
#include "pairbound/resample.h"
#include "predict_internal.h"

/* Practical thresholds of I.2: fractions of the full-pool target IQR and of the matched baseline MAE. */
static const double pb_predict__thr_iqr[4] = {0.025, 0.05, 0.1, 0.2};
static const double pb_predict__thr_mae[3] = {0.05, 0.10, 0.20};

/* Per-model absolute errors of (combo, set) in the fits without deletion, or
 * of deletion refit @p del; a shuffle set averages each model's error over
 * its replicates.  NaN where the model was not predicted. */
static void pb_predict__errors(const struct pb_predict__data *d, int32_t c, int32_t k, int32_t del, double *err)
{
  const int32_t M = d->n_models, tg = c % PB_PREDICT__N_TARGETS, t = (c / PB_PREDICT__N_TARGETS) % d->n_ts;
  const struct pb_predict__set *s = &d->sets[tg * d->n_sets + k];
  const int32_t reps = s->shuffle ? d->n_shuf : 1;
  const int64_t u0 = d->first_unit[c * d->n_sets + k] + (del >= 0 ? reps + del : 0);
  const int32_t nu = del >= 0 ? 1 : reps;
  for (int32_t m = 0; m < M; m++) {
    const double y = d->target[((size_t)t * M + m) * PB_PREDICT__N_TARGETS + tg];
    double acc = 0.0;
    for (int32_t r = 0; r < nu; r++) acc += fabs(d->pred[(u0 + r) * M + m] - y);
    err[m] = acc / nu;
  }
}

/* Model-equal and group-equal means of the defined entries of v. */
static void pb_predict__means(const struct pb_predict__data *d, const double *v, double *model_eq, double *group_eq,
                              int32_t *n)
{
  double s = 0.0, gs = 0.0;
  int32_t c = 0, gc = 0;
  for (int32_t g = 0; g < d->n_groups; g++) {
    double t = 0.0;
    int32_t k = 0;
    for (int32_t m = 0; m < d->n_models; m++)
      if (d->group[m] == g && !isnan(v[m])) {
        t += v[m];
        k++;
      }
    if (k > 0) {
      gs += t / k;
      gc++;
    }
  }
  for (int32_t m = 0; m < d->n_models; m++)
    if (!isnan(v[m])) {
      s += v[m];
      c++;
    }
  *model_eq = c ? s / c : NAN;
  *group_eq = gc ? gs / gc : NAN;
  *n = c;
}

/* Relative gain, target IQR and thresholds of comparison row i. */
static void pb_predict__derived(const struct pb_predict__data *d, int64_t i, struct pb_predict__gain *o)
{
  const int32_t c = (int32_t)(i / d->n_cmp);
  o->iqr = d->iqr[((c / PB_PREDICT__N_TARGETS) % d->n_ts) * PB_PREDICT__N_TARGETS + c % PB_PREDICT__N_TARGETS];
  o->rel = 100.0 * o->gain / o->base;
  for (int k = 0; k < 4; k++) o->thr[k] = pb_predict__thr_iqr[k] * o->iqr;
  for (int k = 0; k < 3; k++) o->thr[4 + k] = pb_predict__thr_mae[k] * o->base;
}

/* MAEs and gains of every comparison: statistic (c, k) is the mean
 * per-model error difference base - alt, model-equal and group-equal (group
 * means); x [M][ns] and xg [G][ns] receive the per-model differences and
 * their group means for the intervals. */
static void pb_predict__gains(const struct pb_predict__data *d, double *x, double *xg, struct pb_predict__gain *out)
{
  const int32_t M = d->n_models, G = d->n_groups, ns = pb_predict__n_combos(d) * d->n_cmp;
  double *eb = pb_malloc((size_t)M * sizeof *eb), *ea = pb_malloc((size_t)M * sizeof *ea);
  for (int32_t c = 0; c < pb_predict__n_combos(d); c++)
    for (int32_t k = 0; k < d->n_cmp; k++) {
      const int32_t i = c * d->n_cmp + k;
      pb_predict__errors(d, c, d->cmp[k].base, -1, eb);
      pb_predict__errors(d, c, d->cmp[k].alt, -1, ea);
      double me, ge;
      for (int32_t m = 0; m < M; m++) x[(size_t)m * ns + i] = eb[m] - ea[m];
      pb_predict__means(d, eb, &out[i].base, &ge, &out[i].n);
      pb_predict__means(d, ea, &out[i].alt, &ge, &out[i].n);
      for (int32_t m = 0; m < M; m++) ea[m] = x[(size_t)m * ns + i];
      pb_predict__means(d, ea, &me, &out[i].ggain, &out[i].n);
      out[i].gain = me;
      for (int32_t g = 0; g < G; g++) {
        double s = 0.0;
        int32_t n = 0;
        for (int32_t m = 0; m < M; m++)
          if (d->group[m] == g && !isnan(ea[m])) s += ea[m], n++;
        xg[(size_t)g * ns + i] = n ? s / n : NAN;
      }
      out[i].lo = out[i].hi = out[i].glo = out[i].ghi = NAN;
    }
  free(eb), free(ea);
}

/* Group-reweighting intervals of every comparison (collective) from the
 * differences of pb_predict__gains: model-equal (each model weighted by its
 * group's multiplicity) and group-equal (group means). */
static int pb_predict__intervals(const struct pb_predict__data *d, const double *x, const double *xg, int64_t draws,
                                 uint64_t seed, MPI_Comm comm, struct pb_predict__gain *out)
{
  const int32_t M = d->n_models, G = d->n_groups, ns = pb_predict__n_combos(d) * d->n_cmp;
  int status = PB_OK;
  if (draws > 0) {
    struct pb_interval *iv = pb_malloc((size_t)ns * 2 * sizeof *iv);
    const struct pb_boot_spec spec = {seed, PB_RNG_GROUP_BOOT, 0, draws, PB_BOOT_LEVEL};
    int32_t *ident = pb_malloc((size_t)G * sizeof *ident);
    for (int32_t g = 0; g < G; g++) ident[g] = g;
    status = pb_resample_boot_group_means(x, M, ns, d->group, G, &spec, comm, iv);
    if (status == PB_OK) status = pb_resample_boot_group_means(xg, G, ns, ident, G, &spec, comm, iv + ns);
    for (int32_t i = 0; i < ns && status == PB_OK; i++) {
      out[i].lo = iv[i].lo, out[i].hi = iv[i].hi;
      out[i].glo = iv[ns + i].lo, out[i].ghi = iv[ns + i].hi;
    }
    free(iv);
    free(ident);
  }
  return status;
}

/* Deletion refit gains of comparison k in combination c (both sets refitted). */
static void pb_predict__deletions(const struct pb_predict__data *d, int32_t c, int32_t k, double *gain,
                                  struct pb_predict__gain *o)
{
  const int32_t M = d->n_models, tg = c % PB_PREDICT__N_TARGETS;
  o->del_min = o->del_max = NAN;
  o->del_pos = o->del_n = 0;
  if (!d->deletion_run || !d->sets[tg * d->n_sets + d->cmp[k].base].deletion ||
      !d->sets[tg * d->n_sets + d->cmp[k].alt].deletion)
    return;
  double *eb = pb_malloc((size_t)M * sizeof *eb), *ea = pb_malloc((size_t)M * sizeof *ea);
  for (int32_t g = 0; g < d->n_groups; g++) {
    double mb, ma, ge;
    int32_t n;
    pb_predict__errors(d, c, d->cmp[k].base, g, eb);
    pb_predict__errors(d, c, d->cmp[k].alt, g, ea);
    pb_predict__means(d, eb, &mb, &ge, &n);
    pb_predict__means(d, ea, &ma, &ge, &n);
    gain[g] = mb - ma;
    o->del_min = o->del_n == 0 || gain[g] < o->del_min ? gain[g] : o->del_min;
    o->del_max = o->del_n == 0 || gain[g] > o->del_max ? gain[g] : o->del_max;
    o->del_pos += gain[g] > 0;
    o->del_n++;
  }
  free(eb), free(ea);
}

/* results.h5 /predict/gains/NAME for every field of pb_predict__gain_fields (collective; rank 0 writes). */
static int pb_predict__gains_h5(const struct pb_predict__data *d, const struct pb_predict__gain *g, int rank,
                                struct pb_results *res)
{
  const int64_t n = (int64_t)pb_predict__n_combos(d) * d->n_cmp, mine = rank == 0 ? n : 0;
  double *recs = pb_malloc((size_t)(n > 0 ? n : 1) * PB_PG_N * sizeof *recs);
  for (int64_t i = 0; i < n; i++) pb_predict__gain_record(&g[i], recs + i * PB_PG_N);
  int status = pb_fields_write(&pb_predict__gain_fields, res, n, 0, mine, recs);
  free(recs);
  return status;
}

/* Every (combination, set)'s model-equal and group-equal MAE (report/predict_mae.tsv). */
static void pb_predict__maes(const struct pb_predict__data *d, struct pb_predict__mae *out)
{
  double *err = pb_malloc((size_t)d->n_models * sizeof *err);
  for (int32_t c = 0; c < pb_predict__n_combos(d); c++)
    for (int32_t k = 0; k < d->n_sets; k++) {
      struct pb_predict__mae *o = &out[(size_t)c * d->n_sets + k];
      pb_predict__errors(d, c, k, -1, err);
      pb_predict__means(d, err, &o->mae, &o->mae_group_equal, &o->n_models);
    }
  free(err);
}

int pb_predict__gains_run(struct pb_predict__data *d, int64_t group_draws, uint64_t seed, MPI_Comm comm,
                          struct pb_results *res)
{
  int rank;
  MPI_Comm_rank(comm, &rank);
  const int64_t ns = (int64_t)pb_predict__n_combos(d) * d->n_cmp, nm = (int64_t)pb_predict__n_combos(d) * d->n_sets;
  struct pb_predict__gains G;
  G.g = pb_calloc((size_t)(ns > 0 ? ns : 1), sizeof *G.g);
  G.dg = pb_malloc((size_t)(ns > 0 ? ns : 1) * d->n_groups * sizeof *G.dg);
  G.mae = pb_malloc((size_t)(nm > 0 ? nm : 1) * sizeof *G.mae);
  double *x = pb_malloc((size_t)d->n_models * (ns > 0 ? ns : 1) * sizeof *x);
  double *xg = pb_malloc((size_t)d->n_groups * (ns > 0 ? ns : 1) * sizeof *xg);
  pb_predict__gains(d, x, xg, G.g);
  for (int64_t i = 0; i < ns; i++) {
    for (int32_t grp = 0; grp < d->n_groups; grp++) G.dg[i * d->n_groups + grp] = NAN;
    pb_predict__deletions(d, (int32_t)(i / d->n_cmp), (int32_t)(i % d->n_cmp), &G.dg[i * d->n_groups], &G.g[i]);
    pb_predict__derived(d, i, &G.g[i]);
  }
  if (rank == 0) pb_predict__maes(d, G.mae); /* only the report reads them */
  /* the figure needs no interval: gnuplot renders it while the intervals
   * and the tables are computed */
  struct pb_figure fig;
  struct pb_figure_job job = {0};
  char title[160];
  const int fig_status = rank == 0 ? pb_predict__report_figure(d, &G, res, &fig, title, &job) : PB_OK;
  int status = pb_predict__intervals(d, x, xg, group_draws, seed, comm, G.g);
  if (status == PB_OK) status = pb_predict__gains_h5(d, G.g, rank, res);
  if (rank == 0) status = pb_predict__report(d, &G, group_draws, seed, status, fig_status, &job, res);
  pb_comm_bcast(&status, 1, MPI_INT, 0, comm);
  free(G.g), free(G.dg), free(G.mae), free(x), free(xg);
  return status;
}
