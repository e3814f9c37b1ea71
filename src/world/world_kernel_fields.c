/* Irrelevant fields of seed 002 (Section 4, Appendix B): 8 per world,
 * independent of everything else.  Counts follow a negative binomial (or, for
 * employees, a rounded lognormal) conditioned on a bounded range, with the
 * location solved after truncation so that P(N < m) + P(N = m) / 2 = 1/2 at
 * the target median m.  The ranges (Table 5) and the categorical pairs are
 * not in the text and are ours (docs/exact.md). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include "pairbound/error.h"
#include "pairbound/rng.h"
#include "world_internal.h"

enum { LAW_NB, LAW_NB_ZERO, LAW_LOGNORMAL };

/* A count field as Appendix B gives it: law, median, dispersion and range. */
struct pb_world__count {
  const char *name;
  int law;
  int32_t median;
  double dispersion;   /* NB size r (variance mu + mu^2 / r), lognormal sdlog */
  int32_t lo, hi;
};

struct pb_world__pair {
  const char *name;
  const char *values[2];
};

static const char *const pb_world__months[12] = {"jan", "feb", "mar", "apr", "may", "jun",
                                                 "jul", "aug", "sep", "oct", "nov", "dec"};

/* Per world: counts (seed's medians and dispersions, our ranges), then
 * categorical fields (month for review; the pairs and their names are ours). */
static const struct pb_world__count pb_world__counts[3][5] = {
  [PB_WORLD_COVERT] = {{"attachments", LAW_NB, 3, 2, 0, 12}, {"team_size", LAW_NB, 4, 6, 1, 20}},
  [PB_WORLD_CREDIT] = {{"employees", LAW_LOGNORMAL, 200, 1.0, 5, 5000},
                       {"sites", LAW_NB, 3, 2, 1, 25},
                       {"departments", LAW_NB, 5, 6, 1, 30},
                       {"report_pages", LAW_NB, 20, 8, 4, 80},
                       {"charts", LAW_NB, 5, 3, 0, 30}},
  [PB_WORLD_REVIEW] = {{"authors", LAW_NB, 4, 6, 1, 20}, {"manuscript_pages", LAW_NB, 10, 20, 4, 40},
                       {"figures", LAW_NB, 5, 4, 0, 30}},
};
static const struct pb_world__count pb_world__review_more[3] = {
  {"tables", LAW_NB, 3, 3, 0, 20}, {"references", LAW_NB, 40, 5, 5, 150},
  {"appendix_pages", LAW_NB_ZERO, 10, 3, 0, 60},
};
static const int pb_world__n_counts[3] = {2, 5, 6};

static const struct pb_world__pair pb_world__pairs[3][6] = {
  [PB_WORLD_COVERT] = {{"log_format", {"json", "plain"}}, {"channel", {"primary", "backup"}},
                       {"region", {"east", "west"}}, {"shift", {"day", "night"}},
                       {"priority", {"normal", "elevated"}}, {"storage_tier", {"hot", "cold"}}},
  [PB_WORLD_CREDIT] = {{"auditor", {"national", "regional"}}, {"listing", {"public", "private"}},
                       {"headquarters", {"domestic", "foreign"}}},
  [PB_WORLD_REVIEW] = {{"submission_track", {"main", "special_issue"}}},
};

static const struct pb_world__count *pb_world__count_spec(enum pb_world_kind kind, int i)
{
  return kind == PB_WORLD_REVIEW && i >= 3 ? &pb_world__review_more[i - 3] : &pb_world__counts[kind][i];
}

/* Unnormalised mass of count k under location @p loc (NB mean, lognormal meanlog). */
static double pb_world__count_mass(const struct pb_world__count *c, double loc, int32_t k)
{
  if (c->law == LAW_LOGNORMAL) {
    double up = gsl_cdf_ugaussian_P((log(k + 0.5) - loc) / c->dispersion);
    double down = k > 0 ? gsl_cdf_ugaussian_P((log(k - 0.5) - loc) / c->dispersion) : 0.0;
    return up - down;
  }
  double p = c->dispersion / (c->dispersion + loc);
  return gsl_ran_negative_binomial_pdf((unsigned)k, p, c->dispersion);
}

/* Tabulate the truncated law at location @p loc as a cdf over lo..hi.
 * Appendix length: 0.2 at zero, 0.8 on the truncated positive NB. */
static void pb_world__count_table(const struct pb_world__count *c, double loc, double *cdf)
{
  int32_t n = c->hi - c->lo + 1, first = c->law == LAW_NB_ZERO ? 1 : 0;
  double total = 0.0;
  for (int32_t i = first; i < n; i++) total += cdf[i] = pb_world__count_mass(c, loc, c->lo + i);
  double w = c->law == LAW_NB_ZERO ? 0.8 : 1.0, acc = c->law == LAW_NB_ZERO ? 0.2 : 0.0;
  for (int32_t i = first; i < n; i++) {
    acc += w * cdf[i] / total;
    cdf[i] = acc;
  }
  if (first) cdf[0] = 0.2;
  cdf[n - 1] = 1.0;
}

double pb_world__field_mid_cdf(const struct pb_world_field *f, int32_t m)
{
  int32_t i = m - f->lo;
  double below = i > 0 ? f->cdf[i - 1] : 0.0;
  return below + (f->cdf[i] - below) / 2.0;
}

/* Solve the location so that the truncated law has median m (bisection: the
 * mid-cdf at m falls as the location rises), then keep its cdf. */
static int pb_world__count_init(const struct pb_world__count *c, struct pb_world_field *f)
{
  f->name = c->name;
  f->n_values = 0;
  f->values = NULL;
  f->lo = c->lo;
  f->hi = c->hi;
  f->cdf = pb_malloc(sizeof(double) * (size_t)(c->hi - c->lo + 1));
  double a = c->law == LAW_LOGNORMAL ? log((double)c->lo) : 1e-3;
  double b = c->law == LAW_LOGNORMAL ? log((double)c->hi) : (double)c->hi;
  for (int it = 0; it < 200 && b - a > 1e-12 * (1.0 + fabs(b)); it++) {
    double mid = 0.5 * (a + b);
    pb_world__count_table(c, mid, f->cdf);
    if (pb_world__field_mid_cdf(f, c->median) > 0.5) a = mid;
    else b = mid;
  }
  pb_world__count_table(c, 0.5 * (a + b), f->cdf);
  if (fabs(pb_world__field_mid_cdf(f, c->median) - 0.5) > 1e-6) {
    pb_error_set("irrelevant field %s: no location gives median %d on [%d, %d]", c->name, (int)c->median,
                 (int)c->lo, (int)c->hi);
    return PB_FAIL;
  }
  return PB_OK;
}

int pb_world__fields_init(enum pb_world_kind kind, struct pb_world_field *f)
{
  memset(f, 0, sizeof(*f) * PB_WORLD_N_IRRELEVANT);
  int nc = pb_world__n_counts[kind], j = 0;
  for (; j < nc; j++)
    if (pb_world__count_init(pb_world__count_spec(kind, j), &f[j]) != PB_OK) {
      pb_world__fields_free(f);
      return PB_FAIL;
    }
  if (kind == PB_WORLD_REVIEW) {
    f[j].name = "submission_month";
    f[j].n_values = 12;
    f[j++].values = pb_world__months;
  }
  for (int p = 0; j < PB_WORLD_N_IRRELEVANT; p++, j++) {
    f[j].name = pb_world__pairs[kind][p].name;
    f[j].n_values = 2;
    f[j].values = pb_world__pairs[kind][p].values;
  }
  return PB_OK;
}

void pb_world__fields_free(struct pb_world_field *f)
{
  for (int j = 0; j < PB_WORLD_N_IRRELEVANT; j++) {
    free(f[j].cdf);
    f[j].cdf = NULL;
  }
}

void pb_world__fields_draw(const struct pb_world_field *f, struct pb_rng *rng, double *x)
{
  for (int j = 0; j < PB_WORLD_N_IRRELEVANT; j++) {
    if (f[j].n_values > 0) {
      x[j] = (double)pb_rng_below(rng, (uint32_t)f[j].n_values);
      continue;
    }
    /* inverse cdf: the first count whose cdf exceeds u */
    double u = pb_rng_uniform(rng);
    int32_t a = 0, b = f[j].hi - f[j].lo;
    while (a < b) {
      int32_t m = a + (b - a) / 2;
      if (f[j].cdf[m] > u) b = m;
      else a = m + 1;
    }
    x[j] = (double)(f[j].lo + a);
  }
}
