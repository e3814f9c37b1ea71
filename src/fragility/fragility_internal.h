/* What the fragility stage and its report share: the output field tables and
 * the records of a rank. */
#ifndef PAIRBOUND_FRAGILITY_INTERNAL_H
#define PAIRBOUND_FRAGILITY_INTERNAL_H

#include <stdint.h>
#include <mpi.h>

#include "pairbound/agg.h"
#include "pairbound/fields.h"
#include "pairbound/fragility.h"
#include "pairbound/results.h"
#include "pairbound/store.h"
#include "pairbound/text.h"

/* Everything the report and its totals need: this rank's units and drift records (contiguous in global order). */
struct pb_fragility_out {
  const struct pb_meta *meta;
  const struct pb_fragility_options *opt;
  const struct pb_fields *arm_fields;  /* an arm record's field table (per run: names carry radii) */
  int32_t arm_len;               /* PB_FRAGILITY_ARM_LEN(n_grid) */
  int64_t n_units;               /* sources x models, source-major */
  int64_t u0, nu;                /* this rank's units */
  const double *arms;            /* [nu][2][arm_len] */
  int64_t n_drift;               /* perturbed cells, global cell order */
  int64_t d0, nd;                /* this rank's drift records (those of its units) */
  const double *drift;           /* [nd][PB_FD_FIXED] */
  const int64_t *drift0;         /* [n_units + 1] first drift record of each unit */
  const int8_t *const *tier;     /* [source][condition] */
  const char *const *u_signal;   /* [source] description of the group signal used */
  MPI_Comm comm;
  int32_t diag_len;              /* PB_FRAGILITY_DIAG_LEN(n_grid) + PB_FRAGILITY_RANDOM_LEN(n_grid) */
  const double *diag;            /* [nu][2][diag_len] the arms' diagnostics (pb_fragility_diag), then their
                                    random shifts (pb_fragility_random) */
  const double *flag;            /* [nd][PB_FF_FIXED] the drift records' flagged-bin check */
  const double *temper;          /* [nu][2 arm_len + 1] the temperature-scaled state: both arms' records (no
                                    permutation null), then the temperature (all NaN without top-k lists) */
  const double *qmap;            /* [nu][PB_FRAGILITY_QMAP_LEN] the monotone score maps (pb_fragility_qmap) */
};

/* Tier rows of the drift table: all tiers, none, mild, severe, extreme (tier + 2). */
#define PB_FRAGILITY_NTIER (PB_TIER_EXTREME + 3)

/* What the report prints, from every rank's units (on rank 0; the medians on
 * every rank; fragility_stage_reduce.c). */
struct pb_fragility_sum {
  double *med;        /* [source][arm][6] medians over models (NaN left out) of FAUC_up, FAUC_down, G_R,
                         G_R_corrected, held-out and null-median agreement */
  int64_t *lcb;       /* [source][3]: models with LCB > 0 on arm A, on arm B, on both */
  struct pb_agg dm;   /* [source][tier row][4] ratio, L_comp, L_cond, L_total */
  int64_t *dk;        /* [source][tier row][3] cells, utilisation bins, undefined bins */
  double *dmax;       /* [source][tier row] largest additivity residual (from 0) */
  double *dutil;      /* [source][tier row] median utilisation over cells */
  struct pb_agg sp;   /* [source][2] Spearman (FAUC, ECE) over the conditions where finite */
  int32_t pick[3], n_pick;  /* profile models: lowest, median, highest FAUC_up of source 0, arm A */
  double *prof;       /* [n_pick][3 n_grid] their profiles */
  /* the arms' diagnostics (fragility_stage_diag.c), per [source][arm]: */
  int64_t *sel_n;     /* [2] selective cells (coverage x radius x model) with a realised increase, and those
                         above the envelope */
  double *sel_x;      /* [3] among those above: median excess, median excess / envelope; max identity error */
  double *merge;      /* [PB_FRAGILITY_MERGES][5] medians over models of FAUC_up, FAUC share, G_R, G_R
                         corrected and the share of the G_R rise from that level to K that survives correction */
  double *score;      /* [5] score-only comparator: medians of its FAUC_up, the readout's, readout / score-only;
                         smallest and largest ratio */
  struct pb_agg fm;   /* [source][tier row][3] flagged-bin check: mass kept, ratio (all bins), ratio (kept) */
  int64_t *fk;        /* [source][tier row][3] cells, L_cond > L_comp over all bins, over the kept bins */
  int64_t *rnd_n;     /* [source][arm][2 + 2 n_grid] random shifts: cells, above the profile, then per radius */
  struct pb_agg rnd_x; /* [source][arm] the sum of ratio - 1 over the cells above (rank 0) */
  double *rnd_med;    /* [source][arm][2] medians over models of the Spearman and of its null median */
  double *metric;     /* on rank 0: [unit][arm][6] ECE, G_R, FAUC_up of every model, then the same of its
                         temperature-scaled state (the source metrics across models; NULL on the other ranks) */
  double *tmp_med;    /* [source][arm][3] temperature-scaled state: medians over models of T, ECE, FAUC_up */
  int64_t *tmp_lcb;   /* [source][3] temperature-scaled models with LCB > 0 on arm A, on arm B, on both */
  double *auc;        /* on rank 0: [unit][arm][PB_FRAGILITY_AUC_LEN] G_R, FAUC_up, the variance law's and the
                         capped law's integrals, random-shift cells and cells above the profile (Tables 18 and 9;
                         NULL on the other ranks) */
  /* the monotone score maps (fragility_stage_qmap.c), per [source][arm][map]: */
  int64_t *qm_n;      /* [PB_FRAGILITY_QSUM_N] models with the map defined, assignments, bin and readout changes of
                         the fitting and the held-out images, merged scores, models whose NLL improves, refit edge
                         changes */
  double *qm_x;       /* [PB_FRAGILITY_QSUM_X] largest structural difference; medians over models of ECE raw, ECE
                         mapped and the relative ECE reduction; largest refit profile change and |refit FAUC change| */
  int64_t *qt_n;      /* [source][PB_FT_FIXED + 1] models with both fitted maps defined, then their pooled ties
                         (pb_fragility_qmap's PB_FT_* fields) summed over them */
};

/* Numbers per unit and arm that rank 0 gathers for Tables 18 and 9 (struct pb_fragility_sum, auc). */
enum { PB_FRAGILITY_AUC_G_R, PB_FRAGILITY_AUC_FAUC, PB_FRAGILITY_AUC_VAR, PB_FRAGILITY_AUC_CAP, PB_FRAGILITY_AUC_CELLS,
       PB_FRAGILITY_AUC_ABOVE, PB_FRAGILITY_AUC_LEN };
#define PB_FRAGILITY_QSUM_N 9
#define PB_FRAGILITY_QSUM_X 6

/** The report's totals of every rank's units (collective; free with pb_fragility_sum_free on every rank). */
int pb_fragility_summarise(const struct pb_fragility_out *out, struct pb_fragility_sum *S);
void pb_fragility_sum_free(struct pb_fragility_sum *S);

/** The arms' diagnostics into S (collective; fragility_stage_diag.c). */
int pb_fragility_diag_summarise(const struct pb_fragility_out *out, struct pb_fragility_sum *S);
/** report/fragility_selective.tsv, fragility_merges.tsv, fragility_score_only.tsv,
 *  fragility_drift_flagged.tsv, fragility_random.tsv, fragility_tempered.tsv: each rank its units' rows
 *  (collective). */
int pb_fragility_diag_tsv(struct pb_results *res, const struct pb_fragility_out *out);
/** fragility.md's sections of the diagnostics and their summary TSVs (rank 0; fragility_report_diag.c). */
int pb_fragility_report_diag(struct pb_results *res, const struct pb_fragility_out *out,
                             const struct pb_fragility_sum *S, struct pb_text *md);

/** @p width values per unit and arm of this rank's units (@p mine, unit-major, arm A then B) into rank 0's
 *  malloc'd @p *all ([n_units][2][width]; NULL on the other ranks) (collective; fragility_stage_diag.c). */
void pb_fragility__gather(const struct pb_fragility_out *out, int32_t width, const double *mine, double **all);

/** report/fragility_qmap.tsv and fragility_qmap_ties.tsv: each rank its units' rows (collective;
 *  fragility_stage_qmap.c). */
int pb_fragility_qmap_tsv(struct pb_results *res, const struct pb_fragility_out *out);
/** The monotone maps' totals into S (collective). */
void pb_fragility_qmap_summarise(const struct pb_fragility_out *out, struct pb_fragility_sum *S);
/** fragility.md's section of the monotone maps and its summary TSVs (rank 0; fragility_report_qmap.c). */
int pb_fragility_report_qmap(struct pb_results *res, const struct pb_fragility_out *out,
                             const struct pb_fragility_sum *S, struct pb_text *md);

/** fragility.md, its tables and figures from the totals (rank 0). */
int pb_fragility_report(struct pb_results *res, const struct pb_fragility_out *out, const struct pb_fragility_sum *S);

/* The known-propensity study (fragility_stage_study.c, fragility_report_study.c):
 * one record per row, rows design-major, then direction (up, down), then radius. */
#define PB_FRAGILITY_STUDY_ROWS (PB_FRAGILITY_STUDY_DESIGNS * 2 * PB_FRAGILITY_STUDY_RHOS)
enum {
  PB_FS_N, PB_FS_MIN_LABELS, PB_FS_RHO, PB_FS_REPLICATES, PB_FS_CELLS_KEPT, PB_FS_TRUTH, PB_FS_CAP_POP,
  PB_FS_PLUG_MEAN, PB_FS_PLUG_BIAS, PB_FS_PLUG_MAE, PB_FS_PLUG_REL, PB_FS_PLUG_RMSE,
  PB_FS_CAP_MEAN, PB_FS_CAP_BIAS, PB_FS_CAP_MAE, PB_FS_CAP_REL, PB_FS_CAP_RMSE, PB_FS_FIXED
};

/** `pairbound fragility --study known-propensity -o OUTDIR` (collective). */
int pb_fragility_study_run(const struct pb_fragility_stage_options *o, const char *outdir, MPI_Comm comm,
                           const char *provenance);
/* The finite-sample nested readouts (seed 001 U.2): one record per [law][n][size][rho]. */
enum {
  PB_FN2_N, PB_FN2_K, PB_FN2_RHO, PB_FN2_REPLICATES, PB_FN2_TRUTH, PB_FN2_G_R, PB_FN2_G_R_MEAN, PB_FN2_MEAN,
  PB_FN2_BIAS, PB_FN2_MAE, PB_FN2_REL, PB_FN2_RMSE, PB_FN2_FIXED
};

/** report/REPORT.md of the study from its records and the finite-sample nested records @p nrec (rank 0). */
int pb_fragility_study_report(struct pb_results *res, const double *rec, const double *nrec, uint64_t seed,
                              int64_t replicates);

#endif /* PAIRBOUND_FRAGILITY_INTERNAL_H */
