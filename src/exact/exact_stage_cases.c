/* The cases that `pairbound exact` scores: a CASES file of `pairbound world
 * sample` (every rank reads it: it is small) or cases drawn from a world
 * directly, and the forecasts of a PREDICTIONS file (docs/exact.md). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "pairbound/error.h"
#include "pairbound/parse.h"
#include "pairbound/exact.h"
#include "pairbound/output.h"
#include "pairbound/world.h"
#include "exact_internal.h"

void pb_exact_cases_free(struct pb_exact_cases *c)
{
  if (c->world) pb_world_free(c->world);
  free(c->index);
  free(c->x);
  free(c->pstar);
  free(c->y);
}

/* What the header of a CASES file says: its `# key value` lines before the `case` line. */
struct pb_exact__cases_ctx {
  struct pb_exact_cases *c;
  char world[32], level[32];
  double scale;
  uint64_t first;         /* # first: the lowest case index */
  int64_t declared;       /* # cases: the number of rows, -1 until read */
  int64_t declared_line;  /* its line */
  int64_t *line;          /* [c->cap] each row's line */
};

/* Header comment lines `# key value` name the world and the rows' case indices (`# first`, `# cases`); nothing
 * else is read from them. */
static int pb_exact__cases_meta(const char *path, int64_t line, char *buf, struct pb_exact__cases_ctx *x)
{
  char key[64], val[128];
  if (sscanf(buf, "# %63s %127s", key, val) != 2) return PB_OK;
  struct pb_exact_cases *c = x->c;
  int bad = 0;
  uint64_t n = 0;
  if (!strcmp(key, "world")) snprintf(x->world, sizeof x->world, "%.31s", val);
  else if (!strcmp(key, "level")) snprintf(x->level, sizeof x->level, "%.31s", val);
  else if (!strcmp(key, "residual_scale")) bad = pb_parse_double(val, -HUGE_VAL, HUGE_VAL, 0, &x->scale);
  else if (!strcmp(key, "seed")) bad = pb_parse_uint(val, UINT64_MAX, &c->seed);
  else if (!strcmp(key, "stream")) bad = pb_parse_uint(val, UINT64_MAX, &c->stream);
  else if (!strcmp(key, "first")) bad = pb_parse_uint(val, UINT64_MAX, &x->first);
  else if (!strcmp(key, "cases")) {
    bad = pb_parse_uint(val, INT64_MAX, &n);
    x->declared = (int64_t)n;
    x->declared_line = line;
  } else return PB_OK;
  if (bad) {
    pb_error_set("%s:%lld: bad value '%s' for %s", path, (long long)line, val, key);
    return PB_FAIL;
  }
  return PB_OK;
}

/* The row's case index: one of the N = `# cases` indices first .. first + N - 1 the header declares, in a
 * file of at most N rows (docs/exact.md; that no index repeats is pb_exact__cases_unique's). */
static int pb_exact__cases_index(const char *path, int64_t line, const struct pb_exact__cases_ctx *x, uint64_t k)
{
  const struct pb_exact_cases *c = x->c;
  if (c->n >= x->declared) {
    pb_error_set("%s:%lld: more rows than the %lld cases of `# cases %lld` (line %lld)", path, (long long)line,
                 (long long)x->declared, (long long)x->declared, (long long)x->declared_line);
    return PB_FAIL;
  }
  if (k < x->first || k - x->first >= (uint64_t)x->declared) {
    pb_error_set("%s:%lld: case index %llu outside %llu .. %llu (`# first %llu`, `# cases %lld`)", path,
                 (long long)line, (unsigned long long)k, (unsigned long long)x->first,
                 (unsigned long long)(x->first + (uint64_t)x->declared - 1), (unsigned long long)x->first,
                 (long long)x->declared);
    return PB_FAIL;
  }
  return PB_OK;
}

/* One data row: case index, the visible attributes, y, p_star; p_star must be
 * the world's exact p* of the attributes (the file and the world agree). */
static int pb_exact__cases_row(const char *path, int64_t line, char *buf, struct pb_exact__cases_ctx *ctx)
{
  struct pb_exact_cases *c = ctx->c;
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 1024;
    ctx->line = pb_realloc(ctx->line, (size_t)c->cap * sizeof *ctx->line);
    c->index = pb_realloc(c->index, (size_t)c->cap * sizeof *c->index);
    c->x = pb_realloc(c->x, (size_t)c->cap * c->na * sizeof *c->x);
    c->pstar = pb_realloc(c->pstar, (size_t)c->cap * sizeof *c->pstar);
    c->y = pb_realloc(c->y, (size_t)c->cap * sizeof *c->y);
  }
  /* whitespace-separated fields: case, the na attributes, y, p_star */
  double *x = c->x + c->n * c->na, p = NAN;
  int64_t yv = -1;
  char *save = NULL, *tok = strtok_r(buf, " \t\r\n", &save);
  int ok = tok && pb_parse_uint(tok, UINT64_MAX, &c->index[c->n]) == PB_OK;
  for (int j = 0; ok && j < c->na; j++)
    ok = (tok = strtok_r(NULL, " \t\r\n", &save)) && pb_parse_double(tok, -HUGE_VAL, HUGE_VAL, 0, &x[j]) == PB_OK;
  ok = ok && (tok = strtok_r(NULL, " \t\r\n", &save)) && pb_parse_int(tok, 0, 1, &yv) == PB_OK;
  ok = ok && (tok = strtok_r(NULL, " \t\r\n", &save)) && pb_parse_double(tok, -HUGE_VAL, HUGE_VAL, 0, &p) == PB_OK;
  ok = ok && !strtok_r(NULL, " \t\r\n", &save);
  if (!ok) {
    pb_error_set("%s:%lld: expected a case index, %d attribute values, y in {0, 1} and p_star", path, (long long)line,
                 c->na);
    return PB_FAIL;
  }
  if (pb_exact__cases_index(path, line, ctx, c->index[c->n])) return PB_FAIL;
  double exact;
  if (pb_world_pstar(c->world, x, &exact) != PB_OK) {
    char why[256];
    snprintf(why, sizeof why, "%s", pb_error_message());
    pb_error_set("%s:%lld: %s", path, (long long)line, why);
    return PB_FAIL;
  }
  if (exact != p) {
    pb_error_set("%s:%lld: p_star %.17g is not the world's exact p* %.17g for these attributes", path, (long long)line,
                 p, exact);
    return PB_FAIL;
  }
  if ((p == 0.0 && yv == 1) || (p == 1.0 && yv == 0)) {
    pb_error_set("%s:%lld: label y = %lld is impossible at p* = %g", path, (long long)line, (long long)yv, p);
    return PB_FAIL;
  }
  c->y[c->n] = (int)yv;
  c->pstar[c->n] = p;
  ctx->line[c->n++] = line;
  return PB_OK;
}

static int pb_exact__cases_line(void *ctx, const char *path, int64_t line, char *buf)
{
  struct pb_exact__cases_ctx *x = ctx;
  struct pb_exact_cases *c = x->c;
  if (buf[0] == '#') return c->world ? PB_OK : pb_exact__cases_meta(path, line, buf, x); /* after it: comments */
  if (!strncmp(buf, "case\t", 5) && !c->world) {
    if (!x->world[0] || !x->level[0] || c->seed == UINT64_MAX || x->declared < 0) {
      pb_error_set("%s:%lld: the header lacks `# world`, `# level`, `# seed` or `# cases` (not a `pairbound world "
                   "sample` file?)", path, (long long)line);
      return PB_FAIL;
    }
    if (pb_world_open(x->world, x->level, x->scale, &c->world)) {
      char why[256];
      snprintf(why, sizeof why, "%s", pb_error_message());
      pb_error_set("%s:%lld: %s", path, (long long)line, why);
      return PB_FAIL;
    }
    c->na = pb_world_n_attrs(c->world);
    return PB_OK;
  }
  if (!c->world) {
    pb_error_set("%s:%lld: data before the `case` header line", path, (long long)line);
    return PB_FAIL;
  }
  return pb_exact__cases_row(path, line, buf, x);
}

/* No case index twice: with as many rows as `# cases` declares, all in range, the indices are then exactly
 * first .. first + N - 1 (in any order). */
static int pb_exact__cases_unique(const char *path, const struct pb_exact__cases_ctx *x)
{
  const struct pb_exact_cases *c = x->c;
  int64_t *seen = pb_calloc((size_t)(c->n > 0 ? c->n : 1), sizeof *seen); /* line of each index, 0: none yet */
  int status = PB_OK;
  for (int64_t i = 0; i < c->n && status == PB_OK; i++) {
    int64_t *at = &seen[c->index[i] - x->first];
    if (*at) {
      pb_error_set("%s:%lld: case index %llu again (first on line %lld)", path, (long long)x->line[i],
                   (unsigned long long)c->index[i], (long long)*at);
      status = PB_FAIL;
    }
    *at = x->line[i];
  }
  free(seen);
  return status;
}

/* Read a CASES file (docs/exact.md); every rank reads it (it is small). */
int pb_exact_cases_read(const char *path, struct pb_exact_cases *c)
{
  struct pb_exact__cases_ctx x = {.c = c, .scale = 1.0, .declared = -1};
  int status = PB_FAIL;
  memset(c, 0, sizeof *c);
  c->seed = UINT64_MAX;
  if (pb_output_lines_each(path, "CASES file", pb_exact__cases_line, &x)) goto done;
  if (!c->world || c->n == 0) {
    pb_error_set("%s: no cases", path);
    goto done;
  }
  if (c->n != x.declared) {
    pb_error_set("%s:%lld: `# cases %lld`, but the file has %lld rows", path, (long long)x.declared_line,
                 (long long)x.declared, (long long)c->n);
    goto done;
  }
  status = pb_exact__cases_unique(path, &x);
done:
  free(x.line);
  return status;
}

/* Cases [first, first + n) of stream 0 of @p seed, as `pairbound world sample` draws them. */
void pb_exact_cases_draw(struct pb_world *w, uint64_t seed, uint64_t first, int64_t n, struct pb_exact_cases *c)
{
  memset(c, 0, sizeof *c);
  c->world = w;
  c->seed = seed;
  c->na = pb_world_n_attrs(w);
  c->n = c->cap = n;
  c->index = pb_malloc(sizeof *c->index * (size_t)n);
  c->x = pb_malloc(sizeof *c->x * (size_t)(n * c->na));
  c->pstar = pb_malloc(sizeof *c->pstar * (size_t)n);
  c->y = pb_malloc(sizeof *c->y * (size_t)n);
  for (int64_t i = 0; i < n; i++) c->index[i] = first + (uint64_t)i;
  pb_world_draw_range(w, seed, 0, first, n, c->x, c->y, c->pstar);
}

struct pb_exact__pred_ctx {
  int64_t n, got;
  double *q;
};

static int pb_exact__predictions_line(void *ctx, const char *path, int64_t line, char *buf)
{
  struct pb_exact__pred_ctx *x = ctx;
  if (buf[0] == '#' || (line == 1 && !strncmp(buf, "q", 1) && strspn(buf + 1, " \t\r\n") == strlen(buf + 1)))
    return PB_OK;
  double v = NAN;
  char *save = NULL, *tok = strtok_r(buf, " \t\r\n", &save);
  int unknown = tok && (!strcmp(tok, "unknown") || !strcasecmp(tok, "nan"));
  if (!tok || strtok_r(NULL, " \t\r\n", &save) || (!unknown && pb_parse_double(tok, 0.0, 1.0, 0, &v) != PB_OK)) {
    pb_error_set("%s:%lld: expected one probability in [0, 1] (or unknown / nan)", path, (long long)line);
    return PB_FAIL;
  }
  if (x->got == x->n) {
    pb_error_set("%s:%lld: more predictions than the %lld cases", path, (long long)line, (long long)x->n);
    return PB_FAIL;
  }
  x->q[x->got++] = v;
  return PB_OK;
}

/* One probability per case in [0, 1], or `unknown` / `nan` for a forecast that was not given; '#' lines and
 * a `q` header are skipped. */
int pb_exact_predictions_read(const char *path, int64_t n, double *q)
{
  struct pb_exact__pred_ctx x = {.n = n, .q = q};
  if (access(path, R_OK) != 0) { /* the one place a built-in predictor name may have been meant */
    pb_error_set("%s: cannot open as the PREDICTIONS file: %s (nor is it pstar, prior or logistic:n=N)", path,
                 strerror(errno));
    return PB_FAIL;
  }
  if (pb_output_lines_each(path, "PREDICTIONS file", pb_exact__predictions_line, &x)) return PB_FAIL;
  if (x.got != n) {
    pb_error_set("%s: %lld predictions for %lld cases", path, (long long)x.got, (long long)n);
    return PB_FAIL;
  }
  return PB_OK;
}
