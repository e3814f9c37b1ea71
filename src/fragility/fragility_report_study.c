/* Report of `pairbound fragility --study known-propensity`: REPORT.md with the
 * laws, the seed's values beside ours, the witness laws of Proposition 4 and
 * the study table in the layout of seed 001's Table 20 (rank 0, from the
 * study's records). */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "pairbound/error.h"
#include "pairbound/fragility.h"
#include "pairbound/results.h"
#include "pairbound/table.h"
#include "pairbound/text.h"
#include "fragility_internal.h"

/* A row of the laws table. */
struct pb_fragility__law_row {
  const char *name, *eta, *q;
  double mean, G, rho_plus_up, rho_sat_up, rho_plus_down, rho_sat_down;
};

static void pb_fragility__laws_table(struct pb_table *tb)
{
#define C(name, member, d) {name, PB_COL_NUM, d, .slot = offsetof(struct pb_fragility__law_row, member)}
  static const struct pb_column cols[] = {
    {"law", PB_COL_STR, .slot = offsetof(struct pb_fragility__law_row, name)},
    {"eta", PB_COL_STR, .slot = offsetof(struct pb_fragility__law_row, eta)},
    {"q", PB_COL_STR, .slot = offsetof(struct pb_fragility__law_row, q)},
    C("mean", mean, 4), C("G", G, 5), C("rho_plus_up", rho_plus_up, 3), C("rho_sat_up", rho_sat_up, 3),
    C("rho_plus_down", rho_plus_down, 3), C("rho_sat_down", rho_sat_down, 3), {NULL}};
#undef C
  static const struct pb_table_spec spec = {
    "Laws (four cells: propensity eta and known mass q)",
    "B/16 shrinks B's atoms towards its mean by 1/4, dividing G by 16 (the weak-heterogeneity arm).", cols};
  pb_table_open(tb, &spec);
  struct pb_fragility_law L;
  pb_fragility_law_init(&L);
  for (int32_t i = 0; i < PB_FRAGILITY_STUDY_LAWS; i++) {
    struct pb_fragility_study_law S;
    pb_fragility_study_law(i, &S);
    (void)pb_fragility_law_set(&L, S.eta, S.q, PB_FRAGILITY_STUDY_CELLS); /* tabled laws are valid */
    struct pb_text e = {0}, q = {0};
    for (int g = 0; g < PB_FRAGILITY_STUDY_CELLS; g++) {
      pb_text_printf(&e, "%s%.4g", g ? ", " : "", S.eta[g]);
      pb_text_printf(&q, "%s%.4g", g ? ", " : "", S.q[g]);
    }
    const struct pb_fragility__law_row row = {S.name, e.buf, q.buf, L.mean, L.G, L.up.rho_plus, L.up.rho_sat,
                                              L.down.rho_plus, L.down.rho_sat};
    pb_table_row(tb, &spec, pb_table_member, &row);
    pb_text_free(&e);
    pb_text_free(&q);
  }
  pb_fragility_law_free(&L);
}

/* A row of the study table: the design's keys and the record. */
struct pb_fragility__study_row {
  const char *law, *arm, *dir;
  const double *x;
};
enum { PB_FR__STR, PB_FR__VAL };

static union pb_cell pb_fragility__study_cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_fragility__study_row *r = ctx;
  if (c->arg == PB_FR__STR) return (union pb_cell){.s = c->slot == 0 ? r->law : c->slot == 1 ? r->arm : r->dir};
  if (c->fmt == PB_COL_INT) return (union pb_cell){.i = (int64_t)r->x[c->slot]};
  return (union pb_cell){.x = r->x[c->slot]};
}

/* Table 20's layout: per law, arm, n, direction and radius, the truth and both estimators' errors. */
static void pb_fragility__study_table(const double *rec, struct pb_text *md)
{
#define V(name, f, d) {name, PB_COL_NUM, d, .slot = f, .arg = PB_FR__VAL}
  static const struct pb_column cols[] = {
    {"law", PB_COL_STR, .slot = 0}, {"arm", PB_COL_STR, .slot = 1},
    {"n", PB_COL_INT, .slot = PB_FS_N, .arg = PB_FR__VAL}, {"direction", PB_COL_STR, .slot = 2},
    V("rho", PB_FS_RHO, 2), V("cells", PB_FS_CELLS_KEPT, 2), V("truth", PB_FS_TRUTH, 4),
    V("cap (pop.)", PB_FS_CAP_POP, 4), V("plug-in bias", PB_FS_PLUG_BIAS, -4), V("plug-in MAE", PB_FS_PLUG_MAE, 4),
    V("plug-in rel.", PB_FS_PLUG_REL, 3), V("plug-in RMSE", PB_FS_PLUG_RMSE, 4), V("cap bias", PB_FS_CAP_BIAS, -4),
    V("cap MAE", PB_FS_CAP_MAE, 4), V("cap rel.", PB_FS_CAP_REL, 3), V("cap RMSE", PB_FS_CAP_RMSE, 4), {NULL}};
#undef V
  static const struct pb_table_spec spec = {
    "Known-propensity study (the layout of seed 001 Table 20)",
    "truth: exact profile of the true law; cap (pop.): min(sqrt(rho G), saturation value) of the true law; "
    "bias, MAE, RMSE over the replicates; rel. = MAE / truth (n/a at truth 0); cells: mean cells kept.", cols};
  struct pb_table tb = {0};
  pb_table_open(&tb, &spec);
  for (int64_t row = 0; row < PB_FRAGILITY_STUDY_ROWS; row++) {
    const struct pb_fragility_study_design *D = &pb_fragility_study_designs[row / (2 * PB_FRAGILITY_STUDY_RHOS)];
    struct pb_fragility_study_law L;
    pb_fragility_study_law(D->law, &L);
    const struct pb_fragility__study_row r = {L.name, D->arm, row / PB_FRAGILITY_STUDY_RHOS % 2 ? "down" : "up",
                                              rec + row * PB_FS_FIXED};
    pb_table_row(&tb, &spec, pb_fragility__study_cell, &r);
  }
  pb_text_printf(md, "%s", tb.md.buf);
  pb_text_free(&tb.md);
  pb_text_free(&tb.tsv); /* its values are report/known_propensity.tsv's */
}

/* The values the seed states (seed 001 Section 5, Appendix U.1, Table 19) beside ours. */
struct pb_fragility__seed_row {
  const char *what, *law, *arm, *seed;
  int64_t n;
  double rho, ours;
};

static void pb_fragility__seed_table(const double *rec, struct pb_table *tb)
{
#define S(name, member) {name, PB_COL_STR, .slot = offsetof(struct pb_fragility__seed_row, member)}
  static const struct pb_column cols[] = {
    S("quantity", what), S("law", law), S("arm", arm),
    {"n", PB_COL_INT, .slot = offsetof(struct pb_fragility__seed_row, n)},
    {"rho", PB_COL_NUM, 0, .slot = offsetof(struct pb_fragility__seed_row, rho)}, S("seed", seed),
    {"ours", PB_COL_NUM, 4, .slot = offsetof(struct pb_fragility__seed_row, ours)}, {NULL}};
#undef S
  static const struct pb_table_spec spec = {
    "The seed's values beside ours (upward profile)",
    "The seed's summary does not give its laws; ours are tabled above, so only sizes and directions compare. "
    "It gives the weak-heterogeneity numbers without a radius; ours are at rho = 3.", cols};
  /* design, field and the seed's text; the row of radius 3 (the last) of the upward profile */
  static const struct { int32_t d, f; const char *what, *seed; } s[] = {
    {2, PB_FS_PLUG_MAE, "plug-in MAE", "0.022"}, {2, PB_FS_CAP_MAE, "capped MAE", "0.148"},
    {3, PB_FS_PLUG_MAE, "plug-in MAE", "0.006"}, {3, PB_FS_CAP_MAE, "capped MAE", "0.102"},
    {6, PB_FS_PLUG_BIAS, "plug-in bias", "0.027"}, {6, PB_FS_PLUG_REL, "plug-in relative MAE", "> 0.56"},
    {6, PB_FS_CAP_REL, "capped relative MAE", "> 0.56"}};
  pb_table_open(tb, &spec);
  for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
    const struct pb_fragility_study_design *D = &pb_fragility_study_designs[s[i].d];
    struct pb_fragility_study_law L;
    pb_fragility_study_law(D->law, &L);
    const int64_t row = (int64_t)s[i].d * 2 * PB_FRAGILITY_STUDY_RHOS + PB_FRAGILITY_STUDY_RHOS - 1;
    const struct pb_fragility__seed_row r = {s[i].what, L.name, D->arm, s[i].seed, D->n,
                                             pb_fragility_study_rho[PB_FRAGILITY_STUDY_RHOS - 1],
                                             rec[row * PB_FS_FIXED + s[i].f]};
    pb_table_row(tb, &spec, pb_table_member, &r);
  }
}

/* A row of the witness table: the radius, both profiles and their gap. */
struct pb_fragility__witness_row {
  double rho, a, b, gap;
};

/* Proposition 4 (Appendix M): the witness pair's upward profiles. */
static void pb_fragility__witness_table(struct pb_table *tb)
{
#define W(name, member, d) {name, PB_COL_NUM, d, .slot = offsetof(struct pb_fragility__witness_row, member)}
  static const struct pb_column cols[] = {W("rho", rho, 3), W("profile_A", a, 4), W("profile_B", b, 4),
                                          W("gap", gap, 4), {NULL}};
#undef W
  static const struct pb_table_spec spec = {
    "Witness laws of Proposition 4 (Appendix M): equal mean and grouping variance, different profiles",
    "A: eta 0.2333 (9/17), 0.8 (8/17); B: eta 0.3 (2/3), 0.9 (1/3); both mean 0.5 and G = 0.08. Both profiles "
    "are sqrt(0.08 rho) on [0, 1.125]; A saturates at 0.3 from 1.125, B at 0.4 from 2: the gap is 0.1 for rho >= 2, "
    "as the seed states.", cols};
  pb_table_open(tb, &spec);
  struct pb_fragility_law L[2];
  for (int i = 0; i < 2; i++) {
    double eta[2], q[2];
    pb_fragility_study_witness(i, eta, q);
    pb_fragility_law_init(&L[i]);
    (void)pb_fragility_law_set(&L[i], eta, q, 2); /* valid laws */
  }
  for (int r = 0; r < PB_FRAGILITY_WITNESS_RHOS; r++) {
    const double rho = pb_fragility_witness_rho[r], a = pb_fragility_profile(&L[0], PB_FRAGILITY_UP, rho);
    const double b = pb_fragility_profile(&L[1], PB_FRAGILITY_UP, rho);
    const struct pb_fragility__witness_row row = {rho, a, b, b - a};
    pb_table_row(tb, &spec, pb_table_member, &row);
  }
  for (int i = 0; i < 2; i++) pb_fragility_law_free(&L[i]);
}

/* A row of the nested-readout table. */
struct pb_fragility__nested_row {
  const char *law, *order;
  int64_t K;
  double rho, x[PB_FN_FIXED];
};

/* U.2: nested readouts of the three atom laws, in feature order and (oracle) in propensity order. */
static void pb_fragility__nested_table(struct pb_table *tb)
{
#define X(name, f, d) {name, PB_COL_NUM, d, .slot = offsetof(struct pb_fragility__nested_row, x) + (f) * sizeof(double)}
  static const struct pb_column cols[] = {
    {"law", PB_COL_STR, .slot = offsetof(struct pb_fragility__nested_row, law)},
    {"order", PB_COL_STR, .slot = offsetof(struct pb_fragility__nested_row, order)},
    {"K", PB_COL_INT, .slot = offsetof(struct pb_fragility__nested_row, K)},
    {"rho", PB_COL_NUM, 1, .slot = offsetof(struct pb_fragility__nested_row, rho)},
    X("G_P", PB_FN_G_P, 4), X("G_R", PB_FN_G_R, 4), X("Phi_P", PB_FN_PHI_P, 4), X("Phi_R", PB_FN_PHI_R, 4),
    X("gap", PB_FN_GAP, 4), X("bound_excess", PB_FN_EXCESS, 4), X("excess_over_gap", PB_FN_RATIO, 2), {NULL}};
#undef X
  static const struct pb_table_spec spec = {
    "Nested readouts on known atoms (Appendix U.2): 32 equal-mass atoms, K contiguous cells",
    "Phi_P: oracle profile of the atoms; Phi_R: restricted profile of the cell means (upward); gap = Phi_P - "
    "Phi_R; bound_excess = sqrt(rho (G_P - G_R)), the excess of Proposition 6's bound Phi_R + sqrt(rho G_res) "
    "over Phi_R. order: cells by the feature, or (oracle diagnostic) by the propensity.", cols};
  static const int32_t sizes[PB_FRAGILITY_NESTED_SIZES] = {1, 2, 4, 8, 16};
  pb_table_open(tb, &spec);
  struct pb_fragility_law work;
  pb_fragility_law_init(&work);
  for (int32_t i = 0; i < PB_FRAGILITY_NESTED_LAWS; i++) {
    double eta[PB_FRAGILITY_NESTED_ATOMS];
    const char *name = pb_fragility_study_nested_law(i, eta);
    for (int oracle = 0; oracle < 2; oracle++)
      for (int k = 0; k < PB_FRAGILITY_NESTED_SIZES; k++)
        for (int r = 0; r < PB_FRAGILITY_NESTED_RHOS; r++) {
          struct pb_fragility__nested_row row = {name, oracle ? "propensity" : "feature", sizes[k],
                                                 pb_fragility_nested_rho[r], {0}};
          pb_fragility_study_nested(eta, sizes[k], oracle, row.rho, &work, row.x);
          pb_table_row(tb, &spec, pb_table_member, &row);
        }
  }
  pb_fragility_law_free(&work);
}

/* A row of the finite-sample table: the law's name and the record. */
struct pb_fragility__finite_row {
  const char *law;
  const double *x;
};

static union pb_cell pb_fragility__finite_cell(const void *ctx, const struct pb_column *c)
{
  const struct pb_fragility__finite_row *r = ctx;
  if (c->fmt == PB_COL_STR) return (union pb_cell){.s = r->law};
  if (c->fmt == PB_COL_INT) return (union pb_cell){.i = (int64_t)r->x[c->slot]};
  return (union pb_cell){.x = r->x[c->slot]};
}

/* U.2's finite-sample part: the plug-in restricted profile of nested readouts from stratified labels. */
static void pb_fragility__finite_table(const double *nrec, struct pb_table *tb)
{
#define V(name, f, d) {name, PB_COL_NUM, d, .slot = f}
  static const struct pb_column cols[] = {
    {"law", PB_COL_STR, .slot = 0}, {"n", PB_COL_INT, .slot = PB_FN2_N}, {"K", PB_COL_INT, .slot = PB_FN2_K},
    V("rho", PB_FN2_RHO, 1), {"replicates", PB_COL_INT, .slot = PB_FN2_REPLICATES, .side = PB_COL_TSV_ONLY},
    V("Phi_R", PB_FN2_TRUTH, 4), V("G_R", PB_FN2_G_R, 5), V("G_R_plugin_mean", PB_FN2_G_R_MEAN, 5),
    V("plugin_mean", PB_FN2_MEAN, 4), V("plugin_bias", PB_FN2_BIAS, -4), V("plugin_mae", PB_FN2_MAE, 4),
    V("plugin_rel_mae", PB_FN2_REL, 3), V("plugin_rmse", PB_FN2_RMSE, 4), {NULL}};
#undef V
  static const struct pb_table_spec spec = {
    "Nested readouts from labels (Appendix U.2, finite-sample part; feature order)",
    "Stratified labels on the 16 finest cells (two atoms each), m = max(1, round(n / 16)) per cell, correct with "
    "the cell's mean propensity; a readout of K cells pools its fine cells' labels. Phi_R, G_R: the population "
    "restricted profile and grouping variance (the table above); plugin: the same of the estimated rates, over the "
    "replicates (rel. = MAE / Phi_R).", cols};
  pb_table_open(tb, &spec);
  for (int64_t i = 0; i < (int64_t)PB_FRAGILITY_NESTED_ROWS * PB_FRAGILITY_NESTED_RHOS; i++) {
    double eta[PB_FRAGILITY_NESTED_ATOMS];
    const int32_t law = (int32_t)(i / ((int64_t)PB_FRAGILITY_NESTED_NS * PB_FRAGILITY_NESTED_SIZES * PB_FRAGILITY_NESTED_RHOS));
    const struct pb_fragility__finite_row row = {pb_fragility_study_nested_law(law, eta), nrec + i * PB_FN2_FIXED};
    pb_table_row(tb, &spec, pb_fragility__finite_cell, &row);
  }
}

int pb_fragility_study_report(struct pb_results *res, const double *rec, const double *nrec, uint64_t seed,
                              int64_t replicates)
{
  struct pb_text md = {0};
  struct pb_table tb = {0};
  pb_text_printf(&md,
                 "# Known-propensity study (seed 001, Appendix U.1)\n\n"
                 "Four-cell laws with known masses; proportional stratified rate labels, "
                 "m_g = max(1, round(n q_g)) per cell; %lld replicates per design (seed %llu). "
                 "Plug-in: the exact profile of the estimated law (rates k_g/m_g, masses q_g). "
                 "Capped variance law: min(sqrt(rho G^), saturation value of the estimated law). "
                 "Arm min30 uses the primary arm's labels and leaves out the cells with fewer than %d labels "
                 "(masses renormalised); the target stays the true law's profile. "
                 "Every row: report/known_propensity.tsv; docs/fragility.md, \"Known-propensity study\".\n\n",
                 (long long)replicates, (unsigned long long)seed, PB_FRAGILITY_STUDY_MIN_LABELS);
  pb_fragility__laws_table(&tb);
  int status = pb_table_flush(&tb, res, "known_propensity_laws.tsv", &md);
  pb_fragility__seed_table(rec, &tb);
  const int seed_status = pb_table_flush(&tb, res, "known_propensity_seed.tsv", &md);
  if (status == PB_OK) status = seed_status;
  pb_fragility__witness_table(&tb);
  const int witness_status = pb_table_flush(&tb, res, "witness_laws.tsv", &md);
  if (status == PB_OK) status = witness_status;
  pb_fragility__nested_table(&tb);
  const int nested_status = pb_table_flush(&tb, res, "nested_readouts.tsv", &md);
  if (status == PB_OK) status = nested_status;
  pb_fragility__finite_table(nrec, &tb);
  const int finite_status = pb_table_flush(&tb, res, "nested_finite.tsv", &md);
  if (status == PB_OK) status = finite_status;
  pb_fragility__study_table(rec, &md);
  if (status == PB_OK) status = pb_results_write_report(res, "REPORT.md", md.buf, md.len);
  pb_text_free(&md);
  return status;
}
