/* Shared by the stage files (screen_stage*.c) and the report files
 * (screen_report*.c): the reports' cells, totals and intervals (the pure
 * part, score rows and the per-cell record, is screen_kernel_internal.h).  The stage accumulates, reduces and resamples; the reports
 * only format what it hands them (struct pb_screen_rep_in), on rank 0. */
#ifndef PAIRBOUND_SCREEN_INTERNAL_H
#define PAIRBOUND_SCREEN_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <mpi.h>

#include "pairbound/agg.h"
#include "pairbound/blocks.h"
#include "pairbound/protocol.h"
#include "pairbound/resample.h"
#include "pairbound/results.h"
#include "pairbound/screen.h"
#include "pairbound/store.h"
#include "pairbound/table.h"
#include "screen_kernel_internal.h"

/* Score row of the first extra probe set named TTA (U_TTA; A3_TTA follows it), or -1 (screen_stage_sum.c). */
int32_t pb_screen_tta_row(const struct pb_screen_layout *L);

/* This rank's cells for the report: n records of rec_len doubles in cell
 * order, each cell's target index, model and condition index in its target
 * source (no rank holds another rank's cells). */
struct pb_screen_cells {
  int64_t n;
  const double *recs;
  const int32_t *target, *model, *cond;
};

/* Model-group sums of per-cell statistics, exact (pairbound/agg.h), for a
 * group bootstrap of cell means without the cells: add each cell's value of
 * statistic k (NaN: the cell does not enter it) with the cell's group, then
 * pb_screen_gsum_boot. */
struct pb_screen_gsum {
  int32_t n_stat, n_groups;
  struct pb_agg a;          /* [stat][group] */
};
void pb_screen_gsum_init(struct pb_screen_gsum *G, int32_t n_stat, int32_t n_groups);
static inline void pb_screen_gsum_add(struct pb_screen_gsum *G, int32_t k, int32_t group, double x)
{
  pb_agg_add(&G->a, (int64_t)k * G->n_groups + group, x);
}
/* Reduce the sums to every rank, then pb_resample_boot_group_sums into out[n_stat], each estimate the exact
 * mean over all cells rounded once (collective); frees G. */
int pb_screen_gsum_boot(struct pb_screen_gsum *G, const struct pb_boot_spec *spec, MPI_Comm comm,
                        struct pb_interval *out);

/* The paired differences a - b (cells where both are defined) that the mean tables print: their rows
 * a, b are pb_screen_sum.pair[p]; U - TTA is NaN without a TTA set. */
enum pb_screen_pair {
  PB_SP_U_S, PB_SP_U_DELTA, PB_SP_U_RET, PB_SP_U_A3, PB_SP_GSU_S, PB_SP_DELTA_U, PB_SP_U_TTA, PB_SP_U_MARGIN,
  PB_SP_U_ENTROPY, PB_SP_U_GSU, PB_SP_NS_DERANGE, PB_SP_CCDEV_CLASS, PB_SS_NPAIR
};
/* Slots of the reports' totals (screen_stage_sum.c; per key, exact sums of pairbound/agg.h):
 * per (target, tier) the cells, every score row's metric means, the paired
 * differences, Table 21's ceiling means, Table 25's identity counts and
 * means, and every subset's AUROC, coverage and gain over S; per target
 * (every tier) the cells and the Table 27 strata means; per (target, model
 * group), (target, model) and (target, condition) on mild cells the cells
 * and the U - S, U - TTA recall means at q = 0.2. */
enum { PB_SS_CEIL_N = 8, PB_SS_ID_N = 4, PB_SS_STRATA_N = PB_SCREEN_STRATA * 5 };
struct pb_screen_sum {
  int32_t n_targets, n_rows, n_subsets, n_models, n_groups, max_cond;
  int32_t tta;                     /* score row U_TTA, or -1 */
  int32_t pair[PB_SS_NPAIR][2];    /* rows a, b of each paired difference */
  int64_t per_tt;                  /* slots per (target, tier) */
  int32_t *mg;                     /* [model] group */
  struct pb_agg a;
};
/* Slot offsets within a (target, tier) key. */
#define PB_SS_CELLS 0
#define PB_SS_ROW(r, f) (1 + (int64_t)PB_SCREEN_MET * (r) + (f))
#define PB_SS_PAIR(S, p, f) (1 + (int64_t)PB_SCREEN_MET * ((S)->n_rows + (p)) + (f))
#define PB_SS_CEIL(S) (1 + (int64_t)PB_SCREEN_MET * ((S)->n_rows + PB_SS_NPAIR))
#define PB_SS_ID(S) (PB_SS_CEIL(S) + PB_SS_CEIL_N)
#define PB_SS_SUB(S, j, e) (PB_SS_ID(S) + PB_SS_ID_N + 3 * (int64_t)(j) + (e)) /* e: auroc, cov_q20, gain */

void pb_screen_sum_init(struct pb_screen_sum *S, const struct pb_meta *meta, const struct pb_screen_layout *L,
                        const int32_t *targets, int32_t n_targets);
/* One local cell into the totals. */
void pb_screen_sum_add(struct pb_screen_sum *S, const struct pb_screen_layout *L, const struct pb_screen_cells *C,
                       int64_t c);
void pb_screen_sum_free(struct pb_screen_sum *S);
/* Slot of (target t, tier 0..2) offset o; of target t (every tier) offset o (0 cells, 1 + the strata); of the
 * mild cells of (t, group g), (t, model m), (t, condition k) offset o (0 cells, 1 U - S, 2 U - TTA). */
static inline int64_t pb_screen_sum_tt(const struct pb_screen_sum *S, int32_t t, int tier, int64_t o)
{
  return ((int64_t)t * PB_N_TIERS + tier) * S->per_tt + o;
}
static inline int64_t pb_screen_sum_t(const struct pb_screen_sum *S, int32_t t, int64_t o)
{
  return (int64_t)S->n_targets * PB_N_TIERS * S->per_tt + (int64_t)t * (1 + PB_SS_STRATA_N) + o;
}
static inline int64_t pb_screen_sum_key(const struct pb_screen_sum *S, int kind, int32_t t, int32_t key, int o)
{
  const int32_t n[4] = {S->n_groups, S->n_models, S->max_cond, 0}; /* kind 3: the end of the slots */
  int64_t base = pb_screen_sum_t(S, S->n_targets, 0);
  for (int k = 0; k < kind; k++) base += (int64_t)S->n_targets * n[k] * 3;
  return base + ((int64_t)t * n[kind] + key) * 3 + o;
}
/* Sum the totals onto rank 0 (collective). */
int pb_screen_sum_reduce(struct pb_screen_sum *S, MPI_Comm comm);

/* ---- model-group intervals of the reports (screen_stage_boot.c) */

/* Cell means with 95% model-group intervals by row: statistic k of row r is
 * iv[r * n_stat + k] and cells[r] counts the row's cells on every rank.  Row
 * t * PB_SB_NROWS_PER_TARGET holds target t's cells of every tier, the next
 * PB_N_TIERS rows its cells of each tier. */
struct pb_screen_rows {
  int32_t n_stat;
  int64_t *cells;
  struct pb_interval *iv;
};
static inline const struct pb_interval *pb_screen_rows_iv(const struct pb_screen_rows *R, int32_t row, int32_t k)
{
  return &R->iv[(size_t)row * (size_t)R->n_stat + (size_t)k];
}

/* The natural tables' statistics in pb_screen_ivs.natural: the first of
 * each table's, and Table 38's scores set against U. */
#define PB_SCREEN_NAT_BASE 6
struct pb_screen_natural {
  int32_t tta;                          /* score row U_TTA (-1: no natural tables) */
  int32_t e_tiers, e_var, e_base, e_fig, e_usel;
  int32_t n_base, base_row[PB_SCREEN_NAT_BASE];
  const char *base_name[PB_SCREEN_NAT_BASE];
};

/* Every model-group interval the reports print (a rows' cells NULL where not computed). */
struct pb_screen_ivs {
  struct pb_screen_rows diff;   /* the PB_SB_NSTAT paired differences (with group or class draws) */
  struct pb_screen_rows more;   /* Table 27's tercile gaps, then U - U_<set> in AUROC and coverage (group draws) */
  struct pb_screen_rows t22;    /* S, U, U_rank, U^0.5, U^2 AUROC and U_rank - S */
  struct pb_screen_rows delta;  /* the delta identity ablation: 4 AUROCs, wins, gap */
  struct pb_screen_rows base;   /* Table 38, per score j: recall at q = 0.2, AUROC, U - score recall */
  int32_t base_row[5], n_base;  /* its scores: U, S, margin, entropy (and U_TTA) */
  struct pb_screen_rows natural;
  struct pb_screen_natural nat;
};
/* Reduce the class sums of B and bootstrap every interval of I from this rank's cells C (collective). */
int pb_screen_ivs_boot(struct pb_screen_boot *B, const struct pb_meta *meta, const struct pb_screen_layout *L,
                       const struct pb_screen_cells *C, const struct pb_screen_options *opt, MPI_Comm comm,
                       struct pb_screen_ivs *I);
void pb_screen_ivs_free(struct pb_screen_ivs *I);

/* ---- the reports: rank 0, no MPI; each appends its markdown to md.  The getters they share are in
 * screen_report.c. */

/* What the reports read: the store's metadata, the layout, the targets, the options, the totals T (reduced),
 * the class-bootstrap sums B (reduced; draws 0: no class intervals), the model-group intervals I. */
struct pb_screen_rep_in {
  const struct pb_meta *meta;
  const struct pb_screen_layout *L;
  const int32_t *targets;
  int32_t n_targets;
  const struct pb_screen_options *opt;
  const struct pb_screen_sum *T;
  const struct pb_screen_boot *B;
  const struct pb_screen_ivs *I;
  /* per unit (target, model), pb_screen_unit_width values: seed E.1's Spearman of delta with -U and g(S)'s weight on
   * S, then seed E.3's development error rate of each probe set (the primary set, then the extra sets) */
  const double *unit_stats;
  const int8_t *const *tier; /* [target][condition]: the reporting tier (-1: clean or none) */
  struct pb_results *res;
};

/* What the entropy score is on this store, for the captions of the tables that show it (screen_report_extra.c):
 * the stored column (exact), the top-k lists' uniform completion (an approximation), or NaN. */
const char *pb_screen_entropy_note(const struct pb_meta *meta);
/* The caption sentence of every table with an A3 column: its completion stays approximate with summaries too. */
#define PB_SCREEN_A3_NOTE                                                                                            \
  "A3 is approximate: it reads the probability of a class outside a record's top-k list from the list's uniform " \
  "completion, which entropy and collision cannot replace (they do not give one class's probability; "             \
  "docs/screen.md)."

static inline int32_t pb_screen_unit_width(const struct pb_screen_layout *L) { return 3 + L->n_extra; }

/* Metric f of a score row in the record and the totals: 0 n, 1 n_fail, 2 AUROC, 3 + b coverage at budget b. */
enum { PB_SM_AUROC = 2, PB_SM_COV10 = 3, PB_SM_COV20 = 4, PB_SM_AT_Q = -1 /* the row's budget */ };

/* A row of a table of the totals T: target t's cells of a tier (at budget b for the rows by budget).
 * Columns of pb_screen_sum_cell: slot >= 0 the mean of that score row's metric arg, else one below. */
struct pb_screen_trow {
  const struct pb_screen_rep_in *in;
  int32_t t;
  int tier, b;
  char q[16];               /* budget b as a share: "0.2" */
  const char *label;        /* PB_SCOL_LABEL */
};
enum {
  PB_SCOL_SOURCE = -1, PB_SCOL_TIER = -2, PB_SCOL_Q = -3, PB_SCOL_LABEL = -4,
  PB_SCOL_CELLS = -5,       /* the cells */
  PB_SCOL_DEFINED = -6,     /* the cells where score row arg has an AUROC */
  PB_SCOL_CEIL = -7,        /* Table 21's mean arg: p, ceilings, U / ceiling, random / ceiling */
  PB_SCOL_ID = -8,          /* Table 25's arg: defined cells, wins, degenerate cells, gap without them
                               (PB_COL_INT: the total, else the mean) */
  PB_SCOL_CONDITIONS = -9,  /* the target's conditions in the tier (Table 24's column) */
  PB_SCOL_PAIR = -16        /* PB_SCOL_PAIR - p: the mean of paired difference p (enum pb_screen_pair), metric arg */
};
#define PB_SCOL_DIFF(p) (PB_SCOL_PAIR - (p))
void pb_screen_trow_at(struct pb_screen_trow *r, int32_t t, int tier, int b);
union pb_cell pb_screen_sum_cell(const void *ctx, const struct pb_column *c);

/* A row of the subset tables (Table 28, Table 32's natural rows): the subsets of size m (pb_table_member). */
struct pb_screen_subrow {
  const char *source, *tier;
  int64_t m;
  const char *set;          /* "random" (prefixed subsets), a severity set's name or "all" */
  int64_t n;
  double cov, cov_min, cov_max, gain, gain_min, auroc, auroc_min, auroc_max;
};
extern const struct pb_column pb_screen_subset_cols[];

/* A row of an interval table (pb_screen_iv_cell): text columns, cells, the row's statistics iv with their group
 * intervals (draws 0: the estimates only) and the class intervals of U - score row x in boot row brow. */
struct pb_screen_ivrow {
  const char *str[3];
  int64_t cells;
  const struct pb_interval *iv;
  int64_t draws;
  const struct pb_screen_boot *B;
  int32_t brow, x;
  char *text;               /* room for a markdown cell, PB_SCREEN_IV_TEXT bytes */
};
#define PB_SCREEN_IV_TEXT 96
enum {
  PB_SIV_STR,               /* str[arg] */
  PB_SIV_CELLS,
  PB_SIV_NAN,               /* a column without a value */
  PB_SIV_EST, PB_SIV_LO, PB_SIV_HI, /* statistic arg: the estimate, the interval (NaN without draws) */
  PB_SIV_MD,                /* markdown "est [lo, hi]" of statistic arg */
  PB_SIV_CLASS_LO, PB_SIV_CLASS_HI, /* class interval of U - x in metric arg (0 AUROC, 1 + b coverage) */
  PB_SIV_CLASS_MD           /* markdown "{lo, hi}" of the same */
};
union pb_cell pb_screen_iv_cell(const void *ctx, const struct pb_column *c);
/* Class-bootstrap interval of U - row x (-1: none) in metric k on boot row brow; NaN without class draws. */
struct pb_interval pb_screen_class_iv(const struct pb_screen_boot *B, int32_t brow, int32_t x, int k);

/* A table built as figure data: its TSV written with pb_figure_write when @p draw, its markdown dropped. */
struct pb_figure;
int pb_screen_figure(struct pb_results *res, const struct pb_figure *fig, struct pb_table *t, int draw,
                     struct pb_text *md);

/* Interval tables of the paired differences, Table 27's gaps and U - U_<set>, Figures 2(b), 3(b)
 * (screen_report_intervals.c); nothing where the intervals were not computed. */
int pb_screen_interval_report(const struct pb_screen_rep_in *in, struct pb_text *md);
/* Appendix E tables (screen_report_extra.c): Tables 17, 18 (tie-break), 22, 38, 39, the delta ablation,
 * Figure 6, capture diagnostics. */
int pb_screen_extra_report(const struct pb_screen_rep_in *in, struct pb_text *md);

/* The development selections as the report shows them (screen_report_tta.c). */
struct pb_screen_sel_report {
  int32_t n_pick[2];        /* 0: U^sel, 1: TTA^sel */
  const int32_t *n_chosen[2]; /* [target] picks made (NULL: no selection) */
  char **names[2];          /* [target * n_pick] "SOURCE:condition" of each pick */
  const double *value[2];   /* [target * n_pick] mean selection-split coverage after the pick */
  uint8_t *fixed[2];        /* [target * n_pick] the pick belongs to the fixed set */
};
/* Natural-comparison tables (Tables 29, 31/37, 34, 38 natural rows, E.2 selections) and Figure 4; nothing
 * without a TTA set. */
int pb_screen_natural_report(const struct pb_screen_rep_in *in, const struct pb_screen_sel_report *S,
                             struct pb_text *md);
/** Source x tier tables (TSV + report/screen.md) with the other reports' markdown @p extra at the end. */
int pb_screen_report(const struct pb_screen_rep_in *in, const char *probe_desc, const struct pb_text *extra);

/** screen's lines of the run summary, from the report TSVs in @p dir (screen_report_summary.c). */
void pb_screen_summary(FILE *fp, struct pb_text *md, const char *dir, const char *rel);

#endif /* PAIRBOUND_SCREEN_INTERNAL_H */
