/* The two factor worlds of seed 002 (Section 4.1, 4.3, Appendix B): their
 * factors, joint laws and outcome rules.  Credit risk follows the seed's
 * stated numbers; the peer-review weights of Table 4 are not in the text and
 * are ours (docs/exact.md marks every such choice). */
#include "config.h"

#include "world_internal.h"

/* Most factors: (.48, .27, .25) over levels 0/1/2 (Appendix B). */
static const double pb_world__base[3] = {0.48, 0.27, 0.25};

static void pb_world__base_pmf(double *pmf)
{
  for (int l = 0; l < 3; l++) pmf[l] = pb_world__base[l];
}

/* The base pmf with @p d moved from level 0 to level 2 (from 2 to 0 when negative). */
static void pb_world__tilted_pmf(double *pmf, double d)
{
  pb_world__base_pmf(pmf);
  pmf[0] -= d;
  pmf[2] += d;
}

/* ------------------------------------------------------------ credit risk */

enum { CR_SECTOR, CR_CYCLE, CR_CASHGEN, CR_BUFFER, CR_REFI, CR_DEBT, CR_PRINCIPAL, CR_RATE, CR_CONC, CR_FLEX };

#define PB_NEVER (PB_WORLD_HIGH + 1)
static const struct pb_world_factor cr_factors[] = {
  {"sector", 4, (const char *const[]){"technology", "manufacturing", "consumer", "healthcare"}, 0, 0, {0}, PB_NEVER, 1},
  {"business_cycle", 3, (const char *const[]){"expansion", "steady", "contraction"}, 0, 0, {0}, PB_NEVER, 1},
  {"cash_generation", 3, (const char *const[]){"weak", "moderate", "strong"}, 0, 0, {0}, PB_NEVER, 0},
  {"cash_buffer", 3, (const char *const[]){"limited", "adequate", "substantial"}, 0, 0, {0}, PB_WORLD_MEDIUM, 0},
  {"refinancing_access", 3, (const char *const[]){"limited", "moderate", "broad"}, 0, 0, {0}, PB_NEVER, 0},
  {"debt_service", 3, (const char *const[]){"light", "moderate", "heavy"}, 0, 0, {0}, PB_NEVER, 0},
  {"principal_due", 3, (const char *const[]){"small", "moderate", "large"}, 0, 0, {0}, PB_WORLD_HIGH, 0},
  /* percent of debt repricing within 12 months, 0-100 in 0.1 steps, thresholds 25, 60 */
  {"rate_exposure_pct", 3, NULL, 1, 10, {0, 250, 600, 1001}, PB_NEVER, 0},
  /* percent of revenue from the three largest customers, thresholds 20, 50 */
  {"customer_concentration_pct", 3, NULL, 1, 10, {0, 200, 500, 1001}, PB_NEVER, 0},
  {"operating_flexibility", 3, (const char *const[]){"rigid", "partial", "flexible"}, 0, 0, {0}, PB_NEVER, 0},
};

static void pb_world__credit_pmf(int j, const int *z, double *pmf)
{
  static const double cycle[3] = {0.30, 0.40, 0.30};
  switch (j) {
  case CR_SECTOR:
    for (int l = 0; l < 4; l++) pmf[l] = 0.25;
    return;
  case CR_CYCLE:
    for (int l = 0; l < 3; l++) pmf[l] = cycle[l];
    return;
  case CR_BUFFER:
    /* each cash-generation level above the middle moves .03 from limited to substantial */
    pb_world__tilted_pmf(pmf, 0.03 * (z[CR_CASHGEN] - 1));
    return;
  case CR_REFI:
    /* expansion moves .04 from limited to broad access, contraction the reverse */
    pb_world__tilted_pmf(pmf, -0.04 * (z[CR_CYCLE] - 1));
    return;
  default:
    pb_world__base_pmf(pmf);
  }
}

/* Default rule of Appendix B in twentieths of the normalised unit, so that
 * every comparison is exact: default iff resources + R < obligations. */
static int pb_world__credit_label(const int *z, int r)
{
  static const int refi_mult20[3] = {20, 15, 8};      /* x1, x0.75, x0.40 */
  static const int rate20[3] = {0, 5, 15};            /* +0, 0.25, 0.75 per level */
  static const int sector20[4] = {5, 10, 15, 0};      /* further 0.25/0.5/0.75/0 per level */
  static const int principal[3] = {1, 3, 6};
  int c = z[CR_CYCLE];
  int gen = 20 * (3 + 2 * z[CR_CASHGEN]);
  if (c == 2) gen -= 20 + (15 + sector20[z[CR_SECTOR]]) * z[CR_CONC] - 10 * z[CR_FLEX];
  int res = gen + 20 * (1 + 2 * z[CR_BUFFER]) + 2 * z[CR_REFI] * refi_mult20[c];
  int obl = 20 * (1 + z[CR_DEBT]) + rate20[c] * z[CR_RATE] + 20 * principal[z[CR_PRINCIPAL]];
  return res + 20 * r < obl;
}

static const int cr_res_values[5] = {-3, -1, 0, 1, 3};
static const double cr_res_probs[5] = {0.03, 0.09, 0.76, 0.09, 0.03};

/* Printed by `world info` (docs/exact.md, "What is ours"). */
static const struct pb_world_choice cr_choices[] = {
  {"level_coding", "level 0 of every factor is the first value the seed lists and carries the prior's .48, and "
                   "\"per level\" multiplies the level 0/1/2: of the 8 codings of rate exposure, concentration and "
                   "flexibility only this one gives the seed's default prior 0.211"},
  {"value_names", "the names of the categorical values (the seed's Table 3 of rendered values is not in its text)"},
  {"irrelevant_fields", "the ranges of the 5 counts and the names of the 3 equiprobable pairs (Table 5 is not in the "
                        "text; the laws' medians and dispersions are the seed's)"},
  {NULL, NULL}};

const struct pb_world_spec pb_world_credit_spec = {
  10, cr_factors, pb_world__credit_pmf, pb_world__credit_label, 5, cr_res_values, cr_res_probs, cr_choices,
};

/* ------------------------------------------------------------ peer review */

enum { PR_TYPE, PR_NOVELTY, PR_SIGNIF, PR_VALIDITY, PR_EVIDENCE, PR_COMPARE, PR_ROBUST, PR_REPRO, PR_CLARITY };

static const struct pb_world_factor pr_factors[] = {
  {"contribution_type", 3, (const char *const[]){"theoretical", "empirical", "applied"}, 0, 0, {0}, PB_NEVER, 1},
  {"novelty", 3, (const char *const[]){"incremental", "moderate", "novel"}, 0, 0, {0}, PB_WORLD_MEDIUM, 0},
  {"significance", 3, (const char *const[]){"minor", "moderate", "major"}, 0, 0, {0}, PB_NEVER, 1},
  {"technical_validity", 3, (const char *const[]){"serious_flaw", "minor_issues", "sound"}, 0, 0, {0}, PB_WORLD_HIGH, 0},
  /* ratings out of 5 in 0.1 steps, thresholds 2.5 and 3.5 */
  {"evidence_rating", 3, NULL, 1, 10, {10, 25, 35, 51}, PB_NEVER, 0},
  {"comparison_quality", 3, (const char *const[]){"weak", "adequate", "well_controlled"}, 0, 0, {0}, PB_NEVER, 0},
  {"robustness", 3, (const char *const[]){"fragile", "mixed", "stable"}, 0, 0, {0}, PB_NEVER, 0},
  {"reproducibility", 3, (const char *const[]){"poor", "partial", "full"}, 0, 0, {0}, PB_NEVER, 0},
  {"clarity_rating", 3, NULL, 1, 10, {10, 25, 35, 51}, PB_NEVER, 0},
};

static void pb_world__review_pmf(int j, const int *z, double *pmf)
{
  static const double validity[3] = {0.15, 0.35, 0.50};
  static const double evidence[3][3] = {{0.85, 0.13, 0.02}, {0.50, 0.30, 0.20}, {0.33, 0.29, 0.38}};
  switch (j) {
  case PR_TYPE:
    for (int l = 0; l < 3; l++) pmf[l] = 1.0 / 3.0;
    return;
  case PR_VALIDITY:
    for (int l = 0; l < 3; l++) pmf[l] = validity[l];
    return;
  case PR_EVIDENCE:
    for (int l = 0; l < 3; l++) pmf[l] = evidence[z[PR_VALIDITY]][l];
    return;
  case PR_ROBUST:
    /* each validity level above the middle moves .035 from fragile to stable */
    pb_world__tilted_pmf(pmf, 0.035 * (z[PR_VALIDITY] - 1));
    return;
  default:
    pb_world__base_pmf(pmf);
  }
}

/* OUR weights in tenths (Table 4 is not in the text), factors in the order
 * novelty .. clarity; each row sums to 10 and puts the seed's named factors
 * first: theoretical validity/evidence/novelty, empirical
 * evidence/validity/comparisons, applied evidence/significance. */
static const int pr_weights[3][8] = {
  {18, 10, 20, 19, 9, 9, 6, 9},
  {10, 10, 18, 23, 16, 8, 8, 7},
  {9, 20, 12, 22, 10, 9, 10, 8},
};

/* Accept iff score + R >= 11.5 and validity is not a serious flaw; scores in
 * tenths, 0.6 for each of the two interactions (Appendix B). */
static int pb_world__review_label(const int *z, int r)
{
  if (z[PR_VALIDITY] == 0) return 0;
  const int *w = pr_weights[z[PR_TYPE]];
  int score = 0;
  for (int f = 0; f < 8; f++) score += w[f] * z[PR_NOVELTY + f];
  if (z[PR_EVIDENCE] == 2 && z[PR_COMPARE] == 2) score += 6;
  if (z[PR_VALIDITY] == 2 && z[PR_ROBUST] == 2) score += 6;
  return score + 10 * r >= 115;
}

static const int pr_res_values[11] = {-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5};
static const double pr_res_probs[11] = {0.001, 0.004, 0.015, 0.03, 0.09, 0.72, 0.09, 0.03, 0.015, 0.004, 0.001};

static const struct pb_world_choice pr_choices[] = {
  {"factor_weights", "the weights of the 8 factors per contribution type are ours, not the seed's (its Table 4 is "
                     "not in the text): rows summing to 10 with the factors the seed names weighted most, moved a "
                     "tenth at a time until the acceptance prior rounded to the seed's 0.241; bayes_error and "
                     "entropy_bits here are properties of these weights, not reproductions of the seed's Table 2"},
  {"value_names", "the names of the categorical values (the seed's Table 3 of rendered values is not in its text)"},
  {"irrelevant_fields", "the ranges of the 6 counts and the names of the equiprobable pair (Table 5 is not in the "
                        "text; the laws' medians and dispersions and the uniform month are the seed's)"},
  {NULL, NULL}};

const struct pb_world_spec pb_world_review_spec = {
  9, pr_factors, pb_world__review_pmf, pb_world__review_label, 11, pr_res_values, pr_res_probs, pr_choices,
};
