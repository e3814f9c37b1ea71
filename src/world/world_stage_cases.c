/* The CASES format (docs/exact.md, "CASES file"): its header and cells as
 * `world sample` and `world decode -o` write them, and a CASES file read back
 * (every rank reads it: it is small) or cases drawn from a world directly,
 * what `world render|prompts` and `exact score|worlds` take. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/parse.h"
#include "pairbound/output.h"
#include "pairbound/world.h"
#include "pairbound/world_stage.h"
#include "world_stage_internal.h"

/* ------------------------------------------------------------ writing */

/* The attribute columns of a CASES (or decoded) header after `case`: NAME:cat(v0,v1,...) or NAME:num[lo,hi]
 * (":irrelevant" appended for irrelevant fields). */
static void pb_world__columns(const struct pb_world *w, struct pb_text *t)
{
  char a[40], b[40];
  for (int j = 0; j < pb_world_n_attrs(w); j++) {
    const struct pb_world_attr *at = pb_world_attr(w, j);
    if (at->kind == PB_WORLD_CATEGORICAL) {
      pb_text_printf(t, "\t%s:cat(", at->name);
      for (int v = 0; v < at->n_values; v++) pb_text_printf(t, "%s%s", v ? "," : "", at->values[v]);
      pb_text_printf(t, ")");
    } else {
      pb_text_format_double(at->lo, a);
      pb_text_format_double(at->hi, b);
      pb_text_printf(t, "\t%s:num[%s,%s]", at->name, a, b);
    }
    if (at->irrelevant) pb_text_printf(t, ":irrelevant");
  }
}

void pb_world__cases_header(const struct pb_world *w, const struct pb_world_options *o, struct pb_text *t)
{
  char a[40];
  pb_text_format_double(pb_world_residual_scale(w), a);
  pb_text_printf(t, "# pairbound world cases 1\n# world %s\n# level %s\n# residual_scale %s\n# seed %llu\n"
                    "# stream %llu\n# first %llu\n# cases %llu\ncase",
                 pb_world_name(w), pb_world_level_name(w), a, (unsigned long long)o->seed,
                 (unsigned long long)o->stream, (unsigned long long)o->first, (unsigned long long)o->cases);
  pb_world__columns(w, t);
  pb_text_printf(t, "\ty\tp_star\n");
}

void pb_world__columns_header(const struct pb_world *w, const char *kind, int64_t n, struct pb_text *t)
{
  char a[40];
  pb_text_format_double(pb_world_residual_scale(w), a);
  pb_text_printf(t, "# pairbound world %s 1\n# world %s\n# level %s\n# residual_scale %s\n# cases %lld\ncase", kind,
                 pb_world_name(w), pb_world_level_name(w), a, (long long)n);
  pb_world__columns(w, t);
}

/* A tab and an unsigned integer in decimal. */
void pb_world__put_uint(struct pb_text *t, uint64_t v, int tab)
{
  char b[24];
  int i = 24;
  do b[--i] = (char)('0' + v % 10); while ((v /= 10) > 0);
  if (tab) b[--i] = '\t';
  pb_text_append(t, b + i, (size_t)(24 - i));
}

/* One TSV cell: non-negative integers (categories, counts, labels) directly,
 * other values as pb_text_format_double's shortest round-trip decimal, which is
 * the same text the integers would get from it. */
void pb_world__cell(struct pb_text *t, double v)
{
  if (v >= 0.0 && v < 4294967296.0 && v == (double)(uint32_t)v) {
    pb_world__put_uint(t, (uint32_t)v, 1);
    return;
  }
  char b[40];
  pb_text_format_double(v, b);
  pb_text_append(t, "\t", 1);
  pb_text_append(t, b, strlen(b));
}

/* ------------------------------------------------------------ reading */

void pb_world_cases_free(struct pb_world_cases *c)
{
  if (c->world) pb_world_free(c->world);
  free(c->index);
  free(c->x);
  free(c->pstar);
  free(c->y);
}

/* What the header of a CASES file says: its `# key value` lines before the `case` line. */
struct pb_world__cases_ctx {
  struct pb_world_cases *c;
  char world[32], level[32];
  double scale;
  uint64_t first;         /* # first: the lowest case index */
  int64_t declared;       /* # cases: the number of rows, -1 until read */
  int64_t declared_line;  /* its line */
  int64_t *line;          /* [c->cap] each row's line */
};

/* Header comment lines `# key value` name the world and the rows' case indices (`# first`, `# cases`); nothing
 * else is read from them. */
static int pb_world__cases_meta(const char *path, int64_t line, char *buf, struct pb_world__cases_ctx *x)
{
  char key[64], val[128];
  if (sscanf(buf, "# %63s %127s", key, val) != 2) return PB_OK;
  struct pb_world_cases *c = x->c;
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
 * file of at most N rows (docs/exact.md; that no index repeats is pb_world__cases_unique's). */
static int pb_world__cases_index(const char *path, int64_t line, const struct pb_world__cases_ctx *x, uint64_t k)
{
  const struct pb_world_cases *c = x->c;
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
static int pb_world__cases_row(const char *path, int64_t line, char *buf, struct pb_world__cases_ctx *ctx)
{
  struct pb_world_cases *c = ctx->c;
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
  if (pb_world__cases_index(path, line, ctx, c->index[c->n])) return PB_FAIL;
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

static int pb_world__cases_line(void *ctx, const char *path, int64_t line, char *buf)
{
  struct pb_world__cases_ctx *x = ctx;
  struct pb_world_cases *c = x->c;
  if (buf[0] == '#') return c->world ? PB_OK : pb_world__cases_meta(path, line, buf, x); /* after it: comments */
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
  return pb_world__cases_row(path, line, buf, x);
}

/* No case index twice: with as many rows as `# cases` declares, all in range, the indices are then exactly
 * first .. first + N - 1 (in any order). */
static int pb_world__cases_unique(const char *path, const struct pb_world__cases_ctx *x)
{
  const struct pb_world_cases *c = x->c;
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
int pb_world_cases_read(const char *path, struct pb_world_cases *c)
{
  struct pb_world__cases_ctx x = {.c = c, .scale = 1.0, .declared = -1};
  int status = PB_FAIL;
  memset(c, 0, sizeof *c);
  c->seed = UINT64_MAX;
  if (pb_output_lines_each(path, "CASES file", pb_world__cases_line, &x)) goto done;
  if (!c->world || c->n == 0) {
    pb_error_set("%s: no cases", path);
    goto done;
  }
  if (c->n != x.declared) {
    pb_error_set("%s:%lld: `# cases %lld`, but the file has %lld rows", path, (long long)x.declared_line,
                 (long long)x.declared, (long long)c->n);
    goto done;
  }
  status = pb_world__cases_unique(path, &x);
done:
  free(x.line);
  return status;
}

/* Cases [first, first + n) of stream 0 of @p seed, as `pairbound world sample` draws them. */
void pb_world_cases_draw(struct pb_world *w, uint64_t seed, uint64_t first, int64_t n, struct pb_world_cases *c)
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

