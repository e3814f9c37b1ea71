/* `pairbound bounds`: per-cell identification (pb_bounds_cell) over a rank's
 * cells, the matched-support subsamples (Appendix B.2), and the outputs. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/cells.h"
#include "pairbound/checksum.h"
#include "pairbound/comm.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/fields.h"
#include "pairbound/figure.h"
#include "pairbound/lsets.h"
#include "pairbound/bounds_stage.h"
#include "pairbound/progress.h"
#include "pairbound/protocol.h"
#include "pairbound/registry.h"
#include "pairbound/resample.h"
#include "pairbound/stage.h"
#include "pairbound/timer.h"
#include "bounds_stage_internal.h"

/* The four fields of matched-support seed S (1 to PB_BOUNDS_N_MATCH_SEEDS). */
#define PB_BOUNDS__MATCH(s)                                                                                  \
  [PB_IF_MATCH + 4 * (s - 1) + 0] = {"match" #s "_H", PB_FMT_NUM},                                         \
  [PB_IF_MATCH + 4 * (s - 1) + 1] = {"match" #s "_L", PB_FMT_NUM},                                         \
  [PB_IF_MATCH + 4 * (s - 1) + 2] = {"match" #s "_dMk", PB_FMT_NUM},                                       \
  [PB_IF_MATCH + 4 * (s - 1) + 3] = {"match" #s "_Hmax", PB_FMT_NUM}
/* The six J.2 counts of support variant V (index i): events and same wrong answer kept per stratum. */
#define PB_BOUNDS__J2(i, v)                                                                                  \
  [PB_IF_J2 + 6 * i + 0] = {"j2_" #v "_low_events", PB_FMT_NUM},                                           \
  [PB_IF_J2 + 6 * i + 1] = {"j2_" #v "_low_same", PB_FMT_NUM},                                             \
  [PB_IF_J2 + 6 * i + 2] = {"j2_" #v "_mid_events", PB_FMT_NUM},                                           \
  [PB_IF_J2 + 6 * i + 3] = {"j2_" #v "_mid_same", PB_FMT_NUM},                                             \
  [PB_IF_J2 + 6 * i + 4] = {"j2_" #v "_high_events", PB_FMT_NUM},                                          \
  [PB_IF_J2 + 6 * i + 5] = {"j2_" #v "_high_same", PB_FMT_NUM}
/* The four F.1 counts of protocol P under calibration C (index i = C's index x 5 + P's). */
#define PB_BOUNDS__F1(i, p, c)                                                                               \
  [PB_IF_F1 + 4 * i + 0] = {"f1_" #p "_" #c "_H", PB_FMT_NUM},                                             \
  [PB_IF_F1 + 4 * i + 1] = {"f1_" #p "_" #c "_L", PB_FMT_NUM},                                             \
  [PB_IF_F1 + 4 * i + 2] = {"f1_" #p "_" #c "_acc", PB_FMT_NUM},                                           \
  [PB_IF_F1 + 4 * i + 3] = {"f1_" #p "_" #c "_accerr", PB_FMT_NUM}

/* The four F.1 counts of protocol P (index p) under the isotonic calibrator. */
#define PB_BOUNDS__F1_ISO(p, name)                                                                           \
  [PB_IF_F1_ISO + 4 * p + 0] = {"f1_" #name "_iso_H", PB_FMT_NUM},                                         \
  [PB_IF_F1_ISO + 4 * p + 1] = {"f1_" #name "_iso_L", PB_FMT_NUM},                                         \
  [PB_IF_F1_ISO + 4 * p + 2] = {"f1_" #name "_iso_acc", PB_FMT_NUM},                                       \
  [PB_IF_F1_ISO + 4 * p + 3] = {"f1_" #name "_iso_accerr", PB_FMT_NUM}
/* The three gap counts of group G (index g). */
#define PB_BOUNDS__GAP(g, name)                                                                              \
  [PB_IF_GAP + 3 * g + 0] = {"gap_" #name "_events", PB_FMT_NUM},                                          \
  [PB_IF_GAP + 3 * g + 1] = {"gap_" #name "_same", PB_FMT_NUM},                                            \
  [PB_IF_GAP + 3 * g + 2] = {"gap_" #name "_correct", PB_FMT_NUM}

/* bounds.tsv and /bounds/cells: one field per record slot (docs/bounds.md). */
static const struct pb_field pb_bounds__fields[PB_IF_N] = {
  [PB_IF_NREC] = {"n", PB_FMT_NUM},
  [PB_IF_E] = {"E", PB_FMT_NUM},
  [PB_IF_H_OBS] = {"H_obs", PB_FMT_NUM},
  PB_FIELDS_LEVEL_ENDS(PB_IF_H_I0_LO, "H"),
  [PB_IF_H_IND] = {"H_ind", PB_FMT_NUM},
  [PB_IF_L_OBS] = {"L_obs", PB_FMT_NUM},
  PB_FIELDS_LEVEL_ENDS(PB_IF_L_I0_LO, "L"),
  [PB_IF_L_IND] = {"L_ind", PB_FMT_NUM},
  [PB_IF_D_OBS] = {"dMk_obs", PB_FMT_NUM},
  PB_FIELDS_LEVEL_ENDS(PB_IF_D_I0_LO, "dMk"),
  [PB_IF_D_IND] = {"dMk_ind", PB_FMT_NUM},
  [PB_IF_TIER] = {"tier", PB_FMT_TIER},
  [PB_IF_PANEL] = {"panel", PB_FMT_NUM},
  [PB_IF_TAU] = {"tau", PB_FMT_NUM},
  [PB_IF_H] = {"h", PB_FMT_NUM},
  [PB_IF_R] = {"r", PB_FMT_NUM},
  [PB_IF_S] = {"s", PB_FMT_NUM},
  [PB_IF_W] = {"w", PB_FMT_NUM},
  [PB_IF_K] = {"k", PB_FMT_NUM},
  [PB_IF_ACC0] = {"acc_clean", PB_FMT_NUM},
  [PB_IF_ACC1] = {"acc_perturbed", PB_FMT_NUM},
  [PB_IF_F] = {"F", PB_FMT_NUM},
  [PB_IF_A] = {"A", PB_FMT_NUM},
  [PB_IF_Q] = {"Q", PB_FMT_NUM},
  [PB_IF_WCOMP] = {"W", PB_FMT_NUM},
  [PB_IF_VCOMP] = {"V", PB_FMT_NUM},
  [PB_IF_KWC] = {"K_width_class", PB_FMT_NUM},
  [PB_IF_KWG] = {"K_width_global", PB_FMT_NUM},
  [PB_IF_NCLASSES] = {"n_classes", PB_FMT_NUM},
  [PB_IF_NPINNED] = {"n_pinned", PB_FMT_NUM},
  [PB_IF_VR_C] = {"vr_C", PB_FMT_NUM},
  [PB_IF_VR_S] = {"vr_S", PB_FMT_NUM},
  [PB_IF_VR_M] = {"vr_M", PB_FMT_NUM},
  [PB_IF_H_PERM] = {"H_perm", PB_FMT_NUM},
  [PB_IF_L_PERM] = {"L_perm", PB_FMT_NUM},
  [PB_IF_D_PERM] = {"dMk_perm", PB_FMT_NUM},
  PB_BOUNDS__MATCH(1), PB_BOUNDS__MATCH(2), PB_BOUNDS__MATCH(3), PB_BOUNDS__MATCH(4), PB_BOUNDS__MATCH(5),
  [PB_IF_DSS] = {"ds_s", PB_FMT_NUM},
  [PB_IF_DSW] = {"ds_w", PB_FMT_NUM},
  [PB_IF_F_IND] = {"F_ind", PB_FMT_NUM},
  [PB_IF_A_IND] = {"A_ind", PB_FMT_NUM},
  [PB_IF_Q_IND] = {"Q_ind", PB_FMT_NUM},
  [PB_IF_K_IND] = {"k_ind", PB_FMT_NUM},
  [PB_IF_DSS_IND] = {"ds_s_ind", PB_FMT_NUM},
  [PB_IF_DSW_IND] = {"ds_w_ind", PB_FMT_NUM},
  [PB_IF_U] = {"U_clean_accepted_correct", PB_FMT_NUM},
  [PB_IF_V1] = {"V_perturbed_rejected_correct", PB_FMT_NUM},
  PB_BOUNDS__J2(0, xmodel), PB_BOUNDS__J2(1, xgroup), PB_BOUNDS__J2(2, groups),
  PB_BOUNDS__F1(0, q80, raw), PB_BOUNDS__F1(1, r5, raw), PB_BOUNDS__F1(2, a90, raw), PB_BOUNDS__F1(3, a70, raw),
  PB_BOUNDS__F1(4, a50, raw), PB_BOUNDS__F1(5, q80, platt), PB_BOUNDS__F1(6, r5, platt), PB_BOUNDS__F1(7, a90, platt),
  PB_BOUNDS__F1(8, a70, platt), PB_BOUNDS__F1(9, a50, platt),
  [PB_IF_F1_CHANGED] = {"f1_q80_platt_changed", PB_FMT_NUM},
  [PB_IF_F1_BRIER1_RAW] = {"f1_brier_perturbed_raw", PB_FMT_NUM},
  [PB_IF_F1_BRIER1_PLATT] = {"f1_brier_perturbed_platt", PB_FMT_NUM},
  [PB_IF_F1_PLATT_A] = {"f1_platt_a", PB_FMT_NUM},
  [PB_IF_F1_PLATT_B] = {"f1_platt_b", PB_FMT_NUM},
  [PB_IF_F1_BRIER0_RAW] = {"f1_brier_dev_raw", PB_FMT_NUM},
  [PB_IF_F1_BRIER0_PLATT] = {"f1_brier_dev_platt", PB_FMT_NUM},
  PB_BOUNDS__F1_ISO(0, q80), PB_BOUNDS__F1_ISO(1, r5), PB_BOUNDS__F1_ISO(2, a90), PB_BOUNDS__F1_ISO(3, a70),
  PB_BOUNDS__F1_ISO(4, a50),
  [PB_IF_F1_ISO_CHANGED] = {"f1_q80_iso_changed", PB_FMT_NUM},
  [PB_IF_F1_BRIER1_ISO] = {"f1_brier_perturbed_iso", PB_FMT_NUM},
  [PB_IF_F1_BRIER0_ISO] = {"f1_brier_dev_iso", PB_FMT_NUM},
  [PB_IF_F1_ISO_BLOCKS] = {"f1_iso_steps", PB_FMT_NUM},
  PB_BOUNDS__GAP(0, low), PB_BOUNDS__GAP(1, mid), PB_BOUNDS__GAP(2, high),
  [PB_IF_GAP_CUT_LOW] = {"gap_cut_low", PB_FMT_NUM},
  [PB_IF_GAP_CUT_HIGH] = {"gap_cut_high", PB_FMT_NUM},
  [PB_IF_GAP_ERRORS] = {"gap_dev_errors", PB_FMT_NUM},
  [PB_IF_F1_BRIER0_MC] = {"f1_brier_dev_multiclass", PB_FMT_NUM},
  [PB_IF_F1_BRIER_CLEAN_MC] = {"f1_brier_clean_multiclass", PB_FMT_NUM},
  [PB_IF_F1_BRIER1_MC] = {"f1_brier_perturbed_multiclass", PB_FMT_NUM},
};
_Static_assert(PB_F1_N_PROTOCOLS == 5 && PB_F1_N_COUNTS == 4, "pb_bounds__fields lists 3 x 5 x 4 F.1 counts");
_Static_assert(PB_GAP_N_GROUPS == 3 && PB_GAP_N_COUNTS == 3, "pb_bounds__fields lists 3 x 3 gap counts");
_Static_assert(PB_BOUNDS_N_MATCH_SEEDS == 5, "pb_bounds__fields lists five matched-support seeds");
_Static_assert(PB_SUPPORT_N == 3 && PB_SUPPORT_N_STRATA == 3, "pb_bounds__fields lists 3 x 3 J.2 strata");
#undef PB_BOUNDS__MATCH
#undef PB_BOUNDS__J2
#undef PB_BOUNDS__F1
#undef PB_BOUNDS__F1_ISO
#undef PB_BOUNDS__GAP

const struct pb_fields pb_bounds_fields = {.group = "/bounds/cells", .n = PB_IF_N, .f = pb_bounds__fields};

#define PB_O(member) PB_OPTION_FIELD(struct pb_bounds_options, member)
const struct pb_option pb_bounds_option_table[] = {
  {.name = "tau", .type = PB_OPTION_DOUBLE, PB_O(tau), .metavar = "X", .max = 1,
   .mark = PB_OPTION_AT(struct pb_bounds_options, have_tau),
   .help = "one acceptance threshold for every cell instead of the protocol's development threshold (a store "
           "without development images then works)"},
  {.name = "i5", .type = PB_OPTION_CHOICE, PB_O(i5_scope), .metavar = "panel|all|none", .choices = "none|panel|all",
   .def = "panel", .help_default = 1,
   .help = "cells that get the exact I5 H bounds and the variable-support dM_k range at I0 (default: the frozen "
           "panel, as in the seed paper)"},
  {.name = "no-matched", .type = PB_OPTION_FLAG, PB_O(matched), .flag = 0, .ini = "matched", .def = "1",
   .help = "skip the matched-support comparison (Appendix B.2)"},
  {.name = "calibration", .type = PB_OPTION_FLAG, PB_O(calibration), .flag = 1, .def = "0",
   .help = "also the acceptance protocols of Appendix F.1 (Table 40: quantile protocol, 5% risk rule, absolute "
           "thresholds, raw, Platt-scaled and isotonic on clean development records) and Appendix F's "
           "probability-gap analysis (stores with top-k lists, k >= 2); off by default, on in `pairbound run`'s "
           "default pipeline; a few seconds more at paper scale, the 'calibration' phase of -v 2)"},
  {.name = "group-draws", .type = PB_OPTION_INT, PB_O(group_draws), .metavar = "N", .imax = PB_BOOT_MAX_DRAWS,
   .def = "0", .help_default = 1,
   .help = "model-group bootstrap draws for the intervals of the variance-ratio table (default 0 = no intervals; "
           "the paper uses 2000)"},
  {.name = "perm-replicates", .type = PB_OPTION_INT, PB_O(perm_replicates), .metavar = "R", .imax = 10000000,
   .def = "0", .help_default = 1,
   .help = "uniform within-class permutation replicates per cell, the empirical control for the independent "
           "values (Appendix H.2; default 0, the paper uses 20)"},
  {.name = "seed", .type = PB_OPTION_INT, PB_O(seed), .metavar = "S", .def = "20260908",
   .help_default = 1,
   .help = "base seed of the resampling and permutation streams (default 20260908; under `pairbound run`: the run "
           "seed + 0, docs/run.md)"},
  {.name = "witnesses", .type = PB_OPTION_FLAG, PB_O(witnesses), .flag = 1, .def = "0",
   .help = "also write, for every cell and class, within-class correspondences that attain the lower and upper H "
           "end at Ik and (in the --i5 cells) at I5, to /bounds/witnesses of results.h5, for `pairbound verify "
           "--witnesses` or any reader to check (docs/bounds.md, \"Witnesses\"; off by default)"},
  {.name = NULL}};
#undef PB_O

double pb_bounds_variance_ratio(const double *x, const double *y, int32_t n)
{
  if (n <= 0) return NAN;
  double mx = 0, my = 0, md = 0, vx = 0, vy = 0, vd = 0;
  for (int32_t i = 0; i < n; i++) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  md = mx - my;
  for (int32_t i = 0; i < n; i++) {
    vx += (x[i] - mx) * (x[i] - mx);
    vy += (y[i] - my) * (y[i] - my);
    vd += (x[i] - y[i] - md) * (x[i] - y[i] - md);
  }
  return vx + vy > 0 ? vd / (vx + vy) : NAN;
}

/* Table 10 ratios for correctness, max probability and true-class probability. */
static void pb_bounds__ratios(const struct pb_cell_view *d, double *scratch, double out[3])
{
  double *x = scratch, *y = scratch + d->n;
  for (int j = 0; j < 3; j++) {
    for (int32_t i = 0; i < d->n; i++) {
      x[i] = j == 0 ? d->pred0[i] == d->label[i] : j == 1 ? d->s0[i] : d->m0[i];
      y[i] = j == 0 ? d->pred1[i] == d->label[i] : j == 1 ? d->s1[i] : d->m1[i];
    }
    out[j] = pb_bounds_variance_ratio(x, y, d->n);
  }
}

static void pb_bounds__pack(const struct pb_cell_bounds *b, double *r)
{
  const double v[] = {
    (double)b->n, b->E, b->H_obs, b->H_I0[0], b->H_I0[1], b->H_Ik[0], b->H_Ik[1], b->H_I5[0], b->H_I5[1], b->H_ind,
    b->L_obs, b->L_I0[0], b->L_I0[1], b->L_Ik[0], b->L_Ik[1], b->L_I5[0], b->L_I5[1], b->L_ind,
    b->dMk_obs, b->dMk_I0[0], b->dMk_I0[1], b->dMk_Ik[0], b->dMk_Ik[1], b->dMk_I5[0], b->dMk_I5[1], b->dMk_ind};
  memcpy(r, v, sizeof v);
  r[PB_IF_H] = (double)b->h;
  r[PB_IF_R] = (double)b->r;
  r[PB_IF_S] = (double)b->s;
  r[PB_IF_W] = (double)b->w;
  r[PB_IF_K] = (double)b->k;
  r[PB_IF_ACC0] = b->acc0;
  r[PB_IF_ACC1] = b->acc1;
  r[PB_IF_F] = b->F;
  r[PB_IF_A] = b->A;
  r[PB_IF_Q] = b->Q;
  r[PB_IF_WCOMP] = b->W;
  r[PB_IF_VCOMP] = b->V;
  r[PB_IF_KWC] = b->K_width_class;
  r[PB_IF_KWG] = b->K_width_global;
  r[PB_IF_NCLASSES] = (double)b->n_classes;
  r[PB_IF_NPINNED] = (double)b->n_pinned;
  const double t[] = {b->ds_s, b->ds_w, b->F_ind, b->A_ind, b->Q_ind, b->k_ind, b->ds_s_ind, b->ds_w_ind};
  memcpy(r + PB_IF_DSS, t, sizeof t);
  r[PB_IF_U] = b->U;
  r[PB_IF_V1] = b->V1;
}

struct pb_bounds__ranked {
  uint64_t key;
  int32_t label, pos;
};

static int pb_bounds__cmp_ranked(const void *pa, const void *pb)
{
  const struct pb_bounds__ranked *a = pa, *b = pb;
  if (a->label != b->label) return a->label < b->label ? -1 : 1;
  if (a->key != b->key) return a->key < b->key ? -1 : 1;
  return (a->pos > b->pos) - (a->pos < b->pos);
}

static int pb_bounds__cmp_i32(const void *pa, const void *pb)
{
  const int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
  return (a > b) - (a < b);
}

/* Matched-support subsample of a source for one seed (B.2): in each class
 * common to every source, the two evaluation images that come first in the
 * SHA-256 order of "match|SEED|SOURCE|CLASS|IMAGE".  Returns evaluation
 * positions, ascending; identical for every model. */
static int32_t pb_bounds__match_sample(const struct pb_meta *meta, int32_t s, uint64_t seed,
                                         const uint8_t *common, int32_t *pos)
{
  const struct pb_source *src = &meta->sources[s];
  int32_t n_eval = 0, n = 0;
  struct pb_bounds__ranked *r = pb_malloc((size_t)src->n_images * sizeof *r);
  for (int32_t i = 0; i < src->n_images; i++) {
    if (src->split[i] != PB_SPLIT_EVAL) continue;
    if (common[src->labels[i]]) {
      char text[512];
      snprintf(text, sizeof text, "match|%llu|%s|%d|%s", (unsigned long long)seed, src->name, src->labels[i],
               src->image_ids[i]);
      r[n++] = (struct pb_bounds__ranked){pb_checksum_sha256_key(text), src->labels[i], n_eval};
    }
    n_eval++;
  }
  /* by (label, key); pos breaks ties, so the order is the stable one of the keys */
  qsort(r, (size_t)n, sizeof *r, pb_bounds__cmp_ranked);
  int32_t m = 0;
  for (int32_t i = 0, taken = 0; i < n; i++) {
    taken = i > 0 && r[i].label == r[i - 1].label ? taken + 1 : 0;
    if (taken < PB_BOUNDS_MATCH_PER_CLASS) pos[m++] = r[i].pos;
  }
  free(r);
  qsort(pos, (size_t)m, sizeof *pos, pb_bounds__cmp_i32); /* ascending evaluation positions */
  return m;
}

/* Labels present among the evaluation images of every source (B.2's common classes). */
static uint8_t *pb_bounds__common(const struct pb_meta *meta, int32_t *max_classes)
{
  int32_t K = 0;
  for (int32_t s = 0; s < meta->n_sources; s++) K = meta->sources[s].n_classes > K ? meta->sources[s].n_classes : K;
  int32_t *seen = pb_calloc((size_t)K, sizeof *seen);
  uint8_t *common = pb_calloc((size_t)K, 1);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *src = &meta->sources[s];
    for (int32_t i = 0; i < src->n_images; i++)
      if (src->split[i] == PB_SPLIT_EVAL && seen[src->labels[i]] == s) seen[src->labels[i]] = s + 1;
  }
  for (int32_t y = 0; y < K; y++) common[y] = seen[y] == meta->n_sources;
  free(seen);
  *max_classes = K;
  return common;
}

struct pb_bounds__subset {
  int32_t *label, *pred0, *pred1;
  float *s0, *s1, *m0, *m1;
};

static void pb_bounds__matched_cell(const struct pb_cell_view *d, const int32_t *pos, int32_t m, double *out)
{
  struct pb_bounds__subset u = {pb_malloc((size_t)m * sizeof(int32_t)), pb_malloc((size_t)m * sizeof(int32_t)),
                                  pb_malloc((size_t)m * sizeof(int32_t)), pb_malloc((size_t)m * sizeof(float)),
                                  pb_malloc((size_t)m * sizeof(float)), pb_malloc((size_t)m * sizeof(float)),
                                  pb_malloc((size_t)m * sizeof(float))};
  for (int32_t i = 0; i < m; i++) {
    int32_t p = pos[i];
    u.label[i] = d->label[p], u.pred0[i] = d->pred0[p], u.pred1[i] = d->pred1[p];
    u.s0[i] = d->s0[p], u.s1[i] = d->s1[p], u.m0[i] = d->m0[p], u.m1[i] = d->m1[p];
  }
  struct pb_cell_view in = *d; /* the cell's names and threshold, the subsample's records */
  in.n = m;
  in.label = u.label, in.pred0 = u.pred0, in.s0 = u.s0, in.m0 = u.m0;
  in.pred1 = u.pred1, in.s1 = u.s1, in.m1 = u.m1;
  struct pb_cell_bounds b;
  if (m > 0 && pb_bounds_cell(&in, 1, &b) == 0) {
    out[0] = b.H_I5[1] - b.H_I5[0];
    out[1] = b.L_I5[1] - b.L_I5[0];
    out[2] = b.dMk_I5[1] - b.dMk_I5[0];
    out[3] = b.H_I0[1];
  } else {
    out[0] = out[1] = out[2] = out[3] = NAN;
  }
  free(u.label), free(u.pred0), free(u.pred1), free(u.s0), free(u.s1), free(u.m0), free(u.m1);
}

/* Scratch of the permutation control, per thread (cells of at most the size it was made for). */
struct pb_bounds__perm_scratch {
  int32_t *perm, *order, *cbeg;
  uint8_t *a, *b; /* per record: clean correct (1), and accepted (2); perturbed correct (1), accepted (2) */
  double *diff;   /* M - M' of a replicate's pairs correct on both sides, in record order */
};

static void pb_bounds__perm_scratch_init(struct pb_bounds__perm_scratch *p, int32_t cap)
{
  p->perm = pb_malloc((size_t)cap * sizeof *p->perm);
  p->order = pb_malloc((size_t)cap * sizeof *p->order);
  p->cbeg = pb_malloc(((size_t)cap + 1) * sizeof *p->cbeg);
  p->a = pb_malloc((size_t)cap);
  p->b = pb_malloc((size_t)cap);
  p->diff = pb_malloc((size_t)cap * sizeof *p->diff);
}

static void pb_bounds__perm_scratch_free(struct pb_bounds__perm_scratch *p)
{
  free(p->perm), free(p->order), free(p->cbeg), free(p->a), free(p->b), free(p->diff);
}

/* H.2's empirical control: H, L and dM_k under uniform within-class
 * permutations of the perturbed records, averaged over the replicates (dM_k
 * over replicates with K > 0).  The classes and the records' correctness and
 * acceptance are the same in every replicate, so they are found once; each
 * replicate is pb_resample_perm_within_class's permutation (the same stream from the
 * same grouping), and the numerator is summed in record order. */
static void pb_bounds__perm_control(const struct pb_cell_view *d, const struct pb_bounds_options *opt,
                                      struct pb_bounds__perm_scratch *p, double out[3])
{
  const float tau = d->tau;
  const int32_t n = d->n, nc = pb_resample_perm_classes(n, d->label, p->order, p->cbeg);
  for (int32_t i = 0; i < n; i++) {
    p->a[i] = (uint8_t)((d->pred0[i] == d->label[i]) | (d->s0[i] >= tau) << 1);
    p->b[i] = (uint8_t)((d->pred1[i] == d->label[i]) | (d->s1[i] >= tau) << 1);
  }
  double h = 0, l = 0, dm = 0;
  int32_t nd = 0;
  for (int32_t r = 0; r < opt->perm_replicates; r++) {
    pb_resample_perm_within_grouped(opt->seed, PB_RNG_PERM_WITHIN, (uint64_t)d->index, (uint32_t)r, nc, p->order, p->cbeg,
                                    p->perm);
    int64_t H = 0, L = 0, K = 0;
    /* without a branch: every pair's difference is stored, and kept (K
     * advanced) when it is correct on both sides; then summed in order */
    for (int32_t i = 0; i < n; i++) {
      const int32_t j = p->perm[i];
      const unsigned a = p->a[i], b = p->b[j];
      H += (a == 3) & (b == 2); /* clean correct accepted, perturbed wrong accepted */
      L += (a == 3) & (b == 1); /* clean correct accepted, perturbed correct rejected */
      p->diff[K] = (double)d->m0[i] - (double)d->m1[j];
      K += a & b & 1; /* correct on both sides */
    }
    double num = 0;
    for (int64_t k = 0; k < K; k++) num += p->diff[k];
    h += (double)H / n;
    l += (double)L / n;
    if (K > 0) {
      dm += num / K;
      nd++;
    }
  }
  out[0] = h / opt->perm_replicates;
  out[1] = l / opt->perm_replicates;
  out[2] = nd ? dm / nd : NAN;
}

/* Threshold of each of the rank's cells @p refs: --tau, or the protocol's development threshold. */
static int pb_bounds__taus(const struct pb_stage *st, const struct pb_cell_ref *refs, int64_t n,
                             const struct pb_bounds_options *opt, float *tau)
{
  for (int64_t c = 0; c < n; c++) {
    const struct pb_cell_ref *r = &refs[c];
    tau[c] = opt->have_tau ? opt->tau : st->protocol.src[r->source].tau[r->model];
    if (isnan(tau[c])) {
      pb_error_set("source %s, model %s: no development threshold (the source has no development images); "
                   "give --tau", st->meta->sources[r->source].name, st->meta->model_ids[r->model]);
      return PB_FAIL;
    }
  }
  return PB_OK;
}

/* Records of the cells not computed: NaN but for tier, panel and threshold;
 * i5[c]: the cell's I5 pass (1) or grid pass (0). */
static void pb_bounds__init_recs(const struct pb_stage *st, const struct pb_cell_ref *refs, int64_t n,
                                   const struct pb_bounds_options *opt, const float *tau, uint8_t *i5, double *recs)
{
  for (int64_t c = 0; c < n; c++) {
    const struct pb_cell_ref *r = &refs[c];
    int panel = st->protocol.src[r->source].panel[r->model * st->meta->sources[r->source].n_conditions + r->condition];
    i5[c] = opt->i5_scope == PB_BOUNDS_I5_ALL || (opt->i5_scope == PB_BOUNDS_I5_PANEL && panel);
    double *rec = recs + c * PB_IF_N;
    for (int f = 0; f < PB_IF_N; f++) rec[f] = NAN;
    rec[PB_IF_TIER] = st->protocol.src[r->source].tier[r->condition];
    rec[PB_IF_PANEL] = panel;
    rec[PB_IF_TAU] = tau[c];
  }
}

/* One pass over the piece's cells whose i5 flag is @p pass (tau, i5 and recs
 * are the piece's): the kernel, Table 10 ratios and the permutation control.
 * A cell's failure goes to @p fe, the lowest cell index first. */
static void pb_bounds__pass(const struct pb_stage *st, const struct pb_cell_block *b,
                              const struct pb_bounds_options *opt, const float *tau, const uint8_t *i5, int pass,
                              double *recs, struct pb_bounds_wit *wit, struct pb_progress *prog,
                              struct pb_error_first *fe)
{
  int32_t nmax = 1;
  for (int64_t c = 0; c < b->n_cells; c++) nmax = b->cells[c].n > nmax ? b->cells[c].n : nmax;
#pragma omp parallel
  {
    double *scratch = NULL;
    int32_t cap = 0;
    struct pb_bounds__perm_scratch perm;
    pb_bounds__perm_scratch_init(&perm, nmax);
#pragma omp for schedule(dynamic, 8)
    for (int64_t c = 0; c < b->n_cells; c++) {
      if (i5[c] != pass) continue;
      const struct pb_cell_view d = pb_cells_view(st->meta, &b->cells[c], tau[c]);
      struct pb_cell_bounds cb;
      double *rec = recs + c * PB_IF_N;
      if (pb_bounds_cell(&d, pass, &cb) != 0) pb_error_first_record(fe, b->first + c);
      if (wit) { /* the cell's slice of the rank's witnesses, sized from the metadata */
        const int64_t o = wit->off[b->first - st->first + c], len = wit->off[b->first - st->first + c + 1] - o;
        int32_t *const perm[PB_WITNESS_N] = {wit->perm[0] + o, wit->perm[1] + o, wit->perm[2] + o, wit->perm[3] + o};
        const int rc = len == d.n ? pb_bounds_witness_cell(&d, pass, perm)
                                  : pb_cell_error(&d, -1, "bounds witnesses: %d records, %lld expected", d.n, (long long)len);
        if (rc != 0) pb_error_first_record(fe, b->first + c);
      }
      pb_bounds__pack(&cb, rec);
      if (d.n > cap) {
        cap = d.n;
        scratch = pb_realloc(scratch, 2 * (size_t)cap * sizeof *scratch);
      }
      pb_bounds__ratios(&d, scratch, rec + PB_IF_VR_C);
      if (opt->perm_replicates > 0) pb_bounds__perm_control(&d, opt, &perm, rec + PB_IF_H_PERM);
      pb_progress_step(prog, 1);
    }
    free(scratch);
    pb_bounds__perm_scratch_free(&perm);
  }
}

/* Appendix B.2's matched-support subsamples of one source, one per seed. */
struct pb_bounds__match {
  int32_t *pos[PB_BOUNDS_N_MATCH_SEEDS], m[PB_BOUNDS_N_MATCH_SEEDS];
};

static void pb_bounds__match_prep(const struct pb_meta *meta, int32_t s, const uint8_t *common,
                                    struct pb_bounds__match *mt)
{
  for (int j = 0; j < PB_BOUNDS_N_MATCH_SEEDS; j++) {
    mt->pos[j] = pb_malloc(((size_t)meta->sources[s].n_images + 1) * sizeof *mt->pos[j]);
    mt->m[j] = pb_bounds__match_sample(meta, s, PB_BOUNDS_MATCH_SEED0 + (uint64_t)j, common, mt->pos[j]);
  }
}

static void pb_bounds__match_free(struct pb_bounds__match *mt)
{
  for (int j = 0; j < PB_BOUNDS_N_MATCH_SEEDS; j++) free(mt->pos[j]);
}

/* Appendix B.2: every panel cell of the piece on each seed's matched-support subsample. */
static void pb_bounds__matched(const struct pb_stage *st, const struct pb_cell_block *b, const float *tau,
                                 const struct pb_bounds__match *mt, double *recs)
{
  for (int j = 0; j < PB_BOUNDS_N_MATCH_SEEDS; j++)
#pragma omp parallel for schedule(dynamic, 4)
    for (int64_t c = 0; c < b->n_cells; c++)
      if (recs[c * PB_IF_N + PB_IF_PANEL] == 1) {
        const struct pb_cell_view d = pb_cells_view(st->meta, &b->cells[c], tau[c]);
        pb_bounds__matched_cell(&d, mt->pos[j], mt->m[j], recs + c * PB_IF_N + PB_IF_MATCH + 4 * j);
      }
}

/* What the pieces of one source share, and where they go. */
struct pb_bounds__ctx {
  const struct pb_bounds_options *opt;
  const float *tau;        /* the rank's cells */
  const uint8_t *i5;
  double *recs;
  struct pb_bounds_wit *wit; /* --witnesses, else NULL */
  struct pb_bounds_lsets_cells *lc; /* Tables 47-48 counted in this pass (labels = single), else NULL */
  const uint8_t *common;   /* B.2's common classes */
  struct pb_progress prog;
  struct pb_error_first fe;
  struct pb_timer *tm;
};

/* Whether this rank has cells of source s. */
static int pb_bounds__has_cells(const struct pb_cells_stream *cs, int32_t s)
{
  for (int64_t c = cs->first; c < cs->last; c++)
    if (cs->all[c].source == s) return 1;
  return 0;
}

/* Source s's pieces: the per-source parts (matched-support subsamples,
 * clean-answer support, calibration fits), then each piece's load, grid and
 * I5 passes, matched support, support and calibration.  With collective
 * reads the ranks agree on the status after every piece, so all stop before
 * the next collective read; with independent reads (pb_store_agree agrees
 * nothing) a rank without cells of s skips it. */
static int pb_bounds__source(const struct pb_stage *st, struct pb_cells_stream *cs, int32_t s,
                               struct pb_bounds__ctx *x)
{
  if (pb_store_reads_alone(st->store) && !pb_bounds__has_cells(cs, s)) return PB_OK;
  const struct pb_bounds_options *opt = x->opt;
  const int target = pb_meta_target(st->meta, s) == s;
  struct pb_bounds__match mt = {{NULL}, {0}};
  struct pb_bounds_support_src sup = {0, 0, NULL};
  struct pb_bounds_calib_src cal = {0, NULL};
  if (opt->matched) pb_bounds__match_prep(st->meta, s, x->common, &mt);
  pb_timer_lap(x->tm, "matched_support");
  int status = target ? pb_bounds_support_prep(st, s, &sup) : PB_OK;
  pb_timer_lap(x->tm, "clean_support");
  if (status == PB_OK && target && opt->calibration) status = pb_bounds_calib_prep(st, s, &cal);
  pb_timer_lap(x->tm, "calibration");
  int64_t *ls_off = NULL;
  int32_t *ls_ids = NULL;
  if (x->lc && pb_lsets_source_has(&st->meta->sources[s])) pb_lsets_eval(&st->meta->sources[s], &ls_off, &ls_ids);
  const int32_t n_pieces = status == PB_OK ? pb_cells_stream_pieces(cs, s) : 0;
  for (int32_t j = 0; j < n_pieces && status == PB_OK; j++) {
    status = pb_cells_stream_load(cs, j);
    pb_timer_lap(x->tm, "load");
    const struct pb_cell_block *b = &cs->block;
    const int64_t off = b->first - st->first;
    double *recs = x->recs + off * PB_IF_N;
    static const char *const pass_names[2] = {"grid_pass", "i5_pass"};
    for (int pass = 0; pass < 2 && status == PB_OK && !pb_error_first_any(&x->fe); pass++) {
      pb_bounds__pass(st, b, opt, x->tau + off, x->i5 + off, pass, recs, x->wit, &x->prog, &x->fe);
      pb_timer_lap(x->tm, pass_names[pass]);
    }
    if (status == PB_OK) status = pb_error_first_status(&x->fe);
    if (status == PB_OK && opt->matched) pb_bounds__matched(st, b, x->tau + off, &mt, recs);
    pb_timer_lap(x->tm, "matched_support");
    if (status == PB_OK) pb_bounds_support_cells(st, &sup, b, recs);
    pb_timer_lap(x->tm, "clean_support");
    if (status == PB_OK) pb_bounds_calib_cells(st, &cal, b, recs);
    pb_timer_lap(x->tm, "calibration");
    if (status == PB_OK && ls_off) {
      pb_bounds_lsets_block(st->meta, b, s, ls_off, ls_ids, x->tau + off, x->lc->rec + off * PB_LS_N_SLOTS,
                            x->lc->dmk + 2 * off);
      pb_timer_lap(x->tm, "label_sets");
    }
    status = pb_store_agree(st->store, status);
  }
  free(ls_off);
  free(ls_ids);
  pb_bounds__match_free(&mt);
  pb_bounds_support_free(&sup);
  pb_bounds_calib_free(&cal);
  return status;
}

/* All cells of this rank, a piece at a time (pb_cells_stream_*), so the rank
 * holds one piece's records instead of its whole share. */
static int pb_bounds__compute(const struct pb_stage *st, const struct pb_bounds_options *opt, double *recs,
                                struct pb_bounds_wit *wit, struct pb_bounds_lsets_cells *lc, struct pb_timer *tm)
{
  const int64_t n = st->last - st->first;
  struct pb_cells_stream cs;
  /* F.1's multiclass Brier scores need the collision column: read with the cells only under --calibration (and
   * only where the store has one, pb_cells_stream_open) */
  const int fields = PB_FIELD_PRED | PB_FIELD_SMAX | PB_FIELD_PTRUE | (opt->calibration ? PB_FIELD_COLLISION : 0);
  pb_cells_stream_open(st->store, st->comm, st->first, st->last, fields, &cs);
  float *tau = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *tau);
  uint8_t *i5 = pb_calloc((size_t)(n > 0 ? n : 1), 1);
  const struct pb_cell_ref *refs = cs.all + st->first;
  pb_timer_lap(tm, "load"); /* the stage's opening (protocol included) */
  int status = pb_bounds__taus(st, refs, n, opt, tau);
  pb_bounds__init_recs(st, refs, n, opt, tau, i5, recs);
  status = pb_error_agree(st->comm, status);
  /* every read of the loop below is this rank's own: its ranks, whose cells mostly lie in different sources,
   * do not wait for each other source by source (docs/scaling.md, "Sources in lock step") */
  const int alone =
    status == PB_OK && pb_store_reads_independent(st->store, fields | (opt->calibration ? PB_BOUNDS_CALIB_FIELDS : 0));
  /* which way the reads went (tests/mpi/bounds_ranks.sh asks, so that the independent way cannot vanish unseen) */
  if (pb_log_verbosity() >= 2)
    pb_message("bounds: %s", alone ? "independent reads (each rank its own sources)" : "collective reads, source by source");
  int32_t K;
  struct pb_bounds__ctx x = {.opt = opt, .tau = tau, .i5 = i5, .recs = recs, .wit = wit, .lc = lc, .common = pb_bounds__common(st->meta, &K), .tm = tm};
  pb_error_first_init(&x.fe);
  pb_progress_begin(&x.prog, "bounds", "cells", n); /* each cell goes through one of the two passes */
  for (int32_t s = 0; s < st->meta->n_sources && status == PB_OK; s++)
    if (!pb_meta_is_probe(&st->meta->sources[s])) status = pb_bounds__source(st, &cs, s, &x);
  if (alone) status = pb_store_reads_collective(st->store, status);
  pb_progress_end(&x.prog);
  free((void *)x.common);
  pb_cells_stream_close(&cs);
  free(tau);
  free(i5);
  return status;
}

static int pb_bounds__write_cells(struct pb_stage *st, const double *recs)
{
  const int64_t n = st->last - st->first;
  int status = pb_fields_write(&pb_bounds_fields, st->results, st->n_cells, st->first, n, recs);
  if (status != PB_OK) return status;
  struct pb_text t = {0}, head = {0};
  for (int64_t c = 0; c < n; c++) {
    const struct pb_cell_ref r = pb_dist_cell_at(st->meta, st->first + c);
    const struct pb_source *src = &st->meta->sources[r.source];
    pb_text_printf(&t, "%s\t%s\t%s", st->meta->model_ids[r.model], src->name, src->conditions[r.condition]);
    pb_fields_tsv_values(&pb_bounds_fields, recs + c * PB_IF_N, 0, &t);
    pb_text_printf(&t, "\n");
  }
  pb_fields_tsv_header(&pb_bounds_fields, "model\tsource\tcondition", 0, &head);
  pb_text_printf(&head, "\n");
  status = pb_results_tsv(st->results, "bounds.tsv", head.buf, t.buf, t.len);
  pb_text_free(&t);
  pb_text_free(&head);
  return status;
}

/* `pairbound bounds` (the registry's run). */
static int pb_bounds__stage_run(const struct pb_stage_call *call, const void *opts)
{
  const struct pb_bounds_options *opt = opts;
  struct pb_stage st;
  if (pb_stage_begin(call, &st)) return PB_FAIL;
  const int64_t n = st.last - st.first;
  double *recs = pb_malloc((size_t)(n > 0 ? n : 1) * PB_IF_N * sizeof *recs);
  struct pb_bounds_wit wit;
  if (opt->witnesses) pb_bounds_witness_setup(&st, &wit);
  /* Tables 47-48 need the stored predictions: under labels = single those are the ones this pass reads */
  struct pb_bounds_lsets_cells lc = {NULL, NULL};
  const int ls_here = pb_store_has_lsets(st.meta) && pb_store_labels_mode(st.store) != PB_LABELS_SET;
  if (ls_here) pb_bounds_lsets_cells_alloc(n, &lc);
  int status = pb_bounds__compute(&st, opt, recs, opt->witnesses ? &wit : NULL, ls_here ? &lc : NULL, &st.timer);
  status = pb_error_agree(st.comm, status);
  pb_timer_skip(&st.timer);
  if (status == PB_OK) status = pb_bounds__write_cells(&st, recs);
  if (status == PB_OK && opt->witnesses) status = pb_bounds_witness_write(&st, &wit);
  if (opt->witnesses) pb_bounds_witness_free(&wit);
  struct pb_bounds_lsets lsets = {NULL, {0, NULL}};
  /* under labels = set, the re-read of Tables 47-48 is a phase of its own (under single, the pass's) */
  const int ls_reread = pb_store_has_lsets(st.meta) && !ls_here;
  if (ls_reread) pb_timer_lap(&st.timer, "write");
  if (status == PB_OK) status = pb_bounds_lsets(&st, opt, ls_here ? &lc : NULL, &lsets);
  if (ls_reread) pb_timer_lap(&st.timer, "label_sets");
  pb_bounds_lsets_cells_free(&lc);
  if (status == PB_OK) {
    /* every rank adds up its own cells; the resampling runs on all of them */
    struct pb_bounds_intervals iv;
    status = pb_bounds_intervals(st.meta, recs, st.first, n, opt, st.comm, &iv);
    if (status == PB_OK) {
      struct pb_bounds_sum S;
      status = pb_bounds_summarise(st.meta, recs, st.first, n, st.comm, &S);
      if (status == PB_OK && st.rank == 0) status = pb_bounds_report(st.meta, &st.protocol, &S, st.results, opt, &iv, &lsets);
      pb_bounds_sum_free(&S);
    }
    pb_comm_bcast(&status, 1, MPI_INT, 0, st.comm);
    free(iv.vr);
  }
  pb_bounds_lsets_free(&lsets);
  pb_timer_end(&st.timer, "write", st.comm);
  const double grid = pb_timer_get(&st.timer, "grid_pass");
  double rb = 0, rs = 0;
  pb_store_read_stats(st.store, &rb, &rs);
  pb_message("bounds: load %.3f s (store reads %.0f MB in %.3f s, %.2f GB/s); grid pass %.3f s (%.1f M paired records/s); I5 + variable-support pass %.3f s; "
             "matched support %.3f s; clean-answer support %.3f s; calibration %.3f s; write %.3f s",
             pb_timer_get(&st.timer, "load"), rb / 1e6, rs, rs > 0 ? rb / rs / 1e9 : 0.0, grid,
             grid > 0 ? pb_meta_paired_records(st.meta) / grid / 1e6 : 0.0,
             pb_timer_get(&st.timer, "i5_pass"), pb_timer_get(&st.timer, "matched_support"),
             pb_timer_get(&st.timer, "clean_support"), pb_timer_get(&st.timer, "calibration"),
             pb_timer_get(&st.timer, "write"));
  free(recs);
  return pb_stage_end(&st, status);
}

static const struct pb_stage_inherit pb_bounds__inherits[] = {
  {"seed", "run.seed", 0}, {"group_draws", "run.group_draws", 0}, {NULL, NULL, 0}};

const struct pb_stage_desc pb_bounds_stage = {
  .name = "bounds",
  .store = {.reads = 1, .needs = PB_STAGE_NEEDS_CELLS | PB_STAGE_NEEDS_EVAL, .figures = 1},
  .options = {.table = pb_bounds_option_table, .size = sizeof(struct pb_bounds_options)},
  .run = pb_bounds__stage_run,
  .pipeline = {.report = "REPORT.md", .order = 0, .inherits = pb_bounds__inherits, .summary = pb_bounds_summary},
  .help = "Sharp identification intervals of H, L and dM_k at information levels I0, Ik and I5 for every model x\n"
          "condition cell (seed 000 Sections 3-4, Appendix A-C; docs/bounds.md), with observed and independent\n"
          "values and the diagnostics tables (widths, decomposition, variance ratios, accuracy-only K, matched\n"
          "support). Writes OUTDIR/results.h5 (/bounds), OUTDIR/report/bounds.tsv, identification_*.tsv, REPORT.md.\n",
};
