/* Synthetic-panel configuration: INI parsing (libinih) and resolution of
 * condition grids into named conditions with target accuracies. */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/checksum.h"
#include "pairbound/error.h"
#include "pairbound/ini.h"
#include "pairbound/options.h"
#include "pairbound/output.h"
#include "pairbound/parse.h"
#include "pairbound/protocol.h"
#include "pairbound/store.h"
#include "pairbound/synth_config.h"

struct pb_synth_config__parse {
  struct pb_synth_config *cfg;
  const char *name;
  char **offset_models;     /* [model_skill] entries, applied after parsing */
  double *offsets;
  int32_t n_offsets;
};

static void pb_synth_config__append(char **dst, const char *v)
{
  size_t a = *dst ? strlen(*dst) : 0, b = strlen(v);
  *dst = pb_realloc(*dst, a + b + 2);
  if (a) (*dst)[a++] = ' ';
  memcpy(*dst + a, v, b + 1);
}

static struct pb_synth_source *pb_synth_config__source(struct pb_synth_config *cfg, const char *name)
{
  for (int32_t s = 0; s < cfg->n_sources; s++)
    if (strcmp(cfg->sources[s].name, name) == 0) return &cfg->sources[s];
  cfg->sources = pb_realloc(cfg->sources, (size_t)(cfg->n_sources + 1) * sizeof *cfg->sources);
  struct pb_synth_source *src = &cfg->sources[cfg->n_sources++];
  memset(src, 0, sizeof *src);
  src->name = pb_strdup(name);
  /* absent keys: the latent model's defaults (docs/synth.md) */
  static const double tier_accuracy[PB_N_TIERS][2] = {{0.84, 0.45}, {0.36, 0.24}, {0.16, 0.015}};
  memcpy(src->tier_accuracy, tier_accuracy, sizeof tier_accuracy);
  src->fragility_corr = src->coupling = NAN;
  for (int t = 0; t < PB_N_TIERS; t++) src->noise[t] = NAN;
  return src;
}

/* ---- the keys of a [source NAME] section: one option-table row each
 * (include/pairbound/options.h).  Custom rows: they accept what the keys
 * always accepted, and a value that does not parse is "[source NAME] key:
 * invalid value 'V'" (pb_ini_invalid) unless the key says more (classes,
 * probe, fragility_corr). */

static int pb_synth_config__int(const char *label, const char *v, int64_t lo, int64_t hi, int32_t *out)
{
  int64_t n;
  if (pb_parse_int(v, lo, hi, &n)) return pb_ini_invalid(label, v);
  *out = (int32_t)n;
  return PB_OK;
}

/* A text key: a copy of @p v, which may be empty (PB_OPTION_STRING's rows need a value). */
static int pb_synth_config__text(const char *v, char **out)
{
  free(*out);
  *out = pb_strdup(v);
  return PB_OK;
}

static int pb_synth_config__base(void *opts, const char *label, const char *v)
{
  (void)label;
  return pb_synth_config__text(v, &((struct pb_synth_source *)opts)->base);
}

static int pb_synth_config__image_prefix(void *opts, const char *label, const char *v)
{
  (void)label;
  return pb_synth_config__text(v, &((struct pb_synth_source *)opts)->image_prefix);
}

static int pb_synth_config__classes(void *opts, const char *label, const char *v)
{
  struct pb_synth_source *src = opts;
  int64_t n;
  (void)label;
  if (pb_parse_int(v, 2, PB_MAX_CLASSES, &n) == PB_OK) {
    src->classes = (int32_t)n;
    return PB_OK;
  }
  pb_error_set("[source %s] classes must be an integer in [2, %d] (the limit of classes per source), got '%s'",
               src->name, PB_MAX_CLASSES, v);
  return PB_FAIL;
}

static int pb_synth_config__images_per_class(void *opts, const char *label, const char *v)
{
  return pb_synth_config__int(label, v, 1, 1 << 16, &((struct pb_synth_source *)opts)->images_per_class);
}

static int pb_synth_config__dev_per_class(void *opts, const char *label, const char *v)
{
  struct pb_synth_source *src = opts;
  int64_t n[16];
  int k;
  if (pb_parse_int_list(v, 0, 1 << 16, 16, n, &k)) return pb_ini_invalid(label, v);
  for (int i = 0; i < k; i++) src->dev_pattern[i] = (int32_t)n[i];
  src->n_dev_pattern = k;
  return PB_OK;
}

static int pb_synth_config__clean_accuracy(void *opts, const char *label, const char *v)
{
  struct pb_synth_source *src = opts;
  double x;
  if (pb_parse_double(v, -DBL_MAX, DBL_MAX, 0, &x) || x <= 0.01 || x >= 0.99) return pb_ini_invalid(label, v);
  src->clean_accuracy = x;
  return PB_OK;
}

/* conditions and grid: a repeated key adds to the list */
static int pb_synth_config__conditions(void *opts, const char *label, const char *v)
{
  (void)label;
  pb_synth_config__append(&((struct pb_synth_source *)opts)->condition_text, v);
  return PB_OK;
}

static int pb_synth_config__grid(void *opts, const char *label, const char *v)
{
  (void)label;
  pb_synth_config__append(&((struct pb_synth_source *)opts)->grid, v);
  return PB_OK;
}

static int pb_synth_config__tiers(void *opts, const char *label, const char *v)
{
  struct pb_synth_source *src = opts;
  int64_t n[PB_N_TIERS];
  int k;
  if (pb_parse_int_list(v, 0, 1 << 24, PB_N_TIERS, n, &k) || k != PB_N_TIERS) return pb_ini_invalid(label, v);
  for (int t = 0; t < PB_N_TIERS; t++) src->tiers[t] = (int32_t)n[t];
  src->has_tiers = 1;
  return PB_OK;
}

static int pb_synth_config__role(void *opts, const char *label, const char *v)
{
  struct pb_synth_source *src = opts;
  struct pb_source probe = {.name = src->name}; /* the text must be a role; whether it fits, the store says */
  if (pb_meta_role_parse(&probe, v) != PB_OK) {
    char why[1024];
    snprintf(why, sizeof why, "%s", pb_error_message());
    pb_error_set("%s: %s", label, why);
    return PB_FAIL;
  }
  free(probe.role_of);
  free(src->role);
  src->role = pb_strdup(v);
  return PB_OK;
}

/* seed_values = key:value, ...: the seed paper's values for the source this one stands for ([source NAME]) or for
 * the whole panel ([panel]); reports print them beside the synthetic panel's (docs/synth.md).  Like conditions, a
 * continuation line (or a repeated key) adds to the list. */
static int pb_synth_config__seed_text(const char *label, const char *v, char **out)
{
  for (const char *p = v; *p;) {
    const size_t n = strcspn(p, ",");
    char item[128], *colon;
    double x;
    snprintf(item, sizeof item, "%.*s", (int)(n < sizeof item ? n : sizeof item - 1), p);
    colon = strchr(item, ':');
    if (!colon || colon == item || pb_parse_double(colon + 1, -DBL_MAX, DBL_MAX, 0, &x) != PB_OK)
      return pb_ini_invalid(label, v);
    p += n + (p[n] == ',');
  }
  if (*out) {
    char *both = pb_malloc(strlen(*out) + strlen(v) + 3);
    sprintf(both, "%s, %s", *out, v);
    free(*out);
    *out = both;
  } else
    *out = pb_strdup(v);
  return PB_OK;
}

static int pb_synth_config__seed_values(void *opts, const char *label, const char *v)
{
  return pb_synth_config__seed_text(label, v, &((struct pb_synth_source *)opts)->seed_values);
}

static int pb_synth_config__fragility_corr(void *opts, const char *label, const char *v)
{
  struct pb_synth_source *src = opts;
  (void)label;
  if (pb_parse_double(v, -1.0, 1.0, 0, &src->fragility_corr) == PB_OK) return PB_OK;
  pb_error_set("[source %s] fragility_corr must be a number in [-1, 1], got '%s'", src->name, v);
  return PB_FAIL;
}

static int pb_synth_config__label_sets(void *opts, const char *label, const char *v)
{
  struct pb_synth_source *src = opts;
  return pb_parse_double(v, 0.0, 1.0, 0, &src->label_sets) == PB_OK ? PB_OK : pb_ini_invalid(label, v);
}

static int pb_synth_config__coupling(void *opts, const char *label, const char *v)
{
  struct pb_synth_source *src = opts;
  return pb_parse_double(v, 0.0, 10.0, 0, &src->coupling) == PB_OK ? PB_OK : pb_ini_invalid(label, v);
}

/* wrong_confidence = shift or shift, class_sd: the logit shift of perturbed wrong records' S, and the spread of a
 * class factor added to it */
static int pb_synth_config__wrong_confidence(void *opts, const char *label, const char *v)
{
  struct pb_synth_source *src = opts;
  double x[2] = {0, 0};
  int n = 0;
  if (pb_parse_list(v, -10.0, 10.0, 2, x, &n) || x[1] < 0) return pb_ini_invalid(label, v);
  src->wrong_confidence = x[0];
  src->wrong_class_sd = n == 2 ? x[1] : 0.0;
  return PB_OK;
}

static int pb_synth_config__correct_confidence(void *opts, const char *label, const char *v)
{
  struct pb_synth_source *src = opts;
  return pb_parse_double(v, -10.0, 10.0, 0, &src->correct_confidence) == PB_OK ? PB_OK : pb_ini_invalid(label, v);
}

static int pb_synth_config__persistence(void *opts, const char *label, const char *v)
{
  struct pb_synth_source *src = opts;
  return pb_parse_double(v, 0.0, 1.0, 0, &src->persistence) == PB_OK ? PB_OK : pb_ini_invalid(label, v);
}

static int pb_synth_config__persistence_gain(void *opts, const char *label, const char *v)
{
  struct pb_synth_source *src = opts;
  return pb_parse_double(v, -10.0, 10.0, 0, &src->persistence_gain) == PB_OK ? PB_OK : pb_ini_invalid(label, v);
}

/* noise = s (every perturbed condition) or noise = mild,severe,extreme (by the tier of its target accuracy) */
static int pb_synth_config__noise(void *opts, const char *label, const char *v)
{
  struct pb_synth_source *src = opts;
  double x[PB_N_TIERS];
  int n = 0;
  if (pb_parse_list(v, 0.0, 10.0, PB_N_TIERS, x, &n) || (n != 1 && n != PB_N_TIERS)) return pb_ini_invalid(label, v);
  for (int t = 0; t < PB_N_TIERS; t++) src->noise[t] = x[n == 1 ? 0 : t];
  return PB_OK;
}

/* tier_accuracy = hi,lo, hi,lo, hi,lo: each tier's range of target accuracies, from its mildest condition to its
 * harshest, inside the protocol's tier (mild >= 0.40 > severe >= 0.20 > extreme) */
static int pb_synth_config__tier_accuracy(void *opts, const char *label, const char *v)
{
  struct pb_synth_source *src = opts;
  static const double floor[PB_N_TIERS] = {0.40, 0.20, 0.0}, ceil[PB_N_TIERS] = {0.99, 0.40, 0.20};
  double x[2 * PB_N_TIERS];
  int n = 0;
  if (pb_parse_list(v, 0.0, 0.99, 2 * PB_N_TIERS, x, &n) || n != 2 * PB_N_TIERS) return pb_ini_invalid(label, v);
  for (int t = 0; t < PB_N_TIERS; t++)
    if (!(x[2 * t] >= x[2 * t + 1] && x[2 * t + 1] >= floor[t] && x[2 * t] < ceil[t] && x[2 * t + 1] > 0)) {
      pb_error_set("%s: '%s': each tier's hi,lo needs hi >= lo within the tier's accuracies (mild [0.40, 0.99), "
                   "severe [0.20, 0.40), extreme (0, 0.20))", label, v);
      return PB_FAIL;
    }
  for (int t = 0; t < PB_N_TIERS; t++) src->tier_accuracy[t][0] = x[2 * t], src->tier_accuracy[t][1] = x[2 * t + 1];
  src->has_tier_accuracy = 1;
  return PB_OK;
}

/* row KEY is parsed by pb_synth_config__KEY */
#define PB_SYNTH_CONFIG__KEY(key) {.name = #key, .type = PB_OPTION_CUSTOM, .parse = pb_synth_config__##key}
static const struct pb_option pb_synth_config__source_keys[] = {
    PB_SYNTH_CONFIG__KEY(base),             /* name shared by sources with the same images */
    PB_SYNTH_CONFIG__KEY(image_prefix),     /* image ids are PREFIX + number */
    PB_SYNTH_CONFIG__KEY(classes),          /* 2 .. PB_MAX_CLASSES */
    PB_SYNTH_CONFIG__KEY(images_per_class), /* 1 .. 65536 */
    PB_SYNTH_CONFIG__KEY(dev_per_class),    /* 1 to 16 counts, cycled over classes */
    PB_SYNTH_CONFIG__KEY(clean_accuracy),   /* in (0.01, 0.99) */
    PB_SYNTH_CONFIG__KEY(conditions),       /* name:accuracy, ... (or grid) */
    PB_SYNTH_CONFIG__KEY(grid),             /* a,b x c,d, ... (with tiers) */
    PB_SYNTH_CONFIG__KEY(tiers),            /* mild,severe,extreme counts of the grid */
    PB_SYNTH_CONFIG__KEY(role),             /* synthetic, real, natural[:N] or extra:SRC */
    PB_SYNTH_CONFIG__KEY(seed_values),      /* key:value, ... the seed paper's values for this source */
    PB_SYNTH_CONFIG__KEY(fragility_corr),   /* in [-1, 1], not on an extra source */
    PB_SYNTH_CONFIG__KEY(coupling),         /* in [0, 10] */
    PB_SYNTH_CONFIG__KEY(noise),            /* in [0, 10], one or one per tier */
    PB_SYNTH_CONFIG__KEY(wrong_confidence), /* shift in [-10, 10], optional class spread in [0, 10] */
    PB_SYNTH_CONFIG__KEY(correct_confidence), /* in [-10, 10] */
    PB_SYNTH_CONFIG__KEY(persistence),      /* in [0, 1] */
    PB_SYNTH_CONFIG__KEY(persistence_gain), /* in [-10, 10] */
    PB_SYNTH_CONFIG__KEY(tier_accuracy),    /* hi,lo x 3 tiers, grid only */
    PB_SYNTH_CONFIG__KEY(label_sets),       /* in [0, 1]: share of images with 2-3 acceptable labels */
    {.name = NULL}};
#undef PB_SYNTH_CONFIG__KEY

/* One [source NAME] entry of section @p section. */
static int pb_synth_config__source_key(struct pb_synth_source *src, const char *section, const char *key,
                                       const char *v)
{
  const struct pb_option *o = pb_options_find_ini(pb_synth_config__source_keys, key);
  if (!o) {
    pb_error_set("unknown key '%s' in a source section", key);
    return PB_INI_REASON;
  }
  char label[512];
  snprintf(label, sizeof label, "[%s] %s", section, key);
  return pb_options_set(o, src, label, v) == PB_OK ? PB_OK : PB_INI_REASON;
}

static int32_t pb_synth_config__find(char **names, int32_t n, const char *key)
{
  for (int32_t i = 0; i < n; i++)
    if (strcmp(names[i], key) == 0) return i;
  return -1;
}

/* One synth-configuration entry (a pb_ini_fn). */
static int pb_synth_config__entry(void *user, const char *section, const char *key, const char *v)
{
  struct pb_synth_config__parse *p = user;
  struct pb_synth_config *cfg = p->cfg;
  int bad = PB_OK;
  double x;
  int64_t n;
  if (strcmp(section, "panel") == 0) {
    if (strcmp(key, "seed") == 0) { uint64_t u = 0; bad = pb_parse_uint(v, UINT64_MAX, &u); cfg->seed = u; }
    else if (strcmp(key, "topk") == 0) { bad = pb_parse_int(v, 0, 64, &n); cfg->topk = (int32_t)n; }
    else if (strcmp(key, "half_precision") == 0) { bad = pb_parse_int(v, 0, 1, &n); cfg->half_precision = (int)n; }
    else if (strcmp(key, "summaries") == 0) { bad = pb_parse_int(v, 0, 1, &n); cfg->summaries = (int)n; }
    else if (strcmp(key, "runner_up_spread") == 0) bad = pb_parse_double(v, 0.0, 10.0, 0, &cfg->runner_up_spread);
    else if (strcmp(key, "robustness") == 0) bad = pb_parse_double(v, 0.0, 10.0, 0, &cfg->robustness);
    else if (strcmp(key, "confidence_power") == 0) bad = pb_parse_double(v, 1.0, 10.0, 0, &cfg->confidence_power);
    else if (strcmp(key, "scale_factor") == 0)
      bad = pb_synth_config_factor_parse(v, &cfg->model_factor, &cfg->image_factor) ? PB_INI_REASON : PB_OK;
    else if (strcmp(key, "seed_values") == 0)
      bad = pb_synth_config__seed_text("[panel] seed_values", v, &cfg->seed_values) ? PB_INI_REASON : PB_OK;
    else { pb_error_set("unknown key '%s' in [panel]", key); bad = PB_INI_REASON; }
  } else if (strcmp(section, "groups") == 0) {
    if ((bad = pb_parse_double(v, -DBL_MAX, DBL_MAX, 0, &x)) == PB_OK) {
      if (pb_synth_config__find(cfg->group_names, cfg->n_groups, key) >= 0) {
        pb_error_set("group '%s' defined twice", key);
        bad = PB_INI_REASON;
      } else {
        cfg->group_names = pb_realloc(cfg->group_names, (size_t)(cfg->n_groups + 1) * sizeof(char *));
        cfg->group_skill = pb_realloc(cfg->group_skill, (size_t)(cfg->n_groups + 1) * sizeof(double));
        cfg->group_names[cfg->n_groups] = pb_strdup(key);
        cfg->group_skill[cfg->n_groups++] = x;
      }
    }
  } else if (strcmp(section, "models") == 0) {
    if (pb_synth_config__find(cfg->model_ids, cfg->n_models, key) >= 0) {
      pb_error_set("model '%s' listed twice", key);
      bad = PB_INI_REASON;
    } else {
      cfg->model_ids = pb_realloc(cfg->model_ids, (size_t)(cfg->n_models + 1) * sizeof(char *));
      cfg->model_groups = pb_realloc(cfg->model_groups, (size_t)(cfg->n_models + 1) * sizeof(char *));
      cfg->model_ids[cfg->n_models] = pb_strdup(key);
      cfg->model_groups[cfg->n_models++] = pb_strdup(v);
    }
  } else if (strcmp(section, "model_skill") == 0) {
    if ((bad = pb_parse_double(v, -DBL_MAX, DBL_MAX, 0, &x)) == PB_OK) {
      p->offset_models = pb_realloc(p->offset_models, (size_t)(p->n_offsets + 1) * sizeof(char *));
      p->offsets = pb_realloc(p->offsets, (size_t)(p->n_offsets + 1) * sizeof(double));
      p->offset_models[p->n_offsets] = pb_strdup(key);
      p->offsets[p->n_offsets++] = x;
    }
  } else if (strncmp(section, "source ", 7) == 0 && section[7]) {
    struct pb_synth_source *src = pb_synth_config__source(cfg, pb_ini_trim((char *)section + 7));
    bad = pb_synth_config__source_key(src, section, key, v);
  } else {
    pb_error_set("unknown section [%s]", section);
    bad = PB_INI_REASON;
  }
  return bad;
}

/* Harshness of a grid condition: later levels of each factor are harsher,
 * the first factor (lighting) three times as much; a hash jitter breaks ties. */
static double pb_synth_config__harshness(const int32_t *idx, const int32_t *levels, int32_t nf, const char *name)
{
  double h = 0;
  for (int32_t f = 0; f < nf; f++)
    if (levels[f] > 1) h += (f == 0 ? 3.0 : 1.0) * idx[f] / (levels[f] - 1);
  return h + 0.6 * (double)(pb_checksum_sha256_key(name) >> 11) / 9007199254740992.0;
}

struct pb_synth_config__ranked { double key; int32_t index; };

static int pb_synth_config__cmp_ranked(const void *a, const void *b)
{
  const struct pb_synth_config__ranked *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->index - y->index;
}

/* Expand 'a,b x c,d,e' into named conditions; tiers assign target accuracies
 * in order of harshness over each tier's tier_accuracy range (default mild
 * .84-.45, severe .36-.24, extreme .16-.015). */
static int pb_synth_config__resolve_grid(struct pb_synth_source *src)
{
  char *factors[8][32];
  int32_t levels[8] = {0}, nf = 0, total = 1;
  char *copy = pb_strdup(src->grid), *save = NULL;
  for (char *f = strtok_r(copy, "x", &save); f; f = strtok_r(NULL, "x", &save)) {
    if (nf == 8) goto bad;
    char *save2 = NULL;
    for (char *t = strtok_r(f, ",", &save2); t; t = strtok_r(NULL, ",", &save2)) {
      if (levels[nf] == 32 || !*pb_ini_trim(t)) goto bad;
      factors[nf][levels[nf]++] = pb_ini_trim(t);
    }
    if (levels[nf] == 0) goto bad;
    total *= levels[nf++];
  }
  if (nf == 0) goto bad;
  if (!src->has_tiers || src->tiers[0] + src->tiers[1] + src->tiers[2] != total) {
    pb_error_set("source %s: 'tiers' must give mild,severe,extreme counts summing to the %d grid conditions",
                 src->name, total);
    free(copy);
    return PB_FAIL;
  }
  src->n_conditions = total;
  src->conditions = pb_calloc((size_t)total, sizeof *src->conditions);
  struct pb_synth_config__ranked *rank = pb_malloc((size_t)total * sizeof *rank);
  for (int32_t c = 0; c < total; c++) {
    int32_t idx[8], r = c;
    char name[512] = "";
    for (int32_t f = nf - 1; f >= 0; f--) { idx[f] = r % levels[f]; r /= levels[f]; }
    for (int32_t f = 0; f < nf; f++) {
      if (f) strncat(name, "_", sizeof name - strlen(name) - 1);
      strncat(name, factors[f][idx[f]], sizeof name - strlen(name) - 1);
    }
    src->conditions[c].name = pb_strdup(name);
    rank[c].key = pb_synth_config__harshness(idx, levels, nf, name);
    rank[c].index = c;
  }
  qsort(rank, (size_t)total, sizeof *rank, pb_synth_config__cmp_ranked);
  for (int32_t t = 0, pos = 0; t < PB_N_TIERS; t++)
    for (int32_t j = 0; j < src->tiers[t]; j++, pos++)
      src->conditions[rank[pos].index].accuracy =
          src->tier_accuracy[t][0] - (src->tier_accuracy[t][0] - src->tier_accuracy[t][1]) * (j + 0.5) / src->tiers[t];
  free(rank);
  free(copy);
  return PB_OK;
bad:
  free(copy);
  pb_error_set("source %s: malformed grid '%s' (expected 'a,b x c,d,...')", src->name, src->grid);
  return PB_FAIL;
}

static int pb_synth_config__resolve_list(struct pb_synth_source *src)
{
  char *copy = pb_strdup(src->condition_text), *save = NULL;
  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    t = pb_ini_trim(t);
    if (!*t) continue;
    char *colon = strrchr(t, ':');
    double acc;
    if (!colon || (*colon = '\0', pb_parse_double(colon + 1, -DBL_MAX, DBL_MAX, 0, &acc)) || acc <= 0 || acc >= 1 ||
        !*pb_ini_trim(t)) {
      pb_error_set("source %s: condition '%s' must be written name:accuracy with 0 < accuracy < 1", src->name, t);
      free(copy);
      return PB_FAIL;
    }
    src->conditions = pb_realloc(src->conditions, (size_t)(src->n_conditions + 1) * sizeof *src->conditions);
    src->conditions[src->n_conditions].name = pb_strdup(pb_ini_trim(t));
    src->conditions[src->n_conditions++].accuracy = acc;
  }
  free(copy);
  return PB_OK;
}

/* Sources sharing a base inherit its image geometry from the first one. */
static int pb_synth_config__resolve_source(struct pb_synth_config *cfg, int32_t s)
{
  struct pb_synth_source *src = &cfg->sources[s];
  if (!src->base) src->base = pb_strdup(src->name);
  for (int32_t t = 0; t < s; t++) {
    const struct pb_synth_source *first = &cfg->sources[t];
    if (strcmp(first->base, src->base) != 0) continue;
    if ((src->classes && src->classes != first->classes) ||
        (src->images_per_class && src->images_per_class != first->images_per_class)) {
      pb_error_set("source %s: image geometry differs from source %s with the same base '%s'", src->name,
                   first->name, src->base);
      return PB_FAIL;
    }
    src->classes = first->classes;
    src->images_per_class = first->images_per_class;
    src->n_dev_pattern = first->n_dev_pattern;
    memcpy(src->dev_pattern, first->dev_pattern, sizeof src->dev_pattern);
    free(src->image_prefix);
    src->image_prefix = pb_strdup(first->image_prefix);
    break;
  }
  if (!src->classes || !src->images_per_class || !src->n_dev_pattern || !src->image_prefix) {
    pb_error_set("source %s: needs classes, images_per_class, dev_per_class and image_prefix", src->name);
    return PB_FAIL;
  }
  /* over two classes a wrong prediction's S + M < 1 is no distribution's: its entropy can exceed log 2, which
   * ingest and the store refuse (from three classes up, a vector summing to at most 1 never exceeds log n) */
  if (cfg->summaries && src->classes < 3) {
    pb_error_set("source %s: [panel] summaries = 1 needs at least 3 classes, and it has %d: a wrong prediction's S and "
                 "M do not sum to 1, so no vector of two classes has them (docs/synth.md, \"Per-record summaries\"); "
                 "set summaries = 0", src->name, (int)src->classes);
    return PB_FAIL;
  }
  /* a list longer than the classes would need classes that do not exist (the store's top-k classes lie in
   * [0, n_classes)) */
  if (cfg->topk > src->classes) {
    pb_error_set("source %s: [panel] topk = %d exceeds its %d classes: a top-k list holds distinct classes; set topk "
                 "to at most %d", src->name, (int)cfg->topk, (int)src->classes, (int)src->classes);
    return PB_FAIL;
  }
  for (int32_t i = 0; i < src->n_dev_pattern; i++)
    if (src->dev_pattern[i] >= src->images_per_class) {
      pb_error_set("source %s: dev_per_class must leave evaluation images in every class", src->name);
      return PB_FAIL;
    }
  if (src->clean_accuracy == 0) {
    pb_error_set("source %s: clean_accuracy is required", src->name);
    return PB_FAIL;
  }
  if ((src->grid != NULL) == (src->condition_text != NULL)) {
    pb_error_set("source %s: give exactly one of 'conditions' and 'grid'", src->name);
    return PB_FAIL;
  }
  if (src->has_tier_accuracy && !src->grid) {
    pb_error_set("source %s: tier_accuracy places a grid's conditions; a 'conditions' list gives its own accuracies",
                 src->name);
    return PB_FAIL;
  }
  if (src->grid ? pb_synth_config__resolve_grid(src) : pb_synth_config__resolve_list(src)) return PB_FAIL;
  const int natural = src->role && strncmp(src->role, "natural", 7) == 0;
  if (!isnan(src->fragility_corr) && src->role && strncmp(src->role, "extra:", 6) == 0) {
    pb_error_set("source %s: fragility_corr does not apply to an extra source (role = extra:SRC): its conditions "
                 "extend SRC's, on SRC's fragility", src->name);
    return PB_FAIL;
  }
  if (isnan(src->fragility_corr)) src->fragility_corr = natural ? 0.0 : 1.0;
  for (int32_t c = 0; c < src->n_conditions; c++) {
    int bad = strcmp(src->conditions[c].name, "clean") == 0;
    for (int32_t d = 0; d < c && !bad; d++) bad = strcmp(src->conditions[c].name, src->conditions[d].name) == 0;
    if (bad) {
      pb_error_set("source %s: condition '%s' repeated or reserved", src->name, src->conditions[c].name);
      return PB_FAIL;
    }
  }
  return PB_OK;
}

static int pb_synth_config__resolve(struct pb_synth_config__parse *p)
{
  struct pb_synth_config *cfg = p->cfg;
  if (cfg->n_models == 0 || cfg->n_sources == 0) {
    pb_error_set("%s: needs a [models] section and at least one [source NAME] section", p->name);
    return PB_FAIL;
  }
  cfg->model_skill = pb_calloc((size_t)cfg->n_models, sizeof(double));
  for (int32_t m = 0; m < cfg->n_models; m++) {
    int32_t g = pb_synth_config__find(cfg->group_names, cfg->n_groups, cfg->model_groups[m]);
    if (g < 0) {
      pb_error_set("%s: model %s: group '%s' is not listed in [groups]", p->name, cfg->model_ids[m],
                   cfg->model_groups[m]);
      return PB_FAIL;
    }
    cfg->model_skill[m] = cfg->group_skill[g];
  }
  for (int32_t i = 0; i < p->n_offsets; i++) {
    int32_t m = pb_synth_config__find(cfg->model_ids, cfg->n_models, p->offset_models[i]);
    if (m < 0) {
      pb_error_set("%s: [model_skill] names unknown model '%s'", p->name, p->offset_models[i]);
      return PB_FAIL;
    }
    cfg->model_skill[m] += p->offsets[i];
  }
  int status = PB_OK;
  for (int32_t s = 0; s < cfg->n_sources && status == PB_OK; s++) status = pb_synth_config__resolve_source(cfg, s);
  /* the factors apply to the resolved geometry, so a source inheriting its
   * base's images is scaled once, with it */
  int32_t fm = cfg->model_factor, fi = cfg->image_factor;
  cfg->model_factor = cfg->image_factor = 1;
  if (status == PB_OK) status = pb_synth_config_scale(cfg, fm, fi);
  if (status != PB_OK) {
    char why[1024];
    snprintf(why, sizeof why, "%s", pb_error_message());
    pb_error_set("%s: %s", p->name, why);
  }
  return status;
}

int pb_synth_config_factor_parse(const char *text, int32_t *model_factor, int32_t *image_factor)
{
  char buf[64];
  int64_t m = 0, i = 0;
  snprintf(buf, sizeof buf, "%s", text);
  char *x = strchr(buf, 'x');
  if (x) *x = '\0';
  if (strlen(text) >= sizeof buf || pb_parse_int(buf, 1, PB_SYNTH_MAX_FACTOR, &m) ||
      pb_parse_int(x ? x + 1 : buf, 1, PB_SYNTH_MAX_FACTOR, &i)) {
    pb_error_set("scale factor '%s': expected F or MxI, integers in [1, %d] (models x M, images per class x I)",
                 text, PB_SYNTH_MAX_FACTOR);
    return PB_FAIL;
  }
  *model_factor = (int32_t)m;
  *image_factor = (int32_t)i;
  return PB_OK;
}

/* Models copied in rounds: copy r (r = 2..fm) of model m is "ID~r", same group
 * and skill; its jitter comes from its own index, as for any model. */
static int pb_synth_config__scale_models(struct pb_synth_config *cfg, int32_t fm)
{
  const int32_t n = cfg->n_models;
  cfg->model_ids = pb_realloc(cfg->model_ids, (size_t)n * (size_t)fm * sizeof(char *));
  cfg->model_groups = pb_realloc(cfg->model_groups, (size_t)n * (size_t)fm * sizeof(char *));
  cfg->model_skill = pb_realloc(cfg->model_skill, (size_t)n * (size_t)fm * sizeof(double));
  for (int32_t r = 2; r <= fm; r++)
    for (int32_t m = 0; m < n; m++) {
      char id[256];
      snprintf(id, sizeof id, "%s~%d", cfg->model_ids[m], r);
      if (pb_synth_config__find(cfg->model_ids, cfg->n_models, id) >= 0) {
        pb_error_set("scale factor: copy '%s' of model %s is already a model of the configuration", id,
                     cfg->model_ids[m]);
        return PB_FAIL;
      }
      cfg->model_ids[cfg->n_models] = pb_strdup(id);
      cfg->model_groups[cfg->n_models] = pb_strdup(cfg->model_groups[m]);
      cfg->model_skill[cfg->n_models++] = cfg->model_skill[m];
    }
  return PB_OK;
}

int pb_synth_config_scale(struct pb_synth_config *cfg, int32_t model_factor, int32_t image_factor)
{
  if (model_factor < 1 || model_factor > PB_SYNTH_MAX_FACTOR || image_factor < 1 ||
      image_factor > PB_SYNTH_MAX_FACTOR) {
    pb_error_set("scale factor %dx%d outside [1, %d]", model_factor, image_factor, PB_SYNTH_MAX_FACTOR);
    return PB_FAIL;
  }
  for (int32_t s = 0; s < cfg->n_sources; s++) {
    const struct pb_synth_source *src = &cfg->sources[s];
    if ((int64_t)src->classes * src->images_per_class * image_factor > INT32_MAX) {
      pb_error_set("scale factor: source %s would have more than %d images", src->name, INT32_MAX);
      return PB_FAIL;
    }
  }
  if (model_factor > 1 && pb_synth_config__scale_models(cfg, model_factor) != PB_OK) return PB_FAIL;
  for (int32_t s = 0; s < cfg->n_sources; s++) {
    struct pb_synth_source *src = &cfg->sources[s];
    src->images_per_class *= image_factor;
    for (int32_t i = 0; i < src->n_dev_pattern; i++) src->dev_pattern[i] *= image_factor;
  }
  cfg->model_factor *= model_factor;
  cfg->image_factor *= image_factor;
  return PB_OK;
}

int pb_synth_config_parse(const char *text, const char *name, struct pb_synth_config *cfg)
{
  memset(cfg, 0, sizeof *cfg);
  cfg->seed = 20260908;
  cfg->half_precision = 1;
  cfg->confidence_power = 1;
  cfg->summaries = 1;
  cfg->model_factor = cfg->image_factor = 1;
  cfg->text = pb_strdup(text);
  struct pb_synth_config__parse p = {.cfg = cfg, .name = name};
  int status = pb_ini_parse(text, name, pb_synth_config__entry, &p);
  if (status == PB_OK) status = pb_synth_config__resolve(&p);
  for (int32_t i = 0; i < p.n_offsets; i++) free(p.offset_models[i]);
  free(p.offset_models);
  free(p.offsets);
  if (status != PB_OK) pb_synth_config_free(cfg);
  return status;
}

int pb_synth_config_load(const char *path, struct pb_synth_config *cfg)
{
  char *text = pb_output_text_load(path);
  if (!text) return PB_FAIL;
  int status = pb_synth_config_parse(text, path, cfg);
  free(text);
  return status;
}

static void pb_synth_config__free_strings(char **v, int32_t n)
{
  for (int32_t i = 0; i < n && v; i++) free(v[i]);
  free(v);
}

void pb_synth_config_free(struct pb_synth_config *cfg)
{
  pb_synth_config__free_strings(cfg->group_names, cfg->n_groups);
  free(cfg->group_skill);
  pb_synth_config__free_strings(cfg->model_ids, cfg->n_models);
  pb_synth_config__free_strings(cfg->model_groups, cfg->n_models);
  free(cfg->model_skill);
  for (int32_t s = 0; s < cfg->n_sources; s++) {
    struct pb_synth_source *src = &cfg->sources[s];
    free(src->name);
    free(src->base);
    free(src->image_prefix);
    free(src->grid);
    free(src->condition_text);
    free(src->role);
    free(src->seed_values);
    for (int32_t c = 0; c < src->n_conditions; c++) free(src->conditions[c].name);
    free(src->conditions);
  }
  free(cfg->sources);
  free(cfg->text);
  free(cfg->seed_values);
  memset(cfg, 0, sizeof *cfg);
}
