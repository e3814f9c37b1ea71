/* Shared by policy_stage.c and policy_report.c: the per-cell summary record. */
#ifndef PAIRBOUND_POLICY_INTERNAL_H
#define PAIRBOUND_POLICY_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <mpi.h>

#include "pairbound/policy.h"
#include "pairbound/results.h"
#include "pairbound/store.h"

/* Cell fields (one double each; NaN where undefined or out of scope). */
enum pb_policy_cfield {
  PB_PC_SCOPE,          /* 1 = computed (panel cell, or every cell with --all) */
  PB_PC_TAU0, PB_PC_N, PB_PC_K, PB_PC_HW_I0,   /* K = sum k_y; marginal H width at tau0 (both sides) */
  PB_PC_T15,            /* Table 15 analogue: H, L, dMk x {I0 lo, I0 hi, Ik lo, Ik hi, I5 lo, I5 hi, obs} */
  PB_PC_MEAN_BAD = PB_PC_T15 + 21,   /* I5 classes whose exact mean count overflowed */
  PB_PC_LEMMA1,         /* max |Eq. 8 - direct maximisation| over levels, weights, policies */
  PB_PC_COR1,           /* Corollary 1 violations: J' interval ends and D'+ differing between Ik and I5 */
  PB_PC_D1,             /* first mixed certified pair at the primary weight (I5), or NaN: */
  /* j, l, tau_j, tau_l, q_j, q_l, J_j lo, J_j hi, J_l lo, J_l hi, separate gap, D+ (I5), D+ (I0) */
  PB_PC_NBASE = PB_PC_D1 + 13
};

/* Per-weight fields, PB_PL_N per weight after the cell fields; [3] = per level. */
enum pb_policy_lfield {
  PB_PL_CERT = 0,           /* [3] directed pairs certified by D+ but missed by separate intervals (mixed) */
  PB_PL_INCK = 3,           /* mixed strict comparisons added by I0 -> Ik */
  PB_PL_INC5,               /* added by Ik -> I5 */
  PB_PL_NACT,               /* [3] distinct acceptance vectors left after removing dominated policies */
  PB_PL_SEL_MM = PB_PL_NACT + 3,   /* [3] minimax-regret choice */
  PB_PL_SEL_MEAN = PB_PL_SEL_MM + 3,   /* [3] feasible-mean choice */
  PB_PL_REG_MM = PB_PL_SEL_MEAN + 3,   /* [3] realized regret of the minimax choice */
  PB_PL_REG_MEAN = PB_PL_REG_MM + 3,   /* [3] realized regret of the feasible-mean choice */
  PB_PL_SEL_FIX = PB_PL_REG_MEAN + 3,  /* the 80% policy (NaN without nominal coverages) */
  PB_PL_SEL_PROXY,          /* marginal proxy lambda P(C'=0,Z'=1) + (1-lambda) P(C'=1,Z'=0) */
  PB_PL_REG_FIX, PB_PL_REG_PROXY,
  PB_PL_N
};


/**
 * Report tables (policy_*.tsv and policy.md), collective: each rank adds up
 * its n_local records (of cells first..), rank 0 writes the tables.
 */
int pb_policy_report(const struct pb_meta *meta, const double *recs, int64_t first, int64_t n_local, int32_t rec_len,
                     const struct pb_policy_options *opt, int32_t primary, struct pb_results *res, MPI_Comm comm);

/** policy's line of the run summary, from the report TSVs in @p dir (policy_report_summary.c). */
void pb_policy_summary(FILE *fp, const char *dir);

#endif /* PAIRBOUND_POLICY_INTERNAL_H */
