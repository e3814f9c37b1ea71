/* Screening appendix tables of seed 000 E.1, E.3 and E.4 built from the
 * per-cell records: Table 22 (protocol sensitivity), the delta identity
 * ablation, Table 18's random tie-break beside the prorated value, Table 38's
 * baselines with group intervals, Table 39 (model groups, per-model
 * positivity), Figure 6 (single-probe recall) and the capture-factor
 * diagnostics.  Cells are weighted equally; the means come from the totals
 * of every rank's cells (pb_screen_sum, rank 0), the intervals resample the
 * model groups from exact per-group sums (docs/screen.md). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "pairbound/agg.h"
#include "pairbound/error.h"
#include "pairbound/figure.h"
#include "pairbound/resample.h"
#include "screen_internal.h"

struct pb_sx {
  const struct pb_meta *meta;
  const struct pb_screen_layout *L;
  const int32_t *targets;
  int32_t n_targets;
  const struct pb_screen_cells *C;  /* this rank's cells (the group bootstraps) */
  const struct pb_screen_sum *T;    /* every cell's totals, on rank 0 (the mean tables) */
  const struct pb_screen_options *opt;
  const struct pb_screen_boot *B;   /* class-bootstrap sums, reduced (draws 0: no class intervals) */
  MPI_Comm comm;
  struct pb_results *res;
  int rank;
  int32_t *mg, ng;      /* model -> group (first appearance order), group count */
  int32_t tta;          /* score row of U_TTA, or -1 */
  struct pb_table t;
};

/* Metric f (0 n, 1 n_fail, 2 auroc, 3-5 coverage at 10/20/30%) of score row r in local cell c. */
static double pb_sx__met(const struct pb_sx *S, int64_t c, int32_t r, int f)
{
  return S->C->recs[c * S->L->rec_len + S->L->row_off + PB_SCREEN_MET * r + f];
}

static int pb_sx__tier(const struct pb_sx *S, int64_t c)
{
  double t = S->C->recs[c * S->L->rec_len + PB_SI_TIER];
  return isnan(t) ? -1 : (int)t;
}

static const char *pb_sx__src(const struct pb_sx *S, int32_t t) { return S->meta->sources[S->targets[t]].name; }

/* Totals of target t and a tier at offset o: mean, and integer total. */
static double pb_sx__mean(const struct pb_sx *S, int32_t t, int tier, int64_t o)
{
  return pb_agg_mean(&S->T->a, pb_screen_sum_tt(S->T, t, tier, o));
}

static int64_t pb_sx__cells(const struct pb_sx *S, int32_t t, int tier)
{
  return (int64_t)pb_agg_sum(&S->T->a, pb_screen_sum_tt(S->T, t, tier, PB_SS_CELLS));
}

/* Group-bootstrap intervals of n_stat per-cell statistics from their exact per-group sums (collective). */
static struct pb_interval *pb_sx__boot(const struct pb_sx *S, struct pb_screen_gsum *G, int32_t n_stat, int *status)
{
  struct pb_boot_spec spec = {S->opt->seed, PB_RNG_GROUP_BOOT, 2, S->opt->group_draws, PB_BOOT_LEVEL};
  struct pb_interval *iv = pb_malloc((size_t)(n_stat > 0 ? n_stat : 1) * sizeof *iv);
  *status = pb_screen_gsum_boot(G, &spec, S->comm, iv);
  return iv;
}

/* "est [lo, hi]" cells: TSV gets three columns, markdown one. */
static void pb_sx__interval(struct pb_table *t, const struct pb_interval *v, int64_t draws)
{
  pb_text_double(&t->tsv, v->est);
  pb_text_double(&t->tsv, draws > 0 ? v->lo : NAN);
  pb_text_double(&t->tsv, draws > 0 ? v->hi : NAN);
  if (isnan(v->est)) {
    pb_text_printf(&t->md, " | n/a");
    return;
  }
  pb_text_printf(&t->md, " | %+.3f", v->est);
  if (draws > 0 && v->n_draws > 0) pb_text_printf(&t->md, " [%+.3f, %+.3f]", v->lo, v->hi);
}

/* ------------------------------------------------------------ Table 22, delta ablation */

/* One table of per-(source, tier) cell means with a model-group interval on
 * the last statistic: value(S, c, k) for k < n_k. */
struct pb_sx_spec {
  const char *title, *note, *cols, *md_cols, *file;
  int n_k;
  double (*value)(const struct pb_sx *S, int64_t c, int k);
};

static int pb_sx__tier_table(struct pb_sx *S, const struct pb_sx_spec *sp, struct pb_text *md)
{
  int32_t nrow = S->n_targets * PB_N_TIERS, ns = nrow * sp->n_k;
  struct pb_screen_gsum G;
  pb_screen_gsum_init(&G, ns, S->ng);
  int64_t *cells = pb_calloc((size_t)nrow, sizeof *cells);
  for (int64_t c = 0; c < S->C->n; c++) {
    int tier = pb_sx__tier(S, c);
    if (tier < 0) continue;
    int32_t row = S->C->target[c] * PB_N_TIERS + tier;
    cells[row]++;
    for (int k = 0; k < sp->n_k; k++) pb_screen_gsum_add(&G, row * sp->n_k + k, S->mg[S->C->model[c]], sp->value(S, c, k));
  }
  MPI_Allreduce(MPI_IN_PLACE, cells, nrow, MPI_INT64_T, MPI_SUM, S->comm);
  int status;
  struct pb_interval *iv = pb_sx__boot(S, &G, ns, &status);
  if (status == PB_OK && S->rank == 0) {
    char note[1024];
    snprintf(note, sizeof note, "%s Interval: 95%% model-group bootstrap (%lld draws; none when 0).", sp->note,
             (long long)S->opt->group_draws);
    pb_table_begin(&S->t, sp->title, note, sp->cols, sp->md_cols);
    for (int32_t row = 0; row < nrow; row++) {
      if (cells[row] == 0) continue;
      pb_table_str(&S->t, pb_sx__src(S, row / PB_N_TIERS), 1);
      pb_table_str(&S->t, pb_protocol_tier_name(row % PB_N_TIERS), 0);
      pb_table_int(&S->t, cells[row]);
      for (int k = 0; k + 1 < sp->n_k; k++) pb_table_num(&S->t, iv[row * sp->n_k + k].est, 3);
      pb_sx__interval(&S->t, &iv[row * sp->n_k + sp->n_k - 1], S->opt->group_draws);
      pb_table_end_row(&S->t);
    }
    status = pb_table_flush(&S->t, S->res, sp->file, md);
  }
  free(iv);
  free(cells);
  return status;
}

static double pb_sx__t22(const struct pb_sx *S, int64_t c, int k)
{
  static const int32_t row[5] = {PB_SR_S, PB_SR_U, PB_SR_U_RANK, PB_SR_U_POW05, PB_SR_U_POW2};
  if (k < 5) return pb_sx__met(S, c, row[k], 2);
  return pb_sx__met(S, c, PB_SR_U_RANK, 2) - pb_sx__met(S, c, PB_SR_S, 2);
}

static double pb_sx__delta_ablation(const struct pb_sx *S, int64_t c, int k)
{
  static const int32_t row[4] = {PB_SR_U_NS, PB_SR_U_DERANGE, PB_SR_DELTA_NS, PB_SR_DELTA_DERANGE};
  if (k < 4) return pb_sx__met(S, c, row[k], 2);
  double gap = pb_sx__met(S, c, PB_SR_DELTA_NS, 2) - pb_sx__met(S, c, PB_SR_DELTA_DERANGE, 2);
  if (k == 4) return isnan(gap) ? NAN : gap > 0;
  return gap;
}

static const struct pb_sx_spec pb_sx__t22_spec = {
    "Protocol sensitivity: U_rank and power means (seed Table 22)",
    "AUROC (failure positive) of S, U, U_rank (each probe's true-class probability replaced by its mid-CDF "
    "percentile among the unit's clean-correct images, then averaged) and U^0.5, U^2 (means of the powered "
    "probabilities), cells weighted equally; U_rank - S is the mean cellwise gap.",
    "source\ttier\tcells\tS\tU\tU_rank\tU_pow05\tU_pow2\tU_rank-S\tgroup_lo\tgroup_hi",
    "source\ttier\tcells\tS\tU\tU_rank\tU^0.5\tU^2\tU_rank - S [groups]", "screen_protocol.tsv", 6, pb_sx__t22};

static const struct pb_sx_spec pb_sx__delta_spec = {
    "Identity ablation of delta (seed E.1, beside Table 25)",
    "AUROC on the non-singleton subset of U and delta = S - U and of their within-class derangement controls "
    "(the same derangement draws move U and delta); wins = share of cells where delta exceeds its control; gap = "
    "delta minus its control.",
    "source\ttier\tcells\tU\tU_derange\tdelta\tdelta_derange\twins\tgap\tgroup_lo\tgroup_hi",
    "source\ttier\tcells\tU\tU derangement\tdelta\tdelta derangement\twins\tdelta gap [groups]",
    "screen_identity_delta.tsv", 6, pb_sx__delta_ablation};

/* Class-bootstrap interval of class contrast c, metric k, for target t and
 * tier (-1: all tiers); NaN without class draws. */
static struct pb_interval pb_sx__class(const struct pb_sx *S, int32_t t, int tier, int c, int k)
{
  struct pb_interval v = {NAN, NAN, NAN, 0};
  if (S->B && S->B->draws > 0 && c >= 0)
    pb_screen_boot_class_interval(S->B, t * PB_SB_NROWS_PER_TARGET + 1 + tier, c * PB_SB_NMET + k, &v);
  return v;
}

/* Index of class contrast base - x, or -1. */
static int pb_sx__class_contrast(const struct pb_sx *S, int base, int x)
{
  return S->B ? pb_screen_boot_class_contrast(S->B, base, x) : -1;
}

/* Seed Table 17: per source and tier the AUROC differences U - S, delta - U
 * and g(S,U) - S (plain cell means) with class-bootstrap intervals. */
static int pb_sx__table17(struct pb_sx *S, struct pb_text *md)
{
  static const int base[3] = {PB_SR_U, PB_SR_DELTA, PB_SR_G_SU}, x[3] = {PB_SR_S, PB_SR_U, PB_SR_S};
  char note[600];
  snprintf(note, sizeof note, "AUROC differences, plain cell means; {lo, hi}: 95%% class bootstrap (%lld draws of the "
           "classes, one draw shared by the cells of a source, cells without both outcomes skipped; class cells = "
           "mean cells retained per draw). delta - U is minus the U - delta contrast.",
           (long long)(S->B ? S->B->draws : 0));
  pb_table_begin(&S->t, "Class-resampled AUROC differences (seed Table 17)", note,
                 "source	tier	class_cells	U-S	class_lo	class_hi	delta-U	class_lo	class_hi	g_SU-S	class_lo	"
                 "class_hi",
                 "source	tier	class cells	U - S {classes}	delta - U {classes}	g(S,U) - S {classes}");
  for (int32_t t = 0; t < S->n_targets; t++)
    for (int tier = 0; tier < PB_N_TIERS; tier++) {
      const int64_t cells = pb_sx__cells(S, t, tier);
      if (cells == 0) continue;
      double kept = 0;
      int32_t row = t * PB_SB_NROWS_PER_TARGET + 1 + tier;
      for (int64_t b = 0; S->B && b < S->B->draws; b++) kept += (double)S->B->cells[(size_t)row * (size_t)S->B->draws + (size_t)b];
      pb_table_str(&S->t, pb_sx__src(S, t), 1);
      pb_table_str(&S->t, pb_protocol_tier_name(tier), 0);
      pb_table_num(&S->t, S->B && S->B->draws > 0 ? kept / (double)S->B->draws : NAN, 1);
      for (int j = 0; j < 3; j++) {
        int flip = j == 1; /* delta - U from the U - delta contrast */
        struct pb_interval v = pb_sx__class(S, t, tier, pb_sx__class_contrast(S, flip ? PB_SR_U : base[j], flip ? PB_SR_DELTA : x[j]), 0);
        double lo = flip ? -v.hi : v.lo, hi = flip ? -v.lo : v.hi;
        const double est = pb_sx__mean(S, t, tier, PB_SS_PAIR(S->T, pb_screen_sum_pair(S->T, base[j], x[j]), 2));
        pb_text_double(&S->t.tsv, est);
        pb_text_double(&S->t.tsv, lo);
        pb_text_double(&S->t.tsv, hi);
        pb_text_printf(&S->t.md, " | %+.3f", est);
        if (!isnan(lo)) pb_text_printf(&S->t.md, " {%+.3f, %+.3f}", lo, hi);
      }
      pb_table_end_row(&S->t);
    }
  return pb_table_flush(&S->t, S->res, "screen_class_intervals.tsv", md);
}

/* ------------------------------------------------------------ Table 18 tie-break */

/* Prorated and one-random-tie-break coverage of S, U, delta, ret and random,
 * per source, tier and budget (means only, as the seed's table). */
static int pb_sx__tiebreak(struct pb_sx *S, struct pb_text *md)
{
  static const int32_t pro[4] = {PB_SR_S, PB_SR_U, PB_SR_DELTA, PB_SR_RET};
  static const int32_t tb[4] = {PB_SR_S_TB, PB_SR_U_TB, PB_SR_DELTA_TB, PB_SR_RET_TB};
  pb_table_begin(&S->t, "Screening coverage with one seeded random tie-break (seed Table 18)",
                 "Share of failures among the top-q clean-correct images, cells weighted equally: 'tie' breaks the "
                 "ties of each score once at random (stream keyed by seed, cell and score; docs/screen.md), "
                 "'prorated' is its expectation (the value used by every paired difference); random = one seeded "
                 "random order per cell.",
                 "source\ttier\tq\tcells\tS_tie\tU_tie\tdelta_tie\tret_tie\trandom\tS_prorated\tU_prorated\t"
                 "delta_prorated\tret_prorated",
                 "source\ttier\tq\tcells\tS\tU\tdelta\tret\trandom\tS prorated\tU prorated\tdelta prorated\tret prorated");
  for (int32_t t = 0; t < S->n_targets; t++)
    for (int tier = 0; tier < PB_N_TIERS; tier++)
      for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) {
        const int64_t cells = pb_sx__cells(S, t, tier);
        if (cells == 0) continue;
        char q[16];
        snprintf(q, sizeof q, "%.1f", pb_screen_budget_pct[b] / 100.0);
        pb_table_str(&S->t, pb_sx__src(S, t), 1);
        pb_table_str(&S->t, pb_protocol_tier_name(tier), 0);
        pb_table_str(&S->t, q, 0);
        pb_table_int(&S->t, cells);
        for (int k = 0; k < 9; k++) {
          const int32_t r = k < 4 ? tb[k] : k == 4 ? PB_SR_RANDOM : pro[k - 5];
          pb_table_num(&S->t, pb_sx__mean(S, t, tier, PB_SS_ROW(r, 3 + b)), 3);
        }
        pb_table_end_row(&S->t);
      }
  return pb_table_flush(&S->t, S->res, "screen_coverage_tiebreak.tsv", md);
}

/* ------------------------------------------------------------ Table 38 */

/* Mild-tier baselines per source: recall at 0.2, AUROC and U - score in
 * recall with its model-group interval, for S, margin, entropy and U_TTA. */
static int pb_sx__baselines(struct pb_sx *S, struct pb_text *md)
{
  int32_t rows[5] = {PB_SR_U, PB_SR_S, PB_SR_MARGIN, PB_SR_ENTROPY, S->tta};
  int nb = S->tta >= 0 ? 5 : 4;
  int32_t ns = S->n_targets * nb * 3;
  struct pb_screen_gsum G;
  pb_screen_gsum_init(&G, ns, S->ng);
  int64_t *cells = pb_calloc((size_t)S->n_targets, sizeof *cells);
  for (int64_t c = 0; c < S->C->n; c++) {
    if (pb_sx__tier(S, c) != PB_TIER_MILD) continue;
    const int32_t t = S->C->target[c], g = S->mg[S->C->model[c]];
    cells[t]++;
    for (int j = 0; j < nb; j++) {
      const double o0 = pb_sx__met(S, c, rows[j], 4);
      pb_screen_gsum_add(&G, (t * nb + j) * 3, g, o0);
      pb_screen_gsum_add(&G, (t * nb + j) * 3 + 1, g, pb_sx__met(S, c, rows[j], 2));
      pb_screen_gsum_add(&G, (t * nb + j) * 3 + 2, g, j > 0 ? pb_sx__met(S, c, PB_SR_U, 4) - o0 : NAN);
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, cells, S->n_targets, MPI_INT64_T, MPI_SUM, S->comm);
  int status;
  struct pb_interval *iv = pb_sx__boot(S, &G, ns, &status);
  if (status == PB_OK && S->rank == 0) {
    char note[900];
    snprintf(note, sizeof note,
             "Mild cells weighted equally: recall (coverage) at q = 0.2 and AUROC of each score, and the mean "
             "cellwise U - score recall difference with its 95%% model-group interval (%lld draws). margin and "
             "entropy are NaN without top-k lists in the store (docs/screen.md); the TTA row needs an extra probe "
             "set named TTA%s. {lo, hi}: 95%% class bootstrap (%lld draws).",
             (long long)S->opt->group_draws, S->tta >= 0 ? "" : " (its class interval is not computed)",
             (long long)(S->B ? S->B->draws : 0));
    pb_table_begin(&S->t, "Additional simple baselines on mild conditions (seed Table 38)", note,
                   "source\tscore\tcells\trecall_q20\tauroc\tU-score\tgroup_lo\tgroup_hi\tclass_lo\tclass_hi",
                   "source\tscore\tcells\tRecall@.2\tAUROC\tU - score [groups]\t{classes}");
    for (int32_t t = 0; t < S->n_targets; t++) {
      if (cells[t] == 0) continue;
      for (int j = 0; j < nb; j++) {
        const struct pb_interval *v = iv + (t * nb + j) * 3;
        pb_table_str(&S->t, pb_sx__src(S, t), 1);
        pb_table_str(&S->t, S->L->row_names[rows[j]], 0);
        pb_table_int(&S->t, cells[t]);
        pb_table_num(&S->t, v[0].est, 3);
        pb_table_num(&S->t, v[1].est, 3);
        pb_sx__interval(&S->t, &v[2], j > 0 ? S->opt->group_draws : 0);
        struct pb_interval cl = pb_sx__class(S, t, PB_TIER_MILD, j > 0 ? pb_sx__class_contrast(S, PB_SR_U, rows[j]) : -1, 2);
        pb_text_double(&S->t.tsv, cl.lo);
        pb_text_double(&S->t.tsv, cl.hi);
        if (isnan(cl.lo)) pb_text_printf(&S->t.md, " | n/a");
        else pb_text_printf(&S->t.md, " | {%+.3f, %+.3f}", cl.lo, cl.hi);
        pb_table_end_row(&S->t);
      }
    }
    status = pb_table_flush(&S->t, S->res, "screen_baselines.tsv", md);
  }
  free(iv);
  free(cells);
  return status;
}

/* ------------------------------------------------------------ Table 39 */

/* Mild-cell recall differences U - S and U - TTA at q = 0.2 averaged over
 * the cells of each unit of @p key (group or model) of target t. */
static void pb_sx__by(const struct pb_sx *S, int32_t t, int by_model, int32_t n_key, double *mean, int64_t *cells)
{
  for (int32_t k = 0; k < n_key; k++) {
    cells[k] = (int64_t)pb_agg_sum(&S->T->a, pb_screen_sum_key(S->T, by_model, t, k, 0));
    for (int j = 0; j < 2; j++) mean[2 * k + j] = pb_agg_mean(&S->T->a, pb_screen_sum_key(S->T, by_model, t, k, 1 + j));
  }
}

/* The same per mild condition k < nc of target t. */
static void pb_sx__by_cond(const struct pb_sx *S, int32_t t, int32_t nc, double *mean, int64_t *cells)
{
  for (int32_t k = 0; k < nc; k++) {
    cells[k] = (int64_t)pb_agg_sum(&S->T->a, pb_screen_sum_key(S->T, 2, t, k, 0));
    for (int j = 0; j < 2; j++) mean[2 * k + j] = pb_agg_mean(&S->T->a, pb_screen_sum_key(S->T, 2, t, k, 1 + j));
  }
}

/* Group name of group index g (first model of the group). */
static const char *pb_sx__group_name(const struct pb_sx *S, int32_t g)
{
  for (int32_t m = 0; m < S->meta->n_models; m++)
    if (S->mg[m] == g) return S->meta->model_groups[m];
  return "?";
}

static int pb_sx__groups(struct pb_sx *S, struct pb_text *md)
{
  int32_t nm = S->meta->n_models, nmax = nm > S->ng ? nm : S->ng;
  double *mean = pb_malloc((size_t)nmax * 2 * sizeof *mean);
  int64_t *cells = pb_malloc((size_t)nmax * sizeof *cells);
  pb_table_begin(&S->t, "Mild-condition recall differences by model group (seed Table 39)",
                 "Recall (coverage) differences at q = 0.2 on mild cells, cells weighted equally within each model "
                 "group; U - TTA needs an extra probe set named TTA (nan otherwise).",
                 "source\tgroup\tcells\tU-S\tU-TTA", NULL);
  for (int32_t t = 0; t < S->n_targets; t++) {
    pb_sx__by(S, t, 0, S->ng, mean, cells);
    for (int32_t g = 0; g < S->ng; g++) {
      if (cells[g] == 0) continue;
      pb_table_str(&S->t, pb_sx__src(S, t), 1);
      pb_table_str(&S->t, pb_sx__group_name(S, g), 0);
      pb_table_int(&S->t, cells[g]);
      pb_table_num(&S->t, mean[2 * g], -3);
      pb_table_num(&S->t, mean[2 * g + 1], -3);
      pb_table_end_row(&S->t);
    }
  }
  int status = pb_table_flush(&S->t, S->res, "screen_groups.tsv", md);
  /* per model: the positivity counts of E.4 */
  struct pb_text sum = {0};
  pb_table_begin(&S->t, "Per-model mild recall differences at q = 0.2 (seed E.4, Table 39 text)",
                 "Mean over each model's mild cells; the counts below give how many models have a positive mean.",
                 "source\tmodel\tgroup\tcells\tU-S\tU-TTA", NULL);
  for (int32_t t = 0; t < S->n_targets && status == PB_OK; t++) {
    pb_sx__by(S, t, 1, nm, mean, cells);
    int32_t pos[2] = {0, 0}, def[2] = {0, 0};
    for (int32_t m = 0; m < nm; m++) {
      if (cells[m] == 0) continue;
      pb_table_str(&S->t, pb_sx__src(S, t), 1);
      pb_table_str(&S->t, S->meta->model_ids[m], 0);
      pb_table_str(&S->t, S->meta->model_groups[m], 0);
      pb_table_int(&S->t, cells[m]);
      for (int j = 0; j < 2; j++) {
        pb_table_num(&S->t, mean[2 * m + j], -5);
        def[j] += !isnan(mean[2 * m + j]);
        pos[j] += mean[2 * m + j] > 0;
      }
      pb_table_end_row(&S->t);
    }
    if (def[0] > 0 && S->tta >= 0)
      pb_text_printf(&sum, "- %s: U - S positive for %d of %d models; U - TTA positive for %d of %d.\n",
                     pb_sx__src(S, t), pos[0], def[0], pos[1], def[1]);
    else if (def[0] > 0)
      pb_text_printf(&sum, "- %s: U - S positive for %d of %d models; U - TTA n/a (no TTA probe set).\n",
                     pb_sx__src(S, t), pos[0], def[0]);
  }
  if (status == PB_OK) status = pb_table_flush(&S->t, S->res, "screen_models.tsv", md);
  if (status == PB_OK && sum.len) pb_text_printf(md, "\nModel-level positivity (mild, recall at q = 0.2):\n\n%s\n", sum.buf);
  pb_text_free(&sum);
  free(mean);
  free(cells);
  return status;
}

/* ------------------------------------------------------------ Figure 6 */

/* Probe type and severity of a condition name: "fog-4" -> "fog", "4"; a name
 * without a trailing -digits is its own type with severity "". */
static void pb_sx__split_severity(const char *name, char *type, size_t tlen, const char **sev)
{
  const char *dash = strrchr(name, '-');
  int digits = dash && dash[1] != '\0';
  for (const char *p = dash ? dash + 1 : name; digits && *p; p++) digits = *p >= '0' && *p <= '9';
  size_t n = digits ? (size_t)(dash - name) : strlen(name);
  snprintf(type, tlen, "%.*s", (int)n, name);
  for (char *p = type; *p; p++) /* the type is a gnuplot string literal */
    if (*p == '\'' || *p == '"' || *p == '\\') *p = '_';
  *sev = digits ? dash + 1 : "";
}

/* Mean over target t's mild cells of score row r's recall at q = 0.2, or of
 * the single-probe subset j (row < 0). */
static double pb_sx__mild_recall(const struct pb_sx *S, int32_t t, int32_t r, int32_t j)
{
  return pb_sx__mean(S, t, PB_TIER_MILD, r >= 0 ? PB_SS_ROW(r, 4) : PB_SS_SUB(S->T, j, 1));
}

static int pb_sx__figure6(struct pb_sx *S, struct pb_text *md)
{
  const struct pb_screen_layout *L = S->L;
  const struct pb_source *P = &S->meta->sources[L->probe_src];
  int32_t n1 = 0, nt = S->n_targets, nline = S->tta >= 0 ? 3 : 2;
  for (int32_t j = 0; j < L->n_subsets; j++) n1 += L->subset_m[j] == 1;
  if (n1 == 0 || !(L->subset_tiers & 1 << PB_TIER_MILD)) {
    pb_text_printf(md, "\nFigure 6 (single-probe recall) needs subset size 1 on mild cells (--subset-sizes, "
                       "--subset-tiers); not drawn.\n");
    return PB_OK;
  }
  char (*type)[128] = pb_calloc((size_t)n1, sizeof *type);
  const char **sev = pb_calloc((size_t)n1, sizeof *sev), *sevs[4] = {NULL};
  int32_t *y = pb_calloc((size_t)n1, sizeof *y), *sv = pb_calloc((size_t)n1, sizeof *sv), *jof = pb_calloc((size_t)n1, sizeof *jof);
  int32_t ntypes = 0, nsev = 0;
  for (int32_t j = 0, i = 0; j < L->n_subsets; j++) {
    if (L->subset_m[j] != 1) continue;
    jof[i] = j;
    pb_sx__split_severity(P->conditions[L->probe_cond[L->subset_idx[j][0]]], type[i], sizeof type[i], &sev[i]);
    y[i] = -1;
    for (int32_t k = 0; k < i && y[i] < 0; k++)
      if (!strcmp(type[k], type[i])) y[i] = y[k];
    if (y[i] < 0) y[i] = ntypes++;
    sv[i] = -1;
    for (int32_t k = 0; k < nsev && sv[i] < 0; k++)
      if (!strcmp(sevs[k], sev[i])) sv[i] = k;
    if (sv[i] < 0) sv[i] = nsev < 4 ? nsev++ : 3; /* more than four severities share the last marker */
    if (sevs[sv[i]] == NULL) sevs[sv[i]] = sev[i];
    i++;
  }
  int any = 0; /* gnuplot refuses a plot without one finite point */
  for (int32_t i = 0; i < n1; i++)
    for (int32_t t = 0; t < nt; t++) any |= !isnan(pb_sx__mild_recall(S, t, -1, jof[i]));
  struct pb_text d = {0}, sc = {0};
  pb_text_printf(&d, "probe\ttype\ty\tseverity_index\tseverity");
  for (int32_t t = 0; t < nt; t++) pb_text_printf(&d, "\trecall_%s", pb_sx__src(S, t));
  for (int32_t t = 0; t < nt; t++) pb_text_printf(&d, "\tall_%s\tclean_S_%s%s%s", pb_sx__src(S, t), pb_sx__src(S, t),
                                                  S->tta >= 0 ? "\tTTA_" : "", S->tta >= 0 ? pb_sx__src(S, t) : "");
  pb_text_printf(&d, "\n");
  for (int32_t i = 0; i < n1; i++) {
    pb_text_printf(&d, "%s\t%s\t%d\t%d\t%s", P->conditions[L->probe_cond[L->subset_idx[jof[i]][0]]], type[i], y[i],
                   sv[i], sev[i][0] ? sev[i] : "-");
    for (int32_t t = 0; t < nt; t++) pb_text_double(&d, pb_sx__mild_recall(S, t, -1, jof[i]));
    for (int32_t t = 0; t < nt; t++) {
      int32_t rows[3] = {PB_SR_U, PB_SR_S, S->tta};
      for (int k = 0; k < nline; k++) pb_text_double(&d, pb_sx__mild_recall(S, t, rows[k], 0));
    }
    pb_text_printf(&d, "\n");
  }
  static const int pt[4] = {7, 5, 9, 13}; /* filled circle, square, triangle, diamond */
  static const char *const line[3] = {"average of all probes (U)", "clean confidence S", "TTA average"};
  double off = nt > 1 ? 0.3 / (nt - 1) : 0;
  pb_text_printf(&sc, "set key outside below\nset offsets graph 0.05, graph 0.05, 0, 0\nset yrange [-0.7:%d.7]\n"
                      "set grid xtics\nset ytics scale 0 (", ntypes - 1);
  for (int32_t i = 0, k = 0; i < n1; i++) /* one label per type, at its first probe */
    if (y[i] == k) pb_text_printf(&sc, "%s'%s' %d", k++ ? ", " : "", type[i], y[i]);
  pb_text_printf(&sc, ")\nplot ");
  const char *sep = "";
  for (int32_t t = 0; t < nt; t++)
    for (int32_t v = 0; v < nsev; v++) {
      pb_text_printf(&sc, "%sDATA using (column(4)==%d ? column(%d) : 1/0):(column(3)%+.3f) with points "
                          "pt %d ps 1.6 lc %d title '%s, %s%s'", sep, v, 6 + t, -0.15 + t * off, pt[v], t + 1,
                     pb_sx__src(S, t), sevs[v][0] ? "severity " : "single probe", sevs[v]);
      sep = ", \\\n  ";
    }
  for (int32_t t = 0; t < nt; t++)
    for (int k = 0; k < nline; k++)
      pb_text_printf(&sc, "%sDATA using %d:3 with lines lw 2 dt %d lc %d title '%s: %s'", sep,
                     6 + nt + t * nline + k, k + 1, t + 1, pb_sx__src(S, t), line[k]);
  pb_text_printf(&sc, "\n");
  const struct pb_figure fig = {"figure6_probe_recall",
                                "Failure recall at a 20% budget for each single probe, mild conditions (seed Figure 6)",
                                "failure recall at q = 0.2 (share of real failures found; ties prorated)",
                                "probe type", sc.buf};
  int status = PB_OK;
  if (any) status = pb_figure_write(S->res, &fig, d.buf, d.len, md);
  else pb_text_printf(md, "\nFigure 6 (single-probe recall): no mild cell has a defined recall; not drawn.\n");
  pb_text_free(&d);
  pb_text_free(&sc);
  free(type);
  free(sev);
  free(y);
  free(sv);
  free(jof);
  return status;
}

/* ------------------------------------------------------------ E.3 capture diagnostics */

/* Field f of a '_'-separated condition name into out; the field count. */
static int pb_sx__field(const char *name, int f, char *out, size_t len)
{
  int n = 0;
  const char *p = name;
  out[0] = '\0';
  for (;;) {
    const char *e = strchr(p, '_');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (n == f) snprintf(out, len, "%.*s", (int)l, p);
    n++;
    if (!e) return n;
    p = e + 1;
  }
}

struct pb_sx_capture {
  int32_t n;            /* mild conditions of the target */
  int32_t *cond;        /* their condition indices */
  double *mean;         /* [n][2] model-averaged U - S, U - TTA recall differences at q = 0.2 */
};

/* One grouping row: mean of the condition means selected by (f, level, keep). */
static void pb_sx__capture_row(struct pb_sx *S, int32_t t, const struct pb_sx_capture *C, int j, int f,
                               const char *level, int keep, int *all_pos)
{
  const struct pb_source *src = &S->meta->sources[S->targets[t]];
  double sum = 0;
  int32_t n = 0;
  char v[128], label[300];
  for (int32_t i = 0; i < C->n; i++) {
    double x = C->mean[2 * i + j];
    if (isnan(x)) continue;
    if (f >= 0) {
      pb_sx__field(src->conditions[C->cond[i]], f, v, sizeof v);
      if ((strcmp(v, level) == 0) != keep) continue;
    }
    sum += x;
    n++;
  }
  if (n == 0) return;
  double m = sum / n;
  if (f < 0) snprintf(label, sizeof label, "all mild conditions");
  else snprintf(label, sizeof label, "%s factor %d = %s", keep ? "only" : "without", f + 1, level);
  pb_table_str(&S->t, pb_sx__src(S, t), 1);
  pb_table_str(&S->t, j ? "U-TTA" : "U-S", 0);
  pb_table_str(&S->t, label, 0);
  pb_table_int(&S->t, n);
  pb_table_num(&S->t, m, -4);
  pb_table_int(&S->t, m > 0);
  pb_table_end_row(&S->t);
  if (f >= 0) *all_pos &= m > 0;
}

/* Per mild condition the model-averaged paired differences; their positive
 * counts; means grouped by each level of each factor of the condition grid
 * (the '_'-separated fields of the names) and with any one level deleted. */
static int pb_sx__capture(struct pb_sx *S, struct pb_text *md)
{
  struct pb_table per = {{0}, {0}};
  struct pb_text sum = {0};
  pb_table_begin(&per, "Capture sensitivity: mild conditions (seed E.3)",
                 "Per mild condition, the paired recall difference at q = 0.2 averaged over the models' cells.",
                 "source\tcondition\tcells\tU-S\tU-TTA", NULL);
  pb_table_begin(&S->t, "Capture sensitivity by factor of the condition grid (seed E.3)",
                 "Means of the per-condition differences over all mild conditions, over the conditions with one "
                 "level of one factor (factor i = the i-th '_'-separated field of the condition name), and with that "
                 "level deleted; positive = 1 when the mean is above 0.",
                 "source\tcontrast\tgrouping\tconditions\tmean\tpositive", NULL);
  for (int32_t t = 0; t < S->n_targets; t++) {
    const struct pb_source *src = &S->meta->sources[S->targets[t]];
    int32_t nc = src->n_conditions;
    struct pb_sx_capture C = {0, pb_malloc((size_t)nc * sizeof(int32_t)), pb_calloc((size_t)nc * 2, sizeof(double))};
    double *mean = pb_malloc((size_t)nc * 2 * sizeof *mean);
    int64_t *cells = pb_malloc((size_t)nc * sizeof *cells);
    pb_sx__by_cond(S, t, nc, mean, cells);
    int32_t pos[2] = {0, 0}, def[2] = {0, 0}, fields = -1;
    for (int32_t k = 0; k < nc; k++) {
      if (cells[k] == 0) continue;
      C.cond[C.n] = k;
      char tmp[8];
      int nf = pb_sx__field(src->conditions[k], 0, tmp, sizeof tmp);
      fields = fields < 0 || fields == nf ? nf : 0; /* 0: names do not share one grid */
      pb_table_str(&per, src->name, 1);
      pb_table_str(&per, src->conditions[k], 0);
      pb_table_int(&per, cells[k]);
      for (int j = 0; j < 2; j++) {
        double m = mean[2 * k + j];
        C.mean[2 * C.n + j] = m;
        def[j] += !isnan(m);
        pos[j] += m > 0;
        pb_table_num(&per, m, -4);
      }
      pb_table_end_row(&per);
      C.n++;
    }
    for (int j = 0; j < 2; j++) {
      if (def[j] == 0) continue;
      int all_pos = 1;
      pb_sx__capture_row(S, t, &C, j, -1, NULL, 1, &all_pos);
      for (int f = 0; fields >= 2 && f < fields; f++)
        for (int32_t i = 0; i < C.n; i++) {
          char lv[128], prev[128];
          pb_sx__field(src->conditions[C.cond[i]], f, lv, sizeof lv);
          int seen = 0;
          for (int32_t i2 = 0; i2 < i && !seen; i2++) {
            pb_sx__field(src->conditions[C.cond[i2]], f, prev, sizeof prev);
            seen = !strcmp(prev, lv);
          }
          if (seen) continue;
          pb_sx__capture_row(S, t, &C, j, f, lv, 1, &all_pos);
          pb_sx__capture_row(S, t, &C, j, f, lv, 0, &all_pos);
        }
      pb_text_printf(&sum, "- %s, %s: mean positive in %d of %d mild conditions; %s\n", src->name,
                     j ? "U - TTA" : "U - S", pos[j], def[j],
                     fields >= 2 ? (all_pos ? "every factor-level group and one-level deletion keeps a positive mean"
                                            : "some factor-level group or deletion has a non-positive mean")
                                 : "condition names form no factor grid");
    }
    free(C.cond);
    free(C.mean);
    free(mean);
    free(cells);
  }
  int status = pb_table_flush(&per, S->res, "screen_capture_conditions.tsv", md);
  if (status == PB_OK) status = pb_table_flush(&S->t, S->res, "screen_capture.tsv", md);
  if (status == PB_OK && sum.len) pb_text_printf(md, "\nCapture sensitivity (seed E.3):\n\n%s\n", sum.buf);
  pb_text_free(&sum);
  return status;
}

/* ------------------------------------------------------------ entry */

int pb_screen_extra_report(const struct pb_meta *meta, const struct pb_screen_layout *L, const int32_t *targets,
                           int32_t n_targets, const struct pb_screen_cells *C, const struct pb_screen_sum *T,
                           const struct pb_screen_options *opt, const struct pb_screen_boot *B, MPI_Comm comm,
                           struct pb_results *res, struct pb_text *md)
{
  struct pb_sx S = {meta, L, targets, n_targets, C, T, opt, B, comm, res, 0, NULL, 0, -1, {{0}, {0}}};
  MPI_Comm_rank(comm, &S.rank);
  S.mg = pb_malloc((size_t)(meta->n_models > 0 ? meta->n_models : 1) * sizeof *S.mg);
  S.ng = pb_store_meta_model_groups(meta, S.mg);
  for (int32_t e = 0; e < L->n_extra && S.tta < 0; e++)
    if (L->is_tta[e]) S.tta = PB_SR_FIXED + 2 * e;
  pb_text_printf(md, "\n### Appendix E checks (seed Tables 17-18, 22, 38-39, Figure 6, E.1 and E.3)\n");
  int status = pb_sx__tier_table(&S, &pb_sx__t22_spec, md);
  if (status == PB_OK) status = pb_sx__tier_table(&S, &pb_sx__delta_spec, md);
  if (status == PB_OK) status = pb_sx__baselines(&S, md);
  if (status == PB_OK && S.rank == 0) {
    status = pb_sx__table17(&S, md);
    if (status == PB_OK) status = pb_sx__tiebreak(&S, md);
    if (status == PB_OK) status = pb_sx__groups(&S, md);
    if (status == PB_OK) status = pb_sx__figure6(&S, md);
    if (status == PB_OK) status = pb_sx__capture(&S, md);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  free(S.mg);
  return status;
}
