/* Shared by the policy stage and its report: the per-cell summary record
 * and the report's totals. */
#ifndef PAIRBOUND_POLICY_INTERNAL_H
#define PAIRBOUND_POLICY_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <mpi.h>

#include "pairbound/agg.h"
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


/* What the report's tables add up over the cells in scope, summed over the
 * ranks (policy_stage_reduce.c): per source (s = n_sources: every cell, the
 * Total rows) the integer counts of Tables 12 and 13 and the cells with one
 * action, per weight Table 14's counts, per (source, weight) Figure 5's
 * counts, and the checks; exact sums of the regrets.  The same for any split
 * of the cells.  And D.1's illustration: the picked cell and its record. */
enum { PB_PS_ORD = 0, PB_PS_ACT = 7, PB_PS_BWT = 10, PB_PS_PER_SRC = 13 }; /* counts per source */
enum { PB_PS_W_N = 0, PB_PS_W_BWT = 1, PB_PS_PER_LAM = 4 };                /* counts per weight */
struct pb_policy_sum {
  int32_t ns, nl, li;   /* sources, weights, the primary weight */
  int64_t *k;           /* counts: per source, per weight, per (source, weight) 4, then cells / Cor. 1 / bad means */
  struct pb_agg a;      /* regrets x PP: per source the 4 of Table 13, then per weight Table 14's delta */
  double lemma1;        /* largest Lemma 1 residual x PP (from 0) */
  int64_t best;         /* D.1's cell (-1: none) */
  double med;           /* the median marginal H width it is nearest to */
  double *rec;          /* its record (rank 0) */
};

/* Counts of source s (n_sources: the Total), of weight li, and Figure 5's of
 * source s at weight li: cells, then cells with an additional certified
 * ordering (shared correspondence, I0 -> Ik, Ik -> I5); the checks last. */
static inline int64_t *pb_policy_sum_src(const struct pb_policy_sum *S, int32_t s) { return S->k + (size_t)s * PB_PS_PER_SRC; }
static inline int64_t *pb_policy_sum_lam(const struct pb_policy_sum *S, int32_t li)
{
  return S->k + (size_t)(S->ns + 1) * PB_PS_PER_SRC + (size_t)li * PB_PS_PER_LAM;
}
static inline int64_t *pb_policy_sum_fig5(const struct pb_policy_sum *S, int32_t s, int32_t li)
{
  return pb_policy_sum_lam(S, S->nl) + ((size_t)s * S->nl + li) * 4;
}
static inline int64_t *pb_policy_sum_checks(const struct pb_policy_sum *S) { return pb_policy_sum_fig5(S, S->ns, 0); }

/**
 * The totals of every rank's cells in scope on rank 0 and D.1's cell
 * (collective; free with pb_policy_sum_free on every rank): this rank holds
 * n_local records of @p rec_len doubles, of cells first.. .
 */
int pb_policy_summarise(const struct pb_meta *meta, const double *recs, int64_t first, int64_t n_local,
                        int32_t rec_len, const struct pb_policy_options *opt, int32_t primary, MPI_Comm comm,
                        struct pb_policy_sum *S);
void pb_policy_sum_free(struct pb_policy_sum *S);

/** Report tables (policy_*.tsv and policy.md) from the reduced totals (rank 0). */
int pb_policy_report(const struct pb_meta *meta, const struct pb_policy_options *opt, const struct pb_policy_sum *S,
                     struct pb_results *res);

/** policy's line of the run summary, from the report TSVs in @p dir (policy_report_summary.c). */
void pb_policy_summary(FILE *fp, struct pb_text *md, const char *dir, const char *rel);

#endif /* PAIRBOUND_POLICY_INTERNAL_H */
