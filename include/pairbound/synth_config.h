/* Synthetic-panel configuration (INI, parsed with libinih).  Format: docs/synth.md. */
#ifndef PAIRBOUND_SYNTH_CONFIG_H
#define PAIRBOUND_SYNTH_CONFIG_H

#include <stdint.h>

#include "pairbound/protocol.h"

struct pb_synth_condition {
  char *name;
  double accuracy;       /* target mean development accuracy across models */
};

struct pb_synth_source {
  char *name;
  char *base;            /* sources with one base share images and image latents */
  char *image_prefix;
  int32_t classes, images_per_class;
  int32_t n_dev_pattern;
  int32_t dev_pattern[16]; /* dev images per class, cycled over classes */
  double clean_accuracy;
  int32_t n_conditions;    /* perturbed conditions (clean excluded) */
  struct pb_synth_condition *conditions;
  /* grid form: factors 'a,b x c,d' and tier counts; resolved into conditions */
  char *grid;
  int32_t tiers[PB_N_TIERS];
  int has_tiers;
  char *condition_text;  /* explicit 'name:accuracy, ...' list */
  /* the source's role, as the store declares it (docs/store.md, "Roles"): "synthetic", "real",
   * "natural[:N]", "extra:SRC", or NULL (none declared: inferred real) */
  char *role;
  char *seed_values;     /* the seed paper's values for the source it stands for ("key:value, ...") or NULL */
  /* correlation of the source's fragility factor with the base image's
   * fragility (the rest is an image factor of its own; docs/synth.md); NaN
   * when not given: 0 for a natural probe source, 1 (the base image's own) for
   * the others */
  double fragility_corr;
  /* per-source behaviour (docs/synth.md, "Per-source behaviour"); NaN when not
   * given (the latent model's defaults) */
  double coupling;       /* weight of the fragility term in the source's failures (default 1) */
  double noise[PB_N_TIERS]; /* record (capture) noise sigma_eps of its mild, severe, extreme conditions (0.55) */
  double wrong_confidence; /* logit shift of its perturbed wrong records' S (default 0) */
  double wrong_class_sd;   /* sd of a class factor added to that shift (default 0: none) */
  double correct_confidence; /* logit shift of its perturbed correct records' S (default 0) */
  double persistence;      /* model m's perturbed records share p Phi(u_m) of their noise with its clean ones (0) */
  double persistence_gain; /* its perturbed margins' response to severity per unit of the persistence factor u_m (0) */
  double tier_accuracy[PB_N_TIERS][2]; /* grid: highest and lowest target accuracy of each tier's conditions */
  int has_tier_accuracy;
  /* label sets (docs/synth.md, "Label sets"): the share of images with a set and their original label that get
   * 2-3 acceptable labels; 0 (default): the source holds no sets */
  double label_sets;
};

struct pb_synth_config {
  uint64_t seed;
  int32_t topk;
  int half_precision;
  int summaries;         /* 1: every record's entropy and collision (docs/synth.md, "Per-record summaries") */
  /* spread of the runner-up probabilities' shape across records (0: every
   * list decays by halves; docs/synth.md, "Top-k lists") */
  double runner_up_spread;
  /* model robustness: sd of each model's own response to severity, shared by
   * every perturbed condition (0: none; docs/synth.md, "Model robustness") */
  double robustness;
  /* confidence power g >= 1: every record's top probability S becomes
   * 1 - (1 - S)^g and the other classes keep their shares of the rest (1:
   * none; docs/synth.md, "Confidence power") */
  double confidence_power;
  int32_t n_groups;
  char **group_names;
  double *group_skill;
  int32_t n_models;
  char **model_ids;
  char **model_groups;
  double *model_skill;   /* group skill + model offset */
  int32_t n_sources;
  struct pb_synth_source *sources;
  int32_t model_factor;  /* scale factors applied so far ([panel] scale_factor, --scale-factor); 1 = none */
  int32_t image_factor;
  char *text;            /* the configuration text itself (provenance) */
  char *seed_values;     /* [panel] seed_values: the seed paper's panel-level values ("key:value, ...") or NULL */
};

/** Parse configuration text; @p name labels error messages ("NAME:LINE: reason"). */
int pb_synth_config_parse(const char *text, const char *name, struct pb_synth_config *cfg);
/** Read and parse a configuration file. */
int pb_synth_config_load(const char *path, struct pb_synth_config *cfg);
void pb_synth_config_free(struct pb_synth_config *cfg);

/* Largest factor of either kind: keeps images per class and models within int32_t. */
#define PB_SYNTH_MAX_FACTOR 1000

/**
 * Parse a scale factor, "F" (models and images per class both times F) or
 * "MxI" (models times M, images per class times I), each in
 * [1, PB_SYNTH_MAX_FACTOR].
 */
int pb_synth_config_factor_parse(const char *text, int32_t *model_factor, int32_t *image_factor);

/**
 * Scale a parsed configuration, same latent model (docs/synth.md, "Scale
 * factor"): every model gets model_factor - 1 copies "ID~2" ... in the same
 * group with the same skill (each its own seeded jitter), appended in rounds
 * after the originals; every class has image_factor times its images and
 * development images.  Records grow by model_factor x image_factor.
 */
int pb_synth_config_scale(struct pb_synth_config *cfg, int32_t model_factor, int32_t image_factor);

/* The embedded inputs/paper.ini and inputs/small.ini (src/embedded.c). */
extern const char pb_embedded_paper_ini[];
extern const char pb_embedded_small_ini[];

#endif /* PAIRBOUND_SYNTH_CONFIG_H */
