/* Shared by predict_stage.c, predict_stage_fit.c and predict_report.c; not part of the public API. */
#ifndef PAIRBOUND_PREDICT_INTERNAL_H
#define PAIRBOUND_PREDICT_INTERNAL_H

#include <stdint.h>
#include <mpi.h>

#include "pairbound/predict.h"
#include "pairbound/results.h"
#include "pairbound/store.h"

#define PB_PREDICT__N_TARGETS 4     /* a1, R80, E_tau, L_k */
#define PB_PREDICT__N_FEAT 28       /* model-level feature columns (docs/predict.md) */
#define PB_PREDICT__SHUF_COL 100    /* set columns >= this are shuffle replicates of paired summary col - 100 */
#define PB_PREDICT__MAX_COLS 40
#define PB_PREDICT__N_STEPS 5       /* C1, C2, C3a, C3b, C4 */

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

/* Report: tables, markdown and figure from the gathered fits (collective for the intervals). */
int pb_predict__report(struct pb_predict__data *d, int64_t group_draws, uint64_t seed, MPI_Comm comm,
                       struct pb_results *res);

#endif /* PAIRBOUND_PREDICT_INTERNAL_H */
