/* More diagnostics of the identification stage: Table 2's targets beside
 * their class-conditional independent counterparts (Section 3.1, H.2), the
 * B.2 strata and positive-width counts, the B.4 support subsets, J.2's
 * cross-model support and F.1's protocols.  Cells are weighted equally
 * within a source; each rank adds its own cells into the totals
 * (pb_identify_more_add), rank 0 prints them. */
#include "config.h"

#include <math.h>
#include <stdint.h>

#include "pairbound/error.h"
#include "bounds_stage_internal.h"

#define PP 100.0

/* Table 2's summaries: paired (observed correspondence) field, independent
 * field (-1: none, E needs perturbed records only), and the scale to report. */
static const struct {
  const char *name;
  int paired, ind;
  double scale;
} pb_more__t2[] = {
  {"E", PB_IF_E, -1, PP},          {"H", PB_IF_H_OBS, PB_IF_H_IND, PP}, {"L", PB_IF_L_OBS, PB_IF_L_IND, PP},
  {"dMk", PB_IF_D_OBS, PB_IF_D_IND, PP}, {"ds_s", PB_IF_DSS, PB_IF_DSS_IND, PP},
  {"ds_w", PB_IF_DSW, PB_IF_DSW_IND, PP}, {"F", PB_IF_F, PB_IF_F_IND, PP}, {"A", PB_IF_A, PB_IF_A_IND, PP},
  {"Q", PB_IF_Q, PB_IF_Q_IND, 1.0},      {"k", PB_IF_K, PB_IF_K_IND, PP},
};

/* Table 2: mean paired value and mean independent counterpart over the cells
 * where both are defined (the paired value defined implies the independent
 * one is: the observed matching is one of those averaged). */
static void pb_more__table2_add(struct pb_identify_sum *S, int32_t s, const double *r)
{
  const int ns = (int)(sizeof pb_more__t2 / sizeof pb_more__t2[0]);
  for (int j = 0; j < ns; j++) {
    /* k is stored as a count; its share is k / n */
    const double div = pb_more__t2[j].paired == PB_IF_K ? r[PB_IF_NREC] : 1.0;
    const double p = r[pb_more__t2[j].paired] / div * pb_more__t2[j].scale;
    const double q = pb_more__t2[j].ind >= 0 ? r[pb_more__t2[j].ind] * pb_more__t2[j].scale : NAN;
    if (isnan(p) || (pb_more__t2[j].ind >= 0 && isnan(q))) continue;
    pb_rs_add(S, s, PB_RS_T2 + 3 * j + 0, p);
    pb_rs_add(S, s, PB_RS_T2 + 3 * j + 1, q);
    pb_rs_add(S, s, PB_RS_T2 + 3 * j + 2, p - q);
  }
}

static void pb_more__table2(const struct pb_meta *meta, const struct pb_identify_sum *S, struct pb_table *t)
{
  pb_table_begin(t, "Reliability targets and paired summaries with their independent counterparts (seed Table 2, "
                    "Section 3.1, Appendix H.2)",
                 "Per cell in bounds.tsv. Means over cells where the paired value (and, when it has one, the "
                 "class-conditional independent counterpart) is defined; percentage points except Q "
                 "(correlation). ds_s, ds_w: E[S - S' | T = s / w]; k: retained-correct share. E needs perturbed "
                 "records only and has no counterpart. Independent: every clean record with every perturbed "
                 "record of its class, weight 1/n_y; conditional means are ratios of expected numerator and "
                 "denominator (Eq. 14).",
                 "source\tsummary\tcells\tpaired\tindependent\tpaired_minus_independent", NULL);
  const int ns = (int)(sizeof pb_more__t2 / sizeof pb_more__t2[0]);
  for (int32_t s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1))
    for (int j = 0; j < ns; j++) {
      const int o = PB_RS_T2 + 3 * j;
      pb_table_str(t, meta->sources[s].name, 1);
      pb_table_str(t, pb_more__t2[j].name, 0);
      pb_table_int(t, pb_rs_count(S, s, o));
      pb_table_num(t, pb_rs_mean(S, s, o), pb_more__t2[j].scale == 1.0 ? 4 : 2);
      pb_table_num(t, pb_rs_mean(S, s, o + 1), pb_more__t2[j].scale == 1.0 ? 4 : 2);
      pb_table_num(t, pb_rs_mean(S, s, o + 2), pb_more__t2[j].scale == 1.0 ? -4 : -2);
      pb_table_end_row(t);
    }
}

/* B.2 stratifiers: K/N and the event fractions that H and L intersect. */
static const struct {
  const char *name;
  int field;
  double cut[2]; /* bins [0, cut0), [cut0, cut1), [cut1, 1] */
} pb_more__strat[] = {
  {"K/N", PB_IF_K, {0.1, 0.5}},
  {"U", PB_IF_U, {0.1, 0.3}},
  {"E", PB_IF_E, {0.1, 0.3}},
  {"V", PB_IF_V1, {0.1, 0.3}},
};

/* Appendix B.2 strata, positive widths (panel cells with the I5 pass), B.4 subsets: one cell. */
static void pb_more__panel_add(struct pb_identify_sum *S, int32_t s, const double *r)
{
  if (r[PB_IF_PANEL] != 1 || isnan(r[PB_IF_H_I5_LO])) return;
  const int nst = (int)(sizeof pb_more__strat / sizeof pb_more__strat[0]);
  for (int j = 0; j < nst; j++) {
    double x = r[pb_more__strat[j].field];
    if (pb_more__strat[j].field == PB_IF_K) x /= r[PB_IF_NREC];
    const int bin = x < pb_more__strat[j].cut[0] ? 0 : x < pb_more__strat[j].cut[1] ? 1 : 2;
    const int o = PB_RS_STRATA + 5 * (3 * j + bin);
    pb_rs_tally(S, s, o, 1);
    pb_rs_add(S, s, o + 1, (r[PB_IF_H_I5_HI] - r[PB_IF_H_I5_LO]) * PP);
    pb_rs_add(S, s, o + 2, (r[PB_IF_L_I5_HI] - r[PB_IF_L_I5_LO]) * PP);
    pb_rs_add(S, s, o + 3, (r[PB_IF_D_I5_HI] - r[PB_IF_D_I5_LO]) * PP);
    if (r[PB_IF_H_I0_HI] > 0) pb_rs_add(S, s, o + 4, (r[PB_IF_H_I5_HI] - r[PB_IF_H_I5_LO]) / r[PB_IF_H_I0_HI]);
  }
  pb_rs_tally(S, s, PB_RS_POS + 0, 1);
  pb_rs_tally(S, s, PB_RS_POS + 1, r[PB_IF_H_I5_HI] - r[PB_IF_H_I5_LO] > 0);
  pb_rs_tally(S, s, PB_RS_POS + 2, r[PB_IF_L_I5_HI] - r[PB_IF_L_I5_LO] > 0);
  pb_rs_tally(S, s, PB_RS_POS + 3, r[PB_IF_D_I5_HI] - r[PB_IF_D_I5_LO] > 0);
  pb_rs_tally(S, s, PB_RS_POS + 4, !isnan(r[PB_IF_D_I5_LO]));
  for (int j = 0; j < PB_IDENTIFY_N_MATCH_SEEDS; j++) {
    const double *x = r + PB_IF_MATCH + 4 * j;
    if (isnan(x[0])) continue;
    pb_rs_tally(S, s, PB_RS_POS + 5, 1);
    for (int k = 0; k < 3; k++) pb_rs_tally(S, s, PB_RS_POS + 6 + k, x[k] > 0);
    pb_rs_tally(S, s, PB_RS_POS + 9, !isnan(x[2]));
  }
}

static void pb_more__subsets_add(struct pb_identify_sum *S, int32_t s, const double *r)
{
  const double K = r[PB_IF_K];
  if (!isnan(K) && K == 0) {
    pb_rs_tally(S, s, PB_RS_SUB_ZK, 1);
    pb_rs_tally(S, s, PB_RS_SUB_ZK_IND0, r[PB_IF_K_IND] == 0);
  }
  if (!(K > 0)) return;
  const double W = fabs(r[PB_IF_WCOMP]) * PP, V = fabs(r[PB_IF_VCOMP]) * PP;
  for (int sub = 0; sub < 3; sub++) {
    if ((sub == 1 && K < 20) || (sub == 2 && K > 5)) continue;
    const int o = PB_RS_SUB + 6 * sub;
    pb_rs_tally(S, s, o, 1);
    pb_rs_add(S, s, o + 1, r[PB_IF_D_OBS] * PP);
    pb_rs_add(S, s, o + 2, (r[PB_IF_D_OBS] - r[PB_IF_D_IND]) * PP);
    pb_rs_add(S, s, o + 3, W);
    pb_rs_add(S, s, o + 4, V);
    pb_rs_tally(S, s, o + 5, V > W + PB_DECOMPOSITION_TIE_PP);
  }
}

/* Appendix B.2 strata: mean I5 widths on the panel by stratum. */
static void pb_more__strata(const struct pb_meta *meta, const struct pb_identify_sum *S, struct pb_table *t)
{
  static const char *const bins[3][3] = {{"[0,.1)", "[.1,.5)", "[.5,1]"}, {"[0,.1)", "[.1,.3)", "[.3,1]"}};
  pb_table_begin(t, "Panel I5 widths by support stratum (Appendix B.2)",
                 "Panel cells with the I5 pass; percentage points of N; H_norm divides the H width by the maximum "
                 "feasible H mass (cells where it is positive). Mean widths of empty strata are undefined; dMk "
                 "means exclude K = 0 cells. Strata by K/N and by the one-sided event fractions that H and L "
                 "intersect: U = P(C=1, Z=1) (left event of both), E = P(C'=0, Z'=1) (right event of H), "
                 "V = P(C'=1, Z'=0) (right event of L).",
                 "source\tstratifier\tstratum\tcells\tH_I5\tL_I5\tdMk_I5\tdMk_cells\tH_norm", NULL);
  const int nst = (int)(sizeof pb_more__strat / sizeof pb_more__strat[0]);
  for (int32_t s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1))
    for (int j = 0; j < nst; j++)
      for (int b = 0; b < 3; b++) {
        const int o = PB_RS_STRATA + 5 * (3 * j + b);
        pb_table_str(t, meta->sources[s].name, 1);
        pb_table_str(t, pb_more__strat[j].name, 0);
        pb_table_str(t, bins[j == 0 ? 0 : 1][b], 0);
        pb_table_int(t, pb_rs_int(S, s, o));
        for (int k = 0; k < 3; k++) pb_table_num(t, pb_rs_mean(S, s, o + 1 + k), 2);
        pb_table_int(t, pb_rs_count(S, s, o + 3));
        pb_table_num(t, pb_rs_mean(S, s, o + 4), 4);
        pb_table_end_row(t);
      }
}

/* Appendix B.2: cells (and matched cell-seeds) with a positive I5 width. */
static void pb_more__positive(const struct pb_meta *meta, const struct pb_identify_sum *S, int matched,
                              struct pb_table *t)
{
  pb_table_begin(t, "Positive remaining five-state widths (Appendix B.2)",
                 "Panel cells with the I5 pass (original support) and panel cell-seeds of the matched supports: "
                 "how many have a positive I5 width of H, L and dMk; dMk counts are out of the cells where it is "
                 "defined (K > 0). Identical endpoints at two levels therefore rarely imply point identification.",
                 "source\tsupport\tcells\tH_positive\tL_positive\tdMk_positive\tdMk_defined", NULL);
  for (int32_t s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1))
    for (int sup = 0; sup < 1 + (matched != 0); sup++) {
      pb_table_str(t, meta->sources[s].name, 1);
      pb_table_str(t, sup == 0 ? "original" : "matched (cell-seeds)", 0);
      for (int k = 0; k < 5; k++) pb_table_int(t, pb_rs_int(S, s, PB_RS_POS + 5 * sup + k));
      pb_table_end_row(t);
    }
}

/* Appendix B.4: Table 9 on changing support subsets, and the zero-K counts. */
static void pb_more__subsets(const struct pb_meta *meta, const struct pb_identify_sum *S, struct pb_table *t)
{
  static const char *const name[3] = {"K > 0", "K >= 20", "1 <= K <= 5"};
  pb_table_begin(t, "Signed decomposition on support subsets (Appendix B.4)",
                 "Every cell of the grid; percentage points. Subsets by the observed retained-correct count K are "
                 "descriptive, not support-corrected estimates of a common mean. zero_K: cells with K = 0; of "
                 "those, zero_K_ind_zero have zero independent overlap mass and zero_K_ind_positive a positive "
                 "one (repeated on every subset row).",
                 "source\tsubset\tcells\tmean_dMk\tpair_minus_ind\tmean_abs_W\tmean_abs_V\tshare_V_gt_W_pct\t"
                 "zero_K\tzero_K_ind_zero\tzero_K_ind_positive", NULL);
  for (int32_t s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1)) {
    const int64_t zk = pb_rs_int(S, s, PB_RS_SUB_ZK), zk_ind0 = pb_rs_int(S, s, PB_RS_SUB_ZK_IND0);
    for (int sub = 0; sub < 3; sub++) {
      const int o = PB_RS_SUB + 6 * sub;
      const int64_t n = pb_rs_int(S, s, o), vbig = pb_rs_int(S, s, o + 5);
      pb_table_str(t, meta->sources[s].name, 1);
      pb_table_str(t, name[sub], 0);
      pb_table_int(t, n);
      for (int k = 0; k < 4; k++) pb_table_num(t, pb_rs_mean(S, s, o + 1 + k), k == 1 ? -2 : 2);
      pb_table_num(t, n ? PP * (double)vbig / n : NAN, 1);
      pb_table_int(t, zk);
      pb_table_int(t, zk_ind0);
      pb_table_int(t, zk - zk_ind0);
      pb_table_end_row(t);
    }
  }
}

/* J.2 event counts and F.1 acceptance counts and Brier scores of one cell. */
static void pb_more__counts_add(struct pb_identify_sum *S, int32_t s, const double *r)
{
  for (int v = 0; v < PB_SUPPORT_N; v++) {
    const double *x = r + PB_IF_J2 + 2 * PB_SUPPORT_N_STRATA * v;
    if (isnan(x[0])) continue;
    for (int k = 0; k < PB_SUPPORT_N_STRATA; k++) {
      pb_rs_tally(S, s, PB_RS_SUPPORT + 2 * (PB_SUPPORT_N_STRATA * v + k), (int64_t)x[2 * k]);
      pb_rs_tally(S, s, PB_RS_SUPPORT + 2 * (PB_SUPPORT_N_STRATA * v + k) + 1, (int64_t)x[2 * k + 1]);
    }
  }
  if (isnan(r[PB_IF_F1])) return;
  for (int p = 0; p < PB_F1_N_PROTOCOLS; p++) {
    const int o = PB_RS_T40 + 9 * p;
    pb_rs_tally(S, s, o, 1);
    for (int k = 0; k < 2; k++) {
      const double *q = r + PB_IF_F1 + (k * PB_F1_N_PROTOCOLS + p) * PB_F1_N_COUNTS, N = r[PB_IF_NREC];
      pb_rs_add(S, s, o + 1 + 4 * k + 0, PP * q[PB_F1_H] / N);
      pb_rs_add(S, s, o + 1 + 4 * k + 1, PP * q[PB_F1_L] / N);
      if (q[PB_F1_ACC] > 0) pb_rs_add(S, s, o + 1 + 4 * k + 2, PP * q[PB_F1_ACC_ERR] / q[PB_F1_ACC]);
      pb_rs_add(S, s, o + 1 + 4 * k + 3, q[PB_F1_ACC] / N);
    }
  }
  pb_rs_add(S, s, PB_RS_CAL + 4, r[PB_IF_F1_BRIER1_RAW]);
  pb_rs_add(S, s, PB_RS_CAL + 5, r[PB_IF_F1_BRIER1_PLATT]);
}

void pb_identify_more_add(struct pb_identify_sum *S, int32_t s, const double *r)
{
  pb_more__table2_add(S, s, r);
  pb_more__panel_add(S, s, r);
  pb_more__subsets_add(S, s, r);
  pb_more__counts_add(S, s, r);
}

/* Appendix J.2 / Table 49: persistent same-wrong rate by cross-model support. */
static void pb_more__support(const struct pb_meta *meta, const struct pb_identify_sum *S, struct pb_table *t)
{
  static const char *const variant[PB_SUPPORT_N] = {"other models", "other groups (Table 49)",
                                                    "other groups, equal weight"};
  pb_table_begin(t, "Cross-model support for a clean wrong answer (seed Table 49, Appendix J.2)",
                 "Events: model x condition x evaluation image with a wrong clean prediction w; support: share of "
                 "other models (all others; those outside the evaluated model's group, the seed's Table 49; or the "
                 "mean of the other groups' shares) predicting w on the clean image; low <= 0.25, high >= 0.75. "
                 "Rate: percentage of events whose perturbed prediction is still w (a persistent error), events of "
                 "every cell pooled. These weight model-condition-image events; they are neither the state share "
                 "s nor independent-image probabilities.",
                 "source	support	high_pct	middle_pct	low_pct	high_events	middle_events	low_events", NULL);
  for (int32_t s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1))
    for (int v = 0; v < PB_SUPPORT_N; v++) {
      int64_t ev[PB_SUPPORT_N_STRATA], same[PB_SUPPORT_N_STRATA];
      for (int k = 0; k < PB_SUPPORT_N_STRATA; k++) {
        ev[k] = pb_rs_int(S, s, PB_RS_SUPPORT + 2 * (PB_SUPPORT_N_STRATA * v + k));
        same[k] = pb_rs_int(S, s, PB_RS_SUPPORT + 2 * (PB_SUPPORT_N_STRATA * v + k) + 1);
      }
      static const int order[3] = {PB_SUPPORT_HIGH, PB_SUPPORT_MID, PB_SUPPORT_LOW};
      pb_table_str(t, meta->sources[s].name, 1);
      pb_table_str(t, variant[v], 0);
      for (int k = 0; k < 3; k++) pb_table_num(t, ev[order[k]] ? PP * (double)same[order[k]] / ev[order[k]] : NAN, 2);
      for (int k = 0; k < 3; k++) pb_table_int(t, ev[order[k]]);
      pb_table_end_row(t);
    }
}

/* Appendix F.1 / Table 40: acceptance under each protocol, raw and Platt. */
static void pb_more__table40(const struct pb_meta *meta, const struct pb_identify_sum *S, struct pb_table *t)
{
  static const char *const proto[PB_F1_N_PROTOCOLS] = {"Q80", "R5", "A0.9", "A0.7", "A0.5"};
  pb_table_begin(t, "Acceptance protocols, raw and Platt-scaled (seed Table 40, Appendix F.1)",
                 "Every cell of the source, weighted equally; H, L and selective risk (errors among accepted "
                 "perturbed inputs; mean over cells that accept any) in percent; coverage = share of perturbed inputs "
                 "accepted. Q80: the quantile protocol's development threshold (80% clean-development coverage), "
                 "recomputed on the Platt scores; R5: the 5% risk rule (largest top-ranked development prefix with "
                 "error <= 5%, every tie at its cutoff accepted); Ap: S >= p. Platt: logistic regression of clean "
                 "development correctness on logit(S), per model and source, applied to both sides.",
                 "source\tprotocol\tcells\tH_raw\tH_platt\tL_raw\tL_platt\tselrisk_raw\tselrisk_platt\t"
                 "coverage_raw\tcoverage_platt", NULL);
  for (int32_t s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1))
    for (int p = 0; p < PB_F1_N_PROTOCOLS; p++) {
      const int o = PB_RS_T40 + 9 * p;
      pb_table_str(t, meta->sources[s].name, 1);
      pb_table_str(t, proto[p], 0);
      pb_table_int(t, pb_rs_int(S, s, o));
      for (int j = 0; j < 4; j++)
        for (int k = 0; k < 2; k++) pb_table_num(t, pb_rs_mean(S, s, o + 1 + 4 * k + j), j == 3 ? 3 : 2);
      pb_table_end_row(t);
    }
}

/* Appendix F.1: the calibrators themselves and the binary Brier scores. */
static void pb_more__calibration(const struct pb_meta *meta, const struct pb_identify_sum *S, struct pb_table *t)
{
  pb_table_begin(t, "Platt calibration per model and source (Appendix F.1)",
                 "Means over the models of a source (the fit is per model and source) and, for the perturbed "
                 "Brier score, over its cells. Binary Brier score: mean (score - correct)^2. q80_changed: accept/"
                 "reject decisions (both sides, every cell) that Platt scaling changes under the quantile "
                 "protocol; models_unchanged: models with none (a strictly increasing calibrator changes none).",
                 "source\tmodels\tplatt_a\tplatt_b\tbrier_dev_raw\tbrier_dev_platt\tbrier_perturbed_raw\t"
                 "brier_perturbed_platt\tq80_changed\tmodels_unchanged", NULL);
  for (int32_t s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1)) {
    int64_t changed = 0, models = 0, unchanged = 0;
    for (int32_t model = 0; model < meta->n_models; model++) {
      const size_t k = (size_t)s * meta->n_models + model;
      const int seen = S->cal_first[k].cell >= 0;
      models += seen;
      unchanged += seen && S->cal_changed[k] == 0;
      changed += S->cal_changed[k];
    }
    pb_table_str(t, meta->sources[s].name, 1);
    pb_table_int(t, models);
    for (int j = 0; j < 6; j++) pb_table_num(t, pb_rs_mean(S, s, PB_RS_CAL + j), 4);
    pb_table_int(t, changed);
    pb_table_int(t, unchanged);
    pb_table_end_row(t);
  }
}

int pb_identify_report_more(const struct pb_meta *meta, const struct pb_identify_sum *S, struct pb_results *res,
                            const struct pb_identify_options *opt, struct pb_text *md)
{
  struct pb_table t = {{0}, {0}};
  int status = PB_OK;
  pb_more__table2(meta, S, &t);
  status |= pb_table_flush(&t, res, "identification_table2.tsv", md);
  pb_more__strata(meta, S, &t);
  status |= pb_table_flush(&t, res, "identification_strata.tsv", md);
  pb_more__positive(meta, S, opt->matched, &t);
  status |= pb_table_flush(&t, res, "identification_positive_widths.tsv", md);
  pb_more__subsets(meta, S, &t);
  status |= pb_table_flush(&t, res, "identification_subsets.tsv", md);
  pb_more__support(meta, S, &t);
  status |= pb_table_flush(&t, res, "identification_crossmodel_support.tsv", md);
  if (opt->calibration) {
    pb_more__table40(meta, S, &t);
    status |= pb_table_flush(&t, res, "protocol_acceptance.tsv", md);
    pb_more__calibration(meta, S, &t);
    status |= pb_table_flush(&t, res, "protocol_calibration.tsv", md);
  }
  return status ? PB_FAIL : PB_OK;
}
