/* The results.h5 datasets of `pairbound exact` (docs/exact.md, "Scoring"),
 * and one evaluation's outputs: its datasets, then its report from rank 0. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "pairbound/error.h"
#include "pairbound/exact.h"
#include "pairbound/results.h"
#include "exact_internal.h"

/* Column PREFIX/NAME written whole by rank 0 (collective). */
static int pb_exact__col(struct pb_results *res, int rank, const char *prefix, const char *name, int64_t n,
                         const double *v)
{
  char path[256];
  snprintf(path, sizeof path, "%s/%s", prefix, name);
  return pb_results_write_f64(res, path, n, 0, rank == 0 ? n : 0, v);
}

int pb_exact_write_h5(struct pb_results *res, const char *prefix, const struct pb_exact_result *r)
{
  int rank;
  char path[256];
  MPI_Comm_rank(pb_results_comm(res), &rank);
  const char *name[PB_EXACT_NSUM];
  double v[PB_EXACT_NSUM], ho[5][PB_EXACT_NK];
  int status = pb_results_group(res, prefix);
  pb_exact_summary(r, name, v);
  snprintf(path, sizeof path, "%s/summary_name", prefix);
  status |= pb_results_write_strings(res, path, PB_EXACT_NSUM, (char *const *)name);
  status |= pb_exact__col(res, rank, prefix, "summary_value", PB_EXACT_NSUM, v);
  if (r->have_ho) {
    for (int t = 0; t < PB_EXACT_NK; t++) {
      ho[0][t] = pb_exact_snapshot_k[t], ho[1][t] = r->e_ho[t], ho[2][t] = r->e_k[t];
      ho[3][t] = r->e_k_before[t], ho[4][t] = r->delta_k[t];
    }
    status |= pb_exact__col(res, rank, prefix, "ho_k", PB_EXACT_NK, ho[0]);
    status |= pb_exact__col(res, rank, prefix, "ho_E_HO", PB_EXACT_NK, ho[1]);
    status |= pb_exact__col(res, rank, prefix, "ho_E_k", PB_EXACT_NK, ho[2]);
    status |= pb_exact__col(res, rank, prefix, "ho_E_k_before", PB_EXACT_NK, ho[3]);
    status |= pb_exact__col(res, rank, prefix, "ho_delta_k", PB_EXACT_NK, ho[4]);
  }
  if (r->emp_mc) status |= pb_exact__col(res, rank, prefix, "mc_empirical", (int64_t)r->n_sizes * r->resamples, r->emp_mc);
  if (r->have_knn) {
    int64_t n = (int64_t)r->n_sizes * PB_EXACT_NSEEDS;
    double *k = pb_malloc(sizeof(double) * (size_t)(6 * n));
    for (int64_t i = 0; i < n; i++) {
      const struct pb_exact_nn *e = &r->knn[i / PB_EXACT_NSEEDS][i % PB_EXACT_NSEEDS];
      k[i] = e->err_1nn, k[n + i] = e->err_knn, k[2 * n + i] = e->ch_lower, k[3 * n + i] = e->ch_upper;
      k[4 * n + i] = e->dv_lower, k[5 * n + i] = e->dv_upper;
    }
    static const char *const cols[6] = {"knn_err_1nn", "knn_err_knn", "knn_ch_lower", "knn_ch_upper", "knn_dv_lower",
                                        "knn_dv_upper"};
    for (int c = 0; c < 6; c++) status |= pb_exact__col(res, rank, prefix, cols[c], n, k + c * n);
    /* the ablation without irrelevant fields at the largest size, seed-major in the same layout */
    for (int i = 0; i < PB_EXACT_NSEEDS; i++)
      for (int c = 0; c < 6; c++) k[c * PB_EXACT_NSEEDS + i] = (&r->knn_relevant[i].err_1nn)[c];
    for (int c = 0; c < 6; c++) {
      char name[64];
      snprintf(name, sizeof name, "%s_relevant", cols[c]);
      status |= pb_exact__col(res, rank, prefix, name, PB_EXACT_NSEEDS, k + c * PB_EXACT_NSEEDS);
    }
    free(k);
  }
  return status ? PB_FAIL : PB_OK;
}

int pb_exact_write(struct pb_results *res, const struct pb_world *w, const struct pb_exact_eval *e)
{
  int rank;
  MPI_Comm comm = pb_results_comm(res);
  MPI_Comm_rank(comm, &rank);
  int status = pb_exact_write_h5(res, "/exact", &e->r);
  if (status == PB_OK && rank == 0) status = pb_exact_report(res, w, &e->pred, e->groups, &e->r);
  MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  return status;
}
