/* Shared by the predict stage's files (predict_stage*.c) and its report; not part of the public API. */
#ifndef PAIRBOUND_PREDICT_INTERNAL_H
#define PAIRBOUND_PREDICT_INTERNAL_H

#include <stdint.h>
#include <mpi.h>

#include "pairbound/fields.h"
#include "pairbound/figure.h"
#include "pairbound/predict.h"
#include "pairbound/results.h"
#include "pairbound/store.h"

#define PB_PREDICT__N_TARGETS 4     /* a1, R80, E_tau, L_k */
#define PB_PREDICT__N_FEAT 28       /* model-level feature columns (docs/predict.md) */
#define PB_PREDICT__SHUF_COL 100    /* set columns >= this are shuffle replicates of paired summary col - 100 */
#define PB_PREDICT__MAX_COLS 40
#define PB_PREDICT__N_STEPS 5       /* C1, C2, C3a, C3b, C4 */
#define PB_PREDICT__PAIRED0 12      /* feature column of F */

/* Names of the features, targets and steps (predict_fields.c). */
extern const char *const pb_predict__feat_names[PB_PREDICT__N_FEAT];
extern const char *const pb_predict__target_names[PB_PREDICT__N_TARGETS];
extern const char *const pb_predict__step_names[PB_PREDICT__N_STEPS];

/* One feature set for one target: feature columns, whether its fits are the
 * shuffle control (one nested fit per replicate) and whether the whole-group
 * deletion refits of I.2 are run for it. */
struct pb_predict__set {
  char name[48];
  int32_t n_cols;
  int32_t cols[PB_PREDICT__MAX_COLS];
  int shuffle;
  int deletion;
};

/* Comparisons of H.3 / I.1: alt against base (gain = MAE(base) - MAE(alt)). */
struct pb_predict__cmp {
  char name[48];
  int32_t base, alt;          /* set indices */
};

/* Everything the fits and the report share.  A combination is (feature
 * source, target source, target): combo = (f * n_ts + t) * 4 + target. */
struct pb_predict__data {
  int32_t n_models, n_groups, n_fs, n_ts, n_shuf;
  const struct pb_meta *meta;
  int32_t *group;              /* [n_models] */
  char **group_names;          /* [n_groups] */
  int32_t fs[4], ts[4];        /* store source indices */
  double *feat;                /* [n_fs][n_ts][n_models][PB_PREDICT__N_FEAT] */
  double *shuf;                /* [n_fs][n_models][n_shuf][PB_PREDICT_N_PAIRED] */
  double *target;              /* [n_ts][n_models][4] percentage points, NaN when undefined */
  double *iqr;                 /* [n_ts][4] */
  int64_t first, last;         /* this rank's cells (global order), balanced by predict's cost */
  int32_t n_sets, n_cmp;       /* per target */
  struct pb_predict__set *sets;   /* [4][n_sets] */
  struct pb_predict__cmp *cmp;    /* [n_cmp] (same for every target) */
  /* fits: unit u = one nested fit */
  int64_t n_units;
  int deletion_run;            /* the deletion refits were run (deletion sets have G extra units) */
  int32_t *u_combo, *u_set, *u_rep, *u_del;
  double *pred;                /* [n_units][n_models] percentage points, NaN when not predicted */
  double *lam;                 /* [n_units][n_models] chosen penalty index, NaN when not predicted */
  int64_t *first_unit;         /* [n_combos * n_sets] first unit of (combo, set); deletion units follow */
  double svd_max_diff;         /* I.4: largest |Cholesky - SVD| over the checked fits */
  int64_t svd_checked;         /* predictions compared */
  double lk_max_diff;          /* I.3: largest |L_k target - pooled identification L| (pp) */
  int64_t lk_checked;          /* model x target source targets compared */
};

static inline int32_t pb_predict__n_combos(const struct pb_predict__data *d)
{
  return d->n_fs * d->n_ts * PB_PREDICT__N_TARGETS;
}

/* The fits (predict_stage_fit.c): the units in their fixed order (@p deletion: with the deletion refits),
 * every unit's predictions gathered on every rank (collective), and the SVD solver's check of them (collective). */
struct pb_stage;
void pb_predict__units(struct pb_predict__data *d, int deletion);
int pb_predict__fit_all(struct pb_stage *st, struct pb_predict__data *d);
void pb_predict__svd_check(struct pb_stage *st, struct pb_predict__data *d);

/* One comparison's row: what the tables need about comparison k of
 * combination c (index c * n_cmp + k). */
struct pb_predict__gain {
  double base, alt, gain, lo, hi, ggain, glo, ghi;
  int32_t n;
  double del_min, del_max;    /* deletion refit gains (NaN without them) */
  int32_t del_pos, del_n;
  double rel, iqr, thr[7];    /* relative gain (%), target IQR, practical thresholds (I.2) */
};

/* The one description of the comparison outputs (include/pairbound/fields.h,
 * predict_fields.c): each field is a column of report/predict_gains.tsv
 * (after the identifying columns) and a dataset results.h5
 * /predict/gains/NAME indexed [combination][comparison]. */
enum {
  PB_PG_N_MODELS, PB_PG_BASE, PB_PG_ALT, PB_PG_GAIN, PB_PG_LO, PB_PG_HI, PB_PG_GGAIN, PB_PG_GLO, PB_PG_GHI,
  PB_PG_REL, PB_PG_DEL_MIN, PB_PG_DEL_MAX, PB_PG_DEL_POS, PB_PG_DEL_N, PB_PG_IQR, PB_PG_THR, PB_PG_N = PB_PG_THR + 7
};
extern const struct pb_fields pb_predict__gain_fields;
/* Comparison row @p g as the record of pb_predict__gain_fields. */
void pb_predict__gain_record(const struct pb_predict__gain *g, double *r);

/* What the report prints (predict_stage_gains.c): every comparison's gains
 * with their intervals, the deletion refits' gains [comparison][group] (NaN
 * without them), and every (combination, set)'s model-equal and
 * group-equal MAE. */
struct pb_predict__mae {
  double mae, mae_group_equal;
  int32_t n_models;
};
struct pb_predict__gains {
  struct pb_predict__gain *g;
  double *dg;
  struct pb_predict__mae *mae;  /* [combination][set] */
};

/* report/predict_features.tsv and predict_sets.tsv (rank 0 text), predict_oof.tsv and
 * predict_deletion_oof.tsv, results.h5 /predict (collective; predict_stage_write.c). */
int pb_predict__write_inputs(const struct pb_predict__data *d, int rank, struct pb_results *res);
int pb_predict__write_oof(const struct pb_predict__data *d, int rank, int size, struct pb_results *res);
int pb_predict__write_h5(const struct pb_predict__data *d, int rank, struct pb_results *res);

/**
 * The comparisons' gains, their group-reweighting intervals and results.h5
 * /predict/gains, then the report from them (collective; rank 0 writes the
 * report; predict_stage_gains.c).
 */
int pb_predict__gains_run(struct pb_predict__data *d, int64_t group_draws, uint64_t seed, MPI_Comm comm,
                          struct pb_results *res);

/* The report (predict_report.c, rank 0): Figure 8 started from the gains
 * without intervals (pb_figure_start: gnuplot renders it while the
 * intervals are drawn; @p fig and @p title hold what the job refers to until
 * pb_predict__report finishes it), then the tables and predict.md (@p status:
 * of the stage so far, @p fig_status: of the figure's start). */
int pb_predict__report_figure(const struct pb_predict__data *d, const struct pb_predict__gains *G,
                              struct pb_results *res, struct pb_figure *fig, char title[160],
                              struct pb_figure_job *job);
int pb_predict__report(const struct pb_predict__data *d, const struct pb_predict__gains *G, int64_t group_draws,
                       uint64_t seed, int status, int fig_status, struct pb_figure_job *job, struct pb_results *res);

#endif /* PAIRBOUND_PREDICT_INTERNAL_H */
