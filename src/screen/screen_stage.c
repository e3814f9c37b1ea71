/* `pairbound screen`: prospective screening (seed 000 Section 5, Appendix
 * E.1-E.4).  Work unit = (target source, model): the clean-correct image set,
 * every score and every fit depend on the unit only, the outcome on the
 * condition, so each score is ranked once per unit and each cell costs O(n)
 * per score.  This file: options, set-up, the development selection and
 * the stage's run; the unit's computation is screen_kernel_unit.c, the rows
 * read and the block loop screen_stage_blocks.c, the outputs
 * screen_stage_write.c.  docs/screen.md describes every score, rule and output. */
#include "config.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/blocks.h"
#include "pairbound/comm.h"
#include "pairbound/dist.h"
#include "pairbound/env.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/fields.h"
#include "pairbound/figure.h"
#include "pairbound/parse.h"
#include "pairbound/progress.h"
#include "pairbound/protocol.h"
#include "pairbound/registry.h"
#include "pairbound/resample.h"
#include "pairbound/rng.h"
#include "pairbound/screen.h"
#include "pairbound/sort.h"
#include "pairbound/stage.h"
#include "pairbound/strmap.h"
#include "pairbound/timer.h"
#include "screen_internal.h"
#include "screen_stage_internal.h"

const char *const pb_screen_row_names[PB_SR_FIXED] = {
  "S", "U", "delta", "ret", "margin", "entropy", "class_delta", "class_U_cc", "class_U_all", "g_S", "g_SU",
  "g_SUret", "A3", "U_derange", "U_loo", "random", "S_nonsingleton", "U_nonsingleton", "S_classcc", "U_classcc",
  "U_rank", "U_pow05", "U_pow2", "delta_nonsingleton", "delta_derange", "S_tiebreak", "U_tiebreak", "delta_tiebreak",
  "ret_tiebreak"};

/* ------------------------------------------------------------ options */

static void pb_screen__probeset_free(struct pb_screen_probeset *ps)
{
  free(ps->name);
  free(ps->source);
  pb_parse_words_free(ps->conditions, ps->n_conditions);
  memset(ps, 0, sizeof *ps);
}

/* --targets SRC,... (replaces the list) */
static int pb_screen__opt_targets(void *opts, const char *label, const char *v)
{
  struct pb_screen_options *o = opts;
  pb_parse_words_free(o->targets, o->n_targets);
  o->n_targets = pb_parse_words(v, ",", &o->targets);
  if (o->n_targets > 0) return PB_OK;
  pb_error_set("%s needs at least one source, got '%s'", label, v);
  return PB_FAIL;
}

/* --probe [NAME=]SRC[:cond,...] (adds a set; one primary set at most) */
static int pb_screen__opt_probe(void *opts, const char *label, const char *v)
{
  struct pb_screen_options *o = opts;
  struct pb_screen_probeset ps;
  if (pb_screen_parse_probe(v, &ps) != PB_OK) return PB_FAIL;
  for (int32_t p = 0; p < o->n_probesets; p++)
    if (!ps.name && !o->probesets[p].name) {
      pb_screen__probeset_free(&ps);
      pb_error_set("only one %s without NAME= (the primary set), got another: '%s'", label, v);
      return PB_FAIL;
    }
  o->probesets = pb_realloc(o->probesets, (size_t)(o->n_probesets + 1) * sizeof *o->probesets);
  o->probesets[o->n_probesets++] = ps;
  return PB_OK;
}

/* --subset-sizes M,... or none */
static int pb_screen__opt_subset_sizes(void *opts, const char *label, const char *v)
{
  struct pb_screen_options *o = opts;
  o->n_subset_sizes = 0;
  if (!strcmp(v, "none")) return PB_OK;
  char *list = pb_strdup(v), *save = NULL;
  int bad = 0;
  for (char *w = strtok_r(list, ",", &save); w && !bad; w = strtok_r(NULL, ",", &save)) {
    int64_t m;
    bad = pb_parse_int(w, 1, 1000, &m) || o->n_subset_sizes == PB_SCREEN_MAX_SUBSET_SIZES;
    if (!bad) o->subset_sizes[o->n_subset_sizes++] = (int32_t)m;
  }
  free(list);
  if (!bad && o->n_subset_sizes > 0) return PB_OK;
  pb_error_set("%s takes up to 8 sizes m >= 1 (e.g. 1,2,3,6,9) or 'none', got '%s'", label, v);
  return PB_FAIL;
}

/* --subset-tiers mild,severe,extreme | all | none (a bit mask of tiers) */
static int pb_screen__opt_subset_tiers(void *opts, const char *label, const char *v)
{
  struct pb_screen_options *o = opts;
  o->subset_tiers = 0;
  if (!strcmp(v, "none")) return PB_OK;
  if (!strcmp(v, "all")) {
    o->subset_tiers = (1 << PB_N_TIERS) - 1;
    return PB_OK;
  }
  char *list = pb_strdup(v), *save = NULL;
  int bad = 0;
  for (char *w = strtok_r(list, ",", &save); w && !bad; w = strtok_r(NULL, ",", &save)) {
    int t = -1;
    for (int k = 0; k < PB_N_TIERS; k++)
      if (!strcmp(w, pb_protocol_tier_name(k))) t = k;
    bad = t < 0;
    if (!bad) o->subset_tiers |= 1 << t;
  }
  free(list);
  if (!bad) return PB_OK;
  pb_error_set("%s takes mild,severe,extreme, 'all' or 'none', got '%s'", label, v);
  return PB_FAIL;
}

#define PB_O(member) PB_OPTION_FIELD(struct pb_screen_options, member)
const struct pb_option pb_screen_option_table[] = {
  {.name = "targets", .type = PB_OPTION_CUSTOM, .parse = pb_screen__opt_targets, .metavar = "SRC,...",
   .help = "target sources whose perturbed conditions are screened (default: the store's real sources that share "
           "images with the primary probe source; docs/store.md, \"Roles\")"},
  {.name = "probe", .type = PB_OPTION_CUSTOM, .parse = pb_screen__opt_probe, .metavar = "[NAME=]SRC[:cond,...]",
   .repeatable = 1,
   .help = "probe set: responses of the same images (joined by image id) under conditions of SRC (default: every "
           "perturbed condition). Without NAME= it replaces the primary set (default every perturbed condition of "
           "the synthetic source that shares the most images with the real ones), which defines U, ret, delta, A3 and the fits; with NAME= it adds scores U_NAME and A3_NAME "
           "(NAME TTA also gives U - TTA contrasts); repeatable (in a run configuration: one probe = line each)"},
  {.name = "seed", .type = PB_OPTION_INT, PB_O(seed), .metavar = "N", .def = "20260912",
   .help_default = 1,
   .help = "seed of derangements, random selection, probe subsets and the bootstrap draws (default 20260912; under "
           "`pairbound run`: the run seed + 4, docs/run.md)"},
  {.name = "derange", .type = PB_OPTION_INT, PB_O(n_derange), .metavar = "N", .imax = 1000, .def = "10",
   .help = "derangement draws averaged in the identity ablation"},
  {.name = "split", .type = PB_OPTION_CHOICE, PB_O(swapped), .metavar = "eval|dev", .choices = "eval|dev",
   .def = "eval", .help_default = 1,
   .help = "images evaluated: evaluation (default; fits on development images) or development (the swapped-split "
           "check of Tables 23-24; fits on evaluation images)"},
  {.name = "tiers", .type = PB_OPTION_CHOICE, PB_O(eval_tiers), .metavar = "dev|eval", .choices = "dev|eval",
   .def = "dev", .help_default = 1,
   .help = "tiers from mean development (default) or evaluation accuracy across models (Table 24)"},
  {.name = "subset-sizes", .type = PB_OPTION_CUSTOM, .parse = pb_screen__opt_subset_sizes, .metavar = "M,...|none",
   .def = "1,2,3,6,9", .help = "sizes of the prefixed probe subsets of Table 28 ('none' to skip)"},
  {.name = "subsets", .type = PB_OPTION_INT, PB_O(subsets_per_size), .metavar = "N", .imin = 1, .imax = 10000,
   .def = "20", .help = "subsets per size: all of them when there are at most N, else N seeded draws"},
  {.name = "subset-tiers", .type = PB_OPTION_CUSTOM, .parse = pb_screen__opt_subset_tiers, .metavar = "LIST",
   .def = "mild", .help = "tiers whose cells get the subset scores: mild,severe,extreme, all or none"},
  {.name = "no-severity-sets", .type = PB_OPTION_FLAG, PB_O(severity_sets), .flag = 0, .ini = "severity_sets",
   .def = "1",
   .help = "do not add sets sevN grouping the primary conditions by a trailing -N in their names"},
  {.name = "group-draws", .type = PB_OPTION_INT, PB_O(group_draws), .metavar = "N", .imax = PB_BOOT_MAX_DRAWS,
   .def = "0", .help_default = 1,
   .help = "model-group bootstrap draws for the intervals of the paired differences U-S, U-delta, U-ret, U-A3 "
           "(report/screen_intervals.tsv; default 0 = none; the paper uses 2000)"},
  {.name = "class-draws", .type = PB_OPTION_INT, PB_O(class_draws), .metavar = "M", .imax = PB_BOOT_MAX_DRAWS,
   .def = "0", .help_default = 1,
   .help = "class bootstrap draws for the same differences (class-weighted AUROC and coverage, one draw per source "
           "shared by its cells; default 0 = none; the paper uses 200)"},
  {.name = NULL}};
#undef PB_O

/* What pb_options_free leaves: the targets and probe sets. */
static void pb_screen__options_release(void *opts)
{
  struct pb_screen_options *opt = opts;
  pb_parse_words_free(opt->targets, opt->n_targets);
  for (int32_t p = 0; p < opt->n_probesets; p++) pb_screen__probeset_free(&opt->probesets[p]);
  free(opt->probesets);
  memset(opt, 0, sizeof *opt);
}

int pb_screen_parse_probe(const char *spec, struct pb_screen_probeset *ps)
{
  memset(ps, 0, sizeof *ps);
  const char *eq = strchr(spec, '='), *colon;
  const char *src = spec;
  if (eq) {
    for (const char *c = spec; c < eq; c++)
      if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-') {
        pb_error_set("--probe %s: a probe set name uses letters, digits, '_' and '-'", spec);
        return PB_FAIL;
      }
    if (eq == spec) {
      pb_error_set("--probe %s: empty probe set name", spec);
      return PB_FAIL;
    }
    ps->name = pb_strdup(spec);
    ps->name[eq - spec] = '\0';
    src = eq + 1;
  }
  colon = strchr(src, ':');
  ps->source = pb_strdup(src);
  if (colon) ps->source[colon - src] = '\0';
  if (!ps->source[0]) {
    pb_error_set("--probe %s: missing source", spec);
    pb_screen__probeset_free(ps);
    return PB_FAIL;
  }
  if (colon) {
    ps->n_conditions = pb_parse_words(colon + 1, ",", &ps->conditions);
    if (ps->n_conditions == 0) {
      pb_error_set("--probe %s: empty condition list", spec);
      pb_screen__probeset_free(ps);
      return PB_FAIL;
    }
  }
  return PB_OK;
}

/* ------------------------------------------------------------ set-up */

static void pb_screen__pool_add(struct pb_screen__pool *pl, int32_t p, int32_t k)
{
  pl->ps = pb_realloc(pl->ps, (size_t)(pl->n + 1) * sizeof *pl->ps);
  pl->k = pb_realloc(pl->k, (size_t)(pl->n + 1) * sizeof *pl->k);
  pl->ps[pl->n] = p;
  pl->k[pl->n++] = k;
}

/* Natural probes (docs/screen.md): unless a set is named TTA, the fixed
 * transforms of the store's natural-role source become set TTA.  With a TTA
 * set, the candidates of the development selections are read through
 * trailing hidden sets: every perturbed condition of the TTA set's source
 * when it is a natural source (TTA^sel), and the primary set plus every
 * source marked extra:<primary source> (U^sel). */
static void pb_screen__natural_sets(struct pb_screen__ctx *X)
{
  const struct pb_meta *meta = X->meta;
  X->tta = -1;
  for (int32_t p = 1; p < X->n_ps; p++)
    if (X->ps[p].name && !strcasecmp(X->ps[p].name, "TTA")) X->tta = p;
  X->ps = pb_realloc(X->ps, (size_t)(X->n_ps + 2 + meta->n_sources) * sizeof *X->ps);
  int32_t nat = -1;
  for (int32_t s = 0; s < meta->n_sources && nat < 0; s++)
    if (meta->sources[s].role == PB_ROLE_NATURAL) nat = s;
  if (X->tta < 0 && nat >= 0) {
    const struct pb_source *src = &meta->sources[nat];
    struct pb_screen__pset *ps = &X->ps[X->tta = X->n_ps++];
    int32_t nf = src->role_fixed > 0 ? src->role_fixed : src->n_conditions - 1;
    *ps = (struct pb_screen__pset){pb_strdup("TTA"), nat, 0, pb_malloc((size_t)nf * sizeof(int32_t)), 0};
    for (int32_t c = 0; c < src->n_conditions && ps->n < nf; c++)
      if (c != src->clean) ps->cond[ps->n++] = c;
  }
  if (X->tta < 0) return;
  int32_t first_hidden = X->n_ps;
  const char *psrc = meta->sources[X->ps[0].src].name;
  for (int g = 0; g < 2; g++) {
    struct pb_screen__pool *pl = &X->pool[g];
    pl->n_pick = X->ps[g ? X->tta : 0].n;
    pl->ps = pb_malloc(sizeof(int32_t));
    pl->k = pb_malloc(sizeof(int32_t));
    if (g == 0)
      for (int32_t k = 0; k < X->ps[0].n; k++) pb_screen__pool_add(pl, 0, k);
    for (int32_t s = 0; s < meta->n_sources; s++) {
      const struct pb_source *src = &meta->sources[s];
      int take = g ? src->role == PB_ROLE_NATURAL && s == X->ps[X->tta].src
                   : src->role == PB_ROLE_EXTRA && !strcmp(src->role_of, psrc);
      if (!take) continue;
      struct pb_screen__pset *ps = &X->ps[X->n_ps];
      *ps = (struct pb_screen__pset){pb_strdup(g ? "(TTA candidates)" : "(U candidates)"), s, 0,
                                     pb_malloc((size_t)src->n_conditions * sizeof(int32_t)), 0};
      for (int32_t c = 0; c < src->n_conditions; c++)
        if (c != src->clean) pb_screen__pool_add(pl, X->n_ps, ps->n), ps->cond[ps->n++] = c;
      X->n_ps++;
    }
  }
  X->n_hidden = X->n_ps - first_hidden;
}

/* Severity sets (--severity-sets): the primary set's conditions grouped by a
 * trailing -N, one set sevN per severity, when every condition has one and
 * there are at least two. */
static void pb_screen__severity_sets(struct pb_screen__ctx *X)
{
  const struct pb_meta *meta = X->meta;
  const struct pb_screen_options *opt = X->opt;
  const struct pb_screen__pset *P = &X->ps[0];
  const struct pb_source *psrc = &meta->sources[P->src];
  int all_suffixed = 1;
  int32_t sev[16], n_sev = 0;
  for (int32_t k = 0; k < P->n && all_suffixed; k++) {
    const char *name = psrc->conditions[P->cond[k]], *dash = strrchr(name, '-');
    all_suffixed = dash && dash[1] && strspn(dash + 1, "0123456789") == strlen(dash + 1) && strlen(dash + 1) < 6;
    if (!all_suffixed) break;
    int32_t v = atoi(dash + 1), seen = 0;
    for (int32_t j = 0; j < n_sev; j++) seen |= sev[j] == v;
    if (!seen && n_sev < 16) sev[n_sev++] = v;
  }
  if (opt->severity_sets && all_suffixed && n_sev >= 2) {
    for (int32_t j = 1; j < n_sev; j++) /* ascending severities */
      for (int32_t i = j; i > 0 && sev[i - 1] > sev[i]; i--) {
        int32_t t = sev[i];
        sev[i] = sev[i - 1];
        sev[i - 1] = t;
      }
    for (int32_t j = 0; j < n_sev; j++) {
      char name[32];
      snprintf(name, sizeof name, "sev%d", sev[j]);
      int clash = 0;
      for (int32_t k = 1; k < X->n_ps; k++) clash |= !strcmp(X->ps[k].name, name);
      if (clash) continue;
      struct pb_screen__pset *ps = &X->ps[X->n_ps++];
      ps->name = pb_strdup(name);
      ps->severity = 1;
      ps->src = P->src;
      ps->cond = pb_malloc((size_t)P->n * sizeof(int32_t));
      for (int32_t k = 0; k < P->n; k++) {
        const char *dash = strrchr(psrc->conditions[P->cond[k]], '-');
        if (atoi(dash + 1) == sev[j]) ps->cond[ps->n++] = P->cond[k];
      }
    }
  }
}

/* Resolve probe sets and severity sets against the store. */
static int pb_screen__psets(struct pb_screen__ctx *X)
{
  const struct pb_meta *meta = X->meta;
  const struct pb_screen_options *opt = X->opt;
  /* the default primary set: every perturbed condition of the synthetic source the real ones share images with */
  const int32_t probe = pb_meta_role_probe(meta);
  struct pb_screen_probeset dflt = {NULL, probe >= 0 ? meta->sources[probe].name : NULL, 0, NULL};
  int have_primary = 0;
  for (int32_t p = 0; p < opt->n_probesets; p++) have_primary |= opt->probesets[p].name == NULL;
  int32_t n_in = opt->n_probesets + !have_primary;
  X->ps = pb_calloc((size_t)n_in + 16, sizeof *X->ps);
  for (int32_t q = 0; q < n_in; q++) {
    /* the primary set goes first */
    const struct pb_screen_probeset *in = NULL;
    if (q == 0) {
      in = &dflt;
      for (int32_t p = 0; p < opt->n_probesets; p++)
        if (!opt->probesets[p].name) in = &opt->probesets[p];
    } else {
      int32_t seen = 0;
      for (int32_t p = 0; p < opt->n_probesets && !in; p++)
        if (opt->probesets[p].name && ++seen == q) in = &opt->probesets[p];
    }
    struct pb_screen__pset *ps = &X->ps[X->n_ps++];
    ps->name = in->name ? pb_strdup(in->name) : NULL;
    if (!in->source) {
      pb_error_set("no probe source: no synthetic source shares images with a real source of the store (declare "
                   "one: pairbound roles STORE --set SRC=synthetic; or %s)",
                   X->from_config ? "set probe = SRC[:cond,...] in the [screen] section" : "give --probe SRC");
      return PB_FAIL;
    }
    ps->src = pb_meta_find_source(meta, in->source);
    if (ps->src < 0) {
      char names[512];
      pb_error_set("probe source %s is not in the store (%s)", in->source,
                   pb_meta_source_names(meta, names, sizeof names));
      return PB_FAIL;
    }
    const struct pb_source *src = &meta->sources[ps->src];
    ps->cond = pb_malloc((size_t)src->n_conditions * sizeof(int32_t));
    if (in->n_conditions == 0) {
      for (int32_t c = 0; c < src->n_conditions; c++)
        if (c != src->clean) ps->cond[ps->n++] = c;
    } else {
      for (int32_t j = 0; j < in->n_conditions; j++) {
        int32_t c = -1;
        for (int32_t k = 0; k < src->n_conditions && c < 0; k++)
          if (!strcmp(src->conditions[k], in->conditions[j])) c = k;
        if (c < 0) {
          pb_error_set("probe set %s: source %s has no condition %s", in->name ? in->name : "U", src->name,
                       in->conditions[j]);
          return PB_FAIL;
        }
        for (int32_t k = 0; k < ps->n; k++)
          if (ps->cond[k] == c) {
            pb_error_set("probe set %s: condition %s listed twice", in->name ? in->name : "U", in->conditions[j]);
            return PB_FAIL;
          }
        ps->cond[ps->n++] = c;
      }
    }
    if (ps->n == 0) {
      pb_error_set("probe set %s: no probe conditions", in->name ? in->name : "U");
      return PB_FAIL;
    }
    for (int32_t k = 0; k < q; k++)
      if (X->ps[k].name && ps->name && !strcmp(X->ps[k].name, ps->name)) {
        pb_error_set("probe set name %s given twice", ps->name);
        return PB_FAIL;
      }
  }
  pb_screen__severity_sets(X);
  pb_screen__natural_sets(X);
  if (X->n_ps - 1 - X->n_hidden > 64) {
    pb_error_set("at most 64 extra probe sets");
    return PB_FAIL;
  }
  return PB_OK;
}


/* Table 28 subsets of the primary set, fixed from the seed before any outcome:
 * every subset when there are at most subsets_per_size, else that many
 * distinct seeded draws. */
static void pb_screen__subsets(struct pb_screen__ctx *X)
{
  const struct pb_screen_options *opt = X->opt;
  int32_t P = X->ps[0].n, cap = 0;
  for (int32_t s = 0; s < opt->n_subset_sizes; s++) {
    int32_t m = opt->subset_sizes[s];
    if (m < 1 || m > P) continue;
    double total = 1; /* C(P, m) */
    for (int32_t j = 0; j < m; j++) total = total * (P - j) / (j + 1);
    int32_t want = total <= opt->subsets_per_size ? (int32_t)llround(total) : opt->subsets_per_size;
    for (int32_t j = 0; j < want; j++) {
      if (X->n_subsets == cap) {
        cap = cap ? 2 * cap : 64;
        X->sub_m = pb_realloc(X->sub_m, (size_t)cap * sizeof *X->sub_m);
        X->sub_idx = pb_realloc(X->sub_idx, (size_t)cap * sizeof *X->sub_idx);
      }
      int32_t *idx = pb_malloc((size_t)m * sizeof *idx);
      X->sub_m[X->n_subsets] = m;
      X->sub_idx[X->n_subsets++] = idx;
      if (total <= opt->subsets_per_size) {
        /* j-th combination in lexicographic order */
        if (j == 0) {
          for (int32_t k = 0; k < m; k++) idx[k] = k;
        } else {
          memcpy(idx, X->sub_idx[X->n_subsets - 2], (size_t)m * sizeof *idx);
          int32_t k = m - 1;
          while (idx[k] == P - m + k) k--;
          idx[k]++;
          for (int32_t t = k + 1; t < m; t++) idx[t] = idx[t - 1] + 1;
        }
      }
    }
    if (total > opt->subsets_per_size) {
      struct pb_rng rng;
      pb_rng_init(&rng, opt->seed, PB_RNG_SCREEN_SUBSET, (uint64_t)m, 0);
      int32_t *perm = pb_malloc((size_t)P * sizeof *perm);
      int32_t first = X->n_subsets - want;
      for (int32_t j = 0; j < want;) {
        for (int32_t k = 0; k < P; k++) perm[k] = k;
        for (int32_t k = 0; k < m; k++) { /* partial Fisher-Yates */
          int32_t r = k + (int32_t)pb_rng_below(&rng, (uint32_t)(P - k)), t = perm[k];
          perm[k] = perm[r];
          perm[r] = t;
        }
        qsort(perm, (size_t)m, sizeof *perm, pb_sort_cmp_i32);
        int dup = 0;
        for (int32_t q = 0; q < j && !dup; q++) dup = !memcmp(X->sub_idx[first + q], perm, (size_t)m * sizeof *perm);
        if (dup) continue;
        memcpy(X->sub_idx[first + j], perm, (size_t)m * sizeof *perm);
        j++;
      }
      free(perm);
    }
  }
  X->n_subsets_u = X->n_subsets;
  /* Table 32: the same index sets applied to the fixed natural transforms */
  if (X->tta >= 0 && X->ps[X->tta].n >= P && X->n_subsets > 0) {
    X->sub_m = pb_realloc(X->sub_m, (size_t)(2 * X->n_subsets) * sizeof *X->sub_m);
    X->sub_idx = pb_realloc(X->sub_idx, (size_t)(2 * X->n_subsets) * sizeof *X->sub_idx);
    for (int32_t j = 0; j < X->n_subsets_u; j++) {
      X->sub_m[X->n_subsets] = X->sub_m[j];
      X->sub_idx[X->n_subsets] = pb_malloc((size_t)X->sub_m[j] * sizeof(int32_t));
      memcpy(X->sub_idx[X->n_subsets++], X->sub_idx[j], (size_t)X->sub_m[j] * sizeof(int32_t));
    }
  }
}

/* The target sources: as given, else the real sources with cells that share images with the primary
 * probe source (by role, pb_meta_role_targets). */
static int pb_screen__targets(struct pb_screen__ctx *X)
{
  const struct pb_meta *meta = X->meta;
  const struct pb_screen_options *opt = X->opt;
  int32_t *dflt = pb_malloc((size_t)(meta->n_sources > 0 ? meta->n_sources : 1) * sizeof *dflt);
  int32_t n = opt->n_targets ? opt->n_targets : pb_meta_role_targets(meta, X->ps[0].src, dflt);
  if (n == 0) {
    pb_error_set("no target source: no real source with perturbed conditions shares images with the probe source %s "
                 "(declare one: pairbound roles STORE --set SRC=real; or %s)", meta->sources[X->ps[0].src].name,
                 X->from_config ? "set targets = SRC,... in the [screen] section" : "give --targets SRC,...");
    free(dflt);
    return PB_FAIL;
  }
  X->targets = pb_malloc((size_t)n * sizeof(int32_t));
  int status = PB_OK;
  for (int32_t t = 0; t < n && status == PB_OK; t++) {
    const char *name = opt->n_targets ? opt->targets[t] : meta->sources[dflt[t]].name;
    int32_t s = pb_meta_find_source(meta, name), twice = 0;
    for (int32_t k = 0; k < X->n_targets; k++) twice |= X->targets[k] == s;
    char names[512];
    if (s < 0) pb_error_set("target source %s is not in the store (%s)", name, pb_meta_source_names(meta, names, sizeof names));
    else if (twice) pb_error_set("target source %s given twice", name);
    else if (meta->sources[s].n_conditions < 2) pb_error_set("target source %s has no perturbed condition", name);
    else X->targets[X->n_targets++] = s;
    status = X->n_targets == t + 1 ? PB_OK : PB_FAIL;
  }
  free(dflt);
  if (status == PB_OK) qsort(X->targets, (size_t)X->n_targets, sizeof(int32_t), pb_sort_cmp_i32);
  return status;
}

/* Image-id joins from every target to every probe source (same id = same base image). */
static int pb_screen__joins(struct pb_screen__ctx *X)
{
  const struct pb_meta *meta = X->meta;
  X->join = pb_calloc((size_t)X->n_targets, sizeof *X->join);
  for (int32_t t = 0; t < X->n_targets; t++) {
    const struct pb_source *T = &meta->sources[X->targets[t]];
    X->join[t] = pb_calloc((size_t)meta->n_sources, sizeof **X->join);
    for (int32_t p = 0; p < X->n_ps; p++) {
      int32_t s = X->ps[p].src;
      if (X->join[t][s]) continue;
      const struct pb_source *S = &meta->sources[s];
      struct pb_strmap map;
      pb_strmap_init(&map);
      for (int32_t j = 0; j < S->n_images; j++) pb_strmap_put(&map, S->image_ids[j], j);
      int32_t *jn = X->join[t][s] = pb_malloc((size_t)(T->n_images > 0 ? T->n_images : 1) * sizeof(int32_t));
      for (int32_t i = 0; i < T->n_images; i++) {
        jn[i] = pb_strmap_get(&map, T->image_ids[i]);
        if (jn[i] >= 0 && S->labels[jn[i]] != T->labels[i]) {
          pb_error_set("image %s: label %d in target source %s but %d in probe source %s", T->image_ids[i],
                       T->labels[i], T->name, S->labels[jn[i]], S->name);
          pb_strmap_free(&map);
          return PB_FAIL;
        }
      }
      pb_strmap_free(&map);
    }
    for (int32_t i = 0; i < T->n_images; i++) X->n_joined += X->join[t][X->ps[0].src][i] >= 0;
  }
  return PB_OK;
}

static void pb_screen__layout(struct pb_screen__ctx *X)
{
  struct pb_screen_layout *L = &X->L;
  L->n_extra = X->n_ps - 1 - X->n_hidden;
  L->tta_rows = X->tta >= 0 ? PB_SR_FIXED + 2 * L->n_extra : -1;
  L->n_rows = PB_SR_FIXED + 2 * L->n_extra + (X->tta >= 0 ? PB_SCREEN_N_NATURAL : 0);
  L->row_names = pb_malloc((size_t)L->n_rows * sizeof(char *));
  L->extra_names = pb_malloc((size_t)(L->n_extra + 1) * sizeof(char *));
  for (int r = 0; r < PB_SR_FIXED; r++) L->row_names[r] = pb_strdup(pb_screen_row_names[r]);
  for (int32_t e = 0; e < L->n_extra; e++) {
    const char *nm = X->ps[1 + e].name;
    size_t len = strlen(nm) + 8;
    L->extra_names[e] = pb_strdup(nm);
    L->row_names[PB_SR_FIXED + 2 * e] = pb_malloc(len);
    snprintf(L->row_names[PB_SR_FIXED + 2 * e], len, "U_%s", nm);
    L->row_names[PB_SR_FIXED + 2 * e + 1] = pb_malloc(len);
    snprintf(L->row_names[PB_SR_FIXED + 2 * e + 1], len, "A3_%s", nm);
    L->is_tta[e] = !strcasecmp(nm, "TTA");
    L->extra_n[e] = X->ps[1 + e].n;
    L->is_severity[e] = X->ps[1 + e].severity;
  }
  static const char *const natural[PB_SCREEN_N_NATURAL] = {"U0", "TTA0", "agree_TTA", "U_sel", "TTA_sel"};
  for (int j = 0; j < PB_SCREEN_N_NATURAL && L->tta_rows >= 0; j++) L->row_names[L->tta_rows + j] = pb_strdup(natural[j]);
  L->n_subsets = X->n_subsets;
  L->n_subsets_u = X->n_subsets_u;
  L->subset_m = X->sub_m;
  L->subset_idx = X->sub_idx;
  L->probe_src = X->ps[0].src;
  L->probe_cond = X->ps[0].cond;
  L->n_probes = X->ps[0].n;
  L->row_off = PB_SI_N_FIELDS;
  L->strata_off = L->row_off + PB_SCREEN_MET * L->n_rows;
  L->subset_off = L->strata_off + PB_SCREEN_STRATA * PB_SCREEN_STRATUM_F;
  L->rec_len = L->subset_off + 2 * L->n_subsets;
  L->subset_tiers = X->opt->subset_tiers;
}

/* Tiers used for the cells: the protocol's development tiers, or tiers from
 * evaluation accuracy (equal-weight mean over models, cuts .40 and .20). */
static void pb_screen__tiers(struct pb_screen__ctx *X)
{
  const struct pb_meta *meta = X->meta;
  X->tier = pb_calloc((size_t)X->n_targets, sizeof *X->tier);
  for (int32_t t = 0; t < X->n_targets; t++) {
    int32_t s = X->targets[t];
    const struct pb_source *src = &meta->sources[s];
    const struct pb_protocol_source *ps = &X->proto->src[s];
    X->tier[t] = pb_malloc((size_t)src->n_conditions);
    for (int32_t c = 0; c < src->n_conditions; c++) {
      if (!X->opt->eval_tiers) {
        X->tier[t][c] = ps->tier[c];
        continue;
      }
      int64_t total = 0;
      for (int32_t m = 0; m < meta->n_models; m++) total += ps->eval_correct[m * src->n_conditions + c];
      double acc = (double)total / ((double)ps->n_eval * meta->n_models);
      X->tier[t][c] = c == src->clean || ps->n_eval == 0 ? -1 : (int8_t)pb_protocol_tier_of_accuracy(acc);
    }
  }
}

static void pb_screen__ctx_free(struct pb_screen__ctx *X)
{
  const struct pb_meta *meta = X->meta;
  for (int g = 0; g < 2; g++) {
    free(X->pool[g].ps);
    free(X->pool[g].k);
    free(X->pool[g].n_chosen);
    free(X->pool[g].chosen);
    free(X->pool[g].value);
  }
  for (int32_t p = 0; p < X->n_ps; p++) {
    free(X->ps[p].name);
    free(X->ps[p].cond);
  }
  free(X->ps);
  if (X->join)
    for (int32_t t = 0; t < X->n_targets; t++) {
      if (X->join[t])
        for (int32_t s = 0; s < meta->n_sources; s++) free(X->join[t][s]);
      free(X->join[t]);
    }
  free(X->join);
  if (X->tier)
    for (int32_t t = 0; t < X->n_targets; t++) free(X->tier[t]);
  free(X->tier);
  if (X->rows)
    for (int32_t s = 0; s < meta->n_sources; s++) {
      free(X->rows[s].rows);
      free(X->rows[s].tk_rows);
      pb_store_rows_free(&X->rows[s].d);
      pb_store_rows_free(&X->rows[s].tk);
    }
  free(X->rows);
  for (int32_t j = 0; j < X->n_subsets; j++) free(X->sub_idx[j]);
  free(X->sub_idx);
  free(X->sub_m);
  if (X->L.row_names)
    for (int32_t r = 0; r < X->L.n_rows; r++) free(X->L.row_names[r]);
  free(X->L.row_names);
  if (X->L.extra_names)
    for (int32_t e = 0; e < X->L.n_extra; e++) free(X->L.extra_names[e]);
  free(X->L.extra_names);
  free(X->targets);
  free(X->unit_cell0);
}

/* One unit's selection data (pool pl, target t, model m): the clean-correct
 * images of the fitting split with a partner in every candidate's source, the
 * candidates' true-class probabilities and every perturbed condition's
 * failures.  Caller frees m and fail. */
static void pb_screen__sel_data(const struct pb_screen__ctx *X, const struct pb_screen__pool *pl, int32_t t,
                                int32_t m, struct pb_screen_sel_unit *su)
{
  const struct pb_meta *meta = X->meta;
  const struct pb_source *src = &meta->sources[X->targets[t]];
  const int32_t N = src->n_images, nc = src->n_conditions;
  const uint8_t fit_split = X->opt->swapped ? PB_SPLIT_EVAL : PB_SPLIT_DEV;
  struct pb_screen__rec clean = pb_screen__rec_row(X, X->targets[t], m * nc + src->clean);
  int32_t *img = pb_malloc((size_t)(N > 0 ? N : 1) * sizeof *img), n = 0;
  for (int32_t i = 0; i < N; i++) {
    int ok = src->split[i] == fit_split && clean.pred[i] == src->labels[i];
    for (int32_t a = 0; a < pl->n && ok; a++) ok = X->join[t][X->ps[pl->ps[a]].src][i] >= 0;
    if (ok) img[n++] = i;
  }
  float *mv = pb_malloc((size_t)(pl->n * n > 0 ? pl->n * n : 1) * sizeof *mv);
  for (int32_t a = 0; a < pl->n; a++) {
    const struct pb_screen__pset *ps = &X->ps[pl->ps[a]];
    struct pb_screen__rec r = pb_screen__rec_row(X, ps->src, m * meta->sources[ps->src].n_conditions + ps->cond[pl->k[a]]);
    for (int32_t q = 0; q < n; q++) mv[(size_t)a * n + q] = r.m[X->join[t][ps->src][img[q]]];
  }
  uint8_t *fail = pb_malloc((size_t)((nc - 1) * n > 0 ? (nc - 1) * n : 1));
  for (int32_t c = 0, e = 0; c < nc; c++) {
    if (c == src->clean) continue;
    struct pb_screen__rec r = pb_screen__rec_row(X, X->targets[t], m * nc + c);
    for (int32_t q = 0; q < n; q++) fail[(size_t)e * n + q] = r.pred[img[q]] != src->labels[img[q]];
    e++;
  }
  free(img);
  *su = (struct pb_screen_sel_unit){n, pl->n, nc - 1, mv, fail, NULL, NULL};
  pb_screen_sel_pack(su);
}

/* TTA^sel and U^sel (seed E.2): per target, greedy forward selection of
 * n_pick candidates maximising the mean coverage at 20% over every model and
 * perturbed condition on the fitting split.  Each rank scores its own units;
 * the per-model sums meet in one array (one contributor per entry, so the
 * reduction is exact) and are added in model order: the same choice for any
 * partition.  Every target takes its k-th step together, in one reduction:
 * ranks hold contiguous units, a target's models mostly on one rank, and a
 * target at a time left every other rank waiting (at 2 x 1 the selection
 * took as long as on one thread).  Collective. */
static void pb_screen__select(struct pb_screen__ctx *X, MPI_Comm comm, int64_t u0, int64_t u1)
{
  const int32_t M = X->meta->n_models, T = X->n_targets;
  const int64_t nu = u1 - u0;
  for (int g = 0; g < 2; g++) {
    struct pb_screen__pool *pl = &X->pool[g];
    if (pl->n == 0) continue;
    const int32_t n = pl->n;
    const size_t per_t = (size_t)M * n;
    pl->n_chosen = pb_calloc((size_t)T, sizeof *pl->n_chosen);
    pl->chosen = pb_calloc((size_t)(T * pl->n_pick > 0 ? T * pl->n_pick : 1), sizeof *pl->chosen);
    pl->value = pb_calloc((size_t)(T * pl->n_pick > 0 ? T * pl->n_pick : 1), sizeof *pl->value);
    double *sum = pb_malloc((T > 0 ? T : 1) * per_t * sizeof *sum), *tot = pb_malloc((size_t)n * sizeof *tot);
    int64_t *cnt = pb_malloc((T > 0 ? T : 1) * per_t * sizeof *cnt), *tc = pb_malloc((size_t)n * sizeof *tc);
    /* the rank's units u0 + x, x < nu: target (u0 + x) / M, model (u0 + x) % M; every target's at once (the
     * paper's 88 units, under 10 MB, on one rank) */
    struct pb_screen_sel_unit *su = pb_calloc((size_t)(nu > 0 ? nu : 1), sizeof *su);
#pragma omp parallel for schedule(dynamic)
    for (int64_t x = 0; x < nu; x++)
      pb_screen__sel_data(X, pl, (int32_t)((u0 + x) / M), (int32_t)((u0 + x) % M), &su[x]);
    for (int32_t k = 0; k < pl->n_pick; k++) {
      memset(sum, 0, (size_t)T * per_t * sizeof *sum);
      memset(cnt, 0, (size_t)T * per_t * sizeof *cnt);
      /* units are independent: each thread fills its own models' entries */
#pragma omp parallel for schedule(dynamic)
      for (int64_t x = 0; x < nu; x++) {
        const int32_t t = (int32_t)((u0 + x) / M), m = (int32_t)((u0 + x) % M);
        if (pl->n_chosen[t] == k) /* still picking: it took every earlier pick */
          pb_screen_sel_step(&su[x], pl->chosen + (size_t)t * pl->n_pick, k, 1, sum + t * per_t + (size_t)m * n,
                             cnt + t * per_t + (size_t)m * n);
      }
      pb_comm_allreduce(MPI_IN_PLACE, sum, (int)(T * per_t), MPI_DOUBLE, MPI_SUM, comm);
      pb_comm_allreduce(MPI_IN_PLACE, cnt, (int)(T * per_t), MPI_INT64_T, MPI_SUM, comm);
      for (int32_t t = 0; t < T; t++) {
        if (pl->n_chosen[t] != k) continue;
        int32_t *chosen = pl->chosen + (size_t)t * pl->n_pick;
        for (int32_t c = 0; c < n; c++) {
          tot[c] = 0;
          tc[c] = 0;
          for (int32_t m = 0; m < M; m++)
            tot[c] += sum[t * per_t + (size_t)m * n + c], tc[c] += cnt[t * per_t + (size_t)m * n + c];
        }
        const int32_t c = pb_screen_sel_pick(tot, tc, chosen, k, n);
        if (c < 0) continue; /* n_chosen stays k: the target is done */
        chosen[k] = c;
        pl->value[(size_t)t * pl->n_pick + k] = tot[c] / (double)tc[c];
        pl->n_chosen[t] = k + 1;
      }
    }
    for (int64_t x = 0; x < nu; x++) {
      free((void *)su[x].m);
      free((void *)su[x].fail);
      pb_screen_sel_unpack(&su[x]);
    }
    free(su);
    free(sum);
    free(tot);
    free(cnt);
    free(tc);
  }
}

/* The analysis split needs its clean-correct images, the fitting split
 * development rows: every target source needs both splits. */
static int pb_screen__check_splits(const struct pb_screen__ctx *X)
{
  int status = PB_OK;
  for (int32_t t = 0; t < X->n_targets && status == PB_OK; t++) {
    const struct pb_protocol_source *ps = &X->proto->src[X->targets[t]];
    if (ps->n_dev == 0 || ps->n_eval == 0) {
      pb_error_set("target source %s needs both development and evaluation images (has %d and %d)",
                   X->meta->sources[X->targets[t]].name, ps->n_dev, ps->n_eval);
      status = PB_FAIL;
    }
  }
  return status;
}

/* Units (target, model) in cell order, with their first cells (X->unit_cell0);
 * each unit's cost for the split of its blocks over ranks (caller frees). */
static int64_t *pb_screen__units(struct pb_screen__ctx *X)
{
  const struct pb_meta *meta = X->meta;
  X->n_units = (int64_t)X->n_targets * meta->n_models;
  X->unit_cell0 = pb_malloc((size_t)(X->n_units + 1) * sizeof(int64_t));
  int64_t *cost = pb_malloc((size_t)(X->n_units > 0 ? X->n_units : 1) * sizeof *cost);
  X->unit_cell0[0] = 0;
  for (int64_t u = 0; u < X->n_units; u++) {
    int32_t nc = meta->sources[X->targets[u / meta->n_models]].n_conditions;
    X->unit_cell0[u + 1] = X->unit_cell0[u] + nc - 1;
    cost[u] = nc + X->ps[0].n + 8;
  }
  return cost;
}

/* `pairbound screen` (the registry's run); under `pairbound run` messages
 * name the configuration's keys instead of options. */
static int pb_screen__stage_run(const struct pb_stage_call *call, const void *opts)
{
  const struct pb_screen_options *opt = opts;
  struct pb_stage st;
  if (pb_stage_begin(call, &st)) return PB_FAIL;
  struct pb_screen__ctx X;
  memset(&X, 0, sizeof X);
  X.tta = -1;
  X.meta = st.meta;
  X.proto = &st.protocol;
  X.opt = opt;
  X.from_config = call->section != NULL;
  int status = pb_screen__psets(&X); /* the primary probe first: the default targets are what it joins */
  if (status == PB_OK) status = pb_screen__targets(&X);
  if (status == PB_OK) status = pb_screen__joins(&X);
  if (status == PB_OK && opt->n_derange < 0) {
    pb_error_set("negative number of derangement draws");
    status = PB_FAIL;
  }
  if (status == PB_OK) status = pb_screen__check_splits(&X);
  if (status != PB_OK) {
    pb_screen__ctx_free(&X);
    return pb_stage_close(&st, status);
  }
  pb_screen__subsets(&X);
  pb_screen__layout(&X);
  pb_screen__tiers(&X);
  int64_t per, u0, u1, *cost = pb_screen__units(&X);
  struct pb_blocks bl;
  status =
      pb_blocks_open_items(&bl, call->outdir, "screen", X.n_units, PB_SCREEN_BLOCKS, cost, st.comm, &per, &u0, &u1);
  free(cost);
  const int64_t nu = u1 - u0;
  struct pb_screen_boot boot;
  pb_screen_boot_init(&boot, st.meta, &X.L, X.targets, X.n_targets, opt->seed, opt->class_draws);
  const int64_t q = pb_screen__piece_rounds(&X, &bl, per, st.comm);
  if (q < bl.rounds)
    pb_message("screen: rows read a piece at a time, %lld rounds of units each (%lld pieces)", (long long)q,
               (long long)((bl.rounds + q - 1) / q));
  if (status == PB_OK && q >= bl.rounds) status = pb_screen__load(&st, &X, u0, u1, 0);
  status = pb_error_agree(st.comm, status);
  pb_timer_lap(&st.timer, "load");
  if (status == PB_OK) pb_screen__select(&X, st.comm, u0, u1);
  pb_timer_lap(&st.timer, "select");
  int64_t nloc = X.unit_cell0[u1] - X.unit_cell0[u0];
  double *recs = pb_malloc((size_t)(nloc > 0 ? nloc : 1) * X.L.rec_len * sizeof *recs);
  struct pb_screen__unit *units = pb_calloc((size_t)(nu > 0 ? nu : 1), sizeof *units);
  uint64_t **bits = pb_calloc((size_t)(nu > 0 ? nu : 1), sizeof *bits);
  int32_t *n_words = pb_calloc((size_t)(nu > 0 ? nu : 1), sizeof *n_words);
  struct pb_progress prog;
  pb_progress_begin(&prog, "screen", "model-target units", status == PB_OK ? nu : 0);
  double piece_load = 0; /* streamed pieces' reads, inside the loop: counted as load */
  if (status == PB_OK)
    status = pb_screen__blocks_run(&st, &X, &bl, per, q, u0, units, recs, bits, n_words, &boot, &prog, &piece_load);
  pb_progress_end(&prog);
  status = pb_blocks_close(&bl, pb_error_agree(st.comm, status));
  pb_timer_lap(&st.timer, "compute");
  pb_timer_add(&st.timer, "load", piece_load);
  pb_timer_add(&st.timer, "compute", -piece_load);
  /* the report first: its figures render (pb_figure_write) while the columns and TSV files are written */
  const double t_rep = MPI_Wtime();
  if (status == PB_OK) status = pb_screen__report_all(&st, &X, u0, u1, recs, units, &boot, call->store);
  pb_timer_add(&st.timer, "write_report", MPI_Wtime() - t_rep);
  pb_message("screen: report (tables, figures started) %.3f s", MPI_Wtime() - t_rep);
  status = pb_error_agree(st.comm, status);
  if (status == PB_OK) status = pb_screen__write(&st, &X, u0, u1, recs, units, bits, n_words, &st.timer);
  status = pb_error_agree(st.comm, status);
  pb_screen_boot_free(&boot);
  pb_timer_end(&st.timer, "write", st.comm);
  pb_message("screen: load %.3f s; probe selection %.3f s; scores, fits and metrics %.3f s (%lld cells, %d "
             "derangement draws); write %.3f s",
             pb_timer_get(&st.timer, "load"), pb_timer_get(&st.timer, "select"), pb_timer_get(&st.timer, "compute"),
             (long long)X.unit_cell0[X.n_units],
             opt->n_derange, pb_timer_get(&st.timer, "write"));
  for (int64_t u = 0; u < nu; u++) /* a stopped loop leaves units unset */
    if (units[u].score) pb_screen__unit_free(&units[u], &X);
  for (int64_t u = 0; u < nu; u++) free(bits[u]);
  free(units);
  free(bits);
  free(n_words);
  free(recs);
  pb_screen__ctx_free(&X);
  return pb_stage_end(&st, status);
}

/* Under `pairbound run`: screening needs a probe source and targets, given or by role.  A probe or
 * targets the configuration names always run the stage, which says what the store lacks. */
static int pb_screen__applies(const struct pb_meta *meta, const void *opts, char *why, size_t n)
{
  const struct pb_screen_options *o = opts;
  for (int32_t p = 0; p < o->n_probesets; p++)
    if (!o->probesets[p].name) return 1;
  const int32_t probe = pb_meta_role_probe(meta);
  if (probe < 0) {
    snprintf(why, n, "no synthetic source shares images with a real source (declare the probe suite: pairbound "
                     "roles STORE --set SRC=synthetic, or set probe in [screen])");
    return 0;
  }
  int32_t *t = pb_malloc((size_t)meta->n_sources * sizeof *t);
  const int32_t nt = o->n_targets ? o->n_targets : pb_meta_role_targets(meta, probe, t);
  free(t);
  if (nt == 0)
    snprintf(why, n, "no real source with perturbed conditions shares images with the probe source %s (declare "
                     "one: pairbound roles STORE --set SRC=real, or set targets in [screen])",
             meta->sources[probe].name);
  return nt > 0;
}

static const struct pb_stage_inherit pb_screen__inherits[] = {
  {"seed", "run.seed", 4}, {"group_draws", "run.group_draws", 0}, {"class_draws", "run.class_draws", 0}, {NULL, NULL, 0}};

const struct pb_stage_desc pb_screen_stage = {
  .name = "screen",
  .store = {.reads = 1, .needs = PB_STAGE_NEEDS_CELLS | PB_STAGE_NEEDS_EVAL, .figures = 1},
  .options = {.table = pb_screen_option_table, .size = sizeof(struct pb_screen_options),
              .release = pb_screen__options_release},
  .run = pb_screen__stage_run,
  .pipeline = {.report = "screen.md", .order = 2, .blocks = 1, .inherits = pb_screen__inherits,
               .applies = pb_screen__applies, .summary = pb_screen_summary},
  .help = "Prospective screening (seed 000 Section 5, Appendix E; docs/screen.md): for every model, target source and\n"
          "perturbed target condition, rank the clean-correct images by failure-risk scores and measure AUROC (failure\n"
          "positive, ties 1/2) and failure coverage at budgets q = .1 .2 .3 (ties at the cutoff prorated). Scores: S, U,\n"
          "delta, ret, margin, entropy, class baselines, logistic g(S), g(S,U), g(S,U,ret), adapted A3 (Eq. 12), the\n"
          "within-class derangement and leave-one-out controls of U, a seeded random order, U_<set>/A3_<set> for extra\n"
          "probe sets and U over prefixed probe subsets. Writes OUTDIR/results.h5 (/screen), report/screen_cells.tsv,\n"
          "screen_cell_info.tsv, screen_strata.tsv, the summary tables screen_*.tsv and report/screen.md.\n",
};
