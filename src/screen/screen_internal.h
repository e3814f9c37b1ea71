/* Shared by screen_stage.c and the report files: score rows, the per-cell
 * record and the report's totals. */
#ifndef PAIRBOUND_SCREEN_INTERNAL_H
#define PAIRBOUND_SCREEN_INTERNAL_H

#include <stdint.h>
#include <mpi.h>

#include "pairbound/agg.h"
#include "pairbound/blocks.h"
#include "pairbound/protocol.h"

#include "pairbound/results.h"
#include "pairbound/screen.h"
#include "pairbound/store.h"

struct pb_interval;
struct pb_boot_spec;

/* Fixed score rows of screen_cells.tsv (docs/screen.md); extra probe sets
 * follow as U_<name>, A3_<name>. */
enum pb_screen_row {
  PB_SR_S, PB_SR_U, PB_SR_DELTA, PB_SR_RET, PB_SR_MARGIN, PB_SR_ENTROPY, PB_SR_CLASS_DELTA, PB_SR_CLASS_U_CC,
  PB_SR_CLASS_U_ALL, PB_SR_G_S, PB_SR_G_SU, PB_SR_G_SURET, PB_SR_A3, PB_SR_U_DERANGE, PB_SR_U_LOO, PB_SR_RANDOM,
  PB_SR_S_NS, PB_SR_U_NS, PB_SR_S_CCDEV, PB_SR_U_CCDEV,
  /* seed E.1: Table 22 protocol sensitivity, the delta identity ablation, Table 18's random tie-break */
  PB_SR_U_RANK, PB_SR_U_POW05, PB_SR_U_POW2, PB_SR_DELTA_NS, PB_SR_DELTA_DERANGE, PB_SR_S_TB, PB_SR_U_TB,
  PB_SR_DELTA_TB, PB_SR_RET_TB, PB_SR_FIXED
};
extern const char *const pb_screen_row_names[PB_SR_FIXED];

/* Per-cell information fields, then PB_SCREEN_MET per row, then strata, then subsets. */
enum pb_screen_info {
  PB_SI_TIER, PB_SI_N, PB_SI_NFAIL, PB_SI_NNS, PB_SI_NFAIL_NS, PB_SI_DEGENERATE, PB_SI_NUNMATCHED, PB_SI_A3APPROX,
  PB_SI_N_FIELDS
};
#define PB_SCREEN_N_NATURAL 5  /* natural rows */
enum { PB_SN_U0, PB_SN_TTA0, PB_SN_AGREE, PB_SN_USEL, PB_SN_TTASEL };
#define PB_SCREEN_MET 6   /* n, n_fail, auroc, cov_q10, cov_q20, cov_q30 */
#define PB_SCREEN_STRATA 3
#define PB_SCREEN_STRATUM_F 7 /* n, n_fail, auroc_S, auroc_U, auroc_U_ns, auroc_U_derange, ret_gap */

struct pb_screen_layout {
  int32_t n_rows;            /* score rows: fixed + 2 per extra probe set */
  char **row_names;
  int32_t n_extra;           /* extra probe sets */
  char **extra_names;        /* their names (U_<name> is row PB_SR_FIXED + 2 e) */
  int is_tta[64];            /* extra set named TTA (case-insensitive): U - TTA contrasts */
  int32_t extra_n[64];       /* probe conditions of each extra set */
  /* natural rows (a TTA set exists): U0, TTA0, agree_TTA, U_sel, TTA_sel
   * from row tta_rows on (-1 without a TTA set); docs/screen.md */
  int32_t tta_rows;
  int32_t n_subsets;         /* Table 28 subsets of the primary probe set, then (Table 32) the same index sets of the TTA set */
  int32_t n_subsets_u;       /* those of the primary set */
  int32_t *subset_m;         /* size of each subset */
  int32_t n_probes;          /* primary probe count */
  int32_t **subset_idx;      /* each subset's indices into the primary set */
  int32_t probe_src;         /* primary probe source and its conditions (Figure 6 labels) */
  const int32_t *probe_cond;
  int32_t row_off, strata_off, subset_off, rec_len;
  int subset_tiers;
};

/* ---- intervals of the paired differences U - X (screen_boot.c) */
#define PB_SB_NCON 12         /* contrasts B - X: B in pb_screen_boot_base (U but for g_SU - S), X in pb_screen_boot_contrast */
#define PB_SB_NCLASSCON 7     /* the first ones also get class-bootstrap intervals: U - S, delta, ret, A3, margin,
                                 entropy and g_SU - S */
#define PB_SB_NMET 4          /* auroc, cov_q10, cov_q20, cov_q30 */
#define PB_SB_NSTAT (PB_SB_NCON * PB_SB_NMET)
#define PB_SB_NROWS_PER_TARGET (PB_N_TIERS + 1) /* all tiers, then each tier */
#define PB_SB_NSCORES 8       /* scores the class bootstrap ranks: U, S, delta, ret, A3, margin, entropy, g_SU */
#define PB_SB_NDYN 3          /* with a TTA set also U_TTA, A3_TTA and (natural rows) agree_TTA, for the class
                                 contrasts U - U_TTA (Tables 31, 37, 38), U - A3_TTA (Table 34, mild cells only) and
                                 U - agree_TTA (Table 38, mild only): contrasts PB_SB_NCON + d */
extern const int pb_screen_boot_scores[PB_SB_NSCORES];
extern const int pb_screen_boot_contrast[PB_SB_NCON];   /* score row X of contrast B - X */
extern const int pb_screen_boot_base[PB_SB_NCON];       /* score row B of contrast B - X */

/* Class-bootstrap accumulators: one class draw per target source shared by
 * all its cells; per (target, tier row, draw, statistic) fixed-point sums, so
 * the totals do not depend on how cells are split over ranks and threads. */
struct pb_screen_boot {
  int32_t n_targets;
  int64_t draws;
  int32_t *n_classes;       /* [target] */
  int32_t **mult;           /* [target]: per block of PB_WM_LANES draws, class-major, the block's draws
                             * interleaved (a lane past the last draw weighs nothing), as pb_resample_weighted_metrics reads them */
  uint16_t **mult16;        /* [target]: the same as 16-bit integers (NULL where a class count exceeds 65,535) */
  int64_t *sum, *cnt;       /* [target * rows + row][draw][stat] */
  int64_t *cells;           /* [target * rows + row][draw] cells with both outcomes in the draw */
  int32_t n_dyn;            /* dynamic contrasts U - dyn_row[d] (0 without a TTA set) */
  int32_t dyn_row[PB_SB_NDYN];
  int32_t dyn_tier[PB_SB_NDYN]; /* only cells of this tier (-1: all), summed in its tier row only (cost) */
  int32_t n_scores, n_stat; /* PB_SB_NSCORES + n_dyn; PB_SB_NSTAT + n_dyn * PB_SB_NMET */
  int shared;               /* a block's accumulators: n_classes and mult belong to another */
};

void pb_screen_boot_init(struct pb_screen_boot *B, const struct pb_meta *meta, const struct pb_screen_layout *L,
                         const int32_t *targets, int32_t n_targets, uint64_t seed, int64_t draws);
/* Score row of the class bootstrap's score j < B->n_scores. */
int32_t pb_screen_boot_score_row(const struct pb_screen_boot *B, int j);
/* Index c of the class contrast base - x (statistics c * PB_SB_NMET + metric), or -1 when it has no class sums. */
int pb_screen_boot_class_contrast(const struct pb_screen_boot *B, int32_t base, int32_t x);
/* Ascending orders of the n_scores scores of a unit (NaN left out); caller frees order[k]. */
void pb_screen_boot_orders(const double *const *score, int n_scores, int32_t n, int32_t **order, int32_t *n_order);
/* One cell's contribution to every draw, added to B: the calling thread's own accumulators
 * (pb_screen_boot_local), which pb_screen_boot_add merges atomically. */
void pb_screen_boot_cell(struct pb_screen_boot *B, int32_t t, int tier, int32_t n, const int32_t *label,
                         const uint8_t *y, const double *const *score, int32_t *const *order, const int32_t *n_order);
void pb_screen_boot_free(struct pb_screen_boot *B);
/* Class-bootstrap percentile interval of statistic @p stat (contrast c * PB_SB_NMET + metric) in accumulator
 * row @p row (target t * PB_SB_NROWS_PER_TARGET + 0 for all tiers, 1 + tier for one); after the reduction. */
void pb_screen_boot_class_interval(const struct pb_screen_boot *B, int32_t row, int stat, struct pb_interval *out);
/* Zeroed accumulators sharing B's class draws: one block's contributions (free with pb_screen_boot_free). */
void pb_screen_boot_local(const struct pb_screen_boot *B, struct pb_screen_boot *L);
/* Block payloads: the accumulators of targets [t0, t1] appended to @p out, or read from @p in and added to B. */
void pb_screen_boot_put(const struct pb_screen_boot *L, int32_t t0, int32_t t1, struct pb_bytes *out);
size_t pb_screen_boot_bytes(const struct pb_screen_boot *B, int32_t t0, int32_t t1); /* what put appends */
int pb_screen_boot_add(struct pb_screen_boot *B, int32_t t0, int32_t t1, struct pb_bytes *in);

/* This rank's cells for the report: n records of rec_len doubles in cell
 * order, each cell's target index, model and condition index in its target
 * source (the report never holds another rank's cells). */
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

/* The paired differences a - b (cells where both are defined) that the mean tables print. */
#define PB_SS_NPAIR 12
/* Slots of the report's totals (per key, exact sums of pairbound/agg.h):
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
/* Index of the paired difference a - b (PB_SS_NPAIR of them, -1 when not kept). */
int pb_screen_sum_pair(const struct pb_screen_sum *S, int32_t a, int32_t b);
/* Sum the totals onto rank 0 (collective). */
int pb_screen_sum_reduce(struct pb_screen_sum *S, MPI_Comm comm);

/* Interval table of the paired differences (group and class bootstrap); collective, text on rank 0. */
int pb_screen_boot_table(struct pb_screen_boot *B, const struct pb_meta *meta, const struct pb_screen_layout *L,
                         const int32_t *targets, const struct pb_screen_cells *C, const struct pb_screen_options *opt,
                         int64_t group_draws, MPI_Comm comm, struct pb_results *res, struct pb_text *md);

/* Appendix E tables (screen_extra.c): Tables 18 (tie-break), 22, 38, 39, the delta ablation, Figure 6,
 * capture diagnostics; collective (model-group intervals from this rank's cells C), the others from
 * the totals S (reduced), text on rank 0. */
int pb_screen_extra_report(const struct pb_meta *meta, const struct pb_screen_layout *L, const int32_t *targets,
                           int32_t n_targets, const struct pb_screen_cells *C, const struct pb_screen_sum *S,
                           const struct pb_screen_options *opt, const struct pb_screen_boot *B, MPI_Comm comm,
                           struct pb_results *res, struct pb_text *md);
/* The development selections as the report shows them (screen_tta_report.c). */
struct pb_screen_sel_report {
  int32_t n_pick[2];        /* 0: U^sel, 1: TTA^sel */
  const int32_t *n_chosen[2]; /* [target] picks made (NULL: no selection) */
  char **names[2];          /* [target * n_pick] "SOURCE:condition" of each pick */
  const double *value[2];   /* [target * n_pick] mean selection-split coverage after the pick */
  uint8_t *fixed[2];        /* [target * n_pick] the pick belongs to the fixed set */
};

/* Natural-comparison tables (Tables 29, 31/37, 34, 38 natural rows, E.2 selections) and Figure 4:
 * collective (model-group intervals; class intervals from B, reduced), text on rank 0; nothing without a TTA set. */
int pb_screen_natural_report(const struct pb_meta *meta, const struct pb_screen_layout *L, const int32_t *targets,
                             int32_t n_targets, const struct pb_screen_cells *C, const struct pb_screen_sum *T,
                             const struct pb_screen_options *opt, const struct pb_screen_boot *B,
                             const struct pb_screen_sel_report *S, MPI_Comm comm, struct pb_results *res,
                             struct pb_text *md);

/** Source x tier tables (TSV + report/screen.md) from the reduced totals; rank 0 only. */
int pb_screen_report(const struct pb_meta *meta, const struct pb_screen_layout *L, const int32_t *targets,
                     int32_t n_targets, const struct pb_screen_sum *S, struct pb_results *res,
                     const struct pb_screen_options *opt, const char *probe_desc, const struct pb_text *extra);

#endif /* PAIRBOUND_SCREEN_INTERNAL_H */
