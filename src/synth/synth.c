/* Synthetic prediction records with the structure the seed paper's analyses
 * need (docs/synth.md): model skill, image easiness and an image-level
 * fragility shared by every source built on the same base images, condition
 * severities calibrated to target accuracies, persistent confusions, and
 * half-precision probabilities (so threshold ties occur). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <gsl/gsl_cdf.h>

#include "pairbound/error.h"
#include "pairbound/num.h"
#include "pairbound/protocol.h"
#include "pairbound/rng.h"
#include "pairbound/synth.h"

/* Latent scales (probit units). */
#define SIG_MODEL_JITTER 0.15
#define SIG_EASE 1.0
#define SIG_FRAGILITY 0.9
/* fragility is log-normal, exp(FRAG_LOG_SD * Z): never negative, so a harsher
 * condition never helps an image; its mean and variance enter mu_c */
#define FRAG_LOG_SD 0.6
#define SIG_NOISE 0.55
#define SEVERITY_SCALE 0.9
#define P_CONFUSABLE 0.7
/* tag of the class-factor stream in PB_RNG_SYNTH_IMAGE counters (image streams use tags 1 to 3 + sources) */
#define PB_SYNTH__CLASS_STREAM 0x1000ull

/* fmin and fmax of two numbers that are not NaN: one comparison, where fmin
 * and fmax are calls to libm that the compiler cannot inline (NaN's rules) */
static inline double pb_synth__min(double a, double b) { return b < a ? b : a; }
static inline double pb_synth__max(double a, double b) { return b > a ? b : a; }

static float pb_synth__prob(const struct pb_synth_config *cfg, double p)
{
  return cfg->half_precision ? pb_num_round_half(p) : (float)p;
}

/* Index of the first source with the same base: names the shared image stream. */
static int32_t pb_synth__base_id(const struct pb_synth_config *cfg, int32_t s)
{
  for (int32_t t = 0; t < s; t++)
    if (strcmp(cfg->sources[t].base, cfg->sources[s].base) == 0) return t;
  return s;
}

/* The two neighbour classes of class @p y (a base's own): the labels its images are usually mistaken for. */
static void pb_synth__neighbours(const struct pb_synth_config *cfg, int32_t base, int32_t y, int32_t K,
                                 int32_t nb[2])
{
  struct pb_rng r;
  pb_rng_init(&r, cfg->seed, PB_RNG_SYNTH_IMAGE, (uint64_t)y | (1ull << 40), (uint32_t)base);
  for (int j = 0; j < 2; j++) nb[j] = (int32_t)((y + 1 + pb_rng_below(&r, (uint32_t)K - 1)) % (uint32_t)K);
}

/* Label sets of a source with label_sets = p (docs/synth.md, "Label sets"), per base image from a stream of their
 * own (PB_RNG_SYNTH_LSETS), so that sources sharing a base share them and no other field changes: an empty set
 * with PB_SYNTH_LSETS_EMPTY; else, with PB_SYNTH_LSETS_ABSENT, one or two neighbour classes without the original
 * label; else with p the original label and one or two neighbour classes; else the original label alone. */
#define PB_SYNTH_LSETS_EMPTY 0.05
#define PB_SYNTH_LSETS_ABSENT 0.10
static void pb_synth__lsets(const struct pb_synth_config *cfg, int32_t s, int32_t base, struct pb_source *src)
{
  const double p = cfg->sources[s].label_sets;
  if (!(p > 0)) return;
  src->lset_off = pb_malloc(((size_t)src->n_images + 1) * sizeof *src->lset_off);
  src->lset_ids = pb_malloc(((size_t)src->n_images * 3 + 1) * sizeof *src->lset_ids);
  src->lset_off[0] = 0;
  for (int32_t i = 0; i < src->n_images; i++) {
    struct pb_rng r;
    pb_rng_init(&r, cfg->seed, PB_RNG_SYNTH_LSETS, (uint64_t)i, (uint32_t)base);
    const int32_t y = src->labels[i];
    int32_t nb[2], set[3], n = 0;
    pb_synth__neighbours(cfg, base, y, src->n_classes, nb);
    const double u = pb_rng_uniform(&r), v = pb_rng_uniform(&r), w = pb_rng_uniform(&r);
    const int a = (int)pb_rng_below(&r, 2), both = (int)pb_rng_below(&r, 2);
    if (u >= PB_SYNTH_LSETS_EMPTY) {
      const int absent = v < PB_SYNTH_LSETS_ABSENT, multi = absent || w < p;
      if (!absent) set[n++] = y;
      if (multi) set[n++] = nb[a];
      if (multi && both && nb[1 - a] != nb[a]) set[n++] = nb[1 - a];
    }
    for (int32_t k = 1; k < n; k++) /* ascending, each once */
      for (int32_t j = k; j > 0 && set[j] < set[j - 1]; j--) {
        const int32_t t = set[j];
        set[j] = set[j - 1];
        set[j - 1] = t;
      }
    int32_t m = 0;
    for (int32_t k = 0; k < n; k++)
      if (m == 0 || set[k] != src->lset_ids[src->lset_off[i] + m - 1]) src->lset_ids[src->lset_off[i] + m++] = set[k];
    src->lset_off[i + 1] = src->lset_off[i] + m;
  }
}

int pb_synth_meta(const struct pb_synth_config *cfg, struct pb_meta *meta)
{
  memset(meta, 0, sizeof *meta);
  meta->n_models = cfg->n_models;
  meta->model_ids = pb_malloc((size_t)cfg->n_models * sizeof(char *));
  meta->model_groups = pb_malloc((size_t)cfg->n_models * sizeof(char *));
  for (int32_t m = 0; m < cfg->n_models; m++) {
    meta->model_ids[m] = pb_strdup(cfg->model_ids[m]);
    meta->model_groups[m] = pb_strdup(cfg->model_groups[m]);
  }
  meta->topk = cfg->topk;
  meta->summaries = cfg->summaries ? PB_SUMMARY_ENTROPY | PB_SUMMARY_COLLISION : 0;
  meta->n_sources = cfg->n_sources;
  meta->sources = pb_calloc((size_t)cfg->n_sources, sizeof *meta->sources);
  for (int32_t s = 0; s < cfg->n_sources; s++) {
    const struct pb_synth_source *cs = &cfg->sources[s];
    struct pb_source *src = &meta->sources[s];
    int32_t base = pb_synth__base_id(cfg, s), n = cs->classes * cs->images_per_class;
    src->name = pb_strdup(cs->name);
    src->n_classes = cs->classes;
    src->n_images = n;
    src->image_ids = pb_malloc((size_t)n * sizeof(char *));
    src->labels = pb_malloc((size_t)n * sizeof(int32_t));
    src->split = pb_malloc((size_t)n);
    int digits = snprintf(NULL, 0, "%d", n);
    int32_t *order = pb_malloc((size_t)cs->images_per_class * sizeof *order);
    for (int32_t y = 0; y < cs->classes; y++) {
      /* which images of the class are development images: a seeded shuffle */
      struct pb_rng rng;
      pb_rng_init(&rng, cfg->seed, PB_RNG_SYNTH_SPLIT, (uint64_t)y, (uint32_t)base);
      for (int32_t j = 0; j < cs->images_per_class; j++) order[j] = j;
      for (int32_t j = cs->images_per_class - 1; j > 0; j--) {
        int32_t k = (int32_t)pb_rng_below(&rng, (uint32_t)j + 1), t = order[j];
        order[j] = order[k];
        order[k] = t;
      }
      int32_t n_dev = cs->dev_pattern[y % cs->n_dev_pattern];
      for (int32_t j = 0; j < cs->images_per_class; j++) {
        int32_t i = y * cs->images_per_class + j;
        char id[64];
        snprintf(id, sizeof id, "%s-%0*d", cs->image_prefix, digits, i + 1);
        src->image_ids[i] = pb_strdup(id);
        src->labels[i] = y;
      }
      for (int32_t j = 0; j < cs->images_per_class; j++)
        src->split[y * cs->images_per_class + order[j]] = j < n_dev ? PB_SPLIT_DEV : PB_SPLIT_EVAL;
    }
    free(order);
    pb_synth__lsets(cfg, s, base, src);
    src->n_conditions = cs->n_conditions + 1;
    if (cs->role && pb_meta_role_parse(src, cs->role) != PB_OK) return PB_FAIL;
    src->seed_values = cs->seed_values ? pb_strdup(cs->seed_values) : NULL;
    src->conditions = pb_malloc((size_t)src->n_conditions * sizeof(char *));
    src->clean = 0;
    src->conditions[0] = pb_strdup(PB_CLEAN_CONDITION);
    for (int32_t c = 0; c < cs->n_conditions; c++) src->conditions[c + 1] = pb_strdup(cs->conditions[c].name);
  }
  size_t n = strlen(cfg->text) + 128;
  meta->provenance = pb_malloc(n);
  snprintf(meta->provenance, n, "pairbound synth, seed %llu, configuration:\n%s", (unsigned long long)cfg->seed,
           cfg->text);
  meta->seed_values = cfg->seed_values ? pb_strdup(cfg->seed_values) : NULL;
  pb_meta_infer_roles(meta);
  return pb_meta_validate(meta);
}

/* Latent quantities of one source that every record of it needs. */
struct pb_synth__source {
  double *ease, *fragility;     /* [n_images] shared across a base (a source's own in part: fragility_corr) */
  double sig_fragility;         /* the source's fragility weight, SIG_FRAGILITY x coupling */
  double *sig_noise;            /* [n_conditions] record noise: the source's capture noise, SIG_NOISE when clean */
  double *wrong_shift;          /* [n_conditions] logit shift of wrong records' S: wrong_confidence, 0 when clean */
  double *right_shift;          /* [n_conditions] logit shift of correct records' S: correct_confidence, 0 when clean */
  int32_t *confusable;          /* [n_images] the label an image is usually mistaken for */
  double *class_conf;           /* [n_classes] wrong_confidence's class spread x a class factor, or NULL (none) */
  double *theta;                /* [n_models] */
  double *robust;               /* [n_models] response to severity (robustness, persistence_gain), or NULL (none) */
  double *rho;                  /* [n_models] persistence: a perturbed record's noise's share of the clean one's, or NULL */
  double *mu, *severity;        /* [n_conditions] */
  uint32_t *stream;             /* [n_conditions] record stream id; clean shared across a base */
  int32_t clean;                /* the clean condition's index */
};

/* How confidently each class's images are mistaken under source s's perturbations: a class factor of the base
 * (a stream of its own, so no other draw moves) times the source's class spread; NULL when it has none. */
static double *pb_synth__class_conf(const struct pb_synth_config *cfg, int32_t s, int32_t K, int32_t base)
{
  const double sd = cfg->sources[s].wrong_class_sd;
  if (!(sd > 0)) return NULL;
  double *conf = pb_malloc((size_t)K * sizeof(double));
  for (int32_t y = 0; y < K; y++) {
    struct pb_rng rng;
    pb_rng_init(&rng, cfg->seed, PB_RNG_SYNTH_IMAGE, (uint64_t)y | (PB_SYNTH__CLASS_STREAM << 40), (uint32_t)base);
    conf[y] = sd * pb_rng_normal(&rng);
  }
  return conf;
}

double pb_synth_persistence_factor(const struct pb_synth_config *cfg, int32_t m)
{
  struct pb_rng rng;
  pb_rng_init(&rng, cfg->seed, PB_RNG_SYNTH_MODEL, (uint64_t)m, 2);
  return pb_rng_normal(&rng);
}

/* Each model's response to severity on source s: robustness r_m plus the source's persistence_gain times the
 * model's persistence factor u_m, so that the source's accuracies depend on a latent that, on any other source,
 * only paired statistics read; NULL when neither key is set.  Its mean and variance over the models enter mu_c
 * like theta's, times the severity. */
static double *pb_synth__response(const struct pb_synth_config *cfg, int32_t s, int32_t n_models, double *mean,
                                  double *var)
{
  const double gain = cfg->sources[s].persistence_gain;
  *mean = *var = 0;
  if (!(cfg->robustness > 0) && gain == 0) return NULL;
  double *r = pb_malloc((size_t)n_models * sizeof(double));
  for (int32_t m = 0; m < n_models; m++) {
    struct pb_rng rng;
    pb_rng_init(&rng, cfg->seed, PB_RNG_SYNTH_MODEL, (uint64_t)m, 1);
    r[m] = cfg->robustness > 0 ? cfg->robustness * pb_rng_normal(&rng) : 0.0;
    if (gain != 0) r[m] += gain * pb_synth_persistence_factor(cfg, m);
    *mean += r[m] / n_models;
  }
  for (int32_t m = 0; m < n_models; m++) *var += (r[m] - *mean) * (r[m] - *mean);
  *var /= n_models;
  return r;
}

static void pb_synth__latents(const struct pb_synth_config *cfg, const struct pb_meta *meta, int32_t s,
                              struct pb_synth__source *L)
{
  const struct pb_synth_source *cs = &cfg->sources[s];
  const struct pb_source *src = &meta->sources[s];
  int32_t base = pb_synth__base_id(cfg, s), K = src->n_classes;
  L->ease = pb_malloc((size_t)src->n_images * sizeof(double));
  L->fragility = pb_malloc((size_t)src->n_images * sizeof(double));
  L->confusable = pb_malloc((size_t)src->n_images * sizeof(int32_t));
  for (int32_t i = 0; i < src->n_images; i++) {
    struct pb_rng rng;
    pb_rng_init(&rng, cfg->seed, PB_RNG_SYNTH_IMAGE, (uint64_t)i, (uint32_t)base);
    L->ease[i] = SIG_EASE * pb_rng_normal(&rng);
    double z = pb_rng_normal(&rng);
    if (meta->sources[s].role == PB_ROLE_NATURAL || cs->fragility_corr != 1.0) {
      /* natural transforms (and a source with fragility_corr < 1) respond to a
       * fragility of their own, only partly the base image's: r z + sqrt(1 -
       * r^2) w keeps the log-normal law; w is the natural source's image
       * factor, or one of the source's own (its index in the stream) */
      struct pb_rng own;
      const uint64_t which = meta->sources[s].role == PB_ROLE_NATURAL ? 2ull : 3ull + (uint64_t)s;
      pb_rng_init(&own, cfg->seed, PB_RNG_SYNTH_IMAGE, (uint64_t)i | (which << 40), (uint32_t)base);
      double r = cs->fragility_corr;
      z = r * z + sqrt(1.0 - r * r) * pb_rng_normal(&own);
    }
    L->fragility[i] = exp(FRAG_LOG_SD * z);
    /* two neighbour classes per class; each image leans to one of them */
    int32_t y = src->labels[i], j = (int32_t)pb_rng_below(&rng, 2), nb[2];
    pb_synth__neighbours(cfg, base, y, K, nb);
    L->confusable[i] = nb[j];
  }
  L->class_conf = pb_synth__class_conf(cfg, s, K, base);
  double mean = 0, var = 0;
  L->theta = pb_malloc((size_t)meta->n_models * sizeof(double));
  for (int32_t m = 0; m < meta->n_models; m++) {
    struct pb_rng rng;
    pb_rng_init(&rng, cfg->seed, PB_RNG_SYNTH_MODEL, (uint64_t)m, 0);
    L->theta[m] = cfg->model_skill[m] + SIG_MODEL_JITTER * pb_rng_normal(&rng);
    mean += L->theta[m];
  }
  mean /= meta->n_models;
  for (int32_t m = 0; m < meta->n_models; m++) var += (L->theta[m] - mean) * (L->theta[m] - mean);
  var /= meta->n_models;
  double r_mean = 0, r_var = 0;
  L->robust = pb_synth__response(cfg, s, meta->n_models, &r_mean, &r_var);
  L->rho = NULL;
  if (cs->persistence > 0) {
    L->rho = pb_malloc((size_t)meta->n_models * sizeof(double));
    for (int32_t m = 0; m < meta->n_models; m++)
      L->rho[m] = cs->persistence * gsl_cdf_ugaussian_P(pb_synth_persistence_factor(cfg, m));
  }
  L->clean = src->clean;
  L->mu = pb_malloc((size_t)src->n_conditions * sizeof(double));
  L->severity = pb_malloc((size_t)src->n_conditions * sizeof(double));
  L->stream = pb_malloc((size_t)src->n_conditions * sizeof(uint32_t));
  double z0 = gsl_cdf_ugaussian_Pinv(cs->clean_accuracy);
  double v2 = FRAG_LOG_SD * FRAG_LOG_SD, frag_mean = exp(v2 / 2), frag_var = (exp(v2) - 1) * exp(v2);
  const double sf = isnan(cs->coupling) ? SIG_FRAGILITY : SIG_FRAGILITY * cs->coupling;
  L->sig_fragility = sf;
  L->sig_noise = pb_malloc((size_t)src->n_conditions * sizeof(double));
  L->wrong_shift = pb_malloc((size_t)src->n_conditions * sizeof(double));
  L->right_shift = pb_malloc((size_t)src->n_conditions * sizeof(double));
  for (int32_t c = 0; c < src->n_conditions; c++) {
    double acc = c == src->clean ? cs->clean_accuracy : cs->conditions[c - 1].accuracy;
    double z = gsl_cdf_ugaussian_Pinv(acc);
    double sev = c == src->clean ? 0.0 : SEVERITY_SCALE * fmax(0.0, z0 - z);
    /* the clean records of a base are one (identical in every source on it): their noise is no source's own */
    const int tier = pb_protocol_tier_of_accuracy(acc);
    const double sn = c == src->clean || isnan(cs->noise[tier]) ? SIG_NOISE : cs->noise[tier];
    double total = var + SIG_EASE * SIG_EASE + sev * sev * sf * sf * frag_var + sn * sn;
    if (L->robust) total += sev * sev * r_var;
    /* mean accuracy over models and images is acc when the latent sum is
     * Gaussian (the log-normal fragility term makes it nearly so) */
    L->mu[c] = z * sqrt(total) - mean + sev * sf * frag_mean;
    if (L->robust) L->mu[c] -= sev * r_mean;
    L->sig_noise[c] = sn;
    /* clean records are the base's (they set the thresholds): the shifts are the perturbation's */
    L->wrong_shift[c] = c == src->clean ? 0.0 : cs->wrong_confidence;
    L->right_shift[c] = c == src->clean ? 0.0 : cs->correct_confidence;
    L->severity[c] = sev;
    L->stream[c] = c == src->clean ? (uint32_t)base << 16 : ((uint32_t)s << 16) | (uint32_t)c;
  }
}

static void pb_synth__latents_free(struct pb_synth__source *L)
{
  free(L->ease), free(L->fragility), free(L->confusable), free(L->class_conf), free(L->theta), free(L->robust),
      free(L->rho);
  free(L->mu), free(L->severity), free(L->stream), free(L->sig_noise), free(L->wrong_shift), free(L->right_shift);
}

struct pb_synth__entry { int32_t cls; float p; };

/* Whether @p x comes before @p y: higher probability first, then lower class
 * (a strict total order: the classes of a list are distinct). */
static int pb_synth__before(const struct pb_synth__entry *x, const struct pb_synth__entry *y)
{
  return x->p != y->p ? x->p > y->p : x->cls < y->cls;
}

/* Top-k list consistent with (pred, smax, ptrue): the remaining mass decays
 * geometrically over other classes, each strictly below smax.  The first of
 * them is the image's confusable class, as a real model's list holds the
 * plausible confusions of an image under every condition (so that the
 * lists of one image's records share it, as A3 needs); the rest are random.
 * The decay ratio is 1/2, or with runner_up_spread x > 0 a draw of its own per
 * record, 0.5 / (1 + x u) with u uniform (one uniform draw: synth writes
 * tens of millions of lists): the runner-ups' shape then varies
 * independently of S, so margin and entropy rank records unlike S. */
static int32_t pb_synth__topk(const struct pb_synth_config *cfg, struct pb_rng *rng, int32_t K, int32_t y,
                              int32_t conf, int32_t pred, float S, float M, int32_t *cls, float *prob,
                              struct pb_synth__entry *e)
{
  int32_t k = cfg->topk, n = 0;
  e[n++] = (struct pb_synth__entry){pred, S};
  if (pred != y) e[n++] = (struct pb_synth__entry){y, M};
  double rest = 1.0 - S - (pred != y ? M : 0.0);
  float cap = pb_synth__prob(cfg, S * 0.96);
  const double ratio = cfg->runner_up_spread > 0 ? 0.5 / (1.0 + cfg->runner_up_spread * pb_rng_uniform(rng)) : 0.5;
  for (int32_t j = 0; j < k && n < K; j++) {
    rest *= ratio;
    int32_t c = conf;
    int dup = 0;
    for (int32_t t = 0; t < n; t++) dup |= e[t].cls == c;
    while (dup) {
      c = (int32_t)pb_rng_below(rng, (uint32_t)K);
      dup = 0;
      for (int32_t t = 0; t < n; t++) dup |= e[t].cls == c;
    }
    float p = pb_synth__prob(cfg, pb_synth__min(rest, cap));
    e[n++] = (struct pb_synth__entry){c, p};
  }
  /* insertion sort of the few entries after the first (qsort's calls were a
   * tenth of synth); the order is total, so any sort gives this one */
  for (int32_t a = 2; a < n; a++) {
    const struct pb_synth__entry v = e[a];
    int32_t b = a;
    for (; b > 1 && pb_synth__before(&v, &e[b - 1]); b--) e[b] = e[b - 1];
    e[b] = v;
  }
  for (int32_t j = 0; j < k; j++) {
    cls[j] = j < n ? e[j].cls : -1;
    prob[j] = j < n ? e[j].p : 0.0f;
  }
  return n;
}

/* The record's entropy and collision (pb_synth_summaries) from the classes
 * the generator pinned: its top-k entries @p e[0..n) in their order, or
 * without a list the predicted and the true class. */
static void pb_synth__summaries(const struct pb_synth_config *cfg, int32_t K, int32_t y, int32_t pred, float S,
                                float M, const struct pb_synth__entry *e, int32_t n, float *entropy,
                                float *collision)
{
  float p[2 + 64];
  float cap = S;
  if (cfg->topk > 0) {
    for (int32_t j = 0; j < n; j++) p[j] = e[j].p;
    cap = e[(n < cfg->topk ? n : cfg->topk) - 1].p; /* the list's last probability */
  } else {
    n = 0;
    p[n++] = S;
    if (pred != y) p[n++] = M;
  }
  pb_synth_summaries(p, n, K, cap, entropy, collision);
}

/* Where near math (pb_num_log_n and the others with libmvec: normals,
 * sigmoids and powers four lanes at a time) could make a record differ from
 * the one glibc's scalar functions give: the record is refused, and made
 * again with those, when eta lies within tol x (1 + T) of 0, or a value it
 * rounds to a probability, or compares with 0.9 S, lies that close to a
 * rounding boundary or to 0.9 S (T: the sizes of eta's terms and of zeta,
 * and of the sigmoids' shifts and w; 16 times that, times M, for M).  The
 * near normals differ from pb_rng_normal's by about 10 units in their last
 * place at most (4 each for libmvec's log and cos, 1 each for glibc's, the
 * square root's and the product's roundings): j < 2^-48 of their size.
 * Through eta (the noise term's difference and a rounding more in each sum,
 * as in the sigmoids' arguments), the sigmoids (slope at most 1/4, their
 * near exp 5 units off at most) and the power map 1 - (1 - s)^g (slope at
 * most g <= 2, its near pow 5 units off) that moves S by less than
 * j (1 + T); M, a product with 1 - s >= 0.06 and its power (q^g / q for
 * q^(g - 1): 6 units), by less than 6 j (1 + T) of itself.  tol = 2^-36 is
 * 2^12 times j and more: it refuses 59 of the paper panel's 20,592,000
 * records. */
#define PB_SYNTH__TOL 0x1p-36

/* pb_synth_set_near's settings, and the records refused since its last call */
static double pb_synth__tol = PB_SYNTH__TOL, pb_synth__jitter = 0.0;
static long pb_synth__refused;

long pb_synth_set_near(double tol, double jitter)
{
  long n;
#pragma omp atomic capture
  {
    n = pb_synth__refused;
    pb_synth__refused = 0;
  }
  pb_synth__tol = tol == 0.0 ? PB_SYNTH__TOL : tol;
  pb_synth__jitter = jitter;
  return n;
}

/* Whether the rounding of x to a probability could differ anywhere within d of it. */
static int pb_synth__near(const struct pb_synth_config *cfg, double x, double d)
{
  return d > 0 && pb_synth__prob(cfg, x - d) != pb_synth__prob(cfg, x + d);
}

/* Records of a run of PB_SYNTH__LANES at a time share the vector math. */
#define PB_SYNTH__LANES 4

/* A run's records through their steps (pb_synth__run): each step does a
 * thing for every lane, so that the math between them goes four lanes at a
 * time (pb_num_log_n and the others). */
struct pb_synth__lanes {
  const struct pb_synth_config *cfg;
  const struct pb_synth__source *L;
  const struct pb_source *src;
  int n;      /* lanes in use */
  double tol; /* > 0: near math, the records checked against tol (PB_SYNTH__TOL); 0: glibc's scalar functions */
  int64_t x[PB_SYNTH__LANES];
  int32_t i[PB_SYNTH__LANES], m[PB_SYNTH__LANES], c[PB_SYNTH__LANES], y[PB_SYNTH__LANES];
  int32_t pred[PB_SYNTH__LANES];
  int wrong[PB_SYNTH__LANES], refused[PB_SYNTH__LANES];
  double eps[PB_SYNTH__LANES], zeta[PB_SYNTH__LANES], w[PB_SYNTH__LANES], eta[PB_SYNTH__LANES];
  double d[PB_SYNTH__LANES], s[PB_SYNTH__LANES], mt[PB_SYNTH__LANES];
  struct pb_rng rng[PB_SYNTH__LANES];
};

/* The next normal (pb_rng_normal's draws and formula) of every lane with
 * need[l] (all with NULL) into z[l]; near ones with R->tol > 0, moved by the
 * tests' jitter (pb_synth_set_near). */
static void pb_synth__normals(struct pb_synth__lanes *R, const int *need, double *z)
{
  enum { W = PB_SYNTH__LANES };
  double u[W], v[W], l[W], c[W];
  const int near = R->tol > 0;
  for (int k = 0; k < W; k++) {
    u[k] = v[k] = 0.5; /* lanes without a normal to draw */
    if (k < R->n && (!need || need[k])) u[k] = pb_rng_uniform(&R->rng[k]), v[k] = pb_rng_uniform(&R->rng[k]);
    v[k] *= 2.0 * M_PI;
  }
  pb_num_log_n(u, l, W, near);
  pb_num_cos_n(v, c, W, near);
  for (int k = 0; k < W; k++) {
    z[k] = sqrt(-2.0 * l[k]) * c[k];
    if (near && pb_synth__jitter != 0.0) z[k] *= 1.0 + pb_synth__jitter * cos((double)R->x[k] + 0.25 * z[k]);
  }
}

/* Lane k's latent margin eta (its record correct when eta > 0), and the
 * margin d its checks allow; refused when eta is within d of 0. */
static void pb_synth__eta(struct pb_synth__lanes *R, int k)
{
  const struct pb_synth__source *L = R->L;
  const int32_t m = R->m[k], c = R->c[k], i = R->i[k];
  double eps = R->eps[k];
  if (L->rho && c != L->clean) {
    /* persistence: the model's idiosyncrasy on this image is in part the one of its clean record (the base's
     * clean stream, same counter), so its prediction persists more often; the noise's law is unchanged */
    struct pb_rng clean;
    pb_rng_init(&clean, R->cfg->seed, PB_RNG_SYNTH_RECORD, ((uint64_t)L->stream[L->clean] << 24) | (uint64_t)i,
                (uint32_t)m);
    eps = L->rho[m] * pb_rng_normal(&clean) + sqrt(1.0 - L->rho[m] * L->rho[m]) * eps;
  }
  const double base = L->mu[c] + L->theta[m] + L->ease[i] - L->severity[c] * L->sig_fragility * L->fragility[i];
  const double noise = L->sig_noise[c] * eps, resp = L->robust ? L->severity[c] * L->robust[m] : 0.0;
  double eta = base + noise;
  if (L->robust) eta += resp;
  R->eta[k] = eta;
  R->d[k] = R->tol * (1.0 + fabs(base) + fabs(noise) + fabs(resp) + fabs(R->zeta[k]));
  R->refused[k] = R->d[k] > 0 && fabs(eta) <= R->d[k];
  R->wrong[k] = !(eta > 0);
}

/* The run's S and M before rounding, in R->s and R->mt: correct records'
 * from one sigmoid, wrong ones' (their prediction and w drawn) from two,
 * then the confidence power g: 1 - S becomes (1 - S)^g and every other class
 * keeps its share of it, a monotone map of S (the same acceptance decisions
 * at every threshold) that draws correct records' S together near 1. */
static void pb_synth__confidences(struct pb_synth__lanes *R)
{
  enum { W = PB_SYNTH__LANES };
  const struct pb_synth__source *L = R->L;
  const int32_t K = R->src->n_classes;
  const int near = R->tol > 0;
  double a[W], b[W], ea[W], eb[W], q[W], pg[W], pg1[W];
  for (int k = 0; k < R->n; k++)
    if (R->wrong[k]) {
      const int32_t y = R->y[k];
      const double u = pb_rng_uniform(&R->rng[k]);
      R->pred[k] = u < P_CONFUSABLE ? L->confusable[R->i[k]]
                                    : (int32_t)((y + 1 + pb_rng_below(&R->rng[k], (uint32_t)K - 1)) % K);
    }
  pb_synth__normals(R, R->wrong, R->w);
  for (int k = 0; k < W; k++) {
    const int32_t c = k < R->n ? R->c[k] : 0;
    a[k] = b[k] = 0.0;
    if (k >= R->n) continue;
    const double shift = L->wrong_shift[c] + (L->class_conf && c != L->clean ? L->class_conf[R->y[k]] : 0.0);
    if (!R->wrong[k]) {
      a[k] = -(0.2 + L->right_shift[c] + 1.7 * R->eta[k] + 0.6 * R->zeta[k]);
      R->d[k] += R->tol * fabs(L->right_shift[c]);
    } else {
      a[k] = -(0.1 + shift + 0.6 * R->eta[k] + 0.7 * R->zeta[k]);
      b[k] = -(0.8 + 1.2 * R->eta[k] + 0.6 * R->w[k]);
      R->d[k] += R->tol * (fabs(shift) + fabs(R->w[k])); /* the shift's and w's roundings too */
    }
  }
  pb_num_exp_n(a, ea, W, near);
  pb_num_exp_n(b, eb, W, near);
  for (int k = 0; k < W; k++) {
    const double sa = 1.0 / (1.0 + ea[k]); /* the sigmoid of -a */
    R->s[k] = k >= R->n ? 0.5 : !R->wrong[k] ? pb_synth__max(sa, 2.0 / K) : 0.04 + 0.9 * sa;
    R->mt[k] = (1.0 - R->s[k]) * (1.0 / (1.0 + eb[k]));
    q[k] = 1.0 - R->s[k];
  }
  const double g = R->cfg->confidence_power;
  if (g == 1.0) return;
  pb_num_pow_n(q, g, pg, W, near);
  if (near) /* q^(g - 1) within a rounding of q^g / q, and q >= 0.06 for a wrong record */
    for (int k = 0; k < W; k++) pg1[k] = R->wrong[k] ? pg[k] / q[k] : 0.0;
  else
    pb_num_pow_n(q, g - 1.0, pg1, W, near);
  for (int k = 0; k < R->n; k++) {
    R->mt[k] *= pg1[k];
    R->s[k] = 1.0 - pg[k];
  }
}

/* Lane k's record from its S and M before rounding: refused where R->tol's
 * check finds a rounding or a comparison the near math could change;
 * otherwise its values, top-k list and summaries written at its place. */
static void pb_synth__finish(struct pb_synth__lanes *R, int k, struct pb_rows *out)
{
  const struct pb_synth_config *cfg = R->cfg;
  const int64_t x = R->x[k];
  const int32_t K = R->src->n_classes, y = R->y[k], topk = cfg->topk;
  const double s = R->s[k], mt = R->mt[k], d = R->d[k];
  if (pb_synth__near(cfg, s, d)) {
    R->refused[k] = 1;
    return;
  }
  const float S = pb_synth__prob(cfg, s);
  float M = S;
  if (R->wrong[k]) {
    const double cap = S * 0.9, dm = 16.0 * d * mt;
    if (dm > 0 && (fabs(mt - cap) <= dm || (mt < cap && pb_synth__near(cfg, mt, dm)))) {
      R->refused[k] = 1;
      return;
    }
    M = pb_synth__prob(cfg, pb_synth__min(mt, cap));
    if (M >= S) M = 0.0f;
  } else {
    R->pred[k] = y;
  }
  out->pred[x] = R->pred[k], out->smax[x] = S, out->ptrue[x] = M;
  struct pb_synth__entry e[2 + 64];
  int32_t n = 0;
  if (topk > 0)
    n = pb_synth__topk(cfg, &R->rng[k], K, y, R->L->confusable[R->i[k]], R->pred[k], S, M,
                       &out->topk_class[x * topk], &out->topk_prob[x * topk], e);
  if (out->entropy) pb_synth__summaries(cfg, K, y, R->pred[k], S, M, e, n, &out->entropy[x], &out->collision[x]);
}

/* Lanes' records, with the lanes' places set: streams, the two normals,
 * eta, confidences, and each record finished unless refused. */
static void pb_synth__lanes(struct pb_synth__lanes *R, struct pb_rows *out)
{
  for (int k = 0; k < R->n; k++) {
    const uint64_t item = ((uint64_t)R->L->stream[R->c[k]] << 24) | (uint64_t)R->i[k];
    pb_rng_init(&R->rng[k], R->cfg->seed, PB_RNG_SYNTH_RECORD, item, (uint32_t)R->m[k]);
    pb_rng_ahead(&R->rng[k]); /* the paper panel's records take four blocks or more */
  }
  pb_synth__normals(R, NULL, R->eps);
  pb_synth__normals(R, NULL, R->zeta);
  for (int k = 0; k < R->n; k++) pb_synth__eta(R, k);
  pb_synth__confidences(R);
  for (int k = 0; k < R->n; k++)
    if (!R->refused[k]) pb_synth__finish(R, k, out);
}

/* Records x0 .. x0 + lanes - 1 of rows from first_row of source @p src into
 * @p out: with near math where the error bound allows it (confidence power
 * in [1, 2]), a refused record again alone with glibc's scalar functions. */
static void pb_synth__run(const struct pb_synth_config *cfg, const struct pb_source *src,
                          const struct pb_synth__source *L, int32_t first_row, int64_t x0, int lanes,
                          struct pb_rows *out)
{
  const double g = cfg->confidence_power;
  struct pb_synth__lanes R = {.cfg = cfg, .L = L, .src = src, .n = lanes};
  R.tol = pb_synth__tol > 0 && g >= 1.0 && g <= 2.0 && (pb_num_near() || pb_synth__jitter != 0.0) ? pb_synth__tol : 0.0;
  for (int k = 0; k < lanes; k++) {
    const int64_t x = x0 + k;
    const int32_t r = first_row + (int32_t)(x / src->n_images);
    R.x[k] = x, R.i[k] = (int32_t)(x % src->n_images), R.y[k] = src->labels[R.i[k]];
    R.m[k] = r / src->n_conditions, R.c[k] = r % src->n_conditions;
  }
  pb_synth__lanes(&R, out);
  for (int k = 0; k < lanes; k++) {
    if (!R.refused[k]) continue;
#pragma omp atomic
    pb_synth__refused++;
    struct pb_synth__lanes one = {.cfg = cfg, .L = L, .src = src, .n = 1, .tol = 0.0, .x = {R.x[k]}, .i = {R.i[k]},
                                  .m = {R.m[k]}, .c = {R.c[k]}, .y = {R.y[k]}};
    pb_synth__lanes(&one, out);
  }
}

/* Records of rows [first_row, first_row + n_rows) of source s into @p out's
 * arrays (n_rows rows allocated), over OpenMP threads. */
static void pb_synth__fill(const struct pb_synth_config *cfg, const struct pb_meta *meta, int32_t s,
                           const struct pb_synth__source *L, int32_t first_row, int32_t n_rows, struct pb_rows *out)
{
  const struct pb_source *src = &meta->sources[s];
  const int64_t n = (int64_t)n_rows * src->n_images;
  out->n_rows = n_rows;
  /* dynamic, 256 runs (1,024 records) at a time: the store's writer thread
   * shares the cores, and static halves left one thread waiting for the
   * other (libgomp's spin 5 % of synth's samples; 2.6 % so) */
#pragma omp parallel for schedule(dynamic, 256)
  for (int64_t x0 = 0; x0 < n; x0 += PB_SYNTH__LANES)
    pb_synth__run(cfg, src, L, first_row, x0, n - x0 < PB_SYNTH__LANES ? (int)(n - x0) : PB_SYNTH__LANES, out);
}

void pb_synth_rows(const struct pb_synth_config *cfg, const struct pb_meta *meta, int32_t s, int32_t first_row,
                   int32_t n_rows, struct pb_rows *out)
{
  struct pb_synth__source L;
  pb_synth__latents(cfg, meta, s, &L);
  pb_store_rows_alloc(out, n_rows, meta->sources[s].n_images, cfg->topk);
  pb_store_rows_summaries(out, meta->summaries);
  pb_synth__fill(cfg, meta, s, &L, first_row, n_rows, out);
  pb_synth__latents_free(&L);
}

/* Source s: its write units (pb_store_span_rows: a model's rows at most) in
 * contiguous shares of the ranks, written a unit per rank per round: each
 * round's unit is computed while the last one's is written (pb_store_writer,
 * where the store takes it), so memory is two units per rank, not a rank's
 * share of the source. */
static int pb_synth__source(const struct pb_synth_config *cfg, const struct pb_meta *meta, int32_t s,
                            struct pb_store *st, MPI_Comm comm)
{
  const struct pb_source *src = &meta->sources[s];
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int32_t span = pb_store_span_rows(st, s), per_model = (src->n_conditions + span - 1) / span;
  const int64_t units = (int64_t)meta->n_models * per_model, u0 = units * rank / size,
                u1 = units * (rank + 1) / size, rounds = (units + size - 1) / size;
  const int async = pb_store_write_async(st);
  struct pb_synth__source L;
  struct pb_rows buf[2];
  struct pb_store_writer writer = {0};
  pb_synth__latents(cfg, meta, s, &L);
  for (int b = 0; b < 1 + async; b++) {
    pb_store_rows_alloc(&buf[b], span, src->n_images, cfg->topk);
    pb_store_rows_summaries(&buf[b], meta->summaries);
  }
  int status = PB_OK;
  for (int64_t j = 0; j < rounds && status == PB_OK; j++) {
    struct pb_store_span x = {.src = s, .rows = buf[async ? j % 2 : 0]};
    if (u0 + j < u1) {
      const int32_t m = (int32_t)((u0 + j) / per_model), c0 = (int32_t)((u0 + j) % per_model) * span;
      x.row0 = m * src->n_conditions + c0;
      x.n_rows = c0 + span <= src->n_conditions ? span : src->n_conditions - c0;
      pb_synth__fill(cfg, meta, s, &L, x.row0, x.n_rows, &x.rows);
    }
    /* every rank, each round: the same status (the last round's write, or this one's) */
    if (!async) {
      status = pb_store_write_span(st, s, x.row0, x.n_rows, &x.rows);
    } else if ((status = pb_store_writer_wait(&writer, comm)) == PB_OK) {
      pb_store_writer_start(&writer, st, &x, x.n_rows > 0);
    }
  }
  if (async && status == PB_OK) status = pb_store_writer_wait(&writer, comm);
  pb_store_writer_free(&writer);
  for (int b = 0; b < 1 + async; b++) pb_store_rows_free(&buf[b]);
  pb_synth__latents_free(&L);
  return status;
}

int pb_synth_store(const struct pb_synth_config *cfg, const char *path, MPI_Comm comm)
{
  int status = PB_FAIL;
  struct pb_meta meta;
  struct pb_store *st = NULL;
  if (pb_synth_meta(cfg, &meta)) goto done;
  if (pb_store_create(path, comm, &meta, &st)) goto done;
  status = PB_OK;
  for (int32_t s = 0; s < meta.n_sources && status == PB_OK; s++) status = pb_synth__source(cfg, &meta, s, st, comm);
  if (status == PB_OK) {
    status = pb_store_commit(st);
    st = NULL;
  }
done:
  pb_store_close(st);
  pb_meta_free(&meta);
  return status;
}
