/* Independent exact check of the I5 endpoints of one class by integer linear
 * programming over record types (GLPK, rational simplex glp_exact; branch and
 * bound glp_intopt where the exact LP optimum is fractional).  See
 * docs/verify.md ("Classes too large to enumerate").
 *
 * A bijection of a class matters for every I5 quantity only through the
 * number x[r][c] of pairs between clean record type r and perturbed record
 * type c, where records of one type are interchangeable: clean types are
 * "correct and accepted" (the set A), "correct and rejected" and "wrong,
 * predicting label l"; perturbed types are (correct or wrong label l,
 * accepted at tau, policy mask).  Conversely every non-negative integer
 * matrix with the types' counts as row and column sums is realised by a
 * bijection.  The I5 set fixes the correct-correct pairs to the observed k
 * and the same-label wrong pairs to the observed s (these two counts fix all
 * five states).  So each endpoint is an integer program with two side
 * constraints on a transportation polytope, solved here without the label DP
 * of the engines (src/bounds/bounds_kernel_i5.c, src/policy/policy_kernel.c). */
#include "config.h"

#include <glpk.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/verify.h"

struct pb_verify__lptype {
  int32_t correct, label, acc;   /* perturbed: correct, predicted label, accepted at tau */
  uint16_t mask;                 /* perturbed: policy acceptance mask */
  int32_t count;
};

struct pb_verify__lp {
  glp_prob *P;
  int32_t nr, nc;                /* clean / perturbed types */
  int32_t rcount[2 * PB_VERIFY_LP_MAX_N + 2], rlabel[2 * PB_VERIFY_LP_MAX_N + 2];
  struct pb_verify__lptype *ct;  /* perturbed types */
  int32_t k, s;
  int n_mip;
};

/* column of pair (r, c), 1-based */
static inline int pb_verify__col(const struct pb_verify__lp *lp, int32_t r, int32_t c) { return 1 + r * lp->nc + c; }

/* Types, rows (one per type, then k and s) and columns. */
static int pb_verify__lp_build(struct pb_verify__lp *lp, const struct pb_verify_records *rec,
                               const struct pb_verify_policy_setup *ps)
{
  const int32_t n = rec->n;
  lp->ct = malloc((size_t)n * sizeof *lp->ct);
  if (!lp->ct) return -1;
  lp->nr = 2;
  lp->nc = 0;
  lp->rcount[0] = lp->rcount[1] = 0;
  lp->rlabel[0] = lp->rlabel[1] = -1;
  lp->k = lp->s = 0;
  for (int32_t i = 0; i < n; i++) {
    lp->k += rec->c0[i] && rec->c1[i];
    lp->s += !rec->c0[i] && !rec->c1[i] && rec->p0[i] == rec->p1[i];
    if (rec->c0[i]) {
      lp->rcount[rec->z0[i] ? 0 : 1]++;
    } else {
      int32_t r = 2;
      while (r < lp->nr && lp->rlabel[r] != rec->p0[i]) r++;
      if (r == lp->nr) lp->rlabel[lp->nr] = rec->p0[i], lp->rcount[lp->nr++] = 0;
      lp->rcount[r]++;
    }
    uint16_t mask = 0;
    if (ps)
      for (int32_t j = 0; j < ps->n_pol; j++) mask |= (uint16_t)((rec->s1[i] >= ps->tau[j]) << j);
    const struct pb_verify__lptype t = {rec->c1[i] != 0, rec->c1[i] ? -1 : rec->p1[i], rec->z1[i] != 0, mask, 1};
    int32_t c = 0;
    while (c < lp->nc && !(lp->ct[c].correct == t.correct && lp->ct[c].label == t.label && lp->ct[c].acc == t.acc &&
                           lp->ct[c].mask == t.mask))
      c++;
    if (c == lp->nc) lp->ct[lp->nc++] = t;
    else lp->ct[c].count++;
  }
  lp->P = glp_create_prob();
  glp_set_obj_dir(lp->P, GLP_MAX);
  glp_add_rows(lp->P, lp->nr + lp->nc + 2);
  for (int32_t r = 0; r < lp->nr; r++) glp_set_row_bnds(lp->P, 1 + r, GLP_FX, lp->rcount[r], lp->rcount[r]);
  for (int32_t c = 0; c < lp->nc; c++)
    glp_set_row_bnds(lp->P, 1 + lp->nr + c, GLP_FX, lp->ct[c].count, lp->ct[c].count);
  glp_set_row_bnds(lp->P, 1 + lp->nr + lp->nc, GLP_FX, lp->k, lp->k);
  glp_set_row_bnds(lp->P, 2 + lp->nr + lp->nc, GLP_FX, lp->s, lp->s);
  glp_add_cols(lp->P, lp->nr * lp->nc);
  for (int32_t r = 0; r < lp->nr; r++)
    for (int32_t c = 0; c < lp->nc; c++) {
      const int col = pb_verify__col(lp, r, c);
      const int32_t ub = lp->rcount[r] < lp->ct[c].count ? lp->rcount[r] : lp->ct[c].count;
      glp_set_col_bnds(lp->P, col, ub > 0 ? GLP_DB : GLP_FX, 0, ub);
      glp_set_col_kind(lp->P, col, GLP_IV);
      int ind[5] = {0, 1 + r, 1 + lp->nr + c, 0, 0}, len = 2;
      double val[5] = {0, 1, 1, 1, 1};
      if (r < 2 && lp->ct[c].correct) ind[++len] = 1 + lp->nr + lp->nc;                  /* correct-correct */
      if (r >= 2 && !lp->ct[c].correct && lp->ct[c].label == lp->rlabel[r]) ind[++len] = 2 + lp->nr + lp->nc;
      glp_set_mat_col(lp->P, col, len, ind, val);
    }
  return 0;
}

/* Per-pair integer counts of a candidate solution, checked exactly against
 * every constraint.  Returns 0, or -1 if a value is not integral or a
 * constraint fails. */
static int pb_verify__lp_integral(const struct pb_verify__lp *lp, const double *xv, int32_t *x)
{
  const int32_t nv = lp->nr * lp->nc;
  int64_t kk = 0, ss = 0;
  for (int32_t v = 0; v < nv; v++) {
    const double q = nearbyint(xv[v]);
    if (fabs(xv[v] - q) > 1e-9 || q < 0) return -1;
    x[v] = (int32_t)q;
  }
  for (int32_t r = 0; r < lp->nr; r++) {
    int64_t t = 0;
    for (int32_t c = 0; c < lp->nc; c++) t += x[r * lp->nc + c];
    if (t != lp->rcount[r]) return -1;
  }
  for (int32_t c = 0; c < lp->nc; c++) {
    int64_t t = 0;
    for (int32_t r = 0; r < lp->nr; r++) {
      const int32_t v = x[r * lp->nc + c];
      t += v;
      if (r < 2 && lp->ct[c].correct) kk += v;
      if (r >= 2 && !lp->ct[c].correct && lp->ct[c].label == lp->rlabel[r]) ss += v;
    }
    if (t != lp->ct[c].count) return -1;
  }
  return kk == lp->k && ss == lp->s ? 0 : -1;
}

/* Maximise the objective sum over perturbed types c of coef[c] x[A][c]
 * (minimise with dir = -1) exactly; x receives an optimal integer solution.
 * The exact LP optimum bounds the integer one; when its basic solution is
 * integral it is the integer optimum, otherwise branch and bound finds the
 * integer optimum (counted in n_mip) and its solution is checked exactly.
 * Returns 0, or -1 if a solver fails. */
static int pb_verify__lp_solve(struct pb_verify__lp *lp, const double *coef, int dir, int32_t *x, double *xv)
{
  glp_set_obj_dir(lp->P, dir > 0 ? GLP_MAX : GLP_MIN);
  for (int32_t r = 0; r < lp->nr; r++)
    for (int32_t c = 0; c < lp->nc; c++) glp_set_obj_coef(lp->P, pb_verify__col(lp, r, c), r == 0 ? coef[c] : 0.0);
  glp_smcp sm;
  glp_init_smcp(&sm);
  sm.msg_lev = GLP_MSG_OFF;
  if (glp_simplex(lp->P, &sm) != 0 || glp_get_status(lp->P) != GLP_OPT) return -1;
  if (glp_exact(lp->P, &sm) != 0 || glp_get_status(lp->P) != GLP_OPT) return -1;
  const int32_t nv = lp->nr * lp->nc;
  for (int32_t v = 0; v < nv; v++) xv[v] = glp_get_col_prim(lp->P, v + 1);
  if (pb_verify__lp_integral(lp, xv, x) == 0) return 0;
  lp->n_mip++;
  glp_iocp io;
  glp_init_iocp(&io);
  io.msg_lev = GLP_MSG_OFF;
  const double bound = glp_get_obj_val(lp->P);
  if (glp_intopt(lp->P, &io) != 0 || glp_mip_status(lp->P) != GLP_OPT) return -1;
  for (int32_t v = 0; v < nv; v++) xv[v] = glp_mip_col_val(lp->P, v + 1);
  if (pb_verify__lp_integral(lp, xv, x) != 0) return -1;
  return dir * glp_mip_obj_val(lp->P) <= dir * bound + 1e-9 ? 0 : -1;
}

/* Events of A's pairs under solution x: h = wrong accepted (at tau, or by
 * policy j >= 0), l = correct rejected by policy j. */
static void pb_verify__lp_events(const struct pb_verify__lp *lp, const int32_t *x, int32_t j, int32_t *h, int32_t *l)
{
  *h = *l = 0;
  for (int32_t c = 0; c < lp->nc; c++) {
    const struct pb_verify__lptype *t = &lp->ct[c];
    const int acc = j < 0 ? t->acc : (t->mask >> j) & 1;
    if (!t->correct && acc) *h += x[c];
    if (t->correct && !acc && j >= 0) *l += x[c];
  }
}

int pb_verify_lp_class(const struct pb_verify_records *rec, const struct pb_verify_policy_setup *ps,
                       struct pb_verify_lp_class *out)
{
  if (!rec || !out || rec->n < 1 || rec->n > PB_VERIFY_LP_MAX_N || (ps && !rec->s1)) return -1;
  memset(out, 0, sizeof *out);
  struct pb_verify__lp lp = {0};
  int status = -1;
  int32_t *x = NULL;
  double *xv = NULL, coef[2 * PB_VERIFY_LP_MAX_N];
  if (pb_verify__lp_build(&lp, rec, ps) != 0) goto done;
  x = malloc((size_t)lp.nr * lp.nc * sizeof *x);
  xv = malloc((size_t)lp.nr * lp.nc * sizeof *xv);
  if (!x || !xv) goto done;
  out->n = rec->n;
  out->u = lp.rcount[0];
  int32_t hh, ll;
  /* H count at the records' acceptance (the bounds engine's I5 H) */
  for (int32_t c = 0; c < lp.nc; c++) coef[c] = !lp.ct[c].correct && lp.ct[c].acc;
  for (int d = 0; d < 2; d++) {
    if (pb_verify__lp_solve(&lp, coef, d ? 1 : -1, x, xv) != 0) goto done;
    pb_verify__lp_events(&lp, x, -1, &hh, &ll);
    out->H[d] = hh;
    out->n_lp++;
  }
  if (ps) {
    for (int32_t j = 0; j < ps->n_pol; j++) {
      /* H_j and L_j ends */
      for (int e = 0; e < 2; e++) {
        for (int32_t c = 0; c < lp.nc; c++) {
          const int acc = (lp.ct[c].mask >> j) & 1;
          coef[c] = e == 0 ? !lp.ct[c].correct && acc : lp.ct[c].correct && !acc;
        }
        for (int d = 0; d < 2; d++) {
          if (pb_verify__lp_solve(&lp, coef, d ? 1 : -1, x, xv) != 0) goto done;
          pb_verify__lp_events(&lp, x, j, &hh, &ll);
          if (e == 0) out->pol_h[j][d] = hh;
          else out->pol_l[j][d] = ll;
          out->n_lp++;
        }
      }
      for (int32_t li = 0; li < ps->n_lambda; li++) {
        const double lam = ps->lambda[li];
        for (int32_t c = 0; c < lp.nc; c++) {
          const int acc = (lp.ct[c].mask >> j) & 1;
          coef[c] = lam * (!lp.ct[c].correct && acc) + (1 - lam) * (lp.ct[c].correct && !acc);
        }
        for (int d = 0; d < 2; d++) {
          if (pb_verify__lp_solve(&lp, coef, d ? 1 : -1, x, xv) != 0) goto done;
          pb_verify__lp_events(&lp, x, j, &out->J[li][j][d][0], &out->J[li][j][d][1]);
          out->n_lp++;
        }
        /* D+_jl: maximise c_j - c_l */
        for (int32_t l = 0; l < ps->n_pol; l++) {
          if (l == j) continue;
          for (int32_t c = 0; c < lp.nc; c++) {
            const int aj = (lp.ct[c].mask >> j) & 1, al = (lp.ct[c].mask >> l) & 1;
            coef[c] = lp.ct[c].correct ? (1 - lam) * ((!aj) - (!al)) : lam * (aj - al);
          }
          if (pb_verify__lp_solve(&lp, coef, 1, x, xv) != 0) goto done;
          int32_t hj, lj, hl, lL;
          pb_verify__lp_events(&lp, x, j, &hj, &lj);
          pb_verify__lp_events(&lp, x, l, &hl, &lL);
          out->D[li][j][l][0] = hj - hl;
          out->D[li][j][l][1] = lj - lL;
          out->n_lp++;
        }
      }
    }
  }
  out->n_mip = lp.n_mip;
  status = 0;
done:
  if (lp.P) glp_delete_prob(lp.P);
  free(lp.ct);
  free(x);
  free(xv);
  return status;
}

static int64_t pb_verify__max0(int64_t x) { return x > 0 ? x : 0; }
static int64_t pb_verify__min3(int64_t a, int64_t b, int64_t c) { return a < b ? (a < c ? a : c) : (b < c ? b : c); }

void pb_verify_closed_forms(const struct pb_verify_records *r, int64_t H[2][2], int64_t L[2][2])
{
  int64_t a = 0, u = 0, b = 0, k = 0, t = 0, v = 0;
  const int64_t n = r->n;
  for (int32_t i = 0; i < r->n; i++) {
    a += r->c0[i] != 0;
    u += r->c0[i] && r->z0[i];
    b += r->c1[i] != 0;
    k += r->c0[i] && r->c1[i];
    t += !r->c1[i] && r->z1[i];   /* wrong accepted perturbed records */
    v += r->c1[i] && !r->z1[i];   /* correct rejected perturbed records */
  }
  const int64_t h = a - k;
  H[0][0] = pb_verify__max0(u + t - n);                     /* Eq. 4 */
  H[0][1] = u < t ? u : t;
  L[0][0] = pb_verify__max0(u + v - n);
  L[0][1] = u < v ? u : v;
  H[1][0] = pb_verify__max0(h - (a - u) - (n - b - t));     /* Eq. 7 */
  H[1][1] = pb_verify__min3(u, h, t);
  L[1][0] = pb_verify__max0(k - (a - u) - (b - v));         /* Eq. 5 */
  L[1][1] = pb_verify__min3(u, k, v);
}

void pb_verify_lp_release(void)
{
  glp_free_env();
}
