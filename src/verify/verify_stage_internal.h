/* Between the files of the verify stage: verify_stage.c (options, cells,
 * blocks, outputs), verify_stage_class.c (one cell: its classes enumerated
 * and compared with the engines) and verify_stage_check.c (the comparisons,
 * the structural checks and their failure messages). */
#ifndef PAIRBOUND_VERIFY_STAGE_INTERNAL_H
#define PAIRBOUND_VERIFY_STAGE_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "pairbound/bounds.h"
#include "pairbound/cell.h"
#include "pairbound/policy.h"
#include "pairbound/verify.h"
#include "verify_internal.h"

extern const char *const pb_verify__level_names[PB_VERIFY_NLEVELS];

/* Per-cell work state: counters, the first failure and its class. */
struct pb_verify__cellstate {
  double *rec;
  char *fail;                 /* first failure text (PB_VERIFY__MSG bytes) */
  const char *where;          /* "model/source/condition" */
};
#define PB_VERIFY__MSG 1024
#define PB_VERIFY__NTOT 7   /* run totals (pb_verify__write) */

/* Worst item of one residual slot. */
struct pb_verify__pw {
  double r, a, b;
  const char *what;
  int lv, li, j, o;
};

/* Stable (label, index) order of a cell's records: this module's own grouping. */
struct pb_verify__li { int32_t label, idx; };

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

/* |a - b|, 0 when both are undefined, infinite when exactly one is. */
static inline double pb_verify__res(double a, double b)
{
  if (isnan(a) && isnan(b)) return 0.0;
  if (isnan(a) || isnan(b)) return INFINITY;
  return fabs(a - b);
}

/* ---- verify_stage_check.c */

/* The seven compared values of a target from any (cell or class) values. */
void pb_verify__vals(const struct pb_verify_values *v, int t, double out[7]);
/* The bounds engine's values, and a class's on its own as rates, in the compared layout. */
void pb_verify__engine_values(const struct pb_cell_bounds *b, struct pb_verify_values *v);
void pb_verify__class_values(const struct pb_verify_class *q, struct pb_verify_values *v);
/* Residual per target x {obs, I0, Ik, I5}; mask[j] = 0 skips a comparison. */
void pb_verify__compare(const struct pb_verify_values *a, const struct pb_verify_values *b, const int *mask,
                        double res[PB_VERIFY_NTARGETS * PB_VERIFY_NCMP]);
/* A failure of the cell (label -1) or of class @p label: counted, the first one's text kept. */
void pb_verify__failf(struct pb_verify__cellstate *cs, int32_t label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Report the comparisons above the tolerance. */
void pb_verify__residual_fail(struct pb_verify__cellstate *cs, int32_t label, const char *against,
                              const struct pb_verify_values *mine, const struct pb_verify_values *ref,
                              const double *res);
/* Nesting, observed values inside their intervals, Theorem 1. */
void pb_verify__structure(struct pb_verify__cellstate *cs, int32_t label, const struct pb_verify_values *v);
/* The policy engine's result in the compared layout. */
void pb_verify__engine_pvalues(const struct pb_policy_result *e, const struct pb_verify_policy_setup *ps,
                               struct pb_verify_pvalues *v);
/* Residuals of every compared policy value, per slot (PB_VERIFY_PSLOT). */
void pb_verify__pcompare(const struct pb_verify_pvalues *a, const struct pb_verify_pvalues *b,
                         const struct pb_verify_policy_setup *ps, int skip_lemma1,
                         struct pb_verify__pw w[PB_VERIFY_NPRES]);
void pb_verify__presidual_fail(struct pb_verify__cellstate *cs, int32_t label, const char *against,
                               const struct pb_verify__pw *w, const struct pb_verify_policy_setup *ps);
/* Lemma 1, Corollary 1 (@p cor1 < 0: no attainability result), nesting and inclusion of policy values. */
void pb_verify__pstructure(struct pb_verify__cellstate *cs, int32_t label, const struct pb_verify_pvalues *v,
                           const struct pb_verify_policy_setup *ps, int cor1);

/* ---- verify_stage_class.c */

/* A thread's scratch: the policy part (@p memo: the thread's memo slot, created on first use and freed by
 * the caller, or NULL for none), and its release. */
void pb_verify__scratch_policies(struct pb_verify__scratch *s, const struct pb_verify_options *opt,
                                 struct pb_verify_memo **memo);
void pb_verify__scratch_free(struct pb_verify__scratch *s);
/* Verify one cell; the record and failure text in @p cs are filled in, the enumerating seconds added to
 * @p t_enum. */
void pb_verify__cell(const struct pb_cell_view *d, const struct pb_verify_options *opt,
                     const struct pb_verify_policy_setup *ps, const struct pb_verify__ref *ref,
                     struct pb_verify__scratch *sc, struct pb_verify__cellstate *cs, double *t_enum);

#endif /* PAIRBOUND_VERIFY_STAGE_INTERNAL_H */
