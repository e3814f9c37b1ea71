/* What the fragility stage and its report share: the output field tables and
 * the gathered records. */
#ifndef PAIRBOUND_FRAGILITY_INTERNAL_H
#define PAIRBOUND_FRAGILITY_INTERNAL_H

#include <stdint.h>

#include "pairbound/fragility.h"
#include "pairbound/results.h"
#include "pairbound/store.h"

/* One output column: name in the report TSVs and results.h5, record index, integer or not. */
struct pb_fragility_field {
  const char *name;
  int index;
  int is_int;
};
/* The fixed columns of report/fragility.tsv after model, source, arm (the
 * per-radius columns follow, and lcb/profile names carry the radius). */
extern const struct pb_fragility_field pb_fragility_arm_fields[];
extern const int pb_fragility_n_arm_fields;
/* The columns of report/fragility_drift.tsv after model, source, condition, tier. */
extern const struct pb_fragility_field pb_fragility_drift_fields[];
extern const int pb_fragility_n_drift_fields;

/* Everything the report needs, on rank 0. */
struct pb_fragility_out {
  const struct pb_meta *meta;
  const struct pb_fragility_options *opt;
  int32_t arm_len;               /* PB_FRAGILITY_ARM_LEN(n_grid) */
  int64_t n_units;               /* sources x models, source-major */
  const double *arms;            /* [n_units][2][arm_len] */
  int64_t n_drift;               /* perturbed cells, global cell order */
  const double *drift;           /* [n_drift][PB_FD_FIXED] */
  const int64_t *drift0;         /* [n_units + 1] first drift record of each unit */
  const int8_t *const *tier;     /* [source][condition] */
  const char *const *u_signal;   /* [source] description of the group signal used */
};

/** Column name of an arm record index (radius-dependent names into buf). */
const char *pb_fragility_arm_name(const struct pb_fragility_options *o, int index, char *buf, size_t len);

/** report/fragility.tsv, fragility_drift.tsv, fragility.md and the figures (rank 0). */
int pb_fragility_report(struct pb_results *res, const struct pb_fragility_out *out);

#endif /* PAIRBOUND_FRAGILITY_INTERNAL_H */
