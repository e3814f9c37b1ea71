/* What the verify stage's files share (verify_stage.c, verify_stage_check.c,
 * verify_stage_cell.c): a cell's work state, its scratch and reference, and
 * the checks of one cell or class. */
#ifndef PAIRBOUND_VERIFY_STAGE_INTERNAL_H
#define PAIRBOUND_VERIFY_STAGE_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "pairbound/bounds.h"
#include "pairbound/cells.h"
#include "pairbound/policy.h"
#include "verify_internal.h"

/* |a - b|, 0 when both are undefined, infinite when exactly one is. */
static inline double pb_verify__res(double a, double b)
{
  if (isnan(a) && isnan(b)) return 0.0;
  if (isnan(a) || isnan(b)) return INFINITY;
  return fabs(a - b);
}

/* Per-cell work state: counters, the first failure and its class (pb_verify__failf). */
struct pb_verify__cellstate {
  double *rec;
  char *fail;                 /* first failure text (PB_VERIFY__MSG bytes) */
  const char *where;          /* "model/source/condition" */
};
#define PB_VERIFY__MSG 1024

void pb_verify__failf(struct pb_verify__cellstate *cs, int32_t label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- checks (verify_stage_check.c) */

/* The seven compared values of a target from any (cell or class) values. */
void pb_verify__vals(const struct pb_verify_values *v, int t, double out[7]);
/* The bounds engine's values, and a class on its own as rates, in the same layout. */
void pb_verify__engine_values(const struct pb_cell_bounds *b, struct pb_verify_values *v);
void pb_verify__class_values(const struct pb_verify_class *q, struct pb_verify_values *v);
/* Residual per target x {obs, I0, Ik, I5}; mask[j] = 0 skips a comparison. */
void pb_verify__compare(const struct pb_verify_values *a, const struct pb_verify_values *b, const int *mask,
                        double res[PB_VERIFY_NTARGETS * PB_VERIFY_NCMP]);
/* The comparisons above the tolerance as failures of the cell (@p label: the class, -1: the cell). */
void pb_verify__residual_fail(struct pb_verify__cellstate *cs, int32_t label, const char *against,
                              const struct pb_verify_values *mine, const struct pb_verify_values *ref,
                              const double *res);
/* Theorem 1 on one target's seven values (pb_verify__vals): its Ik and I5 intervals equal within PB_VERIFY_TOL
 * (both ends undefined counts as equal). */
int pb_verify__thm1_holds(const double x[7]);
/* Theorem 1 on an enumerated class: its L and dM_k intervals (as rates of its records) equal at Ik and I5. */
int pb_verify__class_thm1(const struct pb_verify_class *q);
/* Whether the class's five-state (I5) H interval is strictly narrower than at Ik (seed C.1, J.1). */
int pb_verify__h_narrower(const struct pb_verify_class *q);
/* Nesting, observed values inside, Theorem 1. */
void pb_verify__structure(struct pb_verify__cellstate *cs, int32_t label, const struct pb_verify_values *v);

/* Worst item of one residual slot. */
struct pb_verify__pw {
  double r, a, b;
  const char *what;
  int lv, li, j, o;
};

/* The policy engine's values in the verify layout; residuals of every
 * compared policy value per slot (PB_VERIFY_PSLOT); those above the
 * tolerance as failures; the structural policy checks. */
void pb_verify__engine_pvalues(const struct pb_policy_result *e, const struct pb_verify_policy_setup *ps,
                               struct pb_verify_pvalues *v);
void pb_verify__pcompare(const struct pb_verify_pvalues *a, const struct pb_verify_pvalues *b,
                         const struct pb_verify_policy_setup *ps, int skip_lemma1,
                         struct pb_verify__pw w[PB_VERIFY_NPRES]);
void pb_verify__presidual_fail(struct pb_verify__cellstate *cs, int32_t label, const char *against,
                               const struct pb_verify__pw *w, const struct pb_verify_policy_setup *ps);
void pb_verify__pstructure(struct pb_verify__cellstate *cs, int32_t label, const struct pb_verify_pvalues *v,
                           const struct pb_verify_policy_setup *ps, int cor1);

/* ---- one cell (verify_stage_cell.c) */

/* Stable (label, index) order of a cell's records: this module's own grouping. */
struct pb_verify__li { int32_t label, idx; };

/* li[0 .. n) = the records in (label, index) order (verify_stage_cell.c). */
void pb_verify__group(const int32_t *label, int32_t n, struct pb_verify__li *li);

/* Thread-local scratch of one cell. */
struct pb_verify__scratch {
  struct pb_verify__li *li;
  struct pb_verify_class *cls;
  int32_t *cbeg, *clabel;
  struct pb_verify_perm **lists;
  int32_t cap;
  /* policies */
  uint32_t *tally;
  struct pb_verify_pclass *pq;
  struct pb_verify_pacc *pacc, *pacc1;
  struct pb_verify_pvalues *pv_mine, *pv_eng, *pv_cart;
  struct pb_policy_result *pres;
  uint16_t (*W)[PB_VERIFY_MAX_POL], (*R)[PB_VERIFY_MAX_POL];
  struct pb_verify_memo *memo; /* the thread's, kept across rounds (NULL: off) */
  size_t memo_pack;            /* bytes of a packed class in a memo payload */
};

/* Policy scratch; @p memo: the thread's memo slot (created on first use,
 * freed by the caller), or NULL for none. */
void pb_verify__scratch_policies(struct pb_verify__scratch *s, const struct pb_verify_options *opt,
                                 struct pb_verify_memo **memo);
void pb_verify__scratch_free(struct pb_verify__scratch *s);

/* What a cell is compared with. */
struct pb_verify__ref {
  int in_process;             /* run pb_bounds_cell per class and per cell */
  const struct pb_verify_values *file; /* else the --against file's values of this cell */
  int file_i5;                /* the file holds I5 and variable-support values for this cell */
  /* test-only hook (PAIRBOUND_VERIFY_TEST_CORRUPT=CELL[,LABEL]): add a small
   * error to the policy engine's D+ of this cell, or of this class alone, so
   * that the tests can show that a wrong engine value is caught */
  int corrupt;
  int32_t corrupt_label;      /* -1: the cell-level result */
};

/* Verify one cell; the record and failure text are filled in. */
void pb_verify__cell(const struct pb_cell_view *d, const struct pb_verify_options *opt,
                     const struct pb_verify_policy_setup *ps, const struct pb_verify__ref *ref,
                     struct pb_verify__scratch *sc, struct pb_verify__cellstate *cs, double *t_enum);

/* ---- --witnesses (verify_stage_witness.c) */

/* What the witness check found: witnesses checked, I5 ones absent (cells
 * outside the bounds run's --i5 scope), cells that failed, and the first
 * failing cell (global index, INT64_MAX: none) with its message. */
struct pb_verify__wsum {
  int64_t checked, skipped, failed, first_fail;
  char msg[PB_VERIFY__MSG];
};
struct pb_stage;
/* Check the witnesses of @p path on the rank's cells @p b; PB_FAIL when the
 * file cannot be read or is not of this store (a failing witness is counted,
 * not an error).  pb_verify__witness_reduce: totals and the first failure on
 * every rank (collective). */
int pb_verify__witnesses(const struct pb_stage *st, const struct pb_cell_block *b, const char *path,
                        struct pb_verify__wsum *sum);
void pb_verify__witness_reduce(const struct pb_stage *st, struct pb_verify__wsum *sum);

/* ---- label sets (verify_stage_lsets.c; docs/verify.md, "Label sets") */

/* Enumerate one cell under record-attached set correctness (pure): @p d holds the stored predictions, @p off and
 * @p ids the sets of its records (CSR, pb_lsets_eval); records with an empty set are left out (the matched cohort)
 * and the others' predictions mapped by pb_lsets_pred.  Classes of at most @p max_class records are enumerated
 * (into @p cls[0 ..] in label order when not NULL: room for the cell's classes); a class where Theorem 1 fails
 * is a failure of @p cs.  The counts into @p out. */
void pb_verify__lsets_cell(const struct pb_cell_view *d, const int64_t *off, const int32_t *ids, int32_t n_classes,
                           int32_t max_class, struct pb_verify__cellstate *cs, struct pb_verify_class *cls,
                           int64_t out[PB_VLS_N]);
/* The rank's covered cells (@p cov: global; @p tau, @p recs, @p fail, @p where: the rank's cells) of sources with
 * sets, with their stored predictions: those of @p loaded, the stage's own cells, under labels = single (where
 * they are what it read), else read again: per source the PB_VLS_N counts summed onto rank 0 into *@p out
 * ([n_sources][PB_VLS_N], caller frees; NULL when the store has no sets).  Collective. */
int pb_verify__lsets(const struct pb_stage *st, const struct pb_verify_options *opt, const struct pb_cell_block *loaded,
                     const uint8_t *cov, const float *tau, double *recs, char *const *fail, char *const *where,
                     int64_t **out);

#endif /* PAIRBOUND_VERIFY_STAGE_INTERNAL_H */
