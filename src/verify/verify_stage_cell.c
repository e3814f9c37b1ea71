/* Verification of one cell (docs/verify.md): its classes grouped and
 * enumerated (or checked by exact integer programs where too large),
 * each against the bounds and policy engines on the class alone, then the
 * classes combined exactly and the cell checked against its reference and,
 * where small, the whole-cell Cartesian product. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "pairbound/error_mpi.h"
#include "verify_stage_internal.h"

/* The records in (label, index) order: this module's own grouping. */
static int pb_verify__cmp_li(const void *pa, const void *pb)
{
  const struct pb_verify__li *a = pa, *b = pb;
  if (a->label != b->label) return a->label < b->label ? -1 : 1;
  return (a->idx > b->idx) - (a->idx < b->idx);
}

/* li[0 .. n) = the records in (label, index) order: a counting sort over the
 * labels' range when it is small (stable: indices ascend within a label),
 * else qsort; both give the one such order. */
void pb_verify__group(const int32_t *label, int32_t n, struct pb_verify__li *li)
{
  int32_t lo = n > 0 ? label[0] : 0, hi = lo;
  for (int32_t i = 1; i < n; i++) lo = label[i] < lo ? label[i] : lo, hi = label[i] > hi ? label[i] : hi;
  if ((int64_t)hi - lo >= 4096) {
    for (int32_t i = 0; i < n; i++) li[i] = (struct pb_verify__li){label[i], i};
    qsort(li, (size_t)n, sizeof *li, pb_verify__cmp_li);
    return;
  }
  int32_t cnt[4096 + 1] = {0};
  for (int32_t i = 0; i < n; i++) cnt[label[i] - lo + 1]++;
  for (int32_t l = 0; l < hi - lo; l++) cnt[l + 1] += cnt[l];
  for (int32_t i = 0; i < n; i++) li[cnt[label[i] - lo]++] = (struct pb_verify__li){label[i], i};
}

/* Policy scratch; @p memo: the thread's memo slot (created on first use,
 * freed by the caller), or NULL for none. */
void pb_verify__scratch_policies(struct pb_verify__scratch *s, const struct pb_verify_options *opt,
                                 struct pb_verify_memo **memo)
{
  s->tally = pb_malloc((size_t)pb_verify_tally_len(opt->max_class) * sizeof *s->tally);
  /* every cell has the same policy and weight counts, so one payload size */
  const struct pb_verify_policy_setup dims = {.n_pol = opt->n_taus > 0 ? opt->n_taus : PB_PROTOCOL_N_Q,
                                              .n_lambda = opt->n_lambdas};
  s->memo_pack = pb_verify_pclass_packed_size(&dims);
  if (memo && !*memo)
    *memo = pb_verify_memo_new(s->memo_pack + (3 + PB_VERIFY_NPRES) * sizeof(double), (size_t)32 << 20);
  s->memo = memo ? *memo : NULL;
  s->pq = pb_malloc(sizeof *s->pq);
  s->pacc = pb_verify_pacc_new();
  s->pacc1 = pb_verify_pacc_new();
  if (!s->pacc || !s->pacc1) PB_ERROR("out of memory");
  s->pv_mine = pb_malloc(sizeof *s->pv_mine);
  s->pv_eng = pb_malloc(sizeof *s->pv_eng);
  s->pv_cart = pb_malloc(sizeof *s->pv_cart);
  s->pres = pb_malloc(sizeof *s->pres);
}

static void pb_verify__scratch_grow(struct pb_verify__scratch *s, int32_t n)
{
  if (n < 1) n = 1; /* a cell without evaluation records still writes cbeg[0] */
  if (n <= s->cap) return;
  s->cap = n;
  s->li = pb_realloc(s->li, (size_t)n * sizeof *s->li);
  s->cls = pb_realloc(s->cls, (size_t)n * sizeof *s->cls);
  s->cbeg = pb_realloc(s->cbeg, ((size_t)n + 1) * sizeof *s->cbeg);
  s->clabel = pb_realloc(s->clabel, (size_t)n * sizeof *s->clabel);
  s->lists = pb_realloc(s->lists, (size_t)n * sizeof *s->lists);
  s->W = pb_realloc(s->W, (size_t)n * sizeof *s->W);
  s->R = pb_realloc(s->R, (size_t)n * sizeof *s->R);
}

void pb_verify__scratch_free(struct pb_verify__scratch *s)
{
  free(s->li), free(s->cls), free(s->cbeg), free(s->clabel), free(s->lists);
  free(s->W), free(s->R), free(s->tally), free(s->pq), free(s->pv_mine), free(s->pv_eng), free(s->pv_cart), free(s->pres);
  pb_verify_pacc_free(s->pacc);
  pb_verify_pacc_free(s->pacc1);
  memset(s, 0, sizeof *s);
}

/* The hook's change: D+_01 at I5 at the first weight, by 1e-9 (above the tolerance). */
static void pb_verify__corrupt(struct pb_policy_result *r)
{
  if (r->n_pol >= 2) r->D[PB_LEVEL_I5][0][0][1] += 1e-9;
}

/* Cell level of the policy verification: combined classes against the
 * engine on the whole cell, structural checks, and on tiny cells the
 * Cartesian brute force against both. */
static void pb_verify__cell_policies(const struct pb_cell_view *d, const struct pb_verify_policy_setup *ps,
                                     const struct pb_verify__ref *ref, struct pb_verify__scratch *sc,
                                     struct pb_verify__cellstate *cs, int32_t ncls, int cartesian)
{
  double *rec = cs->rec;
  if (rec[PB_VF_POL_CLASSES] != ncls) return; /* a class failed: reported already */
  struct pb_verify_pvalues *v = sc->pv_mine, *e = sc->pv_eng;
  pb_verify_pacc_values(sc->pacc, ps, v);
  pb_verify__pstructure(cs, -1, v, ps, -1);
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++)
    for (int32_t li = 0; li < ps->n_lambda; li++)
      for (int32_t j = 0; j < ps->n_pol; j++)
        for (int32_t o = 0; o < ps->n_pol; o++)
          if (o != j && v->D[lv][li][j][o] < v->J[lv][li][j][1] - v->J[lv][li][o][0] - PB_VERIFY_TOL)
            rec[PB_VF_POL_SHARED_STRICT]++;
  const struct pb_policy_setup pps = {.n_pol = ps->n_pol, .tau = ps->tau, .n_lambda = ps->n_lambda,
                                      .lambda = ps->lambda};
  if (pb_policy_cell(d, &pps, sc->pres) != 0) {
    pb_verify__failf(cs, -1, "policy engine rejected the cell");
    return;
  }
  if (ref->corrupt && ref->corrupt_label < 0) pb_verify__corrupt(sc->pres);
  pb_verify__engine_pvalues(sc->pres, ps, e);
  struct pb_verify__pw w[PB_VERIFY_NPRES];
  pb_verify__pcompare(v, e, ps, 0, w);
  for (int s = 0; s < PB_VERIFY_NPRES; s++) rec[PB_VF_POL_RES + s] = w[s].r;
  pb_verify__presidual_fail(cs, -1, "policy engine", w, ps);
  if (cartesian) {
    struct pb_verify_pvalues *x = sc->pv_cart;
    if (pb_verify_cartesian_policies(sc->cls, sc->lists, (const uint16_t(*)[PB_VERIFY_MAX_POL])sc->W,
                                     (const uint16_t(*)[PB_VERIFY_MAX_POL])sc->R, ncls, ps, x) != 0)
      PB_ERROR("out of memory");
    struct pb_verify__pw w1[PB_VERIFY_NPRES], w2[PB_VERIFY_NPRES];
    pb_verify__pcompare(x, v, ps, 1, w1);
    pb_verify__pcompare(x, e, ps, 1, w2);
    double m = 0.0;
    for (int s = 0; s < PB_VERIFY_NPRES; s++) m = fmax(m, fmax(w1[s].r, w2[s].r));
    rec[PB_VF_POL_CART_RES] = m;
    pb_verify__presidual_fail(cs, -1, "class combination (Cartesian check)", w1, ps);
    pb_verify__presidual_fail(cs, -1, "policy engine (Cartesian check)", w2, ps);
  }
}

/* The class's largest policy residuals into the cell's per-target maxima. */
static void pb_verify__cres_update(double *rec, const double res[PB_VERIFY_NPRES], int32_t y)
{
  for (int t = 0; t < PB_VERIFY_NPT; t++)
    for (int lv = 0; lv < (t == PB_VERIFY_PT_OBS ? 1 : PB_VERIFY_NLEVELS); lv++) {
      const double x = res[PB_VERIFY_PSLOT(t, lv)];
      if (rec[PB_VF_POL_CRES_LABEL + t] < 0 || x > rec[PB_VF_POL_CRES + t])
        rec[PB_VF_POL_CRES + t] = x, rec[PB_VF_POL_CRES_LABEL + t] = y;
    }
}

/* Structural-check counters a class adds (pb_verify__pstructure). */
static const int pb_verify__chk_fields[3] = {PB_VF_POL_CHK_LEMMA1, PB_VF_POL_CHK_COR1, PB_VF_POL_CHK_STRUCT};

/* A memo payload: the packed class, the check counters it added, its residuals. */
static void pb_verify__memo_io(struct pb_verify__scratch *sc, const struct pb_verify_policy_setup *ps,
                               unsigned char *pay, double chk[3], double res[PB_VERIFY_NPRES], int pack)
{
  pb_verify_pclass_pack(sc->pq, ps, pay, pack);
  unsigned char *x = pay + sc->memo_pack;
  if (pack) memcpy(x, chk, 3 * sizeof *chk), memcpy(x + 3 * sizeof *chk, res, PB_VERIFY_NPRES * sizeof *res);
  else memcpy(chk, x, 3 * sizeof *chk), memcpy(res, x + 3 * sizeof *chk, PB_VERIFY_NPRES * sizeof *res);
}

/* Class level of the policy verification, on the class's canonical form
 * (src/verify/verify_stage_memo.c): its policy counts into the cell's accumulator, its
 * structure, and the class alone against the policy engine; or, for a key
 * this thread has checked and passed, the stored outcome.  @p y names the
 * class in messages. */
static void pb_verify__class_policies_check(const struct pb_verify_records *r, const struct pb_cell_view *cv,
                                            int32_t y, const struct pb_verify_policy_setup *ps,
                                            const struct pb_verify__ref *ref, struct pb_verify__scratch *sc,
                                            struct pb_verify__cellstate *cs, double *t_enum)
{
  double *rec = cs->rec, chk[3], res[PB_VERIFY_NPRES];
  const int32_t n = r->n;
  unsigned char key[PB_VERIFY_MEMO_KEY];
  int32_t ord[PB_VERIFY_MAX_N], q0[PB_VERIFY_MAX_N], q1[PB_VERIFY_MAX_N];
  pb_verify_memo_canon(r, ps, key, ord, q0, q1);
  /* the test hook corrupts one engine result of this cell: nothing is reused around it */
  struct pb_verify_memo *memo = ref->corrupt ? NULL : sc->memo;
  unsigned char *hit = memo ? pb_verify_memo_find(memo, key) : NULL;
  struct pb_verify_pclass *pq = sc->pq;
  if (hit) {
    pb_verify__memo_io(sc, ps, hit, chk, res, 0);
    rec[PB_VF_POL_CLASSES]++;
    pb_verify_pacc_add(sc->pacc, pq, ps);
    for (int f = 0; f < 3; f++) rec[pb_verify__chk_fields[f]] += chk[f];
    pb_verify__cres_update(rec, res, y);
    return;
  }
  uint8_t c0[PB_VERIFY_MAX_N], z0[PB_VERIFY_MAX_N], c1[PB_VERIFY_MAX_N], z1[PB_VERIFY_MAX_N];
  int32_t p0[PB_VERIFY_MAX_N], p1[PB_VERIFY_MAX_N], lab[PB_VERIFY_MAX_N];
  float s0[PB_VERIFY_MAX_N], s1[PB_VERIFY_MAX_N], m0[PB_VERIFY_MAX_N], m1[PB_VERIFY_MAX_N];
  for (int32_t a = 0; a < n; a++) {
    const int32_t i = ord[a];
    c0[a] = r->c0[i], z0[a] = r->z0[i], c1[a] = r->c1[i], z1[a] = r->z1[i];
    p0[a] = q0[i], p1[a] = q1[i], lab[a] = 0;
    s0[a] = cv->s0[i], s1[a] = cv->s1[i], m0[a] = cv->m0[i], m1[a] = cv->m1[i];
  }
  const struct pb_verify_records rc = {n, c0, z0, c1, z1, p0, p1, m0, m1, s1};
  struct pb_cell_view cc = *cv;
  cc.label = lab, cc.pred0 = p0, cc.s0 = s0, cc.m0 = m0, cc.pred1 = p1, cc.s1 = s1, cc.m1 = m1;
  struct pb_verify_class qc;
  const double t0 = omp_get_wtime();
  const int enum_ok = pb_verify_class_enumerate_sets(&rc, &qc, NULL, sc->tally) == 0;
  *t_enum += omp_get_wtime() - t0;
  if (!enum_ok || pb_verify_class_policies(&rc, &qc, sc->tally, ps, pq) != 0) {
    pb_verify__failf(cs, y, "policy counts of the class cannot be enumerated");
    return;
  }
  const double failed0 = rec[PB_VF_FAILED];
  for (int f = 0; f < 3; f++) chk[f] = rec[pb_verify__chk_fields[f]];
  rec[PB_VF_POL_CLASSES]++;
  pb_verify_pacc_add(sc->pacc, pq, ps);
  pb_verify_pacc_reset(sc->pacc1, ps);
  pb_verify_pacc_add(sc->pacc1, pq, ps);
  pb_verify_pacc_values(sc->pacc1, ps, sc->pv_mine);
  pb_verify__pstructure(cs, y, sc->pv_mine, ps, pq->corollary1);
  const struct pb_policy_setup pps = {.n_pol = ps->n_pol, .tau = ps->tau, .n_lambda = ps->n_lambda,
                                      .lambda = ps->lambda};
  if (pb_policy_cell(&cc, &pps, sc->pres) != 0) {
    pb_verify__failf(cs, y, "policy engine rejected the class");
    return;
  }
  if (ref->corrupt && ref->corrupt_label == y) pb_verify__corrupt(sc->pres);
  pb_verify__engine_pvalues(sc->pres, ps, sc->pv_eng);
  struct pb_verify__pw w[PB_VERIFY_NPRES];
  pb_verify__pcompare(sc->pv_mine, sc->pv_eng, ps, 0, w);
  for (int t = 0; t < PB_VERIFY_NPRES; t++) res[t] = w[t].r;
  pb_verify__cres_update(rec, res, y);
  pb_verify__presidual_fail(cs, y, "policy engine", w, ps);
  if (memo && rec[PB_VF_FAILED] == failed0) {
    for (int f = 0; f < 3; f++) chk[f] = rec[pb_verify__chk_fields[f]] - chk[f];
    pb_verify__memo_io(sc, ps, pb_verify_memo_put(memo, key), chk, res, 1);
  }
}

/* The class alone through the bounds engine: names the class on a mismatch. */
static void pb_verify__class_engine(const struct pb_cell_view *cv, const struct pb_verify_values *v,
                                    struct pb_verify__cellstate *cs)
{
  double *rec = cs->rec;
  const int32_t y = cv->label[0];
  struct pb_cell_bounds b;
  if (pb_bounds_cell(cv, 1, &b) != 0) {
    pb_verify__failf(cs, y, "bounds engine rejected the class");
    return;
  }
  struct pb_verify_values e;
  double res[PB_VERIFY_NTARGETS * PB_VERIFY_NCMP];
  pb_verify__engine_values(&b, &e);
  pb_verify__compare(v, &e, NULL, res);
  for (int j = 0; j < PB_VERIFY_NTARGETS * PB_VERIFY_NCMP; j++)
    if (res[j] > rec[PB_VF_CRES + j]) rec[PB_VF_CRES + j] = res[j], rec[PB_VF_CRES_LABEL + j] = y;
  pb_verify__residual_fail(cs, y, "bounds engine", v, &e, res);
}

/* Cell level: the combined classes against the reference (bounds engine or
 * --against file), structural checks, the Cartesian product on small cells,
 * and the cell's policies. */
static void pb_verify__cell_combine(const struct pb_cell_view *d, const struct pb_verify_policy_setup *ps,
                                    const struct pb_verify__ref *ref, struct pb_verify__scratch *sc,
                                    struct pb_verify__cellstate *cs, int32_t ncls, int cartesian, double product)
{
  double *rec = cs->rec;
  struct pb_verify_values v, e;
  if (pb_verify_combine(sc->cls, ncls, &v) != 0) PB_ERROR("out of memory");
  for (int t = 0; t < PB_VERIFY_NTARGETS; t++) pb_verify__vals(&v, t, rec + PB_VF_VAL + 7 * t);
  pb_verify__structure(cs, -1, &v);
  int mask[PB_VERIFY_NCMP] = {1, 1, 1, 1};
  const char *against = "bounds engine";
  if (ref->in_process) {
    struct pb_cell_bounds b;
    if (pb_bounds_cell(d, 1, &b) != 0) pb_verify__failf(cs, -1, "bounds engine rejected the cell");
    pb_verify__engine_values(&b, &e);
  } else {
    e = *ref->file;
    against = "results file";
    if (!ref->file_i5) {
      /* the file's run skipped I5 here: compare what it has */
      mask[3] = 0;
      rec[PB_VF_I5_MISSING] = 1;
    }
  }
  double res[PB_VERIFY_NTARGETS * PB_VERIFY_NCMP];
  pb_verify__compare(&v, &e, mask, res);
  if (!ref->in_process && !ref->file_i5) res[PB_VERIFY_NCMP * 2 + 1] = 0; /* dM_k at I0 needs the I5 pass too */
  memcpy(rec + PB_VF_RES, res, sizeof res);
  pb_verify__residual_fail(cs, -1, against, &v, &e, res);

  if (cartesian) {
    /* third check: brute force over the product, against the class
     * combination and against the reference */
    struct pb_verify_values x;
    pb_verify_cartesian(sc->cls, sc->lists, ncls, &x);
    rec[PB_VF_CARTESIAN] = product;
    double r1[PB_VERIFY_NTARGETS * PB_VERIFY_NCMP], r2[PB_VERIFY_NTARGETS * PB_VERIFY_NCMP];
    pb_verify__compare(&x, &v, NULL, r1);
    pb_verify__compare(&x, &e, mask, r2);
    if (!ref->in_process && !ref->file_i5) r2[PB_VERIFY_NCMP * 2 + 1] = 0;
    double m = 0.0;
    for (int j = 0; j < PB_VERIFY_NTARGETS * PB_VERIFY_NCMP; j++) m = fmax(m, fmax(r1[j], r2[j]));
    rec[PB_VF_CART_RES] = m;
    pb_verify__residual_fail(cs, -1, "class combination (Cartesian check)", &x, &v, r1);
    pb_verify__residual_fail(cs, -1, "Cartesian product vs reference", &x, &e, r2);
  }
  if (ps) pb_verify__cell_policies(d, ps, ref, sc, cs, ncls, cartesian);
}

/* Verify one cell; the record and failure text are filled in. */
/* One class too large to enumerate (docs/verify.md): its I5 endpoints by
 * exact integer programs, against the bounds engine (H) and, with policies,
 * the policy engine (H_j, L_j, J_j, D+_jl) on the class alone. */
static void pb_verify__class_lp(const struct pb_cell_view *d, const struct pb_verify__li *li, int32_t ny, int32_t y,
                                float tau, const struct pb_verify_policy_setup *ps, const struct pb_verify__ref *ref,
                                struct pb_verify__cellstate *cs)
{
  double *rec = cs->rec;
  uint8_t *u8 = pb_malloc(4 * (size_t)ny);
  int32_t *i32 = pb_malloc(3 * (size_t)ny * sizeof *i32);
  float *f32 = pb_malloc(4 * (size_t)ny * sizeof *f32);
  uint8_t *c0 = u8, *z0 = u8 + ny, *c1 = u8 + 2 * ny, *z1 = u8 + 3 * ny;
  int32_t *p0 = i32, *p1 = i32 + ny, *lab = i32 + 2 * ny;
  float *s0 = f32, *s1 = f32 + ny, *m0 = f32 + 2 * ny, *m1 = f32 + 3 * ny;
  for (int32_t q = 0; q < ny; q++) {
    const int32_t i = li[q].idx;
    p0[q] = d->pred0[i], p1[q] = d->pred1[i], lab[q] = y;
    s0[q] = d->s0[i], s1[q] = d->s1[i], m0[q] = d->m0[i], m1[q] = d->m1[i];
    c0[q] = p0[q] == y, c1[q] = p1[q] == y;
    z0[q] = s0[q] >= tau, z1[q] = s1[q] >= tau;
  }
  const struct pb_verify_records r = {ny, c0, z0, c1, z1, p0, p1, m0, m1, s1};
  struct pb_verify_lp_class *lp = pb_malloc(sizeof *lp);
  struct pb_policy_result *e = ps ? pb_malloc(sizeof *e) : NULL;
  if (pb_verify_lp_class(&r, ps, lp) != 0) {
    pb_verify__failf(cs, y, "exact LP check of the class (%d records) failed in the solver", (int)ny);
    goto done;
  }
  rec[PB_VF_LP_CLASSES]++;
  rec[PB_VF_LP_PROGRAMS] += lp->n_lp;
  rec[PB_VF_LP_BNB] += lp->n_mip;
  /* the class alone as a cell, for the engines */
  struct pb_cell_view cv = *d;
  cv.n = ny;
  cv.label = lab, cv.pred0 = p0, cv.s0 = s0, cv.m0 = m0, cv.pred1 = p1, cv.s1 = s1, cv.m1 = m1;
  if (ref->in_process) {
    struct pb_cell_bounds b;
    if (pb_bounds_cell(&cv, 1, &b) != 0) {
      pb_verify__failf(cs, y, "bounds engine rejected the class");
      goto done;
    }
    const double res = fmax(pb_verify__res((double)lp->H[0] / ny, b.H_I5[0]),
                            pb_verify__res((double)lp->H[1] / ny, b.H_I5[1]));
    if (isnan(rec[PB_VF_LP_RES]) || res > rec[PB_VF_LP_RES]) rec[PB_VF_LP_RES] = res;
    if (res > PB_VERIFY_TOL)
      pb_verify__failf(cs, y, "H at I5: exact LP [%.6g, %.6g], bounds engine [%.6g, %.6g]", (double)lp->H[0] / ny,
                       (double)lp->H[1] / ny, b.H_I5[0], b.H_I5[1]);
  }
  if (ps) {
    const struct pb_policy_setup pps = {.n_pol = ps->n_pol, .tau = ps->tau, .n_lambda = ps->n_lambda,
                                        .lambda = ps->lambda};
    if (pb_policy_cell(&cv, &pps, e) != 0) {
      pb_verify__failf(cs, y, "policy engine rejected the class");
      goto done;
    }
    if (ref->corrupt && ref->corrupt_label == y) pb_verify__corrupt(e);
    double worst = 0;
    char what[96] = "";
    for (int32_t j = 0; j < ps->n_pol; j++) {
      for (int d2 = 0; d2 < 2; d2++) {
        double x = fmax(pb_verify__res((double)lp->pol_h[j][d2] / ny, e->H[PB_LEVEL_I5][j][d2]),
                        pb_verify__res((double)lp->pol_l[j][d2] / ny, e->L[PB_LEVEL_I5][j][d2]));
        if (x > worst) worst = x, snprintf(what, sizeof what, "H or L of policy %d at I5", (int)j);
      }
      for (int32_t q = 0; q < ps->n_lambda; q++) {
        const double lam = ps->lambda[q];
        for (int d2 = 0; d2 < 2; d2++) {
          const double v = (lam * lp->J[q][j][d2][0] + (1 - lam) * lp->J[q][j][d2][1]) / ny;
          const double x = pb_verify__res(v, e->J[PB_LEVEL_I5][q][j][d2]);
          if (x > worst) worst = x, snprintf(what, sizeof what, "J_%d at I5, lambda %g", (int)j, lam);
        }
        for (int32_t l = 0; l < ps->n_pol; l++) {
          if (l == j) continue;
          const double v = (lam * lp->D[q][j][l][0] + (1 - lam) * lp->D[q][j][l][1]) / ny;
          const double x = pb_verify__res(v, e->D[PB_LEVEL_I5][q][j][l]);
          if (x > worst) worst = x, snprintf(what, sizeof what, "D+_%d%d at I5, lambda %g", (int)j, (int)l, lam);
        }
      }
    }
    if (isnan(rec[PB_VF_LP_POL_RES]) || worst > rec[PB_VF_LP_POL_RES]) rec[PB_VF_LP_POL_RES] = worst;
    if (worst > PB_VERIFY_TOL)
      pb_verify__failf(cs, y, "%s: exact LP and policy engine differ by %.3g", what, worst);
  }
done:
  free(u8), free(i32), free(f32), free(lp), free(e);
}

/* A cell with classes too large to enumerate: the bounds engine's whole-cell
 * I0 and Ik intervals of H and L against the closed forms summed over classes. */
static void pb_verify__cell_closed_forms(const struct pb_cell_view *d, const struct pb_verify__scratch *sc,
                                         int32_t ncls, float tau, struct pb_verify__cellstate *cs)
{
  int64_t H[2][2] = {{0, 0}, {0, 0}}, L[2][2] = {{0, 0}, {0, 0}};
  int32_t cap = 0;
  uint8_t *u8 = NULL;
  for (int32_t c = 0; c < ncls; c++) {
    const int32_t beg = sc->cbeg[c], ny = sc->cbeg[c + 1] - beg, y = sc->li[beg].label;
    if (ny > cap) cap = ny, free(u8), u8 = pb_malloc(4 * (size_t)cap);
    uint8_t *c0 = u8, *z0 = u8 + cap, *c1 = u8 + 2 * cap, *z1 = u8 + 3 * cap;
    for (int32_t q = 0; q < ny; q++) {
      const int32_t i = sc->li[beg + q].idx;
      c0[q] = d->pred0[i] == y, c1[q] = d->pred1[i] == y;
      z0[q] = d->s0[i] >= tau, z1[q] = d->s1[i] >= tau;
    }
    const struct pb_verify_records r = {ny, c0, z0, c1, z1, NULL, NULL, NULL, NULL, NULL};
    int64_t h[2][2], l[2][2];
    pb_verify_closed_forms(&r, h, l);
    for (int lv = 0; lv < 2; lv++)
      for (int e = 0; e < 2; e++) H[lv][e] += h[lv][e], L[lv][e] += l[lv][e];
  }
  free(u8);
  struct pb_cell_bounds b;
  if (pb_bounds_cell(d, 0, &b) != 0) {
    pb_verify__failf(cs, -1, "bounds engine rejected the cell");
    return;
  }
  const double N = d->n;
  const double *eh[2] = {b.H_I0, b.H_Ik}, *el[2] = {b.L_I0, b.L_Ik};
  double worst = 0;
  for (int lv = 0; lv < 2; lv++)
    for (int e = 0; e < 2; e++) {
      const double x = fmax(pb_verify__res(H[lv][e] / N, eh[lv][e]), pb_verify__res(L[lv][e] / N, el[lv][e]));
      if (x > worst) worst = x;
      if (x > PB_VERIFY_TOL)
        pb_verify__failf(cs, -1, "%s at %s: closed form %.6g / %.6g, bounds engine %.6g / %.6g", "H / L",
                         pb_verify_level_names[lv], H[lv][e] / N, L[lv][e] / N, eh[lv][e], el[lv][e]);
    }
  cs->rec[PB_VF_CF_RES] = worst;
}

void pb_verify__cell(const struct pb_cell_view *d, const struct pb_verify_options *opt,
                     const struct pb_verify_policy_setup *ps, const struct pb_verify__ref *ref,
                     struct pb_verify__scratch *sc, struct pb_verify__cellstate *cs, double *t_enum)
{
  double *rec = cs->rec;
  const int32_t n = d->n;
  const float tau = d->tau;
  pb_verify__scratch_grow(sc, n);
  pb_verify__group(d->label, n, sc->li);
  int32_t ncls = 0;
  for (int32_t p = 0; p < n; p++)
    if (p == 0 || sc->li[p].label != sc->li[p - 1].label) sc->cbeg[ncls++] = p;
  sc->cbeg[ncls] = n;
  rec[PB_VF_COVERED] = 1;
  rec[PB_VF_NREC] = n;
  rec[PB_VF_TAU] = tau;
  rec[PB_VF_CLASSES] = ncls;
  for (int j = 0; j < PB_VERIFY_NTARGETS * PB_VERIFY_NCMP; j++) rec[PB_VF_CRES + j] = -1, rec[PB_VF_CRES_LABEL + j] = -1;
  for (int t = 0; t < PB_VERIFY_NPT; t++) rec[PB_VF_POL_CRES + t] = NAN, rec[PB_VF_POL_CRES_LABEL + t] = -1;
  if (n == 0) {
    /* the bounds engine rejects such a cell as well: say so instead of
     * combining zero classes */
    pb_verify__failf(cs, -1, "no evaluation records (n = 0): the store holds no eval image for this cell");
    return;
  }

  /* Whole-cell Cartesian product size, when every class is enumerable. */
  double product = 1.0;
  int skipped = 0;
  for (int32_t c = 0; c < ncls; c++) {
    const int32_t ny = sc->cbeg[c + 1] - sc->cbeg[c];
    if (ny > opt->max_class) skipped = 1;
    for (int32_t f = 2; f <= ny && product <= (double)opt->cartesian_max; f++) product *= f;
  }
  const int cartesian = !skipped && product <= (double)opt->cartesian_max;

  int32_t nenum = 0;
  if (ps) pb_verify_pacc_reset(sc->pacc, ps);
  uint8_t c0[PB_VERIFY_MAX_N], z0[PB_VERIFY_MAX_N], c1[PB_VERIFY_MAX_N], z1[PB_VERIFY_MAX_N];
  int32_t p0[PB_VERIFY_MAX_N], p1[PB_VERIFY_MAX_N], lab[PB_VERIFY_MAX_N];
  float s0[PB_VERIFY_MAX_N], s1[PB_VERIFY_MAX_N], m0[PB_VERIFY_MAX_N], m1[PB_VERIFY_MAX_N];
  for (int32_t c = 0; c < ncls; c++) {
    const int32_t beg = sc->cbeg[c], ny = sc->cbeg[c + 1] - beg, y = sc->li[beg].label;
    if (ny > opt->max_class) {
      if (ny <= opt->lp_max) pb_verify__class_lp(d, sc->li + beg, ny, y, tau, ps, ref, cs);
      else rec[PB_VF_SKIPPED]++;
      continue;
    }
    for (int32_t q = 0; q < ny; q++) {
      const int32_t i = sc->li[beg + q].idx;
      p0[q] = d->pred0[i], p1[q] = d->pred1[i];
      s0[q] = d->s0[i], s1[q] = d->s1[i], m0[q] = d->m0[i], m1[q] = d->m1[i];
      c0[q] = p0[q] == y, c1[q] = p1[q] == y;
      z0[q] = s0[q] >= tau, z1[q] = s1[q] >= tau;
      lab[q] = y;
    }
    const struct pb_verify_records r = {ny, c0, z0, c1, z1, p0, p1, m0, m1, s1};
    /* the class alone as a cell, for the engines: names a mismatching class */
    struct pb_cell_view cv = *d;
    cv.n = ny;
    cv.label = lab, cv.pred0 = p0, cv.s0 = s0, cv.m0 = m0, cv.pred1 = p1, cv.s1 = s1, cv.m1 = m1;
    struct pb_verify_class *q = &sc->cls[nenum];
    struct pb_verify_perm *list = NULL;
    if (cartesian) {
      int64_t f = 1;
      for (int32_t j = 2; j <= ny; j++) f *= j;
      list = pb_malloc((size_t)f * sizeof *list);
    }
    double t0 = omp_get_wtime();
    if (pb_verify_class_enumerate(&r, q, list) != 0) {
      pb_verify__failf(cs, y, "class of %d records cannot be enumerated", (int)ny);
      free(list);
      continue;
    }
    *t_enum += omp_get_wtime() - t0;
    sc->lists[nenum] = list;
    sc->clabel[nenum] = y;
    nenum++;
    rec[PB_VF_PERMS] += (double)q->perms;
    struct pb_verify_values v;
    pb_verify__class_values(q, &v);
    pb_verify__structure(cs, y, &v);
    if (pb_verify__h_narrower(q)) rec[PB_VF_NARROWER_H]++;
    if (ps) {
      /* record order, as the Cartesian product's partner sets */
      pb_verify_policy_masks(&r, ps, sc->W[nenum - 1], sc->R[nenum - 1]);
      pb_verify__class_policies_check(&r, &cv, y, ps, ref, sc, cs, t_enum);
    }
    if (ref->in_process) pb_verify__class_engine(&cv, &v, cs);
  }
  rec[PB_VF_ENUMERATED] = nenum;
  for (int j = 0; j < PB_VERIFY_NTARGETS * PB_VERIFY_NCMP; j++)
    if (rec[PB_VF_CRES_LABEL + j] < 0) rec[PB_VF_CRES + j] = NAN; /* no class compared */
  if (nenum < ncls && ref->in_process) pb_verify__cell_closed_forms(d, sc, ncls, tau, cs);

  if (nenum == ncls) pb_verify__cell_combine(d, ps, ref, sc, cs, ncls, cartesian, product);
  for (int32_t c = 0; c < nenum; c++) free(sc->lists[c]);
}
