/* Evaluation protocol (seed 000 Section 3.3, Appendices B.1, D, F):
 * development thresholds, condition tiers and the frozen panel.  Pure: its
 * computation from a store and its outputs are pb_protocol_compute and
 * pb_protocol_write (pairbound/stage.h). */
#ifndef PAIRBOUND_PROTOCOL_H
#define PAIRBOUND_PROTOCOL_H

#include <stdint.h>

#include "pairbound/options.h"

struct pb_meta;

/* Severity tiers of a perturbed condition by mean development accuracy. */
#define PB_TIER_MILD 0
#define PB_TIER_SEVERE 1
#define PB_TIER_EXTREME 2
#define PB_N_TIERS 3

/* Tier of a mean development accuracy: mild >= .40, severe .20-.40, extreme < .20. */
int pb_protocol_tier_of_accuracy(double accuracy);
const char *pb_protocol_tier_name(int tier);

#define PB_PROTOCOL_COVERAGE 0.8
#define PB_PROTOCOL_N_Q 5
#define PB_PROTOCOL_PANEL_SEED 20260910ull
extern const double pb_protocol_q[PB_PROTOCOL_N_Q];   /* .6 .7 .8 .9 1 */

struct pb_protocol_source {
  int32_t n_dev, n_eval;
  float *tau;             /* [n_models] clean-development threshold at the coverage */
  float *policy_tau;      /* [n_models][PB_PROTOCOL_N_Q] perturbed-side policy thresholds */
  int64_t *dev_correct;   /* [n_models][n_conditions] */
  int64_t *eval_correct;  /* [n_models][n_conditions] */
  double *mean_dev_acc;   /* [n_conditions] mean over models of development accuracy */
  int8_t *tier;           /* [n_conditions] PB_TIER_*, -1 for clean or no development images */
  uint8_t *panel;         /* [n_models][n_conditions] 1 = cell in the frozen panel */
  int32_t panel_quota;
};

struct pb_protocol {
  double coverage;
  uint64_t panel_seed;
  int32_t n_sources, n_models;
  struct pb_protocol_source *src;
};

struct pb_protocol_options {
  double coverage;          /* default PB_PROTOCOL_COVERAGE */
  uint64_t panel_seed;      /* default PB_PROTOCOL_PANEL_SEED */
  int32_t n_quota;          /* per-source panel sizes overriding the defaults */
  char **quota_source;
  int32_t *quota;
  int labels;               /* enum pb_labels (pairbound/lsets.h): correctness single, under label sets, or auto */
};

/** Options of the protocol, shared by every stage, and [protocol] (include/pairbound/options.h). */
extern const struct pb_option pb_protocol_option_table[];
void pb_protocol_options_default(struct pb_protocol_options *opt);
/** Release the --panel-cells list (and reset to the defaults). */
void pb_protocol_options_free(struct pb_protocol_options *opt);

/** The rank round(q * n) of the threshold rule (half up, clamped to [1, n]; n >= 1). */
int32_t pb_protocol_rank(int32_t n, double q);

/**
 * Lowest score among the top round(q * n) scores (ties at the cutoff are
 * accepted by S >= threshold).  NaN when n == 0.
 */
float pb_protocol_threshold(const float *scores, int32_t n, double q);

/* Default panel sizes by role (seed 000 Appendix B.1: 90 cells of each synthetic source, 135 of each real one). */
#define PB_PROTOCOL_QUOTA_SYNTHETIC 90
#define PB_PROTOCOL_QUOTA_REAL 135
struct pb_source;
/** Default panel size of a source by its role: synthetic 90, real 135, a probe source (no cells) 0. */
int32_t pb_protocol_default_quota(const struct pb_source *src);

/**
 * Frozen panel of one source, chosen from names alone (docs/protocol.md):
 * models and conditions are ordered by SHA-256 keys of (seed, source, name),
 * models take turns, and each takes the next condition of a cyclic cursor that
 * it does not already have.  @p panel is [n_models][n_conditions].
 */
void pb_protocol_panel(const struct pb_meta *meta, int32_t src, uint64_t seed, int32_t quota, uint8_t *panel);

/** A deep copy of @p p (a protocol of the store @p meta describes) into @p out. */
void pb_protocol_copy(const struct pb_protocol *p, const struct pb_meta *meta, struct pb_protocol *out);

void pb_protocol_free(struct pb_protocol *p);

#endif /* PAIRBOUND_PROTOCOL_H */
