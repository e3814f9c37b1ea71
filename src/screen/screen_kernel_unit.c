/* `pairbound screen`: one work unit (target source, model), seed 000
 * Section 5, Appendix E.1-E.4.  The clean-correct image set, every score and
 * every fit depend on the unit only, the outcome on the condition, so each
 * score is ranked once per unit and each cell costs O(n) per score.  Pure:
 * the unit reads the rows the stage loaded (struct pb_screen__ctx) and
 * writes its cells' records.  docs/screen.md describes every score. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/draws.h"
#include "pairbound/error.h"
#include "pairbound/rng.h"
#include "pairbound/screen_kernel.h"
#include "pairbound/sort.h"
#include "screen_kernel_internal.h"

struct pb_screen__rec pb_screen__rec_row(const struct pb_screen__ctx *X, int32_t s, int32_t row)
{
  const struct pb_screen__rows *R = &X->rows[s];
  int32_t n = X->meta->sources[s].n_images, k = X->meta->topk;
  struct pb_screen__rec r = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  int32_t q = pb_sort_find_i32(R->tk_rows, R->n_tk, row), j = q < 0 ? pb_sort_find_i32(R->rows, R->n, row) : -1;
  if (q < 0 && j < 0) { /* pb_screen__load reads every row a unit asks for: a broken invariant, not bad data */
    fprintf(stderr, "[%d] screen: row %d of source %d was not loaded\n", pb_log_rank(), row, s);
    abort();
  }
  if (j >= 0) { /* predictions alone: s and m stay NULL */
    r.pred = R->d.pred + (size_t)j * n;
    r.id = R->d.pred_orig ? R->d.pred_orig + (size_t)j * n : r.pred;
    return r;
  }
  r.pred = R->tk.pred + (size_t)q * n;
  r.id = R->tk.pred_orig ? R->tk.pred_orig + (size_t)q * n : r.pred;
  r.s = R->tk.smax + (size_t)q * n;
  r.m = R->tk.ptrue + (size_t)q * n;
  if (k > 0 && R->tk.topk_class) {
    r.tkc = R->tk.topk_class + (size_t)q * n * k;
    r.tkp = R->tk.topk_prob + (size_t)q * n * k;
  }
  if (R->tk.entropy) r.h = R->tk.entropy + (size_t)q * n;
  return r;
}

static struct pb_screen_probs pb_screen__probs(const struct pb_screen__rec *r, int32_t i, int32_t label, int32_t k)
{
  /* the stored prediction: s is its probability and the top-k lists name stored classes */
  struct pb_screen_probs p = {r->id[i], label, r->s[i], r->m[i], 0, NULL, NULL, r->h ? &r->h[i] : NULL};
  if (r->tkc) {
    p.k = k;
    p.tk_class = r->tkc + (size_t)i * k;
    p.tk_prob = r->tkp + (size_t)i * k;
  }
  return p;
}

double pb_screen__e1_spearman(const struct pb_screen__unit *U)
{
  return pb_screen_spearman(U->score[PB_SR_DELTA], U->score[PB_SR_U], U->n);
}

void pb_screen__unit_free(struct pb_screen__unit *U, const struct pb_screen__ctx *X)
{
  int32_t nd = X->opt->n_derange;
  for (int32_t r = 0; r < X->L.n_rows; r++) {
    free(U->score[r]);
    pb_screen_ranked_free(&U->rk[r]);
  }
  for (int32_t d = 0; d < nd; d++) {
    pb_screen_ranked_free(&U->der[d]);
    pb_screen_ranked_free(&U->der_delta[d]);
    free(U->der_score[d]);
  }
  for (int s = 0; s < PB_SCREEN_STRATA; s++) {
    pb_screen_ranked_free(&U->st_S[s]);
    pb_screen_ranked_free(&U->st_U[s]);
    pb_screen_ranked_free(&U->st_Uns[s]);
    for (int32_t d = 0; d < nd; d++) pb_screen_ranked_free(&U->st_der[s * nd + d]);
  }
  for (int32_t j = 0; j < X->n_subsets; j++) pb_screen_ranked_free(&U->sub[j]);
  free(U->sub);
  free(U->st_der);
  free(U->score);
  free(U->rk);
  free(U->der);
  free(U->der_delta);
  free(U->der_score);
  free(U->img);
  free(U->label);
  free(U->cls_pos);
  free(U->cls_start);
  free(U->ns);
  free(U->med);
  free(U->stratum);
}

static int pb_screen__cmp_dbl(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

struct pb_screen__lq {
  int32_t label, q;
};

static int pb_screen__cmp_lq(const void *pa, const void *pb)
{
  const struct pb_screen__lq *a = pa, *b = pb;
  if (a->label != b->label) return a->label < b->label ? -1 : 1;
  return (a->q > b->q) - (a->q < b->q);
}

/* pos = 0..n-1 ordered by label, ties by position (a stable sort, O(n log n)). */
static void pb_screen__order_by_label(int32_t n, const int32_t *label, int32_t *pos)
{
  struct pb_screen__lq *lq = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *lq);
  for (int32_t q = 0; q < n; q++) lq[q] = (struct pb_screen__lq){label[q], q};
  qsort(lq, (size_t)n, sizeof *lq, pb_screen__cmp_lq);
  for (int32_t q = 0; q < n; q++) pos[q] = lq[q].q;
  free(lq);
}

/* What the phases of pb_screen__unit_prepare share about unit (target t, model m). */
struct pb_screen__uwork {
  int32_t t, m, T, N, nc, K, k;
  const struct pb_source *src;
  uint8_t an_split, fit_split;       /* analysis and fitting splits (--swapped exchanges them) */
  struct pb_screen__rec clean, *cond;
  double **Uall, **A3all, *ret;      /* [probe set][image] probe mean U and A3; retention (primary set) */
  double *cd_sum, *ucc_sum, *uall_sum;
  int32_t *cd_n, *ucc_n;             /* fitting-side class sums and counts */
  int32_t *ns_list, *cc_list, n_cc;  /* analysis positions: non-singleton classes; class mean defined */
  int32_t *ord[3], n_ord[3];         /* positions by descending S, U, delta (ties by position) */
  int32_t **der_ord;                 /* [n_derange] the same of each derangement of U */
};


/* Probe means U and retention of every image with a probe partner, A3 on
 * clean-correct images of the analysis split, for every probe set; seed
 * E.3's error rate of single probe predictions on the fitting split's
 * clean-correct images (the mean over images of the share of probes wrong is
 * the mean over probes of each probe's error rate: every probe sees them all). */
static void pb_screen__probe_means(const struct pb_screen__ctx *X, struct pb_screen__uwork *W, struct pb_screen__unit *U)
{
  const struct pb_meta *meta = X->meta;
  const struct pb_source *src = W->src;
  const int32_t t = W->t, m = W->m, N = W->N, K = W->K, k = W->k;
  const uint8_t an_split = W->an_split;
  const struct pb_screen__rec clean = W->clean;
  double **Uall = W->Uall = pb_malloc((size_t)X->n_ps * sizeof *Uall);
  double **A3all = W->A3all = pb_malloc((size_t)X->n_ps * sizeof *A3all);
  double *ret = W->ret = pb_malloc((size_t)N * sizeof *ret);
  int32_t max_probes = 0;
  for (int32_t p = 0; p < X->n_ps; p++) max_probes = X->ps[p].n > max_probes ? X->ps[p].n : max_probes;
  struct pb_screen_probs *pr = pb_malloc((size_t)max_probes * sizeof *pr);
  struct pb_screen__rec *prow = pb_malloc((size_t)max_probes * sizeof *prow);
  const float **mrow = pb_malloc((size_t)max_probes * sizeof *mrow);
  for (int32_t p = 0; p < X->n_ps; p++) {
    const struct pb_screen__pset *ps = &X->ps[p];
    const struct pb_source *P = &meta->sources[ps->src];
    const int32_t *jn = X->join[t][ps->src];
    Uall[p] = pb_malloc((size_t)N * sizeof(double));
    A3all[p] = pb_malloc((size_t)N * sizeof(double));
    for (int32_t a = 0; a < ps->n; a++) {
      prow[a] = pb_screen__rec_row(X, ps->src, m * P->n_conditions + ps->cond[a]);
      mrow[a] = prow[a].m;
    }
    double err = 0;
    int32_t n_err = 0;
    for (int32_t i = 0; i < N; i++) {
      int32_t j = jn[i], y = src->labels[i];
      if (j < 0) {
        Uall[p][i] = A3all[p][i] = NAN;
        if (p == 0) ret[i] = NAN;
        continue;
      }
      int32_t right = 0;
      for (int32_t a = 0; a < ps->n; a++) right += prow[a].pred[j] == y;
      Uall[p][i] = pb_screen_u(mrow, ps->n, j);
      if (p == 0) ret[i] = (double)right / ps->n;
      if (clean.pred[i] == y && src->split[i] == W->fit_split) err += 1.0 - (double)right / ps->n, n_err++;
      A3all[p][i] = NAN;
      if (clean.pred[i] == y && src->split[i] == an_split && p < X->n_ps - X->n_hidden) {
        for (int32_t a = 0; a < ps->n; a++) pr[a] = pb_screen__probs(&prow[a], j, y, k);
        struct pb_screen_probs c0 = pb_screen__probs(&clean, i, y, k);
        int32_t approx;
        A3all[p][i] = pb_screen_a3(&c0, pr, ps->n, K, &approx);
        if (p == 0) U->a3_approx += approx > 0;
      }
    }
    if (p < X->n_ps - X->n_hidden) U->dev_err[p] = n_err > 0 ? err / n_err : NAN;
  }
  free(pr);
  free(prow);
  free(mrow);
}

/* Fitting-side class means and the logistic fits g_S, g_SU, g_SUret.
 * Returns PB_FAIL (message in why) when a fit does not converge. */
static int pb_screen__fits(const struct pb_screen__ctx *X, struct pb_screen__uwork *W, struct pb_screen__unit *U,
                           char *why, size_t why_len)
{
  const struct pb_meta *meta = X->meta;
  const struct pb_source *src = W->src;
  const int32_t m = W->m, N = W->N, nc = W->nc, K = W->K;
  const uint8_t fit_split = W->fit_split;
  const struct pb_screen__rec clean = W->clean, *cond = W->cond;
  const double *const *Uall = (const double *const *)W->Uall, *ret = W->ret;
  int status = PB_OK;
  double *cd_sum = W->cd_sum = pb_calloc((size_t)K, sizeof(double)), *ucc_sum = W->ucc_sum = pb_calloc((size_t)K, sizeof(double));
  double *uall_sum = W->uall_sum = pb_calloc((size_t)K, sizeof(double));
  int32_t *cd_n = W->cd_n = pb_calloc((size_t)K, sizeof(int32_t)), *ucc_n = W->ucc_n = pb_calloc((size_t)K, sizeof(int32_t));
  int32_t n_fit = 0;
  double *xf = pb_malloc((size_t)(N > 0 ? N : 1) * 3 * sizeof(double));
  int32_t *trials = pb_malloc((size_t)(N > 0 ? N : 1) * sizeof(int32_t)), *fails = pb_malloc((size_t)(N > 0 ? N : 1) * sizeof(int32_t));
  int32_t *fit_img = pb_malloc((size_t)(N > 0 ? N : 1) * sizeof(int32_t)); /* the fitting images, ascending */
  for (int32_t i = 0; i < N; i++) {
    if (src->split[i] != fit_split || isnan(Uall[0][i])) continue;
    int32_t y = src->labels[i];
    cd_sum[y] += clean.m[i] - Uall[0][i];
    uall_sum[y] += Uall[0][i];
    cd_n[y]++;
    if (clean.pred[i] != y) continue;
    ucc_sum[y] += Uall[0][i];
    ucc_n[y]++;
    xf[3 * n_fit] = clean.s[i];
    xf[3 * n_fit + 1] = Uall[0][i];
    xf[3 * n_fit + 2] = ret[i];
    trials[n_fit] = nc - 1;
    fails[n_fit] = 0;
    fit_img[n_fit++] = i;
  }
  /* failures counted a condition's row at a time (an image's conditions are
   * rows apart: one cache line per condition and image) */
  for (int32_t c = 0; c < nc; c++) {
    if (c == src->clean) continue;
    const int32_t *pred = cond[c].pred, *label = src->labels;
    for (int32_t j = 0; j < n_fit; j++) fails[j] += pred[fit_img[j]] != label[fit_img[j]];
  }
  free(fit_img);
  U->n_fit = n_fit;
  for (int32_t i = 0; i < n_fit; i++) {
    U->n_fit_trials += trials[i];
    U->n_fit_fails += fails[i];
  }
  for (int p = 1; p <= 3 && status == PB_OK; p++) {
    double *x = pb_malloc((size_t)(n_fit > 0 ? n_fit : 1) * p * sizeof *x);
    for (int32_t i = 0; i < n_fit; i++)
      for (int j = 0; j < p; j++) x[i * p + j] = xf[3 * i + j];
    if (pb_screen_logit_fit(x, p, trials, fails, n_fit, PB_SCREEN_LOGIT_C, &U->fit[p - 1]) != PB_OK) {
      snprintf(why, why_len, "source %s, model %s, g with %d feature(s): %s", src->name, meta->model_ids[m], p,
               pb_error_message());
      status = PB_FAIL;
    }
    free(x);
  }
  free(xf);
  free(trials);
  free(fails);
  return status;
}

/* The natural rows of a unit (docs/screen.md): U0 and TTA0 (the clean
 * true-class probability as an extra term), TTA agreement, and the means over
 * the development-selected sets, summed in selection order. */
static void pb_screen__natural_scores(const struct pb_screen__ctx *X, const struct pb_screen__uwork *W,
                                      struct pb_screen__unit *U)
{
  const struct pb_meta *meta = X->meta;
  const int32_t m = W->m, t = W->t, r0 = X->L.tta_rows, n = U->n;
  int32_t most = X->ps[0].n > X->ps[X->tta].n ? X->ps[0].n : X->ps[X->tta].n;
  const float **mrow = pb_malloc((size_t)most * sizeof *mrow);
  const int32_t **prow = pb_malloc((size_t)most * sizeof *prow);
  for (int which = 0; which < 2; which++) {
    const struct pb_screen__pset *ps = &X->ps[which ? X->tta : 0];
    const int32_t *jn = X->join[t][ps->src];
    for (int32_t a = 0; a < ps->n; a++) {
      struct pb_screen__rec r = pb_screen__rec_row(X, ps->src, m * meta->sources[ps->src].n_conditions + ps->cond[a]);
      mrow[a] = r.m;
      prow[a] = r.id; /* agreement of the probes' classes with the clean one, as the model predicted them */
    }
    for (int32_t q = 0; q < n; q++) {
      int32_t i = U->img[q];
      U->score[r0 + (which ? PB_SN_TTA0 : PB_SN_U0)][q] = -pb_screen_u0(W->clean.m[i], mrow, ps->n, jn[i]);
      if (which) U->score[r0 + PB_SN_AGREE][q] = -pb_screen_agreement(prow, ps->n, jn[i], W->clean.id[i]);
    }
  }
  free(mrow);
  free(prow);
  for (int g = 0; g < 2; g++) {
    const struct pb_screen__pool *pl = &X->pool[g];
    int32_t nch = pl->n_chosen ? pl->n_chosen[t] : 0;
    double *out = U->score[r0 + (g ? PB_SN_TTASEL : PB_SN_USEL)];
    for (int32_t q = 0; q < n; q++) out[q] = nch ? 0.0 : NAN;
    for (int32_t j = 0; j < nch; j++) {
      int32_t a = pl->chosen[t * pl->n_pick + j];
      const struct pb_screen__pset *ps = &X->ps[pl->ps[a]];
      struct pb_screen__rec r =
          pb_screen__rec_row(X, ps->src, m * meta->sources[ps->src].n_conditions + ps->cond[pl->k[a]]);
      for (int32_t q = 0; q < n; q++) out[q] += r.m[X->join[t][ps->src][U->img[q]]];
    }
    for (int32_t q = 0; q < n && nch; q++) out[q] = -out[q] / nch;
  }
}

/* The analysis set (clean-correct images of the analysis split with a
 * partner in every probe set) and every score row of it. */
static void pb_screen__scores(const struct pb_screen__ctx *X, struct pb_screen__uwork *W, struct pb_screen__unit *U)
{
  const struct pb_source *src = W->src;
  const int32_t N = W->N, K = W->K, k = W->k, n_rows = X->L.n_rows;
  const uint8_t an_split = W->an_split;
  const struct pb_screen__rec clean = W->clean;
  const double *const *Uall = (const double *const *)W->Uall, *const *A3all = (const double *const *)W->A3all;
  const double *ret = W->ret, *cd_sum = W->cd_sum, *ucc_sum = W->ucc_sum, *uall_sum = W->uall_sum;
  const int32_t *cd_n = W->cd_n, *ucc_n = W->ucc_n;
  /* clean-correct images of the analysis split with a probe partner */
  U->img = pb_malloc((size_t)(N > 0 ? N : 1) * sizeof(int32_t));
  U->label = pb_malloc((size_t)(N > 0 ? N : 1) * sizeof(int32_t));
  for (int32_t i = 0; i < N; i++) {
    if (src->split[i] != an_split || clean.pred[i] != src->labels[i]) continue;
    if (isnan(Uall[0][i])) {
      U->n_unmatched++;
      continue;
    }
    for (int32_t p = 1; p < X->n_ps; p++)
      if (isnan(Uall[p][i])) goto unmatched;
    U->img[U->n] = i;
    U->label[U->n++] = src->labels[i];
    continue;
  unmatched:
    U->n_unmatched++;
  }
  int32_t n = U->n, nn = n > 0 ? n : 1;
  U->score = pb_calloc((size_t)n_rows, sizeof *U->score);
  U->rk = pb_calloc((size_t)n_rows, sizeof *U->rk);
  for (int32_t r = 0; r < n_rows; r++) U->score[r] = pb_malloc((size_t)nn * sizeof(double));
  for (int32_t q = 0; q < n; q++) {
    int32_t i = U->img[q], y = src->labels[i];
    double S = clean.s[i], u = Uall[0][i], x3[3] = {S, u, ret[i]};
    struct pb_screen_probs c0 = pb_screen__probs(&clean, i, y, k);
    double **sc = U->score;
    sc[PB_SR_S][q] = -S;
    sc[PB_SR_U][q] = -u;
    sc[PB_SR_DELTA][q] = S - u;
    sc[PB_SR_RET][q] = -ret[i];
    sc[PB_SR_MARGIN][q] = -pb_screen_margin(&c0);
    sc[PB_SR_ENTROPY][q] = pb_screen_entropy(&c0, K);
    sc[PB_SR_CLASS_DELTA][q] = cd_n[y] ? cd_sum[y] / cd_n[y] : NAN;
    sc[PB_SR_CLASS_U_CC][q] = ucc_n[y] ? -ucc_sum[y] / ucc_n[y] : NAN;
    sc[PB_SR_CLASS_U_ALL][q] = cd_n[y] ? -uall_sum[y] / cd_n[y] : NAN;
    sc[PB_SR_G_S][q] = pb_screen_logit_eta(&U->fit[0], x3);
    sc[PB_SR_G_SU][q] = pb_screen_logit_eta(&U->fit[1], x3);
    sc[PB_SR_G_SURET][q] = pb_screen_logit_eta(&U->fit[2], x3);
    sc[PB_SR_A3][q] = -A3all[0][i];
    sc[PB_SR_S_NS][q] = sc[PB_SR_S_CCDEV][q] = -S;
    sc[PB_SR_U_NS][q] = sc[PB_SR_U_CCDEV][q] = -u;
    sc[PB_SR_U_DERANGE][q] = sc[PB_SR_RANDOM][q] = sc[PB_SR_DELTA_DERANGE][q] = NAN;
    sc[PB_SR_DELTA_NS][q] = S - u;
    sc[PB_SR_S_TB][q] = sc[PB_SR_U_TB][q] = sc[PB_SR_DELTA_TB][q] = sc[PB_SR_RET_TB][q] = NAN;
    for (int32_t e = 1; e < X->n_ps - X->n_hidden; e++) {
      sc[PB_SR_FIXED + 2 * (e - 1)][q] = -Uall[e][i];
      sc[PB_SR_FIXED + 2 * (e - 1) + 1][q] = -A3all[e][i];
    }
  }
  if (X->tta >= 0) pb_screen__natural_scores(X, W, U);
}

/* Table 22's protocol-sensitivity scores of the analysis set: U_rank and the
 * power means U^0.5, U^2 over the primary probe set (docs/screen.md). */
static void pb_screen__protocol_scores(const struct pb_screen__ctx *X, const struct pb_screen__uwork *W,
                                       struct pb_screen__unit *U)
{
  const struct pb_screen__pset *ps = &X->ps[0];
  const struct pb_source *P = &X->meta->sources[ps->src];
  const int32_t *jn = X->join[W->t][ps->src], n = U->n;
  const float **mrow = pb_malloc((size_t)ps->n * sizeof *mrow);
  int32_t *j = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *j);
  for (int32_t a = 0; a < ps->n; a++) mrow[a] = pb_screen__rec_row(X, ps->src, W->m * P->n_conditions + ps->cond[a]).m;
  for (int32_t q = 0; q < n; q++) {
    j[q] = jn[U->img[q]];
    U->score[PB_SR_U_POW05][q] = -pb_screen_u_power(mrow, ps->n, j[q], 0.5);
    U->score[PB_SR_U_POW2][q] = -pb_screen_u_power(mrow, ps->n, j[q], 2.0);
  }
  pb_screen_u_rank(mrow, ps->n, j, n, U->score[PB_SR_U_RANK]);
  for (int32_t q = 0; q < n; q++) U->score[PB_SR_U_RANK][q] = -U->score[PB_SR_U_RANK][q];
  free(j);
  free(mrow);
}

/* Classes of the analysis set, the non-singleton subset, leave-one-out means. */
static void pb_screen__classes(struct pb_screen__uwork *W, struct pb_screen__unit *U)
{
  const double *const *Uall = (const double *const *)W->Uall;
  const int32_t n = U->n, nn = n > 0 ? n : 1;
  U->cls_pos = pb_malloc((size_t)nn * sizeof(int32_t));
  U->cls_start = pb_malloc((size_t)(nn + 1) * sizeof(int32_t));
  U->ns = pb_calloc((size_t)nn, 1);
  pb_screen__order_by_label(n, U->label, U->cls_pos);
  int32_t *ns_list = W->ns_list = pb_malloc((size_t)nn * sizeof(int32_t)), *cc_list = W->cc_list = pb_malloc((size_t)nn * sizeof(int32_t));
  int32_t n_cc = 0;
  for (int32_t a = 0; a < n;) {
    int32_t b = a;
    while (b < n && U->label[U->cls_pos[b]] == U->label[U->cls_pos[a]]) b++;
    U->cls_start[U->n_cls++] = a;
    double sum = 0;
    for (int32_t j = a; j < b; j++) sum += Uall[0][U->img[U->cls_pos[j]]];
    for (int32_t j = a; j < b; j++) {
      int32_t q = U->cls_pos[j];
      U->ns[q] = b - a >= 2;
      U->score[PB_SR_U_LOO][q] = b - a >= 2 ? -(sum - Uall[0][U->img[q]]) / (b - a - 1) : NAN;
    }
    a = b;
  }
  U->cls_start[U->n_cls] = n;
  for (int32_t q = 0; q < n; q++) {
    if (U->ns[q]) ns_list[U->n_ns++] = q;
    if (!isnan(U->score[PB_SR_CLASS_U_CC][q])) cc_list[n_cc++] = q;
  }
  W->n_cc = n_cc;
}

/* The positions of order[0..n_ord) with keep[q] set, in their order. */
static int32_t pb_screen__filter(const int32_t *order, int32_t n_ord, const uint8_t *keep, int32_t *out)
{
  int32_t m = 0;
  for (int32_t j = 0; j < n_ord; j++) { /* written always, kept when set: no branch on keep */
    out[m] = order[j];
    m += keep[order[j]] != 0;
  }
  return m;
}

/* Rankings of every score row, and the within-class derangements of U
 * among the non-singleton images (Table 25).  S, U and delta are sorted once
 * (W->ord): their subset rows keep the subset's part of that order, and a
 * derangement moves U's (delta's) order with its images, so neither sorts
 * again (pb_screen_rank_sorted); the derangements' orders stay in W->der_ord
 * for the strata. */
static void pb_screen__rankings(const struct pb_screen__ctx *X, struct pb_screen__uwork *W,
                                struct pb_screen__unit *U)
{
  const struct pb_screen_options *opt = X->opt;
  const int32_t T = W->T, m = W->m, nd = opt->n_derange, n_rows = X->L.n_rows, n = U->n, nn = n > 0 ? n : 1;
  static const int base[3] = {PB_SR_S, PB_SR_U, PB_SR_DELTA};
  for (int j = 0; j < 3; j++) W->ord[j] = pb_malloc((size_t)nn * sizeof(int32_t));
  for (int32_t r = 0; r < n_rows; r++) {
    if (r == PB_SR_RANDOM || r == PB_SR_U_DERANGE || r == PB_SR_DELTA_DERANGE) continue;
    if (r >= PB_SR_S_TB && r <= PB_SR_RET_TB) continue; /* tie-breaks of S, U, delta, ret: per cell */
    if (r == PB_SR_S_NS || r == PB_SR_U_NS || r == PB_SR_DELTA_NS || r == PB_SR_S_CCDEV || r == PB_SR_U_CCDEV) continue;
    if (r == PB_SR_U_LOO) pb_screen_rank(U->score[r], n, W->ns_list, U->n_ns, &U->rk[r]);
    else pb_screen_rank_keep(U->score[r], n, NULL, 0, &U->rk[r], r <= PB_SR_DELTA ? W->ord[r] : NULL);
  }
  for (int j = 0; j < 3; j++) W->n_ord[j] = U->rk[base[j]].n;
  /* the subset rows: S, U and delta over the non-singleton and the class-mean images */
  uint8_t *cc = pb_calloc((size_t)nn, 1);
  for (int32_t j = 0; j < W->n_cc; j++) cc[W->cc_list[j]] = 1;
  int32_t *list = pb_malloc((size_t)nn * sizeof *list);
  static const int sub[5][3] = {{PB_SR_S_NS, 0, 0}, {PB_SR_U_NS, 1, 0}, {PB_SR_DELTA_NS, 2, 0},
                                {PB_SR_S_CCDEV, 0, 1}, {PB_SR_U_CCDEV, 1, 1}};
  for (int j = 0; j < 5; j++) {
    int32_t k = pb_screen__filter(W->ord[sub[j][1]], W->n_ord[sub[j][1]], sub[j][2] ? cc : U->ns, list);
    pb_screen_rank_sorted(U->score[sub[j][0]], n, list, k, &U->rk[sub[j][0]]);
  }
  free(cc);

  /* within-class derangements of U among the non-singleton images (Table 25) */
  U->der = pb_calloc((size_t)(nd > 0 ? nd : 1), sizeof *U->der);
  U->der_score = pb_calloc((size_t)(nd > 0 ? nd : 1), sizeof *U->der_score);
  U->der_delta = pb_calloc((size_t)(nd > 0 ? nd : 1), sizeof *U->der_delta);
  W->der_ord = pb_calloc((size_t)(nd > 0 ? nd : 1), sizeof *W->der_ord);
  int32_t *perm = pb_malloc((size_t)nn * sizeof *perm), *inv = pb_malloc((size_t)nn * sizeof *inv);
  int32_t *lu = pb_malloc((size_t)nn * sizeof *lu), *ld = pb_malloc((size_t)nn * sizeof *ld);
  int32_t nu = pb_screen__filter(W->ord[1], W->n_ord[1], U->ns, lu), ndl = pb_screen__filter(W->ord[2], W->n_ord[2], U->ns, ld);
  double *dd = pb_malloc((size_t)nn * sizeof *dd);
  for (int32_t d = 0; d < nd; d++) {
    struct pb_rng rng;
    pb_rng_init(&rng, opt->seed, PB_RNG_SCREEN_DERANGE, ((uint64_t)T << 32) | (uint64_t)m, (uint32_t)d);
    double *ds = U->der_score[d] = pb_malloc((size_t)nn * sizeof(double));
    for (int32_t q = 0; q < n; q++) ds[q] = dd[q] = NAN;
    for (int32_t g = 0; g < U->n_cls; g++) {
      int32_t a = U->cls_start[g], size = U->cls_start[g + 1] - a;
      if (size < 2) continue;
      pb_resample_perm_derange(&rng, size, perm);
      /* delta moves with the same reassignment (the seed's "same ablation applied to delta") */
      for (int32_t j = 0; j < size; j++) {
        ds[U->cls_pos[a + j]] = U->score[PB_SR_U][U->cls_pos[a + perm[j]]];
        dd[U->cls_pos[a + j]] = U->score[PB_SR_DELTA][U->cls_pos[a + perm[j]]];
        inv[U->cls_pos[a + perm[j]]] = U->cls_pos[a + j];
      }
    }
    int32_t *od = W->der_ord[d] = pb_malloc((size_t)nn * sizeof *od);
    for (int32_t j = 0; j < nu; j++) od[j] = inv[lu[j]];
    for (int32_t j = 0; j < ndl; j++) list[j] = inv[ld[j]];
    pb_screen_rank_sorted(ds, n, od, nu, &U->der[d]);
    pb_screen_rank_sorted(dd, n, list, ndl, &U->der_delta[d]);
  }
  free(dd);
  free(perm);
  free(inv);
  free(lu);
  free(ld);
  free(list);
}

/* Clean-confidence terciles (Table 27): mid-CDF of S, ties share a stratum;
 * rankings (parts of the orders of pb_screen__rankings) and U medians within
 * each stratum. */
static void pb_screen__terciles(const struct pb_screen__ctx *X, const struct pb_screen__uwork *W,
                                struct pb_screen__unit *U)
{
  const int32_t nd = X->opt->n_derange, n = U->n, nn = n > 0 ? n : 1;
  const struct pb_screen__rec clean = W->clean;
  const double *const *Uall = (const double *const *)W->Uall;
  U->stratum = pb_calloc((size_t)nn, 1);
  U->med = pb_calloc((size_t)nn, 1);
  U->st_der = pb_calloc((size_t)PB_SCREEN_STRATA * (nd > 0 ? nd : 1), sizeof *U->st_der);
  double *sv = pb_malloc((size_t)nn * sizeof *sv);
  for (int32_t q = 0; q < n; q++) sv[q] = clean.s[U->img[q]];
  double *sorted = pb_malloc((size_t)nn * sizeof *sorted);
  memcpy(sorted, sv, (size_t)n * sizeof *sorted);
  qsort(sorted, (size_t)n, sizeof *sorted, pb_screen__cmp_dbl);
  for (int32_t q = 0; q < n; q++) {
    int32_t lo = 0, hi = n; /* lt = #{< s}, le = #{<= s} by binary search */
    while (lo < hi) { int32_t mid = (lo + hi) / 2; if (sorted[mid] < sv[q]) lo = mid + 1; else hi = mid; }
    int64_t lt = lo;
    hi = n;
    while (lo < hi) { int32_t mid = (lo + hi) / 2; if (sorted[mid] <= sv[q]) lo = mid + 1; else hi = mid; }
    int64_t le = lo;
    U->stratum[q] = 3 * (lt + le) <= 2 * (int64_t)n ? 0 : 3 * (lt + le) <= 4 * (int64_t)n ? 1 : 2;
  }
  int32_t *all_s = pb_malloc((size_t)nn * sizeof(int32_t)), *list = pb_malloc((size_t)nn * sizeof(int32_t));
  uint8_t *in = pb_malloc((size_t)nn), *in_ns = pb_malloc((size_t)nn);
  for (int s = 0; s < PB_SCREEN_STRATA; s++) {
    int32_t na = 0, k;
    for (int32_t q = 0; q < n; q++) {
      in[q] = U->stratum[q] == s;
      in_ns[q] = in[q] && U->ns[q];
      if (in[q]) all_s[na++] = q;
    }
    k = pb_screen__filter(W->ord[0], W->n_ord[0], in, list);
    pb_screen_rank_sorted(U->score[PB_SR_S], n, list, k, &U->st_S[s]);
    k = pb_screen__filter(W->ord[1], W->n_ord[1], in, list);
    pb_screen_rank_sorted(U->score[PB_SR_U], n, list, k, &U->st_U[s]);
    k = pb_screen__filter(W->ord[1], W->n_ord[1], in_ns, list);
    pb_screen_rank_sorted(U->score[PB_SR_U], n, list, k, &U->st_Uns[s]);
    for (int32_t d = 0; d < nd; d++) {
      k = pb_screen__filter(W->der_ord[d], U->der[d].n, in, list);
      pb_screen_rank_sorted(U->der_score[d], n, list, k, &U->st_der[s * nd + d]);
    }
    /* median of U inside the stratum; images equal to it belong to neither side */
    for (int32_t j = 0; j < na; j++) sorted[j] = Uall[0][U->img[all_s[j]]];
    qsort(sorted, (size_t)na, sizeof *sorted, pb_screen__cmp_dbl);
    double med = na == 0 ? NAN : na % 2 ? sorted[na / 2] : 0.5 * (sorted[na / 2 - 1] + sorted[na / 2]);
    for (int32_t j = 0; j < na; j++) {
      double u = Uall[0][U->img[all_s[j]]];
      U->med[all_s[j]] = u > med ? 1 : u < med ? 2 : 0;
    }
  }
  free(all_s);
  free(list);
  free(in);
  free(in_ns);
  free(sv);
  free(sorted);
}

/* Table 28: rankings of U over prefixed subsets of the primary probe set;
 * Table 32: the same index sets over the TTA set. */
static void pb_screen__subset_ranks(const struct pb_screen__ctx *X, const struct pb_screen__uwork *W,
                                    struct pb_screen__unit *U)
{
  const struct pb_meta *meta = X->meta;
  const int32_t t = W->t, m = W->m, n = U->n, nn = n > 0 ? n : 1;
  U->sub = pb_calloc((size_t)(X->n_subsets > 0 ? X->n_subsets : 1), sizeof *U->sub);
  double *sv = pb_malloc((size_t)nn * sizeof *sv);
  for (int half = 0; half < 2 && X->n_subsets > 0; half++) { /* the primary set's subsets, then the TTA set's */
    if (half && X->n_subsets == X->n_subsets_u) break;
    const struct pb_screen__pset *ps = &X->ps[half ? X->tta : 0];
    const struct pb_source *P = &meta->sources[ps->src];
    const int32_t *jn = X->join[t][ps->src];
    struct pb_screen__rec *rows = pb_malloc((size_t)ps->n * sizeof *rows);
    for (int32_t a = 0; a < ps->n; a++) rows[a] = pb_screen__rec_row(X, ps->src, m * P->n_conditions + ps->cond[a]);
    for (int32_t j = half ? X->n_subsets_u : 0; j < (half ? X->n_subsets : X->n_subsets_u); j++) {
      for (int32_t q = 0; q < n; q++) {
        int32_t ji = jn[U->img[q]];
        double sum = 0;
        for (int32_t a = 0; a < X->sub_m[j]; a++) sum += rows[X->sub_idx[j][a]].m[ji];
        sv[q] = -sum / X->sub_m[j];
      }
      pb_screen_rank(sv, n, NULL, 0, &U->sub[j]);
    }
    free(rows);
  }
  free(sv);
}

/* Scores, fits and rankings of unit (target t, model m).  Returns PB_FAIL
 * (message in *why) when a logistic fit does not converge. */
int pb_screen__unit_prepare(const struct pb_screen__ctx *X, int32_t t, int32_t m, struct pb_screen__unit *U,
                            char *why, size_t why_len)
{
  const struct pb_meta *meta = X->meta;
  const struct pb_screen_options *opt = X->opt;
  struct pb_screen__uwork W;
  memset(&W, 0, sizeof W);
  W.t = t, W.m = m, W.T = X->targets[t], W.k = meta->topk;
  W.src = &meta->sources[W.T];
  W.N = W.src->n_images, W.nc = W.src->n_conditions, W.K = W.src->n_classes;
  W.an_split = opt->swapped ? PB_SPLIT_DEV : PB_SPLIT_EVAL;
  W.fit_split = opt->swapped ? PB_SPLIT_EVAL : PB_SPLIT_DEV;
  memset(U, 0, sizeof *U);
  W.clean = pb_screen__rec_row(X, W.T, m * W.nc + W.src->clean);
  W.cond = pb_malloc((size_t)W.nc * sizeof *W.cond);
  for (int32_t c = 0; c < W.nc; c++) W.cond[c] = pb_screen__rec_row(X, W.T, m * W.nc + c);
  pb_screen__probe_means(X, &W, U);
  int status = pb_screen__fits(X, &W, U, why, why_len);
  pb_screen__scores(X, &W, U);
  pb_screen__protocol_scores(X, &W, U);
  pb_screen__classes(&W, U);
  pb_screen__rankings(X, &W, U);
  pb_screen__terciles(X, &W, U);
  pb_screen__subset_ranks(X, &W, U);
  free(W.ns_list);
  free(W.cc_list);
  for (int j = 0; j < 3; j++) free(W.ord[j]);
  for (int32_t d = 0; d < opt->n_derange && W.der_ord; d++) free(W.der_ord[d]);
  free(W.der_ord);
  free(W.cd_sum);
  free(W.ucc_sum);
  free(W.uall_sum);
  free(W.cd_n);
  free(W.ucc_n);
  for (int32_t p = 0; p < X->n_ps; p++) {
    free(W.Uall[p]);
    free(W.A3all[p]);
  }
  free(W.Uall);
  free(W.A3all);
  free(W.ret);
  free(W.cond);
  return status;
}

static void pb_screen__put(double *out, const struct pb_screen_metric *m)
{
  out[0] = m->n;
  out[1] = m->n_fail;
  out[2] = m->auroc;
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) out[3 + b] = m->cov[b];
}

/* Mean metrics over ranked draws (the derangement control). */
static void pb_screen__mean_metrics(const struct pb_screen_ranked *r, int32_t nd, const struct pb_screen_outcome *y,
                                    int budgets, double *out)
{
  struct pb_screen_metric m;
  double acc[4] = {0, 0, 0, 0};
  int32_t n = 0, nf = 0;
  for (int32_t d = 0; d < nd; d++) {
    pb_screen_ranked_metrics(&r[d], y, budgets, &m);
    acc[0] += m.auroc;
    for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) acc[1 + b] += m.cov[b];
    n = m.n;
    nf = m.n_fail;
  }
  out[0] = n;
  out[1] = nf;
  out[2] = nd > 0 ? acc[0] / nd : NAN;
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) out[3 + b] = nd > 0 ? acc[1 + b] / nd : NAN;
}

/* Table 18's one seeded random tie-break of S, U, delta or ret (row r) in cell
 * (T, m, c) into rec's row r: coverage at each budget; n and n_fail those of
 * the score's own row, set before it (the same ranking), AUROC nan. */
static void pb_screen__tiebreak(const struct pb_screen__ctx *X, int32_t T, int32_t m, int32_t c, int32_t r,
                                const struct pb_screen__unit *U, const struct pb_screen_outcome *oc, double *rec)
{
  static const int base[4] = {PB_SR_S, PB_SR_U, PB_SR_DELTA, PB_SR_RET};
  _Static_assert(PB_SR_S < PB_SR_S_TB && PB_SR_U < PB_SR_S_TB && PB_SR_DELTA < PB_SR_S_TB && PB_SR_RET < PB_SR_S_TB,
                 "a tie-break row follows its score's row");
  const int b = base[r - PB_SR_S_TB];
  const double *own = rec + X->L.row_off + PB_SCREEN_MET * b;
  double *out = rec + X->L.row_off + PB_SCREEN_MET * r;
  struct pb_rng rng;
  pb_rng_init(&rng, X->opt->seed, PB_RNG_SCREEN_TIEBREAK, ((uint64_t)T << 40) | ((uint64_t)m << 20) | (uint64_t)c,
              (uint32_t)(r - PB_SR_S_TB));
  out[0] = own[0];
  out[1] = own[1];
  out[2] = NAN;
  pb_screen_ranked_tiebreak(&U->rk[b], oc, &rng, out + 3);
}

/* Cell (T, m, c)'s metrics of every score row into rec, against its outcomes oc. */
static void pb_screen__cell_rows(const struct pb_screen__ctx *X, int32_t T, int32_t m, int32_t c,
                                 const struct pb_screen__unit *U, const struct pb_screen_outcome *oc, int32_t *order,
                                 double *rec)
{
  const struct pb_screen_layout *L = &X->L;
  const int32_t nd = X->opt->n_derange, n = U->n;
  const uint8_t *y = oc->y;
  struct pb_screen_metric mt;
  for (int32_t r = 0; r < L->n_rows; r++) {
    double *out = rec + L->row_off + PB_SCREEN_MET * r;
    if (r == PB_SR_U_DERANGE) {
      pb_screen__mean_metrics(U->der, nd, oc, 7, out);
    } else if (r == PB_SR_DELTA_DERANGE) {
      pb_screen__mean_metrics(U->der_delta, nd, oc, 7, out);
    } else if (r >= PB_SR_S_TB && r <= PB_SR_RET_TB) {
      pb_screen__tiebreak(X, T, m, c, r, U, oc, rec);
    } else if (r == PB_SR_RANDOM) {
      /* one seeded random order per cell: no ties */
      struct pb_rng rng;
      pb_rng_init(&rng, X->opt->seed, PB_RNG_SCREEN_RANDOM,
                  ((uint64_t)T << 40) | ((uint64_t)m << 20) | (uint64_t)c, 0);
      for (int32_t j = 0; j < n; j++) order[j] = j;
      pb_rng_shuffle(&rng, order, n);
      pb_screen_order_metrics(order, n, y, 7, &mt);
      pb_screen__put(out, &mt);
    } else {
      pb_screen_ranked_metrics(&U->rk[r], oc, 7, &mt);
      pb_screen__put(out, &mt);
    }
  }
}

/* Each stratum's rankings against its own images' outcomes (y; st: the
 * strata's outcome lists), Table 27's fields of the cell into out. */
static void pb_screen__cell_strata(const struct pb_screen__unit *U, int32_t nd, const uint8_t *y,
                                   struct pb_screen_outcome st[PB_SCREEN_STRATA], double *out)
{
  const int32_t n = U->n;
  struct pb_screen_metric mt;
  /* a walk over a third of the images each */
  int64_t ka[PB_SCREEN_STRATA] = {0}, ra[PB_SCREEN_STRATA] = {0}, kb[PB_SCREEN_STRATA] = {0}, rb[PB_SCREEN_STRATA] = {0};
  for (int s = 0; s < PB_SCREEN_STRATA; s++) st[s].n = st[s].n_fail = 0;
  for (int32_t q = 0; q < n; q++) { /* both lists written, one advanced: no branch on the outcome */
    const int s = U->stratum[q], f = y[q], md = U->med[q];
    st[s].fail[st[s].n_fail] = q;
    st[s].keep[st[s].n - st[s].n_fail] = q;
    st[s].n_fail += f;
    st[s].n++;
    ka[s] += md == 1, ra[s] += (md == 1) & !f;
    kb[s] += md == 2, rb[s] += (md == 2) & !f;
  }
  for (int s = 0; s < PB_SCREEN_STRATA; s++) {
    double *o = out + PB_SCREEN_STRATUM_F * s, tmp[6];
    pb_screen_ranked_metrics(&U->st_S[s], &st[s], 0, &mt);
    o[0] = mt.n;
    o[1] = mt.n_fail;
    o[2] = mt.auroc;
    pb_screen_ranked_metrics(&U->st_U[s], &st[s], 0, &mt);
    o[3] = mt.auroc;
    pb_screen_ranked_metrics(&U->st_Uns[s], &st[s], 0, &mt);
    o[4] = mt.auroc;
    pb_screen__mean_metrics(U->st_der + s * nd, nd, &st[s], 0, tmp);
    o[5] = tmp[2];
    o[6] = ka[s] > 0 && kb[s] > 0 ? (double)ra[s] / ka[s] - (double)rb[s] / kb[s] : NAN;
  }
}

/* Every cell of a prepared unit: one outcome vector, O(n) per score. */
void pb_screen__unit_cells(const struct pb_screen__ctx *X, int32_t t, int32_t m, const struct pb_screen__unit *U,
                           double *recs, uint64_t *bits, int32_t n_words, struct pb_screen_boot *B)
{
  /* class bootstrap: score orders are per unit, outcomes per cell */
  const double *bscore[PB_SB_NSCORES + PB_SB_NDYN];
  int32_t *border[PB_SB_NSCORES + PB_SB_NDYN], bn[PB_SB_NSCORES + PB_SB_NDYN];
  for (int j = 0; j < B->n_scores; j++) bscore[j] = U->score[pb_screen_boot_score_row(B, j)];
  if (B->draws > 0) pb_screen_boot_orders(bscore, B->n_scores, U->n, border, bn);
  const struct pb_meta *meta = X->meta;
  const struct pb_screen_layout *L = &X->L;
  int32_t T = X->targets[t], nd = X->opt->n_derange;
  const struct pb_source *src = &meta->sources[T];
  int32_t nc = src->n_conditions, n = U->n, nn = n > 0 ? n : 1;
  uint8_t *y = pb_malloc((size_t)nn);
  int32_t *order = pb_malloc((size_t)nn * sizeof *order);
  struct pb_screen_outcome oc = {0, 0, y, pb_malloc((size_t)nn * sizeof(int32_t)), pb_malloc((size_t)nn * sizeof(int32_t))};
  struct pb_screen_outcome st[PB_SCREEN_STRATA]; /* the outcomes of each stratum's images (their rankings' universe) */
  for (int s = 0; s < PB_SCREEN_STRATA; s++)
    st[s] = (struct pb_screen_outcome){0, 0, y, pb_malloc((size_t)nn * sizeof(int32_t)), pb_malloc((size_t)nn * sizeof(int32_t))};
  int64_t cell = 0;
  for (int32_t c = 0; c < nc; c++) {
    if (c == src->clean) continue;
    double *rec = recs + cell * L->rec_len;
    uint64_t *bw = bits + cell * n_words;
    cell++;
    struct pb_screen__rec r1 = pb_screen__rec_row(X, T, m * nc + c);
    /* outcomes, their bits and failure counts in one pass without a branch
     * on the outcome (failures are near half of the images, so a branch on
     * one mispredicts for most of them) */
    int32_t nf = 0, nfns = 0;
    for (int32_t w = 0; w < n_words; w++) {
      const int32_t q0 = 64 * w, q1 = q0 + 64 < n ? q0 + 64 : n;
      uint64_t word = 0;
      for (int32_t q = q0; q < q1; q++) {
        const uint8_t f = r1.pred[U->img[q]] != U->label[q];
        y[q] = f;
        word |= (uint64_t)f << (q - q0);
        nfns += f & U->ns[q];
      }
      bw[w] = word;
      nf += __builtin_popcountll(word);
    }
    pb_screen_outcome_set(&oc, y, n);
    for (int f = 0; f < L->rec_len; f++) rec[f] = NAN;
    struct pb_screen_metric mt;
    rec[PB_SI_TIER] = X->tier[t][c];
    rec[PB_SI_N] = n;
    rec[PB_SI_NFAIL] = nf;
    rec[PB_SI_NNS] = U->n_ns;
    rec[PB_SI_NFAIL_NS] = nfns;
    rec[PB_SI_NUNMATCHED] = U->n_unmatched;
    rec[PB_SI_A3APPROX] = U->a3_approx;
    /* the derangement cannot move the AUROC when every non-singleton class is outcome-pure */
    int pure = 1;
    for (int32_t g = 0; g < U->n_cls && pure; g++) {
      int32_t a = U->cls_start[g], b = U->cls_start[g + 1];
      for (int32_t j = a + 1; j < b && pure; j++) pure = y[U->cls_pos[j]] == y[U->cls_pos[a]];
    }
    rec[PB_SI_DEGENERATE] = U->n_ns > 0 ? pure : NAN;
    pb_screen__cell_rows(X, T, m, c, U, &oc, order, rec);
    pb_screen__cell_strata(U, nd, y, st, rec + L->strata_off);
    if (B->draws > 0) pb_screen_boot_cell(B, t, (int)rec[PB_SI_TIER], n, U->label, y, bscore, border, bn);
    if (rec[PB_SI_TIER] >= 0 && (L->subset_tiers >> (int)rec[PB_SI_TIER]) & 1)
      for (int32_t j = 0; j < X->n_subsets; j++) {
        pb_screen_ranked_metrics(&U->sub[j], &oc, 2, &mt);
        rec[L->subset_off + 2 * j] = mt.auroc;
        rec[L->subset_off + 2 * j + 1] = mt.cov[1];
      }
  }
  free(oc.fail);
  free(oc.keep);
  for (int s = 0; s < PB_SCREEN_STRATA; s++) {
    free(st[s].fail);
    free(st[s].keep);
  }
  free(order);
  free(y);
  for (int j = 0; j < B->n_scores && B->draws > 0; j++) free(border[j]);
}
