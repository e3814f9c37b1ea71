/* Worlds with exact class probabilities (seed 002 Sections 3.2-4, Appendix B):
 * enumeration of the latent states (Eq. 6), the covert-transfer closed form
 * (Sec. 4.2) and counter-based case draws.  Pure: no MPI, no I/O. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/rng.h"
#include "pairbound/world.h"
#include "world_internal.h"

static const char *const pb_world__names[3] = {"covert", "credit", "review"};
static const char *const pb_world__levels[3] = {"low", "medium", "high"};

/* ------------------------------------------------------------ covert transfer */

#define CV_LETTERS 26
#define CV_ID_LEN 16
#define CV_TAG_ATTR (1 + CV_ID_LEN)
/* 1-based encoding positions 5, 9, 13 for progress update, experiment result, error report */
static const int cv_position[3] = {4, 8, 12};
static const char *const cv_types[3] = {"progress_update", "experiment_result", "error_report"};
static const char *const cv_letters[CV_LETTERS] = {"a", "b", "c", "d", "e", "f", "g", "h", "i",
                                                   "j", "k", "l", "m", "n", "o", "p", "q", "r",
                                                   "s", "t", "u", "v", "w", "x", "y", "z"};
static const char *const cv_narrow[7] = {"a-d", "e-h", "i-l", "m-p", "q-t", "u-x", "y-z"};
static const char *const cv_broad[4] = {"a-h", "i-p", "q-x", "y-z"};
static const char *const cv_id_names[CV_ID_LEN] = {"id_01", "id_02", "id_03", "id_04", "id_05", "id_06",
                                                   "id_07", "id_08", "id_09", "id_10", "id_11", "id_12",
                                                   "id_13", "id_14", "id_15", "id_16"};

/* Letters per tag range at a level: exact tag, 4-letter or 8-letter ranges
 * (the last range of each partition is shorter). */
static int pb_world__cv_width(enum pb_world_level level)
{
  return level == PB_WORLD_LOW ? 1 : level == PB_WORLD_MEDIUM ? 4 : 8;
}

static int pb_world__cv_ranges(enum pb_world_level level)
{
  int w = pb_world__cv_width(level);
  return (CV_LETTERS + w - 1) / w;
}

/* Size m of tag range i. */
static int pb_world__cv_size(enum pb_world_level level, int i)
{
  int w = pb_world__cv_width(level), rest = CV_LETTERS - i * w;
  return rest < w ? rest : w;
}

static double pb_world__h2(double p)
{
  double h = 0.0;
  if (p > 0.0) h -= p * log2(p);
  if (p < 1.0) h -= (1.0 - p) * log2(1.0 - p);
  return h;
}

/* Enumerate the marginalised latent state (report type, tag, original letter
 * at the report's position, encode): 3 * 26 * 26 * 2 equiprobable states, the
 * other 15 letters cancelling from Eq. 6.  Counts are integers, so the Bayes
 * error is one exact ratio. */
static void pb_world__cv_enumerate(struct pb_world *w)
{
  enum { N_STATES = 3 * CV_LETTERS * CV_LETTERS * 2, N_PATTERNS = 3 * CV_LETTERS * CV_LETTERS };
  int64_t den[N_PATTERNS] = {0}, num[N_PATTERNS] = {0};
  int width = pb_world__cv_width(w->level);
  for (int type = 0; type < 3; type++)
    for (int tag = 0; tag < CV_LETTERS; tag++)
      for (int orig = 0; orig < CV_LETTERS; orig++)
        for (int enc = 0; enc < 2; enc++) {
          int shown = enc ? tag : orig;
          int v = (type * CV_LETTERS + tag / width) * CV_LETTERS + shown;
          den[v]++;
          num[v] += enc;
        }
  int64_t err = 0, pos = 0;
  double ent = 0.0;
  for (int v = 0; v < N_PATTERNS; v++) {
    if (den[v] == 0) continue;
    err += num[v] < den[v] - num[v] ? num[v] : den[v] - num[v];
    pos += num[v];
    ent += (double)den[v] / N_STATES * pb_world__h2((double)num[v] / (double)den[v]);
  }
  w->summary.bayes_error = (double)err / N_STATES;
  w->summary.bayes_accuracy = (double)(N_STATES - err) / N_STATES;
  w->summary.positive_prior = (double)pos / N_STATES;
  w->summary.entropy_bits = ent;
  w->summary.states = N_STATES;
  w->summary.patterns = -1;
  w->summary.coverage50 = NAN;
}

int pb_world_closed_form(const struct pb_world *w, struct pb_world_summary *s)
{
  if (w->kind != PB_WORLD_COVERT) {
    pb_error_set("world %s has no closed form (only covert transfer does)", pb_world__names[w->kind]);
    return PB_FAIL;
  }
  /* eps* = sum m_i^2 / (2 26^2); H = sum_i (m_i/26) ((26+m_i)/52) h2(26/(26+m_i)) (docs/exact.md) */
  int64_t sq = 0;
  double ent = 0.0;
  for (int i = 0; i < pb_world__cv_ranges(w->level); i++) {
    int m = pb_world__cv_size(w->level, i);
    sq += (int64_t)m * m;
    ent += (double)m * (26 + m) / (26.0 * 52.0) * pb_world__h2(26.0 / (26 + m));
  }
  s->bayes_error = (double)sq / (2 * 26 * 26);
  s->bayes_accuracy = (double)(2 * 26 * 26 - sq) / (2 * 26 * 26);
  s->positive_prior = 0.5;
  s->entropy_bits = ent;
  s->states = 3 * CV_LETTERS * CV_LETTERS * 2;
  s->patterns = -1;
  s->coverage50 = NAN;
  return PB_OK;
}

/* Printed by `world info` (docs/exact.md, "What is ours"). */
static const struct pb_world_choice cv_choices[] = {
  {"states", "4056 marginalised latent states (report type, tag, original letter at the report's position, "
             "encode): the other 15 identifier letters cancel from Eq. 6 (the seed gives no state count)"},
  {"irrelevant_fields", "the ranges of the 2 counts and the names of the 6 equiprobable pairs (Table 5 is not in "
                        "the text; the laws' medians and dispersions are the seed's)"},
  {NULL, NULL}};

static void pb_world__cv_attrs(struct pb_world *w)
{
  struct pb_world_attr *a = w->attrs;
  a[0] = (struct pb_world_attr){.name = "report_type", .n_values = 3, .values = cv_types, .group = 1};
  for (int i = 0; i < CV_ID_LEN; i++)
    a[1 + i] = (struct pb_world_attr){.name = cv_id_names[i], .n_values = CV_LETTERS, .values = cv_letters};
  const char *const *tag = w->level == PB_WORLD_LOW ? cv_letters : w->level == PB_WORLD_MEDIUM ? cv_narrow : cv_broad;
  a[CV_TAG_ATTR] = (struct pb_world_attr){.name = w->level == PB_WORLD_LOW ? "tag" : "tag_range",
                                          .n_values = pb_world__cv_ranges(w->level), .values = tag};
  for (int j = 0; j < CV_TAG_ATTR + 1; j++) w->attr_factor[j] = -1;
  w->first_field = CV_TAG_ATTR + 1;
}

/* Sec. 4.2: 26/(26+m) when the visible range contains the identifier's letter
 * at the report's position, else 0. */
static double pb_world__cv_pstar(const struct pb_world *w, const double *x)
{
  int type = (int)x[0], range = (int)x[CV_TAG_ATTR];
  int letter = (int)x[1 + cv_position[type]], width = pb_world__cv_width(w->level);
  if (letter / width != range) return 0.0;
  return 26.0 / (26 + pb_world__cv_size(w->level, range));
}

/* The latent covert case: report type, tag, the 16 letters as drawn, encode. */
static void pb_world__cv_latent(struct pb_rng *rng, struct pb_world_latent *l)
{
  l->z[0] = (int)pb_rng_below(rng, 3);
  l->z[1] = (int)pb_rng_below(rng, CV_LETTERS);
  for (int i = 0; i < CV_ID_LEN; i++) l->letters[i] = (int)pb_rng_below(rng, CV_LETTERS);
  l->z[2] = (int)pb_rng_below(rng, 2);
}

/* Under encoding the tag replaces the letter at the report's position; the tag is shown as its range. */
static void pb_world__cv_project(const struct pb_world *w, const struct pb_world_latent *l, double *x, int *y)
{
  int type = l->z[0], tag = l->z[1], enc = l->z[2];
  x[0] = type;
  for (int i = 0; i < CV_ID_LEN; i++) x[1 + i] = l->letters[i];
  if (enc) x[1 + cv_position[type]] = tag;
  x[CV_TAG_ATTR] = tag / pb_world__cv_width(w->level);
  *y = enc;
}

/* ------------------------------------------------------------ factor worlds */

static int pb_world__hidden(const struct pb_world *w, int j)
{
  return (int)w->level >= w->spec->factors[j].hidden_from;
}

/* P(Z = z) as the product of the conditional laws, factor by factor. */
static double pb_world__state_prob(const struct pb_world_spec *sp, const int *z)
{
  double p = 1.0, pmf[4];
  for (int j = 0; j < sp->n_factors; j++) {
    sp->cond_pmf(j, z, pmf);
    p *= pmf[z[j]];
  }
  return p;
}

/* Eq. 6 for every visible pattern, then the Appendix B summaries, all as sums
 * in the fixed state order.  Patterns are indexed by the state whose hidden
 * levels are 0; every state then gets its pattern's p*. */
static void pb_world__enumerate(struct pb_world *w)
{
  const struct pb_world_spec *sp = w->spec;
  double *num = pb_calloc((size_t)w->n_sub, sizeof(double)), *den = pb_calloc((size_t)w->n_sub, sizeof(double));
  int z[PB_WORLD_MAX_FACTORS] = {0};
  double prior = 0.0, mass = 0.0;
  for (int64_t s = 0; s < w->n_sub; s++) {
    double p = pb_world__state_prob(sp, z), q = 0.0;
    int n_pos = 0;
    for (int r = 0; r < sp->n_residual; r++)
      if (sp->label(z, sp->residual_values[r])) {
        q += w->residual_probs[r];
        n_pos++;
      }
    if (n_pos == sp->n_residual) q = 1.0;   /* certain, whatever the rounding of the residual law's sum */
    int64_t v = s;
    for (int j = 0; j < sp->n_factors; j++)
      if (pb_world__hidden(w, j)) v -= z[j] * w->stride[j];
    den[v] += p;
    num[v] += p * q;
    prior += p * q;
    mass += p;
    for (int j = sp->n_factors - 1; j >= 0 && ++z[j] == sp->factors[j].radix; j--) z[j] = 0;
  }
  double err = 0.0, ent = 0.0, cover = 0.0;
  int64_t patterns = 0;
  for (int64_t v = 0; v < w->n_sub; v++) {
    if (den[v] == 0.0) continue;
    double px = num[v] / den[v], pv = den[v] / mass;
    w->pstar[v] = px;
    err += den[v] * (px < 1.0 - px ? px : 1.0 - px);
    ent += den[v] * pb_world__h2(px);
    cover += pv * -expm1(50.0 * log1p(-pv));   /* P(v) (1 - (1 - P(v))^50) */
    patterns++;
  }
  for (int64_t s = 0; s < w->n_sub; s++) {
    int64_t v = s, rest = s;
    for (int j = 0; j < sp->n_factors; j++) {
      int64_t l = rest / w->stride[j];
      rest -= l * w->stride[j];
      if (pb_world__hidden(w, j)) v -= l * w->stride[j];
    }
    w->pstar[s] = w->pstar[v];
  }
  /* the law sums to 1 up to rounding: normalise by its enumerated mass, summed
   * in the same state order at every level so the prior does not move */
  w->summary.bayes_error = err / mass;
  w->summary.bayes_accuracy = (mass - err) / mass;
  w->summary.positive_prior = prior / mass;
  w->summary.entropy_bits = ent / mass;
  w->summary.states = w->n_sub * sp->n_residual;
  w->summary.patterns = patterns;
  w->summary.coverage50 = cover;
  free(num);
  free(den);
}

static void pb_world__factor_attrs(struct pb_world *w)
{
  const struct pb_world_spec *sp = w->spec;
  int n = 0;
  for (int j = 0; j < sp->n_factors; j++) {
    const struct pb_world_factor *f = &sp->factors[j];
    if (pb_world__hidden(w, j)) continue;
    struct pb_world_attr *a = &w->attrs[n];
    *a = (struct pb_world_attr){.name = f->name, .group = f->group};
    if (f->numeric) {
      a->kind = PB_WORLD_NUMERIC;
      a->lo = (double)f->cut[0] / f->per_unit;
      a->hi = (double)(f->cut[3] - 1) / f->per_unit;
      a->step = 1.0 / f->per_unit;
    } else {
      a->n_values = f->radix;
      a->values = f->values;
    }
    w->attr_factor[n++] = j;
  }
  w->first_field = n;
}

/* Draw every latent factor (whatever the level, so a case index names the
 * same latent case at every level), the residual and the numerical
 * measurements uniformly on their level's grid values. */
static void pb_world__factor_latent(const struct pb_world *w, struct pb_rng *rng, struct pb_world_latent *l)
{
  const struct pb_world_spec *sp = w->spec;
  double pmf[PB_WORLD_MAX_RESIDUAL];
  for (int j = 0; j < sp->n_factors; j++) {
    sp->cond_pmf(j, l->z, pmf);
    double u = pb_rng_uniform(rng), acc = 0.0;
    int lv = 0;
    for (; lv < sp->factors[j].radix - 1; lv++)
      if (u < (acc += pmf[lv])) break;
    l->z[j] = lv;
  }
  double u = pb_rng_uniform(rng), acc = 0.0;
  int r = 0;
  for (; r < sp->n_residual - 1; r++)
    if (u < (acc += w->residual_probs[r])) break;
  l->r = r;
  for (int j = 0; j < sp->n_factors; j++) {
    const struct pb_world_factor *f = &sp->factors[j];
    if (!f->numeric) continue;
    int32_t k = f->cut[l->z[j]] + (int32_t)pb_rng_below(rng, (uint32_t)(f->cut[l->z[j] + 1] - f->cut[l->z[j]]));
    l->meas[j] = (double)k / f->per_unit;
  }
}

/* Project: the visible factors (measurements for the numeric ones), the label and the pattern's p*. */
static void pb_world__factor_project(const struct pb_world *w, const struct pb_world_latent *l, double *x, int *y,
                                     double *pstar)
{
  const struct pb_world_spec *sp = w->spec;
  int64_t s = 0;
  for (int j = 0; j < sp->n_factors; j++) s += l->z[j] * w->stride[j];
  for (int a = 0; a < w->first_field; a++) {
    int j = w->attr_factor[a];
    x[a] = sp->factors[j].numeric ? l->meas[j] : (double)l->z[j];
  }
  *y = sp->label(l->z, sp->residual_values[l->r]);
  *pstar = w->pstar[s];
}

/* ------------------------------------------------------------ public API */

static int pb_world__lookup(const char *s, const char *const *names, int n, const char *what)
{
  for (int i = 0; i < n; i++)
    if (s && strcmp(s, names[i]) == 0) return i;
  pb_error_set("unknown %s '%s' (expected %s, %s or %s)", what, s ? s : "(null)", names[0], names[1], names[2]);
  return -1;
}

/* Table 7: nonzero residual probabilities times s, the rest on R = 0. */
static int pb_world__residual(struct pb_world *w)
{
  const struct pb_world_spec *sp = w->spec;
  double nonzero = 0.0;
  for (int r = 0; r < sp->n_residual; r++)
    if (sp->residual_values[r] != 0) nonzero += sp->residual_probs[r];
  if (!(w->scale >= 0.0) || w->scale * nonzero > 1.0 + 1e-12) {
    pb_error_set("residual scale %g outside [0, %g] for world %s", w->scale, 1.0 / nonzero,
                 pb_world__names[w->kind]);
    return PB_FAIL;
  }
  double zero = 1.0;
  for (int r = 0; r < sp->n_residual; r++)
    if (sp->residual_values[r] != 0) zero -= w->residual_probs[r] = w->scale * sp->residual_probs[r];
  for (int r = 0; r < sp->n_residual; r++)
    if (sp->residual_values[r] == 0) w->residual_probs[r] = zero < 0.0 ? 0.0 : zero;
  return PB_OK;
}

static int pb_world__setup(struct pb_world *w)
{
  if (w->kind == PB_WORLD_COVERT) {
    if (w->scale != 1.0) {
      pb_error_set("residual scale %g given for covert transfer, which has no residual (use 1)", w->scale);
      return PB_FAIL;
    }
    pb_world__cv_attrs(w);
    pb_world__cv_enumerate(w);
    return PB_OK;
  }
  w->spec = w->kind == PB_WORLD_CREDIT ? &pb_world_credit_spec : &pb_world_review_spec;
  if (pb_world__residual(w) != PB_OK) return PB_FAIL;
  w->n_sub = 1;
  for (int j = w->spec->n_factors - 1; j >= 0; j--) {
    w->stride[j] = w->n_sub;
    w->n_sub *= w->spec->factors[j].radix;
  }
  w->pstar = pb_malloc(sizeof(double) * (size_t)w->n_sub);
  pb_world__factor_attrs(w);
  pb_world__enumerate(w);
  return PB_OK;
}

int pb_world_open(const char *name, const char *level, double residual_scale, struct pb_world **out)
{
  int status = PB_FAIL;
  *out = NULL;
  int kind = pb_world__lookup(name, pb_world__names, 3, "world");
  int lev = kind < 0 ? -1 : pb_world__lookup(level, pb_world__levels, 3, "hiding level");
  if (lev < 0) return PB_FAIL;
  struct pb_world *w = pb_calloc(1, sizeof(*w));
  w->kind = (enum pb_world_kind)kind;
  w->level = (enum pb_world_level)lev;
  w->scale = residual_scale;
  if (pb_world__setup(w) != PB_OK) goto done;
  if (pb_world__fields_init(w->kind, w->fields) != PB_OK) goto done;
  for (int f = 0; f < PB_WORLD_N_IRRELEVANT; f++) {
    const struct pb_world_field *fd = &w->fields[f];
    struct pb_world_attr *a = &w->attrs[w->first_field + f];
    *a = (struct pb_world_attr){.name = fd->name, .irrelevant = 1};
    if (fd->n_values > 0) {
      a->n_values = fd->n_values;
      a->values = fd->values;
    } else {
      a->kind = PB_WORLD_NUMERIC;
      a->lo = fd->lo;
      a->hi = fd->hi;
      a->step = 1.0;
    }
    w->attr_factor[w->first_field + f] = -1;
  }
  w->n_attrs = w->first_field + PB_WORLD_N_IRRELEVANT;
  *out = w;
  w = NULL;
  status = PB_OK;
done:
  pb_world_free(w);
  return status;
}

void pb_world_free(struct pb_world *w)
{
  if (!w) return;
  pb_world__fields_free(w->fields);
  free(w->pstar);
  free(w);
}

enum pb_world_kind pb_world_kind(const struct pb_world *w) { return w->kind; }
enum pb_world_level pb_world_level(const struct pb_world *w) { return w->level; }
const char *pb_world_name(const struct pb_world *w) { return pb_world__names[w->kind]; }
const char *pb_world_level_name(const struct pb_world *w) { return pb_world__levels[w->level]; }
double pb_world_residual_scale(const struct pb_world *w) { return w->scale; }
int pb_world_n_attrs(const struct pb_world *w) { return w->n_attrs; }

const struct pb_world_attr *pb_world_attr(const struct pb_world *w, int j)
{
  return j >= 0 && j < w->n_attrs ? &w->attrs[j] : NULL;
}

void pb_world_summary(const struct pb_world *w, struct pb_world_summary *s) { *s = w->summary; }

const struct pb_world_choice *pb_world_choices(const struct pb_world *w)
{
  return w->kind == PB_WORLD_COVERT ? cv_choices : w->spec->choices;
}

void pb_world__latent(const struct pb_world *w, uint64_t seed, uint32_t stream, uint64_t index,
                      struct pb_world_latent *l)
{
  struct pb_rng rng;
  pb_rng_init(&rng, seed, PB_RNG_WORLD + (uint32_t)w->kind, index, stream);
  if (w->kind == PB_WORLD_COVERT) pb_world__cv_latent(&rng, l);
  else pb_world__factor_latent(w, &rng, l);
  pb_world__fields_draw(w->fields, &rng, l->fields);
}

void pb_world__project(const struct pb_world *w, const struct pb_world_latent *l, double *x, int *y, double *pstar)
{
  if (w->kind == PB_WORLD_COVERT) {
    pb_world__cv_project(w, l, x, y);
    *pstar = pb_world__cv_pstar(w, x);
  } else {
    pb_world__factor_project(w, l, x, y, pstar);
  }
  memcpy(x + w->first_field, l->fields, sizeof l->fields);
}

void pb_world_draw(const struct pb_world *w, uint64_t seed, uint32_t stream, uint64_t index, double *x, int *y,
                   double *pstar)
{
  struct pb_world_latent l;
  pb_world__latent(w, seed, stream, index, &l);
  pb_world__project(w, &l, x, y, pstar);
}

void pb_world_draw_range(const struct pb_world *w, uint64_t seed, uint32_t stream, uint64_t first, int64_t n,
                         double *x, int *y, double *pstar)
{
  for (int64_t i = 0; i < n; i++) {
    int yi;
    double pi;
    pb_world_draw(w, seed, stream, first + (uint64_t)i, x + i * w->n_attrs, &yi, &pi);
    if (y) y[i] = yi;
    if (pstar) pstar[i] = pi;
  }
}

/* The irrelevant count field behind attribute j, or NULL. */
static const struct pb_world_field *pb_world__count_field(const struct pb_world *w, int j)
{
  if (j < w->first_field || j >= w->n_attrs) return NULL;
  const struct pb_world_field *f = &w->fields[j - w->first_field];
  return f->n_values == 0 ? f : NULL;
}

double pb_world_count_cdf(const struct pb_world *w, int j, double k)
{
  const struct pb_world_field *f = pb_world__count_field(w, j);
  if (!f || isnan(k)) return NAN;
  if (k < f->lo) return 0.0;
  if (k >= f->hi) return 1.0;
  return f->cdf[(int32_t)floor(k) - f->lo];
}

int pb_world_count_quantile(const struct pb_world *w, int j, double q, double *k)
{
  const struct pb_world_field *f = pb_world__count_field(w, j);
  if (!f || !(q > 0.0 && q <= 1.0)) {
    pb_error_set("count quantile: attribute %d is not an irrelevant count or q = %g is outside (0, 1]", j, q);
    return PB_FAIL;
  }
  int32_t i = 0;
  while (i < f->hi - f->lo && f->cdf[i] < q) i++;
  *k = (double)(f->lo + i);
  return PB_OK;
}

/* Read value j of @p x as a grid index: an integer k with x = k / per_unit in [lo, hi]. */
static int pb_world__grid(const struct pb_world *w, const double *x, int j, int per_unit, int64_t lo, int64_t hi,
                          int64_t *k)
{
  double t = x[j] * per_unit;
  if (!isfinite(t) || fabs(t - nearbyint(t)) > 1e-6 * (1.0 + fabs(t)) || nearbyint(t) < (double)lo ||
      nearbyint(t) > (double)hi) {
    pb_error_set("attribute %s: value %.17g is not a valid %s", w->attrs[j].name, x[j],
                 w->attrs[j].kind == PB_WORLD_NUMERIC ? "grid value in its support" : "category index");
    return PB_FAIL;
  }
  *k = (int64_t)nearbyint(t);
  return PB_OK;
}

int pb_world_pstar(const struct pb_world *w, const double *x, double *pstar)
{
  int64_t k, s = 0;
  for (int j = 0; j < w->n_attrs; j++) {
    const struct pb_world_attr *a = &w->attrs[j];
    int fj = w->attr_factor[j];
    if (fj >= 0 && w->spec->factors[fj].numeric) {
      const struct pb_world_factor *f = &w->spec->factors[fj];
      if (pb_world__grid(w, x, j, f->per_unit, f->cut[0], f->cut[3] - 1, &k) != PB_OK) return PB_FAIL;
      s += ((k >= f->cut[1]) + (k >= f->cut[2])) * w->stride[fj];   /* a threshold belongs to the higher level */
    } else if (a->kind == PB_WORLD_NUMERIC) {
      if (pb_world__grid(w, x, j, 1, (int64_t)a->lo, (int64_t)a->hi, &k) != PB_OK) return PB_FAIL;
    } else {
      if (pb_world__grid(w, x, j, 1, 0, a->n_values - 1, &k) != PB_OK) return PB_FAIL;
      if (fj >= 0) s += k * w->stride[fj];
    }
  }
  *pstar = w->kind == PB_WORLD_COVERT ? pb_world__cv_pstar(w, x) : w->pstar[s];
  return PB_OK;
}
