/* Shared by the bounds stage and its report: the per-cell record layout,
 * the report's totals and the rows of its tables. */
#ifndef PAIRBOUND_IDENTIFY_INTERNAL_H
#define PAIRBOUND_IDENTIFY_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <mpi.h>

#include "pairbound/agg.h"
#include "pairbound/bounds.h"
#include "pairbound/calibration.h"
#include "pairbound/cells.h"
#include "pairbound/fields.h"
#include "pairbound/bounds_stage.h"
#include "pairbound/protocol.h"
#include "pairbound/resample.h"
#include "pairbound/results.h"
#include "pairbound/store.h"
#include "pairbound/table.h"

/* One cell = PB_IF_N doubles; the first 26 are bounds.tsv's required columns. */
enum pb_bounds_field {
  PB_IF_NREC, PB_IF_E, PB_IF_H_OBS, PB_IF_H_I0_LO, PB_IF_H_I0_HI, PB_IF_H_IK_LO, PB_IF_H_IK_HI, PB_IF_H_I5_LO,
  PB_IF_H_I5_HI, PB_IF_H_IND, PB_IF_L_OBS, PB_IF_L_I0_LO, PB_IF_L_I0_HI, PB_IF_L_IK_LO, PB_IF_L_IK_HI,
  PB_IF_L_I5_LO, PB_IF_L_I5_HI, PB_IF_L_IND, PB_IF_D_OBS, PB_IF_D_I0_LO, PB_IF_D_I0_HI, PB_IF_D_IK_LO,
  PB_IF_D_IK_HI, PB_IF_D_I5_LO, PB_IF_D_I5_HI, PB_IF_D_IND,
  PB_IF_TIER, PB_IF_PANEL, PB_IF_TAU, PB_IF_H, PB_IF_R, PB_IF_S, PB_IF_W, PB_IF_K, PB_IF_ACC0, PB_IF_ACC1,
  PB_IF_F, PB_IF_A, PB_IF_Q, PB_IF_WCOMP, PB_IF_VCOMP, PB_IF_KWC, PB_IF_KWG, PB_IF_NCLASSES, PB_IF_NPINNED,
  PB_IF_VR_C, PB_IF_VR_S, PB_IF_VR_M,
  PB_IF_H_PERM, PB_IF_L_PERM, PB_IF_D_PERM, /* mean over within-class permutation replicates */
  PB_IF_MATCH, /* per matched-support seed: H, L, dMk widths at I5 and the H_I0 upper bound */
  /* Table 2: ds_s, ds_w and the independent counterparts of F, A, Q, k, ds_s, ds_w (pb_cell_bounds) */
  PB_IF_DSS = PB_IF_MATCH + 4 * PB_BOUNDS_N_MATCH_SEEDS, PB_IF_DSW, PB_IF_F_IND, PB_IF_A_IND, PB_IF_Q_IND,
  PB_IF_K_IND, PB_IF_DSS_IND, PB_IF_DSW_IND,
  PB_IF_U, PB_IF_V1, /* P(C = 1, Z = 1), P(C' = 1, Z' = 0): the B.2 event fractions */
  /* J.2 counts [variant][stratum][events, same wrong answer kept] (pb_bounds_support_cell) */
  PB_IF_J2,
  /* F.1 counts [raw, Platt][protocol][H, L, accepted, accepted errors] (bounds_stage_calib.c) */
  PB_IF_F1 = PB_IF_J2 + 2 * PB_SUPPORT_N * PB_SUPPORT_N_STRATA,
  PB_IF_F1_CHANGED = PB_IF_F1 + 2 * PB_F1_N_PROTOCOLS * PB_F1_N_COUNTS, /* records whose Q80 decision Platt changes */
  PB_IF_F1_BRIER1_RAW, PB_IF_F1_BRIER1_PLATT,  /* binary Brier of S' and of Platt(S') against C' */
  PB_IF_F1_PLATT_A, PB_IF_F1_PLATT_B,          /* the model's Platt fit on its clean development records */
  PB_IF_F1_BRIER0_RAW, PB_IF_F1_BRIER0_PLATT,  /* binary Brier on those records */
  PB_IF_F1_ISO,                                /* F.1 counts of the isotonic calibrator [protocol][4] */
  PB_IF_F1_ISO_CHANGED = PB_IF_F1_ISO + PB_F1_N_PROTOCOLS * PB_F1_N_COUNTS, /* Q80 decisions it changes */
  PB_IF_F1_BRIER1_ISO, PB_IF_F1_BRIER0_ISO, PB_IF_F1_ISO_BLOCKS, /* its Brier scores, its fit's steps */
  /* Appendix F's gap analysis: [group][events, same wrong answer, turned correct] (bounds_stage_calib.c) */
  PB_IF_GAP,
  PB_IF_GAP_CUT_LOW = PB_IF_GAP + PB_GAP_N_GROUPS * PB_GAP_N_COUNTS, PB_IF_GAP_CUT_HIGH, /* the model's cutpoints */
  PB_IF_GAP_ERRORS,                            /* its misclassified clean development records */
  /* F.1's multiclass Brier score 1 - 2 M + collision of the model's clean development records, then of the
   * cell's clean and perturbed evaluation records (NaN: the store has no collision column) */
  PB_IF_F1_BRIER0_MC, PB_IF_F1_BRIER_CLEAN_MC, PB_IF_F1_BRIER1_MC,
  PB_IF_N
};

/* F.1's calibrators: the index k of a score under calibrator k. */
enum pb_cal { PB_CAL_RAW, PB_CAL_PLATT, PB_CAL_ISO, PB_CAL_N };

/* The record's field table: /bounds/cells columns and bounds.tsv (after model, source, condition). */
extern const struct pb_fields pb_bounds_fields;

/* The report tables' totals per source (bounds_stage_reduce.c):
 * slot (source, PB_RS_*) of one exact aggregate (pairbound/agg.h), filled by
 * every rank from its own cells and reduced to rank 0.  A mean slot takes
 * the values a table averages (NaN skipped, as pb_num_nanmean); a tally slot
 * integer increments. */
#define PB_RS_TIER_ROWS (PB_N_TIERS + 1)   /* all tiers, then each tier */
#define PB_BOUNDS_N_T2 10                /* Table 2's summaries */
#define PB_BOUNDS_N_STRATA 4             /* B.2's stratifiers, 3 bins each */
enum pb_rs_slot {
  PB_RS_GRID_N, PB_RS_GRID_M, PB_RS_GRID_STRADDLE = PB_RS_GRID_M + 5, PB_RS_GRID_ZERO,   /* Table 6 */
  PB_RS_PANEL_N, PB_RS_PANEL_M, PB_RS_PANEL_NARROWER = PB_RS_PANEL_M + 8,               /* Table 7 */
  PB_RS_FIG1,                                                                           /* Figure 1: [target][level] */
  PB_RS_DEC_N = PB_RS_FIG1 + 9, PB_RS_DEC_M, PB_RS_DEC_VBIG = PB_RS_DEC_M + 3,          /* Table 9 */
  PB_RS_TIER,                                  /* Tables 10, 11: [tier row][n, C, S, M, 4 accuracy-only means] */
  PB_RS_PERM_N = PB_RS_TIER + 8 * PB_RS_TIER_ROWS, PB_RS_PERM_M,                        /* H.2 */
  PB_RS_MATCH_ORIG = PB_RS_PERM_M + 6,                   /* Table 8: original H, L, dMk widths, H_norm */
  PB_RS_MATCH_SEED = PB_RS_MATCH_ORIG + 4,               /* [seed][H, L, dMk, H_norm] */
  PB_RS_MATCH_UNDEF = PB_RS_MATCH_SEED + 4 * PB_BOUNDS_N_MATCH_SEEDS,
  PB_RS_T2,                                              /* Table 2: [summary][paired, independent, difference] */
  PB_RS_STRATA = PB_RS_T2 + 3 * PB_BOUNDS_N_T2,        /* B.2: [stratifier][bin][n, H, L, dMk, H_norm] */
  PB_RS_POS = PB_RS_STRATA + PB_BOUNDS_N_STRATA * 3 * 5, /* B.2: [support][n, H, L, dMk positive, dMk defined] */
  PB_RS_SUB_ZK = PB_RS_POS + 2 * 5, PB_RS_SUB_ZK_IND0,   /* B.4 */
  PB_RS_SUB,                                             /* [subset][n, 4 means, V > W] */
  PB_RS_SUPPORT = PB_RS_SUB + 3 * 6,                     /* J.2: [variant][stratum][events, same] */
  PB_RS_T40 = PB_RS_SUPPORT + PB_SUPPORT_N * PB_SUPPORT_N_STRATA * 2,   /* F.1: [protocol][n, [calibrator][4]] */
  /* F.1: Platt's 4 per-model values and 2 per-cell Brier scores, then the isotonic development Brier score and
   * steps (per model) and perturbed Brier score (per cell), then the multiclass development Brier score (per
   * model) and the multiclass clean and perturbed evaluation Brier scores (per cell) */
  PB_RS_CAL = PB_RS_T40 + PB_F1_N_PROTOCOLS * (1 + 4 * PB_CAL_N),
  PB_RS_GAP = PB_RS_CAL + 12,                            /* F: [tier row][cells, [group][3 counts]] */
  PB_RS_GAP_MODELS = PB_RS_GAP + PB_RS_TIER_ROWS * (1 + PB_GAP_N_GROUPS * PB_GAP_N_COUNTS), /* included, excluded */
  PB_RS_N = PB_RS_GAP_MODELS + 2
};

struct pb_bounds_sum {
  struct pb_agg a;             /* [source][PB_RS_N] */
  /* F.1's calibrators are per model: the first cell of each (source, model)
   * with F.1 counts, and the Q80 decisions Platt and isotonic regression
   * change per (source, model) */
  struct pb_loc *cal_first;    /* [source][model] */
  int64_t *cal_changed;        /* [source][model][Platt, isotonic] */
};

static inline int64_t pb_rs(int32_t s, int slot) { return (int64_t)s * PB_RS_N + slot; }
static inline void pb_rs_add(struct pb_bounds_sum *S, int32_t s, int slot, double x) { pb_agg_add(&S->a, pb_rs(s, slot), x); }
static inline void pb_rs_tally(struct pb_bounds_sum *S, int32_t s, int slot, int64_t k)
{
  pb_agg_add_int(&S->a, pb_rs(s, slot), k);
}
static inline double pb_rs_mean(const struct pb_bounds_sum *S, int32_t s, int slot) { return pb_agg_mean(&S->a, pb_rs(s, slot)); }
/* values counted in a mean slot */
static inline int64_t pb_rs_count(const struct pb_bounds_sum *S, int32_t s, int slot) { return pb_agg_count(&S->a, pb_rs(s, slot)); }
/* the total of a tally slot */
static inline int64_t pb_rs_int(const struct pb_bounds_sum *S, int32_t s, int slot) { return (int64_t)pb_agg_sum(&S->a, pb_rs(s, slot)); }

/**
 * The totals of every rank's cells on rank 0 (collective; free with
 * pb_bounds_sum_free on every rank): this rank holds the n_local records
 * @p recs of cells first.. .
 */
int pb_bounds_summarise(const struct pb_meta *meta, const double *recs, int64_t first, int64_t n_local,
                          MPI_Comm comm, struct pb_bounds_sum *S);
void pb_bounds_sum_free(struct pb_bounds_sum *S);

/* Model-group bootstrap intervals of Table 10 (rows source x {all, tiers} with cells, stats C, S, M),
 * from every rank's n_local records of cells first..; collective (bounds_stage_reduce.c). */
struct pb_bounds_intervals {
  int32_t n_rows;
  struct pb_interval *vr;   /* [n_rows][3] */
};
int pb_bounds_intervals(const struct pb_meta *meta, const double *recs, int64_t first, int64_t n_local,
                          const struct pb_bounds_options *opt, MPI_Comm comm, struct pb_bounds_intervals *out);

/* Table 2's summaries: paired (observed correspondence) field, independent
 * field (-1: none, E needs perturbed records only), and the scale to report
 * (bounds_report_rows.c). */
struct pb_bounds_t2 {
  const char *name;
  int paired, ind;
  double scale;
};
extern const struct pb_bounds_t2 pb_bounds_t2[PB_BOUNDS_N_T2];

/* B.2 stratifiers: K/N and the event fractions that H and L intersect. */
struct pb_bounds_stratum {
  const char *name;
  int field;
  double cut[2]; /* bins [0, cut0), [cut0, cut1), [cut1, 1] */
};
extern const struct pb_bounds_stratum pb_bounds_strata[PB_BOUNDS_N_STRATA];

/* Rows by source, then all tiers and each tier with cells: Tables 10 and 11.
 * rows[i] = {source, tier (-1 = all tiers)}; returns the row count.  @p cells
 * [source][tier row] counts the cells of each; @p rows holds
 * meta->n_sources * PB_RS_TIER_ROWS. */
int32_t pb_bounds_tier_rows(const struct pb_meta *meta, const int64_t *cells, int32_t (*rows)[2]);

/* One row of a report table on the totals (bounds_report_rows.c): its
 * labels (key[0] the source's name) and its first slot; a column's .arg says
 * what it shows, its .slot which label (PB_IROW_KEY) or which slot after
 * the row's first. */
enum pb_irow_kind {
  PB_IROW_KEY,    /* key[slot] */
  PB_IROW_MEAN,   /* pb_rs_mean */
  PB_IROW_INT,    /* pb_rs_int */
  PB_IROW_COUNT,  /* pb_rs_count */
  PB_IROW_SHARE   /* percentage of the tally of the row's first slot */
};
struct pb_bounds_row {
  const struct pb_bounds_sum *S;
  int32_t s;
  int base;
  const char *key[3];
};
union pb_cell pb_bounds_row_cell(const void *row, const struct pb_column *c);
/* Its columns: label key[k]; of slot i after the row's first, the integer, the count of values, the mean and the
 * percentage of the first slot's tally (d decimals). */
#define PB_ICOL_KEY(name, k) {name, PB_COL_STR, .slot = k, .arg = PB_IROW_KEY}
#define PB_ICOL_INT(name, i) {name, PB_COL_INT, .slot = i, .arg = PB_IROW_INT}
#define PB_ICOL_COUNT(name, i) {name, PB_COL_INT, .slot = i, .arg = PB_IROW_COUNT}
#define PB_ICOL_MEAN(name, d, i) {name, PB_COL_NUM, d, .slot = i, .arg = PB_IROW_MEAN}
#define PB_ICOL_SHARE(name, d, i) {name, PB_COL_NUM, d, .slot = i, .arg = PB_IROW_SHARE}
/* The sources that the tables have rows for (not the probe sources). */
#define PB_BOUNDS_SOURCES(meta, s) \
  for (int32_t s = pb_meta_target(meta, 0); s < (meta)->n_sources; s = pb_meta_target(meta, s + 1))

/* J.2: cross-model support of clean wrong answers (bounds_stage_support.c).
 * Per source, the support of every model's clean evaluation answers
 * (collective: every rank reads every model's clean row); then each piece's
 * cells' clean-wrong events by support into recs[c * PB_IF_N + PB_IF_J2 ...]. */
struct pb_stage;
struct pb_bounds_support_src {
  int32_t ne;      /* evaluation images */
  size_t plane;    /* models x ne */
  double *support; /* [PB_SUPPORT_N][models][ne] */
};
int pb_bounds_support_prep(const struct pb_stage *st, int32_t s, struct pb_bounds_support_src *p);
void pb_bounds_support_cells(const struct pb_stage *st, const struct pb_bounds_support_src *p,
                               const struct pb_cell_block *b, double *recs);
void pb_bounds_support_free(struct pb_bounds_support_src *p);

/* F.1: acceptance counts under the Table 40 protocols, raw and Platt-scaled
 * (bounds_stage_calib.c).  Per source, every model's fit on its clean
 * development records (collective unless reads are independent); then each piece's cells into recs. */
struct pb_calib__model;
struct pb_bounds_calib_src {
  int32_t n_models;
  struct pb_calib__model *models; /* NULL where the source has no development records */
};
int pb_bounds_calib_prep(const struct pb_stage *st, int32_t s, struct pb_bounds_calib_src *p);
void pb_bounds_calib_cells(const struct pb_stage *st, const struct pb_bounds_calib_src *p,
                             const struct pb_cell_block *b, double *recs);
void pb_bounds_calib_free(struct pb_bounds_calib_src *p);
/* The fields pb_bounds_calib_prep may read, so that independent reads (pb_store_reads_independent) cover them. */
#define PB_BOUNDS_CALIB_FIELDS (PB_FIELD_ALL | PB_FIELD_COLLISION)

/* --witnesses (bounds_stage_witness.c): the rank's cells' witness
 * correspondences, cell c's records at [off[c], off[c + 1]) of each perm[w]
 * (pb_bounds_witness_cell's layout), written under PB_BOUNDS_WITNESS_GROUP. */
#define PB_BOUNDS_WITNESS_GROUP "/bounds/witnesses"
struct pb_bounds_wit {
  int64_t n_local;              /* the rank's records over its cells */
  int64_t *off;                 /* [cells + 1] */
  struct pb_cell_ref *ref;      /* [cells] */
  int32_t *perm[PB_WITNESS_N];
};
void pb_bounds_witness_setup(const struct pb_stage *st, struct pb_bounds_wit *w);
int pb_bounds_witness_write(struct pb_stage *st, const struct pb_bounds_wit *w);
void pb_bounds_witness_free(struct pb_bounds_wit *w);

/* Table 2 summaries, B.2 strata and positive-width counts, B.4 subsets, J.2
 * and F.1 (bounds_report_diag.c) from the reduced totals, into @p md and
 * report/ files (rank 0). */
int pb_bounds_report_more(const struct pb_meta *meta, const struct pb_bounds_sum *S, struct pb_results *res,
                            const struct pb_bounds_options *opt, struct pb_text *md);

struct pb_bounds_lsets;
/** Diagnostics tables (report/ TSV files and REPORT.md) from the reduced totals (rank 0). */
int pb_bounds_report(const struct pb_meta *meta, const struct pb_protocol *p, const struct pb_bounds_sum *S,
                       struct pb_results *res, const struct pb_bounds_options *opt,
                       const struct pb_bounds_intervals *iv, const struct pb_bounds_lsets *lsets);

/* Tables 47 and 48 and Appendix J.1's splits (src/bounds/bounds_stage_lsets.c), per source: the counts of
 * pb_bounds_lsets_cell summed over the cells, and over the cells where both conventions' restricted dM_k are
 * defined their exact sums in PB_LSD_N slots from s * PB_LSD_N. */
enum { PB_LSD_ORIGINAL, PB_LSD_SET, PB_LSD_CHANGE, PB_LSD_N };
struct pb_bounds_lsets {
  int64_t *tot;         /* [n_sources][PB_LS_N_SLOTS]; NULL on a store without sets */
  struct pb_agg dmk;    /* [n_sources][PB_LSD_N] */
};
/* The rank's cells' pb_bounds_lsets_cell results: counts [n][PB_LS_N_SLOTS] (0 where not counted) and restricted
 * dM_k [n][2] (NaN where none). */
struct pb_bounds_lsets_cells {
  int64_t *rec;
  double *dmk;
};
void pb_bounds_lsets_cells_alloc(int64_t n, struct pb_bounds_lsets_cells *lc);
void pb_bounds_lsets_cells_free(struct pb_bounds_lsets_cells *lc);
/* The cells of block @p b of source @p s, whose predictions are the stored ones, at thresholds @p tau (the
 * block's cells), with the source's evaluation sets @p off, @p ids (pb_lsets_eval): into @p rec, @p dmk (the
 * block's first cell's slots). */
void pb_bounds_lsets_block(const struct pb_meta *meta, const struct pb_cell_block *b, int32_t s, const int64_t *off,
                           const int32_t *ids, const float *tau, int64_t *rec, double *dmk);
/* Both, over the rank's cells, onto rank 0 (collective); free with pb_bounds_lsets_free.  @p lc: the cells
 * already counted by the stage's own pass (labels = single, where its predictions are the stored ones), or NULL:
 * their stored predictions are read here. */
int pb_bounds_lsets(const struct pb_stage *st, const struct pb_bounds_options *opt,
                    const struct pb_bounds_lsets_cells *lc, struct pb_bounds_lsets *out);
void pb_bounds_lsets_free(struct pb_bounds_lsets *ls);
/* Their tables (src/bounds/bounds_report_lsets.c), rank 0; nothing when ls->tot is NULL. */
int pb_bounds_report_lsets(const struct pb_meta *meta, const struct pb_bounds_lsets *ls, struct pb_results *res,
                           struct pb_text *md);

/** bounds' lines of the run summary, from the report TSVs in @p dir (bounds_report_summary.c). */
void pb_bounds_summary(FILE *fp, struct pb_text *md, const char *dir, const char *rel);

#endif /* PAIRBOUND_IDENTIFY_INTERNAL_H */
