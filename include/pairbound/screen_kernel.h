/* Prospective screening's kernels (seed 000 Section 5, Appendix E.1-E.4):
 * image-level failure-risk scores, AUROC, budgeted failure coverage with tie
 * proration, identity ablation, class baselines, logistic g(S, U), adapted
 * A3 (Eq. 12), natural probes and their selection, the class-weighted
 * metrics of the class bootstrap, and the options they read.  Pure (no MPI);
 * pairbound/screen.h adds the stage.  See docs/screen.md. */
#ifndef PAIRBOUND_SCREEN_KERNEL_H
#define PAIRBOUND_SCREEN_KERNEL_H

#include <stdint.h>

#include "pairbound/rng.h"

#define PB_SCREEN_N_BUDGETS 3
#define PB_SCREEN_LOGIT_C 1.0
/* RNG analysis ids (pb_rng_init): streams never depend on rank or thread. */
#define PB_RNG_SCREEN_DERANGE 0x53430001u
#define PB_RNG_SCREEN_RANDOM 0x53430002u
#define PB_RNG_SCREEN_SUBSET 0x53430003u
#define PB_RNG_SCREEN_TIEBREAK 0x53430004u
#define PB_SCREEN_MAX_SUBSET_SIZES 8

extern const int pb_screen_budget_pct[PB_SCREEN_N_BUDGETS];   /* 10, 20, 30 */

/**
 * Synthetic-response score of image @p j: U = (1/P) sum_a m[a][j] over the P
 * probe rows' true-class probabilities, summed in probe order (seed 000 E.1).
 * Also the default within-bin group signal of `pairbound fragility`.
 */
double pb_screen_u(const float *const *m, int32_t n_probes, int32_t j);

/* ------------------------------------------------------------ metrics */

/**
 * Mann-Whitney AUROC with failure (@p y = 1) positive and ties counted 1/2:
 * the fraction of (failure, retained) pairs whose failure has the larger
 * score.  Entries with NaN score are skipped.  NaN when either class is empty.
 */
double pb_screen_auroc(const double *score, const uint8_t *y, int32_t n);

/**
 * Spearman rank correlation of @p a and @p b over n entries (ties share their
 * mean rank: GSL's gsl_stats_spearman).  NaN when n < 2 or a column is constant.
 */
double pb_screen_spearman(const double *a, const double *b, int32_t n);

/** Budget k = max(1, round(pct n / 100)), rounding halves up (exact integers). */
int32_t pb_screen_budget(int32_t n, int pct);

/**
 * Failure coverage: expected share of all failures among the k highest
 * scores when ties at the cutoff are broken uniformly at random (proration).
 * NaN scores are skipped (n counts the rest).  NaN when there is no failure.
 */
double pb_screen_coverage(const double *score, const uint8_t *y, int32_t n, int pct);

/**
 * A score ranked once so that the metrics of many outcome vectors cost
 * O(min(failures, retained)) each: per image position (0..n_all-1) twice its
 * ascending midrank within the subset (-1 outside it) and, per budget, whether
 * it lies in a tie group wholly inside the top k (1) or in the group that
 * straddles the cutoff (2).
 */
struct pb_screen_ranked {
  int32_t n_all;      /* image positions */
  int32_t n;          /* images in the subset with a defined score */
  int32_t *mid2;      /* [n_all] */
  uint8_t *code;      /* [n_all] 2 bits per budget b at bit 2b */
  int32_t k[PB_SCREEN_N_BUDGETS], A[PB_SCREEN_N_BUDGETS], g[PB_SCREEN_N_BUDGETS]; /* budget, images above the
                                                      cutoff group, cutoff group size */
  int32_t *cut, n_cut; /* positions with code 2 at some budget, ascending */
};

/** Rank @p score over the positions listed in @p sub (all n when sub is NULL); NaN entries dropped. */
void pb_screen_rank(const double *score, int32_t n, const int32_t *sub, int32_t n_sub, struct pb_screen_ranked *r);
/** pb_screen_rank, and the ranked positions in descending order (ties by
 *  ascending position) into @p order[0..r->n) when it is not NULL. */
void pb_screen_rank_keep(const double *score, int32_t n, const int32_t *sub, int32_t n_sub,
                         struct pb_screen_ranked *r, int32_t *order);
/**
 * pb_screen_rank over the positions of @p list, given in non-increasing score
 * order (no NaN; equal scores in any order): the same ranking in O(n_list).
 * A subset of a pb_screen_rank_keep order, or a relabelling of the positions
 * of one (a within-class permutation of the scores), needs no sort.
 */
void pb_screen_rank_sorted(const double *score, int32_t n, const int32_t *list, int32_t n_list,
                           struct pb_screen_ranked *r);
void pb_screen_ranked_free(struct pb_screen_ranked *r);

/* One outcome vector (failure = 1) with its failing and retained positions. */
struct pb_screen_outcome {
  int32_t n, n_fail;
  const uint8_t *y;
  int32_t *fail, *keep;  /* [n] each, ascending */
};
/** Fill @p o from @p y (o->fail and o->keep hold n entries each, caller-allocated). */
void pb_screen_outcome_set(struct pb_screen_outcome *o, const uint8_t *y, int32_t n);

/* Metrics of one ranked score against one outcome vector. */
struct pb_screen_metric {
  int32_t n, n_fail;
  double auroc;
  double cov[PB_SCREEN_N_BUDGETS];
};

/** AUROC and prorated coverages for the budgets in bit mask @p budgets (others NaN). */
void pb_screen_ranked_metrics(const struct pb_screen_ranked *r, const struct pb_screen_outcome *o, int budgets,
                              struct pb_screen_metric *m);

/** The metrics of pb_screen_ranked_metrics for positions 0..n-1 ranked in the
 *  descending order @p order[0..n) with no ties (the random selection),
 *  against outcomes @p y[0..n): one pass over the order, no ranking built. */
void pb_screen_order_metrics(const int32_t *order, int32_t n, const uint8_t *y, int budgets,
                             struct pb_screen_metric *m);

/* ------------------------------------------------------------ protocol sensitivity (Table 22), tie-break (Table 18) */

/** Power mean score (1/P) sum_a m[a][j]^gamma, summed in probe order (U^0.5, U^2 of seed E.1). */
double pb_screen_u_power(const float *const *m, int32_t n_probes, int32_t j, double gamma);

/**
 * Rank-normalised probe mean U_rank of the n images whose probe records sit at
 * @p j[0..n): each probe's true-class probability is replaced by its mid-CDF
 * percentile among the n images, (#{<} + #{<=}) / 2n (tied images share
 * it), and the percentiles are averaged over the P probes into @p out[q].
 * Invariant to any strictly increasing rescaling of one probe's values.
 */
void pb_screen_u_rank(const float *const *m, int32_t n_probes, const int32_t *j, int32_t n, double *out);

/**
 * Coverage at each budget under one random tie-break of ranked score @p r:
 * the images wholly above the cutoff group, plus a uniformly random
 * (k - A)-subset of its g images drawn from @p rng (selection sampling in
 * position order), against the failures of the ranked subset.  Its
 * expectation is the prorated coverage of pb_screen_ranked_metrics.  NaN
 * without a failure.
 */
void pb_screen_ranked_tiebreak(const struct pb_screen_ranked *r, const struct pb_screen_outcome *o,
                               struct pb_rng *rng, double *cov);

/* ------------------------------------------------------------ controls */

/**
 * A uniformly random derangement of 0..n-1 (no fixed points; n >= 2) drawn
 * from @p rng by rejection of uniform shuffles.
 */

/* ------------------------------------------------------------ logistic g */

/**
 * L2-penalised logistic regression on aggregated binomial rows: image i has
 * features x[i][0..p-1], n_trials[i] pooled conditions and n_fail[i] failures.
 * Features are standardised with the mean and population sd over images (a
 * constant feature standardises to 0).  Minimises
 *   0.5 |w|^2 + C sum_i [ n_i log(1 + exp(eta_i)) - f_i eta_i ],
 *   eta_i = b + sum_j w_j z_ij  (intercept b unpenalised),
 * with GSL's vector_bfgs2 from 0 (docs/screen.md).
 */
struct pb_screen_logit {
  int p;
  double mean[3], sd[3];  /* standardisation */
  double b, w[3];         /* intercept and standardised slopes */
  double grad_norm;       /* Euclidean gradient norm at the returned point */
  int iterations;
  int ok;                 /* 0: undefined (no images, or one outcome only) */
};

int pb_screen_logit_fit(const double *x, int p, const int32_t *n_trials, const int32_t *n_fail, int32_t n,
                        double C, struct pb_screen_logit *fit);
/** Linear predictor b + w.z of a raw feature vector (monotone in the fitted failure probability). */
double pb_screen_logit_eta(const struct pb_screen_logit *fit, const double *x);
/** Penalised objective and its gradient (b first, then w) at (b, w): for tests. */
double pb_screen_logit_objective(const double *x, int p, const int32_t *n_trials, const int32_t *n_fail, int32_t n,
                                 double C, const struct pb_screen_logit *fit, double *grad);

/* ------------------------------------------------------------ A3 (Eq. 12) */

/* One record's probability vector as stored: predicted class and S, true
 * class and M, and an optional top-k list.  Unlisted classes get the uniform
 * completion (docs/screen.md). */
struct pb_screen_probs {
  int32_t pred, label;
  float s, m;
  int32_t k;
  const int32_t *tk_class;  /* [k] or NULL */
  const float *tk_prob;
  const float *entropy;     /* the record's stored entropy (docs/screen.md), or NULL */
};

/** v(c) of a record; *exact = 0 when c is not pinned by pred, label or the list. */
double pb_screen_prob(const struct pb_screen_probs *r, int32_t n_classes, int32_t c, int *exact);

/**
 * Adapted A3 score (Eq. 12) of a clean-correct image: @p clean is the clean
 * record (p = its prediction), @p probes the n_probes probe records.  Modal
 * class m: most probe votes, ties by the larger mean maximum probability of
 * the voting probes, then the smaller class index.  Low values = risk.
 * *approx counts probability look-ups that used the completion.
 */
double pb_screen_a3(const struct pb_screen_probs *clean, const struct pb_screen_probs *probes, int32_t n_probes,
                    int32_t n_classes, int32_t *approx);

/** Clean margin (top-1 minus top-2 probability); NaN unless the list has >= 2 entries. */
double pb_screen_margin(const struct pb_screen_probs *r);
/** Clean entropy -sum p log p: the stored one when @p r has it (exact), else the top-k list's uniform
 *  completion (an approximation); NaN with neither. */
double pb_screen_entropy(const struct pb_screen_probs *r, int32_t n_classes);

/* ------------------------------------------------------------ natural probes (E.2-E.4; src/screen/screen_kernel_tta.c) */

/**
 * The +0 variant (Bahat and Shakhnarovich): the untransformed image's
 * true-class probability @p m0 as a (P+1)-th term, (m0 + sum_a m[a][j]) /
 * (P + 1), summed clean first, then in probe order.
 */
double pb_screen_u0(double m0, const float *const *m, int32_t n_probes, int32_t j);

/** TTA agreement: the share of the probes whose prediction pred[a][j] equals @p clean_pred. */
double pb_screen_agreement(const int32_t *const *pred, int32_t n_probes, int32_t j, int32_t clean_pred);

/* One model's data for the greedy selection of a probe set (TTA^sel, U^sel):
 * n images (clean-correct, selection split), the candidates' true-class
 * probabilities and the failure outcome of every perturbed condition. */
struct pb_screen_sel_unit {
  int32_t n, n_cand, n_cells;
  const float *m;        /* [n_cand][n] */
  const uint8_t *fail;   /* [n_cells][n] 1 = failure */
  uint64_t *rows;        /* NULL, or fail packed by pb_screen_sel_pack (image-major, a byte per cell) */
  int32_t *n_fail;       /* [n_cells] failures of each cell, with rows */
};

/** Pack u->fail once for all the steps on @p u (free with pb_screen_sel_unpack). */
void pb_screen_sel_pack(struct pb_screen_sel_unit *u);
void pb_screen_sel_unpack(struct pb_screen_sel_unit *u);

/**
 * One greedy step on one unit: for every candidate c not in chosen[0..k),
 * the score -(sum_{a in chosen} m[a] + m[c]) / (k + 1) (sum in chosen order,
 * then c) is ranked once and its coverage at budget index @p b (0, 1, 2 =
 * 10, 20, 30 %) summed over the cells that have a failure: sum[c] and cnt[c]
 * (chosen candidates get 0 and 0).
 */
void pb_screen_sel_step(const struct pb_screen_sel_unit *u, const int32_t *chosen, int32_t k, int b, double *sum,
                        int64_t *cnt);

/**
 * The candidate not in chosen[0..k) with the largest mean coverage sum/cnt
 * (cnt = 0 counts as no value; ties go to the smaller index); -1 when none
 * has a value.
 */
int32_t pb_screen_sel_pick(const double *sum, const int64_t *cnt, const int32_t *chosen, int32_t k, int32_t n_cand);

/**
 * Greedy forward selection of @p n_pick candidates over @p n_units units
 * (each step's per-unit sums added in unit order, then picked); chosen[] gets
 * the candidate indices in selection order.  Returns how many were chosen
 * (fewer than n_pick only when no remaining candidate has a value).
 */
int32_t pb_screen_sel_greedy(const struct pb_screen_sel_unit *units, int32_t n_units, int32_t n_pick, int b,
                             int32_t *chosen);

/* ------------------------------------------------------------ class-weighted metrics (src/screen/screen_kernel_weighted.c) */

/* The class bootstrap's metrics: integer weights act as replication counts,
 * so each metric equals the unweighted one on the data set with every image
 * repeated as often as its class was drawn. */

/** The most budgets pb_screen_weighted_metrics takes. */
#define PB_WM_MAX_PCT 8

/** One score's images packed for repeated weighted passes (pb_screen_weighted_codes). */
struct pb_wm_codes {
  const uint32_t *code; /**< n: label << 2 | (first image of its tie group) << 1 | (failure), descending score */
  const uint32_t *ret;  /**< n - n_fail: the retained images' labels, descending score */
  const uint32_t *fail; /**< n_fail: the failures' labels, descending score */
  const uint32_t *ra;   /**< n_fail: retained images strictly above failure f's tie group */
  const uint32_t *rae;  /**< n_fail: retained images above or in failure f's tie group */
  int32_t n, n_fail;
};

/** 32-bit words pb_screen_weighted_codes needs for n images. */
#define PB_WM_CODE_WORDS(n) (4 * (size_t)(n))

/**
 * Packs one score's images into @p words (PB_WM_CODE_WORDS(n) of them, which
 * @p out points into): @p order lists the images with a defined score in
 * ascending score order (ties adjacent).  Labels below 2^30.
 */
void pb_screen_weighted_codes(const double *score, const uint8_t *y, const int32_t *label, const int32_t *order, int32_t n,
                       uint32_t *words, struct pb_wm_codes *out);

/** Weightings pb_screen_weighted_metrics evaluates in one pass. */
#define PB_WM_LANES 32

/**
 * For each of PB_WM_LANES weightings l (image weight mult[label *
 * PB_WM_LANES + l]): AUROC auroc[l] with failures positive (ties 1/2; NaN
 * without weighted failures or retained images), and the failure coverage
 * cov[l * n_pct + b] of the top k = max(1, round(pcts[b] W / 100)) images by
 * score (W = total weight, ties at the cutoff prorated; NaN without
 * failures), in one pass over the codes of pb_screen_weighted_codes: the tie
 * groups, which all weightings share, are walked once.  @p pos[l] and
 * @p total[l] are the weighted failures and images among the coded ones,
 * which the caller sums over classes (O(classes), not O(images)).
 * @p mult16, where not NULL, holds the same weights as 16-bit integers
 * (each at most 65,535): with it, weightings whose totals are all at most
 * 65,535 take the pass in 16-bit lanes, twice the lanes of a vector.
 * n_pct <= PB_WM_MAX_PCT.
 */
void pb_screen_weighted_metrics(const struct pb_wm_codes *codes, const int32_t *mult, const uint16_t *mult16, const int64_t *pos,
                         const int64_t *total, const int *pcts, int n_pct, double *auroc, double *cov);

/* ------------------------------------------------------------ options (the stage's, as the kernels read them) */

struct pb_screen_probeset {
  char *name;        /* NULL for the primary set (scores U, A3) */
  char *source;
  int32_t n_conditions;
  char **conditions; /* NULL/0 = every perturbed condition of the source */
};

struct pb_screen_options {
  uint64_t seed;
  int32_t n_targets;
  char **targets;              /* default ES, Diverse */
  int32_t n_probesets;
  struct pb_screen_probeset *probesets;  /* [0] primary (default every perturbed Syn-B condition) */
  int severity_sets;           /* add sev<N> sets from trailing -N in primary condition names */
  int swapped;                 /* evaluate development images; fit on evaluation images (Tables 23-24) */
  int eval_tiers;              /* tiers from evaluation accuracy (Table 24) */
  int32_t n_subset_sizes;
  int32_t subset_sizes[PB_SCREEN_MAX_SUBSET_SIZES];  /* Table 28 sizes m (default 1,2,3,6,9) */
  int32_t subsets_per_size;    /* default 20 */
  int subset_tiers;            /* bit mask of tiers that get the subset scores (default mild) */
  int32_t n_derange;           /* derangement draws (default 10) */
  int64_t group_draws;         /* model-group bootstrap draws for the paired differences (0 = none) */
  int64_t class_draws;         /* class bootstrap draws (0 = none) */
};


#endif /* PAIRBOUND_SCREEN_KERNEL_H */
