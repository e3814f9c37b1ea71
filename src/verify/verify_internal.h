/* Shared by the verify stage's files and its report: the per-cell record
 * layout, the names of targets and levels, the report's totals. */
#ifndef PAIRBOUND_VERIFY_INTERNAL_H
#define PAIRBOUND_VERIFY_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <mpi.h>

#include "pairbound/agg.h"
#include "pairbound/dist.h"
#include "pairbound/fields.h"
#include "pairbound/results.h"
#include "pairbound/store.h"
#include "pairbound/verify.h"

/* Targets and the four compared values of each: observed, I0, Ik, I5. */
#define PB_VERIFY_NTARGETS 3
#define PB_VERIFY_NCMP 4

/* Policy targets: observed values and marginals (no level), then per level
 * H_j, L_j, J_j intervals, D+_jl, Eq. 8 (J_lemma1), feasible means, natural
 * cost (J', D'+). */
enum { PB_VERIFY_PT_OBS, PB_VERIFY_PT_H, PB_VERIFY_PT_L, PB_VERIFY_PT_J, PB_VERIFY_PT_D, PB_VERIFY_PT_LEMMA1,
       PB_VERIFY_PT_MEAN, PB_VERIFY_PT_NATURAL, PB_VERIFY_NPT };
#define PB_VERIFY_NPRES (1 + (PB_VERIFY_NPT - 1) * 3)
/* residual slot of target t at level lv */
#define PB_VERIFY_PSLOT(t, lv) ((t) == PB_VERIFY_PT_OBS ? 0 : 1 + ((t) - 1) * 3 + (lv))
extern const char *const pb_verify_ptarget_names[PB_VERIFY_NPT];

/* One cell = PB_VF_N doubles (counts are exact in a double). */
enum pb_verify_field {
  PB_VF_COVERED, PB_VF_NREC, PB_VF_TAU, PB_VF_CLASSES, PB_VF_ENUMERATED, PB_VF_SKIPPED, PB_VF_PERMS,
  PB_VF_CARTESIAN, PB_VF_NARROWER_H,
  PB_VF_CHK_NEST, PB_VF_FAIL_NEST, PB_VF_CHK_OBS, PB_VF_FAIL_OBS, PB_VF_CHK_THM1, PB_VF_FAIL_THM1,
  PB_VF_I5_MISSING,
  /* verified values: per target obs, I0 lo/hi, Ik lo/hi, I5 lo/hi */
  PB_VF_VAL,
  /* cell-level residual against the bounds engine (or --against file), per target x {obs, I0, Ik, I5} */
  PB_VF_RES = PB_VF_VAL + PB_VERIFY_NTARGETS * 7,
  /* largest class-level residual and the label of that class (-1: none) */
  PB_VF_CRES = PB_VF_RES + PB_VERIFY_NTARGETS * PB_VERIFY_NCMP,
  PB_VF_CRES_LABEL = PB_VF_CRES + PB_VERIFY_NTARGETS * PB_VERIFY_NCMP,
  /* Cartesian product vs class combination and vs the engine (NaN: not run) */
  PB_VF_CART_RES = PB_VF_CRES_LABEL + PB_VERIFY_NTARGETS * PB_VERIFY_NCMP,
  /* rejection policies (--policies; NaN / 0 otherwise) */
  PB_VF_POL_CLASSES,          /* classes whose policy counts were enumerated */
  PB_VF_POL_CHK_LEMMA1, PB_VF_POL_FAIL_LEMMA1, PB_VF_POL_CHK_COR1, PB_VF_POL_FAIL_COR1,
  PB_VF_POL_CHK_STRUCT, PB_VF_POL_FAIL_STRUCT,
  PB_VF_POL_SHARED_STRICT,    /* (level, weight, j != l) with D+ < J_j^hi - J_l^lo strictly (cell level) */
  /* cell-level residuals against the policy engine: obs, then target x level */
  PB_VF_POL_RES,
  PB_VF_POL_CRES = PB_VF_POL_RES + PB_VERIFY_NPRES,        /* largest class-level residual per target */
  PB_VF_POL_CRES_LABEL = PB_VF_POL_CRES + PB_VERIFY_NPT,   /* and its class */
  PB_VF_POL_CART_RES = PB_VF_POL_CRES_LABEL + PB_VERIFY_NPT,   /* Cartesian product vs combination and engine */
  /* classes too large to enumerate (--lp-max): exact integer programs */
  PB_VF_LP_CLASSES,  /* classes checked by the LP */
  PB_VF_LP_PROGRAMS, /* integer programs solved */
  PB_VF_LP_BNB,      /* of which the exact LP vertex was fractional (branch and bound) */
  PB_VF_LP_RES,      /* largest class residual, LP vs bounds engine (I5 H; NaN: none) */
  PB_VF_LP_POL_RES,  /* largest class residual, LP vs policy engine (I5 H, L, J, D+; NaN: none) */
  PB_VF_CF_RES,      /* cells not fully enumerated: closed-form I0/Ik H, L vs bounds engine (NaN: not run) */
  PB_VF_FAILED,      /* number of failed comparisons and checks in the cell */
  PB_VF_FAIL_LABEL,  /* class label named by the cell's first failure (-1: cell level) */
  PB_VF_N
};

/* Label sets (verify_stage_lsets.c), per cell and, summed, per source: the cell has matched records, its classes,
 * those enumerated, those larger than --max-class, those whose L and dM_k intervals are equal at Ik and I5, those
 * with a strictly narrower H at I5. */
enum { PB_VLS_CELLS, PB_VLS_CLASSES, PB_VLS_ENUMERATED, PB_VLS_SKIPPED, PB_VLS_AGREE, PB_VLS_NARROWER, PB_VLS_N };

/* Memo of the class-level policy checks (src/verify/verify_stage_memo.c): one table per
 * thread, keyed by a class's canonical form. */
#define PB_VERIFY_MEMO_KEY (1 + 4 * PB_VERIFY_MAX_N)
struct pb_verify_memo;
/** A table of at most @p budget bytes whose slots hold @p payload bytes. */
struct pb_verify_memo *pb_verify_memo_new(size_t payload, size_t budget);
void pb_verify_memo_free(struct pb_verify_memo *m);
/** The payload stored under @p key, or NULL. */
unsigned char *pb_verify_memo_find(struct pb_verify_memo *m, const unsigned char *key);
/** The slot of @p key, claimed for it (replacing whatever it held): fill its payload. */
unsigned char *pb_verify_memo_put(struct pb_verify_memo *m, const unsigned char *key);
void pb_verify_memo_counts(const struct pb_verify_memo *m, int64_t *hits, int64_t *misses);
/**
 * Canonical form of a class for the policy checks: @p key (1 + 4 n bytes),
 * the record order that sorts it, and each record's wrong-label codes q0, q1
 * (0 for a correct prediction, else 1 + the label's rank among the class's
 * distinct wrong labels).
 */
void pb_verify_memo_canon(const struct pb_verify_records *r, const struct pb_verify_policy_setup *ps,
                          unsigned char key[PB_VERIFY_MEMO_KEY], int32_t order[PB_VERIFY_MAX_N],
                          int32_t q0[PB_VERIFY_MAX_N], int32_t q1[PB_VERIFY_MAX_N]);

extern const char *const pb_verify_target_names[PB_VERIFY_NTARGETS];
extern const char *const pb_verify_cmp_names[PB_VERIFY_NCMP];
extern const char *const pb_verify_level_names[PB_VERIFY_NLEVELS];

/** The record's field table: /verify/cells columns and verify.tsv (static storage; first call from serial code;
 * verify_fields.c with the names above). */
const struct pb_fields *pb_verify_fields(void);

#define PB_VERIFY_NR (PB_VERIFY_NTARGETS * PB_VERIFY_NCMP)

/* Totals over the covered cells of every rank and where the largest residuals occur (verify_stage_reduce.c). */
struct pb_verify_sum {
  double tot[PB_VF_N];
  int64_t covered, complete, cart_cells, i5_missing;
  double cart_max, cart_comb;
  double rmax[PB_VERIFY_NR], cmax[PB_VERIFY_NR];   /* largest cell / class residual per target x level */
  int64_t rcell[PB_VERIFY_NR], ccell[PB_VERIFY_NR];
  int32_t clabel[PB_VERIFY_NR];
  double lpmax[3];   /* largest residual: LP vs bounds engine, LP vs policy engine, closed forms */
  int64_t lpn[3];    /* cells where each was compared */
  struct pb_src_tot { int64_t cells, classes, skipped, narrower; double perms; } *bys;   /* per source */
  /* --policies: largest cell residual per target x level, class residual per target, Cartesian residual */
  struct pb_loc pres[PB_VERIFY_NPRES], pcres[PB_VERIFY_NPT];
  double pcart_max;
  int64_t pcart_n;
};

/**
 * The totals of every rank's covered cells on rank 0 (collective; free with
 * pb_verify_sum_free on every rank).  @p cells: every cell's reference in
 * global order; @p recs: this rank's n_local records, of cells first.. .
 */
int pb_verify_summarise(const struct pb_meta *meta, const struct pb_cell_ref *cells, const double *recs,
                        int64_t first, int64_t n_local, MPI_Comm comm, struct pb_verify_sum *S);
void pb_verify_sum_free(struct pb_verify_sum *S);

/** report/REPORT.md from the reduced totals (rank 0; @p cells: every cell's reference), and with label sets
 *  (@p lsets: [n_sources][PB_VLS_N] counts, or NULL) report/verify_label_sets.tsv. */
int pb_verify_report(const struct pb_meta *meta, const struct pb_cell_ref *cells, const struct pb_verify_sum *S,
                     int64_t n_cells, const struct pb_verify_options *opt, const char *first_failure,
                     const int64_t *lsets, struct pb_results *res);

/** verify's line of the run summary, from its report in @p dir (verify_report_summary.c). */
void pb_verify_summary(FILE *fp, struct pb_text *md, const char *dir, const char *rel);

#endif /* PAIRBOUND_VERIFY_INTERNAL_H */
