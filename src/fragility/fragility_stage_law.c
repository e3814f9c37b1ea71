/* pairbound fragility --law FILE: a law read from a text file of `value mass`
 * lines and its exact profile printed (seed 001; docs/fragility.md). */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/agg.h"
#include "pairbound/error.h"
#include "pairbound/fragility.h"
#include "pairbound/output.h"
#include "pairbound/parse.h"
#include "pairbound/text.h"
#include "fragility_internal.h"

#define PB_FRAGILITY_MASS_TOL 1e-12

/* One `value mass` line (white-space separated words); PB_FAIL with the reason in why. */
static int pb_fragility__parse_line(char *line, double *value, double *mass, char *why, size_t nwhy)
{
  char *save = NULL, *w[3];
  for (int i = 0; i < 3; i++) w[i] = strtok_r(i ? NULL : line, " \t\r\n", &save);
  if (!w[1] || pb_parse_double(w[0], -DBL_MAX, DBL_MAX, 0, value) || pb_parse_double(w[1], -DBL_MAX, DBL_MAX, 0, mass))
    return snprintf(why, nwhy, "expected 'value mass'"), PB_FAIL;
  if (w[2]) return snprintf(why, nwhy, "unexpected text after the mass"), PB_FAIL;
  if (!(*value >= 0 && *value <= 1)) return snprintf(why, nwhy, "value %g is not in [0, 1]", *value), PB_FAIL;
  if (!(*mass >= 0)) return snprintf(why, nwhy, "mass %g is not a non-negative number", *mass), PB_FAIL;
  return PB_OK;
}

struct pb_fragility__law_ctx {
  double *v, *m;
  struct pb_agg total; /* the masses' exact sum: 100,000 atoms of 1e-5 sum to 1 (naively 1 - 1.9e-12) */
  int32_t cnt, cap;
  int64_t last, lines;
};

static int pb_fragility__law_line(void *ctx, const char *path, int64_t lineno, char *line)
{
  struct pb_fragility__law_ctx *x = ctx;
  x->lines = lineno;
  char *s = line;
  while (*s == ' ' || *s == '\t') s++;
  if (*s == '#' || *s == '\n' || *s == '\r' || *s == '\0') return PB_OK;
  char why[128];
  double v, w;
  if (pb_fragility__parse_line(s, &v, &w, why, sizeof why)) {
    pb_error_set("%s:%lld: %s", path, (long long)lineno, why);
    return PB_FAIL;
  }
  if (x->cnt == x->cap) {
    x->cap = x->cap ? 2 * x->cap : 16;
    x->v = pb_realloc(x->v, (size_t)x->cap * sizeof *x->v);
    x->m = pb_realloc(x->m, (size_t)x->cap * sizeof *x->m);
  }
  x->v[x->cnt] = v;
  x->m[x->cnt++] = w;
  pb_agg_add(&x->total, 0, w);
  x->last = lineno;
  return PB_OK;
}

int pb_fragility_read_law(const char *path, double **value, double **mass, int32_t *n)
{
  int status = PB_FAIL;
  struct pb_fragility__law_ctx x = {0};
  pb_agg_init(&x.total, 1);
  if (pb_output_lines_each(path, NULL, pb_fragility__law_line, &x)) goto done;
  if (x.cnt == 0) {
    pb_error_set("%s:%lld: no 'value mass' lines", path, (long long)x.lines);
    goto done;
  }
  const double total = pb_agg_sum(&x.total, 0); /* rounded once */
  if (!(fabs(total - 1) <= PB_FRAGILITY_MASS_TOL)) {
    char buf[40];
    pb_text_format_double(total, buf);
    pb_error_set("%s:%lld: masses sum to %s, not 1 (tolerance 1e-12)", path, (long long)x.last, buf);
    goto done;
  }
  *value = x.v;
  *mass = x.m;
  *n = x.cnt;
  x.v = x.m = NULL;
  status = PB_OK;
done:
  pb_agg_free(&x.total);
  free(x.v);
  free(x.m);
  return status;
}

int pb_fragility_law_print(const struct pb_fragility_stage_options *o, FILE *out)
{
  double *v = NULL, *m = NULL;
  int32_t n = 0;
  struct pb_fragility_law law;
  pb_fragility_law_init(&law);
  int status = pb_fragility_read_law(o->law, &v, &m, &n);
  if (status == PB_OK) status = pb_fragility_law_set(&law, v, m, n);
  if (status == PB_OK && out) {
    char a[40], b[40], c[40];
    pb_text_format_double(law.G, a);
    fprintf(out, "G %s\n", a);
    pb_text_format_double(law.up.rho_plus, a);
    fprintf(out, "rho_plus %s\n", a);
    pb_text_format_double(law.up.rho_sat, a);
    fprintf(out, "rho_sat %s\n", a);
    for (int32_t i = 0; i < o->n_rho; i++) {
      pb_text_format_double(o->rho[i], a);
      pb_text_format_double(pb_fragility_profile(&law, PB_FRAGILITY_UP, o->rho[i]), b);
      pb_text_format_double(pb_fragility_profile(&law, PB_FRAGILITY_DOWN, o->rho[i]), c);
      fprintf(out, "%s %s %s\n", a, b, c);
    }
    fflush(out);
  }
  pb_fragility_law_free(&law);
  free(v);
  free(m);
  return status;
}
