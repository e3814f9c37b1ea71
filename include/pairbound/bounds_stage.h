/* The options of `pairbound bounds` (the stage pb_bounds_stage:
 * identification over the grid, seed 000 Sections 3-4, Appendices A-C;
 * per-cell sharp intervals at I0, Ik, I5 and the paper's diagnostics
 * tables).  The kernel is pairbound/bounds.h. */
#ifndef PAIRBOUND_BOUNDS_STAGE_H
#define PAIRBOUND_BOUNDS_STAGE_H

#include <stdint.h>

#include "pairbound/bounds.h"
#include "pairbound/draws.h"
#include "pairbound/options.h"

#define PB_BOUNDS_I5_NONE 0
#define PB_BOUNDS_I5_PANEL 1
#define PB_BOUNDS_I5_ALL 2
#define PB_BOUNDS_N_MATCH_SEEDS 5
#define PB_BOUNDS_MATCH_SEED0 20260910ull
#define PB_BOUNDS_MATCH_PER_CLASS 2
/* Table 9 tie rule: |V| counts as larger only beyond this many percentage points. */
#define PB_DECOMPOSITION_TIE_PP 1e-8

struct pb_bounds_options {
  int have_tau;
  float tau;           /* one acceptance threshold for every cell (--tau) */
  int i5_scope;        /* cells that get the I5 and variable-support pass */
  int matched;         /* run the matched-support comparison (B.2) */
  int calibration;     /* the F.1 acceptance protocols, raw and Platt-scaled (Table 40) */
  int64_t group_draws; /* model-group bootstrap draws for the interval tables (0 = none) */
  int32_t perm_replicates; /* within-class permutation replicates (H.2 empirical control) */
  uint64_t seed;       /* base seed of every resampling and permutation stream */
  int witnesses;       /* write the witness correspondences of the H ends at Ik and I5 (/bounds/witnesses) */
};

/** Options of `pairbound bounds` and [bounds] (include/pairbound/options.h). */
extern const struct pb_option pb_bounds_option_table[];

/** Paired-to-unpaired variance ratio var(X - X') / (var(X) + var(X')) (Table 10); NaN if undefined. */
double pb_bounds_variance_ratio(const double *x, const double *y, int32_t n);

#endif /* PAIRBOUND_BOUNDS_STAGE_H */
