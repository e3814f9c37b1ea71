/* `pairbound fragility --study known-propensity`: the known-propensity study
 * of seed 001 U.1 (docs/fragility.md, "Known-propensity study").  Replicates
 * are split into contiguous ranges over the ranks and over the threads of a
 * rank; every replicate's estimates are added into exact sums
 * (pairbound/agg.h), so the totals, and every output, are the same for any
 * number of ranks and threads. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/agg.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/fields.h"
#include "pairbound/fragility.h"
#include "pairbound/results.h"
#include "pairbound/text.h"
#include "fragility_internal.h"

/* Sums per row: plug-in estimate, its absolute and squared error, the same of the capped law. */
enum { PB_FS__SUM, PB_FS__ABS, PB_FS__SQ, PB_FS__STATS = 6 };
#define PB_FS__KEPT(d) ((int64_t)PB_FRAGILITY_STUDY_ROWS * PB_FS__STATS + (d))
/* Then the finite-sample nested readouts: per [law][n][size][rho] the plug-in profile's sum, absolute and
 * squared error, then per [law][n][size] the plug-in G_R's sum. */
#define PB_FS__NESTED0 PB_FS__KEPT(PB_FRAGILITY_STUDY_DESIGNS)
#define PB_FS__NESTED_G (PB_FS__NESTED0 + (int64_t)PB_FRAGILITY_NESTED_ROWS * PB_FRAGILITY_NESTED_RHOS * 3)
#define PB_FS__SLOTS (PB_FS__NESTED_G + PB_FRAGILITY_NESTED_ROWS)

static const struct pb_field pb_fragility__study[PB_FS_FIXED] = {
  [PB_FS_N] = {"n", PB_FMT_INT}, [PB_FS_MIN_LABELS] = {"min_labels", PB_FMT_INT}, [PB_FS_RHO] = {"rho", PB_FMT_NUM},
  [PB_FS_REPLICATES] = {"replicates", PB_FMT_INT}, [PB_FS_CELLS_KEPT] = {"cells_kept", PB_FMT_NUM},
  [PB_FS_TRUTH] = {"truth", PB_FMT_NUM}, [PB_FS_CAP_POP] = {"cap_population", PB_FMT_NUM},
  [PB_FS_PLUG_MEAN] = {"plugin_mean", PB_FMT_NUM}, [PB_FS_PLUG_BIAS] = {"plugin_bias", PB_FMT_NUM},
  [PB_FS_PLUG_MAE] = {"plugin_mae", PB_FMT_NUM}, [PB_FS_PLUG_REL] = {"plugin_rel_mae", PB_FMT_NUM},
  [PB_FS_PLUG_RMSE] = {"plugin_rmse", PB_FMT_NUM}, [PB_FS_CAP_MEAN] = {"cap_mean", PB_FMT_NUM},
  [PB_FS_CAP_BIAS] = {"cap_bias", PB_FMT_NUM}, [PB_FS_CAP_MAE] = {"cap_mae", PB_FMT_NUM},
  [PB_FS_CAP_REL] = {"cap_rel_mae", PB_FMT_NUM}, [PB_FS_CAP_RMSE] = {"cap_rmse", PB_FMT_NUM}};

/* The finite-sample nested readouts of one replicate into @p a; @p truth: the population Phi_R per
 * [law][n][size][rho] (the n index repeats the law's). */
static void pb_fragility__nested_add(uint64_t seed, uint32_t rep, const double *truth, struct pb_fragility_law *work,
                                     struct pb_agg *a)
{
  double est[PB_FRAGILITY_NESTED_EST];
  pb_fragility_study_nested_replicate(seed, rep, work, est);
  for (int64_t i = 0; i < (int64_t)PB_FRAGILITY_NESTED_ROWS * PB_FRAGILITY_NESTED_RHOS; i++) {
    const double err = est[i] - truth[i];
    pb_agg_add(a, PB_FS__NESTED0 + i * 3, est[i]);
    pb_agg_add(a, PB_FS__NESTED0 + i * 3 + 1, fabs(err));
    pb_agg_add(a, PB_FS__NESTED0 + i * 3 + 2, err * err);
  }
  for (int64_t row = 0; row < PB_FRAGILITY_NESTED_ROWS; row++)
    pb_agg_add(a, PB_FS__NESTED_G + row, est[(int64_t)PB_FRAGILITY_NESTED_ROWS * PB_FRAGILITY_NESTED_RHOS + row]);
}

/* Add replicates [r0, r1) into @p a (one thread's share). */
static void pb_fragility__study_add(uint64_t seed, int64_t r0, int64_t r1, const double *truth, const double *ntruth,
                                    struct pb_agg *a)
{
  struct pb_fragility_law work;
  pb_fragility_law_init(&work);
  double est[PB_FRAGILITY_STUDY_DESIGNS * PB_FRAGILITY_STUDY_EST];
  int32_t kept[PB_FRAGILITY_STUDY_DESIGNS];
  for (int64_t rep = r0; rep < r1; rep++) {
    pb_fragility__nested_add(seed, (uint32_t)rep, ntruth, &work, a);
    pb_fragility_study_replicate(seed, (uint32_t)rep, &work, est, kept);
    for (int32_t d = 0; d < PB_FRAGILITY_STUDY_DESIGNS; d++) {
      pb_agg_add_int(a, PB_FS__KEPT(d), kept[d]);
      for (int32_t j = 0; j < PB_FRAGILITY_STUDY_EST / 2; j++) { /* j = rho * 2 + dir */
        const int64_t row = (int64_t)d * 2 * PB_FRAGILITY_STUDY_RHOS + (j % 2) * PB_FRAGILITY_STUDY_RHOS + j / 2;
        for (int e = 0; e < 2; e++) {
          const size_t i = (size_t)d * PB_FRAGILITY_STUDY_EST + (size_t)j * 2 + (size_t)e;
          const double err = est[i] - truth[i - (size_t)e]; /* both estimate the true profile */
          pb_agg_add(a, row * PB_FS__STATS + e * 3 + PB_FS__SUM, est[i]);
          pb_agg_add(a, row * PB_FS__STATS + e * 3 + PB_FS__ABS, fabs(err));
          pb_agg_add(a, row * PB_FS__STATS + e * 3 + PB_FS__SQ, err * err);
        }
      }
    }
  }
  pb_fragility_law_free(&work);
}

/* The records of every row from the reduced sums (rank 0). */
static void pb_fragility__study_records(const struct pb_agg *a, const double *truth, int64_t n_rep, double *rec)
{
  for (int64_t row = 0; row < PB_FRAGILITY_STUDY_ROWS; row++) {
    const int32_t d = (int32_t)(row / (2 * PB_FRAGILITY_STUDY_RHOS)), dir = (int32_t)(row / PB_FRAGILITY_STUDY_RHOS % 2);
    const int32_t r = (int32_t)(row % PB_FRAGILITY_STUDY_RHOS);
    const struct pb_fragility_study_design *D = &pb_fragility_study_designs[d];
    const double *t = truth + (size_t)d * PB_FRAGILITY_STUDY_EST + (size_t)(r * 2 + dir) * 2;
    double *x = rec + row * PB_FS_FIXED;
    x[PB_FS_N] = D->n;
    x[PB_FS_MIN_LABELS] = D->min_labels;
    x[PB_FS_RHO] = pb_fragility_study_rho[r];
    x[PB_FS_REPLICATES] = (double)n_rep;
    x[PB_FS_CELLS_KEPT] = pb_agg_mean(a, PB_FS__KEPT(d));
    x[PB_FS_TRUTH] = t[0];
    x[PB_FS_CAP_POP] = t[1];
    for (int e = 0; e < 2; e++) {
      double *y = x + (e ? PB_FS_CAP_MEAN : PB_FS_PLUG_MEAN); /* mean, bias, MAE, relative MAE, RMSE */
      const int64_t s = row * PB_FS__STATS + e * 3;
      y[0] = pb_agg_mean(a, s + PB_FS__SUM);
      y[1] = y[0] - t[0];
      y[2] = pb_agg_mean(a, s + PB_FS__ABS);
      y[3] = t[0] > 0 ? y[2] / t[0] : NAN;
      y[4] = sqrt(pb_agg_mean(a, s + PB_FS__SQ));
    }
  }
}

/* results.h5 /fragility/study and report/known_propensity.tsv (collective; rank 0 holds every row). */
static int pb_fragility__study_write(struct pb_results *res, const double *rec, int rank)
{
  const struct pb_fields fs = pb_fields_static("/fragility/study", PB_FS_FIXED, pb_fragility__study);
  const int64_t n = PB_FRAGILITY_STUDY_ROWS, mine = rank == 0 ? n : 0;
  char *key[3][PB_FRAGILITY_STUDY_ROWS];
  static const char *const kpath[3] = {"/fragility/study/law", "/fragility/study/arm", "/fragility/study/direction"};
  struct pb_text tsv = {0}, hdr = {0};
  for (int64_t row = 0; row < n; row++) {
    const struct pb_fragility_study_design *D = &pb_fragility_study_designs[row / (2 * PB_FRAGILITY_STUDY_RHOS)];
    struct pb_fragility_study_law L;
    pb_fragility_study_law(D->law, &L);
    key[0][row] = (char *)L.name; /* static names: the writer only reads them */
    key[1][row] = (char *)D->arm;
    key[2][row] = row / PB_FRAGILITY_STUDY_RHOS % 2 ? "down" : "up";
    if (rank != 0) continue;
    pb_text_printf(&tsv, "%s\t%s\t%s", key[0][row], key[1][row], key[2][row]);
    pb_fields_tsv_values(&fs, rec + row * PB_FS_FIXED, 0, &tsv);
    pb_text_printf(&tsv, "\n");
  }
  pb_fields_tsv_header(&fs, "law\tarm\tdirection", 0, &hdr);
  pb_text_printf(&hdr, "\n");
  int status = pb_fields_write(&fs, res, n, 0, mine, rec);
  for (int k = 0; k < 3 && status == PB_OK; k++) status = pb_results_write_strings(res, kpath[k], n, key[k]);
  if (status == PB_OK) status = pb_results_tsv(res, "known_propensity.tsv", hdr.buf, tsv.buf, tsv.len);
  pb_text_free(&tsv);
  pb_text_free(&hdr);
  return status;
}

/* The population Phi_R and G_R of every finite-sample row: truth[[law][n][size][rho] * 2 + (0: Phi_R, 1: G_R)]. */
static void pb_fragility__nested_truth(double *truth)
{
  struct pb_fragility_law work;
  pb_fragility_law_init(&work);
  for (int32_t law = 0; law < PB_FRAGILITY_NESTED_LAWS; law++) {
    double eta[PB_FRAGILITY_NESTED_ATOMS], x[PB_FN_FIXED];
    (void)pb_fragility_study_nested_law(law, eta);
    for (int32_t ni = 0; ni < PB_FRAGILITY_NESTED_NS; ni++)
      for (int32_t k = 0; k < PB_FRAGILITY_NESTED_SIZES; k++)
        for (int32_t r = 0; r < PB_FRAGILITY_NESTED_RHOS; r++) {
          const int64_t i = ((int64_t)(law * PB_FRAGILITY_NESTED_NS + ni) * PB_FRAGILITY_NESTED_SIZES + k) *
                            PB_FRAGILITY_NESTED_RHOS + r;
          pb_fragility_study_nested(eta, pb_fragility_nested_size[k], 0, pb_fragility_nested_rho[r], &work, x);
          truth[i] = x[PB_FN_PHI_R];
          truth[(int64_t)PB_FRAGILITY_NESTED_ROWS * PB_FRAGILITY_NESTED_RHOS + i] = x[PB_FN_G_R];
        }
  }
  pb_fragility_law_free(&work);
}

/* The finite-sample records (PB_FN2_* per [law][n][size][rho]) from the reduced sums (rank 0). */
static void pb_fragility__nested_records(const struct pb_agg *a, const double *truth, int64_t n_rep, double *rec)
{
  const int64_t NR = (int64_t)PB_FRAGILITY_NESTED_ROWS * PB_FRAGILITY_NESTED_RHOS;
  for (int64_t i = 0; i < NR; i++) {
    const int64_t row = i / PB_FRAGILITY_NESTED_RHOS;
    double *x = rec + i * PB_FN2_FIXED;
    x[PB_FN2_N] = pb_fragility_nested_n[row / PB_FRAGILITY_NESTED_SIZES % PB_FRAGILITY_NESTED_NS];
    x[PB_FN2_K] = pb_fragility_nested_size[row % PB_FRAGILITY_NESTED_SIZES];
    x[PB_FN2_RHO] = pb_fragility_nested_rho[i % PB_FRAGILITY_NESTED_RHOS];
    x[PB_FN2_REPLICATES] = (double)n_rep;
    x[PB_FN2_TRUTH] = truth[i];
    x[PB_FN2_G_R] = truth[NR + i];
    x[PB_FN2_G_R_MEAN] = pb_agg_mean(a, PB_FS__NESTED_G + row);
    x[PB_FN2_MEAN] = pb_agg_mean(a, PB_FS__NESTED0 + i * 3);
    x[PB_FN2_BIAS] = x[PB_FN2_MEAN] - truth[i];
    x[PB_FN2_MAE] = pb_agg_mean(a, PB_FS__NESTED0 + i * 3 + 1);
    x[PB_FN2_REL] = truth[i] > 0 ? x[PB_FN2_MAE] / truth[i] : NAN;
    x[PB_FN2_RMSE] = sqrt(pb_agg_mean(a, PB_FS__NESTED0 + i * 3 + 2));
  }
}

int pb_fragility_study_run(const struct pb_fragility_stage_options *o, const char *outdir, MPI_Comm comm,
                           const char *provenance)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int64_t R = o->replicates, r0 = R * rank / size, r1 = R * (rank + 1) / size;
  double truth[PB_FRAGILITY_STUDY_DESIGNS * PB_FRAGILITY_STUDY_EST];
  struct pb_fragility_law work;
  pb_fragility_law_init(&work);
  for (int32_t d = 0; d < PB_FRAGILITY_STUDY_DESIGNS; d++)
    pb_fragility_study_truth(d, &work, truth + (size_t)d * PB_FRAGILITY_STUDY_EST);
  pb_fragility_law_free(&work);
  double *ntruth = pb_malloc((size_t)PB_FRAGILITY_NESTED_ROWS * PB_FRAGILITY_NESTED_RHOS * 2 * sizeof *ntruth);
  pb_fragility__nested_truth(ntruth);
  struct pb_agg a;
  pb_agg_init(&a, PB_FS__SLOTS);
#pragma omp parallel
  {
    struct pb_agg mine;
    pb_agg_init(&mine, PB_FS__SLOTS);
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    pb_fragility__study_add(o->k.seed, r0 + (r1 - r0) * t / nt, r0 + (r1 - r0) * (t + 1) / nt, truth, ntruth, &mine);
#pragma omp critical(pb_fragility_study)
    pb_agg_merge(&a, &mine); /* exact: the order of the threads does not matter */
    pb_agg_free(&mine);
  }
  double *rec = pb_calloc((size_t)PB_FRAGILITY_STUDY_ROWS * PB_FS_FIXED, sizeof *rec);
  double *nrec = pb_calloc((size_t)PB_FRAGILITY_NESTED_ROWS * PB_FRAGILITY_NESTED_RHOS * PB_FN2_FIXED, sizeof *nrec);
  struct pb_results *res = NULL;
  int status = pb_agg_reduce(&a, comm, 0);
  if (status == PB_OK && rank == 0) {
    pb_fragility__study_records(&a, truth, R, rec);
    pb_fragility__nested_records(&a, ntruth, R, nrec);
  }
  status = pb_error_agree(comm, status);
  if (status == PB_OK) status = pb_results_create(outdir, comm, provenance, &res);
  if (status == PB_OK) status = pb_fragility__study_write(res, rec, rank);
  if (status == PB_OK && rank == 0) status = pb_fragility_study_report(res, rec, nrec, o->k.seed, R);
  status = pb_error_agree(comm, status); /* rank 0 holds the report's message */
  if (status == PB_OK) {
    status = pb_results_commit(res);
    res = NULL;
  }
  if (res) pb_results_close(res);
  pb_agg_free(&a);
  free(rec);
  free(nrec);
  free(ntruth);
  return status;
}
