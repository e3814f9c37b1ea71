/* The totals behind the policy report (policy_internal.h, struct
 * pb_policy_sum): every rank adds up its own cells in scope (counts in int64,
 * regrets as exact sums, pairbound/agg.h) and the totals meet on rank 0, so
 * no rank holds another's records; and D.1's illustration cell, picked by
 * selection over the ranks and fetched from its owner. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/agg.h"
#include "pairbound/comm.h"
#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "policy_internal.h"

#define PP 100.0

static const double *pb_psum__lam(const double *rec, int32_t li) { return rec + PB_PC_NBASE + (size_t)li * PB_PL_N; }


static int64_t pb_psum__nk(int32_t ns, int32_t nl)
{
  return (int64_t)(ns + 1) * PB_PS_PER_SRC + (int64_t)nl * PB_PS_PER_LAM + (int64_t)ns * nl * 4 + 3;
}

/* Better / worse / tied: minimax against the feasible-mean rule on realized cost. */
static void pb_psum__bwt(const double *l, int lv, int64_t bwt[3])
{
  double a = l[PB_PL_REG_MM + lv], b = l[PB_PL_REG_MEAN + lv];
  if (isnan(a) || isnan(b)) return;
  if (a < b - PB_POLICY_STRICT) bwt[0]++;
  else if (a > b + PB_POLICY_STRICT) bwt[1]++;
  else bwt[2]++;
}

/* One cell in scope of source @p s into the counts and sums of its source and of the Total. */
static void pb_psum__add(struct pb_policy_sum *S, int32_t s, const double *r)
{
  const double *l = pb_psum__lam(r, S->li);
  const int32_t keys[2] = {s, S->ns};
  for (int j = 0; j < 2; j++) {
    int64_t *v = pb_policy_sum_src(S, keys[j]);
    v[PB_PS_ORD + 0]++;
    v[PB_PS_ORD + 1] += l[PB_PL_CERT + 2] > 0;
    v[PB_PS_ORD + 2] += l[PB_PL_INCK] > 0;
    v[PB_PS_ORD + 3] += l[PB_PL_INC5] > 0;
    v[PB_PS_ORD + 4] += (int64_t)l[PB_PL_CERT + 2];
    v[PB_PS_ORD + 5] += (int64_t)l[PB_PL_INCK];
    v[PB_PS_ORD + 6] += (int64_t)l[PB_PL_INC5];
    for (int lv = 0; lv < 3; lv++) v[PB_PS_ACT + lv] += l[PB_PL_NACT + lv] == 1;
    pb_psum__bwt(l, 2, v + PB_PS_BWT);
    const double x[4] = {l[PB_PL_REG_MEAN + 2], l[PB_PL_REG_MM + 2], l[PB_PL_REG_FIX], l[PB_PL_REG_PROXY]};
    for (int i = 0; i < 4; i++) pb_agg_add(&S->a, (int64_t)keys[j] * 4 + i, x[i] * PP);
  }
  for (int32_t li = 0; li < S->nl; li++) {
    const double *m = pb_psum__lam(r, li);
    int64_t *w = pb_policy_sum_lam(S, li), *f = pb_policy_sum_fig5(S, s, li);
    const double d = m[PB_PL_REG_MEAN + 2] - m[PB_PL_REG_MM + 2];
    w[PB_PS_W_N] += !isnan(d);
    pb_agg_add(&S->a, (int64_t)(S->ns + 1) * 4 + li, d * PP);
    pb_psum__bwt(m, 2, w + PB_PS_W_BWT);
    f[0]++;
    f[1] += m[PB_PL_CERT + 2] > 0;
    f[2] += m[PB_PL_INCK] > 0;
    f[3] += m[PB_PL_INC5] > 0;
  }
  int64_t *chk = pb_policy_sum_checks(S);
  chk[0]++;
  chk[1] += (int64_t)r[PB_PC_COR1];
  chk[2] += (int64_t)r[PB_PC_MEAN_BAD];
  S->lemma1 = fmax(S->lemma1, r[PB_PC_LEMMA1] * PP);
}

/* The counts and sums of every rank's cells in scope on rank 0 (collective). */
static int pb_psum__totals(const struct pb_meta *meta, const double *recs, int64_t first, int64_t n_local, int32_t rl,
                           MPI_Comm comm, struct pb_policy_sum *S)
{
  int rank;
  MPI_Comm_rank(comm, &rank);
  const int64_t nk = pb_psum__nk(S->ns, S->nl);
  S->k = pb_calloc((size_t)nk, sizeof *S->k);
  pb_agg_init(&S->a, (int64_t)(S->ns + 1) * 4 + S->nl);
  for (int64_t c = 0; c < n_local; c++) {
    const double *r = recs + c * rl;
    if (r[PB_PC_SCOPE] == 1) pb_psum__add(S, pb_dist_cell_at(meta, first + c).source, r);
  }
  int status = pb_agg_reduce(&S->a, comm, 0);
  if (rank == 0) {
    pb_comm_reduce(MPI_IN_PLACE, S->k, (int)nk, MPI_INT64_T, MPI_SUM, 0, comm);
    pb_comm_reduce(MPI_IN_PLACE, &S->lemma1, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  } else {
    pb_comm_reduce(S->k, NULL, (int)nk, MPI_INT64_T, MPI_SUM, 0, comm);
    pb_comm_reduce(&S->lemma1, NULL, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  }
  return status;
}

/* D.1: among real cells in scope with K > 0 and a mixed certified pair at the
 * primary weight, the cell nearest the median marginal H width of all real
 * cells in scope (NaN widths left out); ties go to the earlier cell (source,
 * model, condition order).  Collective: the median by selection over the
 * ranks, the cell by a located minimum; returns it (-1: none) on every rank. */
static int64_t pb_psum__pick(const struct pb_meta *meta, const double *recs, int64_t first, int64_t n_local, int32_t rl,
                             MPI_Comm comm, double *med_out)
{
  double *w = pb_malloc((size_t)(n_local > 0 ? n_local : 1) * sizeof *w);
  uint8_t *real = pb_malloc((size_t)(n_local > 0 ? n_local : 1));
  int64_t nl = 0;
  for (int64_t c = 0; c < n_local; c++) {
    const double *r = recs + c * rl;
    /* D.1 picks among real captures: the sources whose role is real (docs/store.md, "Roles") */
    real[c] = r[PB_PC_SCOPE] == 1 && meta->sources[pb_dist_cell_at(meta, first + c).source].role == PB_ROLE_REAL;
    if (real[c]) w[nl++] = r[PB_PC_HW_I0];
  }
  const int64_t nw = pb_agg_select_count(w, nl, comm), k[2] = {(nw - 1) / 2, nw / 2};
  double x[2] = {NAN, NAN};
  if (nw > 0) pb_agg_select_kth(w, nl, k, 2, comm, x);
  const double med = nw == 0 ? NAN : nw % 2 ? x[1] : (x[0] + x[1]) / 2;
  free(w);
  struct pb_loc best;
  pb_agg_loc_init(&best, 1, INFINITY);
  for (int64_t c = 0; c < n_local && nw > 0; c++) {
    const double *r = recs + c * rl;
    if (real[c] && r[PB_PC_K] > 0 && !isnan(r[PB_PC_D1])) pb_agg_loc_min(&best, fabs(r[PB_PC_HW_I0] - med), first + c, 0);
  }
  free(real);
  pb_agg_loc_reduce(&best, 1, 0, comm, -1);
  *med_out = med;
  return best.cell;
}


int pb_policy_summarise(const struct pb_meta *meta, const double *recs, int64_t first, int64_t n_local,
                        int32_t rec_len, const struct pb_policy_options *opt, int32_t primary, MPI_Comm comm,
                        struct pb_policy_sum *S)
{
  *S = (struct pb_policy_sum){meta->n_sources, opt->n_lambdas, primary, NULL, {0, NULL}, 0.0, -1, NAN, NULL};
  int status = pb_psum__totals(meta, recs, first, n_local, rec_len, comm, S);
  S->best = pb_psum__pick(meta, recs, first, n_local, rec_len, comm, &S->med);
  S->rec = pb_malloc((size_t)rec_len * sizeof *S->rec);
  if (S->best >= 0) status |= pb_agg_fetch(comm, first, n_local, S->best, recs, rec_len, NULL, 0, S->rec, 0);
  return status ? PB_FAIL : PB_OK;
}

void pb_policy_sum_free(struct pb_policy_sum *S)
{
  free(S->k);
  free(S->rec);
  pb_agg_free(&S->a);
}
