/* report/REPORT.md of `pairbound verify`: coverage, residual maxima with
 * their locations, structural checks and the C.1 narrowing count, from the
 * totals of every rank's cells (verify_stage_reduce.c). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/lsets.h"
#include "pairbound/table.h"
#include "pairbound/text.h"
#include "pairbound/output.h"
#include "verify_internal.h"

#define PP 100.0

static void pb_verify__where(const struct pb_meta *meta, const struct pb_cell_ref *r, char *buf, size_t len)
{
  const struct pb_source *src = &meta->sources[r->source];
  snprintf(buf, len, "%s/%s/%s", meta->model_ids[r->model], src->name, src->conditions[r->condition]);
}

static void pb_verify__num(struct pb_text *t, double x)
{
  if (isnan(x)) pb_text_printf(t, " | n/a");
  else pb_text_printf(t, " | %.3g", x);
}

/* The Verification section: method, verdict, counts. */
static void pb_verify__md_head(const struct pb_meta *meta, const struct pb_verify_options *opt,
                               const char *first_failure, int64_t n_cells, const struct pb_verify_sum *S,
                               const int64_t *lsets, struct pb_text *md)
{
  pb_text_printf(md, "# pairbound verify\n\n## Verification\n\n");
  pb_text_printf(md,
                 "Independent permutation enumeration (docs/verify.md): every within-class bijection of every class "
                 "with at most %d records per side, classified by its five-state counts; classes combined exactly "
                 "(sums of count extrema, a knapsack on the total overlap for the variable-support dM_k at I0). "
                 "Compared with %s%s. Tolerance %.0e in probability units.\n\n",
                 (int)opt->max_class, opt->against ? "the per-cell columns of " : "the bounds engine (pb_bounds_cell) "
                 "run in-process on every cell and on every enumerated class alone",
                 opt->against ? opt->against : "", PB_VERIFY_TOL);
  pb_text_printf(md, "**Verdict: %s**%s%s\n\n", first_failure[0] ? "FAILED" : "passed",
                 first_failure[0] ? " — first failure: " : "", first_failure);
  pb_text_printf(md, "- cells covered: %lld of %lld (%s%s); every class enumerated in %lld\n", (long long)S->covered,
                 (long long)n_cells,
                 opt->cells == PB_VERIFY_CELLS_ALL ? "all" : opt->cells == PB_VERIFY_CELLS_PANEL ? "panel" : "sample",
                 opt->sources ? ", sources restricted" : "", (long long)S->complete);
  pb_text_printf(md, "- classes: %.0f, enumerated %.0f, skipped as larger than %d records per side %.0f\n",
                 S->tot[PB_VF_CLASSES], S->tot[PB_VF_ENUMERATED], (int)opt->max_class,
                 S->tot[PB_VF_SKIPPED] + S->tot[PB_VF_LP_CLASSES]);
  const int lim = opt->lp_max > opt->max_class ? opt->lp_max : opt->max_class;
  pb_text_printf(md, "- **coverage**: %.0f classes: %.0f enumerated (at most %d records per side), %.0f checked by "
                 "exact integer programs (at most %d), %.0f not checked (larger than %d records per side)%s\n",
                 S->tot[PB_VF_CLASSES], S->tot[PB_VF_ENUMERATED], (int)opt->max_class, S->tot[PB_VF_LP_CLASSES],
                 (int)opt->lp_max, S->tot[PB_VF_SKIPPED], lim,
                 S->tot[PB_VF_ENUMERATED] + S->tot[PB_VF_LP_CLASSES] == 0 ? " — **nothing was checked**" : "");
  pb_text_printf(md, "- exact integer programs (GLPK rational simplex; branch and bound where the LP vertex is "
                 "fractional): %.0f solved, %.0f by branch and bound; largest residual against the bounds engine "
                 "(I5 H) %.3g over %lld cells, against the policy engine (I5 H, L, J, D+) %.3g over %lld cells\n",
                 S->tot[PB_VF_LP_PROGRAMS], S->tot[PB_VF_LP_BNB], S->lpn[0] ? S->lpmax[0] : NAN,
                 (long long)S->lpn[0], S->lpn[1] ? S->lpmax[1] : NAN, (long long)S->lpn[1]);
  pb_text_printf(md, "- cells not fully enumerated, whole-cell I0/Ik H and L against the closed forms (Eq. 4, 5, 7): "
                 "%lld cells, largest residual %.3g\n", (long long)S->lpn[2], S->lpn[2] ? S->lpmax[2] : NAN);
  pb_text_printf(md, "- bijections (permutations) enumerated: %.0f\n", S->tot[PB_VF_PERMS]);
  pb_text_printf(md,
                 "- whole-cell Cartesian products (at most %lld combinations): %lld cells, %.0f combinations, largest "
                 "residual %.3g\n",
                 (long long)opt->cartesian_max, (long long)S->cart_cells, S->cart_comb, S->cart_cells ? S->cart_max : NAN);
  pb_text_printf(md, "- classes whose five-state H interval is strictly narrower than at Ik: %.0f of %.0f (%.2f%%)\n",
                 S->tot[PB_VF_NARROWER_H], S->tot[PB_VF_ENUMERATED],
                 S->tot[PB_VF_ENUMERATED] > 0 ? 100.0 * S->tot[PB_VF_NARROWER_H] / S->tot[PB_VF_ENUMERATED] : NAN);
  if (lsets) {
    int64_t t[PB_VLS_N] = {0};
    for (int32_t s = 0; s < meta->n_sources; s++)
      for (int k = 0; k < PB_VLS_N; k++) t[k] += lsets[(size_t)s * PB_VLS_N + k];
    pb_text_printf(md, "- label sets (Appendix J; set correctness whatever `labels` says, table below): %lld classes "
                   "enumerated in %lld cells of sources with sets; L and dM_k equal at Ik and I5 in %lld; H strictly "
                   "narrower at I5 in %lld\n", (long long)t[PB_VLS_ENUMERATED], (long long)t[PB_VLS_CELLS],
                   (long long)t[PB_VLS_AGREE], (long long)t[PB_VLS_NARROWER]);
  }
  pb_text_printf(md, "- failed comparisons and checks: %.0f\n", S->tot[PB_VF_FAILED]);
  if (opt->against)
    pb_text_printf(md, "- cells whose results file has no I5 values (I5 and variable-support dM_k not compared): %lld\n",
                   (long long)S->i5_missing);
  pb_text_printf(md, "\nTimings and throughput are printed by the command (not written here, so that outputs are "
                      "identical for any number of ranks and threads).\n");

}

/* Coverage by source and the largest residuals with their cells and classes. */
static void pb_verify__md_residuals(const struct pb_meta *meta, const struct pb_cell_ref *cells,
                                    const struct pb_verify_sum *S, struct pb_text *md)
{
  pb_text_printf(md, "\n### Coverage by source\n\n| source | cells | classes enumerated | classes skipped | "
                      "permutations | H narrower at I5 | share |\n|---|---|---|---|---|---|---|\n");
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_src_tot *b = &S->bys[s];
    pb_text_printf(md, "| %s | %lld | %lld | %lld | %.0f | %lld | %s%.2f%% |\n", meta->sources[s].name,
                   (long long)b->cells, (long long)b->classes, (long long)b->skipped, b->perms, (long long)b->narrower,
                   "", b->classes ? 100.0 * (double)b->narrower / (double)b->classes : 0.0);
  }
  pb_text_printf(md, "\n### Largest residuals\n\nCell level: the cell's combined endpoints against the reference. "
                      "Class level: each enumerated class against the bounds engine run on that class alone (rates of "
                      "the class's own records). Probability units, then percentage points.\n\n"
                      "| target | value | cell residual | pp | cell | class residual | pp | cell, class |\n"
                      "|---|---|---|---|---|---|---|---|\n");
  for (int t = 0; t < PB_VERIFY_NTARGETS; t++)
    for (int j = 0; j < PB_VERIFY_NCMP; j++) {
      const int o = PB_VERIFY_NCMP * t + j;
      char w1[512] = "n/a", w2[600] = "n/a";
      if (S->rcell[o] >= 0) pb_verify__where(meta, &cells[S->rcell[o]], w1, sizeof w1);
      if (S->ccell[o] >= 0) {
        char w[512];
        pb_verify__where(meta, &cells[S->ccell[o]], w, sizeof w);
        snprintf(w2, sizeof w2, "%s, class %d", w, (int)S->clabel[o]);
      }
      pb_text_printf(md, "| %s | %s", pb_verify_target_names[t], pb_verify_cmp_names[j]);
      pb_verify__num(md, S->rcell[o] >= 0 ? S->rmax[o] : NAN);
      pb_verify__num(md, S->rcell[o] >= 0 ? S->rmax[o] * PP : NAN);
      pb_text_printf(md, " | %s", w1);
      pb_verify__num(md, S->ccell[o] >= 0 ? S->cmax[o] : NAN);
      pb_verify__num(md, S->ccell[o] >= 0 ? S->cmax[o] * PP : NAN);
      pb_text_printf(md, " | %s |\n", w2);
    }

}

/* Structural checks (and, with --policies, Lemma 1, Corollary 1 and the policy structure). */
static void pb_verify__md_checks(const struct pb_verify_options *opt, const struct pb_verify_sum *S, struct pb_text *md)
{
  pb_text_printf(md, "\n### Structural checks\n\nOn the enumerated values of every class and every fully "
                      "enumerated cell.\n\n| check | performed | failed |\n|---|---|---|\n");
  pb_text_printf(md, "| nesting I5 ⊆ Ik ⊆ I0 (H, L, dM_k) | %.0f | %.0f |\n", S->tot[PB_VF_CHK_NEST], S->tot[PB_VF_FAIL_NEST]);
  pb_text_printf(md, "| observed value inside each interval | %.0f | %.0f |\n", S->tot[PB_VF_CHK_OBS], S->tot[PB_VF_FAIL_OBS]);
  pb_text_printf(md, "| Theorem 1: L and dM_k equal at Ik and I5 | %.0f | %.0f |\n", S->tot[PB_VF_CHK_THM1],
                 S->tot[PB_VF_FAIL_THM1]);
  if (!opt->policies)
    pb_text_printf(md, "| Lemma 1, Corollary 1 (policy costs) | not run (give --policies) | |\n");
  else {
    pb_text_printf(md, "| Lemma 1 (Eq. 8): direct maximum of J_j = Eq. 8 from the enumerated count intervals | %.0f | %.0f |\n",
                   S->tot[PB_VF_POL_CHK_LEMMA1], S->tot[PB_VF_POL_FAIL_LEMMA1]);
    pb_text_printf(md, "| Corollary 1: attainable (L_j)_j vectors per class, J' intervals and D'+ equal at Ik and I5 | %.0f | %.0f |\n",
                   S->tot[PB_VF_POL_CHK_COR1], S->tot[PB_VF_POL_FAIL_COR1]);
    pb_text_printf(md, "| policy structure: nesting, observed values and feasible means inside, J_j^lo - J_l^hi <= observed "
                        "difference <= D+ <= J_j^hi - J_l^lo, D+ not above the coarser level | %.0f | %.0f |\n",
                   S->tot[PB_VF_POL_CHK_STRUCT], S->tot[PB_VF_POL_FAIL_STRUCT]);
  }
}

/* The Policy section (--policies): weights, thresholds, counts and the
 * largest cell- and class-level residuals per target and level. */
static void pb_verify__md_policy(const struct pb_meta *meta, const struct pb_cell_ref *cells,
                                 const struct pb_verify_options *opt, const struct pb_verify_sum *S, struct pb_text *md)
{
  const double *tot = S->tot;
  pb_text_printf(md, "\n## Policy\n\nRejection policies (seed 000 Section 4.2, Eq. 8, 10, 11, Corollary 1; "
                      "docs/verify.md): for every enumerated bijection the partner set of the correct accepted clean "
                      "records, hence h_j and l_j for every perturbed threshold; per class and level the extremes of "
                      "h_j, l_j, c_j = lambda h_j + (1 - lambda) l_j and c_j - c_l, exact means over feasible "
                      "bijections; classes combined by summing classwise extremes (the feasible set is a product over "
                      "classes). Compared with the policy engine (pb_policy_cell) run in-process on every cell and on "
                      "every enumerated class alone. Weights: ");
  for (int32_t i = 0; i < opt->n_lambdas; i++) pb_text_printf(md, "%s%g", i ? ", " : "", opt->lambdas[i]);
  if (opt->n_taus > 0) {
    pb_text_printf(md, ". Perturbed thresholds (--policy-taus): ");
    for (int32_t i = 0; i < opt->n_taus; i++) pb_text_printf(md, "%s%.9g", i ? ", " : "", (double)opt->taus[i]);
  } else
    pb_text_printf(md, ". Perturbed thresholds: the development order statistics at coverages .6 .7 .8 .9 1");
  pb_text_printf(md, ".\n\n");
  pb_text_printf(md, "- classes with enumerated policy counts: %.0f\n", tot[PB_VF_POL_CLASSES]);
  pb_text_printf(md, "- directed comparisons (level, weight, j != l) where D+ < J_j^hi - J_l^lo strictly (cell level): %.0f\n",
                 tot[PB_VF_POL_SHARED_STRICT]);
  pb_text_printf(md, "- Lemma 1 checks: %.0f, failed %.0f; Corollary 1 checks: %.0f, failed %.0f\n",
                 tot[PB_VF_POL_CHK_LEMMA1], tot[PB_VF_POL_FAIL_LEMMA1], tot[PB_VF_POL_CHK_COR1], tot[PB_VF_POL_FAIL_COR1]);
  pb_text_printf(md, "- whole-cell Cartesian products: %lld cells, largest residual %.3g\n", (long long)S->pcart_n,
                 S->pcart_n ? S->pcart_max : NAN);
  pb_text_printf(md, "\n| target | level | cell residual | pp | cell |\n|---|---|---|---|---|\n");
  for (int t = 0; t < PB_VERIFY_NPT; t++)
    for (int lv = 0; lv < (t == PB_VERIFY_PT_OBS ? 1 : PB_VERIFY_NLEVELS); lv++) {
      const int o = PB_VERIFY_PSLOT(t, lv);
      char w1[512] = "n/a";
      const struct pb_loc *l = &S->pres[o];
      if (l->cell >= 0) pb_verify__where(meta, &cells[l->cell], w1, sizeof w1);
      pb_text_printf(md, "| %s | %s", pb_verify_ptarget_names[t], t == PB_VERIFY_PT_OBS ? "-" : pb_verify_level_names[lv]);
      pb_verify__num(md, l->cell >= 0 ? l->v : NAN);
      pb_verify__num(md, l->cell >= 0 ? l->v * PP : NAN);
      pb_text_printf(md, " | %s |\n", w1);
    }
  pb_text_printf(md, "\nClass level (each class alone against the engine on that class, rates of its records):\n\n"
                      "| target | class residual | pp | cell, class |\n|---|---|---|---|\n");
  for (int t = 0; t < PB_VERIFY_NPT; t++) {
    char w2[600] = "n/a";
    const struct pb_loc *l = &S->pcres[t];
    if (l->cell >= 0) {
      char w[512];
      pb_verify__where(meta, &cells[l->cell], w, sizeof w);
      snprintf(w2, sizeof w2, "%s, class %d", w, (int)l->tag);
    }
    pb_text_printf(md, "| %s", pb_verify_ptarget_names[t]);
    pb_verify__num(md, l->cell >= 0 ? l->v : NAN);
    pb_verify__num(md, l->cell >= 0 ? l->v * PP : NAN);
    pb_text_printf(md, " | %s |\n", w2);
  }
}

/* A row of the label-set table: the source's PB_VLS_N counts. */
struct pb_verify__lsrow {
  const char *source;
  const int64_t *t;
};

static union pb_cell pb_verify__lsets_get(const void *ctx, const struct pb_column *c)
{
  const struct pb_verify__lsrow *r = ctx;
  if (c->arg < 0) return (union pb_cell){.s = r->source};
  if (c->arg < PB_VLS_N) return (union pb_cell){.i = r->t[c->arg]};
  const int64_t e = r->t[PB_VLS_ENUMERATED];
  return (union pb_cell){.x = e > 0 ? 100.0 * (double)r->t[PB_VLS_NARROWER] / (double)e : NAN};
}

/* Appendix J.1's enumeration under set correctness: report/verify_label_sets.tsv and its markdown. */
static int pb_verify__md_lsets(const struct pb_meta *meta, const int64_t *lsets, struct pb_results *res,
                               struct pb_text *md)
{
  static const struct pb_column cols[] = {
    {"source", PB_COL_STR, .arg = -1}, {"cells", PB_COL_INT, .arg = PB_VLS_CELLS},
    {"classes", PB_COL_INT, .arg = PB_VLS_CLASSES}, {"enumerated", PB_COL_INT, .arg = PB_VLS_ENUMERATED},
    {"larger_than_max_class", PB_COL_INT, .arg = PB_VLS_SKIPPED, .md = "larger than --max-class"},
    {"L_dMk_equal_Ik_I5", PB_COL_INT, .arg = PB_VLS_AGREE, .md = "L and dM_k equal at Ik and I5"},
    {"H_narrower_I5", PB_COL_INT, .arg = PB_VLS_NARROWER, .md = "H strictly narrower at I5"},
    {"H_narrower_pct", PB_COL_NUM, 2, .arg = PB_VLS_N, .md = "narrower (% of enumerated)"},
    {NULL}};
  static const struct pb_table_spec spec = {
    "Enumeration under label sets (seed Appendix J.1)",
    "Sources with label sets; the covered cells' matched images (evaluation images with a nonempty set), each record "
    "correct when its stored prediction is in its image's set, whatever `labels` says. Every within-class "
    "bijection of every class of at most --max-class records per side is enumerated (classes: the true labels); "
    "L_dMk_equal_Ik_I5 counts the classes whose L and dM_k intervals are the same at Ik and I5 (Theorem 1; any "
    "other class fails the run), H_narrower_I5 those whose five-state (I5) H interval is strictly narrower than at "
    "Ik. docs/verify.md, \"Label sets\".",
    cols};
  struct pb_table t = {{0}, {0}};
  pb_table_open(&t, &spec);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    if (!pb_lsets_source_has(&meta->sources[s])) continue;
    const struct pb_verify__lsrow row = {meta->sources[s].name, lsets + (size_t)s * PB_VLS_N};
    pb_table_row(&t, &spec, pb_verify__lsets_get, &row);
  }
  return pb_table_flush(&t, res, "verify_label_sets.tsv", md);
}

int pb_verify_report(const struct pb_meta *meta, const struct pb_cell_ref *cells, const struct pb_verify_sum *S,
                     int64_t n_cells, const struct pb_verify_options *opt, const char *first_failure,
                     const int64_t *lsets, struct pb_results *res)
{
  struct pb_text md = {0};
  int status = PB_OK;
  pb_verify__md_head(meta, opt, first_failure, n_cells, S, lsets, &md);
  pb_verify__md_residuals(meta, cells, S, &md);
  pb_verify__md_checks(opt, S, &md);
  if (lsets) status = pb_verify__md_lsets(meta, lsets, res, &md);
  if (opt->policies) pb_verify__md_policy(meta, cells, opt, S, &md);

  if (status == PB_OK) status = pb_results_write_report(res, "REPORT.md", md.buf, md.len);
  pb_text_free(&md);
  return status;
}
