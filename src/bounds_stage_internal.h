/* Shared by bounds_stage.c and bounds_report.c: the per-cell record layout. */
#ifndef PAIRBOUND_IDENTIFY_INTERNAL_H
#define PAIRBOUND_IDENTIFY_INTERNAL_H

#include <stdint.h>

#include "pairbound/bounds.h"
#include "pairbound/calibration.h"
#include "pairbound/cells.h"
#include "pairbound/fields.h"
#include "pairbound/identify.h"
#include "pairbound/results.h"
#include "pairbound/store.h"

/* One cell = PB_IF_N doubles; the first 26 are bounds.tsv's required columns. */
enum pb_identify_field {
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
  PB_IF_DSS = PB_IF_MATCH + 4 * PB_IDENTIFY_N_MATCH_SEEDS, PB_IF_DSW, PB_IF_F_IND, PB_IF_A_IND, PB_IF_Q_IND,
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
  PB_IF_N
};

/* The record's field table: /bounds/cells columns and bounds.tsv (after model, source, condition). */
extern const struct pb_fields pb_identify_fields;

/* Model-group bootstrap intervals of Table 10 (rows source x {all, tiers}, stats C, S, M); collective. */
struct pb_identify_intervals {
  int32_t n_rows;
  struct pb_interval *vr;   /* [n_rows][3] */
};
int pb_identify_intervals(const struct pb_meta *meta, const double *recs, int64_t n_cells,
                          const struct pb_identify_options *opt, MPI_Comm comm, struct pb_identify_intervals *out);

/** Diagnostics tables (report/ TSV files and REPORT.md) from every cell's record; rank 0 only. */
/* J.2: every cell's clean-wrong events by cross-model support into
 * recs[c * PB_IF_N + PB_IF_J2 ...] (collective; bounds_stage_support.c). */
struct pb_stage;
int pb_identify_support(const struct pb_stage *st, const struct pb_cell_block *b, double *recs);

/* F.1: every cell's acceptance counts under the Table 40 protocols, raw and
 * Platt-scaled, into recs (collective; bounds_stage_calib.c). */
int pb_identify_calibration(const struct pb_stage *st, const struct pb_cell_block *b, double *recs);

/* Table 2 summaries, B.2 strata and positive-width counts, B.4 subsets
 * (bounds_report_more.c), into @p md and report/ files. */
int pb_identify_report_more(const struct pb_meta *meta, const struct pb_cell_ref *cells, const double *recs,
                            int64_t n_cells, struct pb_results *res, const struct pb_identify_options *opt,
                            struct pb_text *md);

int pb_identify_report(const struct pb_meta *meta, const struct pb_protocol *p, const double *recs, int64_t n_cells,
                       struct pb_results *res, const struct pb_identify_options *opt,
                       const struct pb_identify_intervals *iv);

#endif /* PAIRBOUND_IDENTIFY_INTERNAL_H */
