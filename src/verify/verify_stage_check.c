/* Checks of one cell or class (docs/verify.md): the enumerated values against
 * a reference (the bounds engine, a results file, the Cartesian product),
 * their structure (nesting, observed values, Theorem 1), and with
 * --policies the same for the policy values (Lemma 1, Corollary 1); a
 * failure is counted in the cell's record and the first one described. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "verify_stage_internal.h"

/* The seven compared values of a target from any (cell or class) values. */
void pb_verify__vals(const struct pb_verify_values *v, int t, double out[7])
{
  const double(*x)[2] = t == 0 ? v->H : t == 1 ? v->L : v->dMk;
  out[0] = t == 0 ? v->H_obs : t == 1 ? v->L_obs : v->dMk_obs;
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++) out[1 + 2 * lv] = x[lv][0], out[2 + 2 * lv] = x[lv][1];
}

/* The engine's values in the same layout. */
void pb_verify__engine_values(const struct pb_cell_bounds *b, struct pb_verify_values *v)
{
  memset(v, 0, sizeof *v);
  v->n = b->n;
  v->K = b->k;
  v->H_obs = b->H_obs, v->L_obs = b->L_obs, v->dMk_obs = b->dMk_obs;
  for (int e = 0; e < 2; e++) {
    v->H[0][e] = b->H_I0[e], v->H[1][e] = b->H_Ik[e], v->H[2][e] = b->H_I5[e];
    v->L[0][e] = b->L_I0[e], v->L[1][e] = b->L_Ik[e], v->L[2][e] = b->L_I5[e];
    v->dMk[0][e] = b->dMk_I0[e], v->dMk[1][e] = b->dMk_Ik[e], v->dMk[2][e] = b->dMk_I5[e];
  }
}

/* A class on its own, as rates (what pb_bounds_cell reports for a one-class cell). */
void pb_verify__class_values(const struct pb_verify_class *q, struct pb_verify_values *v)
{
  memset(v, 0, sizeof *v);
  const double n = (double)q->n;
  v->n = q->n;
  v->K = q->k;
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++)
    for (int e = 0; e < 2; e++) {
      v->H[lv][e] = q->H[lv][e] / n;
      v->L[lv][e] = q->L[lv][e] / n;
      v->dMk[lv][e] = lv == PB_VERIFY_I0 ? q->D[lv][e] : q->k > 0 ? q->D[lv][e] / (double)q->k : NAN;
    }
  v->H_obs = q->H_obs / n;
  v->L_obs = q->L_obs / n;
  v->dMk_obs = q->k > 0 ? q->D_obs / (double)q->k : NAN;
}

/* Residual per target x {obs, I0, Ik, I5}: the larger endpoint difference.
 * mask[j] = 0 skips a comparison (residual 0). */
void pb_verify__compare(const struct pb_verify_values *a, const struct pb_verify_values *b, const int *mask,
                        double res[PB_VERIFY_NTARGETS * PB_VERIFY_NCMP])
{
  for (int t = 0; t < PB_VERIFY_NTARGETS; t++) {
    double x[7], y[7];
    pb_verify__vals(a, t, x);
    pb_verify__vals(b, t, y);
    for (int j = 0; j < PB_VERIFY_NCMP; j++) {
      double r = 0.0;
      if (!mask || mask[j]) {
        if (j == 0) r = pb_verify__res(x[0], y[0]);
        else r = fmax(pb_verify__res(x[2 * j - 1], y[2 * j - 1]), pb_verify__res(x[2 * j], y[2 * j]));
      }
      res[PB_VERIFY_NCMP * t + j] = r;
    }
  }
}

void pb_verify__failf(struct pb_verify__cellstate *cs, int32_t label, const char *fmt, ...)
{
  if (cs->rec[PB_VF_FAILED]++ > 0) return;
  cs->rec[PB_VF_FAIL_LABEL] = label;
  char what[PB_VERIFY__MSG / 2];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (label >= 0) snprintf(cs->fail, PB_VERIFY__MSG, "cell %s, class %d: %s", cs->where, (int)label, what);
  else snprintf(cs->fail, PB_VERIFY__MSG, "cell %s: %s", cs->where, what);
}

/* Report the comparisons above the tolerance. */
void pb_verify__residual_fail(struct pb_verify__cellstate *cs, int32_t label, const char *against,
                              const struct pb_verify_values *mine, const struct pb_verify_values *ref,
                              const double *res)
{
  for (int t = 0; t < PB_VERIFY_NTARGETS; t++)
    for (int j = 0; j < PB_VERIFY_NCMP; j++) {
      if (!(res[PB_VERIFY_NCMP * t + j] > PB_VERIFY_TOL)) continue;
      double x[7], y[7];
      pb_verify__vals(mine, t, x);
      pb_verify__vals(ref, t, y);
      if (j == 0)
        pb_verify__failf(cs, label, "%s %s: enumeration %.17g, %s %.17g (residual %.3g)", pb_verify_target_names[t],
                         pb_verify_cmp_names[j], x[0], against, y[0], res[PB_VERIFY_NCMP * t + j]);
      else
        pb_verify__failf(cs, label, "%s at %s: enumeration [%.17g, %.17g], %s [%.17g, %.17g] (residual %.3g)",
                         pb_verify_target_names[t], pb_verify_cmp_names[j], x[2 * j - 1], x[2 * j], against,
                         y[2 * j - 1], y[2 * j], res[PB_VERIFY_NCMP * t + j]);
    }
}

int pb_verify__thm1_holds(const double x[7])
{
  return pb_verify__res(x[3], x[5]) <= PB_VERIFY_TOL && pb_verify__res(x[4], x[6]) <= PB_VERIFY_TOL;
}

int pb_verify__class_thm1(const struct pb_verify_class *q)
{
  struct pb_verify_values v;
  double x[7];
  pb_verify__class_values(q, &v);
  for (int t = 1; t < PB_VERIFY_NTARGETS; t++) {
    pb_verify__vals(&v, t, x);
    if (!pb_verify__thm1_holds(x)) return 0;
  }
  return 1;
}

int pb_verify__h_narrower(const struct pb_verify_class *q)
{
  return q->H[PB_VERIFY_I5][1] - q->H[PB_VERIFY_I5][0] < q->H[PB_VERIFY_IK][1] - q->H[PB_VERIFY_IK][0];
}

/* Structural checks on verified values (cell or class): nesting I5 in Ik in
 * I0, the observed value inside every interval, and Theorem 1 (L and dM_k
 * equal at Ik and I5).  Lemma 1 and Corollary 1 join here with the policy
 * stage (docs/verify.md). */
void pb_verify__structure(struct pb_verify__cellstate *cs, int32_t label, const struct pb_verify_values *v)
{
  const double tol = PB_VERIFY_TOL;
  double *r = cs->rec;
  for (int t = 0; t < PB_VERIFY_NTARGETS; t++) {
    double x[7];
    pb_verify__vals(v, t, x);
    const char *T = pb_verify_target_names[t];
    /* dM_k at Ik and I5 is undefined when K = 0; otherwise everything is */
    const int defined = !isnan(x[3]) || t != 2;
    if (defined) {
      r[PB_VF_CHK_NEST]++;
      if (!(x[1] <= x[3] + tol && x[3] <= x[5] + tol && x[5] <= x[6] + tol && x[6] <= x[4] + tol &&
            x[4] <= x[2] + tol)) {
        r[PB_VF_FAIL_NEST]++;
        pb_verify__failf(cs, label, "%s intervals not nested: I0 [%.17g, %.17g], Ik [%.17g, %.17g], I5 [%.17g, %.17g]",
                         T, x[1], x[2], x[3], x[4], x[5], x[6]);
      }
      for (int lv = 0; lv < PB_VERIFY_NLEVELS && !isnan(x[0]); lv++) {
        r[PB_VF_CHK_OBS]++;
        if (!(x[1 + 2 * lv] <= x[0] + tol && x[0] <= x[2 + 2 * lv] + tol)) {
          r[PB_VF_FAIL_OBS]++;
          pb_verify__failf(cs, label, "observed %s %.17g outside its %s interval [%.17g, %.17g]", T, x[0],
                           pb_verify_level_names[lv], x[1 + 2 * lv], x[2 + 2 * lv]);
        }
      }
    }
    if (t > 0) {
      r[PB_VF_CHK_THM1]++;
      if (!pb_verify__thm1_holds(x)) {
        r[PB_VF_FAIL_THM1]++;
        pb_verify__failf(cs, label, "Theorem 1 violated: %s at Ik [%.17g, %.17g] but at I5 [%.17g, %.17g]", T, x[3],
                         x[4], x[5], x[6]);
      }
    }
  }
}

/* ---- rejection policies (--policies) ---------------------------------- */

/* The compared fields of the policy engine's result, in the verify layout. */
void pb_verify__engine_pvalues(const struct pb_policy_result *e, const struct pb_verify_policy_setup *ps,
                               struct pb_verify_pvalues *v)
{
  const int32_t P = ps->n_pol, NL = ps->n_lambda;
  v->n = e->N;
  v->n_pol = P;
  v->n_lambda = NL;
  for (int32_t j = 0; j < P; j++) v->E[j] = e->E[j], v->H_obs[j] = e->H_obs[j], v->L_obs[j] = e->L_obs[j];
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++) {
    for (int32_t j = 0; j < P; j++) {
      for (int x = 0; x < 2; x++) v->H[lv][j][x] = e->H[lv][j][x], v->L[lv][j][x] = e->L[lv][j][x];
      v->H_mean[lv][j] = e->H_mean[lv][j];
      v->L_mean[lv][j] = e->L_mean[lv][j];
    }
    for (int32_t li = 0; li < NL; li++)
      for (int32_t j = 0; j < P; j++) {
        for (int x = 0; x < 2; x++) v->J[lv][li][j][x] = e->J[lv][li][j][x], v->Jn[lv][li][j][x] = e->Jn[lv][li][j][x];
        v->J_lemma1[lv][li][j] = e->J_lemma1[lv][li][j];
        for (int32_t o = 0; o < P; o++) v->D[lv][li][j][o] = e->D[lv][li][j][o], v->Dn[lv][li][j][o] = e->Dn[lv][li][j][o];
      }
  }
}

static inline void pb_verify__pw_upd(struct pb_verify__pw *w, double a, double b, const char *what, int lv, int li,
                                     int j, int o)
{
  const double r = pb_verify__res(a, b);
  if (r > w->r || !w->what) *w = (struct pb_verify__pw){r, a, b, what, lv, li, j, o};
}

/* Residuals of every compared policy value, per slot (PB_VERIFY_PSLOT). */
void pb_verify__pcompare(const struct pb_verify_pvalues *a, const struct pb_verify_pvalues *b,
                         const struct pb_verify_policy_setup *ps, int skip_lemma1,
                         struct pb_verify__pw w[PB_VERIFY_NPRES])
{
  const int32_t P = ps->n_pol, NL = ps->n_lambda;
  for (int s = 0; s < PB_VERIFY_NPRES; s++) w[s] = (struct pb_verify__pw){0.0, NAN, NAN, NULL, -1, -1, -1, -1};
  struct pb_verify__pw *ob = &w[0];
  for (int32_t j = 0; j < P; j++) {
    pb_verify__pw_upd(ob, a->E[j], b->E[j], "E_j (accepted errors)", -1, -1, j, -1);
    pb_verify__pw_upd(ob, a->H_obs[j], b->H_obs[j], "observed H_j", -1, -1, j, -1);
    pb_verify__pw_upd(ob, a->L_obs[j], b->L_obs[j], "observed L_j", -1, -1, j, -1);
  }
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++) {
    struct pb_verify__pw *wh = &w[PB_VERIFY_PSLOT(PB_VERIFY_PT_H, lv)], *wl = &w[PB_VERIFY_PSLOT(PB_VERIFY_PT_L, lv)],
                         *wj = &w[PB_VERIFY_PSLOT(PB_VERIFY_PT_J, lv)], *wd = &w[PB_VERIFY_PSLOT(PB_VERIFY_PT_D, lv)],
                         *we = &w[PB_VERIFY_PSLOT(PB_VERIFY_PT_LEMMA1, lv)],
                         *wm = &w[PB_VERIFY_PSLOT(PB_VERIFY_PT_MEAN, lv)],
                         *wn = &w[PB_VERIFY_PSLOT(PB_VERIFY_PT_NATURAL, lv)];
    for (int32_t j = 0; j < P; j++) {
      pb_verify__pw_upd(wh, a->H[lv][j][0], b->H[lv][j][0], "H_j lower end", lv, -1, j, -1);
      pb_verify__pw_upd(wh, a->H[lv][j][1], b->H[lv][j][1], "H_j upper end", lv, -1, j, -1);
      pb_verify__pw_upd(wl, a->L[lv][j][0], b->L[lv][j][0], "L_j lower end", lv, -1, j, -1);
      pb_verify__pw_upd(wl, a->L[lv][j][1], b->L[lv][j][1], "L_j upper end", lv, -1, j, -1);
      pb_verify__pw_upd(wm, a->H_mean[lv][j], b->H_mean[lv][j], "feasible mean of H_j", lv, -1, j, -1);
      pb_verify__pw_upd(wm, a->L_mean[lv][j], b->L_mean[lv][j], "feasible mean of L_j", lv, -1, j, -1);
      for (int32_t li = 0; li < NL; li++) {
        const double lam = ps->lambda[li];
        pb_verify__pw_upd(wj, a->J[lv][li][j][0], b->J[lv][li][j][0], "J_j lower end", lv, li, j, -1);
        pb_verify__pw_upd(wj, a->J[lv][li][j][1], b->J[lv][li][j][1], "J_j upper end", lv, li, j, -1);
        if (!skip_lemma1)
          pb_verify__pw_upd(we, a->J_lemma1[lv][li][j], b->J_lemma1[lv][li][j], "Eq. 8 upper bound of J_j", lv, li, j, -1);
        pb_verify__pw_upd(wm, lam * a->H_mean[lv][j] + (1 - lam) * a->L_mean[lv][j],
                          lam * b->H_mean[lv][j] + (1 - lam) * b->L_mean[lv][j], "feasible mean of J_j", lv, li, j, -1);
        pb_verify__pw_upd(wn, a->Jn[lv][li][j][0], b->Jn[lv][li][j][0], "J'_j lower end", lv, li, j, -1);
        pb_verify__pw_upd(wn, a->Jn[lv][li][j][1], b->Jn[lv][li][j][1], "J'_j upper end", lv, li, j, -1);
        for (int32_t o = 0; o < P; o++) {
          if (o == j) continue;
          pb_verify__pw_upd(wd, a->D[lv][li][j][o], b->D[lv][li][j][o], "D+_jl", lv, li, j, o);
          pb_verify__pw_upd(wn, a->Dn[lv][li][j][o], b->Dn[lv][li][j][o], "D'+_jl", lv, li, j, o);
        }
      }
    }
  }
}

/* Where a policy value sits, for messages. */
static void pb_verify__pwhere(const struct pb_verify__pw *w, const struct pb_verify_policy_setup *ps, char *buf,
                              size_t len)
{
  int m = snprintf(buf, len, "%s", w->what ? w->what : "?");
  if (w->lv >= 0 && m < (int)len) m += snprintf(buf + m, len - (size_t)m, " at %s", pb_verify_level_names[w->lv]);
  if (w->li >= 0 && m < (int)len) m += snprintf(buf + m, len - (size_t)m, ", lambda %g", ps->lambda[w->li]);
  if (w->j >= 0 && m < (int)len) m += snprintf(buf + m, len - (size_t)m, ", j %d (tau %.9g)", w->j, (double)ps->tau[w->j]);
  if (w->o >= 0 && m < (int)len) snprintf(buf + m, len - (size_t)m, ", l %d (tau %.9g)", w->o, (double)ps->tau[w->o]);
}

void pb_verify__presidual_fail(struct pb_verify__cellstate *cs, int32_t label, const char *against,
                               const struct pb_verify__pw *w, const struct pb_verify_policy_setup *ps)
{
  for (int s = 0; s < PB_VERIFY_NPRES; s++) {
    if (!(w[s].r > PB_VERIFY_TOL)) continue;
    char where[256];
    pb_verify__pwhere(&w[s], ps, where, sizeof where);
    pb_verify__failf(cs, label, "policy %s: enumeration %.17g, %s %.17g (residual %.3g)", where, w[s].a, against,
                     w[s].b, w[s].r);
  }
}

/* One structural check: counted, and reported when it fails. */
static void pb_verify__pchk(struct pb_verify__cellstate *cs, int32_t label, int f_chk, int ok, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void pb_verify__pchk(struct pb_verify__cellstate *cs, int32_t label, int f_chk, int ok, const char *fmt, ...)
{
  cs->rec[f_chk]++;
  if (ok) return;
  cs->rec[f_chk + 1]++;
  char what[PB_VERIFY__MSG / 2];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  pb_verify__failf(cs, label, "%s", what);
}

/* Structural checks on verified policy values (class or cell): Lemma 1 (the
 * direct maximum of J_j equals Eq. 8 from the enumerated count intervals),
 * Corollary 1 (attainable (L_j)_j vectors, when given, and J' intervals and
 * D'+ identical at Ik and I5), nesting I5 in Ik in I0, observed values and
 * feasible means inside their intervals, and D+ between the separate-interval
 * bounds: J_j^lo - J_l^hi <= J_j(obs) - J_l(obs) <= D+_jl <= J_j^hi - J_l^lo. */
void pb_verify__pstructure(struct pb_verify__cellstate *cs, int32_t label, const struct pb_verify_pvalues *v,
                           const struct pb_verify_policy_setup *ps, int cor1)
{
  const double tol = PB_VERIFY_TOL;
  const int32_t P = ps->n_pol, NL = ps->n_lambda;
  const int I0 = PB_VERIFY_I0, IK = PB_VERIFY_IK, I5 = PB_VERIFY_I5;
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++)
    for (int32_t li = 0; li < NL; li++)
      for (int32_t j = 0; j < P; j++)
        pb_verify__pchk(cs, label, PB_VF_POL_CHK_LEMMA1, !(pb_verify__res(v->J[lv][li][j][1], v->J_lemma1[lv][li][j]) > tol),
                        "Lemma 1 (Eq. 8) fails: J_%d at %s, lambda %g: direct maximum %.17g, Eq. 8 from the enumerated "
                        "count intervals %.17g", j, pb_verify_level_names[lv], ps->lambda[li], v->J[lv][li][j][1],
                        v->J_lemma1[lv][li][j]);
  if (cor1 >= 0)
    pb_verify__pchk(cs, label, PB_VF_POL_CHK_COR1, cor1,
                    "Corollary 1 fails: the attainable (L_j)_j vectors differ between Ik and I5");
  for (int32_t li = 0; li < NL; li++)
    for (int32_t j = 0; j < P; j++) {
      int same = !(pb_verify__res(v->Jn[IK][li][j][0], v->Jn[I5][li][j][0]) > tol) &&
                 !(pb_verify__res(v->Jn[IK][li][j][1], v->Jn[I5][li][j][1]) > tol);
      for (int32_t o = 0; o < P; o++) same = same && !(pb_verify__res(v->Dn[IK][li][j][o], v->Dn[I5][li][j][o]) > tol);
      pb_verify__pchk(cs, label, PB_VF_POL_CHK_COR1, same,
                      "Corollary 1 fails: J'_%d interval or D'+ at lambda %g differ between Ik [%.17g, %.17g] and "
                      "I5 [%.17g, %.17g]", j, ps->lambda[li], v->Jn[IK][li][j][0], v->Jn[IK][li][j][1],
                      v->Jn[I5][li][j][0], v->Jn[I5][li][j][1]);
    }
  /* nesting and inclusion */
  for (int32_t j = 0; j < P; j++) {
    const double(*H)[PB_VERIFY_MAX_POL][2] = v->H, (*L)[PB_VERIFY_MAX_POL][2] = v->L;
    pb_verify__pchk(cs, label, PB_VF_POL_CHK_STRUCT,
                    H[I0][j][0] <= H[IK][j][0] + tol && H[IK][j][0] <= H[I5][j][0] + tol &&
                        H[I5][j][1] <= H[IK][j][1] + tol && H[IK][j][1] <= H[I0][j][1] + tol &&
                        L[I0][j][0] <= L[IK][j][0] + tol && L[IK][j][0] <= L[I5][j][0] + tol &&
                        L[I5][j][1] <= L[IK][j][1] + tol && L[IK][j][1] <= L[I0][j][1] + tol,
                    "policy %d: H_j / L_j intervals not nested I5 in Ik in I0", j);
    for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++)
      pb_verify__pchk(cs, label, PB_VF_POL_CHK_STRUCT,
                      H[lv][j][0] <= v->H_obs[j] + tol && v->H_obs[j] <= H[lv][j][1] + tol &&
                          L[lv][j][0] <= v->L_obs[j] + tol && v->L_obs[j] <= L[lv][j][1] + tol &&
                          H[lv][j][0] <= v->H_mean[lv][j] + tol && v->H_mean[lv][j] <= H[lv][j][1] + tol &&
                          L[lv][j][0] <= v->L_mean[lv][j] + tol && v->L_mean[lv][j] <= L[lv][j][1] + tol,
                      "policy %d at %s: observed value or feasible mean of H_j / L_j outside its interval", j,
                      pb_verify_level_names[lv]);
  }
  for (int32_t li = 0; li < NL; li++) {
    const double lam = ps->lambda[li];
    for (int32_t j = 0; j < P; j++) {
      const double jo = lam * v->H_obs[j] + (1 - lam) * v->L_obs[j];
      for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++) {
        const double *J = v->J[lv][li][j], mean = lam * v->H_mean[lv][j] + (1 - lam) * v->L_mean[lv][j];
        int ok = J[0] <= jo + tol && jo <= J[1] + tol && J[0] <= mean + tol && mean <= J[1] + tol;
        if (lv > 0) ok = ok && v->J[lv - 1][li][j][0] <= J[0] + tol && J[1] <= v->J[lv - 1][li][j][1] + tol;
        pb_verify__pchk(cs, label, PB_VF_POL_CHK_STRUCT, ok,
                        "policy %d at %s, lambda %g: J_j interval [%.17g, %.17g] not nested, or observed %.17g / "
                        "feasible mean %.17g outside", j, pb_verify_level_names[lv], lam, J[0], J[1], jo, mean);
        for (int32_t o = 0; o < P; o++) {
          if (o == j) continue;
          const double d = v->D[lv][li][j][o], oo = lam * v->H_obs[o] + (1 - lam) * v->L_obs[o];
          const double gap = J[1] - v->J[lv][li][o][0], low = J[0] - v->J[lv][li][o][1];
          int dk = low <= jo - oo + tol && jo - oo <= d + tol && d <= gap + tol;
          if (lv > 0) dk = dk && d <= v->D[lv - 1][li][j][o] + tol;
          pb_verify__pchk(cs, label, PB_VF_POL_CHK_STRUCT, dk,
                          "policy pair (%d, %d) at %s, lambda %g: D+ %.17g not within [observed difference %.17g, "
                          "separate gap %.17g], or larger than at the coarser level", j, o,
                          pb_verify_level_names[lv], lam, d, jo - oo, gap);
        }
      }
    }
  }
}
