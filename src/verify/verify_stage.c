/* `pairbound verify`: enumerate every small class of the covered cells,
 * combine classes exactly, and compare with the bounds engine per class and
 * per cell (seed 000 A.10, B.3, C.1, Appendix D; docs/verify.md). */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <omp.h>
#include <hdf5.h>

#include "pairbound/blocks.h"
#include "pairbound/progress.h"
#include "pairbound/bounds.h"
#include "pairbound/cells.h"
#include "pairbound/env.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/fields.h"
#include "pairbound/policy.h"
#include "pairbound/stage.h"
#include "pairbound/timer.h"
#include "pairbound/checksum.h"
#include "pairbound/verify.h"
#include "bounds/bounds_stage_internal.h"
#include "verify_internal.h"

const char *const pb_verify_target_names[PB_VERIFY_NTARGETS] = {"H", "L", "dMk"};
const char *const pb_verify_cmp_names[PB_VERIFY_NCMP] = {"obs", "I0", "Ik", "I5"};
const char *const pb_verify_ptarget_names[PB_VERIFY_NPT] = {"obs", "H", "L", "J", "Dplus", "lemma1", "mean", "natural"};

/* The policy engine is the one under test; its limits must cover ours. */
_Static_assert(PB_VERIFY_MAX_POL == PB_POLICY_MAX && PB_VERIFY_MAX_LAMBDA == PB_POLICY_MAX_LAMBDA,
               "verify and policy limits differ");
static const char *const pb_verify__level_names[PB_VERIFY_NLEVELS] = {"I0", "Ik", "I5"};

static const char *pb_verify__field_name(int f)
{
  static const char *const fixed[PB_VF_VAL] = {
    "covered", "n", "tau", "classes", "classes_enumerated", "classes_skipped", "permutations",
    "cartesian_combinations", "H_I5_narrower_classes", "checks_nesting", "failed_nesting", "checks_observed",
    "failed_observed", "checks_theorem1", "failed_theorem1", "against_i5_missing"};
  static char names[PB_VF_N][40];
  static int ready = 0;
  if (!ready) { /* first call from serial code (the stage's setup) */
    {
      for (int i = 0; i < PB_VF_VAL; i++) snprintf(names[i], sizeof names[i], "%s", fixed[i]);
      static const char *const v[7] = {"obs", "I0_lo", "I0_hi", "Ik_lo", "Ik_hi", "I5_lo", "I5_hi"};
      for (int t = 0; t < PB_VERIFY_NTARGETS; t++) {
        for (int j = 0; j < 7; j++)
          snprintf(names[PB_VF_VAL + 7 * t + j], sizeof names[0], "%s_%s", pb_verify_target_names[t], v[j]);
        for (int j = 0; j < PB_VERIFY_NCMP; j++) {
          const int o = PB_VERIFY_NCMP * t + j;
          snprintf(names[PB_VF_RES + o], sizeof names[0], "res_%s_%s", pb_verify_target_names[t], pb_verify_cmp_names[j]);
          snprintf(names[PB_VF_CRES + o], sizeof names[0], "class_res_%s_%s", pb_verify_target_names[t],
                   pb_verify_cmp_names[j]);
          snprintf(names[PB_VF_CRES_LABEL + o], sizeof names[0], "class_res_%s_%s_label", pb_verify_target_names[t],
                   pb_verify_cmp_names[j]);
        }
      }
      snprintf(names[PB_VF_CART_RES], sizeof names[0], "cartesian_res");
      static const char *const pfixed[] = {"pol_classes", "pol_checks_lemma1", "pol_failed_lemma1",
                                           "pol_checks_corollary1", "pol_failed_corollary1", "pol_checks_structure",
                                           "pol_failed_structure", "pol_shared_strict"};
      for (int i = 0; i < PB_VF_POL_RES - PB_VF_POL_CLASSES; i++)
        snprintf(names[PB_VF_POL_CLASSES + i], sizeof names[0], "%s", pfixed[i]);
      for (int t = 0; t < PB_VERIFY_NPT; t++) {
        for (int lv = 0; lv < (t == PB_VERIFY_PT_OBS ? 1 : PB_VERIFY_NLEVELS); lv++) {
          if (t == PB_VERIFY_PT_OBS) snprintf(names[PB_VF_POL_RES], sizeof names[0], "pol_res_obs");
          else
            snprintf(names[PB_VF_POL_RES + PB_VERIFY_PSLOT(t, lv)], sizeof names[0], "pol_res_%s_%s",
                     pb_verify_ptarget_names[t], pb_verify__level_names[lv]);
        }
        snprintf(names[PB_VF_POL_CRES + t], sizeof names[0], "pol_class_res_%s", pb_verify_ptarget_names[t]);
        snprintf(names[PB_VF_POL_CRES_LABEL + t], sizeof names[0], "pol_class_res_%s_label", pb_verify_ptarget_names[t]);
      }
      snprintf(names[PB_VF_POL_CART_RES], sizeof names[0], "pol_cartesian_res");
      static const char *const lfixed[] = {"classes_lp", "lp_programs", "lp_branch_and_bound", "lp_res_H_I5",
                                           "lp_pol_res_I5", "closed_form_res_I0_Ik"};
      for (int i = 0; i <= PB_VF_CF_RES - PB_VF_LP_CLASSES; i++)
        snprintf(names[PB_VF_LP_CLASSES + i], sizeof names[0], "%s", lfixed[i]);
      snprintf(names[PB_VF_FAILED], sizeof names[0], "failed");
      snprintf(names[PB_VF_FAIL_LABEL], sizeof names[0], "failed_class");
      ready = 1;
    }
  }
  return names[f];
}

const struct pb_fields *pb_verify_fields(void)
{
  static struct pb_field f[PB_VF_N];
  static struct pb_fields fs;
  if (!fs.f) { /* first call from serial code (the stage's setup) */
    for (int i = 0; i < PB_VF_N; i++) f[i] = (struct pb_field){pb_verify__field_name(i), PB_FMT_NUM};
    fs = pb_fields_static("/verify/cells", PB_VF_N, f);
  }
  return &fs;
}

#define PB_O(member) PB_OPTION_FIELD(struct pb_verify_options, member)
#define PB_POLICIES PB_OPTION_AT(struct pb_verify_options, policies)
const struct pb_option pb_verify_option_table[] = {
  {.name = "cells", .type = PB_OPTION_CHOICE, PB_O(cells), .metavar = "all|panel|sample", .choices = "all|panel|sample",
   .def = "all", .help_default = 1,
   .help = "cells to cover: every cell (default), the frozen panel, or a sample per source"},
  {.name = "sample", .type = PB_OPTION_INT, PB_O(sample), .metavar = "N", .imin = 1, .imax = 1u << 30, .def = "12",
   .help_default = 1,
   .help = "with --cells sample: N cells of each source, first in SHA-256 order of "
           "'verify|SEED|source|model|condition' (default 12: 48 cells on four sources, as C.1)"},
  {.name = "sample-seed", .type = PB_OPTION_INT, PB_O(sample_seed), .metavar = "N", .def = "20260911",
   .help = "SEED of that order (default 20260911; under `pairbound run`: the run seed + 3, docs/run.md)"},
  {.name = "sources", .type = PB_OPTION_STRING, PB_O(sources), .metavar = "LIST",
   .help = "cover only these sources (comma-separated names)"},
  {.name = "max-class", .type = PB_OPTION_INT, PB_O(max_class), .metavar = "N", .imin = 1, .imax = PB_VERIFY_MAX_N,
   .def = "8",
   .help = "enumerate classes of at most N records per side, 1..10; larger classes go to the LP check (--lp-max) "
           "or are skipped and counted, and their cells get no cell-level enumeration"},
  {.name = "cartesian-max", .type = PB_OPTION_INT, PB_O(cartesian_max), .metavar = "P", .imax = 1ull << 40,
   .def = "20000", .help_default = 1,
   .help = "brute-force the whole-cell Cartesian product of all classes' bijections when it has at most P "
           "combinations (default 20000; 0 disables)"},
  {.name = "lp-max", .type = PB_OPTION_INT, PB_O(lp_max), .metavar = "N", .imax = PB_VERIFY_LP_MAX_N, .def = "1000",
   .help_default = 1,
   .help = "check larger classes of at most N records per side (default 1000, at most 2000; 0 disables) by exact "
           "integer programs over record types (GLPK: rational simplex, branch and bound where the LP vertex is "
           "fractional): the I5 H interval against the bounds engine and, with --policies, every I5 policy end "
           "against the policy engine; such cells also get whole-cell I0/Ik checks against the closed forms "
           "(Eq. 4, 5, 7)"},
  {.name = "allow-empty", .type = PB_OPTION_FLAG, PB_O(allow_empty), .flag = 1, .def = "0",
   .help = "exit 0 even when no class was checked (otherwise a run that checks nothing fails)"},
  {.name = "tau", .type = PB_OPTION_DOUBLE, PB_O(tau), .metavar = "X", .max = 1,
   .mark = PB_OPTION_AT(struct pb_verify_options, have_tau),
   .help = "one acceptance threshold for every cell (as `bounds --tau`)"},
  {.name = "against", .type = PB_OPTION_STRING, PB_O(against), .metavar = "FILE",
   .help = "compare with the /bounds/cells columns of a `pairbound bounds` results.h5 made with the same protocol "
           "options, instead of running the bounds engine in-process"},
  {.name = "policies", .type = PB_OPTION_FLAG, PB_O(policies), .flag = 1, .def = "0",
   .help = "also verify the rejection-policy engine (`pairbound policy`; off by default): per class and bijection "
           "the policy event counts h_j, l_j (Eq. 10) at I0, Ik, I5, their extremes, J_j, D+_jl (Eq. 11), J', D'+, "
           "feasible means, compared with pb_policy_cell per class and per cell (always in-process); Lemma 1 "
           "(Eq. 8) and Corollary 1 checks. Clean threshold as --tau / the protocol's; policies as `pairbound "
           "policy`"},
  {.name = "policy-taus", .type = PB_OPTION_LIST, PB_O(taus), .metavar = "a,b,..", .max = 1,
   .max_n = PB_VERIFY_MAX_POL, .count = PB_OPTION_AT(struct pb_verify_options, n_taus), .mark = PB_POLICIES,
   .help = "perturbed policy thresholds for every cell, 1 to 8 values (default: the development thresholds at "
           "coverages .6 .7 .8 .9 1); implies --policies"},
  {.name = "lambdas", .type = PB_OPTION_LIST, PB_O(lambdas), .metavar = "a,b,..", .max = 1,
   .max_n = PB_VERIFY_MAX_LAMBDA, .count = PB_OPTION_AT(struct pb_verify_options, n_lambdas), .distinct = 1,
   .mark = PB_POLICIES, .def = "0.5", .help_default = 1,
   .help = "cost weights in [0, 1], distinct, 1 to 32 values (default .5, the primary weight of seed 000 "
           "Appendix D; the paper's grid is 0,.1,...,1); implies --policies"},
  {.name = NULL}};
#undef PB_POLICIES
#undef PB_O

void pb_verify_options_default(struct pb_verify_options *opt)
{
  memset(opt, 0, sizeof *opt);
  pb_options_defaults(pb_verify_option_table, opt);
}

/* The seven compared values of a target from any (cell or class) values. */
static void pb_verify__vals(const struct pb_verify_values *v, int t, double out[7])
{
  const double(*x)[2] = t == 0 ? v->H : t == 1 ? v->L : v->dMk;
  out[0] = t == 0 ? v->H_obs : t == 1 ? v->L_obs : v->dMk_obs;
  for (int lv = 0; lv < PB_VERIFY_NLEVELS; lv++) out[1 + 2 * lv] = x[lv][0], out[2 + 2 * lv] = x[lv][1];
}

/* The engine's values in the same layout. */
static void pb_verify__engine_values(const struct pb_cell_bounds *b, struct pb_verify_values *v)
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
static void pb_verify__class_values(const struct pb_verify_class *q, struct pb_verify_values *v)
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

/* |a - b|, 0 when both are undefined, infinite when exactly one is. */
static double pb_verify__res(double a, double b)
{
  if (isnan(a) && isnan(b)) return 0.0;
  if (isnan(a) || isnan(b)) return INFINITY;
  return fabs(a - b);
}

/* Residual per target x {obs, I0, Ik, I5}: the larger endpoint difference.
 * mask[j] = 0 skips a comparison (residual 0). */
static void pb_verify__compare(const struct pb_verify_values *a, const struct pb_verify_values *b, const int *mask,
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

/* Per-cell work state: counters, the first failure and its class. */
struct pb_verify__cellstate {
  double *rec;
  char *fail;                 /* first failure text (PB_VERIFY__MSG bytes) */
  const char *where;          /* "model/source/condition" */
};
#define PB_VERIFY__MSG 1024
#define PB_VERIFY__NTOT 7   /* run totals (pb_verify__write) */

static void pb_verify__failf(struct pb_verify__cellstate *cs, int32_t label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void pb_verify__failf(struct pb_verify__cellstate *cs, int32_t label, const char *fmt, ...)
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
static void pb_verify__residual_fail(struct pb_verify__cellstate *cs, int32_t label, const char *against,
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

/* Structural checks on verified values (cell or class): nesting I5 in Ik in
 * I0, the observed value inside every interval, and Theorem 1 (L and dM_k
 * equal at Ik and I5).  Lemma 1 and Corollary 1 join here with the policy
 * stage (docs/verify.md). */
static void pb_verify__structure(struct pb_verify__cellstate *cs, int32_t label, const struct pb_verify_values *v)
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
                           pb_verify__level_names[lv], x[1 + 2 * lv], x[2 + 2 * lv]);
        }
      }
    }
    if (t > 0) {
      r[PB_VF_CHK_THM1]++;
      if (pb_verify__res(x[3], x[5]) > tol || pb_verify__res(x[4], x[6]) > tol) {
        r[PB_VF_FAIL_THM1]++;
        pb_verify__failf(cs, label, "Theorem 1 violated: %s at Ik [%.17g, %.17g] but at I5 [%.17g, %.17g]", T, x[3],
                         x[4], x[5], x[6]);
      }
    }
  }
}

/* ---- rejection policies (--policies) ---------------------------------- */

/* The compared fields of the policy engine's result, in the verify layout. */
static void pb_verify__engine_pvalues(const struct pb_policy_result *e, const struct pb_verify_policy_setup *ps,
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

/* Worst item of one residual slot. */
struct pb_verify__pw {
  double r, a, b;
  const char *what;
  int lv, li, j, o;
};

static inline void pb_verify__pw_upd(struct pb_verify__pw *w, double a, double b, const char *what, int lv, int li,
                                     int j, int o)
{
  const double r = pb_verify__res(a, b);
  if (r > w->r || !w->what) *w = (struct pb_verify__pw){r, a, b, what, lv, li, j, o};
}

/* Residuals of every compared policy value, per slot (PB_VERIFY_PSLOT). */
static void pb_verify__pcompare(const struct pb_verify_pvalues *a, const struct pb_verify_pvalues *b,
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
  if (w->lv >= 0 && m < (int)len) m += snprintf(buf + m, len - (size_t)m, " at %s", pb_verify__level_names[w->lv]);
  if (w->li >= 0 && m < (int)len) m += snprintf(buf + m, len - (size_t)m, ", lambda %g", ps->lambda[w->li]);
  if (w->j >= 0 && m < (int)len) m += snprintf(buf + m, len - (size_t)m, ", j %d (tau %.9g)", w->j, (double)ps->tau[w->j]);
  if (w->o >= 0 && m < (int)len) snprintf(buf + m, len - (size_t)m, ", l %d (tau %.9g)", w->o, (double)ps->tau[w->o]);
}

static void pb_verify__presidual_fail(struct pb_verify__cellstate *cs, int32_t label, const char *against,
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
static void pb_verify__pstructure(struct pb_verify__cellstate *cs, int32_t label, const struct pb_verify_pvalues *v,
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
                        "count intervals %.17g", j, pb_verify__level_names[lv], ps->lambda[li], v->J[lv][li][j][1],
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
                      pb_verify__level_names[lv]);
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
                        "feasible mean %.17g outside", j, pb_verify__level_names[lv], lam, J[0], J[1], jo, mean);
        for (int32_t o = 0; o < P; o++) {
          if (o == j) continue;
          const double d = v->D[lv][li][j][o], oo = lam * v->H_obs[o] + (1 - lam) * v->L_obs[o];
          const double gap = J[1] - v->J[lv][li][o][0], low = J[0] - v->J[lv][li][o][1];
          int dk = low <= jo - oo + tol && jo - oo <= d + tol && d <= gap + tol;
          if (lv > 0) dk = dk && d <= v->D[lv - 1][li][j][o] + tol;
          pb_verify__pchk(cs, label, PB_VF_POL_CHK_STRUCT, dk,
                          "policy pair (%d, %d) at %s, lambda %g: D+ %.17g not within [observed difference %.17g, "
                          "separate gap %.17g], or larger than at the coarser level", j, o,
                          pb_verify__level_names[lv], lam, d, jo - oo, gap);
        }
      }
    }
  }
}

/* Stable (label, index) order of a cell's records: this module's own grouping. */
struct pb_verify__li { int32_t label, idx; };
static int pb_verify__cmp_li(const void *pa, const void *pb)
{
  const struct pb_verify__li *a = pa, *b = pb;
  if (a->label != b->label) return a->label < b->label ? -1 : 1;
  return (a->idx > b->idx) - (a->idx < b->idx);
}

/* li[0 .. n) = the records in (label, index) order: a counting sort over the
 * labels' range when it is small (stable: indices ascend within a label),
 * else qsort; both give the one such order. */
static void pb_verify__group(const int32_t *label, int32_t n, struct pb_verify__li *li)
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

/* Thread-local scratch of one cell. */
struct pb_verify__scratch {
  struct pb_verify__li *li;
  struct pb_verify_class *cls;
  int32_t *cbeg, *clabel;
  struct pb_verify_perm **lists;
  int32_t cap;
  /* policies */
  uint32_t *tally;
  struct pb_verify_pclass *pq;
  struct pb_verify_pacc *pacc, *pacc1;
  struct pb_verify_pvalues *pv_mine, *pv_eng, *pv_cart;
  struct pb_policy_result *pres;
  uint16_t (*W)[PB_VERIFY_MAX_POL], (*R)[PB_VERIFY_MAX_POL];
  struct pb_verify_memo *memo; /* the thread's, kept across rounds (NULL: off) */
  size_t memo_pack;            /* bytes of a packed class in a memo payload */
};

/* Policy scratch; @p memo: the thread's memo slot (created on first use,
 * freed by the caller), or NULL for none. */
static void pb_verify__scratch_policies(struct pb_verify__scratch *s, const struct pb_verify_options *opt,
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

static void pb_verify__scratch_free(struct pb_verify__scratch *s)
{
  free(s->li), free(s->cls), free(s->cbeg), free(s->clabel), free(s->lists);
  free(s->W), free(s->R), free(s->tally), free(s->pq), free(s->pv_mine), free(s->pv_eng), free(s->pv_cart), free(s->pres);
  pb_verify_pacc_free(s->pacc);
  pb_verify_pacc_free(s->pacc1);
  memset(s, 0, sizeof *s);
}

/* What a cell is compared with. */
struct pb_verify__ref {
  int in_process;             /* run pb_bounds_cell per class and per cell */
  const struct pb_verify_values *file; /* else the --against file's values of this cell */
  int file_i5;                /* the file holds I5 and variable-support values for this cell */
  /* test-only hook (PAIRBOUND_VERIFY_TEST_CORRUPT=CELL[,LABEL]): add a small
   * error to the policy engine's D+ of this cell, or of this class alone, so
   * that the tests can show that a wrong engine value is caught */
  int corrupt;
  int32_t corrupt_label;      /* -1: the cell-level result */
};

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
                         pb_verify__level_names[lv], H[lv][e] / N, L[lv][e] / N, eh[lv][e], el[lv][e]);
    }
  cs->rec[PB_VF_CF_RES] = worst;
}

static void pb_verify__cell(const struct pb_cell_view *d, const struct pb_verify_options *opt,
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
    if (q->H[PB_VERIFY_I5][1] - q->H[PB_VERIFY_I5][0] < q->H[PB_VERIFY_IK][1] - q->H[PB_VERIFY_IK][0])
      rec[PB_VF_NARROWER_H]++;
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

/* Covered cells: source filter, then all / panel / a per-source sample in
 * SHA-256 order of names (identical on every rank). */
static uint8_t *pb_verify__select(const struct pb_stage *st, const struct pb_cell_ref *cells,
                                  const struct pb_verify_options *opt)
{
  const struct pb_meta *meta = st->meta;
  uint8_t *cov = pb_calloc((size_t)(st->n_cells > 0 ? st->n_cells : 1), 1);
  uint8_t *src_on = pb_calloc((size_t)meta->n_sources, 1);
  if (!opt->sources) memset(src_on, 1, (size_t)meta->n_sources);
  else {
    char *list = pb_strdup(opt->sources), *save = NULL;
    for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
      int32_t s = pb_store_meta_find_source(meta, w);
      if (s >= 0) src_on[s] = 1;
    }
    free(list);
  }
  struct pb_verify__key { uint64_t key; int64_t cell; } *keys = NULL;
  for (int32_t s = 0; s < meta->n_sources; s++) {
    if (!src_on[s]) continue;
    const struct pb_source *src = &meta->sources[s];
    int64_t m = 0;
    if (opt->cells == PB_VERIFY_CELLS_SAMPLE)
      keys = pb_realloc(keys, (size_t)(st->n_cells > 0 ? st->n_cells : 1) * sizeof *keys);
    for (int64_t c = 0; c < st->n_cells; c++) {
      if (cells[c].source != s) continue;
      if (opt->cells == PB_VERIFY_CELLS_ALL) cov[c] = 1;
      else if (opt->cells == PB_VERIFY_CELLS_PANEL)
        cov[c] = st->protocol.src[s].panel[cells[c].model * src->n_conditions + cells[c].condition];
      else {
        char text[1024];
        snprintf(text, sizeof text, "verify|%llu|%s|%s|%s", (unsigned long long)opt->sample_seed, src->name,
                 meta->model_ids[cells[c].model], src->conditions[cells[c].condition]);
        keys[m++] = (struct pb_verify__key){pb_checksum_sha256_key(text), c};
      }
    }
    if (opt->cells == PB_VERIFY_CELLS_SAMPLE) {
      /* partial selection of the smallest keys (ties by cell index) */
      for (int64_t i = 0; i < m && i < opt->sample; i++) {
        int64_t best = i;
        for (int64_t j = i + 1; j < m; j++)
          if (keys[j].key < keys[best].key || (keys[j].key == keys[best].key && keys[j].cell < keys[best].cell)) best = j;
        struct pb_verify__key t = keys[i];
        keys[i] = keys[best];
        keys[best] = t;
        cov[keys[i].cell] = 1;
      }
    }
  }
  free(keys);
  free(src_on);
  return cov;
}

/* The --against file's per-cell values for cells [first, last): the bounds
 * stage's columns, read through its field table. */
static int pb_verify__read_against(const char *path, const struct pb_stage *st, struct pb_verify_values *vals,
                                   uint8_t *has_i5, float *tau)
{
  const int64_t n = st->last - st->first;
  double *recs = pb_malloc((size_t)(n > 0 ? n : 1) * PB_IF_N * sizeof *recs);
  int status = pb_fields_read(&pb_identify_fields, path, st->n_cells, st->first, n, recs);
  if (status != PB_OK) {
    char why[1024];
    snprintf(why, sizeof why, "%s", pb_error_message());
    pb_error_set("%s (not a `pairbound bounds` results file of this store?)", why);
  }
  /* per target: obs, I0, Ik, I5 intervals (the record's order since bounds.tsv's first columns) */
  static const int first[PB_VERIFY_NTARGETS] = {PB_IF_H_OBS, PB_IF_L_OBS, PB_IF_D_OBS};
  for (int64_t c = 0; c < n && status == PB_OK; c++) {
    const double *rec = recs + c * PB_IF_N;
    struct pb_verify_values *v = &vals[c];
    for (int t = 0; t < PB_VERIFY_NTARGETS; t++) {
      double(*x)[2] = t == 0 ? v->H : t == 1 ? v->L : v->dMk;
      *(t == 0 ? &v->H_obs : t == 1 ? &v->L_obs : &v->dMk_obs) = rec[first[t]];
      for (int j = 0; j < 6; j++) x[j / 2][j % 2] = rec[first[t] + 1 + j];
    }
    tau[c] = (float)rec[PB_IF_TAU];
    /* H at I5 is defined in every cell where the bounds run computed I5 */
    has_i5[c] = !isnan(v->H[2][0]) || !isnan(v->H[2][1]);
  }
  free(recs);
  return status;
}

static void pb_verify__tsv(const struct pb_stage *st, const struct pb_cell_block *b, const double *recs,
                           char *const *fail, struct pb_text *t)
{
  for (int64_t c = 0; c < b->n_cells; c++) {
    const double *rec = recs + c * PB_VF_N;
    if (rec[PB_VF_COVERED] != 1) continue;
    const struct pb_cell_view d = pb_cells_view(st->meta, &b->cells[c], NAN);
    pb_text_printf(t, "%s\t%s\t%s", d.model, d.source, d.condition);
    pb_fields_tsv_values(pb_verify_fields(), rec, PB_VF_COVERED + 1, t);
    pb_text_printf(t, "\t%s\n", fail[c][0] ? fail[c] : "-");
  }
}

/* One rank's verification state: per cell its record, failure text, name,
 * thresholds and (--against) the file's values. */
struct pb_verify__work {
  int64_t nc;
  struct pb_cell_ref *all_cells;
  uint8_t *cov;                      /* [global cell] covered by this run */
  double *recs;
  char **fail, **where;
  float *tau, *ftau;
  struct pb_verify_policy_setup *pset;
  struct pb_verify_values *fvals;
  uint8_t *fi5;
  int64_t corrupt_cell;              /* test hook (PAIRBOUND_VERIFY_TEST_CORRUPT) */
  int32_t corrupt_label;
};

/* --sources must name sources of the store. */
static int pb_verify__check_sources(const struct pb_stage *st, const struct pb_verify_options *opt)
{
  if (!opt->sources) return PB_OK;
  char *list = pb_strdup(opt->sources), *save = NULL;
  int status = PB_OK;
  for (char *w = strtok_r(list, ",", &save); w && status == PB_OK; w = strtok_r(NULL, ",", &save))
    if (pb_store_meta_find_source(st->meta, w) < 0) {
      pb_error_set("--sources: the store has no source '%s'", w);
      status = PB_FAIL;
    }
  free(list);
  return status;
}

/* Records, names, thresholds and policies of this rank's cells; the
 * --against file's values.  Returns PB_FAIL when a covered cell has no threshold. */
static int pb_verify__setup(const struct pb_stage *st, const struct pb_cell_block *b,
                            const struct pb_verify_options *opt, struct pb_verify__work *w)
{
  const int64_t nc = b->n_cells, nalloc = nc > 0 ? nc : 1;
  int status = PB_OK;
  w->nc = nc;
  pb_dist_cells(st->meta, &w->all_cells);
  w->cov = pb_verify__select(st, w->all_cells, opt);
  w->recs = pb_malloc((size_t)nalloc * PB_VF_N * sizeof *w->recs);
  w->fail = pb_malloc((size_t)nalloc * sizeof *w->fail);
  w->where = pb_malloc((size_t)nalloc * sizeof *w->where);
  w->tau = pb_malloc((size_t)nalloc * sizeof *w->tau);
  w->ftau = pb_malloc((size_t)nalloc * sizeof *w->ftau);
  w->pset = opt->policies ? pb_calloc((size_t)nalloc, sizeof *w->pset) : NULL;
  /* test-only hook: PAIRBOUND_VERIFY_TEST_CORRUPT=CELL[,LABEL] (global cell index, class label) */
  w->corrupt_cell = -1;
  w->corrupt_label = -1;
  int64_t hook[2];
  int n_hook = 0;
  if (pb_env_int_list(PB_ENV_VERIFY_TEST_CORRUPT, 0, INT_MAX, 2, hook, &n_hook) == PB_OK)
    w->corrupt_cell = hook[0], w->corrupt_label = n_hook > 1 ? (int32_t)hook[1] : -1;
  for (int64_t c = 0; c < nc; c++) {
    const struct pb_cell_ref *r = &b->cells[c].ref;
    const struct pb_source *src = &st->meta->sources[r->source];
    double *rec = w->recs + c * PB_VF_N;
    for (int f = 0; f < PB_VF_N; f++) rec[f] = NAN;
    rec[PB_VF_COVERED] = w->cov[st->first + c];
    for (int f = PB_VF_CLASSES; f <= PB_VF_I5_MISSING; f++) rec[f] = 0;
    for (int f = PB_VF_LP_CLASSES; f <= PB_VF_LP_BNB; f++) rec[f] = 0;
    rec[PB_VF_FAILED] = 0;
    rec[PB_VF_FAIL_LABEL] = -1;
    w->fail[c] = pb_calloc(PB_VERIFY__MSG, 1);
    size_t len = strlen(st->meta->model_ids[r->model]) + strlen(src->name) + strlen(src->conditions[r->condition]) + 3;
    w->where[c] = pb_malloc(len);
    snprintf(w->where[c], len, "%s/%s/%s", st->meta->model_ids[r->model], src->name, src->conditions[r->condition]);
    w->tau[c] = opt->have_tau ? opt->tau : st->protocol.src[r->source].tau[r->model];
    if (w->cov[st->first + c] && isnan(w->tau[c]) && status == PB_OK) {
      pb_error_set("source %s, model %s: no development threshold (the source has no development images); give --tau",
                   src->name, st->meta->model_ids[r->model]);
      status = PB_FAIL;
    }
    for (int f = PB_VF_POL_CLASSES; f < PB_VF_POL_RES; f++) rec[f] = 0;
    if (opt->policies) {
      /* policy thresholds as `pairbound policy`: --policy-taus, else the
       * development order statistics at q = .6 .. 1 */
      struct pb_verify_policy_setup *p = &w->pset[c];
      p->n_pol = opt->n_taus > 0 ? opt->n_taus : PB_PROTOCOL_N_Q;
      for (int32_t j = 0; j < p->n_pol; j++) {
        p->tau[j] = opt->n_taus > 0 ? opt->taus[j] : st->protocol.src[r->source].policy_tau[r->model * PB_PROTOCOL_N_Q + j];
        if (w->cov[st->first + c] && isnan(p->tau[j]) && status == PB_OK) {
          pb_error_set("source %s, model %s: no development policy thresholds (the source has no development images); "
                       "give --policy-taus", src->name, st->meta->model_ids[r->model]);
          status = PB_FAIL;
        }
      }
      p->n_lambda = opt->n_lambdas;
      memcpy(p->lambda, opt->lambdas, (size_t)opt->n_lambdas * sizeof p->lambda[0]);
    }
  }
  if (status == PB_OK && opt->against) {
    w->fvals = pb_calloc((size_t)nalloc, sizeof *w->fvals);
    w->fi5 = pb_calloc((size_t)nalloc, 1);
    status = pb_verify__read_against(opt->against, st, w->fvals, w->fi5, w->ftau);
  }
  return status;
}

/* Block checkpoints (pairbound/blocks.h): a block is K consecutive cells in
 * global order, K from the cell count alone (about 256 blocks), so any rank
 * count maps to the same blocks; its payload is each cell's record and
 * failure text. */
#define PB_VERIFY_BLOCKS 256

/* One covered cell (its record and failure text in w). */
static void pb_verify__one(const struct pb_stage *st, const struct pb_cell_block *b, const struct pb_verify_options *opt,
                           struct pb_verify__work *w, struct pb_verify__scratch *sc, int64_t c, double *t_enum)
{
  struct pb_verify__cellstate cs = {w->recs + c * PB_VF_N, w->fail[c], w->where[c]};
  struct pb_verify__ref ref = {opt->against == NULL, w->fvals ? &w->fvals[c] : NULL, w->fi5 ? w->fi5[c] : 0,
                               st->first + c == w->corrupt_cell, w->corrupt_label};
  if (opt->against && !(w->ftau[c] == w->tau[c])) {
    pb_verify__failf(&cs, -1, "results file threshold %.9g differs from this run's %.9g (other protocol options?)",
                     (double)w->ftau[c], (double)w->tau[c]);
    cs.rec[PB_VF_COVERED] = 1;
    return;
  }
  const struct pb_cell_view d = pb_cells_view(st->meta, &b->cells[c], w->tau[c]);
  pb_verify__cell(&d, opt, w->pset ? &w->pset[c] : NULL, &ref, sc, &cs, t_enum);
}

/* Block k's checkpoint into w: 1 when intact (and of this layout), else 0. */
static int pb_verify__block_load(const struct pb_stage *st, struct pb_verify__work *w, struct pb_blocks *bl, int64_t per,
                                 int64_t k)
{
  int64_t ca, cb;
  pb_blocks_items(st->n_cells, per, k, &ca, &cb);
  struct pb_bytes pay = {0};
  int ok = pb_blocks_load(bl, k, &pay) && pay.len == (size_t)(cb - ca) * (PB_VF_N * sizeof(double) + PB_VERIFY__MSG);
  for (int64_t c = ca - st->first; c < cb - st->first && ok; c++) {
    pb_blocks_get(&pay, w->recs + c * PB_VF_N, PB_VF_N * sizeof(double));
    pb_blocks_get(&pay, w->fail[c], PB_VERIFY__MSG);
    w->fail[c][PB_VERIFY__MSG - 1] = '\0';
  }
  pb_blocks_bytes_free(&pay);
  return ok;
}

/* Checkpoint block k from w. */
static int pb_verify__block_save(const struct pb_stage *st, const struct pb_verify__work *w, struct pb_blocks *bl,
                                 int64_t per, int64_t k)
{
  int64_t ca, cb;
  pb_blocks_items(st->n_cells, per, k, &ca, &cb);
  struct pb_bytes pay = {0};
  for (int64_t c = ca - st->first; c < cb - st->first; c++) {
    pb_blocks_put(&pay, w->recs + c * PB_VF_N, PB_VF_N * sizeof(double));
    pb_blocks_put(&pay, w->fail[c], PB_VERIFY__MSG);
  }
  int status = pb_blocks_save(bl, k, &pay);
  pb_blocks_bytes_free(&pay);
  return status;
}

/* Every covered cell of this rank, a round of blocks at a time: the round's
 * intact checkpoints are read, its other cells verified and their blocks
 * checkpointed as each completes; a signal or a failure on any rank ends the
 * loop at the next round.  Returns the enumerating thread-seconds. */
static double pb_verify__compute(const struct pb_stage *st, const struct pb_cell_block *b,
                                 const struct pb_verify_options *opt, struct pb_verify__work *w, struct pb_blocks *bl,
                                 int64_t per, int *status, int64_t memo_counts[2])
{
  double t_enum = 0.0;
  /* one memo per thread, for the whole run (PAIRBOUND_VERIFY_NO_MEMO=1: none,
   * for the test that shows a memo changes no byte) */
  const int nth = omp_get_max_threads();
  const char *no_memo = pb_env_get(PB_ENV_VERIFY_NO_MEMO);
  const int use_memo = opt->policies && !(no_memo && strcmp(no_memo, "1") == 0);
  struct pb_verify_memo **memos = pb_calloc((size_t)nth, sizeof *memos);
  struct pb_progress prog;
  struct pb_error_first fe;
  pb_error_first_init(&fe);
  pb_progress_begin(&prog, "verify", "cells", w->nc);
  uint8_t *todo = pb_calloc((size_t)(w->nc > 0 ? w->nc : 1), 1);
  for (int64_t r = 0; r < bl->rounds; r++) {
    int64_t b0, b1, c0, c1;
    pb_blocks_round_items(bl, r, st->n_cells, per, &b0, &b1, &c0, &c1);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t k = b0; k < b1; k++) {
      int64_t ca, cb;
      pb_blocks_items(st->n_cells, per, k, &ca, &cb);
      int ok = pb_verify__block_load(st, w, bl, per, k);
      for (int64_t c = ca; c < cb; c++) todo[c - st->first] = !ok;
      if (ok) pb_progress_step(&prog, cb - ca);
    }
    /* cells of the round's other blocks, dynamically (their costs differ
     * widely); the thread that completes a block checkpoints it */
    int64_t *left = pb_calloc((size_t)(b1 - b0 > 0 ? b1 - b0 : 1), sizeof *left);
    for (int64_t c = c0; c < c1; c++) left[c / per - b0] += todo[c - st->first];
#pragma omp parallel reduction(+ : t_enum)
    {
      struct pb_verify__scratch sc;
      memset(&sc, 0, sizeof sc);
      if (opt->policies) pb_verify__scratch_policies(&sc, opt, use_memo ? &memos[omp_get_thread_num()] : NULL);
#pragma omp for schedule(dynamic, 4)
      for (int64_t c = c0 - st->first; c < c1 - st->first; c++) {
        if (!todo[c]) continue;
        pb_progress_step(&prog, 1);
        if (w->cov[st->first + c]) pb_verify__one(st, b, opt, w, &sc, c, &t_enum);
        const int64_t k = (st->first + c) / per;
        int64_t rest;
#pragma omp atomic capture seq_cst /* a flush: the block's other cells are visible to the one that saves it */
        rest = --left[k - b0];
        if (rest == 0 && pb_verify__block_save(st, w, bl, per, k) != PB_OK) pb_error_first_record(&fe, k * per);
      }
      pb_verify__scratch_free(&sc);
      pb_verify_lp_release(); /* no-op in a thread that solved no LP */
    }
    free(left);
    if (pb_blocks_poll(bl, pb_error_first_status(&fe))) break; /* no collective call in the loop */
  }
  free(todo);
  memo_counts[0] = memo_counts[1] = 0;
  for (int t = 0; t < nth; t++) {
    int64_t h, m;
    pb_verify_memo_counts(memos[t], &h, &m);
    memo_counts[0] += h, memo_counts[1] += m;
    pb_verify_memo_free(memos[t]);
  }
  free(memos);
  pb_progress_end(&prog);
  *status = pb_error_first_status(&fe);
  return t_enum;
}

/* Columns, verify.tsv and REPORT.md (collective); @p msg receives the first
 * failure in cell order, @p totals permutations, classes enumerated, failed. */
static int pb_verify__write(struct pb_stage *st, const struct pb_cell_block *b, const struct pb_verify_options *opt,
                            const struct pb_verify__work *w, int status, char msg[PB_VERIFY__MSG],
                            int64_t *first_fail_out, double totals[PB_VERIFY__NTOT])
{
  const int64_t nc = w->nc;
  MPI_Comm comm = st->comm;
  if (status == PB_OK) status = pb_fields_write(pb_verify_fields(), st->results, st->n_cells, st->first, nc, w->recs);
  /* first failure in cell order, its text from the rank that holds it */
  int64_t my_first = INT64_MAX, first_fail;
  for (int64_t c = 0; c < nc && my_first == INT64_MAX; c++)
    if (w->recs[c * PB_VF_N + PB_VF_FAILED] > 0) my_first = st->first + c;
  MPI_Allreduce(&my_first, &first_fail, 1, MPI_INT64_T, MPI_MIN, comm);
  msg[0] = '\0';
  if (first_fail != INT64_MAX) {
    int holder = my_first == first_fail ? st->rank : st->size, root;
    MPI_Allreduce(&holder, &root, 1, MPI_INT, MPI_MIN, comm);
    if (st->rank == root) snprintf(msg, PB_VERIFY__MSG, "%s", w->fail[first_fail - st->first]);
    MPI_Bcast(msg, PB_VERIFY__MSG, MPI_CHAR, root, comm);
  }
  if (status == PB_OK) {
    struct pb_text t = {0}, head = {0};
    pb_verify__tsv(st, b, w->recs, w->fail, &t);
    /* the covered flag is implied: verify.tsv lists covered cells only */
    pb_fields_tsv_header(pb_verify_fields(), "model\tsource\tcondition", PB_VF_COVERED + 1, &head);
    pb_text_printf(&head, "\tfailure\n");
    status = pb_results_tsv(st->results, "verify.tsv", head.buf, t.buf, t.len);
    pb_text_free(&t);
    pb_text_free(&head);
  }
  /* permutations, classes enumerated, failed, classes, by LP, not checked, covered cells */
  for (int i = 0; i < PB_VERIFY__NTOT; i++) totals[i] = 0;
  for (int64_t c = 0; c < nc; c++) {
    const double *rec = w->recs + c * PB_VF_N;
    if (rec[PB_VF_COVERED] != 1) continue;
    totals[0] += rec[PB_VF_PERMS];
    totals[1] += rec[PB_VF_ENUMERATED];
    totals[2] += rec[PB_VF_FAILED];
    totals[3] += rec[PB_VF_CLASSES];
    totals[4] += rec[PB_VF_LP_CLASSES];
    totals[5] += rec[PB_VF_SKIPPED];
    totals[6] += 1;
  }
  MPI_Allreduce(MPI_IN_PLACE, totals, PB_VERIFY__NTOT, MPI_DOUBLE, MPI_SUM, comm);
  /* coverage first: what was checked by which method, and what not and why */
  const int lim = opt->lp_max > opt->max_class ? opt->lp_max : opt->max_class;
  pb_message("verify: coverage: %.0f classes in %.0f cells: %.0f enumerated (<= %d records per side), %.0f by exact "
             "LP (<= %d), %.0f not checked (larger than %d records per side)",
             totals[3], totals[6], totals[1], (int)opt->max_class, totals[4], (int)opt->lp_max, totals[5], lim);
  if (totals[5] > 0 && totals[1] + totals[4] > 0)
    pb_warning("verify: %.0f of %.0f classes not checked (larger than %d records per side; raise --lp-max, at most %d)",
               totals[5], totals[3], lim, PB_VERIFY_LP_MAX_N);
  if (status == PB_OK) {
    status = pb_verify_report(st->meta, w->all_cells, w->recs, st->first, nc, st->n_cells, opt, msg, st->results, comm);
    MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  }
  *first_fail_out = first_fail;
  return status;
}

static void pb_verify__work_free(struct pb_verify__work *w)
{
  for (int64_t c = 0; c < w->nc; c++) free(w->fail[c]), free(w->where[c]);
  free(w->fail), free(w->where), free(w->recs), free(w->tau), free(w->ftau), free(w->pset), free(w->fvals);
  free(w->fi5), free(w->cov), free(w->all_cells);
}

/* What checking one cell of each source costs, in steps of about 15 ns on
 * one core, from its classes' evaluation records per side n: Heap's
 * enumeration n! bijections plus 40 + 3 n^2 for the class's set-up and
 * levels; an exact LP 10,000 + 70 n (measured: 173 us per class at n = 25,
 * 0.65 ms at n = 500); a class too large to check, its n records.  The
 * blocks' partition over ranks follows it (a cell of the paper store's Syn,
 * 1,000 classes of 5, measured 3.4 ms, 17 times one of its other sources),
 * and every rank then runs its blocks at its own pace (pb_blocks_poll). */
static int64_t *pb_verify__source_costs(const struct pb_meta *meta, const struct pb_verify_options *opt)
{
  int64_t *cost = pb_calloc((size_t)(meta->n_sources > 0 ? meta->n_sources : 1), sizeof *cost);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *src = &meta->sources[s];
    int32_t *n = pb_calloc((size_t)(src->n_classes > 0 ? src->n_classes : 1), sizeof *n);
    for (int32_t i = 0; i < src->n_images; i++)
      if (src->split[i] == PB_SPLIT_EVAL && src->labels[i] >= 0 && src->labels[i] < src->n_classes) n[src->labels[i]]++;
    for (int32_t l = 0; l < src->n_classes; l++) {
      const int64_t k = n[l];
      int64_t f = 1;
      for (int64_t j = 2; j <= k && k <= opt->max_class; j++) f *= j;
      cost[s] += k == 0 ? 0 : k <= opt->max_class ? 40 + 3 * k * k + f : k <= opt->lp_max ? 10000 + 70 * k : k;
    }
    free(n);
  }
  return cost;
}

int pb_verify_run(const char *store_path, const char *outdir, MPI_Comm comm, const struct pb_protocol_options *popt,
                  const struct pb_verify_options *opt, const char *provenance)
{
  struct pb_stage st;
  struct pb_cell_block b;
  if (opt->max_class < 1 || opt->max_class > PB_VERIFY_MAX_N) {
    pb_error_set("--max-class must be in [1, %d]", PB_VERIFY_MAX_N);
    return PB_FAIL;
  }
  struct pb_timer tm;
  pb_timer_start(&tm, "verify");
  if (pb_stage_open(store_path, outdir, comm, popt, provenance, &st)) return PB_FAIL;
  if (pb_stage_require(&st, store_path, "verify", PB_STAGE_NEEDS_CELLS | PB_STAGE_NEEDS_EVAL)) return pb_stage_close(&st, PB_FAIL);
  int status = pb_verify__check_sources(&st, opt);
  if (status != PB_OK) return pb_stage_close(&st, status);
  /* blocks of cells in global order, split over ranks by their covered cells */
  struct pb_cell_ref *all;
  pb_dist_cells(st.meta, &all);
  uint8_t *cov = pb_verify__select(&st, all, opt);
  int64_t nb, per = pb_blocks_per(st.n_cells, PB_VERIFY_BLOCKS, &nb);
  int64_t *cost = pb_calloc((size_t)(nb > 0 ? nb : 1), sizeof *cost), *src_cost = pb_verify__source_costs(st.meta, opt);
  for (int64_t c = 0; c < st.n_cells; c++) cost[c / per] += 1 + cov[c] * src_cost[all[c].source];
  free(src_cost);
  free(cov);
  free(all);
  struct pb_blocks bl;
  status = pb_blocks_open(&bl, outdir, "verify", nb, cost, comm);
  free(cost);
  st.first = bl.first * per;
  st.last = bl.last * per < st.n_cells ? bl.last * per : st.n_cells;
  if (status == PB_OK)
    status = pb_cells_load(st.store, st.first, st.last, PB_FIELD_PRED | PB_FIELD_SMAX | PB_FIELD_PTRUE, &b);
  status = pb_error_agree(comm, status);
  if (status != PB_OK) return pb_stage_close(&st, pb_blocks_close(&bl, status));
  struct pb_verify__work w;
  memset(&w, 0, sizeof w);
  status = pb_verify__setup(&st, &b, opt, &w);
  status = pb_error_agree(comm, status);
  pb_timer_lap(&tm, "load");
  int64_t memo_counts[2] = {0, 0};
  const double t_enum = status == PB_OK ? pb_verify__compute(&st, &b, opt, &w, &bl, per, &status, memo_counts) : 0.0;
  status = pb_blocks_close(&bl, pb_error_agree(comm, status));
  pb_timer_lap(&tm, "verify");
  char msg[PB_VERIFY__MSG] = "";
  int64_t first_fail;
  double totals[PB_VERIFY__NTOT];
  status = pb_verify__write(&st, &b, opt, &w, status, msg, &first_fail, totals);
  const int empty = status == PB_OK && totals[1] + totals[4] == 0;
  pb_timer_lap(&tm, "write");
  pb_timer_reduce(&tm, comm);
  double enum_cpu = t_enum;
  MPI_Allreduce(MPI_IN_PLACE, &enum_cpu, 1, MPI_DOUBLE, MPI_SUM, comm);
  const double mx[3] = {pb_timer_get(&tm, "load"), pb_timer_get(&tm, "verify"), pb_timer_get(&tm, "write")};
  /* enumeration CPU seconds over every thread of every rank (not a wall phase) */
  pb_timer_add(&tm, "enumeration_cpu", enum_cpu);
  pb_message("verify: %.0f classes enumerated, %.0f permutations; load %.3f s; verify %.3f s (%.3g permutations/s "
             "overall, %.3g per enumerating thread-second); write %.3f s",
             totals[1], totals[0], mx[0], mx[1], mx[1] > 0 ? totals[0] / mx[1] : 0.0,
             enum_cpu > 0 ? totals[0] / enum_cpu : 0.0, mx[2]);
  if (opt->policies) {
    MPI_Allreduce(MPI_IN_PLACE, memo_counts, 2, MPI_INT64_T, MPI_SUM, comm);
    pb_message("verify: class policy checks: %lld canonical forms checked, %lld repeats reused (docs/verify.md)",
               (long long)memo_counts[1], (long long)memo_counts[0]);
  }
  if (status == PB_OK) status = pb_timer_write(&tm, st.results);
  pb_verify__work_free(&w);
  pb_cells_free(&b);
  status = pb_stage_close(&st, status);
  if (status == PB_OK && first_fail != INT64_MAX) {
    /* outputs are complete and committed; the verdict is the exit status */
    pb_error_set("verification failed (%.0f failed comparisons or checks; see report/verify.tsv): %s", totals[2], msg);
    return PB_FAIL;
  }
  if (status == PB_OK && empty && !opt->allow_empty) {
    /* outputs are complete; a check of nothing is not a success */
    pb_error_set("verify checked no class: %.0f classes in %.0f covered cells, all larger than %d records per side "
                 "(raise --lp-max, or give --allow-empty)",
                 totals[3], totals[6], (int)(opt->lp_max > opt->max_class ? opt->lp_max : opt->max_class));
    return PB_FAIL;
  }
  return status;
}
