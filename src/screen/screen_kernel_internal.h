/* What the screen files share that needs no MPI, so that the kernels see
 * only this: the score rows and the per-cell record, the layout, the
 * class-bootstrap accumulators, the stage's context (probe sets, selection
 * pools, loaded rows) and the one-unit computation of
 * src/screen/screen_kernel_unit.c.  screen_internal.h includes it. */
#ifndef PAIRBOUND_SCREEN_KERNEL_INTERNAL_H
#define PAIRBOUND_SCREEN_KERNEL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pairbound/meta.h"
#include "pairbound/screen_kernel.h"

struct pb_bytes;
struct pb_interval;
struct pb_protocol;

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

#define PB_SCREEN_MAX_SETS 65 /* the primary probe set and at most 64 extra sets */

struct pb_screen_layout {
  int32_t n_rows;            /* score rows: fixed + 2 per extra probe set */
  char **row_names;
  int32_t n_extra;           /* extra probe sets */
  char **extra_names;        /* their names (U_<name> is row PB_SR_FIXED + 2 e) */
  int is_tta[64];            /* extra set named TTA (case-insensitive): U - TTA contrasts */
  int32_t extra_n[64];       /* probe conditions of each extra set */
  int is_severity[64];       /* extra set made by --severity-sets: a fixed row of Table 28 */
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
                             * interleaved (a lane past the last draw weighs nothing), as pb_screen_weighted_metrics reads them */
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

/* ---- the stage's context */

struct pb_screen__pset {
  char *name;          /* NULL for the primary set */
  int32_t src;
  int32_t n;
  int32_t *cond;       /* condition indices in the probe source */
  int severity;        /* a set sevN made by --severity-sets (Table 28's fixed rows) */
};

/* Candidates of a development selection (U^sel, TTA^sel): candidate a is
 * probe k[a] of probe set ps[a]; per target the n_pick chosen ones. */
struct pb_screen__pool {
  int32_t n, n_pick;
  int32_t *ps, *k;
  int32_t *n_chosen;           /* [target] */
  int32_t *chosen;             /* [target][n_pick] candidates in selection order */
  double *value;               /* [target][n_pick] mean coverage at 20% after each pick */
};

/* A source's loaded rows: the clean and probe rows whole (tk_rows, tk: with
 * the top-k lists when the store has them), every other perturbed row of a
 * target only its predictions (rows, d), all that the cells and fits read of it. */
struct pb_screen__rows {
  int32_t n, n_tk;
  int32_t *rows, *tk_rows;
  struct pb_rows d, tk;
  int32_t cap_d, cap_tk; /* rows d and tk hold when streamed (pb_screen__load) */
};

struct pb_screen__ctx {
  const struct pb_meta *meta;
  const struct pb_protocol *proto;
  const struct pb_screen_options *opt;
  int from_config;             /* under `pairbound run`: messages name the [screen] keys, not options */
  int32_t n_ps;
  struct pb_screen__pset *ps;
  int32_t n_targets;
  int32_t *targets;            /* store indices, ascending */
  int32_t ***join;             /* [target][source] target image -> source image or -1 (NULL when unused) */
  struct pb_screen__rows *rows;
  int32_t n_subsets, n_subsets_u; /* all, and those of the primary set (then the TTA set's, Table 32) */
  int32_t *sub_m, **sub_idx;   /* Table 28 subsets: indices into the primary set */
  struct pb_screen_layout L;
  int64_t n_units;
  int64_t *unit_cell0;         /* [n_units + 1] first global cell of each unit */
  int8_t **tier;               /* [target][condition] tiers used for reporting */
  int32_t tta;                 /* the probe set named TTA, -1 none */
  int32_t n_hidden;            /* trailing probe sets read only by the selection (no score rows) */
  struct pb_screen__pool pool[2]; /* selection candidates: 0 U^sel, 1 TTA^sel */
  int64_t n_joined;            /* target images with a partner in the primary probe source */
};

/* ---- one unit (screen_kernel_unit.c) */

/* One loaded row of a source: predictions, and for whole records S, M and the top-k lists (else NULL). */
struct pb_screen__rec {
  const int32_t *pred, *tkc;
  const int32_t *id; /* the predicted classes as stored: pred itself, or under label sets (where pred is the
                      * correctness map, pb_lsets_pred) the reader's pred_orig; for class lookups, not correctness */
  const float *s, *m, *tkp;
  const float *h; /* the stored entropy column (docs/screen.md), or NULL */
};

/* What a unit keeps for its cells. */
struct pb_screen__unit {
  int32_t n;                       /* analysis images */
  int32_t *img;                    /* [n] target image indices */
  int32_t *label;                  /* [n] */
  double **score;                  /* [n_rows][n] (NULL for derived rows) */
  struct pb_screen_ranked *rk;     /* [n_rows] (random unused) */
  struct pb_screen_ranked *der;    /* [n_derange] over the non-singleton subset */
  double **der_score;              /* [n_derange][n] */
  struct pb_screen_ranked *der_delta; /* [n_derange] delta under the same derangements */
  int32_t n_ns;
  int32_t *cls_pos;                /* positions sorted by (label, position) */
  int32_t n_cls;
  int32_t *cls_start;              /* [n_cls + 1] */
  uint8_t *ns;                     /* [n] position in a class with >= 2 images */
  struct pb_screen_ranked st_S[PB_SCREEN_STRATA], st_U[PB_SCREEN_STRATA], st_Uns[PB_SCREEN_STRATA];
  struct pb_screen_ranked *st_der; /* [STRATA][n_derange] */
  uint8_t *med;                    /* [n] 1 above the stratum's median U, 2 below, 0 at it */
  uint8_t *stratum;                /* [n] */
  struct pb_screen_ranked *sub;    /* [n_subsets] */
  int32_t n_unmatched, a3_approx;
  int32_t n_fit, n_fit_trials, n_fit_fails;  /* fitting images and their pooled outcomes */
  struct pb_screen_logit fit[3];
  /* seed E.3: per probe set (primary, then the extra sets) the mean error rate of single probe predictions on the
   * fitting split's clean-correct images (NaN: none) */
  double dev_err[PB_SCREEN_MAX_SETS];
};

/* Row @p row of source @p s as loaded (pb_screen__load must have read it). */
struct pb_screen__rec pb_screen__rec_row(const struct pb_screen__ctx *X, int32_t s, int32_t row);
/* Scores, fits and rankings of unit (target t, model m).  Returns PB_FAIL
 * (message in *why) when a logistic fit does not converge; U is set either way. */
int pb_screen__unit_prepare(const struct pb_screen__ctx *X, int32_t t, int32_t m, struct pb_screen__unit *U,
                            char *why, size_t why_len);
/* Every cell of a prepared unit: records recs[cell][rec_len], outcome bits bits[cell][n_words], and each cell's
 * contribution to the class-bootstrap accumulators B. */
void pb_screen__unit_cells(const struct pb_screen__ctx *X, int32_t t, int32_t m, const struct pb_screen__unit *U,
                           double *recs, uint64_t *bits, int32_t n_words, struct pb_screen_boot *B);
void pb_screen__unit_free(struct pb_screen__unit *U, const struct pb_screen__ctx *X);
/* Seed E.1: Spearman of delta = S - U with -U over the unit's images (NaN below two or when constant). */
double pb_screen__e1_spearman(const struct pb_screen__unit *U);

#endif /* PAIRBOUND_SCREEN_KERNEL_INTERNAL_H */
