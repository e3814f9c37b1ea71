/* `pairbound bounds`: identification over the grid (seed 000 Sections 3-4,
 * Appendices A-C): per-cell sharp intervals at I0, Ik, I5 and the paper's
 * diagnostics tables. */
#ifndef PAIRBOUND_IDENTIFY_H
#define PAIRBOUND_IDENTIFY_H

#include <mpi.h>

#include "pairbound/bounds.h"
#include "pairbound/protocol.h"
#include "pairbound/resample.h"

#define PB_IDENTIFY_I5_NONE 0
#define PB_IDENTIFY_I5_PANEL 1
#define PB_IDENTIFY_I5_ALL 2
#define PB_IDENTIFY_N_MATCH_SEEDS 5
#define PB_IDENTIFY_MATCH_SEED0 20260910ull
#define PB_IDENTIFY_MATCH_PER_CLASS 2
/* Table 9 tie rule: |V| counts as larger only beyond this many percentage points. */
#define PB_DECOMPOSITION_TIE_PP 1e-8

struct pb_identify_options {
  int have_tau;
  float tau;           /* one acceptance threshold for every cell (--tau) */
  int i5_scope;        /* cells that get the I5 and variable-support pass */
  int matched;         /* run the matched-support comparison (B.2) */
  int calibration;     /* the F.1 acceptance protocols, raw and Platt-scaled (Table 40) */
  int64_t group_draws; /* model-group bootstrap draws for the interval tables (0 = none) */
  int32_t perm_replicates; /* within-class permutation replicates (H.2 empirical control) */
  uint64_t seed;       /* base seed of every resampling and permutation stream */
};

/** Options of `pairbound bounds` and [bounds] (include/pairbound/options.h). */
extern const struct pb_option pb_identify_option_table[];
void pb_identify_options_default(struct pb_identify_options *opt);

/** Paired-to-unpaired variance ratio var(X - X') / (var(X) + var(X')) (Table 10); NaN if undefined. */
double pb_identify_variance_ratio(const double *x, const double *y, int32_t n);

/** Run the stage on STORE, writing OUTDIR (collective). */
int pb_identify_run(const char *store_path, const char *outdir, MPI_Comm comm,
                    const struct pb_protocol_options *popt, const struct pb_identify_options *opt,
                    const char *provenance);

#endif /* PAIRBOUND_IDENTIFY_H */
