/* Shared by verify_stage.c and verify_report.c: the per-cell record layout. */
#ifndef PAIRBOUND_VERIFY_INTERNAL_H
#define PAIRBOUND_VERIFY_INTERNAL_H

#include <stdint.h>

#include "pairbound/dist.h"
#include "pairbound/results.h"
#include "pairbound/store.h"
#include "pairbound/verify.h"

/* Targets and the four compared values of each: observed, I0, Ik, I5. */
#define PB_VERIFY_NTARGETS 3
#define PB_VERIFY_NCMP 4

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
  PB_VF_FAILED,      /* number of failed comparisons and checks in the cell */
  PB_VF_FAIL_LABEL,  /* class label named by the cell's first failure (-1: cell level) */
  PB_VF_N
};

extern const char *const pb_verify_target_names[PB_VERIFY_NTARGETS];
extern const char *const pb_verify_cmp_names[PB_VERIFY_NCMP];

/** Name of field f (static storage). */
const char *pb_verify_field_name(int f);

/** Summary tables of every cell's record into report/REPORT.md (rank 0). */
int pb_verify_report(const struct pb_meta *meta, const struct pb_cell_ref *cells, const double *recs,
                     int64_t n_cells, const struct pb_verify_options *opt, const char *first_failure,
                     struct pb_results *res);

#endif /* PAIRBOUND_VERIFY_INTERNAL_H */
