/* `pairbound screen`: prospective screening (seed 000 Section 5, Appendix
 * E.1-E.4).  Work unit = (target source, model): the clean-correct image set,
 * every score and every fit depend on the unit only, the outcome on the
 * condition, so each score is ranked once per unit and each cell costs O(n)
 * per score.  docs/screen.md describes every score, rule and output. */
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
#include "pairbound/progress.h"
#include "pairbound/protocol.h"
#include "pairbound/dist.h"
#include "pairbound/env.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/figure.h"
#include "pairbound/fields.h"
#include "pairbound/parse.h"
#include "pairbound/resample.h"
#include "pairbound/screen.h"
#include "pairbound/stage.h"
#include "pairbound/timer.h"
#include "pairbound/rng.h"
#include "pairbound/sort.h"
#include "pairbound/strmap.h"
#include "screen_internal.h"

const char *const pb_screen_row_names[PB_SR_FIXED] = {
  "S", "U", "delta", "ret", "margin", "entropy", "class_delta", "class_U_cc", "class_U_all", "g_S", "g_SU",
  "g_SUret", "A3", "U_derange", "U_loo", "random", "S_nonsingleton", "U_nonsingleton", "S_classcc", "U_classcc",
  "U_rank", "U_pow05", "U_pow2", "delta_nonsingleton", "delta_derange", "S_tiebreak", "U_tiebreak", "delta_tiebreak",
  "ret_tiebreak"};

/* Per-image score arrays written to results.h5 (/screen/images): the rows
 * whose score is one value per image (random and the derangement excluded). */
static const int pb_screen__image_rows[] = {PB_SR_S, PB_SR_U, PB_SR_DELTA, PB_SR_RET, PB_SR_MARGIN, PB_SR_ENTROPY,
                                            PB_SR_CLASS_DELTA, PB_SR_CLASS_U_CC, PB_SR_CLASS_U_ALL, PB_SR_G_S,
                                            PB_SR_G_SU, PB_SR_G_SURET, PB_SR_A3, PB_SR_U_LOO};
#define PB_SCREEN_N_IMAGE_ROWS ((int)(sizeof pb_screen__image_rows / sizeof pb_screen__image_rows[0]))

/* ------------------------------------------------------------ options */

static void pb_screen__probeset_free(struct pb_screen_probeset *ps)
{
  free(ps->name);
  free(ps->source);
  for (int32_t c = 0; c < ps->n_conditions; c++) free(ps->conditions[c]);
  free(ps->conditions);
  memset(ps, 0, sizeof *ps);
}

/* --targets SRC,... (replaces the list) */
static int pb_screen__opt_targets(void *opts, const char *label, const char *v)
{
  struct pb_screen_options *o = opts;
  char *list = pb_strdup(v), *save = NULL;
  for (int32_t t = 0; t < o->n_targets; t++) free(o->targets[t]);
  o->n_targets = 0;
  for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
    o->targets = pb_realloc(o->targets, (size_t)(o->n_targets + 1) * sizeof(char *));
    o->targets[o->n_targets++] = pb_strdup(w);
  }
  free(list);
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
   .help = "target sources whose perturbed conditions are screened (default ES,Diverse)"},
  {.name = "probe", .type = PB_OPTION_CUSTOM, .parse = pb_screen__opt_probe, .metavar = "[NAME=]SRC[:cond,...]",
   .repeatable = 1,
   .help = "probe set: responses of the same images (joined by image id) under conditions of SRC (default: every "
           "perturbed condition). Without NAME= it replaces the primary set (default every perturbed condition of "
           "Syn-B), which defines U, ret, delta, A3 and the fits; with NAME= it adds scores U_NAME and A3_NAME "
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

void pb_screen_options_default(struct pb_screen_options *opt)
{
  memset(opt, 0, sizeof *opt);
  pb_options_defaults(pb_screen_option_table, opt);
}

void pb_screen_options_free(struct pb_screen_options *opt)
{
  for (int32_t t = 0; t < opt->n_targets; t++) free(opt->targets[t]);
  free(opt->targets);
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
    char *list = pb_strdup(colon + 1), *save = NULL;
    for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
      ps->conditions = pb_realloc(ps->conditions, (size_t)(ps->n_conditions + 1) * sizeof(char *));
      ps->conditions[ps->n_conditions++] = pb_strdup(w);
    }
    free(list);
    if (ps->n_conditions == 0) {
      pb_error_set("--probe %s: empty condition list", spec);
      pb_screen__probeset_free(ps);
      return PB_FAIL;
    }
  }
  return PB_OK;
}

/* ------------------------------------------------------------ set-up */

struct pb_screen__pset {
  char *name;          /* NULL for the primary set */
  int32_t src;
  int32_t n;
  int32_t *cond;       /* condition indices in the probe source */
};

/* Candidates of a development selection (U^sel, TTA^sel): candidate a is
 * probe k[a] of probe set ps[a]; per target the n_pick chosen ones. */
struct pb_screen__pool {
  int32_t n, n_pick;
  int32_t *ps, *k;
  int32_t *n_chosen;           /* [target] */
  int32_t *chosen;             /* [target][n_pick] candidates in selection order */
  double *value;               /* [target][n_pick] mean coverage at 20% after each pick */
};

/* A source's loaded rows: the clean and probe rows whole (tk_rows, tk: with
 * the top-k lists when the store has them), every other perturbed row of a
 * target only its predictions (rows, d), all that the cells and fits read of it. */
struct pb_screen__rows {
  int32_t n, n_tk;
  int32_t *rows, *tk_rows;
  struct pb_rows d, tk;
  int32_t cap_d, cap_tk; /* rows d and tk hold when streamed (pb_screen__load) */
};

struct pb_screen__ctx {
  const struct pb_meta *meta;
  const struct pb_protocol *proto;
  const struct pb_screen_options *opt;
  int32_t n_ps;
  struct pb_screen__pset *ps;
  int32_t n_targets;
  int32_t *targets;            /* store indices, ascending */
  int32_t ***join;             /* [target][source] target image -> source image or -1 (NULL when unused) */
  struct pb_screen__rows *rows;
  int32_t n_subsets, n_subsets_u; /* all, and those of the primary set (then the TTA set's, Table 32) */
  int32_t *sub_m, **sub_idx;   /* Table 28 subsets: indices into the primary set */
  struct pb_screen_layout L;
  int64_t n_units;
  int64_t *unit_cell0;         /* [n_units + 1] first global cell of each unit */
  int8_t **tier;               /* [target][condition] tiers used for reporting */
  int32_t tta;                 /* the probe set named TTA, -1 none */
  int32_t n_hidden;            /* trailing probe sets read only by the selection (no score rows) */
  struct pb_screen__pool pool[2]; /* selection candidates: 0 U^sel, 1 TTA^sel */
  int64_t n_joined;            /* target images with a partner in the primary probe source */
};

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
    if (meta->sources[s].probe_role && !strcmp(meta->sources[s].probe_role, "natural")) nat = s;
  if (X->tta < 0 && nat >= 0) {
    const struct pb_source *src = &meta->sources[nat];
    struct pb_screen__pset *ps = &X->ps[X->tta = X->n_ps++];
    int32_t nf = src->probe_fixed > 0 ? src->probe_fixed : src->n_conditions - 1;
    *ps = (struct pb_screen__pset){pb_strdup("TTA"), nat, 0, pb_malloc((size_t)nf * sizeof(int32_t))};
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
      const char *role = src->probe_role;
      int take = g ? role && !strcmp(role, "natural") && s == X->ps[X->tta].src
                   : role && !strncmp(role, "extra:", 6) && !strcmp(role + 6, psrc);
      if (!take) continue;
      struct pb_screen__pset *ps = &X->ps[X->n_ps];
      *ps = (struct pb_screen__pset){pb_strdup(g ? "(TTA candidates)" : "(U candidates)"), s, 0,
                                     pb_malloc((size_t)src->n_conditions * sizeof(int32_t))};
      for (int32_t c = 0; c < src->n_conditions; c++)
        if (c != src->clean) pb_screen__pool_add(pl, X->n_ps, ps->n), ps->cond[ps->n++] = c;
      X->n_ps++;
    }
  }
  X->n_hidden = X->n_ps - first_hidden;
}

/* Resolve probe sets and severity sets against the store. */
static int pb_screen__psets(struct pb_screen__ctx *X)
{
  const struct pb_meta *meta = X->meta;
  const struct pb_screen_options *opt = X->opt;
  struct pb_screen_probeset dflt = {NULL, (char *)"Syn-B", 0, NULL};
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
    ps->src = pb_store_meta_find_source(meta, in->source);
    if (ps->src < 0) {
      pb_error_set("probe source %s is not in the store%s", in->source,
                   q != 0 || in != &dflt ? ""
                   : opt->from_config ? " (set probe = SRC[:cond,...] in the [screen] section)"
                                      : " (give --probe SRC[:cond,...])");
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
  /* severity sets: primary conditions grouped by a trailing -N */
  const struct pb_screen__pset *P = &X->ps[0];
  const struct pb_source *psrc = &meta->sources[P->src];
  int all_suffixed = 1;
  int32_t sev[16], n_sev = 0;
  for (int32_t k = 0; k < P->n && all_suffixed; k++) {
    const char *name = psrc->conditions[P->cond[k]], *dash = strrchr(name, '-');
    int64_t v = 0;
    all_suffixed = dash && dash[1] && strspn(dash + 1, "0123456789") == strlen(dash + 1) && strlen(dash + 1) < 6 &&
                   pb_parse_int(dash + 1, 0, 99999, &v) == PB_OK;
    if (!all_suffixed) break;
    int32_t seen = 0;
    for (int32_t j = 0; j < n_sev; j++) seen |= sev[j] == v;
    if (!seen && n_sev < 16) sev[n_sev++] = (int32_t)v;
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
      ps->src = P->src;
      ps->cond = pb_malloc((size_t)P->n * sizeof(int32_t));
      for (int32_t k = 0; k < P->n; k++) {
        const char *dash = strrchr(psrc->conditions[P->cond[k]], '-');
        int64_t v;
        if (pb_parse_int(dash + 1, 0, 99999, &v) == PB_OK && v == sev[j]) ps->cond[ps->n++] = P->cond[k];
      }
    }
  }
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

static int pb_screen__targets(struct pb_screen__ctx *X)
{
  const struct pb_meta *meta = X->meta;
  const struct pb_screen_options *opt = X->opt;
  const char *dflt[] = {"ES", "Diverse"};
  int32_t n = opt->n_targets ? opt->n_targets : 2;
  X->targets = pb_malloc((size_t)n * sizeof(int32_t));
  for (int32_t t = 0; t < n; t++) {
    const char *name = opt->n_targets ? opt->targets[t] : dflt[t];
    int32_t s = pb_store_meta_find_source(meta, name);
    if (s < 0) {
      pb_error_set("target source %s is not in the store%s", name, opt->n_targets ? "" : " (give --targets SRC,...)");
      return PB_FAIL;
    }
    for (int32_t k = 0; k < X->n_targets; k++)
      if (X->targets[k] == s) {
        pb_error_set("target source %s given twice", name);
        return PB_FAIL;
      }
    if (meta->sources[s].n_conditions < 2) {
      pb_error_set("target source %s has no perturbed condition", name);
      return PB_FAIL;
    }
    X->targets[X->n_targets++] = s;
  }
  qsort(X->targets, (size_t)X->n_targets, sizeof(int32_t), pb_sort_cmp_i32);
  return PB_OK;
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

/* No target image has a partner in the primary probe source: nothing can be
 * screened, but the tables (every value n/a) still say which cells there are.
 * Warn, and return the markdown note saying why (caller frees), else NULL. */
static char *pb_screen__nothing_note(const struct pb_screen__ctx *X, const char *store_path)
{
  if (X->n_joined > 0) return NULL;
  struct pb_text names = {0}, note = {0};
  for (int32_t t = 0; t < X->n_targets; t++)
    pb_text_printf(&names, "%s%s", t ? ", " : "", X->meta->sources[X->targets[t]].name);
  const char *probe = X->meta->sources[X->ps[0].src].name;
  pb_warning("screen: %s: no image of the target sources (%s) occurs in the probe source %s (images are matched by "
             "image id), so nothing can be screened: every table is empty (n/a)",
             store_path, names.buf, probe);
  pb_text_printf(&note, "\n*Nothing to screen: no image of the target sources (%s) of %s occurs in the probe source "
                        "%s (images are matched by image id), so no image has a probe response and every value of the "
                        "screening tables is n/a.*\n", names.buf, store_path, probe);
  pb_text_free(&names);
  return note.buf;
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

/* ------------------------------------------------------------ loading */



/* Two collective reads per source: the rows of this rank's units, i.e. every
 * condition of the target source and the probe conditions of each probe
 * source, for the unit's model; whole records for the clean and probe rows,
 * predictions alone for the rest (struct pb_screen__rows). */
/* Grow a streamed source's arrays to hold n rows of n_img records of the
 * fields read into them (pred alone for d; every field for tk).  The arrays
 * are kept from piece to piece: the next piece's rows land in memory already
 * touched (fresh memory costs more to touch on a virtual machine than the
 * read itself: docs/scaling.md, "Page faults and huge pages") */
static void pb_screen__rows_grow(struct pb_rows *d, int32_t *cap, int32_t n, int32_t n_img, int32_t topk, int whole)
{
  if (n <= *cap) return;
  const size_t k = (size_t)n * (size_t)n_img;
  d->pred = pb_realloc(d->pred, k * sizeof *d->pred);
  if (whole) {
    d->smax = pb_realloc(d->smax, k * sizeof *d->smax);
    d->ptrue = pb_realloc(d->ptrue, k * sizeof *d->ptrue);
    if (topk > 0) {
      d->topk_class = pb_realloc(d->topk_class, k * (size_t)topk * sizeof *d->topk_class);
      d->topk_prob = pb_realloc(d->topk_prob, k * (size_t)topk * sizeof *d->topk_prob);
    }
  }
  d->topk = whole ? topk : 0;
  *cap = n;
}

/* The rows units [u0, u1) read, per source: every condition of a target
 * source, the probe rows of each probe source.  Streamed (one piece of
 * units at a time, pb_screen__piece_rounds), they are read into arrays kept for
 * the next piece; otherwise through pb_store_read_fields, whose rows the
 * later screen stages of a `pairbound run` share.  Collective: every rank
 * makes the same reads, with no rows where it has none. */
static int pb_screen__load(struct pb_stage *st, struct pb_screen__ctx *X, int64_t u0, int64_t u1, int stream)
{
  const struct pb_meta *meta = X->meta;
  int status = PB_OK, topk = meta->topk > 0;
  if (!X->rows) X->rows = pb_calloc((size_t)meta->n_sources, sizeof *X->rows);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *src = &meta->sources[s];
    struct pb_screen__rows *R = &X->rows[s];
    int32_t cap = 16, ctk = 16;
    free(R->rows);
    free(R->tk_rows);
    R->n = R->n_tk = 0;
    R->rows = pb_malloc((size_t)cap * sizeof(int32_t));
    R->tk_rows = pb_malloc((size_t)ctk * sizeof(int32_t));
    for (int64_t u = u0; u < u1; u++) {
      int32_t t = (int32_t)(u / meta->n_models), m = (int32_t)(u % meta->n_models);
      int32_t need = (X->targets[t] == s ? src->n_conditions : 0);
      for (int32_t p = 0; p < X->n_ps; p++) need += X->ps[p].src == s ? X->ps[p].n : 0;
      while (R->n + need > cap) R->rows = pb_realloc(R->rows, (size_t)(cap *= 2) * sizeof(int32_t));
      while (R->n_tk + need + 1 > ctk) R->tk_rows = pb_realloc(R->tk_rows, (size_t)(ctk *= 2) * sizeof(int32_t));
      if (X->targets[t] == s) {
        for (int32_t c = 0; c < src->n_conditions; c++) R->rows[R->n++] = m * src->n_conditions + c;
        R->tk_rows[R->n_tk++] = m * src->n_conditions + src->clean;
      }
      for (int32_t p = 0; p < X->n_ps; p++)
        if (X->ps[p].src == s)
          for (int32_t k = 0; k < X->ps[p].n; k++) {
            R->rows[R->n++] = m * src->n_conditions + X->ps[p].cond[k];
            R->tk_rows[R->n_tk++] = m * src->n_conditions + X->ps[p].cond[k];
          }
    }
    R->n = pb_sort_unique_i32(R->rows, R->n);
    R->n_tk = pb_sort_unique_i32(R->tk_rows, R->n_tk);
    int32_t kept = 0; /* rows without a whole record */
    for (int32_t j = 0; j < R->n; j++)
      if (pb_sort_find_i32(R->tk_rows, R->n_tk, R->rows[j]) < 0) R->rows[kept++] = R->rows[j];
    R->n = kept;
    const int tk_fields = PB_FIELD_PRED | PB_FIELD_SMAX | PB_FIELD_PTRUE | (topk ? PB_FIELD_TOPK : 0);
    int rc;
    if (stream) {
      pb_screen__rows_grow(&R->d, &R->cap_d, R->n, src->n_images, 0, 0);
      pb_screen__rows_grow(&R->tk, &R->cap_tk, R->n_tk, src->n_images, meta->topk, 1);
      rc = pb_store_read_fields_into(st->store, s, status == PB_OK ? R->n : 0, R->rows, PB_FIELD_PRED, &R->d);
      if (status == PB_OK) status = rc;
      rc = pb_store_read_fields_into(st->store, s, status == PB_OK ? R->n_tk : 0, R->tk_rows, tk_fields, &R->tk);
    } else {
      rc = pb_store_read_fields(st->store, s, status == PB_OK ? R->n : 0, R->rows, PB_FIELD_PRED, &R->d);
      if (status == PB_OK) status = rc;
      rc = pb_store_read_fields(st->store, s, status == PB_OK ? R->n_tk : 0, R->tk_rows, tk_fields, &R->tk);
    }
    if (status == PB_OK) status = rc;
  }
  return status;
}

/* ------------------------------------------------------------ one unit */

struct pb_screen__rec {
  const int32_t *pred, *tkc;
  const float *s, *m, *tkp;
};

static struct pb_screen__rec pb_screen__rec_row(const struct pb_screen__ctx *X, int32_t s, int32_t row)
{
  const struct pb_screen__rows *R = &X->rows[s];
  int32_t n = X->meta->sources[s].n_images, k = X->meta->topk;
  struct pb_screen__rec r = {NULL, NULL, NULL, NULL, NULL};
  int32_t q = pb_sort_find_i32(R->tk_rows, R->n_tk, row), j = q < 0 ? pb_sort_find_i32(R->rows, R->n, row) : -1;
  if (q < 0 && j < 0) PB_ERROR("screen: row %d of source %d was not loaded", row, s);
  if (j >= 0) { /* predictions alone: s and m stay NULL */
    r.pred = R->d.pred + (size_t)j * n;
    return r;
  }
  r.pred = R->tk.pred + (size_t)q * n;
  r.s = R->tk.smax + (size_t)q * n;
  r.m = R->tk.ptrue + (size_t)q * n;
  if (k > 0 && R->tk.topk_class) {
    r.tkc = R->tk.topk_class + (size_t)q * n * k;
    r.tkp = R->tk.topk_prob + (size_t)q * n * k;
  }
  return r;
}

static struct pb_screen_probs pb_screen__probs(const struct pb_screen__rec *r, int32_t i, int32_t label, int32_t k)
{
  struct pb_screen_probs p = {r->pred[i], label, r->s[i], r->m[i], 0, NULL, NULL};
  if (r->tkc) {
    p.k = k;
    p.tk_class = r->tkc + (size_t)i * k;
    p.tk_prob = r->tkp + (size_t)i * k;
  }
  return p;
}

/* What a unit keeps for its cells. */
struct pb_screen__unit {
  int32_t n;                       /* analysis images */
  int32_t *img;                    /* [n] target image indices */
  int32_t *label;                  /* [n] */
  double **score;                  /* [n_rows][n] (NULL for derived rows) */
  struct pb_screen_ranked *rk;     /* [n_rows] (random unused) */
  struct pb_screen_ranked *der;    /* [n_derange] over the non-singleton subset */
  double **der_score;              /* [n_derange][n] */
  struct pb_screen_ranked *der_delta; /* [n_derange] delta under the same derangements */
  int32_t n_ns;
  int32_t *cls_pos;                /* positions sorted by (label, position) */
  int32_t n_cls;
  int32_t *cls_start;              /* [n_cls + 1] */
  uint8_t *ns;                     /* [n] position in a class with >= 2 images */
  struct pb_screen_ranked st_S[PB_SCREEN_STRATA], st_U[PB_SCREEN_STRATA], st_Uns[PB_SCREEN_STRATA];
  struct pb_screen_ranked *st_der; /* [STRATA][n_derange] */
  uint8_t *med;                    /* [n] 1 above the stratum's median U, 2 below, 0 at it */
  uint8_t *stratum;                /* [n] */
  struct pb_screen_ranked *sub;    /* [n_subsets] */
  int32_t n_unmatched, a3_approx;
  int32_t n_fit, n_fit_trials, n_fit_fails;  /* fitting images and their pooled outcomes */
  struct pb_screen_logit fit[3];
};

static void pb_screen__unit_free(struct pb_screen__unit *U, const struct pb_screen__ctx *X)
{
  int32_t nd = X->opt->n_derange;
  for (int32_t r = 0; r < X->L.n_rows; r++) {
    free(U->score[r]);
    pb_screen_ranked_free(&U->rk[r]);
  }
  for (int32_t d = 0; d < nd; d++) {
    pb_screen_ranked_free(&U->der[d]);
    pb_screen_ranked_free(&U->der_delta[d]);
    free(U->der_score[d]);
  }
  for (int s = 0; s < PB_SCREEN_STRATA; s++) {
    pb_screen_ranked_free(&U->st_S[s]);
    pb_screen_ranked_free(&U->st_U[s]);
    pb_screen_ranked_free(&U->st_Uns[s]);
    for (int32_t d = 0; d < nd; d++) pb_screen_ranked_free(&U->st_der[s * nd + d]);
  }
  for (int32_t j = 0; j < X->n_subsets; j++) pb_screen_ranked_free(&U->sub[j]);
  free(U->sub);
  free(U->st_der);
  free(U->score);
  free(U->rk);
  free(U->der);
  free(U->der_delta);
  free(U->der_score);
  free(U->img);
  free(U->label);
  free(U->cls_pos);
  free(U->cls_start);
  free(U->ns);
  free(U->med);
  free(U->stratum);
}

static int pb_screen__cmp_dbl(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

struct pb_screen__lq {
  int32_t label, q;
};

static int pb_screen__cmp_lq(const void *pa, const void *pb)
{
  const struct pb_screen__lq *a = pa, *b = pb;
  if (a->label != b->label) return a->label < b->label ? -1 : 1;
  return (a->q > b->q) - (a->q < b->q);
}

/* pos = 0..n-1 ordered by label, ties by position (a stable sort, O(n log n)). */
static void pb_screen__order_by_label(int32_t n, const int32_t *label, int32_t *pos)
{
  struct pb_screen__lq *lq = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *lq);
  for (int32_t q = 0; q < n; q++) lq[q] = (struct pb_screen__lq){label[q], q};
  qsort(lq, (size_t)n, sizeof *lq, pb_screen__cmp_lq);
  for (int32_t q = 0; q < n; q++) pos[q] = lq[q].q;
  free(lq);
}

/* What the phases of pb_screen__unit_prepare share about unit (target t, model m). */
struct pb_screen__uwork {
  int32_t t, m, T, N, nc, K, k;
  const struct pb_source *src;
  uint8_t an_split, fit_split;       /* analysis and fitting splits (--swapped exchanges them) */
  struct pb_screen__rec clean, *cond;
  double **Uall, **A3all, *ret;      /* [probe set][image] probe mean U and A3; retention (primary set) */
  double *cd_sum, *ucc_sum, *uall_sum;
  int32_t *cd_n, *ucc_n;             /* fitting-side class sums and counts */
  int32_t *ns_list, *cc_list, n_cc;  /* analysis positions: non-singleton classes; class mean defined */
  int32_t *ord[3], n_ord[3];         /* positions by descending S, U, delta (ties by position) */
  int32_t **der_ord;                 /* [n_derange] the same of each derangement of U */
};


/* Probe means U and retention of every image with a probe partner, A3 on
 * clean-correct images of the analysis split, for every probe set. */
static void pb_screen__probe_means(const struct pb_screen__ctx *X, struct pb_screen__uwork *W, struct pb_screen__unit *U)
{
  const struct pb_meta *meta = X->meta;
  const struct pb_source *src = W->src;
  const int32_t t = W->t, m = W->m, N = W->N, K = W->K, k = W->k;
  const uint8_t an_split = W->an_split;
  const struct pb_screen__rec clean = W->clean;
  double **Uall = W->Uall = pb_malloc((size_t)X->n_ps * sizeof *Uall);
  double **A3all = W->A3all = pb_malloc((size_t)X->n_ps * sizeof *A3all);
  double *ret = W->ret = pb_malloc((size_t)N * sizeof *ret);
  int32_t max_probes = 0;
  for (int32_t p = 0; p < X->n_ps; p++) max_probes = X->ps[p].n > max_probes ? X->ps[p].n : max_probes;
  struct pb_screen_probs *pr = pb_malloc((size_t)max_probes * sizeof *pr);
  struct pb_screen__rec *prow = pb_malloc((size_t)max_probes * sizeof *prow);
  const float **mrow = pb_malloc((size_t)max_probes * sizeof *mrow);
  for (int32_t p = 0; p < X->n_ps; p++) {
    const struct pb_screen__pset *ps = &X->ps[p];
    const struct pb_source *P = &meta->sources[ps->src];
    const int32_t *jn = X->join[t][ps->src];
    Uall[p] = pb_malloc((size_t)N * sizeof(double));
    A3all[p] = pb_malloc((size_t)N * sizeof(double));
    for (int32_t a = 0; a < ps->n; a++) {
      prow[a] = pb_screen__rec_row(X, ps->src, m * P->n_conditions + ps->cond[a]);
      mrow[a] = prow[a].m;
    }
    for (int32_t i = 0; i < N; i++) {
      int32_t j = jn[i], y = src->labels[i];
      if (j < 0) {
        Uall[p][i] = A3all[p][i] = NAN;
        if (p == 0) ret[i] = NAN;
        continue;
      }
      int32_t right = 0;
      for (int32_t a = 0; a < ps->n; a++) right += prow[a].pred[j] == y;
      Uall[p][i] = pb_screen_u(mrow, ps->n, j);
      if (p == 0) ret[i] = (double)right / ps->n;
      A3all[p][i] = NAN;
      if (clean.pred[i] == y && src->split[i] == an_split && p < X->n_ps - X->n_hidden) {
        for (int32_t a = 0; a < ps->n; a++) pr[a] = pb_screen__probs(&prow[a], j, y, k);
        struct pb_screen_probs c0 = pb_screen__probs(&clean, i, y, k);
        int32_t approx;
        A3all[p][i] = pb_screen_a3(&c0, pr, ps->n, K, &approx);
        if (p == 0) U->a3_approx += approx > 0;
      }
    }
  }
  free(pr);
  free(prow);
  free(mrow);
}

/* Fitting-side class means and the logistic fits g_S, g_SU, g_SUret.
 * Returns PB_FAIL (message in why) when a fit does not converge. */
static int pb_screen__fits(const struct pb_screen__ctx *X, struct pb_screen__uwork *W, struct pb_screen__unit *U,
                           char *why, size_t why_len)
{
  const struct pb_meta *meta = X->meta;
  const struct pb_source *src = W->src;
  const int32_t m = W->m, N = W->N, nc = W->nc, K = W->K;
  const uint8_t fit_split = W->fit_split;
  const struct pb_screen__rec clean = W->clean, *cond = W->cond;
  const double *const *Uall = (const double *const *)W->Uall, *ret = W->ret;
  int status = PB_OK;
  double *cd_sum = W->cd_sum = pb_calloc((size_t)K, sizeof(double)), *ucc_sum = W->ucc_sum = pb_calloc((size_t)K, sizeof(double));
  double *uall_sum = W->uall_sum = pb_calloc((size_t)K, sizeof(double));
  int32_t *cd_n = W->cd_n = pb_calloc((size_t)K, sizeof(int32_t)), *ucc_n = W->ucc_n = pb_calloc((size_t)K, sizeof(int32_t));
  int32_t n_fit = 0;
  double *xf = pb_malloc((size_t)(N > 0 ? N : 1) * 3 * sizeof(double));
  int32_t *trials = pb_malloc((size_t)(N > 0 ? N : 1) * sizeof(int32_t)), *fails = pb_malloc((size_t)(N > 0 ? N : 1) * sizeof(int32_t));
  int32_t *fit_img = pb_malloc((size_t)(N > 0 ? N : 1) * sizeof(int32_t)); /* the fitting images, ascending */
  for (int32_t i = 0; i < N; i++) {
    if (src->split[i] != fit_split || isnan(Uall[0][i])) continue;
    int32_t y = src->labels[i];
    cd_sum[y] += clean.m[i] - Uall[0][i];
    uall_sum[y] += Uall[0][i];
    cd_n[y]++;
    if (clean.pred[i] != y) continue;
    ucc_sum[y] += Uall[0][i];
    ucc_n[y]++;
    xf[3 * n_fit] = clean.s[i];
    xf[3 * n_fit + 1] = Uall[0][i];
    xf[3 * n_fit + 2] = ret[i];
    trials[n_fit] = nc - 1;
    fails[n_fit] = 0;
    fit_img[n_fit++] = i;
  }
  /* failures counted a condition's row at a time (an image's conditions are
   * rows apart: one cache line per condition and image) */
  for (int32_t c = 0; c < nc; c++) {
    if (c == src->clean) continue;
    const int32_t *pred = cond[c].pred, *label = src->labels;
    for (int32_t j = 0; j < n_fit; j++) fails[j] += pred[fit_img[j]] != label[fit_img[j]];
  }
  free(fit_img);
  U->n_fit = n_fit;
  for (int32_t i = 0; i < n_fit; i++) {
    U->n_fit_trials += trials[i];
    U->n_fit_fails += fails[i];
  }
  for (int p = 1; p <= 3 && status == PB_OK; p++) {
    double *x = pb_malloc((size_t)(n_fit > 0 ? n_fit : 1) * p * sizeof *x);
    for (int32_t i = 0; i < n_fit; i++)
      for (int j = 0; j < p; j++) x[i * p + j] = xf[3 * i + j];
    if (pb_screen_logit_fit(x, p, trials, fails, n_fit, PB_SCREEN_LOGIT_C, &U->fit[p - 1]) != PB_OK) {
      snprintf(why, why_len, "source %s, model %s, g with %d feature(s): %s", src->name, meta->model_ids[m], p,
               pb_error_message());
      status = PB_FAIL;
    }
    free(x);
  }
  free(xf);
  free(trials);
  free(fails);
  return status;
}

/* The natural rows of a unit (docs/screen.md): U0 and TTA0 (the clean
 * true-class probability as an extra term), TTA agreement, and the means over
 * the development-selected sets, summed in selection order. */
static void pb_screen__natural_scores(const struct pb_screen__ctx *X, const struct pb_screen__uwork *W,
                                      struct pb_screen__unit *U)
{
  const struct pb_meta *meta = X->meta;
  const int32_t m = W->m, t = W->t, r0 = X->L.tta_rows, n = U->n;
  int32_t most = X->ps[0].n > X->ps[X->tta].n ? X->ps[0].n : X->ps[X->tta].n;
  const float **mrow = pb_malloc((size_t)most * sizeof *mrow);
  const int32_t **prow = pb_malloc((size_t)most * sizeof *prow);
  for (int which = 0; which < 2; which++) {
    const struct pb_screen__pset *ps = &X->ps[which ? X->tta : 0];
    const int32_t *jn = X->join[t][ps->src];
    for (int32_t a = 0; a < ps->n; a++) {
      struct pb_screen__rec r = pb_screen__rec_row(X, ps->src, m * meta->sources[ps->src].n_conditions + ps->cond[a]);
      mrow[a] = r.m;
      prow[a] = r.pred;
    }
    for (int32_t q = 0; q < n; q++) {
      int32_t i = U->img[q];
      U->score[r0 + (which ? PB_SN_TTA0 : PB_SN_U0)][q] = -pb_screen_u0(W->clean.m[i], mrow, ps->n, jn[i]);
      if (which) U->score[r0 + PB_SN_AGREE][q] = -pb_screen_agreement(prow, ps->n, jn[i], W->clean.pred[i]);
    }
  }
  free(mrow);
  free(prow);
  for (int g = 0; g < 2; g++) {
    const struct pb_screen__pool *pl = &X->pool[g];
    int32_t nch = pl->n_chosen ? pl->n_chosen[t] : 0;
    double *out = U->score[r0 + (g ? PB_SN_TTASEL : PB_SN_USEL)];
    for (int32_t q = 0; q < n; q++) out[q] = nch ? 0.0 : NAN;
    for (int32_t j = 0; j < nch; j++) {
      int32_t a = pl->chosen[t * pl->n_pick + j];
      const struct pb_screen__pset *ps = &X->ps[pl->ps[a]];
      struct pb_screen__rec r =
          pb_screen__rec_row(X, ps->src, m * meta->sources[ps->src].n_conditions + ps->cond[pl->k[a]]);
      for (int32_t q = 0; q < n; q++) out[q] += r.m[X->join[t][ps->src][U->img[q]]];
    }
    for (int32_t q = 0; q < n && nch; q++) out[q] = -out[q] / nch;
  }
}

/* The analysis set (clean-correct images of the analysis split with a
 * partner in every probe set) and every score row of it. */
static void pb_screen__scores(const struct pb_screen__ctx *X, struct pb_screen__uwork *W, struct pb_screen__unit *U)
{
  const struct pb_source *src = W->src;
  const int32_t N = W->N, K = W->K, k = W->k, n_rows = X->L.n_rows;
  const uint8_t an_split = W->an_split;
  const struct pb_screen__rec clean = W->clean;
  const double *const *Uall = (const double *const *)W->Uall, *const *A3all = (const double *const *)W->A3all;
  const double *ret = W->ret, *cd_sum = W->cd_sum, *ucc_sum = W->ucc_sum, *uall_sum = W->uall_sum;
  const int32_t *cd_n = W->cd_n, *ucc_n = W->ucc_n;
  /* clean-correct images of the analysis split with a probe partner */
  U->img = pb_malloc((size_t)(N > 0 ? N : 1) * sizeof(int32_t));
  U->label = pb_malloc((size_t)(N > 0 ? N : 1) * sizeof(int32_t));
  for (int32_t i = 0; i < N; i++) {
    if (src->split[i] != an_split || clean.pred[i] != src->labels[i]) continue;
    if (isnan(Uall[0][i])) {
      U->n_unmatched++;
      continue;
    }
    for (int32_t p = 1; p < X->n_ps; p++)
      if (isnan(Uall[p][i])) goto unmatched;
    U->img[U->n] = i;
    U->label[U->n++] = src->labels[i];
    continue;
  unmatched:
    U->n_unmatched++;
  }
  int32_t n = U->n, nn = n > 0 ? n : 1;
  U->score = pb_calloc((size_t)n_rows, sizeof *U->score);
  U->rk = pb_calloc((size_t)n_rows, sizeof *U->rk);
  for (int32_t r = 0; r < n_rows; r++) U->score[r] = pb_malloc((size_t)nn * sizeof(double));
  for (int32_t q = 0; q < n; q++) {
    int32_t i = U->img[q], y = src->labels[i];
    double S = clean.s[i], u = Uall[0][i], x3[3] = {S, u, ret[i]};
    struct pb_screen_probs c0 = pb_screen__probs(&clean, i, y, k);
    double **sc = U->score;
    sc[PB_SR_S][q] = -S;
    sc[PB_SR_U][q] = -u;
    sc[PB_SR_DELTA][q] = S - u;
    sc[PB_SR_RET][q] = -ret[i];
    sc[PB_SR_MARGIN][q] = -pb_screen_margin(&c0);
    sc[PB_SR_ENTROPY][q] = pb_screen_entropy(&c0, K);
    sc[PB_SR_CLASS_DELTA][q] = cd_n[y] ? cd_sum[y] / cd_n[y] : NAN;
    sc[PB_SR_CLASS_U_CC][q] = ucc_n[y] ? -ucc_sum[y] / ucc_n[y] : NAN;
    sc[PB_SR_CLASS_U_ALL][q] = cd_n[y] ? -uall_sum[y] / cd_n[y] : NAN;
    sc[PB_SR_G_S][q] = pb_screen_logit_eta(&U->fit[0], x3);
    sc[PB_SR_G_SU][q] = pb_screen_logit_eta(&U->fit[1], x3);
    sc[PB_SR_G_SURET][q] = pb_screen_logit_eta(&U->fit[2], x3);
    sc[PB_SR_A3][q] = -A3all[0][i];
    sc[PB_SR_S_NS][q] = sc[PB_SR_S_CCDEV][q] = -S;
    sc[PB_SR_U_NS][q] = sc[PB_SR_U_CCDEV][q] = -u;
    sc[PB_SR_U_DERANGE][q] = sc[PB_SR_RANDOM][q] = sc[PB_SR_DELTA_DERANGE][q] = NAN;
    sc[PB_SR_DELTA_NS][q] = S - u;
    sc[PB_SR_S_TB][q] = sc[PB_SR_U_TB][q] = sc[PB_SR_DELTA_TB][q] = sc[PB_SR_RET_TB][q] = NAN;
    for (int32_t e = 1; e < X->n_ps - X->n_hidden; e++) {
      sc[PB_SR_FIXED + 2 * (e - 1)][q] = -Uall[e][i];
      sc[PB_SR_FIXED + 2 * (e - 1) + 1][q] = -A3all[e][i];
    }
  }
  if (X->tta >= 0) pb_screen__natural_scores(X, W, U);
}

/* Table 22's protocol-sensitivity scores of the analysis set: U_rank and the
 * power means U^0.5, U^2 over the primary probe set (docs/screen.md). */
static void pb_screen__protocol_scores(const struct pb_screen__ctx *X, const struct pb_screen__uwork *W,
                                       struct pb_screen__unit *U)
{
  const struct pb_screen__pset *ps = &X->ps[0];
  const struct pb_source *P = &X->meta->sources[ps->src];
  const int32_t *jn = X->join[W->t][ps->src], n = U->n;
  const float **mrow = pb_malloc((size_t)ps->n * sizeof *mrow);
  int32_t *j = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *j);
  for (int32_t a = 0; a < ps->n; a++) mrow[a] = pb_screen__rec_row(X, ps->src, W->m * P->n_conditions + ps->cond[a]).m;
  for (int32_t q = 0; q < n; q++) {
    j[q] = jn[U->img[q]];
    U->score[PB_SR_U_POW05][q] = -pb_screen_u_power(mrow, ps->n, j[q], 0.5);
    U->score[PB_SR_U_POW2][q] = -pb_screen_u_power(mrow, ps->n, j[q], 2.0);
  }
  pb_screen_u_rank(mrow, ps->n, j, n, U->score[PB_SR_U_RANK]);
  for (int32_t q = 0; q < n; q++) U->score[PB_SR_U_RANK][q] = -U->score[PB_SR_U_RANK][q];
  free(j);
  free(mrow);
}

/* Classes of the analysis set, the non-singleton subset, leave-one-out means. */
static void pb_screen__classes(struct pb_screen__uwork *W, struct pb_screen__unit *U)
{
  const double *const *Uall = (const double *const *)W->Uall;
  const int32_t n = U->n, nn = n > 0 ? n : 1;
  U->cls_pos = pb_malloc((size_t)nn * sizeof(int32_t));
  U->cls_start = pb_malloc((size_t)(nn + 1) * sizeof(int32_t));
  U->ns = pb_calloc((size_t)nn, 1);
  pb_screen__order_by_label(n, U->label, U->cls_pos);
  int32_t *ns_list = W->ns_list = pb_malloc((size_t)nn * sizeof(int32_t)), *cc_list = W->cc_list = pb_malloc((size_t)nn * sizeof(int32_t));
  int32_t n_cc = 0;
  for (int32_t a = 0; a < n;) {
    int32_t b = a;
    while (b < n && U->label[U->cls_pos[b]] == U->label[U->cls_pos[a]]) b++;
    U->cls_start[U->n_cls++] = a;
    double sum = 0;
    for (int32_t j = a; j < b; j++) sum += Uall[0][U->img[U->cls_pos[j]]];
    for (int32_t j = a; j < b; j++) {
      int32_t q = U->cls_pos[j];
      U->ns[q] = b - a >= 2;
      U->score[PB_SR_U_LOO][q] = b - a >= 2 ? -(sum - Uall[0][U->img[q]]) / (b - a - 1) : NAN;
    }
    a = b;
  }
  U->cls_start[U->n_cls] = n;
  for (int32_t q = 0; q < n; q++) {
    if (U->ns[q]) ns_list[U->n_ns++] = q;
    if (!isnan(U->score[PB_SR_CLASS_U_CC][q])) cc_list[n_cc++] = q;
  }
  W->n_cc = n_cc;
}

/* The positions of order[0..n_ord) with keep[q] set, in their order. */
static int32_t pb_screen__filter(const int32_t *order, int32_t n_ord, const uint8_t *keep, int32_t *out)
{
  int32_t m = 0;
  for (int32_t j = 0; j < n_ord; j++) { /* written always, kept when set: no branch on keep */
    out[m] = order[j];
    m += keep[order[j]] != 0;
  }
  return m;
}

/* Rankings of every score row, and the within-class derangements of U
 * among the non-singleton images (Table 25).  S, U and delta are sorted once
 * (W->ord): their subset rows keep the subset's part of that order, and a
 * derangement moves U's (delta's) order with its images, so neither sorts
 * again (pb_screen_rank_sorted); the derangements' orders stay in W->der_ord
 * for the strata. */
static void pb_screen__rankings(const struct pb_screen__ctx *X, struct pb_screen__uwork *W,
                                struct pb_screen__unit *U)
{
  const struct pb_screen_options *opt = X->opt;
  const int32_t T = W->T, m = W->m, nd = opt->n_derange, n_rows = X->L.n_rows, n = U->n, nn = n > 0 ? n : 1;
  static const int base[3] = {PB_SR_S, PB_SR_U, PB_SR_DELTA};
  for (int j = 0; j < 3; j++) W->ord[j] = pb_malloc((size_t)nn * sizeof(int32_t));
  for (int32_t r = 0; r < n_rows; r++) {
    if (r == PB_SR_RANDOM || r == PB_SR_U_DERANGE || r == PB_SR_DELTA_DERANGE) continue;
    if (r >= PB_SR_S_TB && r <= PB_SR_RET_TB) continue; /* tie-breaks of S, U, delta, ret: per cell */
    if (r == PB_SR_S_NS || r == PB_SR_U_NS || r == PB_SR_DELTA_NS || r == PB_SR_S_CCDEV || r == PB_SR_U_CCDEV) continue;
    if (r == PB_SR_U_LOO) pb_screen_rank(U->score[r], n, W->ns_list, U->n_ns, &U->rk[r]);
    else pb_screen_rank_keep(U->score[r], n, NULL, 0, &U->rk[r], r <= PB_SR_DELTA ? W->ord[r] : NULL);
  }
  for (int j = 0; j < 3; j++) W->n_ord[j] = U->rk[base[j]].n;
  /* the subset rows: S, U and delta over the non-singleton and the class-mean images */
  uint8_t *cc = pb_calloc((size_t)nn, 1);
  for (int32_t j = 0; j < W->n_cc; j++) cc[W->cc_list[j]] = 1;
  int32_t *list = pb_malloc((size_t)nn * sizeof *list);
  static const int sub[5][3] = {{PB_SR_S_NS, 0, 0}, {PB_SR_U_NS, 1, 0}, {PB_SR_DELTA_NS, 2, 0},
                                {PB_SR_S_CCDEV, 0, 1}, {PB_SR_U_CCDEV, 1, 1}};
  for (int j = 0; j < 5; j++) {
    int32_t k = pb_screen__filter(W->ord[sub[j][1]], W->n_ord[sub[j][1]], sub[j][2] ? cc : U->ns, list);
    pb_screen_rank_sorted(U->score[sub[j][0]], n, list, k, &U->rk[sub[j][0]]);
  }
  free(cc);

  /* within-class derangements of U among the non-singleton images (Table 25) */
  U->der = pb_calloc((size_t)(nd > 0 ? nd : 1), sizeof *U->der);
  U->der_score = pb_calloc((size_t)(nd > 0 ? nd : 1), sizeof *U->der_score);
  U->der_delta = pb_calloc((size_t)(nd > 0 ? nd : 1), sizeof *U->der_delta);
  W->der_ord = pb_calloc((size_t)(nd > 0 ? nd : 1), sizeof *W->der_ord);
  int32_t *perm = pb_malloc((size_t)nn * sizeof *perm), *inv = pb_malloc((size_t)nn * sizeof *inv);
  int32_t *lu = pb_malloc((size_t)nn * sizeof *lu), *ld = pb_malloc((size_t)nn * sizeof *ld);
  int32_t nu = pb_screen__filter(W->ord[1], W->n_ord[1], U->ns, lu), ndl = pb_screen__filter(W->ord[2], W->n_ord[2], U->ns, ld);
  double *dd = pb_malloc((size_t)nn * sizeof *dd);
  for (int32_t d = 0; d < nd; d++) {
    struct pb_rng rng;
    pb_rng_init(&rng, opt->seed, PB_RNG_SCREEN_DERANGE, ((uint64_t)T << 32) | (uint64_t)m, (uint32_t)d);
    double *ds = U->der_score[d] = pb_malloc((size_t)nn * sizeof(double));
    for (int32_t q = 0; q < n; q++) ds[q] = dd[q] = NAN;
    for (int32_t g = 0; g < U->n_cls; g++) {
      int32_t a = U->cls_start[g], size = U->cls_start[g + 1] - a;
      if (size < 2) continue;
      pb_resample_perm_derange(&rng, size, perm);
      /* delta moves with the same reassignment (the seed's "same ablation applied to delta") */
      for (int32_t j = 0; j < size; j++) {
        ds[U->cls_pos[a + j]] = U->score[PB_SR_U][U->cls_pos[a + perm[j]]];
        dd[U->cls_pos[a + j]] = U->score[PB_SR_DELTA][U->cls_pos[a + perm[j]]];
        inv[U->cls_pos[a + perm[j]]] = U->cls_pos[a + j];
      }
    }
    int32_t *od = W->der_ord[d] = pb_malloc((size_t)nn * sizeof *od);
    for (int32_t j = 0; j < nu; j++) od[j] = inv[lu[j]];
    for (int32_t j = 0; j < ndl; j++) list[j] = inv[ld[j]];
    pb_screen_rank_sorted(ds, n, od, nu, &U->der[d]);
    pb_screen_rank_sorted(dd, n, list, ndl, &U->der_delta[d]);
  }
  free(dd);
  free(perm);
  free(inv);
  free(lu);
  free(ld);
  free(list);
}

/* Clean-confidence terciles (Table 27): mid-CDF of S, ties share a stratum;
 * rankings (parts of the orders of pb_screen__rankings) and U medians within
 * each stratum. */
static void pb_screen__terciles(const struct pb_screen__ctx *X, const struct pb_screen__uwork *W,
                                struct pb_screen__unit *U)
{
  const int32_t nd = X->opt->n_derange, n = U->n, nn = n > 0 ? n : 1;
  const struct pb_screen__rec clean = W->clean;
  const double *const *Uall = (const double *const *)W->Uall;
  U->stratum = pb_calloc((size_t)nn, 1);
  U->med = pb_calloc((size_t)nn, 1);
  U->st_der = pb_calloc((size_t)PB_SCREEN_STRATA * (nd > 0 ? nd : 1), sizeof *U->st_der);
  double *sv = pb_malloc((size_t)nn * sizeof *sv);
  for (int32_t q = 0; q < n; q++) sv[q] = clean.s[U->img[q]];
  double *sorted = pb_malloc((size_t)nn * sizeof *sorted);
  memcpy(sorted, sv, (size_t)n * sizeof *sorted);
  qsort(sorted, (size_t)n, sizeof *sorted, pb_screen__cmp_dbl);
  for (int32_t q = 0; q < n; q++) {
    int32_t lo = 0, hi = n; /* lt = #{< s}, le = #{<= s} by binary search */
    while (lo < hi) { int32_t mid = (lo + hi) / 2; if (sorted[mid] < sv[q]) lo = mid + 1; else hi = mid; }
    int64_t lt = lo;
    hi = n;
    while (lo < hi) { int32_t mid = (lo + hi) / 2; if (sorted[mid] <= sv[q]) lo = mid + 1; else hi = mid; }
    int64_t le = lo;
    U->stratum[q] = 3 * (lt + le) <= 2 * (int64_t)n ? 0 : 3 * (lt + le) <= 4 * (int64_t)n ? 1 : 2;
  }
  int32_t *all_s = pb_malloc((size_t)nn * sizeof(int32_t)), *list = pb_malloc((size_t)nn * sizeof(int32_t));
  uint8_t *in = pb_malloc((size_t)nn), *in_ns = pb_malloc((size_t)nn);
  for (int s = 0; s < PB_SCREEN_STRATA; s++) {
    int32_t na = 0, k;
    for (int32_t q = 0; q < n; q++) {
      in[q] = U->stratum[q] == s;
      in_ns[q] = in[q] && U->ns[q];
      if (in[q]) all_s[na++] = q;
    }
    k = pb_screen__filter(W->ord[0], W->n_ord[0], in, list);
    pb_screen_rank_sorted(U->score[PB_SR_S], n, list, k, &U->st_S[s]);
    k = pb_screen__filter(W->ord[1], W->n_ord[1], in, list);
    pb_screen_rank_sorted(U->score[PB_SR_U], n, list, k, &U->st_U[s]);
    k = pb_screen__filter(W->ord[1], W->n_ord[1], in_ns, list);
    pb_screen_rank_sorted(U->score[PB_SR_U], n, list, k, &U->st_Uns[s]);
    for (int32_t d = 0; d < nd; d++) {
      k = pb_screen__filter(W->der_ord[d], U->der[d].n, in, list);
      pb_screen_rank_sorted(U->der_score[d], n, list, k, &U->st_der[s * nd + d]);
    }
    /* median of U inside the stratum; images equal to it belong to neither side */
    for (int32_t j = 0; j < na; j++) sorted[j] = Uall[0][U->img[all_s[j]]];
    qsort(sorted, (size_t)na, sizeof *sorted, pb_screen__cmp_dbl);
    double med = na == 0 ? NAN : na % 2 ? sorted[na / 2] : 0.5 * (sorted[na / 2 - 1] + sorted[na / 2]);
    for (int32_t j = 0; j < na; j++) {
      double u = Uall[0][U->img[all_s[j]]];
      U->med[all_s[j]] = u > med ? 1 : u < med ? 2 : 0;
    }
  }
  free(all_s);
  free(list);
  free(in);
  free(in_ns);
  free(sv);
  free(sorted);
}

/* Table 28: rankings of U over prefixed subsets of the primary probe set;
 * Table 32: the same index sets over the TTA set. */
static void pb_screen__subset_ranks(const struct pb_screen__ctx *X, const struct pb_screen__uwork *W,
                                    struct pb_screen__unit *U)
{
  const struct pb_meta *meta = X->meta;
  const int32_t t = W->t, m = W->m, n = U->n, nn = n > 0 ? n : 1;
  U->sub = pb_calloc((size_t)(X->n_subsets > 0 ? X->n_subsets : 1), sizeof *U->sub);
  double *sv = pb_malloc((size_t)nn * sizeof *sv);
  for (int half = 0; half < 2 && X->n_subsets > 0; half++) { /* the primary set's subsets, then the TTA set's */
    if (half && X->n_subsets == X->n_subsets_u) break;
    const struct pb_screen__pset *ps = &X->ps[half ? X->tta : 0];
    const struct pb_source *P = &meta->sources[ps->src];
    const int32_t *jn = X->join[t][ps->src];
    struct pb_screen__rec *rows = pb_malloc((size_t)ps->n * sizeof *rows);
    for (int32_t a = 0; a < ps->n; a++) rows[a] = pb_screen__rec_row(X, ps->src, m * P->n_conditions + ps->cond[a]);
    for (int32_t j = half ? X->n_subsets_u : 0; j < (half ? X->n_subsets : X->n_subsets_u); j++) {
      for (int32_t q = 0; q < n; q++) {
        int32_t ji = jn[U->img[q]];
        double sum = 0;
        for (int32_t a = 0; a < X->sub_m[j]; a++) sum += rows[X->sub_idx[j][a]].m[ji];
        sv[q] = -sum / X->sub_m[j];
      }
      pb_screen_rank(sv, n, NULL, 0, &U->sub[j]);
    }
    free(rows);
  }
  free(sv);
}

/* Scores, fits and rankings of unit (target t, model m).  Returns PB_FAIL
 * (message in *why) when a logistic fit does not converge. */
static int pb_screen__unit_prepare(const struct pb_screen__ctx *X, int32_t t, int32_t m, struct pb_screen__unit *U,
                                   char *why, size_t why_len)
{
  const struct pb_meta *meta = X->meta;
  const struct pb_screen_options *opt = X->opt;
  struct pb_screen__uwork W;
  memset(&W, 0, sizeof W);
  W.t = t, W.m = m, W.T = X->targets[t], W.k = meta->topk;
  W.src = &meta->sources[W.T];
  W.N = W.src->n_images, W.nc = W.src->n_conditions, W.K = W.src->n_classes;
  W.an_split = opt->swapped ? PB_SPLIT_DEV : PB_SPLIT_EVAL;
  W.fit_split = opt->swapped ? PB_SPLIT_EVAL : PB_SPLIT_DEV;
  memset(U, 0, sizeof *U);
  W.clean = pb_screen__rec_row(X, W.T, m * W.nc + W.src->clean);
  W.cond = pb_malloc((size_t)W.nc * sizeof *W.cond);
  for (int32_t c = 0; c < W.nc; c++) W.cond[c] = pb_screen__rec_row(X, W.T, m * W.nc + c);
  pb_screen__probe_means(X, &W, U);
  int status = pb_screen__fits(X, &W, U, why, why_len);
  pb_screen__scores(X, &W, U);
  pb_screen__protocol_scores(X, &W, U);
  pb_screen__classes(&W, U);
  pb_screen__rankings(X, &W, U);
  pb_screen__terciles(X, &W, U);
  pb_screen__subset_ranks(X, &W, U);
  free(W.ns_list);
  free(W.cc_list);
  for (int j = 0; j < 3; j++) free(W.ord[j]);
  for (int32_t d = 0; d < opt->n_derange && W.der_ord; d++) free(W.der_ord[d]);
  free(W.der_ord);
  free(W.cd_sum);
  free(W.ucc_sum);
  free(W.uall_sum);
  free(W.cd_n);
  free(W.ucc_n);
  for (int32_t p = 0; p < X->n_ps; p++) {
    free(W.Uall[p]);
    free(W.A3all[p]);
  }
  free(W.Uall);
  free(W.A3all);
  free(W.ret);
  free(W.cond);
  return status;
}

static void pb_screen__put(double *out, const struct pb_screen_metric *m)
{
  out[0] = m->n;
  out[1] = m->n_fail;
  out[2] = m->auroc;
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) out[3 + b] = m->cov[b];
}

/* Mean metrics over ranked draws (the derangement control). */
static void pb_screen__mean_metrics(const struct pb_screen_ranked *r, int32_t nd, const struct pb_screen_outcome *y,
                                    int budgets, double *out)
{
  struct pb_screen_metric m;
  double acc[4] = {0, 0, 0, 0};
  int32_t n = 0, nf = 0;
  for (int32_t d = 0; d < nd; d++) {
    pb_screen_ranked_metrics(&r[d], y, budgets, &m);
    acc[0] += m.auroc;
    for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) acc[1 + b] += m.cov[b];
    n = m.n;
    nf = m.n_fail;
  }
  out[0] = n;
  out[1] = nf;
  out[2] = nd > 0 ? acc[0] / nd : NAN;
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) out[3 + b] = nd > 0 ? acc[1 + b] / nd : NAN;
}

/* Table 18's one seeded random tie-break of S, U, delta or ret (row r) in cell
 * (T, m, c) into rec's row r: coverage at each budget; n and n_fail those of
 * the score's own row, set before it (the same ranking), AUROC nan. */
static void pb_screen__tiebreak(const struct pb_screen__ctx *X, int32_t T, int32_t m, int32_t c, int32_t r,
                                const struct pb_screen__unit *U, const struct pb_screen_outcome *oc, double *rec)
{
  static const int base[4] = {PB_SR_S, PB_SR_U, PB_SR_DELTA, PB_SR_RET};
  _Static_assert(PB_SR_S < PB_SR_S_TB && PB_SR_U < PB_SR_S_TB && PB_SR_DELTA < PB_SR_S_TB && PB_SR_RET < PB_SR_S_TB,
                 "a tie-break row follows its score's row");
  const int b = base[r - PB_SR_S_TB];
  const double *own = rec + X->L.row_off + PB_SCREEN_MET * b;
  double *out = rec + X->L.row_off + PB_SCREEN_MET * r;
  struct pb_rng rng;
  pb_rng_init(&rng, X->opt->seed, PB_RNG_SCREEN_TIEBREAK, ((uint64_t)T << 40) | ((uint64_t)m << 20) | (uint64_t)c,
              (uint32_t)(r - PB_SR_S_TB));
  out[0] = own[0];
  out[1] = own[1];
  out[2] = NAN;
  pb_screen_ranked_tiebreak(&U->rk[b], oc, &rng, out + 3);
}

/* Every cell of a prepared unit: one outcome vector, O(n) per score. */
static void pb_screen__unit_cells(const struct pb_screen__ctx *X, int32_t t, int32_t m,
                                  const struct pb_screen__unit *U, double *recs, uint64_t *bits, int32_t n_words,
                                  struct pb_screen_boot *B)
{
  /* class bootstrap: score orders are per unit, outcomes per cell */
  const double *bscore[PB_SB_NSCORES + PB_SB_NDYN];
  int32_t *border[PB_SB_NSCORES + PB_SB_NDYN], bn[PB_SB_NSCORES + PB_SB_NDYN];
  for (int j = 0; j < B->n_scores; j++) bscore[j] = U->score[pb_screen_boot_score_row(B, j)];
  if (B->draws > 0) pb_screen_boot_orders(bscore, B->n_scores, U->n, border, bn);
  const struct pb_meta *meta = X->meta;
  const struct pb_screen_layout *L = &X->L;
  int32_t T = X->targets[t], nd = X->opt->n_derange;
  const struct pb_source *src = &meta->sources[T];
  int32_t nc = src->n_conditions, n = U->n, nn = n > 0 ? n : 1;
  uint8_t *y = pb_malloc((size_t)nn);
  int32_t *order = pb_malloc((size_t)nn * sizeof *order);
  struct pb_screen_outcome oc = {0, 0, y, pb_malloc((size_t)nn * sizeof(int32_t)), pb_malloc((size_t)nn * sizeof(int32_t))};
  struct pb_screen_outcome st[PB_SCREEN_STRATA]; /* the outcomes of each stratum's images (their rankings' universe) */
  for (int s = 0; s < PB_SCREEN_STRATA; s++)
    st[s] = (struct pb_screen_outcome){0, 0, y, pb_malloc((size_t)nn * sizeof(int32_t)), pb_malloc((size_t)nn * sizeof(int32_t))};
  int64_t cell = 0;
  for (int32_t c = 0; c < nc; c++) {
    if (c == src->clean) continue;
    double *rec = recs + cell * L->rec_len;
    uint64_t *bw = bits + cell * n_words;
    cell++;
    struct pb_screen__rec r1 = pb_screen__rec_row(X, T, m * nc + c);
    /* outcomes, their bits and failure counts in one pass without a branch
     * on the outcome (failures are near half of the images, so a branch on
     * one mispredicts for most of them) */
    int32_t nf = 0, nfns = 0;
    for (int32_t w = 0; w < n_words; w++) {
      const int32_t q0 = 64 * w, q1 = q0 + 64 < n ? q0 + 64 : n;
      uint64_t word = 0;
      for (int32_t q = q0; q < q1; q++) {
        const uint8_t f = r1.pred[U->img[q]] != U->label[q];
        y[q] = f;
        word |= (uint64_t)f << (q - q0);
        nfns += f & U->ns[q];
      }
      bw[w] = word;
      nf += __builtin_popcountll(word);
    }
    pb_screen_outcome_set(&oc, y, n);
    for (int f = 0; f < L->rec_len; f++) rec[f] = NAN;
    struct pb_screen_metric mt;
    rec[PB_SI_TIER] = X->tier[t][c];
    rec[PB_SI_N] = n;
    rec[PB_SI_NFAIL] = nf;
    rec[PB_SI_NNS] = U->n_ns;
    rec[PB_SI_NFAIL_NS] = nfns;
    rec[PB_SI_NUNMATCHED] = U->n_unmatched;
    rec[PB_SI_A3APPROX] = U->a3_approx;
    /* the derangement cannot move the AUROC when every non-singleton class is outcome-pure */
    int pure = 1;
    for (int32_t g = 0; g < U->n_cls && pure; g++) {
      int32_t a = U->cls_start[g], b = U->cls_start[g + 1];
      for (int32_t j = a + 1; j < b && pure; j++) pure = y[U->cls_pos[j]] == y[U->cls_pos[a]];
    }
    rec[PB_SI_DEGENERATE] = U->n_ns > 0 ? pure : NAN;
    for (int32_t r = 0; r < L->n_rows; r++) {
      double *out = rec + L->row_off + PB_SCREEN_MET * r;
      if (r == PB_SR_U_DERANGE) {
        pb_screen__mean_metrics(U->der, nd, &oc, 7, out);
      } else if (r == PB_SR_DELTA_DERANGE) {
        pb_screen__mean_metrics(U->der_delta, nd, &oc, 7, out);
      } else if (r >= PB_SR_S_TB && r <= PB_SR_RET_TB) {
        pb_screen__tiebreak(X, T, m, c, r, U, &oc, rec);
      } else if (r == PB_SR_RANDOM) {
        /* one seeded random order per cell: no ties */
        struct pb_rng rng;
        pb_rng_init(&rng, X->opt->seed, PB_RNG_SCREEN_RANDOM,
                    ((uint64_t)T << 40) | ((uint64_t)m << 20) | (uint64_t)c, 0);
        for (int32_t j = 0; j < n; j++) order[j] = j;
        pb_rng_shuffle(&rng, order, n);
        pb_screen_order_metrics(order, n, y, 7, &mt);
        pb_screen__put(out, &mt);
      } else {
        pb_screen_ranked_metrics(&U->rk[r], &oc, 7, &mt);
        pb_screen__put(out, &mt);
      }
    }
    /* each stratum's rankings against its own images' outcomes: a walk over a third of them */
    int64_t ka[PB_SCREEN_STRATA] = {0}, ra[PB_SCREEN_STRATA] = {0}, kb[PB_SCREEN_STRATA] = {0}, rb[PB_SCREEN_STRATA] = {0};
    for (int s = 0; s < PB_SCREEN_STRATA; s++) st[s].n = st[s].n_fail = 0;
    for (int32_t q = 0; q < n; q++) { /* both lists written, one advanced: no branch on the outcome */
      const int s = U->stratum[q], f = y[q], md = U->med[q];
      st[s].fail[st[s].n_fail] = q;
      st[s].keep[st[s].n - st[s].n_fail] = q;
      st[s].n_fail += f;
      st[s].n++;
      ka[s] += md == 1, ra[s] += (md == 1) & !f;
      kb[s] += md == 2, rb[s] += (md == 2) & !f;
    }
    for (int s = 0; s < PB_SCREEN_STRATA; s++) {
      double *o = rec + L->strata_off + PB_SCREEN_STRATUM_F * s, tmp[6];
      pb_screen_ranked_metrics(&U->st_S[s], &st[s], 0, &mt);
      o[0] = mt.n;
      o[1] = mt.n_fail;
      o[2] = mt.auroc;
      pb_screen_ranked_metrics(&U->st_U[s], &st[s], 0, &mt);
      o[3] = mt.auroc;
      pb_screen_ranked_metrics(&U->st_Uns[s], &st[s], 0, &mt);
      o[4] = mt.auroc;
      pb_screen__mean_metrics(U->st_der + s * nd, nd, &st[s], 0, tmp);
      o[5] = tmp[2];
      o[6] = ka[s] > 0 && kb[s] > 0 ? (double)ra[s] / ka[s] - (double)rb[s] / kb[s] : NAN;
    }
    if (B->draws > 0) pb_screen_boot_cell(B, t, (int)rec[PB_SI_TIER], n, U->label, y, bscore, border, bn);
    if (rec[PB_SI_TIER] >= 0 && (L->subset_tiers >> (int)rec[PB_SI_TIER]) & 1)
      for (int32_t j = 0; j < X->n_subsets; j++) {
        pb_screen_ranked_metrics(&U->sub[j], &oc, 2, &mt);
        rec[L->subset_off + 2 * j] = mt.auroc;
        rec[L->subset_off + 2 * j + 1] = mt.cov[1];
      }
  }
  free(oc.fail);
  free(oc.keep);
  for (int s = 0; s < PB_SCREEN_STRATA; s++) {
    free(st[s].fail);
    free(st[s].keep);
  }
  free(order);
  free(y);
  for (int j = 0; j < B->n_scores && B->draws > 0; j++) free(border[j]);
}

/* ------------------------------------------------------------ blocks */

/* Target and model of unit u (units are target-major). */
static void pb_screen__cell_names(const struct pb_screen__ctx *X, int64_t u, int32_t *t, int32_t *m)
{
  *t = (int32_t)(u / X->meta->n_models);
  *m = (int32_t)(u % X->meta->n_models);
}


/* Block checkpoints (pairbound/blocks.h): a block is K consecutive units, K
 * from the unit count alone (about 64 blocks), so any rank count maps to the
 * same blocks.  Its payload is what the writers and the interval tables
 * consume: per unit the images, the written score rows, the fits, the cell
 * records and outcome bits, then the block's class-bootstrap sums. */
#define PB_SCREEN_BLOCKS 64

/* Whether score row r is written per image (/screen/images). */
static int pb_screen__image_row(int32_t r)
{
  int keep = r >= PB_SR_FIXED;
  for (int j = 0; j < PB_SCREEN_N_IMAGE_ROWS; j++) keep |= pb_screen__image_rows[j] == r;
  return keep;
}

/* Append unit u's outputs (its cells' records and outcome bits given). */
static void pb_screen__unit_put(const struct pb_screen__ctx *X, int64_t u, const struct pb_screen__unit *U,
                                const double *recs, const uint64_t *bits, int32_t n_words, struct pb_bytes *b)
{
  int64_t ncell = X->unit_cell0[u + 1] - X->unit_cell0[u];
  int32_t head[5] = {U->n, n_words, U->n_fit, U->n_fit_trials, U->n_fit_fails};
  pb_blocks_put(b, head, sizeof head);
  for (int g = 0; g < 3; g++) {
    double f[6] = {U->fit[g].ok, U->fit[g].b, U->fit[g].w[0], U->fit[g].w[1], U->fit[g].w[2], U->fit[g].grad_norm};
    pb_blocks_put(b, f, sizeof f);
  }
  pb_blocks_put(b, U->img, (size_t)U->n * sizeof *U->img);
  pb_blocks_put(b, U->label, (size_t)U->n * sizeof *U->label);
  for (int32_t r = 0; r < X->L.n_rows; r++)
    if (pb_screen__image_row(r)) pb_blocks_put(b, U->score[r], (size_t)U->n * sizeof(double));
  for (int32_t d = 0; d < X->opt->n_derange; d++) pb_blocks_put(b, U->der_score[d], (size_t)U->n * sizeof(double));
  pb_blocks_put(b, recs, (size_t)ncell * X->L.rec_len * sizeof *recs);
  pb_blocks_put(b, bits, (size_t)(ncell * n_words) * sizeof *bits);
}

/* Read unit u back: what the writers use of it (the rankings are not kept). */
static int pb_screen__unit_get(const struct pb_screen__ctx *X, int64_t u, struct pb_bytes *b, struct pb_screen__unit *U,
                               double *recs, uint64_t **bits, int32_t *n_words)
{
  int64_t ncell = X->unit_cell0[u + 1] - X->unit_cell0[u];
  int32_t nd = X->opt->n_derange, head[5];
  memset(U, 0, sizeof *U);
  U->score = pb_calloc((size_t)X->L.n_rows, sizeof *U->score);
  U->rk = pb_calloc((size_t)X->L.n_rows, sizeof *U->rk);
  U->der = pb_calloc((size_t)(nd > 0 ? nd : 1), sizeof *U->der);
  U->der_score = pb_calloc((size_t)(nd > 0 ? nd : 1), sizeof *U->der_score);
  U->der_delta = pb_calloc((size_t)(nd > 0 ? nd : 1), sizeof *U->der_delta);
  U->st_der = pb_calloc((size_t)(PB_SCREEN_STRATA * nd > 0 ? PB_SCREEN_STRATA * nd : 1), sizeof *U->st_der);
  U->sub = pb_calloc((size_t)(X->n_subsets > 0 ? X->n_subsets : 1), sizeof *U->sub);
  *bits = NULL;
  if (pb_blocks_get(b, head, sizeof head) != PB_OK || head[0] < 0 || head[1] < 0) return PB_FAIL;
  U->n = head[0], *n_words = head[1], U->n_fit = head[2], U->n_fit_trials = head[3], U->n_fit_fails = head[4];
  for (int g = 0; g < 3; g++) {
    double f[6];
    if (pb_blocks_get(b, f, sizeof f) != PB_OK) return PB_FAIL;
    U->fit[g].ok = (int)f[0], U->fit[g].b = f[1], U->fit[g].grad_norm = f[5];
    for (int j = 0; j < 3; j++) U->fit[g].w[j] = f[2 + j];
  }
  size_t nn = (size_t)(U->n > 0 ? U->n : 1);
  U->img = pb_malloc(nn * sizeof *U->img);
  U->label = pb_malloc(nn * sizeof *U->label);
  int status = pb_blocks_get(b, U->img, (size_t)U->n * sizeof *U->img);
  if (status == PB_OK) status = pb_blocks_get(b, U->label, (size_t)U->n * sizeof *U->label);
  for (int32_t r = 0; r < X->L.n_rows && status == PB_OK; r++)
    if (pb_screen__image_row(r)) {
      U->score[r] = pb_malloc(nn * sizeof(double));
      status = pb_blocks_get(b, U->score[r], (size_t)U->n * sizeof(double));
    }
  for (int32_t d = 0; d < nd && status == PB_OK; d++) {
    U->der_score[d] = pb_malloc(nn * sizeof(double));
    status = pb_blocks_get(b, U->der_score[d], (size_t)U->n * sizeof(double));
  }
  if (status == PB_OK) status = pb_blocks_get(b, recs, (size_t)ncell * X->L.rec_len * sizeof *recs);
  *bits = pb_malloc((size_t)(ncell * *n_words + 1) * sizeof **bits);
  if (status == PB_OK) status = pb_blocks_get(b, *bits, (size_t)(ncell * *n_words) * sizeof **bits);
  return status;
}

/* Compute units [ua, ub) into a payload; PB_FAIL (recorded in fe) when a unit fails. */
static int pb_screen__block_compute(const struct pb_screen__ctx *X, int64_t ua, int64_t ub,
                                    const struct pb_screen_boot *boot, struct pb_error_first *fe, struct pb_bytes *pay)
{
  struct pb_screen_boot local;
  pb_screen_boot_local(boot, &local);
  int status = PB_OK;
  pay->len = pay->pos = 0;
  for (int64_t u = ua; u < ub; u++) {
    int32_t t, m, n_words;
    char msg[1024];
    struct pb_screen__unit U;
    pb_screen__cell_names(X, u, &t, &m);
    if (pb_screen__unit_prepare(X, t, m, &U, msg, sizeof msg) != PB_OK) {
      pb_error_set("%s", msg);
      pb_error_first_record(fe, u);
      status = PB_FAIL;
    }
    int64_t ncell = X->unit_cell0[u + 1] - X->unit_cell0[u];
    n_words = (U.n + 63) / 64;
    double *recs = pb_malloc((size_t)(ncell > 0 ? ncell : 1) * X->L.rec_len * sizeof *recs);
    uint64_t *bits = pb_malloc((size_t)(ncell * n_words + 1) * sizeof *bits);
    pb_screen__unit_cells(X, t, m, &U, recs, bits, n_words, &local);
    pb_screen__unit_put(X, u, &U, recs, bits, n_words, pay);
    pb_screen__unit_free(&U, X);
    free(recs);
    free(bits);
  }
  int32_t tt[2] = {(int32_t)(ua / X->meta->n_models), (int32_t)((ub - 1) / X->meta->n_models)};
  pb_blocks_put(pay, tt, sizeof tt);
  pb_screen_boot_put(&local, tt[0], tt[1], pay);
  pb_screen_boot_free(&local);
  return status;
}

/* A payload into this rank's units, records and bits (from u0) and the
 * class-bootstrap sums; the sums are added only once the rest has read back
 * and the payload's length is exactly what they need. */
static int pb_screen__block_apply(const struct pb_screen__ctx *X, int64_t u0, int64_t ua, int64_t ub,
                                  struct pb_bytes *pay, struct pb_screen__unit *units, double *recs, uint64_t **bits,
                                  int32_t *n_words, struct pb_screen_boot *boot)
{
  int status = PB_OK;
  pay->pos = 0;
  for (int64_t u = ua; u < ub && status == PB_OK; u++)
    status = pb_screen__unit_get(X, u, pay, &units[u - u0],
                                 recs + (X->unit_cell0[u] - X->unit_cell0[u0]) * X->L.rec_len, &bits[u - u0],
                                 &n_words[u - u0]);
  int32_t tt[2];
  if (status == PB_OK) status = pb_blocks_get(pay, tt, sizeof tt);
  if (status == PB_OK && (tt[0] != (int32_t)(ua / X->meta->n_models) || tt[1] != (int32_t)((ub - 1) / X->meta->n_models) ||
                          pay->len - pay->pos != pb_screen_boot_bytes(boot, tt[0], tt[1])))
    status = PB_FAIL;
  if (status == PB_OK) status = pb_screen_boot_add(boot, tt[0], tt[1], pay);
  return status;
}

/* Undo a partial pb_screen__block_apply of units [ua, ub). */
static void pb_screen__block_drop(const struct pb_screen__ctx *X, int64_t u0, int64_t ua, int64_t ub,
                                  struct pb_screen__unit *units, uint64_t **bits)
{
  for (int64_t u = ua; u < ub; u++) {
    if (units[u - u0].score) pb_screen__unit_free(&units[u - u0], X);
    memset(&units[u - u0], 0, sizeof units[u - u0]);
    free(bits[u - u0]);
    bits[u - u0] = NULL;
  }
}

/* One block: its checkpoint when intact, else computed (and checkpointed). */
static int pb_screen__block(const struct pb_screen__ctx *X, struct pb_blocks *bl, int64_t per, int64_t k, int64_t u0,
                            struct pb_screen__unit *units, double *recs, uint64_t **bits, int32_t *n_words,
                            struct pb_screen_boot *boot, struct pb_error_first *fe)
{
  int64_t ua, ub;
  pb_blocks_items(X->n_units, per, k, &ua, &ub);
  struct pb_bytes pay = {0};
  int status = PB_OK;
  if (pb_blocks_load(bl, k, &pay)) {
    /* an intact block of this key has this layout; anything else is recomputed */
    status = pb_screen__block_apply(X, u0, ua, ub, &pay, units, recs, bits, n_words, boot);
    if (status != PB_OK) {
      pb_screen__block_drop(X, u0, ua, ub, units, bits);
      pb_warning("screen: block %lld does not read back: recomputing it", (long long)k);
    }
  } else {
    status = PB_FAIL;
  }
  if (status != PB_OK) {
    status = pb_screen__block_compute(X, ua, ub, boot, fe, &pay);
    if (status == PB_OK) status = pb_blocks_save(bl, k, &pay);
    if (status == PB_OK) status = pb_screen__block_apply(X, u0, ua, ub, &pay, units, recs, bits, n_words, boot);
    if (status != PB_OK) pb_error_first_record(fe, ua);
  }
  pb_blocks_bytes_free(&pay);
  return status;
}

/* Every unit of this rank's blocks, a round of blocks (dynamically over threads) at a
 * time; a signal or a failure on any rank ends the loop at the next round. */
/* Streaming (docs/screen.md, "Memory"): rounds of the block loop per piece
 * of rows, the same on every rank (they read together); every round at once
 * (one piece, read before the probe selection) when the rows of the most
 * loaded round of any rank times the rounds fit PB_SCREEN_PIECE_BYTES
 * (PAIRBOUND_SCREEN_PIECE_BYTES overrides it, for the tests), or when a
 * development selection needs every unit's rows before any unit is scored.
 * Collective. */
#define PB_SCREEN_PIECE_BYTES ((int64_t)256 << 20)
static int64_t pb_screen__piece_rounds(const struct pb_screen__ctx *X, const struct pb_blocks *bl, int64_t per,
                                       MPI_Comm comm)
{
  const struct pb_meta *meta = X->meta;
  int64_t budget = PB_SCREEN_PIECE_BYTES, most = 0;
  pb_env_int(PB_ENV_SCREEN_PIECE_BYTES, 0, INT64_MAX, &budget); /* unset: the default stays */
  for (int64_t r = 0; r < bl->rounds; r++) {
    int64_t b0, b1, bytes = 0;
    pb_blocks_round(bl, r, &b0, &b1);
    for (int64_t u = b0 * per; u < b1 * per && u < X->n_units; u++) {
      const struct pb_source *T = &meta->sources[X->targets[u / meta->n_models]];
      bytes += (int64_t)T->n_conditions * T->n_images * 4; /* predictions */
      for (int32_t p = 0; p < X->n_ps; p++) /* whole records */
        bytes += (int64_t)X->ps[p].n * meta->sources[X->ps[p].src].n_images * (12 + 8 * (int64_t)meta->topk);
    }
    most = bytes > most ? bytes : most;
  }
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT64_T, MPI_MAX, comm);
  if (X->pool[0].n > 0 || X->pool[1].n > 0 || most * bl->rounds <= budget) return bl->rounds > 0 ? bl->rounds : 1;
  const int64_t q = most > 0 ? budget / most : bl->rounds;
  return q < 1 ? 1 : q;
}

static int pb_screen__blocks_run(struct pb_stage *st, struct pb_screen__ctx *X, struct pb_blocks *bl, int64_t per,
                                 int64_t q, int64_t u0, struct pb_screen__unit *units, double *recs, uint64_t **bits,
                                 int32_t *n_words, struct pb_screen_boot *boot, struct pb_progress *prog,
                                 double *load_sec)
{
  struct pb_error_first fe;
  pb_error_first_init(&fe);
  for (int64_t r = 0; r < bl->rounds; r++) {
    int64_t b0, b1;
    if (q < bl->rounds && r % q == 0) {
      /* the next piece: this rank's units of rounds r .. r + q - 1 */
      int64_t e0, e1;
      pb_blocks_round(bl, r, &b0, &e0);
      pb_blocks_round(bl, r + q - 1 < bl->rounds ? r + q - 1 : bl->rounds - 1, &e1, &b1);
      const int64_t ua = b0 * per < X->n_units ? b0 * per : X->n_units, ub = b1 * per < X->n_units ? b1 * per : X->n_units;
      const double t0 = MPI_Wtime();
      const int status = pb_error_agree(bl->comm, pb_screen__load(st, X, ua, ub > ua ? ub : ua, 1));
      *load_sec += MPI_Wtime() - t0;
      if (status != PB_OK) {
        pb_error_first_record(&fe, ua);
        break;
      }
    }
    pb_blocks_round(bl, r, &b0, &b1);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t k = b0; k < b1; k++) {
      int64_t ua, ub;
      pb_blocks_items(X->n_units, per, k, &ua, &ub);
      if (pb_screen__block(X, bl, per, k, u0, units, recs, bits, n_words, boot, &fe) == PB_OK)
        pb_progress_step(prog, ub - ua);
    }
    /* rounds that read a piece of the store (collective) end together; otherwise each rank runs at its own pace */
    const int stop = q < bl->rounds ? pb_blocks_boundary(bl, pb_error_first_status(&fe))
                                    : pb_blocks_poll(bl, pb_error_first_status(&fe));
    if (stop) break;
  }
  return pb_error_first_status(&fe);
}

/* ------------------------------------------------------------ outputs */

static const char *const pb_screen__strata_names[PB_SCREEN_STRATA] = {"low", "mid", "high"};

/* Field tables: /screen/cells (information fields, then per score row the
 * metrics in /screen/cells/<row>), /screen/strata/<stratum>_<field>, and the
 * report TSVs screen_cells, screen_strata, screen_cell_info and screen_fits. */
static const struct pb_field pb_screen__info_fields[PB_SI_N_FIELDS] = {
  [PB_SI_TIER] = {"tier", PB_FMT_TIER}, [PB_SI_N] = {"n", PB_FMT_INT}, [PB_SI_NFAIL] = {"n_fail", PB_FMT_INT},
  [PB_SI_NNS] = {"n_nonsingleton", PB_FMT_INT}, [PB_SI_NFAIL_NS] = {"n_fail_nonsingleton", PB_FMT_INT},
  [PB_SI_DEGENERATE] = {"derange_degenerate", PB_FMT_INT}, [PB_SI_NUNMATCHED] = {"n_unmatched", PB_FMT_INT},
  [PB_SI_A3APPROX] = {"a3_approx_images", PB_FMT_INT}};
static const struct pb_field pb_screen__met_fields[PB_SCREEN_MET] = {
  {"n", PB_FMT_INT}, {"n_fail", PB_FMT_INT}, {"auroc", PB_FMT_NUM},
  {"cov_q10", PB_FMT_NUM}, {"cov_q20", PB_FMT_NUM}, {"cov_q30", PB_FMT_NUM}};
static const struct pb_field pb_screen__stratum_fields[PB_SCREEN_STRATUM_F] = {
  {"n", PB_FMT_INT}, {"n_fail", PB_FMT_INT}, {"auroc_S", PB_FMT_NUM}, {"auroc_U", PB_FMT_NUM},
  {"auroc_U_nonsingleton", PB_FMT_NUM}, {"auroc_U_derange", PB_FMT_NUM}, {"ret_gap", PB_FMT_NUM}};
static const struct pb_fields pb_screen__met = {.n = PB_SCREEN_MET, .f = pb_screen__met_fields};
static const struct pb_fields pb_screen__stratum = {.n = PB_SCREEN_STRATUM_F, .f = pb_screen__stratum_fields};

/* screen_cell_info.tsv after model, source, condition, tier: counts, the
 * failure rate and the budget ceilings (derived), then the information fields. */
enum { PB_SIT_N, PB_SIT_NFAIL, PB_SIT_P, PB_SIT_CEIL, PB_SIT_NNS = PB_SIT_CEIL + PB_SCREEN_N_BUDGETS, PB_SIT_NFAIL_NS,
       PB_SIT_DEGENERATE, PB_SIT_NUNMATCHED, PB_SIT_A3APPROX, PB_SIT_N_FIELDS };
_Static_assert(PB_SCREEN_N_BUDGETS == 3, "screen_cell_info.tsv names three budget ceilings");
static const struct pb_field pb_screen__info_tsv_fields[PB_SIT_N_FIELDS] = {
  [PB_SIT_N] = {"n", PB_FMT_INT}, [PB_SIT_NFAIL] = {"n_fail", PB_FMT_INT}, [PB_SIT_P] = {"p", PB_FMT_NUM},
  [PB_SIT_CEIL + 0] = {"ceil_q10", PB_FMT_NUM}, [PB_SIT_CEIL + 1] = {"ceil_q20", PB_FMT_NUM},
  [PB_SIT_CEIL + 2] = {"ceil_q30", PB_FMT_NUM}, [PB_SIT_NNS] = {"n_nonsingleton", PB_FMT_INT},
  [PB_SIT_NFAIL_NS] = {"n_fail_nonsingleton", PB_FMT_INT}, [PB_SIT_DEGENERATE] = {"derange_degenerate", PB_FMT_INT},
  [PB_SIT_NUNMATCHED] = {"n_unmatched", PB_FMT_INT}, [PB_SIT_A3APPROX] = {"a3_approx_images", PB_FMT_INT}};
static const struct pb_fields pb_screen__info_tsv = {.n = PB_SIT_N_FIELDS, .f = pb_screen__info_tsv_fields};

/* screen_fits.tsv after model, source: fit sizes, then per fit g_S, g_SU,
 * g_SUret the standardised intercept and weights (S, U, ret) and the gradient norm. */
enum { PB_SF_N_IMAGES, PB_SF_N_OBS, PB_SF_N_FAIL, PB_SF_FIT, PB_SF_N_FIELDS = PB_SF_FIT + 3 * 5 };
static const struct pb_field pb_screen__fit_fields[PB_SF_N_FIELDS] = {
  [PB_SF_N_IMAGES] = {"n_images", PB_FMT_INT}, [PB_SF_N_OBS] = {"n_obs", PB_FMT_INT},
  [PB_SF_N_FAIL] = {"n_fail", PB_FMT_INT},
  [PB_SF_FIT + 0] = {"gS_b", PB_FMT_NUM}, [PB_SF_FIT + 1] = {"gS_wS", PB_FMT_NUM},
  [PB_SF_FIT + 2] = {"gS_wU", PB_FMT_NUM}, [PB_SF_FIT + 3] = {"gS_wret", PB_FMT_NUM},
  [PB_SF_FIT + 4] = {"gS_grad", PB_FMT_NUM}, [PB_SF_FIT + 5] = {"gSU_b", PB_FMT_NUM},
  [PB_SF_FIT + 6] = {"gSU_wS", PB_FMT_NUM}, [PB_SF_FIT + 7] = {"gSU_wU", PB_FMT_NUM},
  [PB_SF_FIT + 8] = {"gSU_wret", PB_FMT_NUM}, [PB_SF_FIT + 9] = {"gSU_grad", PB_FMT_NUM},
  [PB_SF_FIT + 10] = {"gSUret_b", PB_FMT_NUM}, [PB_SF_FIT + 11] = {"gSUret_wS", PB_FMT_NUM},
  [PB_SF_FIT + 12] = {"gSUret_wU", PB_FMT_NUM}, [PB_SF_FIT + 13] = {"gSUret_wret", PB_FMT_NUM},
  [PB_SF_FIT + 14] = {"gSUret_grad", PB_FMT_NUM}};
static const struct pb_fields pb_screen__fits_tsv = {.n = PB_SF_N_FIELDS, .f = pb_screen__fit_fields};

/* The TSV rows of one unit's cells: screen_cells, screen_cell_info, screen_strata. */
static void pb_screen__unit_text(const struct pb_screen__ctx *X, int64_t u, const double *recs,
                                 const struct pb_screen__unit *U, struct pb_text *t)
{
  const struct pb_meta *meta = X->meta;
  const struct pb_screen_layout *L = &X->L;
  int32_t tt, m;
  pb_screen__cell_names(X, u, &tt, &m);
  const struct pb_source *src = &meta->sources[X->targets[tt]];
  double fit[PB_SF_N_FIELDS] = {[PB_SF_N_IMAGES] = U->n_fit, [PB_SF_N_OBS] = U->n_fit_trials,
                                [PB_SF_N_FAIL] = U->n_fit_fails};
  for (int g = 0; g < 3; g++) {
    const struct pb_screen_logit *f = &U->fit[g];
    double *o = fit + PB_SF_FIT + 5 * g;
    o[0] = f->ok ? f->b : NAN;
    for (int j = 0; j < 3; j++) o[1 + j] = f->ok && j <= g ? f->w[j] : NAN;
    o[4] = f->ok ? f->grad_norm : NAN;
  }
  pb_text_printf(&t[3], "%s\t%s", meta->model_ids[m], src->name);
  pb_fields_tsv_values(&pb_screen__fits_tsv, fit, 0, &t[3]);
  pb_text_printf(&t[3], "\n");
  int64_t cell = 0;
  for (int32_t c = 0; c < src->n_conditions; c++) {
    if (c == src->clean) continue;
    const double *rec = recs + (cell++) * L->rec_len;
    const char *tier = pb_protocol_tier_name((int)rec[PB_SI_TIER]);
    char head[1024];
    snprintf(head, sizeof head, "%s\t%s\t%s\t%s", meta->model_ids[m], src->name, src->conditions[c], tier);
    for (int32_t r = 0; r < L->n_rows; r++) {
      pb_text_printf(&t[0], "%s\t%s", head, L->row_names[r]);
      pb_fields_tsv_values(&pb_screen__met, rec + L->row_off + PB_SCREEN_MET * r, 0, &t[0]);
      pb_text_printf(&t[0], "\n");
    }
    const int64_t nn = (int64_t)rec[PB_SI_N], nf = (int64_t)rec[PB_SI_NFAIL];
    double info[PB_SIT_N_FIELDS] = {
      [PB_SIT_N] = nn, [PB_SIT_NFAIL] = nf, [PB_SIT_P] = nn > 0 ? (double)nf / nn : NAN,
      [PB_SIT_NNS] = rec[PB_SI_NNS], [PB_SIT_NFAIL_NS] = rec[PB_SI_NFAIL_NS],
      [PB_SIT_DEGENERATE] = rec[PB_SI_DEGENERATE], [PB_SIT_NUNMATCHED] = rec[PB_SI_NUNMATCHED],
      [PB_SIT_A3APPROX] = rec[PB_SI_A3APPROX]};
    for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++)
      info[PB_SIT_CEIL + b] =
          nf > 0 ? fmin(1.0, (double)pb_screen_budget((int32_t)nn, pb_screen_budget_pct[b]) / nf) : NAN;
    pb_text_printf(&t[1], "%s", head);
    pb_fields_tsv_values(&pb_screen__info_tsv, info, 0, &t[1]);
    pb_text_printf(&t[1], "\n");
    for (int st = 0; st < PB_SCREEN_STRATA; st++) {
      pb_text_printf(&t[2], "%s\t%s", head, pb_screen__strata_names[st]);
      pb_fields_tsv_values(&pb_screen__stratum, rec + L->strata_off + PB_SCREEN_STRATUM_F * st, 0, &t[2]);
      pb_text_printf(&t[2], "\n");
    }
  }
}

/* /screen/cells (keys, information fields, per-row metrics), /screen/strata
 * and /screen/subsets of this rank's cells [c0, c0 + nloc) (collective). */
static int pb_screen__write_cells(struct pb_stage *st, const struct pb_screen__ctx *X, int64_t u0, int64_t u1,
                                  const double *recs)
{
  const struct pb_screen_layout *L = &X->L;
  const int64_t c0 = X->unit_cell0[u0], nloc = X->unit_cell0[u1] - c0, n_cells = X->unit_cell0[X->n_units];
  int status = pb_results_group(st->results, "/screen/cells");
  int64_t *icol = pb_malloc((size_t)(nloc > 0 ? nloc : 1) * sizeof *icol);
  const char *keys[3] = {"source", "model", "condition"};
  for (int k = 0; k < 3 && status == PB_OK; k++) {
    int64_t j = 0;
    for (int64_t u = u0; u < u1; u++) {
      int32_t t, m;
      pb_screen__cell_names(X, u, &t, &m);
      const struct pb_source *src = &X->meta->sources[X->targets[t]];
      for (int32_t c = 0; c < src->n_conditions; c++)
        if (c != src->clean) icol[j++] = k == 0 ? X->targets[t] : k == 1 ? m : c;
    }
    char path[128];
    snprintf(path, sizeof path, "/screen/cells/%s", keys[k]);
    status = pb_results_write_i64(st->results, path, n_cells, c0, nloc, icol);
  }
  free(icol);
  const struct pb_fields info = pb_fields_static("/screen/cells", PB_SI_N_FIELDS, pb_screen__info_fields);
  if (status == PB_OK) status = pb_fields_write_at(&info, st->results, n_cells, c0, nloc, recs, L->rec_len);
  for (int32_t r = 0; r < L->n_rows && status == PB_OK; r++) {
    char group[256];
    snprintf(group, sizeof group, "/screen/cells/%s", L->row_names[r]);
    const struct pb_fields met = pb_fields_static(group, PB_SCREEN_MET, pb_screen__met_fields);
    status = pb_fields_write_at(&met, st->results, n_cells, c0, nloc, recs + L->row_off + PB_SCREEN_MET * r,
                                L->rec_len);
  }
  struct pb_fields strata; /* stratum-major block: <stratum>_<field> */
  pb_fields_alloc(&strata, "/screen/strata", PB_SCREEN_STRATA * PB_SCREEN_STRATUM_F);
  for (int sn = 0; sn < PB_SCREEN_STRATA; sn++)
    for (int f = 0; f < PB_SCREEN_STRATUM_F; f++)
      pb_fields_setf(&strata, sn * PB_SCREEN_STRATUM_F + f, PB_FMT_NUM, "%s_%s", pb_screen__strata_names[sn],
                     pb_screen__stratum_fields[f].name);
  if (status == PB_OK)
    status = pb_fields_write_at(&strata, st->results, n_cells, c0, nloc, recs + L->strata_off, L->rec_len);
  pb_fields_free(&strata);
  if (status == PB_OK && L->n_subsets > 0) {
    /* [cell][subset] flattened, cell-major */
    int64_t ns = L->n_subsets;
    double *a = pb_malloc((size_t)(nloc > 0 ? nloc : 1) * ns * sizeof *a), *v = pb_malloc((size_t)(nloc > 0 ? nloc : 1) * ns * sizeof *v);
    for (int64_t c = 0; c < nloc; c++)
      for (int64_t j = 0; j < ns; j++) {
        a[c * ns + j] = recs[c * L->rec_len + L->subset_off + 2 * j];
        v[c * ns + j] = recs[c * L->rec_len + L->subset_off + 2 * j + 1];
      }
    status = pb_results_group(st->results, "/screen/subsets");
    if (status == PB_OK) status = pb_results_write_f64(st->results, "/screen/subsets/auroc", n_cells * ns, c0 * ns, nloc * ns, a);
    if (status == PB_OK) status = pb_results_write_f64(st->results, "/screen/subsets/cov_q20", n_cells * ns, c0 * ns, nloc * ns, v);
    int64_t *sz = pb_malloc((size_t)ns * sizeof *sz);
    for (int64_t j = 0; j < ns; j++) sz[j] = L->subset_m[j];
    if (status == PB_OK) status = pb_results_write_i64(st->results, "/screen/subsets/m", ns, st->rank == 0 ? 0 : ns,
                                                       st->rank == 0 ? ns : 0, sz);
    free(sz);
    free(a);
    free(v);
  }
  return status;
}

/* Per-image scores and packed outcomes (what class resampling recomputes
 * from), and each cell's offsets into them (collective). */
static int pb_screen__write_images(struct pb_stage *st, const struct pb_screen__ctx *X, int64_t u0, int64_t u1,
                                   const struct pb_screen__unit *units, uint64_t *const *bits, const int32_t *n_words)
{
  const struct pb_screen_layout *L = &X->L;
  const int64_t c0 = X->unit_cell0[u0], nloc = X->unit_cell0[u1] - c0, n_cells = X->unit_cell0[X->n_units];
  int64_t my_img = 0, my_words = 0, img0 = 0, word0 = 0, tot[2];
  for (int64_t u = u0; u < u1; u++) {
    my_img += units[u - u0].n;
    my_words += (int64_t)n_words[u - u0] * (X->unit_cell0[u + 1] - X->unit_cell0[u]);
  }
  int64_t mine[2] = {my_img, my_words}, before[2] = {0, 0};
  MPI_Exscan(mine, before, 2, MPI_INT64_T, MPI_SUM, st->comm);
  if (st->rank == 0) before[0] = before[1] = 0;
  MPI_Allreduce(mine, tot, 2, MPI_INT64_T, MPI_SUM, st->comm);
  img0 = before[0];
  word0 = before[1];
  int status = pb_results_group(st->results, "/screen/images");
  int64_t ni = my_img > 0 ? my_img : 1;
  double *iv = pb_malloc((size_t)ni * sizeof *iv);
  int64_t *ii = pb_malloc((size_t)ni * sizeof *ii);
  for (int k = 0; k < 3 && status == PB_OK; k++) {
    int64_t j = 0;
    for (int64_t u = u0; u < u1; u++)
      for (int32_t q = 0; q < units[u - u0].n; q++)
        ii[j++] = k == 0 ? u : k == 1 ? units[u - u0].img[q] : units[u - u0].label[q];
    const char *nm[3] = {"/screen/images/unit", "/screen/images/image", "/screen/images/label"};
    status = pb_results_write_i64(st->results, nm[k], tot[0], img0, my_img, ii);
  }
  for (int32_t r = 0; r < L->n_rows + X->opt->n_derange && status == PB_OK; r++) {
    char path[256];
    int is_row = r < L->n_rows;
    if (is_row) {
      int keep = r >= PB_SR_FIXED;
      for (int j = 0; j < PB_SCREEN_N_IMAGE_ROWS; j++) keep |= pb_screen__image_rows[j] == r;
      if (!keep) continue;
      snprintf(path, sizeof path, "/screen/images/%s", L->row_names[r]);
    } else {
      snprintf(path, sizeof path, "/screen/images/U_derange_%d", r - L->n_rows);
    }
    int64_t j = 0;
    for (int64_t u = u0; u < u1; u++)
      for (int32_t q = 0; q < units[u - u0].n; q++)
        iv[j++] = is_row ? units[u - u0].score[r][q] : units[u - u0].der_score[r - L->n_rows][q];
    status = pb_results_write_f64(st->results, path, tot[0], img0, my_img, iv);
  }
  free(iv);
  free(ii);
  /* per cell: first image of its unit in /screen/images, first outcome word */
  if (status == PB_OK) {
    int64_t j = 0, io = img0, wo = word0;
    int64_t *ci = pb_malloc((size_t)(nloc > 0 ? nloc : 1) * sizeof *ci), *cw = pb_malloc((size_t)(nloc > 0 ? nloc : 1) * sizeof *cw);
    for (int64_t u = u0; u < u1; u++) {
      for (int64_t c = X->unit_cell0[u]; c < X->unit_cell0[u + 1]; c++) {
        ci[j] = io;
        cw[j++] = wo;
        wo += n_words[u - u0];
      }
      io += units[u - u0].n;
    }
    status = pb_results_write_i64(st->results, "/screen/cells/image_offset", n_cells, c0, nloc, ci);
    if (status == PB_OK) status = pb_results_write_i64(st->results, "/screen/cells/outcome_offset", n_cells, c0, nloc, cw);
    free(ci);
    free(cw);
  }
  if (status == PB_OK) {
    int64_t nw = my_words > 0 ? my_words : 1, j = 0;
    int64_t *w = pb_malloc((size_t)nw * sizeof *w);
    for (int64_t u = u0; u < u1; u++) {
      int64_t cnt = (int64_t)n_words[u - u0] * (X->unit_cell0[u + 1] - X->unit_cell0[u]);
      memcpy(w + j, bits[u - u0], (size_t)cnt * sizeof *w);
      j += cnt;
    }
    status = pb_results_group(st->results, "/screen/outcome");
    if (status == PB_OK) status = pb_results_write_i64(st->results, "/screen/outcome/bits", tot[1], word0, my_words, w);
    free(w);
  }
  return status;
}

/* screen_cells.tsv, screen_cell_info.tsv, screen_strata.tsv and
 * screen_fits.tsv in cell order: a round of units formats in parallel into
 * buffers that are reused round after round (so the 60 MB of text is never
 * held, nor its pages faulted in, at once) and goes to the files in unit
 * order (collective). */
static int pb_screen__write_tsv(struct pb_stage *st, const struct pb_screen__ctx *X, int64_t u0, int64_t u1,
                                const double *recs, const struct pb_screen__unit *units)
{
  static const char *const names[4] = {"screen_cells.tsv", "screen_cell_info.tsv", "screen_strata.tsv",
                                       "screen_fits.tsv"};
  const struct pb_screen_layout *L = &X->L;
  const int64_t c0 = X->unit_cell0[u0], round = 16 * (int64_t)omp_get_max_threads();
  struct pb_text head[4] = {{0}};
  pb_fields_tsv_header(&pb_screen__met, "model\tsource\tcondition\ttier\tscore", 0, &head[0]);
  pb_fields_tsv_header(&pb_screen__info_tsv, "model\tsource\tcondition\ttier", 0, &head[1]);
  pb_fields_tsv_header(&pb_screen__stratum, "model\tsource\tcondition\ttier\tstratum", 0, &head[2]);
  pb_fields_tsv_header(&pb_screen__fits_tsv, "model\tsource", 0, &head[3]);
  struct pb_tsv *tf[4] = {NULL};
  int status = PB_OK;
  for (int k = 0; k < 4 && status == PB_OK; k++) {
    pb_text_printf(&head[k], "\n");
    status = pb_results_tsv_open(st->results, names[k], head[k].buf, &tf[k]);
  }
  struct pb_text *tu = pb_calloc((size_t)(4 * round), sizeof *tu);
  for (int64_t a = u0; a < u1 && status == PB_OK; a += round) {
    const int64_t b = a + round < u1 ? a + round : u1;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t u = a; u < b; u++) {
      struct pb_text *t = &tu[4 * (u - a)];
      for (int j = 0; j < 4; j++) t[j].len = 0;
      pb_screen__unit_text(X, u, recs + (X->unit_cell0[u] - c0) * L->rec_len, &units[u - u0], t);
    }
    for (int j = 0; j < 4; j++)
      for (int64_t u = a; u < b; u++) pb_tsv_write(tf[j], tu[4 * (u - a) + j].buf, tu[4 * (u - a) + j].len);
  }
  for (int64_t j = 0; j < 4 * round; j++) pb_text_free(&tu[j]);
  free(tu);
  if (status == PB_OK) /* collective, in the same order on every rank */
    for (int j = 0; j < 4; j++) {
      int one = pb_tsv_commit(tf[j]);
      tf[j] = NULL;
      if (status == PB_OK) status = one;
    }
  for (int j = 0; j < 4; j++) {
    pb_tsv_abort(tf[j]);
    pb_text_free(&head[j]);
  }
  return status;
}

/* Every output of this rank's units [u0, u1) (collective). */
static int pb_screen__write(struct pb_stage *st, const struct pb_screen__ctx *X, int64_t u0, int64_t u1,
                            const double *recs, struct pb_screen__unit *units, uint64_t *const *bits,
                            const int32_t *n_words, struct pb_timer *tm)
{
  /* sub-phases of "write", recorded on every rank whatever the status (pb_timer_reduce) */
  double t0 = MPI_Wtime();
  int status = pb_screen__write_cells(st, X, u0, u1, recs);
  if (status == PB_OK) status = pb_screen__write_images(st, X, u0, u1, units, bits, n_words);
  double t1 = MPI_Wtime();
  pb_timer_add(tm, "write_h5", t1 - t0);
  pb_message("screen: results.h5 columns %.3f s", t1 - t0);
  if (status == PB_OK) status = pb_screen__write_tsv(st, X, u0, u1, recs, units);
  pb_timer_add(tm, "write_tsv", MPI_Wtime() - t1);
  pb_message("screen: TSV files %.3f s", MPI_Wtime() - t1);
  return status;
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

/* The interval tables (every rank resamples collectively) and the report on
 * rank 0, from every cell's record gathered in global order (collective). */
/* The natural-comparison tables with the selections named (collective). */
static int pb_screen__natural_report(struct pb_stage *st, const struct pb_screen__ctx *X,
                                     const struct pb_screen_cells *C, const struct pb_screen_sum *T,
                                     const struct pb_screen_boot *boot, struct pb_text *extra)
{
  struct pb_screen_sel_report S;
  memset(&S, 0, sizeof S);
  for (int g = 0; g < 2; g++) {
    const struct pb_screen__pool *pl = &X->pool[g];
    if (!pl->n_chosen) continue;
    size_t n = (size_t)X->n_targets * pl->n_pick;
    S.n_pick[g] = pl->n_pick;
    S.n_chosen[g] = pl->n_chosen;
    S.value[g] = pl->value;
    S.names[g] = pb_calloc(n > 0 ? n : 1, sizeof(char *));
    S.fixed[g] = pb_calloc(n > 0 ? n : 1, 1);
    for (int32_t t = 0; t < X->n_targets; t++)
      for (int32_t k = 0; k < pl->n_chosen[t]; k++) {
        int32_t a = pl->chosen[(size_t)t * pl->n_pick + k];
        const struct pb_screen__pset *ps = &X->ps[pl->ps[a]];
        const struct pb_source *src = &X->meta->sources[ps->src];
        const char *cond = src->conditions[ps->cond[pl->k[a]]];
        size_t len = strlen(src->name) + strlen(cond) + 2;
        char *name = S.names[g][(size_t)t * pl->n_pick + k] = pb_malloc(len);
        snprintf(name, len, "%s:%s", src->name, cond);
        /* the fixed set leads each pool: the primary set, or the natural source's first conditions */
        S.fixed[g][(size_t)t * pl->n_pick + k] = a < pl->n_pick;
      }
  }
  int status = pb_screen_natural_report(st->meta, &X->L, X->targets, X->n_targets, C, T, X->opt, boot, &S, st->comm,
                                        st->results, extra);
  for (int g = 0; g < 2; g++) {
    for (size_t j = 0; S.names[g] && j < (size_t)X->n_targets * S.n_pick[g]; j++) free(S.names[g][j]);
    free(S.names[g]);
    free(S.fixed[g]);
  }
  return status;
}

/* Every report table from this rank's units [u0, u1) (recs: their cells):
 * the totals of every rank's cells on rank 0 for the mean tables, exact
 * per-group sums for the interval tables (collective); no rank holds
 * another rank's records. */
static int pb_screen__report_all(struct pb_stage *st, const struct pb_screen__ctx *X, int64_t u0, int64_t u1,
                                 const double *recs, struct pb_screen_boot *boot, const char *store_path)
{
  const struct pb_screen_options *opt = X->opt;
  const int64_t c0 = X->unit_cell0[u0], nloc = X->unit_cell0[u1] - c0;
  int32_t *target = pb_malloc((size_t)(nloc > 0 ? nloc : 1) * sizeof *target);
  int32_t *model = pb_malloc((size_t)(nloc > 0 ? nloc : 1) * sizeof *model);
  int32_t *cond = pb_malloc((size_t)(nloc > 0 ? nloc : 1) * sizeof *cond);
  for (int64_t u = u0; u < u1; u++)
    for (int64_t c = X->unit_cell0[u]; c < X->unit_cell0[u + 1]; c++) {
      target[c - c0] = (int32_t)(u / st->meta->n_models);
      model[c - c0] = (int32_t)(u % st->meta->n_models);
      /* a unit's cells are its perturbed conditions in order, clean skipped */
      int32_t k = (int32_t)(c - X->unit_cell0[u]), clean = st->meta->sources[X->targets[target[c - c0]]].clean;
      cond[c - c0] = k < clean ? k : k + 1;
    }
  const struct pb_screen_cells C = {nloc, recs, target, model, cond};
  struct pb_screen_sum T;
  pb_screen_sum_init(&T, st->meta, &X->L, X->targets, X->n_targets);
  for (int64_t c = 0; c < nloc; c++) pb_screen_sum_add(&T, &X->L, &C, c);
  int status = pb_screen_sum_reduce(&T, st->comm);
  struct pb_text extra = {0};
  char *nothing = pb_screen__nothing_note(X, store_path);
  if (nothing) pb_text_printf(&extra, "%s", nothing);
  free(nothing);
  if (status == PB_OK && (opt->group_draws > 0 || opt->class_draws > 0))
    status = pb_screen_boot_table(boot, st->meta, &X->L, X->targets, &C, opt, opt->group_draws, st->comm,
                                  st->results, &extra);
  if (status == PB_OK)
    status = pb_screen_extra_report(st->meta, &X->L, X->targets, X->n_targets, &C, &T, opt, boot, st->comm,
                                    st->results, &extra);
  if (status == PB_OK) status = pb_screen__natural_report(st, X, &C, &T, boot, &extra);
  if (pb_resample_boot_one_group(st->meta->model_groups, st->meta->n_models, opt->group_draws, "screen"))
    pb_text_printf(&extra, "%s", PB_BOOT_ONE_GROUP_NOTE);
  if (status == PB_OK && st->rank == 0) {
    char desc[1024];
    const struct pb_source *P = &st->meta->sources[X->ps[0].src];
    snprintf(desc, sizeof desc, "%d conditions of %s", X->ps[0].n, P->name);
    status = pb_screen_report(st->meta, &X->L, X->targets, X->n_targets, &T, st->results, opt, desc, &extra);
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, st->comm);
  pb_text_free(&extra);
  pb_screen_sum_free(&T);
  free(target);
  free(model);
  free(cond);
  return status;
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
 * partition.  Collective. */
static void pb_screen__select(struct pb_screen__ctx *X, MPI_Comm comm, int64_t u0, int64_t u1)
{
  const int32_t M = X->meta->n_models;
  for (int g = 0; g < 2; g++) {
    struct pb_screen__pool *pl = &X->pool[g];
    if (pl->n == 0) continue;
    const int32_t n = pl->n;
    pl->n_chosen = pb_calloc((size_t)X->n_targets, sizeof *pl->n_chosen);
    pl->chosen = pb_calloc((size_t)(X->n_targets * pl->n_pick > 0 ? X->n_targets * pl->n_pick : 1), sizeof *pl->chosen);
    pl->value = pb_calloc((size_t)(X->n_targets * pl->n_pick > 0 ? X->n_targets * pl->n_pick : 1), sizeof *pl->value);
    double *sum = pb_malloc((size_t)M * n * sizeof *sum), *tot = pb_malloc((size_t)n * sizeof *tot);
    int64_t *cnt = pb_malloc((size_t)M * n * sizeof *cnt), *tc = pb_malloc((size_t)n * sizeof *tc);
    for (int32_t t = 0; t < X->n_targets; t++) {
      int64_t a = u0 > (int64_t)t * M ? u0 : (int64_t)t * M, b = u1 < (int64_t)(t + 1) * M ? u1 : (int64_t)(t + 1) * M;
      int32_t nu = b > a ? (int32_t)(b - a) : 0, *chosen = pl->chosen + (size_t)t * pl->n_pick, k = 0;
      struct pb_screen_sel_unit *su = pb_calloc((size_t)(nu > 0 ? nu : 1), sizeof *su);
#pragma omp parallel for schedule(dynamic)
      for (int32_t x = 0; x < nu; x++) pb_screen__sel_data(X, pl, t, (int32_t)(a + x - (int64_t)t * M), &su[x]);
      for (; k < pl->n_pick; k++) {
        memset(sum, 0, (size_t)M * n * sizeof *sum);
        memset(cnt, 0, (size_t)M * n * sizeof *cnt);
        /* units are independent: each thread fills its own models' entries */
#pragma omp parallel for schedule(dynamic)
        for (int32_t x = 0; x < nu; x++) {
          int32_t m = (int32_t)(a + x - (int64_t)t * M);
          pb_screen_sel_step(&su[x], chosen, k, 1, sum + (size_t)m * n, cnt + (size_t)m * n);
        }
        MPI_Allreduce(MPI_IN_PLACE, sum, M * n, MPI_DOUBLE, MPI_SUM, comm);
        MPI_Allreduce(MPI_IN_PLACE, cnt, M * n, MPI_INT64_T, MPI_SUM, comm);
        for (int32_t c = 0; c < n; c++) {
          tot[c] = 0;
          tc[c] = 0;
          for (int32_t m = 0; m < M; m++) tot[c] += sum[(size_t)m * n + c], tc[c] += cnt[(size_t)m * n + c];
        }
        int32_t c = pb_screen_sel_pick(tot, tc, chosen, k, n);
        if (c < 0) break;
        chosen[k] = c;
        pl->value[(size_t)t * pl->n_pick + k] = tot[c] / (double)tc[c];
      }
      pl->n_chosen[t] = k;
      for (int32_t x = 0; x < nu; x++) {
        free((void *)su[x].m);
        free((void *)su[x].fail);
        pb_screen_sel_unpack(&su[x]);
      }
      free(su);
    }
    free(sum);
    free(tot);
    free(cnt);
    free(tc);
  }
}

int pb_screen_run(const char *store_path, const char *outdir, MPI_Comm comm, const struct pb_protocol_options *popt,
                  const struct pb_screen_options *opt, const char *provenance)
{
  struct pb_stage st;
  struct pb_timer tm;
  pb_timer_start(&tm, "screen");
  if (pb_stage_open(store_path, outdir, comm, popt, provenance, &st)) return PB_FAIL;
  if (pb_stage_require(&st, store_path, "screen", PB_STAGE_NEEDS_CELLS | PB_STAGE_NEEDS_EVAL)) return pb_stage_close(&st, PB_FAIL);
  pb_figure_prepare(st.results); /* its gnuplot starts while the stage works */
  struct pb_screen__ctx X;
  memset(&X, 0, sizeof X);
  X.tta = -1;
  X.meta = st.meta;
  X.proto = &st.protocol;
  X.opt = opt;
  int status = pb_screen__targets(&X);
  if (status == PB_OK) status = pb_screen__psets(&X);
  if (status == PB_OK) status = pb_screen__joins(&X);
  if (status == PB_OK && opt->n_derange < 0) {
    pb_error_set("negative number of derangement draws");
    status = PB_FAIL;
  }
  /* the analysis split needs its clean-correct images, the fitting split development rows */
  for (int32_t t = 0; t < X.n_targets && status == PB_OK; t++) {
    const struct pb_protocol_source *ps = &st.protocol.src[X.targets[t]];
    if (ps->n_dev == 0 || ps->n_eval == 0) {
      pb_error_set("target source %s needs both development and evaluation images (has %d and %d)",
                   st.meta->sources[X.targets[t]].name, ps->n_dev, ps->n_eval);
      status = PB_FAIL;
    }
  }
  if (status != PB_OK) {
    pb_screen__ctx_free(&X);
    return pb_stage_close(&st, status);
  }
  pb_screen__subsets(&X);
  pb_screen__layout(&X);
  pb_screen__tiers(&X);
  /* units (target, model) in cell order, split over ranks by their cell counts */
  X.n_units = (int64_t)X.n_targets * st.meta->n_models;
  X.unit_cell0 = pb_malloc((size_t)(X.n_units + 1) * sizeof(int64_t));
  int64_t *cost = pb_malloc((size_t)(X.n_units > 0 ? X.n_units : 1) * sizeof *cost);
  X.unit_cell0[0] = 0;
  for (int64_t u = 0; u < X.n_units; u++) {
    int32_t nc = st.meta->sources[X.targets[u / st.meta->n_models]].n_conditions;
    X.unit_cell0[u + 1] = X.unit_cell0[u] + nc - 1;
    cost[u] = nc + X.ps[0].n + 8;
  }
  /* blocks of units in cell order, split over ranks by their cost */
  int64_t nb, per = pb_blocks_per(X.n_units, PB_SCREEN_BLOCKS, &nb);
  int64_t *bcost = pb_calloc((size_t)(nb > 0 ? nb : 1), sizeof *bcost);
  for (int64_t u = 0; u < X.n_units; u++) bcost[u / per] += cost[u];
  free(cost);
  struct pb_blocks bl;
  status = pb_blocks_open(&bl, outdir, "screen", nb, bcost, comm);
  free(bcost);
  int64_t u0 = bl.first * per, u1 = bl.last * per < X.n_units ? bl.last * per : X.n_units, nu = u1 - u0;
  struct pb_screen_boot boot;
  pb_screen_boot_init(&boot, st.meta, &X.L, X.targets, X.n_targets, opt->seed, opt->class_draws);
  const int64_t q = pb_screen__piece_rounds(&X, &bl, per, comm);
  if (q < bl.rounds)
    pb_message("screen: rows read a piece at a time, %lld rounds of units each (%lld pieces)", (long long)q,
               (long long)((bl.rounds + q - 1) / q));
  if (status == PB_OK && q >= bl.rounds) status = pb_screen__load(&st, &X, u0, u1, 0);
  status = pb_error_agree(comm, status);
  pb_timer_lap(&tm, "load");
  if (status == PB_OK) pb_screen__select(&X, comm, u0, u1);
  pb_timer_lap(&tm, "select");
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
  status = pb_blocks_close(&bl, pb_error_agree(comm, status));
  pb_timer_lap(&tm, "compute");
  pb_timer_add(&tm, "load", piece_load);
  pb_timer_add(&tm, "compute", -piece_load);
  /* the report first: its figures render (pb_figure_write) while the columns and TSV files are written */
  const double t_rep = MPI_Wtime();
  if (status == PB_OK) status = pb_screen__report_all(&st, &X, u0, u1, recs, &boot, store_path);
  pb_timer_add(&tm, "write_report", MPI_Wtime() - t_rep);
  pb_message("screen: report (tables, figures started) %.3f s", MPI_Wtime() - t_rep);
  status = pb_error_agree(comm, status);
  if (status == PB_OK) status = pb_screen__write(&st, &X, u0, u1, recs, units, bits, n_words, &tm);
  status = pb_error_agree(comm, status);
  pb_screen_boot_free(&boot);
  pb_timer_lap(&tm, "write");
  pb_timer_reduce(&tm, comm);
  pb_message("screen: load %.3f s; probe selection %.3f s; scores, fits and metrics %.3f s (%lld cells, %d "
             "derangement draws); write %.3f s",
             pb_timer_get(&tm, "load"), pb_timer_get(&tm, "select"), pb_timer_get(&tm, "compute"),
             (long long)X.unit_cell0[X.n_units],
             opt->n_derange, pb_timer_get(&tm, "write"));
  if (status == PB_OK) status = pb_timer_write(&tm, st.results);
  for (int64_t u = 0; u < nu; u++) /* a stopped loop leaves units unset */
    if (units[u].score) pb_screen__unit_free(&units[u], &X);
  for (int64_t u = 0; u < nu; u++) free(bits[u]);
  free(units);
  free(bits);
  free(n_words);
  free(recs);
  pb_screen__ctx_free(&X);
  return pb_stage_close(&st, status);
}
