/* Shared by the screen stage and report files: the report's cells and
 * totals, their tables (the pure part, score rows and the per-cell record,
 * is screen_kernel_internal.h). */
#ifndef PAIRBOUND_SCREEN_INTERNAL_H
#define PAIRBOUND_SCREEN_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <mpi.h>

#include "pairbound/agg.h"
#include "pairbound/blocks.h"
#include "pairbound/protocol.h"

#include "pairbound/results.h"
#include "pairbound/screen.h"
#include "pairbound/store.h"
#include "screen_kernel_internal.h"

struct pb_interval;
struct pb_boot_spec;


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
/* Reduce the sums to every rank, then pb_boot_group_sums into out[n_stat], each estimate the exact
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

/** screen's lines of the run summary, from the report TSVs in @p dir (screen_report_summary.c). */
void pb_screen_summary(FILE *fp, const char *dir);

#endif /* PAIRBOUND_SCREEN_INTERNAL_H */
