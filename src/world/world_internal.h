/* What the world files share: the world object, the description of a factor
 * world (factors, conditional laws, outcome rule) and the irrelevant fields. */
#ifndef PAIRBOUND_WORLD_INTERNAL_H
#define PAIRBOUND_WORLD_INTERNAL_H

#include <stdint.h>

#include "pairbound/rng.h"
#include "pairbound/world.h"

#define PB_WORLD_MAX_FACTORS 10
#define PB_WORLD_MAX_RESIDUAL 11
#define PB_WORLD_MAX_ATTRS 32

/* One latent categorical factor of a factor world.  A numeric factor is shown
 * as a grid value k / per_unit, k in [k_lo, k_hi]; level l covers
 * [cut[l], cut[l + 1]) in grid units (a threshold belongs to the higher level). */
struct pb_world_factor {
  const char *name;       /* visible attribute name */
  int radix;              /* number of levels */
  const char *const *values;  /* categorical value names (NULL for numeric) */
  int numeric;
  int per_unit;           /* grid points per unit (10: steps of 0.1) */
  int32_t cut[4];         /* k_lo, threshold 1, threshold 2, k_hi + 1 */
  int hidden_from;        /* hidden at this level and above (PB_WORLD_HIGH + 1: never) */
  int group;              /* multicalibration group attribute (Section 5) */
};

/* A factor world: factors in an order where every factor's parents come
 * first, its conditional law and its outcome rule in integer units. */
struct pb_world_spec {
  int n_factors;
  const struct pb_world_factor *factors;
  /* P(Z_j = l | z_0..z_{j-1}) for l < radix into pmf */
  void (*cond_pmf)(int j, const int *z, double *pmf);
  /* label given every substantive level and the residual value r */
  int (*label)(const int *z, int r);
  int n_residual;
  const int *residual_values;
  const double *residual_probs;   /* the benchmark law (scale 1) */
  const struct pb_world_choice *choices;  /* what the seed leaves open and we chose, {NULL}-terminated */
};

extern const struct pb_world_spec pb_world_credit_spec;
extern const struct pb_world_spec pb_world_review_spec;

/* An irrelevant field: a categorical with equiprobable values, or a bounded
 * count with a tabulated law (cdf over lo..hi). */
struct pb_world_field {
  const char *name;
  int n_values;                 /* categorical; 0 for a count */
  const char *const *values;
  int32_t lo, hi;               /* count support */
  double *cdf;                  /* [hi - lo + 1], last entry 1 */
};

/* Build the 8 irrelevant fields of a world (Appendix B, Table 5 ranges ours). */
int pb_world__fields_init(enum pb_world_kind kind, struct pb_world_field *f);
void pb_world__fields_free(struct pb_world_field *f);
/* One draw of every field into x[0..7] (count value or category index). */
void pb_world__fields_draw(const struct pb_world_field *f, struct pb_rng *rng, double *x);
/* P(N < m) + P(N = m) / 2 of a count field (the median condition). */
double pb_world__field_mid_cdf(const struct pb_world_field *f, int32_t m);

/* One latent case, before projection: what a (seed, stream, index) draws.
 * Factor worlds: every factor level z, the residual's index r, the numerical
 * measurements (numeric factors only); covert transfer: z[0] report type,
 * z[1] tag, z[2] encode, and the 16 identifier letters as drawn (before
 * encoding).  Both: the irrelevant fields. */
#define PB_WORLD_ID_LEN 16
struct pb_world_latent {
  int z[PB_WORLD_MAX_FACTORS];
  int r;
  double meas[PB_WORLD_MAX_FACTORS];
  int letters[PB_WORLD_ID_LEN];
  double fields[PB_WORLD_N_IRRELEVANT];
};
/* Draw case @p index of stream (@p seed, @p stream) whatever the level (world_kernel.c). */
void pb_world__latent(const struct pb_world *w, uint64_t seed, uint32_t stream, uint64_t index,
                      struct pb_world_latent *l);
/* The visible attributes at the world's level, the label and the exact p* of a latent case. */
void pb_world__project(const struct pb_world *w, const struct pb_world_latent *l, double *x, int *y, double *pstar);

struct pb_world {
  enum pb_world_kind kind;
  enum pb_world_level level;
  double scale;
  const struct pb_world_spec *spec;    /* NULL for covert transfer */
  double residual_probs[PB_WORLD_MAX_RESIDUAL];
  int64_t n_sub;                       /* substantive states */
  int64_t stride[PB_WORLD_MAX_FACTORS];
  double *pstar;                       /* [n_sub]: p* of each substantive state's visible pattern */
  int n_attrs;
  struct pb_world_attr attrs[PB_WORLD_MAX_ATTRS];
  int attr_factor[PB_WORLD_MAX_ATTRS]; /* factor of a substantive attribute, -1 otherwise */
  int first_field;                     /* attribute index of the first irrelevant field */
  struct pb_world_field fields[PB_WORLD_N_IRRELEVANT];
  struct pb_world_summary summary;
};

#endif /* PAIRBOUND_WORLD_INTERNAL_H */
