/* What the fragility stage and its report share: the output field tables and
 * the records of a rank. */
#ifndef PAIRBOUND_FRAGILITY_INTERNAL_H
#define PAIRBOUND_FRAGILITY_INTERNAL_H

#include <stdint.h>
#include <mpi.h>

#include "pairbound/fields.h"
#include "pairbound/fragility.h"
#include "pairbound/results.h"
#include "pairbound/store.h"

/* The field tables of the two outputs (results.h5 /fragility/arms and
 * /fragility/drift columns, report/fragility.tsv and fragility_drift.tsv):
 * an arm record's (PB_FRAGILITY_ARM_LEN fields; the lcb and profile names
 * carry their radius, so the table is built per run and released with
 * pb_fields_free) and a drift record's (PB_FD_FIXED fields). */
void pb_fragility_arm_fields(const struct pb_fragility_options *o, struct pb_fields *fs);
extern const struct pb_fields pb_fragility_drift_fields;

/* Everything the report needs: this rank's units and drift records (contiguous in global order). */
struct pb_fragility_out {
  const struct pb_meta *meta;
  const struct pb_fragility_options *opt;
  const struct pb_fields *arm_fields;  /* pb_fragility_arm_fields of opt */
  int32_t arm_len;               /* PB_FRAGILITY_ARM_LEN(n_grid) */
  int64_t n_units;               /* sources x models, source-major */
  int64_t u0, nu;                /* this rank's units */
  const double *arms;            /* [nu][2][arm_len] */
  int64_t n_drift;               /* perturbed cells, global cell order */
  int64_t d0, nd;                /* this rank's drift records (those of its units) */
  const double *drift;           /* [nd][PB_FD_FIXED] */
  const int64_t *drift0;         /* [n_units + 1] first drift record of each unit */
  const int8_t *const *tier;     /* [source][condition] */
  const char *const *u_signal;   /* [source] description of the group signal used */
  MPI_Comm comm;
};

/** report/fragility.tsv, fragility_drift.tsv, fragility.md and the figures (collective; rank 0 writes the markdown). */
int pb_fragility_report(struct pb_results *res, const struct pb_fragility_out *out);

#endif /* PAIRBOUND_FRAGILITY_INTERNAL_H */
