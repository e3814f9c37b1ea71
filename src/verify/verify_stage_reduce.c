/* The totals behind `pairbound verify`'s report (verify_internal.h, struct
 * pb_verify_sum): every rank adds up its own covered cells and the totals
 * meet on rank 0; the same for any split of the cells. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/agg.h"
#include "pairbound/comm.h"
#include "pairbound/error.h"
#include "verify_internal.h"

/* What a rank adds up over its cells, reduced to rank 0 into a pb_verify_sum:
 * counts in int64, sums of doubles (integer valued) exactly, maxima with
 * their first cell; the same for any split of the cells. */
enum { PB_VS__COVERED, PB_VS__COMPLETE, PB_VS__CART_CELLS, PB_VS__I5_MISSING, PB_VS__LPN, PB_VS__PCART_N = PB_VS__LPN + 3,
       PB_VS__BYS, PB_VS__NCOUNT = PB_VS__BYS }; /* then 4 per source: cells, classes, skipped, narrower */
enum { PB_VS__MAX_CART, PB_VS__MAX_LP, PB_VS__MAX_PCART = PB_VS__MAX_LP + 3, PB_VS__NMAX };
struct pb_verify__local {
  int64_t *count;               /* PB_VS__NCOUNT + 4 per source */
  struct pb_agg sums;           /* PB_VF_N fields, then cart_comb, then perms per source */
  double max[PB_VS__NMAX];      /* from 0 (-1 for the policy Cartesian residual); values only */
  struct pb_loc res[PB_VERIFY_NR], cres[PB_VERIFY_NR], pres[PB_VERIFY_NPRES], pcres[PB_VERIFY_NPT];
};

/* One covered cell (global index @p g) into the rank's totals. */
static void pb_verify__add(const struct pb_cell_ref *cell, int64_t g, const double *r, struct pb_verify__local *A)
{
  int64_t *k = A->count, *bys = A->count + PB_VS__BYS + 4 * cell->source;
  k[PB_VS__COVERED]++;
  for (int f = PB_VF_CLASSES; f <= PB_VF_I5_MISSING; f++) pb_agg_add(&A->sums, f, r[f]);
  for (int f = PB_VF_POL_CLASSES; f < PB_VF_POL_RES; f++) pb_agg_add(&A->sums, f, r[f]);
  for (int f = PB_VF_LP_CLASSES; f <= PB_VF_LP_BNB; f++) pb_agg_add(&A->sums, f, r[f]);
  for (int f = PB_VF_LP_RES; f <= PB_VF_CF_RES; f++)
    if (!isnan(r[f])) {
      A->max[PB_VS__MAX_LP + f - PB_VF_LP_RES] = fmax(A->max[PB_VS__MAX_LP + f - PB_VF_LP_RES], r[f]);
      k[PB_VS__LPN + f - PB_VF_LP_RES]++;
    }
  bys[0]++;
  bys[1] += (int64_t)r[PB_VF_ENUMERATED];
  bys[2] += (int64_t)r[PB_VF_SKIPPED];
  bys[3] += (int64_t)r[PB_VF_NARROWER_H];
  pb_agg_add(&A->sums, PB_VF_N + 1 + cell->source, r[PB_VF_PERMS]);
  k[PB_VS__I5_MISSING] += r[PB_VF_I5_MISSING] == 1;
  if (r[PB_VF_ENUMERATED] == r[PB_VF_CLASSES]) k[PB_VS__COMPLETE]++;
  if (r[PB_VF_CARTESIAN] > 0) {
    k[PB_VS__CART_CELLS]++;
    pb_agg_add(&A->sums, PB_VF_N, r[PB_VF_CARTESIAN]);
    if (r[PB_VF_CART_RES] > A->max[PB_VS__MAX_CART]) A->max[PB_VS__MAX_CART] = r[PB_VF_CART_RES];
  }
  for (int j = 0; j < PB_VERIFY_NR; j++) {
    pb_agg_loc_max(&A->res[j], r[PB_VF_RES + j], g, -1);
    if (r[PB_VF_CRES_LABEL + j] >= 0) pb_agg_loc_max(&A->cres[j], r[PB_VF_CRES + j], g, (int64_t)r[PB_VF_CRES_LABEL + j]);
  }
  for (int j = 0; j < PB_VERIFY_NPRES; j++) pb_agg_loc_max(&A->pres[j], r[PB_VF_POL_RES + j], g, -1);
  for (int t = 0; t < PB_VERIFY_NPT; t++)
    if (r[PB_VF_POL_CRES_LABEL + t] >= 0)
      pb_agg_loc_max(&A->pcres[t], r[PB_VF_POL_CRES + t], g, (int64_t)r[PB_VF_POL_CRES_LABEL + t]);
  if (!isnan(r[PB_VF_POL_CART_RES])) {
    k[PB_VS__PCART_N]++;
    if (r[PB_VF_POL_CART_RES] > A->max[PB_VS__MAX_PCART]) A->max[PB_VS__MAX_PCART] = r[PB_VF_POL_CART_RES];
  }
}

int pb_verify_summarise(const struct pb_meta *meta, const struct pb_cell_ref *cells, const double *recs,
                        int64_t first, int64_t n_local, MPI_Comm comm, struct pb_verify_sum *S)
{
  const int32_t ns = meta->n_sources;
  const int NR = PB_VERIFY_NR, ncount = PB_VS__NCOUNT + 4 * ns;
  int rank;
  MPI_Comm_rank(comm, &rank);
  struct pb_verify__local A;
  A.count = pb_calloc((size_t)ncount, sizeof *A.count);
  pb_agg_init(&A.sums, PB_VF_N + 1 + ns);
  for (int j = 0; j < PB_VS__NMAX; j++) A.max[j] = j == PB_VS__MAX_PCART ? -1.0 : 0.0;
  pb_agg_loc_init(A.res, NR, -1.0);
  pb_agg_loc_init(A.cres, NR, -1.0);
  pb_agg_loc_init(A.pres, PB_VERIFY_NPRES, -1.0);
  pb_agg_loc_init(A.pcres, PB_VERIFY_NPT, -1.0);
  for (int64_t c = 0; c < n_local; c++) {
    const double *r = recs + c * PB_VF_N;
    if (r[PB_VF_COVERED] == 1) pb_verify__add(&cells[first + c], first + c, r, &A);
  }
  int status = pb_agg_reduce(&A.sums, comm, 0);
  if (rank == 0) pb_comm_reduce(MPI_IN_PLACE, A.count, ncount, MPI_INT64_T, MPI_SUM, 0, comm);
  else pb_comm_reduce(A.count, NULL, ncount, MPI_INT64_T, MPI_SUM, 0, comm);
  if (rank == 0) pb_comm_reduce(MPI_IN_PLACE, A.max, PB_VS__NMAX, MPI_DOUBLE, MPI_MAX, 0, comm);
  else pb_comm_reduce(A.max, NULL, PB_VS__NMAX, MPI_DOUBLE, MPI_MAX, 0, comm);
  const struct { struct pb_loc *l; int n; } locs[4] = {{A.res, NR}, {A.cres, NR}, {A.pres, PB_VERIFY_NPRES},
                                                      {A.pcres, PB_VERIFY_NPT}};
  for (int j = 0; j < 4; j++)
    if (status == PB_OK) status = pb_agg_loc_reduce(locs[j].l, locs[j].n, 1, comm, 0);
  memset(S, 0, sizeof *S);
  S->bys = pb_calloc((size_t)ns, sizeof *S->bys);
  if (rank == 0 && status == PB_OK) {
    for (int f = 0; f < PB_VF_N; f++) S->tot[f] = pb_agg_sum(&A.sums, f);
    S->covered = A.count[PB_VS__COVERED], S->complete = A.count[PB_VS__COMPLETE];
    S->cart_cells = A.count[PB_VS__CART_CELLS], S->i5_missing = A.count[PB_VS__I5_MISSING];
    S->cart_max = A.max[PB_VS__MAX_CART], S->cart_comb = pb_agg_sum(&A.sums, PB_VF_N);
    for (int j = 0; j < NR; j++) {
      S->rmax[j] = A.res[j].v, S->rcell[j] = A.res[j].cell;
      S->cmax[j] = A.cres[j].v, S->ccell[j] = A.cres[j].cell, S->clabel[j] = (int32_t)A.cres[j].tag;
    }
    for (int j = 0; j < 3; j++) S->lpmax[j] = A.max[PB_VS__MAX_LP + j], S->lpn[j] = A.count[PB_VS__LPN + j];
    for (int32_t s = 0; s < ns; s++) {
      const int64_t *b = A.count + PB_VS__BYS + 4 * s;
      S->bys[s] = (struct pb_src_tot){b[0], b[1], b[2], b[3], pb_agg_sum(&A.sums, PB_VF_N + 1 + s)};
    }
    memcpy(S->pres, A.pres, sizeof S->pres);
    memcpy(S->pcres, A.pcres, sizeof S->pcres);
    S->pcart_max = A.max[PB_VS__MAX_PCART], S->pcart_n = A.count[PB_VS__PCART_N];
  }
  pb_agg_free(&A.sums);
  free(A.count);
  return status;
}

void pb_verify_sum_free(struct pb_verify_sum *S) { free(S->bys); }
